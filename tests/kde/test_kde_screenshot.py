"""Screenshots on KDE Plasma through KWin's ScreenShot2, once KWin has authorised lsm the way a
user would (a .desktop file naming lsm's binary with X-KDE-DBUS-Restricted-Interfaces, the
bed's `grant-screenshots`): the image is the window's own pixels in window-relative logical px,
so a spot read off the image and clicked by coordinates lands there (the app's own record), and
a covered window's image still shows its own content. The grant is taken back afterwards, so the
rest of the suite sees an unauthorised lsm."""

import os
import sys
from pathlib import Path

import pytest

from conftest import KDE_ENV, LSM_BIN, TESTAPP_NAME, app_events, bed, ensure_app
from gui_flow import act, element, find_window, observe, wait_for
from kwin_ground import kwin_move_to_top, kwin_window
from lsm_mcp import image_bytes, mcp_stdio, rect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import png_rgba  # noqa: E402

TITLE = "lsm test app"
AREA = (0xDD, 0xE7, 0xF3)  # the test app's "Double-click here" area (.lsm-area background)


@pytest.fixture(scope="module")
def testapp():
    return ensure_app("testapp", TESTAPP_NAME)


@pytest.fixture(scope="module")
def granted():
    r = bed("grant-screenshots", str(LSM_BIN.resolve()))
    assert r.returncode == 0, r.stderr
    yield
    bed("revoke-screenshots")


@pytest.fixture(scope="module")
def lsm(granted, testapp):
    env = dict(os.environ)
    env.update(KDE_ENV)
    env.pop("DISPLAY", None)
    env["LSM_WEB"] = "off"
    with mcp_stdio(env=env) as s:
        yield s


def shot(lsm, win):
    res = lsm.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = lsm.ok(res)
    png = image_bytes(res)
    assert png, f"no image: {st.get('notes')}"
    return st, png_rgba.decode(png)


def color_box(w, h, rows, color, tol=6, least=20):
    """The box of the first patch of one colour at least `least` px each way (in reading order):
    the test app paints three areas that colour, the first is "Double-click here"."""

    def is_color(x, y):
        px = rows[y][4 * x: 4 * x + 3]
        return all(abs(px[i] - color[i]) <= tol for i in range(3))

    for y0 in range(h):
        for x0 in range(w):
            if not is_color(x0, y0):
                continue
            x1 = x0
            while x1 + 1 < w and is_color(x1 + 1, y0):
                x1 += 1
            y1 = y0
            while y1 + 1 < h and is_color(x0, y1 + 1):
                y1 += 1
            if x1 - x0 + 1 >= least and y1 - y0 + 1 >= least:
                return x0, y0, x1 - x0 + 1, y1 - y0 + 1
    raise AssertionError(f"no patch of colour {color} in the {w}x{h} screenshot")


def test_the_screenshot_capability_is_on_and_the_image_is_the_window(lsm, testapp):
    backend = lsm.call_ok("gui_list", {})["backend"]
    assert "screenshot" in backend["capabilities"], backend
    win = find_window(lsm, title=TITLE)
    st, (w, h, rows) = shot(lsm, win)
    truth = kwin_window(pid=testapp["pid"])
    assert (w, h) == (truth["frame"]["width"], truth["frame"]["height"]), (w, h, truth)
    assert any("ScreenShot2" in n for n in st.get("notes", [])), st.get("notes")


def test_a_spot_read_off_the_screenshot_is_where_a_click_lands(lsm, testapp):
    win = find_window(lsm, title=TITLE)
    st, (w, h, rows) = shot(lsm, win)
    # The area as the pixels show it matches the area as AT-SPI places it.
    x, y, bw, bh = color_box(w, h, rows, AREA)
    area = rect(element(st, "Double-click here"))
    assert abs(x - area["x"]) <= 2 and abs(y - area["y"]) <= 2, ((x, y, bw, bh), area)
    assert abs(bw - area["width"]) <= 3 and abs(bh - area["height"]) <= 3, ((x, y, bw, bh), area)
    # A click at a spot read off the image lands on that spot of the app (its own record).
    truth = kwin_window(pid=testapp["pid"])
    dx, dy = truth["frame"]["x"] - truth["buffer"]["x"], truth["frame"]["y"] - truth["buffer"]["y"]
    cx, cy = x + bw // 3, y + bh // 2
    n = len(app_events("click"))
    act(lsm, observe(lsm, win), [{"type": "click", "x": cx, "y": cy}])
    ev = wait_for(lambda: app_events("click")[n:], what="the app saw a click")[0]
    assert (ev["px"] - dx, ev["py"] - dy) == (cx, cy), (ev, cx, cy)


def test_a_covered_window_shows_its_own_pixels(lsm, testapp):
    win = find_window(lsm, title=TITLE)
    _, (w, h, rows) = shot(lsm, win)
    box = color_box(w, h, rows, AREA)
    # An XWayland xterm put over the test app's area and raised, through KWin itself.
    xterm_pid = int(bed("ensure-app", "xterm").stdout.split()[-1])
    wait_for(lambda: kwin_window(pid=xterm_pid), what="the xterm window")
    app = kwin_window(pid=testapp["pid"])
    kwin_move_to_top(xterm_pid, app["frame"]["x"] + box[0] - 10, app["frame"]["y"] + box[1] - 10)
    term = wait_for(lambda: [t for t in [kwin_window(pid=xterm_pid)] if t and t["active"]], what="xterm raised")[0]
    f = term["frame"]
    assert f["x"] <= app["frame"]["x"] + box[0] and f["y"] <= app["frame"]["y"] + box[1], (f, app, box)
    st, (w2, h2, rows2) = shot(lsm, win)
    assert (w2, h2) == (w, h)
    assert color_box(w2, h2, rows2, AREA) == box, "the covered area shows the window's own pixels"
    assert not any("covers part" in n for n in st.get("notes", [])), st.get("notes")
