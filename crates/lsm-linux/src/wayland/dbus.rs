//! One bounded D-Bus method call, the way every Wayland compositor API lsm talks to is called
//! (mutter, GNOME Shell's extension, KWin's scripting, the portals): a stuck compositor answers
//! with a timeout error, not a hang.

use lsm_core::{GuiError, GuiResult};
use std::time::Duration;

/// Bound on one call into the compositor.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(3);

/// One method call, bounded.
pub async fn call<B, R>(
    conn: &zbus::Connection,
    dest: &str,
    path: &str,
    iface: &str,
    method: &str,
    body: &B,
) -> GuiResult<R>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
    R: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
{
    let fut = conn.call_method(Some(dest), path, Some(iface), method, body);
    let reply = tokio::time::timeout(CALL_TIMEOUT, fut)
        .await
        .map_err(|_| GuiError::timeout(format!("{iface}.{method}")))?
        .map_err(|e| GuiError::backend(format!("{iface}.{method}: {e}")))?;
    reply
        .body()
        .deserialize::<R>()
        .map_err(|e| GuiError::backend(format!("{iface}.{method} answered unexpectedly: {e}")))
}
