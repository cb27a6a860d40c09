"""A 10,000-row GTK3 tree view (tests/apps/lsm_biglist.py) stays responsive: gui_state reads only
the rows on screen, within the walk budget, says the list is larger, and acting and scrolling work
right after. Effects are checked through AT-SPI by the test itself (atspi_probe)."""

import os
import re
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from gui_flow import act, box, rect, element, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

TITLE = "lsm big list"
APP = "lsm_biglist.py"  # its AT-SPI application name
ROWS = 10_000
WALK_BUDGET = 2.5  # lsm's default walk budget (s)


@pytest.fixture
def biglist(restart_app):
    """The big-list app, freshly started at its bed place (app key "biglist"); stopped after."""
    pid = restart_app("biglist")
    yield pid
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def items(state: dict) -> dict[int, dict]:
    """The "Item N" cells of an observation by row number."""
    out = {}
    for e in state["elements"]:
        m = re.fullmatch(r"Item (\d+)", e.get("name", ""))
        if m and e["role"] == "table_cell":
            out[int(m.group(1))] = e
    return out


def timed_observe(s, win, **kw) -> tuple[dict, float]:
    t = time.monotonic()
    st = observe(s, win, **kw)
    return st, time.monotonic() - t


def pings(probe) -> str:
    node = probe(APP, find="Pings:", match="prefix")
    assert node, "label 'Pings: N' not found through AT-SPI"
    return node["name"]


def test_big_list_observe_act_scroll(lsm, biglist, probe):
    s = lsm
    win = find_window(s, title=TITLE)

    # 1. Observe: quick, complete for what is on screen, and the table says it is a window.
    st, dt = timed_observe(s, win)
    assert dt < WALK_BUDGET + 1, f"gui_state took {dt:.2f} s"
    # Nothing was cut: rows off screen are skipped on purpose, which is not a truncation.
    assert st["truncated"] is False, st.get("truncated_reason")
    rows = items(st)
    for i in range(16):
        assert i in rows, f"Item {i} missing; rows read: {sorted(rows)}"
        b = rect(rows[i]) if rows[i].get("bounds") else None
        assert b and b["width"] > 0 and b["height"] > 0, f"Item {i} has no bounds: {rows[i]}"
        assert 0 <= b["y"] < win["bounds"]["height"], f"Item {i} is outside the window: {b}"
    assert max(rows) < 40, f"rows far below the visible area were read: {sorted(rows)}"
    numbers = [e for e in st["elements"] if e["role"] == "table_cell" and e.get("name", "") == "0"]
    assert numbers, "the Number column of row 0 is missing"
    table = element(st, "Items", "table")
    assert f"{ROWS} rows" in table.get("summary", ""), table
    # Rows come in order, top to bottom.
    ys = [box(rows[i])[1] for i in range(16)]
    assert ys == sorted(ys), ys

    # 2. Right after: click "Ping" by element id; the label counts it.
    before = pings(probe)
    assert before == "Pings: 0", before
    res = act(s, st, [{"type": "click", "element_id": element(st, "Ping", "push_button")["id"]}])
    assert res["results"][0]["method"].startswith("atspi_action:"), res
    wait_for(lambda: pings(probe) == "Pings: 1", what="Pings: 1")

    # 3. Scroll the list by its element id, observe again: later rows, not the first ones.
    st = observe(s, win)
    table = element(st, "Items", "table")
    act(s, st, [{"type": "scroll", "element_id": table["id"], "delta_y": 10}])

    def scrolled():
        st2, dt2 = timed_observe(s, win)
        rows2 = items(st2)
        return (st2, dt2, rows2) if rows2 and min(rows2) >= 10 else None

    st, dt, rows = wait_for(scrolled, timeout=10, interval=0.2, what="later rows after scrolling")
    assert dt < WALK_BUDGET + 1, f"gui_state took {dt:.2f} s"
    assert st["truncated"] is False, st.get("truncated_reason")
    top = min(rows)
    for i in range(top + 1, top + 12):  # the first (possibly partial) row aside, a run of rows
        assert i in rows and rows[i].get("bounds"), f"Item {i} missing after scrolling: {sorted(rows)}"
    assert max(rows) - top < 40, f"rows far from the visible area were read: {sorted(rows)}"


def test_big_list_truncation_rule(lsm, biglist):
    """`truncated` is true exactly when something that would be reported was not read."""
    s = lsm
    win = find_window(s, title=TITLE)
    st = observe(s, win, max_elements=15)
    assert st["truncated"] is True and st.get("truncated_reason"), st.get("truncated_reason")
    assert len(st["elements"]) <= 15
    # Depth counts what a model sees (bare layout containers use up none): the list's rows are
    # at depth 2 here.
    st = observe(s, win, max_depth=1)
    assert st["truncated"] is True and "max_depth" in (st.get("truncated_reason") or "")
    st = observe(s, win)
    assert st["truncated"] is False, st.get("truncated_reason")
