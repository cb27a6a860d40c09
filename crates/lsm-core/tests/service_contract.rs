//! The state contract of `LocalGui`, checked against a scripted fake backend.

use async_trait::async_trait;
use lsm_core::*;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct Fake {
    bounds: Mutex<Option<Rect>>,
    performed: Mutex<Vec<BackendAction>>,
    fail_on: Mutex<Option<usize>>,
    /// A modal dialog blocking the window, as the backend reports it.
    blocked_by: Mutex<Option<String>>,
}

fn window(bounds: Rect) -> WindowInfo {
    WindowInfo {
        pid: Some(1),
        focused: true,
        ..WindowInfo::new("0x1", "fake", "fake", bounds)
    }
}

#[async_trait]
impl DesktopBackend for Fake {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "fake".into(),
            platform: "test".into(),
            session: "none".into(),
            capabilities: vec!["screenshot".into()],
            notes: vec![],
        }
    }
    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        Ok(self.bounds.lock().unwrap().map(window).into_iter().collect())
    }
    async fn window(&self, id: &str) -> GuiResult<WindowInfo> {
        match *self.bounds.lock().unwrap() {
            Some(b) if id == "0x1" => Ok(WindowInfo {
                blocked_by: self.blocked_by.lock().unwrap().clone(),
                ..window(b)
            }),
            _ => Err(GuiError::window_not_found(id)),
        }
    }
    async fn observe(&self, id: &str, _r: &ObserveRequest) -> GuiResult<Snapshot> {
        let w = self.window(id).await?;
        let el = |native: &str, role: &str, parent: Option<usize>| RawElement {
            native: native.into(),
            key: native.into(),
            parent,
            depth: parent.map_or(0, |_| 1),
            role: role.into(),
            name: native.into(),
            description: String::new(),
            value: None,
            states: vec![],
            actions: vec!["click".into()],
            bounds: Some(Rect::new(1, 1, 10, 10)),
            summary: None,
        };
        Ok(Snapshot {
            window: w,
            scale: 1.0,
            elements: vec![el("root", "frame", None), el("ok", "push_button", Some(0))],
            truncated: false,
            truncated_reason: None,
            screenshot: Some(Screenshot {
                image: RgbaImage::new(2, 1, vec![0; 8])?,
                occluded: false,
            }),
            notes: vec![],
        })
    }
    async fn perform(&self, _w: &WindowInfo, a: &BackendAction) -> GuiResult<ActionOutcome> {
        let mut done = self.performed.lock().unwrap();
        if *self.fail_on.lock().unwrap() == Some(done.len()) {
            return Err(GuiError::new(ErrorCode::ElementStale, "gone"));
        }
        done.push(a.clone());
        Ok(ActionOutcome::new("fake"))
    }
}

struct Conn(Arc<Fake>);

#[async_trait]
impl BackendConnector for Conn {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        Ok(self.0.clone())
    }
}

fn setup(ttl: Duration) -> (Arc<Fake>, LocalGui) {
    let fake = Arc::new(Fake::default());
    *fake.bounds.lock().unwrap() = Some(Rect::new(100, 100, 200, 100));
    let limits = Limits {
        state_ttl: ttl,
        ..Limits::default()
    };
    (fake.clone(), LocalGui::new("local", limits, Arc::new(Conn(fake))))
}

async fn observe(gui: &LocalGui) -> StateOutput {
    gui.state(StateRequest {
        window_id: "0x1".into(),
        screenshot: true,
        include_elements: true,
        ..Default::default()
    })
    .await
    .expect("observe")
}

async fn act(
    gui: &LocalGui,
    state: &str,
    window: &str,
    actions: serde_json::Value,
) -> GuiResult<ActionOutput> {
    gui.action(ActionRequest {
        window_id: window.into(),
        state_id: state.into(),
        actions,
        observe: lsm_core::ObserveAfter::None,
        ..Default::default()
    })
    .await
}

#[tokio::test]
async fn observation_numbers_elements_and_links_parents() {
    let (_, gui) = setup(Duration::from_secs(30));
    let s = observe(&gui).await;
    assert_eq!(
        s.elements.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["e0", "e1"]
    );
    assert_eq!(s.elements[1].parent.as_deref(), Some("e0"));
    assert!(s.image.as_ref().is_some_and(|i| i.bytes.starts_with(b"\x89PNG")));
    assert_eq!((s.coordinate_space.width, s.coordinate_space.height), (200, 100));
}

#[tokio::test]
async fn element_click_runs_and_state_is_then_consumed() {
    let (fake, gui) = setup(Duration::from_secs(30));
    let s = observe(&gui).await;
    let out = act(
        &gui,
        &s.state_id,
        "0x1",
        json!([{"type": "click", "element_id": "e1"}]),
    )
    .await
    .expect("ok");
    assert_eq!(out.results.len(), 1);
    assert!(
        matches!(&fake.performed.lock().unwrap()[0], BackendAction::Click { target: Target::Element(e), .. } if e.native == "ok")
    );
    let again = act(&gui, &s.state_id, "0x1", json!([{"type": "wait", "seconds": 0}])).await;
    assert_eq!(again.expect_err("reuse").code, ErrorCode::StateConsumed);
}

#[tokio::test]
async fn contract_failures_have_their_codes() {
    let (fake, gui) = setup(Duration::from_secs(30));
    let code = |r: GuiResult<ActionOutput>| r.expect_err("must fail").code;
    let s = observe(&gui).await;
    assert_eq!(
        code(act(&gui, &s.state_id, "0x2", json!([{"type": "focus"}])).await),
        ErrorCode::WindowMismatch
    );
    let s = observe(&gui).await;
    assert_eq!(
        code(
            act(
                &gui,
                &s.state_id,
                "0x1",
                json!([{"type": "click", "element_id": "e9"}])
            )
            .await
        ),
        ErrorCode::ElementNotFound
    );
    let s = observe(&gui).await;
    assert_eq!(
        code(
            act(
                &gui,
                &s.state_id,
                "0x1",
                json!([{"type": "click", "x": 200, "y": 5}])
            )
            .await
        ),
        ErrorCode::OutOfBounds
    );
    let s = observe(&gui).await;
    assert_eq!(
        code(
            act(
                &gui,
                &s.state_id,
                "0x1",
                json!([{"type": "click", "x": -1, "y": 5}])
            )
            .await
        ),
        ErrorCode::OutOfBounds
    );
    // Moved window: coordinate actions are refused, nothing runs.
    let s = observe(&gui).await;
    *fake.bounds.lock().unwrap() = Some(Rect::new(101, 100, 200, 100));
    assert_eq!(
        code(
            act(
                &gui,
                &s.state_id,
                "0x1",
                json!([{"type": "click", "x": 5, "y": 5}])
            )
            .await
        ),
        ErrorCode::WindowChanged
    );
    assert!(fake.performed.lock().unwrap().is_empty());
    // Gone window.
    let s = observe(&gui).await;
    *fake.bounds.lock().unwrap() = None;
    assert_eq!(
        code(act(&gui, &s.state_id, "0x1", json!([{"type": "focus"}])).await),
        ErrorCode::WindowNotFound
    );
}

#[tokio::test]
async fn expired_state_is_refused() {
    let (_, gui) = setup(Duration::from_millis(1));
    let s = observe(&gui).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let e = act(&gui, &s.state_id, "0x1", json!([{"type": "focus"}]))
        .await
        .expect_err("expired");
    assert_eq!(e.code, ErrorCode::StateExpired);
}

#[tokio::test]
async fn a_failed_action_reports_its_index_and_what_ran_before() {
    let (fake, gui) = setup(Duration::from_secs(30));
    *fake.fail_on.lock().unwrap() = Some(1);
    let s = observe(&gui).await;
    let e = act(
        &gui,
        &s.state_id,
        "0x1",
        json!([{"type": "focus"}, {"type": "click", "element_id": "e1"}, {"type": "focus"}]),
    )
    .await
    .expect_err("second fails");
    assert_eq!(e.code, ErrorCode::ElementStale);
    assert!(e.message.starts_with("action 1 (click)"), "{}", e.message);
    let d = e.details.expect("details");
    assert_eq!(d["failed_index"], 1);
    assert_eq!(d["completed"].as_array().map(Vec::len), Some(1));
    assert_eq!(fake.performed.lock().unwrap().len(), 1);
}

fn human(geometry: Rect, actions: serde_json::Value) -> HumanActionRequest {
    HumanActionRequest {
        window_id: "0x1".into(),
        geometry,
        actions,
        caller: None,
    }
}

#[tokio::test]
async fn human_input_runs_only_on_the_frames_geometry_and_inside_the_window() {
    let (fake, gui) = setup(Duration::from_secs(30));
    let here = Rect::new(100, 100, 200, 100);
    let r = gui
        .human_action(human(here, json!([{"type": "click", "x": 10, "y": 20}])))
        .await
        .expect("same geometry: runs");
    assert!(r.ok);
    assert_eq!(fake.performed.lock().unwrap().len(), 1);
    // Moved since the frame: refused, nothing injected.
    let moved = Rect::new(101, 100, 200, 100);
    let e = gui
        .human_action(human(moved, json!([{"type": "click", "x": 10, "y": 20}])))
        .await
        .expect_err("moved");
    assert_eq!(e.code, ErrorCode::WindowChanged);
    assert!(e.message.contains("take a new frame"), "{}", e.message);
    // Outside the window, and element ids (the model's path): refused before anything runs.
    for (actions, code) in [
        (
            json!([{"type": "click", "x": 200, "y": 5}]),
            ErrorCode::OutOfBounds,
        ),
        (
            json!([{"type": "drag", "x": 5, "y": 5, "to_x": 5, "to_y": 100}]),
            ErrorCode::OutOfBounds,
        ),
        (
            json!([{"type": "click", "element_id": "e1"}]),
            ErrorCode::InvalidArgument,
        ),
    ] {
        let e = gui
            .human_action(human(here, actions.clone()))
            .await
            .expect_err("refused");
        assert_eq!(e.code, code, "{actions}: {}", e.message);
    }
    assert_eq!(fake.performed.lock().unwrap().len(), 1);
    // Keys need no point; the window is gone: WINDOW_NOT_FOUND.
    gui.human_action(human(here, json!([{"type": "key", "keys": "ctrl+a"}])))
        .await
        .expect("key");
    *fake.bounds.lock().unwrap() = None;
    let e = gui
        .human_action(human(here, json!([{"type": "key", "keys": "a"}])))
        .await
        .expect_err("gone");
    assert_eq!(e.code, ErrorCode::WindowNotFound);
}

#[tokio::test]
async fn a_frame_carries_its_geometry_and_is_skipped_when_unchanged() {
    let (fake, gui) = setup(Duration::from_secs(30));
    let req = FrameRequest {
        window_id: "0x1".into(),
        ..Default::default()
    };
    let first = gui.frame(req.clone()).await.expect("frame");
    assert!(!first.unchanged);
    assert_eq!(first.window.bounds, Rect::new(100, 100, 200, 100));
    assert!(first.image.is_some() && first.screenshot.is_some());
    let again = gui
        .frame(FrameRequest {
            if_none_match: Some(first.etag.clone()),
            ..req.clone()
        })
        .await
        .expect("frame");
    assert!(again.unchanged && again.image.is_none());
    assert_eq!(again.etag, first.etag);
    // Same pixels, new geometry: a new frame (the page must learn the geometry).
    *fake.bounds.lock().unwrap() = Some(Rect::new(120, 100, 200, 100));
    let moved = gui
        .frame(FrameRequest {
            if_none_match: Some(first.etag.clone()),
            ..req
        })
        .await
        .expect("frame");
    assert!(!moved.unchanged);
    assert_ne!(moved.etag, first.etag);
}

#[tokio::test]
async fn an_action_on_a_window_a_modal_dialog_blocks_is_refused_before_it_runs() {
    let (fake, gui) = setup(Duration::from_secs(30));
    let st = observe(&gui).await;
    *fake.blocked_by.lock().unwrap() = Some("0x2".into());
    let e = act(
        &gui,
        &st.state_id,
        "0x1",
        json!([{"type": "click", "x": 5, "y": 5}]),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::WindowBlocked);
    assert!(
        e.message.contains("0x2") && e.message.contains("gui_state 0x2"),
        "{}",
        e.message
    );
    assert!(fake.performed.lock().unwrap().is_empty(), "nothing may run");
    let details = e.details.expect("details");
    assert_eq!(details["blocked_by"], "0x2");
    assert_eq!(details["failed_index"], 0);
    assert_eq!(ErrorCode::WindowBlocked.as_str(), "WINDOW_BLOCKED");
}

/// A desktop that goes away: `stale` says so until a new connection is made.
struct Dying {
    fake: Arc<Fake>,
    stale: Arc<Mutex<Option<String>>>,
}

#[async_trait]
impl DesktopBackend for Dying {
    fn info(&self) -> BackendInfo {
        self.fake.info()
    }
    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        self.fake.list_windows().await
    }
    async fn window(&self, id: &str) -> GuiResult<WindowInfo> {
        self.fake.window(id).await
    }
    async fn observe(&self, id: &str, r: &ObserveRequest) -> GuiResult<Snapshot> {
        self.fake.observe(id, r).await
    }
    async fn perform(&self, w: &WindowInfo, a: &BackendAction) -> GuiResult<ActionOutcome> {
        self.fake.perform(w, a).await
    }
    fn stale(&self) -> Option<String> {
        self.stale.lock().unwrap().clone()
    }
}

/// Counts connections; fails them while `down` (the desktop is not back yet).
struct Reconnecting {
    fake: Arc<Fake>,
    connects: Arc<Mutex<usize>>,
    down: Arc<Mutex<bool>>,
    stale: Arc<Mutex<Option<String>>>,
}

#[async_trait]
impl BackendConnector for Reconnecting {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        *self.connects.lock().unwrap() += 1;
        if *self.down.lock().unwrap() {
            return Err(GuiError::unavailable("cannot connect to X display :97"));
        }
        // A new connection is a fresh one: not stale.
        *self.stale.lock().unwrap() = None;
        Ok(Arc::new(Dying {
            fake: self.fake.clone(),
            stale: self.stale.clone(),
        }))
    }
}

#[tokio::test]
async fn a_stale_backend_is_replaced_and_a_missing_desktop_is_looked_for_again() {
    let fake = Arc::new(Fake::default());
    *fake.bounds.lock().unwrap() = Some(Rect::new(100, 100, 200, 100));
    let (connects, down, stale) = (
        Arc::new(Mutex::new(0)),
        Arc::new(Mutex::new(false)),
        Arc::new(Mutex::new(None)),
    );
    let gui = LocalGui::new(
        "local",
        Limits::default(),
        Arc::new(Reconnecting {
            fake,
            connects: connects.clone(),
            down: down.clone(),
            stale: stale.clone(),
        }),
    );
    assert_eq!(gui.list().await.unwrap().windows.len(), 1);
    assert_eq!(gui.list().await.unwrap().windows.len(), 1);
    assert_eq!(*connects.lock().unwrap(), 1, "a healthy backend is kept");
    // The X server goes away: the backend says so, and the desktop is not back yet.
    *stale.lock().unwrap() = Some("the connection to the X server was lost".into());
    *down.lock().unwrap() = true;
    let e = gui.list().await.unwrap_err();
    assert_eq!(e.code, ErrorCode::GuiUnavailable);
    // Right after a failed attempt the same answer comes from memory (no new attempt)...
    assert_eq!(gui.list().await.unwrap_err(), e);
    assert_eq!(*connects.lock().unwrap(), 2);
    // ... and half a second later the desktop is looked for again.
    tokio::time::sleep(Duration::from_millis(550)).await;
    assert!(gui.list().await.is_err());
    assert_eq!(*connects.lock().unwrap(), 3, "looked for again");
    // It is back: the next attempt connects anew and works, in the same service.
    *down.lock().unwrap() = false;
    tokio::time::sleep(Duration::from_millis(550)).await;
    assert_eq!(gui.list().await.unwrap().windows.len(), 1);
    assert_eq!(gui.list().await.unwrap().windows.len(), 1);
    assert_eq!(*connects.lock().unwrap(), 4);
}
