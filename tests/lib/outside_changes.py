"""Changes another client makes to the test app between two observations (X11 and Wayland suites
alike): a check box toggled, a button pressed (its count label renamed), a control removed, each
through AT-SPI actions of tests/lib/atspi_probe.py, outside lsm."""

from __future__ import annotations

from atspi_ground import run_probe
from gui_flow import element, element_prefix, observe, wait_for


def observation_sees_changes_made_outside_lsm(s, win: dict) -> None:
    """Observes the test app twice, changes it outside lsm, checks the changes through AT-SPI,
    then asserts the next observation shows every one. The caller restarts the test app after
    (its "Remove me" is gone)."""
    observe(s, win, max_elements=1000)
    st = observe(s, win, max_elements=1000)
    was_checked = "checked" in element(st, "Enable feature", "check_box").get("states", [])
    feature, pressed = element_prefix(st, "Feature:")["name"], element_prefix(st, "Pressed:")["name"]
    element(st, "Remove me", "push_button")
    for name, role in (("Enable feature", "check box"), ("Press me", "push button"), ("Remove me", "push button")):
        hit = run_probe(find=name, role=role, do_action=True)
        assert hit and hit.get("did_action"), f"{name}: {hit}"
    wait_for(lambda: run_probe(find="Remove me") is None, timeout=10, what="Remove me gone (AT-SPI)")
    truth = run_probe(find="Enable feature", role="check box")
    assert ("checked" in truth.get("states", [])) != was_checked, truth
    st = observe(s, win, max_elements=1000)
    assert ("checked" in element(st, "Enable feature", "check_box").get("states", [])) != was_checked
    assert element_prefix(st, "Feature:")["name"] != feature
    assert element_prefix(st, "Pressed:")["name"] != pressed
    assert not [e for e in st["elements"] if e.get("name") == "Remove me"], "a removed control was observed"
