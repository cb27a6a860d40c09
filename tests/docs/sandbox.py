"""A throw-away home for running documented commands: the built binary on PATH as `lsm`, its own
HOME (so `~/.config/lsm` is the state directory), no display variables, servers started in the
background and stopped at the end, and MCP sessions through the official Python SDK."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from md_blocks import REPO

sys.path.insert(0, str(REPO / "tests" / "lib"))
from lsm_mcp import headless_env, lsm_bin, stop_group  # noqa: E402

import anyio  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

MCP_TIMEOUT = 20


async def _talk(read, write, call: tuple[str, dict] | None):
    """initialize + tools/list (+ one tools/call) over an open transport, bounded: the tools,
    and the call's structured result."""
    with anyio.fail_after(MCP_TIMEOUT):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            result = None
            if call is not None:
                r = await session.call_tool(*call)
                result = r.structured_content
            return tools, result

# Stand-ins that record how bash expanded a documented line (quotes, $(...), ~) as JSON: the
# test then runs the real command itself, or checks the arguments of one it cannot run here.
RECORDER = """#!/bin/sh
exec "$LSM_DOCS_PYTHON" -c 'import json, os, sys
env = {k: v for k, v in os.environ.items() if k.startswith("LSM_")}
print(json.dumps({"argv": sys.argv[2:], "env": env}))' "$0" "$@"
"""

# Documented names that stand for the reader's own machines.
HOSTS = ("desk.lan", "controller.example.lan")
DOC_PORTS = (8765, 7443)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sandbox:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="lsm-docs-"))
        self.home = self.root / "home"
        self.bin = self.root / "bin"  # the real lsm
        self.rec = self.root / "rec"  # recorders named lsm and claude
        for d in (self.home, self.bin, self.rec):
            d.mkdir()
        binary = lsm_bin()
        if not os.path.exists(binary):
            raise FileNotFoundError(f"lsm binary not found: {binary} (build it or set LSM_BIN)")
        (self.bin / "lsm").symlink_to(binary)
        for name in ("lsm", "claude"):
            (self.rec / name).write_text(RECORDER)
            (self.rec / name).chmod(0o755)
        env = headless_env()
        # rustup and cargo keep their toolchains under the real home
        for var, sub in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):
            env.setdefault(var, str(Path.home() / sub))
        for k in [k for k in env if k.startswith("LSM_")]:
            del env[k]
        env.update(HOME=str(self.home), PATH=f"{self.bin}:{env.get('PATH', '/usr/bin:/bin')}",
                   LSM_DOCS_PYTHON=sys.executable,
                   # Any free port for the web UI: a documented server must not take 7710 from
                   # someone else's lsm on this machine.
                   LSM_WEB="127.0.0.1:0")
        self.env = env
        self.ports = {p: free_port() for p in DOC_PORTS}
        self.procs: list[subprocess.Popen] = []
        self.enrolled: dict[str, dict[str, str]] = {}  # machine name -> token, pin
        self.http_servers: dict[int, dict] = {}  # real port -> {"token": ..., "proc": ...}
        self.worker_listen: int | None = None

    # ---- placeholders
    def localize(self, text: str) -> str:
        """A documented host or port as it is reached here: 127.0.0.1 and this run's free ports."""
        for host in HOSTS:
            text = text.replace(host, "127.0.0.1")
        for doc, real in self.ports.items():
            text = re.sub(rf"(?<=:){doc}\b", str(real), text)
        return text

    # ---- running
    def bash(self, line: str, *, record: bool = False, timeout: float = 30) -> subprocess.CompletedProcess:
        env = dict(self.env)
        if record:
            env["PATH"] = f"{self.rec}:{env['PATH']}"
        return subprocess.run(["bash", "-c", line], env=env, cwd=self.home, capture_output=True,
                              text=True, timeout=timeout)

    def recorded(self, line: str) -> dict:
        """How bash expands a line that starts with lsm or claude: {"argv", "env"}."""
        r = self.bash(line, record=True)
        assert r.returncode == 0, f"bash could not run {line!r}: {r.stderr}"
        out = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
        assert len(out) == 1, f"expected one command in {line!r}, got {out}"
        return out[0]

    def lsm(self, argv: list[str], env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / "lsm"), *argv], env={**self.env, **(env or {})},
                              cwd=self.home, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def start(self, argv: list[str], env: dict | None = None, ready: str | None = None,
              timeout: float = 20) -> tuple[subprocess.Popen, str]:
        """Starts `lsm ARGV` in the background; waits for a stderr line matching `ready`."""
        log = self.root / f"proc-{len(self.procs)}.log"
        f = open(log, "wb")
        p = subprocess.Popen([str(self.bin / "lsm"), *argv], env={**self.env, **(env or {})},
                             cwd=self.home, stdin=subprocess.DEVNULL, stdout=f, stderr=f,
                             start_new_session=True)
        f.close()
        self.procs.append(p)
        deadline = time.monotonic() + timeout
        text = ""
        while ready is not None:
            text = log.read_text(errors="replace")
            m = re.search(ready, text)
            if m:
                return p, text
            assert p.poll() is None, f"lsm {' '.join(argv)} exited ({p.returncode}):\n{text[-2000:]}"
            assert time.monotonic() < deadline, f"lsm {' '.join(argv)}: no {ready!r} within {timeout}s:\n{text[-2000:]}"
            time.sleep(0.05)
        return p, text

    def mcp_stdio(self, command: str, args: list[str], env: dict | None = None) -> list:
        """Starts a client configuration's server as an MCP client would (command looked up on
        PATH) and returns the tools of tools/list."""
        path = shutil.which(command, path=self.env["PATH"])
        assert path, f"{command!r} is not on PATH"
        assert os.path.realpath(path) == os.path.realpath(lsm_bin()), f"{command} is not lsm: {path}"
        assert args[:1] == ["serve"], f"the server is started with {args}, not `serve`"
        log = self.root / f"stdio-{time.monotonic_ns()}.log"
        params = StdioServerParameters(command=path, args=list(args), env={**self.env, **(env or {})},
                                       cwd=str(self.home))

        async def run():
            with open(log, "wb") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    return (await _talk(read, write, None))[0]

        try:
            return anyio.run(run)
        except Exception as e:
            raise AssertionError(f"{command} {' '.join(args)}: {e!r}\n{log.read_text(errors='replace')[-2000:]}") from e

    def mcp_http(self, url: str, headers: dict[str, str], call: tuple[str, dict] | None = None):
        """Connects to a documented URL (localized) with the documented headers: (tools, the
        structured result of `call`)."""
        real = self.localize(url)

        async def run():
            async with create_mcp_http_client(headers=headers) as client:
                async with streamable_http_client(real, http_client=client) as (read, write, *_):
                    return await _talk(read, write, call)

        try:
            return anyio.run(run)
        except Exception as e:
            raise AssertionError(f"MCP over HTTP at {real} (documented {url}): {e!r}") from e

    def close(self) -> None:
        for p in self.procs:
            stop_group(p)
        shutil.rmtree(self.root, ignore_errors=True)
