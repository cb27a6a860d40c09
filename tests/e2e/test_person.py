"""A person in charge (docs/web-ui.md), on the X11 bed with the real test app: the Desktop page
in real Chromium (tests/webui/page-driver.mjs) beside a model whose calls go through the official
MCP client. The feed shows a model call within a second with its effect; a take-over (by its
keyboard shortcut) refuses the model with HUMAN_CONTROL while the person's click on the page lands
(read in the app through AT-SPI), and the model acts again after release; a take-over stops a
running multi-action call between two actions; in approve mode an approved action runs, a denied
one is refused with APPROVAL_DENIED and an unanswered one with APPROVAL_REQUIRED; the same on a
worker's window, with the controller's page (the worker enforces); a call with a screenshot shows
small before/after images in the feed; a window larger than the page is scaled, and a click on
the image lands on the control drawn there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from gui_flow import element, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import REPO, err_code, err_message, middle  # noqa: E402
from lsm_web import URL_RE  # noqa: E402
from run_logs import record_secret  # noqa: E402
from worker_on_bed import remote_window, worker_on_bed  # noqa: E402

TITLE = "lsm test app"
NODE = REPO / "tests" / "conformance" / "node_modules" / ".bin" / "node"
WEBUI = REPO / "tests" / "webui"
APPROVAL_TIMEOUT_S = 3
SCREENSHOT = Path(os.environ.get("LSM_PERSON_SCREENSHOT") or REPO / "target" / "webui" / "person-page.png")


class Page:
    """tests/webui/page-driver.mjs: one Chromium page, one command at a time."""

    def __init__(self):
        self.proc = subprocess.Popen([str(NODE), str(WEBUI / "page-driver.mjs")], cwd=WEBUI, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lock = threading.Lock()

    def __call__(self, op: str, **args):
        with self.lock:
            assert self.proc.stdin and self.proc.stdout
            self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"page driver ended: {self.proc.stderr.read()[-3000:] if self.proc.stderr else ''}")
        answer = json.loads(line)
        assert answer["ok"], f"page {op}: {answer.get('error')}"
        return answer["out"]

    def close(self):
        try:
            self("stop")
        except Exception:  # noqa: BLE001
            pass
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def desk(bed_env):  # noqa: ARG001
    """`lsm serve` with MCP over HTTP and the web UI, the test app fresh, the page on its window."""
    from conftest import restart_app
    from lsm_mcp import LsmSession

    if not NODE.exists() or not (WEBUI / "node_modules" / "playwright-core").exists():
        pytest.fail("tests/webui/node_modules or Node 22 is missing: run tests/setup.sh")
    restart_app("testapp")
    # The timeout through its environment variable ($LSM_APPROVAL_TIMEOUT, as --approval-timeout).
    env = {**os.environ, "LSM_APPROVAL_TIMEOUT": str(APPROVAL_TIMEOUT_S)}
    s = LsmSession("http", env, args=["--web", "127.0.0.1:0"]).open()
    page = None
    try:
        m = wait_for(lambda: URL_RE.search(Path(s.stderr_path).read_text(errors="replace")), timeout=10,
                     what="the web UI's address on stderr")
        record_secret("web_secret", m.group(2))
        page = Page()
        page("start", url=m.group(1), secret=m.group(2), machine="local", title=TITLE)
        yield s, page
    finally:
        if page:
            page.close()
        s.close()
        restart_app("testapp")


def pressed(probe) -> int:
    """The app's own counter of presses of "Press me", read through AT-SPI."""
    node = probe(find="Pressed:", match="prefix", extents=False)
    return int(node["name"].split(": ")[1])


def press_me(s) -> tuple[dict, list[dict]]:
    st = observe(s, find_window(s, title=TITLE))
    return st, [{"type": "click", "element_id": element(st, "Press me")["id"]}]


def action(s, st: dict, actions: list[dict]):
    return s.call("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"],
                                 "actions": actions})


def test_the_feed_shows_a_model_call_within_a_second_with_its_effect(desk, probe):
    s, page = desk
    count = page("feed_count")
    st, click = press_me(s)
    out = s.call_ok("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"],
                                   "actions": click})
    answered_ms = time.time() * 1000
    effect = out["results"][0]["effect"]
    entry = page("wait_feed", tool="gui_action", code="OK", min_count=count + 2, timeout=1000)
    assert entry["seen_ms"] - answered_ms < 1000, entry
    assert entry["first"], "newest first"
    assert "local" in entry["text"] and TITLE in entry["text"] and "click" in entry["text"], entry
    assert f"0 click — {effect}" in entry["text"], entry


def test_the_feed_shows_small_before_and_after_images_where_there_were_screenshots(desk, probe):
    s, page = desk
    count = page("feed_count")
    st = observe(s, find_window(s, title=TITLE), screenshot=True)
    seen = page("wait_feed", tool="gui_state", code="OK", min_count=count + 1, timeout=2000)
    assert [i["when"] for i in seen["images"]] == ["after"] and seen["images"][0]["loaded"], seen
    # Without a screenshot, no image.
    click = [{"type": "click", "element_id": element(st, "Press me")["id"]}]
    out = s.call_ok("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"],
                                   "actions": click, "screenshot": True})
    entry = page("wait_feed", tool="gui_action", code="OK", min_count=count + 2, timeout=2000)
    assert [i["when"] for i in entry["images"]] == ["before", "after"], entry
    for image in entry["images"]:
        assert image["loaded"] and max(image["width"], image["height"]) <= 160, image
        # Small enough to travel inside the feed's event: a few KB each.
        assert image["chars"] < 12_000, image
    # The next call's before is this call's after (its state_id); a call on an observation
    # without a screenshot shows none.
    s.call_ok("gui_action", {"window_id": st["window"]["window_id"], "state_id": out["state_id"], "actions": click})
    entry = page("wait_feed", tool="gui_action", code="OK", min_count=count + 3, timeout=2000)
    assert [i["when"] for i in entry["images"]] == ["before"], entry
    st = observe(s, find_window(s, title=TITLE))
    s.call_ok("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"], "actions": click})
    plain = page("wait_feed", tool="gui_action", code="OK", min_count=count + 5, timeout=2000)
    assert plain["images"] == [], plain


def test_take_over_refuses_the_model_while_the_persons_click_lands(desk, probe):
    s, page = desk
    before = pressed(probe)
    st, click = press_me(s)
    state_text = page("take_over", scope="machine", shortcut=True)
    assert "You have control of machine local" in state_text, state_text
    r = action(s, st, click)
    assert err_code(r) == "HUMAN_CONTROL", r
    assert "observe again later" in err_message(r)
    # gui_state still works; nothing of the model reached the app.
    st, click = press_me(s)
    time.sleep(0.5)
    assert pressed(probe) == before
    # The person's click on the page lands.
    x, y = middle(element(st, "Press me"))
    assert "done" in page("click_at", x=x, y=y)
    wait_for(lambda: pressed(probe) == before + 1, timeout=6, what="the person's click in the app")
    page("wait_feed", tool="web input", code="OK", timeout=3000)
    # Released on the page: the model's next call hears so, and acts again.
    page("release")
    st, click = press_me(s)
    assert any("control came back" in n for n in st.get("notes", [])), st.get("notes")
    s.call_ok("gui_action", {"window_id": st["window"]["window_id"], "state_id": st["state_id"], "actions": click})
    wait_for(lambda: pressed(probe) == before + 2, timeout=6, what="the model's click after release")


def test_take_over_stops_a_multi_action_call_between_two_actions(desk, probe):
    s, page = desk
    before = pressed(probe)
    st, click = press_me(s)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(action, s, st, [*click, {"type": "wait", "seconds": 3}, *click])
        wait_for(lambda: pressed(probe) == before + 1, timeout=6, what="the call's first click")
        page("take_over", scope="window", shortcut=False)
        r = running.result(timeout=30)
    assert err_code(r) == "HUMAN_CONTROL", r
    details = r.structured_content["error"].get("details") or {}
    assert details.get("failed_index") in (1, 2), details
    assert len(details.get("completed", [])) == details["failed_index"], details
    time.sleep(0.5)
    assert pressed(probe) == before + 1, "the second click must not run"
    page("release")


def test_approve_mode_approved_denied_and_unanswered(desk, probe):
    s, page = desk
    assert page("approve_everything", on=True) is True
    try:
        before = pressed(probe)
        with ThreadPoolExecutor(1) as pool:
            # Approved: it runs.
            st, click = press_me(s)
            call = pool.submit(action, s, st, click)
            shown = page("wait_approval")
            assert "Press me" in shown["text"] and "push" in shown["text"], shown
            assert shown["image"] and len(shown["marks"]) == 1, shown
            page("decide", approve=True)
            assert not call.result(timeout=30).is_error
            wait_for(lambda: pressed(probe) == before + 1, timeout=6, what="the approved click")
            # Denied: refused with the reason, nothing sent.
            st, click = press_me(s)
            call = pool.submit(action, s, st, click)
            page("wait_approval")
            page("decide", approve=False, reason="not this one")
            r = call.result(timeout=30)
            assert err_code(r) == "APPROVAL_DENIED", r
            assert "not this one" in err_message(r)
            # Unanswered: refused after the timeout with its own code.
            st, click = press_me(s)
            started = time.monotonic()
            r = action(s, st, click)
            assert err_code(r) == "APPROVAL_REQUIRED", r
            assert time.monotonic() - started >= APPROVAL_TIMEOUT_S - 0.2
            # The state_id was used up either way.
            assert err_code(action(s, st, click)) in ("STATE_CONSUMED", "STATE_NOT_FOUND")
        time.sleep(0.5)
        assert pressed(probe) == before + 1
        # The page with the feed, a pending approval and the take-over control, for the docs.
        st, click = press_me(s)
        with ThreadPoolExecutor(1) as pool:
            call = pool.submit(action, s, st, click)
            page("wait_approval")
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page("screenshot", path=str(SCREENSHOT))
            page("decide", approve=False, reason="screenshot taken")
            call.result(timeout=30)
    finally:
        page("approve_everything", on=False)


@pytest.fixture(scope="module")
def worker_desk(lsm_bin, tmp_path_factory, bed_env):  # noqa: ARG001
    """A controller without a desktop of its own and a worker on the bed (the test app fresh),
    the controller's page on the worker's window; the worker asks for approval for
    APPROVAL_TIMEOUT_S."""
    from conftest import restart_app

    if not NODE.exists():
        pytest.fail("Node 22 is missing: run tests/setup.sh")
    restart_app("testapp")
    with worker_on_bed(lsm_bin, tmp_path_factory.mktemp("worker-person"), controller_args=["--web", "127.0.0.1:0"],
                       worker_args=["--approval-timeout", str(APPROVAL_TIMEOUT_S)],
                       log_name="lsm-worker-person") as controller:
        win = wait_for(lambda: remote_window(controller, "w1", TITLE), timeout=20,
                       what="the worker's test app window")
        m = URL_RE.search(Path(controller.stderr_path).read_text(errors="replace"))
        assert m, "the controller printed no web UI address"
        record_secret("web_secret", m.group(2))
        page = Page()
        try:
            page("start", url=m.group(1), secret=m.group(2), machine="w1", title=TITLE)
            yield Remote(controller, win["window_id"]), page
        finally:
            page.close()


class Remote:
    """The model's calls on the worker's window, through the controller."""

    def __init__(self, controller, window_id: str):
        self.controller, self.window_id = controller, window_id

    def state(self) -> tuple[dict, list[dict]]:
        st = self.controller.call_ok("gui_state", {"machine": "w1", "window_id": self.window_id})
        return st, [{"type": "click", "element_id": element(st, "Press me")["id"]}]

    def act(self, st: dict, actions: list[dict]):
        return self.controller.call("gui_action", {"machine": "w1", "window_id": self.window_id,
                                                   "state_id": st["state_id"], "actions": actions})


def test_a_workers_calls_reach_the_feed_and_the_worker_enforces_take_over(worker_desk, probe):
    """The worker's calls reach the controller's feed; the worker refuses the model while the
    person's click on the controller's page lands on the worker's desktop."""
    w, page = worker_desk
    before = pressed(probe)
    # The worker's call in the controller's feed, within a second.
    count = page("feed_count")
    st, click = w.state()
    assert not w.act(st, click).is_error
    answered_ms = time.time() * 1000
    entry = page("wait_feed", tool="gui_action", code="OK", min_count=count + 2, timeout=1000)
    assert entry["seen_ms"] - answered_ms < 1000 and "w1" in entry["text"], entry
    wait_for(lambda: pressed(probe) == before + 1, timeout=6, what="the model's click on the worker")
    # Take-over, enforced by the worker.
    page("take_over", scope="machine", shortcut=True)
    st, click = w.state()
    r = w.act(st, click)
    assert err_code(r) == "HUMAN_CONTROL" and "observe again later" in err_message(r), r
    st, click = w.state()
    x, y = middle(element(st, "Press me"))
    assert "done" in page("click_at", x=x, y=y)
    wait_for(lambda: pressed(probe) == before + 2, timeout=6, what="the person's click on the worker")
    page("release")
    st, click = w.state()
    assert any("control came back" in n for n in st.get("notes", [])), st.get("notes")
    assert not w.act(st, click).is_error
    wait_for(lambda: pressed(probe) == before + 3, timeout=6, what="the model's click after release")


def test_take_over_stops_a_multi_action_call_on_a_workers_window(worker_desk, probe):
    w, page = worker_desk
    before = pressed(probe)
    st, click = w.state()
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(w.act, st, [*click, {"type": "wait", "seconds": 3}, *click])
        wait_for(lambda: pressed(probe) == before + 1, timeout=6, what="the call's first click on the worker")
        page("take_over", scope="window", shortcut=False)
        r = running.result(timeout=30)
    try:
        assert err_code(r) == "HUMAN_CONTROL", r
        details = r.structured_content["error"].get("details") or {}
        assert details.get("failed_index") in (1, 2), details
        assert len(details.get("completed", [])) == details["failed_index"], details
        time.sleep(0.5)
        assert pressed(probe) == before + 1, "the second click must not run"
    finally:
        page("release")


def test_approve_mode_on_a_workers_window_approved_denied_and_unanswered(worker_desk, probe):
    w, page = worker_desk
    assert page("approve_everything", on=True) is True
    try:
        before = pressed(probe)
        with ThreadPoolExecutor(1) as pool:
            # Approved on the controller's page: the worker runs it.
            st, click = w.state()
            call = pool.submit(w.act, st, click)
            shown = page("wait_approval")
            assert "w1" in shown["text"] and "Press me" in shown["text"], shown
            page("decide", approve=True)
            assert not call.result(timeout=30).is_error
            wait_for(lambda: pressed(probe) == before + 1, timeout=6, what="the approved click on the worker")
            # Denied: refused with the reason, nothing sent.
            st, click = w.state()
            call = pool.submit(w.act, st, click)
            page("wait_approval")
            page("decide", approve=False, reason="not on w1")
            r = call.result(timeout=30)
            assert err_code(r) == "APPROVAL_DENIED" and "not on w1" in err_message(r), r
        # Unanswered: the worker refuses it after its timeout.
        st, click = w.state()
        started = time.monotonic()
        r = w.act(st, click)
        assert err_code(r) == "APPROVAL_REQUIRED", r
        waited = time.monotonic() - started
        # The worker's own timeout (its --approval-timeout), not the controller's default of 60 s.
        assert APPROVAL_TIMEOUT_S - 0.2 <= waited < APPROVAL_TIMEOUT_S + 5, waited
        assert err_code(w.act(st, click)) in ("STATE_CONSUMED", "STATE_NOT_FOUND")
        time.sleep(0.5)
        assert pressed(probe) == before + 1
    finally:
        page("approve_everything", on=False)


def test_a_window_larger_than_the_page_is_scaled_to_fit_and_a_click_lands(desk, probe):
    s, page = desk
    st, _ = press_me(s)
    # The page on the window the model sees: the test app was restarted since the page picked it
    # (test_the_same_on_a_workers_window), under a new window id whenever another X client took
    # the old one's slot meanwhile; the page then showed nothing ("the window is gone").
    page("show_window", machine="local", window_id=st["window"]["window_id"])
    width = st["window"]["bounds"]["width"]
    try:
        shown = page("viewport", width=max(320, width // 2 + 40))
        assert shown["shown"] < shown["natural"] * 0.8, f"the image is not scaled down: {shown}"
        assert shown["shown"] <= shown["page"], shown
        before = pressed(probe)
        x, y = middle(element(st, "Press me"))
        assert "done" in page("click_at", x=x, y=y)
        wait_for(lambda: pressed(probe) == before + 1, timeout=6, what="the click on the scaled image")
    finally:
        page("viewport", width=1400)
