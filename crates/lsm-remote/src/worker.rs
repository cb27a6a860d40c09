//! The worker side: connects out to the controller, authenticates, serves `GuiService` calls
//! on this machine's own service (and state store), and reconnects with backoff when the link
//! drops.

use crate::controller::{ws_config, Io};
use crate::liveness::{Heard, Watched, PING_EVERY, SEND_LIMIT};
use crate::proto::{self, Call, Hello, ImageMeta, ToController, ToWorker, PROTOCOL, WORKER_HEADER};
use futures_util::{SinkExt, StreamExt};
use lsm_core::person::FeedEvent;
use lsm_core::{EncodedImage, GuiError, GuiService};
use rand::Rng;
use serde_json::Value;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode, Uri};
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::Message;

/// TCP connect: short, so that after a network cut the next attempt sends a fresh SYN soon
/// instead of waiting out the kernel's own SYN retransmission backoff (1, 3, 7, 15 s...).
const TCP_CONNECT_LIMIT: Duration = Duration::from_secs(3);
/// TLS and WebSocket handshakes, hello and its answer.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);
/// Waits between attempts: 0.5 s, doubling, with ±25 % jitter (so that many workers do not
/// reconnect in lockstep after a controller restart), at most `BACKOFF_MAX` while the
/// controller cannot be reached (a worker is back within a few seconds of a cut's end or a
/// controller's restart) and `BACKOFF_REFUSED_MAX` while it refuses this worker (a wrong token
/// or certificate does not fix itself quickly).
pub const BACKOFF_FIRST: Duration = Duration::from_millis(500);
pub const BACKOFF_MAX: Duration = Duration::from_secs(3);
pub const BACKOFF_REFUSED_MAX: Duration = Duration::from_secs(30);
/// A link that lived this long resets the backoff.
const STABLE_AFTER: Duration = Duration::from_secs(10);

/// Where the token comes from: re-read on every connection attempt.
#[derive(Debug, Clone)]
pub enum TokenSource {
    File(PathBuf),
    Value(String),
}

impl TokenSource {
    /// Where the token is, for messages: the file's path or the variable's name.
    pub fn describe(&self) -> String {
        match self {
            TokenSource::File(p) => format!("the token file {}", p.display()),
            TokenSource::Value(_) => "$LSM_WORKER_TOKEN".to_string(),
        }
    }

    fn read(&self) -> io::Result<String> {
        let token = match self {
            TokenSource::File(p) => std::fs::read_to_string(p)
                .map_err(|e| io::Error::new(e.kind(), format!("token file {}: {e}", p.display())))?,
            TokenSource::Value(v) => v.clone(),
        };
        let token = token.trim().to_string();
        if !crate::creds::is_worker_token(&token) {
            // Its length helps to spot a token cut when it was copied; the text stays secret.
            let held = match token.chars().count() {
                0 => "is empty".to_string(),
                n => format!("holds {n} characters that are not a worker token"),
            };
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} {held}: a worker token is `lsmw_` and 64 hex digits, as `lsm enrol NAME` \
                     printed it on the controller; save the whole token there",
                    self.describe()
                ),
            ));
        }
        Ok(token)
    }
}

pub struct WorkerConfig {
    pub controller: String,
    pub name: String,
    pub token: TokenSource,
    pub pin: Option<String>,
    pub session: String,
    pub gui: Arc<dyn GuiService>,
}

struct Target {
    tls: bool,
    host: String,
    port: u16,
}

fn parse_url(url: &str) -> io::Result<Target> {
    let uri: Uri = url
        .parse()
        .map_err(|e| io::Error::other(format!("controller URL {url:?}: {e}")))?;
    let tls = match uri.scheme_str() {
        Some("wss") => true,
        Some("ws") => false,
        _ => {
            return Err(io::Error::other(format!(
                "controller URL {url:?} must start with wss:// (or ws:// on loopback)"
            )))
        }
    };
    let host = uri
        .host()
        .ok_or_else(|| io::Error::other(format!("controller URL {url:?} has no host")))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    if !tls {
        let loopback =
            host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(io::Error::other(
                "plain ws:// is allowed only to a loopback controller; use wss:// with the pin from `lsm enrol`",
            ));
        }
    }
    Ok(Target { tls, host, port })
}

/// Checks the configuration once, then connects and serves until the process is stopped.
pub async fn run(config: WorkerConfig) -> io::Result<()> {
    crate::creds::check_name(&config.name).map_err(io::Error::other)?;
    let target = parse_url(&config.controller)?;
    config.token.read()?;
    let tls = if target.tls {
        Some(crate::tls::client_config(config.pin.as_deref())?)
    } else {
        None
    };
    let mut backoff = BACKOFF_FIRST;
    let mut last_failure = String::new();
    loop {
        let started = Instant::now();
        let mut cap = BACKOFF_MAX;
        // The same failure again and again (a controller down for hours) is logged once.
        let news = match session(&config, &target, tls.clone()).await {
            Ok(reason) => {
                tracing::warn!("link to the controller closed: {reason}");
                last_failure.clear();
                true
            }
            Err(e) => {
                if e.kind() == io::ErrorKind::PermissionDenied {
                    cap = BACKOFF_REFUSED_MAX;
                }
                let text = e.to_string();
                let news = text != last_failure;
                if news {
                    tracing::warn!("link to the controller failed: {text}");
                    last_failure = text;
                } else {
                    tracing::debug!("link to the controller failed again: {text}");
                }
                news
            }
        };
        if started.elapsed() > STABLE_AFTER {
            backoff = BACKOFF_FIRST;
        }
        backoff = backoff.min(cap);
        let wait = backoff.mul_f64(rand::rng().random_range(0.75..1.25));
        if news {
            tracing::info!("reconnecting in {:.1} s", wait.as_secs_f64());
        } else {
            tracing::debug!("reconnecting in {:.1} s", wait.as_secs_f64());
        }
        tokio::time::sleep(wait).await;
        backoff = (backoff * 2).min(cap);
    }
}

/// A refusal by the controller (or of its certificate): retried, but slowly.
fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, message)
}

/// One connection: handshake, then serve until it drops. Ok carries why it ended.
async fn session(
    config: &WorkerConfig,
    target: &Target,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> io::Result<String> {
    let token = config.token.read()?;
    let addr = format!("{}:{}", target.host, target.port);
    let tcp = tokio::time::timeout(TCP_CONNECT_LIMIT, tokio::net::TcpStream::connect(&addr))
        .await
        .map_err(|_| io::Error::other(format!("connecting to {addr} timed out")))??;
    let _ = tcp.set_nodelay(true);
    // Every byte the controller sends counts as a sign of life (see `liveness`).
    let heard = Heard::new();
    let tcp = Watched::new(tcp, heard.clone());
    let io: Box<dyn Io> = match tls {
        Some(tls) => {
            let name = rustls::pki_types::ServerName::try_from(target.host.clone())
                .map_err(|e| io::Error::other(format!("controller host {:?}: {e}", target.host)))?;
            let s = tokio::time::timeout(
                CONNECT_LIMIT,
                tokio_rustls::TlsConnector::from(tls).connect(name, tcp),
            )
            .await
            .map_err(|_| io::Error::other("TLS handshake timed out"))?
            .map_err(|e| {
                let text = format!("TLS handshake with {addr} failed: {e}");
                // rustls' own errors (a certificate that does not match the pin...) come as
                // InvalidData; a connection reset mid-handshake is a network failure.
                if e.kind() == io::ErrorKind::InvalidData {
                    refused(text)
                } else {
                    io::Error::other(text)
                }
            })?;
            Box::new(s)
        }
        None => Box::new(tcp),
    };
    let url = format!("{}://{}/worker", if target.tls { "wss" } else { "ws" }, addr);
    let mut request = url.into_client_request().map_err(io::Error::other)?;
    let header = |v: &str, what: &str| {
        HeaderValue::from_str(v)
            .map_err(|_| io::Error::other(format!("the {what} has characters a header cannot carry")))
    };
    request
        .headers_mut()
        .insert("authorization", header(&format!("Bearer {token}"), "token")?);
    request
        .headers_mut()
        .insert(WORKER_HEADER, header(&config.name, "worker name")?);
    let (ws, _) = tokio::time::timeout(
        CONNECT_LIMIT,
        tokio_tungstenite::client_async_with_config(request, io, Some(ws_config())),
    )
    .await
    .map_err(|_| io::Error::other("WebSocket handshake timed out"))?
    .map_err(|e| match e {
        WsError::Http(r) if r.status() == StatusCode::UNAUTHORIZED => refused(format!(
            "the controller refused this worker (authentication refused): check --name and {} \
                 (`lsm enrol` on the controller issues one)",
            config.token.describe()
        )),
        e => io::Error::other(format!("WebSocket handshake failed: {e}")),
    })?;
    let (mut sink, mut stream) = ws.split();
    let hello = Hello {
        protocol: PROTOCOL,
        name: config.name.clone(),
        token,
        platform: std::env::consts::OS.to_string(),
        session: config.session.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let hello = serde_json::to_string(&hello).map_err(io::Error::other)?;
    tokio::time::timeout(CONNECT_LIMIT, sink.send(Message::text(hello)))
        .await
        .map_err(|_| io::Error::other("sending hello timed out"))?
        .map_err(io::Error::other)?;
    let answer = match tokio::time::timeout(CONNECT_LIMIT, stream.next()).await {
        Ok(Some(Ok(Message::Text(t)))) => {
            serde_json::from_str::<ToWorker>(t.as_str()).map_err(io::Error::other)?
        }
        Ok(_) => {
            return Err(io::Error::other(
                "the controller closed the link during the handshake",
            ))
        }
        Err(_) => return Err(io::Error::other("no answer to hello within 10 s")),
    };
    match answer {
        ToWorker::Welcome => {}
        ToWorker::Refused { message } => {
            return Err(refused(format!(
                "the controller refused this worker ({message}): check --name and {} (`lsm enrol` on the \
                 controller issues one)",
                config.token.describe()
            )))
        }
        ToWorker::Request { .. } => return Err(io::Error::other("request before welcome")),
    }
    tracing::info!(
        "connected to the controller {} as {:?}",
        config.controller,
        config.name
    );

    let (out, mut out_rx) = mpsc::unbounded_channel::<Message>();
    // The writer and the calls in flight belong to this connection: they end with it (also
    // when this future is dropped), so a dead link never lingers on pings of its own.
    let mut tasks = tokio::task::JoinSet::new();
    let (writer_done, mut writer_gone) = tokio::sync::oneshot::channel::<()>();
    tasks.spawn(async move {
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let msg = tokio::select! {
                m = out_rx.recv() => match m { Some(m) => m, None => break },
                _ = ping.tick() => Message::Ping(Vec::new().into()),
            };
            if !matches!(tokio::time::timeout(SEND_LIMIT, sink.send(msg)).await, Ok(Ok(()))) {
                break;
            }
        }
        let _ = writer_done.send(());
    });
    // This desktop's activity and take-over state go to the controller's Desktop page as they
    // happen (its state first, so a page there shows it at once).
    if let Some(feed) = config.gui.feed() {
        let out = out.clone();
        let (_, mut events) = feed.subscribe();
        let first = config
            .gui
            .person_command(lsm_core::person::PersonCommand::Status)
            .await
            .ok();
        tasks.spawn(async move {
            let send = |event: FeedEvent| {
                serde_json::to_string(&ToController::Event {
                    event: Box::new(event),
                })
                .map(|text| out.send(Message::text(text)).is_ok())
                .unwrap_or(true)
            };
            if let Some(state) = first {
                if !send(FeedEvent::Person(state)) {
                    return;
                }
            }
            loop {
                match events.recv().await {
                    Ok(event) => {
                        if !send((*event).clone()) {
                            return;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }
    let reason = loop {
        while tasks.try_join_next().is_some() {}
        // Calls run in tasks of their own: this loop keeps reading (and the writer pinging)
        // however long they take, so a busy worker is never taken for a silent one.
        let next = tokio::select! {
            n = stream.next() => n,
            silent = heard.silence() => break format!("silent for {:.1} s", silent.as_secs_f64()),
            _ = &mut writer_gone => break "sending to the controller failed".to_string(),
        };
        match next {
            None => break "connection closed".to_string(),
            Some(Err(e)) => break format!("connection error: {e}"),
            Some(Ok(Message::Text(t))) => match serde_json::from_str::<ToWorker>(t.as_str()) {
                Ok(ToWorker::Request { id, call }) => {
                    let gui = config.gui.clone();
                    let out = out.clone();
                    tasks.spawn(async move { serve(gui, id, call, out).await });
                }
                Ok(_) => {}
                Err(e) => break format!("malformed message from the controller: {e}"),
            },
            Some(Ok(Message::Close(_))) => break "closed by the controller".to_string(),
            Some(Ok(_)) => {}
        }
    };
    tasks.abort_all();
    Ok(reason)
}

async fn serve(gui: Arc<dyn GuiService>, id: u64, call: Call, out: mpsc::UnboundedSender<Message>) {
    let (result, image) = execute(gui.as_ref(), call).await;
    let meta = image.as_ref().map(|i| ImageMeta {
        format: i.format,
        width: i.width,
        height: i.height,
        bytes: i.bytes.len(),
    });
    let (ok, err) = match result {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    };
    let has_image = ok.is_some() && meta.is_some();
    let reply = ToController::Reply {
        id,
        ok,
        err,
        image: if has_image { meta } else { None },
    };
    let Ok(text) = serde_json::to_string(&reply) else {
        return;
    };
    // Text first: the controller holds the reply until the image with the same id arrives.
    if out.send(Message::text(text)).is_err() {
        return;
    }
    if let (true, Some(image)) = (has_image, image) {
        let _ = out.send(Message::binary(proto::encode_image(id, &image.bytes)));
    }
}

fn value<T: serde::Serialize>(v: &T) -> Result<Value, GuiError> {
    serde_json::to_value(v).map_err(|e| GuiError::backend(format!("serialising the result: {e}")))
}

async fn execute(gui: &dyn GuiService, call: Call) -> (Result<Value, GuiError>, Option<EncodedImage>) {
    match call {
        Call::List => (gui.list().await.and_then(|o| value(&o)), None),
        Call::State(request) => match gui.state(request).await {
            Ok(mut o) => {
                let image = o.image.take();
                (value(&o), image)
            }
            Err(e) => (Err(e), None),
        },
        Call::Action(request) => match gui.action(request).await {
            Ok(mut o) => {
                let image = o.image.take();
                (value(&o), image)
            }
            Err(e) => (Err(e), None),
        },
        Call::Frame(request) => match gui.frame(request).await {
            Ok(mut o) => {
                let image = o.image.take();
                (value(&o), image)
            }
            Err(e) => (Err(e), None),
        },
        Call::HumanAction(request) => (gui.human_action(request).await.and_then(|o| value(&o)), None),
        Call::Person { command } => (gui.person_command(command).await.and_then(|o| value(&o)), None),
    }
}

/// The graphical session this process sees, for the controller's machine list.
pub fn describe_session() -> String {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    match (var("WAYLAND_DISPLAY"), var("DISPLAY")) {
        (Some(w), _) => format!("wayland {w}"),
        (None, Some(d)) => format!("x11 {d}"),
        _ if cfg!(any(windows, target_os = "macos")) => "desktop".to_string(),
        _ => "none".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ws_only_on_loopback() {
        assert!(parse_url("ws://127.0.0.1:7443").is_ok());
        assert!(parse_url("ws://[::1]:7443").is_ok());
        assert!(parse_url("ws://localhost:7443").is_ok());
        assert!(parse_url("ws://10.0.0.1:7443").is_err());
        let t = parse_url("wss://10.0.0.1:7443/").unwrap();
        assert!(t.tls && t.host == "10.0.0.1" && t.port == 7443);
        assert!(parse_url("http://x").is_err());
    }
}
