//! Fuzz targets (property tests) for the worker link, both directions: the binary image frames
//! (encode -> decode = identity; any bytes, cut or changed frames refused clearly), the JSON
//! messages (any text; what decodes re-encodes to itself), and the live link: a real controller
//! fed generated frames by a fuzzing worker, and a real worker fed generated messages by a
//! fuzzing controller. Longer run:
//! `LSM_FUZZ_SECS=600 cargo test --release -p lsm-remote --test prop_proto -- --nocapture`.

#[path = "../../lsm-core/tests/fuzz/mod.rs"]
mod fuzz;

use futures_util::{SinkExt, StreamExt};
use lsm_core::{ErrorCode, GuiService, Limits, LocalGui, NoGui};
use lsm_remote::proto::{self, Call, Hello, ImageMeta, ToController, ToWorker, PROTOCOL};
use lsm_remote::{Controller, StateDir, TokenSource, WorkerConfig};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

const KEYS: &[&str] = &[
    "type",
    "id",
    "ok",
    "err",
    "image",
    "call",
    "op",
    "code",
    "message",
    "details",
    "format",
    "width",
    "height",
    "bytes",
    "window_id",
    "state_id",
    "actions",
    "screenshot",
    "include_elements",
    "image_format",
    "geometry",
    "protocol",
    "name",
    "token",
    "platform",
    "session",
    "version",
    "max_edge",
    "if_none_match",
    "observe",
];

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// The link's tasks run on these runtimes' threads, named so.
const RT_THREAD: &str = "fuzz-link";

/// Counts panics on the runtimes' threads (not the test threads': the runner's own failures).
fn count_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some(RT_THREAD) {
                PANICS.fetch_add(1, Ordering::SeqCst);
            }
            default(info);
        }));
    });
}

// ---------------------------------------------------------------- binary frames

#[test]
fn image_frames_round_trip() {
    let payload = prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 0..4096),
        1 => (0usize..(1 << 20)).prop_map(|n| vec![0xa5; n]),
    ];
    fuzz::run(
        "image_frames_round_trip",
        (any::<u64>(), payload),
        300,
        |(id, payload)| {
            let frame = proto::encode_image(*id, payload);
            match proto::decode_image(&frame) {
                Ok((got, Ok(p))) if got == *id && p == payload.as_slice() => Ok(()),
                other => Err(format!(
                    "decoded as {:?}",
                    other.map(|(i, p)| (i, p.map(<[u8]>::len)))
                )),
            }
        },
    );
}

#[test]
fn image_frames_damaged() {
    let damage = (
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..512),
        any::<prop::sample::Index>(),
        1u8..=255,
        0u8..3,
    );
    let raw = prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..128).prop_map(|b| (None, b)),
        4 => damage.prop_map(|(id, payload, at, x, how)| {
            let mut f = proto::encode_image(id, &payload);
            let i = at.index(f.len());
            match how {
                0 => f[i] ^= x,
                1 => f.truncate(i),
                _ => f.insert(i, x),
            }
            (Some((id, payload, i, how)), f)
        }),
    ];
    fuzz::run("image_frames_damaged", raw, 1000, |(made, frame)| {
        let decoded = proto::decode_image(frame);
        let Some((id, payload, at, how)) = made else {
            return match decoded {
                // Random bytes pass only with the magic and a matching SHA-256: never, in practice.
                Ok((_, Ok(_))) => Err("random bytes accepted".into()),
                Ok((_, Err(e))) if e.code == ErrorCode::BackendError => Ok(()),
                Ok((_, Err(e))) => Err(format!("code {}", e.code)),
                Err(m) if !m.is_empty() => Ok(()),
                Err(_) => Err("an empty message".into()),
            };
        };
        match (how, at, decoded) {
            // The id changed: decoded, under another id, with the right payload.
            (0, 4..=11, Ok((got, Ok(p)))) if got != *id && p == payload.as_slice() => Ok(()),
            // Magic or cut into the header: malformed.
            (0, 0..=3, Err(_)) => Ok(()),
            (1, 0..=43, Err(_)) => Ok(()),
            // Insertions before byte 44 shift the header: malformed or checksum.
            (2, _, Err(_)) => Ok(()),
            // Anything else changed: the checksum catches it.
            (_, _, Ok((_, Err(e)))) if e.code == ErrorCode::BackendError => Ok(()),
            // An insertion may land where a byte of the same value already was.
            (2, _, Ok((_, Ok(p)))) if p.len() == payload.len() + 1 => {
                Err("an insertion passed the checksum".into())
            }
            (_, _, other) => Err(format!("{other:?}")),
        }
    });
}

#[test]
fn image_meta_and_bytes() {
    fuzz::run(
        "image_meta_and_bytes",
        (fuzz::json(KEYS), prop::collection::vec(any::<u8>(), 0..64)),
        500,
        |(meta, bytes)| {
            let Ok(meta) = serde_json::from_value::<ImageMeta>(meta.clone()) else {
                return Ok(());
            };
            match proto::image_from(&meta, bytes) {
                Ok(img) if meta.bytes == bytes.len() && img.bytes == *bytes => Ok(()),
                Err(e) if meta.bytes != bytes.len() && e.code == ErrorCode::BackendError => Ok(()),
                other => Err(format!("{:?}", other.map(|i| i.bytes.len()))),
            }
        },
    );
}

// ---------------------------------------------------------------- JSON messages

/// A message shaped like the protocol's, with fields of any type.
fn message() -> impl Strategy<Value = Value> {
    let call = (
        prop::sample::select(vec![
            "list",
            "state",
            "action",
            "frame",
            "human_action",
            "fly",
            "",
        ]),
        fuzz::json_object(KEYS),
    )
        .prop_map(|(op, mut m)| {
            m.insert("op".into(), json!(op));
            Value::Object(m)
        });
    let err = prop_oneof![
        (
            prop::sample::select(vec!["WINDOW_NOT_FOUND", "TIMEOUT", "NOPE", ""]),
            fuzz::nasty_string()
        )
            .prop_map(|(c, m)| json!({"code": c, "message": m})),
        fuzz::json(KEYS),
    ];
    prop_oneof![
        (fuzz::nasty_number(), call).prop_map(|(id, call)| json!({"type": "request", "id": id, "call": call})),
        (fuzz::nasty_number(), prop::option::of(fuzz::json(KEYS)), prop::option::of(err), prop::option::of(fuzz::json(KEYS)))
            .prop_map(|(id, ok, err, image)| json!({"type": "reply", "id": id, "ok": ok, "err": err, "image": image})),
        prop::sample::select(vec!["welcome", "refused", "reply", "request", "hello"]).prop_flat_map(|t| {
            fuzz::json_object(KEYS).prop_map(move |mut m| {
                m.insert("type".into(), json!(t));
                Value::Object(m)
            })
        }),
        (any::<u32>(), fuzz::nasty_string(), fuzz::nasty_string()).prop_map(|(p, n, t)| {
            json!({"protocol": p, "name": n, "token": t, "platform": "linux", "session": "none", "version": "0"})
        }),
        fuzz::json(KEYS),
    ]
}

/// Decodes as `T`; what decodes encodes to a text that decodes to the same encoding.
fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(text: &[u8]) -> Result<(), String> {
    let Ok(m) = serde_json::from_slice::<T>(text) else {
        return Ok(());
    };
    let once = serde_json::to_string(&m).map_err(|e| format!("re-encoding: {e}"))?;
    let again: T = serde_json::from_str(&once).map_err(|e| format!("{once} does not decode: {e}"))?;
    let twice = serde_json::to_string(&again).map_err(|e| format!("re-encoding: {e}"))?;
    if once != twice {
        return Err(format!("{once} came back as {twice}"));
    }
    Ok(())
}

#[test]
fn messages_round_trip() {
    let text = prop_oneof![
        4 => message().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        1 => fuzz::raw_bytes(KEYS),
    ];
    fuzz::run("messages_round_trip", text, 1000, |t| {
        round_trip::<ToController>(t)?;
        round_trip::<ToWorker>(t)?;
        round_trip::<Hello>(t)?;
        round_trip::<Call>(t)
    });
}

/// Found by `messages_round_trip`: a number relayed in a reply (`ok` is the worker's result as
/// JSON) changed on the way, 6.056766215128194e122 -> 6.0567662151281936e122, as serde_json
/// parsed floats to the nearest double only with its `float_roundtrip` feature (now on).
#[test]
fn regression_numbers_cross_the_link_unchanged() {
    let text =
        br#"{"type":"reply","id":0,"ok":[6.056766215128194e+122, 0.6428571428571429, 1.0000000000000002]}"#;
    round_trip::<ToController>(text).expect("the same numbers");
    let Ok(ToController::Reply { ok, .. }) = serde_json::from_slice(text) else {
        panic!("a reply")
    };
    assert_eq!(
        ok,
        Some(json!([
            6.056766215128194e122,
            0.6428571428571429,
            1.0000000000000002
        ]))
    );
}

// ---------------------------------------------------------------- the live link

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(RT_THREAD)
        .enable_all()
        .build()
        .expect("runtime")
}

fn temp_dir(what: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lsm-fuzz-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// What the fuzzing worker sends while the controller waits for its reply.
#[derive(Debug, Clone)]
enum Frame {
    Text(Vec<u8>),
    Binary(Vec<u8>),
    /// A reply to the call in flight, announcing an image of `bytes` bytes (or none).
    Reply(Option<usize>),
    /// An image frame for the call in flight, `flip` changing one byte of it.
    Image(Vec<u8>, Option<(prop::sample::Index, u8)>),
    Ping,
}

fn frames() -> impl Strategy<Value = (Vec<Frame>, bool)> {
    let frame = prop_oneof![
        2 => message().prop_map(|v| Frame::Text(serde_json::to_vec(&v).unwrap_or_default())),
        1 => fuzz::raw_bytes(KEYS).prop_map(Frame::Text),
        1 => prop::collection::vec(any::<u8>(), 0..128).prop_map(Frame::Binary),
        3 => prop::option::of(0usize..64).prop_map(Frame::Reply),
        3 => (prop::collection::vec(any::<u8>(), 0..64), prop::option::of((any::<prop::sample::Index>(), 1u8..=255)))
            .prop_map(|(p, f)| Frame::Image(p, f)),
        1 => Just(Frame::Ping),
    ];
    (prop::collection::vec(frame, 0..6), any::<bool>())
}

type Ws = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

async fn connect_worker(addr: std::net::SocketAddr, token: &str) -> Result<Ws, String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let mut req = format!("ws://{addr}/worker")
        .into_client_request()
        .map_err(|e| e.to_string())?;
    let h = req.headers_mut();
    h.insert(
        "authorization",
        format!("Bearer {token}").parse().map_err(|_| "header")?,
    );
    h.insert(proto::WORKER_HEADER, "fz".parse().map_err(|_| "header")?);
    let (mut ws, _) = tokio_tungstenite::client_async(req, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let hello = json!({"protocol": PROTOCOL, "name": "fz", "token": token, "platform": "linux",
                       "session": "none", "version": "fuzz"});
    ws.send(Message::text(hello.to_string()))
        .await
        .map_err(|e| e.to_string())?;
    match ws.next().await {
        Some(Ok(Message::Text(t))) if t.as_str().contains("welcome") => Ok(ws),
        other => Err(format!("no welcome: {other:?}")),
    }
}

/// A real controller; a worker that answers its call with generated frames. The call ends
/// within its bound (the worker closes, or replies last), with a result or a stable error; the
/// controller never panics and takes the next connection.
#[test]
fn link_controller_side() {
    count_panics();
    let rt = runtime();
    let state = StateDir::new(temp_dir("controller"));
    let token = state.enrol("fz").expect("enrol");
    let controller = Controller::new(state.clone());
    let addr = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(controller.clone().serve_on(listener));
        addr
    });
    let frame_request: lsm_core::FrameRequest =
        serde_json::from_value(json!({"window_id": "0x1", "image_format": "webp"})).expect("a frame request");
    fuzz::run("link_controller_side", frames(), 100, |(frames, close)| {
        let before = PANICS.load(Ordering::SeqCst);
        rt.block_on(async {
            let mut ws = tokio::time::timeout(Duration::from_secs(3), connect_worker(addr, &token))
                .await
                .map_err(|_| "connecting took over 3 s".to_string())??;
            // The controller registers the link just after its welcome: wait for that.
            let connected = async {
                while !controller.machines().iter().any(|m| m.name == "fz" && m.connected) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            };
            tokio::time::timeout(Duration::from_secs(3), connected)
                .await
                .map_err(|_| "not listed as connected within 3 s".to_string())?;
            let service = controller.machine("fz").ok_or("fz unknown")?;
            let call = tokio::spawn({
                let r = frame_request.clone();
                async move { service.frame(r).await }
            });
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            let id = loop {
                match tokio::time::timeout_at(deadline, ws.next()).await {
                    Ok(Some(Ok(Message::Text(t)))) => match serde_json::from_str::<ToWorker>(t.as_str()) {
                        Ok(ToWorker::Request { id, .. }) => break id,
                        other => return Err(format!("not a request: {other:?}")),
                    },
                    Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => {}
                    other => return Err(format!("no request: {other:?}")),
                }
            };
            for f in frames {
                let msg = match f {
                    Frame::Text(t) => Message::text(String::from_utf8_lossy(t).into_owned()),
                    Frame::Binary(b) => Message::binary(b.clone()),
                    Frame::Reply(bytes) => {
                        let image = bytes.map(|n| json!({"format": "webp", "width": 1, "height": 1, "bytes": n}));
                        Message::text(json!({"type": "reply", "id": id, "ok": {}, "image": image}).to_string())
                    }
                    Frame::Image(p, flip) => {
                        let mut f = proto::encode_image(id, p);
                        if let Some((at, x)) = flip {
                            let i = at.index(f.len());
                            f[i] ^= x;
                        }
                        Message::binary(f)
                    }
                    Frame::Ping => Message::Ping(Vec::new().into()),
                };
                // The controller may drop the link at a protocol error: later sends fail.
                if !matches!(tokio::time::timeout(Duration::from_secs(2), ws.send(msg)).await, Ok(Ok(()))) {
                    break;
                }
            }
            let ending = async {
                if *close {
                    let _ = ws.close(None).await;
                } else {
                    let last = json!({"type": "reply", "id": id, "err": {"code": "WINDOW_NOT_FOUND", "message": "gone"}});
                    let _ = ws.send(Message::text(last.to_string())).await;
                }
            };
            tokio::time::timeout(Duration::from_secs(2), ending)
                .await
                .map_err(|_| "the last frame took over 2 s to send".to_string())?;
            let result = tokio::time::timeout(Duration::from_secs(3), call)
                .await
                .map_err(|_| "the call did not end within 3 s".to_string())?
                .map_err(|e| format!("the call's task: {e}"))?;
            if let Err(e) = result {
                if e.message.trim().is_empty() {
                    return Err(format!("{} without a message", e.code));
                }
            }
            drop(ws);
            Ok(())
        })?;
        if PANICS.load(Ordering::SeqCst) != before {
            return Err("a panic in the controller".into());
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&state.dir);
}

/// A real worker (on a machine without a desktop) connected to a fuzzing controller that
/// answers its hello and sends generated messages: the worker never panics, replies to each
/// request it understood with that request's id, and leaves (to reconnect) on garbage.
#[test]
fn link_worker_side() {
    count_panics();
    let rt = runtime();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let answer = prop_oneof![
        6 => Just(json!({"type": "welcome"}).to_string()),
        1 => message().prop_map(|v| v.to_string()),
        1 => fuzz::nasty_string(),
    ];
    let sent = prop::collection::vec(
        prop_oneof![
            3 => message().prop_map(|v| Message::text(v.to_string())),
            1 => fuzz::raw_bytes(KEYS).prop_map(|b| Message::text(String::from_utf8_lossy(&b).into_owned())),
            1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Message::binary),
        ],
        0..6,
    );
    fuzz::run("link_worker_side", (answer, sent), 100, |(answer, sent)| {
        let before = PANICS.load(Ordering::SeqCst);
        let gui: Arc<dyn GuiService> = Arc::new(LocalGui::new(
            "fz",
            Limits::default(),
            Arc::new(NoGui {
                reason: "fuzzing without a desktop".into(),
            }),
        ));
        let config = WorkerConfig {
            controller: format!("ws://{addr}"),
            name: "fz".into(),
            token: TokenSource::Value(format!("lsmw_{}", "0".repeat(64))),
            pin: None,
            session: "none".into(),
            gui,
        };
        rt.block_on(async {
            let mut worker = tokio::spawn(lsm_remote::worker::run(config));
            let outcome = async {
                let (tcp, _) = tokio::time::timeout(Duration::from_secs(3), listener.accept())
                    .await
                    .map_err(|_| "the worker did not connect".to_string())?
                    .map_err(|e| e.to_string())?;
                let mut ws = tokio_tungstenite::accept_async(tcp)
                    .await
                    .map_err(|e| e.to_string())?;
                match ws.next().await {
                    Some(Ok(Message::Text(t))) => {
                        serde_json::from_str::<Hello>(t.as_str()).map_err(|e| format!("hello: {e}"))?;
                    }
                    other => return Err(format!("no hello: {other:?}")),
                }
                let _ = ws.send(Message::text(answer.clone())).await;
                let mut asked = Vec::new();
                for m in sent {
                    if let Message::Text(t) = m {
                        if let Ok(ToWorker::Request { id, .. }) = serde_json::from_str::<ToWorker>(t.as_str())
                        {
                            asked.push(id);
                        }
                    }
                    if ws.send(m.clone()).await.is_err() {
                        break;
                    }
                }
                // Whatever comes back within a moment: replies to what was asked, and the
                // worker's own activity feed (docs/web-ui.md), nothing else.
                let deadline = tokio::time::Instant::now() + Duration::from_millis(300);
                while let Ok(Some(next)) = tokio::time::timeout_at(deadline, ws.next()).await {
                    match next {
                        Ok(Message::Text(t)) => match serde_json::from_str::<ToController>(t.as_str()) {
                            Ok(ToController::Reply { id, .. }) if asked.contains(&id) => {}
                            Ok(ToController::Event { .. }) => {}
                            other => return Err(format!("the worker sent {other:?}")),
                        },
                        Ok(Message::Binary(b)) => {
                            return Err(format!("an image nobody asked for ({} bytes)", b.len()))
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
                Ok(())
            }
            .await;
            let panicked = worker.is_finished() && matches!(worker.now_or_never_err().await, Some(true));
            worker.abort();
            outcome?;
            if panicked {
                return Err("the worker panicked".into());
            }
            Ok::<(), String>(())
        })?;
        if PANICS.load(Ordering::SeqCst) != before {
            return Err("a panic in the worker".into());
        }
        Ok(())
    });
}

trait FinishedTask {
    /// For a finished task: whether it panicked.
    async fn now_or_never_err(&mut self) -> Option<bool>;
}

impl<T> FinishedTask for tokio::task::JoinHandle<T> {
    async fn now_or_never_err(&mut self) -> Option<bool> {
        match tokio::time::timeout(Duration::from_millis(10), self).await {
            Ok(Err(e)) => Some(e.is_panic()),
            Ok(Ok(_)) => Some(false),
            Err(_) => None,
        }
    }
}
