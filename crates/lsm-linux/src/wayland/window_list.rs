//! The window list of a Wayland compositor that lsm reads through a helper of its own (GNOME:
//! the Shell extension; KDE: a KWin script), both in the extension's format (`shell_windows`):
//! the latest list shared for `LIST_FRESH` among one observation's lookups, each window's last
//! record, and the 32-bit handles of the compositor's window ids.

use super::shell_windows::{self, Handles, ShellList, ShellWindow};
use crate::window::WindowRecord;
use lsm_core::{GuiError, GuiResult};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one window list is reused: the several lookups of one observation (the window,
/// its dialogs, the screen) share one call into the compositor.
pub const LIST_FRESH: Duration = Duration::from_millis(30);

#[derive(Default)]
pub struct WindowList {
    handles: Mutex<Handles>,
    /// The latest list, by compositor id.
    last: Mutex<HashMap<u64, ShellWindow>>,
    /// The latest list and when it was read; the lock also makes concurrent lookups share one
    /// call.
    cache: tokio::sync::Mutex<Option<(Instant, ShellList)>>,
}

impl WindowList {
    /// The list as read within `LIST_FRESH`, else read now with `fetch` (which should call
    /// `remember` with what it read).
    pub async fn get<F, Fut>(&self, fetch: F) -> GuiResult<ShellList>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = GuiResult<ShellList>>,
    {
        let mut cache = self.cache.lock().await;
        if let Some((at, list)) = cache.as_ref() {
            if at.elapsed() < LIST_FRESH {
                return Ok(list.clone());
            }
        }
        let list = fetch().await?;
        *cache = Some((Instant::now(), list.clone()));
        Ok(list)
    }

    /// Forgets the shared list (after input, windows may have changed).
    pub async fn forget(&self) {
        *self.cache.lock().await = None;
    }

    /// Keeps `list` as every window's last record; handles of windows that are gone are
    /// dropped. Returns the ids listed.
    pub fn remember(&self, list: &ShellList) -> Vec<u64> {
        let ids: Vec<u64> = list.windows.iter().map(|w| w.id).collect();
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) =
            list.windows.iter().map(|w| (w.id, w.clone())).collect();
        self.handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(&ids);
        ids
    }

    /// The backend's record of a listed window.
    pub fn to_window(&self, w: &ShellWindow) -> WindowRecord {
        shell_windows::to_window(w, &mut self.handles.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The compositor id of a handle.
    pub fn id(&self, handle: u32) -> GuiResult<u64> {
        self.handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .id(handle)
            .ok_or_else(|| GuiError::window_not_found(&crate::window::format_window_id(handle)))
    }

    /// The windows of the last list whose process is `pid`, by compositor id.
    pub fn last_of_process(&self, pid: i64) -> Vec<ShellWindow> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        of_process(last.values().cloned(), pid)
    }

    /// A window's record as of the last list.
    pub fn last(&self, handle: u32) -> GuiResult<ShellWindow> {
        let id = self.id(handle)?;
        self.last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
            .ok_or_else(|| GuiError::window_not_found(&crate::window::format_window_id(handle)))
    }
}

/// The windows of process `pid` among `windows`, by compositor id (two lists of one process
/// compare equal when its windows are the same).
pub fn of_process(windows: impl IntoIterator<Item = ShellWindow>, pid: i64) -> Vec<ShellWindow> {
    let mut of: Vec<ShellWindow> = windows.into_iter().filter(|w| w.pid == pid).collect();
    of.sort_by_key(|w| w.id);
    of
}
