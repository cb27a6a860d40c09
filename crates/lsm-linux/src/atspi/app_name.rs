//! The application's proper name for `gui_list` ("Firefox", "LibreOffice Writer", "Mousepad"),
//! one per process, rather than a window's WM_CLASS instance ("Navigator") or the process's
//! file name ("soffice").
//!
//! Sources, best first: the AT-SPI application name when it is a proper name (Gecko says
//! "Firefox"; GTK says its program name, "thunar", which is not); the `Name` of the
//! application's `.desktop` file, found by `StartupWMClass`, by file name or by the program
//! its `Exec` line starts, against the window's WM_CLASS and the process name; the WM_CLASS
//! class; the WM_CLASS instance; the process name. The best name seen for a process is kept
//! for all its windows; two `.desktop` names of one process ("LibreOffice Writer",
//! "LibreOffice Start Center") give their common words ("LibreOffice").

use crate::window::WindowRecord;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How good a name's source is; a process keeps its best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Process,
    Instance,
    Class,
    Desktop,
    Accessible,
}

#[derive(Debug, Clone)]
struct Known {
    /// The process name when it was named: a reused pid is named again.
    comm: String,
    name: String,
    rank: Rank,
}

/// `.desktop` names by the keys a window can be matched with (all lower case).
#[derive(Debug, Default)]
struct DesktopIndex {
    by_wm_class: HashMap<String, String>,
    by_id: HashMap<String, String>,
    /// Entries by the program they start: (name, whether the program runs without options).
    by_exec: HashMap<String, Vec<(String, bool)>>,
}

/// The `Name`, `StartupWMClass` and program of a `.desktop` file's main group.
fn parse_desktop(text: &str) -> (Option<String>, Option<String>, Option<(String, bool)>) {
    let (mut name, mut class, mut exec) = (None, None, None);
    let mut in_entry = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
            continue;
        }
        if !in_entry {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        match k.trim() {
            "Name" if !v.is_empty() => name = Some(unescape_value(v)),
            "StartupWMClass" if !v.is_empty() => class = Some(v.to_lowercase()),
            "Exec" => exec = exec_program(v),
            _ => {}
        }
    }
    (name, class, exec)
}

/// The file name of the program an `Exec` line runs (`env VAR=x` prefixes skipped), and
/// whether it runs without options (only field codes like `%U` follow): the program's main
/// entry rather than one of its modes (`mousepad --preferences`).
fn exec_program(exec: &str) -> Option<(String, bool)> {
    let words = exec_words(exec)?;
    let mut words = words.iter().map(String::as_str);
    let mut first = words.next()?;
    if first == "env" {
        first = words.find(|w| !w.contains('='))?;
    }
    let base = Path::new(first).file_name()?.to_str()?;
    if base.is_empty() || base.starts_with('%') {
        return None;
    }
    let plain = words.all(|w| w.starts_with('%'));
    Some((base.to_lowercase(), plain))
}

/// An `Exec` value's arguments as the Desktop Entry spec splits them: the value's escapes
/// (`\s`, `\\`…) undone, then words apart at spaces, a word in double quotes kept whole with
/// `\"`, `` \` ``, `\$` and `\\` inside it. None for an unclosed quote.
fn exec_words(exec: &str) -> Option<Vec<String>> {
    let value = unescape_value(exec);
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// A string value of a `.desktop` file with its escapes undone (`\s` space, `\n`, `\t`, `\r`,
/// `\\`); any other backslash stays for the `Exec` quoting to read.
fn unescape_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
}

fn application_dirs() -> Vec<PathBuf> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut dirs = Vec::new();
    match var("XDG_DATA_HOME") {
        Some(d) => dirs.push(PathBuf::from(d)),
        None => {
            if let Some(h) = var("HOME") {
                dirs.push(Path::new(&h).join(".local/share"));
            }
        }
    }
    let system = var("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    dirs.extend(system.split(':').filter(|d| !d.is_empty()).map(PathBuf::from));
    dirs.into_iter().map(|d| d.join("applications")).collect()
}

impl DesktopIndex {
    fn load() -> Self {
        let mut index = Self::default();
        for dir in application_dirs() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().and_then(|e| e.to_str()) != Some("desktop") {
                    continue;
                }
                // Small files; a huge one is not a desktop entry.
                if entry.metadata().map(|m| m.len() > 256 * 1024).unwrap_or(true) {
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let id = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("")
                    .to_lowercase();
                index.add(&id, &text);
            }
        }
        index
    }

    /// Earlier directories win (the user's own entries over the system's).
    fn add(&mut self, id: &str, text: &str) {
        let (Some(name), class, exec) = parse_desktop(text) else {
            return;
        };
        if let Some(c) = class {
            self.by_wm_class.entry(c).or_insert_with(|| name.clone());
        }
        if !id.is_empty() {
            self.by_id.entry(id.to_string()).or_insert_with(|| name.clone());
        }
        if let Some((program, plain)) = exec {
            self.by_exec.entry(program).or_default().push((name, plain));
        }
    }

    fn lookup(&self, keys: &[&str]) -> Option<String> {
        let keys: Vec<String> = keys
            .iter()
            .filter(|k| !k.is_empty())
            .map(|k| k.to_lowercase())
            .collect();
        keys.iter()
            .find_map(|k| self.by_wm_class.get(k))
            .or_else(|| keys.iter().find_map(|k| self.by_id.get(k)))
            .cloned()
            .or_else(|| {
                keys.iter()
                    .find_map(|k| self.by_exec.get(k).and_then(|e| one_entry(e)))
            })
    }
}

/// The one name among the entries that start a program: its only entry without options, else
/// its only name; `None` when several entries would name it differently.
fn one_entry(entries: &[(String, bool)]) -> Option<String> {
    let distinct = |plain_only: bool| {
        let mut names: Vec<&String> = entries
            .iter()
            .filter(|(_, plain)| *plain || !plain_only)
            .map(|(n, _)| n)
            .collect();
        names.sort();
        names.dedup();
        names
    };
    match (distinct(true).as_slice(), distinct(false).as_slice()) {
        ([one], _) | ([], [one]) => Some((*one).clone()),
        _ => None,
    }
}

/// Whether an AT-SPI application name is a name for people, not a program's file name.
fn is_proper(name: &str, w: &WindowRecord, comm: &str) -> bool {
    let n = name.trim();
    !n.is_empty()
        && n != w.instance
        && n != comm
        && !n.contains(['/', '.'])
        && n.chars().any(|c| c.is_uppercase() || c == ' ')
}

/// The words two names start with, e.g. "LibreOffice" for "LibreOffice Writer" and
/// "LibreOffice Start Center"; empty when the first words differ.
fn common_words(a: &str, b: &str) -> String {
    a.split_whitespace()
        .zip(b.split_whitespace())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `s` with its first letter in upper case.
fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Names processes; one per backend.
#[derive(Default)]
pub struct AppNames {
    desktop: OnceLock<DesktopIndex>,
    by_pid: Mutex<HashMap<u32, Known>>,
    /// AT-SPI application names by pid, from the last listing of applications.
    accessible: Mutex<HashMap<u32, String>>,
}

impl AppNames {
    /// Records the AT-SPI applications' names (pid, name) seen in the latest listing.
    pub fn set_accessible(&self, apps: impl IntoIterator<Item = (u32, String)>) {
        let mut map = self.accessible.lock().unwrap_or_else(|p| p.into_inner());
        map.clear();
        map.extend(apps);
    }

    /// The proper name of the application that owns `w`, the same for all its windows.
    pub fn name(&self, w: &WindowRecord) -> String {
        let comm = w
            .pid
            .and_then(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let accessible = w.pid.and_then(|p| {
            self.accessible
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&p)
                .cloned()
        });
        let desktop = || {
            self.desktop
                .get_or_init(DesktopIndex::load)
                .lookup(&[&w.class, &w.instance, &comm])
        };
        let (name, rank) = match accessible.filter(|a| is_proper(a, w, &comm)) {
            Some(a) => (a.trim().to_string(), Rank::Accessible),
            None => match desktop() {
                Some(d) => (d, Rank::Desktop),
                // GTK and Qt derive the class from the program name by capitalising it
                // ("Lsm_testapp.py"): then the program's own spelling is the better one.
                None if !w.class.is_empty() && w.class != capitalised(&w.instance) => {
                    (w.class.clone(), Rank::Class)
                }
                None if !w.instance.is_empty() => (w.instance.clone(), Rank::Instance),
                None => (comm.clone(), Rank::Process),
            },
        };
        let Some(pid) = w.pid else {
            return name;
        };
        let mut known = self.by_pid.lock().unwrap_or_else(|p| p.into_inner());
        let entry = known.entry(pid).or_insert_with(|| Known {
            comm: comm.clone(),
            name: name.clone(),
            rank,
        });
        if entry.comm != comm || rank > entry.rank {
            *entry = Known { comm, name, rank };
        } else if rank == entry.rank && rank == Rank::Desktop && entry.name != name {
            let common = common_words(&entry.name, &name);
            if !common.is_empty() {
                entry.name = common;
            }
        }
        entry.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::Rect;

    fn win(instance: &str, class: &str, pid: Option<u32>) -> WindowRecord {
        WindowRecord {
            id: 1,
            title: String::new(),
            instance: instance.into(),
            class: class.into(),
            pid,
            bounds: Rect::new(0, 0, 10, 10),
            gtk_frame_extents: None,
            focused: false,
            minimized: false,
            transient_for: None,
            modal: false,
        }
    }

    fn index() -> DesktopIndex {
        let mut i = DesktopIndex::default();
        let entry = |name: &str, class: &str, exec: &str| {
            format!(
                "[Desktop Entry]\nName={name}\nName[de]=Anders\nExec={exec}\n{class}\n[Desktop Action new]\nName=New Window\n"
            )
        };
        i.add(
            "firefox-esr",
            &entry(
                "Firefox ESR",
                "StartupWMClass=firefox-esr",
                "/usr/lib/firefox-esr/firefox-esr %u",
            ),
        );
        i.add(
            "libreoffice-writer",
            &entry(
                "LibreOffice Writer",
                "StartupWMClass=libreoffice-writer",
                "libreoffice --writer %U",
            ),
        );
        i.add(
            "libreoffice-calc",
            &entry(
                "LibreOffice Calc",
                "StartupWMClass=libreoffice-calc",
                "libreoffice --calc %U",
            ),
        );
        i.add("thunar", &entry("Thunar File Manager", "", "thunar %F"));
        i.add(
            "org.gtk.widgetfactory4",
            &entry("Widget Factory", "", "gtk4-widget-factory"),
        );
        i.add("org.xfce.mousepad", &entry("Mousepad", "", "mousepad %U"));
        i.add(
            "org.xfce.mousepad-settings",
            &entry("Text Editor Settings", "", "mousepad --preferences"),
        );
        i.add(
            "debian-xterm",
            &entry("XTerm", "StartupWMClass=XTerm", "env LANG=C xterm"),
        );
        i
    }

    #[test]
    fn desktop_files_are_found_by_class_id_or_program() {
        let i = index();
        assert_eq!(
            i.lookup(&["firefox-esr", "Navigator"]).as_deref(),
            Some("Firefox ESR")
        );
        assert_eq!(
            i.lookup(&["Thunar", "thunar"]).as_deref(),
            Some("Thunar File Manager")
        );
        assert_eq!(
            i.lookup(&["gtk4-widget-factory", "gtk4-widget-factory"])
                .as_deref(),
            Some("Widget Factory")
        );
        assert_eq!(i.lookup(&["XTerm", "xterm"]).as_deref(), Some("XTerm"));
        // The program's main entry (no options) names it, not its settings entry.
        assert_eq!(i.lookup(&["Mousepad", "mousepad"]).as_deref(), Some("Mousepad"));
        // Two entries start `libreoffice` under different names: the program alone says nothing.
        assert_eq!(i.lookup(&["Soffice", "soffice", "libreoffice"]), None);
        assert_eq!(
            i.lookup(&["libreoffice-writer", "libreoffice"]).as_deref(),
            Some("LibreOffice Writer")
        );
    }

    #[test]
    fn one_name_per_process_the_best_seen() {
        let names = AppNames::default();
        let _ = names.desktop.set(index());
        // A pid that is not running: no process name to read, which changes nothing here.
        let pid = Some(u32::MAX - 7);
        // LibreOffice: a dialog (WM_CLASS Soffice) and the Writer window, one process.
        assert_eq!(names.name(&win("soffice", "Soffice", pid)), "soffice");
        assert_eq!(
            names.name(&win("libreoffice", "libreoffice-writer", pid)),
            "LibreOffice Writer"
        );
        assert_eq!(names.name(&win("soffice", "Soffice", pid)), "LibreOffice Writer");
        assert_eq!(
            names.name(&win("libreoffice", "libreoffice-calc", pid)),
            "LibreOffice"
        );
        assert_eq!(names.name(&win("soffice", "Soffice", pid)), "LibreOffice");
        // Firefox: its AT-SPI name beats the window's instance and the desktop file.
        let ff = Some(u32::MAX - 8);
        assert_eq!(names.name(&win("Navigator", "firefox-esr", ff)), "Firefox ESR");
        names.set_accessible([(u32::MAX - 8, "Firefox".to_string())]);
        assert_eq!(names.name(&win("Navigator", "firefox-esr", ff)), "Firefox");
    }

    #[test]
    fn program_names_are_not_proper_names() {
        let w = win("thunar", "Thunar", Some(1));
        assert!(!is_proper("thunar", &w, "thunar"));
        assert!(!is_proper("soffice", &w, "soffice.bin"));
        assert!(!is_proper("lsm_testapp.py", &w, "python3"));
        assert!(is_proper("Firefox", &w, "firefox-esr"));
        assert!(is_proper("Qt Designer", &w, "designer"));
        assert_eq!(
            common_words("LibreOffice Writer", "LibreOffice Calc"),
            "LibreOffice"
        );
        assert_eq!(common_words("Firefox", "Thunar"), "");
        // A class that is only the capitalised program name: the program's spelling wins.
        let names = AppNames::default();
        let _ = names.desktop.set(DesktopIndex::default());
        assert_eq!(
            names.name(&win("lsm_testapp.py", "Lsm_testapp.py", None)),
            "lsm_testapp.py"
        );
        assert_eq!(names.name(&win("soffice", "Soffice", None)), "soffice");
        assert_eq!(names.name(&win("Navigator", "firefox-esr", None)), "firefox-esr");
    }

    #[test]
    fn exec_lines_give_the_program() {
        assert_eq!(exec_program("/usr/bin/foo --x %U"), Some(("foo".into(), false)));
        assert_eq!(exec_program("env A=1 B=2 bar %F"), Some(("bar".into(), true)));
        assert_eq!(exec_program(""), None);
        // Quoted programs and arguments with spaces (the spec's quoting), and the value's own
        // escapes.
        assert_eq!(
            exec_program(r#""/opt/My App/bin/my-app" %U"#),
            Some(("my-app".into(), true))
        );
        // `\s` is a space before the words are split: only quotes keep it in one word.
        assert_eq!(
            exec_program(r#""/opt/My\sApp/bin/tool" --x"#),
            Some(("tool".into(), false))
        );
        assert_eq!(exec_words(r"a\sb"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            exec_words(r#"sh -c "echo \"hi \$HOME\"" %f"#),
            Some(vec![
                "sh".into(),
                "-c".into(),
                r#"echo "hi $HOME""#.into(),
                "%f".into()
            ])
        );
        // Four backslashes in the file are one in the argument (the spec's example).
        assert_eq!(exec_words(r#""a\\\\b""#), Some(vec![r"a\b".into()]));
        assert_eq!(exec_words(r#""unclosed %U"#), None);
    }
}
