//! Approval: on `ask` windows (docs/policy.md), and on every window while the machine's
//! "approve everything" switch is on, each model `gui_action` waits, bounded, for a person to
//! approve or deny it on the Desktop page. Denied: `APPROVAL_DENIED` with the person's reason;
//! nobody answered in time: `APPROVAL_REQUIRED`. A window can be approved for some minutes, so
//! that a person does not click for every step.

use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::geometry::Rect;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::oneshot;

/// What an action will touch, for the person deciding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApprovalTarget {
    /// The action's index in the call.
    pub index: usize,
    #[serde(rename = "type")]
    pub action_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub role: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Where it is on the approval's image, in that image's pixels (a point is a 1x1 box).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<Rect>,
}

/// One `gui_action` waiting for a person, as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PendingApproval {
    pub id: u64,
    pub machine: String,
    pub window_id: String,
    pub title: String,
    pub app: String,
    /// The actions as the model sent them (text typed into password fields masked).
    pub actions: serde_json::Value,
    pub targets: Vec<ApprovalTarget>,
    /// Why it waits: the policy rule, or the approve-everything switch.
    pub reason: String,
    /// The window as it is now (a data: URL of a small JPEG), the targets marked on it by the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_height: Option<u32>,
    pub asked_ms: u64,
    /// Seconds left before it times out, as of when it was asked.
    pub timeout_s: u64,
}

/// A person's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Approve,
    Deny(String),
}

struct Waiting {
    info: PendingApproval,
    answer: oneshot::Sender<Answer>,
}

/// The approvals of one machine.
pub struct Approvals {
    next_id: AtomicU64,
    pending: Mutex<Vec<Waiting>>,
    everything: AtomicBool,
    /// Windows approved until then.
    approved: Mutex<HashMap<String, Instant>>,
    timeout: Duration,
}

/// Why an approval wait ended without running.
fn denied(reason: &str) -> GuiError {
    let reason = reason.trim();
    let why = if reason.is_empty() {
        "no reason given".to_string()
    } else {
        format!("reason: {reason:?}")
    };
    GuiError::new(
        ErrorCode::ApprovalDenied,
        format!(
            "the person at the machine denied this gui_action ({why}); nothing was sent and the state_id is used \
             up: call gui_state, and do not repeat the same step unless the person asks for it"
        ),
    )
    .with_details(serde_json::json!({ "reason": reason }))
}

impl Approvals {
    /// Each wait lasts at most `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(Vec::new()),
            everything: AtomicBool::new(false),
            approved: Mutex::new(HashMap::new()),
            timeout,
        }
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The machine-wide switch: every model `gui_action` needs approval while it is on.
    pub fn set_everything(&self, on: bool) {
        self.everything.store(on, Ordering::Relaxed);
    }

    pub fn everything(&self) -> bool {
        self.everything.load(Ordering::Relaxed)
    }

    /// Approves every model action on `window_id` for `for_time` (zero: ends such a grant).
    pub fn approve_window(&self, window_id: &str, for_time: Duration) {
        let mut a = self.approved.lock().unwrap_or_else(|p| p.into_inner());
        if for_time.is_zero() {
            a.remove(window_id);
        } else {
            a.insert(window_id.to_string(), Instant::now() + for_time);
        }
    }

    /// The windows approved for a while, with the seconds left.
    pub fn approved_windows(&self) -> Vec<(String, u64)> {
        let now = Instant::now();
        let mut a = self.approved.lock().unwrap_or_else(|p| p.into_inner());
        a.retain(|_, until| *until > now);
        let mut out: Vec<(String, u64)> = a
            .iter()
            .map(|(w, until)| (w.clone(), until.saturating_duration_since(now).as_secs()))
            .collect();
        out.sort();
        out
    }

    /// Whether a model action on `window_id` must wait for a person (`ask` says the policy
    /// asks for it).
    pub fn needed(&self, window_id: &str, ask: bool) -> bool {
        if !(ask || self.everything()) {
            return false;
        }
        !self.approved_windows().iter().any(|(w, _)| w == window_id)
    }

    /// The calls waiting now, oldest first.
    pub fn pending(&self) -> Vec<PendingApproval> {
        let p = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        p.iter().map(|w| w.info.clone()).collect()
    }

    /// Reserves the id of the next approval (the caller fills in its `PendingApproval`).
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Waits for a person's answer to `info` (bounded by the timeout); `changed` runs when the
    /// pending list changed (it is shown), and again when the wait ends.
    pub async fn wait(&self, mut info: PendingApproval, changed: impl Fn()) -> GuiResult<()> {
        let (tx, rx) = oneshot::channel();
        let id = info.id;
        info.timeout_s = self.timeout.as_secs();
        info.asked_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Waiting { info, answer: tx });
        // The entry goes when the wait ends, however it ends (the call may also be dropped).
        struct Remove<'a, F: Fn()>(&'a Approvals, u64, &'a F);
        impl<F: Fn()> Drop for Remove<'_, F> {
            fn drop(&mut self) {
                self.0
                    .pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .retain(|w| w.info.id != self.1);
                (self.2)();
            }
        }
        let _remove = Remove(self, id, &changed);
        changed();
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(Answer::Approve)) => Ok(()),
            Ok(Ok(Answer::Deny(reason))) => Err(denied(&reason)),
            Ok(Err(_)) => Err(denied("the approval was withdrawn")),
            Err(_) => Err(GuiError::new(
                ErrorCode::ApprovalRequired,
                format!(
                    "this gui_action needs a person's approval on the Desktop page and none came within {} s; \
                     nothing was sent and the state_id is used up: call gui_state and try again later, or ask \
                     the person to approve",
                    self.timeout.as_secs()
                ),
            )
            .with_details(serde_json::json!({ "timeout_s": self.timeout.as_secs() }))),
        }
    }

    /// A person's answer to approval `id`; false when it is not waiting (any more).
    pub fn decide(&self, id: u64, answer: Answer) -> bool {
        let waiting = {
            let mut p = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let at = p.iter().position(|w| w.info.id == id);
            at.map(|i| p.remove(i))
        };
        match waiting {
            Some(w) => w.answer.send(answer).is_ok(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn info(id: u64) -> PendingApproval {
        PendingApproval {
            id,
            machine: "local".into(),
            window_id: "0x1".into(),
            title: "t".into(),
            app: "a".into(),
            actions: serde_json::json!([{"type": "click", "x": 1, "y": 1}]),
            targets: Vec::new(),
            reason: "test".into(),
            image: None,
            image_width: None,
            image_height: None,
            asked_ms: 0,
            timeout_s: 0,
        }
    }

    async fn answered(answer: Option<Answer>) -> GuiResult<()> {
        let a = Arc::new(Approvals::new(Duration::from_millis(300)));
        let id = a.next_id();
        let waiter = {
            let a = a.clone();
            tokio::spawn(async move { a.wait(info(id), || {}).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(a.pending().len(), 1);
        if let Some(answer) = answer {
            assert!(a.decide(id, answer));
        }
        let r = waiter.await.expect("the wait ends");
        assert!(a.pending().is_empty());
        r
    }

    #[tokio::test]
    async fn approved_denied_and_unanswered() {
        assert!(answered(Some(Answer::Approve)).await.is_ok());
        let e = answered(Some(Answer::Deny("not that one".into())))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalDenied);
        assert!(e.message.contains("not that one"), "{}", e.message);
        let started = Instant::now();
        let e = answered(None).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalRequired);
        assert!(started.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn what_needs_approval() {
        let a = Approvals::new(Duration::from_secs(1));
        assert!(!a.needed("0x1", false));
        assert!(a.needed("0x1", true));
        a.set_everything(true);
        assert!(a.needed("0x2", false));
        a.approve_window("0x2", Duration::from_secs(60));
        assert!(!a.needed("0x2", false) && !a.needed("0x2", true));
        assert!(a.needed("0x1", false));
        a.approve_window("0x2", Duration::ZERO);
        assert!(a.needed("0x2", false));
        assert!(!a.decide(99, Answer::Approve));
    }
}
