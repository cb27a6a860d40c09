//! Per-application set-up on first contact: Chromium and Electron applications build their
//! accessibility tree only when asked (`AXManualAccessibility`, or `AXEnhancedUserInterface` for
//! older ones), so lsm asks once per process and says so in the observation; bringing an
//! application to the front and raising one of its windows before raw input.

use super::element::AxElement;
use crate::ax_errors::AxFailure;
use std::collections::HashSet;
use std::sync::Mutex;

/// Processes already asked to build their accessibility tree.
#[derive(Default)]
pub struct Awakened(Mutex<HashSet<i32>>);

impl Awakened {
    /// Asks the application to expose its tree, once per process. Returns a note for the
    /// observation the first time it was asked (the tree may take a moment to fill in).
    pub fn ensure(&self, app: &AxElement, pid: i32) -> Option<String> {
        let mut asked = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !asked.insert(pid) {
            return None;
        }
        // Chromium 88+ and Electron answer AXManualAccessibility; older Chromium only
        // AXEnhancedUserInterface (which also turns on window animations in some apps, so second).
        if app.set_flag("AXManualAccessibility", true).is_ok() {
            return Some(
                "asked the application to build its accessibility tree (AXManualAccessibility)".into(),
            );
        }
        if app.set_flag("AXEnhancedUserInterface", true).is_ok() {
            return Some(
                "asked the application to build its accessibility tree (AXEnhancedUserInterface)".into(),
            );
        }
        None
    }
}

/// Brings the application to the front and raises the window, so raw input reaches it.
pub fn bring_to_front(app: &AxElement, window: &AxElement) -> Result<(), AxFailure> {
    app.set_flag("AXFrontmost", true)?;
    match window.perform("AXRaise") {
        Ok(()) | Err(AxFailure::Unsupported) => {}
        Err(e) => return Err(e),
    }
    // The main window gets the keyboard; not every window can be main (panels), which is fine.
    let _ = window.set_flag("AXMain", true);
    Ok(())
}
