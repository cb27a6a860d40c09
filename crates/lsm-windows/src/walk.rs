//! The walk of one window's UI Automation tree, level by level: one call per element fetches
//! all its children with their properties (a cache request), so the cost is one cross-process
//! call per element with children, never one per property. It stops at the budget, at
//! `max_elements` and at `max_depth`, skips hidden subtrees (counted), and says what it left
//! out. The tree is behind [`UiaTree`], so the walk's rules run in the Linux unit tests.

use crate::element::UiaProps;
use lsm_core::geometry::Rect;
use lsm_core::model::RawElement;
use std::collections::VecDeque;
use std::time::Instant;

/// Why reading part of the tree failed.
#[derive(Debug, Clone, PartialEq)]
pub enum TreeError {
    /// The element went away meanwhile (UIA_E_ELEMENTNOTAVAILABLE).
    Gone,
    /// The application did not answer within UI Automation's timeout.
    Timeout,
    Other(String),
}

/// A window's UI Automation tree, as the walk sees it.
pub trait UiaTree {
    type Node;
    /// The window's own element.
    fn root(&mut self) -> Result<(Self::Node, UiaProps), TreeError>;
    /// The element's children (control view) with their properties, in one call.
    fn children(&mut self, node: &Self::Node) -> Result<Vec<(Self::Node, UiaProps)>, TreeError>;
}

/// What to walk.
#[derive(Debug, Clone)]
pub struct WalkLimits {
    pub max_elements: usize,
    pub max_depth: u32,
    /// Walk hidden (off-screen) subtrees too.
    pub include_hidden: bool,
    pub deadline: Instant,
    /// The window's physical frame and DPI, for window-relative logical bounds.
    pub frame: Rect,
    pub dpi: u32,
}

/// The walk's result: the elements in document order (parents before children), each with
/// its live node, and what was left out.
pub struct Walked<N> {
    pub elements: Vec<RawElement>,
    pub nodes: Vec<N>,
    pub truncated_reason: Option<String>,
    /// What was skipped on purpose, for a note (hidden subtrees).
    pub skipped_note: Option<String>,
}

struct Slot<N> {
    node: N,
    element: RawElement,
    kids: Vec<usize>,
}

/// Walks the tree breadth-first, so a cut (budget, `max_elements`) keeps the upper levels.
pub fn walk<T: UiaTree>(tree: &mut T, limits: &WalkLimits) -> Result<Walked<T::Node>, TreeError> {
    let (root, props) = tree.root()?;
    let mut slots: Vec<Slot<T::Node>> = vec![Slot {
        element: props.to_raw(None, 0, limits.frame, limits.dpi),
        node: root,
        kids: Vec::new(),
    }];
    let mut to_open: VecDeque<usize> = VecDeque::from([0]);
    let (mut hidden, mut failed, mut not_opened, mut unread) = (0usize, 0usize, 0usize, 0usize);
    let mut reason: Option<String> = None;
    while let Some(idx) = to_open.pop_front() {
        // Depth counts what the model sees: the children of a container that observations
        // leave out stand where it stands (`lsm_core::states::child_depth`).
        let depth = slots[idx].element.depth;
        let folds = {
            let e = &slots[idx].element;
            lsm_core::states::folds_raw(&e.role, &e.name, &e.actions, e.value.as_deref(), &e.states)
        };
        if !lsm_core::states::keeps_children(depth, limits.max_depth, folds) {
            not_opened += 1;
            continue;
        }
        let kid_depth = lsm_core::states::child_depth(depth, folds);
        if Instant::now() >= limits.deadline {
            reason = Some(format!(
                "deadline reached after {} elements; narrow the request or raise the time limit",
                slots.len()
            ));
            break;
        }
        let children = match tree.children(&slots[idx].node) {
            Ok(c) => c,
            Err(TreeError::Gone) => continue,
            Err(TreeError::Timeout) => {
                reason = Some(format!(
                    "the application did not answer UI Automation in time after {} elements",
                    slots.len()
                ));
                break;
            }
            Err(TreeError::Other(_)) => {
                failed += 1;
                continue;
            }
        };
        for (node, props) in children {
            if props.offscreen && !limits.include_hidden {
                hidden += 1;
                continue;
            }
            if slots.len() >= limits.max_elements {
                unread += 1;
                continue;
            }
            let child = slots.len();
            slots.push(Slot {
                element: props.to_raw(Some(idx), kid_depth, limits.frame, limits.dpi),
                node,
                kids: Vec::new(),
            });
            slots[idx].kids.push(child);
            to_open.push_back(child);
        }
    }
    if reason.is_none() && unread > 0 {
        reason = Some(format!(
            "max_elements ({}) reached; {unread} more elements were not read",
            limits.max_elements
        ));
    }
    if reason.is_none() && failed > 0 {
        reason = Some(format!("{failed} elements did not answer and were left out"));
    }
    if reason.is_none() && not_opened > 0 {
        reason = Some(format!(
            "max_depth ({}) reached; {not_opened} elements at that depth were not looked into",
            limits.max_depth
        ));
    }
    let (elements, nodes) = preorder(slots);
    Ok(Walked {
        elements,
        nodes,
        truncated_reason: reason,
        skipped_note: (hidden > 0).then(|| format!("not walked, on purpose: {hidden} hidden subtree(s)")),
    })
}

/// The slots in document order, parents remapped to the new positions.
fn preorder<N>(slots: Vec<Slot<N>>) -> (Vec<RawElement>, Vec<N>) {
    let mut order = Vec::with_capacity(slots.len());
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(slots[i].kids.iter().rev());
    }
    let mut new_index = vec![0usize; slots.len()];
    for (pos, &old) in order.iter().enumerate() {
        new_index[old] = pos;
    }
    let mut taken: Vec<Option<Slot<N>>> = slots.into_iter().map(Some).collect();
    let mut elements = Vec::with_capacity(order.len());
    let mut nodes = Vec::with_capacity(order.len());
    for old in order {
        if let Some(slot) = taken[old].take() {
            let mut e = slot.element;
            e.parent = e.parent.map(|p| new_index[p]);
            elements.push(e);
            nodes.push(slot.node);
        }
    }
    (elements, nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::time::Duration;

    /// A tree of numbered elements; children by parent number.
    struct Fake {
        kids: HashMap<u32, Vec<u32>>,
        offscreen: Vec<u32>,
        failing: HashMap<u32, TreeError>,
        calls: usize,
    }

    fn props(n: u32, offscreen: bool) -> UiaProps {
        UiaProps {
            runtime_id: vec![42, n as i32],
            control_type: if n == 0 { 50032 } else { 50000 },
            name: format!("e{n}"),
            bounds: Some(Rect::new(n as i32, n as i32, 10, 10)),
            enabled: true,
            offscreen,
            ..UiaProps::default()
        }
    }

    impl UiaTree for Fake {
        type Node = u32;
        fn root(&mut self) -> Result<(u32, UiaProps), TreeError> {
            Ok((0, props(0, false)))
        }
        fn children(&mut self, node: &u32) -> Result<Vec<(u32, UiaProps)>, TreeError> {
            self.calls += 1;
            if let Some(e) = self.failing.get(node) {
                return Err(e.clone());
            }
            Ok(self
                .kids
                .get(node)
                .map(|k| {
                    k.iter()
                        .map(|&c| (c, props(c, self.offscreen.contains(&c))))
                        .collect()
                })
                .unwrap_or_default())
        }
    }

    fn fake(edges: &[(u32, &[u32])]) -> Fake {
        Fake {
            kids: edges.iter().map(|(p, k)| (*p, k.to_vec())).collect(),
            offscreen: Vec::new(),
            failing: HashMap::new(),
            calls: 0,
        }
    }

    fn limits() -> WalkLimits {
        WalkLimits {
            max_elements: 100,
            max_depth: 10,
            include_hidden: false,
            deadline: Instant::now() + Duration::from_secs(10),
            frame: Rect::new(0, 0, 500, 500),
            dpi: 96,
        }
    }

    fn names(w: &Walked<u32>) -> Vec<(String, Option<usize>)> {
        w.elements.iter().map(|e| (e.name.clone(), e.parent)).collect()
    }

    #[test]
    fn document_order_with_parents_and_one_call_per_element() {
        let mut t = fake(&[(0, &[1, 2]), (1, &[3, 4]), (2, &[5])]);
        let w = walk(&mut t, &limits()).expect("walk");
        let got = names(&w);
        let want: Vec<(String, Option<usize>)> = [
            ("e0", None),
            ("e1", Some(0)),
            ("e3", Some(1)),
            ("e4", Some(1)),
            ("e2", Some(0)),
            ("e5", Some(4)),
        ]
        .iter()
        .map(|(n, p)| (n.to_string(), *p))
        .collect();
        assert_eq!(got, want);
        assert_eq!(w.nodes, [0, 1, 3, 4, 2, 5]);
        assert_eq!(w.elements[2].depth, 2);
        assert_eq!(t.calls, 6);
        assert_eq!(w.truncated_reason, None);
    }

    #[test]
    fn hidden_subtrees_are_skipped_and_counted_unless_asked_for() {
        let mut t = fake(&[(0, &[1, 2]), (2, &[3])]);
        t.offscreen = vec![2];
        let w = walk(&mut t, &limits()).expect("walk");
        assert_eq!(w.nodes, [0, 1]);
        assert_eq!(
            w.skipped_note.as_deref(),
            Some("not walked, on purpose: 1 hidden subtree(s)")
        );
        assert_eq!(w.truncated_reason, None);
        let all = WalkLimits {
            include_hidden: true,
            ..limits()
        };
        let w = walk(&mut t, &all).expect("walk");
        assert_eq!(w.nodes, [0, 1, 2, 3]);
    }

    #[test]
    fn limits_keep_the_upper_levels_and_say_what_was_cut() {
        let mut t = fake(&[(0, &[1, 2]), (1, &[3, 4]), (2, &[5])]);
        let few = WalkLimits {
            max_elements: 4,
            ..limits()
        };
        let w = walk(&mut t, &few).expect("walk");
        assert_eq!(w.nodes, [0, 1, 3, 2]);
        assert_eq!(
            w.truncated_reason.as_deref(),
            Some("max_elements (4) reached; 2 more elements were not read")
        );
        let shallow = WalkLimits {
            max_depth: 1,
            ..limits()
        };
        let w = walk(&mut t, &shallow).expect("walk");
        assert_eq!(w.nodes, [0, 1, 2]);
        assert!(w
            .truncated_reason
            .as_deref()
            .unwrap_or("")
            .starts_with("max_depth (1) reached"));
        let late = WalkLimits {
            deadline: Instant::now(),
            ..limits()
        };
        let w = walk(&mut t, &late).expect("walk");
        assert_eq!(w.nodes, [0]);
        assert!(w
            .truncated_reason
            .as_deref()
            .unwrap_or("")
            .starts_with("deadline reached after 1"));
    }

    #[test]
    fn gone_elements_drop_out_failures_are_counted_and_a_hang_stops_the_walk() {
        let mut t = fake(&[(0, &[1, 2, 6]), (1, &[3]), (2, &[4]), (6, &[7])]);
        t.failing.insert(1, TreeError::Gone);
        t.failing.insert(2, TreeError::Other("E_FAIL".into()));
        let w = walk(&mut t, &limits()).expect("walk");
        assert_eq!(w.nodes, [0, 1, 2, 6, 7]);
        assert_eq!(
            w.truncated_reason.as_deref(),
            Some("1 elements did not answer and were left out")
        );
        t.failing.insert(6, TreeError::Timeout);
        let w = walk(&mut t, &limits()).expect("walk");
        assert!(
            w.truncated_reason
                .as_deref()
                .unwrap_or("")
                .contains("did not answer UI Automation in time"),
            "{:?}",
            w.truncated_reason
        );
    }
}
