"""Headless safety (SPEC §5): `lsm serve` on a machine without a graphical session.

The server runs with no DISPLAY, WAYLAND_DISPLAY, XDG_*, DBUS_SESSION_BUS_ADDRESS or
AT_SPI_BUS_ADDRESS, and with /tmp/.X11-unix hidden behind an empty tmpfs in a private mount
namespace (`unshare --mount`): CI runs as root with the test desktop's Xvfb up, whose socket the
server would otherwise find. Asserted:
- starting and tools/list work;
- gui_list answers within 1 s, with no windows and this machine listed as unavailable, naming
  where it looked (a controller without a desktop still lists its machines); gui_state answers
  GUI_UNAVAILABLE; gui_action (whose first check is the state store) answers STATE_NOT_FOUND,
  since no state can have been issued;
- under `strace -f -e trace=connect`: no connect() to an X11 / D-Bus / AT-SPI / Wayland / systemd
  socket before the first GUI call, and no successful one at all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import HIDE_X11, X11_DIR, headless_env  # noqa: E402

NO_STATE = "st_" + "0" * 32


def _x11_sockets() -> list[str]:
    try:
        return sorted(os.listdir(X11_DIR))
    except OSError:
        return []


def _probe_hide() -> tuple[list[str] | None, str]:
    """(wrapper, "") when /tmp/.X11-unix can be hidden or is already empty, else (None, reason)."""
    if shutil.which("unshare"):
        try:
            r = subprocess.run([*HIDE_X11, "sh", "-c", f'[ -z "$(ls -A {X11_DIR})" ]'],
                               capture_output=True, text=True, timeout=10)
            if r.returncode == 0:
                return HIDE_X11, ""
            why = f"unshare/mount failed: {r.stderr.strip() or r.returncode}"
        except (OSError, subprocess.SubprocessError) as e:
            why = f"unshare failed: {e}"
    else:
        why = "unshare is not installed"
    if not _x11_sockets():
        return [], ""  # nothing to hide
    return None, f"X sockets {_x11_sockets()} in {X11_DIR} cannot be hidden ({why})"


WRAPPER, HIDE_REASON = _probe_hide()
needs_hidden_x11 = pytest.mark.skipif(WRAPPER is None, reason=HIDE_REASON)


@pytest.fixture
def headless(lsm_factory):
    """open(transport="stdio", wrapper_extra=[]) -> a session to a headless lsm."""
    def open_(transport: str = "stdio", extra: list[str] | None = None):
        return lsm_factory(transport, headless_env(), wrapper=[*(WRAPPER or []), *(extra or [])])
    return open_


def test_headless_env_is_stripped():
    env = headless_env()
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"):
        assert k not in env
    assert not [k for k in env if k.startswith("XDG_")]


@needs_hidden_x11
def test_hidden_x11_dir_is_empty():
    r = subprocess.run([*WRAPPER, "ls", "-A", X11_DIR], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and r.stdout.strip() == "", (r.stdout, r.stderr)


@needs_hidden_x11
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_headless_gui_unavailable(headless, transport):
    s = headless(transport)
    assert {t.name for t in s.list_tools()} == {"gui_list", "gui_state", "gui_action"}

    t0 = time.monotonic()
    r = s.call("gui_list", {})
    elapsed = time.monotonic() - t0
    assert not r.is_error, text_of(r)
    out = r.structured_content
    assert out["windows"] == [] and out["backend"]["name"] == "none", out
    local = out["machines"][0]
    assert local["name"] == "local" and local["available"] is False, local
    msg = local["unavailable_reason"]
    assert msg.startswith("GUI_UNAVAILABLE"), msg
    assert elapsed < 1.0, f"gui_list took {elapsed:.3f}s on a headless machine (limit 1 s)"
    # the reason names where it looked
    for where in (X11_DIR, "environment"):
        assert where in msg, f"the unavailable reason does not mention {where!r}: {msg}"

    t0 = time.monotonic()
    r = s.call("gui_list", {})
    assert not r.is_error and not r.structured_content["machines"][0]["available"]
    assert time.monotonic() - t0 < 1.0

    r = s.call("gui_state", {"window_id": "0x1a00007"})
    assert err_code(r) == "GUI_UNAVAILABLE", text_of(r)
    r = s.call("gui_state", {"window_id": "0x1a00007", "screenshot": False, "include_elements": False})
    assert err_code(r) == "GUI_UNAVAILABLE", text_of(r)

    # gui_action looks the state up first: none can exist on a headless machine
    r = s.call("gui_action", {"window_id": "0x1a00007", "state_id": NO_STATE,
                              "actions": [{"type": "wait", "seconds": 0}]})
    assert err_code(r) == "STATE_NOT_FOUND", text_of(r)
    assert "gui_state" in err_message(r), "the message should tell the caller to call gui_state"

    # unknown machine is still MACHINE_UNKNOWN, not GUI_UNAVAILABLE
    assert err_code(s.call("gui_list", {"machine": "elsewhere"})) == "MACHINE_UNKNOWN"
    # still up
    assert {t.name for t in s.list_tools()} == {"gui_list", "gui_state", "gui_action"}


# ------------------------------------------------------------------ strace: no GUI connects
GUI_SOCKET = re.compile(
    r'sun_path=@?"[^"]*(\.X11-unix|/bus\b|dbus|at-spi|wayland|/systemd/|pipewire|portal)[^"]*"'
    r'|sin6?_port=htons\(60[0-5][0-9]\)|sin6?_port=htons\(606[0-3]\)')


STRACE = ["strace", "-f", "-qq", "-e", "trace=connect", "-e", "signal=none", "-o"]
needs_strace = pytest.mark.skipif(shutil.which("strace") is None,
                                  reason="strace is not installed (apt-get install strace)")


def _connects(path: str) -> list[str]:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if "connect(" in line]


@needs_strace
def test_strace_control_detects_gui_connects(tmp_path):
    """The detector itself: a program connecting to D-Bus / X11 paths is seen."""
    trace = str(tmp_path / "control.strace")
    code = ("import socket\n"
            "for p in ['/run/user/0/bus', '\\0/tmp/.X11-unix/X4242', '/tmp/.X11-unix/X4242']:\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try: s.connect(p)\n"
            "    except OSError: pass\n")
    subprocess.run([*STRACE, trace, sys.executable, "-c", code], check=True, timeout=30)
    gui = [c for c in _connects(trace) if GUI_SOCKET.search(c)]
    assert len(gui) == 3, _connects(trace)


@needs_strace
@needs_hidden_x11
def test_headless_no_gui_connect_before_first_gui_call(headless):
    fd, trace = tempfile.mkstemp(prefix="lsm-headless-", suffix=".strace")
    os.close(fd)
    try:
        s = headless("stdio", [*STRACE, trace])
        assert {t.name for t in s.list_tools()} == {"gui_list", "gui_state", "gui_action"}
        s.ping()
        time.sleep(0.2)  # let strace flush
        before = _connects(trace)
        gui_before = [c for c in before if GUI_SOCKET.search(c)]
        assert not gui_before, "connect() to a GUI socket before any GUI call:\n" + "\n".join(gui_before)

        r = s.call("gui_list", {})
        assert not r.is_error and not r.structured_content["machines"][0]["available"], text_of(r)
        r = s.call("gui_state", {"window_id": "0x1"})
        assert err_code(r) == "GUI_UNAVAILABLE", text_of(r)
        time.sleep(0.2)
        after = _connects(trace)
        succeeded = [c for c in after if GUI_SOCKET.search(c) and re.search(r"\)\s*=\s*0\s*$", c)]
        assert not succeeded, "headless server connected to a GUI socket:\n" + "\n".join(succeeded)
        print("connect() calls seen:\n" + "\n".join(after))
    finally:
        os.unlink(trace)


def test_the_binary_links_only_the_c_runtime(lsm_bin):
    """No GUI, PipeWire or GStreamer library is linked: the default binary starts on a machine
    that has none (the Wayland frame helper is a separate program found at run time)."""
    r = subprocess.run(["ldd", str(lsm_bin)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    libs = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    c_runtime = {"linux-vdso.so.1", "libgcc_s.so.1", "libm.so.6", "libc.so.6", "/lib64/ld-linux-x86-64.so.2",
                 "libpthread.so.0", "libdl.so.2", "librt.so.1"}
    assert libs <= c_runtime, f"linked beyond the C runtime: {sorted(libs - c_runtime)}"
