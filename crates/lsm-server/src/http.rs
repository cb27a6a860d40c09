//! MCP over Streamable HTTP at `/mcp`, with Host and Origin checks against DNS rebinding.

use crate::{LsmMcp, Machines};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;

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

/// Binds and serves until the process is stopped.
pub async fn serve_http(machines: Arc<Machines>, addr: SocketAddr) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let (hosts, origins) = allowed_names(&bound);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    let service = StreamableHttpService::new(
        move || Ok(LsmMcp::new(machines.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    tracing::info!("MCP Streamable HTTP on http://{bound}/mcp");
    eprintln!("lsm: MCP endpoint http://{bound}/mcp");
    axum::serve(listener, app).await
}
