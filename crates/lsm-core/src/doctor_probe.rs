//! `lsm doctor`'s probe: the same calls `gui_list` and `gui_state` make (connect, list the
//! windows, capture one), plus what the connector and the backend say of themselves, each
//! bounded in time. The items are judged and rendered by `doctor.rs`.

use crate::doctor::{Item, Status};
use crate::model::{BackendInfo, WindowInfo};
use crate::service::{GuiService, LocalGui};
use crate::{DesktopBackend, GuiError};
use std::future::Future;
use std::time::{Duration, Instant};

/// Bound on connecting (the backends' own connection timeouts are shorter).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(6);
/// Bound on every other probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(4);

/// The order items are shown in (others follow).
const ORDER: &[&str] = &[
    "session",
    "windows_session",
    "macos_session",
    "macos_accessibility",
    "macos_screen_recording",
    "desktop",
    "gnome_extension",
    "kde_scripts",
    "accessibility",
    "windows",
    "accessible_apps",
    "capture",
    "input",
];

async fn within<T>(limit: Duration, fut: impl Future<Output = T>) -> Option<T> {
    tokio::time::timeout(limit, fut).await.ok()
}

impl LocalGui {
    /// Every check `lsm doctor` makes of this machine's desktop.
    pub async fn doctor(&self) -> Vec<Item> {
        let mut items = match within(PROBE_TIMEOUT, self.connector().preflight()).await {
            Some(items) => items,
            None => vec![Item::fail(
                "session",
                "Session",
                format!("looking for the session took over {} s", PROBE_TIMEOUT.as_secs()),
            )
            .with_hint(self.connector().connect_hint())],
        };
        // A failed preflight item is why connecting would fail: said once, not twice.
        if items.iter().any(|i| i.status == Status::Fail) {
            return sorted(items);
        }
        let backend = match within(CONNECT_TIMEOUT, self.backend()).await {
            Some(Ok(b)) => b,
            Some(Err(e)) => {
                items.push(connect_failed(e, self.connector().connect_hint()));
                return sorted(items);
            }
            None => {
                items.push(connect_failed(
                    GuiError::timeout("connecting to the desktop"),
                    self.connector().connect_hint(),
                ));
                return sorted(items);
            }
        };
        let info = backend.info();
        items.push(Item::ok(
            "desktop",
            "Desktop",
            format!("connected: {} ({})", info.name, info.notes.join("; ")),
        ));
        // The window list exactly as `gui_list` makes it.
        let windows = match within(PROBE_TIMEOUT, self.list()).await {
            Some(Ok(list)) => list.windows,
            Some(Err(e)) => {
                items.push(
                    Item::fail("windows", "Windows", e.message).with_hint(self.connector().connect_hint()),
                );
                Vec::new()
            }
            None => {
                items.push(
                    Item::fail("windows", "Windows", "listing the windows timed out").with_hint(
                        "an application or the window system does not answer; restart it and try again",
                    ),
                );
                Vec::new()
            }
        };
        if !items.iter().any(|i| i.id == "windows") {
            items.push(windows_item(&windows));
        }
        let own = within(PROBE_TIMEOUT, backend.diagnose(&windows))
            .await
            .unwrap_or_else(|| {
                vec![Item::warn(
                    "diagnose",
                    "Backend checks",
                    format!("the backend's own checks took over {} s", PROBE_TIMEOUT.as_secs()),
                )
                .with_hint("an application or the accessibility bus does not answer; try again")]
            });
        items.extend(own);
        let has = |items: &[Item], id: &str| items.iter().any(|i| i.id == id);
        if !has(&items, "accessibility") {
            items.push(capability_item(&info, "accessibility", "Accessibility"));
        }
        if !has(&items, "input") {
            items.push(capability_item(&info, "raw_input", "Input"));
        }
        if !has(&items, "capture") {
            items.push(capture_item(backend.as_ref(), &info, &windows).await);
        }
        sorted(items)
    }
}

fn sorted(mut items: Vec<Item>) -> Vec<Item> {
    let rank = |i: &Item| ORDER.iter().position(|id| *id == i.id).unwrap_or(ORDER.len());
    items.sort_by_key(rank);
    items
}

fn connect_failed(e: GuiError, hint: &str) -> Item {
    Item::fail("desktop", "Desktop", e.message).with_hint(hint)
}

fn windows_item(windows: &[WindowInfo]) -> Item {
    if windows.is_empty() {
        return Item::warn(
            "windows",
            "Windows",
            "no application windows are open: nothing to see yet",
        )
        .with_hint("open the application the model should operate");
    }
    let accessible = windows.iter().filter(|w| w.accessible).count();
    Item::ok(
        "windows",
        "Windows",
        format!(
            "{} window(s) listed, {accessible} with an accessibility tree",
            windows.len()
        ),
    )
}

/// An item from one capability of `gui_list`'s backend info, its notes saying why when it is
/// missing.
fn capability_item(info: &BackendInfo, capability: &str, title: &str) -> Item {
    let id = if capability == "raw_input" {
        "input"
    } else {
        capability
    };
    if info.capabilities.iter().any(|c| c == capability) {
        return Item::ok(id, title, format!("{} offers {capability}", info.name));
    }
    Item::fail(
        id,
        title,
        format!(
            "{} cannot offer {capability}: {}",
            info.name,
            info.notes.join("; ")
        ),
    )
    .with_hint("see the reason; `lsm doctor` on a machine with a full desktop session shows every item ok")
}

/// One real capture of the first shown window, as `gui_state` takes it.
async fn capture_item(backend: &dyn DesktopBackend, info: &BackendInfo, windows: &[WindowInfo]) -> Item {
    const TITLE: &str = "Capture";
    if !info.capabilities.iter().any(|c| c == "screenshot") {
        let why: Vec<&str> = info
            .notes
            .iter()
            .filter(|n| n.contains("screenshot"))
            .map(String::as_str)
            .collect();
        return Item::fail("capture", TITLE, format!("no screenshots: {}", why.join("; ")))
            .with_hint("see the reason above");
    }
    let Some(window) = windows
        .iter()
        .find(|w| !w.minimized && w.bounds.width > 0 && w.bounds.height > 0)
    else {
        return Item::warn("capture", TITLE, "no shown window to capture")
            .with_hint("open (or restore) an application window and run `lsm doctor` again");
    };
    let started = Instant::now();
    let shot = match within(PROBE_TIMEOUT, backend.capture(&window.window_id)).await {
        Some(Ok(snapshot)) => snapshot.screenshot,
        Some(Err(e)) => {
            return Item::fail(
                "capture",
                TITLE,
                format!("capturing {:?}: {}", window.title, e.message),
            )
            .with_hint("see the reason; captures need the window system's screenshot support")
        }
        None => {
            return Item::fail(
                "capture",
                TITLE,
                format!("capturing {:?} timed out", window.title),
            )
            .with_hint("the window system does not answer; restart the session's compositor or X server")
        }
    };
    let Some(shot) = shot else {
        return Item::fail("capture", TITLE, "the backend returned no image")
            .with_hint("report this as a bug");
    };
    let image = &shot.image;
    let detail = format!(
        "captured {:?} ({}): {}x{} px in {} ms",
        window.title,
        window.app,
        image.width,
        image.height,
        started.elapsed().as_millis()
    );
    let flat = image
        .data
        .chunks_exact(4)
        .all(|p| p == image.data.get(..4).unwrap_or(p));
    if flat {
        return Item::warn(
            "capture",
            TITLE,
            format!("{detail}, but every pixel has one colour"),
        )
        .with_hint(
            "the window may not be painted (minimised, on another workspace, or covered by a lock screen)",
        );
    }
    Item::ok("capture", TITLE, detail)
}
