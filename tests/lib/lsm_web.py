"""`lsm serve` with its web UI on a free loopback port, for the web UI tests (X11 and Wayland)."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

from run_logs import log_path, record_secret, run_dir

URL_RE = re.compile(r"lsm: web UI (http://[^\s#]+)(?:#secret=(\S+))?")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebServer:
    """`lsm serve` (MCP on stdio, kept open) with its web UI on a free loopback port."""

    def __init__(self, lsm_bin: Path, *args: str, env: dict[str, str] | None = None, whole_env: bool = False,
                 wrapper: list[str] | None = None):
        self.log_path = log_path("lsm-web")
        self.log = open(self.log_path, "w+")  # the server's stderr
        self.proc = subprocess.Popen(
            [*(wrapper or []), str(lsm_bin), "serve", "--web", "127.0.0.1:0", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env=(env or {}) if whole_env else {**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + 20
        while True:
            self.log.seek(0)
            m = URL_RE.search(self.log.read())
            if m:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                raise RuntimeError(f"lsm serve did not print the web UI address:\n{self.log.read()}")
            time.sleep(0.05)
        self.url = m.group(1)
        self.secret = m.group(2)
        record_secret("web_secret", self.secret)
        hostport = self.url.split("//", 1)[1].rstrip("/")
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)

    def request(self, method: str, path: str, body=None, headers: dict[str, str] | None = None):
        """(status, headers, parsed JSON or raw bytes)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        data = None if body is None else json.dumps(body).encode()
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        raw = r.read()
        conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw
        self._record(path, body, r, parsed)
        return r.status, r.headers, parsed

    @staticmethod
    def _record(path: str, body, r, parsed) -> None:
        """The credentials this exchange used or got, for the run's final grep of the logs."""
        if r.status != 200:
            return
        if path.endswith("/api/login") and isinstance(body, dict) and isinstance(body.get("secret"), str):
            record_secret("web_secret", body["secret"])
        cookie = re.match(r"lsm_session=([^;]+)", r.headers.get("Set-Cookie") or "")
        if cookie:
            record_secret("session_cookie", cookie.group(1))
        if isinstance(parsed, dict) and isinstance(parsed.get("csrf_token"), str):
            record_secret("csrf_token", parsed["csrf_token"])

    def login(self, secret: str | None = None):
        status, headers, body = self.request("POST", "/api/login", {"secret": secret or self.secret})
        assert status == 200, body
        cookie = headers["Set-Cookie"].split(";")[0]
        return cookie, body["csrf_token"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        if run_dir() is None:  # no test run keeps it
            Path(self.log_path).unlink(missing_ok=True)
