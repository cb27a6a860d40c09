//! `lsm doctor` (is this machine ready for a model to see and act, and what to do if not) and
//! `lsm web-url` (the login URL of the running servers' web UIs). The checks are the backend's
//! own (`LocalGui::doctor`: the calls `gui_list` makes); this file adds the web UI and prints.

use lsm_core::doctor::{Item, Report};
use lsm_core::{BackendConnector, Limits, LocalGui};
use lsm_server::web::url_file;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct DoctorArgs {
    /// Print the report as JSON (see above) instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    state: StateDir,
}

#[derive(clap::Args)]
pub struct WebUrlArgs {
    #[command(flatten)]
    state: StateDir,
}

#[derive(clap::Args)]
struct StateDir {
    /// The state directory `lsm serve` writes its web UI's login URL to [default:
    /// $XDG_CONFIG_HOME/lsm or ~/.config/lsm].
    #[arg(long, value_name = "DIR", env = "LSM_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

impl StateDir {
    fn resolve(&self) -> Option<PathBuf> {
        self.state_dir
            .clone()
            .or_else(|| lsm_core::state_dir::default_state_dir().ok())
    }
}

/// Runs every check, prints the report; exit status 0 only when a model can see and act.
pub async fn doctor(args: DoctorArgs, version: &str, connector: Arc<dyn BackendConnector>) -> u8 {
    let gui = LocalGui::new(lsm_server::machines::LOCAL, Limits::default(), connector);
    let mut items = gui.doctor().await;
    items.push(web_ui_item(args.state.resolve()));
    let report = Report::new(version, std::env::consts::OS, items);
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    report.exit_code()
}

fn web_ui_item(state_dir: Option<PathBuf>) -> Item {
    const TITLE: &str = "Web UI";
    let Some(dir) = state_dir else {
        return Item::info("web_ui", TITLE, "no state directory (set HOME or LSM_STATE_DIR)");
    };
    let running = tokio::task::block_in_place(|| url_file::running(&dir));
    if running.is_empty() {
        return Item::info(
            "web_ui",
            TITLE,
            format!(
                "no running `lsm serve` has written its web UI address to {} (it does when it starts)",
                dir.display()
            ),
        );
    }
    let urls: Vec<String> = running
        .iter()
        .map(|r| match &r.note {
            Some(note) => format!("{} ({note})", r.login_url),
            None => r.login_url.clone(),
        })
        .collect();
    Item::info("web_ui", TITLE, format!("open {}", urls.join(" or ")))
}

/// Prints the login URL of every running server's web UI, the newest first; the exit status.
pub fn web_url(args: WebUrlArgs) -> u8 {
    let Some(dir) = args.state.resolve() else {
        eprintln!("lsm: no state directory: set HOME, or give --state-dir or LSM_STATE_DIR");
        return 1;
    };
    let running = url_file::running(&dir);
    if running.is_empty() {
        eprintln!(
            "lsm: no running `lsm serve` with a web UI has written its address to {}; start one (a client \
             that runs `lsm serve` starts it), or give the --state-dir it uses",
            dir.display()
        );
        return 1;
    }
    for r in running {
        println!("{}", r.login_url);
        if let Some(note) = r.note {
            eprintln!("lsm: {}: {note}", r.login_url);
        }
    }
    0
}
