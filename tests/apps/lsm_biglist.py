#!/usr/bin/python3
"""lsm big list: a GTK3 window with a 10,000-row tree view, for walks that must not read it all.

Run with the system python3 (it has python3-gi):  /usr/bin/python3 tests/apps/lsm_biglist.py

GTK3's tree view exposes every cell to AT-SPI as a child of the table (here 10,000 x 2 cells plus
the two column headers), created on demand: a walk that reads them all takes seconds.

Controls (accessible name -> effect):
  "Items"        tree table, columns "Item" ("Item N") and "Number" (N * 7), 10,000 rows, in a
                 scrolled window; selecting a row -> "Selected: Item N" (else "Selected: none")
  "Ping"         push button -> "Pings: N"
Every status label's accessible name is its text. Options: --rows N (default 10000).
"""

import argparse
import signal

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

TITLE = "lsm big list"
WIDTH, HEIGHT = 420, 520


def named(widget, name):
    widget.get_accessible().set_name(name)
    return widget


class BigList(Gtk.Window):
    def __init__(self, rows: int):
        super().__init__(title=TITLE)
        self.set_default_size(WIDTH, HEIGHT)
        self.connect("destroy", Gtk.main_quit)
        self.pings = 0

        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=8)
        self.add(box)

        top = Gtk.Box(spacing=8)
        self.ping = named(Gtk.Button(label="Ping"), "Ping")
        self.ping.connect("clicked", self.on_ping)
        self.ping_label = Gtk.Label(label="Pings: 0")
        top.pack_start(self.ping, False, False, 0)
        top.pack_start(self.ping_label, False, False, 0)
        box.pack_start(top, False, False, 0)

        store = Gtk.ListStore(str, int)
        for i in range(rows):
            store.append((f"Item {i}", i * 7))
        self.tree = named(Gtk.TreeView(model=store), "Items")
        self.tree.append_column(Gtk.TreeViewColumn("Item", Gtk.CellRendererText(), text=0))
        self.tree.append_column(Gtk.TreeViewColumn("Number", Gtk.CellRendererText(), text=1))
        self.tree.get_selection().connect("changed", self.on_selection)
        sw = Gtk.ScrolledWindow()
        sw.set_policy(Gtk.PolicyType.NEVER, Gtk.PolicyType.AUTOMATIC)
        sw.add(self.tree)
        box.pack_start(sw, True, True, 0)

        self.selected = Gtk.Label(label="Selected: none", xalign=0)
        box.pack_start(self.selected, False, False, 0)

    def on_ping(self, _button):
        self.pings += 1
        self.ping_label.set_text(f"Pings: {self.pings}")

    def on_selection(self, selection):
        model, it = selection.get_selected()
        text = f"Selected: {model[it][0]}" if it is not None else "Selected: none"
        self.selected.set_text(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000)
    args = ap.parse_args()
    GLib.set_prgname("lsm_biglist.py")
    GLib.set_application_name(TITLE)
    win = BigList(args.rows)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: (win.destroy(), False)[1])
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, lambda: (win.destroy(), False)[1])
    win.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
