"""gui_list on a controller without a desktop of its own (issue 9, item 11): the normal server
set-up, workers doing the GUI work. The controller runs with no DISPLAY, no buses and
/tmp/.X11-unix hidden behind an empty tmpfs (as in test_headless.py); three workers are enrolled:
one on a test desktop of its own, one started without a graphical session (also with the X
socket directory hidden), one never started.

Asserted through the official Python MCP client (which validates the structured content
against the tool's output schema):
- gui_list without `machine` succeeds (no GUI_UNAVAILABLE), has no windows for this machine and
  lists every machine: `local` with available false and why (where it looked), the desktop
  worker connected and available, the session-less worker connected but unavailable (and why),
  the never-started one offline;
- the text says the same; the worker found there works (gui_list/gui_state with its name show
  the test app, checked against that worker's own AT-SPI);
- MACHINE_OFFLINE for the offline worker still tells the model to call gui_list, which now
  answers.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from lsm_mcp import HIDE_X11, X11_DIR, can_hide_x11, err_code, err_message, headless_env, text_of  # noqa: E402
from lsm_remote import RemoteRig, bed_down, bed_up, probe_label  # noqa: E402

TITLE = "lsm test app"
BED_INDEX = 8  # display :78, apart from test_remote.py's :71/:72


pytestmark = pytest.mark.skipif(not can_hide_x11(), reason="cannot hide /tmp/.X11-unix (unshare/mount)")


class HeadlessControllerRig(RemoteRig):
    """A controller that sees no desktop, with the workers described in the module docstring."""

    def __init__(self):
        super().__init__(workers=("desk", "nosession", "never"), use_netns=False)
        self.controller_wrapper = HIDE_X11
        self.desk_env: dict[str, str] = {}

    def start(self) -> "HeadlessControllerRig":
        try:
            self.desk_env = bed_up(BED_INDEX)
            for name in self.names:
                self.enrol(name)
            self.start_controller()
            self.add_worker("desk", self.desk_env).start()
            self.add_worker("nosession", headless_env(), prefix=HIDE_X11).start()
            self.wait_connected("desk", "nosession")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for w in self.workers.values():
            try:
                w.kill(signal.SIGTERM)
            except Exception:  # noqa: BLE001 - best effort teardown
                pass
        if self.session is not None:
            self.session.close()
        bed_down(BED_INDEX)


@pytest.fixture(scope="module")
def rig():
    r = HeadlessControllerRig().start()
    yield r
    r.stop()


def test_gui_list_on_a_controller_without_desktop_lists_every_machine(rig):
    s = rig.session
    r = s.call("gui_list", {})
    assert not r.is_error, f"gui_list failed on a controller without a desktop: {text_of(r)}"
    out = r.structured_content
    print("\n" + text_of(r))
    assert out["machine"] == "local"
    assert out["windows"] == [], out["windows"]
    machines = {m["name"]: m for m in out["machines"]}
    assert list(machines) == ["local", "desk", "never", "nosession"], list(machines)

    local = machines["local"]
    assert local["available"] is False, local
    why = local.get("unavailable_reason") or ""
    assert "GUI_UNAVAILABLE" in why and X11_DIR in why and "environment" in why, why

    desk = machines["desk"]
    assert desk["connected"] is True and desk["available"] is True, desk
    assert "unavailable_reason" not in desk, desk

    nosession = machines["nosession"]
    assert nosession["connected"] is True and nosession["available"] is False, nosession
    assert "GUI_UNAVAILABLE" in (nosession.get("unavailable_reason") or ""), nosession

    never = machines["never"]
    assert never["connected"] is False and never["available"] is False, never
    assert "never connected" in (never.get("unavailable_reason") or ""), never

    # The backend part says there is no GUI here, and why.
    assert out["backend"]["name"] == "none"
    assert any(X11_DIR in n for n in out["backend"].get("notes", [])), out["backend"]

    text = text_of(r)
    assert "local: this machine, GUI unavailable: GUI_UNAVAILABLE" in text, text
    assert "desk: connected, GUI available" in text, text
    assert "nosession: connected, GUI unavailable" in text, text
    assert "never: offline" in text, text


def test_the_listed_worker_is_usable(rig):
    s = rig.session
    listed = {m["name"]: m for m in s.call_ok("gui_list", {})["machines"]}
    assert listed["desk"]["available"]
    out = s.call_ok("gui_list", {"machine": "desk"})
    assert out["machine"] == "desk"
    win = [w for w in out["windows"] if w["title"] == TITLE]
    assert win, out["windows"]
    st = s.call_ok("gui_state", {"machine": "desk", "window_id": win[0]["window_id"], "screenshot": False})
    pressed = [e for e in st["elements"] if e.get("name", "").startswith("Pressed:")]
    # Ground truth from that worker's own AT-SPI bus.
    truth = probe_label(rig.desk_env, "Pressed:")
    assert pressed and pressed[0]["name"] == truth, (pressed, truth)


def test_offline_message_points_to_a_gui_list_that_answers(rig):
    s = rig.session
    r = s.call("gui_state", {"machine": "never", "window_id": "0x1"})
    assert err_code(r) == "MACHINE_OFFLINE", text_of(r)
    assert "gui_list" in err_message(r)
    r = s.call("gui_list", {})
    assert not r.is_error, text_of(r)
    # A machine named explicitly keeps its own error: this one has no session.
    r = s.call("gui_list", {"machine": "nosession"})
    assert err_code(r) == "GUI_UNAVAILABLE", text_of(r)
