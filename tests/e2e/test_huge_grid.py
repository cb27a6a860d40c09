"""Issue 22, part 9: a huge grid (LibreOffice Calc: 16,384 columns x 1,048,576 rows). The cells
shown are read from the first visible row on, and a `gui_state` with or without a `query` keeps
its time budget (answering within budget + 1 s, `truncated` with the reason when cut)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from gui_flow import act, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

BUDGET_S = 2.5  # lsm's default --walk-budget-ms


def cells(st: dict) -> dict[str, dict]:
    return {e.get("name", ""): e for e in st["elements"] if e["role"] == "table_cell"}


def test_calc_grid_first_row_and_budget(ensure_app, lsm_stdio, probe):
    s = lsm_stdio
    ensure_app("calc")
    win = wait_for(lambda: next((w for w in s.call_ok("gui_list", {})["windows"]
                                 if w["title"].endswith("LibreOffice Calc")), None),
                   timeout=60, what="a Calc window")
    st = observe(s, win)
    # A value in the first row (A1 has the cursor in a new sheet), typed as a person would.
    act(s, st, [{"type": "type", "text": "top left\n"}])

    started = time.monotonic()
    st = observe(s, win)
    took = time.monotonic() - started
    assert took < BUDGET_S + 1.0, took
    found = cells(st)
    first_row = [n for n in found if n.split(" ")[0] in ("A1", "B1", "C1", "D1")]
    assert len(first_row) >= 3, sorted(found)[:40]
    a1 = next(e for n, e in found.items() if n.split(" ")[0] == "A1")
    assert "top left" in (a1.get("value", "") + a1.get("name", "") + a1.get("description", "")), a1
    # Rows below are there too, from the first visible row on.
    assert any(n.split(" ")[0] in ("A2", "B2") for n in found), sorted(found)[:40]

    for query in ("top left", "nothing-matches-this"):
        started = time.monotonic()
        r = s.call("gui_state", {"window_id": win["window_id"], "screenshot": False, "query": query})
        took = time.monotonic() - started
        assert not r.is_error, r
        assert took < BUDGET_S + 1.0, (query, took)
        q = r.structured_content
        if query == "top left":
            assert q["matched"] >= 1, q
