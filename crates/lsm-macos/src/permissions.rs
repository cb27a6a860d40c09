//! The grants macOS asks for (Accessibility, Screen Recording) and the login session lsm needs,
//! as errors that tell the person at the Mac exactly what to do.
//!
//! Pure functions over facts the caller reads (AXIsProcessTrustedWithOptions,
//! CGPreflightScreenCaptureAccess, the resolved executable path, TERM_PROGRAM, the console
//! user, SSH variables, the window server connection), so every rule and message is tested on
//! any platform. macOS asks about the *responsible* application: the terminal lsm was started
//! from, else lsm's own binary; the message names the one that needs the grant.

use lsm_core::{ErrorCode, GuiError};

/// lsm never lets AXIsProcessTrustedWithOptions show its prompt: a server may have nobody at
/// the screen, and the prompt would come back on every call; the error message says it all.
pub const PROMPT_FOR_ACCESSIBILITY: bool = false;

/// A privacy grant macOS keeps per application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// To read and operate other applications' controls (AXUIElement).
    Accessibility,
    /// To read other applications' window pixels and titles (CoreGraphics, ScreenCaptureKit).
    ScreenRecording,
}

impl Grant {
    /// The pane as System Settings shows it.
    pub fn pane(self) -> &'static str {
        match self {
            Grant::Accessibility => "System Settings › Privacy & Security › Accessibility",
            Grant::ScreenRecording => {
                "System Settings › Privacy & Security › Screen & System Audio Recording"
            }
        }
    }

    /// The link that opens the pane (`open '<link>'`).
    pub fn settings_link(self) -> &'static str {
        match self {
            Grant::Accessibility => {
                "x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility"
            }
            Grant::ScreenRecording => {
                "x-apple.systempreferences:com.apple.preference.security?Privacy_ScreenCapture"
            }
        }
    }

    /// What lsm cannot do without it.
    fn without(self) -> &'static str {
        match self {
            Grant::Accessibility => "lsm cannot read or operate other applications' controls",
            Grant::ScreenRecording => "lsm cannot see other applications' windows (their pixels and titles)",
        }
    }
}

/// The terminal application named by TERM_PROGRAM, as macOS lists it in the privacy panes.
pub fn terminal_app(term_program: &str) -> Option<&'static str> {
    Some(match term_program {
        "Apple_Terminal" => "Terminal",
        "iTerm.app" => "iTerm",
        "vscode" => "Visual Studio Code",
        "WarpTerminal" => "Warp",
        "ghostty" => "Ghostty",
        "WezTerm" => "WezTerm",
        "Hyper" => "Hyper",
        "Tabby" => "Tabby",
        "rio" => "Rio",
        "kitty" => "kitty",
        "Alacritty" | "alacritty" => "Alacritty",
        _ => return None,
    })
}

/// Who macOS asks about for a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Responsible {
    /// lsm's own executable (resolved path), or the app bundle that holds it.
    Binary(String),
    /// The terminal application lsm was started from: macOS holds it responsible.
    Terminal(String),
}

/// Whom macOS asks about: the terminal when TERM_PROGRAM names one (an unknown value is
/// still a terminal, named by the variable), else the binary at `exe`.
pub fn responsible(exe: &str, term_program: Option<&str>) -> Responsible {
    match term_program.map(str::trim).filter(|t| !t.is_empty()) {
        // tmux and screen run inside some terminal that they do not name.
        Some("tmux" | "screen") => Responsible::Terminal("the terminal application running tmux".into()),
        Some(t) => Responsible::Terminal(terminal_app(t).map_or_else(
            || format!("your terminal application (TERM_PROGRAM={t})"),
            str::to_string,
        )),
        None => Responsible::Binary(app_bundle_of(exe).unwrap_or(exe).to_string()),
    }
}

/// The `.app` bundle an executable lies in (`/Applications/X.app/Contents/MacOS/x` →
/// `/Applications/X.app`): the privacy panes list the bundle, not the file inside.
pub fn app_bundle_of(exe: &str) -> Option<&str> {
    let i = exe.find(".app/Contents/MacOS/")?;
    Some(&exe[..i + ".app".len()])
}

/// Why a restart is needed after granting Screen Recording.
const LATER: &str = "macOS applies Screen Recording only to processes started after the grant";

/// The error for a missing grant, naming who needs it, where to grant it, and what then.
pub fn permission_error(grant: Grant, who: &Responsible) -> GuiError {
    let (whom, how) = match who {
        Responsible::Terminal(app) => (
            app.clone(),
            format!(
                "lsm was started from {app}, so macOS asks about {app}, not lsm: switch {app} on \
                 there"
            ),
        ),
        Responsible::Binary(path) => (
            path.clone(),
            format!(
                "switch on {path} there (add it with +, ⇧⌘G to type the path; a rebuilt or \
                 updated unsigned binary needs it again; if an application such as an MCP client \
                 started lsm, macOS may list that application instead)"
            ),
        ),
    };
    let then = match (grant, who) {
        (Grant::ScreenRecording, Responsible::Terminal(app)) => {
            format!("then quit and reopen {app} and restart lsm: {LATER}")
        }
        (Grant::ScreenRecording, Responsible::Binary(_)) => {
            format!("then restart lsm: {LATER}")
        }
        (Grant::Accessibility, _) => "then try again (restart lsm if it still refuses)".into(),
    };
    GuiError::new(
        ErrorCode::PermissionDenied,
        format!(
            "{}: {whom} has no {} permission. Open {} (open '{}'); {how}; {then}.",
            grant.without(),
            match grant {
                Grant::Accessibility => "Accessibility",
                Grant::ScreenRecording => "Screen Recording",
            },
            grant.pane(),
            grant.settings_link(),
        ),
    )
}

/// `Err` when AXIsProcessTrustedWithOptions (without prompting) said false.
pub fn check_accessibility(trusted: bool, exe: &str, term_program: Option<&str>) -> Result<(), GuiError> {
    if trusted {
        Ok(())
    } else {
        Err(permission_error(
            Grant::Accessibility,
            &responsible(exe, term_program),
        ))
    }
}

/// `Err` when CGPreflightScreenCaptureAccess said false (it never prompts).
pub fn check_screen_recording(granted: bool, exe: &str, term_program: Option<&str>) -> Result<(), GuiError> {
    if granted {
        Ok(())
    } else {
        Err(permission_error(
            Grant::ScreenRecording,
            &responsible(exe, term_program),
        ))
    }
}

/// The observation's note when Screen Recording is off: CoreGraphics then gives no titles of
/// other applications' windows (and their pixels may show only the desktop), while the
/// elements read through Accessibility are complete. `None` when it is granted.
pub fn missing_titles_note(screen_recording: bool, exe: &str, term_program: Option<&str>) -> Option<String> {
    if screen_recording {
        return None;
    }
    let whom = match responsible(exe, term_program) {
        Responsible::Binary(p) => p,
        Responsible::Terminal(app) => app,
    };
    Some(format!(
        "window titles are missing: Screen Recording is not granted to {whom}, so macOS hides \
         other applications' window titles (and may blank their pixels); element names from \
         Accessibility are unaffected. Grant it in {} (open '{}') and restart lsm",
        Grant::ScreenRecording.pane(),
        Grant::ScreenRecording.settings_link()
    ))
}

/// What lsm knows of the login session it runs in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionFacts {
    /// The user at the Mac's screen (SCDynamicStoreCopyConsoleUser); `loginwindow` or none
    /// when nobody is logged in.
    pub console_user: Option<String>,
    /// SSH_CONNECTION or SSH_TTY is set.
    pub ssh: bool,
    /// A connection to the window server could be made (CGSessionCopyCurrentDictionary is not
    /// null): the process runs in a user's GUI (Aqua) session.
    pub window_server: bool,
    /// Running as root (uid 0), as a LaunchDaemon does.
    pub root: bool,
    /// The session is the one shown at the screen (kCGSessionOnConsoleKey); `Some(false)` after
    /// fast user switching to another user.
    pub on_console: Option<bool>,
}

/// What to do when lsm is outside the user's GUI session.
const RUN_AS_AGENT: &str = "run lsm as a LaunchAgent in the session of the user logged in at \
     the screen: a plist in ~/Library/LaunchAgents, loaded with `launchctl bootstrap gui/$(id -u) \
     <plist>` (or start lsm from a terminal in that session)";

/// `Err` (`GUI_UNAVAILABLE`) when lsm cannot see or operate windows from where it runs, with
/// the reason and the way out.
pub fn check_session(f: &SessionFacts) -> Result<(), GuiError> {
    let nobody = f
        .console_user
        .as_deref()
        .map(str::trim)
        .is_none_or(|u| u.is_empty() || u == "loginwindow");
    let reason = if !f.window_server && f.root {
        format!(
            "lsm runs as root outside any user's session (as a LaunchDaemon does), with no \
             connection to the window server; {RUN_AS_AGENT}"
        )
    } else if !f.window_server && f.ssh {
        let whose = f.console_user.as_deref().filter(|_| !nobody).map_or_else(
            || "no user is logged in at the screen either; log in first, then ".to_string(),
            |u| format!("the GUI session is {u}'s; "),
        );
        format!(
            "lsm was started over SSH, outside the GUI session, with no connection to the window \
             server; {whose}{RUN_AS_AGENT}"
        )
    } else if !f.window_server {
        format!("lsm has no connection to the window server (not in a GUI session); {RUN_AS_AGENT}")
    } else if nobody {
        "nobody is logged in at the Mac's screen (the login window is showing): there are no \
         application windows; log in (or turn on automatic login) and try again"
            .to_string()
    } else if f.on_console == Some(false) {
        format!(
            "lsm's session is not the one at the screen ({} switched in): its windows are not \
             drawn; switch back to this user and try again",
            f.console_user.as_deref().unwrap_or("another user")
        )
    } else {
        return Ok(());
    };
    Err(GuiError::unavailable(reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXE: &str = "/usr/local/bin/lsm";

    #[test]
    fn terminals_are_named_as_macos_lists_them() {
        assert_eq!(terminal_app("Apple_Terminal"), Some("Terminal"));
        assert_eq!(terminal_app("iTerm.app"), Some("iTerm"));
        assert_eq!(terminal_app("vscode"), Some("Visual Studio Code"));
        assert_eq!(terminal_app("WarpTerminal"), Some("Warp"));
        assert_eq!(terminal_app("ghostty"), Some("Ghostty"));
        assert_eq!(terminal_app("nope"), None);
        assert_eq!(
            responsible(EXE, Some("Apple_Terminal")),
            Responsible::Terminal("Terminal".into())
        );
        assert_eq!(responsible(EXE, None), Responsible::Binary(EXE.into()));
        assert_eq!(responsible(EXE, Some("  ")), Responsible::Binary(EXE.into()));
        let odd = responsible(EXE, Some("FancyTerm"));
        assert!(matches!(odd, Responsible::Terminal(t) if t.contains("TERM_PROGRAM=FancyTerm")));
        assert!(matches!(responsible(EXE, Some("tmux")), Responsible::Terminal(t) if t.contains("tmux")));
    }

    #[test]
    fn an_app_bundle_is_named_rather_than_its_executable() {
        let exe = "/Applications/Lsm Helper.app/Contents/MacOS/lsm";
        assert_eq!(app_bundle_of(exe), Some("/Applications/Lsm Helper.app"));
        assert_eq!(app_bundle_of(EXE), None);
        assert_eq!(
            responsible(exe, None),
            Responsible::Binary("/Applications/Lsm Helper.app".into())
        );
    }

    #[test]
    fn accessibility_names_the_binary_the_pane_and_its_link() {
        assert!(check_accessibility(true, EXE, None).is_ok());
        let e = check_accessibility(false, EXE, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied);
        let m = &e.message;
        assert!(m.contains(EXE), "{m}");
        assert!(m.contains("Privacy & Security › Accessibility"), "{m}");
        assert!(m.contains("?Privacy_Accessibility"), "{m}");
        assert!(m.contains("controls") && m.contains("try again"), "{m}");
        assert!(!m.contains("Screen Recording only"), "{m}");
    }

    #[test]
    fn from_a_terminal_the_terminal_is_named() {
        let e = check_accessibility(false, EXE, Some("iTerm.app")).unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied);
        assert!(e.message.contains("started from iTerm"), "{}", e.message);
        assert!(e.message.contains("asks about iTerm, not lsm"), "{}", e.message);
        assert!(!e.message.contains(EXE), "{}", e.message);
        let s = check_screen_recording(false, EXE, Some("vscode")).unwrap_err();
        assert!(
            s.message.contains("quit and reopen Visual Studio Code"),
            "{}",
            s.message
        );
        assert!(s.message.contains("restart lsm"), "{}", s.message);
    }

    #[test]
    fn screen_recording_names_its_pane_and_the_restart() {
        assert!(check_screen_recording(true, EXE, None).is_ok());
        let e = check_screen_recording(false, EXE, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied);
        let m = &e.message;
        assert!(m.contains(EXE), "{m}");
        assert!(m.contains("Screen & System Audio Recording"), "{m}");
        assert!(m.contains("?Privacy_ScreenCapture"), "{m}");
        assert!(m.contains("restart lsm"), "{m}");
        assert!(m.contains("MCP client"), "{m}");
    }

    #[test]
    fn missing_titles_are_explained_only_without_the_grant() {
        assert_eq!(missing_titles_note(true, EXE, None), None);
        let n = missing_titles_note(false, EXE, Some("Apple_Terminal")).unwrap_or_default();
        assert!(n.contains("titles are missing") && n.contains("Terminal"), "{n}");
        assert!(
            n.contains("?Privacy_ScreenCapture") && n.contains("restart lsm"),
            "{n}"
        );
    }

    fn at_screen() -> SessionFacts {
        SessionFacts {
            console_user: Some("ada".into()),
            window_server: true,
            on_console: Some(true),
            ..SessionFacts::default()
        }
    }

    fn reason(f: &SessionFacts) -> String {
        match check_session(f) {
            Err(e) => {
                assert_eq!(e.code, ErrorCode::GuiUnavailable);
                e.message
            }
            Ok(()) => String::new(),
        }
    }

    #[test]
    fn a_session_at_the_screen_is_fine() {
        assert!(check_session(&at_screen()).is_ok());
        // SSH into a process that still reaches the window server (launchctl asuser) is fine.
        assert!(check_session(&SessionFacts {
            ssh: true,
            ..at_screen()
        })
        .is_ok());
    }

    #[test]
    fn a_daemon_ssh_or_no_window_server_is_told_to_run_as_an_agent() {
        let daemon = reason(&SessionFacts {
            root: true,
            window_server: false,
            ..at_screen()
        });
        assert!(
            daemon.contains("LaunchDaemon") && daemon.contains("~/Library/LaunchAgents"),
            "{daemon}"
        );
        let ssh = reason(&SessionFacts {
            ssh: true,
            window_server: false,
            ..at_screen()
        });
        assert!(
            ssh.contains("SSH") && ssh.contains("ada's") && ssh.contains("LaunchAgent"),
            "{ssh}"
        );
        let ssh_nobody = reason(&SessionFacts {
            ssh: true,
            window_server: false,
            console_user: Some("loginwindow".into()),
            ..at_screen()
        });
        assert!(ssh_nobody.contains("log in first"), "{ssh_nobody}");
        let none = reason(&SessionFacts {
            window_server: false,
            ..at_screen()
        });
        assert!(
            none.contains("window server") && none.contains("launchctl bootstrap"),
            "{none}"
        );
    }

    #[test]
    fn nobody_logged_in_or_another_user_in_front() {
        for user in [None, Some("loginwindow"), Some("")] {
            let r = reason(&SessionFacts {
                console_user: user.map(str::to_string),
                ..at_screen()
            });
            assert!(r.contains("nobody is logged in") && r.contains("log in"), "{r}");
        }
        let switched = reason(&SessionFacts {
            console_user: Some("bob".into()),
            on_console: Some(false),
            ..at_screen()
        });
        assert!(
            switched.contains("bob switched in") && switched.contains("switch back"),
            "{switched}"
        );
    }
}
