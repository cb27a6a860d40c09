//! Bringing an observation up to date without walking the window again, where the
//! application's events allow it.
//!
//! An observation stands while no event of its application came since its walk began: that is
//! the trust `gui_action` already puts in the events to tell whether what the caller was shown is
//! still the window (`Activity::outdates`). By the same trust, when every event since then only
//! changed a state of its sender that hides, shows or moves nothing (`Reach::OwnState`: a check
//! box checked, a button focused, a control disabled), the walk is right but for those senders'
//! states. They are read again, a call each, side by side, put into the walk, and the walk is
//! shaped as a fresh one. A toggle's effect is then seen in a few milliseconds, not in a walk of
//! the whole window. Likewise when an event changed only the name, description, value or text of
//! a sender the walk showed with no children (`Reach::OwnContent`: a label that counts, a field
//! typed into): that element is read again whole, and kept only where its box did not change.
//! And when an event only announced that a shown element was laid out again (`Reach::OwnBounds`:
//! GTK 3 lays out a whole window again when it becomes inactive, and says so for every widget
//! even where nothing moved), that element's box is read again, a call each; where it moved,
//! the window is walked.
//!
//! The window is walked instead when an event may have changed more (an element added, removed,
//! moved or shown; a container renamed; a window), when an event's sender is unknown, when
//! events were lost from the record, when a sender is gone or changed in a state that shows,
//! hides or moves things or that changes what the caller is shown of the tree (a container that
//! folds away), when the window itself changed (moved, resized, retitled; focus given or taken
//! lays nothing out, and what it changes comes as events), and when no
//! event came at all (an effect that no event announces is still looked for).

use crate::activity::{Activity, Reach, LAYOUT_STATES};
use crate::geometry::Rect;
use crate::looked::{Base, Looked};
use crate::model::{RawElement, Snapshot, WindowInfo};
use crate::service::{bounded, LocalGui};
use crate::states::folds_raw;
use std::time::Instant;

/// More calls than this to read the senders again and the window is walked instead (a walk of
/// a window of about 150 elements makes 270-340 calls).
const MAX_REREAD_CALLS: usize = 192;

/// What to do to bring a walk up to date.
#[derive(Debug, PartialEq)]
pub(crate) enum Plan {
    /// Walk the window again, and why (for the trace).
    Walk(&'static str),
    /// Read again these elements of the walk (indices; maybe none: every event came from an
    /// element the walk did not show, and stays unshown).
    Reread(Vec<Reread>),
    /// The same, once none of these objects (keys), which the walk did not read and which were
    /// laid out again, is where a walk finds things (GTK 3's notebook tab labels are not): one
    /// that is may now lie where the walk's clip would have kept it.
    RereadUnlessInTree(Vec<Reread>, Vec<String>),
}

/// One element of the walk to read again, and how much of it.
#[derive(Debug, PartialEq, Clone, Copy)]
pub(crate) struct Reread {
    pub(crate) index: usize,
    pub(crate) what: What,
}

/// How much of an element is read again.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum What {
    States,
    Bounds,
    StatesAndBounds,
    /// Its name, description, value or text changed: read whole (states and box with them).
    Whole,
}

impl What {
    fn of(reach: Reach) -> Self {
        match reach {
            Reach::OwnContent => Self::Whole,
            Reach::OwnBounds => Self::Bounds,
            Reach::OwnState | Reach::OwnLayout | Reach::Anything => Self::States,
        }
    }

    /// What covers both.
    fn and(self, other: Self) -> Self {
        match (self, other) {
            (Self::Whole, _) | (_, Self::Whole) => Self::Whole,
            (a, b) if a == b => a,
            _ => Self::StatesAndBounds,
        }
    }

    fn states(self) -> bool {
        matches!(self, Self::States | Self::StatesAndBounds)
    }

    fn bounds(self) -> bool {
        matches!(self, Self::Bounds | Self::StatesAndBounds)
    }

    /// About how many calls reading it again makes (whole: a one-element walk).
    fn calls(self) -> usize {
        match self {
            Self::States | Self::Bounds => 1,
            Self::StatesAndBounds => 2,
            Self::Whole => 6,
        }
    }
}

/// What the events since `since` (when the walk of `raw` began) ask for.
pub(crate) fn plan(activity: &Activity, since: Instant, raw: &[RawElement]) -> Plan {
    let events: Vec<_> = activity.recent.iter().filter(|e| e.at >= since).collect();
    if events.is_empty() {
        return Plan::Walk("no event came");
    }
    // The record keeps the latest events only: all of those since `since` are in it when an
    // older one still is, or when none was ever dropped.
    let whole = events.len() < activity.recent.len() || activity.count as usize == activity.recent.len();
    if !whole {
        return Plan::Walk("events were dropped from the record");
    }
    let index: std::collections::HashMap<&str, usize> =
        raw.iter().enumerate().map(|(i, r)| (r.key.as_str(), i)).collect();
    let parents: std::collections::HashSet<usize> = raw.iter().filter_map(|r| r.parent).collect();
    let mut reread: Vec<Reread> = Vec::new();
    let mut outside: Vec<String> = Vec::new();
    for e in events {
        if e.reach == Reach::Anything {
            return Plan::Walk("an event may have changed more than its sender's state");
        }
        if e.source.is_empty() {
            return Plan::Walk("an event came from an unknown sender");
        }
        let what = What::of(e.reach);
        let layout = e.reach == Reach::OwnLayout;
        // A sender the walk did not show (a complete walk) stays unshown: its state shows
        // nothing. Its name may (a container folded away for having none), and its box may now
        // lie where the walk's clip would have kept it (a child moved into a scrolled view)
        // unless it is not in the tree a walk reads.
        let Some(&i) = index.get(e.source.as_str()) else {
            if layout {
                return Plan::Walk("an element the walk did not read was shown, hidden or unfolded");
            }
            match what {
                What::Whole => return Plan::Walk("the text of an element the walk did not read changed"),
                What::Bounds if !outside.contains(&e.source) => outside.push(e.source.clone()),
                _ => {}
            }
            continue;
        };
        if what == What::Whole && parents.contains(&i) {
            return Plan::Walk("the text of a container changed");
        }
        match reread.iter_mut().find(|r| r.index == i) {
            Some(r) => r.what = r.what.and(what),
            None => reread.push(Reread { index: i, what }),
        }
    }
    if reread.iter().map(|r| r.what.calls()).sum::<usize>() + outside.len() > MAX_REREAD_CALLS {
        return Plan::Walk("too many elements changed");
    }
    match outside.is_empty() {
        true => Plan::Reread(reread),
        false => Plan::RereadUnlessInTree(reread, outside),
    }
}

/// What was read again of one element.
#[derive(Debug, Clone)]
pub(crate) enum Fresh {
    /// It is gone.
    Gone,
    /// Its states.
    States(Vec<String>),
    /// The whole element, as the walk reads it.
    Whole(Box<RawElement>),
    /// Its box (`None`: it has none).
    Bounds(Option<Rect>),
}

/// The walk with what was read again put in (`fresh`: index and what was read); `None` when
/// the window must be walked instead: an element gone, changed in a state that shows, hides or
/// moves things, or in one that folds it away or no longer does, or read whole and found moved,
/// resized or become another kind of control.
pub(crate) fn patch(raw: &Snapshot, fresh: &[(usize, Fresh)]) -> Option<Snapshot> {
    let mut out = raw.clone();
    for (i, now) in fresh {
        let e = out.elements.get_mut(*i)?;
        let (states, content) = match now {
            Fresh::Gone => return None,
            Fresh::States(s) => (s, None),
            // Moved or resized: what lies in it may have moved too.
            Fresh::Bounds(b) if *b != e.bounds => return None,
            Fresh::Bounds(_) => continue,
            Fresh::Whole(w) => {
                if w.role != e.role || w.bounds != e.bounds || w.actions != e.actions {
                    return None;
                }
                (&w.states, Some(w))
            }
        };
        if layout_states(&e.states) != layout_states(states) {
            return None;
        }
        let (name, value) = match content {
            Some(w) => (w.name.as_str(), w.value.as_deref()),
            None => (e.name.as_str(), e.value.as_deref()),
        };
        let folds_before = folds_raw(&e.role, &e.name, &e.actions, e.value.as_deref(), &e.states);
        if folds_before != folds_raw(&e.role, name, &e.actions, value, states) {
            return None;
        }
        if let Some(w) = content {
            e.name = w.name.clone();
            e.description = w.description.clone();
            e.value = w.value.clone();
        }
        e.states = states.clone();
    }
    Some(out)
}

/// Which of the states that show, hide or move things are set.
fn layout_states(states: &[String]) -> Vec<&str> {
    let mut l: Vec<&str> = states
        .iter()
        .map(String::as_str)
        .filter(|s| LAYOUT_STATES.contains(s))
        .collect();
    l.sort_unstable();
    l
}

impl LocalGui {
    /// The observation `base` of `window` brought up to date by reading again only what the
    /// events since its walk say changed; `None` where the window is to be walked instead.
    pub(crate) async fn catch_up(&self, base: Base<'_>, window: &WindowInfo) -> Option<Looked> {
        if !base.walked.complete || base.request.screenshot {
            return None;
        }
        let backend = self.backend().await.ok()?;
        let activity = backend.activity(window)?;
        let began = Instant::now();
        let raw = &base.walked.raw;
        let (reread, outside) = match plan(&activity, base.walked.began, &raw.elements) {
            Plan::Walk(why) => {
                tracing::trace!("catch-up: walk ({why})");
                return None;
            }
            Plan::Reread(r) => (r, Vec::new()),
            Plan::RereadUnlessInTree(r, outside) => (r, outside),
        };
        let pick = |want: fn(What) -> bool| -> (Vec<usize>, Vec<&RawElement>) {
            reread
                .iter()
                .filter(|r| want(r.what))
                .filter_map(|r| Some((r.index, raw.elements.get(r.index)?)))
                .unzip()
        };
        let (by_state, stated) = pick(What::states);
        let (by_bounds, boxed) = pick(What::bounds);
        let (by_whole, wholes) = pick(|w| w == What::Whole);
        let window_id = &base.request.window_id;
        let states = async {
            match stated.is_empty() {
                true => Ok(Vec::new()),
                false => bounded("reading states", backend.reread_states(window_id, &stated)).await,
            }
        };
        let bounds = async {
            match boxed.is_empty() {
                true => Ok(Vec::new()),
                false => bounded("reading boxes", backend.reread_bounds(window_id, &boxed)).await,
            }
        };
        let whole = async {
            match wholes.is_empty() {
                true => Ok(Vec::new()),
                false => bounded("reading elements", backend.reread_elements(window_id, &wholes)).await,
            }
        };
        let in_tree = async {
            let keys: Vec<&str> = outside.iter().map(String::as_str).collect();
            match keys.is_empty() {
                true => Ok(Vec::new()),
                false => bounded("reading parents", backend.in_tree(window_id, &keys)).await,
            }
        };
        let (states, bounds, whole, in_tree, windows) = tokio::join!(
            states,
            bounds,
            whole,
            in_tree,
            bounded("listing windows", backend.list_windows())
        );
        let (Ok(states), Ok(bounds), Ok(whole), Ok(in_tree), Ok(windows)) =
            (states, bounds, whole, in_tree, windows)
        else {
            return None;
        };
        if in_tree.len() != outside.len() || in_tree.contains(&true) {
            tracing::trace!("catch-up: walk (an element the walk did not read was laid out again)");
            return None;
        }
        // The window is as it was when walked: not moved, resized, retitled or gone. Focus
        // given or taken lays nothing out again: what it changes in the window (its elements'
        // `focused`, `active`) comes as events of their own.
        let entry = |ws: &[WindowInfo]| ws.iter().find(|w| &w.window_id == window_id).cloned();
        let now = entry(&windows)?;
        let then = base.walked.windows.as_deref().and_then(entry);
        if then
            .map(|t| WindowInfo {
                focused: now.focused,
                ..t
            })
            .as_ref()
            != Some(&now)
        {
            tracing::trace!("catch-up: walk (the window changed)");
            return None;
        }
        if states.len() != by_state.len() || bounds.len() != by_bounds.len() || whole.len() != by_whole.len()
        {
            return None;
        }
        let states = states.into_iter().map(|s| s.map_or(Fresh::Gone, Fresh::States));
        let bounds = bounds.into_iter().map(|b| b.map_or(Fresh::Gone, Fresh::Bounds));
        let whole = whole
            .into_iter()
            .map(|w| w.map_or(Fresh::Gone, |w| Fresh::Whole(Box::new(w))));
        let fresh: Vec<(usize, Fresh)> = by_state
            .into_iter()
            .zip(states)
            .chain(by_bounds.into_iter().zip(bounds))
            .chain(by_whole.into_iter().zip(whole))
            .collect();
        let Some(mut snap) = patch(raw, &fresh) else {
            tracing::trace!("catch-up: walk (an element is gone or changed in layout)");
            return None;
        };
        snap.window.focused = now.focused;
        tracing::trace!(
            "catch-up: {} element(s) read again in {:?}",
            fresh.len(),
            began.elapsed()
        );
        self.shape(base.request.clone(), None, snap, None, Some(windows), began)
            .await
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::ActivityEvent;
    use crate::geometry::Rect;
    use std::time::Duration;

    fn raw(key: &str, role: &str, states: &[&str]) -> RawElement {
        RawElement {
            native: key.into(),
            key: key.into(),
            parent: None,
            depth: 0,
            role: role.into(),
            name: format!("{role} {key}"),
            description: String::new(),
            value: None,
            states: states.iter().map(|s| s.to_string()).collect(),
            actions: vec!["click".into()],
            bounds: Some(Rect::new(0, 0, 10, 10)),
            summary: None,
        }
    }

    fn snap(elements: Vec<RawElement>) -> Snapshot {
        Snapshot {
            window: WindowInfo::new("w1", "t", "a", Rect::new(0, 0, 100, 100)),
            scale: 1.0,
            elements,
            truncated: false,
            truncated_reason: None,
            screenshot: None,
            notes: Vec::new(),
        }
    }

    fn states(index: usize) -> Reread {
        Reread {
            index,
            what: What::States,
        }
    }

    fn activity(events: &[(Instant, &str, Reach)], count: u64) -> Activity {
        Activity {
            count,
            recent: events
                .iter()
                .map(|(at, s, r)| ActivityEvent {
                    at: *at,
                    source: s.to_string(),
                    reach: *r,
                })
                .collect(),
        }
    }

    #[test]
    fn own_states_of_shown_elements_are_read_again() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(3);
        let els = [raw("a", "check_box", &[]), raw("b", "push_button", &[])];
        let a = activity(
            &[
                (t0 - Duration::from_millis(50), "b", Reach::Anything),
                (later, "b", Reach::OwnState),
                (later, "a", Reach::OwnState),
                (later, "b", Reach::OwnState),
                // A sender the walk did not show (a closed menu's item).
                (later, "z", Reach::OwnState),
            ],
            4,
        );
        assert_eq!(plan(&a, t0, &els), Plan::Reread(vec![states(1), states(0)]));
    }

    #[test]
    fn anything_else_or_no_event_or_a_gap_walks() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(3);
        let els = [raw("a", "check_box", &[])];
        assert!(matches!(plan(&activity(&[], 0), t0, &els), Plan::Walk(_)));
        // Events before the walk began do not count.
        let before = activity(&[(t0 - Duration::from_millis(1), "a", Reach::OwnState)], 1);
        assert!(matches!(plan(&before, t0, &els), Plan::Walk(_)));
        let renamed = activity(&[(later, "a", Reach::OwnState), (later, "a", Reach::Anything)], 2);
        assert!(matches!(plan(&renamed, t0, &els), Plan::Walk(_)));
        let unknown = activity(&[(later, "", Reach::OwnState)], 1);
        assert!(matches!(plan(&unknown, t0, &els), Plan::Walk(_)));
        // Every kept event is newer than the walk and some were dropped: one may be missing.
        let gap = activity(&[(later, "a", Reach::OwnState)], 70);
        assert!(matches!(plan(&gap, t0, &els), Plan::Walk(_)));
        let no_gap = activity(&[(later, "a", Reach::OwnState)], 1);
        assert_eq!(plan(&no_gap, t0, &els), Plan::Reread(vec![states(0)]));
    }

    #[test]
    fn a_state_read_again_replaces_the_walked_one() {
        let s = snap(vec![raw("a", "check_box", &["enabled", "showing", "visible"])]);
        let now = vec![
            "enabled".into(),
            "showing".into(),
            "visible".into(),
            "checked".into(),
        ];
        let p = patch(&s, &[(0, Fresh::States(now.clone()))]).expect("patched");
        assert_eq!(p.elements[0].states, now);
    }

    #[test]
    fn a_gone_element_or_a_layout_state_walks() {
        let s = snap(vec![raw("a", "check_box", &["enabled", "showing", "visible"])]);
        assert!(patch(&s, &[(0, Fresh::Gone)]).is_none());
        let hidden = vec!["enabled".into(), "visible".into()];
        assert!(patch(&s, &[(0, Fresh::States(hidden))]).is_none());
        let expanded = vec![
            "enabled".into(),
            "showing".into(),
            "visible".into(),
            "expanded".into(),
        ];
        assert!(patch(&s, &[(0, Fresh::States(expanded))]).is_none());
        assert!(patch(&s, &[(5, Fresh::States(Vec::new()))]).is_none());
    }

    #[test]
    fn a_container_that_would_fold_differently_walks() {
        // An unnamed panel folds away unless it takes the focus.
        let mut panel = raw("p", "panel", &["enabled", "showing", "visible"]);
        panel.name.clear();
        panel.actions.clear();
        let s = snap(vec![panel]);
        let focused: Vec<String> = ["enabled", "showing", "visible", "focusable", "focused"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(folds_raw("panel", "", &[], None, &s.elements[0].states));
        assert!(!folds_raw("panel", "", &[], None, &focused));
        assert!(patch(&s, &[(0, Fresh::States(focused))]).is_none());
    }

    #[test]
    fn a_text_changed_reads_its_leaf_element_whole() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(3);
        let mut box_ = raw("b", "panel", &[]);
        box_.name = "named box".into();
        let mut label = raw("l", "label", &[]);
        label.parent = Some(0);
        let els = [box_, label, raw("c", "check_box", &[])];
        let counted = activity(
            &[
                (later, "c", Reach::OwnState),
                (later, "l", Reach::OwnContent),
                (later, "l", Reach::OwnState),
            ],
            3,
        );
        assert_eq!(
            plan(&counted, t0, &els),
            Plan::Reread(vec![
                states(2),
                Reread {
                    index: 1,
                    what: What::Whole
                }
            ])
        );
        // A container's text may be its children's; an element the walk did not read may be a
        // container folded away for having no name.
        let container = activity(&[(later, "b", Reach::OwnContent)], 1);
        assert!(matches!(plan(&container, t0, &els), Plan::Walk(_)));
        let unread = activity(&[(later, "z", Reach::OwnContent)], 1);
        assert!(matches!(plan(&unread, t0, &els), Plan::Walk(_)));
    }

    #[test]
    fn an_element_read_whole_replaces_its_texts_where_its_box_stands() {
        let s = snap(vec![raw("l", "label", &["enabled", "showing", "visible"])]);
        let mut now = s.elements[0].clone();
        now.name = "Pressed: 1".into();
        now.value = Some("1".into());
        let p = patch(&s, &[(0, Fresh::Whole(Box::new(now.clone())))]).expect("patched");
        assert_eq!(
            (p.elements[0].name.as_str(), p.elements[0].value.as_deref()),
            ("Pressed: 1", Some("1"))
        );
        // A longer text that resized it may have moved others: the window is walked.
        let mut wider = now.clone();
        wider.bounds = Some(Rect::new(0, 0, 40, 10));
        assert!(patch(&s, &[(0, Fresh::Whole(Box::new(wider)))]).is_none());
        let mut other = now;
        other.role = "push_button".into();
        assert!(patch(&s, &[(0, Fresh::Whole(Box::new(other)))]).is_none());
    }

    #[test]
    fn an_unnamed_container_given_a_name_walks() {
        let mut panel = raw("p", "panel", &["enabled", "showing", "visible"]);
        panel.name.clear();
        panel.actions.clear();
        let s = snap(vec![panel]);
        let mut named = s.elements[0].clone();
        named.name = "Options".into();
        assert!(patch(&s, &[(0, Fresh::Whole(Box::new(named)))]).is_none());
    }

    #[test]
    fn a_shown_element_laid_out_again_has_its_box_read_again() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(3);
        let els = [raw("a", "check_box", &[]), raw("b", "push_button", &[])];
        let relaid = activity(
            &[
                (later, "a", Reach::OwnBounds),
                (later, "b", Reach::OwnBounds),
                (later, "b", Reach::OwnState),
            ],
            3,
        );
        assert_eq!(
            plan(&relaid, t0, &els),
            Plan::Reread(vec![
                Reread {
                    index: 0,
                    what: What::Bounds
                },
                Reread {
                    index: 1,
                    what: What::StatesAndBounds
                }
            ])
        );
        // One the walk did not read may now lie where it would have been kept, unless it is
        // not in the tree a walk reads: that is asked.
        let unread = activity(
            &[(later, "z", Reach::OwnBounds), (later, "z", Reach::OwnBounds)],
            2,
        );
        assert_eq!(
            plan(&unread, t0, &els),
            Plan::RereadUnlessInTree(Vec::new(), vec!["z".to_string()])
        );
        // Many of them cost about a walk.
        let many: Vec<RawElement> = (0..200).map(|i| raw(&format!("e{i}"), "label", &[])).collect();
        let keys: Vec<String> = (0..200).map(|i| format!("e{i}")).collect();
        let events: Vec<(Instant, &str, Reach)> = keys
            .iter()
            .map(|k| (later, k.as_str(), Reach::OwnBounds))
            .collect();
        assert!(matches!(plan(&activity(&events, 200), t0, &many), Plan::Walk(_)));
        let few: Vec<(Instant, &str, Reach)> = events[..150].to_vec();
        assert!(matches!(plan(&activity(&few, 150), t0, &many), Plan::Reread(r) if r.len() == 150));
    }

    #[test]
    fn a_box_read_again_stands_or_the_window_is_walked() {
        let s = snap(vec![raw("a", "check_box", &["enabled", "showing", "visible"])]);
        let same = patch(&s, &[(0, Fresh::Bounds(Some(Rect::new(0, 0, 10, 10))))]).expect("patched");
        assert_eq!(same.elements, s.elements);
        assert!(patch(&s, &[(0, Fresh::Bounds(Some(Rect::new(0, 5, 10, 10))))]).is_none());
        assert!(patch(&s, &[(0, Fresh::Bounds(None))]).is_none());
        // Read for its states too: both apply.
        let checked: Vec<String> = ["enabled", "showing", "visible", "checked"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let p = patch(
            &s,
            &[
                (0, Fresh::States(checked.clone())),
                (0, Fresh::Bounds(Some(Rect::new(0, 0, 10, 10)))),
            ],
        )
        .expect("patched");
        assert_eq!(p.elements[0].states, checked);
    }

    #[test]
    fn a_layout_state_of_a_shown_element_has_its_states_read_again() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(3);
        let els = [raw("w", "frame", &["showing"]), raw("b", "push_button", &[])];
        // Announced again as it was (a window made inactive): read, and the walk stands unless
        // it differs (`patch`).
        let again = activity(&[(later, "w", Reach::OwnLayout)], 1);
        assert_eq!(plan(&again, t0, &els), Plan::Reread(vec![states(0)]));
        // One the walk did not read may have been shown.
        let unread = activity(&[(later, "z", Reach::OwnLayout)], 1);
        assert!(matches!(plan(&unread, t0, &els), Plan::Walk(_)));
    }
}
