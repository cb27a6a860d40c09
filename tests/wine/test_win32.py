"""lsm.exe (the Windows build) under Wine 8.0 + Xvfb, driven over stdio by the official Python
MCP client on Linux, against lsm's own Win32 test application (tests/wine/lsm_wintest.c).
Every effect is read from the application's own log. UI Automation does not exist under
Wine 8.0: these tests cover the Win32 half (window list, capture, SendInput); test_uia.py
holds the UI Automation tests, skipped here with lsm's reason."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "lib"))

from conftest import TITLE  # noqa: E402
from lsm_mcp import err_code, image_bytes, text_of  # noqa: E402
from png_rgba import decode  # noqa: E402


def window_of(s) -> dict:
    wins = s.call_ok("gui_list", {})["windows"]
    found = [w for w in wins if w["title"] == TITLE]
    assert found, [w["title"] for w in wins]
    return found[0]


def observe(s, win: dict, **kw) -> dict:
    return s.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False, **kw})


def act(s, win: dict, state: dict, actions: list[dict]):
    return s.call("gui_action", {"window_id": win["window_id"], "state_id": state["state_id"], "actions": actions})


def centre(r: tuple) -> tuple[int, int]:
    x, y, w, h = r
    return x + w // 2, y + h // 2


def test_the_window_its_bounds_and_real_pixels(lsm, app):
    win = window_of(lsm)
    b = win["bounds"]
    assert (b["x"], b["y"], b["width"], b["height"]) == app.window, (win, app.window, app.win32_rect)
    assert win["accessible"] is False and win["app"] == "lsm_wintest"
    r = lsm.call("gui_state", {"window_id": win["window_id"]})
    st = lsm.ok(r)
    # No UI Automation under Wine: no elements, and the observation and the backend say why.
    assert st["elements"] == [], st
    reason = "UI Automation is not available: its COM class is not registered"
    assert reason in text_of(r), text_of(r)
    backend = lsm.call_ok("gui_list", {})["backend"]
    assert backend["name"] == "windows-win32" and "accessibility" not in backend["capabilities"], backend
    assert any(reason in n for n in backend["notes"]), backend
    # Wine has neither Windows Graphics Capture nor a PrintWindow that draws another process's
    # window: the capture falls back to the screen, and says so and why.
    text = text_of(r)
    assert "copied from the screen" in text and "PrintWindow: it drew nothing" in text, text
    png = image_bytes(r)
    assert png, text_of(r)
    w, h, rows = decode(png)
    assert (w, h) == (b["width"], b["height"])
    black = sum(1 for row in rows for i in range(0, len(row), 4) if row[i:i + 3] == b"\0\0\0")
    assert black < w * h // 4, f"{black} of {w * h} pixels black: not the window's pixels"
    # The button is drawn where the app says it is: its face (left of its caption) is neither
    # black nor the window's background.
    fx, fy = app.button[0] + 8, app.button[1] + app.button[3] // 2
    face = rows[fy][fx * 4:fx * 4 + 3]
    background = rows[app.edit[1] + app.edit[3] + 40][fx * 4:fx * 4 + 3]
    assert face != b"\0\0\0" and background != b"\0\0\0" and face != background, (face, background)


def test_click_type_and_keys_arrive(lsm, app):
    win = window_of(lsm)
    st = observe(lsm, win)
    x, y = centre(app.button)
    mark = app.mark()
    res = act(lsm, win, st, [{"type": "click", "x": x, "y": y}])
    out = lsm.ok(res)
    app.wait(lambda line: line == "pressed 1", "the button press", after=mark)
    assert out["results"][0]["method"] == "sendinput"

    text = "abc 日本語 한글"
    ex, ey = centre(app.edit)
    mark = app.mark()
    out = lsm.ok(act(lsm, win, {"state_id": out["state_id"]},
                     [{"type": "click", "x": ex, "y": ey}, {"type": "type", "text": text}]))
    app.wait(lambda line: line == f"text {text}", f"the text {text!r}", after=mark)

    mark = app.mark()
    out = lsm.ok(act(lsm, win, {"state_id": out["state_id"]},
                     [{"type": "key", "keys": "ctrl+a"}, {"type": "key", "keys": "x"}]))
    app.wait(lambda line: line == "selectall", "ctrl+a", after=mark)
    app.wait(lambda line: line == "text x", "the text replaced by x", after=mark)


def test_scroll_and_drag_arrive(lsm, app):
    win = window_of(lsm)
    st = observe(lsm, win)
    free = (app.edit[0] + 40, app.edit[1] + app.edit[3] + 50)
    mark = app.mark()
    out = lsm.ok(act(lsm, win, st, [{"type": "scroll", "x": free[0], "y": free[1], "delta_y": 1}]))
    app.wait(lambda line: line == "wheel -120", "a wheel turn down", after=mark)
    mark = app.mark()
    to = (free[0] + 60, free[1] + 20)
    lsm.ok(act(lsm, win, {"state_id": out["state_id"]},
               [{"type": "drag", "x": free[0], "y": free[1], "to_x": to[0], "to_y": to[1]}]))
    app.wait(lambda line: line == f"down {free[0]} {free[1]}", "the press at the drag start", after=mark)
    app.wait(lambda line: line == f"up {to[0]} {to[1]}", "the release at the drag end", after=mark)


def test_moved_window_and_out_of_bounds_inject_nothing(lsm, app):
    win = window_of(lsm)
    st = observe(lsm, win)
    mark = app.mark()
    app.log.with_name(app.log.name + ".move").write_text("")
    app.wait(lambda line: line.startswith("moved "), "its own move", after=mark)
    x, y = centre(app.button)
    r = act(lsm, win, st, [{"type": "click", "x": x, "y": y}])
    assert err_code(r) == "WINDOW_CHANGED", text_of(r)
    st = observe(lsm, win)
    r = act(lsm, win, st, [{"type": "click", "x": app.window[2] + 10, "y": 10}])
    assert err_code(r) == "OUT_OF_BOUNDS", text_of(r)
    assert not [line for line in app.lines()[mark:] if line.startswith(("pressed", "down", "up"))], app.lines()
