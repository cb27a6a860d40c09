//! The web UI: a Desktop page where a person watches a window (polled frames) and operates it
//! (geometry-checked human input), on this machine or a connected worker, through `Machines`.
//!
//! Every URL the page uses is relative, so the UI works under a reverse proxy's path prefix.
//! JSON errors are `{"error": {"code", "message"}}` (`errors`); auth failures use the web-only
//! codes `AUTH_REQUIRED` (401), `LOGIN_REFUSED` (401), `RATE_LIMITED` (429), `CSRF_REFUSED`,
//! `ORIGIN_REFUSED` and `HOST_REFUSED` (403); the framework's own `NOT_FOUND` (404) and
//! `METHOD_NOT_ALLOWED` (405).

pub mod auth;
mod errors;
mod person;
mod request;
mod throttle;
pub mod url_file;

use crate::Machines;
use auth::{Allowed, Auth, LoginRefusal, PublicOrigin, SecretSource, SessionLimits};
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use errors::{error, gui_error};
use lsm_core::{FrameRequest, GuiError, GuiResult, HumanActionRequest, ImageFormat, Rect};
use request::{bad_body, machine_param, parse_body, within, Web};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

const INDEX_HTML: &str = include_str!("../../web/index.html");
const APP_JS: &str = include_str!("../../web/app.js");
const APP_CSS: &str = include_str!("../../web/app.css");
const PERSON_JS: &str = include_str!("../../web/person.js");

/// A machine that does not answer its window list within this is shown as not answering.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest request body (an action list).
const MAX_BODY: usize = 256 * 1024;

pub struct WebConfig {
    pub addr: SocketAddr,
    /// None: a random secret, printed at start.
    pub secret: Option<String>,
    /// Where a given secret came from (said after a wrong one).
    pub secret_source: SecretSource,
    pub public_origin: Option<PublicOrigin>,
}

/// A bound, not yet serving web UI.
pub struct WebUi {
    listener: tokio::net::TcpListener,
    app: Router,
    /// `http://host:port/`: where to open the page on this machine.
    pub url: String,
    /// The secret when it was generated here (to print); None when it came from the caller.
    pub generated_secret: Option<String>,
    /// The login URL's file in the state directory, removed when the web UI stops.
    url_file: Option<url_file::UrlFile>,
}

/// Binds the web UI's listener, with the default session limits.
pub async fn bind(machines: Arc<Machines>, config: WebConfig) -> std::io::Result<WebUi> {
    bind_with(machines, config, SessionLimits::default()).await
}

/// Binds the web UI's listener; sessions live as `sessions` says.
pub async fn bind_with(
    machines: Arc<Machines>,
    config: WebConfig,
    sessions: SessionLimits,
) -> std::io::Result<WebUi> {
    let listener = tokio::net::TcpListener::bind(config.addr).await?;
    let bound = listener.local_addr()?;
    let (secret, generated_secret, source) = match config.secret {
        Some(s) => (s, None, config.secret_source),
        None => {
            let s = auth::random_token()[..32].to_string();
            (s.clone(), Some(s), SecretSource::Generated)
        }
    };
    let allowed = Allowed::new(&bound, config.public_origin.as_ref());
    let host = match bound.ip() {
        ip if ip.is_unspecified() => "127.0.0.1".to_string(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        ip => ip.to_string(),
    };
    let url = format!("http://{host}:{}/", bound.port());
    let web = Arc::new(Web {
        machines,
        auth: Auth::with_limits(secret, sessions),
        allowed,
        behind_proxy: config.public_origin.is_some(),
        secret_hint: source.hint(bound.ip().is_loopback()),
    });
    Ok(WebUi {
        listener,
        app: router(web),
        url,
        generated_secret,
        url_file: None,
    })
}

impl WebUi {
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The URL that opens the page and logs in: the generated secret rides in the fragment,
    /// which browsers never send to a server.
    pub fn login_url(&self) -> String {
        match &self.generated_secret {
            Some(s) => format!("{}#secret={s}", self.url),
            None => self.url.clone(),
        }
    }

    /// Serves until the process stops. The peer's address reaches the handlers (login
    /// throttling is per client).
    pub async fn run(self) -> std::io::Result<()> {
        // Held while serving: the URL file goes when the web UI does.
        let _url_file = self.url_file;
        axum::serve(
            self.listener,
            self.app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    }
}

fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/person.js",
            get(|| async { asset("text/javascript; charset=utf-8", PERSON_JS) }),
        )
        .route(
            "/app.css",
            get(|| async { asset("text/css; charset=utf-8", APP_CSS) }),
        )
        .route("/api/login", post(login))
        .route("/api/logout", post(logout))
        .route("/api/session", get(session))
        .route("/api/machines", get(machines))
        .route("/api/windows", get(windows))
        .route("/api/frame", get(frame))
        .route("/api/action", post(action))
        .route("/api/events", get(person::events))
        .route("/api/person", get(person::status).post(person::command))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "NOT_FOUND", "no such page") })
        .layer(axum::middleware::from_fn_with_state(web.clone(), guard))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(web)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn session_token(headers: &HeaderMap) -> Option<&str> {
    let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
    auth::cookie_value(cookies, auth::COOKIE)
}

/// Host and Origin on every request; a session on every API call but login; the session's
/// CSRF token on every state-changing API call. Every answer, the framework's errors too, in
/// the JSON error format and with the security headers.
async fn guard(State(web): State<Arc<Web>>, req: Request, next: Next) -> Response {
    errors::finish(match refusal(&web, &req) {
        None => next.run(req).await,
        Some(refused) => refused,
    })
}

/// Why the request is refused, if it is.
fn refusal(web: &Web, req: &Request) -> Option<Response> {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !web.allowed.host_ok(host) {
        return Some(error(
            StatusCode::FORBIDDEN,
            "HOST_REFUSED",
            "this Host is not served here; behind a reverse proxy, pass --web-origin",
        ));
    }
    let changes_state = !matches!(*req.method(), Method::GET | Method::HEAD);
    let refused = |m: &str| error(StatusCode::FORBIDDEN, "ORIGIN_REFUSED", m);
    match headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or("")) {
        Some(origin) if !web.allowed.origin_ok(origin) => {
            return Some(refused("requests from another origin are refused"));
        }
        // No Origin: a browser still tells whether the request is cross-site.
        None if changes_state => {
            let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
            if site.is_some_and(|s| s != "same-origin" && s != "none") {
                return Some(refused("cross-site requests are refused"));
            }
        }
        _ => {}
    }
    let path = req.uri().path();
    if path.starts_with("/api/") && path != "/api/login" {
        let Some(csrf) = session_token(headers).and_then(|t| web.auth.session(t)) else {
            return Some(error(StatusCode::UNAUTHORIZED, "AUTH_REQUIRED", "log in first"));
        };
        if changes_state {
            let sent = headers
                .get(auth::CSRF_HEADER)
                .map(|v| v.as_bytes())
                .unwrap_or(b"");
            if !lsm_remote::constant_time_eq(sent, csrf.as_bytes()) {
                return Some(error(
                    StatusCode::FORBIDDEN,
                    "CSRF_REFUSED",
                    "missing or wrong CSRF token; reload the page",
                ));
            }
        }
    }
    None
}

/// The cookie path: the proxy's prefix when it names one, else the root.
fn cookie_path(headers: &HeaderMap) -> String {
    headers
        .get("x-forwarded-prefix")
        .and_then(|v| v.to_str().ok())
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| {
            p.starts_with('/')
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/-_.~".contains(c))
        })
        .map(str::to_string)
        .unwrap_or_else(|| "/".to_string())
}

fn is_https(web: &Web, headers: &HeaderMap) -> bool {
    web.allowed.https
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

async fn login(
    State(web): State<Arc<Web>>,
    // Absent when the router is served without connect info (then one shared bucket).
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(body) = parse_body(&body) else {
        return bad_body();
    };
    let secret = body.get("secret").and_then(Value::as_str).unwrap_or("");
    let client = throttle::client_key(peer.map(|p| p.0 .0.ip()), &headers, web.behind_proxy);
    match web.auth.login(&client, secret) {
        Ok((token, csrf)) => {
            let secure = if is_https(&web, &headers) { "; Secure" } else { "" };
            let cookie = format!(
                "{}={token}; HttpOnly; SameSite=Strict; Path={}{secure}",
                auth::COOKIE,
                cookie_path(&headers)
            );
            let mut res = (
                [(header::CACHE_CONTROL, "no-store")],
                Json(json!({"csrf_token": csrf})),
            )
                .into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                res.headers_mut().insert(header::SET_COOKIE, v);
            }
            res
        }
        Err(LoginRefusal::Refused) => {
            // One answer for every wrong secret, after a pause that slows guessing.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let message = format!("wrong secret: {}", web.secret_hint);
            error(StatusCode::UNAUTHORIZED, "LOGIN_REFUSED", message)
        }
        Err(LoginRefusal::RateLimited) => error(
            StatusCode::TOO_MANY_REQUESTS,
            "RATE_LIMITED",
            "too many failed logins from here; wait half a minute",
        ),
    }
}

async fn logout(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Some(t) = session_token(&headers) {
        web.auth.logout(t);
    }
    let cookie = format!(
        "{}=; HttpOnly; SameSite=Strict; Path={}; Max-Age=0",
        auth::COOKIE,
        cookie_path(&headers)
    );
    let mut res = Json(json!({"ok": true})).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

async fn session(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    // The guard already checked the session.
    let csrf = session_token(&headers)
        .and_then(|t| web.auth.session(t))
        .unwrap_or_default();
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(json!({"csrf_token": csrf})),
    )
        .into_response()
}

/// Every machine with its backend and capabilities, or why it has no GUI.
async fn machines(State(web): State<Arc<Web>>) -> Response {
    let list = web.machines.list();
    let mut probes = Vec::new();
    for m in list {
        let service = if m.connected {
            web.machines.get(Some(&m.name)).ok()
        } else {
            None
        };
        probes.push(tokio::spawn(async move {
            let mut entry = serde_json::to_value(&m).unwrap_or_else(|_| json!({"name": m.name}));
            if let Some(service) = service {
                match tokio::time::timeout(LIST_TIMEOUT, service.list()).await {
                    Ok(Ok(l)) => {
                        entry["backend"] = serde_json::to_value(&l.backend).unwrap_or(Value::Null);
                        entry["window_count"] = json!(l.windows.len());
                    }
                    Ok(Err(e)) => entry["gui_error"] = json!({"code": e.code.as_str(), "message": e.message}),
                    Err(_) => {
                        entry["gui_error"] =
                            json!({"code": "TIMEOUT", "message": "the machine did not answer in time"})
                    }
                }
            }
            entry
        }));
    }
    let mut out = Vec::new();
    for p in probes {
        if let Ok(entry) = p.await {
            out.push(entry);
        }
    }
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(json!({"machines": out})),
    )
        .into_response()
}

async fn windows(State(web): State<Arc<Web>>, Query(q): Query<HashMap<String, String>>) -> Response {
    let service = match web.machines.get(machine_param(&q)) {
        Ok(s) => s,
        Err(e) => return gui_error(e),
    };
    match within("listing windows", service.list()).await {
        Ok(list) => ([(header::CACHE_CONTROL, "no-store")], Json(list)).into_response(),
        Err(e) => gui_error(e),
    }
}

fn frame_request(q: &HashMap<String, String>) -> GuiResult<FrameRequest> {
    let window_id = q
        .get("window_id")
        .filter(|w| !w.is_empty())
        .ok_or_else(|| GuiError::invalid("window_id is required"))?;
    let image_format = match q.get("format") {
        Some(f) => ImageFormat::parse(f)?,
        None => ImageFormat::Jpeg,
    };
    let number = |name: &str| -> GuiResult<Option<u64>> {
        q.get(name)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| GuiError::invalid(format!("{name} must be a whole number")))
            })
            .transpose()
    };
    let image_quality = match (image_format, number("quality")?) {
        (ImageFormat::Jpeg, None) => Some(75),
        (_, q) => q,
    };
    let max_edge = number("max_edge")?
        .map(|m| u32::try_from(m).map_err(|_| GuiError::invalid("max_edge is too large")))
        .transpose()?;
    Ok(FrameRequest {
        window_id: window_id.clone(),
        image_format,
        image_quality,
        max_edge,
        if_none_match: q.get("etag").filter(|e| !e.is_empty()).cloned(),
    })
}

/// The window's image as the body (204 when `etag` still matches), and what it shows in
/// headers: `X-Lsm-Geometry` (x,y,width,height of the window when captured, screen logical
/// px: quote it in actions), `X-Lsm-Space` (image width,height,scale), `X-Lsm-Etag`.
async fn frame(State(web): State<Arc<Web>>, Query(q): Query<HashMap<String, String>>) -> Response {
    let request = match frame_request(&q) {
        Ok(r) => r,
        Err(e) => return gui_error(e),
    };
    let service = match web.machines.get(machine_param(&q)) {
        Ok(s) => s,
        Err(e) => return gui_error(e),
    };
    let out = match within("capturing the window", service.frame(request)).await {
        Ok(o) => o,
        Err(e) => return gui_error(e),
    };
    let b = out.window.bounds;
    let cs = &out.coordinate_space;
    let mut res = match (&out.image, out.unchanged) {
        (Some(img), false) => {
            let mut r = Response::new(Body::from(img.bytes.clone()));
            if let Ok(v) = HeaderValue::from_str(img.mime_type()) {
                r.headers_mut().insert(header::CONTENT_TYPE, v);
            }
            r
        }
        _ => {
            let mut r = Response::new(Body::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
    };
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let pairs = [
        (
            "x-lsm-geometry",
            format!("{},{},{},{}", b.x, b.y, b.width, b.height),
        ),
        ("x-lsm-space", format!("{},{},{}", cs.width, cs.height, cs.scale)),
        ("x-lsm-etag", out.etag.clone()),
    ];
    for (name, value) in pairs {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    res
}

fn action_request(body: &Value) -> GuiResult<(Option<String>, HumanActionRequest)> {
    let machine = body.get("machine").and_then(Value::as_str).map(str::to_string);
    let window_id = body
        .get("window_id")
        .and_then(Value::as_str)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| GuiError::invalid("window_id is required"))?
        .to_string();
    let geometry: Rect = body
        .get("geometry")
        .cloned()
        .and_then(|g| serde_json::from_value(g).ok())
        .ok_or_else(|| {
            GuiError::invalid("geometry {x, y, width, height} of the frame acted on is required")
        })?;
    let actions = body
        .get("actions")
        .cloned()
        .ok_or_else(|| GuiError::invalid("actions is required"))?;
    Ok((
        machine,
        HumanActionRequest {
            window_id,
            geometry,
            actions,
            caller: None,
        },
    ))
}

async fn action(State(web): State<Arc<Web>>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(body) = parse_body(&body) else {
        return bad_body();
    };
    let (machine, mut request) = match action_request(&body) {
        Ok(r) => r,
        Err(e) => return gui_error(e),
    };
    // The audit log names the session without giving its cookie away.
    request.caller = session_token(&headers).map(|t| lsm_core::audit::session_label("web", t));
    let service = match web.machines.get(machine.as_deref().filter(|m| !m.is_empty())) {
        Ok(s) => s,
        Err(e) => return gui_error(e),
    };
    match within("the input", service.human_action(request)).await {
        Ok(out) => ([(header::CACHE_CONTROL, "no-store")], Json(out)).into_response(),
        Err(e) => gui_error(e),
    }
}

/// Where the web UI listens unless told otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1:7710";

/// The `--web*` options of `lsm serve`.
#[derive(Debug, Clone, Default)]
pub struct WebOptions {
    /// `ADDR:PORT` or `off`; None: [`DEFAULT_ADDR`], and a busy port only warns.
    pub web: Option<String>,
    pub secret_file: Option<std::path::PathBuf>,
    /// `LSM_WEB_SECRET`.
    pub secret_env: Option<String>,
    pub origin: Option<String>,
    pub sessions: SessionLimits,
    /// Where the login URL is written (`url_file`); None: nowhere.
    pub state_dir: Option<std::path::PathBuf>,
}

/// Binds the web UI as the options say and prints its address (and a generated secret) on
/// stderr; Ok(None) when it is off, or when the default port is taken.
pub async fn start(machines: Arc<Machines>, opts: &WebOptions) -> std::io::Result<Option<WebUi>> {
    let spec = opts.web.as_deref().unwrap_or(DEFAULT_ADDR).trim();
    if spec.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let addr: SocketAddr = spec.parse().map_err(|_| {
        std::io::Error::other(format!(
            "--web {spec:?} must be ADDR:PORT (e.g. 127.0.0.1:7710) or off"
        ))
    })?;
    let (secret, secret_source) = match (&opts.secret_file, &opts.secret_env) {
        (Some(path), _) => {
            let s = std::fs::read_to_string(path)
                .map_err(|e| std::io::Error::other(format!("--web-secret-file {}: {e}", path.display())))?;
            (Some(s.trim().to_string()), SecretSource::File(path.clone()))
        }
        (None, Some(s)) if !s.trim().is_empty() => (Some(s.trim().to_string()), SecretSource::Environment),
        _ => (None, SecretSource::Generated),
    };
    if let Some(short) = secret.as_ref().filter(|s| s.chars().count() < 12) {
        let from = match &secret_source {
            SecretSource::File(path) => format!("--web-secret-file {}", path.display()),
            _ => "$LSM_WEB_SECRET".to_string(),
        };
        return Err(std::io::Error::other(format!(
            "{from}: the web UI secret there has {} characters; it must be at least 12",
            short.chars().count()
        )));
    }
    let public_origin = opts
        .origin
        .as_deref()
        .map(PublicOrigin::parse)
        .transpose()
        .map_err(std::io::Error::other)?;
    let config = |addr| WebConfig {
        addr,
        secret: secret.clone(),
        secret_source: secret_source.clone(),
        public_origin: public_origin.clone(),
    };
    let ui = match bind_with(machines.clone(), config(addr), opts.sessions).await {
        Ok(ui) => ui,
        // The default port is taken (often by another lsm, e.g. started by a second MCP
        // client): a free port instead, said on stderr and in the URL file.
        Err(e) if opts.web.is_none() && e.kind() == std::io::ErrorKind::AddrInUse => {
            let any_port = SocketAddr::new(addr.ip(), 0);
            match bind_with(machines, config(any_port), opts.sessions).await {
                Ok(ui) => {
                    let port = ui.local_addr().map(|a| a.port()).unwrap_or(0);
                    eprintln!(
                        "lsm: web UI: {addr} is taken (another lsm serve?); using port {port} instead (`lsm web-url` lists every running web UI)"
                    );
                    ui
                }
                Err(e) => {
                    eprintln!("lsm: web UI not started: {addr} is taken and no free port was found ({e})");
                    return Ok(None);
                }
            }
        }
        Err(e) if opts.web.is_none() => {
            eprintln!("lsm: web UI not started: {addr}: {e} (choose another with --web ADDR, or --web off)");
            return Ok(None);
        }
        Err(e) => return Err(std::io::Error::other(format!("web UI on {addr}: {e}"))),
    };
    let mut ui = ui;
    let bound = ui.local_addr()?;
    let note = ui
        .generated_secret
        .is_none()
        .then_some("log in with the configured secret (--web-secret-file or LSM_WEB_SECRET)");
    match note {
        None => eprintln!("lsm: web UI {}", ui.login_url()),
        Some(note) => eprintln!("lsm: web UI {} ({note})", ui.url),
    }
    if let Some(dir) = &opts.state_dir {
        match url_file::UrlFile::write(dir, bound.port(), &ui.login_url(), note) {
            Ok(file) => {
                eprintln!("lsm: web UI login URL written to {}", file.path().display());
                ui.url_file = Some(file);
            }
            Err(e) => eprintln!(
                "lsm: warning: the web UI's URL could not be written to {} ({e})",
                dir.display()
            ),
        }
    }
    if let Some(p) = &opts.origin {
        eprintln!("lsm: web UI public origin {p} (behind a reverse proxy)");
    }
    if !bound.ip().is_loopback() {
        eprintln!("lsm: warning: the web UI listens on {bound}, beyond this machine; put it behind https");
    }
    Ok(Some(ui))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::ErrorCode;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn frame_parameters() {
        let r = frame_request(&q(&[("window_id", "0x1"), ("etag", "abc")])).unwrap();
        assert_eq!(r.image_format, ImageFormat::Jpeg);
        assert_eq!(r.image_quality, Some(75));
        assert_eq!(r.if_none_match.as_deref(), Some("abc"));
        let r = frame_request(&q(&[
            ("window_id", "0x1"),
            ("format", "png"),
            ("max_edge", "800"),
        ]))
        .unwrap();
        assert_eq!(
            (r.image_format, r.image_quality, r.max_edge),
            (ImageFormat::Png, None, Some(800))
        );
        for bad in [
            q(&[]),
            q(&[("window_id", "0x1"), ("format", "gif")]),
            q(&[("window_id", "0x1"), ("quality", "-1")]),
            q(&[("window_id", "0x1"), ("max_edge", "99999999999")]),
        ] {
            assert_eq!(frame_request(&bad).unwrap_err().code, ErrorCode::InvalidArgument);
        }
    }

    #[test]
    fn action_body() {
        let body = json!({"machine": "w1", "window_id": "0x2", "geometry": {"x": 1, "y": 2, "width": 3, "height": 4},
                          "actions": [{"type": "click", "x": 1, "y": 1}]});
        let (machine, r) = action_request(&body).unwrap();
        assert_eq!(machine.as_deref(), Some("w1"));
        assert_eq!(r.geometry, Rect::new(1, 2, 3, 4));
        let no_geometry = json!({"window_id": "0x2", "actions": []});
        assert_eq!(
            action_request(&no_geometry).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        let bad_geometry = json!({"window_id": "0x2", "geometry": {"x": "a"}, "actions": []});
        assert_eq!(
            action_request(&bad_geometry).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn cookie_path_from_the_proxy() {
        let mut h = HeaderMap::new();
        assert_eq!(cookie_path(&h), "/");
        h.insert("x-forwarded-prefix", HeaderValue::from_static("/lsm/"));
        assert_eq!(cookie_path(&h), "/lsm");
        // Anything that could break out of the cookie attribute is ignored.
        h.insert("x-forwarded-prefix", HeaderValue::from_static("/a; Domain=evil"));
        assert_eq!(cookie_path(&h), "/");
    }
}
