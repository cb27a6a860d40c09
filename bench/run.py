#!/usr/bin/env python3
"""lsm benchmark: starts its own desktop and measures lsm against peers in the same run.

    .venv/bin/python bench/run.py              # 20 runs per line
    .venv/bin/python bench/run.py --short      # 5 runs per line (tests/run-all.sh runs this)
    .venv/bin/python bench/run.py --runs 50

Starts a private test desktop (tests/bed/desktop.sh on its own display and directory, default
:90 and /tmp/lsm-bench, with gtk3-widget-factory, gtk4-widget-factory and the test app), one
`lsm serve` over stdio through the official Python MCP client (tests/lib/lsm_mcp.py) and one
pyatspi peer process (bench/atspi_worker.py, system python3). Every measurement round runs lsm and
its peer back to back on the same window. Prints one Markdown table of medians and p95 (also
written to target/bench/bench.md, raw samples to target/bench/bench.json) and takes the desktop
down again.

Targets are reported as PASS/MISS and never fail the run: the exit status is non-zero only when
something did not work (desktop, lsm call, peer, timeout). See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import select
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lib"))

from lsm_mcp import RawStdio, image_bytes, lsm_bin, mcp_stdio, parse_env, text_of  # noqa: E402
from types import SimpleNamespace  # noqa: E402

BED = REPO / "tests" / "bed" / "desktop.sh"
WORKER = REPO / "bench" / "atspi_worker.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # has pyatspi; the venv python has not
OUT_DIR = REPO / "target" / "bench"
APPS = "gtk3-widget-factory gtk4-widget-factory testapp"
WALK_WINDOWS = ("gtk3-widget-factory", "gtk4-widget-factory")  # bed app keys
CLICK_APP = "testapp"
STATE_ARGS = {"max_elements": 1000, "max_depth": 20}

# Targets (from the issue)
T_WALK_SPEEDUP = 8.0  # gui_state without screenshot >= 8x faster than the pyatspi walk
T_SHOT_OVERHEAD = 1.3  # gui_state with screenshot <= 1.3x of without
T_CLICK_VS_BARE = 2.0  # click to effect within 2x of a bare in-process AT-SPI action
T_CLICK_VS_XDOTOOL = 0.5  # "far below xdotool": at most half of it
T_JSON_SHRINK = 0.5  # JSON `elements` at most half of their size before the compact format
# JSON `elements` bytes per window at git df73557, before the compact element format (bounds as
# objects, depth, every state the toolkit reports, unnamed containers listed).
ELEMENTS_JSON_BEFORE = {"gtk3-widget-factory": 32_426, "gtk4-widget-factory": 53_767, "testapp": 8_910}
T_PEAK_RSS_MIB = 40.0  # peak RSS of lsm serve < 40 MiB
T_TOOLS_LIST_BYTES = 15_360  # the tools/list answer, which clients send to the model every turn


class BenchError(RuntimeError):
    pass


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ statistics
def percentile(xs: list[float], p: float) -> float:
    """Linear-interpolation percentile (p in 0..100)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def med(xs):
    return percentile(xs, 50)


def p95(xs):
    return percentile(xs, 95)


# ------------------------------------------------------------------ the desktop
class Bed:
    """tests/bed/desktop.sh on the benchmark's own display and directory."""

    def __init__(self, display: str, directory: str, logfile: Path):
        self.benv = dict(os.environ)
        self.benv.update(LSM_BED_DISPLAY=display, LSM_BED_DIR=directory, LSM_BED_APPS=APPS)
        self.logfile = logfile
        self.env: dict[str, str] = {}
        self.started = False

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        with open(self.logfile, "a") as err:
            return subprocess.run(["bash", str(BED), *args], env=self.benv, stdout=subprocess.PIPE,
                                  stderr=err, text=True, timeout=timeout)

    def up(self) -> dict[str, str]:
        self.started = True
        r = self._run("up", timeout=300)
        if r.returncode != 0:
            raise BenchError(f"desktop.sh up failed (exit {r.returncode}); log: {self.logfile}\n"
                             + _tail(self.logfile))
        sets, unsets = parse_env(r.stdout)
        if "AT_SPI_BUS_ADDRESS" not in sets:
            raise BenchError(f"unexpected output of desktop.sh up:\n{r.stdout}")
        env = dict(os.environ)
        for k in unsets:
            env.pop(k, None)
        env.update(sets)
        self.env = env
        return env

    def pid(self, key: str) -> int:
        r = self._run("pid", key)
        if r.returncode != 0 or not r.stdout.strip():
            raise BenchError(f"app {key} is not running on the bench desktop")
        return int(r.stdout.strip())

    def down(self) -> None:
        if self.started:
            self.started = False
            try:
                self._run("down", timeout=60)
            except subprocess.TimeoutExpired:
                log("desktop.sh down timed out")


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


# ------------------------------------------------------------------ the pyatspi peer
class Peer:
    """bench/atspi_worker.py: one persistent system-python process; every command bounded."""

    def __init__(self, env: dict[str, str], logfile: Path):
        self.logfile = logfile
        self._err = open(logfile, "ab")
        self.proc = subprocess.Popen([SYSTEM_PYTHON, str(WORKER)], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err, start_new_session=True)
        self._buf = b""
        ready = self._read(30, "start")
        if not ready.get("ready"):
            raise BenchError(f"pyatspi worker: unexpected first line {ready}")

    def _read(self, timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise BenchError(f"pyatspi worker: no answer to {what} within {timeout:.0f}s "
                                 f"(AT-SPI deadlock?); killed it. stderr:\n{_tail(self.logfile)}")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise BenchError(f"pyatspi worker exited during {what} "
                                     f"(exit {self.proc.wait()}):\n{_tail(self.logfile)}")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, req: dict, timeout: float) -> dict:
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        res = self._read(timeout, req.get("cmd", "?"))
        if not res.get("ok"):
            raise BenchError(f"pyatspi worker {req.get('cmd')}: {res.get('error')}")
        return res

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(5)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b'{"cmd": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self._err.close()


# ------------------------------------------------------------------ the lsm client
class LeanSession:
    """A minimal MCP client over stdio (tests/lib/lsm_mcp.RawStdio: one JSON line out, one in).

    lsm is timed through it rather than through the official Python SDK, whose own per-call cost
    (pydantic models, anyio streams: about 0.6 ms a round trip, measured and printed as a
    reference) would otherwise be charged to lsm, while the peers are timed inside their own
    process. Results look like the SDK's (`is_error`, `structured_content`, `content`)."""

    def __init__(self, env: dict[str, str], timeout: float):
        self.env = env
        self.raw = RawStdio(env=env, timeout=timeout)
        self._id = 0

    def _request(self, method: str, params: dict) -> dict:
        self._id += 1
        self.raw.send(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params},
                                 ensure_ascii=False))
        msg = self.raw.wait_id(self._id)
        if "error" in msg:
            raise BenchError(f"{method}: JSON-RPC error {msg['error']}\n{self.stderr_tail()}")
        return msg["result"]

    def call(self, name: str, args: dict):
        r = self._request("tools/call", {"name": name, "arguments": args})
        content = [SimpleNamespace(type=c.get("type"), text=c.get("text"), data=c.get("data"),
                                   mime_type=c.get("mimeType")) for c in r.get("content") or []]
        return SimpleNamespace(is_error=bool(r.get("isError")), structured_content=r.get("structuredContent"),
                               content=content)

    def call_ok(self, name: str, args: dict) -> dict:
        r = self.call(name, args)
        if r.is_error:
            raise BenchError(f"{name} failed: {text_of(r)[:500]}\n{self.stderr_tail()}")
        return r.structured_content

    def ping(self) -> None:
        self._request("ping", {})

    def tools_list_bytes(self) -> int:
        """Size of the tools/list result as the server wrote it (compact JSON)."""
        return json_bytes(self._request("tools/list", {}))

    def stderr_tail(self) -> str:
        return _tail(Path(self.raw.stderr_path))

    def close(self) -> None:
        self.raw.close()


def sdk_ping_ms(env: dict[str, str], runs: int) -> list[float]:
    """MCP ping round trips through the official Python SDK, for reference."""
    with mcp_stdio(env, timeout=60) as sdk:
        return measure_ping(sdk, runs)


# ------------------------------------------------------------------ the test app's event log
class EventLog:
    """The JSON lines the test app appends to $LSM_TESTAPP_LOG (one per event, wall-clock `t`)."""

    def __init__(self, path: str):
        self.path = path

    def mark(self) -> int:
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def wait_event(self, offset: int, event: str, timeout: float = 5.0) -> tuple[dict, float]:
        """First `event` line written after `offset`, and the wall-clock time it was seen here."""
        deadline = time.monotonic() + timeout
        buf = b""
        while True:
            with open(self.path, "rb") as f:
                f.seek(offset)
                chunk = f.read()
            seen = time.time()
            if chunk:
                buf += chunk
                offset += len(chunk)
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if rec.get("event") == event:
                        return rec, seen
            if time.monotonic() > deadline:
                raise BenchError(f"no {event!r} event in {self.path} within {timeout}s")
            time.sleep(0.0002)


# ------------------------------------------------------------------ lsm helpers
def proc_status(pid: int) -> dict[str, int]:
    """VmHWM / VmRSS / VmPeak of a process, in kB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS", "VmPeak", "VmSize", "Threads"):
                out[k] = int(v.split()[0])
    return out


def call(s, name: str, args: dict) -> tuple[object, float]:
    """One tool call; (result, elapsed ms). Raises on a tool error."""
    t0 = time.perf_counter()
    r = s.call(name, args)
    ms = (time.perf_counter() - t0) * 1000.0
    if r.is_error:
        raise BenchError(f"{name} {json.dumps(args)[:200]} failed: {text_of(r)[:500]}"
                         f"\n--- server stderr ---\n{s.stderr_tail()}")
    return r, ms


def json_bytes(v) -> int:
    return len(json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode())


def tree_depth(elements: list[dict]) -> int:
    """How deep lsm's element tree goes (the root at 0), from each element's parent id."""
    parent = {e["id"]: e.get("parent") for e in elements}
    deepest = 0
    for e in elements:
        d, p = 0, e.get("parent")
        while p is not None and d <= len(elements):
            d, p = d + 1, parent.get(p)
        deepest = max(deepest, d)
    return deepest


# ------------------------------------------------------------------ the measurements
def measure_walks(s, peer: Peer, win: dict, pid: int, runs: int, key: str, pruned: bool) -> dict:
    wid, title = win["window_id"], win["title"]
    base = {"window_id": wid, **STATE_ARGS}
    walk_req = {"cmd": "walk", "pid": pid, "title": title, "n": 1}
    # warm-up: one of each, not counted
    call(s, "gui_state", {**base, "screenshot": False})
    call(s, "gui_state", {**base, "screenshot": True})
    call(s, "gui_state", {"window_id": wid, "screenshot": True, "include_elements": False})
    peer.request({**walk_req, "mode": "full"}, timeout=120)
    if pruned:
        peer.request({**walk_req, "mode": "pruned"}, timeout=120)

    res = {k: [] for k in ("lsm_noshot_ms", "lsm_shot_ms", "lsm_shot_only_ms", "peer_walk_ms", "peer_pruned_ms",
                           "import_ms", "lsm_elements", "peer_nodes", "peer_pruned_kept")}
    last = None
    truncated = []
    for i in range(runs):
        r, ms = call(s, "gui_state", {**base, "screenshot": False})
        sc = r.structured_content
        res["lsm_noshot_ms"].append(ms)
        res["lsm_elements"].append(len(sc.get("elements") or []))
        if sc.get("truncated"):
            truncated.append(sc.get("truncated_reason"))
        last = r
        r2, ms = call(s, "gui_state", {**base, "screenshot": True})
        res["lsm_shot_ms"].append(ms)
        png = image_bytes(r2)
        if not png:
            raise BenchError(f"gui_state with screenshot on {title}: no image content")
        res["lsm_png_bytes"] = len(png)
        w = peer.request({**walk_req, "mode": "full"}, timeout=120)
        res["peer_walk_ms"].append(w["ms"][0])
        res["peer_nodes"].append(w["nodes"][0])
        res["peer_max_depth"] = w["max_depth"]
        t0 = time.perf_counter()
        imp = subprocess.run(["import", "-window", wid, "png:-"], env=s.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=60)
        res["import_ms"].append((time.perf_counter() - t0) * 1000.0)
        if imp.returncode != 0 or not imp.stdout.startswith(b"\x89PNG"):
            raise BenchError(f"import -window {wid} failed (exit {imp.returncode}): "
                             f"{imp.stderr.decode(errors='replace')[:500]}")
        res["import_png_bytes"] = len(imp.stdout)
        _, ms = call(s, "gui_state", {"window_id": wid, "screenshot": True, "include_elements": False})
        res["lsm_shot_only_ms"].append(ms)
        if pruned:
            p = peer.request({**walk_req, "mode": "pruned"}, timeout=120)
            res["peer_pruned_ms"].append(p["ms"][0])
            res["peer_pruned_kept"].append(p["kept"][0])
        log(f"  {key} run {i + 1}/{runs}: lsm {res['lsm_noshot_ms'][-1]:.1f} / "
            f"{res['lsm_shot_ms'][-1]:.1f} ms (shot), pyatspi {res['peer_walk_ms'][-1]:.0f} ms, "
            f"import {res['import_ms'][-1]:.0f} ms")
    sc = last.structured_content
    outline = last.content[0].text if last.content and last.content[0].type == "text" else ""
    res.update(
        window_id=wid, title=title, pid=pid,
        truncated=truncated,
        element_count=sc.get("element_count"),
        outline_bytes=len(outline.encode()),
        elements_json_bytes=json_bytes(sc.get("elements") or []),
        structured_json_bytes=json_bytes(sc),
        text_blocks=sum(1 for c in last.content if c.type == "text"),
        lsm_max_depth=tree_depth(sc.get("elements") or []),
    )
    return res


def measure_clicks(s, peer: Peer, win: dict, pid: int, runs: int, events: EventLog) -> dict:
    wid, title = win["window_id"], win["title"]
    peer.request({"cmd": "find", "pid": pid, "title": title, "name": "Press me", "role": "push button"},
                 timeout=30)

    def lsm_button():
        r, _ = call(s, "gui_state", {"window_id": wid, "screenshot": False})
        sc = r.structured_content
        found = [e for e in sc["elements"] if e.get("name", "") == "Press me" and e["role"] == "push_button"]
        if not found:
            raise BenchError("no 'Press me' push_button in the test app's gui_state")
        return sc, found[0]

    sc, btn = lsm_button()
    wb, (bx, by, bw, bh) = sc["window"]["bounds"], btn["bounds"]  # element bounds: [x, y, w, h]
    scr_x, scr_y = wb["x"] + bx + bw // 2, wb["y"] + by + bh // 2

    def lsm_click():
        sc, btn = lsm_button()
        off = events.mark()
        t_send = time.time()
        # observe "none": the action alone, as the peers do it (the settled step: bench/step.py).
        call(s, "gui_action", {"window_id": wid, "state_id": sc["state_id"], "observe": "none",
                               "actions": [{"type": "click", "element_id": btn["id"]}]})
        t_ret = time.time()
        ev, seen = events.wait_event(off, "pressed")
        return t_send, t_ret, ev, seen

    def xdotool_click():
        off = events.mark()
        t_send = time.time()
        x = subprocess.run(["xdotool", "mousemove", str(scr_x), str(scr_y), "click", "1"], env=s.env,
                           capture_output=True, timeout=30)
        t_ret = time.time()
        if x.returncode != 0:
            raise BenchError(f"xdotool failed: {x.stderr.decode(errors='replace')[:300]}")
        ev, seen = events.wait_event(off, "pressed")
        return t_send, t_ret, ev, seen

    def bare_click():
        off = events.mark()
        p = peer.request({"cmd": "press"}, timeout=30)
        ev, seen = events.wait_event(off, "pressed")
        return p["t_send"], p["t_return"], ev, seen

    methods = {"lsm": lsm_click, "xdotool": xdotool_click, "bare": bare_click}
    for fn in methods.values():  # warm-up
        fn()
        time.sleep(0.05)
    res: dict = {"button_screen_xy": [scr_x, scr_y]}
    for m in methods:
        res[m] = {"effect_ms": [], "return_ms": [], "seen_ms": []}
    for i in range(runs):
        for m, fn in methods.items():
            t_send, t_ret, ev, seen = fn()
            res[m]["effect_ms"].append((ev["t"] - t_send) * 1000.0)
            res[m]["return_ms"].append((t_ret - t_send) * 1000.0)
            res[m]["seen_ms"].append((seen - t_send) * 1000.0)
            time.sleep(0.05)  # let the app settle (redraw) before the next click
        log(f"  click run {i + 1}/{runs}: effect lsm {res['lsm']['effect_ms'][-1]:.1f} ms, "
            f"xdotool {res['xdotool']['effect_ms'][-1]:.1f} ms, bare {res['bare']['effect_ms'][-1]:.1f} ms")
    return res


def measure_ping(s, runs: int) -> list[float]:
    out = []
    for _ in range(runs + 1):
        t0 = time.perf_counter()
        s.ping()
        out.append((time.perf_counter() - t0) * 1000.0)
    return out[1:]


# ------------------------------------------------------------------ report
def machine_info() -> dict:
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kb = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    nproc = len(os.sched_getaffinity(0))
    return {"nproc": nproc, "cpu": model, "kernel": platform.release(), "mem_gib": round(mem_kb / 2**20, 1)}


def loadavg() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def lsm_version(binary: str) -> str:
    v = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        if rev:
            v += f" (git {rev}{', modified tree' if dirty else ''})"
    except OSError:
        pass
    return v


def fmt_ms(x: float) -> str:
    if x != x:  # nan
        return "–"
    if x >= 100:
        return f"{x:.0f} ms"
    if x >= 10:
        return f"{x:.1f} ms"
    return f"{x:.2f} ms"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "**MISS**"


def faster(lsm: float, peer: float) -> str:
    """A time ratio as read by a person: "12.3x faster" / "1.5x slower" (lsm vs the peer)."""
    if lsm <= 0 or peer <= 0:
        return "–"
    return f"{peer / lsm:.1f}x faster" if peer >= lsm else f"{lsm / peer:.1f}x slower"


def build_table(data: dict) -> tuple[str, list[dict]]:
    rows: list[dict] = []
    head = ("| measure | window | lsm median | lsm p95 | peer | peer median | peer p95 | lsm vs peer | target | |\n"
            "|---|---|---:|---:|---|---:|---:|---:|---|---|")
    lines = [head]

    def row(measure, window, lm, lp, peer, pm, pp, ratio, target, ok):
        rows.append({"measure": measure, "window": window, "lsm_median": lm, "lsm_p95": lp, "peer": peer,
                     "peer_median": pm, "peer_p95": pp, "ratio": ratio, "target": target, "pass": ok})
        lines.append(f"| {measure} | {window} | {lm} | {lp} | {peer} | {pm} | {pp} | {ratio} | {target} | "
                     f"{'' if ok is None else verdict(ok)} |")

    walks = data["walks"]
    for key in WALK_WINDOWS:
        w = walks[key]
        name = f"{key} (lsm {w['element_count']} elements, pyatspi {int(med(w['peer_nodes']))} nodes)"
        lm, pm = med(w["lsm_noshot_ms"]), med(w["peer_walk_ms"])
        row("gui_state, no screenshot", name, fmt_ms(lm), fmt_ms(p95(w["lsm_noshot_ms"])),
            "pyatspi full walk", fmt_ms(pm), fmt_ms(p95(w["peer_walk_ms"])), faster(lm, pm),
            f"≥{T_WALK_SPEEDUP:g}x faster", pm / lm >= T_WALK_SPEEDUP)
    for key in WALK_WINDOWS:
        w = walks[key]
        combo = [a + b for a, b in zip(w["peer_walk_ms"], w["import_ms"])]
        ls, ln, pm = med(w["lsm_shot_ms"]), med(w["lsm_noshot_ms"]), med(combo)
        over = ls / ln
        row("gui_state + screenshot", key, fmt_ms(ls), fmt_ms(p95(w["lsm_shot_ms"])),
            "pyatspi full walk + `import -window`", fmt_ms(pm), fmt_ms(p95(combo)), faster(ls, pm),
            f"≤{T_SHOT_OVERHEAD:g}x of no screenshot: {over:.2f}x", over <= T_SHOT_OVERHEAD)
    for key in WALK_WINDOWS:
        w = walks[key]
        if not w["peer_pruned_ms"]:
            continue
        lm, pm = med(w["lsm_noshot_ms"]), med(w["peer_pruned_ms"])
        row("gui_state, no screenshot (ref.)", f"{key} (pyatspi keeps {int(med(w['peer_pruned_kept']))} nodes)",
            fmt_ms(lm), fmt_ms(p95(w["lsm_noshot_ms"])), "pyatspi walk pruned like lsm", fmt_ms(pm),
            fmt_ms(p95(w["peer_pruned_ms"])), faster(lm, pm), "—", None)
    for key in WALK_WINDOWS:
        w = walks[key]
        lm, pm = med(w["lsm_shot_only_ms"]), med(w["import_ms"])
        size = f"{key} (PNG: lsm {w['lsm_png_bytes'] / 1024:.0f} KiB, import {w['import_png_bytes'] / 1024:.0f} KiB)"
        row("screenshot only (ref.): gui_state, `include_elements` false", size, fmt_ms(lm),
            fmt_ms(p95(w["lsm_shot_only_ms"])), "`import -window <id> png:-`", fmt_ms(pm),
            fmt_ms(p95(w["import_ms"])), faster(lm, pm), "—", None)

    c = data["click"]
    le, xe, be = (med(c[m]["effect_ms"]) for m in ("lsm", "xdotool", "bare"))
    btn = 'test app "Press me"'
    row("element click → effect", btn, fmt_ms(le), fmt_ms(p95(c["lsm"]["effect_ms"])),
        "`xdotool mousemove X Y click 1`", fmt_ms(xe), fmt_ms(p95(c["xdotool"]["effect_ms"])), faster(le, xe),
        f"far below xdotool (≥{1 / T_CLICK_VS_XDOTOOL:g}x faster)", le <= T_CLICK_VS_XDOTOOL * xe)
    row("element click → effect", btn, fmt_ms(le), fmt_ms(p95(c["lsm"]["effect_ms"])),
        "bare pyatspi `doAction` (in-process)", fmt_ms(be), fmt_ms(p95(c["bare"]["effect_ms"])), faster(le, be),
        f"within {T_CLICK_VS_BARE:g}x of bare AT-SPI", le <= T_CLICK_VS_BARE * be)
    lr, br = med(c["lsm"]["return_ms"]), med(c["bare"]["return_ms"])
    row("gui_action round trip, observe none (ref.)", btn, fmt_ms(lr), fmt_ms(p95(c["lsm"]["return_ms"])),
        "`doAction` call returns", fmt_ms(br), fmt_ms(p95(c["bare"]["return_ms"])), faster(lr, br), "—", None)

    for key in (*WALK_WINDOWS, CLICK_APP):
        o = data["outline"][key]
        before = ELEMENTS_JSON_BEFORE.get(key)
        if before:
            ratio = o["elements_json_bytes"] / before
            row("JSON `elements` vs before the compact format",
                f"{key} ({o['element_count']} elements; whole structured output {o['structured_json_bytes']:,} B)",
                f"{o['elements_json_bytes']:,} B", "–", "JSON `elements` at git df73557", f"{before:,} B", "–",
                f"{ratio:.2f} of it", f"≤ {T_JSON_SHRINK:g}", ratio <= T_JSON_SHRINK)
        ratio = o["outline_bytes"] / o["elements_json_bytes"]
        row("text outline vs JSON `elements` (ref.)", f"{key} ({o['element_count']} elements)",
            f"{o['outline_bytes']:,} B", "–", "JSON `elements` (compact)", f"{o['elements_json_bytes']:,} B", "–",
            f"{ratio:.2f} of it", "—", None)

    size = data["tools_list_bytes"]
    row("tools/list result (sent to the model every turn)", "3 tools with input and output schemas",
        f"{size:,} B", "–", "", "", "", "", f"≤ {T_TOOLS_LIST_BYTES:,} B", size <= T_TOOLS_LIST_BYTES)

    hwm = data["memory"]["VmHWM"] / 1024
    row("peak RSS (VmHWM)", "`lsm serve`, whole run", f"{hwm:.1f} MiB", "–", "", "", "", "",
        f"< {T_PEAK_RSS_MIB:g} MiB", hwm < T_PEAK_RSS_MIB)
    return "\n".join(lines), rows


def render(data: dict, table: str) -> str:
    mi = data["machine"]
    c = data["click"]
    la0, la1 = data.get("loadavg_start", "?"), data.get("loadavg_end", "?")
    out = [
        f"### lsm benchmark, {data['date']}",
        "",
        f"{mi['nproc']} CPUs ({mi['cpu']}), {mi['mem_gib']} GiB, Linux {mi['kernel']}; load average "
        f"{la0} at the start, {la1} at the end. {data['lsm_version']}. "
        f"{data['runs']} runs per line ({'short' if data['short'] else 'full'} mode), median and p95. "
        f"lsm through a minimal JSON-RPC client over stdio (`max_elements` {STATE_ARGS['max_elements']}, "
        f"`max_depth` {STATE_ARGS['max_depth']}; MCP ping round trip {fmt_ms(med(data['ping_ms']))}, "
        f"through the official Python SDK {fmt_ms(med(data['sdk_ping_ms']))}); "
        f"pyatspi {data.get('pyatspi', '?')} in one persistent system-python process, timed inside it.",
        "",
        table,
        "",
        "Effects are the test app's own event timestamps (microseconds), from the moment the request "
        f"was sent; the same events as seen by the benchmark's file poll: lsm {fmt_ms(med(c['lsm']['seen_ms']))}, "
        f"xdotool {fmt_ms(med(c['xdotool']['seen_ms']))} (after the xdotool process exits), "
        f"bare {fmt_ms(med(c['bare']['seen_ms']))}. "
        "`lsm serve` resident set after each phase: "
        + ", ".join(f"{k} {v['VmRSS'] / 1024:.1f} MiB" for k, v in data["memory_phases"].items()) + ".",
    ]
    for key in WALK_WINDOWS:
        w = data["walks"][key]
        if w["truncated"]:
            out += ["", f"lsm reported `truncated` on {key} in {len(w['truncated'])} of {data['runs']} runs: "
                        f"{w['truncated'][0]}"]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="5 runs per line (unless --runs)")
    ap.add_argument("--runs", type=int, help="runs per line (default 20, 5 with --short)")
    ap.add_argument("--display", default=os.environ.get("LSM_BENCH_DISPLAY", ":90"),
                    help="X display of the benchmark desktop (env LSM_BENCH_DISPLAY, default :90)")
    ap.add_argument("--dir", default=os.environ.get("LSM_BENCH_DIR", "/tmp/lsm-bench"),
                    help="directory of the benchmark desktop (env LSM_BENCH_DIR, default /tmp/lsm-bench)")
    ap.add_argument("--keep-desktop", action="store_true", help="leave the desktop running at the end")
    ap.add_argument("--out", default=str(OUT_DIR), help="output directory (default target/bench)")
    args = ap.parse_args()
    runs = args.runs or (5 if args.short else 20)
    if runs < 1:
        ap.error("--runs must be at least 1")

    binary = lsm_bin()
    if not os.access(binary, os.X_OK):
        print(f"bench: {binary} is missing: run `cargo build --release -p lsm` (or set LSM_BIN)", file=sys.stderr)
        return 2
    for tool in ("xdotool", "import", SYSTEM_PYTHON):
        if subprocess.run(["sh", "-c", f"command -v {shlex.quote(tool)}"], capture_output=True).returncode:
            print(f"bench: {tool} is missing (tests/bed/desktop.sh install)", file=sys.stderr)
            return 2

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    bed = Bed(args.display, args.dir, out_dir / "bed.log")
    peer = None
    session = None
    t_start = time.monotonic()

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    data: dict = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(), "lsm_version": lsm_version(binary), "lsm_bin": binary,
        "runs": runs, "short": args.short, "state_args": STATE_ARGS, "loadavg_start": loadavg(),
    }
    try:
        log(f"desktop up on {args.display} ({args.dir}): {APPS}")
        env = bed.up()
        pids = {k: bed.pid(k) for k in (*WALK_WINDOWS, CLICK_APP)}
        events = EventLog(env["LSM_TESTAPP_LOG"])
        data["pyatspi"] = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "python3-pyatspi"], capture_output=True, text=True
        ).stdout.strip() or "?"

        session = LeanSession(env, timeout=120)
        spid = session.raw.proc.pid
        data["server_pid"] = spid
        data["memory_start"] = proc_status(spid)
        peer = Peer(env, out_dir / "atspi-worker.stderr.log")

        wins = session.call_ok("gui_list", {})["windows"]
        by_pid = {w.get("pid"): w for w in wins}
        missing = [k for k, p in pids.items() if p not in by_pid]
        if missing:
            raise BenchError(f"gui_list has no window of {missing}: {[(w['title'], w.get('pid')) for w in wins]}")

        data["tools_list_bytes"] = session.tools_list_bytes()
        phases = data["memory_phases"] = {"start": data["memory_start"]}
        data["ping_ms"] = measure_ping(session, runs)
        data["sdk_ping_ms"] = sdk_ping_ms(env, runs)
        data["walks"] = {}
        pruned = not args.short
        for key in WALK_WINDOWS:
            log(f"gui_state vs pyatspi on {key}, {runs} runs")
            data["walks"][key] = measure_walks(session, peer, by_pid[pids[key]], pids[key], runs, key, pruned)
            phases[key] = proc_status(spid)
        log(f"click to effect on the test app, {runs} runs")
        data["click"] = measure_clicks(session, peer, by_pid[pids[CLICK_APP]], pids[CLICK_APP], runs, events)
        phases["clicks"] = proc_status(spid)

        # outline vs JSON for the test app too (the walk windows come from measure_walks)
        r, _ = call(session, "gui_state", {"window_id": by_pid[pids[CLICK_APP]]["window_id"], "screenshot": False,
                                           **STATE_ARGS})
        sc = r.structured_content
        data["outline"] = {k: {f: data["walks"][k][f] for f in ("outline_bytes", "elements_json_bytes",
                                                                  "element_count", "structured_json_bytes")}
                           for k in WALK_WINDOWS}
        data["outline"][CLICK_APP] = {
            "outline_bytes": len(r.content[0].text.encode()), "elements_json_bytes": json_bytes(sc["elements"]),
            "element_count": sc.get("element_count"), "structured_json_bytes": json_bytes(sc)}
        data["memory"] = proc_status(spid)
        data["loadavg_end"] = loadavg()
        data["runtime_s"] = round(time.monotonic() - t_start, 1)

        table, rows = build_table(data)
        data["table"] = rows
        md = render(data, table)
        (out_dir / "bench.md").write_text(md)
        (out_dir / "bench.json").write_text(json.dumps(data, indent=1, ensure_ascii=False))
        print(md, end="")
        misses = [f"{r['measure']} / {r['window']}" for r in rows if r["pass"] is False]
        print(f"\nbench: {len(rows)} lines, {sum(1 for r in rows if r['pass'])} targets met, "
              f"{len(misses)} missed; {data['runtime_s']}s; written to {out_dir}/bench.md and bench.json")
        return 0
    except BenchError as e:
        print(f"bench: ERROR: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(f"bench: interrupted ({e})", file=sys.stderr)
        return 130
    finally:
        if session is not None:
            session.close()
        if peer is not None:
            peer.close()
        if not args.keep_desktop:
            bed.down()


if __name__ == "__main__":
    sys.exit(main())
