#!/usr/bin/python3
"""lsm step app: a small GTK3 window for gui_action's settle and change list (issue 11).

Run with the system python3 (python3-gi):  /usr/bin/python3 tests/apps/lsm_stepapp.py [TITLE]

Controls (accessible name -> effect, all readable through AT-SPI):
  "Open dialog"   push button -> a dialog "Step dialog" with a "Close dialog" button
  "Close window"  push button -> the window is destroyed (the app exits)
  "Later"         push button -> 300 ms later the label "Later: N" counts up
  "Animate"       toggle      -> while on, the label "Tick: N" changes every 50 ms
  "Insert row"    push button -> a label "Row N" is inserted at the top of the rows box
  "Plain label"   a label that does nothing
"""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

TITLE = sys.argv[1] if len(sys.argv) > 1 else "lsm step app"


class StepApp(Gtk.Window):
    def __init__(self):
        super().__init__(title=TITLE)
        self.set_default_size(360, 420)
        self.later = 0
        self.ticks = 0
        self.rows = 0
        self.tick_source = None
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, border_width=10)
        self.add(box)
        self.rows_box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=2)
        box.pack_start(self.rows_box, False, False, 0)
        self.rows_box.pack_start(Gtk.Label(label="Rows below"), False, False, 0)
        for name, handler in (("Open dialog", self.on_dialog), ("Close window", self.on_close),
                              ("Later", self.on_later), ("Insert row", self.on_insert)):
            b = Gtk.Button(label=name)
            b.connect("clicked", handler)
            box.pack_start(b, False, False, 0)
        self.animate = Gtk.ToggleButton(label="Animate")
        self.animate.connect("toggled", self.on_animate)
        box.pack_start(self.animate, False, False, 0)
        self.later_label = Gtk.Label(label="Later: 0")
        self.tick_label = Gtk.Label(label="Tick: 0")
        for w in (self.later_label, self.tick_label, Gtk.Label(label="Plain label")):
            box.pack_start(w, False, False, 0)
        self.connect("destroy", Gtk.main_quit)

    def on_dialog(self, _b):
        d = Gtk.Dialog(title="Step dialog", transient_for=self, modal=True)
        d.add_button("Close dialog", Gtk.ResponseType.CLOSE)
        d.get_content_area().add(Gtk.Label(label="A dialog"))
        d.connect("response", lambda dlg, _r: dlg.destroy())
        d.show_all()

    def on_close(self, _b):
        self.destroy()

    def on_later(self, _b):
        def bump():
            self.later += 1
            self.later_label.set_text(f"Later: {self.later}")
            return False

        GLib.timeout_add(300, bump)

    def on_insert(self, _b):
        self.rows += 1
        label = Gtk.Label(label=f"Row {self.rows}")
        self.rows_box.pack_start(label, False, False, 0)
        self.rows_box.reorder_child(label, 0)
        label.show()

    def on_animate(self, button):
        if button.get_active() and self.tick_source is None:
            def tick():
                self.ticks += 1
                self.tick_label.set_text(f"Tick: {self.ticks}")
                return True

            self.tick_source = GLib.timeout_add(50, tick)
        elif not button.get_active() and self.tick_source is not None:
            GLib.source_remove(self.tick_source)
            self.tick_source = None


if __name__ == "__main__":
    StepApp().show_all()
    Gtk.main()
