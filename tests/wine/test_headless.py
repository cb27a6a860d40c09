"""lsm.exe under Wine without a display: GUI calls answer GUI_UNAVAILABLE at once, saying why,
instead of listing the null driver's empty screen (gui_list still lists the machines, with the
reason, as a controller without a desktop does)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "lib"))

from lsm_mcp import LsmSession, err_code, err_message  # noqa: E402


def test_no_display_is_gui_unavailable_quickly(wine_env):
    env = {k: v for k, v in wine_env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    s = LsmSession("stdio", env=env, args=["--web", "off"], wrapper=["wine"],
                   binary=str(Path(wine_env["LSM_WIN_BIN"]) / "lsm.exe"), timeout=60)
    s.open()
    try:
        t0 = time.monotonic()
        r = s.call("gui_state", {"window_id": "0x10000"})
        took = time.monotonic() - t0
        assert err_code(r) == "GUI_UNAVAILABLE", r
        assert "DISPLAY" in err_message(r), err_message(r)
        assert took < 2.0, f"gui_state took {took:.2f} s"
        local = s.call_ok("gui_list", {})
        assert local["windows"] == [] and local["backend"]["name"] == "none", local
        me = next(m for m in local["machines"] if m["name"] == "local")
        assert me["available"] is False and "DISPLAY" in me["unavailable_reason"], me
    finally:
        s.close()
        # The Wine server this started has no display: the next tests need one with it.
        subprocess.run(["wineserver", "-k"], env=wine_env, capture_output=True, timeout=30)
        subprocess.run(["wineserver", "-w"], env=wine_env, capture_output=True, timeout=30)
