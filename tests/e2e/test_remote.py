"""Remote desktops (SPEC §6, issue 4): one controller, two workers, each worker with its own test
desktop (display :71/:72, own D-Bus and AT-SPI buses, own test app) and, where the machine allows,
its own network namespace linked to the controller's by a veth pair. Driven through the official
Python MCP client on the controller with `machine`; ground truth from each bed's AT-SPI."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from gui_flow import element, wait_for  # noqa: E402
from lsm_mcp import HIDE_X11, can_hide_x11, err_code, headless_env, image_bytes  # noqa: E402
from lsm_remote import RemoteRig, call_many, probe_label  # noqa: E402
from png_rgba import decode  # noqa: E402

TITLE = "lsm test app"


@pytest.fixture(scope="module")
def rig():
    r = RemoteRig(("w1", "w2")).start()
    print(f"\nremote rig: workers in network namespaces over veth: {r.netns}"
          + ("" if r.netns else " (not possible here: loopback instead)"))
    yield r
    r.stop()


def window_of(s, machine: str) -> dict:
    out = s.call_ok("gui_list", {"machine": machine})
    assert out["machine"] == machine
    found = [w for w in out["windows"] if w["title"] == TITLE]
    assert found, f"no test app window on {machine}: {out['windows']}"
    return found[0]


def pressed(env) -> int:
    name = probe_label(env, "Pressed:")
    assert name, "the test app's 'Pressed:' label is not visible through AT-SPI"
    return int(name.split(":")[1])


def test_controller_lists_machines(rig):
    ms = rig.machines()
    assert ms["local"]["connected"]
    for n in ("w1", "w2"):
        assert ms[n]["connected"] and ms[n]["platform"] == "linux", ms[n]
        assert re.search(r"session x11 :7\d", ms[n]["detail"]), ms[n]
    text = rig.session.call("gui_list", {}).content[0].text
    assert "w1: connected" in text and "w2: connected" in text, text


@pytest.mark.parametrize("machine", ["w1", "w2"])
def test_observe_act_loop_on_each_machine(rig, machine):
    s = rig.session
    other = "w2" if machine == "w1" else "w1"
    win = window_of(s, machine)
    r = s.call("gui_state", {"machine": machine, "window_id": win["window_id"]})
    st = s.ok(r)
    assert st["machine"] == machine and st["window"]["window_id"] == win["window_id"]
    png = image_bytes(r)
    assert png and png.startswith(b"\x89PNG"), "no PNG image content"
    w, h, rows = decode(png)
    assert (w, h) == (win["bounds"]["width"], win["bounds"]["height"]) == (
        st["coordinate_space"]["width"], st["coordinate_space"]["height"])
    assert st["screenshot"]["bytes"] == len(png) and len(rows) == h
    before, before_other = pressed(rig.beds[machine]), pressed(rig.beds[other])
    res = s.call_ok("gui_action", {"machine": machine, "window_id": win["window_id"], "state_id": st["state_id"],
                                   "actions": [{"type": "click",
                                                "element_id": element(st, "Press me", "push_button")["id"]}]})
    assert res["ok"] and res["machine"] == machine
    wait_for(lambda: pressed(rig.beds[machine]) == before + 1, timeout=5, what=f"Pressed +1 on {machine}")
    assert pressed(rig.beds[other]) == before_other, "the click reached the other machine"
    # The worker settled, compared and issued the next state: the label's change is in the result,
    # and its state_id acts on that machine without a gui_state in between.
    assert res["results"][0]["effect"] == "confirmed", res["results"]
    assert any(c["name"] == f"Pressed: {before + 1}" for c in res["changes"]["changed"]), res["changes"]
    raw = s.call("gui_action", {"machine": machine, "window_id": win["window_id"], "state_id": res["state_id"],
                                "screenshot": True,
                                "actions": [{"type": "click",
                                             "element_id": element(st, "Press me", "push_button")["id"]}]})
    again = s.ok(raw)
    # The settled image crosses the link beside the reply, like gui_state's.
    shot = image_bytes(raw)
    assert shot and decode(shot)[:2] == (w, h) and again["screenshot"]["bytes"] == len(shot)
    assert any(c["name"] == f"Pressed: {before + 2}" for c in again["changes"]["changed"]), again["changes"]
    before += 1
    # The loop goes on: observe again, the label shows the new count.
    st2 = s.call_ok("gui_state", {"machine": machine, "window_id": win["window_id"], "screenshot": False,
                                  "query": "Pressed"})
    assert any(e.get("name", "") == f"Pressed: {before + 1}" for e in st2["elements"]), st2["elements"]


def test_state_id_of_one_machine_is_refused_on_another(rig):
    s = rig.session
    w1, w2 = window_of(s, "w1"), window_of(s, "w2")
    st = s.call_ok("gui_state", {"machine": "w1", "window_id": w1["window_id"], "screenshot": False})
    r = s.call("gui_action", {"machine": "w2", "window_id": w2["window_id"], "state_id": st["state_id"],
                              "actions": [{"type": "wait", "seconds": 0}]})
    assert err_code(r) == "STATE_NOT_FOUND", r


def test_unknown_machine(rig):
    r = rig.session.call("gui_list", {"machine": "nosuch"})
    assert err_code(r) == "MACHINE_UNKNOWN"


@pytest.mark.skipif(not can_hide_x11(), reason="cannot hide /tmp/.X11-unix (unshare --mount)")
def test_worker_without_session_answers_gui_unavailable(rig):
    rig.enrol("w3")
    w = rig.add_worker("w3", headless_env(), url=f"wss://127.0.0.1:{rig.port}", prefix=HIDE_X11).start()
    try:
        rig.wait_connected("w3")
        assert rig.machines()["w3"]["detail"].startswith("session none")
        r = rig.session.call("gui_list", {"machine": "w3"})
        assert err_code(r) == "GUI_UNAVAILABLE", r
    finally:
        w.kill(signal.SIGTERM)
        rig.lsm("revoke", "w3")


def test_worker_killed_mid_call_then_restarted(rig):
    s = rig.session
    win = window_of(s, "w1")
    st = s.call_ok("gui_state", {"machine": "w1", "window_id": win["window_id"], "screenshot": False})
    out: dict = {}

    def slow_call():
        out["r"] = s.call("gui_action", {"machine": "w1", "window_id": win["window_id"], "state_id": st["state_id"],
                                         "actions": [{"type": "wait", "seconds": 10}]}, timeout=20)
        out["t"] = time.monotonic()

    t = threading.Thread(target=slow_call)
    t.start()
    time.sleep(1.0)
    killed = time.monotonic()
    rig.workers["w1"].kill(signal.SIGKILL)
    t.join(15)
    assert "r" in out, "the call in flight did not return"
    assert err_code(out["r"]) == "MACHINE_OFFLINE", out["r"]
    assert 0 <= out["t"] - killed < 2.0, f"MACHINE_OFFLINE after {out['t'] - killed:.2f}s"
    print(f"\nworker killed mid-call: MACHINE_OFFLINE after {out['t'] - killed:.3f}s")
    # Offline: every call fails fast, the machine is listed as not connected.
    t0 = time.monotonic()
    r = s.call("gui_state", {"machine": "w1", "window_id": win["window_id"]})
    assert err_code(r) == "MACHINE_OFFLINE" and time.monotonic() - t0 < 1.0
    assert not rig.machines()["w1"]["connected"]
    # The restarted worker is usable again; the controller was not restarted.
    rig.workers["w1"].start()
    rig.wait_connected("w1")
    assert window_of(s, "w1")["window_id"] == win["window_id"]
    assert rig.session.alive()


def refused_worker(rig, name: str, **kw):
    """Starts a worker that should be refused; returns it (running, retrying) for log checks."""
    return rig.add_worker(name, headless_env(), url=f"wss://127.0.0.1:{rig.port}", **kw).start()


def wait_log(fn, pattern: str, what: str, timeout: float = 10) -> None:
    wait_for(lambda: re.search(pattern, fn()), timeout=timeout, interval=0.1, what=what)


def test_wrong_credential_is_refused_and_logged(rig):
    rig.enrol("w4")
    bad = os.path.join(rig.dir, "w4.bad")
    Path(bad).write_text("lsmw_" + "0" * 64)
    w = refused_worker(rig, "w4", token_file=bad)
    try:
        wait_log(rig.controller_log, r'worker refused: wrong token \(name "w4"\)', "controller log of the refusal")
        wait_log(w.log, r"refused this worker", "worker log of the refusal")
        assert not rig.machines()["w4"]["connected"]
    finally:
        w.kill()
        rig.lsm("revoke", "w4")


def test_revoked_credential_is_dropped_and_refused(rig):
    rig.enrol("w5")
    w = refused_worker(rig, "w5")
    try:
        rig.wait_connected("w5")
        r = rig.lsm("revoke", "w5")
        assert r.returncode == 0, r.stderr
        t0 = time.monotonic()
        wait_log(rig.controller_log, r"worker dropped: its credential was revoked.*w5|w5.*credential was revoked",
                 "controller log of the drop")
        assert time.monotonic() - t0 < 5
        r = rig.session.call("gui_list", {"machine": "w5"})
        assert err_code(r) == "MACHINE_UNKNOWN", r  # revoked: no longer a known machine
        # Its reconnection attempts are refused and logged.
        wait_log(rig.controller_log, r'worker refused: no credential for this name.*\(name "w5"\)',
                 "controller log of the refused reconnection", timeout=15)
    finally:
        w.kill()


def test_mismatched_pin_is_refused_and_logged(rig):
    rig.enrol("w6")
    w = refused_worker(rig, "w6", pin="ab" * 32)
    try:
        wait_log(w.log, r"does not match the pin", "worker log of the pin mismatch")
        wait_log(rig.controller_log, r"worker refused: TLS handshake failed", "controller log of the TLS refusal")
        assert not rig.machines()["w6"]["connected"]
    finally:
        w.kill()
        rig.lsm("revoke", "w6")


def test_plain_ws_refused_to_a_remote_address(rig, lsm_bin):
    r = subprocess.run([str(lsm_bin), "worker", "--controller", "ws://192.0.2.1:7443", "--name", "x"],
                       env=dict(headless_env(), LSM_WORKER_TOKEN="t"), capture_output=True, text=True, timeout=20)
    assert r.returncode != 0 and "only to a loopback controller" in r.stderr


def test_plain_ws_only_from_loopback(rig):
    rig.enrol("w7")
    w = rig.add_worker("w7", headless_env(), url=f"ws://127.0.0.1:{rig.port}", pin=None).start()
    try:
        rig.wait_connected("w7")  # plain ws:// over loopback is accepted
    finally:
        w.kill()
        rig.lsm("revoke", "w7")
    if not rig.netns:
        pytest.skip("no network namespace: cannot connect from a non-loopback address")
    ns = rig.namespaces["w1"]
    code = ("import socket; s = socket.create_connection((%r, %d), 5); "
            "s.sendall(b'GET /worker HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'); s.settimeout(5); "
            "print(repr(s.recv(100)))") % (ns.host_ip, rig.port)
    r = subprocess.run([*ns.prefix(), sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    # Closed without an answer (a reset, as the request was left unread).
    assert r.stdout.strip() == "b''" or "ConnectionResetError" in r.stderr, (r.stdout, r.stderr)
    wait_log(rig.controller_log, rf"peer={re.escape(ns.ns_ip)}:\d+.*plain ws:// is accepted from loopback only|"
             rf"plain ws:// is accepted from loopback only.*{re.escape(ns.ns_ip)}", "controller log of the refusal")


def test_no_websocket_without_credentials(rig):
    """Name and token are checked on the upgrade request itself: without them the answer is a
    plain 401 and no WebSocket, so an unauthenticated peer can send no message at all."""
    import socket

    upgrade = ("GET /worker HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
    for extra in ("", "x-lsm-worker: w1\r\nAuthorization: Bearer lsmw_0000\r\n"):
        with socket.create_connection(("127.0.0.1", rig.port), 5) as c:
            c.settimeout(5)
            c.sendall((upgrade + extra + "\r\n").encode())
            answer = c.recv(200).decode(errors="replace")
        assert answer.startswith("HTTP/1.1 401"), answer
        assert "101" not in answer.split("\r\n")[0], answer
    wait_log(rig.controller_log, r'worker refused: wrong token \(name "w1"\)', "controller log of the refusal")


def test_token_never_on_the_command_line(lsm_bin):
    r = subprocess.run([str(lsm_bin), "worker", "--controller", "wss://127.0.0.1:1", "--name", "x", "--token", "t"],
                       env=headless_env(), capture_output=True, text=True, timeout=20)
    assert r.returncode != 0 and "--token" in r.stderr


def test_load_200_states_over_both_workers(rig):
    s = rig.session
    wins = {m: window_of(s, m) for m in ("w1", "w2")}
    calls = [("gui_state", {"machine": m, "window_id": wins[m]["window_id"], "screenshot": True})
             for i in range(200) for m in [("w1", "w2")[i % 2]]]
    results = call_many(s, calls, in_flight=20)
    bad = []
    for (_, args), (r, _secs) in zip(calls, results):
        if isinstance(r, Exception) or r.is_error:
            bad.append((args["machine"], repr(r)[:300]))
            continue
        st = r.structured_content
        png = image_bytes(r)
        if st["machine"] != args["machine"] or st["window"]["window_id"] != args["window_id"] or not png \
                or len(png) != st["screenshot"]["bytes"]:
            bad.append((args["machine"], "wrong answer"))
    assert not bad, f"{len(bad)} of 200 calls failed: {bad[:5]}"
    secs = sorted(x for _, x in results)
    print(f"\n200 remote gui_state (20 in flight): median {secs[100] * 1000:.1f} ms, max {secs[-1] * 1000:.1f} ms")


def test_workers_reconnect_to_a_restarted_controller(rig):
    rig.restart_controller()
    t0 = time.monotonic()
    rig.wait_connected("w1", "w2", timeout=20)
    print(f"\nworkers reconnected {time.monotonic() - t0:.2f}s after the controller restarted")
    assert window_of(rig.session, "w2")["title"] == TITLE
    assert re.search(r"reconnecting in", rig.workers["w1"].log())
