"""First contact (issue 24): what a new user meets when something is not set up yet, checked
from outside with the real binary, a real MCP client, real Chromium and the test desktop. Each
mistake gets an answer that says what is wrong and what to change:

- HTTP without or with a wrong access token: 401 with `WWW-Authenticate: Bearer ...,
  error_description=...` and a JSON-RPC error body naming where the token comes from;
- `--http` on a taken port: the address and the flag to change;
- the web UI: the login page shows no machine/window pickers, a wrong secret says where the
  secret is (the printed address, the secret file, the variable), a login URL pasted into the
  same tab logs in there (Chromium, tests/webui/first-contact.mjs);
- `lsm setup gnome` outside a GNOME Wayland session says so and installs nothing;
- a click on a disabled control: ELEMENT_DISABLED, nothing done;
- a malformed `window_id`: INVALID_ARGUMENT (a well-formed unknown one stays WINDOW_NOT_FOUND);
- a short or garbled token file is named; a display that cannot be opened says what to check;
- `--help` describes `revoke` and `LSM_LOG`; `serve` and `worker` share `--state-dir`.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from conftest import REPO  # noqa: E402
from gui_flow import find_window, observe  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import LsmSession, free_port, headless_env, mcp_stdio  # noqa: E402
from lsm_web import WebServer  # noqa: E402
from run_logs import record_secret  # noqa: E402

NODE = REPO / "tests" / "conformance" / "node_modules" / ".bin" / "node"
WEBUI = REPO / "tests" / "webui"


def lsm(lsm_bin: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30,
        ) -> subprocess.CompletedProcess:
    return subprocess.run([str(lsm_bin), *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, env=headless_env() if env is None else env)


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "lsm serve exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def post(port: int, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "first-contact", "version": "0"}}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("POST", "/mcp", body, {"Content-Type": "application/json",
                                            "Accept": "application/json, text/event-stream", **headers})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


# ------------------------------------------------------------------ HTTP access token
def test_a_missing_or_wrong_token_is_explained(lsm_bin, tmp_path):
    token = os.urandom(16).hex()
    record_secret("bearer", token)
    token_file = tmp_path / "http-token"
    token_file.write_text(token + "\n")
    port = free_port()
    proc = subprocess.Popen([str(lsm_bin), "serve", "--http", f"127.0.0.1:{port}", "--http-token-file",
                             str(token_file), "--web", "off"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=headless_env())
    try:
        wait_listening(port, proc)
        seen = {}
        for case, headers in [("missing", {}), ("wrong", {"Authorization": "Bearer " + "0" * 32}),
                              ("not bearer", {"Authorization": f"Basic {token}"})]:
            status, h, body = post(port, headers)
            assert status == 401, (case, status, body[:300])
            challenge = h.get("www-authenticate", "")
            assert challenge.startswith('Bearer realm="lsm"') and 'error_description="' in challenge, challenge
            assert h.get("content-type", "").startswith("application/json"), h
            rpc = json.loads(body)
            assert rpc["jsonrpc"] == "2.0" and rpc["id"] is None, rpc
            message = rpc["error"]["message"]
            assert "--http-token-file" in message and "Authorization: Bearer" in message, message
            assert token not in body.decode() and token not in challenge
            seen[case] = (challenge, message)
        assert 'error="invalid_token"' in seen["wrong"][0] and "wrong" in seen["wrong"][1], seen
        assert "error=" not in seen["missing"][0] and "carried none" in seen["missing"][1], seen
        assert 'error="invalid_request"' in seen["not bearer"][0], seen
        status, _, _ = post(port, {"Authorization": f"Bearer {token}"})
        assert status == 200
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_official_client_shows_why_it_was_refused(lsm_bin, tmp_path):
    token = os.urandom(16).hex()
    record_secret("bearer", token)
    token_file = tmp_path / "http-token"
    token_file.write_text(token)
    with pytest.raises(Exception) as refused:
        LsmSession("http", headless_env(), args=["--http-token-file", str(token_file)]).open()
    # The SDK reads the JSON-RPC error of the 401 and raises it: the user sees what to do.
    said = repr(refused.value)
    assert "Unauthorized" in said and "--http-token-file" in said and "Authorization: Bearer" in said, said
    assert token not in said


def test_a_taken_port_names_the_address_and_the_flag(lsm_bin):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = lsm(lsm_bin, "serve", "--http", f"127.0.0.1:{port}", "--web", "off")
    assert r.returncode != 0
    assert f"127.0.0.1:{port}" in r.stderr and "--http" in r.stderr and "already in use" in r.stderr, r.stderr
    assert "port 0" in r.stderr, r.stderr


# ------------------------------------------------------------------ web UI login
def test_login_page_wrong_secret_and_pasted_url_in_chromium(lsm_bin, bed_env):
    if not NODE.exists() or not (WEBUI / "node_modules" / "playwright-core").exists():
        pytest.fail("tests/webui/node_modules or Node 22 is missing: run tests/setup.sh")
    srv = WebServer(lsm_bin)
    try:
        r = subprocess.run([str(NODE), str(WEBUI / "first-contact.mjs")], capture_output=True, text=True,
                           timeout=180, cwd=WEBUI,
                           env={**os.environ, "LSM_WEB_URL": srv.url, "LSM_WEB_SECRET": srv.secret})
    finally:
        srv.stop()
    checks = {}
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        checks[rec["check"]] = rec
    assert "setup" not in checks and checks, f"first-contact.mjs failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr[-3000:]}"
    for name in ("login page hides the pickers", "a wrong secret says where the secret is",
                 "a pasted login URL logs in in the same tab"):
        assert name in checks, (name, checks)
        assert checks[name]["ok"], (name, checks[name]["detail"])


def test_a_wrong_secret_names_the_secret_file_or_variable(lsm_bin, tmp_path):
    secret = os.urandom(12).hex()
    record_secret("web_secret", secret)
    path = tmp_path / "web-secret"
    path.write_text(secret)
    for args, env, where in [(["--web-secret-file", str(path)], {}, str(path)),
                             ([], {"LSM_WEB_SECRET": secret}, "$LSM_WEB_SECRET")]:
        srv = WebServer(lsm_bin, *args, env={**headless_env(), **env}, whole_env=True)
        try:
            status, _, body = srv.request("POST", "/api/login", {"secret": "wrong guess"})
        finally:
            srv.stop()
        assert status == 401 and body["error"]["code"] == "LOGIN_REFUSED", body
        assert where in body["error"]["message"] and secret not in json.dumps(body), body


def test_a_short_web_secret_names_its_file(lsm_bin, tmp_path):
    path = tmp_path / "web-secret"
    path.write_text("short\n")
    r = lsm(lsm_bin, "serve", "--web", "127.0.0.1:0", "--web-secret-file", str(path))
    assert r.returncode != 0 and str(path) in r.stderr and "at least 12" in r.stderr, r.stderr


# ------------------------------------------------------------------ lsm setup gnome
@pytest.mark.parametrize("desktop,session,says", [
    ("XFCE", "x11", "not GNOME"),
    ("KDE", "wayland", "KWin"),
    ("GNOME", "x11", "runs on X11"),
    (None, "tty", "XDG_CURRENT_DESKTOP is not set"),
])
def test_setup_gnome_outside_gnome_wayland_installs_nothing(lsm_bin, tmp_path, desktop, session, says):
    env = {**headless_env(), "XDG_SESSION_TYPE": session, "GSETTINGS_BACKEND": "memory"}
    if desktop:
        env["XDG_CURRENT_DESKTOP"] = desktop
    r = lsm(lsm_bin, "setup", "gnome", "--extensions-dir", str(tmp_path), env=env)
    assert r.returncode != 0 and says in r.stderr and "nothing was installed" in r.stderr, r.stderr
    assert "--force" in r.stderr, r.stderr
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())


def test_setup_gnome_force_installs_anyway(lsm_bin, tmp_path):
    if not shutil.which("gsettings"):
        pytest.skip("gsettings is not installed here")
    env = {**headless_env(), "XDG_CURRENT_DESKTOP": "XFCE", "XDG_SESSION_TYPE": "x11",
           "GSETTINGS_BACKEND": "memory"}
    r = lsm(lsm_bin, "setup", "gnome", "--force", "--shell-version", "45", "--extensions-dir", str(tmp_path),
            env=env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "lsm-windows@lsm" / "metadata.json").exists()


# ------------------------------------------------------------------ tool errors on the desktop
@pytest.fixture
def factory(bed_env, ensure_app):
    ensure_app("gtk4-widget-factory")
    with mcp_stdio(bed_env) as s:
        yield s, find_window(s, title="GTK Widget Factory", timeout=30)


def test_a_click_on_a_disabled_control_says_it_is_disabled(factory):
    s, win = factory
    st = observe(s, win)
    disabled = [e for e in st["elements"] if "disabled" in e.get("states", []) and e.get("bounds")
                and e["role"] in ("check_box", "push_button", "toggle_button", "radio_button")]
    assert disabled, "the widget factory shows no disabled control"
    target = next((e for e in disabled if e["role"] == "check_box"), disabled[0])
    r = s.call("gui_action", {"window_id": win["window_id"], "state_id": st["state_id"],
                              "actions": [{"type": "click", "element_id": target["id"]}]})
    assert r.is_error, r.structured_content
    err = r.structured_content["error"]
    assert err["code"] == "ELEMENT_DISABLED", err
    assert "disabled" in err["message"] and target["id"] in err["message"], err
    assert err.get("details", {}).get("element_id") == target["id"], err
    # Nothing was done: the control is as it was.
    again = {e["id"]: e for e in observe(s, win)["elements"]}
    assert again[target["id"]].get("states") == target.get("states"), (again[target["id"]], target)


def test_a_malformed_window_id_is_an_invalid_argument(factory):
    s, _ = factory
    for wid in ("not-a-window", "0xZZ", "12345"):
        r = s.call("gui_state", {"window_id": wid, "screenshot": False})
        err = r.structured_content["error"]
        assert err["code"] == "INVALID_ARGUMENT", (wid, err)
        assert repr(wid).replace("'", '"') in err["message"] and "gui_list" in err["message"], err
    r = s.call("gui_state", {"window_id": "0x7ffffff0", "screenshot": False})
    assert r.structured_content["error"]["code"] == "WINDOW_NOT_FOUND", r.structured_content


def test_a_display_that_cannot_be_opened_says_what_to_check():
    number = next(n for n in range(150, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    env = {**headless_env(), "DISPLAY": f":{number}"}
    with mcp_stdio(env) as s:
        r = s.call("gui_state", {"window_id": "0x1", "screenshot": False})
    err = r.structured_content["error"]
    assert err["code"] == "GUI_UNAVAILABLE", err
    message = err["message"]
    assert f":{number}" in message and f"/tmp/.X11-unix/X{number}" in message, message
    assert "echo $DISPLAY" in message, message


# ------------------------------------------------------------------ token files, --help, --state-dir
def test_a_short_worker_token_file_is_named(lsm_bin, tmp_path):
    for content, says in [("lsmw_0123\n", "holds 9 characters"), ("", "is empty"),
                          ("lsmw_" + "g" * 64, "holds 69 characters")]:
        path = tmp_path / "worker-token"
        path.write_text(content)
        r = lsm(lsm_bin, "worker", "--controller", "ws://127.0.0.1:9", "--name", "w1", "--token-file", str(path),
                "--audit-log", "off")
        assert r.returncode != 0, r.stderr
        assert str(path) in r.stderr and says in r.stderr and "64 hex digits" in r.stderr, r.stderr


def test_a_short_http_token_file_is_named(lsm_bin, tmp_path):
    path = tmp_path / "http-token"
    path.write_text("cut-off\n")
    r = lsm(lsm_bin, "serve", "--http", "127.0.0.1:0", "--http-token-file", str(path), "--web", "off")
    assert r.returncode != 0 and str(path) in r.stderr and "7 characters" in r.stderr, r.stderr


def test_help_describes_revoke_and_lsm_log(lsm_bin):
    top = lsm(lsm_bin, "--help").stdout
    assert "LSM_LOG" in top and "lsm=info,warn" in top, top
    assert "revoke" in top and "Revoke a remote machine's token" in top, top
    revoke = lsm(lsm_bin, "revoke", "--help").stdout
    assert "as given to `lsm enrol`" in revoke and "--state-dir" in revoke, revoke


def test_serve_and_worker_share_the_state_dir(lsm_bin, tmp_path):
    def state_dir_help(command: str) -> str:
        lines = lsm(lsm_bin, command, "--help").stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().startswith("--state-dir"))
        end = next(i for i in range(start + 1, len(lines)) if lines[i].strip().startswith("-"))
        return " ".join(" ".join(lines[start:end]).split())

    assert state_dir_help("serve") == state_dir_help("worker"), (state_dir_help("serve"), state_dir_help("worker"))
    # The worker keeps its audit log there, as serve does.
    for command, extra in [("worker", ["--controller", "ws://127.0.0.1:9", "--name", "w1",
                                       "--token-file", str(tmp_path / "token")]),
                           ("serve", ["--web", "off"])]:
        (tmp_path / "token").write_text("lsmw_" + "0" * 64)
        state = tmp_path / f"state-{command}"
        proc = subprocess.Popen([str(lsm_bin), command, "--state-dir", str(state), *extra],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={k: v for k, v in headless_env().items() if k != "LSM_STATE_DIR"})
        try:
            deadline = time.monotonic() + 20
            while not (state / "audit.jsonl").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert (state / "audit.jsonl").exists(), (command, list(tmp_path.iterdir()))
        finally:
            proc.terminate()
            proc.wait(10)
