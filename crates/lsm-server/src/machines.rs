//! Name -> `GuiService`: this machine ("local") and, later, the remote workers connected to
//! this controller. Every face (MCP, web UI) resolves the `machine` argument here.

use lsm_core::{ErrorCode, GuiError, GuiResult, GuiService};
use serde::Serialize;
use std::sync::Arc;

pub const LOCAL: &str = "local";

/// A machine as `gui_list` and the web UI show it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MachineInfo {
    pub name: String,
    /// True while GUI calls can reach it (always for `local`).
    pub connected: bool,
    /// `linux`, `windows`, `macos`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Why it is not connected, or other facts worth showing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

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

    /// Every known machine, this one first.
    pub fn list(&self) -> Vec<MachineInfo> {
        vec![MachineInfo {
            name: LOCAL.into(),
            connected: true,
            platform: Some(std::env::consts::OS.into()),
            detail: None,
        }]
    }
}
