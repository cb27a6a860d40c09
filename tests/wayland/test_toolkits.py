"""One window-relative rule for every toolkit on GNOME Wayland, proven by clicks at coordinates
read off lsm's own observation: GTK 4 (AT-SPI counts from the window geometry), Qt 5 (from
inside its own client-side decoration) and an X11 application under XWayland (no
accessibility: coordinates only, its effect checked on disk)."""

import os
import tempfile
import time
from pathlib import Path

from conftest import ensure_app, run_probe
from gui_flow import act, center, element, find_window, observe, wait_for


def test_gtk4_tab_clicked_by_coordinates(lsm):
    ensure_app("gtk4-widget-factory", "gtk4-widget-factory")
    win = find_window(lsm, title="GTK Widget Factory")
    st = observe(lsm, win)
    tab = element(st, "Page _2", "page_tab")
    x, y = center(tab)
    act(lsm, st, [{"type": "click", "x": x, "y": y}])
    wait_for(lambda: "selected" in (run_probe("gtk4-widget-factory", find="Page _2", role="page tab") or {})
             .get("states", []), what="Page 2 selected")
    st = observe(lsm, win)
    x, y = center(element(st, "Page _1", "page_tab"))
    act(lsm, st, [{"type": "click", "x": x, "y": y}])
    wait_for(lambda: "selected" in (run_probe("gtk4-widget-factory", find="Page _1", role="page tab") or {})
             .get("states", []), what="Page 1 selected again")


def test_qt5_calculator_by_coordinates(lsm):
    ensure_app("qt5-calculator", "calculator")
    win = find_window(lsm, title="Calculator")
    display = lambda: (run_probe("calculator", find="", role="text") or {}).get("text")  # noqa: E731
    for key in ["Clear All", "7", "8", "+", "1", "="]:
        st = observe(lsm, win)
        x, y = center(element(st, key, "push_button"))
        act(lsm, st, [{"type": "click", "x": x, "y": y}])
        time.sleep(0.15)
    wait_for(lambda: display() == "79", what="the calculator shows 79")


def test_xwayland_xterm_command_typed_by_coordinates(lsm):
    ensure_app("xterm")
    win = find_window(lsm, app="xterm")
    out = Path(tempfile.gettempdir()) / f"lsm-wl-xterm-{os.getpid()}"
    out.unlink(missing_ok=True)
    st = observe(lsm, win)
    assert not st["elements"], "xterm has no accessibility tree"
    b = win["bounds"]
    act(lsm, st, [{"type": "click", "x": b["width"] // 2, "y": b["height"] // 2},
                  {"type": "type", "text": f"echo typed-through-xwayland > {out}\n"}])
    wait_for(lambda: out.exists() and out.read_text().strip() == "typed-through-xwayland",
             what=f"{out} written by the shell in xterm")
    out.unlink(missing_ok=True)
