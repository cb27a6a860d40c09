//! The one place where a window's policy becomes a yes or a refusal for a model's call. Only
//! the model's calls come here: a person's input on the web UI is never restricted.

use super::rules::{Access, Decision, Policy};
use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::model::WindowInfo;
use serde_json::json;

/// What the model wants to do with the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// `gui_state`: read the window's elements and image.
    Observe,
    /// `gui_action`: send input.
    Act,
}

/// Whether the model may do `intent` with `window` under `policy`: Ok, or the refusal naming
/// the rule (nothing has been sent when it is refused).
pub fn enforce(policy: &Policy, window: &WindowInfo, intent: Intent) -> GuiResult<()> {
    enforce_approved(policy, window, intent, false)
}

/// As [`enforce`], for a call a person has `approved` (an `ask` window then takes its input).
pub fn enforce_approved(
    policy: &Policy,
    window: &WindowInfo,
    intent: Intent,
    approved: bool,
) -> GuiResult<()> {
    let decision = policy.decide(window);
    match (decision.access, intent) {
        (Access::Allow, _) | (Access::ObserveOnly | Access::Ask, Intent::Observe) => Ok(()),
        (Access::Ask, Intent::Act) if approved => Ok(()),
        (Access::Ask, Intent::Act) => ask_approval(policy, window, decision),
        (Access::Deny, _) | (Access::ObserveOnly, Intent::Act) => {
            Err(refusal(policy, window, decision, intent))
        }
    }
}

/// Why `window` needs a person's approval for the model's input (the rule, or the default),
/// or None when the policy does not ask for it.
pub fn ask_reason(policy: &Policy, window: &WindowInfo) -> Option<String> {
    let decision = policy.decide(window);
    (decision.access == Access::Ask).then(|| format!("policy: {}", decided_by(policy, decision)))
}

/// Who decided, for a person: the rule, or the default.
fn decided_by(policy: &Policy, decision: Decision<'_>) -> String {
    match decision.rule {
        Some(rule) => rule.to_string(),
        None => policy.describe_default(),
    }
}

fn details(policy: &Policy, decision: Decision<'_>) -> serde_json::Value {
    json!({ "policy": decision.access.as_str(), "rule": decided_by(policy, decision) })
}

fn describe(window: &WindowInfo) -> String {
    format!(
        "window {} ({:?}, {:?})",
        window.window_id, window.app, window.title
    )
}

fn refusal(policy: &Policy, window: &WindowInfo, decision: Decision<'_>, intent: Intent) -> GuiError {
    let by = decided_by(policy, decision);
    let message = match decision.access {
        Access::ObserveOnly => format!(
            "{} is observe-only for the model by {by}: gui_state works, every gui_action is refused; \
             nothing was sent",
            describe(window)
        ),
        _ => format!(
            "{} is denied to the model by {by}: {} refused, nothing was {}; leave this window to the \
             person at the machine",
            describe(window),
            match intent {
                Intent::Observe => "observing it is",
                Intent::Act => "acting on it is",
            },
            match intent {
                Intent::Observe => "read",
                Intent::Act => "sent",
            },
        ),
    };
    GuiError::new(ErrorCode::PolicyDenied, message).with_details(details(policy, decision))
}

/// An `ask` window's action that was not approved (the window became an `ask` one during the
/// call, say): refused with its own code; `gui_action` asks the person before it begins.
fn ask_approval(policy: &Policy, window: &WindowInfo, decision: Decision<'_>) -> GuiResult<()> {
    Err(GuiError::new(
        ErrorCode::ApprovalRequired,
        format!(
            "{} needs a person's approval for every gui_action ({}), and this call was not approved for \
             it: nothing was sent; call gui_state and act again to ask the person",
            describe(window),
            decided_by(policy, decision)
        ),
    )
    .with_details(details(policy, decision)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;
    use crate::policy::file::parse;

    const POLICY: &str = r#"
[[rule]]
app = "vault"
access = "deny"

[[rule]]
app = "viewer"
access = "observe-only"

[[rule]]
title = "*payment*"
access = "ask"
"#;

    fn window(app: &str, title: &str) -> WindowInfo {
        WindowInfo::new("0x7", title, app, Rect::new(0, 0, 10, 10))
    }

    #[test]
    fn each_access_refuses_what_it_should() {
        let p = parse(POLICY, "p.toml").unwrap();
        let (vault, viewer, pay, other) = (
            window("Vault", "secrets"),
            window("viewer", "doc"),
            window("shop", "Payment"),
            window("editor", "x"),
        );
        for intent in [Intent::Observe, Intent::Act] {
            let e = enforce(&p, &vault, intent).unwrap_err();
            assert_eq!(e.code, ErrorCode::PolicyDenied);
            assert!(
                e.message.contains("rule 1 of p.toml (line 2: app = \"vault\""),
                "{}",
                e.message
            );
            assert_eq!(e.details.as_ref().unwrap()["policy"], "deny");
            assert!(enforce(&p, &other, intent).is_ok());
        }
        assert!(enforce(&p, &viewer, Intent::Observe).is_ok());
        let e = enforce(&p, &viewer, Intent::Act).unwrap_err();
        assert_eq!(e.code, ErrorCode::PolicyDenied);
        assert!(
            e.message.contains("observe-only") && e.message.contains("rule 2"),
            "{}",
            e.message
        );
        assert!(enforce(&p, &pay, Intent::Observe).is_ok());
        let e = enforce(&p, &pay, Intent::Act).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalRequired);
        assert!(e.message.contains("this call was not approved"), "{}", e.message);
    }

    #[test]
    fn a_refusal_by_default_names_the_default() {
        let p = parse("default = \"deny\"\n", "p.toml").unwrap();
        let e = enforce(&p, &window("any", "t"), Intent::Act).unwrap_err();
        assert!(
            e.message
                .contains("the policy's default (default = \"deny\" in p.toml)"),
            "{}",
            e.message
        );
    }
}
