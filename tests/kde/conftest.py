"""The KDE suite (run with .venv/bin/python -m pytest tests/kde): a headless KDE Plasma
Wayland session from tests/bed/kde.sh (kwin_wayland --virtual, the KDE desktop portal, AT-SPI;
started here when it is not up, unless LSM_KDE_AUTOSTART_BED=0). Ground truth: KWin's own
window list read by the test's script (tests/lib/kwin_ground.py), AT-SPI, the test app's own
record of its events, files on disk."""

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
from kwin_ground import kwin_window  # noqa: E402
from lsm_mcp import mcp_stdio, parse_env  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BED = REPO / "tests" / "bed" / "kde.sh"
LSM_BIN = Path(os.environ.get("LSM_BIN") or REPO / "target" / "release" / "lsm")
KDE_ENV: dict[str, str] = {}


def bed(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BED), *args], capture_output=True, text=True, timeout=timeout)


def pytest_configure(config):
    r = bed("env")
    if r.returncode != 0:
        if os.environ.get("LSM_KDE_AUTOSTART_BED", "1") == "0":
            raise pytest.UsageError(f"the KDE bed is not up: {r.stderr.strip()}")
        r = bed("up", timeout=300)
        if r.returncode != 0:
            raise pytest.UsageError(f"could not start the KDE bed:\n{r.stderr[-3000:]}")
    sets, unsets = parse_env(r.stdout)
    for key in unsets:
        os.environ.pop(key, None)
    os.environ.update(sets)
    KDE_ENV.clear()
    KDE_ENV.update(sets)


def app_events(event: str) -> list[dict]:
    """The test app's own record of the events it received."""
    out = []
    try:
        lines = Path(KDE_ENV["LSM_TESTAPP_LOG"]).read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("event") == event:
            out.append(rec)
    return out


def ensure_app(key: str, atspi_name: str | None = None, timeout: float = 60) -> dict:
    """Starts a bed application unless it runs; waits for its window in KWin's list (and its
    AT-SPI application when `atspi_name` is given); returns KWin's record of it."""
    r = bed("ensure-app", key)
    if r.returncode != 0:
        raise RuntimeError(f"kde.sh ensure-app {key}: {r.stderr[-2000:]}")
    pid = int(r.stdout.strip().splitlines()[-1])
    w = poll(lambda: kwin_window(pid=pid), timeout=timeout, interval=0.3)
    if not w:
        raise RuntimeError(f"{key} (pid {pid}) has no window after {timeout} s")
    if atspi_name and not poll(lambda: run_probe(atspi_name, depth=0, extents=False), timeout=timeout):
        raise RuntimeError(f"{key} did not appear on AT-SPI as {atspi_name!r}")
    time.sleep(0.3)
    return kwin_window(pid=pid) or w


@pytest.fixture(scope="module")
def lsm():
    """One lsm MCP server over stdio (the official MCP client) in the KDE session."""
    if not (LSM_BIN.is_file() and os.access(LSM_BIN, os.X_OK)):
        pytest.fail(f"{LSM_BIN} is missing: run `cargo build --release`")
    env = dict(os.environ)
    env.update(KDE_ENV)
    env.pop("DISPLAY", None)
    env["LSM_WEB"] = "off"
    with mcp_stdio(env=env) as s:
        yield s
