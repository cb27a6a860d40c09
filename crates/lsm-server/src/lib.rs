//! Transports of lsm over the shared `GuiService`: MCP over stdio and Streamable HTTP, and the
//! web UI (`web`).

// Public only for the fuzz targets (tests/prop_args.rs): not an API.
#[doc(hidden)]
pub mod args;
pub mod http;
pub mod machines;
pub mod mcp;
pub mod schema;
pub mod tools;
pub mod web;

pub use machines::Machines;
pub use mcp::LsmMcp;

use rmcp::ServiceExt;
use std::sync::Arc;

/// Serves MCP on stdin/stdout until the client closes the stream.
pub async fn serve_stdio(machines: Arc<Machines>) -> std::io::Result<()> {
    let (read, write) = stdio::streams();
    let service = LsmMcp::new(machines)
        .serve((read, write))
        .await
        .map_err(|e| std::io::Error::other(format!("MCP initialisation over stdio failed: {e}")))?;
    service
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("MCP stdio session ended: {e}")))?;
    Ok(())
}

mod stdio {
    //! Standard input and output as async streams. Tokio's `stdin()`/`stdout()` do every read
    //! and write on a blocking thread, a thread hand-off per message each way; when the client
    //! gave us pipes or sockets (as MCP clients do), they are read and written non-blocking on
    //! the runtime instead, which takes a tenth of a millisecond off every call.

    use tokio::io::{AsyncRead, AsyncWrite};

    pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
    pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

    #[cfg(unix)]
    pub fn streams() -> (Reader, Writer) {
        use std::os::fd::AsFd;
        let read: Reader = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| nonblocking_reader(fd.into()))
            .unwrap_or_else(|| Box::new(tokio::io::stdin()));
        let write: Writer = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| nonblocking_writer(fd.into()))
            .unwrap_or_else(|| Box::new(tokio::io::stdout()));
        (read, write)
    }

    #[cfg(not(unix))]
    pub fn streams() -> (Reader, Writer) {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }

    /// A FIFO or a Unix socket as a non-blocking reader; None for anything else (a terminal, a
    /// file), which keeps tokio's blocking-thread reader.
    #[cfg(unix)]
    fn nonblocking_reader(file: std::fs::File) -> Option<Reader> {
        use std::os::unix::fs::FileTypeExt;
        let kind = file.metadata().ok()?.file_type();
        if kind.is_fifo() {
            let r = tokio::net::unix::pipe::Receiver::from_file(file).ok()?;
            return Some(Box::new(r));
        }
        if kind.is_socket() {
            return Some(Box::new(unix_stream(file)?));
        }
        None
    }

    #[cfg(unix)]
    fn nonblocking_writer(file: std::fs::File) -> Option<Writer> {
        use std::os::unix::fs::FileTypeExt;
        let kind = file.metadata().ok()?.file_type();
        if kind.is_fifo() {
            let w = tokio::net::unix::pipe::Sender::from_file(file).ok()?;
            return Some(Box::new(w));
        }
        if kind.is_socket() {
            return Some(Box::new(unix_stream(file)?));
        }
        None
    }

    #[cfg(unix)]
    fn unix_stream(file: std::fs::File) -> Option<tokio::net::UnixStream> {
        use std::os::fd::OwnedFd;
        let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    }
}
