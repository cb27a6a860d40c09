//! UI Automation failures (HRESULTs) as lsm's error codes: a control that went away is
//! `ELEMENT_STALE`, an application that did not answer is `TIMEOUT`, a pattern the control
//! refuses is `UNSUPPORTED_ACTION`.

use lsm_core::ErrorCode;

/// UIA_E_ELEMENTNOTAVAILABLE: the element is gone (its control was destroyed).
pub const UIA_E_ELEMENTNOTAVAILABLE: u32 = 0x8004_0201;
/// UIA_E_ELEMENTNOTENABLED: the control is disabled.
pub const UIA_E_ELEMENTNOTENABLED: u32 = 0x8004_0200;
/// UIA_E_NOCLICKABLEPOINT.
pub const UIA_E_NOCLICKABLEPOINT: u32 = 0x8004_0202;
/// UIA_E_PROXYASSEMBLYNOTLOADED.
pub const UIA_E_PROXYASSEMBLYNOTLOADED: u32 = 0x8004_0203;
/// UIA_E_NOTSUPPORTED: the pattern or property is not supported.
pub const UIA_E_NOTSUPPORTED: u32 = 0x8004_0204;
/// UIA_E_INVALIDOPERATION (the .NET InvalidOperationException HRESULT).
pub const UIA_E_INVALIDOPERATION: u32 = 0x8013_1509;
/// UIA_E_TIMEOUT: the provider did not answer within the connection or transaction timeout.
pub const UIA_E_TIMEOUT: u32 = 0x8013_1505;
/// RPC_E_DISCONNECTED and RPC_S_SERVER_UNAVAILABLE (as an HRESULT): the process went away.
pub const RPC_E_DISCONNECTED: u32 = 0x8001_0108;
pub const RPC_SERVER_UNAVAILABLE: u32 = 0x8007_06BA;
/// E_ACCESSDENIED: a process of higher integrity (an elevated application) refused us.
pub const E_ACCESSDENIED: u32 = 0x8007_0005;
/// REGDB_E_CLASSNOTREG: no UI Automation (Wine, Server Core).
pub const REGDB_E_CLASSNOTREG: u32 = 0x8004_0154;

/// The lsm code for a failed UI Automation call, and a sentence for the message.
pub fn classify(hresult: u32) -> (ErrorCode, &'static str) {
    match hresult {
        UIA_E_ELEMENTNOTAVAILABLE | RPC_E_DISCONNECTED | RPC_SERVER_UNAVAILABLE => (
            ErrorCode::ElementStale,
            "the control is gone; call gui_state for a fresh observation",
        ),
        UIA_E_TIMEOUT => (
            ErrorCode::Timeout,
            "the application did not answer UI Automation in time (it may be busy or hung)",
        ),
        UIA_E_ELEMENTNOTENABLED => (ErrorCode::ElementDisabled, "the control is disabled"),
        UIA_E_NOTSUPPORTED | UIA_E_INVALIDOPERATION | UIA_E_NOCLICKABLEPOINT => (
            ErrorCode::UnsupportedAction,
            "the control refused the operation; act by x/y read off the screenshot instead",
        ),
        E_ACCESSDENIED => (
            ErrorCode::PermissionDenied,
            "Windows refused access: the application runs elevated (as administrator) and lsm does not",
        ),
        _ => (ErrorCode::BackendError, "a UI Automation call failed"),
    }
}

/// Why UI Automation cannot be used, from the HRESULT of creating its client object.
pub fn unavailable_reason(hresult: u32) -> String {
    let what = match hresult {
        REGDB_E_CLASSNOTREG => {
            "its COM class is not registered (as under Wine, or Windows without the desktop experience)"
        }
        E_ACCESSDENIED => "access was denied",
        _ => "creating its client object failed",
    };
    format!(
        "UI Automation is not available: {what} (HRESULT {hresult:#010x}); windows have no elements here, \
         act by x/y read off the screenshot"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_hung_refused_and_unknown() {
        assert_eq!(classify(UIA_E_ELEMENTNOTAVAILABLE).0, ErrorCode::ElementStale);
        assert_eq!(classify(RPC_E_DISCONNECTED).0, ErrorCode::ElementStale);
        assert_eq!(classify(UIA_E_TIMEOUT).0, ErrorCode::Timeout);
        assert_eq!(classify(UIA_E_NOTSUPPORTED).0, ErrorCode::UnsupportedAction);
        assert_eq!(
            classify(UIA_E_ELEMENTNOTENABLED),
            (ErrorCode::ElementDisabled, "the control is disabled")
        );
        assert_eq!(classify(E_ACCESSDENIED).0, ErrorCode::PermissionDenied);
        assert_eq!(classify(0x8000_4005).0, ErrorCode::BackendError);
    }

    #[test]
    fn the_reason_names_the_cause_and_the_way_on() {
        let r = unavailable_reason(REGDB_E_CLASSNOTREG);
        assert!(
            r.contains("not registered") && r.contains("0x80040154") && r.contains("x/y"),
            "{r}"
        );
        assert!(unavailable_reason(0x8000_4005).contains("0x80004005"));
    }
}
