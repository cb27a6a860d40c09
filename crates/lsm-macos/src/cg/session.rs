//! Whether this process runs in a logged-in user's GUI session, read from the window server
//! without touching any application: `CGSessionCopyCurrentDictionary` is empty over SSH and in a
//! LaunchDaemon (no window server connection), and says whether the session is the one on the
//! console (fast user switching leaves others in the background).

use objc2_core_foundation::{CFBoolean, CFDictionary, CFRetained, CFString, CFType};
use objc2_core_graphics::CGSessionCopyCurrentDictionary;

/// The GUI session this process belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuiSession {
    pub user: String,
    /// The session is on the console (not switched away from).
    pub on_console: bool,
}

/// The current GUI session, or `None` when the process has none.
pub fn gui_session() -> Option<GuiSession> {
    let session = CGSessionCopyCurrentDictionary()?;
    // SAFETY: the session dictionary has CFString keys (CGSession.h's kCGSession… names, which
    // are macros, so spelled out here).
    let session: CFRetained<CFDictionary<CFString, CFType>> = unsafe { CFRetained::cast_unchecked(session) };
    let user = session
        .get(&CFString::from_str("kCGSSessionUserNameKey"))
        .and_then(|v| v.downcast::<CFString>().ok())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let on_console = session
        .get(&CFString::from_str("kCGSSessionOnConsoleKey"))
        .and_then(|v| v.downcast::<CFBoolean>().ok())
        .is_some_and(|b| b.as_bool());
    Some(GuiSession { user, on_console })
}
