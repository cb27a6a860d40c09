//! A person in charge of a machine (docs/web-ui.md): take-over (`control`), approval of the
//! model's actions (`approval`) and the activity feed the Desktop page shows (`feed`). Held by
//! the machine's own `LocalGui`, so a worker enforces them for its own desktop whatever face the
//! call came through; the page reaches them with [`PersonCommand`]s.

pub mod approval;
pub mod control;
pub mod feed;
pub mod state;

pub use approval::{Answer, ApprovalTarget, Approvals, PendingApproval};
pub use control::{Control, Hold};
pub use feed::{CallEntry, Feed, FeedEvent};
pub use state::{
    ApprovedWindow, PersonCommand, PersonConfig, PersonState, DEFAULT_APPROVAL_TIMEOUT, DEFAULT_IDLE_RELEASE,
};

use crate::error::{GuiError, GuiResult};
use std::sync::Arc;
use std::time::Duration;

/// One machine's person in charge.
pub struct Person {
    machine: String,
    pub control: Control,
    pub approvals: Approvals,
    feed: Arc<Feed>,
}

impl Person {
    pub fn new(machine: impl Into<String>, config: PersonConfig, feed: Arc<Feed>) -> Self {
        Self {
            machine: machine.into(),
            control: Control::new(config.idle_release),
            approvals: Approvals::new(config.approval_timeout),
            feed,
        }
    }

    pub fn feed(&self) -> &Arc<Feed> {
        &self.feed
    }

    pub fn machine(&self) -> &str {
        &self.machine
    }

    pub fn state(&self) -> PersonState {
        PersonState {
            machine: self.machine.clone(),
            holds: self.control.holds(),
            approve_everything: self.approvals.everything(),
            approval_timeout_s: self.approvals.timeout().as_secs(),
            approved_windows: self
                .approvals
                .approved_windows()
                .into_iter()
                .map(|(window_id, left_s)| ApprovedWindow { window_id, left_s })
                .collect(),
            pending: self.approvals.pending(),
        }
    }

    /// Tells every open page the machine's state.
    pub fn publish_state(&self) {
        self.feed.publish(FeedEvent::Person(self.state()));
    }

    /// Carries out a page's command; the new state is published and returned.
    pub fn command(&self, command: PersonCommand) -> GuiResult<PersonState> {
        match command {
            PersonCommand::Status => return Ok(self.state()),
            PersonCommand::TakeOver {
                window_id,
                idle_release_s,
            } => {
                let window_id = window_id.filter(|w| !w.is_empty());
                self.control
                    .take(window_id.as_deref(), idle_release_s.map(Duration::from_secs));
            }
            PersonCommand::Release { window_id } => {
                self.control
                    .release(window_id.as_deref().filter(|w| !w.is_empty()));
            }
            PersonCommand::ApproveEverything { on } => self.approvals.set_everything(on),
            PersonCommand::ApproveWindow { window_id, minutes } => {
                if window_id.is_empty() {
                    return Err(GuiError::invalid("window_id is required"));
                }
                if minutes > 24 * 60 {
                    return Err(GuiError::invalid("minutes: at most a day (1440)"));
                }
                self.approvals
                    .approve_window(&window_id, Duration::from_secs(minutes * 60));
            }
            PersonCommand::Decide { id, approve, reason } => {
                let answer = if approve {
                    Answer::Approve
                } else {
                    Answer::Deny(reason.unwrap_or_default())
                };
                if !self.approvals.decide(id, answer) {
                    return Err(GuiError::new(
                        crate::ErrorCode::InvalidArgument,
                        format!("approval {id} is not waiting any more (answered, timed out or withdrawn)"),
                    ));
                }
            }
        }
        let state = self.state();
        self.feed.publish(FeedEvent::Person(state.clone()));
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_change_the_state_and_tell_the_feed() {
        let feed = Arc::new(Feed::new());
        let p = Person::new("local", PersonConfig::default(), feed.clone());
        let (_, mut rx) = feed.subscribe();
        let s = p
            .command(PersonCommand::TakeOver {
                window_id: None,
                idle_release_s: Some(30),
            })
            .expect("take over");
        assert_eq!(s.holds.len(), 1);
        assert_eq!(s.holds[0].idle_release_s, 30);
        match &*rx.try_recv().expect("published") {
            FeedEvent::Person(s) => assert_eq!(s.holds.len(), 1),
            other => panic!("{other:?}"),
        }
        let s = p
            .command(PersonCommand::Release { window_id: None })
            .expect("release");
        assert!(s.holds.is_empty());
        let s = p
            .command(PersonCommand::ApproveWindow {
                window_id: "0x1".into(),
                minutes: 5,
            })
            .expect("approve window");
        assert_eq!(s.approved_windows[0].window_id, "0x1");
        assert!(p
            .command(PersonCommand::Decide {
                id: 7,
                approve: true,
                reason: None
            })
            .is_err());
        // The wire form the page sends.
        let c: PersonCommand =
            serde_json::from_str(r#"{"op":"take_over","window_id":"0x2"}"#).expect("parse");
        assert_eq!(
            c,
            PersonCommand::TakeOver {
                window_id: Some("0x2".into()),
                idle_release_s: None
            }
        );
    }
}
