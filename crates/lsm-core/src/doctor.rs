//! `lsm doctor`'s report: whether this machine is ready for a model to see and act, item by
//! item, each with what was found and what to do. Platform-free: the backends produce the
//! items (`BackendConnector::preflight`, `DesktopBackend::diagnose`), the probe in
//! `doctor_probe.rs` runs them, and this module judges and renders the result.
//!
//! The JSON shape is a contract for scripts: `{"version", "platform", "ready", "items": [{"id",
//! "title", "status", "detail", "hint"?}]}`, `status` one of `ok`, `warn`, `fail`, `info`.

use serde::{Deserialize, Serialize};

/// How one item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Works.
    Ok,
    /// Works in part: the model can see and act, with less (e.g. one application without an
    /// accessibility tree).
    Warn,
    /// The model cannot see or act until this is fixed.
    Fail,
    /// Nothing to judge (e.g. the web UI's address).
    Info,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Info => "info",
        }
    }
}

/// One thing checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// Stable, for scripts: `session`, `desktop`, `accessibility`, `accessible_apps`,
    /// `windows`, `capture`, `input`, `gnome_extension`, `kde_scripts`, `windows_session`,
    /// `macos_session`, `macos_accessibility`, `macos_screen_recording`, `web_ui`.
    pub id: String,
    /// For people: what was checked.
    pub title: String,
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do (set whenever the status is `warn` or `fail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Item {
    pub fn new(id: &str, title: &str, status: Status, detail: impl Into<String>) -> Self {
        Item {
            id: id.into(),
            title: title.into(),
            status,
            detail: detail.into(),
            hint: None,
        }
    }
    pub fn ok(id: &str, title: &str, detail: impl Into<String>) -> Self {
        Self::new(id, title, Status::Ok, detail)
    }
    pub fn warn(id: &str, title: &str, detail: impl Into<String>) -> Self {
        Self::new(id, title, Status::Warn, detail)
    }
    pub fn fail(id: &str, title: &str, detail: impl Into<String>) -> Self {
        Self::new(id, title, Status::Fail, detail)
    }
    pub fn info(id: &str, title: &str, detail: impl Into<String>) -> Self {
        Self::new(id, title, Status::Info, detail)
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// The whole answer of `lsm doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// `lsm --version`'s text.
    pub version: String,
    /// `linux`, `windows`, `macos`.
    pub platform: String,
    /// True when no item failed: a model can see and act on this desktop.
    pub ready: bool,
    pub items: Vec<Item>,
}

impl Report {
    pub fn new(version: impl Into<String>, platform: impl Into<String>, items: Vec<Item>) -> Self {
        let ready = !items.is_empty() && items.iter().all(|i| i.status != Status::Fail);
        Report {
            version: version.into(),
            platform: platform.into(),
            ready,
            items,
        }
    }

    /// 0 only when a model can see and act; 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        u8::from(!self.ready)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// One line per item, its hint indented below it, and a verdict naming what failed.
    pub fn to_text(&self) -> String {
        let width = self.items.iter().map(|i| i.id.len()).max().unwrap_or(0);
        let mut out = format!("lsm {} on {}\n\n", self.version, self.platform);
        for item in &self.items {
            out.push_str(&format!(
                "  {:<4}  {:<width$}  {}: {}\n",
                item.status.label(),
                item.id,
                item.title,
                item.detail
            ));
            if let Some(hint) = &item.hint {
                out.push_str(&format!("        {:<width$}  -> {hint}\n", ""));
            }
        }
        out.push('\n');
        let failed: Vec<&str> = self
            .items
            .iter()
            .filter(|i| i.status == Status::Fail)
            .map(|i| i.id.as_str())
            .collect();
        if self.ready {
            out.push_str("READY: a model can see and act on this desktop.\n");
        } else if failed.is_empty() {
            out.push_str("NOT READY: nothing could be checked.\n");
        } else {
            out.push_str(&format!(
                "NOT READY: {} failed ({}); do what the arrows say and run `lsm doctor` again.\n",
                failed.len(),
                failed.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(status: Status) -> Report {
        Report::new(
            "0.1.0 (abc)",
            "linux",
            vec![
                Item::ok(
                    "session",
                    "Session",
                    "X11, DISPLAY=:1 (inherited from the environment)",
                ),
                Item::new("accessibility", "Accessibility", status, "AT-SPI bus")
                    .with_hint("turn accessibility on"),
                Item::info("web_ui", "Web UI", "no lsm serve is running"),
            ],
        )
    }

    #[test]
    fn ready_only_without_failures() {
        assert!(sample(Status::Ok).ready);
        assert_eq!(sample(Status::Ok).exit_code(), 0);
        assert!(sample(Status::Warn).ready);
        let failed = sample(Status::Fail);
        assert!(!failed.ready);
        assert_eq!(failed.exit_code(), 1);
        // Nothing checked is not ready either.
        assert!(!Report::new("v", "linux", Vec::new()).ready);
    }

    #[test]
    fn text_names_each_failure_and_what_to_do() {
        let text = sample(Status::Fail).to_text();
        assert!(text.contains("FAIL  accessibility"), "{text}");
        assert!(text.contains("-> turn accessibility on"), "{text}");
        assert!(text.contains("NOT READY: 1 failed (accessibility)"), "{text}");
        let ok = sample(Status::Ok).to_text();
        assert!(ok.contains("ok    session"), "{ok}");
        assert!(ok
            .trim_end()
            .ends_with("READY: a model can see and act on this desktop."));
    }

    #[test]
    fn json_has_the_documented_fields() {
        let v: serde_json::Value = serde_json::from_str(&sample(Status::Warn).to_json()).unwrap();
        assert_eq!(v["ready"], true);
        assert_eq!(v["platform"], "linux");
        assert_eq!(v["items"][1]["id"], "accessibility");
        assert_eq!(v["items"][1]["status"], "warn");
        assert_eq!(v["items"][1]["hint"], "turn accessibility on");
        // No hint: no field.
        assert!(v["items"][0].get("hint").is_none());
        let back: Report = serde_json::from_value(v).unwrap();
        assert_eq!(back, sample(Status::Warn));
    }
}
