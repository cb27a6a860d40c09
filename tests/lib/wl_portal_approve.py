#!/usr/bin/python3
"""Answers xdg-desktop-portal-gnome's remote-desktop / screen-share dialogs through AT-SPI, the
way a person would: picks the first monitor when none is chosen, ticks "Allow remote
interaction", presses Share (system python, python3-gi, gir1.2-atspi-2.0).

    wl_portal_approve.py WATCH_SECONDS

Prints one line per dialog answered ("approved <dialog name>"), so a test can count how many
dialogs the user was shown."""

import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

PORTAL_APP = "xdg-desktop-portal-gnome"
WINDOW_ROLES = (Atspi.Role.FRAME, Atspi.Role.DIALOG, Atspi.Role.WINDOW)


def descendants(node, depth=0):
    yield node
    if depth > 40:
        return
    for i in range(node.get_child_count()):
        child = node.get_child_at_index(i)
        if child is not None:
            yield from descendants(child, depth + 1)


def dialogs():
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is None or app.get_name() != PORTAL_APP:
            continue
        for j in range(app.get_child_count()):
            win = app.get_child_at_index(j)
            if win is None or win.get_role() not in WINDOW_ROLES:
                continue
            states = win.get_state_set()
            if states.contains(Atspi.StateType.VISIBLE) or states.contains(Atspi.StateType.SHOWING):
                yield win


def act(node, name):
    action = node.get_action_iface()
    if action is None:
        return False
    for i in range(action.get_n_actions()):
        if action.get_action_name(i) == name:
            return action.do_action(i)
    return False


def answer(win) -> bool:
    share = None
    for node in descendants(win):
        role, name = node.get_role(), node.get_name() or ""
        if role == Atspi.Role.LIST:
            rows = [node.get_child_at_index(k) for k in range(node.get_child_count())]
            selection = node.get_selection_iface()
            if selection and rows and rows[0] is not None and "remote interaction" not in (rows[0].get_name() or ""):
                if selection.get_n_selected_children() == 0:
                    selection.select_child(0)
        elif role == Atspi.Role.CHECK_BOX and "remote interaction" in name:
            if not node.get_state_set().contains(Atspi.StateType.CHECKED):
                act(node, "toggle")
        elif role == Atspi.Role.PUSH_BUTTON and name.replace("_", "").split()[0:1] == ["Share"]:
            share = node
    if share is None:
        return False
    time.sleep(0.2)
    return act(share, "click")


def main():
    until = time.monotonic() + float(sys.argv[1])
    answered = set()
    while time.monotonic() < until:
        try:
            for win in dialogs():
                key = hash(win)
                if key not in answered and answer(win):
                    answered.add(key)
                    print("approved", win.get_name(), flush=True)
        except Exception as e:  # an accessible that vanished mid-walk: look again
            print("retry", type(e).__name__, file=sys.stderr, flush=True)
        time.sleep(0.2)


if __name__ == "__main__":
    main()
