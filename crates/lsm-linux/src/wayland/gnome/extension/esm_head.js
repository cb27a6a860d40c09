/* lsm window list for GNOME Shell 45 and later (ESM extension format), written by `lsm setup gnome`. */
import Gio from 'gi://Gio';
import Meta from 'gi://Meta';
import Shell from 'gi://Shell';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';
