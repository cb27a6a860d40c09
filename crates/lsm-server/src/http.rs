//! MCP over Streamable HTTP at `/mcp`, with Host and Origin checks against DNS rebinding and an
//! access token (a bearer token) that a server beyond loopback cannot start without.

use crate::web::auth::constant_time_eq;
use crate::{LsmMcp, Machines};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
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
            Err(std::io::Error::other(format!(
                "the MCP access token must be at least {MIN_TOKEN_CHARS} printable ASCII characters without spaces"
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
    let listener = tokio::net::TcpListener::bind(addr).await?;
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

/// `Authorization: Bearer <token>` on every request, compared in constant time. Missing or
/// wrong get the same bare 401: nothing tells a guesser which.
async fn bearer(State(token): State<Arc<[u8]>>, req: Request, next: Next) -> Response {
    let sent = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| bearer_credentials(v.as_bytes()));
    if sent.is_some_and(|t| constant_time_eq(t, &token)) {
        return next.run(req).await;
    }
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.to_string())
        .unwrap_or_default();
    tracing::info!(%peer, "MCP request refused: no or wrong access token");
    let mut res = StatusCode::UNAUTHORIZED.into_response();
    res.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
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
        assert!(access_token(&addr("0.0.0.0:1"), None, Some("short")).is_err());
        assert!(access_token(&addr("127.0.0.1:1"), None, Some("with a space in it")).is_err());
        let missing = Path::new("/nonexistent/lsm-token");
        assert!(access_token(&addr("127.0.0.1:1"), Some(missing), None).is_err());
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
