//! `lsm doctor` on Windows: the session (from the same check `connect` makes) and UI
//! Automation (the client `connect` started, or why there is none). Platform-free, tested on
//! any platform.

use lsm_core::doctor::Item;

/// The session item from `connect`'s own judgement (None: the interactive input desktop).
pub fn session_item(problem: Option<String>) -> Item {
    match problem {
        None => Item::ok(
            "windows_session",
            "Windows session",
            "an interactive session on the input desktop",
        ),
        Some(why) => Item::fail("windows_session", "Windows session", why).with_hint(
            "run lsm in the signed-in user's desktop session (not as a service, not over SSH), with the screen \
             unlocked",
        ),
    }
}

/// UI Automation: the accessibility of every application on Windows.
pub fn ui_automation_item(client: Result<(), &str>) -> Item {
    match client {
        Ok(()) => Item::ok(
            "accessibility",
            "UI Automation",
            "the UI Automation client runs: elements and semantic actions",
        ),
        Err(why) => Item::fail("accessibility", "UI Automation", why).with_hint(
            "UI Automation is part of Windows: restart lsm; if it persists, check that COM is not blocked by policy",
        ),
    }
}

/// The input path: SendInput, which Windows keeps from windows of elevated applications.
pub fn input_item() -> Item {
    Item::ok(
        "input",
        "Input",
        "SendInput (windows of applications running as administrator take input only from an elevated lsm)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::doctor::Status;

    #[test]
    fn items_say_what_to_do() {
        assert_eq!(session_item(None).status, Status::Ok);
        let locked = session_item(Some("the input desktop is Winlogon".into()));
        assert_eq!(locked.status, Status::Fail);
        assert!(locked.hint.is_some());
        assert_eq!(
            ui_automation_item(Err("CoCreateInstance failed")).status,
            Status::Fail
        );
        assert_eq!(ui_automation_item(Ok(())).id, "accessibility");
    }
}
