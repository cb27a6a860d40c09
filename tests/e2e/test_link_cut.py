"""A worker's network cut (issue 13): the traffic of the worker's network namespace is dropped,
nothing is closed and no process is touched (a pulled cable, a dead router). The controller must
notice within 3 s, answer `MACHINE_OFFLINE` (fast, with the reason) while the cut lasts, end the
call in flight at the cut with that code instead of letting it hang, and have the worker back
within a few seconds of the cut's end, with neither the controller nor the worker restarted.

The cut: a `blackhole` root qdisc (iproute2's `tc`, in the kernel without modules) on both ends
of the worker's veth pair: every packet either side sends is dropped and reported as sent, so
neither TCP stack sees an error, exactly like loss on the path. Where that qdisc is missing, the
worker's end of the veth is set down instead (its kernel then refuses new connections at once,
which only makes reconnecting easier; said in the output). Driven through the official Python
MCP client on the controller; the worker's desktop is its own bed (display :79)."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from lsm_mcp import err_code, err_message  # noqa: E402
from lsm_remote import Netns, RemoteRig, netns_possible  # noqa: E402

TITLE = "lsm test app"
NAME = "wcut"
# Bed :79 and namespace lsmr-w9 (10.77.9.0/24): apart from test_remote.py (:71/:72, namespaces 1
# and 2) and test_gui_list_controller.py (:78), so these modules never share a desktop.
FIRST = 9
CUT_SECONDS = 10.0

# The bound for noticing the cut. lsm's rule (crates/lsm-remote/src/liveness.rs): a ping
# every 0.5 s each way, a link silent for 2.5 s is dropped, so the controller notices 2.0-2.5 s
# after the cut. The clock starts *before* the `tc` commands run (the cut takes effect some
# 10-50 ms later, so the figure is on the high side), and the poll that sees the machine offline
# adds its own time: a gui_list round trip over HTTP (a few ms, up to ~0.1 s on a loaded 2-core
# machine) plus the 20 ms between polls. ALLOWANCE covers that measuring, not lsm.
DETECT_BOUND = 3.0
ALLOWANCE = 0.25
# A call to a machine known to be offline is answered from the controller's memory: no network,
# no worker. 0.5 s is an MCP round trip on a loaded machine with a wide margin.
OFFLINE_ANSWER_BOUND = 0.5
# After the cut ends: the worker noticed the silence too and is between connection attempts. An
# attempt's SYN is retried by the kernel 1 s in, the attempt gives up at 3 s (so up to 2 s with
# no SYN on the wire), then the backoff waits at most 3 s +25 % jitter (worker.rs BACKOFF_MAX);
# the TLS and WebSocket handshakes and our 0.1 s poll add well under a second. 2 + 3.75 + 1.25.
RECONNECT_BOUND = 7.0


class Cut:
    """Drops all traffic between the controller and the worker's namespace, then restores it."""

    def __init__(self, ns: Netns):
        self.ns = ns
        self.how = ""

    @staticmethod
    def _run(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20)

    def start(self) -> None:
        inside = self._run("ip", "netns", "exec", self.ns.name, "tc", "qdisc", "add", "dev", "eth0", "root",
                           "blackhole")
        if inside.returncode == 0:
            r = self._run("tc", "qdisc", "add", "dev", self.ns.host_if, "root", "blackhole")
            assert r.returncode == 0, f"blackhole qdisc on {self.ns.host_if}: {r.stderr}"
            self.how = "tc qdisc blackhole on both ends of the veth (packets dropped silently)"
            return
        r = self._run("ip", "-n", self.ns.name, "link", "set", "eth0", "down")
        assert r.returncode == 0, f"neither tc blackhole ({inside.stderr.strip()}) nor ip link down: {r.stderr}"
        self.how = f"ip link set eth0 down in the namespace (tc blackhole unavailable: {inside.stderr.strip()})"

    def end(self) -> None:
        if self.how.startswith("tc"):
            self._run("ip", "netns", "exec", self.ns.name, "tc", "qdisc", "del", "dev", "eth0", "root")
            self._run("tc", "qdisc", "del", "dev", self.ns.host_if, "root")
        elif self.how:
            self._run("ip", "-n", self.ns.name, "link", "set", "eth0", "up")
        self.how = ""


@pytest.fixture(scope="module")
def rig():
    if not netns_possible():
        why = "not root" if os.geteuid() != 0 else "`ip netns add` fails here (no iproute2 or no namespaces)"
        pytest.skip(f"a network cut needs the worker in a network namespace of its own: {why}")
    r = RemoteRig((NAME,), first=FIRST).start()
    if not r.netns:
        r.stop()
        pytest.skip("the worker could not be put in a network namespace (see the rig's output): "
                    "over loopback there is no link of its own to cut")
    yield r
    r.stop()


def test_a_cut_is_noticed_within_3_s_offline_meanwhile_and_the_worker_comes_back(rig):
    s = rig.session
    controller_pid = s.proc.pid
    worker = rig.workers[NAME]
    worker_pid = worker.proc.pid

    # Before: a call through `machine` works.
    wins = [w for w in s.call_ok("gui_list", {"machine": NAME})["windows"] if w["title"] == TITLE]
    assert wins, "no test app window on the worker"
    wid = wins[0]["window_id"]
    st = s.call_ok("gui_state", {"machine": NAME, "window_id": wid, "screenshot": False})
    assert st["machine"] == NAME and st["window"]["window_id"] == wid

    # A call in flight when the cut comes: a 10 s wait on the worker.
    flight: dict = {}

    def slow_call():
        flight["r"] = s.call("gui_action", {"machine": NAME, "window_id": wid, "state_id": st["state_id"],
                                            "actions": [{"type": "wait", "seconds": 10}]}, timeout=30)
        flight["t"] = time.monotonic()

    th = threading.Thread(target=slow_call, daemon=True)
    th.start()
    time.sleep(0.7)
    assert "r" not in flight, f"the 10 s call ended early: {flight}"

    cut = Cut(rig.namespaces[NAME])
    cut_at = time.monotonic()
    cut.start()
    try:
        # Noticed: gui_list shows the machine offline.
        while True:
            m = rig.machines()[NAME]
            if not m["connected"]:
                noticed = time.monotonic() - cut_at
                break
            assert time.monotonic() - cut_at < 15, f"the cut was not noticed within 15 s: {m}"
            time.sleep(0.02)
        print(f"\ncut by {cut.how}")
        print(f"cut noticed after {noticed:.2f} s ({m['detail']})")
        assert noticed <= DETECT_BOUND + ALLOWANCE, f"noticed after {noticed:.2f}s"
        # By the silence rule (nothing closed, nothing failed: only silence tells).
        assert "silent for" in (m["detail"] or ""), m

        # The call in flight ended with MACHINE_OFFLINE within the bound, not at its own end.
        th.join(DETECT_BOUND + 5)
        assert "r" in flight, "the call in flight at the cut did not end"
        ended = flight["t"] - cut_at
        print(f"call in flight at the cut: {err_code(flight['r'])} after {ended:.2f} s")
        assert err_code(flight["r"]) == "MACHINE_OFFLINE", flight["r"]
        assert "silent for" in err_message(flight["r"]), err_message(flight["r"])
        assert ended <= DETECT_BOUND + ALLOWANCE, f"ended after {ended:.2f}s"

        # While cut: every call answers MACHINE_OFFLINE at once, with the reason.
        times = []
        calls = [("gui_state", {"machine": NAME, "window_id": wid}),
                 ("gui_list", {"machine": NAME}),
                 ("gui_action", {"machine": NAME, "window_id": wid, "state_id": st["state_id"],
                                 "actions": [{"type": "wait", "seconds": 0}]})]
        i = 0
        while time.monotonic() - cut_at < CUT_SECONDS:
            name, args = calls[i % len(calls)]
            i += 1
            t = time.monotonic()
            r = s.call(name, args)
            times.append(time.monotonic() - t)
            assert err_code(r) == "MACHINE_OFFLINE", (name, r)
            msg = err_message(r)
            assert re.search(rf'machine "{NAME}" is not connected \(disconnected: silent for [\d.]+ s\)', msg), msg
            assert not rig.machines()[NAME]["connected"]
            time.sleep(0.3)
        print(f"{len(times)} calls during the cut: MACHINE_OFFLINE in {statistics.median(times) * 1000:.1f} ms "
              f"median, {max(times) * 1000:.1f} ms max")
        assert len(times) >= 10
        assert max(times) < OFFLINE_ANSWER_BOUND, f"slowest offline answer {max(times):.3f}s"
    finally:
        cut.end()
    ended_at = time.monotonic()

    # The cut ends: a call works again within the bound.
    while True:
        r = s.call("gui_list", {"machine": NAME})
        if not r.is_error:
            back = time.monotonic() - ended_at
            break
        assert err_code(r) == "MACHINE_OFFLINE", r
        assert time.monotonic() - ended_at < 30, "the worker did not come back within 30 s"
        time.sleep(0.1)
    print(f"a call works again {back:.2f} s after the cut ended (cut lasted {ended_at - cut_at:.1f} s)")
    assert back <= RECONNECT_BOUND, f"back after {back:.2f}s\n--- worker\n{worker.log()[-2000:]}"
    assert any(w["window_id"] == wid for w in r.structured_content["windows"])
    st2 = s.call_ok("gui_state", {"machine": NAME, "window_id": wid, "screenshot": False})
    assert st2["window"]["window_id"] == wid

    # Nobody restarted: the same controller process (its MCP session too) and the same worker
    # process, which noticed the silence on its side and reconnected by itself.
    assert s.alive() and s.proc.pid == controller_pid
    assert worker.proc.poll() is None and worker.proc.pid == worker_pid
    log = worker.log()
    assert re.search(r"link to the controller closed: silent for [\d.]+ s", log), log[-2000:]
    assert re.search(r"worker disconnected: silent for [\d.]+ s", rig.controller_log()), \
        rig.controller_log()[-2000:]
