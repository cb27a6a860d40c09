"""Issue 11: gui_action closes the loop on the real GTK3 test app and xterm: it settles, returns
what changed with a new state_id, and an effect per action; element ids stay with their
controls. Effects are checked through AT-SPI (tests/lib/atspi_probe.py) or on screen."""

import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gui_flow import box as bounds_of  # noqa: E402
from gui_flow import center, element, find_window, observe  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import image_bytes  # noqa: E402
from png_rgba import decode  # noqa: E402

TITLE = "lsm test app"


def step(s, window_id: str, state_id: str, actions: list[dict], **kw) -> dict:
    return s.call_ok("gui_action", {"window_id": window_id, "state_id": state_id, "actions": actions, **kw})


@pytest.fixture
def app(lsm):
    return lsm, find_window(lsm, title=TITLE)


def test_a_chain_of_actions_needs_one_gui_state(app, probe):
    s, win = app
    wid = win["window_id"]
    st = observe(s, win)
    box = element(st, "Enable feature", "check_box")
    was = "checked" in probe(find="Enable feature")["states"]
    out = step(s, wid, st["state_id"], [{"type": "click", "element_id": box["id"]}])
    now = "checked" in probe(find="Enable feature")["states"]
    assert now != was
    r = out["results"][0]
    assert r["effect"] == "confirmed" and r["evidence"] == f"checked {str(was).lower()} -> {str(now).lower()}", r
    assert out["settled"] is True and out["state_id"].startswith("st_")
    changed = {c["id"]: c for c in out["changes"]["changed"]}
    assert box["id"] in changed, out["changes"]
    assert ("checked" in changed[box["id"]].get("states_on" if now else "states_off", [])), changed[box["id"]]
    # The status label's new text is in the change list too.
    names = [c["name"] for c in out["changes"]["changed"]]
    assert f"Feature: {'on' if now else 'off'}" in names, names

    # The next action uses the returned state_id: no gui_state in between.
    entry = element(st, "Name entry")
    text = f"step {uuid.uuid4().hex[:6]}"
    out2 = step(s, wid, out["state_id"], [{"type": "type", "element_id": entry["id"], "text": text}])
    assert probe(find="Name entry")["text"] == text
    r2 = out2["results"][0]
    assert r2["effect"] == "confirmed" and text in r2["evidence"], r2
    # Same controls, same ids, in a fresh observation.
    again = observe(s, win)
    assert element(again, "Enable feature", "check_box")["id"] == box["id"]
    assert element(again, "Name entry")["id"] == entry["id"]


def _region(png: bytes, rect) -> list[bytes]:
    _, _, rows = decode(png)
    x, y, w, h = rect
    return [row[x * 4:(x + w) * 4] for row in rows[y:y + h]]


def test_screenshot_on_gui_action_is_the_settled_window(app, probe):
    s, win = app
    wid = win["window_id"]
    res = s.call("gui_state", {"window_id": wid})
    st = s.ok(res)
    before_png = image_bytes(res)
    box = element(st, "Enable feature", "check_box")
    was = "checked" in probe(find="Enable feature")["states"]
    res = s.call("gui_action", {"window_id": wid, "state_id": st["state_id"], "screenshot": True,
                                "actions": [{"type": "click", "element_id": box["id"]}]})
    out = s.ok(res)
    assert ("checked" in probe(find="Enable feature")["states"]) != was
    png = image_bytes(res)
    assert png, "gui_action with screenshot: true returned no image"
    w, h, _ = decode(png)
    shot = out["screenshot"]
    assert (w, h) == (shot["width"], shot["height"]) == (st["screenshot"]["width"], st["screenshot"]["height"])
    assert shot["bytes"] == len(png)
    # The image is of the window after the click: the check box's pixels changed.
    assert _region(png, bounds_of(box)) != _region(before_png, bounds_of(box))
    # Without the argument, no image.
    res = s.call("gui_action", {"window_id": wid, "state_id": out["state_id"],
                                "actions": [{"type": "click", "element_id": box["id"]}]})
    assert image_bytes(res) is None and "screenshot" not in s.ok(res)


def test_a_click_on_a_plain_label_is_no_change(app):
    s, win = app
    # The check box clicked by the test before may still be drawing its transition (GTK 3's
    # Adwaita animates it for a moment after its state changed): that is not this click's doing,
    # but pixels changing while it is judged are rightly not "no change".
    time.sleep(0.5)
    st = observe(s, win)
    target = element(st, "Drop target")
    out = step(s, win["window_id"], st["state_id"], [{"type": "click", "element_id": target["id"]}],
               settle_ms=600)
    r = out["results"][0]
    assert r["effect"] == "no_change", str(r)
    assert out["changes"] == {} or not any(out["changes"].get(k) for k in ("added", "removed", "opened", "closed"))
    # no_change means nothing at all changed: no element, no window, no focus.
    assert out["changes"] == {}, out["changes"]


def test_an_old_id_works_only_while_the_current_observation_has_it(app):
    s, win = app
    first = observe(s, win)
    press = element(first, "Press me", "push_button")
    second = observe(s, win)
    assert element(second, "Press me", "push_button")["id"] == press["id"]
    # An id the current observation does not contain is refused.
    bad = s.call("gui_action", {"window_id": win["window_id"], "state_id": second["state_id"],
                                "actions": [{"type": "click", "element_id": "e99999"}], "observe": "none"})
    assert bad.is_error and "ELEMENT_NOT_FOUND" in str(bad.structured_content or bad.content)
    # An id of an older observation that the current one lacks is refused: a menu item seen
    # while the menu was open, after Escape closed it.
    st = observe(s, win)
    opened = step(s, win["window_id"], st["state_id"],
                  [{"type": "right_click", "element_id": element(st, "Context area")["id"]}])
    item = next(e for e in opened["changes"]["added"] if e.get("name", "") == "Copy item")
    closed = step(s, win["window_id"], opened["state_id"], [{"type": "key", "keys": "Escape"}])
    assert item["id"] in closed["changes"]["removed"], closed["changes"]
    stale = s.call("gui_action", {"window_id": win["window_id"], "state_id": closed["state_id"],
                                  "actions": [{"type": "click", "element_id": item["id"]}], "observe": "none"})
    assert stale.is_error and "ELEMENT_NOT_FOUND" in str(stale.structured_content or stale.content)
    # While an id from the first observation is still in the current one, it acts.
    pressed = step(s, win["window_id"], observe(s, win)["state_id"],
                   [{"type": "click", "element_id": press["id"]}])
    assert pressed["results"][0]["effect"] == "confirmed", pressed["results"]


def test_typing_into_xterm_is_unverifiable_with_the_changed_pixels(lsm):
    win = find_window(lsm, app="xterm")
    st = lsm.call_ok("gui_state", {"window_id": win["window_id"]})
    w, h = st["coordinate_space"]["width"], st["coordinate_space"]["height"]
    out = step(lsm, win["window_id"], st["state_id"],
               [{"type": "click", "x": w // 2, "y": h // 2}, {"type": "type", "text": "# lsm step"}])
    efx = [r["effect"] for r in out["results"]]
    assert efx == ["unverifiable", "unverifiable"], out["results"]
    assert "pixels changed" in out["results"][1]["unverified"], out["results"][1]
