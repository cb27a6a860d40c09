"""Fixtures of the Wine suite: the bed's environment (tests/bed/wine.sh), lsm.exe served over
stdio by the official Python MCP client on Linux, and lsm's own Win32 test application whose
log says what it received."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))

from lsm_mcp import LsmSession, parse_exports  # noqa: E402

BED = REPO / "tests" / "bed" / "wine.sh"
TITLE = "lsm win test"


@pytest.fixture(scope="session")
def wine_env() -> dict[str, str]:
    out = subprocess.run(["bash", str(BED), "env"], capture_output=True, text=True, timeout=30)
    env = dict(os.environ)
    env.update(parse_exports(out.stdout))
    for name in ("WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"):
        env.pop(name, None)
    exe = Path(env.get("LSM_WIN_BIN", "")) / "lsm.exe"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run tests/bed/wine.sh build and up")
    if subprocess.run(["xdpyinfo", "-display", env["DISPLAY"]], capture_output=True).returncode != 0:
        pytest.fail(f"no X server on {env['DISPLAY']}: run tests/bed/wine.sh up")
    return env


class WinApp:
    """The test application and its event log."""

    def __init__(self, env: dict[str, str], log: Path):
        self.log = log
        self.proc = subprocess.Popen(["wine", str(Path(env["LSM_WIN_BIN"]) / "lsm_wintest.exe"),
                                      "Z:" + str(log).replace("/", "\\")],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ready = self.wait(lambda line: line.startswith("ready "), "the window", timeout=30)
        n = [int(v) for v in ready.split()[1:]]
        # What is on screen of the window: its client area (screen x, y, w, h). Under Wine the
        # X11 window manager draws the frame (and with none, nothing does).
        self.window = tuple(n[0:4])
        self.button = tuple(n[4:8])  # window-relative (client area) x, y, w, h
        self.edit = tuple(n[8:12])
        self.check = tuple(n[12:16])
        self.secret = tuple(n[16:20])
        self.win32_rect = tuple(n[20:24])  # GetWindowRect: with Windows' own frame sizes

    def flag(self, name: str, content: str = "") -> None:
        """Asks the app to do something (it polls LOGFILE.<name> every 100 ms)."""
        self.log.with_name(self.log.name + "." + name).write_text(content)

    def lines(self) -> list[str]:
        try:
            return self.log.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []

    def wait(self, match, what: str, timeout: float = 10.0, after: int = 0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines()[after:]:
                if match(line):
                    return line
            time.sleep(0.05)
        raise AssertionError(f"the test app never recorded {what}; its log: {self.lines()[-10:]}")

    def mark(self) -> int:
        return len(self.lines())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def app(wine_env, tmp_path):
    a = WinApp(wine_env, tmp_path / "events.log")
    yield a
    a.close()
    subprocess.run(["wineserver", "-k"], env=wine_env, capture_output=True, timeout=30)


@pytest.fixture
def lsm(wine_env, app):
    s = LsmSession("stdio", env=wine_env, args=["--web", "off"], wrapper=["wine"],
                   binary=str(Path(wine_env["LSM_WIN_BIN"]) / "lsm.exe"), timeout=60)
    s.open()
    yield s
    s.close()
