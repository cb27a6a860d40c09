// The body shared by both extension formats (lsm setup gnome wraps it in the GNOME 43-44 legacy
// or the GNOME 45+ ESM header). Free names: Gio, Meta, Shell, global.
// Exports dev.lsm.Windows at /dev/lsm/Windows on gnome-shell's own session-bus connection
// (destination org.gnome.Shell). No sender check: any unsandboxed process of the user may call
// it, the same trust as org.gnome.Mutter.RemoteDesktop, which already lets such a process see
// and drive the whole screen.

const LSM_IFACE = `<node><interface name="dev.lsm.Windows">
  <method name="List"><arg type="s" direction="out" name="json"/></method>
  <method name="Activate"><arg type="t" direction="in" name="id"/><arg type="b" direction="out" name="ok"/></method>
  <property name="Version" type="u" access="read"/>
</interface></node>`;

function lsmRect(r) {
    return {x: r.x, y: r.y, width: r.width, height: r.height};
}

function lsmFind(id) {
    for (const actor of global.get_window_actors()) {
        const w = actor.get_meta_window();
        if (w && String(w.get_id()) === String(id))
            return w;
    }
    return null;
}

class LsmWindowsService {
    get Version() {
        return 1;
    }

    // Top-level windows, bottom to top in stacking order.
    List() {
        const tracker = Shell.WindowTracker.get_default();
        const focus = global.display.focus_window;
        const windows = global.get_window_actors()
            .map(a => a.get_meta_window())
            .filter(w => w && !w.is_override_redirect());
        const stacked = global.display.sort_windows_by_stacking(windows);
        const monitors = [];
        for (let i = 0; i < global.display.get_n_monitors(); i++) {
            monitors.push({
                rect: lsmRect(global.display.get_monitor_geometry(i)),
                scale: global.display.get_monitor_scale(i),
            });
        }
        const out = stacked.map(w => {
            const app = tracker.get_window_app(w);
            const parent = w.get_transient_for();
            return {
                id: String(w.get_id()),
                title: w.get_title() || '',
                app_id: app ? app.get_id() : '',
                app_name: app ? app.get_name() : '',
                wm_class: w.get_wm_class() || '',
                wm_class_instance: w.get_wm_class_instance() || '',
                gtk_app_id: w.get_gtk_application_id() || '',
                pid: w.get_pid(),
                client: w.get_client_type() === Meta.WindowClientType.WAYLAND ? 'wayland' : 'x11',
                type: w.get_window_type(),
                frame: lsmRect(w.get_frame_rect()),
                buffer: lsmRect(w.get_buffer_rect()),
                monitor: w.get_monitor(),
                scale: global.display.get_monitor_scale(w.get_monitor()),
                focus: w === focus,
                minimized: w.minimized,
                skip_taskbar: w.is_skip_taskbar(),
                transient_for: parent ? String(parent.get_id()) : null,
                modal: w.get_window_type() === Meta.WindowType.MODAL_DIALOG || w.is_attached_dialog(),
            };
        });
        return JSON.stringify({version: 1, windows: out, monitors});
    }

    Activate(id) {
        const w = lsmFind(id);
        if (!w)
            return false;
        if (w.minimized)
            w.unminimize();
        w.activate(global.get_current_time());
        return true;
    }
}

class LsmWindowsExport {
    enable() {
        this._impl = Gio.DBusExportedObject.wrapJSObject(LSM_IFACE, new LsmWindowsService());
        this._impl.export(Gio.DBus.session, '/dev/lsm/Windows');
    }

    disable() {
        if (this._impl) {
            this._impl.unexport();
            this._impl = null;
        }
    }
}
