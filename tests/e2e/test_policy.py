"""The machine's policy (docs/policy.md) on the X11 bed with the real test app: a denied app's
window refuses every action type with POLICY_DENIED and nothing reaches it (the app's own event
log and its AT-SPI labels and text, read outside lsm, stay as they were); observe-only allows
gui_state only; an edit takes effect on the next call; a malformed edit keeps the last good
policy with the reason in gui_list's notes; a worker's own policy holds whatever its controller
sends; a person's click on the web UI goes through on a denied window."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from gui_flow import element, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import headless_env, middle  # noqa: E402
from lsm_web import WebServer  # noqa: E402
from worker_on_bed import remote_window, worker_on_bed  # noqa: E402

TITLE = "lsm test app"
APP = "lsm_testapp.py"  # the test app's name in gui_list (and its app_id)

DENY = f'# the test app is off limits\n[[rule]]\napp = "{APP}"\naccess = "deny"\n'
ALLOW = 'default = "allow"\n'


def write(path: Path, text: str) -> None:
    """Replaces the file as an editor would (a new size or time: lsm sees the change)."""
    path.write_text(text)


def app_events() -> list[str]:
    """The test app's own event log (one JSON line per thing it received)."""
    log = os.environ.get("LSM_TESTAPP_LOG")
    assert log, "the bed sets LSM_TESTAPP_LOG"
    return Path(log).read_text().splitlines() if os.path.exists(log) else []


def app_truth(probe) -> dict:
    """What the app shows, read through AT-SPI: the labels its controls change and the entry's text."""
    def label(prefix: str) -> str | None:
        node = probe(find=prefix, match="prefix", extents=False)
        return node and node["name"]
    entry = probe(find="Name entry", extents=False) or {}
    return {"pressed": label("Pressed:"), "volume": label("Volume:"), "feature": label("Feature:"),
            "name_entry": entry.get("text")}


def every_action(st: dict) -> list[list[dict]]:
    """One gui_action of every kind that sends input, each aimed where the app would record it."""
    def el(name: str) -> dict:
        return element(st, name)

    def at(name: str) -> dict:
        x, y = middle(el(name))
        return {"x": x, "y": y}
    press, entry = el("Press me")["id"], el("Name entry")["id"]
    drop = middle(el("Drop target"))
    return [
        [{"type": "click", "element_id": press}],
        [{"type": "click", **at("Double-click here")}],
        [{"type": "double_click", **at("Double-click here")}],
        [{"type": "right_click", **at("Context area")}],
        [{"type": "move", **at("Press me")}],
        [{"type": "scroll", **at("Rows"), "delta_y": 5}],
        [{"type": "drag", **at("Drag source"), "to_x": drop[0], "to_y": drop[1]}],
        [{"type": "type", "element_id": entry, "text": "not for you"}],
        [{"type": "focus", "element_id": entry}, {"type": "type", "text": "nor this"}],
        [{"type": "key", "keys": "F5"}],
        [{"type": "set_value", "element_id": el("Volume")["id"], "value": "77"}],
        [{"type": "wait", "seconds": 0.01}, {"type": "click", "element_id": el("Enable feature")["id"]}],
    ]


def refused(s, st: dict, actions: list[dict]) -> str:
    r = s.call("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"],
                              "actions": actions})
    assert err_code(r) == "POLICY_DENIED", (actions, r)  # noqa: F405
    return err_message(r)  # noqa: F405


def policy_of(windows: list[dict], title: str) -> str | None:
    (w,) = [w for w in windows if w["title"] == title]
    return w.get("policy")


def test_a_denied_app_refuses_every_action_and_nothing_reaches_it(lsm_factory, tmp_path, probe, fresh_testapp):
    policy = tmp_path / "policy.toml"
    write(policy, ALLOW)
    s = lsm_factory("stdio", args=["--policy", str(policy), "--state-ttl", "300"])
    win = find_window(s, title=TITLE)
    # Observed while allowed: the state_ids a model could still hold when the policy changes.
    first = observe(s, win)
    calls = every_action(first)
    states = [first] + [observe(s, win) for _ in calls[1:]]
    write(policy, DENY)
    listed = s.call_ok("gui_list", {})["windows"]
    assert policy_of(listed, TITLE) == "deny", listed
    assert all("policy" not in w for w in listed if w["title"] != TITLE), listed
    before, truth = app_events(), app_truth(probe)
    assert truth["pressed"] == "Pressed: 0" and truth["name_entry"] == "", truth
    r = s.call("gui_state", {"window_id": win["window_id"]})
    assert err_code(r) == "POLICY_DENIED", r  # noqa: F405
    for st, actions in zip(states, calls):
        msg = refused(s, st, actions)
        assert f'rule 1 of {policy} (line 2: app = "{APP}", access = "deny")' in msg, msg
    time.sleep(0.5)  # anything that had been sent would have landed by now
    assert app_events() == before, "the app received input"
    assert app_truth(probe) == truth


def test_observe_only_allows_gui_state_only(lsm_factory, probe, fresh_testapp):
    s = lsm_factory("http", args=["--observe-only", APP])
    win = find_window(s, title=TITLE)
    assert win.get("policy") == "observe-only", win
    st = observe(s, win, screenshot=True)
    assert st["window"]["policy"] == "observe-only"
    assert element(st, "Press me")["role"] == "push_button"
    before, truth = app_events(), app_truth(probe)
    for actions in every_action(st):
        msg = refused(s, observe(s, win), actions)
        assert "observe-only" in msg and f'--observe-only "{APP}"' in msg, msg
    time.sleep(0.5)
    assert app_events() == before and app_truth(probe) == truth


def test_edits_take_effect_on_the_next_call_and_a_malformed_one_keeps_the_last_good(lsm_factory, tmp_path, probe,
                                                                                     fresh_testapp):
    policy = tmp_path / "policy.toml"
    write(policy, DENY)
    s = lsm_factory("stdio", args=["--policy", str(policy)])
    assert find_window(s, title=TITLE).get("policy") == "deny"
    # A typo: the last good policy (deny) stays, and gui_list says why.
    write(policy, DENY.replace('"deny"', '"alow"'))
    for _ in range(2):
        out = s.call_ok("gui_list", {})
        assert policy_of(out["windows"], TITLE) == "deny"
        notes = [n for n in out["backend"].get("notes", []) if "policy" in n]
        assert len(notes) == 1 and f"{policy} line 4" in notes[0] and '"alow"' in notes[0], notes
        assert "last good policy stays in force" in notes[0], notes
    assert err_code(s.call("gui_state", {"window_id": find_window(s, title=TITLE)["window_id"]})) == "POLICY_DENIED"  # noqa: F405,E501
    # Logged once for that change, not on every call.
    log = Path(s.stderr_path).read_text(errors="replace")
    assert len(re.findall(r"policy file not used: .*line 4", log)) == 1, log[-3000:]
    # Fixed to allow: the next call may act, and the click lands in the app.
    write(policy, ALLOW)
    out = s.call_ok("gui_list", {})
    assert policy_of(out["windows"], TITLE) is None
    assert not [n for n in out["backend"].get("notes", []) if "policy" in n]
    st = observe(s, find_window(s, title=TITLE))
    s.call_ok("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"],
                             "actions": [{"type": "click", "element_id": element(st, "Press me")["id"]}]})
    wait_for(lambda: app_truth(probe)["pressed"] == "Pressed: 1", what="the allowed click in the app")


def test_a_worker_enforces_its_own_policy_whatever_the_controller_sends(lsm_bin, tmp_path, probe, fresh_testapp):
    # The controller has no desktop of its own and a policy that allows everything.
    loose = tmp_path / "controller-policy.toml"
    write(loose, f'default = "allow"\n[[rule]]\napp = "{APP}"\naccess = "allow"\n')
    # The worker, on the bed, reads policy.toml from its own state directory.
    worker_state = tmp_path / "worker"
    worker_state.mkdir()
    worker_policy = worker_state / "policy.toml"
    write(worker_policy, ALLOW)
    with worker_on_bed(lsm_bin, tmp_path, controller_env={**headless_env(), "LSM_WEB": "off"},
                       controller_args=["--policy", str(loose)], worker_args=["--state-ttl", "300"],
                       worker_state=worker_state, log_name="lsm-worker-policy") as controller:
        win = wait_for(lambda: remote_window(controller, "w1", TITLE), timeout=20,
                       what="the worker's test app window")
        args = {"machine": "w1", "window_id": win["window_id"], "screenshot": False}
        states = [controller.call_ok("gui_state", args) for _ in range(3)]
        write(worker_policy, DENY)
        assert remote_window(controller, "w1", TITLE).get("policy") == "deny"
        assert err_code(controller.call("gui_state", args)) == "POLICY_DENIED"  # noqa: F405
        before, truth = app_events(), app_truth(probe)
        press = element(states[0], "Press me")
        for st, actions in zip(states, [[{"type": "click", "element_id": press["id"]}],
                                        [{"type": "click", "x": middle(press)[0], "y": middle(press)[1]}],
                                        [{"type": "key", "keys": "F5"}]]):
            r = controller.call("gui_action", {"machine": "w1", "window_id": win["window_id"],
                                               "state_id": st["state_id"], "actions": actions})
            assert err_code(r) == "POLICY_DENIED", r  # noqa: F405
            assert f"rule 1 of {worker_policy}" in err_message(r), err_message(r)  # noqa: F405
        time.sleep(0.5)
        assert app_events() == before and app_truth(probe) == truth


def test_a_persons_click_on_the_web_ui_goes_through_on_a_denied_window(lsm_bin, tmp_path, probe, fresh_testapp):
    policy = tmp_path / "policy.toml"
    write(policy, DENY)
    server = WebServer(lsm_bin, "--policy", str(policy))
    try:
        cookie, csrf = server.login()
        headers = {"Cookie": cookie, "X-CSRF-Token": csrf}
        win = wait_for(lambda: [w for w in (server.request("GET", "/api/windows", headers=headers)[2] or {})
                                .get("windows", []) if w["title"] == TITLE], timeout=10, what="the window")[0]
        assert win.get("policy") == "deny", win
        button = probe(find="Press me")["extents"]
        b = win["bounds"]
        x = button["x"] + button["width"] // 2 - b["x"]
        y = button["y"] + button["height"] // 2 - b["y"]
        status, _, body = server.request("POST", "/api/action", {
            "window_id": win["window_id"], "geometry": b, "actions": [{"type": "click", "x": x, "y": y}]}, headers)
        assert status == 200, body
        wait_for(lambda: app_truth(probe)["pressed"] == "Pressed: 1", what="the person's click in the app")
    finally:
        server.stop()


def test_policy_check_names_the_line_of_a_mistake(lsm_bin, tmp_path):
    policy = tmp_path / "policy.toml"
    write(policy, DENY)
    r = subprocess.run([str(lsm_bin), "policy", "check", str(policy)], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and "1 rules" in r.stdout and f'app = "{APP}"' in r.stdout, r
    write(policy, DENY + '[[rule]]\ntitle = "x"\nacess = "deny"\n')
    r = subprocess.run([str(lsm_bin), "policy", "check", str(policy)], capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and f"{policy} line 7" in r.stderr and "acess" in r.stderr, r


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_malformed_policy_at_start_stops_lsm_with_the_reason(lsm_bin, tmp_path, command):
    policy = tmp_path / "policy.toml"
    write(policy, 'default = "maybe"\n')
    extra = ["--controller", "ws://127.0.0.1:9", "--name", "x"] if command == "worker" else []
    r = subprocess.run([str(lsm_bin), command, *extra, "--policy", str(policy)], capture_output=True, text=True,
                       timeout=20, stdin=subprocess.DEVNULL, env={**os.environ, "LSM_WORKER_TOKEN": "t"})
    assert r.returncode == 1 and f"{policy} line 1" in r.stderr and '"maybe"' in r.stderr, r
