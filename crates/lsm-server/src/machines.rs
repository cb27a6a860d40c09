//! Name -> `GuiService`: this machine ("local") and the remote workers enrolled with this
//! controller. Every face (MCP, web UI) resolves the `machine` argument here.

use lsm_core::person::Feed;
use lsm_core::{BackendInfo, ErrorCode, GuiError, GuiResult, GuiService, ListOutput};
use lsm_remote::Controller;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// How long `gui_list` waits for another machine to say whether its desktop answers.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

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
    /// Whether GUI calls work on it now: it is connected and lsm reached its desktop. A
    /// controller without a desktop of its own lists itself (`local`) with `false`.
    pub available: bool,
    /// Why GUI calls do not work there (no graphical session found, offline, no answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
}

/// What `gui_list` answers for this machine when it has no desktop: no windows, and why.
pub fn no_desktop(machine: &str, why: &GuiError) -> ListOutput {
    ListOutput {
        machine: machine.to_string(),
        backend: BackendInfo {
            name: "none".into(),
            platform: std::env::consts::OS.into(),
            session: "none".into(),
            capabilities: Vec::new(),
            notes: vec![format!(
                "no GUI on this machine: {}; the machines listed as available can be used with `machine`",
                why.message
            )],
        },
        windows: Vec::new(),
        truncated: false,
    }
}

pub struct Machines {
    local: Arc<dyn GuiService>,
    /// Every machine's activity and take-over state, for the web UI.
    feed: Arc<Feed>,
    remote: Option<Arc<Controller>>,
    /// Recent answers of the desktop probes of `gui_list`, by machine: with many machines,
    /// back-to-back listings ask each desktop once per [`PROBE_FRESH`], not once per call.
    probes: std::sync::Mutex<std::collections::HashMap<String, (std::time::Instant, GuiResult<()>)>>,
}

/// How long a desktop probe's answer is reused.
const PROBE_FRESH: Duration = Duration::from_secs(2);

impl Machines {
    pub fn new(local: Arc<dyn GuiService>) -> Self {
        Self {
            local,
            feed: Arc::new(Feed::new()),
            remote: None,
            probes: Default::default(),
        }
    }

    /// Reports on `feed` (the one this process's services publish to).
    pub fn with_feed(mut self, feed: Arc<Feed>) -> Self {
        self.feed = feed;
        self
    }

    pub fn feed(&self) -> &Arc<Feed> {
        &self.feed
    }

    /// This machine plus the workers that connect to `controller`.
    pub fn with_remote(local: Arc<dyn GuiService>, controller: Arc<Controller>) -> Self {
        Self {
            local,
            feed: Arc::new(Feed::new()),
            remote: Some(controller),
            probes: Default::default(),
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

    /// Every known machine, this one first. `available` is only what the link knows (connected);
    /// [`Machines::list_checked`] asks each desktop.
    pub fn list(&self) -> Vec<MachineInfo> {
        let mut all = vec![MachineInfo {
            name: LOCAL.into(),
            connected: true,
            platform: Some(std::env::consts::OS.into()),
            detail: None,
            available: true,
            unavailable_reason: None,
        }];
        if let Some(c) = &self.remote {
            all.extend(c.machines().into_iter().map(|m| MachineInfo {
                available: m.connected,
                unavailable_reason: (!m.connected).then(|| "not connected".to_string()),
                name: m.name,
                connected: m.connected,
                platform: m.platform,
                detail: m.detail,
            }));
        }
        all
    }

    /// Every known machine with whether its desktop answers now: `seen` is the answer of the one
    /// just listed (by name); the other connected ones are asked in parallel, briefly.
    pub async fn list_checked(&self, seen: (&str, &GuiResult<ListOutput>)) -> Vec<MachineInfo> {
        let mut all = self.list();
        let fresh: std::collections::HashMap<String, GuiResult<()>> = {
            let mut cache = self.probes.lock().unwrap_or_else(|p| p.into_inner());
            cache.retain(|_, (at, _)| at.elapsed() < PROBE_FRESH);
            cache.iter().map(|(k, (_, r))| (k.clone(), r.clone())).collect()
        };
        let probes: Vec<_> = all
            .iter()
            .map(|m| {
                let service = (m.connected && m.name != seen.0 && !fresh.contains_key(&m.name))
                    .then(|| self.get(Some(&m.name)).ok())
                    .flatten();
                service.map(|s| {
                    tokio::spawn(async move {
                        match tokio::time::timeout(PROBE_TIMEOUT, s.list()).await {
                            Ok(r) => r.map(|_| ()),
                            Err(_) => Err(GuiError::timeout("listing its windows")),
                        }
                    })
                })
            })
            .collect();
        let mut answers = Vec::with_capacity(probes.len());
        for (m, p) in all.iter().zip(probes) {
            answers.push(match p {
                Some(task) => {
                    let answer = task
                        .await
                        .unwrap_or_else(|e| Err(GuiError::backend(format!("probe failed: {e}"))));
                    self.probes
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(m.name.clone(), (std::time::Instant::now(), answer.clone()));
                    Some(answer)
                }
                None if m.connected => fresh.get(&m.name).cloned(),
                None => None,
            });
        }
        for (m, answer) in all.iter_mut().zip(answers) {
            let answer = if m.name == seen.0 {
                Some(seen.1.as_ref().map(|_| ()).map_err(Clone::clone))
            } else {
                answer
            };
            match answer {
                Some(Ok(())) => {
                    m.available = true;
                    m.unavailable_reason = None;
                }
                Some(Err(e)) => {
                    m.available = false;
                    m.unavailable_reason = Some(format!("{}: {}", e.code.as_str(), e.message));
                }
                None if !m.connected => {
                    m.available = false;
                    m.unavailable_reason = Some(format!(
                        "not connected ({})",
                        m.detail.as_deref().unwrap_or("no details")
                    ));
                }
                None => {}
            }
        }
        all
    }
}
