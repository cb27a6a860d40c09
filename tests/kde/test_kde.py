"""The observe -> act loop on KDE Plasma Wayland (kwin_wayland --virtual, no dialog answered by
anyone) through the official MCP client: KWin's geometry, a coordinate click landing on the
exact pixel sent, a key combo and a typed word arriving in a GTK 3 window, semantic actions by
element id, honest refusals (text the keyboard layout lacks, screenshots), and an X11 xterm
under XWayland typed into by coordinates (its file checked on disk)."""

import os
import tempfile
from pathlib import Path

from conftest import TESTAPP_NAME, app_events, ensure_app, run_probe
from gui_flow import act, act_raw, center, element, find_window, observe, wait_for
from kwin_ground import kwin_window
from lsm_mcp import err_code, err_message, image_bytes, rect

import pytest

TITLE = "lsm test app"


@pytest.fixture(scope="module", autouse=True)
def testapp():
    return ensure_app("testapp", TESTAPP_NAME)


def field_text(name: str) -> str:
    node = run_probe(find=name)
    assert node, f"{name!r} not found through AT-SPI"
    return node.get("text") or ""


def test_gui_list_reports_kde_kwins_geometry_and_no_capture_with_why(lsm, testapp):
    data = lsm.call_ok("gui_list", {})
    backend = data["backend"]
    assert backend["name"] == "linux-wayland-kde" and backend["session"] == "wayland", backend
    assert "screenshot" not in backend["capabilities"], backend
    assert "unicode_typing" not in backend["capabilities"], backend
    # Not authorised by KWin (no grant in this module): the reason says how to authorise lsm.
    assert any("no screenshots" in n and "not authorised" in n and "X-KDE-DBUS-Restricted-Interfaces" in n
               for n in backend["notes"]), backend["notes"]
    win = find_window(lsm, title=TITLE)
    truth = kwin_window(pid=testapp["pid"])
    assert win["bounds"] == truth["frame"], (win["bounds"], truth)
    assert win["pid"] == testapp["pid"]


def test_a_coordinate_click_lands_on_the_pixel_sent(lsm, testapp):
    win = find_window(lsm, title=TITLE)
    st = observe(lsm, win)
    area = rect(element(st, "Double-click here"))
    truth = kwin_window(pid=testapp["pid"])
    # The app reports surface coordinates; the surface starts (frame - buffer) before the window.
    dx, dy = truth["frame"]["x"] - truth["buffer"]["x"], truth["frame"]["y"] - truth["buffer"]["y"]
    for ox, oy in [(3, 4), (57, 21), (140, 33), (211, 8), (270, 50)]:
        st = observe(lsm, win)
        x, y = area["x"] + ox, area["y"] + oy
        n = len(app_events("click"))
        res = act(lsm, st, [{"type": "click", "x": x, "y": y}])
        assert res["results"][0]["method"] == "portal_remote_desktop", res
        ev = wait_for(lambda: app_events("click")[n:], what="the app saw a click")[0]
        assert (ev["px"] - dx, ev["py"] - dy) == (x, y), (ev, x, y)


def test_a_key_combo_and_a_typed_word_arrive(lsm):
    win = find_window(lsm, title=TITLE)
    st = observe(lsm, win)
    x, y = center(element(st, "Name entry"))
    act(lsm, st, [{"type": "click", "x": x, "y": y}, {"type": "type", "text": "first"}])
    wait_for(lambda: field_text("Name entry").endswith("first"), what="the first word typed")
    st = observe(lsm, win)
    res = act(lsm, st, [{"type": "key", "keys": "ctrl+a"}, {"type": "type", "text": "Hello KDE 42!"}])
    assert res["ok"], res
    wait_for(lambda: field_text("Name entry") == "Hello KDE 42!", what="the field holds exactly the typed text")


def test_text_the_layout_lacks_is_refused_and_nothing_is_sent(lsm):
    win = find_window(lsm, title=TITLE)
    st = observe(lsm, win)
    entry = element(st, "Name entry")
    act(lsm, st, [{"type": "set_value", "element_id": entry["id"], "value": "kept"}])
    wait_for(lambda: field_text("Name entry") == "kept", what="set_value arrived")
    st = observe(lsm, win)
    x, y = center(element(st, "Name entry"))
    res = act_raw(lsm, st, [{"type": "click", "x": x, "y": y}, {"type": "type", "text": "日本語 é"}])
    assert err_code(res) == "UNSUPPORTED_ACTION", res
    why = err_message(res)
    assert "keyboard layout" in why and "set_value" in why, why  # the reason, and the way that works
    assert field_text("Name entry") == "kept"
    # The semantic way works: set_value by element id, read back through AT-SPI.
    st = observe(lsm, win)
    act(lsm, st, [{"type": "set_value", "element_id": element(st, "Name entry")["id"], "value": "日本語 é 😀"}])
    wait_for(lambda: field_text("Name entry") == "日本語 é 😀", what="set_value of CJK text")


def test_check_box_by_element_id(lsm):
    win = find_window(lsm, title=TITLE)
    st = observe(lsm, win)
    box = element(st, "Enable feature", "check_box")
    before = "checked" in (run_probe(find="Enable feature") or {}).get("states", [])
    act(lsm, st, [{"type": "click", "element_id": box["id"]}])
    wait_for(lambda: ("checked" in (run_probe(find="Enable feature") or {}).get("states", [])) != before,
             what="the check box toggled")


def test_a_screenshot_is_not_taken_and_the_observation_says_why(lsm):
    win = find_window(lsm, title=TITLE)
    res = lsm.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = lsm.ok(res)
    assert not image_bytes(res)
    assert st["elements"], "elements are observed without the image"
    assert any("screenshot" in n.lower() and "not authorised" in n for n in st.get("notes", [])), st.get("notes")


def test_xwayland_xterm_command_typed_by_coordinates(lsm):
    ensure_app("xterm")
    win = find_window(lsm, app="xterm")
    out = Path(tempfile.gettempdir()) / f"lsm-kde-xterm-{os.getpid()}"
    out.unlink(missing_ok=True)
    st = observe(lsm, win)
    b = win["bounds"]
    act(lsm, st, [{"type": "click", "x": b["width"] // 2, "y": b["height"] // 2},
                  {"type": "type", "text": f"echo typed-on-kde > {out}\n"}])
    wait_for(lambda: out.exists() and out.read_text().strip() == "typed-on-kde",
             what=f"{out} written by the shell in xterm")
    out.unlink(missing_ok=True)
