"""Shared parts of the load benchmarks (bench/load.py, bench/workers.py): a private test desktop,
an `lsm serve --http` process of the benchmark's own, MCP sessions of the official Python SDK
(Streamable HTTP) on one asyncio loop, timed calls, percentiles and the server's memory."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lib"))

import logging  # noqa: E402

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from lsm_mcp import HIDE_X11, can_hide_x11, headless_env, lsm_bin, parse_env, stop_group  # noqa: E402,F401  (re-exported)

# The SDK warns "Session termination failed: 202" when a session ends: lsm (rmcp) answers the
# DELETE with 202 Accepted where the SDK expects 200 or 204 (the specification names no code).
logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)

BED = REPO / "tests" / "bed" / "desktop.sh"
PROBE = REPO / "tests" / "lib" / "atspi_probe.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # python3-gi and pyatspi: the test app and the probe
TESTAPP = REPO / "tests" / "apps" / "lsm_testapp.py"
STATE_ID = re.compile(r"^st_[0-9a-f]{32}$")
OUT_DIR = REPO / "target" / "bench"


class BenchError(RuntimeError):
    pass


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def percentile(xs: list[float], p: float) -> float:
    """Linear interpolation between closest ranks (p in 0..100)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def proc_mem(pid: int) -> dict:
    """VmRSS / VmHWM (KiB), threads and open file descriptors of a process."""
    out = {"rss_kib": 0, "hwm_kib": 0, "threads": 0, "fds": 0}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k == "VmRSS":
                out["rss_kib"] = int(v.split()[0])
            elif k == "VmHWM":
                out["hwm_kib"] = int(v.split()[0])
            elif k == "Threads":
                out["threads"] = int(v.split()[0])
    with contextlib.suppress(OSError):
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def loadavg() -> str:
    with contextlib.suppress(OSError):
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return "?"


def git_rev() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return r.stdout.strip() or "?"


# ------------------------------------------------------------------ the desktop
class Bed:
    """tests/bed/desktop.sh on the benchmark's own display and directory (never the test bed's);
    taken down by `down` only if this object started it."""

    def __init__(self, display: str, directory: str, logfile: Path, apps: str = "testapp"):
        self.benv = dict(os.environ, LSM_BED_DISPLAY=display, LSM_BED_DIR=directory, LSM_BED_APPS=apps,
                         LSM_BED_NO_INSTALL="1")
        self.logfile = logfile
        self.env: dict[str, str] = {}
        self.started = False

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        with open(self.logfile, "a") as err:
            return subprocess.run(["bash", str(BED), *args], env=self.benv, stdout=subprocess.PIPE,
                                  stderr=err, text=True, timeout=timeout)

    def up(self) -> dict[str, str]:
        self.started = True
        r = self._run("up", timeout=300)
        if r.returncode != 0:
            raise BenchError(f"desktop.sh up failed (exit {r.returncode}); log: {self.logfile}")
        sets, unsets = parse_env(r.stdout)
        if "AT_SPI_BUS_ADDRESS" not in sets:
            raise BenchError(f"unexpected output of desktop.sh up:\n{r.stdout}")
        env = headless_env()
        for k in unsets:
            env.pop(k, None)
        env.update(sets)
        self.env = env
        return env

    def pid(self, key: str) -> int:
        r = self._run("pid", key)
        if r.returncode != 0 or not r.stdout.strip():
            raise BenchError(f"app {key} is not running on the benchmark desktop")
        return int(r.stdout.strip())

    def down(self) -> None:
        if self.started:
            self.started = False
            try:
                self._run("down", timeout=90)
            except subprocess.TimeoutExpired:
                log("desktop.sh down timed out")


def probe_nodes(env: dict[str, str], pid: int, timeout: float = 20) -> dict[str, dict]:
    """Every node of the application with that pid, read through AT-SPI by tests/lib/atspi_probe.py
    (system python, a subprocess with a timeout), by name (the first node of each name)."""
    args = [SYSTEM_PYTHON, str(PROBE), "--timeout", str(timeout), "--pid", str(pid), "--flat", "--no-extents"]
    last = ""
    for _ in range(2):  # a pyatspi deadlock is killed by the timeout: one more try
        try:
            r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout + 10)
        except subprocess.TimeoutExpired:
            last = "killed after the timeout"
            continue
        if r.returncode == 0:
            out: dict[str, dict] = {}
            for n in json.loads(r.stdout):
                out.setdefault(n.get("name") or "", n)
            return out
        last = f"exit {r.returncode}: {r.stderr[-1500:]}"
    raise BenchError(f"atspi_probe --pid {pid} failed: {last}")


# ------------------------------------------------------------------ lsm serve --http
class Server:
    """One `lsm serve --http 127.0.0.1:0 [ARGS]` process, its stderr in `log_path`."""

    def __init__(self, env: dict[str, str], log_path: Path, args: list[str] | None = None,
                 state_dir: Path | None = None, wrapper: list[str] | None = None):
        self.env = dict(env, LSM_WEB="off")
        self.wrapper = wrapper or []
        if state_dir is not None:  # worker tokens, TLS certificate, the audit log: the benchmark's own
            state_dir.mkdir(parents=True, exist_ok=True)
            self.env["LSM_STATE_DIR"] = str(state_dir)
        self.log_path = log_path
        self.args = args or []
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.started_at = 0.0

    def start(self, timeout: float = 30) -> "Server":
        start = self.log_path.stat().st_size if self.log_path.exists() else 0
        err = open(self.log_path, "ab", buffering=0)
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen([*self.wrapper, lsm_bin(), "serve", "--http", "127.0.0.1:0", *self.args], env=self.env,
                                     cwd=str(REPO), stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                     start_new_session=True)
        err.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                f.seek(start)
                text = f.read().decode("utf-8", "replace")
            m = re.search(r"lsm: MCP endpoint (http://\S+/mcp)", text)
            if m:
                self.url = m.group(1)
                return self
            if self.proc.poll() is not None:
                raise BenchError(f"lsm serve exited ({self.proc.returncode}) before listening:\n{text[-2000:]}")
            time.sleep(0.02)
        raise BenchError(f"lsm serve printed no MCP endpoint within {timeout}s")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, grace=10)

    def tail(self, n: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        return ""


@contextlib.asynccontextmanager
async def mcp_session(url: str, timeout: float = 60):
    """An initialised MCP client session (official SDK, Streamable HTTP) to `url`."""
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=timeout) as s:
            await s.initialize()
            yield s


def image_of(result) -> tuple[str, bytes] | None:
    """(mime type, bytes) of the first image content block."""
    import base64

    for c in result.content or []:
        if getattr(c, "type", None) == "image":
            return c.mime_type, base64.b64decode(c.data)
    return None


def error_code(result) -> str | None:
    sc = result.structured_content
    if isinstance(sc, dict) and isinstance(sc.get("error"), dict):
        return sc["error"].get("code")
    return None


def text_of(result) -> str:
    return "\n".join(c.text for c in (result.content or []) if getattr(c, "type", None) == "text")
