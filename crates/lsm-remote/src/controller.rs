//! The controller side: a listener that accepts workers (TLS, or plain from loopback only),
//! authenticates them against the state directory, and a `RemoteGui` per machine that forwards
//! `GuiService` calls over the worker's link.

use crate::creds::{authenticate, StateDir};
use crate::liveness::{Heard, Watched, SEND_LIMIT};
pub use crate::liveness::{PING_EVERY, SILENCE_LIMIT};
use crate::proto::{self, Call, Hello, ImageMeta, ToController, ToWorker, PROTOCOL, WORKER_HEADER};
use async_trait::async_trait;
use futures_util::{SinkExt, StreamExt};
use lsm_core::person::{Feed, FeedEvent, PersonCommand, PersonState};
use lsm_core::{
    ActionOutput, ActionRequest, EncodedImage, ErrorCode, FrameOutput, FrameRequest, GuiError, GuiResult,
    GuiService, HumanActionRequest, ListOutput, StateOutput, StateRequest,
};
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);
/// How often credentials are re-checked for connected workers (revocation).
const SWEEP_EVERY: Duration = Duration::from_secs(2);
/// Per-call limits: observations and frames, and actions (which may wait up to 30 s).
const OBSERVE_LIMIT: Duration = Duration::from_secs(30);
const ACTION_LIMIT: Duration = Duration::from_secs(60);

pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(128 << 20))
        .max_frame_size(Some(128 << 20))
}

type Reply = GuiResult<(Value, Option<EncodedImage>)>;

struct Pending {
    tx: oneshot::Sender<Reply>,
    /// The JSON reply, held until its image frame arrives.
    awaiting_image: Option<(Value, ImageMeta)>,
}

/// One connected worker.
struct Link {
    name: String,
    platform: String,
    session: String,
    version: String,
    peer: SocketAddr,
    token_sha256: String,
    out: mpsc::UnboundedSender<Message>,
    pending: Mutex<HashMap<u64, Pending>>,
    closed: AtomicBool,
    next_id: AtomicU64,
    shutdown: watch::Sender<bool>,
}

fn offline(name: &str, why: &str) -> GuiError {
    GuiError::new(
        ErrorCode::MachineOffline,
        format!("machine {name:?} {why}; it reconnects by itself when its worker runs: call gui_list to see which machines are connected"),
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Link {
    async fn call(&self, call: Call, limit: Duration) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let what = call.name();
        let text = serde_json::to_string(&ToWorker::Request { id, call })
            .map_err(|e| GuiError::backend(format!("serialising the request: {e}")))?;
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            if self.closed.load(Ordering::SeqCst) {
                return Err(offline(&self.name, "is not connected"));
            }
            pending.insert(
                id,
                Pending {
                    tx,
                    awaiting_image: None,
                },
            );
        }
        if self.out.send(Message::text(text)).is_err() {
            lock(&self.pending).remove(&id);
            return Err(offline(&self.name, "dropped its connection"));
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(offline(&self.name, "dropped its connection during the call")),
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(GuiError::timeout(format!("{what} on machine {:?}", self.name)))
            }
        }
    }

    /// Fails every call in flight at once: the link is gone (`why`, for the callers).
    fn close(&self, why: &str) {
        let drained: Vec<Pending> = {
            let mut pending = lock(&self.pending);
            self.closed.store(true, Ordering::SeqCst);
            pending.drain().map(|(_, p)| p).collect()
        };
        for p in drained {
            let _ = p.tx.send(Err(offline(
                &self.name,
                &format!("dropped its connection during the call ({why})"),
            )));
        }
        let _ = self.shutdown.send(true);
    }

    fn on_text(&self, text: &str, feed: Option<&Feed>) -> Result<(), String> {
        let (id, ok, err, image) =
            match serde_json::from_str(text).map_err(|e| format!("malformed reply: {e}"))? {
                ToController::Reply { id, ok, err, image } => (id, ok, err, image),
                ToController::Event { event } => {
                    if let Some(feed) = feed {
                        feed.publish(self.own_event(*event));
                    }
                    return Ok(());
                }
            };
        let mut pending = lock(&self.pending);
        let Some(mut p) = pending.remove(&id) else {
            return Ok(()); // timed out already
        };
        let result = match (ok, err) {
            (_, Some(e)) => Err(e),
            (Some(v), None) => Ok(v),
            (None, None) => Err(GuiError::backend("the worker sent an empty reply")),
        };
        match (result, image) {
            (Ok(v), Some(meta)) => {
                p.awaiting_image = Some((v, meta));
                pending.insert(id, p);
            }
            (r, _) => {
                drop(pending);
                let _ = p.tx.send(r.map(|v| (v, None)));
            }
        }
        Ok(())
    }

    /// A worker's event under the name it enrolled with (it cannot speak for another machine).
    fn own_event(&self, mut event: FeedEvent) -> FeedEvent {
        match &mut event {
            FeedEvent::Call(c) => c.machine = self.name.clone(),
            FeedEvent::Person(s) => {
                s.machine = self.name.clone();
                for p in &mut s.pending {
                    p.machine = self.name.clone();
                }
            }
        }
        event
    }

    fn on_binary(&self, frame: &[u8]) -> Result<(), String> {
        let (id, payload) = proto::decode_image(frame)?;
        let Some(p) = lock(&self.pending).remove(&id) else {
            return Ok(());
        };
        let Some((value, meta)) = p.awaiting_image else {
            let _ = p.tx.send(Err(GuiError::backend(
                "the worker sent an image nobody asked for",
            )));
            return Ok(());
        };
        let reply = payload
            .and_then(|bytes| proto::image_from(&meta, bytes))
            .map(|img| (value, Some(img)));
        let _ = p.tx.send(reply);
        Ok(())
    }
}

/// A remote machine as the controller knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteMachine {
    pub name: String,
    pub connected: bool,
    pub platform: Option<String>,
    pub detail: Option<String>,
}

pub struct Controller {
    state: StateDir,
    links: Mutex<HashMap<String, Arc<Link>>>,
    /// Last facts about machines not connected now (e.g. why they dropped).
    last_seen: Mutex<HashMap<String, (String, String)>>,
    /// Where the workers' activity goes (the Desktop page's feed); None: nowhere.
    feed: Mutex<Option<Arc<Feed>>>,
}

impl Controller {
    pub fn new(state: StateDir) -> Arc<Self> {
        Arc::new(Self {
            state,
            links: Mutex::new(HashMap::new()),
            last_seen: Mutex::new(HashMap::new()),
            feed: Mutex::new(None),
        })
    }

    /// Publishes the workers' activity and take-over state on `feed`.
    pub fn set_feed(&self, feed: Arc<Feed>) {
        *lock(&self.feed) = Some(feed);
    }

    fn feed(&self) -> Option<Arc<Feed>> {
        lock(&self.feed).clone()
    }

    pub fn state_dir(&self) -> &StateDir {
        &self.state
    }

    fn enrolled(&self) -> Vec<String> {
        match self.state.credentials() {
            Ok(c) => c.into_iter().map(|c| c.name).collect(),
            Err(e) => {
                tracing::warn!("reading worker credentials: {e}");
                Vec::new()
            }
        }
    }

    /// The service for an enrolled machine (its calls fail with MACHINE_OFFLINE while it is not
    /// connected); None for a name this controller does not know.
    pub fn machine(self: &Arc<Self>, name: &str) -> Option<Arc<dyn GuiService>> {
        let known = lock(&self.links).contains_key(name) || self.enrolled().iter().any(|n| n == name);
        known.then(|| {
            Arc::new(RemoteGui {
                controller: self.clone(),
                name: name.to_string(),
            }) as _
        })
    }

    /// Enrolled and connected machines, by name.
    pub fn machines(&self) -> Vec<RemoteMachine> {
        let links = lock(&self.links);
        let last = lock(&self.last_seen);
        let mut names = self.enrolled();
        names.extend(links.keys().cloned());
        names.sort();
        names.dedup();
        names
            .into_iter()
            .map(|name| match links.get(&name) {
                Some(l) => RemoteMachine {
                    connected: true,
                    platform: Some(l.platform.clone()),
                    detail: Some(format!(
                        "session {}, lsm {}, from {}",
                        l.session, l.version, l.peer
                    )),
                    name,
                },
                None => RemoteMachine {
                    connected: false,
                    platform: last.get(&name).map(|(p, _)| p.clone()),
                    detail: Some(
                        last.get(&name)
                            .map(|(_, d)| d.clone())
                            .unwrap_or_else(|| "never connected".into()),
                    ),
                    name,
                },
            })
            .collect()
    }

    fn link(&self, name: &str) -> Option<Arc<Link>> {
        lock(&self.links).get(name).cloned()
    }

    /// Accepts workers on `addr` until the process stops.
    pub async fn serve(self: Arc<Self>, addr: SocketAddr) -> std::io::Result<()> {
        self.serve_on(tokio::net::TcpListener::bind(addr).await?).await
    }

    /// As `serve`, on a bound listener.
    pub async fn serve_on(self: Arc<Self>, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let tls = tokio_rustls::TlsAcceptor::from(crate::tls::server_config(&self.state)?);
        let bound = listener.local_addr()?;
        let pin = self.state.pin()?;
        tracing::info!("worker link on {bound}, certificate sha256 {pin}");
        eprintln!("lsm: worker link wss://{bound}/ (pin {pin})");
        tokio::spawn(self.clone().sweep());
        loop {
            let (tcp, peer) = match listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    // Out of descriptors and the like: wait instead of spinning.
                    tracing::warn!("accepting a worker connection: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            tokio::spawn(self.clone().accept(tcp, peer, tls.clone()));
        }
    }

    /// Drops connected workers whose credential was revoked or replaced.
    async fn sweep(self: Arc<Self>) {
        loop {
            tokio::time::sleep(SWEEP_EVERY).await;
            let Ok(creds) = self.state.credentials() else {
                continue;
            };
            let links: Vec<Arc<Link>> = lock(&self.links).values().cloned().collect();
            for l in links {
                let valid = creds
                    .iter()
                    .any(|c| c.name == l.name && c.token_sha256 == l.token_sha256);
                if !valid {
                    tracing::warn!(name = %l.name, peer = %l.peer, "worker dropped: its credential was revoked");
                    l.close("its credential was revoked");
                }
            }
        }
    }

    async fn accept(self: Arc<Self>, tcp: TcpStream, peer: SocketAddr, tls: tokio_rustls::TlsAcceptor) {
        let mut first = [0u8; 1];
        match tokio::time::timeout(HANDSHAKE_LIMIT, tcp.peek(&mut first)).await {
            Ok(Ok(1)) => {}
            _ => return,
        }
        // Every byte the worker sends counts as a sign of life (see `liveness`).
        let heard = Heard::new();
        let tcp = Watched::new(tcp, heard.clone());
        // 0x16: a TLS handshake record. Anything else is plain HTTP: loopback only.
        let io: Box<dyn Io> = if first[0] == 0x16 {
            match tokio::time::timeout(HANDSHAKE_LIMIT, tls.accept(tcp)).await {
                Ok(Ok(s)) => Box::new(s),
                Ok(Err(e)) => {
                    tracing::warn!(%peer, "worker refused: TLS handshake failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::warn!(%peer, "worker refused: TLS handshake timed out");
                    return;
                }
            }
        } else if peer.ip().is_loopback() {
            Box::new(tcp)
        } else {
            tracing::warn!(%peer, "worker refused: plain ws:// is accepted from loopback only");
            return;
        };
        // Name and token are checked on the upgrade request: an unauthenticated peer never gets
        // a WebSocket, so it can send no message (of any size) at all.
        let mut refusal: Option<String> = None;
        // The signature is tungstenite's handshake callback's.
        #[allow(clippy::result_large_err)]
        let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
            let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
            let name = header(WORKER_HEADER).unwrap_or_default();
            let token = header("authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default();
            let checked = self
                .state
                .credentials()
                .map_err(|e| format!("credentials unreadable: {e}"))
                .and_then(|creds| {
                    authenticate(&creds, name, token).map_err(|reason| format!("{reason} (name {name:?})"))
                });
            match checked {
                Ok(_) => Ok(resp),
                Err(reason) => {
                    refusal = Some(reason);
                    let mut refused = ErrorResponse::new(Some("authentication refused".into()));
                    *refused.status_mut() = StatusCode::UNAUTHORIZED;
                    Err(refused)
                }
            }
        };
        let handshake = tokio::time::timeout(
            HANDSHAKE_LIMIT,
            tokio_tungstenite::accept_hdr_async_with_config(io, check, Some(ws_config())),
        )
        .await;
        let ws = match handshake {
            Ok(Ok(ws)) => ws,
            Ok(Err(_)) if refusal.is_some() => {
                tracing::warn!(%peer, "worker refused: {}", refusal.unwrap_or_default());
                return;
            }
            Ok(Err(e)) => {
                tracing::warn!(%peer, "worker refused: WebSocket handshake failed: {e}");
                return;
            }
            Err(_) => {
                tracing::warn!(%peer, "worker refused: WebSocket handshake timed out");
                return;
            }
        };
        let (mut sink, mut stream) = ws.split();
        let hello = match tokio::time::timeout(HANDSHAKE_LIMIT, stream.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => {
                serde_json::from_str::<Hello>(t.as_str()).map_err(|e| e.to_string())
            }
            Ok(_) => Err("no hello message".to_string()),
            Err(_) => Err("no hello message within 10 s".to_string()),
        };
        let checked = hello.and_then(|h| {
            if h.protocol != PROTOCOL {
                return Err(format!(
                    "protocol {} (this controller speaks {PROTOCOL})",
                    h.protocol
                ));
            }
            let creds = self
                .state
                .credentials()
                .map_err(|e| format!("credentials unreadable: {e}"))?;
            match authenticate(&creds, &h.name, &h.token) {
                Ok(hash) => Ok((h, hash)),
                Err(reason) => Err(format!("{reason} (name {:?})", h.name)),
            }
        });
        let (hello, token_sha256) = match checked {
            Ok(x) => x,
            Err(reason) => {
                tracing::warn!(%peer, "worker refused: {reason}");
                let refused = ToWorker::Refused {
                    message: "authentication refused".into(),
                };
                if let Ok(t) = serde_json::to_string(&refused) {
                    let _ = tokio::time::timeout(HANDSHAKE_LIMIT, sink.send(Message::text(t))).await;
                }
                let _ = tokio::time::timeout(HANDSHAKE_LIMIT, sink.close()).await;
                return;
            }
        };
        let welcome = serde_json::to_string(&ToWorker::Welcome).unwrap_or_default();
        if !matches!(
            tokio::time::timeout(HANDSHAKE_LIMIT, sink.send(Message::text(welcome))).await,
            Ok(Ok(()))
        ) {
            return;
        }
        let (out, mut out_rx) = mpsc::unbounded_channel::<Message>();
        let (shutdown, mut shutdown_rx) = watch::channel(false);
        let link = Arc::new(Link {
            name: hello.name.clone(),
            platform: hello.platform.clone(),
            session: hello.session.clone(),
            version: hello.version.clone(),
            peer,
            token_sha256,
            out,
            pending: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
            shutdown,
        });
        if let Some(old) = lock(&self.links).insert(link.name.clone(), link.clone()) {
            tracing::info!(name = %old.name, "worker replaced by a new connection");
            old.close("replaced by a new connection");
        }
        tracing::info!(
            name = %hello.name, %peer,
            "worker connected ({}, session {}, lsm {})", hello.platform, hello.session, hello.version
        );

        let mut writer_shutdown = shutdown_rx.clone();
        let writer_link = link.clone();
        let writer = tokio::spawn(async move {
            let mut ping = tokio::time::interval(PING_EVERY);
            ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let msg = tokio::select! {
                    m = out_rx.recv() => match m { Some(m) => m, None => break },
                    _ = ping.tick() => Message::Ping(Vec::new().into()),
                    _ = writer_shutdown.changed() => break,
                };
                if !matches!(tokio::time::timeout(SEND_LIMIT, sink.send(msg)).await, Ok(Ok(()))) {
                    break;
                }
            }
            // A link that cannot send is dead: fail its calls now, not at their time limit.
            writer_link.close("sending to it failed");
            let _ = tokio::time::timeout(Duration::from_secs(1), sink.close()).await;
        });
        let reason = loop {
            // No byte for SILENCE_LIMIT (a cut: nothing closes, traffic just stops) ends the link
            // as surely as a close does; the worker pings every PING_EVERY, busy or not.
            let next = tokio::select! {
                n = stream.next() => n,
                silent = heard.silence() => break format!("silent for {:.1} s", silent.as_secs_f64()),
                _ = shutdown_rx.changed() => break "closed by the controller".to_string(),
            };
            let result = match next {
                None => break "connection closed".to_string(),
                Some(Err(e)) => break format!("connection error: {e}"),
                Some(Ok(Message::Text(t))) => link.on_text(t.as_str(), self.feed().as_deref()),
                Some(Ok(Message::Binary(b))) => link.on_binary(&b),
                Some(Ok(Message::Close(_))) => break "closed by the worker".to_string(),
                Some(Ok(_)) => Ok(()),
            };
            if let Err(e) = result {
                break format!("protocol error: {e}");
            }
        };
        link.close(&reason);
        writer.abort();
        if let Some(feed) = self.feed() {
            feed.forget_machine(&link.name);
        }
        // The reason first: a call that finds no link quotes it.
        lock(&self.last_seen).insert(
            link.name.clone(),
            (link.platform.clone(), format!("disconnected: {reason}")),
        );
        {
            let mut links = lock(&self.links);
            if links.get(&link.name).is_some_and(|l| Arc::ptr_eq(l, &link)) {
                links.remove(&link.name);
            }
        }
        tracing::info!(name = %link.name, peer = %link.peer, "worker disconnected: {reason}");
    }
}

/// A remote machine's `GuiService`: each call goes to whichever link the machine has now.
struct RemoteGui {
    controller: Arc<Controller>,
    name: String,
}

impl RemoteGui {
    async fn call(&self, call: Call, limit: Duration) -> Reply {
        let link = self.controller.link(&self.name).ok_or_else(|| {
            let why = lock(&self.controller.last_seen)
                .get(&self.name)
                .map(|(_, detail)| format!("is not connected ({detail})"));
            offline(&self.name, why.as_deref().unwrap_or("is not connected"))
        })?;
        link.call(call, limit).await
    }
}

fn parse<T: serde::de::DeserializeOwned>(v: Value) -> GuiResult<T> {
    serde_json::from_value(v).map_err(|e| GuiError::backend(format!("malformed reply from the worker: {e}")))
}

#[async_trait]
impl GuiService for RemoteGui {
    async fn list(&self) -> GuiResult<ListOutput> {
        parse(self.call(Call::List, OBSERVE_LIMIT).await?.0)
    }

    async fn state(&self, request: StateRequest) -> GuiResult<StateOutput> {
        let (v, image) = self.call(Call::State(request), OBSERVE_LIMIT).await?;
        let mut out: StateOutput = parse(v)?;
        out.image = image;
        Ok(out)
    }

    async fn action(&self, request: ActionRequest) -> GuiResult<ActionOutput> {
        let (v, image) = self.call(Call::Action(request), ACTION_LIMIT).await?;
        let mut out: ActionOutput = parse(v)?;
        out.image = image;
        Ok(out)
    }

    async fn frame(&self, request: FrameRequest) -> GuiResult<FrameOutput> {
        let (v, image) = self.call(Call::Frame(request), OBSERVE_LIMIT).await?;
        let mut out: FrameOutput = parse(v)?;
        out.image = image;
        Ok(out)
    }

    async fn human_action(&self, request: HumanActionRequest) -> GuiResult<ActionOutput> {
        parse(self.call(Call::HumanAction(request), ACTION_LIMIT).await?.0)
    }

    async fn person_command(&self, command: PersonCommand) -> GuiResult<PersonState> {
        parse(self.call(Call::Person { command }, OBSERVE_LIMIT).await?.0)
    }
}
