//! `lsm`: local-shell-mcp. One binary: the MCP server (stdio or Streamable HTTP) over the
//! native desktop backend of this machine.

mod doctor;

use clap::{Parser, Subcommand};
use lsm_core::{BackendConnector, Limits, LocalGui};
use lsm_server::Machines;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The version and the commit it was built from.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("LSM_COMMIT"), ")");

/// Said at the end of `lsm --help`: what the environment changes.
const ENVIRONMENT_HELP: &str = "\
Environment:
  LSM_LOG        What is logged on stderr, as tracing's EnvFilter reads it [default:
                 lsm=info,warn]; e.g. LSM_LOG=lsm=debug for lsm's own details. Other libraries
                 never log below info (typed text and tokens never reach a log).
  LSM_STATE_DIR  The state directory (--state-dir of serve, worker, enrol and revoke).
  Most flags have a variable too; `lsm <command> --help` names it beside the flag.";

#[derive(Parser)]
#[command(
    name = "lsm",
    version = VERSION,
    about = "See and operate desktop applications through MCP",
    after_help = ENVIRONMENT_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP: over stdio by default, or over Streamable HTTP at /mcp with --http.
    Serve(ServeArgs),
    /// Enrol a remote machine: issue its token (shown once) and print the worker command.
    Enrol(EnrolArgs),
    /// Revoke a remote machine's token (from `lsm enrol`): a worker of that name is dropped
    /// within seconds and can no longer connect; `lsm enrol NAME` issues a new token.
    Revoke(RevokeArgs),
    /// Run as a worker: connect out to a controller and serve this desktop to it.
    Worker(WorkerArgs),
    /// One-time desktop set-up that lsm cannot do by itself (e.g. `lsm setup gnome`).
    #[command(subcommand)]
    Setup(SetupCommand),
    /// Check that this machine is ready for a model to see and act, and say what to do if not.
    ///
    /// Checks the session and how its display was found, the desktop connection, the
    /// accessibility bus and which applications expose a tree, the window list, one real
    /// capture, the input path, and the platform's own needs (GNOME extension, KWin scripts,
    /// Windows session and UI Automation, macOS permissions for this binary), with the same
    /// calls `gui_list` and `gui_state` make; and the web UI's login URL. Exit status 0 only
    /// when a model can see and act; 1 otherwise.
    ///
    /// --json prints {"version", "platform", "ready": bool, "items": [{"id", "title",
    /// "status": "ok"|"warn"|"fail"|"info", "detail", "hint"?}]}; ids: session, desktop,
    /// accessibility (AT-SPI, UI Automation or macOS Accessibility), accessible_apps, windows,
    /// capture, input, gnome_extension, kde_scripts, windows_session, macos_session,
    /// macos_accessibility, macos_screen_recording, web_ui.
    Doctor(doctor::DoctorArgs),
    /// Print the login URL of the web UI of each running `lsm serve` (newest first).
    WebUrl(doctor::WebUrlArgs),
    /// The policy file: which windows the model may observe and act on (docs/policy.md).
    #[command(subcommand)]
    Policy(PolicyCommand),
}

impl Command {
    /// The `--state-dir` given to this command, if it takes one.
    fn state_dir(&self) -> Option<&std::path::Path> {
        let state = match self {
            Command::Serve(a) => &a.state,
            Command::Enrol(a) => &a.state,
            Command::Revoke(a) => &a.state,
            Command::Worker(a) => &a.state,
            // Commands without a state directory (setup, and any added later).
            _ => return None,
        };
        state.state_dir.as_deref()
    }
}

#[derive(Subcommand)]
enum SetupCommand {
    /// GNOME on Wayland: install and enable lsm's GNOME Shell extension (it tells lsm where
    /// windows are); then log out and in once.
    Gnome(GnomeSetupArgs),
}

#[derive(clap::Args)]
struct GnomeSetupArgs {
    /// The GNOME Shell major version [default: read from `gnome-shell --version`].
    #[arg(long, value_name = "N")]
    shell_version: Option<u32>,
    /// Where user extensions live [default: $XDG_DATA_HOME/gnome-shell/extensions].
    #[arg(long, value_name = "DIR")]
    extensions_dir: Option<std::path::PathBuf>,
    /// Remove the extension and disable it instead.
    #[arg(long)]
    remove: bool,
    /// Install even outside a GNOME Wayland session (it takes effect at the next one).
    #[arg(long, conflicts_with = "remove")]
    force: bool,
}

/// One state directory for every command: what lsm keeps between runs.
#[derive(clap::Args)]
struct StateDirArg {
    /// Where lsm keeps its state: the audit log, a controller's enrolled workers and TLS
    /// certificate [default: $XDG_CONFIG_HOME/lsm or ~/.config/lsm].
    #[arg(long, value_name = "DIR", env = "LSM_STATE_DIR")]
    state_dir: Option<std::path::PathBuf>,
}

impl StateDirArg {
    fn open(&self) -> std::io::Result<lsm_remote::StateDir> {
        let dir = match &self.state_dir {
            Some(d) => d.clone(),
            None => lsm_remote::default_state_dir()?,
        };
        Ok(lsm_remote::StateDir::new(dir))
    }
}

#[derive(clap::Args)]
struct EnrolArgs {
    /// The machine's name, as passed in `machine` (letters, digits, '-', '_', '.').
    name: String,
    /// The URL workers use to reach this controller, for the printed command.
    #[arg(long, value_name = "URL", default_value = "wss://CONTROLLER-HOST:7443")]
    controller_url: String,
    #[command(flatten)]
    state: StateDirArg,
}

#[derive(clap::Args)]
struct RevokeArgs {
    /// The machine's name, as given to `lsm enrol`.
    name: String,
    #[command(flatten)]
    state: StateDirArg,
}

/// The limits a serving process (`serve`, `worker`) takes from its command line.
#[derive(clap::Args)]
struct LimitArgs {
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
    /// Longest wait, in ms, of gui_action for the window to settle after its actions (a call's
    /// settle_ms overrides it; at most 10000).
    #[arg(long, default_value_t = 1500, env = "LSM_SETTLE_MS")]
    settle_ms: u64,
}

#[derive(clap::Args)]
struct AuditArgs {
    /// Where every input lsm sends to this desktop is recorded, one JSON line each [default:
    /// audit.jsonl in the state directory]; `off` records nothing.
    #[arg(long, value_name = "PATH|off", env = "LSM_AUDIT_LOG")]
    audit_log: Option<String>,
    /// The audit log is rotated at this size (5 older files are kept).
    #[arg(long, value_name = "BYTES", default_value_t = lsm_core::audit::DEFAULT_MAX_BYTES, env = "LSM_AUDIT_MAX_BYTES")]
    audit_max_bytes: u64,
}

impl AuditArgs {
    /// The audit log, or None when it is off. A log that cannot be opened is said on stderr
    /// and lsm goes on without it.
    fn open(&self, state_dir: Option<&std::path::Path>) -> Option<Arc<lsm_core::audit::AuditLog>> {
        let (dir, name) = match self.audit_log.as_deref() {
            Some("off") => return None,
            Some(path) => {
                let path = std::path::Path::new(path);
                (
                    path.parent()
                        .map(std::path::Path::to_path_buf)
                        .unwrap_or_default(),
                    path.file_name().map(|n| n.to_os_string()),
                )
            }
            None => match state_dir
                .map(std::path::Path::to_path_buf)
                .map(Ok)
                .unwrap_or_else(lsm_core::state_dir::state_dir)
            {
                Ok(d) => (d, None),
                Err(e) => {
                    eprintln!("lsm: WARNING: no audit log ({e}); give --audit-log PATH");
                    return None;
                }
            },
        };
        let opened = lsm_core::audit::AuditLog::open_named(
            &dir,
            name.as_deref()
                .and_then(|n| n.to_str())
                .unwrap_or(lsm_core::audit::FILE_NAME),
            self.audit_max_bytes,
            lsm_core::audit::DEFAULT_KEEP,
        );
        match opened {
            Ok(log) => {
                tracing::info!("audit log: {}", log.path().display());
                Some(Arc::new(log))
            }
            Err(e) => {
                eprintln!(
                    "lsm: WARNING: the audit log in {} cannot be written ({e}); inputs are not recorded",
                    dir.display()
                );
                None
            }
        }
    }
}

#[derive(clap::Args)]
struct WorkerArgs {
    /// The controller's worker link, e.g. wss://controller:7443 (ws:// only on loopback).
    #[arg(long, value_name = "URL", env = "LSM_CONTROLLER")]
    controller: String,
    /// This machine's enrolled name.
    #[arg(long, env = "LSM_WORKER_NAME")]
    name: String,
    /// File holding the token from `lsm enrol` (else $LSM_WORKER_TOKEN).
    #[arg(long, value_name = "PATH")]
    token_file: Option<std::path::PathBuf>,
    /// SHA-256 of the controller's certificate, from `lsm enrol`; without it the certificate
    /// must verify against the public CAs.
    #[arg(long, value_name = "SHA256", env = "LSM_WORKER_PIN")]
    pin: Option<String>,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    state: StateDirArg,
    #[command(flatten)]
    audit: AuditArgs,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    person: PersonArgs,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio; beyond
    /// loopback only with an access token.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// With --http: every request must carry `Authorization: Bearer <token>`, the token read
    /// from this file (else $LSM_HTTP_TOKEN). Required on a non-loopback address.
    #[arg(long, value_name = "PATH", requires = "http")]
    http_token_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Accept remote workers on this address (e.g. 0.0.0.0:7443); off by default.
    #[arg(long, value_name = "ADDR", env = "LSM_WORKER_LISTEN")]
    worker_listen: Option<SocketAddr>,
    #[command(flatten)]
    state: StateDirArg,
    #[command(flatten)]
    audit: AuditArgs,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    person: PersonArgs,
    /// Serve the web UI (Desktop page) here [default: 127.0.0.1:7710; when that port is taken,
    /// lsm goes on without it]; port 0 picks a free one; `off` disables it.
    #[arg(long, value_name = "ADDR|off", env = "LSM_WEB")]
    web: Option<String>,
    /// Read the web UI's login secret from this file (else $LSM_WEB_SECRET, else a random one
    /// printed at start).
    #[arg(long, value_name = "PATH")]
    web_secret_file: Option<std::path::PathBuf>,
    /// The web UI's public origin behind a reverse proxy, e.g. https://desk.example.org.
    #[arg(long, value_name = "URL", env = "LSM_WEB_ORIGIN")]
    web_origin: Option<String>,
    /// A web UI session unused for this many seconds ends.
    #[arg(long, value_name = "SECS", default_value_t = 12 * 3600, env = "LSM_WEB_IDLE_TIMEOUT")]
    web_idle_timeout: u64,
    /// A web UI session ends this many seconds after its login, used or not.
    #[arg(long, value_name = "SECS", default_value_t = 24 * 3600, env = "LSM_WEB_SESSION_LIFETIME")]
    web_session_lifetime: u64,
}

fn connector() -> Arc<dyn BackendConnector> {
    #[cfg(all(feature = "gui", target_os = "linux"))]
    {
        Arc::new(lsm_linux::LinuxConnector)
    }
    #[cfg(all(feature = "gui", windows))]
    {
        Arc::new(lsm_windows::win32::WindowsConnector)
    }
    #[cfg(all(feature = "gui", target_os = "macos"))]
    {
        Arc::new(lsm_macos::backend::MacConnector)
    }
    #[cfg(not(all(feature = "gui", any(target_os = "linux", windows, target_os = "macos"))))]
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

/// Logs go to stderr: stdout belongs to MCP over stdio. `LSM_LOG` picks the levels, but other
/// crates never log below info (rmcp below warn): at debug they print whole messages (tool
/// arguments with typed text, D-Bus calls carrying it, session ids), which must never reach a
/// log at any level.
fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let levels =
        tracing_subscriber::EnvFilter::try_from_env("LSM_LOG").unwrap_or_else(|_| "lsm=info,warn".into());
    let no_payloads = tracing_subscriber::filter::filter_fn(|meta| {
        let target = meta.target();
        let ours = target == "lsm" || target.starts_with("lsm_") || target.starts_with("lsm::");
        let cap = if target.starts_with("rmcp") {
            tracing::Level::WARN
        } else {
            tracing::Level::INFO
        };
        ours || *meta.level() <= cap
    });
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(no_payloads)
        .with_filter(levels);
    tracing_subscriber::registry().with(fmt).init();
}

fn main() -> std::process::ExitCode {
    return_large_buffers_to_the_system();
    init_logging();
    let cli = Cli::parse();
    // One state directory for the whole process: the parts that find it on their own (a desktop
    // portal's grant) read $LSM_STATE_DIR. Set before any other thread exists.
    if let Some(dir) = cli.command.state_dir() {
        std::env::set_var("LSM_STATE_DIR", dir);
    }
    off_the_main_thread_on_macos(move || run(cli))
}

/// On macOS the main thread serves the main dispatch queue, where the keyboard layout must be
/// read (HIToolbox ends a process that reads it elsewhere), and `run` goes to another thread.
#[cfg(all(feature = "gui", target_os = "macos"))]
fn off_the_main_thread_on_macos(run: impl FnOnce() -> u8 + Send + 'static) -> std::process::ExitCode {
    lsm_macos::main_queue::serve_main_queue_while(move || {
        let status = run();
        // The process ends with `exit`, which does not flush Rust's stdout buffer.
        let _ = std::io::Write::flush(&mut std::io::stdout());
        i32::from(status)
    })
}

#[cfg(not(all(feature = "gui", target_os = "macos")))]
fn off_the_main_thread_on_macos(run: impl FnOnce() -> u8) -> std::process::ExitCode {
    std::process::ExitCode::from(run())
}

/// The command, on the async runtime; the exit status.
fn run(cli: Cli) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lsm: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let cli = match cli.command {
        Command::Doctor(args) => return runtime.block_on(doctor::doctor(args, VERSION, connector())),
        Command::WebUrl(args) => return doctor::web_url(args),
        _ => cli,
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::Enrol(args) => enrol(args),
            Command::Revoke(args) => revoke(args),
            Command::Worker(args) => worker(args).await,
            Command::Setup(SetupCommand::Gnome(args)) => setup_gnome(args),
            Command::Doctor(_) | Command::WebUrl(_) => Ok(()),
            Command::Policy(PolicyCommand::Check(args)) => policy_check(args),
        }
    });
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("lsm: {e}");
            1
        }
    }
}

#[cfg(all(feature = "gui", target_os = "linux"))]
fn setup_gnome(args: GnomeSetupArgs) -> std::io::Result<()> {
    let opts = lsm_linux::wayland::gnome::setup::SetupOptions {
        shell_version: args.shell_version,
        extensions_dir: args.extensions_dir,
        remove: args.remove,
        force: args.force,
    };
    for line in lsm_linux::wayland::gnome::setup::setup_gnome(&opts).map_err(std::io::Error::other)? {
        println!("{line}");
    }
    Ok(())
}

#[cfg(not(all(feature = "gui", target_os = "linux")))]
fn setup_gnome(_args: GnomeSetupArgs) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "`lsm setup gnome` is for GNOME on Linux, in a build with the `gui` feature",
    ))
}

async fn serve(args: ServeArgs) -> std::io::Result<()> {
    // Before anything listens: an open door refuses to start.
    let http_token = match args.http {
        Some(addr) => lsm_server::http::access_token(
            &addr,
            args.http_token_file.as_deref(),
            std::env::var("LSM_HTTP_TOKEN").ok().as_deref(),
        )?,
        None => None,
    };
    let limits = limits(&args.limits)?;
    let mut local = LocalGui::new(lsm_server::machines::LOCAL, limits, connector());
    if let Some(log) = args.audit.open(args.state.state_dir.as_deref()) {
        local = local.with_audit(log);
    }
    // One feed for the process: the Desktop page shows every machine's activity from it.
    let feed = Arc::new(lsm_core::person::Feed::new());
    let local = local.with_person(args.person.config(), feed.clone());
    let local = Arc::new(local.with_policy(args.policy.open(args.state.state_dir.as_deref())?));
    let machines = match args.worker_listen {
        Some(addr) => {
            let controller = lsm_remote::Controller::new(args.state.open()?);
            // The workers' activity and take-over state reach the Desktop page's feed.
            controller.set_feed(feed.clone());
            // Bind errors surface at once; the listener then runs beside MCP.
            let listener = tokio::spawn(controller.clone().serve(addr));
            tokio::time::sleep(Duration::from_millis(50)).await;
            if listener.is_finished() {
                return match listener.await {
                    Ok(Err(e)) => Err(std::io::Error::other(format!("--worker-listen {addr}: {e}"))),
                    _ => Err(std::io::Error::other(format!(
                        "--worker-listen {addr}: listener stopped"
                    ))),
                };
            }
            Arc::new(Machines::with_remote(local, controller).with_feed(feed))
        }
        None => Arc::new(Machines::new(local).with_feed(feed)),
    };
    let web_options = lsm_server::web::WebOptions {
        web: args.web.clone(),
        secret_file: args.web_secret_file.clone(),
        secret_env: std::env::var("LSM_WEB_SECRET").ok(),
        origin: args.web_origin.clone(),
        sessions: lsm_server::web::auth::SessionLimits {
            idle: Duration::from_secs(args.web_idle_timeout.max(1)),
            lifetime: Duration::from_secs(args.web_session_lifetime.max(1)),
        },
        state_dir: (args.state.state_dir.clone()).or_else(|| lsm_core::state_dir::default_state_dir().ok()),
    };
    let web = lsm_server::web::start(machines.clone(), &web_options).await?;
    // The web UI runs beside MCP and ends with it.
    let web = async move {
        match web {
            Some(ui) => ui.run().await,
            None => std::future::pending().await,
        }
    };
    match args.http {
        Some(addr) => {
            tokio::select! {
                r = lsm_server::http::serve_http(machines, addr, http_token) => r,
                r = web => r,
                _ = tokio::signal::ctrl_c() => Ok(()),
            }
        }
        None => {
            tokio::select! {
                r = lsm_server::serve_stdio(machines) => r,
                r = web => r,
            }
        }
    }
}

/// The server's limits from its command line (`serve` and `worker` alike).
fn limits(args: &LimitArgs) -> std::io::Result<Limits> {
    let LimitArgs {
        state_ttl,
        walk_budget_ms,
        max_image_edge,
        settle_ms,
    } = *args;
    if !(state_ttl.is_finite() && (0.0..=86_400.0).contains(&state_ttl)) {
        return Err(std::io::Error::other(
            "--state-ttl must be between 0 and 86400 seconds",
        ));
    }
    if max_image_edge != 0 && !(16..=16384).contains(&max_image_edge) {
        return Err(std::io::Error::other(
            "--max-image-edge must be 0 (no cap) or between 16 and 16384 pixels",
        ));
    }
    Ok(Limits {
        max_image_edge,
        state_ttl: Duration::from_secs_f64(state_ttl),
        walk_budget: Duration::from_millis(walk_budget_ms.clamp(10, 60_000)),
        settle: Duration::from_millis(settle_ms).min(lsm_core::limits::MAX_SETTLE),
        ..Limits::default()
    })
}

fn enrol(args: EnrolArgs) -> std::io::Result<()> {
    let state = args.state.open()?;
    let token = state.enrol(&args.name)?;
    let pin = state.pin()?;
    println!(
        "Enrolled {:?}. Its token (shown only this once):\n\n  {token}\n",
        args.name
    );
    println!("On that machine, in the user's graphical session, save the token to a file readable");
    println!("only by that user (e.g. ~/.config/lsm/worker-token), then run:\n");
    println!(
        "  lsm worker --controller {} --name {} --token-file ~/.config/lsm/worker-token --pin {pin}\n",
        args.controller_url, args.name
    );
    println!(
        "The pin is the SHA-256 of this controller's certificate ({}).",
        state.cert_file().display()
    );
    println!("Start the controller with `lsm serve --worker-listen 0.0.0.0:7443` (or your port).");
    Ok(())
}

fn revoke(args: RevokeArgs) -> std::io::Result<()> {
    if args.state.open()?.revoke(&args.name)? {
        println!(
            "Revoked {:?}; a connected worker of that name is dropped within seconds.",
            args.name
        );
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "no machine named {:?} is enrolled",
            args.name
        )))
    }
}

async fn worker(args: WorkerArgs) -> std::io::Result<()> {
    let token = match (&args.token_file, std::env::var("LSM_WORKER_TOKEN")) {
        (Some(path), _) => lsm_remote::TokenSource::File(path.clone()),
        (None, Ok(t)) if !t.trim().is_empty() => lsm_remote::TokenSource::Value(t),
        _ => {
            return Err(std::io::Error::other(
                "give the token with --token-file PATH or the LSM_WORKER_TOKEN environment variable",
            ))
        }
    };
    let limits = limits(&args.limits)?;
    // The worker's own service and state store; a missing session answers GUI_UNAVAILABLE.
    let mut gui = LocalGui::new(args.name.clone(), limits, connector());
    if let Some(log) = args.audit.open(args.state.state_dir.as_deref()) {
        gui = gui.with_audit(log);
    }
    // Take-over and approvals are enforced here, for this desktop.
    let gui = gui.with_person(args.person.config(), Arc::new(lsm_core::person::Feed::new()));
    // The worker holds the controller's calls to its own policy; no message changes it.
    let gui = Arc::new(gui.with_policy(args.policy.open(args.state.state_dir.as_deref())?));
    let config = lsm_remote::WorkerConfig {
        controller: args.controller,
        name: args.name,
        token,
        pin: args.pin,
        session: lsm_remote::worker::describe_session(),
        gui,
    };
    tokio::select! {
        r = lsm_remote::worker::run(config) => r,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}

// ---------------------------------------------------------------- a person in charge (docs/web-ui.md)

#[derive(clap::Args)]
struct PersonArgs {
    /// How long a model's gui_action waits for a person's approval on the Desktop page (an
    /// `ask` window, or "approve everything") before it is refused with APPROVAL_REQUIRED.
    #[arg(long, value_name = "SECS", default_value_t = 60, env = "LSM_APPROVAL_TIMEOUT")]
    approval_timeout: u64,
    /// A take-over ends by itself after this many seconds without the person's input.
    #[arg(long, value_name = "SECS", default_value_t = 300, env = "LSM_TAKE_OVER_IDLE")]
    take_over_idle: u64,
}

impl PersonArgs {
    fn config(&self) -> lsm_core::person::PersonConfig {
        lsm_core::person::PersonConfig {
            approval_timeout: Duration::from_secs(self.approval_timeout.max(1)),
            idle_release: Duration::from_secs(self.take_over_idle.max(1)),
        }
    }
}

// ---------------------------------------------------------------- policy (docs/policy.md)

#[derive(clap::Args)]
struct PolicyArgs {
    /// Which windows the model may observe and act on (docs/policy.md), re-read when it
    /// changes [default: policy.toml in the state directory, when it exists].
    #[arg(long, value_name = "FILE", env = "LSM_POLICY")]
    policy: Option<std::path::PathBuf>,
    /// Deny the model every window of this application (a name or pattern, as `app` in the
    /// policy file); comes before the file's rules. Repeatable.
    #[arg(long, value_name = "APP")]
    deny: Vec<String>,
    /// Let the model observe this application's windows but not act on them. Repeatable.
    #[arg(long, value_name = "APP")]
    observe_only: Vec<String>,
}

impl PolicyArgs {
    /// The policy this process holds the model to. A given file must exist; the state
    /// directory's is used when it exists (and picked up when it is written later).
    fn open(
        &self,
        state_dir: Option<&std::path::Path>,
    ) -> std::io::Result<Arc<lsm_core::policy::LivePolicy>> {
        let flags =
            lsm_core::policy::flag_rules(&self.deny, &self.observe_only).map_err(std::io::Error::other)?;
        let path = match &self.policy {
            Some(path) if !path.is_file() => {
                return Err(std::io::Error::other(format!(
                    "--policy {}: no such file",
                    path.display()
                )))
            }
            Some(path) => Some(path.clone()),
            None => state_dir
                .map(std::path::Path::to_path_buf)
                .map(Ok)
                .unwrap_or_else(lsm_core::state_dir::state_dir)
                .ok()
                .map(|d| lsm_core::policy::default_path(&d)),
        };
        let live = lsm_core::policy::LivePolicy::open(path, flags).map_err(std::io::Error::other)?;
        Ok(Arc::new(live))
    }
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Check a policy file and print its rules in the order they are tried.
    Check(PolicyCheckArgs),
}

#[derive(clap::Args)]
struct PolicyCheckArgs {
    /// The file [default: policy.toml in the state directory].
    file: Option<std::path::PathBuf>,
}

fn policy_check(args: PolicyCheckArgs) -> std::io::Result<()> {
    let path = match args.file {
        Some(p) => p,
        None => lsm_core::policy::default_path(&lsm_core::state_dir::state_dir()?),
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
    let policy =
        lsm_core::policy::parse(&text, &path.display().to_string()).map_err(std::io::Error::other)?;
    println!(
        "{}: valid; {} rules, tried in order (the first that matches decides); default {}",
        path.display(),
        policy.rules.len(),
        policy.default
    );
    for rule in &policy.rules {
        println!("  {rule}");
    }
    Ok(())
}
