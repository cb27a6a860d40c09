//! The tree walk: many objects in flight at once, roughly breadth first, renumbered into
//! depth-first pre-order at the end.
//!
//! Only what is on screen is read: hidden objects, objects without area and objects outside the
//! window or outside the scrolled area of their scroll pane / list are dropped with their subtrees
//! without reading them. A huge container (GTK 3 creates one accessible per tree view cell) is read
//! only around its visible area (see `list.rs`); its node keeps `child_count` and gets a `summary`.

use crate::atspi::fetch::{Clip, Drop, WalkCtx};
use crate::atspi::{Atspi, CallError, CoordKind, Flavor, ObjRef, RawNode};
use futures_util::stream::{FuturesUnordered, StreamExt};
use lsm_core::model::Query;
use lsm_core::GuiResult;
use std::collections::VecDeque;
use std::time::Instant;

/// Objects fetched at once during a walk. Each is up to ~6 concurrent calls; the application answers
/// them in order, so this mostly hides round-trip latency.
const WALK_CONCURRENCY: usize = 64;

/// Bounds of a walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    pub max_elements: usize,
    pub max_depth: u32,
    /// Skip hidden and off-screen subtrees (counted in the result).
    pub prune: bool,
    pub deadline: Instant,
    pub coords: CoordKind,
    /// What the caller looks for: off-screen objects that match it are kept, and huge lists are
    /// searched for it beyond their visible area.
    pub query: Option<Query>,
}

/// Why an object (with its subtree) or some children were not read, counted by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Not shown ("visible" unset, or "showing" unset where the toolkit keeps it right).
    pub hidden: usize,
    /// An area of zero size: not laid out (a hidden stack page).
    pub no_area: usize,
    /// Entirely outside the window.
    pub off_screen: usize,
    /// Outside the visible area of the scroll pane, list or table it scrolls in.
    pub scrolled_away: usize,
    /// Children of huge lists outside their visible area, not read (not created by the
    /// application until asked for).
    pub not_loaded: usize,
    /// Children not read because `max_depth` was reached.
    pub beyond_depth: usize,
    /// Objects not read because `max_elements` was reached.
    pub beyond_max: usize,
    /// Objects not read because the deadline passed.
    pub beyond_deadline: usize,
    /// Objects that failed to answer.
    pub failed: usize,
    /// Children of huge lists whose names could not be searched for the query in time.
    pub unsearched: usize,
    /// Children of huge lists outside their visible area searched by name for the query,
    /// not matching it, not read.
    pub searched: usize,
}

impl Skipped {
    pub fn add(&mut self, o: &Skipped) {
        self.hidden += o.hidden;
        self.no_area += o.no_area;
        self.off_screen += o.off_screen;
        self.scrolled_away += o.scrolled_away;
        self.not_loaded += o.not_loaded;
        self.beyond_depth += o.beyond_depth;
        self.beyond_max += o.beyond_max;
        self.beyond_deadline += o.beyond_deadline;
        self.failed += o.failed;
        self.unsearched += o.unsearched;
        self.searched += o.searched;
    }

    /// What was left out on purpose (not on screen), in words: `None` when nothing.
    pub fn on_purpose(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.hidden, "hidden subtree(s)"),
            (self.no_area, "subtree(s) with no area (not laid out)"),
            (self.off_screen, "subtree(s) outside the window"),
            (self.scrolled_away, "subtree(s) scrolled out of view"),
            (
                self.not_loaded,
                "list children outside the visible area (not loaded)",
            ),
            (
                self.searched,
                "list children outside the visible area searched by name for the query (no match)",
            ),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        (!parts.is_empty()).then(|| format!("not walked, on purpose: {}", parts.join(", ")))
    }

    /// What limits left out, in words: `None` when nothing.
    pub fn by_limits(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.beyond_deadline, "objects not read: time budget used up"),
            (self.beyond_max, "objects not read: max_elements reached"),
            (self.beyond_depth, "children not read: max_depth reached"),
            (self.failed, "objects did not answer"),
            (
                self.unsearched,
                "list children not searched for the query: time budget used up",
            ),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        (!parts.is_empty()).then(|| format!("left out: {}", parts.join("; ")))
    }
}

#[derive(Debug, Clone)]
pub struct WalkResult {
    /// Depth-first pre-order; `parent` indexes into this Vec.
    pub nodes: Vec<RawNode>,
    pub truncated: bool,
    pub truncated_reason: Option<String>,
    /// What was not read, by kind: on purpose (not on screen) or for the limits.
    pub skipped: Skipped,
}

/// One completed walk node waiting for the pre-order renumbering.
pub(crate) struct Slot {
    node: RawNode,
    parent: Option<usize>,
    order: usize,
    kids: Vec<usize>,
}

fn depth_summary(children: i32, max_depth: u32) -> String {
    format!("{children} children not read: max_depth ({max_depth}) reached")
}

/// Renumbers the completed slots into depth-first pre-order with parent indices.
fn preorder(mut slots: Vec<Slot>, root: usize) -> Vec<RawNode> {
    let orders: Vec<usize> = slots.iter().map(|s| s.order).collect();
    for s in slots.iter_mut() {
        s.kids
            .sort_by_key(|k| orders.get(*k).copied().unwrap_or(usize::MAX));
    }
    let mut taken: Vec<Option<Slot>> = slots.into_iter().map(Some).collect();
    let mut out: Vec<RawNode> = Vec::with_capacity(taken.len());
    // (slot, new parent index)
    let mut stack: Vec<(usize, Option<usize>)> = vec![(root, None)];
    while let Some((si, parent)) = stack.pop() {
        let Some(slot) = taken.get_mut(si).and_then(Option::take) else {
            continue;
        };
        let idx = out.len();
        let mut node = slot.node;
        node.parent = parent;
        debug_assert!(slot.parent.is_some() == parent.is_some());
        out.push(node);
        for k in slot.kids.into_iter().rev() {
            stack.push((k, Some(idx)));
        }
    }
    out
}

impl Atspi {
    /// Walks the subtree under `root` (included, depth 0), depth-first pre-order in the result.
    /// Objects are fetched many at a time, roughly breadth first, so a cut by `max_elements` or
    /// the deadline keeps the upper levels. Only what is on screen is read: hidden objects
    /// ("visible" unset; "showing" unset where the toolkit keeps it right), objects with no area,
    /// objects entirely outside the root's extents or outside the area of the scroll pane or list
    /// they scroll in are dropped with their subtrees. A huge container is read around its
    /// visible area only (see `RawNode::summary`).
    ///
    /// `truncated` is set exactly when something the walk would have reported was not read: the
    /// deadline passed, `max_elements` or `max_depth` stopped it, or objects failed to answer.
    /// What is skipped on purpose (hidden, off-screen, outside a list's visible window) is not a
    /// truncation.
    pub async fn walk(&self, root: &ObjRef, opts: &WalkOptions) -> GuiResult<WalkResult> {
        let (started, calls) = (Instant::now(), self.calls_made());
        let deadline = tokio::time::Instant::from_std(opts.deadline);
        let max = opts.max_elements;
        let cut = |why: String| WalkResult {
            nodes: Vec::new(),
            truncated: true,
            truncated_reason: Some(why),
            skipped: Skipped::default(),
        };
        if max == 0 {
            return Ok(cut("max_elements is 0".into()));
        }
        let setup = async { tokio::join!(self.toolkit_of(&root.bus), self.ensure_peer(&root.bus)).0 };
        let (toolkit, version) = match tokio::time::timeout_at(deadline, setup).await {
            Ok(t) => t,
            Err(_) => return Ok(cut("deadline reached before the first element was read".into())),
        };
        let flavor = Flavor::of(&toolkit, &version);
        tracing::debug!("walk of {root}: set up in {:?}", started.elapsed());
        let coords = opts.coords;
        // Depth counts what the model sees (`lsm_core::states::child_depth`): the children of a
        // node at the last level are asked for too, and kept only if the node is folded away.
        let want = |depth: u32, budget: usize| {
            lsm_core::states::may_read_children(depth, opts.max_depth).then_some(budget.max(1))
        };

        // The root first (never pruned), with the application's whole cache in parallel.
        let first = async {
            let cache = async {
                // The cache covers the whole application (5-25 ms for the widget factories): worth
                // it for a real walk, not for a few elements, and never more than half the time left.
                let left = opts.deadline.saturating_duration_since(Instant::now());
                if flavor.cache && max >= 64 {
                    self.cache_items(&root.bus, self.call_timeout.min(left / 2), flavor)
                        .await
                } else {
                    None
                }
            };
            let top = self.fetch(
                root.clone(),
                coords,
                flavor,
                None,
                Clip::default(),
                false,
                want(0, max),
            );
            // The root's calls go out first: the application answers them before the cache.
            let (top, cache) = tokio::join!(top, cache);
            (cache, top)
        };
        let (pre, top) = match tokio::time::timeout_at(deadline, first).await {
            Ok(r) => r,
            Err(_) => return Ok(cut("deadline reached before the first element was read".into())),
        };
        let top = match top {
            Ok(Some(f)) => f,
            Ok(None) => return Err(CallError::Gone("defunct".into()).into_gui(root)),
            Err(e) => return Err(e.into_gui(root)),
        };
        tracing::debug!("walk of {root}: root read in {:?}", started.elapsed());
        let left = opts.deadline.saturating_duration_since(Instant::now());
        let ctx = WalkCtx {
            pre,
            // A window that is not shown itself (minimized) shows nothing: fall back to geometry.
            showing: flavor.showing && top.node.has_state("showing"),
            query: opts.query.clone(),
            scan_until: Instant::now() + left * 3 / 5,
        };
        let ctx = &ctx;
        let top_clip = Clip {
            rect: top.child_clip.rect.or(top.node.extents),
            ..top.child_clip
        };

        let mut slots: Vec<Slot> = Vec::new();
        // (object, parent slot, index among the parent's children, depth, clip)
        let mut pending: VecDeque<(ObjRef, usize, usize, u32, Clip)> = VecDeque::new();
        let mut reason: Option<String> = None;
        let mut skipped = Skipped::default();
        if top.node.child_count > 0 && opts.max_depth == 0 {
            skipped.beyond_depth += top.node.child_count as usize;
        }
        skipped.not_loaded += top.not_loaded;
        skipped.searched += top.searched;
        skipped.unsearched += top.unsearched;
        let mut budget_cut = top.cut;
        for (i, kid) in top.children.into_iter().enumerate() {
            pending.push_back((kid, 0, i, 1, top_clip));
        }
        let mut top_node = top.node;
        if skipped.beyond_depth > 0 {
            top_node.summary = Some(depth_summary(top_node.child_count, opts.max_depth));
        }
        slots.push(Slot {
            node: top_node,
            parent: None,
            order: 0,
            kids: Vec::new(),
        });

        // Where max_depth cut (the first few objects whose children were not read).
        let mut depth_cut_at: Vec<String> = Vec::new();
        let mut in_flight = FuturesUnordered::new();
        loop {
            while in_flight.len() < WALK_CONCURRENCY && slots.len() + in_flight.len() < max {
                let Some((obj, parent, order, depth, clip)) = pending.pop_front() else {
                    break;
                };
                // What no object read or queued holds, and at least half of what is still unread:
                // a spreadsheet's visible cells, reached while many toolbar buttons are queued,
                // get their share whatever the timing (what is then cut is reported).
                let unread = max.saturating_sub(slots.len() + in_flight.len());
                let budget = unread.saturating_sub(pending.len()).max(unread / 2);
                let fut = self.fetch(
                    obj.clone(),
                    coords,
                    flavor,
                    Some(ctx),
                    clip,
                    opts.prune,
                    want(depth, budget),
                );
                in_flight.push(async move { (obj, parent, order, depth, fut.await) });
            }
            if in_flight.is_empty() {
                break;
            }
            let next = tokio::select! {
                biased;
                n = in_flight.next() => n,
                _ = tokio::time::sleep_until(deadline) => {
                    skipped.beyond_deadline += in_flight.len() + pending.len();
                    pending.clear();
                    reason = Some(format!(
                        "deadline reached after {} elements; narrow the request or raise the time limit",
                        slots.len()
                    ));
                    break;
                }
            };
            let Some((obj, parent, order, depth, res)) = next else {
                break;
            };
            let fetched = match res {
                Ok(Some(f)) => match f.drop {
                    None => f,
                    Some(why) => {
                        match why {
                            Drop::Hidden => skipped.hidden += 1,
                            Drop::NoArea => skipped.no_area += 1,
                            Drop::OffScreen => skipped.off_screen += 1,
                            Drop::ScrolledAway => skipped.scrolled_away += 1,
                        }
                        continue;
                    }
                },
                // Gone meanwhile.
                Ok(None) | Err(CallError::Gone(_)) => continue,
                Err(e) => {
                    tracing::debug!("walk: skipping {obj}: {e:?}");
                    skipped.failed += 1;
                    continue;
                }
            };
            let idx = slots.len();
            let mut node = fetched.node;
            node.depth = depth;
            let folds = lsm_core::states::folds_raw(
                &node.role,
                &node.name,
                &node.actions,
                node.value.as_deref(),
                &node.states,
            );
            let mut children = fetched.children;
            if !lsm_core::states::keeps_children(depth, opts.max_depth, folds) && node.child_count > 0 {
                skipped.beyond_depth += node.child_count as usize;
                if depth_cut_at.len() < 3 {
                    depth_cut_at.push(format!("{} {:?}", node.role, node.name));
                }
                node.summary = Some(depth_summary(node.child_count, opts.max_depth));
                children.clear();
            }
            budget_cut += fetched.cut;
            skipped.not_loaded += fetched.not_loaded;
            skipped.searched += fetched.searched;
            skipped.unsearched += fetched.unsearched;
            let kid_depth = lsm_core::states::child_depth(depth, folds);
            for (i, kid) in children.into_iter().enumerate() {
                pending.push_back((kid, idx, i, kid_depth, fetched.child_clip));
            }
            slots.push(Slot {
                node,
                parent: Some(parent),
                order,
                kids: Vec::new(),
            });
            if let Some(ps) = slots.get_mut(parent) {
                ps.kids.push(idx);
            }
        }

        skipped.beyond_max += pending.len() + budget_cut;
        let unread = skipped.beyond_max;
        if reason.is_none() && unread > 0 {
            reason = Some(format!(
                "max_elements ({max}) reached; {unread} more objects were not read"
            ));
        }
        if reason.is_none() && skipped.failed > 0 {
            reason = Some(format!(
                "{} objects did not answer and were left out",
                skipped.failed
            ));
        }
        if reason.is_none() && skipped.beyond_depth > 0 {
            reason = Some(format!(
                "max_depth ({}) reached; {} children of the deepest objects were not read (below {}{}): \
                 ask again with a larger max_depth, or observe with a query",
                opts.max_depth,
                skipped.beyond_depth,
                depth_cut_at.join(", "),
                if depth_cut_at.len() == 3 { ", ..." } else { "" }
            ));
        }
        if reason.is_none() && skipped.unsearched > 0 {
            reason = Some(format!(
                "time budget used up while searching lists for the query: {} list children were not searched",
                skipped.unsearched
            ));
        }
        let nodes = preorder(slots, 0);
        tracing::debug!(
            "walk of {root}: {} nodes, {} calls, {:?}{}",
            nodes.len(),
            self.calls_made().saturating_sub(calls),
            started.elapsed(),
            reason
                .as_deref()
                .map(|r| format!("; truncated: {r}"))
                .unwrap_or_default()
        );
        Ok(WalkResult {
            nodes,
            truncated: reason.is_some(),
            truncated_reason: reason,
            skipped,
        })
    }

    /// Re-reads one object, its extents corrected by `shift` (see `RawNode::shift`). `Ok(None)`
    /// when it is gone or defunct.
    pub async fn node(
        &self,
        obj: &ObjRef,
        coords: CoordKind,
        shift: (i32, i32),
    ) -> GuiResult<Option<RawNode>> {
        let (toolkit, version) = self.toolkit_of(&obj.bus).await;
        match self
            .fetch(
                obj.clone(),
                coords,
                Flavor::of(&toolkit, &version),
                None,
                Clip::shifted(shift),
                false,
                None,
            )
            .await
        {
            Ok(Some(f)) => Ok(Some(f.node)),
            Ok(None) | Err(CallError::Gone(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preorder_renumbers() {
        let mk = |name: &str| RawNode {
            obj: ObjRef::new(":1.1", format!("/{name}")),
            parent: None,
            depth: 0,
            role: "panel".into(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: Vec::new(),
            actions: Vec::new(),
            extents: None,
            shift: (0, 0),
            interfaces: Vec::new(),
            child_count: 0,
            summary: None,
        };
        // Completed out of order: root, b (order 1), a (order 0), a1.
        let slots = vec![
            Slot {
                node: mk("root"),
                parent: None,
                order: 0,
                kids: vec![1, 2],
            },
            Slot {
                node: mk("b"),
                parent: Some(0),
                order: 1,
                kids: vec![],
            },
            Slot {
                node: mk("a"),
                parent: Some(0),
                order: 0,
                kids: vec![3],
            },
            Slot {
                node: mk("a1"),
                parent: Some(2),
                order: 0,
                kids: vec![],
            },
        ];
        let out = preorder(slots, 0);
        let names: Vec<&str> = out.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, vec!["root", "a", "a1", "b"]);
        let parents: Vec<Option<usize>> = out.iter().map(|n| n.parent).collect();
        assert_eq!(parents, vec![None, Some(0), Some(1), Some(0)]);
    }
}
