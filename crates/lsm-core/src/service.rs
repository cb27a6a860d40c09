//! `GuiService`: what every face (MCP, web UI, worker link) calls, and its local implementation
//! over a [`DesktopBackend`] plus the [`StateStore`].

use crate::action::{parse_actions, ActionResult, ActionSpec, Where};
use crate::backend::{BackendAction, BackendConnector, DesktopBackend, Target};
use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::image::{EncodedImage, ImageFormat};
use crate::limits::Limits;
use crate::model::{BackendInfo, Element, ObserveRequest, WindowInfo};
use crate::observe::{number_elements, render_screenshot, secret_areas, Numbered, Query};
use crate::space::Space;
use crate::state::{ElementRef, Observation, StateStore};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// `gui_list` result.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ListOutput {
    pub machine: String,
    pub backend: BackendInfo,
    pub windows: Vec<WindowInfo>,
    pub truncated: bool,
}

/// `gui_state` request after argument parsing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateRequest {
    pub window_id: String,
    pub screenshot: bool,
    pub include_elements: bool,
    pub max_elements: Option<u64>,
    pub max_depth: Option<u64>,
    /// Only elements matching these words (and their ancestors).
    pub query: Option<String>,
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
}

/// `gui_action` request; `actions` is the caller's raw JSON, validated here.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionRequest {
    pub window_id: String,
    pub state_id: String,
    pub actions: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ActionOutput {
    pub machine: String,
    pub window_id: String,
    pub ok: bool,
    pub results: Vec<ActionResult>,
    /// Observations are single-use: observe again before the next action.
    pub next: String,
}

/// The operations every face calls. Local and remote machines implement it alike.
#[async_trait]
pub trait GuiService: Send + Sync {
    async fn list(&self) -> GuiResult<ListOutput>;
    async fn state(&self, request: StateRequest) -> GuiResult<StateOutput>;
    async fn action(&self, request: ActionRequest) -> GuiResult<ActionOutput>;
}

/// The service for the desktop this process runs on.
pub struct LocalGui {
    machine: String,
    limits: Limits,
    connector: Arc<dyn BackendConnector>,
    backend: Mutex<Option<Arc<dyn DesktopBackend>>>,
    store: StateStore,
}

/// Slack over a backend's own budgets before we call it hung.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

impl LocalGui {
    pub fn new(machine: impl Into<String>, limits: Limits, connector: Arc<dyn BackendConnector>) -> Self {
        let store = StateStore::new(limits.state_ttl, limits.states_per_machine);
        Self {
            machine: machine.into(),
            limits,
            connector,
            backend: Mutex::new(None),
            store,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The backend, connected on first use. A failed connection is not cached: the session
    /// may appear later.
    async fn backend(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        let mut slot = self.backend.lock().await;
        if let Some(b) = slot.as_ref() {
            return Ok(b.clone());
        }
        let b = bounded("connecting to the desktop", self.connector.connect()).await?;
        *slot = Some(b.clone());
        Ok(b)
    }

    fn observe_request(&self, r: &StateRequest) -> GuiResult<ObserveRequest> {
        let max_elements = pick(
            "max_elements",
            r.max_elements,
            self.limits.max_elements_default as u64,
            1,
            self.limits.max_elements_cap as u64,
        )?;
        let max_depth = pick(
            "max_depth",
            r.max_depth,
            self.limits.max_depth_default as u64,
            0,
            self.limits.max_depth_cap as u64,
        )?;
        Ok(ObserveRequest {
            screenshot: r.screenshot,
            // A screenshot needs the tree too: password fields are painted over.
            include_elements: r.include_elements || r.screenshot,
            max_elements: max_elements as usize,
            max_depth: max_depth as u32,
            walk_budget: self.limits.walk_budget,
        })
    }

    fn resolve(&self, obs: &Observation, id: &str) -> GuiResult<ElementRef> {
        obs.elements.get(id).cloned().ok_or_else(|| {
            GuiError::new(
                ErrorCode::ElementNotFound,
                format!("element_id {id:?} is not part of this observation; use an id from the same gui_state result"),
            )
        })
    }

    /// A point target: caller points are in the observation's space, the backend's are logical.
    fn target(&self, obs: &Observation, w: &Where) -> GuiResult<Target> {
        Ok(match w {
            Where::Element(id) => Target::Element(self.resolve(obs, id)?),
            Where::Point(p) => Target::Point(obs.space.point_to_logical(*p)),
        })
    }

    /// Turns validated specs into backend actions; checks ids and points (in the observation's
    /// space) before anything runs, and converts points to window logical pixels.
    fn resolve_all(&self, obs: &Observation, specs: &[ActionSpec]) -> GuiResult<Vec<Option<BackendAction>>> {
        let area = obs.space.area();
        let units = if obs.space.is_identity() {
            "logical px"
        } else {
            "units of the observation's scaled space"
        };
        specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                for p in spec.points() {
                    if !area.contains(p) {
                        return Err(GuiError::new(
                            ErrorCode::OutOfBounds,
                            format!(
                                "action {i} ({}): point ({}, {}) is outside the window (0..{} x 0..{} {units}, \
                                 window-relative); use coordinates from the observation",
                                spec.type_name(),
                                p.x,
                                p.y,
                                area.width,
                                area.height
                            ),
                        ));
                    }
                }
                let el = |id: &String| self.resolve(obs, id).map_err(|e| at_index(e, i, spec));
                let tgt = |w: &Where| self.target(obs, w).map_err(|e| at_index(e, i, spec));
                Ok(match spec {
                    ActionSpec::Click { at, button, count } => {
                        Some(BackendAction::Click { target: tgt(at)?, button: *button, count: *count })
                    }
                    ActionSpec::Move { at } => Some(BackendAction::Move { target: tgt(at)? }),
                    ActionSpec::Scroll { at, delta_x, delta_y } => Some(BackendAction::Scroll {
                        target: at.as_ref().map(tgt).transpose()?,
                        delta_x: *delta_x,
                        delta_y: *delta_y,
                    }),
                    ActionSpec::Drag { from, to, button } => Some(BackendAction::Drag {
                        from: tgt(from)?,
                        to: obs.space.point_to_logical(*to),
                        button: *button,
                    }),
                    ActionSpec::Type { element, text } => Some(BackendAction::Type {
                        element: element.as_ref().map(el).transpose()?,
                        text: text.clone(),
                    }),
                    ActionSpec::Key { combo } => Some(BackendAction::Key { combo: combo.clone() }),
                    ActionSpec::SetValue { element, value } => {
                        Some(BackendAction::SetValue { element: el(element)?, value: value.clone() })
                    }
                    ActionSpec::Focus { element } => {
                        Some(BackendAction::Focus { element: element.as_ref().map(el).transpose()? })
                    }
                    ActionSpec::Wait { .. } => None,
                })
            })
            .collect()
    }
}

fn at_index(mut e: GuiError, i: usize, spec: &ActionSpec) -> GuiError {
    e.message = format!("action {i} ({}): {}", spec.type_name(), e.message);
    e
}

fn pick(name: &str, v: Option<u64>, default: u64, min: u64, max: u64) -> GuiResult<u64> {
    match v {
        None => Ok(default),
        Some(v) if v < min => Err(GuiError::invalid(format!("{name} must be at least {min}"))),
        Some(v) if v > max => Err(GuiError::new(
            ErrorCode::LimitExceeded,
            format!("{name} is {v}; at most {max} is allowed"),
        )),
        Some(v) => Ok(v),
    }
}

async fn bounded<T>(what: &str, fut: impl std::future::Future<Output = GuiResult<T>>) -> GuiResult<T> {
    tokio::time::timeout(CALL_TIMEOUT, fut)
        .await
        .unwrap_or_else(|_| Err(GuiError::timeout(what)))
}

/// Says what a space other than plain logical pixels is.
fn space_note(space: &Space, window: &WindowInfo, cap: u32, display_scale: Option<f64>) -> Option<String> {
    let mut parts = Vec::new();
    if !space.is_identity() {
        parts.push(format!(
            "the window is {}x{} logical px, more than the {cap} px image cap: this observation is scaled by {:.4} \
             to {}x{}; element bounds, screenshot pixels and gui_action x/y for this state_id are all in this \
             scaled space (lsm converts), use them as they are",
            window.bounds.width,
            window.bounds.height,
            space.scale(),
            space.width,
            space.height
        ));
    }
    if let Some(ds) = display_scale {
        parts.push(format!(
            "the display has {ds} physical px per logical px; the screenshot was resampled so that one image pixel \
             is one unit of this space"
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Roles whose value is a secret (AT-SPI `password_text`, UIA/AX password fields).
pub fn is_secret(role: &str) -> bool {
    matches!(role, "password_text" | "password" | "secure_text_field")
}

#[async_trait]
impl GuiService for LocalGui {
    async fn list(&self) -> GuiResult<ListOutput> {
        let backend = self.backend().await?;
        let mut windows = bounded("listing windows", backend.list_windows()).await?;
        let truncated = windows.len() > self.limits.windows_per_list;
        windows.truncate(self.limits.windows_per_list);
        Ok(ListOutput {
            machine: self.machine.clone(),
            backend: backend.info(),
            windows,
            truncated,
        })
    }

    async fn state(&self, request: StateRequest) -> GuiResult<StateOutput> {
        if request.window_id.is_empty() {
            return Err(GuiError::invalid("window_id is required (from gui_list)"));
        }
        let observe = self.observe_request(&request)?;
        let query = request
            .query
            .as_deref()
            .map(|q| Query::parse(q, self.limits.query_bytes))
            .transpose()?;
        if query.is_some() && !request.include_elements {
            return Err(GuiError::invalid(
                "query filters the elements: leave include_elements true (or drop query)",
            ));
        }
        let quality = match (request.image_format, request.image_quality) {
            (ImageFormat::Jpeg, q) => pick("image_quality", q, 80, 1, 100)? as u8,
            (_, None) => 80,
            (f, Some(_)) => {
                return Err(GuiError::invalid(format!(
                    "image_quality applies to jpeg only; {} is lossless (drop image_quality or use image_format \"jpeg\")",
                    f.name()
                )))
            }
        };
        let backend = self.backend().await?;
        let snap = bounded(
            "observing the window",
            backend.observe(&request.window_id, &observe),
        )
        .await?;
        let window = snap.window;
        let space = Space::for_window(
            window.bounds.width,
            window.bounds.height,
            self.limits.max_image_edge,
        );
        let secrets = secret_areas(&snap.elements);
        let (numbered, walk_truncated, mut truncated_reason) = if request.include_elements {
            let n = number_elements(
                snap.elements,
                &space,
                query.as_ref(),
                self.limits.elements_json_bytes,
            );
            (n, snap.truncated, snap.truncated_reason)
        } else {
            // Walked only to find password fields: nothing of it is returned.
            (Numbered::default(), false, None)
        };
        if numbered.over_budget {
            truncated_reason = Some(format!(
                "element list reached {} KiB; ask for fewer elements, a smaller max_depth or use query",
                self.limits.elements_json_bytes / 1024
            ));
        }
        let (screenshot, image) = match snap.screenshot {
            Some(shot) => {
                let format = request.image_format;
                let occluded = shot.occluded;
                let rendered = tokio::task::spawn_blocking(move || {
                    render_screenshot(shot.image, &space, &secrets, format, quality)
                })
                .await
                .map_err(|e| GuiError::backend(format!("encoding the screenshot failed: {e}")))??;
                let info = ScreenshotInfo {
                    format: format.name().into(),
                    width: rendered.image.width,
                    height: rendered.image.height,
                    bytes: rendered.image.bytes.len(),
                    quality: (format == ImageFormat::Jpeg).then_some(quality),
                    occluded,
                    redacted: rendered.redacted,
                };
                (Some(info), Some(rendered.image))
            }
            None => (None, None),
        };
        let display_scale = Some(snap.scale).filter(|s| s.is_finite() && *s > 0.0 && (*s - 1.0).abs() > 1e-6);
        let note = space_note(&space, &window, self.limits.max_image_edge, display_scale);
        let coordinate_space = CoordinateSpace {
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
            display_scale,
            note,
        };
        let state_id = self.store.issue_in(window.clone(), numbered.refs, space);
        Ok(StateOutput {
            state_id,
            expires_in_ms: self.store.ttl().as_millis() as u64,
            machine: self.machine.clone(),
            window,
            coordinate_space,
            element_count: numbered.elements.len(),
            elements: numbered.elements,
            query: query.is_some().then(|| request.query.clone()).flatten(),
            matched: numbered.matched,
            truncated: walk_truncated || numbered.over_budget,
            truncated_reason,
            screenshot,
            notes: snap.notes,
            image,
        })
    }

    async fn action(&self, request: ActionRequest) -> GuiResult<ActionOutput> {
        if request.state_id.is_empty() {
            return Err(GuiError::invalid("state_id is required (from gui_state)"));
        }
        let obs = self.store.take(&request.state_id)?;
        if obs.window.window_id != request.window_id {
            return Err(GuiError::new(
                ErrorCode::WindowMismatch,
                format!(
                    "state_id belongs to window {}, not {}; call gui_state for the window you want to act on",
                    obs.window.window_id, request.window_id
                ),
            ));
        }
        let specs = parse_actions(&request.actions, &self.limits)?;
        let actions = self.resolve_all(&obs, &specs)?;
        let backend = self.backend().await?;
        let mut results: Vec<ActionResult> = Vec::with_capacity(specs.len());
        for (i, (spec, action)) in specs.iter().zip(actions).enumerate() {
            let fail = |e: GuiError, results: &Vec<ActionResult>| {
                let done = serde_json::to_value(results).unwrap_or_default();
                let mut e = at_index(e, i, spec);
                e.details = Some(serde_json::json!({"failed_index": i, "completed": done}));
                e
            };
            let Some(action) = action else {
                if let ActionSpec::Wait { duration } = spec {
                    tokio::time::sleep(*duration).await;
                }
                results.push(ActionResult {
                    index: i,
                    action_type: spec.type_name().into(),
                    ok: true,
                    method: Some("wait".into()),
                    detail: None,
                });
                continue;
            };
            let current = match bounded("reading the window", backend.window(&request.window_id)).await {
                Ok(w) => w,
                Err(e) => return Err(fail(e, &results)),
            };
            if !spec.points().is_empty() && current.bounds != obs.window.bounds {
                let e = GuiError::new(
                    ErrorCode::WindowChanged,
                    format!(
                        "the window moved or was resized since gui_state (then {:?}, now {:?}); coordinates are stale, \
                         call gui_state again",
                        obs.window.bounds, current.bounds
                    ),
                );
                return Err(fail(e, &results));
            }
            match bounded("the action", backend.perform(&current, &action)).await {
                Ok(outcome) => results.push(ActionResult {
                    index: i,
                    action_type: spec.type_name().into(),
                    ok: true,
                    method: Some(outcome.method),
                    detail: outcome.detail,
                }),
                Err(e) => return Err(fail(e, &results)),
            }
        }
        Ok(ActionOutput {
            machine: self.machine.clone(),
            window_id: request.window_id,
            ok: true,
            results,
            next: "call gui_state to observe the result before acting again".into(),
        })
    }
}
