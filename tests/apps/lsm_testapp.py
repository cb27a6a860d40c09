#!/usr/bin/python3
"""lsm test app: a small GTK3 window with one of every control the end-to-end tests drive.

Run with the system python3 (it has python3-gi):  /usr/bin/python3 tests/apps/lsm_testapp.py

Every effect of an action is shown in a status label whose accessible name is its text, so a
test can check it through AT-SPI (tests/lib/atspi_probe.py). Each event is also printed as one
JSON line on stdout and appended to $LSM_TESTAPP_LOG when that is set (debugging aid only).

Controls (accessible name -> effect):
  "Enable feature"   check box       -> "Feature: on" / "Feature: off"
  "Press me"         push button     -> "Pressed: N"
  "Name entry"       text            (text readable through the Text interface)
  "Combo entry"      text            -> "Recorded: <text>"
  "Password"         password text
  "Volume"           slider 0..100   -> "Volume: N"
  "Rows"             tree table with cells "Row 0".."Row 49" -> "Scrolled: <vadjustment value>"
  "Double-click here" label (in an event box)
                     -> "Double-clicked: N" on a real double click,
                        "Clicked at X,Y" (window-relative) on each single left click
  "Context area"     label (in an event box): right click pops up a menu
                     "Copy item" / "Paste item"  -> "Menu: <item>"
  "Drag source" -> "Drop target"  labels: a real GTK drag and drop -> "Dropped: N"
  "Remove me"        push button that destroys itself when pressed
  any key            -> "Key: <keysym>";  with ctrl/alt/super -> "Combo: ctrl+shift+k"
"""

import json
import math
import os
import signal
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import GLib, Gdk, Gtk  # noqa: E402

TITLE = "lsm test app"
WIDTH, HEIGHT = 600, 500
ROWS = 50
DND_PAYLOAD = "lsm-dnd-payload"

_log_path = os.environ.get("LSM_TESTAPP_LOG") or None


def emit(event, **fields):
    """One JSON line per event: stdout (flushed) and $LSM_TESTAPP_LOG."""
    rec = {"t": round(time.time(), 6), "event": event}
    rec.update(fields)
    line = json.dumps(rec, ensure_ascii=False)
    try:
        print(line, flush=True)
    except (BrokenPipeError, OSError):
        pass
    if _log_path:
        try:
            with open(_log_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        except OSError:
            pass


def set_name(widget, name):
    widget.get_accessible().set_name(name)


def boxed_label(text, name=None):
    """A label inside an event box (labels have no input window of their own).

    The label fills the box, so the label's accessible extents are the clickable area;
    the event box itself stays unnamed so a search by name finds exactly one node.
    """
    box = Gtk.EventBox()
    box.set_visible_window(True)
    box.get_style_context().add_class("lsm-area")
    label = Gtk.Label(label=text)
    label.set_hexpand(True)
    label.set_vexpand(True)
    box.add(label)
    box.set_size_request(-1, 56)
    return box, label


CSS = b"""
.lsm-area { background-color: #dde7f3; border: 1px solid #8aa; }
.lsm-area label { color: #102030; }
"""


class TestApp(Gtk.Window):
    def __init__(self):
        super().__init__(title=TITLE)
        self.set_size_request(WIDTH, HEIGHT)
        self.set_resizable(False)
        self.set_border_width(10)
        self.pressed = 0
        self.double_clicked = 0
        self.dropped = 0

        provider = Gtk.CssProvider()
        provider.load_from_data(CSS)
        Gtk.StyleContext.add_provider_for_screen(
            Gdk.Screen.get_default(), provider, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION
        )

        grid = Gtk.Grid(column_spacing=12, row_spacing=8, column_homogeneous=True)
        self.add(grid)
        row = 0

        # --- check button
        self.check = Gtk.CheckButton(label="Enable feature")
        self.check.connect("toggled", self.on_toggled)
        self.feature_label = self.status("Feature: off")
        grid.attach(self.check, 0, row, 1, 1)
        grid.attach(self.feature_label, 1, row, 1, 1)
        row += 1

        # --- push button
        self.button = Gtk.Button(label="Press me")
        self.button.connect("clicked", self.on_pressed)
        self.pressed_label = self.status("Pressed: 0")
        grid.attach(self.button, 0, row, 1, 1)
        grid.attach(self.pressed_label, 1, row, 1, 1)
        row += 1

        # --- entries
        self.name_entry = Gtk.Entry(placeholder_text="Name entry")
        set_name(self.name_entry, "Name entry")
        self.name_entry.connect("changed", self.on_entry_changed, "name")
        self.name_entry.connect("activate", self.on_entry_activate, "name")
        self.combo_entry = Gtk.Entry(placeholder_text="Combo entry")
        set_name(self.combo_entry, "Combo entry")
        self.combo_entry.connect("changed", self.on_entry_changed, "combo")
        self.combo_entry.connect("activate", self.on_entry_activate, "combo")
        grid.attach(self.name_entry, 0, row, 1, 1)
        grid.attach(self.combo_entry, 1, row, 1, 1)
        row += 1

        self.password = Gtk.Entry(placeholder_text="Password", visibility=False)
        set_name(self.password, "Password")
        self.password.connect("changed", self.on_password_changed)
        self.recorded_label = self.status("Recorded: ")
        grid.attach(self.password, 0, row, 1, 1)
        grid.attach(self.recorded_label, 1, row, 1, 1)
        row += 1

        # --- slider
        adj = Gtk.Adjustment(value=0, lower=0, upper=100, step_increment=1, page_increment=10)
        self.scale = Gtk.Scale(orientation=Gtk.Orientation.HORIZONTAL, adjustment=adj)
        self.scale.set_digits(0)
        # keep the value itself whole (round-digits alone did not, for a slider drag)
        self.scale.connect("change-value", self.on_volume_change_value)
        self.scale.set_draw_value(False)
        set_name(self.scale, "Volume")
        self.scale.connect("value-changed", self.on_volume)
        self.volume_label = self.status("Volume: 0")
        grid.attach(self.scale, 0, row, 1, 1)
        grid.attach(self.volume_label, 1, row, 1, 1)
        row += 1

        # --- scrolled list (left) and click areas (right)
        store = Gtk.ListStore(str)
        for i in range(ROWS):
            store.append([f"Row {i}"])
        self.tree = Gtk.TreeView(model=store, headers_visible=False)
        self.tree.append_column(Gtk.TreeViewColumn("Row", Gtk.CellRendererText(), text=0))
        set_name(self.tree, "Rows")
        self.tree.get_selection().connect("changed", self.on_row_selected)
        sw = Gtk.ScrolledWindow()
        sw.set_policy(Gtk.PolicyType.NEVER, Gtk.PolicyType.ALWAYS)
        sw.set_shadow_type(Gtk.ShadowType.IN)
        sw.set_size_request(-1, 176)
        sw.add(self.tree)
        self.vadj = sw.get_vadjustment()
        self.vadj.connect("value-changed", self.on_scrolled)
        grid.attach(sw, 0, row, 1, 3)

        dbl_box, _ = boxed_label("Double-click here")
        dbl_box.connect("button-press-event", self.on_click_area)
        grid.attach(dbl_box, 1, row, 1, 1)

        ctx_box, _ = boxed_label("Context area")
        ctx_box.connect("button-press-event", self.on_context_area)
        grid.attach(ctx_box, 1, row + 1, 1, 1)
        self.menu = Gtk.Menu()
        for item_name in ("Copy item", "Paste item"):
            item = Gtk.MenuItem(label=item_name)
            item.connect("activate", self.on_menu_item, item_name)
            self.menu.append(item)
        self.menu.show_all()
        self.menu.attach_to_widget(ctx_box, None)

        dnd = Gtk.Box(spacing=8, homogeneous=True)
        src_box, _ = boxed_label("Drag source")
        dst_box, _ = boxed_label("Drop target")
        src_box.set_size_request(-1, 40)
        dst_box.set_size_request(-1, 40)
        target = Gtk.TargetEntry.new("text/plain", Gtk.TargetFlags.SAME_APP, 0)
        src_box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [target], Gdk.DragAction.COPY)
        src_box.connect("drag-data-get", self.on_drag_data_get)
        src_box.connect("drag-begin", lambda *_: emit("drag_begin"))
        dst_box.drag_dest_set(Gtk.DestDefaults.ALL, [target], Gdk.DragAction.COPY)
        dst_box.connect("drag-data-received", self.on_drop)
        dnd.pack_start(src_box, True, True, 0)
        dnd.pack_start(dst_box, True, True, 0)
        grid.attach(dnd, 1, row + 2, 1, 1)
        row += 3

        self.scrolled_label = self.status("Scrolled: 0")
        self.dropped_label = self.status("Dropped: 0")
        grid.attach(self.scrolled_label, 0, row, 1, 1)
        grid.attach(self.dropped_label, 1, row, 1, 1)
        row += 1

        # --- status line for clicks, menu and keys
        self.double_label = self.status("Double-clicked: 0")
        self.clicked_label = self.status("Clicked at none")
        self.menu_label = self.status("Menu: none")
        self.combo_label = self.status("Combo: none")
        self.key_label = self.status("Key: none")
        grid.attach(self.double_label, 0, row, 1, 1)
        grid.attach(self.clicked_label, 1, row, 1, 1)
        row += 1
        grid.attach(self.menu_label, 0, row, 1, 1)
        grid.attach(self.combo_label, 1, row, 1, 1)
        row += 1
        grid.attach(self.key_label, 0, row, 1, 1)
        # A control that goes away when pressed (for element-gone tests).
        self.remove_button = Gtk.Button(label="Remove me")
        self.remove_button.connect("clicked", self.on_remove)
        grid.attach(self.remove_button, 1, row, 1, 1)

        self.connect("key-press-event", self.on_key)
        self.connect("map-event", self.on_map)
        self.connect("destroy", self.on_destroy)

    # ------------------------------------------------------------ helpers
    @staticmethod
    def status(text):
        label = Gtk.Label(label=text, xalign=0)
        label.set_selectable(False)
        label.set_ellipsize(3)  # Pango.EllipsizeMode.END, keeps the window size fixed
        return label

    def window_relative(self, event):
        """Event position relative to the toplevel's client area (what X calls the window)."""
        origin = self.get_window().get_origin()
        ox, oy = origin[-2], origin[-1]
        return int(round(event.x_root - ox)), int(round(event.y_root - oy))

    # ------------------------------------------------------------ handlers
    def on_map(self, *_):
        origin = self.get_window().get_origin()
        emit("mapped", pid=os.getpid(), x=origin[-2], y=origin[-1], width=WIDTH, height=HEIGHT)
        return False

    def on_destroy(self, *_):
        emit("quit")
        Gtk.main_quit()

    def on_remove(self, button):
        button.destroy()
        emit("removed", name="Remove me")

    def on_toggled(self, button):
        on = button.get_active()
        self.feature_label.set_text("Feature: on" if on else "Feature: off")
        emit("toggled", name="Enable feature", active=on)

    def on_pressed(self, _button):
        self.pressed += 1
        self.pressed_label.set_text(f"Pressed: {self.pressed}")
        emit("pressed", name="Press me", count=self.pressed)

    def on_entry_changed(self, entry, which):
        text = entry.get_text()
        if which == "combo":
            self.recorded_label.set_text(f"Recorded: {text}")
        emit("text_changed", name=entry.get_accessible().get_name(), text=text)

    def on_entry_activate(self, entry, _which):
        emit("activate", name=entry.get_accessible().get_name(), text=entry.get_text())

    def on_password_changed(self, entry):
        emit("text_changed", name="Password", length=len(entry.get_text()))

    def on_volume_change_value(self, scale, _scroll, value):
        adj = scale.get_adjustment()
        scale.set_value(min(max(round(value), adj.get_lower()), adj.get_upper()))
        return True

    def on_volume(self, scale):
        value = int(round(scale.get_value()))
        self.volume_label.set_text(f"Volume: {value}")
        emit("value_changed", name="Volume", value=value)

    def on_scrolled(self, adj):
        value = int(round(adj.get_value()))
        self.scrolled_label.set_text(f"Scrolled: {value}")
        emit("scrolled", name="Rows", value=value, upper=adj.get_upper(), page=adj.get_page_size())

    def on_row_selected(self, selection):
        model, it = selection.get_selected()
        if it is not None:
            emit("row_selected", name="Rows", row=model[it][0])

    def on_click_area(self, _box, event):
        if event.button != 1:
            return False
        if event.type == Gdk.EventType._2BUTTON_PRESS:
            self.double_clicked += 1
            self.double_label.set_text(f"Double-clicked: {self.double_clicked}")
            emit("double_click", name="Double-click here", count=self.double_clicked)
        elif event.type == Gdk.EventType.BUTTON_PRESS:
            x, y = self.window_relative(event)
            self.clicked_label.set_text(f"Clicked at {x},{y}")
            # px/py: the pixel the pointer is in (a pointer at a pixel's centre, x + 0.5, rounds
            # either way in x/y).
            origin = self.get_window().get_origin()
            emit("click", name="Double-click here", x=x, y=y,
                 px=math.floor(event.x_root - origin[-2]), py=math.floor(event.y_root - origin[-1]),
                 screen_x=int(event.x_root), screen_y=int(event.y_root))
        return True

    def on_context_area(self, box, event):
        if event.type == Gdk.EventType.BUTTON_PRESS and event.button == 3:
            emit("context_menu", name="Context area")
            self.menu.popup_at_pointer(event)
            return True
        return False

    def on_menu_item(self, _item, item_name):
        self.menu_label.set_text(f"Menu: {item_name}")
        emit("menu_item", name=item_name)

    def on_drag_data_get(self, _widget, _ctx, data, _info, _time):
        data.set_text(DND_PAYLOAD, -1)

    def on_drop(self, _widget, _ctx, _x, _y, data, _info, _time):
        text = data.get_text()
        if text == DND_PAYLOAD:
            self.dropped += 1
            self.dropped_label.set_text(f"Dropped: {self.dropped}")
        emit("drop", name="Drop target", text=text, count=self.dropped)

    def on_key(self, _win, event):
        keyval = event.keyval
        name = Gdk.keyval_name(keyval) or f"0x{keyval:x}"
        self.key_label.set_text(f"Key: {name}")
        state = event.state & Gtk.accelerator_get_default_mod_mask()
        mods = []
        if state & Gdk.ModifierType.CONTROL_MASK:
            mods.append("ctrl")
        if state & Gdk.ModifierType.MOD1_MASK:
            mods.append("alt")
        if state & Gdk.ModifierType.SHIFT_MASK:
            mods.append("shift")
        if state & (Gdk.ModifierType.SUPER_MASK | Gdk.ModifierType.MOD4_MASK):
            mods.append("super")
        combo = None
        if event.is_modifier or not (set(mods) - {"shift"}):
            emit("key", key=name, modifiers=mods)
            return False
        # Name the key by its unshifted keysym: ctrl+shift+1 is "ctrl+shift+1", not "exclam".
        keymap = Gdk.Keymap.get_for_display(self.get_display())
        res = keymap.translate_keyboard_state(event.hardware_keycode, 0, event.group)
        base = res[1] if res and res[0] else Gdk.keyval_to_lower(keyval)
        base_name = (Gdk.keyval_name(base) or name).lower()
        combo = "+".join(mods + [base_name])
        self.combo_label.set_text(f"Combo: {combo}")
        emit("combo", combo=combo, key=name, modifiers=mods)
        return False


def main():
    GLib.set_prgname("lsm_testapp.py")
    GLib.set_application_name(TITLE)
    win = TestApp()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: (win.destroy(), False)[1])
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, lambda: (win.destroy(), False)[1])
    win.show_all()
    emit("started", pid=os.getpid(), title=TITLE, argv=sys.argv[1:])
    Gtk.main()


if __name__ == "__main__":
    main()
