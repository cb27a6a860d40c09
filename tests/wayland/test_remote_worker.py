"""A worker in the GNOME Wayland session (`lsm worker`) serves it to a controller without a
desktop over wss://: the same loop by `machine`, checked through AT-SPI."""

import pytest
from conftest import TESTAPP_NAME, ensure_app, lsm_env, run_probe
from gui_flow import rect, wait_for
from lsm_remote import RemoteRig


@pytest.fixture(scope="module")
def rig():
    ensure_app("testapp", TESTAPP_NAME)
    r = RemoteRig(workers=("wl",), use_netns=False)
    try:
        r.enrol("wl")
        r.start_controller()
        r.add_worker("wl", lsm_env()).start()
        r.wait_connected("wl")
        yield r
    finally:
        r.stop()


def test_the_wayland_desktop_through_a_worker(rig):
    s = rig.session
    listed = s.call_ok("gui_list", {"machine": "wl"})
    assert listed["backend"]["name"] == "linux-wayland-gnome", listed["backend"]
    win = next(w for w in listed["windows"] if w["title"] == "lsm test app")
    st = s.call_ok("gui_state", {"machine": "wl", "window_id": win["window_id"]})
    btn = next(e for e in st["elements"] if e.get("name", "") == "Press me" and e["role"] == "push_button")
    before = run_probe(find="Pressed:", match="prefix")["name"]
    n = int(before.split(":")[1])
    s.call_ok("gui_action", {"machine": "wl", "window_id": win["window_id"], "state_id": st["state_id"],
                             "actions": [{"type": "click", "element_id": btn["id"]}]})
    wait_for(lambda: run_probe(find=f"Pressed: {n + 1}"), what="the press through the worker")
    # A coordinate click, read off the worker's own observation, lands too.
    st = s.call_ok("gui_state", {"machine": "wl", "window_id": win["window_id"]})
    b = rect(next(e for e in st["elements"] if e.get("name", "") == "Press me"))
    s.call_ok("gui_action", {"machine": "wl", "window_id": win["window_id"], "state_id": st["state_id"],
                             "actions": [{"type": "click", "x": b["x"] + b["width"] // 2,
                                          "y": b["y"] + b["height"] // 2}]})
    wait_for(lambda: run_probe(find=f"Pressed: {n + 2}"), what="the coordinate click through the worker")
