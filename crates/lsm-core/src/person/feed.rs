//! The activity feed: every model call (and every input of a person on the web UI) on every
//! machine, and every change of a machine's take-over and approval state, as events the web UI
//! pushes to the Desktop page. One feed per process: a controller's carries its workers' events
//! too. The audit log stays the durable record; the feed keeps only the most recent calls.

use super::state::PersonState;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// How many recent calls a page that opens now is shown.
const RECENT: usize = 50;
/// Events a slow page may fall behind before it misses some (it is told so).
const CHANNEL: usize = 256;
/// Observations whose small image is kept, to show as the "before" of the call that uses them.
const IMAGES: usize = 32;

/// One call, as the feed shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallEntry {
    /// When it ended (ms since the Unix epoch).
    pub at_ms: u64,
    pub machine: String,
    /// `model` (MCP) or `person` (web UI).
    pub by: String,
    pub tool: String,
    pub window_id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub app: String,
    /// The actions (texts that may be secret masked, as in the audit log).
    #[serde(default)]
    pub actions: serde_json::Value,
    /// `OK` or the error code.
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Per action that ran: what it did and what was seen of its effect.
    #[serde(default)]
    pub effects: Vec<String>,
    /// What changed in the window, in short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The window as the call saw it before acting, small (a data: URL), when that observation
    /// had a screenshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_image: Option<String>,
    /// The window after the call (or as `gui_state` saw it), small, when there was a screenshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_image: Option<String>,
}

/// What the page is pushed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FeedEvent {
    /// Boxed: a call (with its images) is much larger than a state change.
    Call(Box<CallEntry>),
    /// A machine's take-over holds and pending approvals changed.
    Person(PersonState),
}

/// The process's feed.
pub struct Feed {
    tx: broadcast::Sender<Arc<FeedEvent>>,
    recent: Mutex<VecDeque<Arc<FeedEvent>>>,
    /// The latest state of each machine.
    states: Mutex<HashMap<String, Arc<FeedEvent>>>,
    /// The small images of recent observations, by `state_id`.
    images: Mutex<VecDeque<(String, Arc<str>)>>,
}

impl Default for Feed {
    fn default() -> Self {
        Self::new()
    }
}

impl Feed {
    pub fn new() -> Self {
        Self {
            tx: broadcast::channel(CHANNEL).0,
            recent: Mutex::new(VecDeque::with_capacity(RECENT)),
            states: Mutex::new(HashMap::new()),
            images: Mutex::new(VecDeque::with_capacity(IMAGES)),
        }
    }

    /// Whether a page (or a controller, for a worker) is listening: small images are made only
    /// then.
    pub fn watched(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// Keeps the small image of the observation `state_id` for the call that will use it.
    pub fn remember_image(&self, state_id: &str, image: Arc<str>) {
        let mut images = self.images.lock().unwrap_or_else(|p| p.into_inner());
        if images.len() == IMAGES {
            images.pop_front();
        }
        images.push_back((state_id.to_string(), image));
    }

    /// The small image of the observation `state_id`, if it had one and it is still kept.
    pub fn image_of(&self, state_id: &str) -> Option<Arc<str>> {
        let images = self.images.lock().unwrap_or_else(|p| p.into_inner());
        images
            .iter()
            .rev()
            .find(|(id, _)| id == state_id)
            .map(|(_, i)| i.clone())
    }

    pub fn publish(&self, event: FeedEvent) {
        let event = Arc::new(event);
        match &*event {
            FeedEvent::Call(_) => {
                let mut r = self.recent.lock().unwrap_or_else(|p| p.into_inner());
                if r.len() == RECENT {
                    r.pop_front();
                }
                r.push_back(event.clone());
            }
            FeedEvent::Person(s) => {
                self.states
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(s.machine.clone(), event.clone());
            }
        }
        // No page open: nobody to tell.
        let _ = self.tx.send(event);
    }

    /// A machine left (a worker disconnected): its state is no longer shown.
    pub fn forget_machine(&self, machine: &str) {
        self.states
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(machine);
    }

    /// What a page that opens now is shown first (each machine's state, then the recent calls,
    /// oldest first), and the live events after it.
    pub fn subscribe(&self) -> (Vec<Arc<FeedEvent>>, broadcast::Receiver<Arc<FeedEvent>>) {
        // Subscribed first: nothing published meanwhile is lost (at worst shown twice).
        let rx = self.tx.subscribe();
        let mut first: Vec<Arc<FeedEvent>> = {
            let s = self.states.lock().unwrap_or_else(|p| p.into_inner());
            let mut v: Vec<_> = s.values().cloned().collect();
            v.sort_by_key(|e| match &**e {
                FeedEvent::Person(s) => s.machine.clone(),
                FeedEvent::Call(c) => c.machine.clone(),
            });
            v
        };
        first.extend(
            self.recent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned(),
        );
        (first, rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: u64) -> FeedEvent {
        FeedEvent::Call(Box::new(CallEntry {
            at_ms: n,
            machine: "local".into(),
            by: "model".into(),
            tool: "gui_action".into(),
            window_id: "0x1".into(),
            title: String::new(),
            app: String::new(),
            actions: serde_json::Value::Null,
            code: "OK".into(),
            message: None,
            effects: Vec::new(),
            changes: None,
            stopped: None,
            before_image: None,
            after_image: None,
        }))
    }

    #[tokio::test]
    async fn a_new_page_sees_the_recent_calls_then_the_live_ones() {
        let feed = Feed::new();
        for n in 0..(RECENT as u64 + 5) {
            feed.publish(call(n));
        }
        let (first, mut rx) = feed.subscribe();
        assert_eq!(first.len(), RECENT);
        assert_eq!(*first[0], call(5));
        feed.publish(call(1000));
        assert_eq!(*rx.recv().await.expect("live event"), call(1000));
        let json = serde_json::to_value(&*first[0]).expect("json");
        assert_eq!(json["kind"], "call");
        assert!(json.get("before_image").is_none(), "no image, no field: {json}");
    }

    #[test]
    fn an_observations_image_is_kept_for_the_call_that_uses_it_and_the_oldest_go() {
        let feed = Feed::new();
        assert!(!feed.watched());
        let (_first, _rx) = feed.subscribe();
        assert!(feed.watched());
        for n in 0..(IMAGES + 3) {
            feed.remember_image(&format!("s{n}"), Arc::from(format!("data:image/jpeg;base64,{n}")));
        }
        assert_eq!(feed.image_of("s3").as_deref(), Some("data:image/jpeg;base64,3"));
        assert_eq!(feed.image_of("s2"), None, "the oldest are dropped");
        assert_eq!(feed.image_of("unknown"), None);
    }
}
