"""The UI Automation half of the Windows backend, against lsm's own Win32 test application
(tests/wine/lsm_wintest.c): elements with roles, states and values, the password field
redacted, semantic clicks (Invoke, Toggle), set_value through the Value pattern, and
ELEMENT_STALE for a control that was replaced. Every effect is read from the application's
own log.

UI Automation does not exist under Wine (CoCreateInstance(CUIAutomation) fails: class not
registered), so under Wine every test here is reported as skipped with lsm's own reason,
never as passed. On a Windows machine with an interactive session they run as written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "lib"))

from conftest import TITLE  # noqa: E402
from lsm_mcp import err_code, text_of  # noqa: E402


@pytest.fixture
def uia(lsm):
    """The test app's window, when lsm has UI Automation; otherwise the test is skipped with
    the reason lsm gives."""
    listed = lsm.call_ok("gui_list", {})
    backend = listed["backend"]
    if "accessibility" not in backend["capabilities"]:
        pytest.skip("no UI Automation here: " + "; ".join(backend.get("notes", [])))
    found = [w for w in listed["windows"] if w["title"] == TITLE]
    assert found, [w["title"] for w in listed["windows"]]
    return found[0]


def observe(lsm, win: dict) -> dict:
    return lsm.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})


def named(state: dict, role: str, name: str | None = None) -> dict:
    hits = [e for e in state["elements"] if e["role"] == role and (name is None or e.get("name") == name)]
    assert hits, f"no {role} {name!r} in {[(e['role'], e.get('name')) for e in state['elements']]}"
    return hits[0]


def act(lsm, win: dict, state: dict, actions: list[dict]):
    return lsm.call("gui_action", {"window_id": win["window_id"], "state_id": state["state_id"],
                                   "actions": actions})


def test_the_tree_has_roles_states_and_a_redacted_password(lsm, app, uia):
    assert uia["accessible"] is True
    st = observe(lsm, uia)
    button = named(st, "push_button", "Press me")
    assert "invoke" in button.get("actions", []), button
    x, y, w, h = button["bounds"]
    assert (x, y, w, h) == app.button, (button, app.button)
    named(st, "check_box", "Remember me")
    named(st, "text")
    secret = named(st, "password_text")
    assert "value" not in secret, secret


def test_semantic_click_toggle_and_set_value(lsm, app, uia):
    st = observe(lsm, uia)
    mark = app.mark()
    out = lsm.ok(act(lsm, uia, st, [{"type": "click", "element_id": named(st, "push_button", "Press me")["id"]}]))
    assert out["results"][0]["method"] == "uia_invoke", out
    app.wait(lambda line: line == "pressed 1", "the button press", after=mark)

    st = observe(lsm, uia)
    mark = app.mark()
    out = lsm.ok(act(lsm, uia, st, [{"type": "click", "element_id": named(st, "check_box")["id"]}]))
    assert out["results"][0]["method"] == "uia_toggle", out
    assert out["results"][0]["verified"] and out["results"][0]["evidence"] == "checked false -> true", out
    app.wait(lambda line: line == "checked 1", "the check box checked", after=mark)

    st = observe(lsm, uia)
    mark = app.mark()
    text = "abc 日本語 한글"
    out = lsm.ok(act(lsm, uia, st, [{"type": "set_value", "element_id": named(st, "text")["id"], "value": text}]))
    assert out["results"][0]["method"] == "uia_value", out
    assert out["results"][0]["evidence"] == f"text is now \"{text}\"", out
    app.wait(lambda line: line == f"text {text}", "the edit's new text", after=mark)

    st = observe(lsm, uia)
    mark = app.mark()
    r = act(lsm, uia, st, [{"type": "set_value", "element_id": named(st, "password_text")["id"],
                             "value": "hunter2"}])
    lsm.ok(r)
    assert "hunter2" not in text_of(r)
    app.wait(lambda line: line == "secret 7", "the password's length", after=mark)


def test_a_replaced_control_is_stale_and_nothing_is_pressed(lsm, app, uia):
    st = observe(lsm, uia)
    button = named(st, "push_button", "Press me")
    mark = app.mark()
    app.log.with_name(app.log.name + ".recreate").write_text("")
    app.wait(lambda line: line == "recreated", "the button replaced", after=mark)
    r = act(lsm, uia, st, [{"type": "click", "element_id": button["id"]}])
    assert err_code(r) in ("ELEMENT_STALE", "WINDOW_CHANGED"), text_of(r)
    assert not [line for line in app.lines()[mark:] if line.startswith("pressed")], app.lines()
