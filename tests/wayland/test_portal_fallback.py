"""GNOME through the desktop portal: what lsm does where mutter's own remote-desktop API is out
of its reach (here forced with LSM_GNOME_INPUT=portal). xdg-desktop-portal-gnome shows its
"Remote desktop" dialog; a process of the test's own answers it through AT-SPI, as a person
would (tests/lib/wl_portal_approve.py), and says how many dialogs it answered. Effects are
checked outside lsm: the app's own record of clicks, AT-SPI, the shell's window list."""

import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import TESTAPP_NAME, app_events, ensure_app, lsm_env, run_probe
from gui_flow import act, act_raw, center, element, find_window, observe, wait_for
from lsm_mcp import err_code, image_bytes, mcp_stdio, rect
from png_rgba import decode, pixel
from wl_shell import SYSTEM_PYTHON, activate, buffer_offset, shell_window

APPROVER = Path(__file__).resolve().parents[1] / "lib" / "wl_portal_approve.py"
TITLE = "lsm test app"


class Approver:
    """Answers every portal dialog for the module; `answered` lists them."""

    def __init__(self):
        self.answered: list[str] = []
        self.proc = subprocess.Popen([SYSTEM_PYTHON, "-W", "ignore", str(APPROVER), "900"], env=lsm_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("approved"):
                self.answered.append(line.strip())

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def approver():
    a = Approver()
    yield a
    a.close()


@pytest.fixture(scope="module")
def portal_lsm(approver, tmp_path_factory):
    ensure_app("testapp", TESTAPP_NAME)
    env = lsm_env()
    env["LSM_GNOME_INPUT"] = "portal"
    env["LSM_STATE_DIR"] = str(tmp_path_factory.mktemp("lsm-state"))
    with mcp_stdio(env=env) as s:
        yield s


@pytest.fixture
def app(portal_lsm):
    win = find_window(portal_lsm, title=TITLE)
    activate(shell_window(pid=win["pid"])["id"])
    wait_for(lambda: shell_window(pid=win["pid"])["focus"], what="the test app on top")
    return portal_lsm, win


def first_action(s, st, actions):
    """The first input asks the user; a call that ends before the answer says so (TIMEOUT,
    nothing sent) and the next one uses the answer."""
    deadline = time.monotonic() + 60
    while True:
        res = act_raw(s, st, actions)
        if not res.is_error or err_code(res) != "TIMEOUT" or time.monotonic() > deadline:
            return res
        st = observe(s, {"window_id": st["window"]["window_id"]})


def test_gui_list_says_the_portal_is_used_and_what_that_means(app):
    s, win = app
    data = s.call_ok("gui_list", {})
    backend = data["backend"] if "backend" in data else data["machines"][0]["backend"]
    assert backend["name"] == "linux-wayland-portal", backend
    assert {"windows", "raw_input", "screenshot", "accessibility"} <= set(backend["capabilities"])
    assert "unicode_typing" not in backend["capabilities"]
    notes = " ".join(backend["notes"])
    assert "desktop portal" in notes and "LSM_GNOME_INPUT=portal" in notes, notes
    f = shell_window(pid=win["pid"])["frame"]
    assert win["bounds"] == {"x": f["x"], "y": f["y"], "width": f["width"], "height": f["height"]}


def test_coordinate_clicks_land_on_the_exact_point(app, approver):
    s, win = app
    st = observe(s, win)
    b = rect(element(st, "Double-click here"))
    points = [(b["x"] + 3, b["y"] + 4), center(element(st, "Double-click here")), (b["x"] + b["width"] - 5, b["y"] + 7)]
    dx, dy = buffer_offset(shell_window(pid=win["pid"]))
    for i, (x, y) in enumerate(points):
        n = len(app_events("testapp", "click"))
        res = first_action(s, st, [{"type": "click", "x": x, "y": y}]) if i == 0 else \
            act_raw(s, st, [{"type": "click", "x": x, "y": y}])
        assert not res.is_error, res
        ev = wait_for(lambda: app_events("testapp", "click")[n:], what="the app saw a click")[0]
        assert (ev["x"] - dx, ev["y"] - dy) == (x, y)
        st = observe(s, win)
    assert len(approver.answered) == 1, approver.answered


def test_typed_text_and_a_key_combo_arrive_and_other_text_is_refused(app):
    s, win = app
    st = observe(s, win)
    entry = element(st, "Name entry")
    act(s, st, [{"type": "click", "x": center(entry)[0], "y": center(entry)[1]},
                {"type": "key", "keys": "ctrl+a"}, {"type": "type", "text": "portal 42!"}])
    wait_for(lambda: run_probe(find="Name entry")["text"] == "portal 42!", what="the typed text")
    st = observe(s, win)
    res = act_raw(s, st, [{"type": "type", "element_id": element(st, "Name entry")["id"], "text": "日本語"}])
    assert err_code(res) == "UNSUPPORTED_ACTION", res
    assert run_probe(find="Name entry")["text"] == "portal 42!"


def test_a_screenshot_is_cut_from_the_shared_screen_and_says_when_covered(app):
    s, win = app
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = s.ok(res)
    width, height, rows = decode(image_bytes(res))
    assert (width, height) == (win["bounds"]["width"], win["bounds"]["height"])
    assert st["screenshot"]["occluded"] is False, st
    b = rect(element(st, "Double-click here"))
    r, g, bl = pixel(rows, b["x"] + 6, b["y"] + 6)[:3]
    assert bl > r + 10 and bl > 200, (r, g, bl)
    # Covered by another window: the screen shows that window there, and the result says so.
    other = ensure_app("gtk3-widget-factory", "gtk3-widget-factory")
    activate(other["id"])
    wait_for(lambda: shell_window(pid=other["pid"])["focus"], what="the widget factory on top")
    st = s.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": True})
    assert st["screenshot"]["occluded"] is True, st["screenshot"]


def test_the_user_was_asked_once(approver):
    assert len(approver.answered) == 1, approver.answered
