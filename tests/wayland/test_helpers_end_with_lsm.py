"""The frame helpers (one gst-launch-1.0 per captured window) end with the lsm process that
started them, however it ends: a helper whose stream is gone would otherwise wait forever."""

import json
import os
import signal
import time
from pathlib import Path

from conftest import TESTAPP_NAME, ensure_app, lsm_env
from lsm_mcp import RawStdio


def helpers_of(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and cmd.endswith(b"gst-launch-1.0"):
            out.append(int(d.name))
    return out


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended (no init reaps it in a container)


def call(raw: RawStdio, req_id: int, name: str, args: dict) -> dict:
    raw.send(json.dumps({"jsonrpc": "2.0", "id": req_id, "method": "tools/call",
                         "params": {"name": name, "arguments": args}}))
    return raw.wait_id(req_id)


def test_helpers_end_when_lsm_is_killed():
    ensure_app("testapp", TESTAPP_NAME)
    raw = RawStdio(env=lsm_env())
    try:
        msg = call(raw, 101, "gui_list", {})
        wins = msg["result"]["structuredContent"]["windows"]
        win = next(w for w in wins if w["title"] == "lsm test app")
        msg = call(raw, 102, "gui_state", {"window_id": win["window_id"], "screenshot": True})
        assert any(c.get("type") == "image" for c in msg["result"]["content"]), msg
        helpers = helpers_of(raw.proc.pid)
        assert helpers, "a screenshot started a frame helper"
    finally:
        os.kill(raw.proc.pid, signal.SIGKILL)
        raw.proc.wait(10)
    deadline = time.monotonic() + 5
    while any(running(p) for p in helpers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(running(p) for p in helpers), helpers
