"""The observe -> act loop as the tests drive it through a real MCP client session."""

from __future__ import annotations

import time
from typing import Any, Callable

from lsm_mcp import box, middle, rect  # noqa: F401  (the tests take them from here)


def windows(s) -> list[dict]:
    return s.call_ok("gui_list", {})["windows"]


def find_window(s, title: str | None = None, app: str | None = None, timeout: float = 10.0) -> dict:
    """The first window whose title (or app) matches; waits for it to appear. `app` is the
    application's name ("Firefox") or the window's app_id (its WM_CLASS instance, "xterm")."""
    deadline = time.monotonic() + timeout
    while True:
        found = [w for w in windows(s)
                 if (title is None or w["title"] == title)
                 and (app is None or app in (w["app"], w.get("app_id")))]
        if found:
            return found[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"no window title={title!r} app={app!r} in gui_list: "
                                 f"{[(w['title'], w['app']) for w in windows(s)]}")
        time.sleep(0.2)


def observe(s, window: dict | str, **kw: Any) -> dict:
    wid = window if isinstance(window, str) else window["window_id"]
    args = {"window_id": wid, "screenshot": False}
    args.update(kw)
    return s.call_ok("gui_state", args)


def element(state: dict, name: str, role: str | None = None) -> dict:
    """The one element with this accessible name (and role)."""
    found = [e for e in state["elements"] if e.get("name", "") == name and (role is None or e["role"] == role)]
    assert found, f"no element {name!r} ({role}) among {[(e['role'], e.get('name', '')) for e in state['elements']]}"
    return found[0]


def element_prefix(state: dict, prefix: str) -> dict:
    found = [e for e in state["elements"] if e.get("name", "").startswith(prefix)]
    assert found, f"no element named {prefix!r}..."
    return found[0]


def center(e: dict) -> tuple[int, int]:
    return middle(e)


def act(s, state: dict, actions: list[dict]) -> dict:
    return s.call_ok("gui_action", {"window_id": state["window"]["window_id"],
                                    "state_id": state["state_id"], "actions": actions})


def act_raw(s, state: dict, actions: list[dict]):
    """The raw tool result (for tests that expect an error)."""
    return s.call("gui_action", {"window_id": state["window"]["window_id"],
                                 "state_id": state["state_id"], "actions": actions})


def wait_for(fn: Callable[[], Any], timeout: float = 5.0, interval: float = 0.05, what: str = "condition"):
    """Poll until fn() is truthy; return it, or fail with the last value."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}; last value: {value!r}")
