//! What an application's Accessibility notifications say, and the record of them that settling
//! reads ([`lsm_core::Activity`]). The macOS layer ([`crate::ax::observer`]) registers an
//! `AXObserver` per watched application for [`WATCHED`] and hands every notification to
//! [`ActivityLog::record`]; `DesktopBackend::activity` reads [`ActivityLog::activity`]. Which
//! notifications reach only their sender, how many events are kept, when an application is
//! watched, given up on or forgotten, and what is said about it are decided here, so the Linux
//! tests run them.

use crate::ax_errors::AxFailure;
use lsm_core::{Activity, ActivityEvent, Reach};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The notifications registered on each watched application element (HIServices'
/// AXNotificationConstants.h: `kAX…Notification` is `CFSTR("AX…")`). Registered on the
/// application, they come from every element of it. There is no `kAXExpandedChangedNotification`
/// in the SDK: an outline row's disclosure sends `AXRowExpanded` / `AXRowCollapsed`, a disclosure
/// triangle `AXValueChanged`. `AXSelectedTextChanged` (the caret moved) is left out, as Linux
/// leaves out caret moves: typing sends `AXValueChanged` anyway.
#[rustfmt::skip]
pub const WATCHED: &[&str] = &[
    "AXValueChanged", "AXUIElementDestroyed", "AXCreated", "AXFocusedUIElementChanged",
    "AXSelectedChildrenChanged", "AXSelectedRowsChanged", "AXSelectedCellsChanged",
    "AXTitleChanged", "AXWindowCreated", "AXWindowMoved", "AXWindowResized",
    "AXWindowMiniaturized", "AXWindowDeminiaturized", "AXSheetCreated", "AXMenuOpened",
    "AXMenuClosed", "AXLayoutChanged", "AXRowCountChanged", "AXRowExpanded", "AXRowCollapsed",
    "AXFocusedWindowChanged", "AXMainWindowChanged", "AXMoved", "AXResized",
];

/// The notification the application element sends when its process ends.
pub const DESTROYED: &str = "AXUIElementDestroyed";

/// Notifications that change only a state of their sender, the way Linux's `StateChanged`
/// focused / selected do. `AXFocusedUIElementChanged` comes from the newly focused element only,
/// not from the one that lost the focus; an observation that showed every element showed the
/// new one too (a focused element never folds away), so it is outdated all the same; focus
/// moving to another window sends a window notification, which reaches anything.
/// `AXSelectedChildrenChanged` / `AXSelectedRowsChanged` / `AXSelectedCellsChanged` come from the
/// list, table or outline whose selection changed, which an observation that showed its rows
/// showed too.
const OWN_STATE: &[&str] = &[
    "AXFocusedUIElementChanged",
    "AXSelectedChildrenChanged",
    "AXSelectedRowsChanged",
    "AXSelectedCellsChanged",
];

/// What a notification may have changed; `None` for one lsm does not watch. Creation,
/// destruction, layout, titles, values, menus, rows and windows may change anything.
pub fn reach_of(notification: &str) -> Option<Reach> {
    if OWN_STATE.contains(&notification) {
        Some(Reach::OwnState)
    } else if WATCHED.contains(&notification) {
        Some(Reach::Anything)
    } else {
        None
    }
}

/// Events kept per application, the latest ones (as on Linux).
pub const RECENT_EVENTS: usize = 64;
/// Applications recorded at most; the record of the oldest-watched one goes first.
pub const MAX_APPS: usize = 256;
/// How long an application whose registration failed is left without events before lsm tries
/// again (an application still starting may answer `kAXErrorCannotComplete`).
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

/// How the registration of [`WATCHED`] on one application went.
#[derive(Debug, Clone, PartialEq)]
pub enum Registration {
    /// Watching: the notifications it accepted (some applications refuse a few).
    Watching(Vec<&'static str>),
    /// No events from it: why, to be said once.
    Failed(String),
}

/// What the registration calls answered, in [`WATCHED`] order, into a verdict. The caller stops
/// at the first answer that [`ends_registration`] (a timeout, Accessibility disabled, the process
/// gone), so a hung application costs one messaging timeout; a notification the application
/// does not support is skipped; none accepted is a failure.
pub fn registration(answers: &[(&'static str, Result<(), AxFailure>)]) -> Registration {
    let mut accepted = Vec::new();
    for (name, answer) in answers {
        match answer {
            Ok(()) => accepted.push(*name),
            Err(AxFailure::Timeout) => {
                return Registration::Failed(
                    "the application did not answer the registration in time (kAXErrorCannotComplete)".into(),
                )
            }
            Err(AxFailure::NotTrusted) => {
                return Registration::Failed(
                    "Accessibility is not granted to lsm (kAXErrorAPIDisabled)".into(),
                )
            }
            Err(AxFailure::Gone) => return Registration::Failed("the application has quit".into()),
            Err(AxFailure::Unsupported | AxFailure::Other(_)) => {}
        }
    }
    if accepted.is_empty() {
        Registration::Failed("the application accepts none of the notifications".into())
    } else {
        Registration::Watching(accepted)
    }
}

/// Whether a registration answer ends the registration (see [`registration`]).
pub fn ends_registration(answer: &Result<(), AxFailure>) -> bool {
    matches!(
        answer,
        Err(AxFailure::Timeout | AxFailure::NotTrusted | AxFailure::Gone)
    )
}

#[derive(Debug, Clone)]
enum Watch {
    Watching {
        activity: Activity,
        since: u64,
    },
    Failed {
        at: Instant,
    },
    /// The process quit (its application element was destroyed): the observer is to be removed.
    Ended,
}

/// What lsm should do about one application's events now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Register the observer (never tried, or the last failure is old).
    Register,
    /// Nothing: watching, or failed lately.
    Nothing,
    /// Remove its observer: the process quit.
    Remove,
}

/// Every watched application's events. Written by the observer callback (a few hundred
/// nanoseconds under the lock, no call to anything), read by `activity` and the Accessibility
/// thread.
#[derive(Debug, Default)]
pub struct ActivityLog {
    apps: HashMap<i32, Watch>,
    /// Applications whose failure was already said.
    said: HashSet<i32>,
    /// Order of watching, to drop the oldest record when full.
    started: u64,
}

impl ActivityLog {
    /// What to do about the application `pid` at `now`.
    pub fn next(&self, pid: i32, now: Instant) -> Next {
        match self.apps.get(&pid) {
            None => Next::Register,
            Some(Watch::Failed { at }) if now.duration_since(*at) >= RETRY_AFTER => Next::Register,
            Some(Watch::Ended) => Next::Remove,
            Some(_) => Next::Nothing,
        }
    }

    /// Records how the registration went. Returns the note to give the caller the first time an
    /// application is left without events (`app`: its name for the note).
    pub fn registered(&mut self, pid: i32, app: &str, how: &Registration, now: Instant) -> Option<String> {
        match how {
            Registration::Watching(_) => {
                self.make_room(pid);
                self.started += 1;
                self.apps.insert(
                    pid,
                    Watch::Watching {
                        activity: Activity::default(),
                        since: self.started,
                    },
                );
                None
            }
            Registration::Failed(why) => {
                self.make_room(pid);
                self.apps.insert(pid, Watch::Failed { at: now });
                if self.said.len() >= MAX_APPS * 4 {
                    self.said.clear();
                }
                self.said.insert(pid).then(|| {
                    format!(
                        "no Accessibility notifications from {app} (process {pid}): {why}; \
                         settling after actions compares observations instead"
                    )
                })
            }
        }
    }

    fn make_room(&mut self, pid: i32) {
        if self.apps.len() < MAX_APPS || self.apps.contains_key(&pid) {
            return;
        }
        let oldest = self
            .apps
            .iter()
            .min_by_key(|(_, w)| match w {
                Watch::Watching { since, .. } => *since,
                Watch::Failed { .. } | Watch::Ended => 0,
            })
            .map(|(p, _)| *p);
        if let Some(p) = oldest {
            self.apps.remove(&p);
        }
    }

    /// One notification from the application `pid` (the observer's own), sent by the element
    /// with key `source` (empty when unknown); `from_app`: the sender is the application element
    /// itself. Notifications of an application not watched are ignored.
    pub fn record(&mut self, pid: i32, notification: &str, source: String, from_app: bool, at: Instant) {
        let Some(Watch::Watching { activity, .. }) = self.apps.get_mut(&pid) else {
            return;
        };
        if from_app && notification == DESTROYED {
            self.apps.insert(pid, Watch::Ended);
            return;
        }
        let Some(reach) = reach_of(notification) else {
            return;
        };
        activity.count += 1;
        if activity.recent.len() >= RECENT_EVENTS {
            activity.recent.remove(0);
        }
        activity.recent.push(ActivityEvent { at, source, reach });
    }

    /// The application's events so far; `None` when they are not watched (never registered,
    /// failed, quit), so settling compares observations.
    pub fn activity(&self, pid: i32) -> Option<Activity> {
        match self.apps.get(&pid)? {
            Watch::Watching { activity, .. } => Some(activity.clone()),
            Watch::Failed { .. } | Watch::Ended => None,
        }
    }

    /// Forgets an application whose observer was removed (process gone, backend closed).
    pub fn forget(&mut self, pid: i32) {
        self.apps.remove(&pid);
    }

    /// Applications whose process quit, for their observers to be removed.
    pub fn ended(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self
            .apps
            .iter()
            .filter(|(_, w)| matches!(w, Watch::Ended))
            .map(|(p, _)| *p)
            .collect();
        pids.sort_unstable();
        pids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_and_focus_reach_their_sender_alone_everything_else_anything() {
        for own in [
            "AXFocusedUIElementChanged",
            "AXSelectedChildrenChanged",
            "AXSelectedRowsChanged",
        ] {
            assert_eq!(reach_of(own), Some(Reach::OwnState), "{own}");
        }
        for any in [
            "AXValueChanged",
            "AXUIElementDestroyed",
            "AXCreated",
            "AXTitleChanged",
            "AXWindowCreated",
            "AXWindowMoved",
            "AXWindowResized",
            "AXMenuOpened",
            "AXMenuClosed",
            "AXLayoutChanged",
            "AXRowCountChanged",
            "AXRowExpanded",
            "AXRowCollapsed",
        ] {
            assert_eq!(reach_of(any), Some(Reach::Anything), "{any}");
        }
        // Caret moves and names lsm does not register are no activity.
        assert_eq!(reach_of("AXSelectedTextChanged"), None);
        assert_eq!(reach_of("AXExpandedChanged"), None);
        // Every own-state notification is registered, and none twice.
        assert!(OWN_STATE.iter().all(|n| WATCHED.contains(n)));
        let mut names = WATCHED.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WATCHED.len());
    }

    #[test]
    fn a_timeout_or_missing_grant_ends_the_registration_unsupported_ones_are_skipped() {
        let ok = Ok(());
        let unsupported = Err(AxFailure::Unsupported);
        assert_eq!(
            registration(&[
                ("AXValueChanged", ok),
                ("AXRowExpanded", unsupported),
                ("AXCreated", ok)
            ]),
            Registration::Watching(vec!["AXValueChanged", "AXCreated"])
        );
        let hung = registration(&[("AXValueChanged", Err(AxFailure::Timeout))]);
        assert!(matches!(&hung, Registration::Failed(why) if why.contains("kAXErrorCannotComplete")));
        assert!(ends_registration(&Err(AxFailure::Timeout)));
        assert!(ends_registration(&Err(AxFailure::NotTrusted)));
        assert!(!ends_registration(&unsupported));
        let untrusted = registration(&[("AXValueChanged", ok), ("AXCreated", Err(AxFailure::NotTrusted))]);
        assert!(matches!(&untrusted, Registration::Failed(why) if why.contains("not granted")));
        assert!(matches!(
            registration(&[("AXValueChanged", unsupported)]),
            Registration::Failed(_)
        ));
    }

    #[test]
    fn events_are_recorded_with_their_reach_and_bounded() {
        let t0 = Instant::now();
        let mut log = ActivityLog::default();
        // Not watched: no activity, and notifications are ignored.
        log.record(7, "AXValueChanged", "7:a".into(), false, t0);
        assert_eq!(log.activity(7), None);
        assert_eq!(log.next(7, t0), Next::Register);
        let watching = Registration::Watching(WATCHED.to_vec());
        assert_eq!(log.registered(7, "TextEdit", &watching, t0), None);
        assert_eq!(log.next(7, t0), Next::Nothing);
        assert_eq!(log.activity(7), Some(Activity::default()));
        log.record(7, "AXSelectedRowsChanged", "7:b".into(), false, t0);
        log.record(7, "AXLayoutChanged", String::new(), false, t0);
        log.record(7, "AXSelectedTextChanged", "7:c".into(), false, t0);
        let a = log.activity(7).expect("watched");
        assert_eq!(a.count, 2);
        assert_eq!(
            a.recent
                .iter()
                .map(|e| (e.source.as_str(), e.reach))
                .collect::<Vec<_>>(),
            [("7:b", Reach::OwnState), ("", Reach::Anything)]
        );
        for i in 0..200 {
            log.record(7, "AXValueChanged", format!("7:{i}"), false, t0);
        }
        let a = log.activity(7).expect("watched");
        assert_eq!(a.count, 202);
        assert_eq!(a.recent.len(), RECENT_EVENTS);
        assert_eq!(a.recent.last().map(|e| e.source.as_str()), Some("7:199"));
    }

    #[test]
    fn a_quit_application_is_removed_and_forgotten() {
        let t0 = Instant::now();
        let mut log = ActivityLog::default();
        log.registered(9, "Notes", &Registration::Watching(vec!["AXCreated"]), t0);
        // An element of it destroyed is activity; the application element destroyed ends it.
        log.record(9, DESTROYED, "9:x".into(), false, t0);
        assert_eq!(log.activity(9).map(|a| a.count), Some(1));
        log.record(9, DESTROYED, "9:app".into(), true, t0);
        assert_eq!(log.activity(9), None);
        assert_eq!(log.next(9, t0), Next::Remove);
        assert_eq!(log.ended(), [9]);
        log.forget(9);
        assert_eq!(log.ended(), Vec::<i32>::new());
        assert_eq!(log.next(9, t0), Next::Register);
    }

    #[test]
    fn a_failure_is_said_once_and_retried_later() {
        let t0 = Instant::now();
        let mut log = ActivityLog::default();
        let failed = Registration::Failed("the application did not answer".into());
        let note = log
            .registered(3, "Busy", &failed, t0)
            .expect("said the first time");
        assert!(note.starts_with("no Accessibility notifications from Busy (process 3)"));
        assert!(note.contains("compares observations"));
        assert_eq!(log.activity(3), None);
        assert_eq!(log.next(3, t0 + Duration::from_secs(1)), Next::Nothing);
        assert_eq!(log.next(3, t0 + RETRY_AFTER), Next::Register);
        assert_eq!(log.registered(3, "Busy", &failed, t0 + RETRY_AFTER), None);
    }

    #[test]
    fn the_record_is_bounded_in_applications() {
        let t0 = Instant::now();
        let mut log = ActivityLog::default();
        let watching = Registration::Watching(vec!["AXCreated"]);
        for pid in 0..(MAX_APPS as i32 + 10) {
            log.registered(pid, "App", &watching, t0);
        }
        assert_eq!(log.apps.len(), MAX_APPS);
        // The latest stay, the first watched went first.
        assert!(log.activity(MAX_APPS as i32 + 9).is_some());
        assert!(log.activity(0).is_none());
    }
}
