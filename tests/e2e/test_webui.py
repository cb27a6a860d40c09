"""The web UI's Desktop page (SPEC §3): real Chromium (Debian `chromium` driven by npm
`playwright-core`, tests/webui/desktop.mjs) against the test app under Xvfb, plus the HTTP
security rules checked with a plain HTTP client.

The browser scenarios run once per module (one Chromium session, like a person's) and each
scenario is reported as its own test below; the app's effects are checked inside the scenario
through AT-SPI (tests/lib/atspi_probe.py) and the app's event log.
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, restart_app
from lsm_web import WebServer, free_port  # noqa: F401  (tests/lib)
from run_logs import log_path, record_secret

NODE = REPO / "tests" / "conformance" / "node_modules" / ".bin" / "node"
WEBUI = REPO / "tests" / "webui"
SCREENSHOT = Path(os.environ.get("LSM_WEBUI_SCREENSHOT") or REPO / "target" / "webui" / "desktop-page.png")


@pytest.fixture(scope="module")
def server(lsm_bin):
    s = WebServer(lsm_bin)
    yield s
    s.stop()


def has_worker(lsm_bin: Path) -> bool:
    r = subprocess.run([str(lsm_bin), "worker", "--help"], capture_output=True, timeout=10)
    return r.returncode == 0


@pytest.fixture(scope="module")
def browser_run(lsm_bin, tmp_path_factory, bed_env):
    """Runs tests/webui/desktop.mjs once; {scenario: {"ok", "detail"}}."""
    if not NODE.exists() or not (WEBUI / "node_modules" / "playwright-core").exists():
        pytest.fail("tests/webui/node_modules or Node 22 is missing: run tests/setup.sh")
    restart_app("testapp")
    tmp = tmp_path_factory.mktemp("webui")
    args, worker, remote = [], None, None
    if has_worker(lsm_bin):
        state = tmp / "state"
        r = subprocess.run(
            [str(lsm_bin), "enrol", "w1", "--state-dir", str(state)],
            capture_output=True, text=True, timeout=30,
        )
        token = re.search(r"lsmw_[0-9a-f]+", r.stdout)
        pin = re.search(r"--pin ([0-9a-f]{64})", r.stdout)
        assert r.returncode == 0 and token and pin, r.stdout + r.stderr
        (tmp / "token").write_text(token.group(0))
        record_secret("worker_token", token.group(0))
        (tmp / "token").chmod(0o600)
        port = free_port()
        args = ["--worker-listen", f"127.0.0.1:{port}", "--state-dir", str(state)]
        remote = (port, pin.group(1))
    srv = WebServer(lsm_bin, *args)
    env = {
        **os.environ,
        "LSM_WEB_URL": srv.url,
        "LSM_WEB_SECRET": srv.secret,
        "LSM_WEBUI_SCREENSHOT": str(SCREENSHOT),
    }
    try:
        if remote:
            port, pin = remote
            worker = subprocess.Popen(
                [str(lsm_bin), "worker", "--controller", f"wss://127.0.0.1:{port}", "--name", "w1",
                 "--token-file", str(tmp / "token"), "--pin", pin],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=open(log_path("lsm-worker"), "w"),
            )
            env["LSM_WEBUI_REMOTE"] = "w1|lsm test app"
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(
            [str(NODE), str(WEBUI / "desktop.mjs")],
            capture_output=True, text=True, timeout=400, env=env, cwd=WEBUI,
        )
        results = {}
        for line in r.stdout.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            results[rec["scenario"]] = rec
        if "setup" in results or not results:
            pytest.fail(f"desktop.mjs failed to run (exit {r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}")
        results["_stderr"] = r.stderr
        results["_worker"] = worker is not None
        if worker:
            # The worker goes away: the page must say the machine is offline.
            worker.terminate()
            worker.wait(10)
            worker = None
            results["_offline"] = machine_info(srv, "w1", expect="offline")
        yield results
    finally:
        if worker:
            worker.terminate()
            worker.wait(10)
        srv.stop()
        # The moved-window scenario leaves the app elsewhere: put it back for later tests.
        restart_app("testapp")


def machine_info(srv: WebServer, machine: str, expect: str, timeout: float = 30,
                 url: str | None = None, window: str | None = None) -> dict:
    """What the page says about `machine` (tests/webui/machine-info.mjs), once it says `expect`."""
    deadline = time.monotonic() + timeout
    env = {**os.environ, "LSM_WEB_URL": url or srv.url, "LSM_WEB_SECRET": srv.secret, "LSM_WEBUI_MACHINE": machine}
    if window:
        env["LSM_WEBUI_WINDOW"] = window
    while True:
        r = subprocess.run(
            [str(NODE), str(WEBUI / "machine-info.mjs")], capture_output=True, text=True, timeout=120,
            env=env, cwd=WEBUI,
        )
        out = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else {"error": r.stderr[-2000:]}
        if expect in out.get("info", "") or time.monotonic() > deadline:
            return out
        time.sleep(1)


SCENARIOS = [
    "login",  # secret -> session cookie (HttpOnly, SameSite=Strict); backend + capabilities shown
    "pick_window",  # the window image appears with its geometry
    "click_button",  # click on "Press me" in the image -> AT-SPI shows "Pressed: 1"
    "double_and_right_click",
    "cjk_composition",  # IME composition events in the text field -> CJK text in the GTK entry
    "ctrl_a_then_key",  # ctrl+a then x from the keyboard on the image -> the entry holds "x"
    "key_button",  # the Ctrl+N button (a combo the browser keeps for itself)
    "drag",  # a GTK drag and drop on the image
    "wheel",  # the mouse wheel scrolls the list
    "moved_window_refused",  # window moved between frame and click: refused, page refreshes
    "screenshot",
]


@pytest.mark.parametrize("name", SCENARIOS)
def test_desktop_page(browser_run, name):
    rec = browser_run.get(name)
    assert rec is not None, f"scenario {name} did not run:\n{browser_run['_stderr'][-3000:]}"
    assert rec["ok"], rec["detail"]


def test_click_on_a_workers_window(browser_run):
    assert browser_run["_worker"], "`lsm worker --help` failed: the remote machine could not be set up"
    rec = browser_run.get("remote_click")
    assert rec is not None and rec["ok"], rec and rec["detail"]


def test_page_says_a_worker_is_offline(browser_run):
    assert browser_run["_worker"], "`lsm worker --help` failed: the remote machine could not be set up"
    out = browser_run["_offline"]
    assert "w1 is offline" in out.get("info", ""), out
    assert "(offline)" in out.get("option", ""), out


def test_page_says_there_is_no_graphical_session(lsm_bin):
    from lsm_mcp import headless_env
    from test_headless import HIDE_REASON, WRAPPER

    if WRAPPER is None:
        pytest.skip(HIDE_REASON)
    # No display variables, no buses, and the X sockets hidden (as in test_headless.py).
    srv = WebServer(lsm_bin, env=headless_env(), whole_env=True, wrapper=WRAPPER)
    try:
        out = machine_info(srv, "local", expect="no graphical session", timeout=5)
    finally:
        srv.stop()
    assert "local has no graphical session" in out.get("info", ""), out
    assert "(no GUI)" in out.get("option", ""), out


# ------------------------------------------------------------------ security
def test_no_session_is_401(server):
    for method, path, body in [
        ("GET", "/api/machines", None),
        ("GET", "/api/windows?machine=local", None),
        ("GET", "/api/frame?window_id=0x1", None),
        ("POST", "/api/action", {"window_id": "0x1", "geometry": {}, "actions": []}),
        ("GET", "/api/session", None),
    ]:
        status, _, body = server.request(method, path, body)
        assert status == 401, (method, path, body)
        assert body["error"]["code"] == "AUTH_REQUIRED"
    # The page itself loads (it shows the login form).
    status, headers, body = server.request("GET", "/")
    assert status == 200 and b"Log in" in body
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]


def test_wrong_secret_is_one_generic_refusal(server):
    answers = []
    # Four failures: one below the rate limit (5 per 30 s).
    for secret in ["", "x", server.secret[:-1] + ("0" if server.secret[-1] != "0" else "1")]:
        status, headers, body = server.request("POST", "/api/login", {"secret": secret})
        assert status == 401
        assert headers.get("Set-Cookie") is None
        answers.append(body)
    status, _, body = server.request("POST", "/api/login", {"nothing": 1})
    answers.append(body)
    # One answer for every wrong secret: where the secret is (printed by `lsm serve` at start).
    assert all(a == answers[0] for a in answers), answers
    assert answers[0]["error"]["code"] == "LOGIN_REFUSED" and "lsm serve" in answers[0]["error"]["message"], answers
    # The right secret still works (fewer failures than the rate limit).
    status, headers, body = server.request("POST", "/api/login", {"secret": server.secret})
    assert status == 200, body
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http on loopback


def window_of(server, cookie):
    status, _, body = server.request("GET", "/api/windows?machine=local", headers={"Cookie": cookie})
    assert status == 200, body
    return next(w for w in body["windows"] if w["title"] == "lsm test app")


def test_state_change_needs_csrf_token_and_same_origin(server):
    cookie, csrf = server.login()
    w = window_of(server, cookie)
    # A harmless action: moving the pointer to the window's corner.
    action = {"machine": "local", "window_id": w["window_id"], "geometry": w["bounds"],
              "actions": [{"type": "move", "x": 1, "y": 1}]}
    base = {"Cookie": cookie}
    origin = f"http://127.0.0.1:{server.port}"
    cases = [
        ({**base}, 403, "CSRF_REFUSED"),
        ({**base, "X-CSRF-Token": "0" * 64}, 403, "CSRF_REFUSED"),
        ({**base, "X-CSRF-Token": csrf, "Origin": "http://evil.example"}, 403, "ORIGIN_REFUSED"),
        ({**base, "X-CSRF-Token": csrf, "Origin": "null"}, 403, "ORIGIN_REFUSED"),
        ({**base, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"}, 403, "ORIGIN_REFUSED"),
        ({**base, "X-CSRF-Token": csrf, "Host": "evil.example:80", "Origin": origin}, 403, "HOST_REFUSED"),
    ]
    for headers, want_status, want_code in cases:
        status, _, body = server.request("POST", "/api/action", action, headers)
        assert (status, body["error"]["code"]) == (want_status, want_code), (headers, body)
    # Login from another origin is refused too.
    status, _, body = server.request("POST", "/api/login", {"secret": server.secret},
                                     {"Origin": "http://evil.example"})
    assert status == 403 and body["error"]["code"] == "ORIGIN_REFUSED"
    # DNS rebinding: a page under another name cannot even read.
    status, _, body = server.request("GET", "/api/machines", headers={**base, "Host": "evil.example"})
    assert status == 403 and body["error"]["code"] == "HOST_REFUSED"
    # With the token and our origin it runs.
    status, _, body = server.request("POST", "/api/action", action,
                                     {**base, "X-CSRF-Token": csrf, "Origin": origin})
    assert status == 200 and body["ok"], body


def test_geometry_and_bounds_are_checked(server):
    cookie, csrf = server.login()
    w = window_of(server, cookie)
    h = {"Cookie": cookie, "X-CSRF-Token": csrf}
    stale = dict(w["bounds"], x=w["bounds"]["x"] + 1)
    status, _, body = server.request("POST", "/api/action", {
        "window_id": w["window_id"], "geometry": stale, "actions": [{"type": "click", "x": 5, "y": 5}]}, h)
    assert status == 409 and body["error"]["code"] == "WINDOW_CHANGED", body
    status, _, body = server.request("POST", "/api/action", {
        "window_id": w["window_id"], "geometry": w["bounds"],
        "actions": [{"type": "click", "x": w["bounds"]["width"] + 5, "y": 5}]}, h)
    assert status == 422 and body["error"]["code"] == "OUT_OF_BOUNDS", body
    status, _, body = server.request("POST", "/api/action", {"window_id": w["window_id"]}, h)
    assert status == 400 and body["error"]["code"] == "INVALID_ARGUMENT", body
    status, _, body = server.request("POST", "/api/action", b"not json".decode(), h)
    assert status == 400


def test_frame_carries_geometry_and_skips_unchanged(server):
    cookie, _ = server.login()
    w = window_of(server, cookie)
    path = f"/api/frame?machine=local&window_id={w['window_id']}"
    status, headers, body = server.request("GET", path, headers={"Cookie": cookie})
    assert status == 200 and headers["Content-Type"] == "image/jpeg" and body[:2] == b"\xff\xd8"
    b = w["bounds"]
    assert headers["X-Lsm-Geometry"] == f"{b['x']},{b['y']},{b['width']},{b['height']}"
    # The window may still be animating (GTK hover transitions after earlier input): ask with the
    # last etag until the pixels hold still; an unchanged window must then give 204, no image.
    deadline = time.monotonic() + 10
    while True:
        etag = headers["X-Lsm-Etag"]
        status, headers, body = server.request("GET", f"{path}&etag={etag}", headers={"Cookie": cookie})
        if status != 200 or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert status == 204 and not body and headers["X-Lsm-Etag"] == etag
    assert headers["X-Lsm-Geometry"] == f"{b['x']},{b['y']},{b['width']},{b['height']}"
    status, _, body = server.request("GET", "/api/frame?window_id=0x7fffffff", headers={"Cookie": cookie})
    assert status == 404 and body["error"]["code"] == "WINDOW_NOT_FOUND"


def test_rate_limit_secret_file_and_reverse_proxy(lsm_bin, tmp_path):
    secret_file = tmp_path / "secret"
    secret_file.write_text("correct horse battery staple\n")
    s = WebServer(lsm_bin, "--web-secret-file", str(secret_file), "--web-origin", "https://desk.example.org")
    try:
        assert s.secret is None  # a configured secret is never printed
        proxy = {"Host": "desk.example.org", "Origin": "https://desk.example.org",
                 "X-Forwarded-Prefix": "/lsm", "X-Forwarded-Proto": "https"}
        status, headers, body = s.request("POST", "/api/login", {"secret": "correct horse battery staple"}, proxy)
        assert status == 200, body
        cookie = headers["Set-Cookie"]
        assert "Secure" in cookie and "Path=/lsm" in cookie and "HttpOnly" in cookie
        for _ in range(5):
            status, _, _ = s.request("POST", "/api/login", {"secret": "wrong guess"})
            assert status == 401
        status, _, body = s.request("POST", "/api/login", {"secret": "correct horse battery staple"})
        assert status == 429 and body["error"]["code"] == "RATE_LIMITED"
    finally:
        s.stop()


class PrefixProxy(http.server.ThreadingHTTPServer):
    """A minimal reverse proxy: http://127.0.0.1:PORT/lsm/... -> the web UI's /..., with
    X-Forwarded-Prefix (what nginx or Caddy would send)."""

    def __init__(self, prefix: str = "/lsm"):
        self.upstream: WebServer | None = None  # set once the server knows the proxy's origin
        self.prefix = prefix
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{self.prefix}/"


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def forward(self):
        srv: PrefixProxy = self.server  # type: ignore[assignment]
        if not self.path.startswith(srv.prefix + "/"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "content-length")}
        headers["X-Forwarded-Prefix"] = srv.prefix
        headers["X-Forwarded-Proto"] = "http"
        conn = http.client.HTTPConnection(srv.upstream.host, srv.upstream.port, timeout=30)
        conn.request(self.command, self.path[len(srv.prefix):], body=body or None, headers=headers)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("connection", "content-length", "transfer-encoding", "date", "server"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = forward


def test_behind_a_reverse_proxy_with_a_path_prefix(lsm_bin):
    """The page, its login, API calls and frames through a proxy that adds a path prefix."""
    proxy = PrefixProxy()
    srv = WebServer(lsm_bin, "--web-origin", f"http://127.0.0.1:{proxy.server_address[1]}")
    proxy.upstream = srv
    try:
        out = machine_info(srv, "local", expect="backend", timeout=5, url=proxy.url, window="lsm test app")
        assert "backend linux-x11" in out.get("info", ""), out
        assert out.get("geometry") and out["url"].startswith(proxy.url), out
    finally:
        proxy.shutdown()
        proxy.server_close()
        srv.stop()
