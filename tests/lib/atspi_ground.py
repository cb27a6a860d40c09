"""Ground truth from AT-SPI for the end-to-end tests (X11 and Wayland suites alike):
tests/lib/atspi_probe.py run with the system python in a subprocess with a timeout (pyatspi can
deadlock; it is never imported into a test process)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

PROBE = Path(__file__).resolve().parent / "atspi_probe.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # has python3-gi and pyatspi; the venv python has neither
TESTAPP_NAME = "lsm_testapp.py"  # the test app's AT-SPI application name (and WM_CLASS)


class ProbeError(RuntimeError):
    pass


def run_probe(
    app_name: str | None = TESTAPP_NAME,
    find: str | None = None,
    *,
    pid: int | None = None,
    list_apps: bool = False,
    match: str = "exact",
    role: str | None = None,
    all: bool = False,  # noqa: A002 - mirrors the probe's --all
    do_action: bool = False,
    wait: float = 0.0,
    depth: int | None = None,
    flat: bool = False,
    extents: bool = True,
    timeout: float = 30.0,
    retries: int = 1,
):
    """Run atspi_probe.py and return its JSON (None when the app or node is not found).

    probe()                                   -> the test app's whole tree (nested "children")
    probe(find="Pressed: 1", wait=5)          -> that node, polling up to 5 s; None if absent
    probe(find="Pressed:", match="prefix")    -> first node whose name starts so
    probe("calculator", flat=True)            -> every node of the Qt calculator, a flat list
    probe(list_apps=True)                     -> [{"name", "pid", "children"}]
    probe(find="Press me", do_action=True)    -> that node, after running its first action
    A probe that hangs (pyatspi deadlock) is killed and retried `retries` times.
    """
    args = [SYSTEM_PYTHON, str(PROBE), "--timeout", str(timeout + wait)]
    if list_apps:
        args.append("--list-apps")
    elif pid is not None:
        args += ["--pid", str(pid)]
    else:
        args += ["--app-name", app_name]
    if find is not None:
        args += ["--find", find, "--match", match]
        if role:
            args += ["--role", role]
        if all:
            args.append("--all")
        if do_action:
            args.append("--do-action")
    if wait:
        args += ["--wait", str(wait)]
    if depth is not None:
        args += ["--depth", str(depth)]
    if flat:
        args.append("--flat")
    if not extents:
        args.append("--no-extents")
    last = ""
    for _ in range(retries + 1):
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=timeout + wait + 10)
        except subprocess.TimeoutExpired:
            last = "killed after the subprocess timeout"
            continue
        if r.returncode == 0:
            return json.loads(r.stdout)
        if r.returncode == 1 and r.stdout.strip() == "null":
            return None
        last = f"exit {r.returncode}: {r.stderr.strip()[-2000:]}"
        if r.returncode != 124:
            break
    raise ProbeError(f"atspi_probe {' '.join(args[2:])}: {last}")


def poll(fn, timeout: float = 5.0, interval: float = 0.1):
    """Call fn until it returns something truthy; return that, or the last value at timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
