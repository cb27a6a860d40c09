//! Stable error codes (SPEC §2.3) and the error type every layer returns.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Machine-readable failure codes. Their spelling is part of the public contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    GuiUnavailable,
    MachineUnknown,
    MachineOffline,
    WindowNotFound,
    StateNotFound,
    StateExpired,
    StateConsumed,
    WindowMismatch,
    WindowChanged,
    WindowMinimized,
    /// A modal dialog blocks the window: nothing was done; act on the dialog.
    WindowBlocked,
    OutOfBounds,
    ElementNotFound,
    ElementStale,
    /// The control is disabled: acting on it would do nothing, so nothing was done.
    ElementDisabled,
    InvalidArgument,
    UnsupportedAction,
    LimitExceeded,
    PermissionDenied,
    /// The machine's policy (docs/policy.md) keeps the model away from this window: nothing
    /// was read or sent.
    PolicyDenied,
    /// The action needs a person's approval on the Desktop page and none came in time.
    ApprovalRequired,
    /// The person at the machine denied the action on the Desktop page.
    ApprovalDenied,
    /// A person has taken over the machine or the window on the Desktop page: no input of the
    /// model is sent there until they release it.
    HumanControl,
    Timeout,
    BackendError,
}

impl ErrorCode {
    /// The code as it appears on the wire, e.g. `STATE_EXPIRED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GuiUnavailable => "GUI_UNAVAILABLE",
            Self::MachineUnknown => "MACHINE_UNKNOWN",
            Self::MachineOffline => "MACHINE_OFFLINE",
            Self::WindowNotFound => "WINDOW_NOT_FOUND",
            Self::StateNotFound => "STATE_NOT_FOUND",
            Self::StateExpired => "STATE_EXPIRED",
            Self::StateConsumed => "STATE_CONSUMED",
            Self::WindowMismatch => "WINDOW_MISMATCH",
            Self::WindowChanged => "WINDOW_CHANGED",
            Self::WindowMinimized => "WINDOW_MINIMIZED",
            Self::WindowBlocked => "WINDOW_BLOCKED",
            Self::OutOfBounds => "OUT_OF_BOUNDS",
            Self::ElementNotFound => "ELEMENT_NOT_FOUND",
            Self::ElementStale => "ELEMENT_STALE",
            Self::ElementDisabled => "ELEMENT_DISABLED",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::UnsupportedAction => "UNSUPPORTED_ACTION",
            Self::LimitExceeded => "LIMIT_EXCEEDED",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::PolicyDenied => "POLICY_DENIED",
            Self::ApprovalRequired => "APPROVAL_REQUIRED",
            Self::ApprovalDenied => "APPROVAL_DENIED",
            Self::HumanControl => "HUMAN_CONTROL",
            Self::Timeout => "TIMEOUT",
            Self::BackendError => "BACKEND_ERROR",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure with its stable code and a message telling the caller what to do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuiError {
    pub code: ErrorCode,
    pub message: String,
    /// Extra structured context (e.g. the failed action index and earlier results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

impl GuiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }
    pub fn backend(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BackendError, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::GuiUnavailable, message)
    }
    pub fn timeout(what: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::Timeout,
            format!("{what} timed out; the application may be busy, try again"),
        )
    }
    /// A modal dialog (`dialog_id`, titled `dialog_title` when known) blocks `window_id`.
    pub fn window_blocked(window_id: &str, dialog_id: &str, dialog_title: Option<&str>) -> Self {
        let title = dialog_title.map(|t| format!(" {t:?}")).unwrap_or_default();
        Self::new(
            ErrorCode::WindowBlocked,
            format!(
                "window {window_id} is blocked by modal dialog {dialog_id}{title}; nothing was done: \
                 act on that window (gui_state {dialog_id}), or close it to use this one"
            ),
        )
        .with_details(serde_json::json!({ "blocked_by": dialog_id }))
    }
    /// A `window_id` no window of this machine could have: `example` shows the form they take.
    pub fn malformed_window_id(window_id: &str, example: &str) -> Self {
        Self::invalid(format!(
            "window_id {window_id:?} is not a window id of this machine (they look like {example}); \
             use a window_id from gui_list"
        ))
    }
    /// Input for a control that is disabled (greyed out) now: it would do nothing, so nothing
    /// was done.
    pub fn element_disabled(element_id: &str, role: &str, name: &str) -> Self {
        let name = if name.trim().is_empty() {
            String::new()
        } else {
            format!(" {name:?}")
        };
        Self::new(
            ErrorCode::ElementDisabled,
            format!(
                "{element_id} {role}{name} is disabled (greyed out), so nothing was done: input to it \
                 would do nothing. Enable it first (what it needs is usually filled in or chosen \
                 elsewhere in the window), then call gui_state and act again"
            ),
        )
        .with_details(serde_json::json!({ "element_id": element_id }))
    }
    pub fn window_not_found(window_id: &str) -> Self {
        Self::new(
            ErrorCode::WindowNotFound,
            format!("window {window_id} does not exist (any more); call gui_list to see current windows"),
        )
    }
}

impl fmt::Display for GuiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for GuiError {}

pub type GuiResult<T> = Result<T, GuiError>;

/// `fut`, or a `TIMEOUT` error naming `what` once `limit` has passed: every call that waits on
/// an application or a machine is bounded by this one rule.
pub async fn within<T>(
    limit: std::time::Duration,
    what: &str,
    fut: impl std::future::Future<Output = GuiResult<T>>,
) -> GuiResult<T> {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| Err(GuiError::timeout(what)))
}
