//! What backends report and what the tools return, in window-relative logical pixels.

use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::geometry::Rect;
use crate::image::RgbaImage;
use serde::{Deserialize, Serialize};

/// A top-level application window as listed by `gui_list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowInfo {
    /// Opaque, stable for the window's lifetime; pass it to `gui_state`/`gui_action`.
    pub window_id: String,
    pub title: String,
    /// The application's name for people ("Firefox", "LibreOffice Writer"), one per process.
    pub app: String,
    /// The window's class as the windowing system names it (X11: the WM_CLASS instance, e.g.
    /// "Navigator", "xterm"), for telling windows of similar applications apart.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub app_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Client area in screen logical pixels.
    pub bounds: Rect,
    pub focused: bool,
    #[serde(default)]
    pub minimized: bool,
    /// Whether an accessibility tree was found for the window.
    pub accessible: bool,
    /// For a dialog: the `window_id` of the window it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transient_for: Option<String>,
    /// A modal dialog: the window it belongs to (or, with no `transient_for`, the rest of its
    /// application) takes no input until it is closed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub modal: bool,
    /// The modal dialog that blocks this window: observe and act on that window instead
    /// (actions here are refused with `WINDOW_BLOCKED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<String>,
    /// The machine's policy for the model on this window (docs/policy.md), when it is not
    /// `allow`: `deny` (neither gui_state nor gui_action), `observe-only` (gui_state only) or
    /// `ask` (each gui_action needs a person's approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<crate::policy::Access>,
}

impl WindowInfo {
    /// A shown, accessible window with nothing else known (no pid, not focused): the base that
    /// backends and tests fill in.
    pub fn new(
        window_id: impl Into<String>,
        title: impl Into<String>,
        app: impl Into<String>,
        bounds: Rect,
    ) -> Self {
        WindowInfo {
            window_id: window_id.into(),
            title: title.into(),
            app: app.into(),
            app_id: String::new(),
            pid: None,
            bounds,
            focused: false,
            minimized: false,
            accessible: true,
            transient_for: None,
            modal: false,
            blocked_by: None,
            policy: None,
        }
    }
}

/// Which backend serves a machine and what it can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BackendInfo {
    /// e.g. `linux-x11`, `windows-uia`, `macos-ax`, `none`.
    pub name: String,
    /// `linux`, `windows`, `macos`.
    pub platform: String,
    /// e.g. `x11`, `wayland`, `none`.
    pub session: String,
    pub capabilities: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One accessibility element as the backend read it. Bounds are window-relative logical pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct RawElement {
    /// Backend handle used to act on the element later (never shown to the model).
    pub native: String,
    /// The live control's identity, the same in every observation of its window while it
    /// lives (AT-SPI: bus name and object path): it keeps the element's id stable. Empty when
    /// the backend has none (the id then follows the element's position).
    pub key: String,
    pub parent: Option<usize>,
    pub depth: u32,
    pub role: String,
    pub name: String,
    pub description: String,
    pub value: Option<String>,
    pub states: Vec<String>,
    pub actions: Vec<String>,
    pub bounds: Option<Rect>,
    /// What was deliberately not read below it, e.g. "10000 rows × 2 columns; rows 3-43 read".
    pub summary: Option<String>,
}

/// One element of an observation, as given to the model. Fields at their usual value are left
/// out: an empty name, a value equal to the name, the states every shown element has (see
/// [`crate::states`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Element {
    /// Reference for `gui_action` (`element_id`), valid only with this observation's `state_id`.
    pub id: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The text or number it holds, when that is not its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Only what is worth knowing (see [`crate::states::element_states`]): e.g. `checked`,
    /// `focused`, `selected`, `expanded`, `editable`, and `disabled` / `hidden` / `read_only`
    /// where an element is not as elements usually are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// `[x, y, width, height]` in window-relative logical pixels (the observation's space);
    /// absent when the element has no on-screen area.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::geometry::rect_array"
    )]
    #[schemars(with = "Option<[i32; 4]>")]
    pub bounds: Option<Rect>,
    /// What was deliberately not read below this element (a huge list read around its visible
    /// rows, children beyond `max_depth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The nearest ancestor in the observation (unnamed layout containers are left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// A window capture in window-relative logical pixels.
#[derive(Debug, Clone)]
pub struct Screenshot {
    pub image: RgbaImage,
    /// True when parts of the window may show other windows on top of it.
    pub occluded: bool,
}

/// What the backend observed of one window. Window and element bounds are logical pixels; the
/// screenshot is in the display's physical pixels (`scale` of them per logical pixel) and is
/// brought to logical pixels by the core.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub window: WindowInfo,
    /// Physical pixels per logical pixel for this window (1.0 on a standard display).
    pub scale: f64,
    pub elements: Vec<RawElement>,
    pub truncated: bool,
    pub truncated_reason: Option<String>,
    pub screenshot: Option<Screenshot>,
    pub notes: Vec<String>,
}

/// What to observe.
#[derive(Debug, Clone, PartialEq)]
pub struct ObserveRequest {
    pub screenshot: bool,
    pub include_elements: bool,
    pub max_elements: usize,
    pub max_depth: u32,
    /// Walk hidden and off-screen subtrees too (by default they are skipped and counted).
    pub include_hidden: bool,
    /// Wall-clock budget for the tree walk.
    pub walk_budget: std::time::Duration,
    /// The `gui_state` query, when there is one: the walk keeps matching objects that are off
    /// screen and searches huge lists beyond their visible area for it.
    pub query: Option<Query>,
}

/// Roles whose value is a secret (AT-SPI `password_text`, UIA/AX password fields).
pub fn is_secret(role: &str) -> bool {
    matches!(role, "password_text" | "password" | "secure_text_field")
}

/// A `gui_state` `query`: words separated by white space; an element matches when every word
/// occurs (case-insensitively) in its name, role (as the elements spell it, or without its
/// underscores), value or description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    words: Vec<String>,
}

impl Query {
    pub fn parse(text: &str, max_bytes: usize) -> GuiResult<Self> {
        if text.len() > max_bytes {
            return Err(GuiError::new(
                ErrorCode::LimitExceeded,
                format!("query is {} bytes; at most {max_bytes} are allowed", text.len()),
            ));
        }
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        if words.is_empty() {
            return Err(GuiError::invalid(
                "query is empty; give words to look for (or omit query for every element)",
            ));
        }
        Ok(Self { words })
    }

    /// Whether every word occurs in one of the element's texts. A secret's value never counts.
    pub fn matches(&self, e: &RawElement) -> bool {
        let value = if is_secret(&e.role) {
            ""
        } else {
            e.value.as_deref().unwrap_or("")
        };
        let fields = [
            e.name.to_lowercase(),
            e.role.to_lowercase(),
            // The same role written without its underscores ("checkbox" finds `check_box`).
            e.role.replace('_', "").to_lowercase(),
            value.to_lowercase(),
            e.description.to_lowercase(),
        ];
        self.words
            .iter()
            .all(|w| fields.iter().any(|f| f.contains(w.as_str())))
    }
}
