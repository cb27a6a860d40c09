//! `lsm doctor` on macOS: the login session and the two grants (Accessibility, Screen
//! Recording), judged by the same functions `connect` and the capture use
//! ([`crate::permissions`]), for this exact binary (or the terminal macOS holds responsible).
//! Pure over the facts the backend reads, so it is tested on any platform.

use crate::permissions::{
    check_accessibility, check_screen_recording, check_session, responsible, Responsible, SessionFacts,
};
use lsm_core::doctor::Item;
use lsm_core::GuiError;

/// What the backend read of this process and its session.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub session: SessionFacts,
    pub accessibility: bool,
    pub screen_recording: bool,
    /// lsm's resolved executable path.
    pub exe: String,
    pub term_program: Option<String>,
}

/// The session item and one item per grant.
pub fn items(f: &Facts) -> Vec<Item> {
    let who = match responsible(&f.exe, f.term_program.as_deref()) {
        Responsible::Binary(path) => format!("this binary, {path}"),
        Responsible::Terminal(app) => format!("{app} (lsm was started from it; binary {})", f.exe),
    };
    let term = f.term_program.as_deref();
    vec![
        judged(
            "macos_session",
            "Login session",
            check_session(&f.session),
            "a GUI session of the user at the screen".into(),
            "do what the message says",
        ),
        judged(
            "macos_accessibility",
            "Accessibility permission",
            check_accessibility(f.accessibility, &f.exe, term),
            format!("granted to {who}"),
            "grant it as the message says, then start lsm again",
        ),
        judged(
            "macos_screen_recording",
            "Screen Recording permission",
            check_screen_recording(f.screen_recording, &f.exe, term),
            format!("granted to {who}"),
            "grant it as the message says, then start lsm again (macOS applies it to processes started after the grant)",
        ),
    ]
}

fn judged(id: &str, title: &str, check: Result<(), GuiError>, ok: String, hint: &str) -> Item {
    match check {
        Ok(()) => Item::ok(id, title, ok),
        Err(e) => Item::fail(id, title, e.message).with_hint(hint),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::doctor::Status;

    fn at_the_screen() -> Facts {
        Facts {
            session: SessionFacts {
                console_user: Some("ann".into()),
                ssh: false,
                window_server: true,
                root: false,
                on_console: Some(true),
            },
            accessibility: true,
            screen_recording: true,
            exe: "/Users/ann/.cargo/bin/lsm".into(),
            term_program: None,
        }
    }

    #[test]
    fn every_grant_is_named_for_this_binary() {
        let items = items(&at_the_screen());
        assert!(items.iter().all(|i| i.status == Status::Ok), "{items:?}");
        assert!(items[1].detail.contains("/Users/ann/.cargo/bin/lsm"));
        let mut f = at_the_screen();
        f.screen_recording = false;
        f.term_program = Some("iTerm.app".into());
        let items = super::items(&f);
        let sr = &items[2];
        assert_eq!(sr.status, Status::Fail);
        assert!(
            sr.detail.contains("iTerm") && sr.detail.contains("Screen"),
            "{sr:?}"
        );
        assert!(sr.hint.is_some());
        f.session.ssh = true;
        f.session.window_server = false;
        assert_eq!(super::items(&f)[0].status, Status::Fail);
    }
}
