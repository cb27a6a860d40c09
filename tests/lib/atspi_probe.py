#!/usr/bin/python3
"""Dump an application's AT-SPI accessible tree as JSON: ground truth for the end-to-end tests.

Runs with the system python3 (python3-pyatspi). Tests run it as a subprocess with a timeout:
pyatspi can deadlock (a blocking call made while an event is being handled), so never import it
into the test process. It also stops itself after --timeout seconds (exit code 124).

  atspi_probe.py --list-apps                          # [{"name", "pid", "children"}]
  atspi_probe.py --app-name lsm_testapp.py            # whole tree of that app
  atspi_probe.py --pid 1234 --depth 3                 # tree of the app with that pid, 3 levels
  atspi_probe.py --app-name lsm_testapp.py --find "Press me"          # one node
  atspi_probe.py --app-name lsm_testapp.py --find "Pressed:" --match prefix --all
  atspi_probe.py --app-name lsm_testapp.py --find "Pressed: 1" --wait 5   # poll until found
  atspi_probe.py --app-name lsm_testapp.py --flat     # every node, one list, no nesting

A node: {"name", "role" (pyatspi role name, e.g. "push button"), "states" (sorted names,
e.g. "showing"), "description", "path" (child indexes from the application), "extents"
({"x", "y", "width", "height"}, screen coordinates; null without a Component interface),
"text" (full text of the Text interface, if any), "value" ({"current", "min", "max"} of the
Value interface, if any), "actions" (action names), "children" (tree mode only),
"child_count"}.

The app is looked up by the name of its AT-SPI application object (GTK: the program name, e.g.
"lsm_testapp.py"; Qt: "calculator"), falling back to its process: the command name or the base
name of any command-line argument. Exit codes: 0 found, 1 app or node not found (message on
stderr, "null" on stdout), 2 usage, 124 timed out.
"""

import argparse
import json
import os
import re
import sys
import threading
import time


def _die_on_timeout(seconds):
    def fire():
        sys.stderr.write(f"atspi_probe: timed out after {seconds}s (AT-SPI call blocked?)\n")
        sys.stderr.flush()
        os._exit(124)

    t = threading.Timer(seconds, fire)
    t.daemon = True
    t.start()
    # Backstop in case the GIL is held by a blocked call: faulthandler needs no GIL.
    import faulthandler

    faulthandler.dump_traceback_later(seconds + 2, exit=True)


def _proc_names(pid):
    names = set()
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
            names.add(f.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            for arg in f.read().split(b"\0"):
                if arg:
                    names.add(os.path.basename(arg.decode("utf-8", "replace")))
    except OSError:
        pass
    return names


def _safe(fn, default=None):
    try:
        return fn()
    except Exception:  # AT-SPI raises GLib errors for defunct objects, missing interfaces...
        return default


class Probe:
    def __init__(self, want_extents=True):
        import pyatspi  # noqa: deferred so --help works without a bus

        self.pyatspi = pyatspi
        self.want_extents = want_extents

    def apps(self):
        desktop = self.pyatspi.Registry.getDesktop(0)
        out = []
        for i in range(_safe(lambda: desktop.childCount, 0)):
            app = _safe(lambda i=i: desktop.getChildAtIndex(i))
            if app is None:
                continue
            out.append(app)
        return out

    def find_app(self, name=None, pid=None):
        apps = self.apps()
        if pid is not None:
            for app in apps:
                if _safe(app.get_process_id) == pid:
                    return app
            return None
        for app in apps:  # exact accessible name
            if _safe(lambda a=app: a.name) == name:
                return app
        for app in apps:  # case-insensitive accessible name
            if (_safe(lambda a=app: a.name) or "").lower() == name.lower():
                return app
        for app in apps:  # process name / command-line basenames
            p = _safe(app.get_process_id)
            if p and name in _proc_names(p):
                return app
        return None

    def describe(self, acc, path):
        pa = self.pyatspi
        node = {
            "name": _safe(lambda: acc.name, ""),
            "role": _safe(acc.getRoleName, "unknown"),
            "states": [],
            "description": _safe(lambda: acc.description, "") or "",
            "path": path,
            "child_count": _safe(lambda: acc.childCount, 0),
        }
        st = _safe(lambda: acc.getState().getStates(), []) or []
        node["states"] = sorted(pa.stateToString(s) if hasattr(pa, "stateToString") else
                                str(s.value_nick) for s in st)
        node["extents"] = None
        if self.want_extents:
            comp = _safe(acc.queryComponent)
            if comp is not None:
                e = _safe(lambda: comp.getExtents(pa.DESKTOP_COORDS))
                if e is not None:
                    node["extents"] = {"x": e.x, "y": e.y, "width": e.width, "height": e.height}
        text = _safe(acc.queryText)
        if text is not None:
            node["text"] = _safe(lambda: text.getText(0, -1), None)
        value = _safe(acc.queryValue)
        if value is not None:
            node["value"] = {
                "current": _safe(lambda: value.currentValue),
                "min": _safe(lambda: value.minimumValue),
                "max": _safe(lambda: value.maximumValue),
            }
        action = _safe(acc.queryAction)
        if action is not None:
            n = _safe(lambda: action.nActions, 0) or 0
            node["actions"] = [_safe(lambda i=i: action.getName(i), "") for i in range(n)]
        return node

    def walk(self, acc, path=(), depth=None, tree=True):
        """Yield (node, acc) depth-first; in tree mode nodes get a "children" list."""
        node = self.describe(acc, list(path))
        yield node, acc
        if depth is not None and len(path) >= depth:
            return
        if tree:
            node["children"] = []
        for i in range(node["child_count"] or 0):
            child = _safe(lambda i=i: acc.getChildAtIndex(i))
            if child is None:
                continue
            for sub, sub_acc in self.walk(child, path + (i,), depth, tree):
                if tree and len(sub["path"]) == len(path) + 1:
                    node["children"].append(sub)
                yield sub, sub_acc


def matcher(args):
    want = args.find
    if args.match == "exact":
        return lambda s: s == want
    if args.match == "prefix":
        return lambda s: s.startswith(want)
    if args.match == "contains":
        return lambda s: want in s
    rx = re.compile(want)
    return lambda s: rx.search(s) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    who = ap.add_mutually_exclusive_group()
    who.add_argument("--app-name", help="application name (AT-SPI name or process name); "
                     "default: lsm_testapp.py")
    who.add_argument("--pid", type=int, help="application process id")
    who.add_argument("--list-apps", action="store_true", help="list registered applications")
    ap.add_argument("--find", metavar="NAME", help="print the first node whose name matches")
    ap.add_argument("--match", choices=["exact", "prefix", "contains", "regex"], default="exact")
    ap.add_argument("--role", help="with --find: only nodes of this role (pyatspi role name)")
    ap.add_argument("--all", action="store_true", help="with --find: print a list of all matches")
    ap.add_argument("--do-action", action="store_true",
                    help="with --find: run the found node's first action (a change made outside lsm)")
    ap.add_argument("--wait", type=float, default=0.0, metavar="SECS",
                    help="poll until the app (and the --find node) appears, up to SECS")
    ap.add_argument("--depth", type=int, default=None, help="max depth below the application")
    ap.add_argument("--flat", action="store_true", help="a flat list of nodes instead of a tree")
    ap.add_argument("--no-extents", action="store_true", help="skip the Component extents")
    ap.add_argument("--timeout", type=float, default=30.0, help="give up after SECS (exit 124)")
    ap.add_argument("--indent", type=int, default=None, help="JSON indent")
    args = ap.parse_args()
    if args.app_name is None and args.pid is None and not args.list_apps:
        args.app_name = "lsm_testapp.py"
    if args.timeout > 0:
        _die_on_timeout(args.timeout)

    probe = Probe(want_extents=not args.no_extents)
    dump = lambda obj: print(json.dumps(obj, ensure_ascii=False, indent=args.indent), flush=True)  # noqa: E731

    if args.list_apps:
        dump([{"name": _safe(lambda a=a: a.name, ""), "pid": _safe(a.get_process_id),
               "children": _safe(lambda a=a: a.childCount, 0)} for a in probe.apps()])
        return 0

    deadline = time.monotonic() + max(args.wait, 0.0)
    match = matcher(args) if args.find is not None else None
    while True:
        app = probe.find_app(name=args.app_name, pid=args.pid)
        result, missing = None, None
        if app is None:
            missing = f"application {args.app_name or args.pid!r} is not registered on AT-SPI"
        elif match is None:
            nodes = [n for n, _ in probe.walk(app, depth=args.depth, tree=not args.flat)]
            result = nodes if args.flat else nodes[0]
        else:
            hits = []
            for node, acc in probe.walk(app, depth=args.depth, tree=False):
                if match(node["name"] or "") and (args.role is None or node["role"] == args.role):
                    hits.append(node)
                    if args.do_action:
                        node["did_action"] = bool(_safe(lambda acc=acc: acc.queryAction().doAction(0), False))
                    if not args.all:
                        break
            if hits:
                result = hits if args.all else hits[0]
            else:
                missing = f"no node matching {args.find!r} ({args.match}" + \
                          (f", role {args.role!r}" if args.role else "") + ")"
        if result is not None:
            dump(result)
            return 0
        if time.monotonic() >= deadline:
            sys.stderr.write(f"atspi_probe: {missing}\n")
            dump(None)
            return 1
        time.sleep(0.1)
        if app is not None:
            _safe(app.clear_cache)


if __name__ == "__main__":
    sys.exit(main())
