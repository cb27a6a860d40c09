"""Issue 22, part 10: input only where it lands in the window it is meant for, under Wine.

* A modal dialog (the owner disabled, an enabled popup owned by it, as DialogBox makes it) is
  seen: the owner is `blocked_by` the dialog, the dialog is `modal`, and a click on the owner is
  refused with WINDOW_BLOCKED, nothing sent (the app's log shows neither window received it).
* A window covered by another top-level window is raised before a click and the click lands
  in it; where it cannot be raised (the cover is always on top), the answer is an error naming
  the cover, and the cover received nothing.
* Bounds are what is on the screen of the window: the screenshot's top row is the app's own
  pixels, not a title bar the X11 window manager draws (or, with none, nothing draws).

Every effect is read from lsm_wintest's own log."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "lib"))

from conftest import TITLE  # noqa: E402
from lsm_mcp import err_code, image_bytes, text_of  # noqa: E402
from png_rgba import decode  # noqa: E402

DIALOG = "lsm win dialog"
COVER = "lsm win cover"


def listed(s, title: str) -> dict:
    wins = s.call_ok("gui_list", {})["windows"]
    found = [w for w in wins if w["title"] == title]
    assert found, [w["title"] for w in wins]
    return found[0]


def centre(r: tuple) -> tuple[int, int]:
    x, y, w, h = r
    return x + w // 2, y + h // 2


def received(app, mark: int) -> list[str]:
    return [line for line in app.lines()[mark:]
            if line.startswith(("pressed", "down", "up", "dialog ", "cover down", "cover key", "checked",
                                "text"))]


def test_modal_dialog_blocks_its_owner(lsm, app):
    win = listed(lsm, TITLE)
    mark = app.mark()
    app.flag("modal")
    app.wait(lambda line: line.startswith("modal "), "the modal dialog", after=mark)
    dialog = listed(lsm, DIALOG)
    owner = listed(lsm, TITLE)
    print("owner:", {k: owner.get(k) for k in ("window_id", "blocked_by", "bounds")})
    print("dialog:", {k: dialog.get(k) for k in ("window_id", "modal", "transient_for", "bounds")})
    assert dialog.get("modal") is True and dialog.get("transient_for") == owner["window_id"], dialog
    assert owner.get("blocked_by") == dialog["window_id"], owner
    # Its observation says so.
    r = lsm.call("gui_state", {"window_id": owner["window_id"], "screenshot": False})
    assert "blocked by modal dialog" in text_of(r), text_of(r)
    # A click on the owner's button (not under the dialog) is refused, nothing sent.
    x, y = centre(app.button)
    mark = app.mark()
    r = lsm.call("gui_action", {"window_id": owner["window_id"], "state_id": lsm.ok(r)["state_id"],
                                "actions": [{"type": "click", "x": x, "y": y}]})
    print("click on the owner:", err_code(r), text_of(r)[:300])
    assert err_code(r) == "WINDOW_BLOCKED", text_of(r)
    assert dialog["window_id"] in text_of(r) and DIALOG in text_of(r), text_of(r)
    time.sleep(0.5)
    assert received(app, mark) == [], app.lines()[mark:]


def test_covered_window_is_raised_before_the_click(lsm, app):
    win = listed(lsm, TITLE)
    mark = app.mark()
    app.flag("cover")
    cover = app.wait(lambda line: line.startswith("cover "), "the covering window", after=mark)
    print("app:", app.window, "button:", app.button, "cover:", cover)
    listed(lsm, COVER)
    st = lsm.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})
    x, y = centre(app.button)
    mark = app.mark()
    r = lsm.call("gui_action", {"window_id": win["window_id"], "state_id": st["state_id"],
                                "actions": [{"type": "click", "x": x, "y": y}]})
    print("click on the covered button:", "error" if r.is_error else "ok", text_of(r)[:300])
    assert not r.is_error, text_of(r)
    app.wait(lambda line: line == "pressed 1", "the button press", after=mark)
    assert not [line for line in app.lines()[mark:] if line.startswith("cover down")], app.lines()[mark:]


def test_window_under_a_topmost_one_gets_no_input_and_says_why(lsm, app):
    win = listed(lsm, TITLE)
    mark = app.mark()
    app.flag("cover", "topmost")
    app.wait(lambda line: line.startswith("cover "), "the covering window", after=mark)
    cover = listed(lsm, COVER)
    st = lsm.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})
    x, y = centre(app.button)
    mark = app.mark()
    r = lsm.call("gui_action", {"window_id": win["window_id"], "state_id": st["state_id"],
                                "actions": [{"type": "click", "x": x, "y": y}]})
    print("click under the topmost cover:", "error" if r.is_error else "ok", text_of(r)[:400])
    assert r.is_error, "ok with the input in the wrong window: " + text_of(r)
    print("code:", err_code(r))
    assert COVER in text_of(r) and cover["window_id"] in text_of(r), text_of(r)
    time.sleep(0.5)
    assert received(app, mark) == [], app.lines()[mark:]
    # A point the cover leaves free still works.
    st = lsm.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})
    free = (app.edit[0] + 40, app.edit[1] + app.edit[3] + 50)
    mark = app.mark()
    lsm.ok(lsm.call("gui_action", {"window_id": win["window_id"], "state_id": st["state_id"],
                                   "actions": [{"type": "click", "x": free[0], "y": free[1]}]}))
    app.wait(lambda line: line == f"down {free[0]} {free[1]}", "the click on the free part", after=mark)


def test_screenshot_starts_with_the_apps_own_pixels(lsm, app):
    win = listed(lsm, TITLE)
    b = win["bounds"]
    print("gui_list bounds:", b, "client area on screen:", app.window, "Win32 window rect:", app.win32_rect)
    r = lsm.call("gui_state", {"window_id": win["window_id"]})
    w, h, rows = decode(image_bytes(r))
    assert (w, h) == (b["width"], b["height"])
    # The client area's background (no control there, COLOR_WINDOW).
    fx, fy = app.edit[0] + 40, app.edit[1] + app.edit[3] + 40
    background = rows[fy][fx * 4:fx * 4 + 3]
    top = {bytes(rows[0][i:i + 3]) for i in range(0, w * 4, 4)}
    left = {bytes(rows[y][0:3]) for y in range(h)}
    print("background:", background, "top row colours:", sorted(top)[:5], "left column colours:", sorted(left)[:5])
    assert top == {bytes(background)}, f"the top row is not the app's background {background}: {sorted(top)[:5]}"
    assert bytes(background) in left and b"\0\0\0" not in left, sorted(left)[:5]
    # gui_list's bounds, the screenshot and x/y agree: (0,0) is the client area's corner.
    assert (b["x"], b["y"], b["width"], b["height"]) == app.window, (b, app.window)


def test_keys_go_to_the_target_not_the_window_in_front(lsm, app):
    win = listed(lsm, TITLE)
    st = lsm.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})
    ex, ey = centre(app.edit)
    mark = app.mark()
    out = lsm.ok(lsm.call("gui_action", {"window_id": win["window_id"], "state_id": st["state_id"],
                                         "actions": [{"type": "click", "x": ex, "y": ey}]}))
    # An always-on-top window of the app opens and takes the keyboard: keys must not go there.
    app.flag("cover", "topmost")
    app.wait(lambda line: line.startswith("cover "), "the covering window", after=mark)
    mark = app.mark()
    r = lsm.call("gui_action", {"window_id": win["window_id"], "state_id": out["state_id"],
                                "actions": [{"type": "type", "text": "hi"}]})
    print("type with the cover in front:", "error" if r.is_error else "ok", text_of(r)[:300])
    if r.is_error:
        # Refused: then nothing may have arrived anywhere, and the answer names the window.
        assert COVER in text_of(r), text_of(r)
        time.sleep(0.5)
        assert received(app, mark) == [], app.lines()[mark:]
    else:
        # In its edit, or in the window itself: activated again, a plain Win32 window gives the
        # focus back to no control (DefWindowProc does not restore it; dialogs do).
        app.wait(lambda line: line in ("text hi", "key 105"), "the typed text", after=mark)
        assert not [line for line in app.lines()[mark:] if line.startswith("cover key")], app.lines()[mark:]
