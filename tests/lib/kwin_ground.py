"""Ground truth on KDE Plasma (tests/kde): KWin's own window list, read by a script of the
test's own (loaded over org.kde.kwin.Scripting, its answer printed to kwin's log), independent
of lsm's reading of it."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

SCRIPT = """
var all = typeof workspace.windowList === "function" ? workspace.windowList() : workspace.clientList();
var out = [];
for (var i = 0; i < all.length; i++) {
  var c = all[i];
  out.push({title: String(c.caption), pid: c.pid, active: !!c.active,
            frame: {x: c.frameGeometry.x, y: c.frameGeometry.y, width: c.frameGeometry.width, height: c.frameGeometry.height},
            buffer: {x: c.bufferGeometry.x, y: c.bufferGeometry.y, width: c.bufferGeometry.width, height: c.bufferGeometry.height}});
}
print("MARK " + JSON.stringify(out));
"""


def _gdbus(method: str, *args: str) -> str:
    r = subprocess.run(["gdbus", "call", "--session", "--dest", "org.kde.KWin", "--object-path", "/Scripting",
                        "--method", f"org.kde.kwin.Scripting.{method}", *args],
                       capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise RuntimeError(f"Scripting.{method}: {r.stderr.strip()}")
    return r.stdout


MOVE = """
var all = typeof workspace.windowList === "function" ? workspace.windowList() : workspace.clientList();
for (var i = 0; i < all.length; i++) {
  var c = all[i];
  if (c.pid == @PID@) {
    var g = c.frameGeometry;
    c.frameGeometry = {x: @X@, y: @Y@, width: g.width, height: g.height};
    workspace.activeClient = c;
  }
}
print("MARK []");
"""


def kwin_move_to_top(pid: int, x: int, y: int) -> None:
    """Moves a process's windows (frame top-left to x, y) and activates them, through KWin."""
    _run(MOVE.replace("@PID@", str(int(pid))).replace("@X@", str(int(x))).replace("@Y@", str(int(y))))


def kwin_windows() -> list[dict]:
    """Every window KWin manages: title, pid, active, frame and buffer rects."""
    return _run(SCRIPT)


def _run(script: str) -> list[dict]:
    """Runs a script that prints MARK and a JSON answer into kwin's log; returns the answer."""
    log = Path(os.environ["LSM_KDEBED_DIR"]) / "logs" / "kwin.log"
    mark = f"lsm-test-{uuid.uuid4().hex[:10]}"
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
        f.write(script.replace("MARK", mark))
        path = f.name
    try:
        _gdbus("loadScript", path, mark)
        _gdbus("start")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            for line in log.read_text(errors="replace").splitlines():
                if mark in line:
                    return json.loads(line.split(mark, 1)[1])
            time.sleep(0.05)
        raise RuntimeError("KWin did not run the test's script")
    finally:
        try:
            _gdbus("unloadScript", mark)
        finally:
            os.unlink(path)


def kwin_window(pid: int | None = None, title: str | None = None) -> dict | None:
    for w in kwin_windows():
        if (pid is None or w["pid"] == pid) and (title is None or w["title"] == title):
            return w
    return None
