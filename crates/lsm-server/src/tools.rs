//! Tool definitions: names, descriptions, JSON Schemas and annotations of the three MCP tools.
//! Each argument struct is declared once: `tools/list` publishes its schema and `args::parse`
//! checks calls against that schema and deserialises them into it.

use crate::machines::MachineInfo;
use crate::schema;
use lsm_core::{ActionOutput, ImageFormat, ListOutput, ObserveAfter, StateOutput};
use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `gui_list` structured output: the machine's windows plus every machine this server knows.
#[derive(Serialize, JsonSchema)]
pub struct ListResult {
    #[serde(flatten)]
    pub list: ListOutput,
    /// "local" first, then the enrolled remote machines with whether each is connected now.
    pub machines: Vec<MachineInfo>,
}

#[derive(Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Target machine: omit (or "local") for this machine, else a remote worker's name (see
    /// `machines` in the result).
    pub machine: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub struct StateArgs {
    /// Window from gui_list.
    pub window_id: String,
    /// Attach a screenshot of the window (one image pixel per unit of element bounds). Default
    /// true.
    pub screenshot: Option<bool>,
    /// Screenshot encoding: png (default, lossless), jpeg (smallest, lossy) or webp (lossless,
    /// usually smaller than png).
    pub image_format: Option<ImageFormat>,
    /// JPEG quality 1-100 (default 80); only with image_format "jpeg".
    pub image_quality: Option<u64>,
    /// Only elements whose name, role, value or description contain every word of this
    /// (case-insensitive; e.g. "save button"), plus their ancestors. Ids stay those of the full
    /// observation; only returned elements can be acted on. `matched` tells how many matched.
    pub query: Option<String>,
    /// Include the accessibility elements. Default true.
    pub include_elements: Option<bool>,
    /// Also walk hidden and off-screen subtrees (closed tabs, scrolled-away rows). Default
    /// false: they are skipped, and the notes say how many.
    pub include_hidden: Option<bool>,
    /// At most this many elements (default 300, max 1000).
    pub max_elements: Option<u64>,
    /// At most this tree depth below the window (default 12, max 20).
    pub max_depth: Option<u64>,
    /// Target machine; omit for this machine.
    pub machine: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum ActionType {
    Click,
    DoubleClick,
    RightClick,
    Move,
    Scroll,
    Drag,
    Type,
    Key,
    SetValue,
    Focus,
    Wait,
}

/// One action. Give `element_id` (preferred) or window-relative `x`/`y`.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct ActionArg {
    #[serde(rename = "type")]
    pub kind: ActionType,
    /// Element id from the same gui_state result (e.g. "e17").
    pub element_id: Option<String>,
    /// Window-relative x, as read off the screenshot or element bounds (click, double_click,
    /// right_click, move, scroll, drag start).
    pub x: Option<f64>,
    pub y: Option<f64>,
    /// Drag end point, in the same space as x/y.
    pub to_x: Option<f64>,
    pub to_y: Option<f64>,
    /// Text for `type` (any Unicode, up to 4096 bytes).
    pub text: Option<String>,
    /// Key combo for `key`, e.g. "ctrl+shift+t", "alt+F4", "Return".
    pub keys: Option<String>,
    /// Seconds for `wait` (total per call at most 30).
    pub seconds: Option<f64>,
    /// Wheel clicks for `scroll`; positive is right.
    pub delta_x: Option<i32>,
    /// Wheel clicks for `scroll`; positive is down.
    pub delta_y: Option<i32>,
    /// New value for `set_value` (text or number).
    pub value: Option<serde_json::Value>,
    /// "left" (default), "right" or "middle".
    pub button: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub struct ActionArgs {
    /// The window observed by gui_state.
    pub window_id: String,
    /// From gui_state; single use, expires after 30 s.
    pub state_id: String,
    /// 1 to 32 actions, run in order; the first failure stops the rest.
    // Kept as JSON here: lsm-core checks each action (also for calls that arrive through a worker).
    #[schemars(with = "Vec<ActionArg>")]
    pub actions: serde_json::Value,
    /// After the actions: "changes" (default: wait until the window settles, return what changed
    /// and a new state_id for the next gui_action), "full" (the whole new observation, as
    /// gui_state gives it) or "none" (return at once; call gui_state next).
    pub observe: Option<ObserveAfter>,
    /// Longest wait for the window to settle, in ms (default 1500, at most 10000).
    pub settle_ms: Option<u64>,
    /// Attach a screenshot of the settled window (in the new state_id's coordinates and the
    /// image_format of the first gui_state). Default false.
    pub screenshot: Option<bool>,
    /// Target machine; omit for this machine.
    pub machine: Option<String>,
}

pub const GUI_LIST: &str = "gui_list";
pub const GUI_STATE: &str = "gui_state";
pub const GUI_ACTION: &str = "gui_action";

pub fn all() -> Vec<Tool> {
    vec![
        Tool::new(
            GUI_LIST,
            "List the visible application windows of a machine (window_id, title, app, pid, bounds, focus; \
             for a dialog transient_for and modal, for a window a modal dialog blocks blocked_by) \
             and the native backend with its capabilities, plus `machines`: this one (\"local\") and the \
             remote machines with whether each is connected (pass `machine` to any tool to use one). Start here.",
            schema::input::<ListArgs>(),
        )
        .with_raw_output_schema(schema::output::<ListResult>())
        .with_title("List desktop windows")
        .with_annotations(
            ToolAnnotations::with_title("List desktop windows").read_only(true).idempotent(true).open_world(false),
        ),
        Tool::new(
            GUI_STATE,
            "Observe one window: returns a single-use state_id (valid 30 s), its accessibility elements \
             (id like e17, role, name, value, states, actions, bounds as [x,y,w,h], parent; \
             empty or usual fields are left out: states lists only the notable ones such as focused, checked, \
             disabled) and a screenshot, all in one window-relative coordinate space: logical pixels, or, for \
             a window larger than the image cap, a uniformly scaled space described by coordinate_space. \
             Use bounds and screenshot pixels as they are for gui_action x/y. Password fields never show their \
             value and are painted over in the screenshot. Call it to start and to re-sync; each gui_action \
             returns the next state_id.",
            schema::input::<StateArgs>(),
        )
        .with_raw_output_schema(schema::output::<StateOutput>())
        .with_title("Observe a window")
        .with_annotations(
            ToolAnnotations::with_title("Observe a window").read_only(true).idempotent(false).open_world(false),
        ),
        Tool::new(
            GUI_ACTION,
            "Act on the window observed by gui_state. Prefer element_id (accessibility API); use \
             window-relative x/y only where no element fits. The state_id is consumed; coordinate actions \
             are refused if the window moved or resized since, and every action with WINDOW_BLOCKED while a \
             modal dialog blocks the window (act on the dialog named). Then it waits for the window to \
             settle and answers with each action's effect (confirmed / no_change / unverifiable), what \
             changed (elements by stable id, windows opened/closed, focus) and a new state_id: pass it to \
             the next gui_action; call gui_state to start, re-sync, or for a screenshot or another window.",
            schema::input::<ActionArgs>(),
        )
        .with_raw_output_schema(schema::output::<ActionOutput>())
        .with_title("Act on a window")
        .with_annotations(
            ToolAnnotations::with_title("Act on a window")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        ),
    ]
}

#[cfg(test)]
mod tests {
    /// What every client sends to its model on every turn; the e2e test (test_schemas.py)
    /// measures the same over the wire.
    #[test]
    fn tools_list_stays_small() {
        let size = serde_json::to_string(&super::all())
            .map(|s| s.len())
            .unwrap_or(usize::MAX);
        println!("tools/list tools: {size} bytes");
        assert!(size <= 15 * 1024, "tools/list is {size} bytes");
    }
}
