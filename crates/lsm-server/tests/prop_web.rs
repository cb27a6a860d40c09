//! Fuzz targets (property tests) for the web UI: a real bound UI (`web::bind` then `run`, on
//! 127.0.0.1:0, over a machine without a desktop) driven over real HTTP/1.1 with generated
//! methods, paths, query strings, headers (Host, Origin, Cookie, CSRF, proxy headers, others)
//! and bodies (actions, logins, any JSON, raw bytes, oversize), and raw bytes as a whole
//! request; plus the `--web-secret-file` the UI reads. Properties: an answer within the bound,
//! no 500, errors as `{"error": {"code", "message"}}` with a stable code, the security headers,
//! and a session that still works afterwards. Longer run:
//! `LSM_FUZZ_SECS=600 cargo test --release -p lsm-server --test prop_web -- --nocapture`.

#[path = "../../lsm-core/tests/fuzz/mod.rs"]
mod fuzz;

use lsm_core::{Limits, LocalGui, NoGui};
use lsm_server::web::{self, WebConfig, WebOptions};
use lsm_server::Machines;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SECRET: &str = "fuzz-secret-0123456789";
const ANSWER_LIMIT: Duration = Duration::from_secs(5);
const KEYS: &[&str] = &[
    "machine",
    "window_id",
    "geometry",
    "x",
    "y",
    "width",
    "height",
    "actions",
    "type",
    "secret",
    "keys",
    "text",
    "element_id",
    "seconds",
    "delta_y",
    "button",
    "to_x",
    "to_y",
];

fn machines() -> Arc<Machines> {
    let local = Arc::new(LocalGui::new(
        "local",
        Limits::default(),
        Arc::new(NoGui {
            reason: "fuzzing without a desktop".into(),
        }),
    ));
    Arc::new(Machines::new(local))
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn parse_answer(raw: &[u8]) -> Result<Answer, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no complete answer head in {} bytes", raw.len()))?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    // A mutated request line may ask for HTTP/1.0; the server then answers in HTTP/1.0.
    let status = ["HTTP/1.1 ", "HTTP/1.0 "]
        .iter()
        .find_map(|version| status_line.strip_prefix(version))
        .and_then(|s| s.get(..3))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    // Pipelined requests (a mutated request may read as two) get more answers: the first only.
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok());
    if let (Some(n), false) = (length, chunked) {
        body.truncate(n);
    }
    Ok(Answer {
        status,
        headers,
        body,
    })
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("cut chunk size")?;
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..eol]).trim(), 16)
            .map_err(|e| format!("chunk size: {e}"))?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(data.get(..size).ok_or("cut chunk")?);
        data = data.get(size + 2..).ok_or("cut chunk end")?;
    }
}

/// Sends `raw` on a new connection and reads until the server closes it. `half_close` ends
/// the sending side after the request (for requests that may be incomplete).
async fn exchange(addr: SocketAddr, raw: &[u8], half_close: bool) -> Result<Vec<u8>, String> {
    let run = async {
        let mut s = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        // The server may answer (413) and close before the whole body is sent: not an error.
        let _ = s.write_all(raw).await;
        if half_close {
            let _ = s.shutdown().await;
        }
        let mut buf = Vec::new();
        match s.read_to_end(&mut buf).await {
            Ok(_) => Ok(buf),
            // A reset after a complete answer (the server closed with our body unread).
            Err(_) if !buf.is_empty() => Ok(buf),
            Err(e) => Err(format!("read: {e}")),
        }
    };
    tokio::time::timeout(ANSWER_LIMIT, run)
        .await
        .map_err(|_| format!("no answer within {ANSWER_LIMIT:?}"))?
}

struct Ui {
    rt: tokio::runtime::Runtime,
    addr: SocketAddr,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    cookie: String,
    csrf: String,
}

fn request(method: &str, target: &str, headers: &[(String, Vec<u8>)], body: &[u8]) -> Vec<u8> {
    let mut raw = format!("{method} {target} HTTP/1.1\r\n").into_bytes();
    for (k, v) in headers {
        raw.extend_from_slice(k.as_bytes());
        raw.extend_from_slice(b": ");
        raw.extend_from_slice(v);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(format!("content-length: {}\r\nconnection: close\r\n\r\n", body.len()).as_bytes());
    raw.extend_from_slice(body);
    raw
}

impl Ui {
    fn start() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let (addr, server) = rt.block_on(async {
            let config = WebConfig {
                addr: "127.0.0.1:0".parse().expect("address"),
                secret: Some(SECRET.into()),
                secret_source: Default::default(),
                public_origin: None,
            };
            let ui = web::bind(machines(), config).await.expect("bind");
            let addr = ui.local_addr().expect("address");
            (addr, tokio::spawn(ui.run()))
        });
        let mut ui = Ui {
            rt,
            addr,
            server,
            cookie: String::new(),
            csrf: String::new(),
        };
        let host = vec![("host".to_string(), ui.host().into_bytes())];
        let body = json!({ "secret": SECRET }).to_string();
        let a = ui
            .send(&request("POST", "/api/login", &host, body.as_bytes()), false)
            .expect("login");
        assert_eq!(a.status, 200, "login: {a:?}");
        let cookie = a.header("set-cookie").unwrap_or_default();
        ui.cookie = cookie.split(';').next().unwrap_or_default().to_string();
        let v: Value = serde_json::from_slice(&a.body).expect("login answer");
        ui.csrf = v["csrf_token"].as_str().unwrap_or_default().to_string();
        ui
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    fn send(&self, raw: &[u8], half_close: bool) -> Result<Answer, String> {
        let bytes = self.rt.block_on(exchange(self.addr, raw, half_close))?;
        parse_answer(&bytes)
    }

    /// The server still runs, and the session made at the start still works.
    fn alive(&self) -> Result<(), String> {
        if self.server.is_finished() {
            return Err("the web UI stopped".into());
        }
        let headers = vec![
            ("host".to_string(), self.host().into_bytes()),
            ("cookie".to_string(), self.cookie.clone().into_bytes()),
        ];
        let a = self.send(&request("GET", "/api/session", &headers, b""), false)?;
        let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
        if a.status != 200 || v["csrf_token"] != json!(self.csrf) {
            return Err(format!("the session no longer works: {} {v}", a.status));
        }
        Ok(())
    }
}

/// Codes the web UI answers with: the service's stable codes and its own.
fn known_code(code: &str) -> bool {
    const WEB: &[&str] = &[
        "AUTH_REQUIRED",
        "LOGIN_REFUSED",
        "RATE_LIMITED",
        "CSRF_REFUSED",
        "ORIGIN_REFUSED",
        "HOST_REFUSED",
        "NOT_FOUND",
    ];
    WEB.contains(&code) || serde_json::from_value::<lsm_core::ErrorCode>(json!(code)).is_ok()
        // Codes the web UI may add for its own refusals: one spelling, SCREAMING_SNAKE_CASE.
        || (!code.is_empty() && code.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

/// What every answer of the web UI satisfies (to a HEAD: without the body).
fn check_answer(a: &Answer, head: bool) -> Result<(), String> {
    if a.status >= 500 && ![502, 503, 504].contains(&a.status) {
        return Err(format!(
            "status {}: {}",
            a.status,
            String::from_utf8_lossy(&a.body)
        ));
    }
    // hyper's own refusal of a malformed request (before the router) has no body.
    let by_hyper = a.header("x-content-type-options").is_none();
    if by_hyper {
        return match a.status {
            400 | 414 | 431 | 505 if a.body.is_empty() => Ok(()),
            s => Err(format!("status {s} without the security headers: {a:?}")),
        };
    }
    for h in ["content-security-policy", "x-frame-options", "referrer-policy"] {
        if a.header(h).is_none() {
            return Err(format!("no {h} on {}", a.status));
        }
    }
    if a.status < 400 || head {
        return Ok(());
    }
    let v: Value = serde_json::from_slice(&a.body).map_err(|_| {
        format!(
            "{} not in the JSON error format: {:?}",
            a.status,
            String::from_utf8_lossy(&a.body)
        )
    })?;
    let code = v.pointer("/error/code").and_then(Value::as_str).unwrap_or("");
    let message = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
    if !known_code(code) || message.trim().is_empty() {
        return Err(format!("{}: not a clear error: {v}", a.status));
    }
    Ok(())
}

// ---------------------------------------------------------------- generated requests

#[derive(Debug, Clone)]
enum Auth {
    /// The live session's cookie and CSRF token.
    Session,
    /// The live session's cookie, no CSRF token.
    NoCsrf,
    /// A cookie and CSRF token of these bytes.
    Forged(String, String),
    None,
}

#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    query: Option<String>,
    host: Option<Vec<u8>>,
    origin: Option<Vec<u8>>,
    auth: Auth,
    extra: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

/// Bytes a header value may carry (visible ASCII, space, tab, obs-text).
fn header_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => "[ -~]{0,40}".prop_map(String::into_bytes),
        1 => prop::collection::vec(
            any::<u8>().prop_filter("header byte", |b| *b == b'\t' || (0x20..0x7f).contains(b) || *b >= 0x80),
            0..40
        ),
        1 => prop::sample::select(vec!["", " ", "null", "https", "http", "same-origin", "cross-site", "none",
            "/lsm/", "/a; Domain=evil", "application/json", "text/plain", "chunked", "gzip"])
            .prop_map(|s| s.as_bytes().to_vec()),
    ]
}

fn query_string() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        4 => prop::sample::select(vec!["window_id", "format", "quality", "max_edge", "etag", "machine"])
            .prop_map(str::to_string),
        1 => "[a-z_%0-9]{0,8}",
    ];
    let value = prop_oneof![
        prop::sample::select(vec![
            "0x1",
            "png",
            "jpeg",
            "jpg",
            "webp",
            "gif",
            "75",
            "-1",
            "0",
            "101",
            "99999999999",
            "18446744073709551616",
            "local",
            "w1",
            "",
            "%ff",
            "%zz",
            "%00",
            "%2526",
            "+",
            "1e3",
            "3.0"
        ])
        .prop_map(str::to_string),
        "[a-zA-Z0-9%._~+-]{0,24}",
    ];
    prop_oneof![
        4 => prop::collection::vec((key, value), 0..6).prop_map(|kv| {
            kv.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
        }),
        1 => "[a-zA-Z0-9%&=+;._~!$'()*,/?:@-]{0,60}",
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    let geometry = prop_oneof![
        4 => (fuzz::nasty_number(), fuzz::nasty_number(), fuzz::nasty_number(), fuzz::nasty_number())
            .prop_map(|(x, y, w, h)| json!({"x": x, "y": y, "width": w, "height": h})),
        1 => fuzz::json(KEYS),
    ];
    let action = prop_oneof![
        4 => (
            prop::sample::select(vec!["click", "double_click", "right_click", "move", "scroll", "drag", "type",
                "key", "wait", "set_value", "focus", "fly"]),
            fuzz::json_object(KEYS),
        ).prop_map(|(t, mut m)| {
            m.insert("type".into(), json!(t));
            Value::Object(m)
        }),
        1 => fuzz::json(KEYS),
    ];
    let human = (
        prop::option::of(prop::sample::select(vec!["local", "", "w1", "nope"])),
        prop::option::of(fuzz::nasty_string()),
        prop::option::of(geometry),
        prop::option::of(prop::collection::vec(action, 0..40)),
    )
        .prop_map(|(machine, window, geometry, actions)| {
            let mut m = serde_json::Map::new();
            if let Some(x) = machine {
                m.insert("machine".into(), json!(x));
            }
            if let Some(x) = window {
                m.insert("window_id".into(), json!(x));
            }
            if let Some(x) = geometry {
                m.insert("geometry".into(), x);
            }
            if let Some(x) = actions {
                m.insert("actions".into(), json!(x));
            }
            serde_json::to_vec(&m).unwrap_or_default()
        });
    let login = prop_oneof![
        fuzz::nasty_string().prop_map(|s| json!({ "secret": s })),
        Just(json!({ "secret": SECRET })),
        fuzz::json(KEYS),
    ]
    .prop_map(|v| serde_json::to_vec(&v).unwrap_or_default());
    prop_oneof![
        2 => Just(Vec::new()),
        6 => human,
        2 => login,
        2 => fuzz::raw_bytes(KEYS),
        1 => (250_000usize..270_000).prop_map(|n| {
            // Around the 256 KiB body limit: a valid JSON object of about n bytes.
            let pad = "a".repeat(n);
            serde_json::to_vec(&json!({ "window_id": "0x1", "pad": pad })).unwrap_or_default()
        }),
    ]
}

fn req() -> impl Strategy<Value = Req> {
    let method = prop_oneof![
        6 => prop::sample::select(vec!["GET", "POST"]).prop_map(str::to_string),
        1 => prop::sample::select(vec!["HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "FOO"])
            .prop_map(str::to_string),
    ];
    let path = prop_oneof![
        8 => prop::sample::select(vec!["/", "/app.js", "/app.css", "/api/login", "/api/logout", "/api/session",
            "/api/machines", "/api/windows", "/api/frame", "/api/action", "/api/action", "/api/frame",
            "/api/nope", "/api/", "/api", "//api/frame", "/api/frame/", "/%2e%2e/", "/API/FRAME", "*"])
            .prop_map(str::to_string),
        1 => "/[a-zA-Z0-9%._~/-]{0,40}",
    ];
    let host = prop_oneof![
        8 => Just(None),
        1 => header_value().prop_map(Some),
        1 => prop::sample::select(vec!["localhost", "evil.example", "[::1]", "127.0.0.1:1", "127.0.0.1:"])
            .prop_map(|s| Some(s.as_bytes().to_vec())),
    ];
    let origin = prop_oneof![
        6 => Just(None),
        1 => header_value().prop_map(Some),
        1 => prop::sample::select(vec!["null", "http://evil.example", "http://localhost", "https://127.0.0.1"])
            .prop_map(|s| Some(s.as_bytes().to_vec())),
    ];
    let auth = prop_oneof![
        6 => Just(Auth::Session),
        1 => Just(Auth::NoCsrf),
        1 => Just(Auth::None),
        1 => ("[ -~]{0,80}", "[ -~]{0,80}").prop_map(|(c, t)| Auth::Forged(c, t)),
    ];
    let extra_name = prop_oneof![
        3 => prop::sample::select(vec!["content-type", "sec-fetch-site", "x-forwarded-prefix", "x-forwarded-proto",
            "cookie", "x-csrf-token", "origin", "accept", "accept-encoding", "expect", "transfer-encoding", "range",
            "if-none-match", "authorization", "x-forwarded-for"]).prop_map(str::to_string),
        1 => "[a-zA-Z0-9-]{1,20}",
    ];
    let extra = prop::collection::vec((extra_name, header_value()), 0..4);
    (
        method,
        path,
        prop::option::of(query_string()),
        host,
        origin,
        auth,
        extra,
        body(),
    )
        .prop_map(|(method, path, query, host, origin, auth, extra, body)| Req {
            method,
            path,
            query,
            host,
            origin,
            auth,
            extra,
            body,
        })
}

impl Ui {
    fn raw(&self, r: &Req) -> Vec<u8> {
        let mut headers = vec![(
            "host".to_string(),
            r.host.clone().unwrap_or_else(|| self.host().into_bytes()),
        )];
        if let Some(o) = &r.origin {
            headers.push(("origin".into(), o.clone()));
        }
        // Logging the fuzzer's own session out would end every later case at the guard.
        let logout = r.path.to_ascii_lowercase().contains("logout") || r.path.contains('%');
        let auth = match (&r.auth, logout) {
            (Auth::Session | Auth::NoCsrf, true) => &Auth::Forged("lsm_session=0".into(), "0".into()),
            (a, _) => a,
        };
        match auth {
            Auth::Session => {
                headers.push(("cookie".into(), self.cookie.clone().into_bytes()));
                headers.push(("x-csrf-token".into(), self.csrf.clone().into_bytes()));
            }
            Auth::NoCsrf => headers.push(("cookie".into(), self.cookie.clone().into_bytes())),
            Auth::Forged(c, t) => {
                headers.push(("cookie".into(), c.clone().into_bytes()));
                headers.push(("x-csrf-token".into(), t.clone().into_bytes()));
            }
            Auth::None => {}
        }
        for (k, v) in &r.extra {
            // Framing is ours (content-length, connection: close); a second one would make
            // the request ambiguous, which hyper rightly refuses, and that is tested raw below.
            let framing = ["content-length", "transfer-encoding", "connection"]
                .contains(&k.to_ascii_lowercase().as_str());
            let our_cookie = k.eq_ignore_ascii_case("cookie") && matches!(auth, Auth::Session | Auth::NoCsrf);
            if !framing && !our_cookie {
                headers.push((k.clone(), v.clone()));
            }
        }
        let target = match &r.query {
            Some(q) => format!("{}?{q}", r.path),
            None => r.path.clone(),
        };
        request(&r.method, &target, &headers, &r.body)
    }
}

#[test]
fn web_requests() {
    let ui = Ui::start();
    fuzz::run("web_requests", req(), 150, |r| {
        let a = ui.send(&ui.raw(r), false)?;
        check_answer(&a, r.method == "HEAD")?;
        ui.alive()
    });
}

/// Raw bytes as a whole request (or a valid request cut or with a byte changed): hyper answers
/// or closes, and the server goes on.
#[test]
fn web_raw_requests() {
    let ui = Ui::start();
    let valid = ui.raw(&Req {
        method: "POST".into(),
        path: "/api/action".into(),
        query: None,
        host: None,
        origin: None,
        auth: Auth::Session,
        extra: vec![("content-type".into(), b"application/json".to_vec())],
        body: br#"{"window_id":"0x1","geometry":{"x":0,"y":0,"width":9,"height":9},"actions":[{"type":"click","x":1,"y":1}]}"#.to_vec(),
    });
    let raw = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..600),
        (any::<prop::sample::Index>(), any::<u8>(), 0u8..3).prop_map(move |(at, b, how)| {
            let mut bytes = valid.clone();
            let i = at.index(bytes.len());
            match how {
                0 => bytes.truncate(i),
                1 => bytes[i] = b,
                _ => bytes.insert(i, b),
            }
            bytes
        }),
    ];
    fuzz::run("web_raw_requests", raw, 150, |bytes| {
        let out = ui.rt.block_on(exchange(ui.addr, bytes, true))?;
        if !out.is_empty() {
            check_answer(&parse_answer(&out)?, bytes.starts_with(b"HEAD"))?;
        }
        ui.alive()
    });
}

/// `--web-secret-file`: any bytes. Started with at least 12 characters of UTF-8 (trimmed),
/// refused otherwise, never a panic.
#[test]
fn web_secret_file() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir().join(format!("lsm-fuzz-web-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("secret");
    let content = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        "\\PC{0,30}".prop_map(String::into_bytes),
        "[ \t\r\n]{0,3}[a-z]{8,16}[ \t\r\n]{0,3}".prop_map(String::into_bytes),
    ];
    fuzz::run("web_secret_file", content, 200, |bytes| {
        std::fs::write(&file, bytes).map_err(|e| e.to_string())?;
        let opts = WebOptions {
            web: Some("127.0.0.1:0".into()),
            secret_file: Some(file.clone()),
            ..WebOptions::default()
        };
        let started = rt.block_on(web::start(machines(), &opts));
        let usable = std::str::from_utf8(bytes).is_ok_and(|s| s.trim().chars().count() >= 12);
        match (started, usable) {
            (Ok(Some(_)), true) | (Err(_), false) => Ok(()),
            (r, _) => Err(format!(
                "{:?} for a secret file of {} bytes",
                r.map(|u| u.is_some()),
                bytes.len()
            )),
        }
    });
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------- regressions

fn one(ui: &Ui, method: &str, target: &str, body: &[u8]) -> Answer {
    let headers = vec![
        ("host".to_string(), ui.host().into_bytes()),
        ("cookie".to_string(), ui.cookie.clone().into_bytes()),
        ("x-csrf-token".to_string(), ui.csrf.clone().into_bytes()),
    ];
    ui.send(&request(method, target, &headers, body), false)
        .expect("an answer")
}

/// The errors the framework once answered in plain text (found by `web_requests`: 405 for a
/// wrong method, 413 for an oversized body) come in the JSON error format.
#[test]
fn regression_framework_errors_in_the_json_format() {
    let ui = Ui::start();
    let big = serde_json::to_vec(&json!({ "pad": "a".repeat(300_000) })).unwrap_or_default();
    let mut plain = Vec::new();
    for (method, target, body) in [("GET", "/api/login", Vec::new()), ("POST", "/api/action", big)] {
        // (A body cut short, "Failed to buffer the request body", needs a half-closed socket.)
        let a = one(&ui, method, target, &body);
        let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
        if v.pointer("/error/code").and_then(Value::as_str).is_none() {
            plain.push(format!(
                "{method} {target}: {} {:?}",
                a.status,
                String::from_utf8_lossy(&a.body)
            ));
        }
    }
    assert!(plain.is_empty(), "not in the JSON error format: {plain:#?}");
}

/// A request line asking for HTTP/1.0 (found by `web_raw_requests`: one byte of "HTTP/1.1"
/// mutated) is answered in HTTP/1.0, with the same security headers and JSON error format.
#[test]
fn regression_http_1_0_request_is_answered() {
    let ui = Ui::start();
    let headers = vec![
        ("host".to_string(), ui.host().into_bytes()),
        ("cookie".to_string(), ui.cookie.clone().into_bytes()),
        ("x-csrf-token".to_string(), ui.csrf.clone().into_bytes()),
        ("content-type".to_string(), b"application/json".to_vec()),
    ];
    let body = br#"{"window_id":"0x1","geometry":{"x":0,"y":0,"width":9,"height":9},"actions":[{"type":"click","x":1,"y":1}]}"#;
    let raw = request("POST", "/api/action", &headers, body);
    let raw = String::from_utf8_lossy(&raw).replacen("HTTP/1.1", "HTTP/1.0", 1);
    // Not half-closed: hyper drops a busy connection whose client shut its writing half
    // (no answer at all), a race the server would lose under load (CI stop 32).
    let bytes = ui
        .rt
        .block_on(exchange(ui.addr, raw.as_bytes(), false))
        .expect("an answer");
    assert!(
        bytes.starts_with(b"HTTP/1.0 "),
        "{:?}",
        String::from_utf8_lossy(&bytes)
    );
    let a = parse_answer(&bytes).expect("a parsed answer");
    // No desktop here: the action is refused as GUI_UNAVAILABLE.
    assert_eq!(a.status, 503, "{a:?}");
    check_answer(&a, false).expect("a well-formed answer");
    ui.alive().expect("the session still works");
}
