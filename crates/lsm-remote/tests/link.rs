//! The link in one process: a controller and a worker over real TLS on loopback, the worker
//! serving a scripted `GuiService`. Covers what the desktop tests do not reach: the web UI's
//! frame (image over the binary path) and human input, error pass-through, offline behaviour.

use async_trait::async_trait;
use lsm_core::{
    ActionOutput, ActionRequest, BackendInfo, CoordinateSpace, EncodedImage, ErrorCode, FrameOutput,
    FrameRequest, GuiError, GuiResult, GuiService, HumanActionRequest, ImageFormat, ListOutput, Rect,
    StateOutput, StateRequest, WindowInfo,
};
use lsm_remote::{Controller, StateDir, TokenSource, WorkerConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Scripted;

fn window() -> WindowInfo {
    WindowInfo {
        pid: Some(1),
        focused: true,
        ..WindowInfo::new("0x1", "t", "a", Rect::new(10, 20, 300, 200))
    }
}

#[async_trait]
impl GuiService for Scripted {
    async fn list(&self) -> GuiResult<ListOutput> {
        Ok(ListOutput {
            machine: "m1".into(),
            backend: BackendInfo {
                name: "scripted".into(),
                platform: "test".into(),
                session: "none".into(),
                capabilities: vec![],
                notes: vec![],
            },
            windows: vec![window()],
            truncated: false,
        })
    }
    async fn state(&self, _r: StateRequest) -> GuiResult<StateOutput> {
        Err(GuiError::new(ErrorCode::WindowNotFound, "no such window"))
    }
    async fn action(&self, _r: ActionRequest) -> GuiResult<ActionOutput> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Err(GuiError::backend("unreachable"))
    }
    async fn frame(&self, r: FrameRequest) -> GuiResult<FrameOutput> {
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        Ok(FrameOutput {
            machine: "m1".into(),
            window: window(),
            coordinate_space: CoordinateSpace {
                origin: "window".into(),
                units: "logical_px".into(),
                width: 300,
                height: 200,
                scale: 1.0,
                display_scale: None,
                note: None,
            },
            etag: "e1".into(),
            unchanged: r.if_none_match.as_deref() == Some("e1"),
            screenshot: None,
            image: r.if_none_match.is_none().then_some(EncodedImage {
                format: ImageFormat::Webp,
                width: 300,
                height: 200,
                bytes,
            }),
        })
    }
    async fn human_action(&self, r: HumanActionRequest) -> GuiResult<ActionOutput> {
        if r.geometry != window().bounds {
            return Err(GuiError::new(ErrorCode::WindowChanged, "moved"));
        }
        Ok(ActionOutput {
            machine: "m1".into(),
            window_id: r.window_id,
            ok: true,
            results: vec![],
            stopped: None,
            not_run: vec![],
            next: "observe".into(),
            ..ActionOutput::default()
        })
    }
}

async fn wait_connected(c: &Controller, name: &str, want: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.machines().iter().find(|m| m.name == name).map(|m| m.connected) != Some(want) {
        assert!(
            Instant::now() < deadline,
            "machine {name} connected != {want}: {:?}",
            c.machines()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_frames_and_offline_over_a_real_link() {
    let dir = std::env::temp_dir().join(format!("lsm-remote-link-{}", std::process::id()));
    let state = StateDir::new(dir.clone());
    let token = state.enrol("m1").unwrap();
    let pin = state.pin().unwrap();
    let controller = Controller::new(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(controller.clone().serve_on(listener));

    assert!(controller.machine("nosuch").is_none());
    let m1 = controller.machine("m1").expect("enrolled");
    let e = m1.list().await.unwrap_err();
    assert_eq!(e.code, ErrorCode::MachineOffline);

    let worker = tokio::spawn(lsm_remote::worker::run(WorkerConfig {
        controller: format!("wss://127.0.0.1:{port}"),
        name: "m1".into(),
        token: TokenSource::Value(token),
        pin: Some(pin),
        session: "none".into(),
        gui: Arc::new(Scripted),
    }));
    wait_connected(&controller, "m1", true).await;

    assert_eq!(m1.list().await.unwrap().windows[0].window_id, "0x1");
    let e = m1.state(StateRequest::default()).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::WindowNotFound);

    // The web UI's frame: the image arrives over the binary path, intact.
    let f = m1
        .frame(FrameRequest {
            window_id: "0x1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let img = f.image.expect("an image");
    assert_eq!((img.width, img.height, img.format), (300, 200, ImageFormat::Webp));
    assert_eq!(
        img.bytes,
        (0..100_000u32).map(|i| (i * 7) as u8).collect::<Vec<u8>>()
    );
    assert_eq!(f.window.bounds, window().bounds);
    let f = m1
        .frame(FrameRequest {
            window_id: "0x1".into(),
            if_none_match: Some("e1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(f.unchanged && f.image.is_none());

    // Geometry-checked human input.
    let req = |geometry| HumanActionRequest {
        window_id: "0x1".into(),
        geometry,
        actions: serde_json::json!([]),
        caller: None,
    };
    assert!(m1.human_action(req(window().bounds)).await.unwrap().ok);
    let moved = Rect {
        x: 0,
        ..window().bounds
    };
    assert_eq!(
        m1.human_action(req(moved)).await.unwrap_err().code,
        ErrorCode::WindowChanged
    );

    // The worker goes away during a call: MACHINE_OFFLINE at once, not after the call's limit.
    let m = m1.clone();
    let call = tokio::spawn(async move {
        let r = ActionRequest {
            window_id: "0x1".into(),
            state_id: "s".into(),
            actions: serde_json::json!([]),
            observe: Default::default(),
            settle_ms: None,
            screenshot: false,
            caller: None,
        };
        m.action(r).await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = Instant::now();
    worker.abort();
    let e = call.await.unwrap().unwrap_err();
    assert_eq!(e.code, ErrorCode::MachineOffline);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    wait_connected(&controller, "m1", false).await;
    std::fs::remove_dir_all(dir).unwrap();
}
