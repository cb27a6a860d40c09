//! The last way to a window's pixels on GNOME: the desktop portal's `Screenshot` of the whole
//! screen (`interactive=false`), cut to the window by the caller. Only the visible pixels are
//! there: parts covered by other windows show those windows.
//!
//! The portal asks the user once ("Allow applications to take screenshots?") unless its
//! permission store already says yes for unsandboxed programs (table `screenshot`, id
//! `screenshot`, app id ""). lsm uses the portal only where that answer is stored, so a capture
//! never waits on a dialog; the refusal says how to store it.

use super::{within, CALL_TIMEOUT};
use crate::wayland::dbus;
use ashpd::desktop::screenshot::Screenshot;
use lsm_core::{GuiError, GuiResult, RgbaImage};
use std::collections::HashMap;
use std::time::Duration;
use zbus::zvariant::OwnedValue;

const STORE: &str = "org.freedesktop.impl.portal.PermissionStore";
const STORE_PATH: &str = "/org/freedesktop/impl/portal/PermissionStore";
/// Bound on the portal's answer (measured: about 0.5 s for a 1280x800 screen).
const ANSWER_WAIT: Duration = Duration::from_secs(8);

/// How to store the user's yes, for the refusal message.
pub const GRANT_HINT: &str = "store the answer once: gdbus call --session --dest \
     org.freedesktop.impl.portal.PermissionStore --object-path /org/freedesktop/impl/portal/PermissionStore \
     --method org.freedesktop.impl.portal.PermissionStore.SetPermission screenshot true screenshot '' \"['yes']\" \
     (or `flatpak permission-set screenshot screenshot '' yes`), then restart lsm";

/// The permission store's entry, as `Lookup` answers it.
type Entry = (HashMap<String, Vec<String>>, OwnedValue);

/// None when the portal will take screenshots for lsm without asking; else why not.
pub async fn refusal(conn: &zbus::Connection) -> Option<String> {
    let entry: GuiResult<Entry> = dbus::call(
        conn,
        STORE,
        STORE_PATH,
        STORE,
        "Lookup",
        &("screenshot", "screenshot"),
    )
    .await;
    match entry {
        Ok((apps, _)) if granted(&apps) => None,
        Ok(_) => Some(format!(
            "the desktop portal's Screenshot would ask the user first (no stored yes for unsandboxed programs): {GRANT_HINT}"
        )),
        Err(e) if e.message.contains("NotFound") => Some(format!(
            "the desktop portal's Screenshot would ask the user first (nothing stored yet): {GRANT_HINT}"
        )),
        Err(e) => Some(format!("the desktop portal's permission store did not answer: {}", e.message)),
    }
}

/// Whether unsandboxed programs (app id "") may take screenshots without a dialog.
fn granted(apps: &HashMap<String, Vec<String>>) -> bool {
    apps.get("")
        .is_some_and(|v| v.first().is_some_and(|s| s == "yes"))
}

/// The whole screen, in the screenshot's px (the stage's).
pub async fn take(conn: &zbus::Connection) -> GuiResult<RgbaImage> {
    let request = Screenshot::request()
        .connection(Some(conn.clone()))
        .interactive(false)
        .modal(false)
        .send();
    let answer = within("Screenshot", ANSWER_WAIT, request).await?;
    let shot = answer
        .response()
        .map_err(|e| super::portal_error("Screenshot", e))?;
    let uri = shot.uri().as_str();
    let path = file_path(uri)
        .ok_or_else(|| GuiError::backend(format!("the portal's screenshot is not a local file: {uri}")))?;
    let read = tokio::time::timeout(CALL_TIMEOUT, tokio::fs::read(&path))
        .await
        .map_err(|_| GuiError::timeout(format!("reading {path}")))?
        .map_err(|e| GuiError::backend(format!("reading the portal's screenshot {path}: {e}")))?;
    // The file is lsm's by-product in the user's folder: it goes once read.
    if let Err(e) = tokio::fs::remove_file(&path).await {
        tracing::warn!("could not remove the portal's screenshot {path}: {e}");
    }
    tokio::task::spawn_blocking(move || crate::wayland::stream_frames::decode_png(&read))
        .await
        .map_err(|e| GuiError::backend(format!("decoding task failed: {e}")))?
}

/// The local path of a `file://` URI (percent escapes decoded); None for any other URI.
fn file_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let mut out = Vec::with_capacity(rest.len());
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(out).ok()?;
    path.starts_with('/').then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths_and_others_do_not() {
        assert_eq!(
            file_path("file:///home/u/Screenshot.png").as_deref(),
            Some("/home/u/Screenshot.png")
        );
        assert_eq!(
            file_path("file:///home/u/Screenshot%20from%202026.png").as_deref(),
            Some("/home/u/Screenshot from 2026.png")
        );
        assert_eq!(file_path("https://example.org/a.png"), None);
        assert_eq!(file_path("file://host/a.png"), None);
        assert_eq!(file_path("file:///a%2"), None);
    }

    #[test]
    fn only_a_stored_yes_for_unsandboxed_programs_counts() {
        let store = |app: &str, v: &str| HashMap::from([(app.to_string(), vec![v.to_string()])]);
        assert!(granted(&store("", "yes")));
        assert!(!granted(&store("", "no")));
        assert!(!granted(&store("org.example.App", "yes")));
        assert!(!granted(&HashMap::new()));
    }
}
