//! `lsm doctor` on Linux: the session and how it was found (from `session::discover`, the
//! function `connect` uses), and after connecting what only this backend knows: the
//! accessibility bus and which applications are on it, the input path, the GNOME extension and
//! KWin scripts. Capture and the window list are probed by the core with the backend's own calls.

use crate::backend::LinuxBackend;
use crate::session::Session;
use crate::windowing::WindowSystem;
use lsm_core::doctor::Item;
use lsm_core::WindowInfo;
use std::collections::BTreeSet;

/// What to do when no display could be opened.
pub const CONNECT_HINT: &str = "check that the display named above is running and that this user may open it \
     (the same DISPLAY and XAUTHORITY as a terminal on that desktop; `xdpyinfo` works there), or run lsm inside \
     the graphical session";

const ACCESSIBILITY_HINT: &str = "start the accessibility bus with the session (GNOME, KDE and Xfce do; \
     elsewhere run `/usr/libexec/at-spi-bus-launcher --launch-immediately &` in the session), let lsm inherit \
     the session's DBUS_SESSION_BUS_ADDRESS (or AT_SPI_BUS_ADDRESS), and on GNOME run `gsettings set \
     org.gnome.desktop.interface toolkit-accessibility true`; restart applications started before the bus. \
     Without it lsm sees screenshots and acts by coordinates only";

/// How to give each toolkit's applications an accessibility tree.
const TOOLKITS_HINT: &str = "restart them with accessibility on: GTK: unset NO_AT_BRIDGE; Qt: \
     QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1; Chromium/Electron: --force-renderer-accessibility; Java: enable the \
     ATK wrapper (assistive_technologies=org.GNOME.Accessibility.AtkWrapper in ~/.accessibility.properties, \
     package libatk-wrapper-java); LibreOffice: the GTK 3 front end (SAL_USE_VCLPLUGIN=gtk3). Terminals such \
     as xterm have none: the model uses screenshots and coordinates there";

/// The session item: which display, and whether it was inherited or recovered.
pub fn session_item(session: &Session) -> Item {
    let origin = |k: &str| {
        session
            .origins
            .get(k)
            .map(String::as_str)
            .unwrap_or(crate::session::INHERITED)
    };
    let wayland = session.get("WAYLAND_DISPLAY");
    let display = session.get("DISPLAY");
    let force_x11 = std::env::var("LSM_SESSION").is_ok_and(|v| v.eq_ignore_ascii_case("x11"));
    let mut parts = Vec::new();
    let kind =
        match (wayland, display) {
            (Some(w), _) if !force_x11 && session.get("XDG_SESSION_TYPE") != Some("x11") => {
                parts.push(format!("WAYLAND_DISPLAY={w} ({})", origin("WAYLAND_DISPLAY")));
                if let Some(d) = display {
                    parts.push(format!("XWayland DISPLAY={d} ({})", origin("DISPLAY")));
                }
                "Wayland"
            }
            (_, Some(d)) => {
                parts.push(format!("DISPLAY={d} ({})", origin("DISPLAY")));
                "X11"
            }
            _ => return Item::fail(
                "session",
                "Session",
                format!(
                    "no X11 or Wayland display found (looked in {})",
                    session.looked.join(", ")
                ),
            )
            .with_hint(
                "run lsm inside the graphical session (a terminal on the desktop), or give it the session's \
                 DISPLAY (X11), or WAYLAND_DISPLAY and XDG_RUNTIME_DIR (Wayland)",
            ),
        };
    match session.get("DBUS_SESSION_BUS_ADDRESS") {
        Some(_) => parts.push(format!("session bus {}", origin("DBUS_SESSION_BUS_ADDRESS"))),
        None => parts.push("no session bus address".into()),
    }
    Item::ok("session", "Session", format!("{kind}: {}", parts.join(", ")))
}

/// GNOME on Wayland: whether lsm's Shell extension is installed and enabled (it must be before
/// lsm can connect); None elsewhere.
pub fn gnome_extension_item(session: &Session) -> Option<Item> {
    let desktop = std::env::var("XDG_CURRENT_DESKTOP").unwrap_or_default();
    let wayland = session.get("WAYLAND_DISPLAY").is_some() && session.get("XDG_SESSION_TYPE") != Some("x11");
    if !wayland || !desktop.to_ascii_uppercase().contains("GNOME") {
        return None;
    }
    const TITLE: &str = "GNOME extension";
    let setup = "run `lsm setup gnome`, then log out and log in again once";
    let state = match crate::wayland::gnome::setup::install_state() {
        Ok(s) => s,
        Err(e) => return Some(Item::warn("gnome_extension", TITLE, e).with_hint(setup)),
    };
    let uuid = crate::wayland::gnome::setup::UUID;
    Some(match (state.installed, state.enabled) {
        (None, _) => {
            Item::fail("gnome_extension", TITLE, format!("{uuid} is not installed")).with_hint(setup)
        }
        (Some(dir), false) => Item::fail(
            "gnome_extension",
            TITLE,
            format!("{uuid} is installed in {} but not enabled", dir.display()),
        )
        .with_hint(setup),
        (Some(dir), true) => Item::ok(
            "gnome_extension",
            TITLE,
            format!(
                "{uuid} is installed in {} and enabled (if lsm still cannot reach it, log out and in once: \
                 GNOME Shell loads new extensions only at login)",
                dir.display()
            ),
        ),
    })
}

/// The checks only the connected Linux backend can make.
impl LinuxBackend {
    /// What `lsm doctor` can only learn from this backend, once connected.
    pub(crate) async fn linux_diagnosis(&self, windows: &[WindowInfo]) -> Vec<Item> {
        diagnose(self, windows).await
    }
}

async fn diagnose(backend: &LinuxBackend, windows: &[WindowInfo]) -> Vec<Item> {
    let mut items = vec![input_item(backend)];
    match (&backend.atspi, &backend.atspi_error) {
        (Some(atspi), _) => match atspi.applications().await {
            Ok(apps) => {
                let names: BTreeSet<&str> = apps
                    .iter()
                    .map(|a| a.name.as_str())
                    .filter(|n| !n.is_empty())
                    .collect();
                items.push(Item::ok(
                    "accessibility",
                    "Accessibility",
                    format!(
                        "AT-SPI bus reachable, {} application(s) on it: {}",
                        apps.len(),
                        names.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                ));
                items.push(accessible_apps_item(windows));
            }
            Err(e) => items
                .push(Item::fail("accessibility", "Accessibility", e.message).with_hint(ACCESSIBILITY_HINT)),
        },
        (None, error) => items.push(
            Item::fail(
                "accessibility",
                "Accessibility",
                format!(
                    "the AT-SPI accessibility bus is not reachable: {}",
                    error.as_deref().unwrap_or("not connected")
                ),
            )
            .with_hint(ACCESSIBILITY_HINT),
        ),
    }
    match &backend.ws {
        WindowSystem::Kde(k) => {
            items.push(Item::ok(
                "kde_scripts",
                "KWin scripts",
                format!("KWin's scripts answer: {} window(s) listed", windows.len()),
            ));
            if let Some(why) = k.capture_refusal() {
                items.push(Item::warn("capture", "Capture", why).with_hint(
                    "without it the model sees elements and acts by element or coordinates, with no screenshots",
                ));
            }
        }
        WindowSystem::Gnome(_) => items.push(Item::ok(
            "gnome_extension",
            "GNOME extension",
            format!("{} answers", crate::wayland::gnome::setup::UUID),
        )),
        WindowSystem::X11(_) => {}
    }
    items
}

fn input_item(backend: &LinuxBackend) -> Item {
    const TITLE: &str = "Input";
    match &backend.ws {
        WindowSystem::X11(x11) => {
            let xtest = x11.lock().map(|x| x.has_xtest()).unwrap_or(false);
            if xtest {
                Item::ok("input", TITLE, "XTest (X11): pointer and keyboard input")
            } else {
                Item::fail("input", TITLE, "the X server does not offer the XTEST extension").with_hint(
                    "start the X server with XTEST (Xorg and Xvfb load it unless `-extension XTEST` is given)",
                )
            }
        }
        WindowSystem::Gnome(g) => match g.portal_reason() {
            None => Item::ok("input", TITLE, "mutter's RemoteDesktop API (GNOME)"),
            Some(why) => Item::ok(
                "input",
                TITLE,
                format!("the desktop portal's RemoteDesktop ({why}); the user is asked once per lsm run"),
            ),
        },
        WindowSystem::Kde(_) => Item::ok("input", TITLE, "the desktop portal's RemoteDesktop (KDE Plasma)"),
    }
}

/// Which listed windows have no accessibility tree, with how to turn it on.
pub fn accessible_apps_item(windows: &[WindowInfo]) -> Item {
    const TITLE: &str = "Accessible applications";
    let without: BTreeSet<String> = windows
        .iter()
        .filter(|w| !w.accessible)
        .map(|w| match w.app_id.is_empty() || w.app_id == w.app {
            true => w.app.clone(),
            false => format!("{} ({})", w.app, w.app_id),
        })
        .collect();
    let with: BTreeSet<&str> = windows
        .iter()
        .filter(|w| w.accessible)
        .map(|w| w.app.as_str())
        .collect();
    let with = with.into_iter().collect::<Vec<_>>().join(", ");
    if without.is_empty() {
        return Item::ok(
            "accessible_apps",
            TITLE,
            match with.is_empty() {
                true => "no windows to judge".to_string(),
                false => format!("every listed window has an accessibility tree: {with}"),
            },
        );
    }
    Item::warn(
        "accessible_apps",
        TITLE,
        format!(
            "without an accessibility tree: {}{}",
            without.into_iter().collect::<Vec<_>>().join(", "),
            match with.is_empty() {
                true => String::new(),
                false => format!("; with one: {with}"),
            }
        ),
    )
    .with_hint(TOOLKITS_HINT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::doctor::Status;
    use lsm_core::Rect;

    fn session(vars: &[(&str, &str, Option<&str>)]) -> Session {
        let mut s = Session::default();
        for (k, v, origin) in vars {
            s.vars.insert((*k).into(), (*v).into());
            if let Some(o) = origin {
                s.origins.insert((*k).into(), (*o).into());
            }
        }
        s.looked.push("the process environment".into());
        s
    }

    #[test]
    fn the_session_says_how_the_display_was_found() {
        let inherited = session_item(&session(&[("DISPLAY", ":5", None)]));
        assert_eq!(inherited.status, Status::Ok);
        assert!(
            inherited
                .detail
                .contains("X11: DISPLAY=:5 (inherited from the environment)"),
            "{inherited:?}"
        );
        let recovered = session_item(&session(&[(
            "DISPLAY",
            ":0",
            Some("recovered from the socket /tmp/.X11-unix/X0"),
        )]));
        assert!(
            recovered.detail.contains("recovered from the socket"),
            "{recovered:?}"
        );
        let none = session_item(&session(&[]));
        assert_eq!(none.status, Status::Fail);
        assert!(none.detail.contains("looked in the process environment"));
        assert!(none.hint.is_some());
    }

    #[test]
    fn windows_without_a_tree_are_named_with_what_to_do() {
        let mut xterm = WindowInfo::new("0x1", "xterm", "XTerm", Rect::new(0, 0, 10, 10));
        xterm.accessible = false;
        xterm.app_id = "xterm".into();
        let gtk = WindowInfo::new("0x2", "Test", "testapp", Rect::new(0, 0, 10, 10));
        let item = accessible_apps_item(&[xterm, gtk.clone()]);
        assert_eq!(item.status, Status::Warn);
        assert!(item.detail.contains("XTerm (xterm)") && item.detail.contains("with one: testapp"));
        assert!(item
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("--force-renderer-accessibility")));
        assert_eq!(accessible_apps_item(&[gtk]).status, Status::Ok);
    }
}
