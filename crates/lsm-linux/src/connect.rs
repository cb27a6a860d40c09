//! Picks the window system of the session lsm finds (GNOME or KDE on Wayland, else X11, also
//! XWayland's display) and assembles the backend from the AT-SPI half and that window system's
//! half; and the checks `lsm doctor` runs before connecting.

use crate::backend::LinuxBackend;
use crate::{doctor, session, wayland};
use async_trait::async_trait;
use lsm_core::{BackendConnector, DesktopBackend, GuiError, GuiResult};
use std::sync::Arc;

/// Detects the session and connects on first use.
#[derive(Default)]
pub struct LinuxConnector;

#[async_trait]
impl BackendConnector for LinuxConnector {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        let session = tokio::task::spawn_blocking(session::discover)
            .await
            .map_err(|e| GuiError::backend(format!("session discovery failed: {e}")))?;
        let force_x11 = std::env::var("LSM_SESSION").is_ok_and(|v| v.eq_ignore_ascii_case("x11"));
        let wayland =
            session.get("WAYLAND_DISPLAY").is_some() && session.get("XDG_SESSION_TYPE") != Some("x11");
        if wayland && !force_x11 {
            let bus = session.get("DBUS_SESSION_BUS_ADDRESS");
            let xwayland = session.get("DISPLAY").is_some();
            match wayland::gnome::Gnome::connect(bus).await {
                Ok(Some(g)) => return Ok(Arc::new(LinuxBackend::connect_gnome(&session, g).await?)),
                Ok(None) => match wayland::kde::Kde::connect(bus, session.get("XDG_RUNTIME_DIR")).await {
                    Ok(Some(k)) => return Ok(Arc::new(LinuxBackend::connect_kde(&session, k).await?)),
                    Ok(None) if xwayland => {
                        tracing::info!(
                            "a Wayland session that is neither GNOME nor KDE: only XWayland's windows are reachable"
                        );
                    }
                    Ok(None) => {
                        return Err(GuiError::unavailable(
                            "a Wayland session without GNOME Shell or KWin and without XWayland's DISPLAY: lsm supports \
                             GNOME and KDE Plasma on Wayland (and X11 applications through XWayland); this compositor is \
                             not supported yet",
                        ))
                    }
                    Err(e) => return Err(e),
                },
                Err(e) if xwayland && e.code == lsm_core::ErrorCode::GuiUnavailable => {
                    return Err(GuiError::unavailable(format!(
                        "{}. To reach only X11 (XWayland) applications meanwhile, start lsm with LSM_SESSION=x11",
                        e.message
                    )))
                }
                Err(e) => return Err(e),
            }
        }
        if session.get("DISPLAY").is_none() {
            return Err(GuiError::unavailable(format!(
                "no X11 or Wayland session found (looked in {})",
                session.looked.join(", ")
            )));
        }
        Ok(Arc::new(LinuxBackend::connect(&session).await?))
    }

    async fn preflight(&self) -> Vec<lsm_core::doctor::Item> {
        let Ok(session) = tokio::task::spawn_blocking(session::discover).await else {
            return Vec::new();
        };
        let mut items = vec![doctor::session_item(&session)];
        let forced_x11 = std::env::var("LSM_SESSION").is_ok_and(|v| v.eq_ignore_ascii_case("x11"));
        if !forced_x11 {
            let s = session.clone();
            if let Ok(Some(item)) =
                tokio::task::spawn_blocking(move || doctor::gnome_extension_item(&s)).await
            {
                items.push(item);
            }
        }
        items
    }

    fn connect_hint(&self) -> &'static str {
        doctor::CONNECT_HINT
    }
}
