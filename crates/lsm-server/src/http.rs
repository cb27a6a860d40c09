//! MCP over Streamable HTTP at `/mcp`, with Host and Origin checks against DNS rebinding and an
//! access token (a bearer token) that a server beyond loopback cannot start without.

use crate::{LsmMcp, Machines};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use lsm_remote::constant_time_eq;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

/// Shortest access token accepted: a guessable one would be no door at all.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Hosts and origins accepted for a server bound to `addr`: loopback names always, plus the
/// bound address itself when it is not a wildcard.
pub fn allowed_names(addr: &SocketAddr) -> (Vec<String>, Vec<String>) {
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "[::1]".to_string(),
    ];
    let ip = addr.ip();
    if !ip.is_unspecified() && !ip.is_loopback() {
        hosts.push(match ip {
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
            v4 => v4.to_string(),
        });
    }
    let port = addr.port();
    let origins = hosts
        .iter()
        .flat_map(|h| [format!("http://{h}:{port}"), format!("https://{h}:{port}")])
        .collect();
    (hosts, origins)
}

/// The access token for `--http ADDR`: from `file` (`--http-token-file`), else `env`
/// (`$LSM_HTTP_TOKEN`). Refuses a non-loopback address without one, and a token that is short
/// or not printable ASCII (it travels in a header).
pub fn access_token(
    addr: &SocketAddr,
    file: Option<&Path>,
    env: Option<&str>,
) -> std::io::Result<Option<String>> {
    let token = match (file, env) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| std::io::Error::other(format!("--http-token-file {}: {e}", path.display())))?;
            Some(text.trim().to_string())
        }
        (None, Some(t)) if !t.trim().is_empty() => Some(t.trim().to_string()),
        _ => None,
    };
    match &token {
        None if !addr.ip().is_loopback() => Err(std::io::Error::other(format!(
            "refusing to serve MCP on {addr} without an access token: anyone who can reach it could \
             operate this desktop. Give one with --http-token-file PATH or $LSM_HTTP_TOKEN (at least \
             {MIN_TOKEN_CHARS} characters, e.g. `openssl rand -hex 32`); clients then send \
             `Authorization: Bearer <token>`"
        ))),
        Some(t) if t.chars().count() < MIN_TOKEN_CHARS || !t.bytes().all(|b| b.is_ascii_graphic()) => {
            let source = match file {
                Some(path) => format!("--http-token-file {}", path.display()),
                None => "$LSM_HTTP_TOKEN".to_string(),
            };
            // Its length helps to spot a cut token; the text stays secret.
            Err(std::io::Error::other(format!(
                "{source}: the token there has {} characters{}; the MCP access token must be at least \
                 {MIN_TOKEN_CHARS} printable ASCII characters without spaces (e.g. `openssl rand -hex 32`)",
                t.chars().count(),
                if t.bytes().all(|b| b.is_ascii_graphic()) {
                    ""
                } else {
                    " and spaces or characters beyond ASCII"
                }
            )))
        }
        _ => Ok(token),
    }
}

/// Binds and serves until the process is stopped. With `token`, every request needs it.
pub async fn serve_http(
    machines: Arc<Machines>,
    addr: SocketAddr,
    token: Option<String>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| bind_error(addr, &e))?;
    let bound = listener.local_addr()?;
    let (hosts, origins) = allowed_names(&bound);
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    // A rebinding page lacks the token; with one, the names clients use for this machine
    // (its address, its host name) are all fine.
    config = match token {
        Some(_) => config.disable_allowed_hosts(),
        None => config.with_allowed_hosts(hosts),
    };
    let service = StreamableHttpService::new(
        move || Ok(LsmMcp::new(machines.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut app = axum::Router::new().nest_service("/mcp", service);
    if let Some(token) = token {
        let token: Arc<[u8]> = token.into_bytes().into();
        app = app.layer(axum::middleware::from_fn_with_state(token, bearer));
    }
    tracing::info!("MCP Streamable HTTP on http://{bound}/mcp");
    eprintln!("lsm: MCP endpoint http://{bound}/mcp");
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await
}

/// Why `--http ADDR` cannot listen, with the flag that changes it.
fn bind_error(addr: SocketAddr, e: &std::io::Error) -> std::io::Error {
    let why = match e.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "the port is already in use (another lsm serve, or another server); choose a free port with \
             --http {}:PORT (port 0 picks one and prints it)",
            addr.ip()
        ),
        std::io::ErrorKind::AddrNotAvailable => format!(
            "{} is not an address of this machine; give one of its own with --http ADDR:PORT \
             (e.g. 127.0.0.1:{})",
            addr.ip(),
            addr.port()
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "not allowed to listen on {addr} (ports below 1024 need privileges); choose another with \
             --http ADDR:PORT"
        ),
        _ => format!("cannot listen on {addr}: {e}; change it with --http ADDR:PORT"),
    };
    std::io::Error::new(e.kind(), format!("--http {addr}: {why}"))
}

/// `Authorization: Bearer <token>` on every request, compared in constant time. A refusal is
/// a 401 a client can show: `WWW-Authenticate` (RFC 6750) and a JSON-RPC error body, both saying
/// what is missing or wrong and where the token comes from (never the token itself).
async fn bearer(State(token): State<Arc<[u8]>>, req: Request, next: Next) -> Response {
    let sent = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| bearer_credentials(v.as_bytes()));
    let problem = match sent {
        Some(Some(t)) if constant_time_eq(t, &token) => return next.run(req).await,
        None => Refusal::Missing,
        Some(None) => Refusal::NotBearer,
        Some(Some(_)) => Refusal::Wrong,
    };
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.to_string())
        .unwrap_or_default();
    tracing::info!(%peer, "MCP request refused: no or wrong access token ({})", problem.description());
    unauthorized(problem)
}

/// Why a request lacks the access token.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Refusal {
    Missing,
    NotBearer,
    Wrong,
}

/// Where the token comes from, for whoever sets up the client.
const TOKEN_SOURCE: &str = "the token is the content of the file given to `lsm serve --http-token-file` \
     (or $LSM_HTTP_TOKEN of that process); clients send it as `Authorization: Bearer <token>`";

impl Refusal {
    /// For `error_description` (RFC 6750: printable ASCII without `"` or `\\`).
    fn description(self) -> &'static str {
        match self {
            Refusal::Missing => "this MCP server needs an access token and the request carried none",
            Refusal::NotBearer => "the Authorization header is not of the form `Bearer <token>`",
            Refusal::Wrong => "the access token is wrong",
        }
    }
}

fn unauthorized(problem: Refusal) -> Response {
    // RFC 6750 §3.1: invalid_request for a malformed request, invalid_token for a wrong token;
    // a request without credentials gets no error code, only the scheme and the description.
    let code = match problem {
        Refusal::Missing => "",
        Refusal::NotBearer => "error=\"invalid_request\", ",
        Refusal::Wrong => "error=\"invalid_token\", ",
    };
    let challenge = format!(
        "Bearer realm=\"lsm\", {code}error_description=\"{}\"",
        problem.description()
    );
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32001,
            "message": format!("Unauthorized: {}; {TOKEN_SOURCE}", problem.description()),
        }
    });
    let mut res = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    res
}

/// The credentials of an `Authorization` value whose scheme is Bearer (any case).
fn bearer_credentials(value: &[u8]) -> Option<&[u8]> {
    let space = value.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    scheme.eq_ignore_ascii_case(b"bearer").then(|| rest.trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("address")
    }

    #[test]
    fn a_token_is_required_beyond_loopback() {
        assert!(access_token(&addr("127.0.0.1:1"), None, None).is_ok_and(|t| t.is_none()));
        assert!(access_token(&addr("[::1]:1"), None, Some(" ")).is_ok_and(|t| t.is_none()));
        for wide in ["0.0.0.0:1", "[::]:1", "192.0.2.7:1"] {
            let e = access_token(&addr(wide), None, None).expect_err(wide);
            assert!(e.to_string().contains("without an access token"), "{e}");
        }
        let good = "0123456789abcdef";
        assert_eq!(
            access_token(&addr("0.0.0.0:1"), None, Some(good))
                .ok()
                .flatten()
                .as_deref(),
            Some(good)
        );
        let short = access_token(&addr("0.0.0.0:1"), None, Some("short")).expect_err("short");
        assert!(
            short
                .to_string()
                .starts_with("$LSM_HTTP_TOKEN: the token there has 5 characters"),
            "{short}"
        );
        let file = std::env::temp_dir().join(format!("lsm-short-token-{}", std::process::id()));
        std::fs::write(&file, "cut\n").expect("temp file");
        let short = access_token(&addr("127.0.0.1:1"), Some(&file), None).expect_err("short file");
        let _ = std::fs::remove_file(&file);
        assert!(short.to_string().contains(&file.display().to_string()), "{short}");
        assert!(access_token(&addr("127.0.0.1:1"), None, Some("with a space in it")).is_err());
        let missing = Path::new("/nonexistent/lsm-token");
        assert!(access_token(&addr("127.0.0.1:1"), Some(missing), None).is_err());
    }

    #[test]
    fn a_refusal_says_why_in_the_header_and_the_body() {
        for problem in [Refusal::Missing, Refusal::NotBearer, Refusal::Wrong] {
            let res = unauthorized(problem);
            assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
            let challenge = res
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            assert!(challenge.starts_with("Bearer realm=\"lsm\""), "{challenge}");
            assert!(challenge.contains(problem.description()), "{challenge}");
            assert_eq!(
                challenge.contains("error=\"invalid_token\""),
                problem == Refusal::Wrong
            );
        }
    }

    #[test]
    fn bearer_values() {
        assert_eq!(bearer_credentials(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer_credentials(b"bearer  abc "), Some(&b"abc"[..]));
        assert_eq!(bearer_credentials(b"Basic abc"), None);
        assert_eq!(bearer_credentials(b"Bearerabc"), None);
        assert_eq!(bearer_credentials(b""), None);
    }
}
