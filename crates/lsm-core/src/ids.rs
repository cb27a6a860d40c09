//! Stable element ids: the same live control keeps the same `eN` in every observation of its
//! window, so a model recognises what it saw before and a change list can name what changed.
//! Ids are only names: an id is acted on solely through a `state_id` whose observation
//! contains it, and the backend re-verifies the control behind it as before.

use crate::model::RawElement;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Windows whose ids are remembered; the least recently observed beyond this start over.
const WINDOWS: usize = 64;
/// Keys remembered per window; beyond this only the controls of the latest walk are kept.
const KEYS_PER_WINDOW: usize = 50_000;

#[derive(Default)]
struct WindowIds {
    next: u64,
    by_key: HashMap<String, u64>,
    used: u64,
}

#[derive(Default)]
struct Inner {
    windows: HashMap<String, WindowIds>,
    clock: u64,
}

/// The id of each control, per window, for the life of the server.
#[derive(Default)]
pub struct ElementIds {
    inner: Mutex<Inner>,
}

impl ElementIds {
    pub fn new() -> Self {
        Self::default()
    }

    /// Ids (`e0`, `e1`, …) for the elements of one walk of `window_id`, aligned with `raw`.
    /// A control seen before keeps its id; a new one gets the next free number, so a window's
    /// first observation is numbered in walk order. An element without a backend key (or a
    /// key repeated within the walk) is known by its position among its parent's children.
    pub fn assign(&self, window_id: &str, raw: &[RawElement]) -> Vec<String> {
        let keys = identity_keys(raw);
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.clock += 1;
        let clock = inner.clock;
        if !inner.windows.contains_key(window_id) && inner.windows.len() >= WINDOWS {
            let oldest = inner
                .windows
                .iter()
                .min_by_key(|(_, w)| w.used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                inner.windows.remove(&oldest);
            }
        }
        let w = inner.windows.entry(window_id.to_string()).or_default();
        w.used = clock;
        let ids: Vec<u64> = keys
            .iter()
            .map(|k| match w.by_key.get(k) {
                Some(&n) => n,
                None => {
                    let n = w.next;
                    w.next += 1;
                    w.by_key.insert(k.clone(), n);
                    n
                }
            })
            .collect();
        if w.by_key.len() > KEYS_PER_WINDOW {
            let live: HashSet<&String> = keys.iter().collect();
            w.by_key.retain(|k, _| live.contains(k));
        }
        ids.into_iter().map(|n| format!("e{n}")).collect()
    }

    /// Forgets a window's ids (it closed).
    pub fn forget(&self, window_id: &str) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.windows.remove(window_id);
    }
}

/// One identity per element: the backend's key, or, without one, a path of child positions
/// from the nearest ancestor that has a key (`\0` cannot occur in a backend key).
fn identity_keys(raw: &[RawElement]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::with_capacity(raw.len());
    let mut seen: HashSet<&str> = HashSet::with_capacity(raw.len());
    let mut child_index: HashMap<Option<usize>, usize> = HashMap::new();
    for (i, e) in raw.iter().enumerate() {
        let parent = e.parent.filter(|&p| p < i);
        let nth = {
            let c = child_index.entry(parent).or_insert(0);
            *c += 1;
            *c - 1
        };
        let own = !e.key.is_empty() && seen.insert(e.key.as_str());
        keys.push(if own {
            e.key.clone()
        } else {
            match parent {
                Some(p) => format!("{}\0{nth}", keys[p]),
                None => format!("\0{nth}"),
            }
        });
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(key: &str, parent: Option<usize>) -> RawElement {
        RawElement {
            native: format!("n:{key}"),
            key: key.into(),
            parent,
            depth: parent.map_or(0, |_| 1),
            role: "push_button".into(),
            name: key.into(),
            description: String::new(),
            value: None,
            states: vec![],
            actions: vec![],
            bounds: None,
            summary: None,
        }
    }

    #[test]
    fn a_first_observation_is_numbered_in_walk_order() {
        let ids = ElementIds::new();
        let walk = [el("root", None), el("a", Some(0)), el("b", Some(0))];
        assert_eq!(ids.assign("w1", &walk), ["e0", "e1", "e2"]);
    }

    #[test]
    fn controls_keep_their_ids_when_a_row_is_inserted_above_them() {
        let ids = ElementIds::new();
        let before = [el("root", None), el("row1", Some(0)), el("ok", Some(0))];
        assert_eq!(ids.assign("w1", &before), ["e0", "e1", "e2"]);
        let after = [
            el("root", None),
            el("row0", Some(0)),
            el("row1", Some(0)),
            el("ok", Some(0)),
        ];
        assert_eq!(ids.assign("w1", &after), ["e0", "e3", "e1", "e2"]);
        // Another window numbers its own controls.
        assert_eq!(ids.assign("w2", &before), ["e0", "e1", "e2"]);
    }

    #[test]
    fn elements_without_keys_are_known_by_position_and_ids_stay_unique() {
        let ids = ElementIds::new();
        let walk = [
            el("root", None),
            el("", Some(0)),
            el("", Some(0)),
            el("root", Some(0)),
        ];
        let got = ids.assign("w", &walk);
        assert_eq!(got, ["e0", "e1", "e2", "e3"]);
        assert_eq!(ids.assign("w", &walk), got);
    }

    #[test]
    fn remembered_windows_and_keys_are_bounded() {
        let ids = ElementIds::new();
        for w in 0..WINDOWS + 5 {
            ids.assign(&format!("w{w}"), &[el("root", None)]);
        }
        assert_eq!(ids.inner.lock().unwrap().windows.len(), WINDOWS);
        let many: Vec<RawElement> = (0..KEYS_PER_WINDOW + 10)
            .map(|k| el(&format!("k{k}"), None))
            .collect();
        ids.assign("big", &many);
        let live = [el("k3", None), el("fresh", None)];
        let got = ids.assign("big", &live);
        assert_eq!(got[0], "e3");
        assert_eq!(ids.inner.lock().unwrap().windows["big"].by_key.len(), 2);
    }
}
