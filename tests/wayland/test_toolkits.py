"""One window-relative rule for every toolkit on GNOME Wayland, proven by clicks at coordinates
read off lsm's own observation: GTK 4 (AT-SPI counts from the window geometry), Qt 5 (from
inside its own client-side decoration) and an X11 application under XWayland (no
accessibility: coordinates only, its effect checked on disk)."""

import os
import tempfile
import time
from pathlib import Path

from conftest import bed, ensure_app, run_probe
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


def test_gtk4_element_click_then_coordinate_click_keep_their_order(lsm):
    """GTK 4 emits `clicked` ~250 ms after its accessible action returns: [click "9" by id,
    click at the centre of "1"] must give 91, each click confirmed by its own change (issue 22)."""
    ensure_app("gnome-calculator", "gnome-calculator")
    try:
        _calculator_in_order(lsm)
    finally:
        # The Qt example's window is called "Calculator" too.
        bed("stop-app", "gnome-calculator")


def _calculator_in_order(lsm):
    win = next(w for w in lsm.call_ok("gui_list", {})["windows"] if w["app"] == "Calculator")

    def display() -> str:
        nodes = run_probe("gnome-calculator", flat=True, extents=False) or []
        views = [n for n in nodes if n["role"] == "text" and "editable" in n["states"]]
        return (views[0].get("text") or "").strip() if views else ""

    st = observe(lsm, win, max_depth=20, max_elements=800)
    act(lsm, st, [{"type": "key", "keys": "Escape"}])
    wait_for(lambda: display() in ("", "0"), what="the entry cleared")
    st = observe(lsm, win, max_depth=20, max_elements=800)
    nine, one = element(st, "9", "push_button"), element(st, "1", "push_button")
    x, y = center(one)
    r = act(lsm, st, [{"type": "click", "element_id": nine["id"]}, {"type": "click", "x": x, "y": y}])
    wait_for(lambda: display() == "91", what='"91" in the entry')
    assert [a["effect"] for a in r["results"]] == ["confirmed", "confirmed"], r["results"]
    st = observe(lsm, win, max_depth=20, max_elements=800)
    act(lsm, st, [{"type": "key", "keys": "Escape"}])
    wait_for(lambda: display() in ("", "0"), what="the entry cleared")
    st = observe(lsm, win, max_depth=20, max_elements=800)
    seven = element(st, "7", "push_button")
    r = act(lsm, st, [{"type": "click", "element_id": seven["id"]}, {"type": "click", "element_id": seven["id"]}])
    wait_for(lambda: display() == "77", what='"77" in the entry: the same button twice is two clicks')
    assert [a["effect"] for a in r["results"]] == ["confirmed", "confirmed"], r["results"]


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
