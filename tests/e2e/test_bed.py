"""Sanity of the test desktop itself: if these fail, every other e2e failure is suspect."""

import os
import subprocess

import pytest

# Every control of tests/apps/lsm_testapp.py as AT-SPI shows it: (accessible name, role).
TESTAPP_CONTROLS = [
    ("lsm test app", "frame"),
    ("Enable feature", "check box"),
    ("Feature: off", "label"),
    ("Press me", "push button"),
    ("Pressed: 0", "label"),
    ("Name entry", "text"),
    ("Combo entry", "text"),
    ("Recorded: ", "label"),
    ("Password", "password text"),
    ("Volume", "slider"),
    ("Volume: 0", "label"),
    ("Rows", "table"),
    ("Row 0", "table cell"),
    ("Row 49", "table cell"),
    ("Scrolled: 0", "label"),
    ("Double-click here", "label"),
    ("Double-clicked: 0", "label"),
    ("Clicked at none", "label"),
    ("Context area", "label"),
    ("Menu: none", "label"),
    ("Drag source", "label"),
    ("Drop target", "label"),
    ("Dropped: 0", "label"),
    ("Combo: none", "label"),
    ("Key: none", "label"),
]

# AT-SPI application names of the accessible bed apps
REGISTRY_NAMES = {
    "testapp": "lsm_testapp.py",
    "qt5-calculator": "calculator",
    "gtk3-widget-factory": "gtk3-widget-factory",
    "gtk4-widget-factory": "gtk4-widget-factory",
}


def bed_apps():
    return os.environ.get("LSM_BED_APPS", "testapp qt5-calculator xterm").split()


def overlap(a, b):
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or
                a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_accessible_apps_are_registered(probe):
    names = {app["name"] for app in probe(list_apps=True)}
    for key in bed_apps():
        if key in REGISTRY_NAMES:
            assert REGISTRY_NAMES[key] in names, f"{key} is not on the AT-SPI registry: {names}"


def test_xterm_has_a_window(bed_env):
    if "xterm" not in bed_apps():
        pytest.skip("no xterm in LSM_BED_APPS")
    out = subprocess.run(["xdotool", "search", "--onlyvisible", "--classname", "xterm"],
                         capture_output=True, text=True, timeout=10).stdout.split()
    assert out, "no mapped xterm window"


def test_testapp_controls_are_visible_through_atspi(fresh_testapp, probe):
    nodes = probe(flat=True)
    seen = {(n["name"], n["role"]) for n in nodes}
    missing = [c for c in TESTAPP_CONTROLS if c not in seen]
    assert not missing, f"missing controls: {missing}"
    names = [n["name"] for n in nodes if n["name"]]
    for name, _ in TESTAPP_CONTROLS:
        assert names.count(name) == 1, f"name {name!r} is not unique"
    volume = next(n for n in nodes if n["name"] == "Volume")
    assert volume["value"] == {"current": 0.0, "min": 0.0, "max": 100.0}


def test_layout_is_fixed_and_does_not_overlap(probe):
    frame = probe(find="lsm test app", role="frame")
    assert (frame["extents"]["x"], frame["extents"]["y"]) == (20, 20)
    if "qt5-calculator" in bed_apps():
        calc = probe("calculator", depth=1)["children"][0]
        assert calc["extents"]["x"] >= 700, calc["extents"]
        assert not overlap(frame["extents"], calc["extents"])


def test_restart_app_gives_a_fresh_app_at_the_same_place(probe, restart_app, app_pid):
    old = app_pid("testapp")
    new = restart_app("testapp")
    assert new != old and app_pid("testapp") == new
    frame = probe(pid=new, find="lsm test app", role="frame")
    assert (frame["extents"]["x"], frame["extents"]["y"]) == (20, 20)
    assert probe(find="Pressed: 0") is not None
