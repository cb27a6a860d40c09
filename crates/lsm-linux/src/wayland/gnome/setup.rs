//! `lsm setup gnome`: installs the GNOME Shell extension that tells lsm where windows are (no
//! Wayland protocol gives an ordinary client the window list with positions) and enables it in
//! the user's settings. The extension is shipped inside the binary, in the format the user's
//! shell loads: the legacy one for GNOME 43-44, ESM for 45 and later.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The extension's UUID, also its folder name.
pub const UUID: &str = "lsm-windows@lsm";

const SERVICE: &str = include_str!("extension/service.js");
const LEGACY_HEAD: &str = include_str!("extension/legacy_head.js");
const LEGACY_TAIL: &str = include_str!("extension/legacy_tail.js");
const ESM_HEAD: &str = include_str!("extension/esm_head.js");
const ESM_TAIL: &str = include_str!("extension/esm_tail.js");

/// GNOME Shell major versions the extension declares, per format.
const LEGACY_VERSIONS: &[u32] = &[43, 44];
const ESM_FIRST: u32 = 45;
const ESM_LAST: u32 = 49;

/// The two extension formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// GNOME 43 and 44: `imports.gi`, an `init()` function.
    Legacy,
    /// GNOME 45 and later: ES modules, a default-exported `Extension` subclass.
    Esm,
}

impl Format {
    /// The format a shell of this major version loads; None for shells older than 43, which
    /// lsm does not support.
    pub fn for_shell(major: u32) -> Option<Self> {
        match major {
            0..=42 => None,
            43 | 44 => Some(Self::Legacy),
            _ => Some(Self::Esm),
        }
    }
}

/// The extension's `extension.js` in this format.
pub fn extension_js(format: Format) -> String {
    let (head, tail) = match format {
        Format::Legacy => (LEGACY_HEAD, LEGACY_TAIL),
        Format::Esm => (ESM_HEAD, ESM_TAIL),
    };
    format!("{head}\n{SERVICE}{tail}")
}

/// The extension's `metadata.json` in this format (`shell_major` is always declared, so a newer
/// shell than we knew of still loads it).
pub fn metadata_json(format: Format, shell_major: u32) -> String {
    let mut versions: Vec<u32> = match format {
        Format::Legacy => LEGACY_VERSIONS.to_vec(),
        Format::Esm => (ESM_FIRST..=ESM_LAST).collect(),
    };
    if !versions.contains(&shell_major) && Format::for_shell(shell_major) == Some(format) {
        versions.push(shell_major);
    }
    let versions: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
    serde_json::json!({
        "uuid": UUID,
        "name": "lsm window list",
        "description": "Lets lsm (local-shell-mcp) see where windows are and raise them on Wayland: exports the \
            top-level windows' titles, process ids and frame and buffer rectangles, and Activate(id), on the \
            session bus at org.gnome.Shell /dev/lsm/Windows (interface dev.lsm.Windows).",
        "shell-version": versions,
        "url": "https://github.com/local-shell-mcp/lsm",
        "version": 1,
    })
    .to_string()
}

/// The major version in `gnome-shell --version` output ("GNOME Shell 43.9").
pub fn parse_shell_version(text: &str) -> Option<u32> {
    let v = text
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
    v.split('.').next()?.parse().ok()
}

/// `enabled-extensions` with `uuid` added, from gsettings' GVariant text (`@as []` or
/// `['a', 'b']`); None when the text is not a string list we understand.
pub fn with_enabled(current: &str, uuid: &str) -> Option<String> {
    let mut list = parse_string_list(current)?;
    if !list.iter().any(|u| u == uuid) {
        list.push(uuid.to_string());
    }
    Some(format_string_list(&list))
}

/// `enabled-extensions` without `uuid`.
pub fn without_enabled(current: &str, uuid: &str) -> Option<String> {
    let mut list = parse_string_list(current)?;
    list.retain(|u| u != uuid);
    Some(format_string_list(&list))
}

fn parse_string_list(text: &str) -> Option<Vec<String>> {
    let t = text.trim();
    let t = t.strip_prefix("@as").map(str::trim).unwrap_or(t);
    let inner = t.strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|item| {
            let item = item.trim();
            let q = item.chars().next().filter(|c| *c == '\'' || *c == '"')?;
            let body = item.strip_prefix(q)?.strip_suffix(q)?;
            (!body.contains(['\'', '"', '\\'])).then(|| body.to_string())
        })
        .collect()
}

fn format_string_list(list: &[String]) -> String {
    let items: Vec<String> = list.iter().map(|u| format!("'{u}'")).collect();
    format!("[{}]", items.join(", "))
}

/// What `lsm setup gnome` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct SetupOptions {
    /// The shell's major version, when not read from `gnome-shell --version`.
    pub shell_version: Option<u32>,
    /// Where user extensions live [default: $XDG_DATA_HOME/gnome-shell/extensions].
    pub extensions_dir: Option<PathBuf>,
    /// Remove the extension instead of installing it.
    pub remove: bool,
    /// Install even outside a GNOME Wayland session (for a later one).
    pub force: bool,
}

/// Whether this is the session the extension is for: GNOME Shell on Wayland, as the session's
/// `XDG_CURRENT_DESKTOP` and `XDG_SESSION_TYPE` say. Elsewhere, what applies there instead.
pub fn check_session(desktop: Option<&str>, session_type: Option<&str>) -> Result<(), String> {
    let nothing = "nothing was installed (--force installs it anyway, for a later GNOME Wayland session)";
    let desktop = desktop.map(str::trim).filter(|d| !d.is_empty());
    let Some(desktop) = desktop else {
        return Err(format!(
            "no desktop session here (XDG_CURRENT_DESKTOP is not set, e.g. over ssh): run `lsm setup \
             gnome` in a terminal of the GNOME Wayland session; {nothing}"
        ));
    };
    let gnome = desktop.split(':').any(|d| d.eq_ignore_ascii_case("GNOME"));
    if !gnome {
        let instead = if desktop.split(':').any(|d| d.eq_ignore_ascii_case("KDE")) {
            " On KDE Plasma lsm needs no set-up (it asks KWin through scripts)."
        } else {
            " On X11 desktops lsm needs no set-up."
        };
        return Err(format!(
            "this is {desktop}, not GNOME (XDG_CURRENT_DESKTOP={desktop}): the extension is for GNOME \
             Shell on Wayland.{instead} {nothing}"
        ));
    }
    match session_type.map(str::trim) {
        Some(t) if t.eq_ignore_ascii_case("wayland") => Ok(()),
        Some(t) if t.eq_ignore_ascii_case("x11") => Err(format!(
            "this GNOME session runs on X11 (XDG_SESSION_TYPE=x11): lsm reads windows from X11 there and \
             needs no extension; {nothing}"
        )),
        other => Err(format!(
            "this GNOME session is not a Wayland one (XDG_SESSION_TYPE={}): the extension is for GNOME \
             Shell on Wayland; {nothing}",
            other.filter(|t| !t.is_empty()).unwrap_or("unset")
        )),
    }
}

fn default_extensions_dir() -> Result<PathBuf, String> {
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .ok_or("neither XDG_DATA_HOME nor HOME is set")?;
            Path::new(&home).join(".local/share")
        }
    };
    Ok(data.join("gnome-shell/extensions"))
}

/// Runs a settings or shell command for its output, bounded to 10 s (a stuck dconf or D-Bus
/// must not hang the set-up).
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    run_within(program, args, std::time::Duration::from_secs(10))
}

fn run_within(program: &str, args: &[&str], limit: std::time::Duration) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    let deadline = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} {} did not finish within {} s",
                    args.join(" "),
                    limit.as_secs_f32()
                ));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => return Err(format!("{program}: {e}")),
        }
    }
    let out = child.wait_with_output().map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{program} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

const SCHEMA: &str = "org.gnome.shell";

/// Where the extension is installed and whether GNOME's settings enable it (`lsm doctor`).
#[derive(Debug, Clone)]
pub struct InstallState {
    /// The directory holding it (the user's, else the system's), None when not installed.
    pub installed: Option<PathBuf>,
    /// Listed in `enabled-extensions` with user extensions allowed.
    pub enabled: bool,
}

/// Reads the install state, each settings read bounded to 2 s.
pub fn install_state() -> Result<InstallState, String> {
    let limit = std::time::Duration::from_secs(2);
    let installed = [
        default_extensions_dir().ok(),
        Some(PathBuf::from("/usr/share/gnome-shell/extensions")),
    ]
    .into_iter()
    .flatten()
    .map(|d| d.join(UUID))
    .find(|d| d.join("metadata.json").exists());
    let list = run_within("gsettings", &["get", SCHEMA, "enabled-extensions"], limit)
        .map_err(|e| format!("cannot read the enabled extensions: {e}"))?;
    let listed = parse_string_list(&list).is_some_and(|l| l.iter().any(|u| u == UUID));
    let user_disabled =
        run_within("gsettings", &["get", SCHEMA, "disable-user-extensions"], limit).as_deref() == Ok("true");
    Ok(InstallState {
        installed,
        enabled: listed && !user_disabled,
    })
}

/// Installs (or removes) the extension; returns the lines to print: what was done and what the
/// user must do next.
pub fn setup_gnome(opts: &SetupOptions) -> Result<Vec<String>, String> {
    if !opts.remove && !opts.force {
        let var = |k: &str| std::env::var(k).ok();
        check_session(
            var("XDG_CURRENT_DESKTOP").as_deref(),
            var("XDG_SESSION_TYPE").as_deref(),
        )?;
    }
    let dir = match &opts.extensions_dir {
        Some(d) => d.clone(),
        None => default_extensions_dir()?,
    };
    let target = dir.join(UUID);
    let mut said = Vec::new();
    let enabled = run("gsettings", &["get", SCHEMA, "enabled-extensions"]);
    if opts.remove {
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(|e| format!("removing {}: {e}", target.display()))?;
            said.push(format!("removed {}", target.display()));
        }
        if let Some(list) = enabled.ok().and_then(|c| without_enabled(&c, UUID)) {
            run("gsettings", &["set", SCHEMA, "enabled-extensions", &list])?;
            said.push(format!("removed {UUID} from {SCHEMA} enabled-extensions"));
        }
        said.push("the running shell keeps it until you log out and in".into());
        return Ok(said);
    }
    let major = match opts.shell_version {
        Some(v) => v,
        None => {
            let text = run("gnome-shell", &["--version"])
                .map_err(|e| format!("cannot tell the GNOME Shell version ({e}); pass --shell-version N"))?;
            parse_shell_version(&text).ok_or_else(|| format!("cannot read a version in {text:?}"))?
        }
    };
    let format = Format::for_shell(major)
        .ok_or_else(|| format!("GNOME Shell {major} is too old: lsm's extension needs GNOME 43 or later"))?;
    std::fs::create_dir_all(&target).map_err(|e| format!("creating {}: {e}", target.display()))?;
    for (name, text) in [
        ("extension.js", extension_js(format)),
        ("metadata.json", metadata_json(format, major)),
    ] {
        let path = target.join(name);
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    said.push(format!(
        "installed the {} extension {UUID} for GNOME Shell {major} in {}",
        match format {
            Format::Legacy => "legacy-format",
            Format::Esm => "ESM-format",
        },
        target.display()
    ));
    let current = enabled.map_err(|e| format!("cannot read the enabled extensions: {e}"))?;
    let list = with_enabled(&current, UUID)
        .ok_or_else(|| format!("cannot understand enabled-extensions {current:?}"))?;
    run("gsettings", &["set", SCHEMA, "enabled-extensions", &list])?;
    if run("gsettings", &["get", SCHEMA, "disable-user-extensions"]).as_deref() == Ok("true") {
        run("gsettings", &["set", SCHEMA, "disable-user-extensions", "false"])?;
        said.push("user extensions were disabled: enabled them".into());
    }
    said.push(format!("enabled {UUID} in {SCHEMA} enabled-extensions"));
    said.push(
        "next: log out and log in again once. On Wayland a running GNOME Shell loads new extensions only \
         when it starts; after that, lsm sees your windows (gui_list shows backend linux-wayland-gnome)"
            .into(),
    );
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_version_picks_the_format() {
        assert_eq!(Format::for_shell(42), None);
        assert_eq!(Format::for_shell(43), Some(Format::Legacy));
        assert_eq!(Format::for_shell(44), Some(Format::Legacy));
        assert_eq!(Format::for_shell(45), Some(Format::Esm));
        assert_eq!(Format::for_shell(50), Some(Format::Esm));
        assert_eq!(parse_shell_version("GNOME Shell 43.9\n"), Some(43));
        assert_eq!(parse_shell_version("GNOME Shell 46.alpha"), Some(46));
        assert_eq!(parse_shell_version("nothing"), None);
    }

    #[test]
    fn each_format_has_its_own_module_shape() {
        let legacy = extension_js(Format::Legacy);
        assert!(legacy.contains("imports.gi") && legacy.contains("function init()"));
        assert!(!legacy.contains("export default") && !legacy.contains("gi://"));
        let esm = extension_js(Format::Esm);
        assert!(esm.contains("import Meta from 'gi://Meta'") && esm.contains("export default class"));
        assert!(!esm.contains("imports.gi"));
        for js in [&legacy, &esm] {
            assert!(js.contains("dev.lsm.Windows") && js.contains("/dev/lsm/Windows"));
        }
    }

    #[test]
    fn metadata_declares_the_running_shell() {
        let m: serde_json::Value = serde_json::from_str(&metadata_json(Format::Esm, 52)).unwrap();
        assert_eq!(m["uuid"], UUID);
        let v: Vec<&str> = m["shell-version"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert!(v.contains(&"45") && v.contains(&"52") && !v.contains(&"44"));
        let m: serde_json::Value = serde_json::from_str(&metadata_json(Format::Legacy, 43)).unwrap();
        assert_eq!(m["shell-version"], serde_json::json!(["43", "44"]));
    }

    #[test]
    fn only_a_gnome_wayland_session_gets_the_extension() {
        assert_eq!(check_session(Some("GNOME"), Some("wayland")), Ok(()));
        assert_eq!(check_session(Some("ubuntu:GNOME"), Some("wayland")), Ok(()));
        let refused = |d: Option<&str>, t: Option<&str>| check_session(d, t).expect_err("refused");
        assert!(refused(Some("GNOME"), Some("x11")).contains("runs on X11"));
        assert!(refused(Some("KDE"), Some("wayland")).contains("not GNOME"));
        assert!(refused(Some("KDE"), Some("wayland")).contains("KWin"));
        assert!(refused(Some("XFCE"), Some("x11")).contains("XDG_CURRENT_DESKTOP=XFCE"));
        assert!(refused(None, Some("tty")).contains("XDG_CURRENT_DESKTOP is not set"));
        assert!(refused(Some("GNOME"), None).contains("XDG_SESSION_TYPE=unset"));
        assert!(refused(Some("GNOME"), Some("x11")).contains("--force"));
    }

    #[test]
    fn enabled_extensions_are_edited_as_gsettings_prints_them() {
        assert_eq!(
            with_enabled("@as []", UUID).as_deref(),
            Some("['lsm-windows@lsm']")
        );
        assert_eq!(
            with_enabled("['a@b', 'c@d']", UUID).as_deref(),
            Some("['a@b', 'c@d', 'lsm-windows@lsm']")
        );
        assert_eq!(
            with_enabled("['lsm-windows@lsm']", UUID).as_deref(),
            Some("['lsm-windows@lsm']")
        );
        assert_eq!(
            without_enabled("['a@b', 'lsm-windows@lsm']", UUID).as_deref(),
            Some("['a@b']")
        );
        assert_eq!(with_enabled("nonsense", UUID), None);
        assert_eq!(with_enabled("['it\\'s']", UUID), None);
    }
}
