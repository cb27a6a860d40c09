"""What GNOME Shell itself says, for the Wayland suite's checks (outside lsm): the window list of
lsm's Shell extension through gdbus, and the clipboard through a mutter remote-desktop session
of the test's own (tests/lib/wl_clipboard.py, run with the system python)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

CLIPBOARD = Path(__file__).resolve().parent / "wl_clipboard.py"
MOVE = Path(__file__).resolve().parent / "wl_move.py"
SYSTEM_PYTHON = "/usr/bin/python3"


def shell_windows() -> list[dict]:
    """The extension's List(): top-level windows, bottom to top, stage (logical) coordinates."""
    r = subprocess.run(
        ["gdbus", "call", "--session", "--dest", "org.gnome.Shell", "--object-path", "/dev/lsm/Windows",
         "--method", "dev.lsm.Windows.List"],
        capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise RuntimeError(f"dev.lsm.Windows.List failed: {r.stderr.strip()}")
    (text,) = ast.literal_eval(r.stdout.strip())
    return json.loads(text)["windows"]


def shell_window(pid: int | None = None, title: str | None = None) -> dict | None:
    for w in shell_windows():
        if (pid is None or w["pid"] == pid) and (title is None or w["title"] == title):
            return w
    return None


def activate(window_id: str) -> None:
    subprocess.run(
        ["gdbus", "call", "--session", "--dest", "org.gnome.Shell", "--object-path", "/dev/lsm/Windows",
         "--method", "dev.lsm.Windows.Activate", window_id],
        capture_output=True, text=True, timeout=10, check=True)


def move_focused_window(right: int, down: int) -> None:
    """Moves the focused window by 10 px per step with mutter's keyboard move (Alt+F7, arrows,
    Return), keys sent by a remote-desktop session of the test's own (tests/lib/wl_move.py)."""
    subprocess.run([SYSTEM_PYTHON, str(MOVE), str(right), str(down)], capture_output=True, text=True,
                   timeout=30, check=True)


def buffer_offset(w: dict) -> tuple[int, int]:
    """Frame origin minus buffer origin: where lsm's window-relative (0,0) lies in the surface,
    which is what a GTK 3 application's own event coordinates count from on Wayland."""
    return w["frame"]["x"] - w["buffer"]["x"], w["frame"]["y"] - w["buffer"]["y"]


class ClipboardOwner:
    """Puts `text` on the clipboard from a process of our own and serves it until closed (what
    any application that copied something does)."""

    def __init__(self, text: str):
        self.proc = subprocess.Popen([SYSTEM_PYTHON, str(CLIPBOARD), "own", text],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "owned":
            self.close()
            raise RuntimeError(f"wl_clipboard own: {line!r} {self.proc.stderr.read()[-2000:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def read_clipboard() -> str | None:
    """The clipboard's text now (None: empty or not text)."""
    r = subprocess.run([SYSTEM_PYTHON, str(CLIPBOARD), "read"], capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        raise RuntimeError(f"wl_clipboard read: {r.stderr.strip()[-2000:]}")
    out = json.loads(r.stdout)
    return out.get("text")


if __name__ == "__main__":
    json.dump(shell_windows(), sys.stdout, indent=1)
