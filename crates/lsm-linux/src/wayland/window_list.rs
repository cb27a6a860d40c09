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

/// Whether an observation walked from the last list's records still stands, by the list read
/// beside the walk.
#[derive(Debug, PartialEq, Eq)]
pub enum Stands {
    /// The window and its process's other windows are exactly as the walk took them.
    Yes,
    /// The window is gone.
    Gone,
    /// The window or one of its process's others changed (moved, resized, retitled, focused,
    /// opened, closed): the observation is taken again.
    Again,
}

/// `window`'s record and its process's windows (`before`, as [`of_process`] gives them) against
/// the process's windows now (`now`, the same way).
pub fn observation_stands(window: &ShellWindow, before: &[ShellWindow], now: &[ShellWindow]) -> Stands {
    match now.iter().find(|w| w.id == window.id) {
        None => Stands::Gone,
        Some(w) if w == window && now == before => Stands::Yes,
        Some(_) => Stands::Again,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wayland::shell_windows::parse_list;

    fn windows() -> Vec<ShellWindow> {
        let json = r#"{"version":1,"windows":[
            {"id":"7","title":"Calculator","pid":40,"type":0,"frame":{"x":10,"y":20,"width":300,"height":400},
             "buffer":{"x":10,"y":20,"width":300,"height":400},"monitor":0,"scale":1,"focus":true},
            {"id":"9","title":"About","pid":40,"type":0,"frame":{"x":50,"y":60,"width":200,"height":100},
             "buffer":{"x":50,"y":60,"width":200,"height":100},"monitor":0,"scale":1,"focus":false},
            {"id":"3","title":"Other","pid":41,"type":0,"frame":{"x":0,"y":0,"width":100,"height":100},
             "buffer":{"x":0,"y":0,"width":100,"height":100},"monitor":0,"scale":1,"focus":false}],
            "monitors":[{"rect":{"x":0,"y":0,"width":1280,"height":800},"scale":1}]}"#;
        parse_list(json).expect("the test list parses").windows
    }

    #[test]
    fn a_process_windows_are_its_own_by_id() {
        let of = of_process(windows(), 40);
        assert_eq!(of.iter().map(|w| w.id).collect::<Vec<_>>(), vec![7, 9]);
    }

    #[test]
    fn an_observation_stands_only_while_the_process_windows_are_as_walked() {
        let before = of_process(windows(), 40);
        let window = before[0].clone();
        assert_eq!(observation_stands(&window, &before, &before), Stands::Yes);
        // Another process's windows do not matter.
        let mut others = windows();
        others[2].title = "Renamed".into();
        assert_eq!(
            observation_stands(&window, &before, &of_process(others, 40)),
            Stands::Yes
        );
        // The window itself moved.
        let mut moved = before.clone();
        moved[0].frame.x += 5;
        assert_eq!(observation_stands(&window, &before, &moved), Stands::Again);
        // A sibling that tells the window's frame from its own moved, or took the focus.
        let mut sibling = before.clone();
        sibling[1].frame.y += 1;
        assert_eq!(observation_stands(&window, &before, &sibling), Stands::Again);
        let mut focused = before.clone();
        focused[1].focus = true;
        assert_eq!(observation_stands(&window, &before, &focused), Stands::Again);
        // A window of the process opened or closed.
        assert_eq!(observation_stands(&window, &before, &before[..1]), Stands::Again);
        // The window is gone.
        assert_eq!(observation_stands(&window, &before, &before[1..]), Stands::Gone);
    }
}
