"""Without GStreamer (the frame helper is not on PATH) and without a stored yes for the desktop
portal's Screenshot, the GNOME backend says it cannot take screenshots and why, and observing and
acting still work."""

import os

import pytest
from conftest import TESTAPP_NAME, ensure_app, lsm_env
from gui_flow import find_window
from lsm_mcp import image_bytes, mcp_stdio


@pytest.fixture(scope="module")
def no_gst():
    ensure_app("testapp", TESTAPP_NAME)
    env = lsm_env()
    env["PATH"] = "/nonexistent"  # lsm runs by absolute path; gst-launch-1.0 is not found
    with mcp_stdio(env=env) as s:
        yield s


def test_screenshots_are_an_honest_capability(no_gst):
    s = no_gst
    backend = s.call_ok("gui_list", {})["backend"]
    assert "screenshot" not in backend["capabilities"]
    assert any("gst-launch-1.0" in n and "gstreamer1.0-pipewire" in n for n in backend["notes"]), backend["notes"]
    # Nor the last way (test_screenshot_portal.py): the portal's Screenshot would ask the user.
    assert any("Screenshot would ask the user" in n and "PermissionStore" in n for n in backend["notes"]), \
        backend["notes"]
    win = find_window(s, title="lsm test app")
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = s.ok(res)
    assert image_bytes(res) is None
    assert any(n.startswith("no screenshots:") and "gst-launch-1.0" in n for n in st["notes"]), st["notes"]
    assert any(e.get("name", "") == "Press me" for e in st["elements"])
    assert os.environ.get("PATH") != "/nonexistent"
