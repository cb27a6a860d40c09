"""The observe -> act loop on GNOME Wayland (headless GNOME Shell, no unsafe mode) against the
GTK3 test application running as a native Wayland client, through the official MCP client.
Every effect is checked outside lsm: AT-SPI, the shell's own window list, the app's own record
of the events it received, the clipboard read by a process of the test's own."""

import subprocess
import time

import pytest
from conftest import TESTAPP_NAME, app_events, ensure_app, restart_app, run_probe
from gui_flow import act, act_raw, center, element, find_window, observe, wait_for
from lsm_mcp import err_code, image_bytes, rect
from outside_changes import observation_sees_changes_made_outside_lsm
from png_rgba import decode, pixel
from wl_shell import ClipboardOwner, activate, buffer_offset, move_focused_window, read_clipboard, shell_window

TITLE = "lsm test app"


def label(prefix: str) -> str:
    node = run_probe(find=prefix, match="prefix")
    assert node, f"status label {prefix!r} not found through AT-SPI"
    return node["name"]


def count(prefix: str) -> int:
    return int(label(prefix).split(":")[1])


def wait_label(prefix: str, pred, what: str, timeout: float = 5.0) -> str:
    return wait_for(lambda: (lambda t: t if pred(t) else None)(label(prefix)), timeout=timeout, what=what)


def click_seen_at(s, st: dict, win: dict, x: int, y: int) -> dict:
    """Clicks window-relative (x, y) and asserts the test app's own record of the click is at
    exactly that point; the gui_action result."""
    n = len(app_events("testapp", "click"))
    res = act(s, st, [{"type": "click", "x": x, "y": y}])
    ev = wait_for(lambda: app_events("testapp", "click")[n:], what="the app saw a click")[0]
    # The app reports surface coordinates; the surface starts (frame - buffer) before the window.
    dx, dy = buffer_offset(shell_window(pid=win["pid"]))
    assert (ev["x"] - dx, ev["y"] - dy) == (x, y)
    return res


@pytest.fixture(scope="module", autouse=True)
def testapp():
    return ensure_app("testapp", TESTAPP_NAME)


@pytest.fixture
def app(lsm):
    return lsm, find_window(lsm, title=TITLE)


def test_gui_list_reports_the_gnome_backend_and_the_shells_geometry(app):
    s, win = app
    data = s.call_ok("gui_list", {})
    backend = data["backend"] if "backend" in data else data["machines"][0]["backend"]
    assert backend["name"] == "linux-wayland-gnome" and backend["session"] == "wayland"
    assert {"windows", "raw_input", "screenshot", "accessibility"} <= set(backend["capabilities"])
    truth = shell_window(pid=win["pid"])
    f = truth["frame"]
    assert win["bounds"] == {"x": f["x"], "y": f["y"], "width": f["width"], "height": f["height"]}
    assert win["accessible"]


def test_state_has_window_relative_elements_and_the_windows_own_pixels(app):
    s, win = app
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = s.ok(res)
    assert st["coordinate_space"]["width"] == win["bounds"]["width"]
    width, height, rows = decode(image_bytes(res))
    assert (width, height) == (win["bounds"]["width"], win["bounds"]["height"])
    # AT-SPI's own extents of a control, moved by the shell's frame-buffer offset (GTK3 counts
    # from its surface, shadow included), are where lsm says the control is.
    node = run_probe(find="Press me")
    dx, dy = buffer_offset(shell_window(pid=win["pid"]))
    b = rect(element(st, "Press me", "push_button"))
    e = node["extents"]
    assert (b["x"], b["y"], b["width"], b["height"]) == (e["x"] - dx, e["y"] - dy, e["width"], e["height"])
    # Real pixels: the window is not one flat colour.
    colours = {pixel(rows, x, y) for x in range(0, width, 37) for y in range(0, height, 29)}
    assert len(colours) > 8


def test_check_box_by_element_id(app):
    s, win = app
    before = "checked" in run_probe(find="Enable feature")["states"]
    st = observe(s, win)
    res = act(s, st, [{"type": "click", "element_id": element(st, "Enable feature", "check_box")["id"]}])
    assert res["results"][0]["verified"], res
    wait_for(lambda: ("checked" in run_probe(find="Enable feature")["states"]) != before, what="toggled")


@pytest.mark.parametrize("text", ["Grüße, 日本語 ë € 😀 한글", "plain ascii 123"])
def test_type_arrives_exactly(app, text):
    s, win = app
    st = observe(s, win)
    entry = element(st, "Name entry")
    act(s, st, [{"type": "set_value", "element_id": entry["id"], "value": ""}])
    wait_for(lambda: run_probe(find="Name entry")["text"] == "", what="entry emptied")
    st = observe(s, win)
    res = act(s, st, [{"type": "type", "element_id": element(st, "Name entry")["id"], "text": text}])
    assert res["results"][0]["verified"], res
    wait_for(lambda: run_probe(find="Name entry")["text"] == text, what=f"{text!r} in the entry")


def test_set_value_on_a_slider_and_a_text(app):
    s, win = app
    st = observe(s, win)
    act(s, st, [{"type": "set_value", "element_id": element(st, "Volume")["id"], "value": 37}])
    wait_label("Volume:", lambda t: t == "Volume: 37", "slider at 37")
    st = observe(s, win)
    act(s, st, [{"type": "set_value", "element_id": element(st, "Combo entry")["id"], "value": "vä 値"}])
    wait_for(lambda: run_probe(find="Combo entry")["text"] == "vä 値", what="text set")


def test_key_combo_seen_by_the_app(app):
    s, win = app
    st = observe(s, win)
    act(s, st, [{"type": "key", "keys": "ctrl+shift+k"}])
    wait_label("Combo:", lambda t: t == "Combo: ctrl+shift+k", "ctrl+shift+k")
    st = observe(s, win)
    # (alt+F5, used on X11, is GNOME's own "unmaximize" shortcut: the shell takes it.)
    act(s, st, [{"type": "key", "keys": "ctrl+alt+m"}])
    wait_label("Combo:", lambda t: t == "Combo: ctrl+alt+m", "ctrl+alt+m")


def test_coordinate_click_lands_at_exactly_the_point_sent(app):
    s, win = app
    st = observe(s, win)
    x, y = center(element(st, "Double-click here"))
    x, y = x - 7, y + 3
    res = click_seen_at(s, st, win, x, y)
    assert res["results"][0]["method"] == "mutter_remote_desktop"


def test_double_click(app):
    s, win = app
    n = count("Double-clicked:")
    time.sleep(0.7)
    st = observe(s, win)
    act(s, st, [{"type": "double_click", "element_id": element(st, "Double-click here")["id"]}])
    wait_label("Double-clicked:", lambda t: t == f"Double-clicked: {n + 1}", "double click")


def test_scroll(app):
    s, win = app
    before = count("Scrolled:")
    st = observe(s, win)
    x, y = center(element(st, "Rows"))
    act(s, st, [{"type": "scroll", "x": x, "y": y, "delta_y": 3}])
    after = wait_for(lambda: (lambda v: v if v > before else None)(count("Scrolled:")), what="scrolled down")
    st = observe(s, win)
    act(s, st, [{"type": "scroll", "element_id": element(st, "Rows")["id"], "delta_y": -10}])
    wait_for(lambda: count("Scrolled:") < after, what="scrolled back up")


def test_drag_and_drop(app):
    s, win = app
    n = count("Dropped:")
    st = observe(s, win)
    sx, sy = center(element(st, "Drag source"))
    tx, ty = center(element(st, "Drop target"))
    act(s, st, [{"type": "drag", "x": sx, "y": sy, "to_x": tx, "to_y": ty}])
    wait_label("Dropped:", lambda t: t == f"Dropped: {n + 1}", "drop received")


def test_right_click_menu_item_chosen_by_id(app):
    s, win = app
    st = observe(s, win)
    act(s, st, [{"type": "right_click", "element_id": element(st, "Context area")["id"]}])
    wait_for(lambda: (lambda n: n and "showing" in n["states"])(run_probe(find="Paste item")), what="menu shown")
    st = observe(s, win)
    act(s, st, [{"type": "click", "element_id": element(st, "Paste item")["id"]}])
    wait_label("Menu:", lambda t: t == "Menu: Paste item", "menu item chosen")


def test_the_users_clipboard_survives_a_type_that_used_it(app):
    s, win = app
    owner = ClipboardOwner("the user's own clip ✓")
    try:
        assert read_clipboard() == "the user's own clip ✓"
        st = observe(s, win)
        act(s, st, [{"type": "set_value", "element_id": element(st, "Name entry")["id"], "value": ""}])
        st = observe(s, win)
        act(s, st, [{"type": "type", "element_id": element(st, "Name entry")["id"], "text": "über 中文"}])
        wait_for(lambda: run_probe(find="Name entry")["text"] == "über 中文", what="pasted text arrived")
        assert read_clipboard() == "the user's own clip ✓"
    finally:
        owner.close()
    # lsm now serves the user's content itself (the owner is gone): still the same.
    assert read_clipboard() == "the user's own clip ✓"


def test_a_covered_window_is_captured_and_a_point_read_off_it_lands(app):
    s, win = app
    other = ensure_app("gtk3-widget-factory", "gtk3-widget-factory")
    activate(other["id"])
    wait_for(lambda: shell_window(pid=other["pid"])["focus"], what="the widget factory on top")
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = s.ok(res)
    _, _, rows = decode(image_bytes(res))
    # The click area's light blue background is drawn where lsm says the control is, though
    # the widget factory covers that part of the screen.
    b = rect(element(st, "Double-click here"))
    r, g, bl = pixel(rows, b["x"] + 6, b["y"] + 6)[:3]
    assert bl > r + 10 and bl > 200, (r, g, bl)
    click_seen_at(s, st, win, b["x"] + 6, b["y"] + 6)


def test_state_contract(app):
    s, win = app
    st = observe(s, win)
    res = act_raw(s, st, [{"type": "click", "x": 100000, "y": 5}])
    assert err_code(res) == "OUT_OF_BOUNDS"
    # The window is resized between observation and action (the app widens or narrows its
    # label to fit the text): the coordinate action is refused and nothing is sent.
    st = observe(s, win)
    was = st["window"]["bounds"]["width"]
    n = len(app_events("testapp", "click"))
    st2 = observe(s, win)
    text = "wide " * 40 if was < 900 else ""
    act(s, st2, [{"type": "set_value", "element_id": element(st2, "Combo entry")["id"], "value": text}])
    wait_for(lambda: shell_window(pid=win["pid"])["frame"]["width"] != was, what="window resized")
    # lsm's last window list predates the resize: an observation now (whose walk starts from
    # that record while the shell is asked) reports the window as it is, not as it was.
    now = shell_window(pid=win["pid"])["frame"]
    seen = observe(s, win)["window"]["bounds"]
    assert (seen["width"], seen["height"]) == (now["width"], now["height"]), (seen, now)
    x, y = center(element(st, "Double-click here"))
    res = act_raw(s, st, [{"type": "click", "x": x, "y": y}])
    assert err_code(res) == "WINDOW_CHANGED", res
    time.sleep(0.3)
    assert len(app_events("testapp", "click")) == n
    st = observe(s, win)
    act(s, st, [{"type": "set_value", "element_id": element(st, "Combo entry")["id"], "value": ""}])


def test_a_window_moved_after_the_observation_is_refused(app):
    s, win = app
    shell = shell_window(pid=win["pid"])
    activate(shell["id"])
    wait_for(lambda: shell_window(pid=win["pid"])["focus"], what="the test app focused")
    st = observe(s, win)
    was = shell_window(pid=win["pid"])["frame"]
    n = len(app_events("testapp", "click"))
    # The user moves the window 40 px right and 30 px down (keyboard move, outside lsm).
    move_focused_window(4, 3)
    try:
        now = wait_for(lambda: (lambda f: f if (f["x"], f["y"]) != (was["x"], was["y"]) else None)(
            shell_window(pid=win["pid"])["frame"]), what="the window moved")
        assert (now["width"], now["height"]) == (was["width"], was["height"]), (was, now)
        x, y = center(element(st, "Double-click here"))
        res = act_raw(s, st, [{"type": "click", "x": x, "y": y}])
        assert err_code(res) == "WINDOW_CHANGED", res
        time.sleep(0.3)
        assert len(app_events("testapp", "click")) == n, "a click was sent to a moved window"
        # Observed again, the same window-relative point lands where it says.
        st = observe(s, win)
        assert (st["window"]["bounds"]["x"], st["window"]["bounds"]["y"]) == (now["x"], now["y"]), st["window"]
        click_seen_at(s, st, win, x, y)
    finally:
        activate(shell["id"])
        move_focused_window(-4, -3)


def test_element_gone_is_stale(app):
    s, win = app
    try:
        older = observe(s, win)
        newer = observe(s, win)
        act(s, newer, [{"type": "click", "element_id": element(newer, "Remove me")["id"]}])
        wait_for(lambda: run_probe(find="Remove me") is None, what="the button destroyed itself")
        res = act_raw(s, older, [{"type": "click", "element_id": element(older, "Remove me")["id"]}])
        assert err_code(res) == "ELEMENT_STALE", res
    finally:
        restart_app("testapp", TESTAPP_NAME)


def test_no_unsafe_mode_was_needed():
    # The shell refuses what only unsafe mode allows: the bed is a user's normal session.
    r = subprocess.run(["gdbus", "call", "--session", "--dest", "org.gnome.Shell", "--object-path",
                        "/org/gnome/Shell", "--method", "org.gnome.Shell.Eval", "1"],
                       capture_output=True, text=True, timeout=10)
    assert "(false," in r.stdout, r.stdout + r.stderr


def test_window_ids_outlive_the_server(app):
    """Window ids come from the shell's own window numbers: a second lsm process (same shell
    session) knows the first one's ids without listing first."""
    from conftest import lsm_env
    from lsm_mcp import mcp_stdio

    s, win = app
    with mcp_stdio(env=lsm_env()) as other:
        st = other.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})
    assert st["window"]["title"] == TITLE and st["window"]["pid"] == win["pid"]



def test_an_observation_sees_what_changed_outside_lsm_since_the_last(app):
    """What another AT-SPI client changes between two observations is in the second one (a check
    box's state, labels' names, a control gone), read back through AT-SPI first."""
    try:
        observation_sees_changes_made_outside_lsm(*app)
    finally:
        restart_app("testapp", TESTAPP_NAME)
