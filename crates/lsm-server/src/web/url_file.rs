//! The web UI's login URL in a file of the state directory, so that a person whose MCP client
//! started `lsm serve` (its stderr hidden in the client's logs) finds it: `lsm web-url` and
//! `lsm doctor` read it. One file per running server, `web-ui-<port>.url` (mode 0600: it holds
//! the login secret), removed when the server stops; a file whose port no longer answers is
//! from a server that was killed and is removed by the next reader.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const PREFIX: &str = "web-ui-";
const SUFFIX: &str = ".url";
/// How long a reader waits for a server's port to answer.
const PROBE: Duration = Duration::from_millis(300);

/// The file of one running server; removed when dropped (the server stopped).
#[derive(Debug)]
pub struct UrlFile {
    path: PathBuf,
}

impl UrlFile {
    /// Writes `login_url` (and `note`, a second line, e.g. how to log in) for the server
    /// listening on `port`.
    pub fn write(state_dir: &Path, port: u16, login_url: &str, note: Option<&str>) -> io::Result<UrlFile> {
        create_private_dir(state_dir)?;
        let path = state_dir.join(format!("{PREFIX}{port}{SUFFIX}"));
        // A stale file may have other permissions: write a new one.
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path)?;
        writeln!(file, "{login_url}")?;
        if let Some(note) = note {
            writeln!(file, "{note}")?;
        }
        Ok(UrlFile { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for UrlFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// A running server's web UI, as its file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub port: u16,
    /// The URL that opens and logs in to the web UI (without the secret when the server was
    /// given one: then `note` says how to log in).
    pub login_url: String,
    pub note: Option<String>,
    pub file: PathBuf,
}

/// The web UIs of the servers running on this machine with this state directory, the newest
/// first. Files of servers that are gone are removed.
pub fn running(state_dir: &Path) -> Vec<Running> {
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return Vec::new();
    };
    let mut found: Vec<(SystemTime, Running)> = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(port) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?.parse::<u16>().ok())
        else {
            continue;
        };
        let path = entry.path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut lines = text.lines();
        let Some(login_url) = lines.next().map(str::trim).filter(|l| !l.is_empty()) else {
            continue;
        };
        if !answers(port) {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        let modified = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        found.push((
            modified,
            Running {
                port,
                login_url: login_url.to_string(),
                note: lines.next().map(str::to_string).filter(|n| !n.is_empty()),
                file: path,
            },
        ));
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, r)| r).collect()
}

/// Something listens on the loopback port (the web UI is served on loopback unless told
/// otherwise; a server on another address is still reached through 127.0.0.1 when it listens
/// on all addresses).
fn answers(port: u16) -> bool {
    TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), PROBE).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_server_is_found_and_a_dead_one_forgotten() {
        let dir = std::env::temp_dir().join(format!("lsm-url-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let live = UrlFile::write(&dir, port, "http://127.0.0.1:1/#secret=abc", None).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(live.path()).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        // A port nobody listens on: the file of a killed server.
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dead_port = free.local_addr().unwrap().port();
        drop(free);
        let dead = UrlFile::write(&dir, dead_port, "http://127.0.0.1:2/", Some("log in")).unwrap();
        let dead_path = dead.path().to_path_buf();
        std::mem::forget(dead);
        let found = running(&dir);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].login_url, "http://127.0.0.1:1/#secret=abc");
        assert_eq!(found[0].port, port);
        assert!(!dead_path.exists(), "the dead server's file is removed");
        let live_path = live.path().to_path_buf();
        drop(live);
        assert!(!live_path.exists(), "a stopped server removes its file");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
