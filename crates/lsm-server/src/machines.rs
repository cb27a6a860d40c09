//! Name -> `GuiService`: this machine ("local") and the remote workers enrolled with this
//! controller. Every face (MCP, web UI) resolves the `machine` argument here.

use lsm_core::{ErrorCode, GuiError, GuiResult, GuiService};
use lsm_remote::Controller;
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
    remote: Option<Arc<Controller>>,
}

impl Machines {
    pub fn new(local: Arc<dyn GuiService>) -> Self {
        Self { local, remote: None }
    }

    /// This machine plus the workers that connect to `controller`.
    pub fn with_remote(local: Arc<dyn GuiService>, controller: Arc<Controller>) -> Self {
        Self {
            local,
            remote: Some(controller),
        }
    }

    /// The service for `machine` (None or "local": this machine). An enrolled worker that is
    /// not connected resolves too; its calls fail fast with MACHINE_OFFLINE.
    pub fn get(&self, machine: Option<&str>) -> GuiResult<Arc<dyn GuiService>> {
        match machine {
            None | Some("") | Some(LOCAL) => Ok(self.local.clone()),
            Some(other) => self
                .remote
                .as_ref()
                .and_then(|c| c.machine(other))
                .ok_or_else(|| {
                    GuiError::new(
                        ErrorCode::MachineUnknown,
                        format!(
                            "no machine named {other:?}; omit machine (or use \"local\") for this machine, \
                         gui_list shows the known machines"
                        ),
                    )
                }),
        }
    }

    /// Every known machine, this one first.
    pub fn list(&self) -> Vec<MachineInfo> {
        let mut all = vec![MachineInfo {
            name: LOCAL.into(),
            connected: true,
            platform: Some(std::env::consts::OS.into()),
            detail: None,
        }];
        if let Some(c) = &self.remote {
            all.extend(c.machines().into_iter().map(|m| MachineInfo {
                name: m.name,
                connected: m.connected,
                platform: m.platform,
                detail: m.detail,
            }));
        }
        all
    }
}
