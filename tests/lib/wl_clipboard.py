#!/usr/bin/python3
"""The GNOME clipboard through a mutter remote-desktop session of our own (system python,
python3-gi): `own TEXT` puts TEXT on the clipboard and serves it until killed (prints "owned"
once it owns it); `read` prints {"text": ...} (null when empty). Test ground truth: it is
neither lsm nor the application under test."""

import json
import os
import sys

from gi.repository import Gio, GLib

N = "org.gnome.Mutter.RemoteDesktop"
S = N + ".Session"
MIMES = ["text/plain;charset=utf-8", "text/plain", "UTF8_STRING"]

bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def call(path, iface, method, args=None, fds=None):
    if fds is None:
        return bus.call_sync(N, path, iface, method, args, None, 0, 5000, None).unpack()
    res, out_fds = bus.call_with_unix_fd_list_sync(N, path, iface, method, args, None, 0, 5000, fds, None)
    return res, out_fds


session, = call("/org/gnome/Mutter/RemoteDesktop", N, "CreateSession")
loop = GLib.MainLoop()
state = {"owner": None}


def on_signal(_conn, _sender, _path, _iface, name, params):
    if name == "SelectionOwnerChanged":
        opts = params.unpack()[0]
        mimes = opts.get("mime-types")
        if isinstance(mimes, tuple):
            mimes = mimes[0] if mimes else []
        state["owner"] = (mimes or [], opts.get("session-is-owner", False))
        if mode == "own" and state["owner"][1]:
            print("owned", flush=True)
    elif name == "SelectionTransfer":
        mime, serial = params.unpack()
        res, fds = call(session, S, "SelectionWrite", GLib.Variant("(u)", (serial,)), Gio.UnixFDList())
        fd = fds.get(res.unpack()[0])
        os.set_blocking(fd, True)
        os.write(fd, text.encode())
        os.close(fd)
        call(session, S, "SelectionWriteDone", GLib.Variant("(ub)", (serial, True)))


mode = sys.argv[1]
text = sys.argv[2] if len(sys.argv) > 2 else ""
bus.signal_subscribe(N, S, None, session, None, Gio.DBusSignalFlags.NONE, on_signal)
call(session, S, "Start")
call(session, S, "EnableClipboard", GLib.Variant("(a{sv})", ({},)))
if mode == "own":
    call(session, S, "SetSelection", GLib.Variant("(a{sv})", ({"mime-types": GLib.Variant("as", MIMES)},)))
    loop.run()
elif mode == "read":
    GLib.timeout_add(300, loop.quit)
    loop.run()
    owner = state["owner"]
    out = {"text": None}
    if owner and owner[0]:
        mime = next((m for m in MIMES if m in owner[0]), None)
        if mime:
            res, fds = call(session, S, "SelectionRead", GLib.Variant("(s)", (mime,)), Gio.UnixFDList())
            fd = fds.get(res.unpack()[0])
            os.set_blocking(fd, True)
            data = b""
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                data += chunk
            os.close(fd)
            out["text"] = data.decode("utf-8", "replace")
    print(json.dumps(out, ensure_ascii=False))
