#!/usr/bin/env python3
"""A 14-step task on the GTK3 test app, gtk3-widget-factory and a dialog of the step app
(tests/apps/lsm_stepapp.py), done two ways through the
official Python MCP client (tests/lib/lsm_mcp.LsmSession), on the X11 test desktop:

- new: `gui_state` once per window, then only `gui_action`, each with the previous result's
  `state_id` (elements found by their stable ids and in the change lists);
- old: `gui_action` with observe "none", then `gui_state` after every action (a menu that is
  not drawn yet is observed again until it is, as a client would have to; a dialog that opened
  is found with `gui_list`, and `gui_list` follows the action that closes it).

Every step's effect is checked through AT-SPI (tests/lib/atspi_probe.py), outside the timing.
Prints calls, bytes returned (structured JSON and text) and wall time of both, and the ratios
(goal: at most half the bytes and at most 1.0x the time: issue 22). Needs the desktop bed up
(tests/bed/desktop.sh up).

    .venv/bin/python bench/step.py
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lib"))

from atspi_ground import run_probe  # noqa: E402
from lsm_mcp import LsmSession, bed_env, text_of  # noqa: E402

TESTAPP = "lsm_testapp.py"
FACTORY = "gtk3-widget-factory"
STEPAPP = "lsm_stepapp.py"
STEP_TITLE = "lsm step bench"
DIALOG_TITLE = "Step dialog"
STEP_PID = [0]  # the step app this run started
# Three runs each way; the best of each way is reported (the desktop's own jitter, such as the
# window manager's focus delay, is tens of milliseconds either way). In the order old new new old
# old new, so that drift of the desktop over the runs weighs on both ways alike; the applications
# are started afresh before each run (see `fresh_apps`).
ORDER = ("old", "new", "new", "old", "old", "new")


class Counter:
    """Calls, bytes and time of one way of doing the task."""

    def __init__(self, s: LsmSession):
        self.s, self.calls, self.json_bytes, self.text_bytes, self.seconds = s, 0, 0, 0, 0.0
        self.log: list[str] = []
        self.step_ms: list[float] = []  # each step's calls, in order

    @contextlib.contextmanager
    def step(self):
        """Counts the time of the calls made inside the block as one step."""
        began = self.seconds
        yield
        self.step_ms.append((self.seconds - began) * 1000)

    def call(self, name: str, args: dict) -> dict:
        t0 = time.perf_counter()
        r = self.s.call(name, args)
        took = time.perf_counter() - t0
        self.seconds += took
        self.log.append(f"{name} {took * 1000:.0f}")
        self.calls += 1
        self.json_bytes += len(json.dumps(r.structured_content or {}, ensure_ascii=False).encode())
        self.text_bytes += len(text_of(r).encode())
        if r.is_error:
            raise RuntimeError(f"{name} failed: {text_of(r)[:400]}")
        return r.structured_content


def probe_node(app: str, name: str, **kw):
    if app == STEPAPP:  # by pid: another copy of the step app may run
        return run_probe(pid=STEP_PID[0], find=name, **kw)
    return run_probe(app, find=name, **kw)


def checked(app: str, name: str, state: str = "checked") -> tuple:
    """Which of the enabled nodes of that name have the state."""
    nodes = run_probe(app, find=name, all=True) or []
    return tuple(state in n["states"] for n in nodes if "sensitive" in n["states"])


def wait(fn, what: str, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"not seen through AT-SPI: {what}")


def find(elements: list[dict], name: str, role: str | None = None) -> dict:
    """The first element of that name (and role) that takes input (gtk3-widget-factory also shows
    disabled copies of its controls)."""
    for e in elements:
        if e.get("name", "") == name and (role is None or e["role"] == role) and "disabled" not in e.get("states", []):
            return e
    raise AssertionError(f"no element {name!r} among {[e.get('name', '') for e in elements][:60]}")


def steps(tag: str):
    """(window, element name, role, action, check) per step; check(before) runs after it."""
    text = f"{tag} {int(time.time()) % 100000}"
    vol = 30 + int(time.time()) % 40
    return [
        ("app", "Enable feature", "check_box", {"type": "click"},
         lambda: checked(TESTAPP, "Enable feature"), lambda b, a: a != b),
        ("app", "Name entry", None, {"type": "type", "text": text},
         lambda: None, lambda b, a: (probe_node(TESTAPP, "Name entry") or {}).get("text") == text),
        ("app", "Volume", None, {"type": "set_value", "value": str(vol)},
         lambda: None, lambda b, a: (probe_node(TESTAPP, "Volume: " + str(vol)) is not None)),
        ("app", "Context area", None, {"type": "right_click"},
         lambda: None, lambda b, a: "showing" in (probe_node(TESTAPP, "Copy item") or {}).get("states", [])),
        ("app", "Copy item", None, {"type": "click"},
         lambda: None, lambda b, a: probe_node(TESTAPP, "Menu: Copy item") is not None),
        ("app", "Press me", "push_button", {"type": "click"},
         lambda: (probe_node(TESTAPP, "Pressed:", match="prefix") or {}).get("name"),
         lambda b, a: (probe_node(TESTAPP, "Pressed:", match="prefix") or {}).get("name") != b),
        ("factory", "togglebutton", "toggle_button", {"type": "click"},
         lambda: checked(FACTORY, "togglebutton"), lambda b, a: checked(FACTORY, "togglebutton") != b),
        ("factory", "checkbutton", "check_box", {"type": "click"},
         lambda: checked(FACTORY, "checkbutton"), lambda b, a: checked(FACTORY, "checkbutton") != b),
        ("factory", "togglebutton", "toggle_button", {"type": "click"},
         lambda: checked(FACTORY, "togglebutton"), lambda b, a: checked(FACTORY, "togglebutton") != b),
        ("factory", "checkbutton", "check_box", {"type": "click"},
         lambda: checked(FACTORY, "checkbutton"), lambda b, a: checked(FACTORY, "checkbutton") != b),
        ("factory", "page 2", "page_tab", {"type": "click"},
         lambda: checked(FACTORY, "page 2", "selected"), lambda b, a: checked(FACTORY, "page 2", "selected") != b),
        ("factory", "page 1", "page_tab", {"type": "click"},
         lambda: checked(FACTORY, "page 1", "selected"), lambda b, a: checked(FACTORY, "page 1", "selected") != b),
        ("step", "Open dialog", "push_button", {"type": "click"},
         lambda: None, lambda b, a: probe_node(STEPAPP, "Close dialog") is not None),
        ("dialog", "Close dialog", "push_button", {"type": "click"},
         lambda: None, lambda b, a: probe_node(STEPAPP, "Close dialog") is None),
    ]


def windows(c: Counter) -> dict[str, str]:
    listed = c.s.call_ok("gui_list", {})["windows"]
    by_app = {}
    for w in listed:
        if w["title"] == "lsm test app":
            by_app["app"] = w["window_id"]
        elif w.get("app_id") == FACTORY:
            by_app["factory"] = w["window_id"]
        elif w["title"] == STEP_TITLE:
            by_app["step"] = w["window_id"]
    assert set(by_app) == {"app", "factory", "step"}, listed
    return by_app


def run_new(c: Counter, wins: dict[str, str], tag: str) -> None:
    known: dict[str, tuple[str, list[dict]]] = {}
    for key, wid in wins.items():
        st = c.call("gui_state", {"window_id": wid, "screenshot": False})
        known[key] = (st["state_id"], list(st["elements"]))
    for key, name, role, action, before_fn, check in steps(tag):
        state_id, elements = known[key]
        before = before_fn()
        el = find(elements, name, role)
        with c.step():
            out = c.call("gui_action", {"window_id": wins[key], "state_id": state_id,
                                        "actions": [{**action, "element_id": el["id"]}]})
        assert out["results"][0].get("effect") == "confirmed", out["results"]
        print(f"  new: {name}: settled {out.get('settled')} in {out.get('settle_ms')} ms, "
              f"{out['results'][0].get('method')}, {out['results'][0].get('evidence', '')[:60]}", file=sys.stderr)
        changes = out.get("changes") or {}
        by_id = {e["id"]: e for e in elements}
        for e in changes.get("added", []):
            by_id[e["id"]] = e
        for cid in changes.get("removed", []):
            by_id.pop(cid, None)
        for ch in changes.get("changed", []):
            if ch["id"] in by_id:
                by_id[ch["id"]] = {**by_id[ch["id"]], "name": ch["name"]}
        if out.get("state_id"):
            known[key] = (out["state_id"], list(by_id.values()))
        # A dialog that opened comes observed, with its own state_id.
        for w in changes.get("opened", []):
            if w["title"] == DIALOG_TITLE and w.get("state_id"):
                wins["dialog"] = w["window_id"]
                known["dialog"] = (w["state_id"], w["elements"])
        wait(lambda: check(before, None), f"step {name}")


def run_old(c: Counter, wins: dict[str, str], tag: str) -> None:
    known: dict[str, dict] = {}
    for key, wid in wins.items():
        known[key] = c.call("gui_state", {"window_id": wid, "screenshot": False})
    for key, name, role, action, before_fn, check in steps(tag):
        before = before_fn()
        with c.step():
            if key not in wins:  # the dialog the previous step opened: find it, then observe it
                listed = c.call("gui_list", {})["windows"]
                wins[key] = next(w["window_id"] for w in listed if w["title"] == DIALOG_TITLE)
                known[key] = c.call("gui_state", {"window_id": wins[key], "screenshot": False})
            st = known[key]
            deadline = time.monotonic() + 5
            while True:
                try:
                    el = find(st["elements"], name, role)
                    break
                except AssertionError:
                    if time.monotonic() > deadline:
                        raise
                    st = c.call("gui_state", {"window_id": wins[key], "screenshot": False})
            c.call("gui_action", {"window_id": wins[key], "state_id": st["state_id"],
                                  "actions": [{**action, "element_id": el["id"]}], "observe": "none"})
            if key == "dialog":  # it closed: the client lists the windows again
                wait(lambda: check(before, None), f"step {name}")
                c.call("gui_list", {})
            else:
                known[key] = c.call("gui_state", {"window_id": wins[key], "screenshot": False})
        wait(lambda: check(before, None), f"step {name}")


def main() -> int:
    env = bed_env()
    if env is None:
        print("the desktop bed is not up: tests/bed/desktop.sh up", file=sys.stderr)
        return 2
    stepapp = subprocess.Popen(["/usr/bin/python3", str(REPO / "tests/apps/lsm_stepapp.py"), STEP_TITLE],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    STEP_PID[0] = stepapp.pid
    results = {}
    env["LSM_WEB"] = "off"
    try:
        run_both(env, results)
    finally:
        stepapp.kill()
        stepapp.wait(10)
    report(results)
    return 0


def fresh_apps(env: dict) -> None:
    """The test app and the widget factory started afresh. GTK 3 applications grow slower to
    answer with every AT-SPI client they have served (the bench's own probes among them: over one
    bench the same steps took up to twice as long from one run to another), so each run starts
    with fresh ones and neither way gets the fresher applications."""
    for key in ("testapp", FACTORY):
        subprocess.run(["bash", str(REPO / "tests/bed/desktop.sh"), "stop-app", key], env=env,
                       capture_output=True, timeout=60)
        subprocess.run(["bash", str(REPO / "tests/bed/desktop.sh"), "ensure-app", key], env=env,
                       capture_output=True, timeout=120, check=True)


def wait_for_windows(s: LsmSession) -> None:
    """Until every window of the task is listed and its application answers AT-SPI."""
    deadline = time.monotonic() + 30
    while True:
        try:
            windows(Counter(s))
            if all(probe_node(app, name) is not None
                   for app, name in ((STEPAPP, "Open dialog"), (TESTAPP, "Press me"), (FACTORY, "togglebutton"))):
                return
        except AssertionError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the task's windows did not appear")
        time.sleep(0.3)


def run_both(env: dict, results: dict) -> None:
    with LsmSession("stdio", env=env) as s:
        ways = {"old": run_old, "new": run_new}
        for way in ORDER:
            fresh_apps(env)
            wait_for_windows(s)
            fn = ways[way]
            c = Counter(s)
            wins = windows(c)
            fn(c, wins, way)
            results.setdefault(way, []).append(c)
            print(f"  {way}: " + ", ".join(c.log), file=sys.stderr)


def step_table(results: dict) -> str:
    """Each step's median over the runs of each way: where the time goes, with the desktop's
    run-to-run jitter (the window manager's focus, a busy application) mostly left out."""
    names = [f"{key}: {name}" for key, name, *_ in steps("")]
    med = {way: [statistics.median(c.step_ms[i] for c in runs) for i in range(len(names))]
           for way, runs in results.items()}
    rows = ["| step | old way | new way |", "|---|---:|---:|"]
    rows += [f"| {n} | {o:.0f} ms | {w:.0f} ms |" for n, o, w in zip(names, med["old"], med["new"])]
    so, sn = sum(med["old"]), sum(med["new"])
    rows.append(f"| all steps (sum of medians) | {so:.0f} ms | {sn:.0f} ms ({sn / so:.2f}x) |")
    rows.append("")
    rows.append("Each step's median over the runs of each way. The old way lists and observes the dialog at "
                "the start of the dialog's step; the new way has it from the step that opened it.")
    return "\n".join(rows)


def report(results: dict) -> None:
    steps_md = step_table(results)
    old, new = (min(results[w], key=lambda c: c.seconds) for w in ("old", "new"))
    rows = [
        "| way | calls | structured bytes | text bytes | wall time |",
        "|---|---:|---:|---:|---:|",
        f"| gui_state after every action | {old.calls} | {old.json_bytes:,} | {old.text_bytes:,} | {old.seconds * 1000:.0f} ms |",
        f"| gui_state once, then gui_action with its state_id | {new.calls} | {new.json_bytes:,} | {new.text_bytes:,} | {new.seconds * 1000:.0f} ms |",
        f"| new / old | {new.calls / old.calls:.2f} | {new.json_bytes / old.json_bytes:.2f} (goal <= 0.5) | "
        f"{new.text_bytes / old.text_bytes:.2f} | {new.seconds / old.seconds:.2f} (goal <= 1.0) |",
    ]
    table = "\n".join(rows)
    print(table)
    print()
    print(steps_md)
    print("14 steps (test app: check box, type, set_value, right-click menu and its item, a button; "
          "gtk3-widget-factory: a toggle button and a check box, each twice, tab page 2 and back to page 1; step app: "
          "open a dialog and close it with its button), each effect checked through AT-SPI outside the timing; "
          "best of three runs each way (in the order old new new old old new, the test app and the widget factory started afresh before each run), "
          "through the official Python MCP SDK over stdio.")
    out = REPO / "target" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "step.md").write_text(table + "\n\n" + steps_md + "\n")


if __name__ == "__main__":
    sys.exit(main())
