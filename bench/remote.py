#!/usr/bin/env python3
"""Remote-desktop benchmark (issue 4): gui_state with screenshot on a remote machine versus the
same desktop served locally, and a load of 200 gui_state calls, 20 in flight, over two workers.

    .venv/bin/python bench/remote.py [--short] [--samples N]

Starts its own controller (`lsm serve --http --worker-listen 127.0.0.1:PORT`), two workers on
loopback (wss:// with the pinned certificate), each on its own test desktop (:71, :72), and a
plain local `lsm serve --http` on the first desktop. Latencies are measured sequentially through
the official Python MCP client, local and remote calls interleaved, on the same window.
Prints the remote/local median ratio (goal: within 1.3x). Exits non-zero only on errors (a wrong
or missing answer), never on a missed goal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lib"))
from lsm_mcp import LsmSession, image_bytes  # noqa: E402
from lsm_remote import RemoteRig, call_many  # noqa: E402

TITLE = "lsm test app"
GOAL = 1.3


def window(s: LsmSession, machine: str | None) -> str:
    args = {"machine": machine} if machine else {}
    wins = [w for w in s.call_ok("gui_list", args)["windows"] if w["title"] == TITLE]
    assert wins, f"no {TITLE!r} window on {machine or 'local'}"
    return wins[0]["window_id"]


def timed_state(s: LsmSession, args: dict) -> float:
    t = time.perf_counter()
    r = s.call("gui_state", args)
    dt = time.perf_counter() - t
    st = s.ok(r)
    png = image_bytes(r)
    assert png and len(png) == st["screenshot"]["bytes"], "gui_state without its screenshot"
    return dt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--short", action="store_true", help="few samples (CI)")
    ap.add_argument("--samples", type=int, default=None)
    a = ap.parse_args()
    samples = a.samples or (15 if a.short else 60)
    rig = RemoteRig(("w1", "w2"), use_netns=False).start()
    local = None
    try:
        env = dict(rig.beds["w1"], LSM_WEB="off")
        local = LsmSession("http", env, stderr_path=os.path.join(rig.dir, "local.log")).open()
        s = rig.session
        lw, rw = window(local, None), window(s, "w1")
        largs = {"window_id": lw, "screenshot": True}
        rargs = {"machine": "w1", "window_id": rw, "screenshot": True}
        for _ in range(3):  # warm-up: connections, caches
            timed_state(local, largs)
            timed_state(s, rargs)
        lt, rt = [], []
        for _ in range(samples):
            lt.append(timed_state(local, largs))
            rt.append(timed_state(s, rargs))
        lm, rm = statistics.median(lt), statistics.median(rt)
        ratio = rm / lm
        print(f"gui_state with screenshot, {samples} sequential calls each (loopback, wss://):")
        print(f"  local  median {lm * 1000:7.2f} ms  (min {min(lt) * 1000:.2f})")
        print(f"  remote median {rm * 1000:7.2f} ms  (min {min(rt) * 1000:.2f})")
        print(f"  remote/local latency ratio: {ratio:.2f}x (goal <= {GOAL}x: {'met' if ratio <= GOAL else 'MISSED'})")

        wins = {m: window(s, m) for m in ("w1", "w2")}
        calls = [("gui_state", {"machine": m, "window_id": wins[m], "screenshot": True})
                 for i in range(200) for m in [("w1", "w2")[i % 2]]]
        t = time.perf_counter()
        results = call_many(s, calls, in_flight=20)
        wall = time.perf_counter() - t
        errors = 0
        for (_, args), (r, _) in zip(calls, results):
            ok = (not isinstance(r, Exception) and not r.is_error
                  and r.structured_content["machine"] == args["machine"]
                  and r.structured_content["window"]["window_id"] == args["window_id"]
                  and image_bytes(r) is not None)
            errors += not ok
        lat = sorted(x for _, x in results)
        print(f"load: 200 gui_state (screenshot) over w1+w2, 20 in flight: {200 - errors}/200 correct, "
              f"{wall:.2f} s wall, {200 / wall:.0f} calls/s, median {lat[100] * 1000:.0f} ms, "
              f"p95 {lat[190] * 1000:.0f} ms")
        return 1 if errors else 0
    finally:
        if local is not None:
            local.close()
        rig.stop()


if __name__ == "__main__":
    sys.exit(main())
