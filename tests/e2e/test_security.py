"""No open door (issue 13), checked from outside as a user or an attacker would: the real `lsm`
binary over real HTTP (http.client and the official MCP SDK's Streamable HTTP client).

- Streamable HTTP beyond loopback refuses to start without an access token; with one, every
  request needs `Authorization: Bearer <token>`; a missing or wrong one gets a 401 that says which
  (`WWW-Authenticate` and a JSON-RPC error body) and never echoes the token.
- The web UI: login throttling per client; every error in the JSON format with a stable code;
  the security headers on every answer; sessions that end (idle, absolute lifetime, logout).
- In real Chromium (tests/webui/security.mjs): the Desktop page cannot be framed by another
  origin, and an injected inline script does not run.
- Secrets typed or used here (password text through MCP and the web UI, the bearer token, a
  worker's token) are absent from the verbose logs of the processes that saw them; they are
  also recorded for the whole run's check (test_zz_logs_clean.py).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from conftest import REPO  # noqa: E402
from gui_flow import element, find_window, observe, wait_for  # noqa: E402
from lsm_mcp import LsmSession, RawHttp, free_port, headless_env, ok  # noqa: E402
from lsm_web import WebServer  # noqa: E402
from run_logs import log_path, record_secret  # noqa: E402

NODE = REPO / "tests" / "conformance" / "node_modules" / ".bin" / "node"
WEBUI = REPO / "tests" / "webui"
TITLE = "lsm test app"
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def new_token() -> str:
    token = secrets.token_hex(32)
    record_secret("bearer", token)
    return token


def token_file(tmp_path: Path, token: str) -> str:
    path = tmp_path / "http-token"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return str(path)


def this_machines_address() -> str | None:
    """An address of this machine that is not loopback (None when it has none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only the route is looked up
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


def start_http(args: list[str], env: dict[str, str] | None = None, timeout: float = 20):
    """`lsm serve --http ...` as a bare process: (proc, port or None, its log path)."""
    path = log_path("lsm-http-raw")
    log = open(path, "ab", buffering=0)
    proc = subprocess.Popen([str(REPO / "target" / "release" / "lsm") if not os.environ.get("LSM_BIN")
                             else os.environ["LSM_BIN"], "serve", "--web", "off", *args],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            env={**os.environ, **(env or {})}, start_new_session=True)
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = Path(path).read_text(errors="replace")
        m = re.search(r"lsm: MCP endpoint http://\S+:(\d+)/mcp", text)
        if m:
            return proc, int(m.group(1)), path
        if proc.poll() is not None:
            return proc, None, path
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"lsm serve --http neither listened nor exited:\n{Path(path).read_text()}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def post_init(host: str, port: int, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """An MCP initialize request with exactly these extra headers."""
    raw = RawHttp(f"http://{host}:{port}/mcp", initialize=False)
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "test-security", "version": "0"}}})
    status, got, data = raw.request("POST", body, headers)
    record_secret("mcp_session", got.get("mcp-session-id"))
    return status, got, data


def sdk_gui_list(url: str, headers: dict[str, str]):
    """gui_list through the official SDK's Streamable HTTP client, sending `headers`."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run():
        with anyio.fail_after(30):
            async with create_mcp_http_client(headers=headers) as client:
                async with streamable_http_client(url, http_client=client) as (read, write, *_):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        return await session.call_tool("gui_list", {})

    return anyio.run(run)


# ------------------------------------------------------------------ MCP over Streamable HTTP
@pytest.mark.parametrize("addr", ["0.0.0.0", "[::]", "this machine's address"])
def test_http_beyond_loopback_does_not_start_without_a_token(addr):
    if addr == "this machine's address":
        addr = this_machines_address()
        if addr is None:
            pytest.skip("this machine has no address beyond loopback")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "LSM_HTTP_TOKEN"}
    r = subprocess.run([os.environ.get("LSM_BIN") or str(REPO / "target" / "release" / "lsm"),
                        "serve", "--http", f"{addr}:{port}", "--web", "off"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20, env=env)
    assert r.returncode != 0, r.stderr
    assert "without an access token" in r.stderr and "--http-token-file" in r.stderr, r.stderr
    assert "LSM_HTTP_TOKEN" in r.stderr and "Authorization: Bearer" in r.stderr, r.stderr
    # Nothing listened meanwhile.
    with socket.socket() as s:
        s.settimeout(2)
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_a_short_token_is_refused():
    r = subprocess.run([os.environ.get("LSM_BIN") or str(REPO / "target" / "release" / "lsm"),
                        "serve", "--http", "0.0.0.0:0", "--web", "off"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=20, env={**os.environ, "LSM_HTTP_TOKEN": "guessable"})
    assert r.returncode != 0 and "at least 16" in r.stderr, r.stderr


def test_with_a_token_every_request_needs_it(tmp_path):
    token = new_token()
    port = free_port()
    proc, listening, log = start_http(["--http", f"0.0.0.0:{port}", "--http-token-file", token_file(tmp_path, token)])
    try:
        assert listening == port, Path(log).read_text()
        # The official SDK with the header: a working session; without it, refused.
        listed = sdk_gui_list(f"http://127.0.0.1:{port}/mcp", {"Authorization": f"Bearer {token}"})
        assert not listed.is_error and listed.structured_content["machines"][0]["name"] == "local", listed
        with pytest.raises(Exception) as refused:
            sdk_gui_list(f"http://127.0.0.1:{port}/mcp", {})
        # The SDK raises the JSON-RPC error of the 401 (tests/e2e/test_first_contact.py reads it).
        assert "Unauthorized" in repr(refused.value), refused.value
        status, headers, body = post_init("127.0.0.1", port, {"Authorization": f"Bearer {token}"})
        assert status == 200 and headers.get("mcp-session-id"), (status, body[:300])
        session = headers["mcp-session-id"]
        # Missing, wrong, cut, other scheme: refused with what is wrong, never with the token.
        answers = set()
        for auth in [None, "Bearer wrong", f"Bearer {token[:-1]}", f"Bearer {token}x", f"Basic {token}",
                     f"Bearer{token}", "Bearer ", token]:
            h = {} if auth is None else {"Authorization": auth}
            status, headers, body = post_init("127.0.0.1", port, h)
            assert status == 401, (auth, status, body[:300])
            assert token not in body.decode() and token not in headers.get("www-authenticate", "")
            assert json.loads(body)["error"]["code"] == -32001, body
            answers.add(headers.get("www-authenticate"))
        # Three answers: no credentials, a malformed header, a wrong token (a cut one is wrong).
        assert len(answers) == 3 and all(a.startswith('Bearer realm="lsm"') for a in answers), answers
        # A session id alone does not let anyone in.
        raw = RawHttp(f"http://127.0.0.1:{port}/mcp", initialize=False)
        raw.session_id = session
        for method, body in [("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
                             ("GET", None), ("DELETE", None)]:
            status, _, data = raw.request(method, body)
            assert status == 401 and b"Unauthorized" in data, (method, status, data[:200])
        # The scheme's case does not matter (RFC 7235); the token's does.
        status, _, _ = post_init("127.0.0.1", port, {"Authorization": f"bearer {token}"})
        assert status == 200
        status, _, _ = post_init("127.0.0.1", port, {"Authorization": f"Bearer {token.upper()}"})
        assert status == 401
        # Reached from beyond loopback, by this machine's address as the Host.
        ip = this_machines_address()
        if ip:
            status, _, _ = post_init(ip, port, {"Authorization": f"Bearer {token}"})
            assert status == 200
            status, _, body = post_init(ip, port, {})
            assert status == 401 and b"Unauthorized" in body, (status, body[:200])
        text = Path(log).read_text()
        assert token not in text and session not in text, text[-2000:]
        assert "MCP request refused: no or wrong access token" in text, text[-2000:]
    finally:
        stop(proc)


def test_the_sdk_with_the_token_works_and_without_it_is_refused(tmp_path):
    token = new_token()
    args = ["--http-token-file", token_file(tmp_path, token)]
    with LsmSession("http", headless_env(), args=args, headers={"Authorization": f"Bearer {token}"}) as s:
        listed = s.call_ok("gui_list", {})
        assert [m["name"] for m in listed["machines"]] == ["local"], listed
        assert token not in Path(s.stderr_path).read_text()
    with pytest.raises(RuntimeError, match="Unauthorized") as refused:
        LsmSession("http", headless_env(), args=args).open()
    assert "MCP request refused: no or wrong access token" in str(refused.value), refused.value


def test_on_loopback_a_token_is_optional_but_enforced_when_given():
    with LsmSession("http", headless_env()) as s:
        assert s.call_ok("gui_list", {})["machines"][0]["name"] == "local"
    token = new_token()
    with LsmSession("http", {**headless_env(), "LSM_HTTP_TOKEN": token},
                    headers={"Authorization": f"Bearer {token}"}) as s:
        assert s.call_ok("gui_list", {})["machines"][0]["name"] == "local"
        status, _, body = post_init("127.0.0.1", s.port, {})
        assert status == 401 and b"Unauthorized" in body and token.encode() not in body, (status, body)
        status, _, body = post_init("127.0.0.1", s.port, {"Authorization": "Bearer " + "0" * 64})
        assert status == 401 and b"wrong" in body and token.encode() not in body, (status, body)


# ------------------------------------------------------------------ web UI: HTTP rules
@pytest.fixture
def web(lsm_bin):
    s = WebServer(lsm_bin)
    yield s
    s.stop()


def request_from(server: WebServer, source: str, method: str, path: str, body=None,
                 headers: dict[str, str] | None = None, raw: bytes | None = None):
    """One request from the local address `source` (127.0.0.x: another client to the server)."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30, source_address=(source, 0))
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    h = {"Content-Type": "application/json"} if data is not None else {}
    h.update(headers or {})
    conn.request(method, path, body=data, headers=h)
    r = conn.getresponse()
    out = r.read()
    conn.close()
    try:
        parsed = json.loads(out) if out else None
    except ValueError:
        parsed = out
    return r.status, r.headers, parsed


def test_login_throttling_is_per_client(web):
    for _ in range(5):
        status, _, body = request_from(web, "127.0.0.2", "POST", "/api/login", {"secret": "wrong guess"})
        assert status == 401, body
    status, _, body = request_from(web, "127.0.0.2", "POST", "/api/login", {"secret": web.secret})
    assert status == 429 and body["error"]["code"] == "RATE_LIMITED", body
    # Another client still logs in (the first one's failures are its own).
    status, headers, body = request_from(web, "127.0.0.3", "POST", "/api/login", {"secret": web.secret})
    assert status == 200, body
    record_secret("csrf_token", body["csrf_token"])
    record_secret("session_cookie", re.match(r"lsm_session=([^;]+)", headers["Set-Cookie"]).group(1))
    status, _, body = web.request("POST", "/api/login", {"secret": web.secret})
    assert status == 200, body
    # The throttled one stays throttled meanwhile.
    status, _, body = request_from(web, "127.0.0.2", "POST", "/api/login", {"secret": web.secret})
    assert status == 429, body


def test_behind_the_proxy_clients_are_told_apart_by_their_forwarded_address(lsm_bin):
    s = WebServer(lsm_bin, "--web-origin", "https://desk.example.org")
    try:
        def login(client: str, secret: str):
            return s.request("POST", "/api/login", {"secret": secret},
                             {"Host": "desk.example.org", "Origin": "https://desk.example.org",
                              "X-Forwarded-For": f"198.51.100.77, {client}", "X-Forwarded-Proto": "https"})
        for _ in range(5):
            assert login("203.0.113.5", "wrong guess")[0] == 401
        status, _, body = login("203.0.113.5", s.secret)
        assert status == 429 and body["error"]["code"] == "RATE_LIMITED", body
        status, _, body = login("203.0.113.6", s.secret)
        assert status == 200, body
    finally:
        s.stop()


def assert_security_headers(what, headers) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name) == value, (what, name, dict(headers))
    csp = headers.get("Content-Security-Policy") or ""
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives.get("default-src") == ["'none'"], (what, csp)
    assert directives.get("script-src") == ["'self'"], (what, csp)  # no 'unsafe-inline', no eval
    assert directives.get("frame-ancestors") == ["'none'"], (what, csp)
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp, (what, csp)


def assert_json_error(what, status, headers, body, want_status, want_code) -> None:
    assert status == want_status, (what, status, body)
    assert (headers.get("Content-Type") or "").startswith("application/json"), (what, dict(headers))
    assert isinstance(body, dict) and set(body) == {"error"}, (what, body)
    assert set(body["error"]) == {"code", "message"}, (what, body)
    assert body["error"]["code"] == want_code, (what, body)
    assert isinstance(body["error"]["message"], str) and body["error"]["message"].strip(), (what, body)
    assert_security_headers(what, headers)


def raw_request(server: WebServer, method: str, path: str, data: bytes | None, headers: dict[str, str]):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    out = r.read()
    conn.close()
    try:
        parsed = json.loads(out) if out else None
    except ValueError:
        parsed = out
    return r.status, r.headers, parsed


def test_every_error_is_json_with_a_stable_code(web):
    cookie, csrf = web.login()
    session = {"Cookie": cookie, "X-CSRF-Token": csrf}
    big = json.dumps({"secret": "a" * (300 * 1024)}).encode()
    cases = [
        ("unknown route", "GET", "/nope", None, {}, 404, "NOT_FOUND"),
        ("unknown api route", "GET", "/api/nope", None, session, 404, "NOT_FOUND"),
        ("wrong method on a page", "POST", "/", b"{}", {}, 405, "METHOD_NOT_ALLOWED"),
        ("wrong method on login", "GET", "/api/login", None, {}, 405, "METHOD_NOT_ALLOWED"),
        ("wrong method on an api call", "DELETE", "/api/action", None, session, 405, "METHOD_NOT_ALLOWED"),
        ("oversized login body", "POST", "/api/login", big, {"Content-Type": "application/json"}, 413,
         "LIMIT_EXCEEDED"),
        ("oversized action body", "POST", "/api/action", big, {**session, "Content-Type": "application/json"},
         413, "LIMIT_EXCEEDED"),
        ("malformed JSON", "POST", "/api/login", b"{\"secret\": ", {"Content-Type": "application/json"}, 400,
         "INVALID_ARGUMENT"),
        ("not an object", "POST", "/api/action", b"[1, 2]", session, 400, "INVALID_ARGUMENT"),
        ("bad bytes", "POST", "/api/action", b"\xff\xfe{", session, 400, "INVALID_ARGUMENT"),
        ("bad number in the query", "GET", "/api/frame?window_id=0x1&quality=abc", None, session, 400,
         "INVALID_ARGUMENT"),
        ("bad format in the query", "GET", "/api/frame?window_id=0x1&format=gif", None, session, 400,
         "INVALID_ARGUMENT"),
        ("broken escapes in the query", "GET", "/api/frame?%ZZ=%FF&window_id=", None, session, 400,
         "INVALID_ARGUMENT"),
        ("unknown machine", "GET", "/api/windows?machine=nowhere", None, session, 404, "MACHINE_UNKNOWN"),
        ("no session", "GET", "/api/machines", None, {}, 401, "AUTH_REQUIRED"),
        ("no CSRF token", "POST", "/api/action", b"{}", {"Cookie": cookie}, 403, "CSRF_REFUSED"),
        ("foreign Host", "GET", "/", None, {"Host": "evil.example"}, 403, "HOST_REFUSED"),
    ]
    for what, method, path, data, headers, want_status, want_code in cases:
        status, h, body = raw_request(web, method, path, data, headers)
        assert_json_error(what, status, h, body, want_status, want_code)
    # A 405 still says which methods are allowed.
    status, h, _ = raw_request(web, "GET", "/api/login", None, {})
    assert status == 405 and "POST" in (h.get("Allow") or ""), dict(h)
    # The server is still fine after all that.
    status, _, body = web.request("GET", "/api/session", headers={"Cookie": cookie})
    assert status == 200 and body["csrf_token"] == csrf


def test_security_headers_on_every_answer(web):
    cookie, csrf = web.login()
    answers = {
        "page": web.request("GET", "/"),
        "script": web.request("GET", "/app.js"),
        "style": web.request("GET", "/app.css"),
        "login refused": web.request("POST", "/api/login", {"secret": "wrong guess"}),
        "session": web.request("GET", "/api/session", headers={"Cookie": cookie}),
        "no session": web.request("GET", "/api/session"),
        "not found": web.request("GET", "/favicon.ico"),
        "wrong method": web.request("PUT", "/app.js", {}),
        "logout": web.request("POST", "/api/logout", headers={"Cookie": cookie, "X-CSRF-Token": csrf}),
    }
    for what, (status, headers, _) in answers.items():
        assert_security_headers(what, headers)
    assert answers["page"][0] == 200 and answers["script"][0] == 200 and answers["not found"][0] == 404
    assert answers["script"][1]["Content-Type"].startswith("text/javascript")


def test_the_page_has_no_inline_script(web):
    _, _, html = web.request("GET", "/")
    html = html.decode() if isinstance(html, bytes) else html
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script\s*>", html, re.S | re.I)
    assert scripts, html[:500]
    for attrs, content in scripts:
        assert re.search(r"\bsrc\s*=", attrs) and not content.strip(), (attrs, content)
    assert not re.search(r"\son[a-z]+\s*=", html, re.I), "an inline event handler in index.html"
    assert "javascript:" not in html.lower()
    _, _, js = web.request("GET", "/app.js")
    js = js.decode() if isinstance(js, bytes) else js
    # What the policy would refuse anyway, so the page must not need it.
    for needs_unsafe in [r"\beval\s*\(", r"new\s+Function\s*\(", r"setTimeout\s*\(\s*['\"]",
                         r"\.setAttribute\s*\(\s*['\"]on", r"javascript:"]:
        assert not re.search(needs_unsafe, js), needs_unsafe


def test_sessions_end_at_their_lifetime_even_when_used(lsm_bin):
    s = WebServer(lsm_bin, "--web-session-lifetime", "3", "--web-idle-timeout", "60")
    try:
        started = time.monotonic()  # the session is younger than this
        cookie, _ = s.login()
        logged_in = time.monotonic()  # ... and older than this
        uses = 0
        while time.monotonic() - started < 2.5:
            status, _, body = s.request("GET", "/api/session", headers={"Cookie": cookie})
            if time.monotonic() - started < 3:  # answered within the lifetime (a loaded machine may lag)
                assert status == 200, (time.monotonic() - started, body)
                uses += 1
            time.sleep(0.3)
        assert uses >= 3
        time.sleep(max(0.0, 3.2 - (time.monotonic() - logged_in)))
        status, _, body = s.request("GET", "/api/session", headers={"Cookie": cookie})
        assert status == 401 and body["error"]["code"] == "AUTH_REQUIRED", body
    finally:
        s.stop()


def test_idle_sessions_end(lsm_bin):
    s = WebServer(lsm_bin, "--web-idle-timeout", "2")
    try:
        cookie, _ = s.login()
        assert s.request("GET", "/api/session", headers={"Cookie": cookie})[0] == 200
        time.sleep(2.5)
        status, _, body = s.request("GET", "/api/session", headers={"Cookie": cookie})
        assert status == 401 and body["error"]["code"] == "AUTH_REQUIRED", body
    finally:
        s.stop()


def test_logout_ends_the_session(web):
    cookie, csrf = web.login()
    other_cookie, _ = web.login()
    h = {"Cookie": cookie, "X-CSRF-Token": csrf}
    assert web.request("GET", "/api/machines", headers=h)[0] == 200
    status, headers, body = web.request("POST", "/api/logout", headers=h)
    assert status == 200, body
    assert "Max-Age=0" in headers["Set-Cookie"], headers["Set-Cookie"]
    # The old cookie (kept by someone who copied it) no longer works, for reading or acting.
    for method, path, data in [("GET", "/api/session", None), ("GET", "/api/machines", None),
                               ("POST", "/api/action", {"window_id": "0x1", "geometry": {}, "actions": []}),
                               ("POST", "/api/logout", None)]:
        status, _, body = web.request(method, path, data, headers=h)
        assert status == 401 and body["error"]["code"] == "AUTH_REQUIRED", (method, path, body)
    # Other sessions go on.
    assert web.request("GET", "/api/session", headers={"Cookie": other_cookie})[0] == 200


# ------------------------------------------------------------------ Chromium: CSP and framing
@pytest.fixture(scope="module")
def browser(lsm_bin):
    """Runs tests/webui/security.mjs once against a fresh server; {scenario: record}."""
    if not NODE.exists() or not (WEBUI / "node_modules" / "playwright-core").exists():
        pytest.fail("tests/webui/node_modules or Node 22 is missing: run tests/setup.sh")
    srv = WebServer(lsm_bin)
    try:
        r = subprocess.run([str(NODE), str(WEBUI / "security.mjs")], capture_output=True, text=True,
                           timeout=300, cwd=WEBUI,
                           env={**os.environ, "LSM_WEB_URL": srv.url, "LSM_WEB_SECRET": srv.secret})
    finally:
        srv.stop()
    out = {}
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        out[rec["scenario"]] = rec
    if not out:
        pytest.fail(f"security.mjs did not run (exit {r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}")
    out["_stderr"] = r.stderr
    return out


@pytest.mark.parametrize("scenario", [
    "framing_control",  # a page without the headers is shown in a frame (the check can see it)
    "framed_desktop_page_not_shown",  # the Desktop page framed by another origin: not shown
    "inline_script_control",  # an injected inline script runs on a page without a policy
    "inline_script_blocked",  # on the Desktop page it does not run, and the violation is reported
])
def test_in_chromium(browser, scenario):
    rec = browser.get(scenario)
    assert rec is not None, f"{scenario} did not run:\n{browser['_stderr'][-3000:]}"
    assert rec["ok"], rec["detail"]
    print(scenario, json.dumps(rec["detail"]))


# ------------------------------------------------------------------ secrets never in the logs
PASSWORD_BY_MODEL = "model-pw-" + secrets.token_hex(6)
PASSWORD_BY_PERSON = "person-pw-" + secrets.token_hex(6)


def test_password_text_and_tokens_are_not_in_verbose_logs(bed_env, lsm_bin, tmp_path, restart_app, probe):
    """The password typed by a model (MCP over HTTP with a bearer token) and by a person (the web
    UI), the bearer token, the web session: none in the server's log at LSM_LOG=trace."""
    assert os.environ.get("LSM_LOG") == "trace", os.environ.get("LSM_LOG")
    record_secret("password_text", PASSWORD_BY_MODEL)
    record_secret("password_text", PASSWORD_BY_PERSON)
    token = new_token()
    web_port = free_port()
    restart_app()
    s = LsmSession("http", {**bed_env, "LSM_LOG": "trace", "LSM_AUDIT_LOG": "off"},
                   args=["--http-token-file", token_file(tmp_path, token), "--web", f"127.0.0.1:{web_port}"],
                   headers={"Authorization": f"Bearer {token}"}).open()
    try:
        win = find_window(s, title=TITLE)
        st = observe(s, win)
        pw = element(st, "Password")
        ok(s.call("gui_action", {"window_id": win["window_id"], "state_id": st["state_id"],
                                 "actions": [{"type": "click", "element_id": pw["id"]},
                                             {"type": "key", "keys": "ctrl+a"},
                                             {"type": "type", "text": PASSWORD_BY_MODEL}]}))
        wait_for(lambda: len((probe(find="Password") or {}).get("text") or "") == len(PASSWORD_BY_MODEL),
                 what="the model's password typed")
        # The person: the web UI of the same server, a click into the field and the text.
        secret = re.search(r"#secret=(\S+)", Path(s.stderr_path).read_text()).group(1)
        record_secret("web_secret", secret)
        web = WebServer.__new__(WebServer)
        web.host, web.port = "127.0.0.1", web_port
        cookie, csrf = web.login(secret)
        h = {"Cookie": cookie, "X-CSRF-Token": csrf}
        status, _, body = web.request("GET", "/api/windows", headers=h)
        w = next(x for x in body["windows"] if x["title"] == TITLE)
        x, y, width, height = pw["bounds"]
        status, _, body = web.request("POST", "/api/action", {
            "window_id": w["window_id"], "geometry": w["bounds"],
            "actions": [{"type": "click", "x": x + width // 2, "y": y + height // 2},
                        {"type": "key", "keys": "ctrl+a"}, {"type": "type", "text": PASSWORD_BY_PERSON}]}, h)
        assert status == 200, body
        wait_for(lambda: len((probe(find="Password") or {}).get("text") or "") == len(PASSWORD_BY_PERSON),
                 what="the person's password typed")
        log = Path(s.stderr_path).read_text(errors="replace")
        assert "TRACE" in log or "DEBUG" in log, "the server did not log verbosely"
        for what, value in [("model's password", PASSWORD_BY_MODEL), ("person's password", PASSWORD_BY_PERSON),
                            ("bearer token", token), ("session cookie", cookie.split("=", 1)[1]),
                            ("CSRF token", csrf)]:
            assert value not in log, f"the {what} is in the log {s.stderr_path}"
    finally:
        s.close()
        restart_app()


def test_a_workers_token_is_not_in_verbose_logs(lsm_bin, tmp_path):
    """A worker (no desktop) enrolled and connected to a controller that needs a bearer token:
    neither the worker's token nor the bearer token is in either log at LSM_LOG=trace."""
    state = tmp_path / "state"
    env = {**headless_env(), "LSM_LOG": "trace"}
    r = subprocess.run([str(lsm_bin), "enrol", "w9", "--state-dir", str(state)], capture_output=True,
                       text=True, timeout=30, env=env)
    token = re.search(r"lsmw_[0-9a-f]{64}", r.stdout)
    pin = re.search(r"--pin ([0-9a-f]{64})", r.stdout)
    assert r.returncode == 0 and token and pin, r.stdout + r.stderr
    worker_token = token.group(0)
    record_secret("worker_token", worker_token)
    (tmp_path / "token").write_text(worker_token)
    (tmp_path / "token").chmod(0o600)
    bearer = new_token()
    port = free_port()
    s = LsmSession("http", {**env, "LSM_WEB": "off", "LSM_AUDIT_LOG": "off"},
                   args=["--http-token-file", token_file(tmp_path, bearer), "--worker-listen", f"127.0.0.1:{port}",
                         "--state-dir", str(state)],
                   headers={"Authorization": f"Bearer {bearer}"}).open()
    worker_log = log_path("lsm-worker")
    wrong = "lsmw_" + "0" * 64
    bad_log = None
    worker = subprocess.Popen([str(lsm_bin), "worker", "--controller", f"wss://127.0.0.1:{port}", "--name", "w9",
                               "--token-file", str(tmp_path / "token"), "--pin", pin.group(1)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=open(worker_log, "w"), env={**env, "LSM_AUDIT_LOG": "off"})
    try:
        def connected():
            ms = {m["name"]: m for m in s.call_ok("gui_list", {})["machines"]}
            return ms.get("w9", {}).get("connected")
        wait_for(connected, timeout=20, what="w9 connected")
        r = s.call("gui_list", {"machine": "w9"})  # through the link (no desktop there: an answer)
        assert r is not None
        # A wrong token is refused and logged, without the token it tried.
        (tmp_path / "wrong").write_text(wrong)
        bad_log = log_path("lsm-worker-refused")
        bad = subprocess.Popen([str(lsm_bin), "worker", "--controller", f"wss://127.0.0.1:{port}", "--name",
                                "w9", "--token-file", str(tmp_path / "wrong"), "--pin", pin.group(1)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(bad_log, "w"),
                               env={**env, "LSM_AUDIT_LOG": "off"})
        wait_for(lambda: "refused" in Path(bad_log).read_text(), timeout=15, what="the wrong token refused")
        bad.terminate()
        bad.wait(10)
    finally:
        worker.terminate()
        worker.wait(10)
        s.close()
    logs = {"controller": Path(s.stderr_path).read_text(errors="replace"),
            "worker": Path(worker_log).read_text(errors="replace"),
            "refused worker": Path(bad_log).read_text(errors="replace") if bad_log else ""}
    assert "worker" in logs["controller"] and "connected" in logs["worker"], logs
    for name, text in logs.items():
        assert worker_token not in text and bearer not in text, f"a token is in the {name}'s log"
        assert wrong not in text, f"the wrong token tried is in the {name}'s log"
