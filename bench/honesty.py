#!/usr/bin/env python3
"""The honesty benchmark (issue 22): every action's reported effect against the truth.

Real applications across toolkits that no test of the project used before issue 22: galculator
and zenity (GTK 3), gnome-text-editor and GNOME Font Viewer (GTK 4), lxtask (GTK 2, gail),
FeatherPad and SpeedCrunch (Qt 5), Qt's spinboxes example (Qt 5), KCalc (KDE Frameworks: also
its KConfigDialog) and Wine's notepad (Win32, through lsm.exe under Wine), plus gpicview (GTK 2:
its pixels-only rotate button; the e2e suite uses it too, so it is not counted among the new
ones; a galculator row found a lost first click, now also an e2e test). Each `gui_action` result's
`effect` (`confirmed` / `no_change` / `unverifiable`, or an error) is compared with what
happened, read outside lsm and never from lsm's answers: AT-SPI read back in a separate process
(tests/lib/atspi_probe.py), the files an application wrote (a document saved by ctrl+s, a
picture, a font installed, FeatherPad's fp.conf and KCalc's kcalcrc written when their settings
dialogs close), what a zenity dialog printed and its exit status, the X window list (wmctrl,
xdotool), the window's pixels (ImageMagick `import`). A truth that may take a moment to show is waited for,
bounded (`within`); a truth known only later (a setting saved on Close) amends the row.

Kinds of action: element clicks on buttons that open and close dialogs (Qt's deferred press),
two actions in one call ([element, coordinates], [same element, same element], on GTK 4 and
others), set_value on spin boxes and a slider (also a disabled one, and to the value it has),
key combos that save a file and that have no binding, a save dialog that closes after its button,
a toolbar button that changes only pixels (GTK 2), list and tree items (judged by what the
application did: the document switched, the file name taken, the page shown, what zenity
printed), typing (also into a read-only text), check boxes, menus, page tabs, labels, disabled
buttons, already selected items.

Prints the matrix reported x truth per application and in total, and every false claim (a
`confirmed` for what did not happen, a `no_change` for what did) with lsm's evidence. Goal: 0
false `confirmed`, 0 false `no_change`, `unverifiable` at most 10 %. Exit 1 only on a harness
error (an application that did not start, a broken session); with --strict also on a false
claim or too much `unverifiable`. The matrix also goes to target/bench/honesty.md.

    .venv/bin/python bench/honesty.py [--strict] [--only APP] [--keep] [--no-wine]

Runs on a desktop of its own (tests/bed/desktop.sh on :92, directory /tmp/lsm-honesty). The
Wine part needs lsm.exe and bcryptprimitives.dll from `tests/bed/wine.sh build` (in
$LSM_WIN_BIN or /tmp/lsm-winebed/bin; nothing is built here); --no-wine leaves it out.
LSM_HONESTY_DEBUG=1 prints every action's truth and answer as it goes; LSM_BENCH_LOG sets the Linux server's
LSM_LOG (default "warn"; e.g. "lsm_core=trace,lsm_linux=trace" to see each settle and event).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lib"))

from atspi_ground import run_probe  # noqa: E402
from lsm_mcp import LsmSession, parse_env  # noqa: E402

DISPLAY = ":92"
BED_DIR = "/tmp/lsm-honesty"
QT_EXAMPLES = "/usr/lib/x86_64-linux-gnu/qt5/examples/widgets"
EFFECTS = ("confirmed", "no_change", "unverifiable", "error")


class Harness(Exception):
    """The benchmark itself failed (not lsm's honesty)."""


# ------------------------------------------------------------------ the desktop and its apps
def bed(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, LSM_BED_DISPLAY=DISPLAY, LSM_BED_DIR=BED_DIR, LSM_BED_APPS="xterm")
    return subprocess.run(["bash", str(REPO / "tests/bed/desktop.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def wm_titles() -> list[str]:
    out = subprocess.run(["wmctrl", "-l"], capture_output=True, text=True, timeout=10).stdout
    return [" ".join(line.split()[3:]) for line in out.splitlines()]


def wait(fn: Callable, timeout: float = 20.0, what: str = "condition", interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Harness(f"timed out waiting for {what}")
        time.sleep(interval)


def within(fn: Callable, timeout: float = 3.0, interval: float = 0.1) -> bool:
    """Whether `fn()` comes true within `timeout` (a truth that may take a moment to show)."""
    deadline = time.monotonic() + timeout
    while True:
        if fn():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)


class Apps:
    """Applications started on the benchmark's desktop, stopped at the end."""

    def __init__(self, home: Path):
        self.procs: list[subprocess.Popen] = []
        self.home = home

    def start(self, *cmd: str, env: dict | None = None, stdout=subprocess.DEVNULL) -> subprocess.Popen:
        e = dict(os.environ, HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"))
        e.update(env or {})
        p = subprocess.Popen(list(cmd), env=e, stdout=stdout, stderr=subprocess.DEVNULL, text=True,
                             start_new_session=True, cwd=self.home)
        self.procs.append(p)
        return p

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, 9)
                except OSError:
                    pass


def flat(app: str, **kw) -> list[dict]:
    return run_probe(app, flat=True, extents=False, timeout=20, **kw) or []


def window_pixels(title: str) -> bytes:
    """The pixels of the (first) top-level window with this title, as the X server has them."""
    out = subprocess.run(["wmctrl", "-l"], capture_output=True, text=True, timeout=10).stdout
    wid = [line.split()[0] for line in out.splitlines() if " ".join(line.split()[3:]) == title]
    if not wid:
        return b""
    return subprocess.run(["import", "-window", wid[0], "rgba:-"], capture_output=True, timeout=20).stdout


# ------------------------------------------------------------------ driving lsm, recording truth
class Run:
    def __init__(self, s: LsmSession):
        self.s = s
        self.rows: list[dict] = []  # one per action: app, label, effect, truth, evidence
        self.order_errors: list[str] = []
        self.notes: list[str] = []

    def window(self, title_part: str, timeout: float = 30) -> dict:
        def find():
            ws = self.s.call_ok("gui_list", {})["windows"]
            return next((w for w in ws if title_part in w["title"]), None)
        return wait(find, timeout, f"window {title_part!r} in gui_list")

    def observe(self, win: dict) -> dict:
        return self.s.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False,
                                            "max_depth": 20, "max_elements": 600})

    def element(self, st: dict, name: str, role: str | None = None, nth: int = 0) -> dict:
        found = [e for e in st["elements"] if e.get("name", "") == name and (role is None or e["role"] == role)]
        if len(found) <= nth:
            raise Harness(f"no element {name!r} ({role}) in {st['window']['title']!r}: "
                          f"{[(e['role'], e.get('name', '')) for e in st['elements']][:60]}")
        return found[nth]

    def act(self, app: str, label: str, st: dict, actions: list[dict],
            truth: Callable[[], list[bool]], settle_after: float = 0.3) -> dict | None:
        """One gui_action; `truth()` (read after it) says, per action, whether it happened."""
        r = self.s.call("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"],
                                       "actions": actions})
        time.sleep(settle_after)
        facts = truth()
        if os.environ.get("LSM_HONESTY_DEBUG"):
            sc = r.structured_content or {}
            print(f"  {app} / {label}: truth {facts}; lsm: "
                  f"{[(x.get('effect'), (x.get('evidence') or x.get('unverified') or '')[:90]) for x in sc.get('results', [])] or sc.get('error')}",
                  flush=True)
        if len(facts) != len(actions):
            raise Harness(f"{app} {label}: truth gave {len(facts)} answers for {len(actions)} actions")
        if r.is_error:
            err = (r.structured_content or {}).get("error", {})
            done = {d["index"]: d for d in (err.get("details") or {}).get("completed", [])}
            failed = (err.get("details") or {}).get("failed_index", 0)
            for i, a in enumerate(actions):
                d = done.get(i)
                effect = d.get("effect", "error") if d else "error"
                why = d.get("evidence") or d.get("unverified") if d else f"{err.get('code')}: {err.get('message', '')[:160]}"
                if i > failed:
                    effect, why = "error", "not run (an earlier action failed)"
                self.rows.append(dict(app=app, label=f"{label} [{i}] {a['type']}", effect=effect,
                                      truth=facts[i], evidence=why or ""))
            return None
        out = r.structured_content
        for i, a in enumerate(actions):
            res = next((x for x in out["results"] if x["index"] == i), None)
            if res is None:
                effect, why = "error", "not run: " + (out.get("stopped") or "")
            else:
                effect = res.get("effect") or "error"
                why = res.get("evidence") or res.get("unverified") or ""
            self.rows.append(dict(app=app, label=f"{label} [{i}] {a['type']}", effect=effect,
                                  truth=facts[i], evidence=why))
        return out

    last_elements: dict[str, list[dict]] = {}

    def mark(self) -> int:
        return len(self.rows)

    def amend(self, row: int, fact: bool, why: str) -> None:
        """A later reading of the truth for an earlier action (a setting saved when a dialog
        closed, a file written): the action happened only if this holds too."""
        r = self.rows[row]
        if r["truth"] and not fact:
            r["truth"] = False
            r["label"] += f" (later: {why})"


def fresh(run: Run, win: dict) -> dict:
    st = run.observe(win)
    run.last_elements[win["window_id"]] = st["elements"]
    return st


# ------------------------------------------------------------------ the applications
def text_of_role(app: str, role: str = "text", editable: bool | None = None, index: int = 0) -> str:
    nodes = [n for n in flat(app) if n["role"] == role
             and (editable is None or (("editable" in n["states"]) == editable))]
    return (nodes[index].get("text") or "") if len(nodes) > index else ""


def galculator(run: Run, apps: Apps):
    app = "galculator"
    apps.start("galculator")
    win = run.window("galculator")
    disp = lambda: text_of_role(app).strip()  # noqa: E731

    def toggles() -> dict:
        return {n["name"]: "checked" in n["states"] for n in flat(app) if n["role"] == "toggle button"}

    def step(label, names_or_points, truth_of):
        st = fresh(run, win)
        before, t0 = disp(), toggles()
        actions = []
        for k in names_or_points:
            if isinstance(k, tuple):
                e = run.element(st, k[1], "toggle_button")
                b = e["bounds"]
                actions.append({"type": "click", "x": b[0] + b[2] // 2, "y": b[1] + b[3] // 2})
            elif k.startswith("key:"):
                actions.append({"type": "key", "keys": k[4:]})
            elif k.startswith("type:"):
                actions.append({"type": "type", "text": k[5:]})
            else:
                actions.append({"type": "click", "element_id": run.element(st, k, "toggle_button")["id"]})
        def truth():
            after, t1 = disp(), toggles()
            facts = truth_of(before, after)
            # A galculator key is a toggle button: its own state flipping is the application's
            # visible answer too (a second click on a pressed key only releases it).
            keys = [k[1] if isinstance(k, tuple) else k for k in names_or_points]
            flipped = [k in t0 and t0.get(k) != t1.get(k) for k in keys]
            if os.environ.get("LSM_HONESTY_DEBUG"):
                print(f"  galculator {label}: display {before!r} -> {after!r}, flipped {flipped}")
            return [f or (fl and len(keys) == 1) for f, fl in zip(facts, flipped)]

        run.act(app, label, st, actions, truth)

    step("AC", ["AC"], lambda b, a: [a != b])
    step("7", ["7"], lambda b, a: [a != b])
    step("8 by id, 9 at its centre", ["8", ("xy", "9")], lambda b, a: [a.startswith(b + "8"), a == b + "89"])
    step("MR (disabled)", ["MR"], lambda b, a: [a != b])
    step("+/-", ["+/-"], lambda b, a: [a != b])
    step("C", ["C"], lambda b, a: [a != b])
    step("typed 42", ["type:42"], lambda b, a: [a != b])
    step("<- (backspace)", ["<-"], lambda b, a: [a != b])
    step("5 twice by id", ["5", "5"], lambda b, a: [a.startswith(b + "5"), a == b + "55"])
    step("AC", ["AC"], lambda b, a: [a != b])
    step("AC again", ["AC"], lambda b, a: [a != b])


def kcalc(run: Run, apps: Apps):
    app = "kcalc"
    apps.start("kcalc")
    win = run.window("KCalc")

    def disp() -> str:
        frames = [n for n in flat(app) if n["role"] == "frame"]
        shown = frames[1]["name"] if len(frames) > 1 else ""
        return shown.replace(",", "").replace(" ", "")  # thousands separators

    def step(label, keys, truth_of):
        st = fresh(run, win)
        before = disp()
        actions = []
        for k in keys:
            if isinstance(k, tuple):
                e = run.element(st, k[1], "push_button")
                b = e["bounds"]
                actions.append({"type": "click", "x": b[0] + b[2] // 2, "y": b[1] + b[3] // 2})
            elif k.startswith("key:"):
                actions.append({"type": "key", "keys": k[4:]})
            else:
                actions.append({"type": "click", "element_id": run.element(st, k, "push_button")["id"]})
        run.act(app, label, st, actions, lambda: truth_of(before, disp()), settle_after=0.5)

    step("AC", ["AC"], lambda b, a: [a != b])
    step("7", ["7"], lambda b, a: [a != b])
    step("8 by id, 9 at its centre", ["8", ("xy", "9")], lambda b, a: [a.startswith(b + "8"), a == b + "89"])
    step("5 twice by id", ["5", "5"], lambda b, a: [a.startswith(b + "5"), a == b + "55"])
    step("C", ["C"], lambda b, a: [a != b])
    step("C again", ["C"], lambda b, a: [a != b])
    step("key 3", ["key:3"], lambda b, a: [a != b])
    step("key F12 (no binding)", ["key:F12"], lambda b, a: [a != b])
    kcalc_settings(run, win, apps.home / ".config" / "kcalcrc")


def kcalc_settings(run: Run, kwin: dict, rc: Path):
    """KCalc's KConfigDialog (KDE Frameworks): its Apply enables on a change, a spin box and a
    check box judged by kcalcrc (written on Apply/OK), its page list, OK closes it."""
    app = "kcalc"

    def rc_text() -> str:
        return rc.read_text() if rc.exists() else ""

    def apply_enabled() -> bool:
        return any(n["role"] == "push button" and n["name"] == "Apply" and "enabled" in n["states"] for n in flat(app))

    st = fresh(run, kwin)
    run.act(app, "Settings menu", st, [{"type": "click", "element_id": run.element(st, "Settings", "menu_item")["id"]}],
            lambda: [within(lambda: showing(app, "Configure KCalc...", "menu item"), 1.0)])
    st = fresh(run, kwin)
    run.act(app, "Configure KCalc... item", st,
            [{"type": "click", "element_id": run.element(st, "Configure KCalc...", "menu_item")["id"]}],
            lambda: [within(lambda: any(t.startswith("Configure") for t in wm_titles()), 3.0)])
    dlg = run.window("Configure")
    dst = fresh(run, dlg)
    r0 = rc_text()
    run.act(app, "Apply (disabled: nothing changed)", dst,
            [{"type": "click", "element_id": run.element(dst, "Apply", "push_button")["id"]}],
            lambda: [rc_text() != r0])
    dst = fresh(run, dlg)
    digits = run.element(dst, "Maximum number of digits:", "spin_button")
    value = lambda: next(((n.get("value") or {}).get("current") for n in flat(app) if n["role"] == "spin button"  # noqa: E731
                          and n["name"] == "Maximum number of digits:"), None)
    run.act(app, "set_value 20 on maximum digits (spin box)", dst,
            [{"type": "set_value", "element_id": digits["id"], "value": "20"}],
            lambda: [value() == 20 and within(apply_enabled, 1.0)])
    row_digits = run.mark() - 1
    dst = fresh(run, dlg)
    title_box = lambda: next(("checked" in n["states"] for n in flat(app) if n["role"] == "check box"  # noqa: E731
                              and n["name"] == "Show result in window title"), None)
    run.act(app, "check box: result in the window title", dst,
            [{"type": "click", "element_id": run.element(dst, "Show result in window title", "check_box")["id"]}],
            lambda: [title_box() is True])
    row_title = run.mark() - 1
    dst = fresh(run, dlg)
    run.act(app, "page list: Font", dst, [{"type": "click", "element_id": run.element(dst, "Font", "list_item")["id"]}],
            lambda: [within(lambda: showing(app, "Button font:", "label"), 1.0)])
    dst = fresh(run, dlg)
    run.act(app, "page list: Font again (current)", dst,
            [{"type": "click", "element_id": run.element(dst, "Font", "list_item")["id"]}],
            lambda: [not showing(app, "Button font:", "label") or not any(t.startswith("Configure") for t in wm_titles())])
    dst = fresh(run, dlg)
    run.act(app, "OK (closes it)", dst, [{"type": "click", "element_id": run.element(dst, "OK", "push_button")["id"]}],
            lambda: [within(lambda: not any(t.startswith("Configure") for t in wm_titles()), 3.0)
                     and within(lambda: rc_text() != r0, 2.0)])
    text = rc_text().lower()  # KConfig writes the keys as the dialog names them
    if os.environ.get("LSM_HONESTY_DEBUG"):
        print("  kcalcrc:", text.replace("\n", " | "))
    run.amend(row_digits, "precision=20" in text, "kcalcrc has no precision=20")
    run.amend(row_title, "captionresult=true" in text, "kcalcrc has no captionresult=true")


def pixels_changed(before: bytes, after: bytes, min_pixels: int = 40) -> bool:
    """More than a caret's blink of the window's pixels differ (RGBA buffers of one window)."""
    if len(before) != len(after):
        return True
    n = 0
    for i in range(0, len(before), 4):
        if before[i:i + 3] != after[i:i + 3]:
            n += 1
            if n > min_pixels:
                return True
    return False


def visible_x_windows(classname: str) -> list[str]:
    """The application's mapped X windows (a GTK 2 popup menu is one of its own)."""
    return subprocess.run(["xdotool", "search", "--onlyvisible", "--classname", classname], capture_output=True,
                          text=True, timeout=10).stdout.split()


def showing(app: str, name: str, role: str) -> bool:
    return any(n["name"] == name and n["role"] == role and "showing" in n["states"] for n in flat(app))


def featherpad(run: Run, apps: Apps, tmp: Path):
    """FeatherPad (Qt 5): its side pane (a list whose click switches the document), its own file
    dialog (opened and closed by deferred Qt presses, a file picked in its view), typing and a
    ctrl+s judged by the file on disk, Preferences: check box, a page tab, spin boxes (one
    disabled), judged by what the application did and by the fp.conf it writes on Close."""
    app = "FeatherPad"
    docs = {n: apps.home / f"{n}.txt" for n in ("alpha", "beta", "gamma")}
    for n, f in docs.items():
        f.write_text(f"{n}\n")
    apps.start("featherpad", "--standalone", str(docs["alpha"]), str(docs["beta"]))
    win = run.window("alpha.txt")  # the first file is the current one

    def title() -> str:
        return next((t for t in wm_titles() if any(f"{n}.txt" in t for n in docs)), "")

    def gone(t: str, timeout: float = 3.0) -> bool:
        return within(lambda: t not in wm_titles(), timeout)

    def appears(t: str, timeout: float = 3.0) -> bool:
        return within(lambda: t in wm_titles(), timeout)

    def click(st, name, role, label, truth, **kw):
        run.act(app, label, st, [{"type": "click", "element_id": run.element(st, name, role)["id"]}], truth, **kw)

    def body() -> str:  # the editor of the document shown
        return next((n.get("text") or "" for n in flat(app) if n["role"] == "text" and "multi line" in n["states"]
                     and "editable" in n["states"] and "showing" in n["states"]), "")
    # The side pane: a list of the documents; an item click must switch the document (the title).
    st = fresh(run, win)
    click(st, "Side-Pane", "push_button", "Side-Pane button", lambda: [showing(app, "alpha.txt", "list item")])
    st = fresh(run, win)
    items = [e for e in st["elements"] if e["role"] == "list_item" and e.get("name") == "beta.txt"]
    if not items:
        raise Harness(f"no beta.txt in the side pane: {[(e['role'], e.get('name')) for e in st['elements']][:80]}")
    run.act(app, "side pane item beta.txt", st, [{"type": "click", "element_id": items[0]["id"]}],
            lambda: [within(lambda: "beta.txt" in title(), 1.0)])
    st = fresh(run, win)
    t0 = title()
    items = [e for e in st["elements"] if e["role"] == "list_item" and e.get("name") == "beta.txt"]
    run.act(app, "side pane item beta.txt again (current)", st, [{"type": "click", "element_id": items[0]["id"]}],
            lambda: [title() != t0])
    # Its own file dialog (the native one is asked for, Qt's widget dialog is what there is here).
    st = fresh(run, win)
    click(st, "Open", "push_button", "Open button (deferred Qt press)", lambda: [appears("Open file...")])
    dialog = run.window("Open file...")
    # The dialog lists the folder on its own after it opened: wait for that before acting.
    wait(lambda: any(n["name"] == "gamma.txt" and "showing" in n["states"] for n in flat(app)), 10,
         "gamma.txt listed in the file dialog")
    time.sleep(0.5)
    dst = fresh(run, dialog)
    name_field = lambda: next((n.get("text") or "" for n in flat(app) if n["role"] == "text"  # noqa: E731
                               and n["name"] == "File name:"), "")
    look_in = lambda: [(n["name"], n.get("text")) for n in flat(app) if n["role"] in ("combo box", "text")]  # noqa: E731
    l0 = look_in()
    click(dst, "Forward", "push_button", "dialog's Forward (disabled: no history)",
          lambda: [look_in() != l0 or "Open file..." not in wm_titles()])
    dst = fresh(run, dialog)
    cells = [e for e in dst["elements"] if e.get("name") == "gamma.txt"]
    if not cells:
        raise Harness(f"no gamma.txt in the file dialog: {[(e['role'], e.get('name')) for e in dst['elements']][:80]}")
    run.act(app, "file gamma.txt clicked in the view", dst, [{"type": "click", "element_id": cells[0]["id"]}],
            lambda: [name_field() == "gamma.txt"])
    dst = fresh(run, dialog)
    click(dst, "Open", "push_button", "dialog's Open (closes it)",
          lambda: [gone("Open file...") and within(lambda: "gamma.txt" in title())])
    # Typing and ctrl+s: the file on disk.
    st = fresh(run, win)
    run.act(app, "type", st, [{"type": "type", "text": "honest "}], lambda: ["honest" in body()])
    st = fresh(run, win)

    def saved() -> bool:
        return within(lambda: "honest" in docs["gamma"].read_text())
    run.act(app, "ctrl+s saves the file", st, [{"type": "key", "keys": "ctrl+s"}], lambda: [saved()])
    st = fresh(run, win)
    before, t0, disk = body(), title(), docs["gamma"].read_text()
    run.act(app, "key ctrl+shift+F11 (no binding)", st, [{"type": "key", "keys": "ctrl+shift+F11"}],
            lambda: [body() != before or title() != t0 or docs["gamma"].read_text() != disk])
    # Preferences, from the Options menu.
    st = fresh(run, win)
    click(st, "Options", "menu_item", "Options menu", lambda: [showing(app, "Preferences", "menu item")])
    st = fresh(run, win)
    click(st, "Preferences", "menu_item", "Preferences item", lambda: [appears("Preferences")])
    pref = run.window("Preferences")
    conf = apps.home / ".config" / "featherpad" / "fp.conf"

    def spin_values() -> list:
        return [(n.get("value") or {}).get("current") for n in flat(app) if n["role"] == "spin button"]
    pst = fresh(run, pref)
    spins = [e for e in pst["elements"] if e["role"] == "spin_button"]
    disabled = next((e for e in spins if "disabled" in e.get("states", [])), None)
    if disabled is not None:
        v0 = spin_values()
        run.act(app, "set_value on a disabled spin box (Qt takes it: the value is saved)", pst,
                [{"type": "set_value", "element_id": disabled["id"], "value": "900"}],
                lambda: [spin_values() != v0])
        row_disabled = run.mark() - 1
        pst = fresh(run, pref)
    status = lambda: any(n["role"] == "label" and (n["name"] or "").startswith("Position:") for n in flat(app))  # noqa: E731
    click(pst, "Show cursor position on status bar", "check_box", "check box: cursor position on the status bar",
          lambda: [status()])
    row_cursor = run.mark() - 1
    pst = fresh(run, pref)

    def pref_state() -> list:
        return [(n["role"], n["name"], "checked" in n["states"], (n.get("value") or {}).get("current"))
                for n in flat(app) if n["role"] in ("check box", "radio button", "spin button", "combo box")]
    s0 = pref_state()
    click(pst, "Tab position: ", "label", "a label clicked", lambda: [pref_state() != s0])
    pst = fresh(run, pref)
    wrap = lambda: next(("checked" in n["states"] for n in flat(app) if n["role"] == "check box"  # noqa: E731
                         and n["name"] == "Tab navigation wraps around"), None)
    s0, w0 = [x for x in pref_state() if x[1] != "Tab navigation wraps around"], wrap()
    run.act(app, "[a label, a check box] in one call", pst,
            [{"type": "click", "element_id": run.element(pst, "Tab position: ", "label")["id"]},
             {"type": "click", "element_id": run.element(pst, "Tab navigation wraps around", "check_box")["id"]}],
            lambda: [[x for x in pref_state() if x[1] != "Tab navigation wraps around"] != s0, wrap() != w0])
    row_wrap = run.mark() - 1
    pst = fresh(run, pref)
    tabs = [e for e in pst["elements"] if e["role"] == "page_tab" and "File" in e.get("name", "")]
    if not tabs:
        raise Harness(f"no File page tab: {[(e['role'], e.get('name')) for e in pst['elements'] if e['role'] == 'page_tab']}")
    recent = lambda: next(((n.get("value") or {}).get("current") for n in flat(app)  # noqa: E731
                           if n["role"] == "spin button" and n["name"] == "File Management"
                           and "showing" in n["states"]), None)
    run.act(app, "page tab File Management", pst, [{"type": "click", "element_id": tabs[0]["id"]}],
            lambda: [recent() is not None])
    pst = fresh(run, pref)
    spin = next((e for e in pst["elements"] if e["role"] == "spin_button" and e.get("name") == "File Management"
                 and "disabled" not in e.get("states", [])), None)
    if spin is None:
        raise Harness("no 'Number of recent files' spin box")
    run.act(app, "set_value 5 on recent files (spin box)", pst,
            [{"type": "set_value", "element_id": spin["id"], "value": "5"}], lambda: [recent() == 5])
    row_recent = run.mark() - 1
    pst = fresh(run, pref)
    click(pst, "Close", "push_button", "Preferences' Close (deferred Qt press)",
          lambda: [gone("Preferences") and within(conf.exists)])
    text = conf.read_text() if conf.exists() else ""
    if os.environ.get("LSM_HONESTY_DEBUG"):
        print("  fp.conf:", [ln for ln in text.splitlines() if ln.split("=")[0] in ("startSize", "showCursorPos", "recentFilesNumber")])
    run.amend(row_cursor, "showCursorPos=true" in text, "fp.conf has no showCursorPos=true")
    if disabled is not None:  # the start size is kept only where "remember the size" is off
        run.amend(row_disabled, "900" in next((ln for ln in text.splitlines() if ln.startswith("startSize=")), ""),
                  "fp.conf's startSize is not 900")
    run.amend(row_wrap, "tabWrapAround=true" in text, "fp.conf has no tabWrapAround=true")
    run.amend(row_recent, "recentFilesNumber=5" in text, "fp.conf has no recentFilesNumber=5")


def speedcrunch(run: Run, apps: Apps):
    """SpeedCrunch (Qt 5): its View menu shows the keypad; keypad buttons pressed by id and at
    their centre in one call (Qt defers an accessible press ~100 ms), the same key twice, typing,
    Return (the result in its read-only display), typing into that display, a key with no
    binding. Truth: the editor's and the display's text through AT-SPI."""
    app = "SpeedCrunch"
    apps.start("speedcrunch")
    win = run.window("SpeedCrunch")

    def texts() -> tuple[str, str]:
        nodes = flat(app)
        editor = next((n.get("text") or "" for n in nodes if n["role"] == "text" and "editable" in n["states"]), "")
        display = next((n.get("text") or "" for n in nodes if n["role"] == "text" and "read only" in n["states"]), "")
        return editor, display
    wait(lambda: any(n["role"] == "text" and "focused" in n["states"] for n in flat(app)), 20, "SpeedCrunch's editor")
    st = fresh(run, win)
    run.act(app, "View menu", st, [{"type": "click", "element_id": run.element(st, "View", "menu_item")["id"]}],
            lambda: [within(lambda: showing(app, "Keypad", "menu item"), 1.0)])
    st = fresh(run, win)
    run.act(app, "Keypad item", st, [{"type": "click", "element_id": run.element(st, "Keypad", "menu_item")["id"]}],
            lambda: [within(lambda: showing(app, "7", "push button"), 2.0)])
    # The item's accessible press leaves the View menu open (a pointer click would close it):
    # closed here, outside lsm, so that the next click is the keypad's and not the menu's close.
    if within(lambda: showing(app, "Keypad", "menu item"), 0.5):
        subprocess.run(["xdotool", "key", "Escape"], timeout=10)
        wait(lambda: not showing(app, "Keypad", "menu item"), 5, "the View menu closed")

    def keys(label: str, seq: list, truth_of):
        st = fresh(run, win)
        before = texts()[0]
        actions = []
        for k in seq:
            e = run.element(st, k[1] if isinstance(k, tuple) else k, "push_button")
            if isinstance(k, tuple):
                b = e["bounds"]
                actions.append({"type": "click", "x": b[0] + b[2] // 2, "y": b[1] + b[3] // 2})
            else:
                actions.append({"type": "click", "element_id": e["id"]})
        run.act(app, label, st, actions, lambda: truth_of(before, texts()[0]), settle_after=0.5)

    keys("9 by id, 1 at its centre", ["9", ("xy", "1")], lambda b, a: [a.startswith(b + "9"), a == b + "91"])
    keys("5 twice by id", ["5", "5"], lambda b, a: [a.startswith(b + "5"), a == b + "55"])
    keys("C clears", ["C"], lambda b, a: [a != b])
    st = fresh(run, win)
    editor = next(e for e in st["elements"] if e["role"] == "text" and "editable" in e.get("states", []))
    run.act(app, "type 6*7", st, [{"type": "type", "element_id": editor["id"], "text": "6*7"}],
            lambda: [texts()[0] == "6*7"])
    st = fresh(run, win)
    run.act(app, "key Return", st, [{"type": "key", "keys": "Return"}], lambda: [within(lambda: "42" in texts()[1], 1.0)])
    st = fresh(run, win)
    display = next((e for e in st["elements"] if e["role"] == "text" and "editable" not in e.get("states", [])), None)
    if display is not None:
        t0 = texts()
        run.act(app, "typing into the read-only display", st,
                [{"type": "type", "element_id": display["id"], "text": "zz"}], lambda: [texts() != t0])
        st = fresh(run, win)
    t0, w0 = texts(), wm_titles()
    run.act(app, "key ctrl+shift+F11 (no binding)", st, [{"type": "key", "keys": "ctrl+shift+F11"}],
            lambda: [texts() != t0 or wm_titles() != w0])


def text_editor(run: Run, apps: Apps, tmp: Path):
    app = "gnome-text-editor"
    notes = apps.home / "notes.txt"
    notes.write_text("")
    apps.start("gnome-text-editor", "--standalone", "--ignore-session", str(notes), env={"GSK_RENDERER": "cairo"})
    win = run.window("notes")
    body = lambda: "".join(n.get("text") or "" for n in flat(app) if n["role"] == "text"  # noqa: E731
                           and "multi line" in n["states"] and "editable" in n["states"])
    wait(lambda: any(n["role"] == "text" and "multi line" in n["states"] and "focused" in n["states"]
                     for n in flat(app)), 20, "the editor, focused, through AT-SPI")
    time.sleep(0.3)
    st = fresh(run, win)
    run.act(app, "type", st, [{"type": "type", "text": "gtk four"}], lambda: ["gtk four" in body()])
    st = fresh(run, win)
    run.act(app, "select all, delete", st, [{"type": "key", "keys": "ctrl+a"}, {"type": "key", "keys": "BackSpace"}],
            lambda: [body() == "", body() == ""])
    st = fresh(run, win)
    run.act(app, "type again", st, [{"type": "type", "text": "second line"}], lambda: ["second line" in body()])
    st = fresh(run, win)
    run.act(app, "ctrl+s saves the file", st, [{"type": "key", "keys": "ctrl+s"}],
            lambda: [within(lambda: "second line" in notes.read_text())])
    st = fresh(run, win)
    # Two actions in one call: the save's evidence must be its own, not the typing's.
    run.act(app, "[type, ctrl+s] in one call", st, [{"type": "type", "text": " more"}, {"type": "key", "keys": "ctrl+s"}],
            lambda: ["second line more" in body(), within(lambda: "second line more" in notes.read_text())])
    st = fresh(run, win)
    # One editor (an editable multi-line text) per open document.
    pages = lambda: len([n for n in flat(app) if n["role"] == "text" and "multi line" in n["states"]  # noqa: E731
                         and "editable" in n["states"]])
    titles_before = wm_titles()
    n0 = pages()
    run.act(app, "New tab button", st,
            [{"type": "click", "element_id": run.element(st, "New tab (Ctrl+T)", "push_button")["id"]}],
            lambda: [pages() != n0 or wm_titles() != titles_before])
    st = fresh(run, win)
    n1, titles_before = pages(), wm_titles()
    run.act(app, "ctrl+w closes the tab", st, [{"type": "key", "keys": "ctrl+w"}],
            lambda: [pages() != n1 or wm_titles() != titles_before])
    st = fresh(run, win)
    before, t0 = body(), wm_titles()
    run.act(app, "key F12 (no binding)", st, [{"type": "key", "keys": "F12"}],
            lambda: [body() != before or wm_titles() != t0])
    # Two clicks in one call must be two clicks, in order (GTK 4 emits `clicked` late).
    new_tab = lambda st: run.element(st, "New tab (Ctrl+T)", "push_button")  # noqa: E731
    st = fresh(run, win)
    n0 = pages()
    run.act(app, "New tab twice by id", st,
            [{"type": "click", "element_id": new_tab(st)["id"]}, {"type": "click", "element_id": new_tab(st)["id"]}],
            lambda: (lambda n: [n >= n0 + 1, n >= n0 + 2])(within(lambda: pages() >= n0 + 2, 1.5) and pages() or pages()),
            settle_after=0.5)
    st = fresh(run, win)
    n0 = pages()
    b = new_tab(st)["bounds"]
    run.act(app, "New tab by id, then at its centre", st,
            [{"type": "click", "element_id": new_tab(st)["id"]},
             {"type": "click", "x": b[0] + b[2] // 2, "y": b[1] + b[3] // 2}],
            lambda: (lambda n: [n >= n0 + 1, n >= n0 + 2])(within(lambda: pages() >= n0 + 2, 1.5) and pages() or pages()),
            settle_after=0.5)


def font_viewer(run: Run, apps: Apps):
    """GNOME Font Viewer (GTK 4): a font picked in its grid opens the font's page, Info, Install
    (the font file copied into the user's fonts: the disk), Install again (now done), Back.
    Truth: AT-SPI read back (the page's buttons), the files, the window's pixels."""
    app = "gnome-font-viewer"
    data = apps.home / ".local" / "share"
    apps.start("gnome-font-viewer", env={"GSK_RENDERER": "cairo", "XDG_DATA_HOME": str(data)})
    win = run.window("gnome-font-viewer")
    title = win["title"]

    def buttons() -> dict:
        return {n["name"]: n["states"] for n in flat(app) if n["role"] == "push button"}

    def installed() -> list:
        return sorted(str(p) for p in (data / "fonts").rglob("*") if p.is_file()) if (data / "fonts").exists() else []
    wait(lambda: sum(n["role"] == "table cell" for n in flat(app)) > 3, 30, "the font grid")
    time.sleep(0.5)
    st = fresh(run, win)
    cells = [e for e in st["elements"] if e["role"] == "table_cell"]
    if not cells:
        raise Harness(f"no font cell: {[(e['role'], e.get('name')) for e in st['elements']][:40]}")
    # The font's page: Info beside Install (or Installed, for a font the system has already).
    run.act(app, "a font in the grid", st, [{"type": "click", "element_id": cells[0]["id"]}],
            lambda: [within(lambda: "Info" in buttons(), 2.0)])
    st = fresh(run, win)
    px = window_pixels(title)
    run.act(app, "Info", st, [{"type": "click", "element_id": run.element(st, "Info", "push_button")["id"]}],
            lambda: [within(lambda: pixels_changed(px, window_pixels(title)), 2.0)])
    st = fresh(run, win)
    f0 = installed()
    install = next((e for e in st["elements"] if e["role"] == "push_button" and e.get("name") == "Install"), None)
    if install is None:
        run.notes.append("gnome-font-viewer: the grid's first font is installed already (its page says "
                         "Installed): no Install rows")
    else:
        run.act(app, "Install (copies the font file)", st, [{"type": "click", "element_id": install["id"]}],
                lambda: [within(lambda: installed() != f0, 5.0)])
        st = fresh(run, win)
    again = next((e for e in st["elements"] if e["role"] == "push_button" and (e.get("name") or "").startswith("Install")), None)
    if again is not None:
        f1, b1, px = installed(), buttons(), window_pixels(title)
        run.act(app, "Install again (done already)", st, [{"type": "click", "element_id": again["id"]}],
                lambda: [installed() != f1 or buttons() != b1 or pixels_changed(px, window_pixels(title))])
        st = fresh(run, win)
    back = next((e for e in st["elements"] if e["role"] == "push_button" and e["bounds"][0] < 60
                 and e["bounds"][1] < 60), None)
    if back is None:
        raise Harness(f"no back button: {[(e['role'], e.get('name'), e['bounds']) for e in st['elements'] if e['role'] == 'push_button']}")
    run.act(app, "Back to the grid", st, [{"type": "click", "element_id": back["id"]}],
            lambda: [within(lambda: "Info" not in buttons(), 2.0)])


def zenity(run: Run, apps: Apps):
    app = "zenity"

    def dialog(*args: str, title: str):
        p = apps.start("zenity", *args, f"--title={title}", stdout=subprocess.PIPE)
        return p, run.window(title)

    def result(p: subprocess.Popen) -> tuple[int | None, str]:
        try:
            out, _ = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            return None, ""
        return p.returncode, out.strip()

    # An entry: typed, then OK (zenity prints the text and exits).
    p, win = dialog("--entry", "--text=Your name", title="honest entry")
    st = fresh(run, win)
    entry = next(e for e in st["elements"] if e["role"] == "text" and "editable" in e.get("states", []))
    run.act(app, "entry typed", st, [{"type": "type", "element_id": entry["id"], "text": "Ada"}],
            lambda: ["Ada" in text_of_role(app, "text", editable=True)])
    st = fresh(run, win)
    label = next(e for e in st["elements"] if e["role"] == "label")
    run.act(app, "a label clicked", st, [{"type": "click", "element_id": label["id"]}],
            lambda: [p.poll() is not None])
    st = fresh(run, win)
    ok = next(e for e in st["elements"] if e["role"] == "push_button" and e.get("name") in ("OK", "_OK"))
    out = {}
    run.act(app, "OK", st, [{"type": "click", "element_id": ok["id"]}],
            lambda: [out.setdefault("r", result(p)) == (0, "Ada")])
    # An information box: its text clicked (nothing), then OK.
    p, win = dialog("--info", "--text=Read me", title="honest info")
    st = fresh(run, win)
    text = next((e for e in st["elements"] if e["role"] == "label" and "Read me" in e.get("name", "")), None)
    if text is not None:
        run.act(app, "info text clicked", st, [{"type": "click", "element_id": text["id"]}],
                lambda: [p.poll() is not None])
        st = fresh(run, win)
    ok = next(e for e in st["elements"] if e["role"] == "push_button" and e.get("name") in ("OK", "_OK"))
    run.act(app, "info OK", st, [{"type": "click", "element_id": ok["id"]}], lambda: [result(p)[0] == 0])
    # A question answered No (exit status 1).
    p, win = dialog("--question", "--text=Proceed?", title="honest question")
    st = fresh(run, win)
    no = next(e for e in st["elements"] if e["role"] == "push_button" and e.get("name") in ("No", "_No"))
    run.act(app, "No", st, [{"type": "click", "element_id": no["id"]}], lambda: [result(p)[0] == 1])
    # A scale: set_value, then OK prints it.
    p, win = dialog("--scale", "--value=10", "--min-value=0", "--max-value=100", "--text=Level", title="honest scale")
    st = fresh(run, win)
    slider = next(e for e in st["elements"] if e["role"] == "slider")
    value = lambda: next(((n.get("value") or {}).get("current") for n in flat(app) if n["role"] == "slider"), None)  # noqa: E731
    run.act(app, "slider set_value 55", st, [{"type": "set_value", "element_id": slider["id"], "value": "55"}],
            lambda: [value() == 55])
    st = fresh(run, win)
    ok = next(e for e in st["elements"] if e["role"] == "push_button" and e.get("name") in ("OK", "_OK"))
    run.act(app, "OK", st, [{"type": "click", "element_id": ok["id"]}], lambda: [result(p) == (0, "55")])
    # A list: an item clicked (selected), then OK prints it.
    p, win = dialog("--list", "--column=Fruit", "apple", "banana", "cherry", title="honest list")
    st = fresh(run, win)
    cells = [e for e in st["elements"] if e.get("name") == "banana"]
    if not cells:
        raise Harness(f"no banana in the list: {[(e['role'], e.get('name')) for e in st['elements']]}")
    sel = lambda: [n["name"] for n in flat(app) if "selected" in n["states"] and n["role"] == "table cell"]  # noqa: E731
    before = sel()
    run.act(app, "banana clicked", st, [{"type": "click", "element_id": cells[0]["id"]}],
            lambda: ["banana" in sel() and sel() != before])
    st = fresh(run, win)
    before = sel()
    run.act(app, "banana clicked again", st, [{"type": "click", "element_id": cells[0]["id"]}],
            lambda: [sel() != before])
    st = fresh(run, win)
    ok = next(e for e in st["elements"] if e["role"] == "push_button" and e.get("name") in ("OK", "_OK"))
    run.act(app, "OK", st, [{"type": "click", "element_id": ok["id"]}], lambda: [result(p) == (0, "banana")])


def zenity_more(run: Run, apps: Apps):
    """zenity (GTK 3): a save dialog (its OK disabled until a name is typed, then it closes and
    zenity prints the path) and a read-only text with a check box that enables OK."""
    app = "zenity"

    def dialog(*args: str, title: str):
        p = apps.start("zenity", *args, f"--title={title}", stdout=subprocess.PIPE)
        return p, run.window(title)

    def result(p: subprocess.Popen) -> tuple[int | None, str]:
        try:
            out, _ = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            return None, ""
        return p.returncode, out.strip()

    def still_there(p: subprocess.Popen, title: str) -> bool:
        time.sleep(0.5)
        return p.poll() is None and title in wm_titles()

    def ok_button(st: dict) -> dict:
        return next(e for e in st["elements"] if e["role"] == "push_button" and e.get("name") in ("OK", "_OK", "Save", "_Save"))

    target = apps.home / "zenity-saved.txt"
    p, win = dialog("--file-selection", "--save", f"--filename={apps.home}/", title="honest save")
    wait(lambda: any(n["role"] == "push button" and n["name"] in ("OK", "_OK") for n in flat(app)), 10, "the save dialog's OK")
    st = fresh(run, win)
    run.act(app, "save dialog: OK without a name (disabled)", st, [{"type": "click", "element_id": ok_button(st)["id"]}],
            lambda: [not still_there(p, "honest save")])
    st = fresh(run, win)
    field = next((e for e in st["elements"] if e["role"] == "text" and "editable" in e.get("states", [])), None)
    if field is None:
        raise Harness(f"no name field in zenity's save dialog: {[(e['role'], e.get('name')) for e in st['elements']]}")
    name_text = lambda: next((n.get("text") or "" for n in flat(app) if n["role"] == "text"  # noqa: E731
                              and "editable" in n["states"] and "showing" in n["states"]), "")
    run.act(app, "save dialog: name typed", st, [{"type": "type", "element_id": field["id"], "text": target.name}],
            lambda: [name_text() == target.name])
    st = fresh(run, win)
    out = {}
    run.act(app, "save dialog: OK (closes it)", st, [{"type": "click", "element_id": ok_button(st)["id"]}],
            lambda: [out.setdefault("r", result(p)) == (0, str(target)) and within(lambda: "honest save" not in wm_titles())])
    # A read-only text and a check box that must be checked before OK.
    terms = apps.home / "terms.txt"
    terms.write_text("Read these terms.\n")
    p, win = dialog("--text-info", f"--filename={terms}", "--checkbox=I read them", title="honest terms")
    st = fresh(run, win)
    ok = ok_button(st)
    run.act(app, "terms: OK before the check box (disabled)", st, [{"type": "click", "element_id": ok["id"]}],
            lambda: [not still_there(p, "honest terms")])
    st = fresh(run, win)
    view = next((e for e in st["elements"] if e["role"] == "text"), None)
    if view is None:
        raise Harness(f"no text view in zenity --text-info: {[(e['role'], e.get('name')) for e in st['elements']]}")
    shown = lambda: "".join(n.get("text") or "" for n in flat(app) if n["role"] == "text")  # noqa: E731
    t0 = shown()
    run.act(app, "terms: typing into the read-only text", st, [{"type": "type", "element_id": view["id"], "text": "xyz"}],
            lambda: [shown() != t0])
    st = fresh(run, win)
    ok_enabled = lambda: any(n["role"] == "push button" and n["name"] in ("OK", "_OK") and "sensitive" in n["states"]  # noqa: E731
                             for n in flat(app))
    run.act(app, "terms: check box", st,
            [{"type": "click", "element_id": run.element(st, "I read them", "check_box")["id"]}],
            lambda: [ok_enabled()])
    st = fresh(run, win)
    run.act(app, "terms: OK", st, [{"type": "click", "element_id": ok_button(st)["id"]}],
            lambda: [result(p)[0] == 0])


def lxtask(run: Run, apps: Apps):
    app = "lxtask"
    apps.start("lxtask", env={"GTK_MODULES": "gail:atk-bridge"})
    win = run.window("Task Manager")

    def checked(name: str, role: str) -> bool | None:
        n = next((n for n in flat(app) if n["name"] == name and n["role"] == role), None)
        return None if n is None else "checked" in n["states"]

    st = fresh(run, win)
    before = checked("more details", "toggle button")
    run.act(app, "more details", st,
            [{"type": "click", "element_id": run.element(st, "more details", "toggle_button")["id"]}],
            lambda: [checked("more details", "toggle button") != before])
    st = fresh(run, win)
    before = checked("more details", "toggle button")
    run.act(app, "more details again", st,
            [{"type": "click", "element_id": run.element(st, "more details", "toggle_button")["id"]}],
            lambda: [checked("more details", "toggle button") != before])
    st = fresh(run, win)
    before = checked("Show full cmdline", "check menu item")
    shown = visible_x_windows("lxtask")
    run.act(app, "View menu", st,
            [{"type": "click", "element_id": run.element(st, "View", "menu")["id"]}],
            lambda: [within(lambda: len(visible_x_windows("lxtask")) > len(shown), 1.0)])  # its popup maps
    st = fresh(run, win)
    run.act(app, "Show full cmdline", st,
            [{"type": "click", "element_id": run.element(st, "Show full cmdline", "check_menu_item")["id"]}],
            lambda: [checked("Show full cmdline", "check menu item") != before])


def gpicview(run: Run, apps: Apps):
    """gpicview (GTK 2, gail): its unnamed rotate button turns the picture and nothing but the
    pixels says so; Save asks in an alert whose Yes writes the turned picture (the file on disk).
    (Also used by tests/e2e/test_honest_effects.py, so not counted among the new applications.)"""
    app = "gpicview"
    picture = apps.home / "lopsided.png"
    subprocess.run(["convert", "-size", "240x120", "xc:white", "-fill", "red", "-draw", "rectangle 0,0 80,120",
                    "-fill", "blue", "-draw", "rectangle 160,0 240,40", str(picture)], check=True, timeout=20)
    apps.start("gpicview", str(picture), env={"GTK_MODULES": "gail:atk-bridge"})
    win = run.window("lopsided.png")
    title = win["title"]

    def size() -> str:
        return subprocess.run(["identify", "-format", "%wx%h", str(picture)], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    time.sleep(0.5)
    st = fresh(run, win)
    px = window_pixels(title)
    run.act(app, "Back (the only picture)", st, [{"type": "click", "element_id": run.element(st, "Back", "push_button")["id"]}],
            lambda: [pixels_changed(px, window_pixels(title)) or title not in wm_titles()])
    st = fresh(run, win)
    unnamed = [e for e in st["elements"] if e["role"] == "push_button" and not e.get("name")]
    if len(unnamed) < 2:
        raise Harness(f"gpicview's rotate buttons: {[(e['role'], e.get('name')) for e in st['elements']]}")
    px = window_pixels(title)
    run.act(app, "unnamed rotate button (pixels only)", st, [{"type": "click", "element_id": unnamed[1]["id"]}],
            lambda: [within(lambda: pixels_changed(px, window_pixels(title)), 2.0)])
    st = fresh(run, win)
    mapped = visible_x_windows("gpicview")
    run.act(app, "Save (asks first)", st, [{"type": "click", "element_id": run.element(st, "Save", "push_button")["id"]}],
            lambda: [within(lambda: len(visible_x_windows("gpicview")) > len(mapped), 2.0) and size() == "240x120"])

    def alert():
        ws = run.s.call_ok("gui_list", {})["windows"]
        return next((w for w in ws if w.get("app") == win.get("app") and "lopsided" not in w["title"]), None)
    ask = wait(alert, 10, "gpicview's question")
    ast = fresh(run, ask)
    run.act(app, "alert's Yes (writes the file)", ast, [{"type": "click", "element_id": run.element(ast, "Yes", "push_button")["id"]}],
            lambda: [within(lambda: size() == "120x240", 3.0)])


def qt_spinboxes(run: Run, apps: Apps):
    app = "spinboxes"
    apps.start(f"{QT_EXAMPLES}/widgets/spinboxes/spinboxes")
    win = run.window("Spin Boxes")

    def values() -> list:
        return [(n.get("value") or {}).get("current") for n in flat(app) if n["role"] == "spin button"]

    st = fresh(run, win)
    spins = [e for e in st["elements"] if e["role"] == "spin_button" and "disabled" not in e.get("states", [])]
    if len(spins) < 2:
        raise Harness(f"spin boxes: {[(e['role'], e.get('name')) for e in st['elements']]}")
    v0 = values()
    run.act(app, "set_value 42 (kept to its range)", st,
            [{"type": "set_value", "element_id": spins[0]["id"], "value": "42"}],
            lambda: [values() != v0])
    st = fresh(run, win)
    v0 = values()
    run.act(app, "set_value to what it is", st,
            [{"type": "set_value", "element_id": spins[0]["id"], "value": str(int(v0[0] or 0))}],
            lambda: [values() != v0])
    st = fresh(run, win)
    v1 = values()
    run.act(app, "set_value 7 on the second", st, [{"type": "set_value", "element_id": spins[1]["id"], "value": "7"}],
            lambda: [values() != v1])
    st = fresh(run, win)
    v2 = values()
    focused = lambda: ["focused" in n["states"] for n in flat(app) if n["role"] == "spin button"]  # noqa: E731
    had = focused()
    run.act(app, "key Up in the first", st,
            [{"type": "focus", "element_id": spins[0]["id"]}, {"type": "key", "keys": "Up"}],
            lambda: [not (had and had[0]), values() != v2])
    st = fresh(run, win)
    labels = [e for e in st["elements"] if e["role"] == "label"]
    v3 = values()
    run.act(app, "a label clicked", st, [{"type": "click", "element_id": labels[0]["id"]}],
            lambda: [values() != v3])


def win_bin() -> Path | None:
    """A directory with lsm.exe and the bcryptprimitives.dll Wine 8 needs beside it
    (tests/bed/wine.sh build makes both; nothing is built here)."""
    dirs = [os.environ.get("LSM_WIN_BIN", ""), "/tmp/lsm-winebed/bin"]
    for d in dirs:
        if d and (Path(d) / "lsm.exe").exists() and (Path(d) / "bcryptprimitives.dll").exists():
            return Path(d)
    return None


def wine_notepad(run: Run, apps: Apps, tmp: Path):
    """Wine's notepad (Win32) through lsm.exe, lsm's Windows build, under Wine on the same X
    display (Wine has no UI Automation provider for its controls: expect `unverifiable`). Truth:
    the window's pixels, the X window list, the file the save wrote."""
    app = "notepad (Wine, lsm.exe)"
    wbin = win_bin()
    if wbin is None:
        raise Harness("no lsm.exe with bcryptprimitives.dll (run tests/bed/wine.sh build, or pass --no-wine)")
    env = dict(os.environ, WINEPREFIX=str(Path(BED_DIR) / "wineprefix"), WINEDEBUG="-all",
               WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d")
    for k in ("WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"):
        env.pop(k, None)
    apps.start("wine", "notepad", env=env)
    wait(lambda: "Untitled - Notepad" in wm_titles(), 150, "notepad's window")  # a fresh prefix is made first
    s = LsmSession("stdio", env=env, args=["--web", "off"], wrapper=["wine"], binary=str(wbin / "lsm.exe"),
                   timeout=60).open()
    wrun = Run(s)
    wrun.rows = run.rows
    try:
        title = "Untitled - Notepad"
        win = wrun.window("Notepad", timeout=30)
        st = wrun.observe(win)
        px = window_pixels(title)
        wrun.act(app, "type", st, [{"type": "type", "text": "wine text"}],
                 lambda: [within(lambda: pixels_changed(px, window_pixels(title)), 2.0)])
        st = wrun.observe(win)
        px = window_pixels(title)
        wrun.act(app, "key ctrl+shift+F11 (no binding)", st, [{"type": "key", "keys": "ctrl+shift+F11"}],
                 lambda: [pixels_changed(px, window_pixels(title)) or title not in wm_titles()])
        st = wrun.observe(win)
        titles = set(wm_titles())
        wrun.act(app, "ctrl+s opens Save As", st, [{"type": "key", "keys": "ctrl+s"}],
                 lambda: [within(lambda: any("Save" in t for t in set(wm_titles()) - titles), 3.0)])
        dialog = wrun.window("Save", timeout=10)
        target = tmp / "wine-notepad.txt"
        dst = wrun.observe(dialog)
        dtitle = dialog["title"]
        px = window_pixels(dtitle)
        wrun.act(app, "file name typed, Return", dst,
                 [{"type": "type", "text": "Z:" + str(target).replace("/", "\\")}, {"type": "key", "keys": "Return"}],
                 lambda: (lambda saved: [saved or pixels_changed(px, window_pixels(dtitle)), saved])(
                     within(lambda: target.exists() and "wine text" in target.read_text(errors="replace"), 3.0)))
        if os.environ.get("LSM_HONESTY_DEBUG"):
            print("  after the save:", wm_titles(), sorted(p.name for p in tmp.iterdir()))
    finally:
        s.close()
        subprocess.run(["wineserver", "-k"], env=env, capture_output=True, timeout=30)


APPS = {
    "galculator": lambda r, a, t: galculator(r, a),
    "kcalc": lambda r, a, t: kcalc(r, a),
    "featherpad": featherpad,
    "speedcrunch": lambda r, a, t: speedcrunch(r, a),
    "gnome-text-editor": text_editor,
    "gnome-font-viewer": lambda r, a, t: font_viewer(r, a),
    "zenity": lambda r, a, t: (zenity(r, a), zenity_more(r, a)),
    "lxtask": lambda r, a, t: lxtask(r, a),
    "gpicview": lambda r, a, t: gpicview(r, a),
    "qt-spinboxes": lambda r, a, t: qt_spinboxes(r, a),
    "wine-notepad": wine_notepad,
}


# ------------------------------------------------------------------ the report
def matrix(rows: list[dict]) -> str:
    c = Counter((r["effect"], r["truth"]) for r in rows)
    lines = ["| reported \\ truth | happened | did not happen |", "|---|---:|---:|"]
    for e in EFFECTS:
        lines.append(f"| {e} | {c[(e, True)]} | {c[(e, False)]} |")
    return "\n".join(lines)


def report(run: Run, failures: list[str], strict: bool) -> int:
    rows = run.rows
    out = ["# Honesty benchmark (bench/honesty.py)", "",
           f"{len(rows)} actions over {len({r['app'] for r in rows})} applications, {time.strftime('%Y-%m-%d %H:%M')}", ""]
    for app in dict.fromkeys(r["app"] for r in rows):
        mine = [r for r in rows if r["app"] == app]
        c = Counter((r["effect"], r["truth"]) for r in mine)
        cells = ", ".join(f"{e} {c[(e, True)]}/{c[(e, False)]}" for e in EFFECTS if c[(e, True)] + c[(e, False)])
        out.append(f"- {app}: {len(mine)} actions ({cells}; happened/did not)")
    out += ["", "All:", "", matrix(rows), ""]
    false_conf = [r for r in rows if r["effect"] == "confirmed" and not r["truth"]]
    false_none = [r for r in rows if r["effect"] == "no_change" and r["truth"]]
    unverifiable = sum(r["effect"] == "unverifiable" for r in rows)
    share = unverifiable / max(len(rows), 1)
    out.append(f"false confirmed: {len(false_conf)}; false no_change: {len(false_none)}; "
               f"unverifiable: {unverifiable} ({share:.0%}); errors: {sum(r['effect'] == 'error' for r in rows)}")
    for r in false_conf + false_none:
        out.append(f"  FALSE {r['effect']}: {r['app']} / {r['label']}: truth {'happened' if r['truth'] else 'did not'}; "
                   f"lsm said: {r['evidence'][:200]}")
    for r in rows:
        if r["effect"] in ("unverifiable", "error"):
            out.append(f"  {r['effect']}: {r['app']} / {r['label']} ({'happened' if r['truth'] else 'did not'}): "
                       f"{r['evidence'][:160]}")
    for n in run.notes:
        out.append(f"  NOTE: {n}")
    for f in failures:
        out.append(f"  HARNESS: {f}")
    text = "\n".join(out)
    print(text)
    dest = REPO / "target" / "bench"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "honesty.md").write_text(text + "\n")
    if failures:
        return 1
    if strict and (false_conf or false_none or share > 0.10):
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strict", action="store_true", help="fail on a false claim or > 10 %% unverifiable")
    ap.add_argument("--only", action="append", help="run only these applications")
    ap.add_argument("--keep", action="store_true", help="leave the desktop up")
    ap.add_argument("--no-wine", action="store_true", help="leave out Wine's notepad (lsm.exe under Wine)")
    args = ap.parse_args()
    up = bed("up")
    if up.returncode != 0:
        print(up.stderr[-2000:])
        return 1
    sets, unsets = parse_env(up.stdout)
    for k in unsets:
        os.environ.pop(k, None)
    os.environ.update(sets)
    tmp = Path(tempfile.mkdtemp(prefix="lsm-honesty-"))
    apps = Apps(tmp / "home")
    (tmp / "home").mkdir()
    failures: list[str] = []
    s = LsmSession("stdio", env=dict(os.environ, LSM_LOG=os.environ.get("LSM_BENCH_LOG", "warn"))).open()
    run = Run(s)
    try:
        for name, fn in APPS.items():
            if args.only and name not in args.only:
                continue
            if name == "wine-notepad" and args.no_wine:
                print("[wine-notepad: skipped (--no-wine)]", flush=True)
                run.notes.append("the Wine part (notepad through lsm.exe) was left out: --no-wine")
                continue
            if name == "wine-notepad" and not shutil.which("wine"):
                failures.append("wine is not installed: the Win32 part did not run (tests/bed/wine.sh install, or --no-wine)")
                continue
            started = time.monotonic()
            try:
                fn(run, apps, tmp)
            except Harness as e:
                failures.append(f"{name}: {e}")
            except AssertionError as e:
                failures.append(f"{name}: {str(e)[:400]}")
            except Exception as e:  # noqa: BLE001 - a broken session or probe: a harness error, reported
                failures.append(f"{name}: {type(e).__name__}: {str(e)[:400]}")
            finally:
                apps.stop_all()
                apps.procs.clear()
            print(f"[{name}: {time.monotonic() - started:.1f} s]", flush=True)
    finally:
        s.close()
        apps.stop_all()
        if not args.keep:
            bed("down")
        shutil.rmtree(tmp, ignore_errors=True)
    return report(run, failures, args.strict)


if __name__ == "__main__":
    sys.exit(main())
