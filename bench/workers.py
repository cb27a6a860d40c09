#!/usr/bin/env python3
"""Load and leaks, many workers (issue 13): one controller with 50 connected `lsm worker`s,
calls spread over them, then a controller restart with every worker reconnecting.

    .venv/bin/python bench/workers.py            # 50 workers, 2,000 calls
    .venv/bin/python bench/workers.py --short    # 50 workers, 400 calls (CI)

Starts its own controller (`lsm serve --http 127.0.0.1:0 --worker-listen 127.0.0.1:PORT`, no
desktop, its own state directory), enrols `--workers` machines (`lsm enrol`) and starts one
`lsm worker` per machine over wss:// on loopback with the pinned certificate. Most workers are
headless (no DISPLAY: they answer GUI calls with GUI_UNAVAILABLE); `--desktop-workers` of them
run on a private test desktop (tests/bed/desktop.sh on its own display, default :94, with the test
app). The calls go round-robin over the machines, `--in-flight` at a time over `--sessions` MCP
sessions (official Python SDK, Streamable HTTP), each answer checked:

  desktop worker:  gui_state of the test app's window, screenshot included: the machine, the
                   window, a well-formed new state_id, the check box among the elements, a PNG;
  headless worker: alternately gui_list and gui_state by machine; both must answer GUI_UNAVAILABLE
                   with the places that worker looked for a session, among them its own
                   XDG_RUNTIME_DIR, which carries its name: the answer came from that machine.
                   Headless workers run with an empty /tmp/.X11-unix of their own (unshare), or
                   they would find the test desktop's X server; where that is not possible, any
                   answer from them is accepted (said in the output).

Then the controller is stopped (SIGTERM) and started again on the same port and state; prints the
time until every worker is connected again (from the stop and from the new controller's start),
the distribution over the workers, and checks one call per machine after it. Also prints the
controller's resident set every 500 calls and the workers' total.

Exits non-zero only on errors: a wrong or lost answer, a worker that does not connect (again)
within `--reconnect-timeout`. Never on a time figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loadlib import (  # noqa: E402
    HIDE_X11, OUT_DIR, STATE_ID, Bed, BenchError, Server, can_hide_x11, error_code, git_rev, headless_env, image_of,
    loadavg, log, lsm_bin, mcp_session, ms, percentile, proc_mem, text_of,
)
from lsm_mcp import free_port  # noqa: E402

TITLE = "lsm test app"
EVERY = 500


class Worker:
    def __init__(self, name: str, desktop: bool, cmd: list[str], env: dict[str, str], log_path: Path,
                 strict: bool = True):
        self.name, self.desktop, self.cmd, self.env, self.log_path = name, desktop, cmd, env, log_path
        # strict: a headless worker that cannot find any desktop (its own empty /tmp/.X11-unix)
        self.strict = strict
        self.proc: subprocess.Popen | None = None
        self.window_id = ""

    def start(self) -> None:
        log_f = open(self.log_path, "ab", buffering=0)
        self.proc = subprocess.Popen(self.cmd, env=self.env, stdin=subprocess.DEVNULL, stdout=log_f, stderr=log_f,
                                     start_new_session=True)
        log_f.close()

    def stop(self) -> None:
        p = self.proc
        if p is None or p.poll() is not None:
            return
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(10)


class Stats:
    def __init__(self, controller_pid: int):
        self.pid = controller_pid
        self.calls = 0
        self.lat: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.lost = 0
        self.state_ids: set[str] = set()
        self.per_machine: dict[str, int] = {}
        self.names: list[str] = []
        self.desktop_names: set[str] = set()
        # gui_list's machines list saying a machine's desktop does (not) answer when it does (not)
        self.availability_wrong = 0
        self.availability_examples: list[str] = []
        self.mem: list[tuple[int, dict]] = [(0, proc_mem(controller_pid))]

    def error(self, msg: str) -> None:
        self.errors.append(msg)
        if len(self.errors) <= 10:
            log(f"ERROR: {msg}")


def check(name: str, args: dict, r, w: Worker, stats: Stats) -> str | None:
    """What is wrong with the answer, or None."""
    sc = r.structured_content if isinstance(r.structured_content, dict) else {}
    m = args["machine"]
    if w.desktop and name == "gui_list":
        if r.is_error:
            return f"error {error_code(r)}: {text_of(r)[:300]}"
        if sc.get("machine") != m or not any(x.get("window_id") == w.window_id for x in sc.get("windows") or []):
            return f"machine {sc.get('machine')} without the test app's window {w.window_id}"
        # Every machine is listed, connected; gui_list asks each whether its desktop answers.
        listed = {x["name"]: x for x in sc.get("machines") or []}
        missing = [n for n in stats.names if not listed.get(n, {}).get("connected")]
        if missing:
            return f"machines not listed as connected: {missing[:5]}"
        for n in stats.names:
            x = listed[n]
            want = n in stats.desktop_names
            if x.get("available") != want and (want or w.strict):
                stats.availability_wrong += 1
                stats.availability_examples.append(f"{n}: available={x.get('available')} "
                                                   f"({x.get('unavailable_reason', '')[:120]})")
        return None
    if w.desktop:
        if r.is_error:
            return f"error {error_code(r)}: {text_of(r)[:300]}"
        win = sc.get("window") or {}
        img = image_of(r)
        sid = sc.get("state_id")
        if sc.get("machine") != m or win.get("window_id") != w.window_id:
            return f"machine {sc.get('machine')} window {win.get('window_id')}"
        if not any(e.get("name") == "Enable feature" for e in sc.get("elements") or []):
            return "no 'Enable feature' among the elements"
        if img is None or not img[1].startswith(b"\x89PNG") or len(img[1]) != (sc.get("screenshot") or {}).get("bytes"):
            return "no PNG of the described size"
        if not isinstance(sid, str) or not STATE_ID.match(sid) or sid in stats.state_ids:
            return f"state_id {sid!r} malformed or issued before"
        stats.state_ids.add(sid)
        return None
    if not w.strict:
        # It may have found another X server through /tmp/.X11-unix: an answer for that machine
        # (GUI_UNAVAILABLE, or a window list / WINDOW_NOT_FOUND of whatever desktop it found).
        code = error_code(r) if r.is_error else None
        if code in ("GUI_UNAVAILABLE", "WINDOW_NOT_FOUND") or (code is None and sc.get("machine") == m):
            return None
        return f"{code}: {text_of(r)[:300]}"
    # Headless: both tools answer GUI_UNAVAILABLE, and the message names where that worker looked
    # for a session: its own XDG_RUNTIME_DIR, which carries its name (so the answer is from it).
    code = error_code(r) if r.is_error else None
    if code != "GUI_UNAVAILABLE":
        return f"expected GUI_UNAVAILABLE, got {code or 'success'}: {text_of(r)[:300]}"
    if f"/{m}/wayland-0" not in text_of(r):
        return f"GUI_UNAVAILABLE from another machine than {m}: {text_of(r)[:300]}"
    return None


async def run_calls(url: str, calls: list[tuple[str, dict, Worker]], sessions: int, in_flight: int,
                    timeout: float, stats: Stats, phase: str) -> float:
    queue: asyncio.Queue = asyncio.Queue()
    for c in calls:
        queue.put_nowait(c)

    async def lane(s) -> None:
        while True:
            try:
                name, args, w = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            key = f"{name} ({'desktop' if w.desktop else 'headless'})"
            t = time.perf_counter()
            try:
                r = await asyncio.wait_for(s.call_tool(name, args), timeout)
            except asyncio.TimeoutError:
                stats.lost += 1
                stats.error(f"{phase}: {name} on {w.name} LOST: no answer within {timeout} s")
                r = None
            except Exception as e:  # noqa: BLE001
                stats.error(f"{phase}: {name} on {w.name} raised {type(e).__name__}: {e}")
                r = None
            dt = time.perf_counter() - t
            stats.calls += 1
            if stats.calls % EVERY == 0:
                mem = proc_mem(stats.pid)
                stats.mem.append((stats.calls, mem))
                log(f"{stats.calls} calls: controller RSS {mem['rss_kib'] / 1024:.1f} MiB, {mem['threads']} threads, "
                    f"{mem['fds']} fds, {len(stats.errors)} error(s)")
            if r is None:
                continue
            stats.lat.setdefault(key, []).append(dt)
            stats.per_machine[w.name] = stats.per_machine.get(w.name, 0) + 1
            bad = check(name, args, r, w, stats)
            if bad:
                stats.error(f"{phase}: wrong answer of {name} on {w.name}: {bad}")

    async def session_lanes() -> None:
        async with mcp_session(url, timeout=timeout + 5) as s:
            await asyncio.gather(*(lane(s) for _ in range(max(1, in_flight // sessions))))

    t0 = time.perf_counter()
    await asyncio.gather(*(session_lanes() for _ in range(sessions)))
    return time.perf_counter() - t0


async def wait_all_connected(url: str, names: list[str], timeout: float, t_ref: float,
                             must_see_gone: bool = False) -> dict[str, float]:
    """Polls gui_list (every 50 ms) until every machine is connected; per machine, seconds from
    t_ref (time.monotonic) to the first poll that saw it connected."""
    seen: dict[str, float] = {}
    deadline = time.monotonic() + timeout
    async with mcp_session(url) as s:
        while True:
            r = await s.call_tool("gui_list", {})
            now = time.monotonic() - t_ref
            for m in r.structured_content.get("machines") or []:
                if m.get("connected") and m["name"] in names and m["name"] not in seen:
                    seen[m["name"]] = now
            if len(seen) == len(names):
                return seen
            if time.monotonic() > deadline:
                missing = sorted(set(names) - set(seen))
                raise BenchError(f"{len(missing)} worker(s) not connected within {timeout:.0f} s: {missing[:10]}")
            await asyncio.sleep(0.05)


async def find_window(url: str, machine: str) -> str:
    async with mcp_session(url) as s:
        deadline = time.monotonic() + 60
        while True:
            r = await s.call_tool("gui_list", {"machine": machine})
            wins = [w for w in (r.structured_content or {}).get("windows", []) if w.get("title") == TITLE]
            if wins:
                return wins[0]["window_id"]
            if time.monotonic() > deadline:
                raise BenchError(f"no {TITLE!r} window on {machine}: {text_of(r)[:500]}")
            await asyncio.sleep(0.3)


def enrol(state_dir: Path, name: str, port: int, token_dir: Path) -> tuple[Path, str]:
    r = subprocess.run([lsm_bin(), "enrol", name, "--controller-url", f"wss://127.0.0.1:{port}",
                        "--state-dir", str(state_dir)], capture_output=True, text=True, timeout=30,
                       env=headless_env())
    token = re.search(r"^\s+(lsmw_[0-9a-f]{64})\s*$", r.stdout, re.M)
    pin = re.search(r"--pin ([0-9a-f]{64})", r.stdout)
    if r.returncode != 0 or not token or not pin:
        raise BenchError(f"lsm enrol {name} failed: {r.stdout[-500:]} {r.stderr[-500:]}")
    path = token_dir / f"{name}.token"
    path.write_text(token.group(1) + "\n")
    path.chmod(0o600)
    return path, pin.group(1)


CONNECTED = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z .*worker connected .*name=(\S+)", re.M)


def connect_times(log_text: str, names: list[str], t_ref_wall: float) -> dict[str, float]:
    """Per machine, seconds from t_ref_wall (time.time()) to the controller's own "worker connected"
    log line (its timestamp, UTC, microseconds): the last one of each machine in `log_text`."""
    import datetime as dt

    out = {}
    for stamp, name in CONNECTED.findall(log_text):
        if name in names:
            t = dt.datetime.fromisoformat(stamp).replace(tzinfo=dt.timezone.utc).timestamp()
            out[name] = t - t_ref_wall
    return out


def dist(xs: list[float]) -> str:
    return (f"min {ms(min(xs))}, p50 {ms(percentile(xs, 50))}, p95 {ms(percentile(xs, 95))}, "
            f"max {ms(max(xs))}")


def histogram(xs: list[float], step: float = 0.5) -> str:
    buckets: dict[int, int] = {}
    for x in xs:
        buckets[int(x // step)] = buckets.get(int(x // step), 0) + 1
    return ", ".join(f"{b * step:.1f}-{(b + 1) * step:.1f} s: {n}" for b, n in sorted(buckets.items()))


def workers_rss(workers: list[Worker]) -> tuple[float, float]:
    rss = [proc_mem(w.proc.pid)["rss_kib"] / 1024 for w in workers if w.proc and w.proc.poll() is None]
    return sum(rss), max(rss) if rss else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="400 calls (CI)")
    ap.add_argument("--workers", type=int, default=50, help="connected workers (default 50)")
    ap.add_argument("--desktop-workers", type=int, default=3,
                    help="how many of them run on the test desktop (default 3; 0: no desktop)")
    ap.add_argument("--calls", type=int, help="calls before the restart (default 2000, 400 with --short)")
    ap.add_argument("--sessions", type=int, default=4, help="MCP sessions to the controller (default 4)")
    ap.add_argument("--in-flight", type=int, default=16, help="calls in flight over all sessions (default 16)")
    ap.add_argument("--call-timeout", type=float, default=60, help="an answer later than this is lost (s)")
    ap.add_argument("--reconnect-timeout", type=float, default=120,
                    help="a worker not connected again within this many seconds is an error (default 120)")
    ap.add_argument("--display", default=os.environ.get("LSM_WORKERS_DISPLAY", ":94"),
                    help="X display of the desktop workers' desktop (env LSM_WORKERS_DISPLAY, default :94)")
    ap.add_argument("--dir", default=os.environ.get("LSM_WORKERS_DIR", "/tmp/lsm-workers"),
                    help="directory of that desktop and of the controller's state (env LSM_WORKERS_DIR)")
    ap.add_argument("--keep-desktop", action="store_true", help="leave the desktop running at the end")
    ap.add_argument("--out", default=str(OUT_DIR), help="output directory (default target/bench)")
    args = ap.parse_args()
    n_calls = args.calls or (400 if args.short else 2000)
    if not 0 <= args.desktop_workers <= args.workers:
        ap.error("--desktop-workers must be between 0 and --workers")

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    base = Path(args.dir)
    run_dir = base / "run"
    subprocess.run(["rm", "-rf", str(run_dir)], check=True)
    (run_dir / "logs").mkdir(parents=True)
    state_dir = run_dir / "state"
    bed = Bed(args.display, str(base / "bed"), out_dir / "workers-bed.log")
    controller: Server | None = None
    workers: list[Worker] = []

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    lines: list[str] = []
    load_start = loadavg()
    try:
        bed_env = None
        if args.desktop_workers:
            log(f"desktop up on {args.display} for {args.desktop_workers} worker(s)")
            bed_env = bed.up()
        port = free_port()
        names = [f"w{i:02d}" for i in range(1, args.workers + 1)]
        log(f"enrolling {len(names)} machines")
        pin = ""
        tokens = {}
        for n in names:
            tokens[n], pin = enrol(state_dir, n, port, run_dir)
        hide = can_hide_x11()
        if not hide:
            log("cannot give the headless workers an empty /tmp/.X11-unix (unshare): their answers are "
                "accepted whatever desktop they find")
        ctl_args = ["--worker-listen", f"127.0.0.1:{port}", "--state-dir", str(state_dir)]
        ctl_env = dict(headless_env(), LSM_LOG="lsm=info,warn")
        controller = Server(ctl_env, out_dir / "workers-controller.stderr.log", ctl_args, state_dir=state_dir,
                            wrapper=HIDE_X11 if hide else None)
        controller.log_path.write_text("")
        controller.start()
        log(f"controller {controller.url} (pid {controller.pid}), worker link 127.0.0.1:{port}")
        t_start = time.monotonic()
        t_start_wall = time.time()
        for i, n in enumerate(names):
            desktop = i < args.desktop_workers
            env = dict(bed_env if desktop else headless_env(), LSM_AUDIT_LOG="off",
                       LSM_STATE_DIR=str(run_dir / "worker-state"))
            if not desktop:
                env["XDG_RUNTIME_DIR"] = str(run_dir / "xdg" / n)
            wrapper = HIDE_X11 if hide and not desktop else []
            cmd = [*wrapper, lsm_bin(), "worker", "--controller", f"wss://127.0.0.1:{port}", "--name", n,
                   "--token-file", str(tokens[n]), "--pin", pin]
            w = Worker(n, desktop, cmd, env, run_dir / "logs" / f"{n}.log", strict=hide)
            w.start()
            workers.append(w)
        first = asyncio.run(wait_all_connected(controller.url, names, args.reconnect_timeout, t_start))
        first_log = connect_times(controller.log_path.read_text(errors="replace"), names, t_start_wall)
        if len(first_log) == len(names):
            first = first_log
        log(f"all {len(names)} workers connected {max(first.values()):.2f} s after the first was started")
        for w in workers:
            if w.desktop:
                w.window_id = asyncio.run(find_window(controller.url, w.name))

        stats = Stats(controller.pid)
        stats.names = names
        stats.desktop_names = {w.name for w in workers if w.desktop}
        calls = []
        for i in range(n_calls):
            w = workers[i % len(workers)]
            if w.desktop and (i // len(workers)) % 2 == 0:
                calls.append(("gui_state", {"machine": w.name, "window_id": w.window_id}, w))
            elif w.desktop:
                calls.append(("gui_list", {"machine": w.name}, w))
            elif (i // len(workers)) % 2 == 0:
                calls.append(("gui_list", {"machine": w.name}, w))
            else:
                calls.append(("gui_state", {"machine": w.name, "window_id": "0x1"}, w))
        log(f"{n_calls} calls over {len(workers)} machines, {args.in_flight} in flight over {args.sessions} sessions")
        wall = asyncio.run(run_calls(controller.url, calls, args.sessions, args.in_flight, args.call_timeout,
                                     stats, "load"))
        stats.mem.append((stats.calls, proc_mem(controller.pid)))
        w_sum, w_max = workers_rss(workers)

        log("controller restart")
        log_mark = controller.log_path.stat().st_size
        t_stop_wall = time.time()
        t_stop = time.monotonic()
        controller.stop()
        t_stopped = time.monotonic()
        controller.start()
        t_up = time.monotonic()
        back = asyncio.run(wait_all_connected(controller.url, names, args.reconnect_timeout, t_stop))
        t_all = max(back.values())
        log(f"all {len(names)} workers back {t_all:.2f} s after the stop")
        with open(controller.log_path, "rb") as f:
            f.seek(log_mark)
            back_log = connect_times(f.read().decode("utf-8", "replace"), names, t_stop_wall)
        t_seen = t_all
        if len(back_log) == len(names):
            back = back_log  # the controller's own timestamps: finer than the polls
            t_all = max(back.values())
        after = [("gui_list", {"machine": w.name}, w) if not w.desktop else
                 ("gui_state", {"machine": w.name, "window_id": w.window_id}, w) for w in workers]
        stats.pid = controller.pid
        wall2 = asyncio.run(run_calls(controller.url, after, args.sessions, args.in_flight, args.call_timeout,
                                      stats, "after the restart"))
        dead = [w.name for w in workers if w.proc.poll() is not None]
        if dead:
            stats.error(f"worker process(es) exited: {dead}")

        answered = sum(len(v) for v in stats.lat.values())
        lines.append(f"lsm workers: one controller (`lsm serve --http --worker-listen`, no desktop), {len(workers)} "
                     f"workers over wss:// on loopback ({args.desktop_workers} on a test desktop, "
                     f"{len(workers) - args.desktop_workers} headless), {n_calls:,} calls round-robin over them, "
                     f"{args.in_flight} in flight over {args.sessions} MCP sessions, in {wall:.1f} s "
                     f"({n_calls / wall:.0f} calls/s); then a controller restart and one call per machine "
                     f"({len(after)} calls, {wall2:.1f} s)")
        lines.append(f"git {git_rev()}, {os.cpu_count()} CPUs, load average {load_start} at the start, {loadavg()} at the end")
        lines.append("")
        lines.append(f"errors: {len(stats.errors)} (lost answers {stats.lost}); answered {answered:,} of "
                     f"{stats.calls:,} calls; machines that answered: {len(stats.per_machine)} of {len(workers)}")
        lines.append(f"gui_list on a desktop worker lists every machine and asks each whether its desktop answers: "
                     f"{stats.availability_wrong} machine entr(y/ies) with the wrong `available` in those answers"
                     + (f" (e.g. {'; '.join(stats.availability_examples[:3])})" if stats.availability_examples else ""))
        lines.append("")
        lines.append("| call | answers | p50 | p95 | max |")
        lines.append("|---|---:|---:|---:|---:|")
        for key, xs in sorted(stats.lat.items()):
            lines.append(f"| {key} | {len(xs):,} | {ms(percentile(xs, 50))} | {ms(percentile(xs, 95))} | {ms(max(xs))} |")
        allx = [x for xs in stats.lat.values() for x in xs]
        if allx:
            lines.append(f"| all | {len(allx):,} | {ms(percentile(allx, 50))} | {ms(percentile(allx, 95))} | {ms(max(allx))} |")
        lines.append("")
        lines.append(f"first connection: all {len(names)} workers connected {max(first.values()):.2f} s after the first "
                     f"was started (per worker: {dist(list(first.values()))})")
        lines.append(f"controller restart: stopped in {t_stopped - t_stop:.2f} s, the new one serving "
                     f"{t_up - t_stopped:.2f} s later; **all {len(names)} workers back {t_all:.2f} s after the stop** "
                     f"({t_all - (t_up - t_stop):.2f} s after the new controller was up; all seen connected in "
                     f"gui_list {t_seen:.2f} s after the stop)")
        lines.append(f"per worker, from the stop to the controller's \"worker connected\" line: {dist(list(back.values()))}; "
                     f"{histogram(list(back.values()))}")
        lines.append("")
        mem = " -> ".join(f"{m['rss_kib'] / 1024:.1f}" for _, m in stats.mem)
        lines.append(f"controller RSS (MiB) at the start and every {EVERY} calls: {mem}; "
                     f"threads {stats.mem[0][1]['threads']} -> {stats.mem[-1][1]['threads']}, "
                     f"fds {stats.mem[0][1]['fds']} -> {stats.mem[-1][1]['fds']} "
                     f"(50 worker links); the new controller after the restart: "
                     f"{proc_mem(controller.pid)['rss_kib'] / 1024:.1f} MiB")
        lines.append(f"workers: {w_sum:.0f} MiB resident in all ({w_sum / len(workers):.1f} MiB each on average, "
                     f"largest {w_max:.1f} MiB)")
        text = "\n".join(lines)
        print(text)
        (out_dir / "workers.md").write_text(text + "\n")
        (out_dir / "workers.json").write_text(json.dumps({
            "workers": len(workers), "desktop_workers": args.desktop_workers, "calls": n_calls,
            "errors": stats.errors, "lost": stats.lost, "latency_s": stats.lat, "first_connect_s": first,
            "reconnect_s": back, "controller_memory": stats.mem, "wall_s": wall}, indent=1))
        if stats.errors:
            print(f"workers: FAILED: {len(stats.errors)} error(s); first: {stats.errors[0]}")
            print(f"--- controller stderr (tail) ---\n{controller.tail()}")
            return 1
        return 0
    except BenchError as e:
        print(f"workers: ERROR: {e}", file=sys.stderr)
        if controller is not None:
            print(f"--- controller stderr (tail) ---\n{controller.tail()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(f"workers: interrupted ({e})", file=sys.stderr)
        return 130
    finally:
        for w in workers:
            w.stop()
        if controller is not None:
            controller.stop()
        if not args.keep_desktop:
            bed.down()


if __name__ == "__main__":
    sys.exit(main())
