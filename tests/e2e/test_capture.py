"""Window capture: size and coordinate space, and what a partly covered window reports."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gui_flow import act, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

TITLE = "lsm test app"


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def state_with_image(s, window) -> tuple[dict, bytes]:
    res = s.call("gui_state", {"window_id": window["window_id"], "include_elements": False})
    data = s.ok(res)
    png = image_bytes(res)  # noqa: F405
    assert png, "gui_state must attach the screenshot as image content"
    return data, png


def test_uncovered_window_capture_matches_its_coordinate_space(lsm_stdio):
    s = lsm_stdio
    win = find_window(s, app="calculator")
    # Other tests raise other windows: bring this one to the top first.
    act(s, observe(s, win, include_elements=False), [{"type": "focus"}])
    data, png = state_with_image(s, win)
    space = data["coordinate_space"]
    assert png_size(png) == (space["width"], space["height"]) == (win["bounds"]["width"], win["bounds"]["height"])
    assert data["screenshot"]["occluded"] is False


def test_partly_covered_window_says_so(lsm_stdio, restart_app):
    s = lsm_stdio
    app = find_window(s, title=TITLE)
    term = find_window(s, app="xterm")
    b = app["bounds"]
    try:
        # Put the xterm over the lower right quarter of the test app, on top.
        subprocess.run(["xdotool", "windowmove", "--sync", term["window_id"], str(b["x"] + b["width"] // 2),
                        str(b["y"] + b["height"] // 2), "windowraise", term["window_id"]], check=True, timeout=10)
        wait_for(lambda: find_window(s, app="xterm")["bounds"]["x"] < b["x"] + b["width"], what="xterm moved")
        data, png = state_with_image(s, app)
        assert png_size(png) == (b["width"], b["height"])
        assert data["screenshot"]["occluded"] is True
        assert any("overlaps" in n for n in data["notes"]), data["notes"]
        assert "may cover" in text_of(s.call("gui_state", {"window_id": app["window_id"],  # noqa: F405
                                                           "include_elements": False}))
    finally:
        restart_app("xterm")
