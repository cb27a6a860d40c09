//! GNOME through the desktop portal, for when lsm cannot reach mutter's own remote-desktop API
//! (a sandbox, a shell that restricts it, or `LSM_GNOME_INPUT=portal`): one portal
//! remote-desktop session with the monitor shared, kept for lsm's whole run. Input is absolute
//! pointer motion on that monitor's stream; pixels are that stream cut to the window, so parts
//! covered by other windows show those windows. xdg-desktop-portal-gnome asks the user once per
//! session (portal 1.16); where the portal remembers grants, the restore token spares the dialog
//! next time (`wayland/portal/`). The window list still comes from lsm's Shell extension.

use crate::wayland::portal::{PortalSession, Screen};
use crate::wayland::stream_frames::FrameReader;
use lsm_core::{GuiError, GuiResult};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Environment switch: `portal` makes lsm use the portal even where mutter's API answers.
pub const FORCE_ENV: &str = "LSM_GNOME_INPUT";
/// How long the portal's dialog may wait for the user.
const START_WAIT: Duration = Duration::from_secs(300);
/// How long one call waits for the user's answer (below the service's 10 s bound on a backend
/// call); the ask goes on in the background, and a later call finds the answer.
const ANSWER_WAIT: Duration = Duration::from_secs(8);

/// Where the user's permission stands.
enum Grant {
    /// Not asked yet, or the session ended: the next call asks.
    Idle,
    /// The portal's dialog is up.
    Asking,
    Ready(Arc<PortalSession>),
    /// The user declined: not asked again during this run of lsm.
    Declined(GuiError),
    /// The ask failed otherwise: the next call gets this error, the one after asks again.
    Failed(GuiError),
}

/// Why the portal is used (None: mutter's own API is used). `mutter_on_bus`: whether
/// `org.gnome.Mutter.RemoteDesktop` has an owner on the session bus.
pub fn portal_reason(forced: Option<&str>, mutter_on_bus: bool) -> Option<String> {
    if forced.is_some_and(|v| v.eq_ignore_ascii_case("portal")) {
        return Some(format!("{FORCE_ENV}=portal"));
    }
    (!mutter_on_bus).then(|| {
        "mutter's remote-desktop API (org.gnome.Mutter.RemoteDesktop) is not on the session bus".into()
    })
}

/// The portal session and its screen's frames, started on first need.
pub struct GnomePortal {
    pub reason: String,
    grant: Arc<Mutex<Grant>>,
    answered: Arc<tokio::sync::Notify>,
    frames: tokio::sync::Mutex<Option<Arc<FrameReader>>>,
    last_input: Mutex<Option<Instant>>,
}

impl GnomePortal {
    pub fn new(reason: String) -> Self {
        Self {
            reason,
            grant: Arc::new(Mutex::new(Grant::Idle)),
            answered: Arc::new(tokio::sync::Notify::new()),
            frames: tokio::sync::Mutex::default(),
            last_input: Mutex::new(None),
        }
    }

    /// The session, started on first use. Starting it shows the user the portal's dialog;
    /// the ask runs in the background, so a call that ends before the user answers (with a
    /// TIMEOUT that says so; nothing was sent) leaves one dialog up, and the next call uses
    /// its answer instead of asking again.
    pub async fn session(&self, conn: &zbus::Connection) -> GuiResult<Arc<PortalSession>> {
        let deadline = tokio::time::Instant::now() + ANSWER_WAIT;
        loop {
            let answered = self.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            {
                let mut g = self.grant.lock().unwrap_or_else(|p| p.into_inner());
                match &*g {
                    Grant::Ready(s) => return Ok(s.clone()),
                    Grant::Declined(e) => return Err(e.clone()),
                    Grant::Failed(e) => {
                        let e = e.clone();
                        *g = Grant::Idle;
                        return Err(e);
                    }
                    Grant::Asking => {}
                    Grant::Idle => {
                        *g = Grant::Asking;
                        self.ask(conn.clone());
                    }
                }
            }
            if tokio::time::timeout_at(deadline, answered).await.is_err() {
                return Err(GuiError::timeout(format!(
                    "the user's answer to the desktop portal's remote-desktop dialog (lsm asked to control this \
                     desktop; {}): nothing was sent; answer the dialog on the screen, then call again",
                    self.reason
                )));
            }
        }
    }

    fn ask(&self, conn: zbus::Connection) {
        let (grant, answered) = (self.grant.clone(), self.answered.clone());
        tokio::spawn(async move {
            let result = match PortalSession::start(&conn, START_WAIT, true).await {
                // GNOME's portal drives a mutter remote-desktop session, which drops the first
                // keysym it is sent: a Shift press and release goes first.
                Ok(s) => prime_keyboard(&s).await.map(|()| s),
                Err(e) => Err(e),
            };
            let next = match result {
                Ok(s) => Grant::Ready(Arc::new(s)),
                Err(e) if e.message.contains("declined") => Grant::Declined(GuiError::unavailable(format!(
                    "{}; lsm will not ask again until it is restarted",
                    e.message
                ))),
                Err(e) => {
                    tracing::warn!("the desktop portal's session did not start: {}", e.message);
                    Grant::Failed(e)
                }
            };
            *grant.lock().unwrap_or_else(|p| p.into_inner()) = next;
            answered.notify_waiters();
        });
    }

    /// Forgets the session after a failed call (the user may have ended the sharing): the
    /// next call asks again.
    pub async fn drop_session(&self) {
        let old = std::mem::replace(
            &mut *self.grant.lock().unwrap_or_else(|p| p.into_inner()),
            Grant::Idle,
        );
        if let Grant::Ready(s) = old {
            s.close().await;
        }
        *self.frames.lock().await = None;
    }

    /// Ends the frame helper (the next screenshot starts a new one on the same session).
    pub async fn drop_frames(&self) {
        *self.frames.lock().await = None;
    }

    pub fn mark_input(&self) {
        *self.last_input.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    pub fn last_input(&self) -> Option<Instant> {
        *self.last_input.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The shared monitor and the helper reading it.
    pub async fn frames(&self, conn: &zbus::Connection) -> GuiResult<(Screen, Arc<FrameReader>)> {
        let session = self.session(conn).await?;
        let screen = session
            .screen
            .ok_or_else(|| GuiError::backend("the portal session has no screen"))?;
        let mut f = self.frames.lock().await;
        match &*f {
            Some(r) if r.alive() => Ok((screen, r.clone())),
            _ => {
                let remote = session.open_pipewire_remote().await?;
                let r = Arc::new(FrameReader::start(screen.node, Some(remote))?);
                *f = Some(r.clone());
                Ok((screen, r))
            }
        }
    }
}

async fn prime_keyboard(s: &PortalSession) -> GuiResult<()> {
    use crate::wayland::input::RemoteInput;
    s.keysym(super::mutter::PRIMING_KEYSYM, true).await?;
    s.keysym(super::mutter::PRIMING_KEYSYM, false).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_portal_is_used_when_forced_or_when_mutter_is_absent() {
        assert_eq!(portal_reason(None, true), None);
        assert_eq!(portal_reason(Some("mutter"), true), None);
        assert!(portal_reason(Some("Portal"), true).unwrap().contains(FORCE_ENV));
        assert!(portal_reason(None, false)
            .unwrap()
            .contains("not on the session bus"));
    }
}
