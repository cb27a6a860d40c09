/* lsm window list for GNOME Shell 43-44 (legacy extension format), written by `lsm setup gnome`. */
const {Gio, Meta, Shell} = imports.gi;
