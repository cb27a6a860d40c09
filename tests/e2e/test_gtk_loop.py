"""The observe -> act -> observe loop against a real GTK3 application (tests/apps/lsm_testapp.py),
over stdio and Streamable HTTP, with every effect checked through AT-SPI by the test itself."""

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from gui_flow import act, center, element, find_window, observe, rect, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

TITLE = "lsm test app"


def label(probe, prefix: str) -> str:
    """The test app's status label starting with `prefix`, as AT-SPI shows it."""
    node = probe(find=prefix, match="prefix")
    assert node, f"status label {prefix!r} not found through AT-SPI"
    return node["name"]


def count(probe, prefix: str) -> int:
    return int(label(probe, prefix).split(":")[1])


def wait_label(probe, prefix: str, pred, what: str) -> str:
    return wait_for(lambda: (lambda t: t if pred(t) else None)(label(probe, prefix)), what=what)


@pytest.fixture
def app(lsm):
    """(session, window) for the test app."""
    return lsm, find_window(lsm, title=TITLE)


def test_list_state_shape(app):
    s, win = app
    assert win["accessible"] and win["pid"] and win["bounds"]["width"] >= 500
    st = s.call("gui_state", {"window_id": win["window_id"]})
    data = s.ok(st)
    assert re.fullmatch(r"st_[0-9a-f]{32}", data["state_id"])
    assert data["coordinate_space"] == {"origin": "window", "units": "logical_px", "scale": 1.0,
                                        "width": win["bounds"]["width"], "height": win["bounds"]["height"]}
    png = image_bytes(st)  # noqa: F405
    assert png and png.startswith(b"\x89PNG")
    assert data["screenshot"]["width"] == win["bounds"]["width"]
    names = {e.get("name", "") for e in data["elements"]}
    assert {"Enable feature", "Press me", "Name entry", "Volume", "Rows"} <= names
    # Bounds are window-relative and inside the window.
    press = element(data, "Press me", "push_button")
    b = rect(press)
    assert 0 <= b["x"] < win["bounds"]["width"] and 0 <= b["y"] < win["bounds"]["height"]


def test_check_button_toggled_by_element_id(app, probe):
    s, win = app
    before = "checked" in probe(find="Enable feature")["states"]
    st = observe(s, win)
    res = act(s, st, [{"type": "click", "element_id": element(st, "Enable feature", "check_box")["id"]}])
    assert res["results"][0]["method"].startswith("atspi_action:")
    wait_for(lambda: ("checked" in probe(find="Enable feature")["states"]) != before, what="check toggled")
    assert label(probe, "Feature:") == ("Feature: off" if before else "Feature: on")
    # The next observation shows the new state too.
    st = observe(s, win)
    assert ("checked" in element(st, "Enable feature", "check_box").get("states", [])) != before


def test_push_button_pressed(app, probe):
    s, win = app
    n = count(probe, "Pressed:")
    st = observe(s, win)
    act(s, st, [{"type": "click", "element_id": element(st, "Press me", "push_button")["id"]}])
    wait_label(probe, "Pressed:", lambda t: t == f"Pressed: {n + 1}", "Pressed +1")


def test_type_into_entry_with_cjk(app, probe):
    s, win = app
    st = observe(s, win)
    entry = element(st, "Name entry")
    text = "typed 한글 テスト 中文 é ✓"
    act(s, st, [{"type": "click", "element_id": entry["id"]},
                {"type": "key", "keys": "ctrl+a"},
                {"type": "type", "text": text}])
    wait_for(lambda: probe(find="Name entry")["text"] == text, what="typed text in the entry")
    # `type` with an element focuses it first.
    st = observe(s, win)
    combo = element(st, "Combo entry")
    act(s, st, [{"type": "focus", "element_id": combo["id"]}, {"type": "key", "keys": "ctrl+a"},
                {"type": "type", "element_id": combo["id"], "text": "via element 漢字"}])
    wait_label(probe, "Recorded:", lambda t: t == "Recorded: via element 漢字", "recorded text")


def test_set_value_cjk(app, probe):
    s, win = app
    st = observe(s, win)
    value = "値 설정 ok"
    res = act(s, st, [{"type": "set_value", "element_id": element(st, "Combo entry")["id"], "value": value}])
    assert res["results"][0]["method"] == "editable_text"
    wait_label(probe, "Recorded:", lambda t: t == f"Recorded: {value}", "set_value text")
    st = observe(s, win)
    assert element(st, "Combo entry")["value"] == value


def test_set_value_numeric_slider(app, probe):
    s, win = app
    st = observe(s, win)
    res = act(s, st, [{"type": "set_value", "element_id": element(st, "Volume")["id"], "value": 37}])
    assert res["results"][0]["method"] == "value"
    wait_label(probe, "Volume:", lambda t: t == "Volume: 37", "slider value")


def test_key_combo(app, probe):
    s, win = app
    st = observe(s, win)
    act(s, st, [{"type": "key", "keys": "ctrl+shift+k"}])
    wait_label(probe, "Combo:", lambda t: t == "Combo: ctrl+shift+k", "key combo seen by the app")
    st = observe(s, win)
    act(s, st, [{"type": "key", "keys": "alt+F5"}])
    wait_label(probe, "Combo:", lambda t: t == "Combo: alt+f5", "alt+F5 seen by the app")


def test_coordinate_click_lands_where_asked(app, probe):
    s, win = app
    st = observe(s, win)
    x, y = center(element(st, "Double-click here"))
    x, y = x - 7, y + 3  # not the centre, to prove the exact mapping
    res = act(s, st, [{"type": "click", "x": x, "y": y}])
    assert res["results"][0]["method"] == "xtest"
    # The app reports the event position relative to its client area.
    wait_label(probe, "Clicked at", lambda t: t == f"Clicked at {x},{y}", f"click at {x},{y}")


def test_double_click(app, probe):
    s, win = app
    n = count(probe, "Double-clicked:")
    # GTK would join this with the previous test's clicks (from another server process, which
    # lsm cannot know about) into a triple click: let its double-click time pass first.
    time.sleep(0.7)
    st = observe(s, win)
    act(s, st, [{"type": "double_click", "element_id": element(st, "Double-click here")["id"]}])
    wait_label(probe, "Double-clicked:", lambda t: t == f"Double-clicked: {n + 1}", "double click")


def test_scroll_list(app, probe):
    s, win = app
    before = count(probe, "Scrolled:")
    st = observe(s, win)
    rows = element(st, "Rows")
    x, y = center(rows)
    act(s, st, [{"type": "scroll", "x": x, "y": y, "delta_y": 3}])
    after = wait_for(lambda: (lambda v: v if v > before else None)(count(probe, "Scrolled:")), what="scrolled down")
    st = observe(s, win)
    act(s, st, [{"type": "scroll", "element_id": element(st, "Rows")["id"], "delta_y": -10}])
    wait_for(lambda: count(probe, "Scrolled:") < after, what="scrolled back up")


def test_drag_slider(app, probe):
    s, win = app
    st = observe(s, win)
    act(s, st, [{"type": "set_value", "element_id": element(st, "Volume")["id"], "value": 0}])
    wait_label(probe, "Volume:", lambda t: t == "Volume: 0", "slider reset")
    st = observe(s, win)
    b = rect(element(st, "Volume"))
    y = b["y"] + b["height"] // 2
    act(s, st, [{"type": "drag", "x": b["x"] + 4, "y": y, "to_x": b["x"] + b["width"] * 3 // 4, "to_y": y}])
    wait_for(lambda: count(probe, "Volume:") >= 50, what="slider dragged past the middle")


def test_drag_and_drop(app, probe):
    s, win = app
    n = count(probe, "Dropped:")
    st = observe(s, win)
    sx, sy = center(element(st, "Drag source"))
    tx, ty = center(element(st, "Drop target"))
    act(s, st, [{"type": "drag", "x": sx, "y": sy, "to_x": tx, "to_y": ty}])
    wait_label(probe, "Dropped:", lambda t: t == f"Dropped: {n + 1}", "drop received")


def test_right_click_opens_context_menu(app, probe):
    s, win = app
    st = observe(s, win)
    act(s, st, [{"type": "right_click", "element_id": element(st, "Context area")["id"]}])
    wait_for(lambda: (lambda n: n and "showing" in n["states"])(probe(find="Copy item")), what="menu shown")
    # The open menu is part of the next observation, and its item can be chosen by id.
    st = observe(s, win)
    item = element(st, "Paste item")
    act(s, st, [{"type": "click", "element_id": item["id"]}])
    wait_label(probe, "Menu:", lambda t: t == "Menu: Paste item", "menu item chosen")


def test_password_value_is_never_shown(app, probe):
    s, win = app
    st = observe(s, win)
    field = element(st, "Password")
    act(s, st, [{"type": "click", "element_id": field["id"]}, {"type": "key", "keys": "ctrl+a"},
                {"type": "type", "text": "hunter2-秘密"}])
    wait_for(lambda: (probe(find="Password") or {}).get("text"), what="password typed")
    st = observe(s, win)
    field = element(st, "Password")
    assert field["role"] == "password_text"
    assert "value" not in field, field
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": False})
    assert "hunter2" not in text_of(res) and "•" not in text_of(res)  # noqa: F405
