//! Where lsm keeps what it must remember between runs (worker credentials, the controller's
//! certificate, a desktop portal's grant).

use std::io;
use std::path::PathBuf;

/// `$LSM_STATE_DIR` when set (what `--state-dir` defaults to), else the default below.
pub fn state_dir() -> io::Result<PathBuf> {
    match std::env::var_os("LSM_STATE_DIR").filter(|v| !v.is_empty()) {
        Some(d) => Ok(PathBuf::from(d)),
        None => default_state_dir(),
    }
}

/// `$XDG_CONFIG_HOME/lsm`, else `~/.config/lsm` (`%APPDATA%\lsm` on Windows).
pub fn default_state_dir() -> io::Result<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        if let Some(d) = nonempty("APPDATA") {
            return Ok(d.join("lsm"));
        }
    }
    if let Some(d) = nonempty("XDG_CONFIG_HOME") {
        return Ok(d.join("lsm"));
    }
    nonempty("HOME")
        .or_else(|| nonempty("USERPROFILE"))
        .map(|h| h.join(".config").join("lsm"))
        .ok_or_else(|| io::Error::other("no home directory: give --state-dir or LSM_STATE_DIR"))
}
