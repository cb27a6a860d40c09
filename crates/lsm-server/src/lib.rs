//! Transports of lsm over the shared `GuiService`: MCP over stdio and Streamable HTTP.

pub mod http;
pub mod machines;
pub mod mcp;
pub mod tools;

pub use machines::Machines;
pub use mcp::LsmMcp;

use rmcp::ServiceExt;
use std::sync::Arc;

/// Serves MCP on stdin/stdout until the client closes the stream.
pub async fn serve_stdio(machines: Arc<Machines>) -> std::io::Result<()> {
    let service = LsmMcp::new(machines)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP initialisation over stdio failed: {e}")))?;
    service
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("MCP stdio session ended: {e}")))?;
    Ok(())
}
