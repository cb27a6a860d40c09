//! Finding the graphical session: from our environment, else from the user's systemd
//! environment, else from the standard socket locations (a worker is often started outside the
//! graphical login). Nothing here opens a connection; `bus.rs` connects to the session bus
//! it names (for AT-SPI and the Wayland compositors alike).

pub(crate) mod bus;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Session variables we look for.
pub const VARS: &[&str] = &[
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_SESSION_TYPE",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "AT_SPI_BUS_ADDRESS",
];

/// The origin of a value taken from lsm's own environment.
pub const INHERITED: &str = "inherited from the environment";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    pub vars: HashMap<String, String>,
    /// Where lsm looked, for error messages.
    pub looked: Vec<String>,
    /// Where each value in `vars` came from (`lsm doctor` says whether the display was
    /// inherited or recovered).
    pub origins: HashMap<String, String>,
}

impl Session {
    pub fn get(&self, k: &str) -> Option<&str> {
        self.vars.get(k).map(String::as_str).filter(|v| !v.is_empty())
    }
}

/// Reads `systemctl --user show-environment`, bounded to one second.
fn systemd_user_env() -> Option<HashMap<String, String>> {
    let mut child = Command::new("systemctl")
        .args(["--user", "show-environment"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let out = child.wait_with_output().ok()?;
    Some(parse_env_lines(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `KEY=value` lines (systemd quotes values with $'..' only for odd characters; we keep
/// those lines out rather than guess).
pub fn parse_env_lines(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, v)| VARS.contains(k) && !v.starts_with("$'"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

fn owned_by_us(p: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).map(|m| m.uid() == uid).unwrap_or(false)
}

/// The lowest-numbered X socket in /tmp/.X11-unix owned by our user.
fn x11_socket_display(uid: u32) -> Option<String> {
    let mut displays: Vec<u32> = std::fs::read_dir("/tmp/.X11-unix")
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| owned_by_us(&e.path(), uid))
        .filter_map(|e| e.file_name().to_str()?.strip_prefix('X')?.parse().ok())
        .collect();
    displays.sort_unstable();
    displays.first().map(|n| format!(":{n}"))
}

/// Collects the session: our own environment first, then systemd's, then sockets.
pub fn discover() -> Session {
    let mut s = Session::default();
    for k in VARS {
        if let Ok(v) = std::env::var(k) {
            if !v.is_empty() {
                s.vars.insert((*k).to_string(), v);
                s.origins.insert((*k).to_string(), INHERITED.into());
            }
        }
    }
    s.looked.push("the process environment".into());
    if s.get("DISPLAY").is_some() || s.get("WAYLAND_DISPLAY").is_some() {
        return s;
    }
    if let Some(env) = systemd_user_env() {
        s.looked.push("systemctl --user show-environment".into());
        for (k, v) in env {
            if !s.vars.contains_key(&k) {
                s.origins.insert(
                    k.clone(),
                    "recovered from `systemctl --user show-environment`".into(),
                );
                s.vars.insert(k, v);
            }
        }
    } else {
        s.looked.push("systemctl --user (not available)".into());
    }
    let Some(uid) = uid() else { return s };
    let runtime = s
        .get("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("/run/user/{uid}")));
    if s.get("WAYLAND_DISPLAY").is_none()
        && runtime.join("wayland-0").exists()
        && owned_by_us(&runtime.join("wayland-0"), uid)
    {
        s.vars.insert("WAYLAND_DISPLAY".into(), "wayland-0".into());
        s.origins.insert(
            "WAYLAND_DISPLAY".into(),
            format!(
                "recovered from the socket {}",
                runtime.join("wayland-0").display()
            ),
        );
    }
    if s.get("DBUS_SESSION_BUS_ADDRESS").is_none() && runtime.join("bus").exists() {
        s.vars.insert(
            "DBUS_SESSION_BUS_ADDRESS".into(),
            format!("unix:path={}", runtime.join("bus").display()),
        );
        s.origins.insert(
            "DBUS_SESSION_BUS_ADDRESS".into(),
            format!("recovered from the socket {}", runtime.join("bus").display()),
        );
    }
    if s.get("DISPLAY").is_none() {
        if let Some(d) = x11_socket_display(uid) {
            s.origins.insert(
                "DISPLAY".into(),
                format!(
                    "recovered from the socket /tmp/.X11-unix/X{}",
                    d.trim_start_matches(':')
                ),
            );
            s.vars.insert("DISPLAY".into(), d);
        }
    }
    s.looked.push(format!(
        "{}/wayland-0, {}/bus and /tmp/.X11-unix",
        runtime.display(),
        runtime.display()
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_systemd_environment() {
        let env = parse_env_lines(
            "DISPLAY=:0\nHOME=/root\nWAYLAND_DISPLAY=wayland-0\nXDG_SESSION_TYPE=$'odd\\n'\n",
        );
        assert_eq!(env.get("DISPLAY").map(String::as_str), Some(":0"));
        assert_eq!(env.get("WAYLAND_DISPLAY").map(String::as_str), Some("wayland-0"));
        assert!(!env.contains_key("HOME"));
        assert!(!env.contains_key("XDG_SESSION_TYPE"));
    }
}
