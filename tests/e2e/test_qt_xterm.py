"""The same loop on a Qt5 application, and a coordinate-only flow on an X11 application without
accessibility (xterm), with effects checked through AT-SPI and on disk."""

import os
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gui_flow import act, center, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403


def qt_display(probe) -> str:
    """The calculator's display text, read through AT-SPI."""
    nodes = probe("calculator", flat=True)
    texts = [n.get("text") for n in nodes if n["role"] == "text"]
    assert len(texts) == 1, f"expected one display, got {texts}"
    return texts[0]


def test_qt_calculator_by_element_and_by_coordinates(lsm, probe):
    win = find_window(lsm, app="calculator")
    assert win["accessible"]
    st = observe(lsm, win)
    buttons = {e.get("name", ""): e for e in st["elements"] if e["role"] == "push_button"}
    assert {"7", "8", "+", "=", "Clear All"} <= buttons.keys(), sorted(buttons)
    res = act(lsm, st, [{"type": "click", "element_id": buttons[n]["id"]} for n in ("Clear All", "7", "+", "8", "=")])
    assert all(r["method"].startswith("atspi_action:") for r in res["results"]), res
    wait_for(lambda: qt_display(probe) == "15", what="7+8=15 on the Qt display")
    # Qt's element bounds are right in window-relative pixels: click "9" at its centre.
    st = observe(lsm, win)
    buttons = {e.get("name", ""): e for e in st["elements"] if e["role"] == "push_button"}
    x, y = center(buttons["Clear All"])
    act(lsm, st, [{"type": "click", "x": x, "y": y}])
    wait_for(lambda: qt_display(probe) == "0", what="display cleared by a coordinate click")
    st = observe(lsm, win)
    x, y = center({e.get("name", ""): e for e in st["elements"] if e["role"] == "push_button"}["9"])
    res = act(lsm, st, [{"type": "click", "x": x, "y": y}])
    assert res["results"][0]["method"] == "xtest"
    wait_for(lambda: qt_display(probe) == "9", what="9 typed by a coordinate click")
    # The display's value is part of the observation too.
    st = observe(lsm, win)
    assert [e.get("value") for e in st["elements"] if e["role"] == "text"] == ["9"]


def test_xterm_coordinates_only(lsm, tmp_path):
    win = find_window(lsm, app="xterm")
    assert not win["accessible"]
    st = lsm.call("gui_state", {"window_id": win["window_id"]})
    data = lsm.ok(st)
    assert data["elements"] == [] and data["notes"], data  # says to use coordinates
    png = image_bytes(st)  # noqa: F405
    assert png and png.startswith(b"\x89PNG")
    target = Path(f"/tmp/lsm-xterm-{uuid.uuid4().hex[:8]}.txt")
    try:
        w, h = data["coordinate_space"]["width"], data["coordinate_space"]["height"]
        # ctrl+u first: the shared xterm's command line may hold another test's text (test_step
        # types a comment into it).
        res = act(lsm, data, [
            {"type": "click", "x": w // 2, "y": h // 2},
            {"type": "key", "keys": "ctrl+u"},
            {"type": "type", "text": f"echo lsm-xterm-ok 한글 é > {target}"},
            {"type": "key", "keys": "Return"},
        ])
        assert [r["method"] for r in res["results"]] == ["xtest", "xtest", "xtest_type", "xtest"]
        wait_for(lambda: target.exists() and target.read_text(encoding="utf-8") == "lsm-xterm-ok 한글 é\n",
                 what=f"the command's output in {target}")
    finally:
        if target.exists():
            os.unlink(target)
