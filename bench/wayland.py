#!/usr/bin/env python3
"""lsm on GNOME Wayland against its peers, in the same run (the Wayland bed must be up:
tests/bed/wayland.sh up; tests/run-all.sh runs this in its wayland step).

    .venv/bin/python bench/wayland.py --short

Lines (gtk3-widget-factory and the test app in the headless GNOME Shell):
- gui_state without screenshot vs a pyatspi walk of the same window (bench/atspi_worker.py),
  for gtk3-widget-factory and for a small window (gnome-calculator, GTK 4); target >= 8x faster.
- gui_state with screenshot vs without; target <= 1.5x.
- element click to effect ("Press me" by element_id) and coordinate click to effect, each vs a
  bare mutter remote-desktop click (NotifyPointerMotionAbsolute + NotifyPointerButton from a
  process of its own, bench/mutter_clicker.py), timed to the app's own "pressed" record.
Targets print PASS/MISS and never fail the run; errors do. Table: target/bench/wayland.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests" / "lib"))

import run as x11bench  # noqa: E402  (the peers and the lean MCP client are shared)
from lsm_mcp import image_bytes, parse_env, rect  # noqa: E402
from wl_shell import shell_window  # noqa: E402

BED = REPO / "tests" / "bed" / "wayland.sh"
CLICKER = REPO / "bench" / "mutter_clicker.py"
T_WALK_SPEEDUP = 8.0
T_SHOT_OVERHEAD = 1.5
OTHER_APPS = ("gtk4-widget-factory", "qt5-calculator", "xterm")
# The small window: a few dozen elements, where a fixed cost per observation shows most.
SMALL_APP = "gnome-calculator"


def bed(*args: str) -> str:
    r = subprocess.run(["bash", str(BED), *args], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise x11bench.BenchError(f"wayland.sh {' '.join(args)}: {r.stderr[-2000:]}")
    return r.stdout


class Clicker:
    """bench/mutter_clicker.py: a bare mutter remote-desktop session on one window."""

    def __init__(self, env: dict[str, str], window_id: str):
        self.proc = subprocess.Popen([x11bench.SYSTEM_PYTHON, str(CLICKER), window_id], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise x11bench.BenchError("mutter_clicker did not start")

    def click(self, x: float, y: float) -> float:
        self.proc.stdin.write(f"{x} {y}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--runs", type=int)
    args = ap.parse_args()
    runs = args.runs or (9 if args.short else 20)
    sets, unsets = parse_env(bed("env"))
    env = dict(os.environ)
    for k in unsets:
        env.pop(k, None)
    env.update(sets)
    os.environ.update(sets)
    for k in unsets:
        os.environ.pop(k, None)
    env["LSM_WEB"] = "off"
    # Only the measured windows: the suite's other applications (the GTK 4 factory animates
    # too) would have the shell, which renders in software here, draw them as well.
    for key in OTHER_APPS:
        bed("stop-app", key)
    pids = {key: int(bed("ensure-app", key).split()[-1])
            for key in ("gtk3-widget-factory", "testapp", SMALL_APP)}
    for key, pid in pids.items():
        if not x11bench_poll(lambda pid=pid: shell_window(pid=pid), 30):
            raise x11bench.BenchError(f"{key} has no window")
    time.sleep(2)  # the applications register on AT-SPI
    out_dir = REPO / "target" / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    peer = x11bench.Peer(env, out_dir / "wayland-peer.log")
    s = x11bench.LeanSession(env, timeout=60)
    events = x11bench.EventLog(str(Path(sets["LSM_WLBED_DIR"]) / "logs" / "app-testapp.log"))
    try:
        listed = s.call_ok("gui_list", {})
        wins = {w["pid"]: w for w in listed["windows"]}
        factory, app = wins[pids["gtk3-widget-factory"]], wins[pids["testapp"]]
        walk = walks(s, peer, factory, pids["gtk3-widget-factory"], runs)
        small = walks(s, peer, wins[pids[SMALL_APP]], pids[SMALL_APP], runs, shots=False)
        clicks = click_lines(s, env, app, runs, events)
    finally:
        s.close()
        peer.close()
    bed("stop-app", SMALL_APP)
    table = render(walk, small, clicks, runs)
    print(table)
    (out_dir / "wayland.md").write_text(table + "\n")
    (out_dir / "wayland.json").write_text(json.dumps({"walk": walk, "small": small, "clicks": clicks}, indent=1))
    return 0


def x11bench_poll(fn, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    return None


def walks(s, peer, win: dict, pid: int, runs: int, shots: bool = True) -> dict:
    """gui_state without (and, with `shots`, with) a screenshot against a pyatspi walk of the same
    window, alternating, `runs` times."""
    base = {"window_id": win["window_id"], **x11bench.STATE_ARGS}
    req = {"cmd": "walk", "pid": pid, "title": win["title"], "n": 1, "mode": "full"}
    x11bench.call(s, "gui_state", {**base, "screenshot": False})
    if shots:
        x11bench.call(s, "gui_state", {**base, "screenshot": True})
    peer.request(req, timeout=120)
    res = {"noshot": [], "shot": [], "peer": [], "elements": 0, "peer_nodes": 0, "app": win.get("app", "")}
    for i in range(runs):
        r, ms = x11bench.call(s, "gui_state", {**base, "screenshot": False})
        res["noshot"].append(ms)
        res["elements"] = len(r.structured_content.get("elements") or [])
        if shots:
            r, ms = x11bench.call(s, "gui_state", {**base, "screenshot": True})
            if not image_bytes(r):
                raise x11bench.BenchError("gui_state with screenshot returned no image")
            res["shot"].append(ms)
        w = peer.request(req, timeout=120)
        res["peer"].append(w["ms"][0])
        res["peer_nodes"] = w["nodes"][0]
        shot = f" / {res['shot'][-1]:.1f} ms (shot)" if shots else ""
        x11bench.log(f"  walk {win['title']} {i + 1}/{runs}: lsm {res['noshot'][-1]:.1f} ms{shot}, "
                     f"pyatspi {res['peer'][-1]:.0f} ms")
    return res


def click_lines(s, env: dict, win: dict, runs: int, events) -> dict:
    wid = win["window_id"]

    def state():
        r, _ = x11bench.call(s, "gui_state", {"window_id": wid, "screenshot": False})
        sc = r.structured_content
        btn = next(e for e in sc["elements"] if e.get("name", "") == "Press me" and e["role"] == "push_button")
        return sc, btn

    sc, btn = state()
    b = rect(btn)
    cx, cy = b["x"] + b["width"] // 2, b["y"] + b["height"] // 2
    truth = shell_window(pid=win["pid"])
    dx, dy = truth["frame"]["x"] - truth["buffer"]["x"], truth["frame"]["y"] - truth["buffer"]["y"]
    clicker = Clicker(env, truth["id"])

    def lsm(kind: str):
        sc, btn = state()
        action = ({"type": "click", "element_id": btn["id"]} if kind == "element"
                  else {"type": "click", "x": cx, "y": cy})
        off = events.mark()
        t0 = time.time()
        x11bench.call(s, "gui_action", {"window_id": wid, "state_id": sc["state_id"], "actions": [action],
                                        "observe": "none"})
        ev, _ = events.wait_event(off, "pressed")
        return (ev["t"] - t0) * 1000.0

    def bare():
        off = events.mark()
        t0 = clicker.click(cx + dx + 0.5, cy + dy + 0.5)
        ev, _ = events.wait_event(off, "pressed")
        return (ev["t"] - t0) * 1000.0

    fns = {"element": lambda: lsm("element"), "coordinate": lambda: lsm("coordinate"), "bare": bare}
    for fn in fns.values():
        fn()
        time.sleep(0.3)
    res = {k: [] for k in fns}
    try:
        for i in range(runs):
            for k, fn in fns.items():
                res[k].append(fn())
                time.sleep(0.3)  # past GTK's double-click time: each is a single click
            x11bench.log(f"  click {i + 1}/{runs}: element {res['element'][-1]:.1f} ms, coordinate "
                         f"{res['coordinate'][-1]:.1f} ms, bare mutter {res['bare'][-1]:.1f} ms")
    finally:
        clicker.close()
    return res


def walk_row(name: str, walk: dict) -> str:
    med = x11bench.med
    noshot, peer = med(walk["noshot"]), med(walk["peer"])
    speed = peer / noshot if noshot else 0
    return (f"| {name} gui_state, no screenshot vs pyatspi walk ({walk['elements']} elements, "
            f"{walk['peer_nodes']} nodes) | {noshot:.1f} ms | {peer:.1f} ms | {speed:.1f}x faster | "
            f">= {T_WALK_SPEEDUP:.0f}x {x11bench.verdict(speed >= T_WALK_SPEEDUP)} |")


def render(walk: dict, small: dict, clicks: dict, runs: int) -> str:
    med = x11bench.med
    noshot, shot = med(walk["noshot"]), med(walk["shot"])
    over = shot / noshot if noshot else 0
    el, co, bare = med(clicks["element"]), med(clicks["coordinate"]), med(clicks["bare"])
    rows = [
        "| line (GNOME Wayland, headless gnome-shell 43) | lsm | peer | ratio | target |",
        "|---|---|---|---|---|",
        walk_row("gtk3-widget-factory", walk),
        walk_row(f"{SMALL_APP} (small window)", small),
        f"| gui_state with screenshot vs without | {shot:.1f} ms | {noshot:.1f} ms | {over:.2f}x | "
        f"<= {T_SHOT_OVERHEAD}x {x11bench.verdict(over <= T_SHOT_OVERHEAD)} |",
        f"| element click to effect vs bare mutter click | {el:.1f} ms | {bare:.1f} ms | {el / bare:.2f}x | - |",
        f"| coordinate click to effect vs bare mutter click | {co:.1f} ms | {bare:.1f} ms | {co / bare:.2f}x | - |",
        "",
        f"medians of {runs} runs; the bare click sends motion, press and release back to back; lsm's "
        "coordinate click pauses 50 ms between them (GTK 4 misses clicks without), and checks the window first.",
    ]
    return "\n".join(rows)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except x11bench.BenchError as e:
        print(f"bench/wayland.py: {e}", file=sys.stderr)
        sys.exit(1)
