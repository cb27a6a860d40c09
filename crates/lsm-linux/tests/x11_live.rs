//! Live checks of the X11 module against a real display with gtk3-widget-factory and xterm
//! (the shared test bed's `X11BED_APPS="gtk3-widget-factory xterm"`, xterm started with a
//! UTF-8 locale). Ignored by default:
//! `DISPLAY=:91 cargo test -p lsm-linux --test x11_live -- --ignored --nocapture`
//! The GTK entry and slider checks also need the bed's AT-SPI environment (eval its output).
//! The tests share one desktop, so they take a lock and run one at a time.

use lsm_core::{KeyCombo, MouseButton, Point, Rect};
use lsm_linux::window::WindowRecord;
use lsm_linux::x11::X11;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

static DESKTOP: Mutex<()> = Mutex::new(());

/// A connection plus exclusive use of the desktop for one test.
struct Live {
    x: X11,
    _desktop: MutexGuard<'static, ()>,
}

impl std::ops::Deref for Live {
    type Target = X11;
    fn deref(&self) -> &X11 {
        &self.x
    }
}

fn connect() -> Option<Live> {
    if std::env::var("DISPLAY").map_or(true, |d| d.is_empty()) {
        eprintln!("DISPLAY not set: skipping");
        return None;
    }
    let guard = DESKTOP.lock().unwrap_or_else(|p| p.into_inner());
    Some(Live {
        x: X11::connect(None).expect("connect"),
        _desktop: guard,
    })
}

fn find(x: &X11, instance: &str) -> WindowRecord {
    x.list_windows()
        .expect("list")
        .into_iter()
        .find(|w| w.instance == instance)
        .unwrap_or_else(|| panic!("no {instance} window"))
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The client area as xwininfo reports it (independent ground truth): xwininfo gives the
/// outer corner, the client area starts inside the border.
fn xwininfo(id: u32) -> Rect {
    let out = Command::new("xwininfo")
        .arg("-id")
        .arg(id.to_string())
        .output()
        .expect("xwininfo");
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |key: &str| -> i32 {
        text.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(key)
                    .map(|v| v.trim().parse().expect("number"))
            })
            .unwrap_or_else(|| panic!("{key} missing in {text}"))
    };
    let bw = get("Border width:");
    Rect::new(
        get("Absolute upper-left X:") + bw,
        get("Absolute upper-left Y:") + bw,
        get("Width:"),
        get("Height:"),
    )
}

fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[ignore]
fn lists_windows_with_pid_title_and_bounds() {
    let Some(x) = connect() else { return };
    let t = Instant::now();
    let all = x.list_windows().expect("list");
    eprintln!("list_windows: {} windows in {:?}", all.len(), t.elapsed());
    for w in &all {
        eprintln!("  {w:?}");
    }
    let xterm = find(&x, "xterm");
    assert_eq!(xterm.class, "XTerm");
    assert_eq!(comm(xterm.pid.expect("xterm pid")), "xterm");
    assert!(!xterm.title.is_empty());
    let gtk = find(&x, "gtk3-widget-factory");
    assert_eq!(gtk.title, "gtk3-widget-factory");
    assert!(comm(gtk.pid.expect("gtk pid")).starts_with("gtk3-widget"));
    for w in [&xterm, &gtk] {
        assert_eq!(w.bounds, xwininfo(w.id), "bounds of {}", w.instance);
        assert_eq!(x.window(w.id).expect("window").as_ref(), Some(w));
    }
    assert_eq!(
        all.iter().filter(|w| w.focused).count(),
        1,
        "exactly one focused window"
    );
    assert_eq!(x.window(0x7fff_fff0).expect("window"), None);
}

#[test]
#[ignore]
fn captures_the_gtk_window() {
    let Some(x) = connect() else { return };
    let gtk = find(&x, "gtk3-widget-factory");
    let mut t = Instant::now();
    let mut cap = x.capture(gtk.id).expect("capture");
    // The first capture sets up shared memory; later ones show the steady cost.
    for _ in 0..3 {
        eprintln!("capture in {:?}", t.elapsed());
        t = Instant::now();
        cap = x.capture(gtk.id).expect("capture");
    }
    eprintln!(
        "capture {}x{} in {:?}, occluded={}, compositor={}",
        cap.image.width,
        cap.image.height,
        t.elapsed(),
        cap.occluded,
        x.compositor_running().expect("cm")
    );
    assert_eq!(
        (cap.image.width as i32, cap.image.height as i32),
        (gtk.bounds.width, gtk.bounds.height)
    );
    let first = &cap.image.data[..4];
    assert!(
        cap.image.data.chunks_exact(4).any(|p| p != first),
        "image is uniform"
    );
    if x.compositor_running().expect("cm") {
        assert!(!cap.occluded);
    }
    if let Ok(path) = std::env::var("X11LIVE_PNG") {
        std::fs::write(path, cap.image.to_png().expect("png")).expect("write png");
    }
}

#[test]
#[ignore]
fn types_unicode_into_xterm() {
    let Some(x) = connect() else { return };
    let xterm = find(&x, "xterm");
    let _ = std::fs::remove_file("/tmp/x11live.txt");
    assert!(
        x.activate(xterm.id).expect("activate"),
        "xterm focus not confirmed"
    );
    assert!(x.window(xterm.id).expect("w").expect("some").focused);
    let t = Instant::now();
    x.type_text("echo lsm-ok-é-한글 > /tmp/x11live.txt")
        .expect("type");
    eprintln!("type_text in {:?}", t.elapsed());
    x.key_combo(&KeyCombo::parse("Return", 8).expect("combo"))
        .expect("key");
    let got = wait_for(Duration::from_secs(3), || {
        std::fs::read_to_string("/tmp/x11live.txt")
            .ok()
            .filter(|s| s.ends_with('\n'))
    });
    assert_eq!(got.as_deref(), Some("lsm-ok-é-한글\n"));
}

fn xdotool(args: &[&str]) {
    let ok = Command::new("xdotool").args(args).status().expect("xdotool");
    assert!(ok.success(), "xdotool {args:?}");
}

/// Without a compositor a capture is reported occluded exactly when something overlaps it
/// (or it reaches off screen); with one, never.
#[test]
#[ignore]
fn capture_reports_occlusion() {
    let Some(x) = connect() else { return };
    if !x.ewmh_wm().expect("wm check") {
        eprintln!("needs a window manager: skipping");
        return;
    }
    let xterm = find(&x, "xterm");
    let id = xterm.id.to_string();
    let home = (xterm.bounds.x.to_string(), xterm.bounds.y.to_string());
    xdotool(&["windowmove", "--sync", &id, "100", "100"]);
    assert!(x.activate(xterm.id).expect("activate"));
    let cm = x.compositor_running().expect("cm");
    let on_top = x.capture(xterm.id).expect("capture xterm");
    let below = x
        .capture(find(&x, "gtk3-widget-factory").id)
        .expect("capture gtk");
    xdotool(&["windowmove", &id, &home.0, &home.1]);
    assert!(!on_top.occluded, "topmost, fully visible xterm reported occluded");
    assert_eq!(below.occluded, !cm, "GTK window under xterm");
}

#[test]
#[ignore]
fn click_focuses_the_window_under_the_pointer() {
    let Some(x) = connect() else { return };
    if !x.ewmh_wm().expect("wm check") {
        eprintln!("needs a window manager: skipping");
        return;
    }
    let gtk = find(&x, "gtk3-widget-factory");
    let xterm = find(&x, "xterm");
    // The bed stacks xterm over the bottom middle of the GTK window: activating xterm raises
    // it, and the GTK window's bottom-left corner stays uncovered.
    assert!(x.activate(xterm.id).expect("activate xterm"));
    assert!(!x.has_focus(gtk.id).expect("focus"));
    // Inside the visible frame: skip the client-side shadow when GTK draws one.
    let [left, _, _, bottom] = gtk.gtk_frame_extents.unwrap_or([0; 4]);
    let target = Point::new(
        gtk.bounds.x + left as i32 + 5,
        (gtk.bounds.y + gtk.bounds.height - bottom as i32 - 5)
            .min(x.screen_rect().expect("screen").height - 5),
    );
    assert!(!xterm.bounds.contains(target));
    x.click(target, MouseButton::Left, 1).expect("click");
    let out = Command::new("xdotool")
        .arg("getmouselocation")
        .output()
        .expect("xdotool");
    let loc = String::from_utf8_lossy(&out.stdout);
    assert!(
        loc.starts_with(&format!("x:{} y:{} ", target.x, target.y)),
        "pointer at {loc}"
    );
    let focused = wait_for(Duration::from_secs(1), || x.has_focus(gtk.id).ok().filter(|&f| f));
    assert!(focused.is_some(), "click in the GTK window did not focus it");
    assert!(x.click(Point::new(-1, 5), MouseButton::Left, 1).is_err());
}

/// Finds the first showing single-line editable text field (argv "entry") or enabled slider
/// (argv "slider") of gtk3-widget-factory through AT-SPI (python3-pyatspi) and prints
/// "x y w h|text" or "x y w h|value".
const PY_FIND: &str = r#"
import sys, pyatspi
S = pyatspi
def wanted(a, st):
    if not st.contains(S.STATE_SHOWING): return False
    if sys.argv[1] == 'entry':
        return a.getRole() == S.ROLE_TEXT and st.contains(S.STATE_EDITABLE) and st.contains(S.STATE_SINGLE_LINE)
    return a.getRole() == S.ROLE_SLIDER and st.contains(S.STATE_SENSITIVE) and st.contains(S.STATE_HORIZONTAL)
def walk(a, depth=0):
    if depth > 40: return None
    try:
        if wanted(a, a.getState()): return a
        for c in a:
            r = walk(c, depth + 1)
            if r: return r
    except Exception: pass
    return None
app = [a for a in S.Registry.getDesktop(0) if a and a.name == 'gtk3-widget-factory'][0]
e = walk(app)
ext = e.queryComponent().getExtents(S.DESKTOP_COORDS)
v = e.queryText().getText(0, -1) if sys.argv[1] == 'entry' else e.queryValue().currentValue
print(ext.x, ext.y, ext.width, ext.height, '|' + str(v), sep=' ')
"#;

fn atspi_find(kind: &str) -> (Rect, String) {
    let out = Command::new("timeout")
        .args(["20", "/usr/bin/python3", "-c", PY_FIND, kind])
        .output()
        .expect("python3");
    let s = String::from_utf8_lossy(&out.stdout)
        .trim_end_matches('\n')
        .to_string();
    let (geo, text) = s
        .split_once(" |")
        .unwrap_or_else(|| panic!("pyatspi: {s} {}", String::from_utf8_lossy(&out.stderr)));
    let n: Vec<i32> = geo.split(' ').map(|v| v.parse().expect("int")).collect();
    (Rect::new(n[0], n[1], n[2], n[3]), text.to_string())
}

fn entry_state() -> (Rect, String) {
    atspi_find("entry")
}

fn slider_state() -> (Rect, f64) {
    let (r, v) = atspi_find("slider");
    (r, v.parse().expect("slider value"))
}

fn have_atspi() -> bool {
    let ok = std::env::var("AT_SPI_BUS_ADDRESS").is_ok();
    if !ok {
        eprintln!("no AT-SPI bus: skipping");
    }
    ok
}

#[test]
#[ignore]
fn drag_and_scroll_move_a_gtk_slider() {
    let Some(x) = connect() else { return };
    if !have_atspi() {
        return;
    }
    let gtk = find(&x, "gtk3-widget-factory");
    assert!(x.activate(gtk.id).expect("activate gtk"));
    let (r, v0) = slider_state();
    let y = r.center().y;
    let (from, to) = (
        Point::new(r.x + r.width / 5, y),
        Point::new(r.x + r.width * 4 / 5, y),
    );
    x.drag(from, to, MouseButton::Left).expect("drag");
    let v1 = wait_for(Duration::from_secs(2), || {
        Some(slider_state().1).filter(|v| *v > 60.0)
    });
    eprintln!("slider {r:?}: {v0} -> drag -> {v1:?}");
    assert!(
        v1.is_some(),
        "drag did not move the slider to the right (value {})",
        slider_state().1
    );
    x.drag(to, from, MouseButton::Left).expect("drag back");
    let v2 = wait_for(Duration::from_secs(2), || {
        Some(slider_state().1).filter(|v| *v < 40.0)
    });
    assert!(v2.is_some(), "drag back did not move the slider");
    let v2 = v2.unwrap_or_default();
    x.scroll(r.center(), 0, -3).expect("scroll");
    let v3 = wait_for(Duration::from_secs(2), || {
        Some(slider_state().1).filter(|v| *v != v2)
    });
    eprintln!("slider {v2} -> scroll up 3 -> {v3:?}");
    assert!(v3.is_some(), "scrolling over the slider did not change it");
}

#[test]
#[ignore]
fn types_unicode_into_a_gtk_entry() {
    let Some(x) = connect() else { return };
    if !have_atspi() {
        return;
    }
    let gtk = find(&x, "gtk3-widget-factory");
    assert!(x.activate(gtk.id).expect("activate gtk"));
    let (rect, _) = entry_state();
    eprintln!("entry at {rect:?}");
    // Triple-click... simpler: click into it, select all, type over it.
    x.click(rect.center(), MouseButton::Left, 1).expect("click entry");
    x.key_combo(&KeyCombo::parse("ctrl+a", 8).expect("combo"))
        .expect("ctrl+a");
    let text = "Gtk ÄÖ é-한글 ✓ 😀 x";
    x.type_text(text).expect("type");
    let got = wait_for(Duration::from_secs(3), || {
        Some(entry_state().1).filter(|t| t == text)
    });
    assert_eq!(got.as_deref(), Some(text), "entry holds {:?}", entry_state().1);
    // A double click selects a word, even right after another click (GTK would otherwise
    // count the earlier click into the sequence): typing replaces only that word.
    x.click(rect.center(), MouseButton::Left, 1).expect("click entry");
    x.key_combo(&KeyCombo::parse("ctrl+a", 8).expect("combo"))
        .expect("ctrl+a");
    x.type_text("aaa bbb").expect("type");
    x.click(Point::new(rect.x + 20, rect.center().y), MouseButton::Left, 2)
        .expect("double click");
    x.type_text("Qt").expect("type");
    let got = wait_for(Duration::from_secs(3), || {
        Some(entry_state().1).filter(|t| t == "Qt bbb")
    });
    assert_eq!(
        got.as_deref(),
        Some("Qt bbb"),
        "entry holds {:?}",
        entry_state().1
    );
}

#[test]
fn connecting_to_a_missing_display_fails_fast() {
    let t = Instant::now();
    let err = X11::connect(Some(":987")).err().expect("no such display");
    assert_eq!(err.code, lsm_core::ErrorCode::GuiUnavailable);
    assert!(err.message.contains(":987"), "{}", err.message);
    assert!(t.elapsed() < Duration::from_secs(6));
}

#[test]
#[ignore]
fn minimized_window_is_listed_and_activate_restores_it() {
    let Some(x) = connect() else { return };
    if !x.ewmh_wm().expect("wm check") {
        eprintln!("needs a window manager: skipping");
        return;
    }
    let xterm = find(&x, "xterm");
    let ok = Command::new("xdotool")
        .args(["windowminimize", &xterm.id.to_string()])
        .status()
        .expect("xdotool");
    assert!(ok.success());
    let min = wait_for(Duration::from_secs(2), || {
        x.window(xterm.id).expect("window").filter(|w| w.minimized)
    });
    assert!(min.is_some(), "xterm not reported minimized");
    assert!(x
        .list_windows()
        .expect("list")
        .iter()
        .any(|w| w.id == xterm.id && w.minimized));
    assert!(x.capture(xterm.id).is_err());
    assert!(
        x.activate(xterm.id).expect("activate"),
        "activate did not restore xterm"
    );
    let w = x.window(xterm.id).expect("window").expect("exists");
    assert!(!w.minimized && w.focused, "{w:?}");
    assert!(x.capture(xterm.id).is_ok());
}
