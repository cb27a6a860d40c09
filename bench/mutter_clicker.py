#!/usr/bin/python3
"""The bench's bare peer on GNOME Wayland: one mutter remote-desktop session recording one
window (system python, python3-gi). Reads "X Y" lines (buffer-relative logical px), sends
NotifyPointerMotionAbsolute, then NotifyPointerButton press and release back to back, and
prints the wall-clock time it started sending. Prints "ready" once the session runs."""

import sys
import time

from gi.repository import Gio, GLib

N, SC = "org.gnome.Mutter.RemoteDesktop", "org.gnome.Mutter.ScreenCast"
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def call(dest, path, iface, method, args=None):
    return bus.call_sync(dest, path, iface, method, args, None, 0, 5000, None).unpack()


session, = call(N, "/org/gnome/Mutter/RemoteDesktop", N, "CreateSession")
sid = call(N, session, "org.freedesktop.DBus.Properties", "Get", GLib.Variant("(ss)", (N + ".Session", "SessionId")))[0]
sc, = call(SC, "/org/gnome/Mutter/ScreenCast", SC, "CreateSession",
           GLib.Variant("(a{sv})", ({"remote-desktop-session-id": GLib.Variant("s", sid)},)))
stream, = call(SC, sc, SC + ".Session", "RecordWindow",
               GLib.Variant("(a{sv})", ({"window-id": GLib.Variant("t", int(sys.argv[1]))},)))
call(N, session, N + ".Session", "Start")
time.sleep(0.3)
print("ready", flush=True)
for line in sys.stdin:
    x, y = (float(v) for v in line.split())
    call(N, session, N + ".Session", "NotifyPointerMotionAbsolute", GLib.Variant("(sdd)", (stream, x + 1, y + 1)))
    t0 = time.time()
    call(N, session, N + ".Session", "NotifyPointerMotionAbsolute", GLib.Variant("(sdd)", (stream, x, y)))
    call(N, session, N + ".Session", "NotifyPointerButton", GLib.Variant("(ib)", (0x110, True)))
    call(N, session, N + ".Session", "NotifyPointerButton", GLib.Variant("(ib)", (0x110, False)))
    print(t0, flush=True)
