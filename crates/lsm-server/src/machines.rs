//! Name -> `GuiService`. For now only the local machine; remote workers register here later.

use lsm_core::{ErrorCode, GuiError, GuiResult, GuiService};
use std::sync::Arc;

pub const LOCAL: &str = "local";

pub struct Machines {
    local: Arc<dyn GuiService>,
}

impl Machines {
    pub fn new(local: Arc<dyn GuiService>) -> Self {
        Self { local }
    }

    /// The service for `machine` (None or "local": this machine).
    pub fn get(&self, machine: Option<&str>) -> GuiResult<Arc<dyn GuiService>> {
        match machine {
            None | Some("") | Some(LOCAL) => Ok(self.local.clone()),
            Some(other) => Err(GuiError::new(
                ErrorCode::MachineUnknown,
                format!("no machine named {other:?}; omit machine (or use \"local\") for this machine"),
            )),
        }
    }
}
