//! What the tools and the web UI send and get back: requests after argument parsing and the
//! results the faces serialize. Plain data; the service fills them, the outline renders them.

use crate::action::ActionResult;
use crate::geometry::Rect;
use crate::image::{EncodedImage, ImageFormat};
use crate::model::{BackendInfo, Element, WindowInfo};
use crate::space::Space;
use serde::{Deserialize, Serialize};

/// `gui_list` result.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ListOutput {
    pub machine: String,
    pub backend: BackendInfo,
    pub windows: Vec<WindowInfo>,
    pub truncated: bool,
}

/// `gui_state` request after argument parsing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateRequest {
    pub window_id: String,
    pub screenshot: bool,
    pub include_elements: bool,
    pub max_elements: Option<u64>,
    pub max_depth: Option<u64>,
    /// Only elements matching these words (and their ancestors).
    pub query: Option<String>,
    /// Walk hidden and off-screen subtrees too.
    #[serde(default)]
    pub include_hidden: bool,
    pub image_format: ImageFormat,
    /// JPEG quality 1..=100 (default 80); refused for the lossless formats.
    pub image_quality: Option<u64>,
}

/// The coordinate space of an observation: what element bounds, screenshot pixels and the
/// `x`/`y` of `gui_action` (for this `state_id`) mean. One space for all three.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoordinateSpace {
    /// Always `window`: (0,0) is the top-left corner of the window's client area.
    pub origin: String,
    /// `logical_px`; `scaled_px` when a large window was scaled down to the image cap.
    pub units: String,
    /// Size of the space (= the screenshot's size).
    pub width: i32,
    pub height: i32,
    /// Units of this space per logical pixel: 1.0, or below 1 when scaled.
    pub scale: f64,
    /// Physical pixels per logical pixel of the display, when not 1 (HiDPI); the screenshot
    /// was resampled to this space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_scale: Option<f64>,
    /// What the space is, when it is not plain logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl CoordinateSpace {
    /// The space of an image in `space` of a window on a display of `display_scale`
    /// (physical per logical pixel; stated only when it is not 1). No note.
    pub(crate) fn of(space: &Space, display_scale: f64) -> Self {
        CoordinateSpace {
            origin: "window".into(),
            units: if space.is_identity() {
                "logical_px"
            } else {
                "scaled_px"
            }
            .into(),
            width: space.width,
            height: space.height,
            scale: space.scale(),
            display_scale: Some(display_scale)
                .filter(|s| s.is_finite() && *s > 0.0 && (*s - 1.0).abs() > 1e-6),
            note: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScreenshotInfo {
    /// `png`, `jpeg` or `webp` (also the MCP image content's mime type `image/<format>`).
    pub format: String,
    pub width: u32,
    pub height: u32,
    /// Encoded size in bytes.
    pub bytes: usize,
    /// JPEG quality used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// True when other windows may cover parts of the image.
    pub occluded: bool,
    /// Password fields painted over with one flat colour.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redacted: usize,
}

fn is_zero(v: &usize) -> bool {
    *v == 0
}

/// `gui_state` result. The image travels beside it, not inside the JSON.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StateOutput {
    pub state_id: String,
    pub expires_in_ms: u64,
    pub machine: String,
    pub window: WindowInfo,
    pub coordinate_space: CoordinateSpace,
    pub elements: Vec<Element>,
    /// Elements returned (with a query: the matches and their ancestors).
    pub element_count: usize,
    /// Unnamed layout containers (panels, fillers... without name, action, value or notable
    /// state) left out; their children's `parent` is the nearest ancestor returned.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folded: usize,
    /// The query this observation was filtered by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// With a query: how many elements matched it (ancestors not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<usize>,
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<ScreenshotInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The encoded screenshot; travels as MCP image content, not inside the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub image: Option<EncodedImage>,
    /// The screenshot small, for the activity feed (made only while a page watches it).
    #[serde(skip)]
    #[schemars(skip)]
    pub feed_image: Option<std::sync::Arc<str>>,
}

/// `gui_action` request; `actions` is the caller's raw JSON, validated here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionRequest {
    pub window_id: String,
    pub state_id: String,
    pub actions: serde_json::Value,
    /// What to observe once the window has settled after the actions.
    #[serde(default)]
    pub observe: ObserveAfter,
    /// Bound of the wait for the window to settle, in ms (default: the server's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<u64>,
    /// Attach the settled window's screenshot (in the format the observation asked for).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screenshot: bool,
    /// Who asked (an MCP session), for the audit log; never a credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
}

/// What `gui_action` observes after its actions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObserveAfter {
    /// Wait until the window settles, observe it and return what changed, with a new `state_id`.
    #[default]
    Changes,
    /// As `changes`, returning the whole new observation as `gui_state` would.
    Full,
    /// Return right after the actions (no new `state_id`: call `gui_state`).
    None,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionOutput {
    pub machine: String,
    pub window_id: String,
    pub ok: bool,
    pub results: Vec<ActionResult>,
    /// Set when the call stopped early on purpose after a successful action (it opened a modal
    /// dialog, say): why, and that the actions listed in `not_run` were not carried out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Indices of the actions not run because of `stopped`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<usize>,
    /// What to do next: act again with `state_id`, or observe.
    pub next: String,
    /// What the model should know beside the result, e.g. that a person's take-over ended and
    /// control came back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The settled observation's `state_id` (single-use, like `gui_state`'s): the next
    /// `gui_action` needs no `gui_state`. Absent with observe `none` or when the window closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_ms: Option<u64>,
    /// Whether the window was quiet (unchanged for a while) before it was observed; false when
    /// the settle bound came first (an animation, a slow application).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
    /// Time spent waiting for the window to settle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<u64>,
    /// What changed between the observation the actions used and the settled one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<crate::changes::Changes>,
    /// With observe `full`: the whole settled observation (its `state_id` is `state_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Box<StateOutput>>,
    /// Why the result has no change list, when it was asked for and could not be made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe_note: Option<String>,
    /// With `screenshot`: the settled window's image (in the new `state_id`'s coordinates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<ScreenshotInfo>,
    /// The encoded settled screenshot; travels as MCP image content, not inside the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub image: Option<EncodedImage>,
    /// The settled window small, for the activity feed, when it was captured.
    #[serde(skip)]
    #[schemars(skip)]
    pub feed_image: Option<std::sync::Arc<str>>,
}

/// A web UI frame request: the window's pixels, for a person (no elements, no `state_id`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameRequest {
    pub window_id: String,
    pub image_format: ImageFormat,
    /// JPEG quality 1..=100 (default 80).
    pub image_quality: Option<u64>,
    /// Long-edge cap of the image (default: the service's `max_image_edge`).
    pub max_edge: Option<u32>,
    /// The `etag` of the frame the caller already has: when the pixels are the same, the
    /// answer says `unchanged` and carries no image.
    pub if_none_match: Option<String>,
}

/// A frame: the window's image and the geometry it was taken at.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameOutput {
    pub machine: String,
    /// The window when captured; `window.bounds` is the geometry a human action must quote.
    pub window: WindowInfo,
    /// The image's space: `scale` image pixels per logical pixel.
    pub coordinate_space: CoordinateSpace,
    /// Identifies the pixels (a hash of the captured image).
    pub etag: String,
    /// True when the pixels equal `if_none_match`: no image is sent.
    pub unchanged: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<ScreenshotInfo>,
    #[serde(skip)]
    #[schemars(skip)]
    pub image: Option<EncodedImage>,
}

/// Input from a person on a frame (web UI), outside the model's `state_id` rules: it runs only
/// while the window still has the geometry the frame was taken at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HumanActionRequest {
    pub window_id: String,
    /// `window.bounds` of the frame the person acted on.
    pub geometry: Rect,
    /// Actions as for `gui_action`, with window-relative logical `x`/`y` and no `element_id`.
    pub actions: serde_json::Value,
    /// Who asked (a web UI session's public label), for the audit log; never a credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
}
