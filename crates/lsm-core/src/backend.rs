//! The one trait each platform implements, and the resolved actions it receives.

use crate::activity::Activity;
use crate::error::GuiResult;
use crate::geometry::Point;
use crate::input::{KeyCombo, MouseButton};
use crate::model::{BackendInfo, ObserveRequest, Snapshot, WindowInfo};
use crate::state::ElementRef;
use async_trait::async_trait;
use std::sync::Arc;

/// A pointer target after element ids were resolved against the observation.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// Act on the element: semantically where possible, else at its current on-screen centre.
    Element(ElementRef),
    /// A window-relative point in logical pixels, already checked to be inside the window
    /// whose geometry was checked to be unchanged.
    Point(Point),
}

/// One action ready for the backend.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendAction {
    Click {
        target: Target,
        button: MouseButton,
        count: u32,
    },
    Move {
        target: Target,
    },
    /// `target` None: the window's centre.
    Scroll {
        target: Option<Target>,
        delta_x: i32,
        delta_y: i32,
    },
    Drag {
        from: Target,
        to: Point,
        button: MouseButton,
    },
    /// `element` Some: focus it first; the text goes to whatever has keyboard focus.
    Type {
        element: Option<ElementRef>,
        text: String,
    },
    Key {
        combo: KeyCombo,
    },
    SetValue {
        element: ElementRef,
        value: String,
    },
    /// `element` None: activate the window.
    Focus {
        element: Option<ElementRef>,
    },
}

/// How the backend carried out an action.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ActionOutcome {
    /// e.g. `atspi_action:click`, `xtest`, `editable_text`, `value`.
    pub method: String,
    pub detail: Option<String>,
    /// What was seen of the effect (see [`Check`]).
    pub check: Check,
    /// Set when the rest of the call must not run: this action left the application in another
    /// state the caller has to look at first (e.g. it opened a modal dialog). Says why.
    pub stop: Option<String>,
}

/// Whether the effect of an action was seen, and what was seen.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// The effect was read back: e.g. `text is now "abc"`, `checked false -> true`.
    Verified(String),
    /// Done, but the effect could not be checked: why.
    Unverified(String),
}

impl Default for Check {
    fn default() -> Self {
        Check::Unverified("the backend did not check the effect".into())
    }
}

impl ActionOutcome {
    pub fn new(method: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            ..Self::default()
        }
    }
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
    pub fn verified(mut self, evidence: impl Into<String>) -> Self {
        self.check = Check::Verified(evidence.into());
        self
    }
    pub fn unverified(mut self, why: impl Into<String>) -> Self {
        self.check = Check::Unverified(why.into());
        self
    }
    pub fn with_check(mut self, check: Check) -> Self {
        self.check = check;
        self
    }
    pub fn stopping(mut self, why: impl Into<String>) -> Self {
        self.stop = Some(why.into());
        self
    }
}

/// A native desktop backend (AT-SPI+X11, UIA, AX, ...). Every method must return within a
/// bounded time; a hung application yields `TIMEOUT` or a truncated observation, never a hang.
#[async_trait]
pub trait DesktopBackend: Send + Sync {
    fn info(&self) -> BackendInfo;
    /// Visible top-level application windows, topmost first.
    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>>;
    /// The window's current state; `WINDOW_NOT_FOUND` when it is gone.
    async fn window(&self, window_id: &str) -> GuiResult<WindowInfo>;
    async fn observe(&self, window_id: &str, request: &ObserveRequest) -> GuiResult<Snapshot>;
    /// The window's pixels alone (no elements), with its current state. The service runs it
    /// beside an element-only `observe` so the image is encoded while the tree is walked.
    async fn capture(&self, window_id: &str) -> GuiResult<Snapshot> {
        let request = ObserveRequest {
            screenshot: true,
            include_elements: false,
            max_elements: 0,
            max_depth: 0,
            include_hidden: false,
            walk_budget: std::time::Duration::ZERO,
            query: None,
        };
        self.observe(window_id, &request).await
    }
    /// Runs one action on `window` (its current state, geometry already verified by the caller
    /// for point targets). Element targets must be re-verified (`ELEMENT_STALE` when the element
    /// is gone or no longer the same control).
    async fn perform(&self, window: &WindowInfo, action: &BackendAction) -> GuiResult<ActionOutcome>;
    /// The accessibility events of the window's application seen so far, read without a call
    /// to anything (settling waits on them). `None`: this backend cannot see that
    /// application's events (then settling compares observations).
    fn activity(&self, _window: &WindowInfo) -> Option<Activity> {
        None
    }
    /// Reads again, as `observe` reports them, the states of these elements of an earlier
    /// observation of the window (found by their keys, [`crate::RawElement::key`]): `None` for
    /// one that is gone. Used where the application's events say that only these states changed
    /// (see `catch_up.rs`); a backend that cannot answers an error and the window is walked.
    async fn reread_states(
        &self,
        _window_id: &str,
        _elements: &[&crate::RawElement],
    ) -> GuiResult<Vec<Option<Vec<String>>>> {
        Err(crate::GuiError::new(
            crate::ErrorCode::UnsupportedAction,
            "this backend reads elements only by walking the window",
        ))
    }
    /// Reads again, as `observe` reports them, the boxes of these elements of an earlier
    /// observation of the window (found by their keys): `None` for one that is gone, `Some(None)`
    /// for one that has no box. Used where the application's events say that these elements were
    /// laid out again (see `catch_up.rs`); a backend that cannot answers an error and the window
    /// is walked.
    async fn reread_bounds(
        &self,
        _window_id: &str,
        _elements: &[&crate::RawElement],
    ) -> GuiResult<Vec<Option<Option<crate::Rect>>>> {
        Err(crate::GuiError::new(
            crate::ErrorCode::UnsupportedAction,
            "this backend reads elements only by walking the window",
        ))
    }
    /// Whether each of these objects (keys as [`crate::RawElement::key`]), which an earlier
    /// walk of the window did not read, is where a walk would find it (listed among its
    /// parent's children). Used where the events say such an object was laid out again (see
    /// `catch_up.rs`); a backend that cannot answers an error and the window is walked.
    async fn in_tree(&self, _window_id: &str, _keys: &[&str]) -> GuiResult<Vec<bool>> {
        Err(crate::GuiError::new(
            crate::ErrorCode::UnsupportedAction,
            "this backend reads elements only by walking the window",
        ))
    }
    /// Reads again whole, as `observe` reports them, these elements of an earlier observation
    /// of the window (found by their keys): `None` for one that is gone. Used where the
    /// application's events say that only these elements' names, values, texts or states
    /// changed (see `catch_up.rs`); a backend that cannot answers an error and the window is
    /// walked.
    async fn reread_elements(
        &self,
        _window_id: &str,
        _elements: &[&crate::RawElement],
    ) -> GuiResult<Vec<Option<crate::RawElement>>> {
        Err(crate::GuiError::new(
            crate::ErrorCode::UnsupportedAction,
            "this backend reads elements only by walking the window",
        ))
    }
    /// Captures as [`DesktopBackend::capture`] does and watches the window from then on: the
    /// watch id (`None` where it cannot be told) asks [`DesktopBackend::repaints_since`] later
    /// what was drawn on it since. A backend that cannot watch answers an error at once, having
    /// captured nothing.
    async fn capture_watched(&self, _window_id: &str) -> GuiResult<(Snapshot, Option<u64>)> {
        Err(crate::GuiError::new(
            crate::ErrorCode::UnsupportedAction,
            "this backend does not watch windows for repaints",
        ))
    }
    /// The areas of the window of the watched capture `watch` drawn on since it (or since the
    /// last call for it), with what they show now: the capture with them pasted in is the
    /// window now. `None` when that cannot be told (capture the window again).
    async fn repaints_since(&self, _watch: u64) -> Option<Vec<crate::image::Repaint>> {
        None
    }
    /// Why this backend must be replaced by a fresh connection before the next call (its
    /// display server or accessibility bus went away and may be back), read without a call to
    /// anything slow. `None`: it is fine.
    fn stale(&self) -> Option<String> {
        None
    }
    /// `lsm doctor`'s items that only this backend can judge (its accessibility bus and which
    /// of `windows` expose a tree, its input path, its window-system helpers), each bounded in
    /// time. Items it leaves out (`accessibility`, `input`, `capture`) are judged by the core
    /// from [`DesktopBackend::info`]'s capabilities.
    async fn diagnose(&self, _windows: &[WindowInfo]) -> Vec<crate::doctor::Item> {
        Vec::new()
    }
}

/// Opens the backend on first use (headless safety: nothing connects before a GUI call).
#[async_trait]
pub trait BackendConnector: Send + Sync {
    /// Fails fast with `GUI_UNAVAILABLE` and the reason when there is no graphical session.
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>>;
    /// `lsm doctor`'s items known before connecting (the session and how it was found, the
    /// grants the platform asks for), from the same functions `connect` uses. A failed one
    /// means `connect` would fail for that reason: the doctor then does not connect.
    async fn preflight(&self) -> Vec<crate::doctor::Item> {
        Vec::new()
    }
    /// What to do when `connect` failed (said under its error by `lsm doctor`).
    fn connect_hint(&self) -> &'static str {
        "run lsm inside the graphical session of the user whose desktop it should operate"
    }
}

/// The connector of a build or platform without a GUI backend.
pub struct NoGui {
    pub reason: String,
}

#[async_trait]
impl BackendConnector for NoGui {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        Err(crate::GuiError::unavailable(self.reason.clone()))
    }
}
