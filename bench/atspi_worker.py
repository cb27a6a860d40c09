#!/usr/bin/python3
"""The benchmark's pyatspi peer: a persistent process that walks windows and presses buttons.

Runs with the system python3 (python3-pyatspi); bench/run.py starts it once and talks to it with
one JSON object per line on stdin/stdout. Timings are taken in here, around the work only, so
interpreter start-up and the pipe are not counted. pyatspi can deadlock: the parent bounds every
command with a timeout and kills this process when it does not answer.

Commands (one JSON line each; every answer is one JSON line with "ok"):
  {"cmd": "walk", "pid": P, "title": T, "n": N, "mode": "full"|"pruned", "cold": false}
      N walks of the top-level window titled T of the application with pid P, reading for every
      node what lsm's gui_state reads: role, name, description, states, actions, extents, text
      (or the numeric value when there is no text). "full" visits every node; "pruned" applies
      lsm's rules (skip hidden objects, objects with no area and objects outside the window,
      with their subtrees). With "cold", libatspi's client-side cache is cleared before each walk.
      -> {"ok": true, "ms": [per-walk milliseconds], "nodes": [nodes read per walk],
          "kept": [nodes not pruned], "max_depth": deepest level reached}
  {"cmd": "find", "pid": P, "title": T, "name": "Press me", "role": "push button"}
      -> {"ok": true, "actions": [...]}; keeps that node for "press"
  {"cmd": "press"}
      doAction on the kept node's first click/press/activate action.
      -> {"ok": true, "t_send": wall-clock s before the call, "t_return": after it}
  {"cmd": "quit"}
"""

import faulthandler
import json
import sys
import time

faulthandler.enable()

import pyatspi  # noqa: E402

ACTION_NAMES = ("click", "press", "activate", "toggle")


def _safe(fn, default=None):
    try:
        return fn()
    except Exception:  # noqa: BLE001 - AT-SPI raises GLib errors for defunct objects etc.
        return default


def find_window(pid, title):
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(_safe(lambda: desktop.childCount, 0)):
        app = _safe(lambda i=i: desktop.getChildAtIndex(i))
        if app is None or _safe(app.get_process_id) != pid:
            continue
        frames = [_safe(lambda j=j: app.getChildAtIndex(j)) for j in range(_safe(lambda: app.childCount, 0))]
        frames = [f for f in frames if f is not None]
        for f in frames:
            if _safe(lambda f=f: f.name) == title:
                return app, f
        if frames:
            return app, frames[0]
    raise LookupError(f"no window {title!r} of pid {pid} on the AT-SPI registry")


def read_node(acc, prune, clip):
    """Read what lsm reads of one node. Returns (keep, child_count)."""
    role = _safe(acc.getRoleName, "unknown")  # noqa: F841 - read for parity with lsm
    name = _safe(lambda: acc.name, "")  # noqa: F841
    desc = _safe(lambda: acc.description, "")  # noqa: F841
    states = _safe(lambda: acc.getState().getStates(), []) or []
    if prune and pyatspi.STATE_VISIBLE not in states:
        return False, 0
    ext = None
    comp = _safe(acc.queryComponent)
    if comp is not None:
        ext = _safe(lambda: comp.getExtents(pyatspi.DESKTOP_COORDS))
    action = _safe(acc.queryAction)
    if action is not None:
        n = _safe(lambda: action.nActions, 0) or 0
        _ = [_safe(lambda i=i: action.getName(i), "") for i in range(n)]
    text = _safe(acc.queryText)
    got_text = False
    if text is not None:
        got_text = _safe(lambda: text.getText(0, -1)) is not None
    if not got_text:
        value = _safe(acc.queryValue)
        if value is not None:
            _safe(lambda: value.currentValue)
    if prune and ext is not None:
        if ext.width <= 0 or ext.height <= 0:
            return False, 0
        if clip is not None and (ext.x + ext.width <= clip[0] or ext.y + ext.height <= clip[1]
                                 or ext.x >= clip[0] + clip[2] or ext.y >= clip[1] + clip[3]):
            return False, 0
    return True, _safe(lambda: acc.childCount, 0) or 0


def walk(root, prune):
    """Depth-first walk; returns (nodes read, nodes kept, deepest level)."""
    clip = None
    if prune:
        comp = _safe(root.queryComponent)
        e = _safe(lambda: comp.getExtents(pyatspi.DESKTOP_COORDS)) if comp is not None else None
        if e is not None and e.width > 0 and e.height > 0:
            clip = (e.x, e.y, e.width, e.height)
    count = kept = 0
    deepest = 0
    stack = [(root, 0)]
    while stack:
        acc, depth = stack.pop()
        count += 1
        deepest = max(deepest, depth)
        keep, n = read_node(acc, prune and depth > 0, clip)
        if not keep:
            continue
        kept += 1
        kids = []
        for i in range(n):
            c = _safe(lambda i=i: acc.getChildAtIndex(i))
            if c is not None:
                kids.append((c, depth + 1))
        stack.extend(reversed(kids))
    return count, kept, deepest


class Worker:
    def __init__(self):
        self.target = None
        self.action_index = None

    def cmd_walk(self, req):
        app, frame = find_window(int(req["pid"]), req.get("title"))
        prune = req.get("mode", "full") == "pruned"
        cold = bool(req.get("cold"))
        ms, nodes, kept, deepest = [], [], [], 0
        for _ in range(int(req.get("n", 1))):
            if cold:
                _safe(app.clearCache)
            t0 = time.perf_counter()
            count, k, d = walk(frame, prune)
            ms.append((time.perf_counter() - t0) * 1000.0)
            nodes.append(count)
            kept.append(k)
            deepest = max(deepest, d)
        return {"ms": ms, "nodes": nodes, "kept": kept, "max_depth": deepest}

    def cmd_find(self, req):
        _, frame = find_window(int(req["pid"]), req.get("title"))
        want_name, want_role = req["name"], req.get("role")
        stack = [frame]
        while stack:
            acc = stack.pop()
            if _safe(lambda: acc.name) == want_name and (want_role is None or _safe(acc.getRoleName) == want_role):
                action = acc.queryAction()
                names = [action.getName(i) for i in range(action.nActions)]
                idx = next((i for i, n in enumerate(names) if n in ACTION_NAMES), None)
                if idx is None:
                    raise LookupError(f"{want_name!r} has no click/press action: {names}")
                self.target, self.action_index = action, idx
                return {"actions": names}
            for i in range(_safe(lambda: acc.childCount, 0) or 0):
                c = _safe(lambda i=i: acc.getChildAtIndex(i))
                if c is not None:
                    stack.append(c)
        raise LookupError(f"no node {want_name!r} ({want_role}) in the window")

    def cmd_press(self, _req):
        if self.target is None:
            raise RuntimeError("press before find")
        t_send = time.time()
        done = self.target.doAction(self.action_index)
        t_return = time.time()
        return {"t_send": t_send, "t_return": t_return, "result": bool(done)}


def main():
    w = Worker()
    out = sys.stdout
    out.write(json.dumps({"ok": True, "ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req.get("cmd")
            if cmd == "quit":
                break
            fn = getattr(w, f"cmd_{cmd}", None)
            if fn is None:
                raise ValueError(f"unknown command {cmd!r}")
            res = fn(req)
            res["ok"] = True
        except Exception as e:  # noqa: BLE001 - report, keep serving
            res = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(res) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
