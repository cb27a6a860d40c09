#!/usr/bin/env python3
"""Load and leaks, one server (issue 13): 8 concurrent MCP sessions over Streamable HTTP, each
doing `gui_state` + `gui_action` pairs on a GTK test app, against one `lsm serve --http`.

    .venv/bin/python bench/load.py            # 2,000 pairs (4,000 calls), 8 sessions
    .venv/bin/python bench/load.py --short    # 400 pairs (CI)

Starts a private test desktop (tests/bed/desktop.sh on its own display, default :93, with the
test app) and one more test app per session beyond the first, so every session has a window of
its own (two clients toggling one check box would race each other, not test lsm). Each session
(the official Python `mcp` SDK's streamable HTTP client, all on one asyncio loop) repeats:

  gui_state(window)                      -> checked: the state_id is new and well formed, the
                                            window is the session's, the check box and the entry
                                            show exactly what this session last did, a PNG of
                                            the window's size comes with it;
  gui_action(window, that state_id, ...) -> alternately a click on the check box ("Enable
                                            feature") and set_value of the entry ("Name entry") to
                                            a text naming the session and the pair; checked: ok,
                                            verified, effect confirmed, the exact evidence
                                            (`checked false -> true`, `text is now "..."`) and a
                                            new state_id.

Every `--check-every`-th action's effect is also read outside lsm, through AT-SPI
(tests/lib/atspi_probe.py), and once more for every app at the end. Prints the resident set,
threads and open files of the `lsm serve` process every 500 calls (the first 500 are the warm-up;
the growth after it is printed and flagged, not failed), p50/p95/max per tool and the errors.
Exits non-zero only on errors: a lost answer (no answer within `--call-timeout`), a wrong one,
a tool error, an effect AT-SPI does not confirm. Never on a time or memory figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loadlib import (  # noqa: E402
    OUT_DIR, REPO, STATE_ID, SYSTEM_PYTHON, TESTAPP, Bed, BenchError, Server, error_code, git_rev, image_of,
    loadavg, log, mcp_session, ms, percentile, probe_nodes, proc_mem, text_of,
)

CHECK = "Enable feature"
ENTRY = "Name entry"
EVERY = 500  # calls between two memory samples (100 with --short)
WARMUP = 500  # calls before the memory baseline (200 with --short)
# A growth after warm-up above this is flagged (allocator noise on this machine is ~1-2 MiB).
GROWTH_FLAG_KIB = 4096


class Stats:
    def __init__(self, pid: int):
        self.pid = pid
        self.calls = 0
        self.lat: dict[str, list[float]] = {"gui_state": [], "gui_action": []}
        self.errors: list[str] = []
        self.lost = 0
        self.state_ids: set[str] = set()
        self.unsettled = 0
        self.checks = 0
        self.mem: list[tuple[int, dict]] = [(0, proc_mem(pid))]

    def count(self) -> None:
        self.calls += 1
        if self.calls % EVERY == 0:
            m = proc_mem(self.pid)
            self.mem.append((self.calls, m))
            log(f"{self.calls} calls: RSS {m['rss_kib'] / 1024:.1f} MiB, {m['threads']} threads, {m['fds']} fds, "
                f"{len(self.errors)} error(s)")

    def error(self, msg: str) -> None:
        self.errors.append(msg)
        if len(self.errors) <= 10:
            log(f"ERROR: {msg}")

    def new_state_id(self, sid, where: str) -> bool:
        if not isinstance(sid, str) or not STATE_ID.match(sid):
            self.error(f"{where}: malformed state_id {sid!r}")
            return False
        if sid in self.state_ids:
            self.error(f"{where}: state_id {sid} was issued before")
            return False
        self.state_ids.add(sid)
        return True


class App:
    """One session's test app: its window and what this session last did to it."""

    def __init__(self, index: int, pid: int, window_id: str, checked: bool, text: str):
        self.index, self.pid, self.window_id = index, pid, window_id
        self.checked, self.text = checked, text


def element(elements: list[dict], name: str, role: str) -> dict | None:
    for e in elements:
        if e.get("name") == name and e.get("role") == role:
            return e
    return None


def check_state(st: dict, result, app: App, where: str, stats: Stats) -> tuple[dict, dict] | None:
    """The answer of gui_state is the session's window as this session left it."""
    bad = []
    win = st.get("window") or {}
    if win.get("window_id") != app.window_id or win.get("pid") != app.pid:
        bad.append(f"window {win.get('window_id')} pid {win.get('pid')}, not {app.window_id} pid {app.pid}")
    box = element(st.get("elements") or [], CHECK, "check_box")
    entry = element(st.get("elements") or [], ENTRY, "text")
    if box is None or entry is None:
        bad.append(f"no {CHECK!r} check box or {ENTRY!r} entry among {len(st.get('elements') or [])} elements")
    else:
        if ("checked" in box.get("states", [])) != app.checked:
            bad.append(f"check box states {box.get('states')}, this session left it checked={app.checked}")
        if entry.get("value", "") != app.text:
            bad.append(f"entry value {entry.get('value')!r}, this session left {app.text!r}")
    img = image_of(result)
    shot = st.get("screenshot") or {}
    space = st.get("coordinate_space") or {}
    if img is None or img[0] != "image/png" or not img[1].startswith(b"\x89PNG") or len(img[1]) != shot.get("bytes"):
        bad.append(f"screenshot missing or not the PNG described ({shot})")
    elif (shot.get("width"), shot.get("height")) != (space.get("width"), space.get("height")):
        bad.append(f"screenshot {shot.get('width')}x{shot.get('height')} is not the coordinate space {space}")
    if not stats.new_state_id(st.get("state_id"), where):
        bad.append("state_id")
    if bad:
        stats.error(f"{where}: wrong gui_state answer: {'; '.join(bad)}")
        return None
    return box, entry


def check_action(out: dict, app: App, action: dict, expect_evidence: str, where: str, stats: Stats) -> bool:
    bad = []
    res = (out.get("results") or [{}])[0]
    if out.get("ok") is not True or len(out.get("results") or []) != 1:
        bad.append(f"ok={out.get('ok')} with {len(out.get('results') or [])} result(s)")
    if res.get("verified") is not True or res.get("effect") != "confirmed":
        bad.append(f"verified={res.get('verified')} effect={res.get('effect')}")
    if res.get("evidence") != expect_evidence:
        bad.append(f"evidence {res.get('evidence')!r}, expected {expect_evidence!r}")
    if out.get("window_id") != app.window_id:
        bad.append(f"window_id {out.get('window_id')}")
    if not stats.new_state_id(out.get("state_id"), where):
        bad.append("state_id")
    if out.get("settled") is False:
        stats.unsettled += 1
    if bad:
        stats.error(f"{where}: wrong gui_action answer to {action}: {'; '.join(bad)}")
        return False
    return True


async def timed(stats: Stats, session, name: str, args: dict, timeout: float, where: str):
    """One tool call; its result, or None after recording the error (lost or tool error)."""
    t = time.perf_counter()
    try:
        r = await asyncio.wait_for(session.call_tool(name, args), timeout)
    except asyncio.TimeoutError:
        stats.lost += 1
        stats.error(f"{where}: {name} LOST: no answer within {timeout} s")
        return None
    except Exception as e:  # noqa: BLE001 - every failure is an error of the run
        stats.error(f"{where}: {name} raised {type(e).__name__}: {e}")
        return None
    finally:
        stats.count()
    stats.lat[name].append(time.perf_counter() - t)
    if r.is_error:
        stats.error(f"{where}: {name} answered an error: {error_code(r)}: {text_of(r)[:300]}")
        return None
    if not isinstance(r.structured_content, dict):
        stats.error(f"{where}: {name} without structured content")
        return None
    return r


def outside_check(env: dict, app: App, where: str, stats: Stats) -> None:
    """The app's check box and entry read through AT-SPI agree with what the session did."""
    nodes = probe_nodes(env, app.pid)
    box, entry = nodes.get(CHECK), nodes.get(ENTRY)
    stats.checks += 1
    got = (box is not None and "checked" in box["states"], (entry or {}).get("text"))
    if got != (app.checked, app.text):
        stats.error(f"{where}: AT-SPI shows checked={got[0]} text={got[1]!r}, the session did "
                    f"checked={app.checked} text={app.text!r}")


async def run_session(url: str, app: App, pairs: int, args, env: dict, stats: Stats, go: asyncio.Event,
                      ready: list) -> None:
    async with mcp_session(url, timeout=args.call_timeout + 5) as s:
        ready.append(app.index)
        await go.wait()
        for k in range(pairs):
            where = f"session {app.index} pair {k}"
            r = await timed(stats, s, "gui_state", {"window_id": app.window_id}, args.call_timeout, where)
            if r is None:
                continue
            found = check_state(r.structured_content, r, app, where, stats)
            if found is None:
                # resync from AT-SPI so one wrong answer is not counted on every later pair
                await asyncio.to_thread(resync, env, app)
                continue
            box, entry = found
            if k % 2 == 0:
                action = {"type": "click", "element_id": box["id"]}
                now = not app.checked
                evidence = f"checked {str(app.checked).lower()} -> {str(now).lower()}"
            else:
                text = f"load s{app.index} p{k}"
                action = {"type": "set_value", "element_id": entry["id"], "value": text}
                evidence = f'text is now "{text}"'
            r = await timed(stats, s, "gui_action", {"window_id": app.window_id, "state_id": r.structured_content["state_id"],
                                                     "actions": [action]}, args.call_timeout, where)
            if r is None or not check_action(r.structured_content, app, action, evidence, where, stats):
                await asyncio.to_thread(resync, env, app)
                continue
            if k % 2 == 0:
                app.checked = now
            else:
                app.text = text
            if args.check_every and k % args.check_every == args.check_every - 1:
                await asyncio.to_thread(outside_check, env, app, where, stats)


def resync(env: dict, app: App) -> None:
    nodes = probe_nodes(env, app.pid)
    app.checked = "checked" in (nodes.get(CHECK) or {}).get("states", [])
    app.text = (nodes.get(ENTRY) or {}).get("text") or ""


async def load(url: str, apps: list[App], pairs: int, args, env: dict, stats: Stats) -> float:
    go = asyncio.Event()
    ready: list[int] = []
    share = [pairs // len(apps) + (1 if i < pairs % len(apps) else 0) for i in range(len(apps))]
    tasks = [asyncio.create_task(run_session(url, a, n, args, env, stats, go, ready)) for a, n in zip(apps, share)]
    while len(ready) < len(apps):
        done = [t for t in tasks if t.done()]
        for t in done:
            t.result()  # a session that could not even start: raise
        await asyncio.sleep(0.05)
    stats.mem.append((0, proc_mem(stats.pid)))  # all sessions open, before the first call
    t0 = time.perf_counter()
    go.set()
    for t in tasks:
        try:
            await t
        except Exception as e:  # noqa: BLE001 - a session that broke is an error, not a crash
            stats.error(f"a session ended with {type(e).__name__}: {e}")
    return time.perf_counter() - t0


def start_apps(env: dict, n: int) -> list[subprocess.Popen]:
    """n more test apps on the desktop (the benchmark's own processes, killed at the end)."""
    app_env = dict(env)
    app_env.pop("LSM_TESTAPP_LOG", None)
    return [subprocess.Popen([SYSTEM_PYTHON, str(TESTAPP)], env=app_env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            for _ in range(n)]


async def find_windows(url: str, pids: list[int], timeout: float = 60) -> dict[int, str]:
    """window_id of each pid's test app window, once lsm sees its check box (registered on AT-SPI)."""
    deadline = time.monotonic() + timeout
    async with mcp_session(url) as s:
        while True:
            r = await s.call_tool("gui_list", {})
            wins = {w.get("pid"): w["window_id"] for w in r.structured_content["windows"]
                    if w.get("title") == "lsm test app"}
            ready = {}
            for pid in pids:
                if pid in wins:
                    st = await s.call_tool("gui_state", {"window_id": wins[pid], "screenshot": False,
                                                         "query": CHECK})
                    if not st.is_error and element(st.structured_content.get("elements") or [], CHECK, "check_box"):
                        ready[pid] = wins[pid]
            if len(ready) == len(pids):
                return ready
            if time.monotonic() > deadline:
                raise BenchError(f"test app windows not ready within {timeout}s: {sorted(set(pids) - set(ready))}")
            await asyncio.sleep(0.5)


def report(args, stats: Stats, wall: float, pairs: int, sessions: int, extra: dict) -> str:
    lines = []
    calls = sum(len(v) for v in stats.lat.values())
    lines.append(f"lsm load: {sessions} concurrent MCP sessions (official Python SDK, Streamable HTTP) on one "
                 f"`lsm serve --http`, {pairs:,} gui_state/gui_action pairs ({stats.calls:,} calls, {calls:,} answered) "
                 f"on {sessions} GTK test-app windows, one per session, in {wall:.1f} s ({stats.calls / wall:.1f} calls/s)")
    lines.append(f"git {git_rev()}, {os.cpu_count()} CPUs, load average {extra['load_start']} at the start, "
                 f"{loadavg()} at the end")
    lines.append("")
    lines.append(f"errors: {len(stats.errors)} (lost answers {stats.lost}); state_ids issued: {len(stats.state_ids):,}, "
                 f"all distinct and well formed unless counted above; AT-SPI checks of the effects: {stats.checks} "
                 f"(every {args.check_every}th action and each app at the end); gui_action not settled within its bound: "
                 f"{stats.unsettled}")
    lines.append("")
    lines.append(f"memory of the `lsm serve` process every {EVERY} calls (warm-up: the first {WARMUP}):")
    lines.append("")
    lines.append("| calls | RSS | threads | open fds |")
    lines.append("|---:|---:|---:|---:|")
    for n, m in stats.mem:
        label = "start" if n == 0 and m is stats.mem[0][1] else ("sessions open" if n == 0 else f"{n:,}")
        lines.append(f"| {label} | {m['rss_kib'] / 1024:.1f} MiB | {m['threads']} | {m['fds']} |")
    for label, m in extra.get("after", []):
        lines.append(f"| {label} | {m['rss_kib'] / 1024:.1f} MiB | {m['threads']} | {m['fds']} |")
    base = next((m for n, m in stats.mem if n == WARMUP), None)
    last = stats.mem[-1][1]
    if base is not None and stats.mem[-1][0] > WARMUP:
        span = stats.mem[-1][0] - WARMUP
        growth = last["rss_kib"] - base["rss_kib"]
        # least-squares slope over every sample after warm-up: one noisy sample does not decide
        pts = [(n, m["rss_kib"]) for n, m in stats.mem if n >= WARMUP]
        mx = sum(n for n, _ in pts) / len(pts)
        my = sum(r for _, r in pts) / len(pts)
        den = sum((n - mx) ** 2 for n, _ in pts)
        slope = sum((n - mx) * (r - my) for n, r in pts) / den if den else 0.0  # KiB per call
        fitted = slope * span
        grows = fitted > GROWTH_FLAG_KIB and growth > GROWTH_FLAG_KIB
        flag = "**FLAG: the resident set grows after warm-up**" if grows else "no growth to speak of"
        lines.append("")
        lines.append(f"RSS after warm-up ({WARMUP} calls -> {stats.mem[-1][0]:,}): {base['rss_kib'] / 1024:.1f} -> "
                     f"{last['rss_kib'] / 1024:.1f} MiB ({growth / 1024:+.1f} MiB; fitted over the {len(pts)} samples "
                     f"{slope * 1000:+.0f} KiB per 1,000 calls, {fitted / 1024:+.1f} MiB over the run): {flag} "
                     f"(flagged when both exceed {GROWTH_FLAG_KIB // 1024} MiB); peak (VmHWM) {last['hwm_kib'] / 1024:.1f} MiB; "
                     f"threads {base['threads']} -> {last['threads']}, open fds {base['fds']} -> {last['fds']}")
        extra["growth_kib"] = growth
        extra["grows"] = grows
    lines.append("")
    lines.append("| per call | answers | p50 | p95 | max |")
    lines.append("|---|---:|---:|---:|---:|")
    for name, xs in stats.lat.items():
        if xs:
            lines.append(f"| {name} | {len(xs):,} | {ms(percentile(xs, 50))} | {ms(percentile(xs, 95))} | {ms(max(xs))} |")
    lines.append("")
    lines.append("gui_state: default arguments (elements and a PNG screenshot, ~600x511); gui_action: one action "
                 "(check box click or set_value of the entry), observe \"changes\" (waits for the window to settle, "
                 "then walks it and issues the next state_id). Latency from the SDK call to its parsed answer, "
                 f"{sessions} calls in flight.")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="400 pairs (CI)")
    ap.add_argument("--pairs", type=int, help="gui_state/gui_action pairs in all (default 2000, 400 with --short)")
    ap.add_argument("--sessions", type=int, default=8, help="concurrent MCP sessions (default 8)")
    ap.add_argument("--check-every", type=int, default=None,
                    help="read every Nth action's effect through AT-SPI (default 25, 10 with --short; 0: never)")
    ap.add_argument("--call-timeout", type=float, default=60, help="an answer later than this is lost (s)")
    ap.add_argument("--idle", type=float, default=None,
                    help="after the load, wait this long (s) with the server idle and sample its memory again "
                         "(default 35 s: every state_id has expired; 0 with --short)")
    ap.add_argument("--display", default=os.environ.get("LSM_LOAD_DISPLAY", ":93"),
                    help="X display of the benchmark desktop (env LSM_LOAD_DISPLAY, default :93)")
    ap.add_argument("--dir", default=os.environ.get("LSM_LOAD_DIR", "/tmp/lsm-load"),
                    help="directory of the benchmark desktop (env LSM_LOAD_DIR, default /tmp/lsm-load)")
    ap.add_argument("--keep-desktop", action="store_true", help="leave the desktop running at the end")
    ap.add_argument("--out", default=str(OUT_DIR), help="output directory (default target/bench)")
    args = ap.parse_args()
    pairs = args.pairs or (400 if args.short else 2000)
    if args.short:  # 800 calls: samples every 100, so the growth after warm-up has points to fit
        global EVERY, WARMUP
        EVERY, WARMUP = 100, 200
    if args.check_every is None:
        args.check_every = 10 if args.short else 25
    idle = args.idle if args.idle is not None else (0 if args.short else 35)
    if args.sessions < 1 or pairs < args.sessions:
        ap.error("need at least one session and one pair per session")

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    bed = Bed(args.display, args.dir, out_dir / "load-bed.log")
    server = None
    apps_procs: list[subprocess.Popen] = []

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    extra: dict = {"load_start": loadavg(), "after": []}
    try:
        log(f"desktop up on {args.display} ({args.dir}) with the test app, {args.sessions - 1} more test app(s)")
        env = bed.up()
        apps_procs = start_apps(env, args.sessions - 1)
        pids = [bed.pid("testapp")] + [p.pid for p in apps_procs]
        server = Server(env, out_dir / "load-serve.stderr.log", state_dir=Path(args.dir) / "lsm-state").start()
        log(f"lsm serve --http: {server.url} (pid {server.pid})")
        wins = asyncio.run(find_windows(server.url, pids))
        apps = []
        for i, pid in enumerate(pids):
            nodes = probe_nodes(env, pid)
            apps.append(App(i, pid, wins[pid], "checked" in (nodes.get(CHECK) or {}).get("states", []),
                            (nodes.get(ENTRY) or {}).get("text") or ""))
        stats = Stats(server.pid)
        log(f"{pairs} pairs over {args.sessions} sessions")
        wall = asyncio.run(load(server.url, apps, pairs, args, env, stats))
        for a in apps:
            outside_check(env, a, f"app {a.index} at the end", stats)
        extra["after"].append(("sessions closed", proc_mem(server.pid)))
        if idle:
            log(f"idle {idle:.0f} s (state_ids expire)")
            time.sleep(idle)
            extra["after"].append((f"idle {idle:.0f} s", proc_mem(server.pid)))
        if server.proc.poll() is not None:
            stats.error(f"lsm serve exited ({server.proc.returncode}):\n{server.tail()}")
        text = report(args, stats, wall, pairs, args.sessions, extra)
        print(text)
        (out_dir / "load.md").write_text(text + "\n")
        (out_dir / "load.json").write_text(json.dumps({
            "pairs": pairs, "sessions": args.sessions, "wall_s": wall, "calls": stats.calls,
            "errors": stats.errors, "lost": stats.lost, "checks": stats.checks, "unsettled": stats.unsettled,
            "memory": stats.mem, "after": extra["after"], "latency_s": stats.lat}, indent=1))
        if stats.errors:
            print(f"load: FAILED: {len(stats.errors)} error(s); first: {stats.errors[0]}")
            print(f"--- lsm serve stderr (tail) ---\n{server.tail()}")
            return 1
        return 0
    except BenchError as e:
        print(f"load: ERROR: {e}", file=sys.stderr)
        if server is not None:
            print(f"--- lsm serve stderr (tail) ---\n{server.tail()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(f"load: interrupted ({e})", file=sys.stderr)
        return 130
    finally:
        if server is not None:
            server.stop()
        for p in apps_procs:
            p.kill()
            p.wait(10)
        if not args.keep_desktop:
            bed.down()


if __name__ == "__main__":
    sys.exit(main())
