#!/usr/bin/python3
"""Presses keys through a mutter remote-desktop session of the test's own (system python,
python3-gi): `wl_keys.py KEYSYM[+KEYSYM...] ...` — each argument is one chord, pressed in order
and released in reverse (e.g. 0xffe9+0xffc4 is Alt+F7). The session's first keysym is dropped by
mutter, so Shift is sent first."""

import sys
import time

from gi.repository import Gio, GLib

N = "org.gnome.Mutter.RemoteDesktop"
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def call(path, iface, method, args=None):
    return bus.call_sync(N, path, iface, method, args, None, 0, 5000, None).unpack()


session, = call("/org/gnome/Mutter/RemoteDesktop", N, "CreateSession")
call(session, N + ".Session", "Start")
time.sleep(0.3)


def key(sym, down):
    call(session, N + ".Session", "NotifyKeyboardKeysym", GLib.Variant("(ub)", (sym, down)))


key(0xffe1, True)
key(0xffe1, False)
for chord in sys.argv[1:]:
    syms = [int(k, 16) for k in chord.split("+")]
    for s in syms:
        key(s, True)
    for s in reversed(syms):
        key(s, False)
    time.sleep(0.15)
time.sleep(0.2)
call(session, N + ".Session", "Stop")
