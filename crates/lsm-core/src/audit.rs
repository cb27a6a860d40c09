//! The audit log: one JSON line per `gui_action` or web UI input that reached the desktop
//! (time, machine, window, who asked, the actions, the result), appended to `audit.jsonl` in the
//! state directory of the machine whose desktop received it, and rotated by size. Text that went
//! into a password field is never written: it is replaced by a marker, as is every text a person
//! typed through the web UI (lsm cannot tell which field had the focus there).

use crate::action::{ActionSpec, Where};
use crate::error::GuiResult;
use crate::geometry::Point;
use crate::model::{is_secret, WindowInfo};
use crate::output::ActionOutput;
use crate::state::ElementRef;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What replaces text that may be a secret.
pub const MASK: &str = "[not recorded: password field]";
/// What replaces text a person typed on the web UI.
pub const MASK_HUMAN: &str = "[not recorded: typed on the web UI]";

/// The file's name in the state directory.
pub const FILE_NAME: &str = "audit.jsonl";
/// Rotated when it reaches this size.
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
/// How many rotated files are kept (`audit.jsonl.1` is the newest).
pub const DEFAULT_KEEP: usize = 5;

/// Who asked for the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Face {
    /// A model through MCP (`gui_action`).
    Mcp,
    /// A person through the web UI's Desktop page.
    Web,
}

#[derive(Serialize)]
struct Entry<'a> {
    time: String,
    machine: &'a str,
    face: Face,
    /// The MCP session or web session (never a credential), as the face named it.
    who: &'a str,
    window_id: &'a str,
    title: &'a str,
    app: &'a str,
    actions: Value,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorPart<'a>>,
    /// Per action that ran: its index, whether it worked, how.
    results: Vec<ResultPart<'a>>,
    #[serde(skip_serializing_if = "no_indices")]
    not_run: &'a [usize],
}

fn no_indices(list: &&[usize]) -> bool {
    list.is_empty()
}

#[derive(Serialize)]
struct ErrorPart<'a> {
    code: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct ResultPart<'a> {
    index: usize,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
}

/// One input to record.
pub struct Record<'a> {
    pub machine: &'a str,
    pub face: Face,
    pub who: &'a str,
    pub window: &'a WindowInfo,
    /// The actions as the caller sent them, secrets already masked ([`mask_texts`]).
    pub actions: Value,
    pub result: &'a GuiResult<ActionOutput>,
}

/// The append-only log file with its rotation.
pub struct AuditLog {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    file: Mutex<Option<File>>,
}

impl AuditLog {
    /// The log in `dir` (created, private to the user), rotated at `max_bytes`, keeping `keep`
    /// older files.
    pub fn open(dir: &Path, max_bytes: u64, keep: usize) -> io::Result<Self> {
        Self::open_named(dir, FILE_NAME, max_bytes, keep)
    }

    /// [`AuditLog::open`] with another file name.
    pub fn open_named(dir: &Path, name: &str, max_bytes: u64, keep: usize) -> io::Result<Self> {
        if !dir.as_os_str().is_empty() {
            create_private_dir(dir)?;
        }
        let path = dir.join(name);
        let file = open_append(&path)?;
        Ok(Self {
            path,
            max_bytes: max_bytes.max(1024),
            keep,
            file: Mutex::new(Some(file)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line. A failure to write is logged (without the entry) and never fails
    /// the action it records.
    pub fn write(&self, record: Record<'_>) {
        let line = match serde_json::to_string(&entry(&record)) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("audit: an entry could not be serialised: {e}");
                return;
            }
        };
        let mut slot = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = self.append(&mut slot, &line) {
            tracing::warn!("audit: writing {} failed: {e}", self.path.display());
        }
    }

    fn append(&self, slot: &mut Option<File>, line: &str) -> io::Result<()> {
        let size = match slot.as_ref() {
            Some(f) => f.metadata()?.len(),
            None => 0,
        };
        if slot.is_none() || size + line.len() as u64 + 1 > self.max_bytes && size > 0 {
            *slot = None;
            if size > 0 {
                self.rotate()?;
            }
            *slot = Some(open_append(&self.path)?);
        }
        let file = slot.as_mut().ok_or_else(|| io::Error::other("no audit file"))?;
        file.write_all(format!("{line}\n").as_bytes())?;
        file.flush()
    }

    /// `audit.jsonl` becomes `.1`, `.1` becomes `.2`…; the oldest beyond `keep` is removed.
    fn rotate(&self) -> io::Result<()> {
        let numbered = |n: usize| PathBuf::from(format!("{}.{n}", self.path.display()));
        if self.keep == 0 {
            return std::fs::remove_file(&self.path);
        }
        let _ = std::fs::remove_file(numbered(self.keep));
        for n in (1..self.keep).rev() {
            if numbered(n).exists() {
                std::fs::rename(numbered(n), numbered(n + 1))?;
            }
        }
        std::fs::rename(&self.path, numbered(1))
    }
}

fn entry<'a>(r: &'a Record<'a>) -> Entry<'a> {
    let (ok, error, results, not_run): (bool, Option<ErrorPart<'a>>, Vec<ResultPart<'a>>, &'a [usize]) =
        match r.result {
            Ok(out) => (
                out.ok,
                None,
                out.results
                    .iter()
                    .map(|x| ResultPart {
                        index: x.index,
                        ok: x.ok,
                        method: x.method.as_deref(),
                    })
                    .collect(),
                &out.not_run,
            ),
            Err(e) => (
                false,
                Some(ErrorPart {
                    code: e.code.as_str(),
                    message: &e.message,
                }),
                Vec::new(),
                &[],
            ),
        };
    Entry {
        time: now_rfc3339(),
        machine: r.machine,
        face: r.face,
        who: r.who,
        window_id: &r.window.window_id,
        title: &r.window.title,
        app: &r.window.app,
        actions: r.actions.clone(),
        ok,
        error,
        results,
        not_run,
    }
}

/// UTC with milliseconds, e.g. `2026-12-04T03:41:07.123Z`.
fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    now.format(&format)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

fn open_append(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// The indices of the actions whose text may go into a password field, from the observation
/// the actions were checked against: text for a password element, and text typed while the
/// focus may be in one (focused at observation time, or clicked or focused by an earlier action
/// of the call, by element or at a point inside it; after a key that may move the focus, as
/// soon as the window has a password field at all).
pub fn secret_text_actions(
    specs: &[ActionSpec],
    elements: &HashMap<String, ElementRef>,
    to_logical: impl Fn(Point) -> Point,
) -> Vec<usize> {
    let secret_id = |id: &str| elements.get(id).is_some_and(|e| is_secret(&e.role));
    let any_secret = elements.values().any(|e| is_secret(&e.role));
    // The smallest element containing the point decides (a field inside its form).
    let secret_at = |p: Point| {
        let p = to_logical(p);
        elements
            .values()
            .filter_map(|e| {
                e.bounds
                    .filter(|b| b.contains(p))
                    .map(|b| (b.width as i64 * b.height as i64, e))
            })
            .min_by_key(|(area, _)| *area)
            .map(|(_, e)| is_secret(&e.role))
    };
    let mut focus_secret = elements
        .values()
        .any(|e| is_secret(&e.role) && e.states.iter().any(|s| s == "focused"));
    let mut out = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        match spec {
            ActionSpec::Click {
                at: Where::Element(id),
                ..
            }
            | ActionSpec::Focus { element: Some(id) } => focus_secret = secret_id(id),
            ActionSpec::Click {
                at: Where::Point(p), ..
            } => {
                if let Some(s) = secret_at(*p) {
                    focus_secret = s;
                }
            }
            ActionSpec::Key { combo } if may_move_focus(combo) => focus_secret = focus_secret || any_secret,
            ActionSpec::Type { element, .. } => {
                if let Some(id) = element {
                    focus_secret = secret_id(id);
                }
                if focus_secret {
                    out.push(i);
                }
            }
            ActionSpec::SetValue { element, .. } if secret_id(element) => out.push(i),
            _ => {}
        }
    }
    out
}

/// Whether a key may move the keyboard focus to another field: Tab (with any modifier), Return
/// (forms that advance), F6 (panes), and Alt with a key (mnemonics).
fn may_move_focus(combo: &crate::input::KeyCombo) -> bool {
    let key = combo.key.as_deref().unwrap_or("").to_lowercase();
    matches!(
        key.as_str(),
        "tab" | "iso_left_tab" | "return" | "kp_enter" | "f6"
    ) || (combo.modifiers.contains(&crate::input::Modifier::Alt) && !key.is_empty())
}

/// The actions with the `text`/`value` of the listed indices replaced by `marker`.
pub fn mask_texts(actions: &Value, indices: &[usize], marker: &str) -> Value {
    let mut out = actions.clone();
    if let Some(list) = out.as_array_mut() {
        for i in indices {
            if let Some(Value::Object(action)) = list.get_mut(*i) {
                for field in ["text", "value"] {
                    if action.contains_key(field) {
                        action.insert(field.to_string(), Value::String(marker.to_string()));
                    }
                }
            }
        }
    }
    out
}

/// A name for a session in the log that does not give its token away (a web UI cookie, an MCP
/// session id, both long and random): `kind` and a short hash of it.
pub fn session_label(kind: &str, token: &str) -> String {
    format!(
        "{kind}:{:08x}",
        xxhash_rust::xxh3::xxh3_64(token.as_bytes()) as u32
    )
}

/// Every action that carries text (`type`), for input from a person.
pub fn typing_actions(specs: &[ActionSpec]) -> Vec<usize> {
    specs
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, ActionSpec::Type { .. } | ActionSpec::SetValue { .. }))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::parse_actions;
    use crate::geometry::Rect;
    use crate::limits::Limits;
    use serde_json::json;

    fn el(id: &str, role: &str, bounds: Rect, states: &[&str]) -> (String, ElementRef) {
        (
            id.to_string(),
            ElementRef {
                id: id.into(),
                native: String::new(),
                key: String::new(),
                role: role.into(),
                name: String::new(),
                bounds: Some(bounds),
                states: states.iter().map(|s| s.to_string()).collect(),
                actions: Vec::new(),
            },
        )
    }

    fn login_form(focused_password: bool) -> HashMap<String, ElementRef> {
        let pw_states: &[&str] = if focused_password { &["focused"] } else { &[] };
        [
            el("e1", "frame", Rect::new(0, 0, 400, 300), &[]),
            el("e2", "text", Rect::new(10, 10, 200, 30), &[]),
            el("e3", "password_text", Rect::new(10, 50, 200, 30), pw_states),
        ]
        .into_iter()
        .collect()
    }

    fn secret(actions: Value, focused_password: bool) -> Vec<usize> {
        let specs = parse_actions(&actions, &Limits::default()).expect("valid actions");
        secret_text_actions(&specs, &login_form(focused_password), |p| p)
    }

    #[test]
    fn text_for_a_password_field_is_found_by_element_point_focus_and_keys() {
        // By element, and by set_value.
        assert_eq!(
            secret(
                json!([{"type": "type", "element_id": "e2", "text": "grace"},
                       {"type": "type", "element_id": "e3", "text": "hunter2"},
                       {"type": "set_value", "element_id": "e3", "value": "hunter2"},
                       {"type": "set_value", "element_id": "e2", "value": "grace"}]),
                false
            ),
            [1, 2]
        );
        // A click into the field, then typing without an element; a click elsewhere ends it.
        assert_eq!(
            secret(
                json!([{"type": "click", "x": 20, "y": 60}, {"type": "type", "text": "hunter2"},
                       {"type": "click", "x": 20, "y": 20}, {"type": "type", "text": "grace"}]),
                false
            ),
            [1]
        );
        // Focused when observed.
        assert_eq!(secret(json!([{"type": "type", "text": "hunter2"}]), true), [0]);
        assert!(secret(json!([{"type": "type", "text": "grace"}]), false).is_empty());
        // Keys that do not move the focus change nothing; Tab may move it into the field.
        assert!(secret(
            json!([{"type": "click", "element_id": "e2"}, {"type": "key", "keys": "ctrl+a"},
                   {"type": "type", "text": "grace"}]),
            false
        )
        .is_empty());
        assert_eq!(
            secret(
                json!([{"type": "click", "element_id": "e2"}, {"type": "type", "text": "grace"},
                       {"type": "key", "keys": "Tab"}, {"type": "type", "text": "hunter2"}]),
                false
            ),
            [3]
        );
        // The focus action counts like a click.
        assert_eq!(
            secret(
                json!([{"type": "focus", "element_id": "e3"}, {"type": "type", "text": "x"}]),
                false
            ),
            [1]
        );
    }

    #[test]
    fn masking_replaces_only_the_listed_texts() {
        let actions = json!([{"type": "type", "text": "grace"}, {"type": "type", "text": "hunter2"},
                             {"type": "click", "x": 1, "y": 2}]);
        let masked = mask_texts(&actions, &[1, 2, 9], MASK);
        assert_eq!(masked[0]["text"], "grace");
        assert_eq!(masked[1]["text"], MASK);
        assert_eq!(masked[2], actions[2]);
        assert!(!masked.to_string().contains("hunter2"));
        let specs = parse_actions(&actions, &Limits::default()).expect("valid");
        assert_eq!(typing_actions(&specs), [0, 1]);
        let label = session_label("web", "0123456789abcdef0123456789abcdef");
        assert!(
            label.starts_with("web:") && label.len() == 12 && !label.contains("0123456789"),
            "{label}"
        );
    }

    fn window() -> WindowInfo {
        WindowInfo::new("0x1", "Login", "demo", Rect::new(0, 0, 400, 300))
    }

    #[test]
    fn lines_are_appended_as_json_and_rotated_by_size() {
        let dir = std::env::temp_dir().join(format!("lsm-audit-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = AuditLog::open(&dir, 1024, 2).expect("opens");
        let result: GuiResult<ActionOutput> =
            Err(crate::GuiError::new(crate::ErrorCode::WindowChanged, "moved"));
        for n in 0..20 {
            log.write(Record {
                machine: "local",
                face: Face::Mcp,
                who: "mcp:stdio",
                window: &window(),
                actions: json!([{"type": "type", "text": format!("entry {n}")}]),
                result: &result,
            });
        }
        let current = std::fs::read_to_string(log.path()).expect("reads");
        let last: Value = serde_json::from_str(current.lines().last().expect("a line")).expect("json");
        assert_eq!(last["actions"][0]["text"], "entry 19");
        assert_eq!(last["error"]["code"], "WINDOW_CHANGED");
        assert_eq!(
            (last["face"].as_str(), last["title"].as_str()),
            (Some("mcp"), Some("Login"))
        );
        assert!(
            last["time"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z') && t.len() == 24),
            "{last}"
        );
        assert!(current.len() <= 1024, "{}", current.len());
        assert!(dir.join("audit.jsonl.1").exists() && dir.join("audit.jsonl.2").exists());
        assert!(!dir.join("audit.jsonl.3").exists(), "only two old files are kept");
        let all: String = ["audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"]
            .iter()
            .map(|f| std::fs::read_to_string(dir.join(f)).unwrap_or_default())
            .collect();
        assert!(all.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(log.path()).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
