"""The audit log (docs/security.md "Audit log"): every input lsm sends to the desktop is one JSON line in
the state directory's audit.jsonl (here a file of the test's own, LSM_AUDIT_LOG), with the time,
machine, window title and app, who asked (the MCP session or the web UI session, never their
credentials), the actions and the result. Text typed into a password field never reaches it,
nor does any text a person typed through the web UI. The file is read as a user would read it."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gui_flow import act, element, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_web import WebServer  # noqa: E402
from run_logs import record_secret  # noqa: E402

TITLE = "lsm test app"
SECRET = "hunter2-秘密"
PLAIN = "grace-αβ"


def entries(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_model_inputs_are_recorded_and_password_text_is_not(lsm_factory, tmp_path, probe):
    record_secret("password_text", SECRET)
    log = tmp_path / "audit.jsonl"
    s = lsm_factory("stdio", env={**os.environ, "LSM_AUDIT_LOG": str(log)})
    win = find_window(s, title=TITLE)
    st = observe(s, win)
    # Nothing is recorded for observing.
    assert entries(log) == []
    out = act(s, st, [{"type": "click", "element_id": element(st, "Name entry")["id"]},
                      {"type": "key", "keys": "ctrl+a"}, {"type": "type", "text": PLAIN}])
    st = observe(s, win)
    act(s, st, [{"type": "click", "element_id": element(st, "Password")["id"]},
                {"type": "key", "keys": "ctrl+a"}, {"type": "type", "text": SECRET}])
    # The secret did reach the application (so the log had it to leave out).
    wait_for(lambda: len((probe(find="Password") or {}).get("text") or "") == len(SECRET), what="password typed")
    raw = log.read_text(encoding="utf-8")
    assert "hunter2" not in raw and "秘密" not in raw, raw
    lines = entries(log)
    assert len(lines) == 2, lines
    first, second = lines
    for e in lines:
        assert e["machine"] == "local" and e["face"] == "mcp" and e["who"] == "mcp:stdio", e
        assert e["title"] == TITLE and e["window_id"] == win["window_id"] and e["app"], e
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e["time"]), e
        assert e["ok"] is True and [r["index"] for r in e["results"]] == [0, 1, 2], e
    assert first["actions"][2] == {"type": "type", "text": PLAIN}, first
    assert first["results"] == [{"index": r["index"], "ok": r["ok"], "method": r["method"]}
                                for r in out["results"]], (first, out)
    assert second["actions"][2]["text"] == "[not recorded: password field]", second
    assert second["actions"][1] == {"type": "key", "keys": "ctrl+a"}, second


def test_a_refused_action_is_recorded_with_its_code(lsm_factory, tmp_path):
    log = tmp_path / "audit.jsonl"
    s = lsm_factory("http", env={**os.environ, "LSM_AUDIT_LOG": str(log)})
    win = find_window(s, title=TITLE)
    st = observe(s, win)
    space = st["coordinate_space"]
    r = s.call("gui_action", {"window_id": win["window_id"], "state_id": st["state_id"],
                              "actions": [{"type": "click", "x": space["width"] + 50, "y": 5}]})
    assert err_code(r) == "OUT_OF_BOUNDS"  # noqa: F405
    # Refused before anything was sent: checked, then recorded with its code.
    (e,) = entries(log)
    assert e["ok"] is False and e["error"]["code"] == "OUT_OF_BOUNDS" and e["results"] == [], e
    # An HTTP session is named by a hash of its id, never the id itself.
    assert re.fullmatch(r"mcp-http:[0-9a-f]{8}", e["who"]), e


def test_web_ui_input_is_recorded_without_its_text_or_cookie(bed_env, lsm_bin, tmp_path, restart_app):
    log = tmp_path / "audit.jsonl"
    server = WebServer(lsm_bin, env={**bed_env, "LSM_AUDIT_LOG": str(log)})
    try:
        cookie, csrf = server.login()
        headers = {"Cookie": cookie, "X-CSRF-Token": csrf}
        deadline = time.monotonic() + 10
        while True:
            status, _, body = server.request("GET", "/api/windows", headers=headers)
            found = [w for w in (body or {}).get("windows", []) if w["title"] == TITLE] if status == 200 else []
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert found, body
        win = found[0]
        status, _, body = server.request("POST", "/api/action", {
            "window_id": win["window_id"], "geometry": win["bounds"],
            "actions": [{"type": "key", "keys": "Escape"}, {"type": "type", "text": "typed-by-a-person"}]},
            headers)
        assert status == 200, body
        raw = log.read_text(encoding="utf-8")
        assert "typed-by-a-person" not in raw and cookie.split("=", 1)[1] not in raw and csrf not in raw, raw
        (e,) = entries(log)
        assert e["face"] == "web" and re.fullmatch(r"web:[0-9a-f]{8}", e["who"]), e
        assert e["title"] == TITLE and e["ok"] is True, e
        assert e["actions"] == [{"type": "key", "keys": "Escape"},
                                {"type": "type", "text": "[not recorded: typed on the web UI]"}], e
    finally:
        server.stop()
        # The typed text went wherever the app had its focus: start it afresh for later tests.
        restart_app()
