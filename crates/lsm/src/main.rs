//! `lsm`: local-shell-mcp. One binary: the MCP server (stdio or Streamable HTTP) over the
//! native desktop backend of this machine.

use clap::{Parser, Subcommand};
use lsm_core::{BackendConnector, Limits, LocalGui};
use lsm_server::Machines;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "lsm",
    version,
    about = "See and operate desktop applications through MCP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP: over stdio by default, or over Streamable HTTP at /mcp with --http.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Seconds a state_id stays valid.
    #[arg(long, default_value_t = 30.0, env = "LSM_STATE_TTL")]
    state_ttl: f64,
    /// Milliseconds a tree walk may take before it returns what it has (truncated).
    #[arg(long, default_value_t = 2500, env = "LSM_WALK_BUDGET_MS")]
    walk_budget_ms: u64,
    /// Longest edge of an observation's screenshot and coordinate space; larger windows are
    /// observed in a uniformly scaled space (0: no cap).
    #[arg(long, default_value_t = 1568, env = "LSM_MAX_IMAGE_EDGE")]
    max_image_edge: u32,
}

fn connector() -> Arc<dyn BackendConnector> {
    #[cfg(all(feature = "gui", target_os = "linux"))]
    {
        Arc::new(lsm_linux::LinuxConnector)
    }
    #[cfg(not(all(feature = "gui", target_os = "linux")))]
    {
        Arc::new(lsm_core::NoGui {
            reason: if cfg!(feature = "gui") {
                format!("no native backend for {} in this build yet", std::env::consts::OS)
            } else {
                "this lsm was built without the `gui` feature".to_string()
            },
        })
    }
}

/// Screenshots are multi-megabyte buffers allocated and freed on every observation. glibc raises
/// its mmap threshold after such frees and then keeps them on the heap, so the server's memory
/// only grows; a fixed threshold returns every large buffer to the system when it is freed.
fn return_large_buffers_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only tunes the allocator; called once, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn main() -> std::process::ExitCode {
    return_large_buffers_to_the_system();
    // Logs go to stderr: stdout belongs to MCP over stdio.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LSM_LOG").unwrap_or_else(|_| "lsm=info,warn".into()),
        )
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lsm: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
        }
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lsm: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> std::io::Result<()> {
    if !(args.state_ttl.is_finite() && args.state_ttl >= 0.0 && args.state_ttl <= 86_400.0) {
        return Err(std::io::Error::other(
            "--state-ttl must be between 0 and 86400 seconds",
        ));
    }
    if args.max_image_edge != 0 && !(16..=16384).contains(&args.max_image_edge) {
        return Err(std::io::Error::other(
            "--max-image-edge must be 0 (no cap) or between 16 and 16384 pixels",
        ));
    }
    let limits = Limits {
        max_image_edge: args.max_image_edge,
        state_ttl: Duration::from_secs_f64(args.state_ttl),
        walk_budget: Duration::from_millis(args.walk_budget_ms.clamp(10, 60_000)),
        ..Limits::default()
    };
    let local = Arc::new(LocalGui::new(lsm_server::machines::LOCAL, limits, connector()));
    let machines = Arc::new(Machines::new(local));
    match args.http {
        Some(addr) => {
            tokio::select! {
                r = lsm_server::http::serve_http(machines, addr) => r,
                _ = tokio::signal::ctrl_c() => Ok(()),
            }
        }
        None => lsm_server::serve_stdio(machines).await,
    }
}
