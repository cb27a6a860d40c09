//! First observations of a window: an application that has just mapped (or moved) a window may
//! still report its old place (LibreOffice's VCL: every element 25 px too high, the title bar's
//! height, until it sees the window manager's move), and Firefox builds its document's
//! accessibility tree only when asked (the first walk finds the document empty). So the first
//! observation of a window not seen before, or just restored, waits, bounded by `FRESH_WAIT`,
//! until the frame's content agrees with the X11 geometry and the document is present and
//! stable: two consecutive reads equal. Windows already seen never wait.

use crate::atspi::{Atspi, CoordKind, ObjRef};
use lsm_core::{Point, Rect};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest a first observation waits for the application.
pub const FRESH_WAIT: Duration = Duration::from_millis(2000);
/// Between two reads of a frame with a document or of a Gecko window (stable = two reads
/// equal): a document fills in over tens of milliseconds.
const FRESH_POLL: Duration = Duration::from_millis(60);
/// Between two reads of a plain window (a dialog, a tool window): a stale position is caught
/// by [`problem`] on any read, so the second read only has to show it is not still moving.
const FRESH_POLL_PLAIN: Duration = Duration::from_millis(20);
/// Bounds on the search for the document below the frame.
const DOC_DEPTH: usize = 8;
const DOC_NODES: usize = 160;
/// Windows remembered; the list is cleared when it grows past this (a wait costs little).
const MAX_SEEN: usize = 4096;
const DOC_ROLES: &[&str] = &[
    "document_web",
    "document_text",
    "document_frame",
    "document_spreadsheet",
];

/// The windows observed so far, with whether each was minimized then.
#[derive(Default)]
pub struct Seen(Mutex<HashMap<u32, bool>>);

impl Seen {
    /// Whether `first_look` would answer true, without recording anything.
    pub fn is_new(&self, xid: u32, minimized: bool) -> bool {
        let seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        !minimized && seen.get(&xid).is_none_or(|was| *was)
    }

    /// True for a window not observed before, or observed minimized and now restored; records
    /// the window as seen.
    pub fn first_look(&self, xid: u32, minimized: bool) -> bool {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() >= MAX_SEEN {
            seen.clear();
        }
        let before = seen.insert(xid, minimized);
        !minimized && before.is_none_or(|was| was)
    }
}

/// Gecko applications (Firefox, Thunderbird) build their document's accessibility tree only
/// once a client asks: their first look waits for the document too.
pub fn builds_document_on_demand(class: &str, instance: &str) -> bool {
    let class = class.to_ascii_lowercase();
    ["firefox", "thunderbird", "librewolf", "iceweasel"]
        .iter()
        .any(|g| class.contains(g))
        || instance == "Navigator"
}

/// What one read of a frame shows.
#[derive(Debug, Clone, PartialEq)]
struct Look {
    /// Top-left of the frame's first child with an area (screen coordinates).
    content: Option<Point>,
    /// The document's extents and child count.
    doc: Option<(Option<Rect>, usize)>,
}

/// How the wait ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Settled {
    /// Stable and consistent after this long (zero when the first two reads agreed).
    After(Duration),
    /// Still not within `FRESH_WAIT`; why.
    NotWithin(String),
}

/// Waits until the frame `frame` of a window whose client area is `client` (screen, logical
/// px) is consistent and stable. `screen_coords`: the toolkit reports screen extents (for GTK4's
/// window-relative ones the position check does not apply). `gecko`: the application builds its
/// document on demand, so a missing document is waited for.
pub async fn settle(
    atspi: &Atspi,
    frame: &ObjRef,
    client: Rect,
    screen_coords: bool,
    gecko: bool,
) -> Settled {
    let start = Instant::now();
    let mut doc: Option<ObjRef> = None;
    let mut prev: Option<Look> = None;
    let mut why;
    let mut poll = FRESH_POLL;
    loop {
        if doc.is_none() {
            doc = find_document(atspi, frame).await;
        }
        let look = read(atspi, frame, doc.as_ref()).await;
        why = problem(&look, client, screen_coords, gecko);
        if why.is_none() && prev.as_ref() == Some(&look) {
            let waited = start.elapsed().saturating_sub(poll);
            tracing::debug!("fresh window settled after {waited:?}: {look:?}");
            return Settled::After(waited);
        }
        if why.is_none() {
            why = Some("its extents were still changing".into());
        }
        poll = poll_between(&look, gecko);
        if start.elapsed() + poll > FRESH_WAIT {
            break;
        }
        prev = Some(look);
        tokio::time::sleep(poll).await;
    }
    Settled::NotWithin(why.unwrap_or_default())
}

/// How long to wait before reading a frame again.
fn poll_between(look: &Look, gecko: bool) -> Duration {
    if gecko || look.doc.is_some() {
        FRESH_POLL
    } else {
        FRESH_POLL_PLAIN
    }
}

/// Why a look is not yet believable, if it is not.
fn problem(look: &Look, client: Rect, screen_coords: bool, gecko: bool) -> Option<String> {
    if screen_coords {
        if let Some(p) = look.content {
            // The content starts inside the client area; a stale position lies above or left.
            if p.x < client.x - 1 || p.y < client.y - 1 {
                return Some(format!(
                    "the application placed its content at ({},{}), outside its window at ({},{})",
                    p.x, p.y, client.x, client.y
                ));
            }
        }
    }
    match look.doc {
        Some((_, 0)) => Some("its document had no content yet".into()),
        None if gecko => Some("its document was not there yet".into()),
        _ => None,
    }
}

async fn read(atspi: &Atspi, frame: &ObjRef, doc: Option<&ObjRef>) -> Look {
    let content = async {
        for child in atspi.children_of(frame).await.unwrap_or_default().iter().take(4) {
            if let Ok(Some(r)) = atspi.extents_of(child, CoordKind::Screen).await {
                return Some(r.origin());
            }
        }
        None
    };
    let document = async {
        let d = doc?;
        let (ext, kids) = tokio::join!(atspi.extents_of(d, CoordKind::Screen), atspi.children_of(d));
        Some((ext.ok().flatten(), kids.map(|k| k.len()).unwrap_or(0)))
    };
    let (content, doc) = tokio::join!(content, document);
    Look { content, doc }
}

/// The first document below `frame`, breadth first and bounded.
async fn find_document(atspi: &Atspi, frame: &ObjRef) -> Option<ObjRef> {
    let mut level = vec![frame.clone()];
    let mut visited = 0;
    for _ in 0..DOC_DEPTH {
        let mut next = Vec::new();
        for obj in &level {
            for child in atspi.children_of(obj).await.unwrap_or_default() {
                visited += 1;
                if visited > DOC_NODES {
                    return None;
                }
                let role = atspi.role_of(&child).await.unwrap_or_default();
                if DOC_ROLES.contains(&role.as_str()) {
                    return Some(child);
                }
                next.push(child);
            }
        }
        if next.is_empty() {
            return None;
        }
        level = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_new_and_restored_windows_are_fresh() {
        let seen = Seen::default();
        assert!(seen.first_look(1, false));
        assert!(!seen.first_look(1, false));
        assert!(!seen.first_look(2, true));
        assert!(seen.first_look(2, false));
        assert!(!seen.first_look(2, false));
    }

    #[test]
    fn documents_are_read_again_later_than_plain_windows() {
        let plain = Look {
            content: Some(Point::new(0, 0)),
            doc: None,
        };
        let with_doc = Look {
            content: None,
            doc: Some((None, 2)),
        };
        assert_eq!(poll_between(&plain, false), FRESH_POLL_PLAIN);
        assert_eq!(poll_between(&plain, true), FRESH_POLL);
        assert_eq!(poll_between(&with_doc, false), FRESH_POLL);
    }

    #[test]
    fn a_stale_position_or_an_empty_document_is_not_believed() {
        let client = Rect::new(40, 30, 1000, 700);
        let look = |x, y, doc| Look {
            content: Some(Point::new(x, y)),
            doc,
        };
        assert!(problem(&look(40, 5, None), client, true, false).is_some());
        assert!(problem(&look(40, 5, None), client, false, false).is_none());
        assert!(problem(&look(40, 30, None), client, true, false).is_none());
        assert!(problem(&look(40, 30, None), client, true, true).is_some());
        assert!(problem(&look(40, 30, Some((None, 0))), client, true, false).is_some());
        assert!(problem(&look(40, 30, Some((None, 3))), client, true, true).is_none());
    }
}
