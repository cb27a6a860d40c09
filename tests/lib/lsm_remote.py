"""A controller and remote workers for the remote-desktop tests and bench (SPEC §6).

    rig = RemoteRig(workers=("w1", "w2")).start()   # beds :71/:72, netns + veth where possible
    s = rig.session                                  # LsmSession (MCP over HTTP) to the controller
    rig.workers["w1"].kill(); rig.workers["w1"].start()
    rig.stop()

Each worker gets its own test desktop (tests/bed/desktop.sh with LSM_BED_DISPLAY=:7N and
LSM_BED_DIR=/tmp/lsm-bed-rN: own X display, D-Bus and AT-SPI buses, own test app) and, when the
machine allows it (root, `ip netns`), its own network namespace linked to the controller's by a
veth pair (10.77.N.1 <-> 10.77.N.2); the worker then reaches the controller over wss:// on the
veth address. Without namespaces it connects over loopback, and `rig.netns` is False.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsm_mcp import REPO, LsmSession, free_port, headless_env, lsm_bin, parse_env  # noqa: E402
from run_logs import log_dir, record_secret, run_dir  # noqa: E402

BED = REPO / "tests" / "bed" / "desktop.sh"
PROBE = REPO / "tests" / "lib" / "atspi_probe.py"
SYSTEM_PYTHON = "/usr/bin/python3"


def bed_up(index: int, apps: str = "testapp") -> dict[str, str]:
    """Starts (or reuses) bed number `index` (display :7N); its environment."""
    env = dict(os.environ, LSM_BED_DISPLAY=f":7{index}", LSM_BED_DIR=f"/tmp/lsm-bed-r{index}", LSM_BED_APPS=apps)
    r = subprocess.run(["bash", str(BED), "up"], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"bed :7{index} did not start:\n{r.stderr[-3000:]}")
    sets, unsets = parse_env(r.stdout)
    out = headless_env()
    for k in unsets:
        out.pop(k, None)
    out.update(sets)
    return out


def bed_down(index: int) -> None:
    env = dict(os.environ, LSM_BED_DISPLAY=f":7{index}", LSM_BED_DIR=f"/tmp/lsm-bed-r{index}")
    subprocess.run(["bash", str(BED), "down"], env=env, capture_output=True, timeout=120)


def probe_label(env: dict[str, str], prefix: str, timeout: float = 20) -> str | None:
    """The name of the test app's label starting with `prefix`, read through that bed's AT-SPI."""
    args = [SYSTEM_PYTHON, str(PROBE), "--timeout", str(timeout), "--app-name", "lsm_testapp.py",
            "--find", prefix, "--match", "prefix", "--no-extents"]
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout + 10)
    if r.returncode == 1 and r.stdout.strip() == "null":
        return None
    assert r.returncode == 0, f"atspi_probe failed: {r.stderr[-1500:]}"
    import json
    return json.loads(r.stdout)["name"]


def netns_possible() -> bool:
    if os.geteuid() != 0 or not shutil.which("ip"):
        return False
    name = f"lsmr-chk{os.getpid() % 10000}"
    ok = subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return ok


class Netns:
    """Network namespace N with a veth pair to this one: host 10.77.N.1, namespace 10.77.N.2."""

    def __init__(self, index: int):
        self.name = f"lsmr-w{index}"
        self.host_if = f"lsmr-h{index}"
        self.host_ip = f"10.77.{index}.1"
        self.ns_ip = f"10.77.{index}.2"

    def up(self) -> None:
        self.down()
        for cmd in (
            ["ip", "netns", "add", self.name],
            ["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", "eth0", "netns", self.name],
            ["ip", "addr", "add", f"{self.host_ip}/24", "dev", self.host_if],
            ["ip", "link", "set", self.host_if, "up"],
            ["ip", "-n", self.name, "addr", "add", f"{self.ns_ip}/24", "dev", "eth0"],
            ["ip", "-n", self.name, "link", "set", "eth0", "up"],
            ["ip", "-n", self.name, "link", "set", "lo", "up"],
        ):
            subprocess.run(cmd, check=True, capture_output=True, timeout=20)

    def down(self) -> None:
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, timeout=20)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=20)

    def prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]


class Worker:
    """One `lsm worker` process (killable, restartable), logging to `log_path`."""

    def __init__(self, name: str, url: str, token_file: str, pin: str | None, env: dict[str, str],
                 prefix: list[str], log_dir: str, binary: str | None = None):
        self.name, self.url, self.token_file, self.pin = name, url, token_file, pin
        self.env, self.prefix = env, prefix
        self.binary = binary or lsm_bin()
        self.log_path = os.path.join(log_dir, f"worker-{name}.log")
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Worker":
        cmd = [*self.prefix, self.binary, "worker", "--controller", self.url, "--name", self.name,
               "--token-file", self.token_file]
        if self.pin:
            cmd += ["--pin", self.pin]
        log = open(self.log_path, "ab", buffering=0)
        self.proc = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     start_new_session=True)
        log.close()
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        p = self.proc
        if p is None or p.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, sig)
        p.wait(10)

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace") if os.path.exists(self.log_path) else ""


class RemoteRig:
    def __init__(self, workers: tuple[str, ...] = ("w1", "w2"), use_netns: bool | None = None, first: int = 1):
        self.names = workers
        # Worker i (from `first`) gets bed :7i and namespace i: a module with another `first` runs
        # beside test_remote.py's :71/:72 without sharing a desktop or a namespace.
        self.first = first
        self.use_netns = netns_possible() if use_netns is None else use_netns
        self.netns = False
        # A command the controller runs under (HIDE_X11: a controller with no desktop).
        self.controller_wrapper: list[str] = []
        self.dir = tempfile.mkdtemp(prefix="lsm-remote-")
        # Logs apart from the state (tokens): in a test run they stay for its final grep.
        self.log_dir = log_dir("lsm-remote") if run_dir() else self.dir
        self.state_dir = os.path.join(self.dir, "state")
        self.port = free_port()
        self.beds: dict[str, dict[str, str]] = {}
        self.namespaces: dict[str, Netns] = {}
        self.workers: dict[str, Worker] = {}
        self.tokens: dict[str, str] = {}
        self.pin = ""
        self.session: LsmSession | None = None

    # ---- controller commands
    def lsm(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([lsm_bin(), *args, "--state-dir", self.state_dir], capture_output=True, text=True,
                              timeout=30, env=headless_env())

    def enrol(self, name: str) -> str:
        r = self.lsm("enrol", name, "--controller-url", f"wss://127.0.0.1:{self.port}")
        assert r.returncode == 0, r.stderr
        token = re.search(r"^\s+(lsmw_[0-9a-f]{64})\s*$", r.stdout, re.M)
        pin = re.search(r"--pin ([0-9a-f]{64})", r.stdout)
        assert token and pin, r.stdout
        self.pin = pin.group(1)
        path = os.path.join(self.dir, f"{name}.token")
        Path(path).write_text(token.group(1) + "\n")
        record_secret("worker_token", token.group(1))
        os.chmod(path, 0o600)
        self.tokens[name] = path
        return path

    def controller_log(self) -> str:
        assert self.session is not None
        return Path(self.session.stderr_path).read_text(errors="replace")

    # ---- lifecycle
    def start(self) -> "RemoteRig":
        try:
            for i, name in enumerate(self.names, start=self.first):
                self.beds[name] = bed_up(i)
                self.enrol(name)
            self.start_controller()
            if self.use_netns:
                try:
                    for i, name in enumerate(self.names, start=self.first):
                        ns = Netns(i)
                        ns.up()
                        self.namespaces[name] = ns
                    self.netns = True
                except (subprocess.SubprocessError, OSError) as e:
                    print(f"network namespaces unavailable ({e}); workers use loopback")
                    for ns in self.namespaces.values():
                        ns.down()
                    self.namespaces.clear()
            for name in self.names:
                self.add_worker(name, self.beds[name]).start()
            self.wait_connected(*self.names)
        except BaseException:
            self.stop()
            raise
        return self

    def start_controller(self) -> None:
        env = headless_env()
        env["LSM_WEB"] = "off"
        env.setdefault("LSM_LOG", "lsm=info,warn")
        listen = f"0.0.0.0:{self.port}" if self.use_netns else f"127.0.0.1:{self.port}"
        self.session = LsmSession("http", env, wrapper=self.controller_wrapper,
                                  args=["--worker-listen", listen, "--state-dir", self.state_dir],
                                  stderr_path=os.path.join(self.log_dir, "controller.log")).open()

    def restart_controller(self) -> None:
        assert self.session is not None
        self.session.close()
        self.session = None
        self.start_controller()

    def url_for(self, name: str) -> str:
        ns = self.namespaces.get(name)
        return f"wss://{ns.host_ip}:{self.port}" if ns else f"wss://127.0.0.1:{self.port}"

    def add_worker(self, name: str, env: dict[str, str], token_file: str | None = None,
                   pin: str | None = "rig", url: str | None = None, prefix: list[str] | None = None) -> Worker:
        ns = self.namespaces.get(name)
        if prefix is None:
            prefix = ns.prefix() if ns else []
        w = Worker(name, url or self.url_for(name), token_file or self.tokens[name],
                   self.pin if pin == "rig" else pin, env, prefix, self.log_dir)
        self.workers[name] = w
        return w

    def machines(self) -> dict[str, dict]:
        assert self.session is not None
        return {m["name"]: m for m in self.session.call_ok("gui_list", {})["machines"]}

    def wait_connected(self, *names: str, connected: bool = True, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            ms = self.machines()
            if all(ms.get(n, {}).get("connected", False) == connected for n in names):
                return
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {n}\n{self.workers[n].log()[-1500:]}" for n in names if n in self.workers)
                raise AssertionError(f"machines {names} not connected={connected} within {timeout}s: {ms}\n"
                                     f"--- controller\n{self.controller_log()[-2000:]}\n{logs}")
            time.sleep(0.1)

    def stop(self) -> None:
        for w in self.workers.values():
            with contextlib.suppress(Exception):
                w.kill(signal.SIGTERM)
        if self.session is not None:
            self.session.close()
        for ns in self.namespaces.values():
            ns.down()
        if os.environ.get("LSM_REMOTE_KEEP_BEDS") != "1":
            for i in range(self.first, self.first + len(self.names)):
                bed_down(i)
        if os.environ.get("LSM_REMOTE_KEEP_LOGS") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)


def call_many(s: LsmSession, calls: list[tuple[str, dict]], in_flight: int = 20,
              timeout: float = 60) -> list[tuple[object, float]]:
    """Runs tools/call for every (name, args), `in_flight` at a time, over the session's one MCP
    client; returns (result or exception, seconds) in the order of `calls`."""
    import anyio

    results: list[tuple[object, float]] = [(None, 0.0)] * len(calls)

    async def one(i: int, sem: anyio.Semaphore) -> None:
        name, args = calls[i]
        async with sem:
            t = time.perf_counter()
            try:
                with anyio.fail_after(timeout):
                    r = await s.session.call_tool(name, args)
            except Exception as e:  # noqa: BLE001 - reported per call
                r = e
            results[i] = (r, time.perf_counter() - t)

    async def all_() -> None:
        sem = anyio.Semaphore(in_flight)
        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i, sem)

    s._portal.call(all_)
    return results
