"""Window capture: size and coordinate space, and pixels that are the window's own.

The bed's desktop runs xfwm4 without a compositor, where reading the screen gives a covered
window the covering window's pixels (or black). lsm reads the window's own pixmap through the
Composite extension, so a covered window, the window under a modal dialog and the off-screen part
of a window all come back with their own pixels; each test compares them with the same window
captured uncovered (ground truth outside lsm's claim: the pixels of an uncovered capture equal
those of the screen, checked once with ImageMagick's `import -window root`).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import png_rgba  # noqa: E402
from gui_flow import act, act_raw, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

TITLE = "lsm test app"
# Pixels allowed to differ between two captures of the same idle window (a caret, a hover).
TOLERANCE = 0.005


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def state_with_image(s, window) -> tuple[dict, bytes]:
    res = s.call("gui_state", {"window_id": window["window_id"], "include_elements": False})
    data = s.ok(res)
    png = image_bytes(res)  # noqa: F405
    assert png, "gui_state must attach the screenshot as image content"
    return data, png


def rows_of(png: bytes) -> list[bytes]:
    _, _, rows = png_rgba.decode(png)
    return rows


def differing(a: list[bytes], b: list[bytes], box=None) -> float:
    """Fraction of pixels (RGB) that differ by more than a little, inside box (x, y, w, h)."""
    assert len(a) == len(b) and len(a[0]) == len(b[0]), "captures of different sizes"
    width, height = len(a[0]) // 4, len(a)
    x0, y0, w, h = box or (0, 0, width, height)
    x1, y1 = min(width, x0 + w), min(height, y0 + h)
    diff = total = 0
    for y in range(max(0, y0), y1):
        ra, rb = a[y], b[y]
        for x in range(max(0, x0), x1):
            i = 4 * x
            total += 1
            if max(abs(ra[i] - rb[i]), abs(ra[i + 1] - rb[i + 1]), abs(ra[i + 2] - rb[i + 2])) > 16:
                diff += 1
    return diff / max(1, total)


def dark_fraction(rows: list[bytes], box) -> float:
    x0, y0, w, h = box
    dark = total = 0
    for y in range(y0, min(len(rows), y0 + h)):
        r = rows[y]
        for x in range(x0, min(len(r) // 4, x0 + w)):
            total += 1
            if r[4 * x] + r[4 * x + 1] + r[4 * x + 2] < 30:
                dark += 1
    return dark / max(1, total)


def xdo(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=10, capture_output=True)


def raise_window(s, win) -> None:
    act(s, observe(s, win, include_elements=False), [{"type": "focus"}])


def test_uncovered_window_capture_matches_its_coordinate_space_and_the_screen(lsm_stdio, tmp_path):
    s = lsm_stdio
    win = find_window(s, app="calculator")
    # Other tests raise other windows: bring this one to the top first.
    raise_window(s, win)
    data, png = state_with_image(s, win)
    space = data["coordinate_space"]
    assert png_size(png) == (space["width"], space["height"]) == (win["bounds"]["width"], win["bounds"]["height"])
    assert data["screenshot"]["occluded"] is False
    # The window's own pixels are what a person sees where nothing covers it.
    b = win["bounds"]
    out = tmp_path / "screen.png"
    subprocess.run(["import", "-window", "root", "-crop", f"{b['width']}x{b['height']}+{b['x']}+{b['y']}",
                    "+repage", "-depth", "8", "-define", "png:color-type=2", f"png:{out}"],
                   check=True, timeout=20)
    screen = rows_of(out.read_bytes())
    frac = differing(rows_of(png), screen)
    print(f"uncovered capture vs screen: {frac:.4%} of pixels differ")
    assert frac <= TOLERANCE


@pytest.fixture
def testapp_and_xterm(lsm_stdio, restart_app):
    """The test app (freshly started, so nothing in it has changed) and the xterm, restored after."""
    restart_app("testapp")
    yield find_window(lsm_stdio, title=TITLE), find_window(lsm_stdio, app="xterm")
    restart_app("xterm")


def test_covered_window_has_its_own_pixels(lsm_stdio, testapp_and_xterm):
    s = lsm_stdio
    app, term = testapp_and_xterm
    b = app["bounds"]
    # The xterm over the lower right quarter of the test app, on top, before lsm ever captured
    # the test app (its first capture is the one that has to get the covered part right).
    xdo("windowmove", "--sync", term["window_id"], str(b["x"] + b["width"] // 2), str(b["y"] + b["height"] // 2))
    xdo("windowraise", term["window_id"])
    wait_for(lambda: find_window(s, app="xterm")["bounds"]["x"] < b["x"] + b["width"], what="xterm moved")
    t0 = time.monotonic()
    covered_data, covered = state_with_image(s, app)
    first_ms = (time.monotonic() - t0) * 1000
    assert png_size(covered) == (b["width"], b["height"])
    assert covered_data["screenshot"]["occluded"] is False, covered_data["notes"]
    assert not any("covers" in n for n in covered_data["notes"]), covered_data["notes"]
    assert "may cover" not in text_of(s.call("gui_state", {"window_id": app["window_id"],  # noqa: F405
                                                           "include_elements": False}))
    # The same window uncovered: the xterm back to its own place.
    xdo("windowmove", "--sync", term["window_id"], "900", "500")
    wait_for(lambda: find_window(s, app="xterm")["bounds"]["x"] >= 900, what="xterm moved away")
    _, uncovered = state_with_image(s, app)
    quarter = (b["width"] // 2, b["height"] // 2, b["width"] - b["width"] // 2, b["height"] - b["height"] // 2)
    whole, part = differing(rows_of(covered), rows_of(uncovered)), differing(rows_of(covered), rows_of(uncovered),
                                                                             quarter)
    print(f"covered vs uncovered: {whole:.4%} of all pixels, {part:.4%} of the covered quarter differ; "
          f"first capture {first_ms:.0f} ms")
    if os.environ.get("LSM_TEST_KEEP_IMAGES"):
        Path("/tmp/covered.png").write_bytes(covered)
        Path("/tmp/uncovered.png").write_bytes(uncovered)
    assert whole <= TOLERANCE and part <= 2 * TOLERANCE


def test_a_window_slow_to_repaint_holds_up_no_other_window(lsm_factory, testapp_and_xterm):
    """The first capture of a covered window waits, up to 800 ms, for its application to repaint
    what was covered. That wait held lsm's X11 connection, so a call about any other window
    waited with it (a background capture after `gui_state` once held up the next action on
    another window by 500 ms). A stopped xterm, covered, never repaints: while its capture
    waits, the window list still answers at once."""
    app, term = testapp_and_xterm
    s = lsm_factory("stdio")  # a server that has redirected nothing yet
    b = app["bounds"]
    xdo("windowmove", "--sync", term["window_id"], str(b["x"] + 40), str(b["y"] + 40))
    xdo("windowraise", app["window_id"])
    wait_for(lambda: abs(find_window(s, app="xterm")["bounds"]["x"] - (b["x"] + 40)) < 80, what="xterm under the test app")
    time.sleep(0.3)
    pid = find_window(s, app="xterm")["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        captured: dict = {}

        def capture() -> None:
            t0 = time.monotonic()
            res = s.call("gui_state", {"window_id": term["window_id"], "include_elements": False})
            captured["ms"] = (time.monotonic() - t0) * 1000
            captured["data"] = s.ok(res)

        worker = threading.Thread(target=capture)
        worker.start()
        time.sleep(0.15)
        t0 = time.monotonic()
        listed = s.call_ok("gui_list", {})
        list_ms = (time.monotonic() - t0) * 1000
        worker.join(30)
        print(f"stopped xterm's first capture {captured.get('ms', 0):.0f} ms; the window list meanwhile {list_ms:.0f} ms")
        assert any(w["window_id"] == app["window_id"] for w in listed["windows"])
        # The capture did wait for the repaint that never came, and said so.
        assert captured.get("ms", 0) >= 600, captured
        assert captured["data"]["screenshot"]["occluded"] is True, captured["data"]
        assert list_ms < 300, f"the window list waited for another window's repaint: {list_ms:.0f} ms"
    finally:
        os.kill(pid, signal.SIGCONT)


def test_window_under_a_modal_dialog_has_its_own_pixels(lsm_stdio, ensure_app, stop_app):
    """The Qt tree app's File > Open dialog... opens a modal dialog over the main window."""
    s = lsm_stdio
    ensure_app("qttree")
    main = find_window(s, title="lsm qt tree")
    raise_window(s, main)
    _, before = state_with_image(s, main)
    try:
        # Through the keyboard: the menu's own action would block in the dialog's event loop.
        act(s, observe(s, main, include_elements=False),
            [{"type": "key", "keys": "alt+f"}, {"type": "wait", "seconds": 0.3}, {"type": "key", "keys": "o"}])
        dialog = wait_for(lambda: next((w for w in s.ok(s.call("gui_list", {}))["windows"]
                                        if w["title"] == "lsm modal dialog"), None),
                          timeout=10, what="the modal dialog")
        d, b = dialog["bounds"], main["bounds"]
        under = (max(0, d["x"] - b["x"]), max(0, d["y"] - b["y"]), d["width"], d["height"])
        assert under[0] < b["width"] and under[1] < b["height"], (d, b)
        data, covered = state_with_image(s, main)
        assert data["screenshot"]["occluded"] is False, data["notes"]
        frac = differing(rows_of(before), rows_of(covered), under)
        print(f"main window under the dialog vs before it opened, where the dialog is: {frac:.4%} of pixels "
              f"differ (dialog {d['width']}x{d['height']} at {d['x']},{d['y']})")
        assert frac <= 4 * TOLERANCE
    finally:
        stop_app("qttree")


def test_window_larger_than_the_screen_off_screen_part_and_elements(lsm_stdio, testapp_and_xterm):
    s = lsm_stdio
    app, _ = testapp_and_xterm
    raise_window(s, app)
    _, whole = state_with_image(s, app)
    b = app["bounds"]
    # Push the window so its right 300 px and bottom 200 px lie outside the 1280x800 screen.
    xdo("windowmove", "--sync", app["window_id"], str(1280 - b["width"] + 300), str(800 - b["height"] + 200))
    moved = wait_for(lambda: (lambda w: w if w["bounds"]["x"] > 1280 - b["width"] else None)(
        find_window(s, title=TITLE)), what="test app moved")
    mb = moved["bounds"]
    visible_w, visible_h = 1280 - mb["x"], 800 - mb["y"]
    assert visible_w < mb["width"] and visible_h < mb["height"], mb
    data, shot = state_with_image(s, moved)
    rows = rows_of(shot)
    off_box = (visible_w, 0, mb["width"] - visible_w, mb["height"])
    frac = differing(rows, rows_of(whole))
    print(f"partly off-screen vs on-screen capture: {frac:.4%} differ; off-screen part dark: "
          f"{dark_fraction(rows, off_box):.1%}; notes {data['notes']}")
    assert dark_fraction(rows, off_box) < 0.5
    assert frac <= TOLERANCE
    st = observe(s, moved)
    marked = [e for e in st["elements"] if "off_screen" in e.get("states", [])]
    for e in st["elements"]:
        if not e.get("bounds") or e.get("parent") is None:  # the window's own frame
            continue
        x, y, _, _ = e["bounds"]
        outside = x >= visible_w or y >= visible_h
        assert ("off_screen" in e.get("states", [])) == outside, e
    assert marked, "some elements of the test app lie off screen"
    assert any(f"{len(marked)} element(s) lie outside" in n for n in st["notes"]), st["notes"]
    print(f"{len(marked)} of {len(st['elements'])} element(s) marked off_screen")


def test_minimized_window_names_the_focus_action_which_restores_it(lsm_stdio, testapp_and_xterm):
    s = lsm_stdio
    app, _ = testapp_and_xterm
    xdo("windowminimize", "--sync", app["window_id"])
    wait_for(lambda: find_window(s, title=TITLE)["minimized"], what="minimized")
    r = s.call("gui_state", {"window_id": app["window_id"], "include_elements": False})
    assert r.is_error
    assert err_code(r) == "WINDOW_MINIMIZED"  # noqa: F405
    msg = err_message(r)  # noqa: F405
    assert '{"type":"focus"}' in msg and "gui_action" in msg, msg
    st = observe(s, app, screenshot=False, include_elements=False)
    assert any('"focus"' in n for n in st["notes"]), st["notes"]
    act(s, st, [{"type": "focus"}])
    # Restored outside lsm's word: the window manager maps it again.
    state = subprocess.run(["xprop", "-id", app["window_id"], "WM_STATE"], capture_output=True, text=True,
                           timeout=10).stdout
    assert "Normal" in state, state
    data, png = state_with_image(s, app)
    assert png_size(png) == (app["bounds"]["width"], app["bounds"]["height"])
    assert data["window"]["minimized"] is False
    assert json.dumps(data["notes"]).find("minimized") < 0, data["notes"]
