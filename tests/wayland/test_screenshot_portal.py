"""GNOME's last way to a window's pixels: where mutter's window streams cannot be read (here: no
GStreamer frame helper on lsm's PATH), lsm takes the desktop portal's Screenshot of the whole
screen (interactive=false; the user's yes stored in the portal's permission store, as the
portal's own dialog would store it) and cuts it to the window in window-relative logical px.
Checked outside lsm: the shell's window list (size), AT-SPI (where the control is), the app's own
record of a click at a spot read off the image, the portal's file removed from $HOME."""

import subprocess
from pathlib import Path

import pytest
from conftest import TESTAPP_NAME, WL_ENV, app_events, ensure_app, lsm_env
from gui_flow import act, element, find_window, observe, wait_for
from lsm_mcp import image_bytes, mcp_stdio, rect
from png_rgba import decode
from wl_shell import activate, buffer_offset, shell_window

TITLE = "lsm test app"
AREA = (0xDD, 0xE7, 0xF3)  # the test app's "Double-click here" area (.lsm-area background)
STORE = ["--dest", "org.freedesktop.impl.portal.PermissionStore",
         "--object-path", "/org/freedesktop/impl/portal/PermissionStore"]
IFACE = "org.freedesktop.impl.portal.PermissionStore"


def store(method: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["gdbus", "call", "--session", *STORE, "--method", f"{IFACE}.{method}", *args],
                          capture_output=True, text=True, timeout=20, env=lsm_env())


@pytest.fixture(scope="module")
def portal_shots():
    """lsm without the frame helper, the user's yes to screenshots stored; taken back after."""
    app = ensure_app("testapp", TESTAPP_NAME)
    r = store("SetPermission", "screenshot", "true", "screenshot", "", "['yes']")
    assert r.returncode == 0, r.stderr
    env = lsm_env()
    env["PATH"] = "/nonexistent"  # lsm runs by absolute path; gst-launch-1.0 is not found
    try:
        with mcp_stdio(env=env) as s:
            yield s, app
    finally:
        store("DeletePermission", "screenshot", "screenshot", "")


def area_box(w, h, rows, least=20, tol=6):
    """The first patch of the area's colour at least `least` px each way (reading order)."""

    def is_area(x, y):
        px = rows[y][4 * x: 4 * x + 3]
        return all(abs(px[i] - AREA[i]) <= tol for i in range(3))

    for y0 in range(h):
        for x0 in range(w):
            if not is_area(x0, y0):
                continue
            x1, y1 = x0, y0
            while x1 + 1 < w and is_area(x1 + 1, y0):
                x1 += 1
            while y1 + 1 < h and is_area(x0, y1 + 1):
                y1 += 1
            if x1 - x0 + 1 >= least and y1 - y0 + 1 >= least:
                return x0, y0, x1 - x0 + 1, y1 - y0 + 1
    raise AssertionError(f"no patch of the area's colour in the {w}x{h} screenshot")


def test_the_screenshot_is_the_windows_pixels_and_a_spot_read_off_it_is_clicked(portal_shots):
    s, app = portal_shots
    backend = s.call_ok("gui_list", {})["backend"]
    assert "screenshot" in backend["capabilities"], backend
    win = find_window(s, title=TITLE)
    activate(shell_window(pid=win["pid"])["id"])
    wait_for(lambda: shell_window(pid=win["pid"])["focus"], what="the test app on top")
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = s.ok(res)
    png = image_bytes(res)
    assert png, st.get("notes")
    assert any("Screenshot" in n and "desktop portal" in n for n in st.get("notes", [])), st.get("notes")
    w, h, rows = decode(png)
    frame = shell_window(pid=win["pid"])["frame"]
    assert (w, h) == (frame["width"], frame["height"]), ((w, h), frame)
    # The area as the pixels show it is where AT-SPI places it (inside its 1 px border).
    x, y, bw, bh = area_box(w, h, rows)
    area = rect(element(st, "Double-click here"))
    assert abs(x - area["x"]) <= 2 and abs(y - area["y"]) <= 2, ((x, y, bw, bh), area)
    assert abs(bw - area["width"]) <= 3 and abs(bh - area["height"]) <= 3, ((x, y, bw, bh), area)
    # A click at a spot read off the image lands on that spot of the app (its own record).
    dx, dy = buffer_offset(shell_window(pid=win["pid"]))
    cx, cy = x + bw // 3, y + bh // 2
    n = len(app_events("testapp", "click"))
    act(s, observe(s, win), [{"type": "click", "x": cx, "y": cy}])
    ev = wait_for(lambda: app_events("testapp", "click")[n:], what="the app saw a click")[0]
    assert (ev["x"] - dx, ev["y"] - dy) == (cx, cy), (ev, cx, cy)
    # The portal's file is lsm's by-product: gone from the user's home.
    home = Path(WL_ENV["LSM_WLBED_HOME"])
    leftovers = [*home.glob("Screenshot*.png"), *home.glob("Pictures/Screenshot*.png")]
    assert not leftovers, leftovers


def test_a_covered_window_says_its_covered_parts_show_the_other_window(portal_shots):
    s, _ = portal_shots
    win = find_window(s, title=TITLE)
    other = ensure_app("gtk3-widget-factory", "gtk3-widget-factory")
    activate(other["id"])
    wait_for(lambda: shell_window(pid=other["pid"])["focus"], what="the widget factory on top")
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = s.ok(res)
    assert image_bytes(res)
    assert any("covers part" in n and "Screenshot" in n for n in st.get("notes", [])), st.get("notes")
