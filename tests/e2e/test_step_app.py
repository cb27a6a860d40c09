"""Issue 11 on a real GTK3 application (tests/apps/lsm_stepapp.py): a dialog that opens, a window
that closes, a label that updates 300 ms after the click, a window that never stops changing, and
ids that stay with their controls when a row is inserted above them. Each effect is also read
outside lsm, through AT-SPI (tests/lib/atspi_probe.py)."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from atspi_ground import run_probe  # noqa: E402
from gui_flow import element, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

APP = Path(__file__).resolve().parents[1] / "apps" / "lsm_stepapp.py"


@pytest.fixture
def stepapp(lsm):
    title = f"lsm step {uuid.uuid4().hex[:6]}"
    proc = subprocess.Popen(["/usr/bin/python3", str(APP), title], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(os.environ))
    try:
        win = find_window(lsm, title=title, timeout=30)
        time.sleep(0.5)  # the app registers on AT-SPI
        yield lsm, win, proc
    finally:
        proc.kill()
        proc.wait(10)


def step(s, st: dict, name: str, **kw) -> dict:
    return s.call_ok("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"],
                                    "actions": [{"type": "click", "element_id": element(st, name)["id"]}], **kw})


def probe(proc, name):
    return run_probe(pid=proc.pid, find=name)


def test_a_dialog_opens_and_closes(stepapp):
    s, win, proc = stepapp
    out = step(s, observe(s, win), "Open dialog")
    opened = out["changes"].get("opened", [])
    assert [w["title"] for w in opened] == ["Step dialog"], out["changes"]
    assert out["results"][0]["effect"] == "confirmed" and "opened" in out["results"][0]["evidence"]
    assert probe(proc, "Close dialog") is not None
    dialog = opened[0]["window_id"]
    # The dialog came observed, with its own state_id: its button is acted on without a gui_state.
    assert opened[0]["state_id"].startswith("st_"), opened[0]
    d = {"window": {"window_id": dialog}, "state_id": opened[0]["state_id"], "elements": opened[0]["elements"]}
    shut = step(s, d, "Close dialog")
    assert "state_id" not in shut, shut
    assert [w["window_id"] for w in shut["changes"]["closed"]] == [dialog], shut["changes"]
    assert probe(proc, "Close dialog") is None


def test_a_button_that_closes_the_window(stepapp):
    s, win, proc = stepapp
    out = step(s, observe(s, win), "Close window")
    assert "state_id" not in out, out
    assert [w["window_id"] for w in out["changes"]["closed"]] == [win["window_id"]]
    assert "closed" in out["results"][0]["evidence"]
    proc.wait(10)
    r = s.call("gui_state", {"window_id": win["window_id"]})
    assert r.is_error and "WINDOW_NOT_FOUND" in str(r.structured_content or r.content)


def test_a_label_that_updates_300_ms_after_the_click(stepapp):
    s, win, proc = stepapp
    out = step(s, observe(s, win), "Later")
    changed = {c["name"]: c for c in out["changes"]["changed"]}
    assert "Later: 1" in changed and changed["Later: 1"]["name_was"] == "Later: 0", out["changes"]
    assert out["settle_ms"] >= 250 and out["results"][0]["effect"] == "confirmed"
    assert probe(proc, "Later: 1") is not None


def test_a_window_that_never_stops_is_not_settled_within_the_bound(stepapp):
    s, win, proc = stepapp
    started = time.monotonic()
    out = step(s, observe(s, win), "Animate", settle_ms=800)
    took = time.monotonic() - started
    assert out["settled"] is False and took < 3.0, (out["settled"], took)
    assert out["state_id"]
    step(s, observe(s, win), "Animate", observe="none")  # stop it


def test_ids_stay_when_a_row_is_inserted_above(stepapp):
    s, win, proc = stepapp
    st = observe(s, win)
    keep = {n: element(st, n)["id"] for n in ("Later", "Plain label", "Insert row", "Rows below")}
    out = step(s, st, "Insert row")
    added = [e.get("name", "") for e in out["changes"]["added"]]
    assert "Row 1" in added, out["changes"]
    assert probe(proc, "Row 1") is not None
    again = observe(s, win)
    assert {n: element(again, n)["id"] for n in keep} == keep
    new_row = element(again, "Row 1")["id"]
    assert new_row not in keep.values()


def test_a_row_inserted_outside_lsm_is_in_the_next_observation(stepapp):
    """Another client presses "Insert row" between two observations. GTK 3 inserts the label
    without announcing a child added (no `children-changed` reaches any client, pyatspi's
    included; GTK 4.8 does the same), so no observation may take an application's structure from
    an earlier one: the new row is in the next observation. (A cache snapshot kept between
    observations until an event said it changed missed it.)"""
    s, win, proc = stepapp
    observe(s, win)
    observe(s, win)
    hit = run_probe(pid=proc.pid, find="Insert row", do_action=True)
    assert hit and hit.get("did_action"), hit
    wait_for(lambda: probe(proc, "Row 1") is not None, timeout=10, what="Row 1 inserted (AT-SPI)")
    st = observe(s, win)
    element(st, "Row 1")
