//! The `state_id` contract: unguessable, single-use, short-lived, a bounded number per machine.

use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::geometry::Rect;
use crate::model::WindowInfo;
use crate::space::Space;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What an element id of an observation stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementRef {
    pub id: String,
    pub native: String,
    /// The backend's key of the live control ([`crate::RawElement::key`]; may be empty).
    pub key: String,
    pub role: String,
    pub name: String,
    /// Window-relative bounds at observation time.
    pub bounds: Option<Rect>,
    /// States at observation time (to tell a control that has since been hidden).
    pub states: Vec<String>,
    /// Action names at observation time, in the backend's order (index = the action's number).
    pub actions: Vec<String>,
}

/// A stored observation: what `gui_action` checks its request against.
#[derive(Debug, Clone)]
pub struct Observation {
    pub state_id: String,
    pub window: WindowInfo,
    pub elements: HashMap<String, ElementRef>,
    /// The space the observation's bounds, screenshot and action points are in.
    pub space: Space,
    pub issued: Instant,
    /// The elements as the caller was shown them (for `gui_action`'s change list).
    pub shown: Option<Shown>,
}

/// The elements an observation showed.
#[derive(Debug, Clone)]
pub struct Shown {
    pub elements: std::sync::Arc<Vec<crate::model::Element>>,
    /// Every element of the window (no query, nothing cut).
    pub complete: bool,
    /// How it was observed (limits, query), for observing the same way after an action.
    pub request: crate::output::StateRequest,
    /// The windows listed with it (what "opened" and "closed" are counted from).
    pub windows: Option<Vec<WindowInfo>>,
    /// The walk it was made of, to bring it up to date (`catch_up.rs`).
    pub(crate) walked: Option<Walked>,
}

/// The backend's walk an observation was made of, kept so that the observation can be brought
/// up to date by reading again only what events say changed (`catch_up.rs`).
#[derive(Debug, Clone)]
pub(crate) struct Walked {
    /// The snapshot as the backend returned it, without an image.
    pub raw: std::sync::Arc<crate::model::Snapshot>,
    /// When the walk began: an event from then on may or may not be in it.
    pub began: std::time::Instant,
    /// The windows listed beside it (the observed window's entry must still be the same for
    /// the walk to be brought up to date).
    pub windows: Option<Vec<WindowInfo>>,
    /// The observation showed every element of the window (no query, nothing cut).
    pub complete: bool,
}

struct Slot {
    obs: Observation,
    consumed: bool,
}

/// Remembers issued states. Consumed ones stay as tombstones (so reuse says
/// `STATE_CONSUMED`, not `STATE_NOT_FOUND`) until they age out or are evicted.
pub struct StateStore {
    ttl: Duration,
    capacity: usize,
    slots: Mutex<VecDeque<Slot>>,
    /// Consumed ids kept beyond eviction from `slots`, bounded.
    tombstones: Mutex<VecDeque<(String, Instant)>>,
}

const TOMBSTONES: usize = 1024;

impl StateStore {
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            ttl,
            capacity: capacity.max(1),
            slots: Mutex::default(),
            tombstones: Mutex::default(),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A fresh, unguessable id (128 random bits).
    pub fn new_id() -> String {
        format!("st_{:032x}", rand::random::<u128>())
    }

    /// Stores an observation in window-relative logical pixels. Returns its id.
    pub fn issue(&self, window: WindowInfo, elements: HashMap<String, ElementRef>) -> String {
        let space = Space::identity(window.bounds.width, window.bounds.height);
        self.issue_in(window, elements, space)
    }

    /// Stores an observation made in `space`, evicting the oldest beyond capacity. Returns its id.
    pub fn issue_in(
        &self,
        window: WindowInfo,
        elements: HashMap<String, ElementRef>,
        space: Space,
    ) -> String {
        self.issue_shown(window, elements, space, None)
    }

    /// As `issue_in`, keeping the elements the caller was shown.
    pub fn issue_shown(
        &self,
        window: WindowInfo,
        elements: HashMap<String, ElementRef>,
        space: Space,
        shown: Option<Shown>,
    ) -> String {
        let state_id = Self::new_id();
        let obs = Observation {
            state_id: state_id.clone(),
            window,
            elements,
            space,
            issued: Instant::now(),
            shown,
        };
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.push_back(Slot { obs, consumed: false });
        while slots.len() > self.capacity {
            if let Some(old) = slots.pop_front() {
                if old.consumed {
                    self.remember_consumed(old.obs.state_id, old.obs.issued);
                }
            }
        }
        state_id
    }

    fn remember_consumed(&self, id: String, issued: Instant) {
        let mut t = self.tombstones.lock().unwrap_or_else(|p| p.into_inner());
        t.push_back((id, issued));
        while t.len() > TOMBSTONES {
            t.pop_front();
        }
    }

    /// Consumes a state for one `gui_action` call. Any call that names a live state uses it up,
    /// whatever happens next.
    pub fn take(&self, state_id: &str) -> GuiResult<Observation> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let Some(slot) = slots.iter_mut().find(|s| s.obs.state_id == state_id) else {
            drop(slots);
            let t = self.tombstones.lock().unwrap_or_else(|p| p.into_inner());
            if t.iter().any(|(id, _)| id == state_id) {
                return Err(consumed(state_id));
            }
            return Err(GuiError::new(
                ErrorCode::StateNotFound,
                format!(
                    "state_id {state_id:?} is unknown on this machine (never issued here, or evicted after {} newer \
                     observations); call gui_state again",
                    self.capacity
                ),
            ));
        };
        if slot.consumed {
            return Err(consumed(state_id));
        }
        slot.consumed = true;
        let age = slot.obs.issued.elapsed();
        if age > self.ttl {
            return Err(GuiError::new(
                ErrorCode::StateExpired,
                format!(
                    "state_id expired {:.1} s ago (states live {} s); call gui_state again",
                    (age - self.ttl).as_secs_f64(),
                    self.ttl.as_secs_f64()
                ),
            ));
        }
        Ok(slot.obs.clone())
    }
}

fn consumed(state_id: &str) -> GuiError {
    GuiError::new(
        ErrorCode::StateConsumed,
        format!("state_id {state_id:?} was already used by an earlier gui_action; call gui_state again"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window() -> WindowInfo {
        WindowInfo {
            focused: true,
            ..WindowInfo::new("w1", "t", "a", Rect::new(0, 0, 10, 10))
        }
    }

    #[test]
    fn a_state_is_single_use() {
        let s = StateStore::new(Duration::from_secs(30), 32);
        let id = s.issue(window(), HashMap::new());
        assert!(id.starts_with("st_") && id.len() == 35);
        assert!(s.take(&id).is_ok());
        assert_eq!(s.take(&id).expect_err("reuse").code, ErrorCode::StateConsumed);
    }

    #[test]
    fn unknown_and_expired_states_are_refused() {
        let s = StateStore::new(Duration::from_millis(0), 32);
        assert_eq!(
            s.take("st_nope").expect_err("unknown").code,
            ErrorCode::StateNotFound
        );
        let id = s.issue(window(), HashMap::new());
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(s.take(&id).expect_err("expired").code, ErrorCode::StateExpired);
        // An expired state was named once: it is used up too.
        assert_eq!(s.take(&id).expect_err("again").code, ErrorCode::StateConsumed);
    }

    #[test]
    fn oldest_states_are_evicted_beyond_capacity() {
        let s = StateStore::new(Duration::from_secs(30), 2);
        let first = s.issue(window(), HashMap::new());
        let used = s.issue(window(), HashMap::new());
        s.take(&used).expect("live");
        let _third = s.issue(window(), HashMap::new());
        let _fourth = s.issue(window(), HashMap::new());
        assert_eq!(
            s.take(&first).expect_err("evicted").code,
            ErrorCode::StateNotFound
        );
        assert_eq!(
            s.take(&used).expect_err("tombstone").code,
            ErrorCode::StateConsumed
        );
    }

    #[test]
    fn ids_are_unique() {
        let ids: std::collections::HashSet<_> = (0..1000).map(|_| StateStore::new_id()).collect();
        assert_eq!(ids.len(), 1000);
    }
}
