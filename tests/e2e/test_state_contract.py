"""One test per failure of the state contract: each answered with its code, nothing executed."""

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from gui_flow import act, act_raw, center, element, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

TITLE = "lsm test app"


def xdo(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=10)


@pytest.fixture
def s(lsm_stdio):
    return lsm_stdio


@pytest.fixture
def app(s):
    return find_window(s, title=TITLE)


def clicked_label(probe) -> str:
    return probe(find="Clicked at", match="prefix")["name"]


def test_reused_state_is_consumed(s, app, probe):
    st = observe(s, app)
    act(s, st, [{"type": "wait", "seconds": 0}])
    res = act_raw(s, st, [{"type": "wait", "seconds": 0}])
    assert err_code(res) == "STATE_CONSUMED", res  # noqa: F405
    assert "gui_state" in err_message(res)  # noqa: F405


def test_failed_call_still_consumes_the_state(s, app):
    st = observe(s, app)
    assert err_code(act_raw(s, st, [{"type": "click", "element_id": "e99999"}])) == "ELEMENT_NOT_FOUND"  # noqa: F405
    assert err_code(act_raw(s, st, [{"type": "wait", "seconds": 0}])) == "STATE_CONSUMED"  # noqa: F405


def test_expired_state(lsm_factory):
    s = lsm_factory("stdio", args=["--state-ttl", "0.5"])
    st = observe(s, find_window(s, title=TITLE))
    assert st["expires_in_ms"] == 500
    time.sleep(0.8)
    res = act_raw(s, st, [{"type": "wait", "seconds": 0}])
    assert err_code(res) == "STATE_EXPIRED", res  # noqa: F405


def test_unknown_state(s, app):
    res = s.call("gui_action", {"window_id": app["window_id"], "state_id": "st_" + "0" * 32,
                                "actions": [{"type": "wait", "seconds": 0}]})
    assert err_code(res) == "STATE_NOT_FOUND", res  # noqa: F405


def test_state_of_another_server_is_unknown(lsm_factory):
    a, b = lsm_factory("stdio"), lsm_factory("stdio")
    st = observe(a, find_window(a, title=TITLE))
    res = act_raw(b, st, [{"type": "wait", "seconds": 0}])
    assert err_code(res) == "STATE_NOT_FOUND", res  # noqa: F405


def test_wrong_window(s, app):
    other = find_window(s, app="calculator")
    st = observe(s, app)
    res = s.call("gui_action", {"window_id": other["window_id"], "state_id": st["state_id"],
                                "actions": [{"type": "click", "x": 5, "y": 5}]})
    assert err_code(res) == "WINDOW_MISMATCH", res  # noqa: F405


def test_window_moved_between_state_and_action(s, app, probe, restart_app):
    st = observe(s, app)
    target = element(st, "Double-click here")
    x, y = center(target)
    before = clicked_label(probe)
    b = app["bounds"]
    xdo("windowmove", "--sync", app["window_id"], str(b["x"] + 40), str(b["y"] + 25))
    try:
        wait_for(lambda: find_window(s, title=TITLE)["bounds"]["x"] != b["x"], what="window moved")
        res = act_raw(s, st, [{"type": "click", "x": x, "y": y}])
        assert err_code(res) == "WINDOW_CHANGED", res  # noqa: F405
        assert "gui_state" in err_message(res)  # noqa: F405
        time.sleep(0.3)
        assert clicked_label(probe) == before, "a refused click must not be injected"
        # An element action does not depend on the old geometry: it is re-resolved.
        st2 = observe(s, app)
        act(s, st2, [{"type": "click", "element_id": element(st2, "Press me")["id"]}])
    finally:
        # Back to its usual place (desktop.sh knows the layout).
        restart_app("testapp")


def test_window_resized_between_state_and_action(s):
    term = find_window(s, app="xterm")
    st = observe(s, term)
    b = term["bounds"]
    xdo("windowsize", "--sync", term["window_id"], str(b["width"] - 30), str(b["height"] - 20))
    try:
        wait_for(lambda: find_window(s, app="xterm")["bounds"]["width"] != b["width"], what="window resized")
        res = act_raw(s, st, [{"type": "click", "x": 10, "y": 10}])
        assert err_code(res) == "WINDOW_CHANGED", res  # noqa: F405
    finally:
        xdo("windowsize", "--sync", term["window_id"], str(b["width"]), str(b["height"]))


@pytest.mark.parametrize("x,y", [(-1, 10), (10, -1), ("w", 10), (10, "h"), (100000, 5)])
def test_point_outside_window(s, app, probe, x, y):
    st = observe(s, app)
    w, h = st["coordinate_space"]["width"], st["coordinate_space"]["height"]
    x = w if x == "w" else x
    y = h if y == "h" else y
    before = clicked_label(probe)
    # The first action is valid: nothing at all runs when a later one is out of bounds.
    res = act_raw(s, st, [{"type": "click", "element_id": element(st, "Double-click here")["id"]},
                          {"type": "click", "x": x, "y": y}])
    assert err_code(res) == "OUT_OF_BOUNDS", res  # noqa: F405
    time.sleep(0.3)
    assert clicked_label(probe) == before


def test_drag_end_outside_window(s, app):
    st = observe(s, app)
    res = act_raw(s, st, [{"type": "drag", "x": 10, "y": 10, "to_x": st["coordinate_space"]["width"] + 5, "to_y": 10}])
    assert err_code(res) == "OUT_OF_BOUNDS", res  # noqa: F405


def test_unknown_element(s, app):
    st = observe(s, app)
    res = act_raw(s, st, [{"type": "click", "element_id": "e99999"}])
    assert err_code(res) == "ELEMENT_NOT_FOUND", res  # noqa: F405
    # Element ids of one observation mean nothing in another.
    first = observe(s, app)
    second = observe(s, app, max_elements=3)
    last_id = first["elements"][-1]["id"]
    res = act_raw(s, second, [{"type": "click", "element_id": last_id}])
    assert err_code(res) == "ELEMENT_NOT_FOUND", res  # noqa: F405


def test_element_gone(s, app, probe, restart_app):
    try:
        older = observe(s, app)
        newer = observe(s, app)
        act(s, newer, [{"type": "click", "element_id": element(newer, "Remove me")["id"]}])
        wait_for(lambda: probe(find="Remove me") is None, what="button removed")
        res = act_raw(s, older, [{"type": "click", "element_id": element(older, "Remove me")["id"]}])
        assert err_code(res) == "ELEMENT_STALE", res  # noqa: F405
        assert "gui_state" in err_message(res)  # noqa: F405
    finally:
        restart_app("testapp")


def test_element_hidden_since_observation(s, app, probe):
    st = observe(s, app)
    act(s, st, [{"type": "right_click", "element_id": element(st, "Context area")["id"]}])
    wait_for(lambda: (lambda n: n and "showing" in n["states"])(probe(find="Copy item")), what="menu shown")
    with_menu = observe(s, app)
    item = element(with_menu, "Copy item")
    xdo("key", "Escape")
    wait_for(lambda: (lambda n: n is None or "showing" not in n["states"])(probe(find="Copy item")),
             what="menu closed")
    menu_before = probe(find="Menu:", match="prefix")["name"]
    res = act_raw(s, with_menu, [{"type": "click", "element_id": item["id"]}])
    assert err_code(res) == "ELEMENT_STALE", res  # noqa: F405
    assert probe(find="Menu:", match="prefix")["name"] == menu_before, "a hidden menu item must not be activated"
