//! What the Desktop page asks of a machine's person in charge ([`PersonCommand`]) and what it is
//! shown of it ([`PersonState`]): plain data, shared by the service, the feed and the worker link.

use super::approval::PendingApproval;
use super::control::Hold;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long a model action waits for approval unless configured (`--approval-timeout`).
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a take-over lasts without the person's input unless configured (`--take-over-idle`).
pub const DEFAULT_IDLE_RELEASE: Duration = Duration::from_secs(300);

/// What the Desktop page asks of a machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PersonCommand {
    /// Only the state.
    Status,
    /// The machine (no `window_id`) or one window under the person's control.
    TakeOver {
        #[serde(default)]
        window_id: Option<String>,
        /// Released after this many seconds without the person's input (default: the machine's).
        #[serde(default)]
        idle_release_s: Option<u64>,
    },
    Release {
        #[serde(default)]
        window_id: Option<String>,
    },
    /// Every model `gui_action` on the machine waits for approval while on.
    ApproveEverything { on: bool },
    /// Every model action on the window is approved for this many minutes (0 ends it).
    ApproveWindow { window_id: String, minutes: u64 },
    /// The answer to a pending approval.
    Decide {
        id: u64,
        approve: bool,
        #[serde(default)]
        reason: Option<String>,
    },
}

/// A window approved for a while.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovedWindow {
    pub window_id: String,
    pub left_s: u64,
}

/// A machine's take-over holds, approval settings and pending approvals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonState {
    pub machine: String,
    pub holds: Vec<Hold>,
    pub approve_everything: bool,
    pub approval_timeout_s: u64,
    pub approved_windows: Vec<ApprovedWindow>,
    pub pending: Vec<PendingApproval>,
}

/// How long approvals wait and holds last.
#[derive(Debug, Clone, Copy)]
pub struct PersonConfig {
    pub approval_timeout: Duration,
    pub idle_release: Duration,
}

impl Default for PersonConfig {
    fn default() -> Self {
        Self {
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            idle_release: DEFAULT_IDLE_RELEASE,
        }
    }
}
