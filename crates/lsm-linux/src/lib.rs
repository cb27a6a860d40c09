//! The Linux desktop backend of lsm: AT-SPI over D-Bus for elements and semantic actions, X11
//! (XTest, GetImage/Composite) for windows, capture and raw input. Nothing connects until the
//! first GUI call.

mod app_name;
pub mod atspi;
mod atspi_act;
mod atspi_apps;
mod atspi_verify;
pub mod backend;
mod cache;
mod frames;
mod fresh;
mod list;
mod modal;
mod on_screen;
mod perform;
mod perform_check;
pub mod session;
mod shm;
mod walk;
pub mod wayland;
pub mod x11;

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
        if session.get("DISPLAY").is_none() {
            let why = if session.get("WAYLAND_DISPLAY").is_some() {
                "a Wayland session without XWayland's DISPLAY was found; the Wayland backend is not built yet"
                    .to_string()
            } else {
                format!(
                    "no X11 or Wayland session found (looked in {})",
                    session.looked.join(", ")
                )
            };
            return Err(GuiError::unavailable(why));
        }
        Ok(Arc::new(backend::LinuxBackend::connect(&session).await?))
    }
}
