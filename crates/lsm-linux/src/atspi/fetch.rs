//! Reading one object for a walk: its basic properties (from the application's cache where it
//! holds them), extents, actions, text or value and children, and whether it is dropped with its
//! subtree (hidden, no area, off screen, scrolled away) before anything more is asked.

use crate::atspi::cache::Prefetch;
use crate::atspi::list::{MAX_BULK_CHILDREN, MAX_MANAGED_CHILDREN};
use crate::atspi::{
    Atspi, Basics, CallError, CoordKind, Flavor, ObjRef, RawNode, TextMode, IFACE_ACCESSIBLE, IFACE_COMPONENT,
};
use lsm_core::model::Query;
use lsm_core::{RawElement, Rect};
use std::time::Instant;

/// What one object fetch produced.
pub(crate) struct Fetched {
    pub(super) node: RawNode,
    /// Children to visit (empty unless asked for and the node is kept).
    pub(super) children: Vec<ObjRef>,
    /// Children that were not listed for lack of element budget (the walk is then truncated).
    pub(super) cut: usize,
    /// The clip for the children: the walk's clip, narrowed to a scrolling container's area.
    pub(super) child_clip: Clip,
    /// Why the node is dropped with its subtree (`None`: kept).
    pub(super) drop: Option<Drop>,
    /// Children of a huge list not read on purpose / searched by name only / not searched for
    /// the query in time.
    pub(super) not_loaded: usize,
    pub(super) searched: usize,
    pub(super) unsearched: usize,
}

/// Why a fetched object is not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Drop {
    Hidden,
    NoArea,
    OffScreen,
    ScrolledAway,
}

/// The area children must touch to be on screen: the window's, or a scrolling container's
/// visible area inside it (`scrolled`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Clip {
    pub(super) rect: Option<Rect>,
    pub(super) scrolled: bool,
    /// The correction the parent's extents needed (see `RawNode::shift`), and its corrected
    /// area.
    pub(super) shift: (i32, i32),
    pub(super) parent: Option<Rect>,
}

impl Clip {
    /// Only a correction to apply (an object re-read on its own).
    pub(crate) fn shifted(shift: (i32, i32)) -> Clip {
        Clip {
            shift,
            ..Clip::default()
        }
    }
}

/// The correction `RawNode::shift` for an object of `role` with (already shifted) extents `e`
/// inside a parent of area `parent`: a root pane exactly as large as its parent but elsewhere
/// is the parent's content reported at the wrong place (LibreOffice gtk3: the menu bar's
/// height is missing), so it and its subtree move onto the parent.
fn root_pane_fix(role: &str, e: Rect, parent: Option<Rect>) -> (i32, i32) {
    match parent {
        Some(p) if role == "root_pane" && p.width == e.width && p.height == e.height => {
            (p.x - e.x, p.y - e.y)
        }
        _ => (0, 0),
    }
}

/// What `GetExtents` told about an object's area.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Area {
    Known(Rect),
    /// Zero width or height at a real position: not laid out.
    Empty,
    /// A real size at (i32::MIN, i32::MIN): GTK 3's tree-view cells say "not showing" so once
    /// scrolled away (their size stays). Elsewhere it decides nothing, like `Unknown`.
    SizeOnly,
    /// No Component, no answer, or a placeholder ((-1,-1,-1,-1), negative sizes, i32::MIN
    /// positions): says nothing about visibility. Firefox, GTK 3 notebook pages and VCL answer
    /// so for containers whose children have real extents.
    Unknown,
}

fn area_of(e: Option<(i32, i32, i32, i32)>) -> Area {
    match e {
        None => Area::Unknown,
        Some((x, y, w, h)) if x == i32::MIN && y == i32::MIN && w > 0 && h > 0 => Area::SizeOnly,
        Some((x, y, w, h)) if w < 0 || h < 0 || x == i32::MIN || y == i32::MIN => Area::Unknown,
        Some((_, _, w, h)) if w == 0 || h == 0 => Area::Empty,
        Some((x, y, w, h)) => Area::Known(Rect::new(x, y, w, h)),
    }
}

/// Whether an object of this area lies outside the scrolling container's visible area `clip`
/// (`Clip::shift` not yet applied): scrolled away.
fn scrolled_out(area: Area, clip: Clip) -> bool {
    match (area, clip.rect) {
        _ if !clip.scrolled => false,
        (Area::SizeOnly, _) => true,
        (Area::Known(r), Some(c)) => r.translate(clip.shift.0, clip.shift.1).intersect(&c).is_none(),
        _ => false,
    }
}

impl Fetched {
    fn dropped(node: RawNode, why: Drop) -> Fetched {
        Fetched {
            node,
            children: Vec::new(),
            cut: 0,
            child_clip: Clip::default(),
            drop: Some(why),
            not_loaded: 0,
            searched: 0,
            unsearched: 0,
        }
    }
}

/// Whether a node matches the query by its name, role or description (the value is not read
/// for objects about to be dropped).
fn matches_query(q: &Query, n: &RawNode) -> bool {
    q.matches(&RawElement {
        native: String::new(),
        key: String::new(),
        parent: None,
        depth: 0,
        role: n.role.clone(),
        name: n.name.clone(),
        description: n.description.clone(),
        value: n.value.clone(),
        states: Vec::new(),
        actions: Vec::new(),
        bounds: None,
        summary: None,
    })
}

/// Shared state of one walk.
pub(crate) struct WalkCtx {
    pub(super) pre: Option<Prefetch>,
    /// "showing" is reliable here: objects without it are not on screen (GTK 3, window shown).
    pub(super) showing: bool,
    pub(super) query: Option<Query>,
    /// Searching huge lists for the query stops here (the rest of the budget reads the matches).
    pub(super) scan_until: Instant,
}

/// A node with the basic properties only.
fn raw_node(obj: ObjRef, b: Basics) -> RawNode {
    RawNode {
        obj,
        parent: None,
        depth: 0,
        role: b.role,
        name: b.name,
        description: b.description,
        value: None,
        states: b.states,
        actions: Vec::new(),
        extents: None,
        shift: (0, 0),
        interfaces: b.interfaces,
        child_count: b.child_count,
        summary: None,
    }
}

impl Atspi {
    /// Reads one object. `None` when it is gone or defunct. With `prune`, hidden objects, empty
    /// ones and those outside `clip` come back with `keep == false` (and fewer properties).
    /// `children`: read the child list of kept objects, at most this many.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn fetch(
        &self,
        obj: ObjRef,
        coords: CoordKind,
        flavor: Flavor,
        walk: Option<&WalkCtx>,
        clip: Clip,
        prune: bool,
        children: Option<usize>,
    ) -> Result<Option<Fetched>, CallError> {
        let pre = walk.and_then(|w| w.pre.as_ref());
        let showing_known = walk.is_some_and(|w| w.showing);
        let hidden = |states: &[String]| {
            // GTK 4.8 never sets "showing" below the window: decide from "visible" and geometry,
            // and from "showing" only where it is reliable.
            !states.iter().any(|s| s == "visible")
                || (showing_known && !states.iter().any(|s| s == "showing"))
        };
        let query = walk.and_then(|w| w.query.as_ref());
        // Shown but outside the viewport: Gecko unsets "showing" on rows scrolled away, which a
        // query may be looking for.
        let maybe_wanted = |states: &[String]| query.is_some() && states.iter().any(|s| s == "visible");
        // Inside a scrolling container the extents come first, beside the states: a row scrolled
        // away (most of a list's rows) is then dropped after two calls instead of six. Not while
        // searching: what the caller looks for is kept wherever it is.
        let extents_first =
            prune && walk.is_some() && clip.scrolled && clip.rect.is_some() && query.is_none();
        let read_extents = || async {
            let arg = (coords.atspi(),);
            let e = self.call::<_, (i32, i32, i32, i32)>(&obj, IFACE_COMPONENT, "GetExtents", &arg);
            e.await.ok()
        };
        let mut early_extents = None;
        let mut read_kids: Option<Result<Vec<ObjRef>, CallError>> = None;
        let mut b = match pre.and_then(|p| p.basics.get(&obj)) {
            Some(b) => {
                // A hidden object is dropped below without any call: no extents for it.
                if extents_first && !hidden(&b.states) && b.interfaces.iter().any(|i| i == "Component") {
                    let e = read_extents().await;
                    if scrolled_out(area_of(e), clip) {
                        return Ok(Some(Fetched::dropped(
                            raw_node(obj, b.clone()),
                            Drop::ScrolledAway,
                        )));
                    }
                    early_extents = Some(e);
                }
                b.clone()
            }
            None if prune && walk.is_some() => {
                // States first: a hidden object (the items of every closed menu in LibreOffice:
                // most of its tree) then costs one call instead of six.
                let (states, extents) = tokio::join!(self.states_of(&obj), async {
                    if extents_first {
                        Some(read_extents().await)
                    } else {
                        None
                    }
                });
                let states = match states {
                    Ok(s) => s,
                    Err(CallError::Gone(_)) => return Ok(None),
                    Err(e) => return Err(e),
                };
                if let Some(e) = extents {
                    if scrolled_out(area_of(e), clip) && !states.iter().any(|s| s == "defunct") {
                        return Ok(Some(Fetched::dropped(
                            raw_node(obj, Basics::unknown(states)),
                            Drop::ScrolledAway,
                        )));
                    }
                    early_extents = Some(e);
                }
                if states.iter().any(|s| s == "defunct") {
                    return Ok(None);
                }
                if hidden(&states) && !maybe_wanted(&states) {
                    return Ok(Some(Fetched::dropped(
                        raw_node(obj, Basics::unknown(states)),
                        Drop::Hidden,
                    )));
                }
                match self.basics(&obj, flavor.getall, Some(states)).await? {
                    Some(b) => b,
                    None => return Ok(None),
                }
            }
            None if walk.is_none() => {
                // Read alone (a walk's root, an object read again): its extents and children go
                // out with its basics instead of a round trip later each, so the application
                // answers them before the cache the walk asks for beside (GTK answers in order).
                let (b, e, kids) =
                    tokio::join!(self.basics(&obj, flavor.getall, None), read_extents(), async {
                        match children {
                            Some(_) => Some(self.children_of(&obj).await),
                            None => None,
                        }
                    });
                early_extents = Some(e);
                read_kids = kids;
                match b? {
                    Some(b) => b,
                    None => return Ok(None),
                }
            }
            None => match self.basics(&obj, flavor.getall, None).await? {
                Some(b) => b,
                None => return Ok(None),
            },
        };
        if b.states.iter().any(|s| s == "defunct") {
            return Ok(None);
        }
        if prune && hidden(&b.states) {
            let wanted = maybe_wanted(&b.states)
                && query.is_some_and(|q| matches_query(q, &raw_node(obj.clone(), b.clone())));
            if !wanted {
                return Ok(Some(Fetched::dropped(raw_node(obj, b), Drop::Hidden)));
            }
        }
        let has = |iface: &str| b.interfaces.iter().any(|i| i == iface);
        let (has_component, has_action, has_text, has_value) = (
            has("Component"),
            has("Action"),
            // A named label's text is its name where the toolkit says so: one call fewer each.
            has("Text") && !flavor.text_is_name(&b.role, &b.name),
            has("Value"),
        );
        let long = b.states.iter().any(|s| s == "multi_line")
            || b.role.starts_with("document")
            || b.role == "terminal";
        let text_mode = match flavor.text {
            _ if b.role == "password_text" => TextMode::Masked,
            // Possibly long and no clamping: ask the length first and read only the head.
            TextMode::ToEnd if long => TextMode::CountFirst,
            m => m,
        };
        let (extents, actions, value, count) = tokio::join!(
            async {
                match early_extents {
                    Some(e) => e,
                    None if has_component => read_extents().await,
                    None => None,
                }
            },
            async {
                if has_action {
                    self.action_names_once(&obj, flavor.stable_paths).await
                } else {
                    Vec::new()
                }
            },
            async {
                if has_text {
                    if let Ok(t) = self.text_of(&obj, text_mode).await {
                        return Some(t);
                    }
                }
                if has_value {
                    return self.value_of(&obj).await.ok();
                }
                None
            },
            async {
                // The cache does not count the children of objects managing their descendants.
                if b.child_count < 0 {
                    self.prop_int(&obj, IFACE_ACCESSIBLE, "ChildCount")
                        .await
                        .unwrap_or(0)
                } else {
                    b.child_count as i64
                }
            },
        );
        b.child_count = count.clamp(0, i32::MAX as i64) as i32;
        let mut node = raw_node(obj, b);
        let mut area = area_of(extents);
        node.shift = clip.shift;
        if let Area::Known(r) = area {
            let r = r.translate(clip.shift.0, clip.shift.1);
            let (dx, dy) = root_pane_fix(&node.role, r, clip.parent);
            node.shift = (node.shift.0 + dx, node.shift.1 + dy);
            area = Area::Known(r.translate(dx, dy));
        }
        node.extents = match area {
            Area::Known(r) => Some(r),
            _ => None,
        };
        node.actions = actions;
        node.value = value;
        // An object with a real position and no area is not laid out (a hidden stack page in
        // GTK 4, a scrolled-away row in GTK 3): nothing below it has any area either, unless it
        // says it is showing where that is reliable. Unknown extents decide nothing: the
        // children's own extents do.
        let dropped = match area {
            Area::Empty if !(showing_known && node.has_state("showing")) => Some(Drop::NoArea),
            Area::SizeOnly if clip.scrolled => Some(Drop::ScrolledAway),
            Area::Known(e) => match clip.rect {
                Some(c) if e.intersect(&c).is_none() => Some(if clip.scrolled {
                    Drop::ScrolledAway
                } else {
                    Drop::OffScreen
                }),
                _ => None,
            },
            _ => None,
        };
        if let Some(why) = dropped.filter(|_| prune) {
            // What the caller looks for is kept wherever it is.
            if !query.is_some_and(|q| matches_query(q, &node)) {
                return Ok(Some(Fetched::dropped(node, why)));
            }
        }
        // What scrolls inside this object and lies outside its area is scrolled away.
        let scrolls = matches!(
            node.role.as_str(),
            "scroll_pane" | "viewport" | "table" | "tree_table" | "tree" | "list" | "list_box"
        );
        let mut child_clip = match (clip.rect, node.extents) {
            (Some(c), Some(e)) if scrolls => Clip {
                // A matching object kept outside the clip: its children are judged by its area.
                rect: c.intersect(&e).or(Some(e)),
                scrolled: true,
                ..clip
            },
            (None, Some(e)) if scrolls => Clip {
                rect: Some(e),
                scrolled: true,
                ..clip
            },
            _ if dropped.is_some() => Clip::default(),
            // An open menu's items are drawn in a popup of their own, wherever that lies: not
            // clipped by the menu bar's scroll pane (LibreOffice gtk3) or the window.
            _ if node.role == "menu" => Clip {
                rect: None,
                scrolled: false,
                ..clip
            },
            _ => clip,
        };
        child_clip.shift = node.shift;
        child_clip.parent = node.extents;

        let count = node.child_count;
        let budget = children.unwrap_or(0);
        let managed = node.has_state("manages_descendants");
        let huge = count > MAX_BULK_CHILDREN || (managed && count > MAX_MANAGED_CHILDREN);
        let listed = pre.and_then(|p| p.children.get(&node.obj));
        let (mut not_loaded, mut searched, mut unsearched) = (0, 0, 0);
        let (kids, cut) = if count == 0 || budget == 0 {
            (Vec::new(), 0)
        } else if let (Some(list), false) = (listed, huge) {
            let cut = list.len().saturating_sub(budget);
            (list.iter().take(budget).cloned().collect(), cut)
        } else if huge {
            let scan_until = walk.map_or_else(Instant::now, |w| w.scan_until);
            let read = self
                .huge_children(&node, child_clip.rect, coords, budget, !prune, query, scan_until)
                .await;
            node.summary = Some(read.summary);
            (not_loaded, searched, unsearched) = (read.not_loaded, read.searched, read.unsearched);
            (read.kids, read.cut)
        } else {
            let kids = match read_kids {
                Some(k) => k,
                None => self.children_of(&node.obj).await,
            };
            match kids {
                Ok(k) => {
                    let cut = k.len().saturating_sub(budget);
                    (k.into_iter().take(budget).collect(), cut)
                }
                Err(CallError::Gone(_)) => return Ok(None),
                Err(_) => {
                    let n = (count as usize).min(budget);
                    let k = self.children_at(&node.obj, 0..n as i32).await;
                    (k, count as usize - n)
                }
            }
        };
        Ok(Some(Fetched {
            node,
            children: kids,
            cut,
            child_clip,
            drop: None,
            not_loaded,
            searched,
            unsearched,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_pane_filling_its_parent_elsewhere_moves_onto_it() {
        let parent = Some(Rect::new(40, 55, 1000, 675));
        assert_eq!(
            root_pane_fix("root_pane", Rect::new(40, 30, 1000, 675), parent),
            (0, 25)
        );
        assert_eq!(
            root_pane_fix("root_pane", Rect::new(40, 55, 1000, 675), parent),
            (0, 0)
        );
        // Another size, another role, no parent: left alone.
        assert_eq!(
            root_pane_fix("root_pane", Rect::new(40, 30, 1000, 600), parent),
            (0, 0)
        );
        assert_eq!(
            root_pane_fix("panel", Rect::new(40, 30, 1000, 675), parent),
            (0, 0)
        );
        assert_eq!(
            root_pane_fix("root_pane", Rect::new(40, 30, 1000, 675), None),
            (0, 0)
        );
    }

    #[test]
    fn extents_are_classified() {
        let m = i32::MIN;
        assert_eq!(area_of(Some((1, 2, 3, 4))), Area::Known(Rect::new(1, 2, 3, 4)));
        assert_eq!(area_of(Some((5, 5, 0, 9))), Area::Empty);
        assert_eq!(area_of(Some((m, m, 70, 21))), Area::SizeOnly);
        assert_eq!(area_of(Some((m, m, 0, 0))), Area::Unknown);
        assert_eq!(area_of(Some((-1, -1, -1, -1))), Area::Unknown);
        assert_eq!(area_of(None), Area::Unknown);
    }
}
