"""Shared setup of the end-to-end tests (run with .venv/bin/python -m pytest tests/e2e).

- The test desktop's environment (DISPLAY, DBUS_SESSION_BUS_ADDRESS, AT_SPI_BUS_ADDRESS, ...) is
  loaded into os.environ from `tests/bed/desktop.sh env` before any test runs; when no bed is up
  it is started (`up`, left running) unless LSM_E2E_AUTOSTART_BED=0.
- LSM_BIN: the lsm binary under test (default target/release/lsm).
- Every lsm a test starts logs at the most verbose level (LSM_LOG=trace) into this run's
  directory, target/test-logs/e2e-run-*/logs (LSM_TEST_RUN_DIR; tests/lib/run_logs.py), where
  the secrets the run used are recorded too: test_zz_logs_clean.py, last, greps the logs for them.
- Ground truth comes from AT-SPI through tests/lib/atspi_probe.py, always in a subprocess with a
  timeout (pyatspi can deadlock; it is never imported here).

Fixtures: bed_env, lsm_bin, probe, restart_app, ensure_app, stop_app, app_pid, fresh_testapp.
WEB: the directory of the Firefox test pages (tests/apps/web), for file:// URLs.
The MCP client fixtures live elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from lsm_mcp import parse_env  # noqa: E402  (re-exported for test modules)
from atspi_ground import TESTAPP_NAME, ProbeError, poll, run_probe  # noqa: E402,F401  (re-exported)

REPO = Path(__file__).resolve().parents[2]
BED = REPO / "tests" / "bed" / "desktop.sh"
LSM_BIN = Path(os.environ.get("LSM_BIN") or REPO / "target" / "release" / "lsm")
WEB = REPO / "tests" / "apps" / "web"

BED_ENV: dict[str, str] = {}


# ------------------------------------------------------------------ the bed's environment
def _bed(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BED), *args], capture_output=True, text=True, timeout=timeout)


def load_bed_env() -> dict[str, str]:
    r = _bed("env")
    if r.returncode != 0:
        if os.environ.get("LSM_E2E_AUTOSTART_BED", "1") == "0":
            raise pytest.UsageError(f"test desktop is not up: {r.stderr.strip()}")
        r = _bed("up", timeout=300)
        if r.returncode != 0:
            raise pytest.UsageError(f"could not start the test desktop:\n{r.stderr[-3000:]}")
    sets, unsets = parse_env(r.stdout)
    if "AT_SPI_BUS_ADDRESS" not in sets:
        raise pytest.UsageError(f"unexpected output of desktop.sh env:\n{r.stdout}")
    for key in unsets:
        os.environ.pop(key, None)
    os.environ.update(sets)
    return sets


def start_run_dir() -> None:
    """This run's log directory (runs older than 12 h are removed) and the most verbose logs."""
    if not os.environ.get("LSM_TEST_RUN_DIR"):
        logs = REPO / "target" / "test-logs"
        logs.mkdir(parents=True, exist_ok=True)
        # Runs of other people in the same checkout may be going on: only old ones go.
        for old in logs.glob("e2e-run-*"):
            if time.time() - old.stat().st_mtime > 12 * 3600:
                shutil.rmtree(old, ignore_errors=True)
        run = logs / time.strftime(f"e2e-run-%Y%m%d-%H%M%S-{os.getpid()}")
        run.mkdir()
        os.environ["LSM_TEST_RUN_DIR"] = str(run)
    os.environ.setdefault("LSM_LOG", "trace")


def pytest_configure(config):
    start_run_dir()
    BED_ENV.clear()
    BED_ENV.update(load_bed_env())


# ------------------------------------------------------------------ helpers
def restart_app(key: str = "testapp", timeout: float = 120) -> int:
    """Kill a bed app, start it again, wait until it is registered and placed; its new pid."""
    r = _bed("restart-app", key, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"desktop.sh restart-app {key} failed:\n{r.stderr[-3000:]}")
    return int(r.stdout.strip().splitlines()[-1])


# Apps that ensure_app started during the current test module: stopped when the module ends
# (an autouse fixture below), so a big window (Writer, Firefox) never covers another module's.
_STARTED_IN_MODULE: list[str] = []


def ensure_app(key: str, *args: str, timeout: float = 180) -> int:
    """Start a bed app unless it already runs (args: its command line, e.g. a file or URL; used
    only when it starts), wait until it is registered on AT-SPI and placed; its pid. The heavy
    applications (writer, firefox, ...) are not in the default bed: tests start them so, and
    what a module started is stopped when that module's tests are done."""
    if app_pid(key) is None and key not in _STARTED_IN_MODULE:
        _STARTED_IN_MODULE.append(key)
    r = _bed("ensure-app", key, *args, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"desktop.sh ensure-app {key} failed:\n{r.stderr[-3000:]}")
    return int(r.stdout.strip().splitlines()[-1])


def stop_app(key: str, timeout: float = 60) -> None:
    """Stop a bed app (and what it started)."""
    r = _bed("stop-app", key, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"desktop.sh stop-app {key} failed:\n{r.stderr[-3000:]}")


def app_pid(key: str = "testapp") -> int | None:
    """Pid of a running bed app (None if it is not running)."""
    r = _bed("pid", key)
    return int(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="session")
def bed_env() -> dict[str, str]:
    """The environment of the test desktop (already applied to os.environ)."""
    return dict(BED_ENV)


@pytest.fixture(scope="session")
def lsm_bin() -> Path:
    if not (LSM_BIN.is_file() and os.access(LSM_BIN, os.X_OK)):
        pytest.fail(f"{LSM_BIN} is missing: run `cargo build --release` (tests/run-all.sh does)")
    return LSM_BIN


@pytest.fixture
def probe():
    """atspi_probe as a function: probe(app_name="lsm_testapp.py", find=None, **options)."""
    return run_probe


@pytest.fixture(name="restart_app")
def _restart_app_fixture():
    """restart_app(key) -> new pid (tests that close or destroy things restore the app so)."""
    return restart_app


@pytest.fixture(scope="module", autouse=True)
def _stop_apps_started_by_the_module():
    """Stops, after each test module, the apps its tests started with ensure_app."""
    _STARTED_IN_MODULE.clear()
    yield
    for key in reversed(_STARTED_IN_MODULE):
        try:
            stop_app(key)
        except Exception as e:  # noqa: BLE001 - cleanup must not fail the next module
            print(f"stop_app({key}) after the module: {e}")
    _STARTED_IN_MODULE.clear()


@pytest.fixture(name="ensure_app")
def _ensure_app_fixture():
    """ensure_app(key, *args) -> pid of a running bed app, started if needed (writer, firefox,
    gnome-calculator, mousepad, thunar, qttree, ...: see tests/bed/desktop.sh)."""
    return ensure_app


@pytest.fixture(name="stop_app")
def _stop_app_fixture():
    """stop_app(key): stop a bed app (a test that needs a fresh instance stops it first)."""
    return stop_app


@pytest.fixture(name="app_pid")
def _app_pid_fixture():
    """app_pid(key) -> pid of a running bed app, or None."""
    return app_pid


@pytest.fixture
def fresh_testapp() -> int:
    """A freshly started test app (all counters at 0), at its usual place; its pid."""
    return restart_app("testapp")
