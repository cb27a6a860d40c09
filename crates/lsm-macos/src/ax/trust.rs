//! Whether Accessibility is granted to this process, asked without the system prompt: a server
//! started by an MCP client must not pop a dialog; the error it answers with says where to grant
//! it ([`crate::permissions`]).

use objc2_application_services::{kAXTrustedCheckOptionPrompt, AXIsProcessTrustedWithOptions};
use objc2_core_foundation::{CFBoolean, CFDictionary, CFType};

/// True when this process may use the Accessibility API.
pub fn accessibility_trusted() -> bool {
    // SAFETY: the key is the framework's own constant; the dictionary maps it to a CFBoolean as
    // the call expects.
    unsafe {
        let key: &CFType = kAXTrustedCheckOptionPrompt.as_ref();
        let no: &CFType = CFBoolean::new(false).as_ref();
        let options = CFDictionary::<CFType, CFType>::from_slices(&[key], &[no]);
        AXIsProcessTrustedWithOptions(Some(options.as_opaque()))
    }
}
