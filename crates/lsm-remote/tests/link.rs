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

// ---- liveness: a cut link (traffic stopped, nothing closed) and the reconnect backoff

use lsm_remote::controller::{PING_EVERY, SILENCE_LIMIT};
use lsm_remote::worker::BACKOFF_MAX;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

/// A TCP relay that can be cut: while cut, no byte crosses in either direction and nothing is
/// closed (a pulled cable, a dead router); bytes read before the cut and held by the kernels
/// cross after it, as TCP retransmission would deliver them.
async fn relay(listener: tokio::net::TcpListener, to: std::net::SocketAddr, cut: watch::Receiver<bool>) {
    async fn pipe(
        mut r: tokio::net::tcp::OwnedReadHalf,
        mut w: tokio::net::tcp::OwnedWriteHalf,
        mut cut: watch::Receiver<bool>,
    ) {
        let mut buf = vec![0u8; 16 << 10];
        loop {
            if cut.wait_for(|c| !*c).await.is_err() {
                return;
            }
            let n = match r.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if cut.wait_for(|c| !*c).await.is_err() {
                return;
            }
            if w.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = w.shutdown().await;
    }
    while let Ok((a, _)) = listener.accept().await {
        let Ok(b) = tokio::net::TcpStream::connect(to).await else {
            continue;
        };
        let (ar, aw) = a.into_split();
        let (br, bw) = b.into_split();
        tokio::spawn(pipe(ar, bw, cut.clone()));
        tokio::spawn(pipe(br, aw, cut.clone()));
    }
}

/// `state` takes twice the silence limit (a long walk), `action` 30 s.
struct Slow;

#[async_trait]
impl GuiService for Slow {
    async fn list(&self) -> GuiResult<ListOutput> {
        Scripted.list().await
    }
    async fn state(&self, _r: StateRequest) -> GuiResult<StateOutput> {
        tokio::time::sleep(SILENCE_LIMIT * 2).await;
        Err(GuiError::new(ErrorCode::WindowNotFound, "gone after a long walk"))
    }
    async fn action(&self, r: ActionRequest) -> GuiResult<ActionOutput> {
        Scripted.action(r).await
    }
    async fn frame(&self, r: FrameRequest) -> GuiResult<FrameOutput> {
        Scripted.frame(r).await
    }
    async fn human_action(&self, r: HumanActionRequest) -> GuiResult<ActionOutput> {
        Scripted.human_action(r).await
    }
}

fn slow_action() -> ActionRequest {
    ActionRequest {
        window_id: "0x1".into(),
        state_id: "s".into(),
        actions: serde_json::json!([]),
        observe: Default::default(),
        settle_ms: None,
        screenshot: false,
        caller: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_link_is_noticed_within_the_silence_limit_and_comes_back() {
    let dir = std::env::temp_dir().join(format!("lsm-remote-cut-{}", std::process::id()));
    let state = StateDir::new(dir.clone());
    let token = state.enrol("m1").unwrap();
    let pin = state.pin().unwrap();
    let controller = Controller::new(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let to = listener.local_addr().unwrap();
    tokio::spawn(controller.clone().serve_on(listener));
    let (cut, cut_rx) = watch::channel(false);
    let relayed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = relayed.local_addr().unwrap().port();
    tokio::spawn(relay(relayed, to, cut_rx));
    let worker = tokio::spawn(lsm_remote::worker::run(WorkerConfig {
        controller: format!("wss://127.0.0.1:{port}"),
        name: "m1".into(),
        token: TokenSource::Value(token),
        pin: Some(pin),
        session: "none".into(),
        gui: Arc::new(Slow),
    }));
    wait_connected(&controller, "m1", true).await;
    let m1 = controller.machine("m1").expect("enrolled");

    // A call longer than the silence limit: the link stays up while the worker is busy (its
    // reader and pinger do not wait for the call), and the call's own answer comes back.
    let t = Instant::now();
    let e = m1.state(StateRequest::default()).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::WindowNotFound, "{e:?}");
    assert!(t.elapsed() >= SILENCE_LIMIT * 2);

    // Cut with a call in flight: it ends MACHINE_OFFLINE once the link has been silent for the
    // limit (counted from the last byte, at most PING_EVERY before the cut), never later.
    let m = m1.clone();
    let in_flight = tokio::spawn(async move { m.action(slow_action()).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cut_at = Instant::now();
    cut.send_replace(true);
    let e = in_flight.await.unwrap().unwrap_err();
    let noticed = cut_at.elapsed();
    eprintln!("cut noticed after {noticed:?} (silence limit {SILENCE_LIMIT:?}, ping every {PING_EVERY:?})");
    assert_eq!(e.code, ErrorCode::MachineOffline, "{e:?}");
    assert!(e.message.contains("silent for"), "{}", e.message);
    assert!(
        noticed <= SILENCE_LIMIT + Duration::from_millis(400),
        "{noticed:?}"
    );
    assert!(
        noticed + PING_EVERY + Duration::from_millis(200) >= SILENCE_LIMIT,
        "dropped before the limit: {noticed:?}"
    );
    let listed = controller
        .machines()
        .into_iter()
        .find(|m| m.name == "m1")
        .unwrap();
    assert!(!listed.connected, "{listed:?}");
    assert!(listed.detail.unwrap_or_default().contains("silent for"));

    // While cut: every call answers MACHINE_OFFLINE at once, with the reason.
    for _ in 0..5 {
        let t = Instant::now();
        let e = m1.list().await.unwrap_err();
        assert_eq!(e.code, ErrorCode::MachineOffline);
        assert!(e.message.contains("silent for"), "{}", e.message);
        assert!(t.elapsed() < Duration::from_millis(100), "{:?}", t.elapsed());
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    assert!(!controller
        .machines()
        .iter()
        .any(|m| m.name == "m1" && m.connected));

    // The cut ends: the worker (which noticed the silence too) is back within its backoff.
    cut.send_replace(false);
    let ended = Instant::now();
    wait_connected(&controller, "m1", true).await;
    let back = ended.elapsed();
    eprintln!("reconnected {back:?} after the cut ended");
    assert!(
        back <= BACKOFF_MAX.mul_f64(1.25) + Duration::from_secs(1),
        "{back:?}"
    );
    assert_eq!(m1.list().await.unwrap().windows[0].window_id, "0x1");
    worker.abort();
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_retries_at_most_the_backoff_cap_apart() {
    let dir = std::env::temp_dir().join(format!("lsm-remote-backoff-{}", std::process::id()));
    let state = StateDir::new(dir.clone());
    let token = state.enrol("m1").unwrap();
    let pin = state.pin().unwrap();
    // A port with nothing on it for 8 s (every attempt refused at once, the backoff grows to its
    // cap), then the controller.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let worker = tokio::spawn(lsm_remote::worker::run(WorkerConfig {
        controller: format!("wss://127.0.0.1:{port}"),
        name: "m1".into(),
        token: TokenSource::Value(token),
        pin: Some(pin),
        session: "none".into(),
        gui: Arc::new(Scripted),
    }));
    tokio::time::sleep(Duration::from_secs(8)).await;
    let controller = Controller::new(state);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let up = Instant::now();
    tokio::spawn(controller.clone().serve_on(listener));
    wait_connected(&controller, "m1", true).await;
    let back = up.elapsed();
    eprintln!("worker connected {back:?} after the controller came up");
    assert!(
        back <= BACKOFF_MAX.mul_f64(1.25) + Duration::from_millis(500),
        "{back:?}"
    );
    worker.abort();
    std::fs::remove_dir_all(dir).unwrap();
}
