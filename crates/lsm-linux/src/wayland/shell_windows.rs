//! The window list that lsm's GNOME Shell extension exports (`dev.lsm.Windows.List`), parsed
//! and turned into the window records the rest of the backend uses. Mutter's window ids are
//! 64-bit; the backend's window records carry 32-bit ids, so each mutter id gets a small
//! handle, stable for the life of the process.

use crate::window::WindowRecord;
use lsm_core::Rect;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub struct ShellRect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

impl From<ShellRect> for Rect {
    fn from(r: ShellRect) -> Rect {
        Rect::new(r.x, r.y, r.width, r.height)
    }
}

/// One top-level window as the extension reports it (stage coordinates: logical px).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ShellWindow {
    /// `MetaWindow.get_id()`: what `RecordWindow` takes.
    #[serde(deserialize_with = "id_from_string")]
    pub id: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub app_id: String,
    #[serde(default)]
    pub app_name: String,
    #[serde(default)]
    pub wm_class: String,
    #[serde(default)]
    pub wm_class_instance: String,
    #[serde(default)]
    pub gtk_app_id: String,
    #[serde(default)]
    pub pid: i64,
    /// `wayland` or `x11` (an XWayland client).
    #[serde(default)]
    pub client: String,
    /// `Meta.WindowType`.
    #[serde(rename = "type", default)]
    pub window_type: u32,
    /// What the user sees as the window (no client-side shadow).
    pub frame: ShellRect,
    /// The whole client surface (shadow included).
    pub buffer: ShellRect,
    #[serde(default)]
    pub monitor: i32,
    #[serde(default = "one")]
    pub scale: f64,
    #[serde(default)]
    pub focus: bool,
    #[serde(default)]
    pub minimized: bool,
    #[serde(default, deserialize_with = "opt_id_from_string")]
    pub transient_for: Option<u64>,
    #[serde(default)]
    pub modal: bool,
    /// KWin's window UUID (KDE only): what its scripts find a window by.
    #[serde(default)]
    pub uuid: String,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
pub struct ShellMonitor {
    pub rect: ShellRect,
    #[serde(default = "one")]
    pub scale: f64,
}

/// The whole `List()` answer.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ShellList {
    #[serde(default)]
    pub version: u32,
    /// Bottom to top in stacking order.
    pub windows: Vec<ShellWindow>,
    #[serde(default)]
    pub monitors: Vec<ShellMonitor>,
}

fn one() -> f64 {
    1.0
}

fn id_from_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let s = String::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

fn opt_id_from_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    s.map(|s| s.parse().map_err(serde::de::Error::custom)).transpose()
}

/// `Meta.WindowType` values that are windows a user works in (normal, dialog, modal dialog,
/// toolbar, utility, splash screen); menus, tooltips and drag icons are parts of another window.
const WINDOW_TYPES: &[u32] = &[0, 3, 4, 5, 7, 8];

pub fn parse_list(json: &str) -> Result<ShellList, String> {
    let mut list: ShellList = serde_json::from_str(json)
        .map_err(|e| format!("the extension's window list is not understood: {e}"))?;
    list.windows.retain(|w| WINDOW_TYPES.contains(&w.window_type));
    Ok(list)
}

impl ShellList {
    /// The union of the monitors (logical px); the union of the windows when none are listed.
    pub fn screen(&self) -> Rect {
        let rects: Vec<Rect> = if self.monitors.is_empty() {
            self.windows.iter().map(|w| w.frame.into()).collect()
        } else {
            self.monitors.iter().map(|m| m.rect.into()).collect()
        };
        rects
            .into_iter()
            .reduce(|a, b| {
                let (x, y) = (a.x.min(b.x), a.y.min(b.y));
                let right = (a.x + a.width).max(b.x + b.width);
                let bottom = (a.y + a.height).max(b.y + b.height);
                Rect::new(x, y, right - x, bottom - y)
            })
            .unwrap_or(Rect::new(0, 0, 0, 0))
    }
}

/// Mutter id <-> 32-bit handle. A handle is the id's low 32 bits (mutter numbers windows one
/// after another, so they are unique within a shell session and the same across lsm restarts,
/// as X11 window ids are); only on a clash (or 0, which means "no window" elsewhere) is another
/// one taken, counting down from the top.
#[derive(Debug, Default)]
pub struct Handles {
    by_id: HashMap<u64, u32>,
    by_handle: HashMap<u32, u64>,
    /// The last handle taken on a clash (counting down from u32::MAX).
    spare: u32,
}

impl Handles {
    pub fn handle(&mut self, id: u64) -> u32 {
        if let Some(h) = self.by_id.get(&id) {
            return *h;
        }
        let mut h = id as u32;
        while h == 0 || self.by_handle.contains_key(&h) {
            self.spare = match self.spare {
                0 | 1 => u32::MAX,
                n => n - 1,
            };
            h = self.spare;
        }
        self.by_id.insert(id, h);
        self.by_handle.insert(h, id);
        h
    }

    pub fn id(&self, handle: u32) -> Option<u64> {
        self.by_handle.get(&handle).copied()
    }

    /// Forgets windows that are gone, keeping the table as small as the desktop.
    pub fn retain(&mut self, live: &[u64]) {
        self.by_id.retain(|id, _| live.contains(id));
        let by_id = &self.by_id;
        self.by_handle.retain(|_, id| by_id.contains_key(id));
    }
}

/// The backend's window record for a shell window: bounds are the frame rect.
pub fn to_window(w: &ShellWindow, handles: &mut Handles) -> WindowRecord {
    WindowRecord {
        id: handles.handle(w.id),
        title: w.title.clone(),
        instance: if w.wm_class_instance.is_empty() {
            w.gtk_app_id.clone()
        } else {
            w.wm_class_instance.clone()
        },
        class: w.wm_class.clone(),
        pid: u32::try_from(w.pid).ok().filter(|p| *p > 0),
        bounds: w.frame.into(),
        gtk_frame_extents: None,
        focused: w.focus,
        minimized: w.minimized,
        transient_for: w.transient_for.map(|p| handles.handle(p)),
        modal: w.modal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // As the extension printed it on headless GNOME Shell 43.9 (shortened).
    const LIST: &str = r#"{"version":1,"windows":[
      {"id":"4255441650","title":"gtk3-widget-factory","app_id":"gtk3-widget-factory.desktop",
       "wm_class":"gtk3-widget-factory","gtk_app_id":"org.gtk.WidgetFactory","pid":12549,"client":"wayland",
       "type":0,"frame":{"x":0,"y":32,"width":1415,"height":732},"buffer":{"x":-26,"y":9,"width":1467,"height":784},
       "monitor":0,"scale":1,"focus":false,"minimized":false,"transient_for":null,"modal":false},
      {"id":"4255441653","title":"","type":10,"frame":{"x":5,"y":5,"width":50,"height":80},
       "buffer":{"x":5,"y":5,"width":50,"height":80}},
      {"id":"4294967301","title":"About","pid":12549,"type":4,"frame":{"x":300,"y":200,"width":400,"height":300},
       "buffer":{"x":280,"y":180,"width":440,"height":340},"focus":true,"transient_for":"4255441650","modal":true}],
     "monitors":[{"rect":{"x":0,"y":0,"width":1280,"height":800},"scale":1}]}"#;

    #[test]
    fn the_extension_list_parses_and_drops_popups() {
        let list = parse_list(LIST).unwrap();
        assert_eq!(list.windows.len(), 2, "the popup menu (type 10) is not a window");
        let w = &list.windows[0];
        assert_eq!(w.id, 4255441650);
        assert_eq!(Rect::from(w.buffer), Rect::new(-26, 9, 1467, 784));
        assert_eq!(list.windows[1].transient_for, Some(4255441650));
        assert_eq!(list.screen(), Rect::new(0, 0, 1280, 800));
        assert!(parse_list("{\"windows\": 3}").is_err());
    }

    #[test]
    fn mutter_ids_beyond_32_bits_get_stable_handles() {
        let list = parse_list(LIST).unwrap();
        let mut h = Handles::default();
        let a = to_window(&list.windows[0], &mut h);
        let b = to_window(&list.windows[1], &mut h);
        // The low 32 bits: 4255441650 as is, 4294967301 (2^32 + 5) as 5.
        assert_eq!((a.id, b.id), (4255441650, 5));
        assert_eq!(b.transient_for, Some(4255441650));
        assert!(b.modal && b.focused);
        assert_eq!(h.id(5), Some(4294967301));
        assert_eq!(
            to_window(&list.windows[0], &mut h).id,
            4255441650,
            "same window, same handle"
        );
        // A clash (another id with the same low bits) and id 0 get other handles.
        assert_eq!(h.handle(5), u32::MAX);
        assert_eq!(h.handle(1 << 33), u32::MAX - 1);
        h.retain(&[4294967301]);
        assert_eq!(h.id(4255441650), None);
        assert_eq!(h.id(5), Some(4294967301));
        assert_eq!(a.bounds, Rect::new(0, 32, 1415, 732));
        assert_eq!(a.pid, Some(12549));
        assert_eq!(a.instance, "org.gtk.WidgetFactory");
    }
}
