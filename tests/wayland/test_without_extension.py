"""GNOME without lsm's Shell extension (a second headless shell, started without it): lsm says
exactly what to do, quickly, and never guesses where windows are."""

import os
import subprocess
import time

import pytest
from conftest import BED, LSM_BIN, parse_env
from lsm_mcp import err_code, err_message, mcp_stdio


@pytest.fixture(scope="module")
def bare_shell():
    env = dict(os.environ, LSM_WLBED_DIR="/tmp/lsm-wlbed-noext", LSM_WLBED_EXTENSION="0")
    r = subprocess.run(["bash", str(BED), "up"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    sets, _ = parse_env(r.stdout)
    try:
        yield sets
    finally:
        subprocess.run(["bash", str(BED), "down"], capture_output=True, text=True, timeout=120, env=env)


def test_gui_list_says_how_to_enable_the_extension(bare_shell):
    env = dict(os.environ)
    env.update(bare_shell)
    env.pop("DISPLAY", None)
    env["LSM_WEB"] = "off"
    with mcp_stdio(env=env) as s:
        t0 = time.monotonic()
        listed = s.call_ok("gui_list", {})
        took = time.monotonic() - t0
        state = s.call("gui_state", {"window_id": "0x1"})
    # gui_list answers (other machines may be usable) with no window and the reason, code first.
    assert listed["windows"] == []
    reason = listed["machines"][0]["unavailable_reason"]
    assert reason.startswith("GUI_UNAVAILABLE: "), reason
    assert err_code(state) == "GUI_UNAVAILABLE", state
    for msg in (reason, err_message(state)):
        assert "lsm setup gnome" in msg and "log out" in msg and "lsm-windows@lsm" in msg, msg
    assert took < 5, f"answered after {took:.1f} s"
    assert LSM_BIN.exists()
