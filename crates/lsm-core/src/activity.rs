//! An application's accessibility events as a backend saw them, and what they say about an
//! observation taken before them: settling waits for them to stop, and an action is judged
//! against a fresh walk only where they may have changed what the caller was shown.

use std::time::Instant;

/// The relevant accessibility events (elements added or removed; states, names, values, text
/// or bounds changed; windows opened or closed) one application has sent, as a backend saw them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Activity {
    /// How many were seen since the backend started watching; only grows.
    pub count: u64,
    /// The most recent ones, oldest first (a bounded number of them).
    pub recent: Vec<ActivityEvent>,
}

/// One accessibility event.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityEvent {
    pub at: Instant,
    /// The object that sent it, as the backend keys elements ([`crate::RawElement::key`]);
    /// empty when unknown.
    pub source: String,
    pub reach: Reach,
}

/// States whose change shows, hides or moves elements (a menu opened, a row expanded, a
/// window minimised): an event of one of them may have changed anything in the window. A
/// window becoming active or inactive (another one clicked) is not among them: it lays nothing
/// out again; what it closes (a popup menu) sends its own events.
pub const LAYOUT_STATES: &[&str] = &[
    "showing",
    "visible",
    "defunct",
    "expanded",
    "collapsed",
    "iconified",
    "modal",
];

/// What an event may have changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Only a state of the sender that does not hide, show or move anything (checked,
    /// selected, focused, armed…): an observation that did not show the sender still holds.
    OwnState,
    /// A name, description, value or text of the sender: it alone is read again (its bounds
    /// with it: a longer text may have resized it, and then the window is walked). An
    /// observation that did not show the sender is outdated all the same (an unnamed container
    /// given a name is no longer folded away).
    OwnContent,
    /// The sender's box (a widget laid out again: GTK 3 announces every allocation, also one
    /// that leaves it where it was, as when its window becomes inactive): its box is read again,
    /// and the window is walked when it moved, since what lies in it moved with it.
    OwnBounds,
    /// A state of the sender that shows, hides or moves things (showing, expanded, iconified…),
    /// also one announced again with the value it had (GTK 3 says `iconified 0` of a window
    /// each time it becomes inactive): its states are read again, and the window is walked
    /// where they differ from the walk's in such a state.
    OwnLayout,
    /// Anything else: elements added, removed, shown, hidden or moved, windows.
    Anything,
}

impl Activity {
    /// When each of the recent events came, oldest first.
    pub fn times(&self) -> Vec<Instant> {
        self.recent.iter().map(|e| e.at).collect()
    }

    /// When the latest event came, if any was seen.
    pub fn last_at(&self) -> Option<Instant> {
        self.recent.last().map(|e| e.at)
    }

    /// Whether the events since `since` may have changed what an observation taken then showed.
    /// `complete`: it showed every element of the window (no query, nothing cut; otherwise an
    /// element it left out may now be one it would show); `shown`: whether it showed the object
    /// with that key.
    pub fn outdates(&self, since: Instant, complete: bool, shown: impl Fn(&str) -> bool) -> bool {
        self.recent
            .iter()
            .filter(|e| e.at >= since)
            .any(|e| !complete || e.reach != Reach::OwnState || e.source.is_empty() || shown(&e.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn event(at: Instant, source: &str, reach: Reach) -> ActivityEvent {
        ActivityEvent {
            at,
            source: source.into(),
            reach,
        }
    }

    #[test]
    fn a_state_of_an_element_not_shown_leaves_the_observation_true() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(5);
        let shown = |k: &str| k == ":1.5/a/1";
        // A radio item of a closed menu checked again (gtk3-widget-factory, read by another
        // client): nothing the observation showed changed.
        let a = Activity {
            count: 1,
            recent: vec![event(later, ":1.5/a/9", Reach::OwnState)],
        };
        assert!(!a.outdates(t0, true, shown));
        // ... unless the observation was partial, or the element was shown.
        assert!(a.outdates(t0, false, shown));
        let a = Activity {
            count: 1,
            recent: vec![event(later, ":1.5/a/1", Reach::OwnState)],
        };
        assert!(a.outdates(t0, true, shown));
    }

    #[test]
    fn anything_else_outdates_every_observation() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_millis(5);
        let never = |_: &str| false;
        for e in [
            event(later, ":1.5/a/9", Reach::Anything),
            event(later, "", Reach::OwnState),
            // A name given to an element not shown: an unnamed container folded away may now
            // be shown.
            event(later, ":1.5/a/9", Reach::OwnContent),
        ] {
            let a = Activity {
                count: 1,
                recent: vec![e],
            };
            assert!(a.outdates(t0, true, never));
        }
    }

    #[test]
    fn events_before_the_observation_do_not_count() {
        let t0 = Instant::now();
        let a = Activity {
            count: 1,
            recent: vec![event(t0, ":1.5/a/1", Reach::Anything)],
        };
        assert!(!a.outdates(t0 + Duration::from_millis(1), true, |_| true));
        assert_eq!(a.times(), vec![t0]);
        assert_eq!(a.last_at(), Some(t0));
    }
}
