"""Session detection: an X display inside a Wayland session is XWayland, which shows only the
X11 applications. lsm keeps working on them and says what it does not see."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import bed_env  # noqa: E402


def test_xwayland_display_says_native_wayland_windows_are_not_seen(lsm_factory):
    env = bed_env()
    assert env, "no test desktop"
    env["WAYLAND_DISPLAY"] = "wayland-lsm-test"
    s = lsm_factory("stdio", env)
    out = s.call_ok("gui_list", {})
    notes = out["backend"].get("notes", [])
    assert any("XWayland" in n and "WAYLAND_DISPLAY=wayland-lsm-test" in n for n in notes), notes
    assert out["windows"], "the X11 windows are still listed"
    # Without WAYLAND_DISPLAY (the bed's plain X11 session) nothing of the kind is said.
    plain = lsm_factory("stdio").call_ok("gui_list", {})
    assert not any("XWayland" in n for n in plain["backend"].get("notes", [])), plain["backend"]
