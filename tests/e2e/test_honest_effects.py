"""Issue 22: every action's result is its own, in order, and true. Each test reproduces one way
results lied on a real application, and checks the truth outside lsm (AT-SPI read back, a file
on disk, the application's own log, the X window list).

- GTK 4 (gnome-calculator) emits `clicked` ~250 ms after its accessible action returns:
  [element click, coordinate click] and [same element, same element] must come out in order.
- A GTK 3 spin button's `set_value` changes what the control keeps (its value interface), not
  only its entry's text.
- A Qt button's accessible press fires 100 ms later (animateClick): the dialog it opens is the
  evidence and is in `changes.opened`, not the button's own `pressed` look.
- A GTK 3 save dialog closes after its Save button: `confirmed` by the window closing, no
  `state_id` for a window that is gone, the file on disk.
- A Qt wizard's Next: the page it leads to is in the result, not one step behind.
- A Qt tree cell clicked by id: the application's own current item follows (a pointer click).
- A Qt file dialog closed with Return: its id is closed, never answered with another window.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from gui_flow import act, center, find_window, observe, wait_for, windows  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

CALC = "gnome-calculator"


def display_text(probe) -> str:
    """The calculator's equation (its editable source view), read through AT-SPI."""
    nodes = probe(CALC, flat=True, extents=False) or []
    views = [n for n in nodes if n["role"] == "text" and "editable" in n["states"]]
    assert views, "no editable text in gnome-calculator"
    return (views[0].get("text") or "").strip()


def calc_state(s):
    win = find_window(s, app="gnome-calculator", timeout=20)
    return win, observe(s, win, max_depth=20, max_elements=800)


def button(state: dict, name: str) -> dict:
    found = [e for e in state["elements"] if e["role"] in ("push_button", "button") and e.get("name") == name]
    assert found, [(e["role"], e.get("name")) for e in state["elements"] if e["role"] == "push_button"][:40]
    return found[0]


def clear_calc(s, win, st):
    """Escape clears gnome-calculator's entry; returns a fresh observation."""
    act(s, st, [{"type": "key", "keys": "Escape"}])
    return observe(s, win, max_depth=20, max_elements=800)


@pytest.fixture
def calculator(ensure_app):
    ensure_app(CALC)
    yield


def test_gtk4_element_click_then_coordinate_click_keep_their_order(calculator, lsm_stdio, probe):
    s = lsm_stdio
    win, st = calc_state(s)
    st = clear_calc(s, win, st)
    wait_for(lambda: display_text(probe) in ("", "0"), timeout=5, what="the entry cleared")
    nine, one = button(st, "9"), button(st, "1")
    x, y = center(one)
    r = act(s, st, [{"type": "click", "element_id": nine["id"]}, {"type": "click", "x": x, "y": y}])
    assert wait_for(lambda: display_text(probe) == "91", timeout=5, what='"91" in the entry')
    # Each click is confirmed by its own change, not by the other's.
    assert [x["effect"] for x in r["results"]] == ["confirmed", "confirmed"], r["results"]
    ev0, ev1 = r["results"][0]["evidence"], r["results"][1]["evidence"]
    assert ev0 != ev1, (ev0, ev1)


def test_gtk4_the_same_button_twice_is_two_clicks(calculator, lsm_stdio, probe):
    s = lsm_stdio
    win, st = calc_state(s)
    st = clear_calc(s, win, st)
    wait_for(lambda: display_text(probe) in ("", "0"), timeout=5, what="the entry cleared")
    seven = button(st, "7")
    r = act(s, st, [{"type": "click", "element_id": seven["id"]}, {"type": "click", "element_id": seven["id"]}])
    wait_for(lambda: display_text(probe) == "77", timeout=5, what='"77" in the entry')
    assert [x["effect"] for x in r["results"]] == ["confirmed", "confirmed"], r["results"]


def spin_values(probe) -> list:
    """The numeric values of gtk3-widget-factory's spin buttons (their value interface)."""
    nodes = probe("gtk3-widget-factory", flat=True, extents=False, timeout=30) or []
    return [(n.get("value") or {}).get("current") for n in nodes if n["role"] == "spin button"]


def test_gtk3_spin_button_set_value_changes_its_value(ensure_app, lsm_stdio, probe):
    s = lsm_stdio
    ensure_app("gtk3-widget-factory")
    win = find_window(s, app="gtk3-widget-factory", timeout=20)
    st = observe(s, win, max_depth=20, max_elements=1000)
    spins = [e for e in st["elements"] if e["role"] == "spin_button" and "disabled" not in e.get("states", [])]
    assert spins, "no spin button in gtk3-widget-factory"
    spin = spins[0]
    name = spin.get("name", "")
    before = spin_values(probe)
    current = next((v for v in before if v is not None), 0)
    want = 7 if current != 7 else 3
    r = act(s, st, [{"type": "set_value", "element_id": spin["id"], "value": str(want)}])
    assert r["results"][0]["effect"] == "confirmed", r["results"]
    # What the control keeps, through its value interface, outside lsm.
    after = spin_values(probe)
    assert want in after, (name, before, after, r["results"])


QT_DIALOGS = "standarddialogs"


def qt_button(state: dict, prefix: str) -> dict:
    found = [e for e in state["elements"] if e["role"] == "push_button" and e.get("name", "").startswith(prefix)]
    assert found, [e.get("name") for e in state["elements"] if e["role"] == "push_button"]
    return found[0]


def qt_page(s, win: dict, page: str) -> dict:
    """Opens a page of the example's tool box (its header is a button); a fresh observation."""
    st = observe(s, win, max_depth=20)
    act(s, st, [{"type": "click", "element_id": qt_button(st, page)["id"]}])
    return observe(s, win, max_depth=20)


def x_windows() -> list[str]:
    out = subprocess.run(["wmctrl", "-l"], capture_output=True, text=True, timeout=10).stdout
    return [" ".join(line.split()[3:]) for line in out.splitlines()]


def close_qt_dialogs(s, owner: str) -> None:
    """Escape any dialog the Qt example left open."""
    for w in windows(s):
        if w.get("transient_for") == owner or (w["app"] == QT_DIALOGS and w.get("modal")):
            st = observe(s, w)
            s.call("gui_action", {"window_id": w["window_id"], "state_id": st["state_id"],
                                  "actions": [{"type": "key", "keys": "Escape"}]})


def test_qt_deferred_press_opens_a_dialog_in_the_result(ensure_app, lsm_stdio):
    s = lsm_stdio
    ensure_app("qt5-dialogs")
    win = find_window(s, title="Standard Dialogs", timeout=20)
    close_qt_dialogs(s, win["window_id"])
    st = qt_page(s, win, "Message Boxes")
    b = qt_button(st, "QMessageBox::information")
    r = act(s, st, [{"type": "click", "element_id": b["id"]}])
    res = r["results"][0]
    opened = (r.get("changes") or {}).get("opened", [])
    try:
        assert any(t in " ".join(x_windows()) for t in ("QMessageBox::information()",)), x_windows()
        assert res["effect"] == "confirmed", res
        assert "pressed" not in res.get("evidence", ""), res
        assert opened and opened[0].get("state_id"), r
        assert "opened" in res.get("evidence", ""), res
    finally:
        close_qt_dialogs(s, win["window_id"])


def test_qt_wizard_next_reports_the_page_it_leads_to(ensure_app, stop_app, lsm_stdio):
    s = lsm_stdio
    stop_app("qt5-wizard")
    ensure_app("qt5-wizard")
    win = find_window(s, app="licensewizard", timeout=20)
    st = observe(s, win, max_depth=20)
    nxt = qt_button(st, "Next")
    r = act(s, st, [{"type": "click", "element_id": nxt["id"]}])
    res = r["results"][0]
    assert res["effect"] == "confirmed", res
    # The page Next leads to ("Evaluate <i>Super Product One</i>", with a name field) is in the
    # result's change list already.
    changes = r.get("changes") or {}
    names = [e.get("name", "") for e in changes.get("added", [])]
    names += [c.get("name", "") for c in changes.get("changed", [])]
    assert any("Name" in n or "Evaluate" in n for n in names), changes


def qttree_log(bed_env) -> list[dict]:
    path = Path(bed_env.get("LSM_BED_DIR", "/tmp/lsm-bed")) / "log" / "qttree-events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_qt_tree_cell_click_moves_the_applications_current_item(ensure_app, stop_app, lsm_stdio, bed_env):
    s = lsm_stdio
    stop_app("qttree")
    ensure_app("qttree")
    win = find_window(s, title="lsm qt tree", timeout=20)
    st = observe(s, win, max_depth=20)
    fruit = [e for e in st["elements"] if e.get("name") == "Fruit" and e["role"] in ("tree_item", "table_cell", "list_item")]
    assert fruit, [(e["role"], e.get("name")) for e in st["elements"]]
    veg = [e for e in st["elements"] if e.get("name") == "Vegetables" and e["role"] == fruit[0]["role"]]
    assert veg
    mark = len(qttree_log(bed_env))
    r = act(s, st, [{"type": "click", "element_id": veg[0]["id"]}])
    assert r["results"][0]["effect"] == "confirmed", r["results"]
    wait_for(lambda: any(e["event"] == "current" and e.get("item") == "Vegetables" for e in qttree_log(bed_env)[mark:]),
             timeout=5, what="the application's current item to be Vegetables")


def test_qt_file_dialog_closed_with_return_is_closed(ensure_app, lsm_stdio):
    s = lsm_stdio
    ensure_app("qt5-dialogs")
    win = find_window(s, title="Standard Dialogs", timeout=20)
    close_qt_dialogs(s, win["window_id"])
    st = qt_page(s, win, "File Dialogs")
    b = qt_button(st, "QFileDialog::getOpenFileName")
    r = act(s, st, [{"type": "click", "element_id": b["id"]}])
    opened = (r.get("changes") or {}).get("opened", [])
    try:
        dialog = next((w for w in windows(s) if w["title"] not in (win["title"],) and w["app"] == win["app"]), None)
        assert dialog, windows(s)
        dst = observe(s, dialog, max_depth=20)
        entry = [e for e in dst["elements"] if e["role"] in ("text", "entry") and "editable" in e.get("states", [])]
        actions = [{"type": "type", "element_id": entry[0]["id"], "text": "/etc/hostname"}] if entry else []
        r = s.call_ok("gui_action", {"window_id": dialog["window_id"], "state_id": dst["state_id"],
                                     "actions": actions + [{"type": "key", "keys": "Return"}]})
        wait_for(lambda: dialog["window_id"] not in [w["window_id"] for w in windows(s)], timeout=5,
                 what="the file dialog to close")
        closed = [w["window_id"] for w in (r.get("changes") or {}).get("closed", [])]
        assert dialog["window_id"] in closed, (dialog, r["results"], r.get("changes", {}).get("closed"), r.get("state_id"), windows(s))
        assert not r.get("state_id"), r
        assert r["results"][-1]["effect"] == "confirmed", r["results"]
    finally:
        close_qt_dialogs(s, win["window_id"])
    assert opened is not None


def test_gtk3_save_dialog_closing_after_its_button(ensure_app, lsm_stdio, tmp_path):
    s = lsm_stdio
    ensure_app("mousepad")
    wait_for(lambda: [w for w in windows(s) if w["title"].endswith("Mousepad")], timeout=20, what="Mousepad")
    for w in windows(s):  # a Save As dialog left open by an earlier failure
        if w["title"] == "Save As":
            sa = s.call("gui_state", {"window_id": w["window_id"], "screenshot": False})
            if not sa.is_error:
                s.call("gui_action", {"window_id": w["window_id"], "state_id": sa.structured_content["state_id"],
                                      "actions": [{"type": "key", "keys": "Escape"}]})
    win = [w for w in windows(s) if w["title"].endswith("Mousepad")][0]
    st = observe(s, win, max_depth=20)
    r = act(s, st, [{"type": "type", "text": "honest save"}])
    if r.get("stopped") or "state_id" not in r:
        # A Mousepad just started may replace its first window (lsm says so: "the window closed",
        # the new one in `opened`, and no `state_id` for the closed one): go on in the one there
        # is now.
        win = [w for w in windows(s) if w["title"].endswith("Mousepad")][0]
        st = observe(s, win, max_depth=20)
    else:
        st = {"window": win, "state_id": r["state_id"]}
    r = act(s, st, [{"type": "key", "keys": "ctrl+shift+s"}])
    opened = (r.get("changes") or {}).get("opened", [])
    assert opened and opened[0].get("state_id"), r
    dialog = opened[0]
    target = Path("/tmp") / f"lsm-honest-{os.getpid()}-{int(time.time())}.txt"
    dst = {"window": {"window_id": dialog["window_id"]}, "state_id": dialog["state_id"],
           "elements": dialog["elements"]}
    name = [e for e in dst["elements"] if e["role"] == "text" and "editable" in e.get("states", [])]
    assert name, [(e["role"], e.get("name")) for e in dst["elements"]]
    # Typed as a person would: the chooser enables Save on the entry's own signals.
    r = act(s, dst, [{"type": "focus", "element_id": name[0]["id"]}, {"type": "key", "keys": "ctrl+a"},
                     {"type": "type", "text": str(target)}])
    st2 = observe(s, dialog["window_id"], max_depth=20)
    save = [e for e in st2["elements"] if e["role"] == "push_button" and e.get("name") in ("Save", "_Save")]
    assert save, [(e["role"], e.get("name")) for e in st2["elements"] if e["role"] == "push_button"]
    r = act(s, st2, [{"type": "click", "element_id": save[0]["id"]}])
    wait_for(lambda: target.exists(), timeout=5, what=f"{target} written")
    res = r["results"][0]
    assert res["effect"] == "confirmed", res
    assert "armed" not in res.get("evidence", ""), res
    # The dialog is gone: no state_id for it, and it is in the closed list.
    assert not r.get("state_id"), r
    assert dialog["window_id"] in [w["window_id"] for w in (r.get("changes") or {}).get("closed", [])], r
    target.unlink(missing_ok=True)


def window_pixels(window_id: str) -> bytes:
    """The window's pixels as the X server has them (ImageMagick's import), outside lsm."""
    return subprocess.run(["import", "-window", window_id, "rgba:-"], capture_output=True, timeout=20).stdout


def test_gtk2_toolbar_button_that_changes_only_pixels_is_no_no_change(ensure_app, stop_app, lsm_stdio, tmp_path):
    """gpicview (GTK 2, gail): its unnamed rotate button turns the picture; no element, state or
    title says so. The answer must not be `no_change`."""
    s = lsm_stdio
    picture = tmp_path / "lopsided.png"
    subprocess.run(["convert", "-size", "240x120", "xc:white", "-fill", "red", "-draw", "rectangle 0,0 80,120",
                    "-fill", "blue", "-draw", "rectangle 160,0 240,40", str(picture)], check=True, timeout=20)
    stop_app("gpicview")
    ensure_app("gpicview", str(picture))
    win = find_window(s, app="gpicview", timeout=20)
    st = observe(s, win, max_depth=20)
    unnamed = [e for e in st["elements"] if e["role"] == "push_button" and not e.get("name")]
    assert len(unnamed) >= 2, [(e["role"], e.get("name")) for e in st["elements"]]
    before = window_pixels(win["window_id"])
    r = act(s, st, [{"type": "click", "element_id": unnamed[1]["id"]}])
    wait_for(lambda: window_pixels(win["window_id"]) != before, timeout=5, what="the picture to turn")
    res = r["results"][0]
    assert res["effect"] != "no_change", res
    assert res["effect"] in ("unverifiable", "confirmed"), res
    if res["effect"] == "unverifiable":
        assert "pixels changed" in res["unverified"], res
    stop_app("gpicview")


def test_qt_depth_counts_what_the_model_sees(ensure_app, lsm_stdio):
    """Part 8: Qt nests its fields in unnamed layout panels (the standard dialogs example's check
    boxes are 6 AT-SPI levels down, 3 of them bare panels). Folded containers use up no depth,
    and a cut says which limit and where."""
    s = lsm_stdio
    ensure_app("qt5-dialogs")
    win = find_window(s, title="Standard Dialogs", timeout=20)
    st = qt_page(s, win, "Font Dialog")
    boxes = [e for e in observe(s, win, max_depth=3)["elements"] if e["role"] == "check_box"]
    assert any(e.get("name") == "Show scalable fonts" for e in boxes), boxes
    cut = observe(s, win, max_depth=2)
    assert cut["truncated"] and "max_depth (2)" in cut["truncated_reason"], cut.get("truncated_reason")
    assert "below" in cut["truncated_reason"], cut["truncated_reason"]
    assert st["elements"]


def test_gtk3_first_click_at_a_point_of_a_window_mapped_under_the_pointer(lsm_stdio, probe, bed_env, tmp_path):
    """galculator (GTK 3) mapped under the pointer: the first click at a key's point must land.
    A press sent in the same instant as the pointer's first arrival over the key was dropped
    (every time on a fresh desktop); the pointer now arrives before it presses."""
    s = lsm_stdio
    home = tmp_path / "home"
    home.mkdir()
    env = dict(bed_env, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    width, height = (int(v) for v in subprocess.run(
        ["xdotool", "getdisplaygeometry"], env=env, capture_output=True, text=True, timeout=10).stdout.split())
    subprocess.run(["xdotool", "mousemove", str(width // 2), str(height // 2)], env=env, check=True, timeout=10)
    app = subprocess.Popen(["galculator"], env=env, cwd=home, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        win = wait_for(lambda: next((w for w in windows(s) if w.get("pid") == app.pid), None), timeout=20,
                       what="galculator in gui_list")
        # The scenario: the window was mapped where the pointer is.
        ids = subprocess.run(["xdotool", "search", "--pid", str(app.pid)], env=env, capture_output=True,
                             text=True, timeout=10).stdout.split()
        under = subprocess.run(["xdotool", "getmouselocation", "--shell"], env=env, capture_output=True,
                               text=True, timeout=10).stdout
        pointer_window = next((ln.split("=")[1] for ln in under.splitlines() if ln.startswith("WINDOW=")), "")
        assert pointer_window in ids, f"galculator was not mapped under the pointer: {under} not in {ids}"

        def display() -> str:
            nodes = probe(pid=app.pid, flat=True, extents=False) or []
            return next((n.get("text") or "" for n in nodes if n["role"] == "text"), "").strip()

        st = observe(s, win, screenshot=False, max_depth=20)
        keys = {e.get("name"): e for e in st["elements"] if e["role"] == "toggle_button"}
        r = act(s, st, [{"type": "click", "element_id": keys["7"]["id"]}])
        wait_for(lambda: display() == "7", timeout=5, what='"7" on the display')
        x, y = center(keys["9"])
        st = observe(s, win, screenshot=False, max_depth=20)
        r = act(s, st, [{"type": "click", "x": x, "y": y}])
        assert wait_for(lambda: display() == "79", timeout=5, what='"79" on the display'), display()
        assert r["results"][0]["effect"] == "confirmed", r["results"]
    finally:
        os.killpg(app.pid, 9)


def test_a_change_drawn_between_two_calls_is_not_the_next_actions_effect(lsm_stdio, bed_env, tmp_path):
    """lsm keeps the pixels of the window it last answered about while nothing is drawn on it
    (X Damage), instead of reading them again before the next action. A window that draws by
    itself between two calls (an xterm printing a line) must not lend that change to the next
    action: a click that does nothing changed none of its pixels (a window without accessibility
    is then `unverifiable`, never `confirmed`)."""
    s = lsm_stdio
    trigger, again = tmp_path / "draw", tmp_path / "again"
    title = f"lsm kept pixels {os.getpid()}"
    script = (f"echo ready; while [ ! -e {trigger} ]; do sleep 0.05; done; echo DRAWN BY ITSELF; "
              f"while [ ! -e {again} ]; do sleep 0.05; done; echo AND AGAIN; exec sleep 600")
    term = subprocess.Popen(["xterm", "-geometry", "60x12+650+420", "-title", title, "-e", "sh", "-c", script],
                            env=bed_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        win = find_window(s, title=title, timeout=20)
        st = observe(s, win, screenshot=False)
        blank = {"type": "click", "x": win["bounds"]["width"] - 12, "y": win["bounds"]["height"] - 12}
        # The first click focuses the terminal (its cursor is drawn filled): its own change.
        r = act(s, st, [blank])
        time.sleep(0.5)
        before = window_pixels(win["window_id"])
        trigger.touch()
        wait_for(lambda: window_pixels(win["window_id"]) != before, timeout=10, what="the xterm's line")
        r = act(s, {"window": win, "state_id": r["state_id"]}, [blank])
        res = r["results"][0]
        assert res["effect"] in ("no_change", "unverifiable"), json.dumps(res)
        assert "none of its pixels changed" in res.get("unverified", ""), json.dumps(res)
        # Moved, then drawn on again: the areas drawn are read where the window is now (the
        # gui_state after the move keeps no new capture: the one kept is watched already).
        subprocess.run(["xdotool", "windowmove", win["window_id"], "600", "380"], env=bed_env, check=True, timeout=10)
        win = wait_for(lambda: next((w for w in windows(s) if w["window_id"] == win["window_id"]
                                     and w["bounds"]["y"] != win["bounds"]["y"]), None), timeout=10, what="moved")
        before = window_pixels(win["window_id"])
        again.touch()
        wait_for(lambda: window_pixels(win["window_id"]) != before, timeout=10, what="the second line")
        r = act(s, observe(s, win, screenshot=False), [blank])
        res = r["results"][0]
        assert "none of its pixels changed" in res.get("unverified", ""), json.dumps(res)
    finally:
        os.killpg(term.pid, 9)
