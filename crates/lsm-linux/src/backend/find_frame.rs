//! Which AT-SPI frame is a window's: its process's applications and their top-levels, matched
//! to the process's windows by title and geometry (`frames.rs`), with the open popups that
//! belong to it and, on Wayland, where its window-local coordinates start.

use super::frames::{self, Doubt, Found, Geometry, WindowGeom};
use super::view::{logical_rect, CoordRule, View};
use super::{LinuxBackend, MAX_KNOWN_FRAMES};
use crate::atspi::{AppInfo, Atspi, FrameInfo, ObjRef};
use crate::window::{format_window_id, WindowRecord};
use lsm_core::{ErrorCode, GuiResult, Rect};

impl LinuxBackend {
    /// The AT-SPI frame of an X11 window and the showing popups (open menus, which X11 keeps in
    /// override-redirect windows of their own) that belong to it. The process's windows are
    /// matched to its frames together (`frames::match_frame`); the X11 window list is read
    /// only when the application has more than one top-level.
    pub(super) async fn find_frame(
        &self,
        view: &View,
        listed: Option<&[WindowRecord]>,
    ) -> GuiResult<Option<Found>> {
        let (Some(atspi), Some(pid)) = (&self.atspi, view.win.pid) else {
            return Ok(None);
        };
        // The applications as last read, when one of them is the window's process: a running
        // application keeps its bus name and root, and its frames are read afresh below. When
        // that finds no frame (or the application is gone), the registry is asked again.
        // A failure other than the application being gone (a hung one's timeout) is the answer:
        // asking again would cost a second timeout.
        let known = atspi.known_applications();
        if known.iter().any(|a| a.pid == Some(pid)) {
            match self.find_frame_among(atspi, pid, view, listed, &known).await {
                Ok(Some(found)) => return Ok(Some(found)),
                Err(e) if e.code != ErrorCode::WindowNotFound => return Err(e),
                _ => {}
            }
        }
        let apps = atspi.applications().await?;
        self.find_frame_among(atspi, pid, view, listed, &apps).await
    }

    /// The frame a window's last certain match found, and its coordinate rule: where a walk
    /// can start while `find_frame` confirms it.
    pub(super) fn known_frame(&self, xid: u32) -> Option<(ObjRef, CoordRule)> {
        self.known_frames
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&xid)
            .cloned()
    }

    /// `find_frame` among these applications (`pid`: the window's process).
    async fn find_frame_among(
        &self,
        atspi: &Atspi,
        pid: u32,
        view: &View,
        listed: Option<&[WindowRecord]>,
        apps: &[AppInfo],
    ) -> GuiResult<Option<Found>> {
        let win = &view.win;
        // On GNOME the extension says whether the window is a Wayland client (window-local
        // AT-SPI coordinates) or an XWayland one (screen coordinates, as on X11).
        let shell = match self.compositor() {
            Some(c) => Some(c.shell_window(win.id)?),
            None => None,
        };
        let wayland_client = shell.as_ref().is_some_and(|w| w.client == "wayland");
        for app in apps.iter().filter(|a| a.pid == Some(pid)) {
            let rule = match (&shell, wayland_client) {
                (Some(_), true) => CoordRule::Local,
                (Some(_), false) => CoordRule::Screen,
                (None, _) => CoordRule::for_toolkit(&app.toolkit, &app.toolkit_version),
            };
            let geometry = match rule {
                CoordRule::Screen => Geometry::Screen,
                CoordRule::Surface | CoordRule::Local => Geometry::SizeOnly,
            };
            let frames = atspi.frames(&app.obj).await?;
            if frames.is_empty() {
                continue;
            }
            if let Ok(mut m) = self.app_buses.lock() {
                m.insert(pid, app.obj.bus.clone());
            }
            // A Wayland root accessible is as large as the buffer at most (GTK 3), so sizes
            // are compared with the buffer.
            let bounds_of = |v: &View| match self.compositor() {
                Some(c) if wayland_client => c
                    .shell_window(v.win.id)
                    .map(|w| logical_rect(Rect::from(w.buffer), v.scale))
                    .unwrap_or_else(|_| v.logical_bounds()),
                _ => v.logical_bounds(),
            };
            let geom = |v: &View| WindowGeom {
                id: v.win.id,
                title: v.win.title.clone(),
                bounds: bounds_of(v),
                focused: v.win.focused,
                minimized: v.win.minimized,
            };
            let mut windows = vec![geom(view)];
            // A dialog is matched against its application's other windows even when one frame is
            // left: a dialog that is closing loses its frame first, and the one left is its main
            // window's, never this window's.
            if frames.len() > 1 || win.transient_for.is_some() {
                let all = match listed {
                    Some(l) => l.to_vec(),
                    None => self.ws_list_windows().await?,
                };
                windows.extend(
                    all.into_iter()
                        .filter(|w| w.pid == Some(pid) && w.id != win.id)
                        .map(|w| geom(&self.view(w))),
                );
            }
            let known: std::collections::HashMap<u32, ObjRef> = self
                .known_frames
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|(w, (obj, _))| (*w, obj.clone()))
                .collect();
            let Some(m) = frames::match_frame(win.id, &windows, &frames, geometry, &known) else {
                continue;
            };
            if matches!(m.doubt, Some(Doubt::Window(other)) if other != win.id) {
                // Every frame is another window's better: this window has none (it is closing,
                // or its application shows it without accessibility). Never another window's
                // elements under this id.
                tracing::debug!("window 0x{:x}: no accessibility frame of its own", win.id);
                continue;
            }
            let frame = frames[m.frame].clone();
            {
                let mut known = self.known_frames.lock().unwrap_or_else(|p| p.into_inner());
                if m.doubt.is_none() {
                    if known.len() >= MAX_KNOWN_FRAMES {
                        known.clear();
                    }
                    known.insert(win.id, (frame.obj.clone(), rule));
                }
            }
            let doubt = m.doubt.map(|d| match d {
                Doubt::Frames(n) => format!(
                    "window identity uncertain: {n} other accessibility frame(s) of this application fit this \
                     window as well (title {:?}, same size and place); the elements may be another window's. \
                     Move or focus this window (a `focus` action) and observe again",
                    win.title
                ),
                Doubt::Window(other) => format!(
                    "window identity uncertain: window {} fits the same accessibility frame as well; the \
                     elements may be that window's. Move or focus this window (a `focus` action) and observe again",
                    format_window_id(other)
                ),
            });
            let doubt = match (rule, &shell) {
                (CoordRule::Local, Some(w)) => doubt.or(self.place_local(view, &frame, w)),
                _ => doubt,
            };
            let popups = frames::popups_for(&windows[0], &windows, &frames, geometry)
                .into_iter()
                .filter(|&j| j != m.frame)
                .map(|j| frames[j].clone())
                .collect();
            return Ok(Some(Found {
                frame,
                rule,
                popups,
                doubt,
            }));
        }
        Ok(None)
    }

    /// Finds and remembers where a Wayland window's AT-SPI coordinates start (`wayland::coords`);
    /// a note when no rule fits (the elements are then placed as if they counted from the frame).
    fn place_local(
        &self,
        view: &View,
        frame: &FrameInfo,
        w: &crate::wayland::shell_windows::ShellWindow,
    ) -> Option<String> {
        let id = view.win.id;
        // AT-SPI speaks logical px; the shell's rects are stage px.
        let fr = logical_rect(Rect::from(w.frame), view.scale);
        let buf = logical_rect(Rect::from(w.buffer), view.scale);
        let root = frame.screen_extents.unwrap_or(Rect::new(0, 0, 0, 0));
        let origin = crate::wayland::coords::atspi_origin(root.width, root.height, fr, buf);
        let offset = origin.map(|o| o.to_frame(fr, buf)).unwrap_or((0, 0));
        self.local_offsets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, offset);
        origin.is_none().then(|| {
            format!(
                "the application's accessibility tree is {}x{} px, which matches neither the window ({}x{}) nor its \
                 surface ({}x{}): element bounds may be off; prefer element_id over x/y",
                root.width, root.height, fr.width, fr.height, buf.width, buf.height
            )
        })
    }
}
