//! The walk of one window's Accessibility tree, level by level. On macOS each element's
//! attributes come in one call (`AXUIElementCopyMultipleAttributeValues` with
//! [`BULK_ATTRIBUTES`]) and its children in another (`AXUIElementCopyAttributeValues` on
//! `AXChildren` with a range), so the cost is two messages to the application per element (a
//! third for an element whose role shows a value). It
//! stops at `max_elements`, at `max_depth` and at the time budget, and says what it left out.
//! A hung application costs one messaging timeout, never one per element: the first timeout
//! ends the walk. The tree is behind [`AxTree`], so these rules run in the Linux unit tests.

use lsm_core::model::ObserveRequest;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Why reading part of the tree failed: the Accessibility failure itself
/// ([`crate::ax_errors::AxFailure`]), one definition for the walk and every other call.
pub use crate::ax_errors::AxFailure as TreeError;

/// The attributes read for every element, in one message. AXValue is not among them: it is
/// read on its own once the role is known, because a password field's must never be read.
#[rustfmt::skip]
pub const BULK_ATTRIBUTES: &[&str] = &[
    "AXRole", "AXSubrole", "AXRoleDescription", "AXTitle", "AXDescription",
    "AXHelp", "AXIdentifier", "AXPosition", "AXSize",
    "AXEnabled", "AXFocused", "AXSelected", "AXExpanded",
];

/// What the walk reads of an element: the values of [`BULK_ATTRIBUTES`] (None when the element
/// lacks one), its value where it may be read, its action names and how many children it has.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AxAttributes {
    pub role: String,
    pub subrole: Option<String>,
    pub role_description: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub help: Option<String>,
    /// AXValue as text (numbers and booleans formatted by the reader).
    pub value: Option<String>,
    pub identifier: Option<String>,
    /// Global top-left position and size, in points.
    pub position: Option<(f64, f64)>,
    pub size: Option<(f64, f64)>,
    pub enabled: Option<bool>,
    pub focused: Option<bool>,
    pub selected: Option<bool>,
    pub expanded: Option<bool>,
    /// The actions lsm offers for it (leave out AXScrollToVisible and the like, which every
    /// element has and which must not keep a bare group from folding).
    pub actions: Vec<String>,
    /// `AXUIElementGetAttributeValueCount` of AXChildren, when read: lets the walk tell a leaf
    /// from an element whose children `max_depth` cut.
    pub child_count: Option<usize>,
}

/// Whether observations leave the element out (an unnamed AXGroup with no value or actions,
/// neither focused nor selected): its children then stand at its depth, as in lsm-core's
/// `states::child_depth`, so layout nesting does not use up `max_depth`.
pub fn folds(a: &AxAttributes) -> bool {
    let empty = |s: &Option<String>| s.as_deref().is_none_or(str::is_empty);
    a.role == "AXGroup"
        && empty(&a.title)
        && empty(&a.description)
        && empty(&a.value)
        && a.actions.is_empty()
        && a.focused != Some(true)
        && a.selected != Some(true)
}

/// Some children of an element and how many it has.
#[derive(Debug, Clone, PartialEq)]
pub struct Children<N> {
    pub nodes: Vec<N>,
    pub total: usize,
}

/// A window's Accessibility tree, as the walk sees it.
pub trait AxTree {
    type Node;
    /// The window's element.
    fn root(&mut self) -> Result<Self::Node, TreeError>;
    /// The element's attributes, in one message.
    fn attributes(&mut self, node: &Self::Node) -> Result<AxAttributes, TreeError>;
    /// The element's first `max` children (none when `max` is 0) and how many it has.
    fn children(&mut self, node: &Self::Node, max: usize) -> Result<Children<Self::Node>, TreeError>;
}

/// What to walk.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkLimits {
    pub max_elements: usize,
    pub max_depth: u32,
    /// Wall-clock budget of the whole walk.
    pub budget: Duration,
}

impl WalkLimits {
    pub fn from_request(req: &ObserveRequest) -> Self {
        Self {
            max_elements: req.max_elements,
            max_depth: req.max_depth,
            budget: req.walk_budget,
        }
    }
}

/// The shortest messaging timeout the walk sets (`AXUIElementSetMessagingTimeout`): shorter,
/// a busy but live application would look hung.
pub const MIN_MESSAGING_TIMEOUT: Duration = Duration::from_millis(100);

/// The messaging timeout to set on the application before a walk with `remaining` budget
/// left: AX's default is about 6 s per message, so a hung application would outlast the
/// budget by far; with this the one timeout the walk allows ends within it.
pub fn messaging_timeout(remaining: Duration) -> Duration {
    remaining.max(MIN_MESSAGING_TIMEOUT)
}

/// One element read. It maps onto lsm-core's `RawElement`: `parent` and `depth` as they are
/// (`depth` already counts folded groups as lsm-core does), role and states from the
/// attributes through `roles`, bounds from `position` and `size` through `geometry`, and an
/// element with `unread_children` gets a summary saying so.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkNode<N> {
    pub node: N,
    pub attrs: AxAttributes,
    /// Index in [`Walked::nodes`]; None for the window.
    pub parent: Option<usize>,
    pub depth: u32,
    /// Children not read below it (`max_depth`, or its share of `max_elements`).
    pub unread_children: usize,
}

/// The walk's result: elements in document order (parents before children), and what was
/// left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Walked<N> {
    pub nodes: Vec<WalkNode<N>>,
    pub truncated_reason: Option<String>,
    /// The application stopped answering: the walk ended at the first timeout.
    pub not_responding: bool,
}

impl<N> Walked<N> {
    pub fn truncated(&self) -> bool {
        self.truncated_reason.is_some()
    }
}

struct Slot<N> {
    node: WalkNode<N>,
    /// Children read, in the order read (the parent's own order).
    kids: Vec<usize>,
    /// Children listed, not read yet, with their depth.
    queue: VecDeque<(N, u32)>,
    /// Children whose subtrees still hold listed elements not read.
    busy: Vec<usize>,
    /// Elements read in its subtree, itself included.
    read: usize,
}

impl<N> Slot<N> {
    fn new(node: WalkNode<N>) -> Self {
        Self {
            node,
            kids: Vec::new(),
            queue: VecDeque::new(),
            busy: Vec::new(),
            read: 0,
        }
    }

    fn has_work(&self) -> bool {
        !self.queue.is_empty() || !self.busy.is_empty()
    }
}

/// The order elements are read in: each element's listed children before anything below them,
/// and below that, the subtrees of its children take turns, the one with the fewest elements
/// read so far first (the first of equals in document order). A list of thousands of rows
/// therefore gets one row per turn while a panel after it reads its own elements: within
/// `max_elements` and the time budget, the panel is read as far as the list, not starved by it.
struct Schedule<N> {
    slots: Vec<Slot<N>>,
    /// Listed elements not read yet, in all queues.
    pending: usize,
}

impl<N> Schedule<N> {
    /// Adds a read element under `parent` (None: the window) and counts it in its ancestors.
    fn add(&mut self, node: WalkNode<N>) -> usize {
        let idx = self.slots.len();
        let parent = node.parent;
        self.slots.push(Slot::new(node));
        if let Some(p) = parent {
            self.slots[p].kids.push(idx);
        }
        let mut at = Some(idx);
        while let Some(i) = at {
            self.slots[i].read += 1;
            at = self.slots[i].node.parent;
        }
        idx
    }

    /// Queues listed children of `idx` and marks the way to it as having work.
    fn queue(&mut self, idx: usize, kids: impl IntoIterator<Item = N>, depth: u32) {
        let before = self.slots[idx].queue.len();
        self.slots[idx].queue.extend(kids.into_iter().map(|n| (n, depth)));
        self.pending += self.slots[idx].queue.len() - before;
        let mut i = idx;
        while let Some(p) = self.slots[i].node.parent {
            if !self.slots[i].has_work() || self.slots[p].busy.contains(&i) {
                break;
            }
            self.slots[p].busy.push(i);
            i = p;
        }
    }

    /// The next listed element to read, with its parent and depth, by the order above.
    fn next(&mut self) -> Option<(N, usize, u32)> {
        let mut i = 0;
        let picked = loop {
            let slot = &mut self.slots[i];
            if let Some((n, depth)) = slot.queue.pop_front() {
                break (n, i, depth);
            }
            let slots = &self.slots;
            let kid = slots[i].busy.iter().copied().min_by_key(|&k| slots[k].read)?;
            i = kid;
        };
        self.pending -= 1;
        // Parents without work left leave their own parents' turns.
        let mut at = picked.1;
        while !self.slots[at].has_work() {
            let Some(p) = self.slots[at].node.parent else {
                break;
            };
            self.slots[p].busy.retain(|&k| k != at);
            at = p;
        }
        Some(picked)
    }
}

/// Why the walk ended early.
enum Stop {
    Hung,
    Budget,
}

/// Walks with the wall clock.
pub fn walk_timed<T: AxTree>(tree: &mut T, limits: &WalkLimits) -> Result<Walked<T::Node>, TreeError> {
    let start = Instant::now();
    walk(tree, limits, || start.elapsed())
}

/// Walks the tree in the order of [`Schedule`]: an element's children before their children,
/// so a cut keeps the upper levels, and sibling subtrees in turns, so a huge list does not
/// starve a later panel of the same window. `elapsed` tells how long the walk has taken
/// (injected so tests are deterministic). A failure to read the window itself is the error;
/// below it, what fails is left out and said.
///
/// Each element's children are listed up to a share of the element budget: what the elements
/// already listed but not read do not hold, and at least half of what is unread, so a huge list
/// met early takes its part and one met late still gets half (what is cut is reported), as
/// the Linux walk shares it.
pub fn walk<T: AxTree>(
    tree: &mut T,
    limits: &WalkLimits,
    mut elapsed: impl FnMut() -> Duration,
) -> Result<Walked<T::Node>, TreeError> {
    let max = limits.max_elements.max(1);
    let root = tree.root()?;
    let attrs = tree.attributes(&root)?;
    let mut plan = Schedule {
        slots: Vec::new(),
        pending: 0,
    };
    plan.add(WalkNode {
        node: root,
        attrs,
        parent: None,
        depth: 0,
        unread_children: 0,
    });
    let mut to_open = Some(0usize);
    let mut stop = None;
    let (mut failed, mut depth_cut, mut listed_cut, mut not_read_in_time) = (0, 0, 0, 0);
    loop {
        if let Some(idx) = to_open.take() {
            let slot = &mut plan.slots[idx].node;
            let folded = folds(&slot.attrs);
            let count = slot.attrs.child_count;
            if !lsm_core::states::keeps_children(slot.depth, limits.max_depth, folded) {
                if count != Some(0) {
                    depth_cut += 1;
                    slot.unread_children = count.unwrap_or(0);
                }
            } else if count != Some(0) {
                let unread = max.saturating_sub(plan.slots.len());
                let share = unread.saturating_sub(plan.pending).max(unread / 2);
                if elapsed() >= limits.budget {
                    stop = Some(Stop::Budget);
                    break;
                }
                match tree.children(&plan.slots[idx].node.node, share) {
                    Ok(c) => {
                        let kid_depth = lsm_core::states::child_depth(plan.slots[idx].node.depth, folded);
                        let listed = c.nodes.len().min(share);
                        let cut = c.total.max(c.nodes.len()) - listed;
                        listed_cut += cut;
                        plan.slots[idx].node.unread_children = cut;
                        plan.queue(idx, c.nodes.into_iter().take(share), kid_depth);
                    }
                    // Gone meanwhile, or an element that has no children: what was read stays.
                    Err(TreeError::Gone | TreeError::Unsupported) => {}
                    Err(TreeError::Timeout) => {
                        stop = Some(Stop::Hung);
                        break;
                    }
                    Err(TreeError::NotTrusted | TreeError::Other(_)) => failed += 1,
                }
            }
        }
        if plan.slots.len() >= max {
            break;
        }
        let Some((node, parent, depth)) = plan.next() else {
            break;
        };
        if elapsed() >= limits.budget {
            not_read_in_time = plan.pending + 1;
            plan.pending = 0;
            stop = Some(Stop::Budget);
            break;
        }
        match tree.attributes(&node) {
            Ok(attrs) => {
                to_open = Some(plan.add(WalkNode {
                    node,
                    attrs,
                    parent: Some(parent),
                    depth,
                    unread_children: 0,
                }));
            }
            // A child that went away is simply not there.
            Err(TreeError::Gone) => {}
            Err(TreeError::Timeout) => {
                stop = Some(Stop::Hung);
                break;
            }
            Err(TreeError::Unsupported | TreeError::NotTrusted | TreeError::Other(_)) => failed += 1,
        }
    }
    let read = plan.slots.len();
    let reason = match stop {
        Some(Stop::Hung) => Some(format!(
            "the application did not answer Accessibility in time after {read} elements; \
             it was not asked again, so the rest of the window was not read"
        )),
        Some(Stop::Budget) => Some(format!(
            "time budget ({} ms) used up after {read} elements{}; narrow the request or raise \
             the time limit",
            limits.budget.as_millis(),
            if not_read_in_time > 0 {
                format!(", {not_read_in_time} listed elements not read")
            } else {
                String::new()
            }
        )),
        None => {
            let unread = plan.pending + listed_cut;
            if unread > 0 {
                Some(format!(
                    "max_elements ({max}) reached; {unread} more elements were not read"
                ))
            } else if failed > 0 {
                Some(format!("{failed} elements did not answer and were left out"))
            } else if depth_cut > 0 {
                Some(format!(
                    "max_depth ({}) reached; the children of {depth_cut} elements were not read",
                    limits.max_depth
                ))
            } else {
                None
            }
        }
    };
    Ok(Walked {
        nodes: preorder(plan.slots),
        truncated_reason: reason,
        not_responding: matches!(stop, Some(Stop::Hung)),
    })
}

/// The slots in document order, parents remapped to the new positions.
fn preorder<N>(slots: Vec<Slot<N>>) -> Vec<WalkNode<N>> {
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
    let mut taken: Vec<Option<WalkNode<N>>> = slots.into_iter().map(|s| Some(s.node)).collect();
    order
        .into_iter()
        .filter_map(|old| {
            let mut n = taken[old].take()?;
            n.parent = n.parent.map(|p| new_index[p]);
            Some(n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::HashMap;
    use std::rc::Rc;

    const TICK: Duration = Duration::from_millis(10);

    /// Numbered elements, children by parent number; every call takes one tick of the clock.
    struct Fake {
        kids: HashMap<u32, Vec<u32>>,
        groups: Vec<u32>,
        attr_err: HashMap<u32, TreeError>,
        kid_err: HashMap<u32, TreeError>,
        clock: Rc<Cell<Duration>>,
        calls: usize,
    }

    fn fake(edges: &[(u32, Vec<u32>)]) -> Fake {
        Fake {
            kids: edges.iter().cloned().collect(),
            groups: Vec::new(),
            attr_err: HashMap::new(),
            kid_err: HashMap::new(),
            clock: Rc::new(Cell::new(Duration::ZERO)),
            calls: 0,
        }
    }

    impl Fake {
        fn tick(&mut self) {
            self.calls += 1;
            self.clock.set(self.clock.get() + TICK);
        }
    }

    impl AxTree for Fake {
        type Node = u32;
        fn root(&mut self) -> Result<u32, TreeError> {
            Ok(0)
        }
        fn attributes(&mut self, n: &u32) -> Result<AxAttributes, TreeError> {
            self.tick();
            if let Some(e) = self.attr_err.get(n) {
                return Err(*e);
            }
            let group = self.groups.contains(n);
            Ok(AxAttributes {
                role: if group { "AXGroup" } else { "AXButton" }.into(),
                title: (!group).then(|| format!("e{n}")),
                child_count: Some(self.kids.get(n).map_or(0, Vec::len)),
                ..AxAttributes::default()
            })
        }
        fn children(&mut self, n: &u32, max: usize) -> Result<Children<u32>, TreeError> {
            self.tick();
            if let Some(e) = self.kid_err.get(n) {
                return Err(*e);
            }
            let all = self.kids.get(n).cloned().unwrap_or_default();
            Ok(Children {
                total: all.len(),
                nodes: all.into_iter().take(max).collect(),
            })
        }
    }

    fn with(max_elements: usize, max_depth: u32, budget_ms: u64) -> WalkLimits {
        let budget = Duration::from_millis(budget_ms);
        WalkLimits {
            max_elements,
            max_depth,
            budget,
        }
    }

    fn limits() -> WalkLimits {
        with(100, 10, 10_000)
    }

    fn run(t: &mut Fake, l: &WalkLimits) -> Walked<u32> {
        let clock = t.clock.clone();
        walk(t, l, move || clock.get()).expect("walk")
    }

    /// (node, parent index, depth) of each element.
    fn shape(w: &Walked<u32>) -> Vec<(u32, Option<usize>, u32)> {
        w.nodes.iter().map(|n| (n.node, n.parent, n.depth)).collect()
    }

    fn ids(w: &Walked<u32>) -> Vec<u32> {
        w.nodes.iter().map(|n| n.node).collect()
    }

    #[test]
    fn a_normal_tree_in_document_order_with_parents_and_depths() {
        let mut t = fake(&[(0, vec![1, 2]), (1, vec![3, 4]), (2, vec![5])]);
        let w = run(&mut t, &limits());
        #[rustfmt::skip]
        assert_eq!(shape(&w), [
            (0, None, 0), (1, Some(0), 1), (3, Some(1), 2),
            (4, Some(1), 2), (2, Some(0), 1), (5, Some(4), 2),
        ]);
        assert_eq!(w.nodes[1].attrs.title.as_deref(), Some("e1"));
        // Attributes of the six elements, children of the three that have some.
        assert_eq!(t.calls, 6 + 3);
        assert_eq!(w.truncated_reason, None);
        assert!(!w.not_responding);
    }

    #[test]
    fn the_element_limit_keeps_upper_levels_and_shares_the_budget() {
        // A huge list first, then buttons and a panel whose children come later.
        let list: Vec<u32> = (100..1100).collect();
        let mut t = fake(&[(0, vec![1, 2, 3]), (1, list), (3, vec![4, 5])]);
        let few = with(20, 10, 10_000);
        let w = run(&mut t, &few);
        assert_eq!(w.nodes.len(), 20);
        // The list's children were listed up to its share (18 unread, its 2 siblings queued),
        // and only those were asked for; what it did not list is on it.
        let list_node = &w.nodes[1];
        assert_eq!((list_node.node, list_node.unread_children), (1, 1000 - 16));
        // The panel, met late, had its children listed (its share is half of what was unread)
        // and read in turn with the list's rows, which took the rest.
        assert!(ids(&w).contains(&3));
        assert!(ids(&w).contains(&4) && ids(&w).contains(&5));
        assert_eq!(w.nodes.iter().filter(|n| n.node >= 100).count(), 14);
        assert_eq!(
            w.truncated_reason.as_deref(),
            Some("max_elements (20) reached; 986 more elements were not read")
        );
        let tiny = with(1, 10, 10_000);
        let w = run(&mut t, &tiny);
        assert_eq!(ids(&w), [0]);
        assert_eq!(w.nodes[0].unread_children, 3);
        assert!(w.truncated());
    }

    /// A window holding a list of thousands of rows (each with a cell) and, after it, a panel
    /// with a nested group: (list, panel ids) in it.
    fn list_then_panel() -> Fake {
        let rows: Vec<u32> = (1000..4000).collect();
        let mut edges: Vec<(u32, Vec<u32>)> = rows.iter().map(|&r| (r, vec![r + 10_000])).collect();
        edges.extend([
            (0, vec![1, 2]),
            (1, rows),
            (2, vec![3, 4]),
            (3, vec![5, 6]),
            (4, vec![7]),
        ]);
        fake(&edges)
    }

    #[test]
    fn a_huge_list_does_not_starve_a_later_panel() {
        let panel = [2, 3, 4, 5, 6, 7];
        // Cut by max_elements: the whole panel is read, the list's rows take the rest.
        let mut t = list_then_panel();
        let w = run(&mut t, &with(300, 10, 1_000_000));
        assert_eq!(w.nodes.len(), 300);
        let read = ids(&w);
        assert!(panel.iter().all(|p| read.contains(p)), "panel read: {read:?}");
        // The list's rows come before their cells (a row's cell waits for the rows listed).
        let rows = read.iter().filter(|&&n| (1000..4000).contains(&n)).count();
        let cells = read.iter().filter(|&&n| n >= 10_000).count();
        assert_eq!((rows, cells), (300 - 2 - panel.len(), 0));
        assert!(w.truncated());
        // Document order holds: the panel after the list and its rows.
        let at = |n: u32| read.iter().position(|&x| x == n).unwrap_or(usize::MAX);
        assert!(at(1) < at(1000) && at(1000) < at(2) && at(2) < at(3) && at(5) < at(4));
        // Cut by the time budget (each call one tick: 40 calls), with elements to spare: the
        // panel is read all the same.
        let mut t = list_then_panel();
        let w = run(&mut t, &with(1000, 10, 400));
        let read = ids(&w);
        assert!(panel.iter().all(|p| read.contains(p)), "panel read: {read:?}");
        assert!(w
            .truncated_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("time budget (400 ms) used up")));
    }

    #[test]
    fn subtrees_take_turns_by_what_they_had_read() {
        // Three panels of 4 buttons each, 9 elements allowed: the window, the 3 panels, then
        // turns among them (the first of equals first): 2 + 2 + 1 buttons.
        let mut t = fake(&[
            (0, vec![1, 2, 3]),
            (1, vec![10, 11, 12, 13]),
            (2, vec![20, 21, 22, 23]),
            (3, vec![30, 31, 32, 33]),
        ]);
        let w = run(&mut t, &with(9, 10, 1_000_000));
        assert_eq!(ids(&w), [0, 1, 10, 11, 2, 20, 21, 3, 30]);
    }

    #[test]
    fn the_depth_limit_does_not_count_folded_groups() {
        // window > group > group > button 3 > button 4 > button 5.
        let edges = [0, 1, 2, 3, 4].map(|n| (n, vec![n + 1]));
        let mut t = fake(&edges);
        t.groups = vec![1, 2];
        let shallow = with(100, 2, 10_000);
        let w = run(&mut t, &shallow);
        #[rustfmt::skip]
        assert_eq!(shape(&w), [
            (0, None, 0), (1, Some(0), 1), (2, Some(1), 1),
            (3, Some(2), 1), (4, Some(3), 2),
        ]);
        assert_eq!(w.nodes[4].unread_children, 1);
        assert_eq!(
            w.truncated_reason.as_deref(),
            Some("max_depth (2) reached; the children of 1 elements were not read")
        );
        // A named group is seen, so it counts.
        let mut t = fake(&edges);
        let w = run(&mut t, &shallow);
        assert_eq!(ids(&w), [0, 1, 2]);
        // A leaf at the limit is no cut.
        let mut t = fake(&edges[..4]);
        let w = run(&mut t, &with(100, 4, 10_000));
        assert_eq!(w.truncated_reason, None);
    }

    #[test]
    fn the_time_budget_ends_the_walk_and_says_so() {
        let mut t = fake(&[(0, vec![1, 2, 3]), (1, vec![4])]);
        // The window's attributes and children take 2 ticks, element 1's 2 more: the budget is
        // used up when element 2 is next.
        let short = with(100, 10, 40);
        let w = run(&mut t, &short);
        assert_eq!(ids(&w), [0, 1]);
        assert_eq!(
            w.truncated_reason.as_deref(),
            Some(
                "time budget (40 ms) used up after 2 elements, 3 listed elements not read; \
                 narrow the request or raise the time limit"
            )
        );
        assert!(!w.not_responding);
        assert_eq!(t.calls, 4);
    }

    #[test]
    fn a_hung_application_costs_one_timeout() {
        let mut t = fake(&[(0, vec![1, 2, 3]), (1, vec![4]), (3, vec![5])]);
        t.attr_err.insert(2, TreeError::Timeout);
        let w = run(&mut t, &limits());
        // The window and 1 (attributes and children), then 2 timed out: nothing more was asked.
        assert_eq!(ids(&w), [0, 1]);
        assert_eq!(t.calls, 2 + 2 + 1);
        assert!(w.not_responding);
        assert!(w
            .truncated_reason
            .as_deref()
            .unwrap_or("")
            .starts_with("the application did not answer Accessibility in time after 2 elements"));
        // The same when listing children times out.
        let mut t = fake(&[(0, vec![1, 2]), (1, vec![3])]);
        t.kid_err.insert(1, TreeError::Timeout);
        let w = run(&mut t, &limits());
        assert_eq!(ids(&w), [0, 1]);
        assert!(w.not_responding);
        assert_eq!(t.calls, 4);
    }

    #[test]
    fn gone_children_are_skipped_and_failures_counted() {
        let mut t = fake(&[(0, vec![1, 2, 3]), (2, vec![4]), (3, vec![5])]);
        t.attr_err.insert(1, TreeError::Gone);
        t.kid_err.insert(2, TreeError::Gone);
        let w = run(&mut t, &limits());
        assert_eq!(ids(&w), [0, 2, 3, 5]);
        assert_eq!(w.nodes[2].parent, Some(0));
        assert_eq!(w.truncated_reason, None);
        t.attr_err.insert(5, TreeError::Other(-25200));
        let w = run(&mut t, &limits());
        assert_eq!(ids(&w), [0, 2, 3]);
        assert_eq!(
            w.truncated_reason.as_deref(),
            Some("1 elements did not answer and were left out")
        );
    }

    #[test]
    fn a_window_that_cannot_be_read_is_the_error() {
        let mut t = fake(&[]);
        t.attr_err.insert(0, TreeError::Timeout);
        let clock = t.clock.clone();
        assert_eq!(
            walk(&mut t, &limits(), move || clock.get()),
            Err(TreeError::Timeout)
        );
    }

    #[test]
    fn ax_errors_and_timeouts() {
        assert_eq!(
            messaging_timeout(Duration::from_millis(2500)),
            Duration::from_millis(2500)
        );
        assert_eq!(messaging_timeout(Duration::ZERO), MIN_MESSAGING_TIMEOUT);
        let group = AxAttributes {
            role: "AXGroup".into(),
            ..AxAttributes::default()
        };
        assert!(folds(&group));
        let named = AxAttributes {
            title: Some("Toolbar".into()),
            ..group.clone()
        };
        assert!(!folds(&named));
        let pressable = AxAttributes {
            actions: vec!["AXPress".into()],
            ..group
        };
        assert!(!folds(&pressable));
    }
}
