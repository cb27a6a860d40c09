"""The dying-and-hanging-parts suite: lsm (one server per test, never restarted) on a desktop
bed of its own (tests/bed/desktop.sh on display :97, its own D-Bus, AT-SPI and window manager),
whose parts the tests stop, kill and start again. The bed is started at the beginning and taken
down at the end; it never touches the e2e suite's bed.

lsm is started as in a real session: DISPLAY and DBUS_SESSION_BUS_ADDRESS only, so it finds
the accessibility bus through the session bus (as a fresh one is found after a restart)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))

from lsm_mcp import LsmSession, lsm_bin, parse_env  # noqa: E402

BED = REPO / "tests" / "bed" / "desktop.sh"
BED_VARS = {
    "LSM_BED_DISPLAY": os.environ.get("LSM_CHAOS_DISPLAY", ":97"),
    "LSM_BED_DIR": os.environ.get("LSM_CHAOS_DIR", "/tmp/lsm-chaos-bed"),
    "LSM_BED_APPS": "testapp gtk3-widget-factory",
    "LSM_BED_NO_INSTALL": "1",
}
TESTAPP = "lsm test app"
FACTORY = "GTK+ Widget Factory"


# What another bed (run-all's e2e desktop) may have left in the environment: never passed on.
FOREIGN = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "XDG_RUNTIME_DIR",
           "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "GSETTINGS_BACKEND", "GDK_BACKEND",
           "QT_QPA_PLATFORM", "GSK_RENDERER", "GNOME_ACCESSIBILITY", "QT_ACCESSIBILITY", "LSM_TESTAPP_LOG",
           "LSM_BED_DISPLAY", "LSM_BED_DIR", "LSM_BED_HOME", "LSM_BED_APPS")


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in FOREIGN}


def bed(*args: str, apps: str | None = None, timeout: float = 240) -> str:
    env = {**clean_env(), **BED_VARS}
    if apps is not None:
        env["LSM_BED_APPS"] = apps
    r = subprocess.run(["bash", str(BED), *args], capture_output=True, text=True, timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"desktop.sh {' '.join(args)} failed:\n{r.stderr[-3000:]}")
    return r.stdout


def component_pid(name: str) -> int:
    """The pid the bed recorded for a component (xvfb, session-bus, a11y-bus, registryd, wm,
    app-testapp, ...)."""
    line = (Path(BED_VARS["LSM_BED_DIR"]) / "state" / f"{name}.pid").read_text().split()
    return int(line[0])


def kill_component(name: str, sig: int = signal.SIGKILL) -> int:
    pid = component_pid(name)
    os.kill(pid, sig)
    deadline = time.monotonic() + 10
    while sig in (signal.SIGKILL, signal.SIGTERM) and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text().split()
            if stat[2] == "Z":
                break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.05)
    return pid


@pytest.fixture(scope="session")
def chaos_env() -> dict[str, str]:
    sets, _ = parse_env(bed("up"))
    env = clean_env()
    env.update({k: v for k, v in sets.items() if k != "AT_SPI_BUS_ADDRESS"})
    yield env
    bed("down", timeout=120)


@pytest.fixture
def lsm(chaos_env):
    # Each test leaves the bed whole again (apps restarted as needed) for the next one.
    s = LsmSession("stdio", env=chaos_env, binary=lsm_bin(), timeout=60)
    s.open()
    yield s
    s.close()
    tail = s.stderr_tail(20)
    if tail:
        print(f"--- lsm stderr tail ---\n{tail}")
