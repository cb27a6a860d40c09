//! What an Accessibility call's `AXError` means for lsm: the element is gone, the application
//! did not answer within the messaging timeout, the attribute or action is not there, or
//! Accessibility is not granted to this process. Platform-free so the Linux tests run it.

use lsm_core::{ErrorCode, GuiError};

/// The `AXError` codes lsm tells apart (HIServices' AXError.h).
pub mod code {
    pub const SUCCESS: i32 = 0;
    pub const FAILURE: i32 = -25200;
    pub const ILLEGAL_ARGUMENT: i32 = -25201;
    pub const INVALID_UI_ELEMENT: i32 = -25202;
    pub const CANNOT_COMPLETE: i32 = -25204;
    pub const ATTRIBUTE_UNSUPPORTED: i32 = -25205;
    pub const ACTION_UNSUPPORTED: i32 = -25206;
    pub const NOT_IMPLEMENTED: i32 = -25208;
    pub const API_DISABLED: i32 = -25211;
    pub const NO_VALUE: i32 = -25212;
    pub const PARAMETERIZED_ATTRIBUTE_UNSUPPORTED: i32 = -25213;
}

/// Why an Accessibility call did not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxFailure {
    /// The element no longer exists (its window closed, its view was rebuilt).
    Gone,
    /// The application did not answer within the messaging timeout (hung or busy): one such
    /// answer ends reading that application for the call, never a retry per element.
    Timeout,
    /// The element has no such attribute, action or value.
    Unsupported,
    /// Accessibility is not granted to this process (System Settings › Privacy & Security ›
    /// Accessibility).
    NotTrusted,
    /// Anything else, with its code.
    Other(i32),
}

impl AxFailure {
    /// The failure an `AXError` code stands for; `None` for success.
    pub fn of(ax_error: i32) -> Option<Self> {
        Some(match ax_error {
            code::SUCCESS => return None,
            code::INVALID_UI_ELEMENT => Self::Gone,
            code::CANNOT_COMPLETE => Self::Timeout,
            code::ATTRIBUTE_UNSUPPORTED
            | code::ACTION_UNSUPPORTED
            | code::NOT_IMPLEMENTED
            | code::NO_VALUE
            | code::PARAMETERIZED_ATTRIBUTE_UNSUPPORTED => Self::Unsupported,
            code::API_DISABLED => Self::NotTrusted,
            other => Self::Other(other),
        })
    }

    /// The error a tool call reports for it, `doing` saying what was being done ("reading the
    /// window's elements", "pressing the button").
    pub fn into_gui(self, doing: &str) -> GuiError {
        match self {
            Self::Gone => GuiError::new(
                ErrorCode::ElementStale,
                format!("{doing}: the element is gone (its window closed or its view was rebuilt); call gui_state again"),
            ),
            Self::Timeout => GuiError::new(
                ErrorCode::Timeout,
                format!("{doing}: the application did not answer in time (it may be busy or hung)"),
            ),
            Self::Unsupported => GuiError::new(
                ErrorCode::UnsupportedAction,
                format!("{doing}: the element does not support it"),
            ),
            Self::NotTrusted => GuiError::new(
                ErrorCode::PermissionDenied,
                format!("{doing}: Accessibility is not granted to lsm (System Settings › Privacy & Security › Accessibility)"),
            ),
            Self::Other(c) => GuiError::backend(format!("{doing}: the Accessibility call failed (AXError {c})")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_code_means_one_thing() {
        assert_eq!(AxFailure::of(code::SUCCESS), None);
        assert_eq!(AxFailure::of(code::INVALID_UI_ELEMENT), Some(AxFailure::Gone));
        assert_eq!(AxFailure::of(code::CANNOT_COMPLETE), Some(AxFailure::Timeout));
        assert_eq!(AxFailure::of(code::NO_VALUE), Some(AxFailure::Unsupported));
        assert_eq!(AxFailure::of(code::API_DISABLED), Some(AxFailure::NotTrusted));
        assert_eq!(
            AxFailure::of(code::FAILURE),
            Some(AxFailure::Other(code::FAILURE))
        );
    }

    #[test]
    fn each_failure_has_its_stable_code() {
        let code_of = |f: AxFailure| f.into_gui("pressing").code;
        assert_eq!(code_of(AxFailure::Gone), ErrorCode::ElementStale);
        assert_eq!(code_of(AxFailure::Timeout), ErrorCode::Timeout);
        assert_eq!(code_of(AxFailure::Unsupported), ErrorCode::UnsupportedAction);
        assert_eq!(code_of(AxFailure::NotTrusted), ErrorCode::PermissionDenied);
        assert!(AxFailure::Other(-1)
            .into_gui("pressing")
            .message
            .contains("AXError -1"));
    }
}
