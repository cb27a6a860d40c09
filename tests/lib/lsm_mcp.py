"""Synchronous test facade over the official Python MCP SDK (PyPI `mcp`, 2.x) for `lsm`.

    from lsm_mcp import mcp_stdio, mcp_http, ok, err_code, image_bytes

    with mcp_stdio(env) as s:          # spawns `$LSM_BIN serve`, initialises one session
        tools = s.list_tools()         # -> list[mcp.types.Tool]
        r = s.call("gui_list", {})     # -> mcp.types.CallToolResult
        data = s.ok(r)                 # structured content; asserts success (stderr tail on failure)

    with mcp_http(env) as s:           # spawns `$LSM_BIN serve --http 127.0.0.1:0` (free port)
        s.url                          # http://127.0.0.1:PORT/mcp
        s.raw_call("gui_list", '{}')   # raw JSON text as the arguments (NaN, 1e999, ...)

    with mcp_http(env, headers={"Authorization": "Bearer ..."}, args=["--http-token-file", path]) as s:
        ...                            # a server that needs an access token, and a client sending it

The SDK's asyncio loop runs in a background thread (anyio blocking portal); every request is
bounded by a timeout (default 30 s, env LSM_TEST_CALL_TIMEOUT) so a hung server fails the test
instead of hanging CI. The server process is always stopped on close; its stderr goes to a file
(`s.stderr_path`, in the test run's log directory: tests/lib/run_logs.py) whose tail is appended
to assertion and timeout messages.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import re
import select
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

import anyio
import anyio.from_thread

from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from run_logs import log_path, record_secret

REPO = Path(__file__).resolve().parents[2]
CALL_TIMEOUT = float(os.environ.get("LSM_TEST_CALL_TIMEOUT", "30"))
START_TIMEOUT = float(os.environ.get("LSM_TEST_START_TIMEOUT", "20"))

__all__ = [
    "REPO", "CALL_TIMEOUT", "lsm_bin", "headless_env", "bed_env", "parse_env", "parse_exports", "free_port",
    "LsmSession", "mcp_stdio", "mcp_http", "RawStdio", "RawHttp",
    "ok", "err_code", "err_message", "text_of", "image_bytes",
]


# ------------------------------------------------------------------ environment helpers
def lsm_bin() -> str:
    """Path of the server binary: env LSM_BIN, default target/release/lsm (repo-relative)."""
    p = Path(os.environ.get("LSM_BIN", "target/release/lsm"))
    if not p.is_absolute():
        p = REPO / p
    return str(p)


GUI_ENV_PREFIXES = ("XDG_",)
GUI_ENV_NAMES = ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "DBUS_SESSION_BUS_ADDRESS",
                 "AT_SPI_BUS_ADDRESS", "XAUTHORITY")


X11_DIR = "/tmp/.X11-unix"
# Runs a command with an empty /tmp/.X11-unix of its own: lsm there finds no X server.
HIDE_X11 = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'mount -t tmpfs -o mode=1777,size=64k lsm-headless {X11_DIR} && exec "$0" "$@"']


def can_hide_x11() -> bool:
    """Whether HIDE_X11 works here (unshare and mount allowed) and leaves no X socket."""
    try:
        r = subprocess.run([*HIDE_X11, "sh", "-c", f'[ -z "$(ls -A {X11_DIR})" ]'], capture_output=True, timeout=10)
        return r.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def headless_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default os.environ) without any display / session-bus / XDG variable."""
    env = dict(os.environ if base is None else base)
    for k in list(env):
        if k in GUI_ENV_NAMES or k.startswith(GUI_ENV_PREFIXES):
            del env[k]
    return env


def bed_env() -> dict[str, str] | None:
    """Environment of the running test desktop, or None when no bed is up.

    Order: env LSM_TEST_GUI_ENV (path of a file of `export K=V` lines), the variables already in
    os.environ (DISPLAY set), then `tests/bed/desktop.sh env`.
    """
    env = dict(os.environ)
    f = os.environ.get("LSM_TEST_GUI_ENV")
    if f and Path(f).is_file():
        env.update(parse_exports(Path(f).read_text()))
        return env
    if os.environ.get("DISPLAY"):
        return env
    script = REPO / "tests/bed/desktop.sh"
    if script.exists():
        try:
            out = subprocess.run(["bash", str(script), "env"], capture_output=True, text=True,
                                 timeout=20).stdout
        except (subprocess.SubprocessError, OSError):
            return None
        exports = parse_exports(out)
        if exports.get("DISPLAY"):
            env.update(exports)
            return env
    return None


def parse_env(text: str) -> tuple[dict[str, str], list[str]]:
    """The `export A='x' B=y` and `unset C D` lines printed by tests/bed/desktop.sh: (sets, unsets)."""
    sets: dict[str, str] = {}
    unsets: list[str] = []
    for line in text.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if words and words[0] == "unset":
            unsets.extend(words[1:])
            continue
        if words and words[0] == "export":
            words = words[1:]
        elif not words or "=" not in words[0]:
            continue
        for word in words:
            key, sep, value = word.partition("=")
            if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                sets[key] = value
    return sets, unsets


def parse_exports(text: str) -> dict[str, str]:
    """Only the variables `desktop.sh env` sets."""
    return parse_env(text)[0]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: str | os.PathLike | None, n: int = 40) -> str:
    if not path:
        return ""
    try:
        data = Path(path).read_bytes()[-16384:].decode("utf-8", "replace")
    except OSError:
        return ""
    lines = data.splitlines()[-n:]
    return "\n".join(lines)


# ------------------------------------------------------------------ result helpers
def box(element: dict) -> tuple[int, int, int, int]:
    """An element's bounds as (x, y, w, h): gui_state gives them as an array [x, y, w, h]."""
    x, y, w, h = element["bounds"]
    return x, y, w, h


def rect(element: dict) -> dict:
    """An element's bounds as a window-style {x, y, width, height} dict."""
    x, y, w, h = box(element)
    return {"x": x, "y": y, "width": w, "height": h}


def middle(element: dict) -> tuple[int, int]:
    """The centre of an element's bounds, window-relative."""
    x, y, w, h = box(element)
    return x + w // 2, y + h // 2


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in (result.content or []) if getattr(c, "type", None) == "text")


def _describe(result: Any) -> str:
    try:
        sc = json.dumps(result.structured_content, ensure_ascii=False)[:2000]
    except Exception:  # noqa: BLE001
        sc = repr(getattr(result, "structured_content", None))[:2000]
    return f"is_error={getattr(result, 'is_error', None)} text={text_of(result)[:2000]!r} structured={sc}"


def ok(result: types.CallToolResult, stderr_tail: str = "") -> dict:
    """Structured content of a successful tool result; fails the test (with the error) otherwise."""
    msg = f"tool call failed: {_describe(result)}"
    if stderr_tail:
        msg += f"\n--- server stderr (tail) ---\n{stderr_tail}"
    assert not result.is_error, msg
    assert isinstance(result.structured_content, dict), f"no structuredContent: {_describe(result)}"
    return result.structured_content


def err_code(result: types.CallToolResult) -> str:
    """The error code of a failed tool result (asserts is_error, structured error and text agree)."""
    assert result.is_error, f"expected an error result, got success: {_describe(result)}"
    sc = result.structured_content
    assert isinstance(sc, dict) and isinstance(sc.get("error"), dict), \
        f"error result without structuredContent.error: {_describe(result)}"
    code = sc["error"].get("code")
    assert isinstance(code, str) and code, f"error without code: {_describe(result)}"
    txt = text_of(result)
    assert txt.startswith(code), f"text block {txt!r} does not start with the code {code}"
    return code


def err_message(result: types.CallToolResult) -> str:
    err_code(result)
    return result.structured_content["error"].get("message", "")


def image_bytes(result: types.CallToolResult) -> bytes | None:
    """Bytes of the first image/png content block, or None."""
    for c in result.content or []:
        if getattr(c, "type", None) == "image":
            assert c.mime_type == "image/png", f"image block with mime type {c.mime_type}"
            return base64.b64decode(c.data)
    return None


# ------------------------------------------------------------------ the session facade

def stop_group(p: subprocess.Popen, grace: float = 5) -> None:
    """Stops a process started in its own process group (start_new_session), so a wrapper
    (strace, unshare) and its children go with it: SIGTERM, then SIGKILL after `grace` seconds."""
    if p.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(grace)


class LsmSession:
    """One MCP client session to one `lsm serve` process (stdio or Streamable HTTP)."""

    def __init__(self, transport: str = "stdio", env: dict[str, str] | None = None,
                 args: Sequence[str] = (), wrapper: Sequence[str] = (),
                 timeout: float = CALL_TIMEOUT, binary: str | None = None,
                 stderr_path: str | None = None, headers: dict[str, str] | None = None):
        assert transport in ("stdio", "http"), transport
        # HTTP only: sent with every request (an access token: Authorization: Bearer ...).
        self.headers = dict(headers or {})
        self.transport = transport
        self.env = dict(os.environ if env is None else env)
        self.args = list(args)
        self.wrapper = list(wrapper)
        self.timeout = timeout
        self.binary = binary or lsm_bin()
        if stderr_path is None:
            stderr_path = log_path(f"lsm-{transport}")
        self.stderr_path = stderr_path
        self.url: str | None = None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None  # HTTP only (stdio: the SDK owns the process)
        self.session: ClientSession | None = None
        self.init_result: types.InitializeResult | None = None
        self._errfile = None
        self._portal_cm = None
        self._portal = None
        self._session_cm = None
        self._closed = False

    # ---- lifecycle
    def open(self) -> "LsmSession":
        if not os.path.exists(self.binary):
            raise FileNotFoundError(f"lsm binary not found: {self.binary} (build it or set LSM_BIN)")
        self._errfile = open(self.stderr_path, "ab", buffering=0)
        try:
            if self.transport == "http":
                self._spawn_http()
            self._portal_cm = anyio.from_thread.start_blocking_portal("asyncio")
            self._portal = self._portal_cm.__enter__()
            self._session_cm = self._portal.wrap_async_context_manager(self._session_ctx())
            self.session = self._session_cm.__enter__()
        except BaseException as e:
            tail = self.stderr_tail()
            self.close()
            if isinstance(e, Exception):
                raise RuntimeError(f"cannot open an MCP {self.transport} session to {self.binary}: "
                                   f"{e!r}\n--- server stderr (tail) ---\n{tail}") from e
            raise
        return self

    @contextlib.asynccontextmanager
    async def _session_ctx(self):
        if self.transport == "stdio":
            cmd = [*self.wrapper, self.binary, "serve", *self.args]
            params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=self.env, cwd=str(REPO))
            transport_cm = stdio_client(params, errlog=self._errfile)
        elif self.headers:
            from mcp.shared._httpx_utils import create_mcp_http_client
            transport_cm = _with_client(create_mcp_http_client(headers=self.headers), self.url)
        else:
            transport_cm = streamable_http_client(self.url)
        async with transport_cm as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=self.timeout) as session:
                with anyio.fail_after(START_TIMEOUT):
                    self.init_result = await session.initialize()
                yield session

    def _spawn_http(self) -> None:
        """Start `lsm serve --http 127.0.0.1:0` (the kernel picks a free port, no race) and wait
        for the `lsm: MCP endpoint http://127.0.0.1:PORT/mcp` line on stderr."""
        cmd = [*self.wrapper, self.binary, "serve", "--http", "127.0.0.1:0", *self.args]
        start = os.path.getsize(self.stderr_path)
        self.proc = subprocess.Popen(cmd, env=self.env, cwd=str(REPO), stdin=subprocess.DEVNULL,
                                     stdout=self._errfile, stderr=self._errfile,
                                     start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            with open(self.stderr_path, "rb") as f:
                f.seek(start)
                text = f.read().decode("utf-8", "replace")
            m = re.search(r"lsm: MCP endpoint (http://[^/\s]+:(\d+)/mcp)", text)
            if m:
                self.url, self.port = m.group(1), int(m.group(2))
                assert self.port != 0, text
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"lsm serve --http exited ({self.proc.returncode}) before listening: "
                                   f"{text[-2000:]}")
            time.sleep(0.02)
        raise TimeoutError(f"no 'lsm: MCP endpoint' line on stderr within {START_TIMEOUT}s")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._session_cm is not None:
                try:
                    self._session_cm.__exit__(None, None, None)
                except BaseException:  # noqa: BLE001 - cleanup must go on
                    pass
            if self._portal_cm is not None:
                try:
                    self._portal_cm.__exit__(None, None, None)
                except BaseException:  # noqa: BLE001
                    pass
        finally:
            self._stop_proc()
            if self._errfile is not None:
                self._errfile.close()

    def _stop_proc(self) -> None:
        if self.proc is not None:
            stop_group(self.proc)

    def __enter__(self) -> "LsmSession":
        return self.open() if self.session is None else self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- diagnostics
    def stderr_tail(self, n: int = 40) -> str:
        return _tail(self.stderr_path, n)

    def alive(self) -> bool:
        """True while the server process runs (HTTP) / the session is open (stdio)."""
        if self.proc is not None:
            return self.proc.poll() is None
        return self.session is not None and not self._closed

    # ---- calls
    def _run(self, fn, *args, what: str = "request", timeout: float | None = None, **kwargs):
        assert self._portal is not None and self.session is not None, "session not open"
        limit = self.timeout if timeout is None else timeout

        async def bounded():
            with anyio.fail_after(limit):
                return await fn(*args, **kwargs)

        try:
            return self._portal.call(bounded)
        except Exception as e:  # noqa: BLE001
            # anyio's fail_after raises TimeoutError; the SDK's read timeout raises MCPError
            if isinstance(e, TimeoutError) or "timed out" in str(e):
                raise TimeoutError(f"{what}: no answer within {limit}s over {self.transport}"
                                   f"\n--- server stderr (tail) ---\n{self.stderr_tail()}") from e
            raise

    def list_tools(self) -> list[types.Tool]:
        return self._run(self.session.list_tools, what="tools/list").tools

    def ping(self) -> None:
        self._run(self.session.send_ping, what="ping")

    def call(self, name: str, args: dict[str, Any] | None = None,
             timeout: float | None = None) -> types.CallToolResult:
        limit = self.timeout if timeout is None else timeout
        return self._run(self.session.call_tool, name, args if args is not None else {},
                         read_timeout_seconds=limit, what=f"tools/call {name}", timeout=limit + 1)

    def ok(self, result: types.CallToolResult) -> dict:
        return ok(result, self.stderr_tail())

    def call_ok(self, name: str, args: dict[str, Any] | None = None, **kw) -> dict:
        return self.ok(self.call(name, args, **kw))

    def fresh_state(self, window_id: str) -> str:
        """A new state_id for window_id (no screenshot, no elements: cheap)."""
        st = self.call_ok("gui_state", {"window_id": window_id, "screenshot": False,
                                        "include_elements": False})
        return st["state_id"]

    def raw_call(self, name: str, arguments_json: str, timeout: float | None = None) -> dict:
        """tools/call with `arguments_json` spliced verbatim into the JSON-RPC text (HTTP only).

        For payloads the SDK cannot serialise (NaN, 1e999). Returns the JSON-RPC response dict.
        """
        assert self.transport == "http" and self.url, "raw_call needs the HTTP transport"
        with RawHttp(self.url, timeout=self.timeout if timeout is None else timeout, headers=self.headers) as raw:
            return raw.call_tool_raw(name, arguments_json)


@contextlib.asynccontextmanager
async def _with_client(client, url: str):
    """streamable_http_client over our own HTTP client (its headers), closed afterwards."""
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            yield streams


def mcp_stdio(env: dict[str, str] | None = None, **kw) -> LsmSession:
    """An open stdio session (use as a context manager or call .close())."""
    return LsmSession("stdio", env, **kw).open()


def mcp_http(env: dict[str, str] | None = None, **kw) -> LsmSession:
    """An open Streamable HTTP session to a fresh `lsm serve --http 127.0.0.1:0` (s.url, s.port)."""
    return LsmSession("http", env, **kw).open()


# ------------------------------------------------------------------ raw clients (no SDK)
PROTOCOL_VERSION = "2025-06-18"
_INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                    "clientInfo": {"name": "lsm-tests-raw", "version": "0"}}}


class RawHttp:
    """Hand-rolled Streamable HTTP client: exact bytes on the wire, any headers."""

    def __init__(self, url: str, timeout: float = CALL_TIMEOUT, initialize: bool = True,
                 headers: dict[str, str] | None = None):
        # Sent with every request (an access token), unless a request overrides them.
        self.headers = dict(headers or {})
        m = re.match(r"http://([^/:]+):(\d+)(/.*)$", url)
        assert m, url
        self.host, self.port, self.path = m.group(1), int(m.group(2)), m.group(3)
        self.timeout = timeout
        self.session_id: str | None = None
        self._next_id = 1
        if initialize:
            status, headers, body = self.post(json.dumps(_INIT))
            assert status == 200, f"initialize: HTTP {status} {body[:500]!r}"
            self.session_id = headers.get("mcp-session-id")
            record_secret("mcp_session", self.session_id)  # it lets its holder use the session
            self.post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.session_id:
            with contextlib.suppress(OSError, http.client.HTTPException):
                self.request("DELETE", None)
            self.session_id = None

    def request(self, method: str, body: str | bytes | None, headers: dict[str, str] | None = None,
                path: str | None = None) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            h = {"Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream",
                 "MCP-Protocol-Version": PROTOCOL_VERSION}
            if self.session_id:
                h["Mcp-Session-Id"] = self.session_id
            h.update(self.headers)
            h.update(headers or {})
            if isinstance(body, str):
                body = body.encode()
            # skip_host so a test can send its own Host header
            conn.putrequest(method, path or self.path, skip_host="Host" in h, skip_accept_encoding=True)
            if body is not None:
                h["Content-Length"] = str(len(body))
            for k, v in h.items():
                conn.putheader(k, v)
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
        finally:
            conn.close()

    def post(self, body: str | bytes, headers: dict[str, str] | None = None):
        return self.request("POST", body, headers)

    @staticmethod
    def parse_jsonrpc(headers: dict[str, str], body: bytes) -> list[dict]:
        """JSON-RPC messages of a response: plain JSON or an SSE stream."""
        ctype = headers.get("content-type", "")
        if "text/event-stream" in ctype:
            msgs = []
            for event in re.split(r"\r?\n\r?\n", body.decode("utf-8", "replace")):
                data = "\n".join(line[5:].lstrip() if line.startswith("data:") else ""
                                 for line in event.splitlines() if line.startswith("data:"))
                if data.strip():
                    msgs.append(json.loads(data))
            return msgs
        if not body.strip():
            return []
        v = json.loads(body)
        return v if isinstance(v, list) else [v]

    def rpc_raw(self, text_with_id: str, req_id: int) -> dict:
        status, headers, body = self.post(text_with_id)
        assert status == 200, f"HTTP {status}: {body[:500]!r}"
        for msg in self.parse_jsonrpc(headers, body):
            if msg.get("id") == req_id:
                return msg
        raise AssertionError(f"no JSON-RPC response with id {req_id} in {body[:1000]!r}")

    def call_tool_raw(self, name: str, arguments_json: str) -> dict:
        rid = self._next_id
        self._next_id += 1
        text = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":%s}}'
                % (rid, json.dumps(name), arguments_json))
        return self.rpc_raw(text, rid)


class RawStdio:
    """Hand-rolled stdio client: writes exact lines to `lsm serve`, reads JSON-RPC lines back."""

    def __init__(self, env: dict[str, str] | None = None, args: Sequence[str] = (),
                 wrapper: Sequence[str] = (), timeout: float = CALL_TIMEOUT, initialize: bool = True,
                 binary: str | None = None):
        self.stderr_path = log_path("lsm-rawstdio")
        self._err = open(self.stderr_path, "ab", buffering=0)
        self.timeout = timeout
        self.proc = subprocess.Popen([*wrapper, binary or lsm_bin(), "serve", *args],
                                     env=dict(os.environ if env is None else env), cwd=str(REPO),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                     start_new_session=True)
        self._buf = b""
        if initialize:
            self.send(json.dumps(_INIT))
            self.wait_id(0)
            self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, line: str | bytes) -> None:
        if isinstance(line, str):
            line = line.encode()
        self.proc.stdin.write(line.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def read_message(self, timeout: float | None = None) -> dict | None:
        """Next JSON-RPC message, or None at EOF; raises TimeoutError."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no message from lsm within the timeout\n{_tail(self.stderr_path)}")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def wait_id(self, req_id: Any, timeout: float | None = None) -> dict:
        while True:
            msg = self.read_message(timeout)
            assert msg is not None, f"server closed stdout\n{_tail(self.stderr_path)}"
            if msg.get("id") == req_id and ("result" in msg or "error" in msg):
                return msg

    def exchange(self, line: str | bytes, timeout: float | None = None, expect_id: Any = None,
                 grace: float = 2.0) -> list[dict]:
        """Send one raw line, then a ping as a sentinel; every message that came back (an empty
        list: the line was dropped without an answer). With `expect_id`, an answer to that id
        may still come after the sentinel's (requests run concurrently): wait `grace` s for it."""
        self._sentinel = getattr(self, "_sentinel", 0) + 1
        sid = f"sentinel-{self._sentinel}"
        self.send(line)
        self.send(json.dumps({"jsonrpc": "2.0", "id": sid, "method": "ping"}))
        got: list[dict] = []
        deadline = None  # set once the sentinel is answered
        while True:
            if deadline is not None and (expect_id is None or any(m.get("id") == expect_id for m in got)):
                return got
            try:
                wait = timeout if deadline is None else max(0.0, deadline - time.monotonic())
                msg = self.read_message(wait)
            except TimeoutError:
                if deadline is not None:
                    return got
                raise
            assert msg is not None, f"server closed stdout\n{_tail(self.stderr_path)}"
            if msg.get("id") == sid:
                deadline = time.monotonic() + grace
            else:
                got.append(msg)

    def call_tool_raw(self, name: str, arguments_json: str, req_id: int = 1000) -> dict:
        """tools/call with `arguments_json` spliced verbatim; the JSON-RPC response dict."""
        self.send('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":%s}}'
                  % (req_id, json.dumps(name), arguments_json))
        return self.wait_id(req_id)

    def close(self) -> None:
        p = self.proc
        with contextlib.suppress(OSError):
            p.stdin.close()
        try:
            p.wait(3)
        except subprocess.TimeoutExpired:
            p.terminate()
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(3)
        with contextlib.suppress(OSError):
            p.stdout.close()
        self._err.close()
