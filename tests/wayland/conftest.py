"""The Wayland suite (run with .venv/bin/python -m pytest tests/wayland): a headless GNOME Shell
session from tests/bed/wayland.sh (started here when it is not up, unless
LSM_WL_AUTOSTART_BED=0), lsm's extension installed by `lsm setup gnome` before the shell
started. Ground truth: AT-SPI (tests/lib/atspi_ground.py), the shell's own window list and the
clipboard (tests/lib/wl_shell.py), and the applications' own records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from atspi_ground import TESTAPP_NAME, poll, run_probe  # noqa: E402,F401  (re-exported)
from lsm_mcp import mcp_stdio, parse_env  # noqa: E402
from wl_shell import shell_window  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BED = REPO / "tests" / "bed" / "wayland.sh"
LSM_BIN = Path(os.environ.get("LSM_BIN") or REPO / "target" / "release" / "lsm")
WL_ENV: dict[str, str] = {}


def bed(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BED), *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def pytest_configure(config):
    r = bed("env")
    if r.returncode != 0:
        if os.environ.get("LSM_WL_AUTOSTART_BED", "1") == "0":
            raise pytest.UsageError(f"the Wayland bed is not up: {r.stderr.strip()}")
        r = bed("up", timeout=300)
        if r.returncode != 0:
            raise pytest.UsageError(f"could not start the Wayland bed:\n{r.stderr[-3000:]}")
    sets, unsets = parse_env(r.stdout)
    for key in unsets:
        os.environ.pop(key, None)
    os.environ.update(sets)
    WL_ENV.clear()
    WL_ENV.update(sets)


def app_log(key: str) -> Path:
    return Path(WL_ENV["LSM_WLBED_DIR"]) / "logs" / f"app-{key}.log"


def app_events(key: str, event: str) -> list[dict]:
    """The JSON lines an application printed (the test app's own record of what it saw)."""
    out = []
    try:
        lines = app_log(key).read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        if line.startswith("{"):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("event") == event:
                out.append(rec)
    return out


def ensure_app(key: str, atspi_name: str | None = None, timeout: float = 60) -> dict:
    """Starts a bed application unless it runs; waits for its window in the shell's list (and
    its AT-SPI application when `atspi_name` is given); returns the shell's record of it."""
    r = bed("ensure-app", key)
    if r.returncode != 0:
        raise RuntimeError(f"wayland.sh ensure-app {key}: {r.stderr[-2000:]}")
    pid = int(r.stdout.strip().splitlines()[-1])
    w = poll(lambda: shell_window(pid=pid), timeout=timeout, interval=0.2)
    if not w:
        raise RuntimeError(f"{key} (pid {pid}) has no window after {timeout} s")
    if atspi_name and not poll(lambda: run_probe(atspi_name, depth=0, extents=False), timeout=timeout):
        raise RuntimeError(f"{key} did not appear on AT-SPI as {atspi_name!r}")
    return w


def restart_app(key: str, atspi_name: str | None = None) -> dict:
    bed("stop-app", key)
    time.sleep(0.5)
    return ensure_app(key, atspi_name)


def lsm_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(WL_ENV)
    env.pop("DISPLAY", None)
    env["LSM_WEB"] = "off"
    return env


@pytest.fixture(scope="module")
def lsm():
    """One lsm MCP server over stdio for the module, in the Wayland session."""
    if not (LSM_BIN.is_file() and os.access(LSM_BIN, os.X_OK)):
        pytest.fail(f"{LSM_BIN} is missing: run `cargo build --release`")
    with mcp_stdio(env=lsm_env()) as s:
        yield s
