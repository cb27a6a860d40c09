#!/usr/bin/python3
"""Moves the focused window the way a keyboard user does on GNOME (system python, python3-gi):
Alt+F7 starts mutter's keyboard move, each arrow key moves the window 10 px, Return ends it.
The keys go through a mutter remote-desktop session of our own, not through lsm.

    wl_move.py RIGHT DOWN     (arrow presses; negative: left / up)
"""

import sys
import time

from gi.repository import Gio, GLib

N = "org.gnome.Mutter.RemoteDesktop"
S = N + ".Session"
ALT, F7, RETURN, SHIFT = 0xFFE9, 0xFFC4, 0xFF0D, 0xFFE1
LEFT, UP, RIGHT, DOWN = 0xFF51, 0xFF52, 0xFF53, 0xFF54

bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def call(path, iface, method, args=None):
    return bus.call_sync(N, path, iface, method, args, None, 0, 5000, None).unpack()


def key(session, sym, down):
    call(session, S, "NotifyKeyboardKeysym", GLib.Variant("(ub)", (sym, down)))
    time.sleep(0.05)


def tap(session, sym):
    key(session, sym, True)
    key(session, sym, False)


def main():
    right, down = int(sys.argv[1]), int(sys.argv[2])
    session, = call("/org/gnome/Mutter/RemoteDesktop", N, "CreateSession")
    call(session, S, "Start")
    try:
        # The first keysym of a session is dropped (shared/testbeds/wayland.md): a harmless one.
        tap(session, SHIFT)
        key(session, ALT, True)
        tap(session, F7)
        key(session, ALT, False)
        time.sleep(0.2)
        for _ in range(abs(right)):
            tap(session, RIGHT if right > 0 else LEFT)
        for _ in range(abs(down)):
            tap(session, DOWN if down > 0 else UP)
        tap(session, RETURN)
    finally:
        call(session, S, "Stop")


if __name__ == "__main__":
    main()
