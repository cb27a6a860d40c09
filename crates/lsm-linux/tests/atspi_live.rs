//! Live AT-SPI checks against a running desktop with gtk3-widget-factory, gtk4-widget-factory and
//! the Qt5 calculator example, e.g. the bed of /work/shared/testbeds/desktop-up.sh:
//!
//! ```sh
//! eval "$(X11BED_APPS='gtk3-widget-factory gtk4-widget-factory qt5-calculator' desktop-up.sh)"
//! cargo test -p lsm-linux --test atspi_live -- --ignored --nocapture
//! ```
//! `LSM_DUMP=1` also prints each walked tree.

use lsm_linux::atspi::{AppInfo, Atspi, CoordKind, FrameInfo, ObjRef, RawNode, WalkOptions, WalkResult};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The tests act on the same applications and measure time: one at a time.
static SERIAL: Mutex<()> = Mutex::const_new(());

async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    SERIAL.lock().await
}

async fn connect() -> Atspi {
    match Atspi::connect(None).await {
        Ok(a) => a,
        Err(e) => panic!("no accessibility bus (start the desktop bed first): {e}"),
    }
}

async fn app(a: &Atspi, name: &str) -> AppInfo {
    let apps = a.applications().await.expect("applications");
    apps.into_iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("{name} is not on the AT-SPI registry"))
}

/// The app's main window: a visible frame, the largest one.
async fn frame(a: &Atspi, app: &AppInfo) -> FrameInfo {
    let frames = a.frames(&app.obj).await.expect("frames");
    frames
        .into_iter()
        .filter(|f| f.states.iter().any(|s| s == "visible"))
        .max_by_key(|f| {
            f.screen_extents
                .map(|r| r.width as i64 * r.height as i64)
                .unwrap_or(0)
        })
        .unwrap_or_else(|| panic!("{} has no visible frame", app.name))
}

fn opts(ms: u64) -> WalkOptions {
    WalkOptions {
        max_elements: 10_000,
        max_depth: 200,
        deadline: Instant::now() + Duration::from_millis(ms),
        coords: CoordKind::Screen,
    }
}

async fn walk(a: &Atspi, root: &ObjRef) -> (WalkResult, Duration) {
    let t = Instant::now();
    let r = a.walk(root, &opts(20_000)).await.expect("walk");
    (r, t.elapsed())
}

fn dump(nodes: &[RawNode]) {
    if std::env::var_os("LSM_DUMP").is_none() {
        return;
    }
    for n in nodes {
        println!(
            "{:indent$}{} {:?} value={:?} actions={:?} ext={:?} states={:?} ifaces={:?} kids={}",
            "",
            n.role,
            n.name,
            n.value,
            n.actions,
            n.extents.map(|r| (r.x, r.y, r.width, r.height)),
            n.states,
            n.interfaces,
            n.child_count,
            indent = 2 * n.depth as usize
        );
    }
}

fn summary(label: &str, nodes: &[RawNode]) {
    let mut actions: BTreeMap<String, usize> = BTreeMap::new();
    let mut roles: BTreeMap<String, usize> = BTreeMap::new();
    for n in nodes {
        *roles.entry(n.role.clone()).or_default() += 1;
        for x in &n.actions {
            *actions.entry(x.clone()).or_default() += 1;
        }
    }
    let no_ext = nodes.iter().filter(|n| n.extents.is_none()).count();
    let depth = nodes.iter().map(|n| n.depth).max().unwrap_or(0);
    println!("  {label}: roles {roles:?}");
    println!("  {label}: actions {actions:?}; {no_ext} nodes without extents; max depth {depth}");
}

/// Polls `node` until `pred` holds (actions run asynchronously in GTK's main loop).
async fn wait_node(a: &Atspi, obj: &ObjRef, pred: impl Fn(&RawNode) -> bool) -> Option<RawNode> {
    let t = Instant::now();
    loop {
        let n = a.node(obj, CoordKind::Screen).await.expect("node");
        if let Some(n) = n {
            if pred(&n) {
                return Some(n);
            }
            if t.elapsed() > Duration::from_secs(2) {
                return Some(n);
            }
        } else if t.elapsed() > Duration::from_secs(2) {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
#[ignore]
async fn lists_applications_with_pids() {
    let _g = serial().await;
    let a = connect().await;
    let t = Instant::now();
    let apps = a.applications().await.expect("applications");
    println!("applications() cold: {} apps in {:?}", apps.len(), t.elapsed());
    let t = Instant::now();
    let again = a.applications().await.expect("applications");
    println!("applications() warm: {} apps in {:?}", again.len(), t.elapsed());
    for x in &apps {
        println!(
            "  {} pid={:?} toolkit={} {} root={}",
            x.name,
            x.pid,
            x.toolkit,
            x.toolkit_version,
            x.obj.encode()
        );
    }
    for name in ["gtk3-widget-factory", "gtk4-widget-factory", "calculator"] {
        let x = apps
            .iter()
            .find(|x| x.name == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        let pid = x.pid.unwrap_or_else(|| panic!("{name} has no pid"));
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("exe of pid");
        let exe = exe.to_string_lossy().to_string();
        assert!(exe.ends_with(name), "pid {pid} of {name} is {exe}");
        assert!(!x.toolkit.is_empty(), "{name} has no toolkit name");
    }
}

#[tokio::test]
#[ignore]
async fn walks_each_app_quickly() {
    let _g = serial().await;
    let a = connect().await;
    // Hidden notebook/stack pages are pruned: fewer than a full pyatspi walk (260 / 950 / 30).
    for (name, expect_min) in [
        ("gtk3-widget-factory", 100),
        ("gtk4-widget-factory", 150),
        ("calculator", 25),
    ] {
        let app = app(&a, name).await;
        let f = frame(&a, &app).await;
        println!(
            "{name} ({} {}): frame {:?} {:?}",
            app.toolkit, app.toolkit_version, f.name, f.screen_extents
        );
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..5 {
            let (r, dt) = walk(&a, &f.obj).await;
            times.push(dt.as_secs_f64() * 1000.0);
            last = Some(r);
        }
        let r = last.expect("walked");
        let best = times.iter().cloned().fold(f64::MAX, f64::min);
        println!(
            "  {} nodes, truncated={} {:?}; ms per walk: {}; best {best:.1}",
            r.nodes.len(),
            r.truncated,
            r.truncated_reason,
            times
                .iter()
                .map(|t| format!("{t:.1}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        summary(name, &r.nodes);
        dump(&r.nodes);
        assert!(
            r.nodes.len() >= expect_min,
            "{name}: only {} nodes",
            r.nodes.len()
        );
        assert!(!r.truncated, "{name}: walk truncated: {:?}", r.truncated_reason);
        // Pre-order: every parent comes before its children, depth is parent's + 1.
        for (i, n) in r.nodes.iter().enumerate() {
            match n.parent {
                None => assert_eq!(i, 0),
                Some(p) => {
                    assert!(p < i);
                    assert_eq!(r.nodes[p].depth + 1, n.depth);
                }
            }
        }
        // Window-relative coordinates, for comparison with the screen ones.
        let mut o = opts(20_000);
        o.coords = CoordKind::Window;
        let w = a.walk(&f.obj, &o).await.expect("walk window coords");
        let pairs: Vec<String> = r
            .nodes
            .iter()
            .zip(w.nodes.iter())
            .filter(|(s, _)| s.role == "push_button" || s.role == "frame")
            .take(3)
            .map(|(s, w)| {
                format!(
                    "{} {:?}: screen {:?} window {:?}",
                    s.role, s.name, s.extents, w.extents
                )
            })
            .collect();
        println!("  coords: {pairs:#?}");
    }
}

#[tokio::test]
#[ignore]
async fn deadline_truncates_quickly() {
    let _g = serial().await;
    let a = connect().await;
    let app = app(&a, "gtk4-widget-factory").await;
    let f = frame(&a, &app).await;
    let t = Instant::now();
    let r = a.walk(&f.obj, &opts(5)).await.expect("walk");
    let dt = t.elapsed();
    println!(
        "5 ms deadline: {} nodes in {dt:?}, truncated={} {:?}",
        r.nodes.len(),
        r.truncated,
        r.truncated_reason
    );
    assert!(r.truncated);
    assert!(dt < Duration::from_millis(50), "took {dt:?}");
    // And max_elements / max_depth.
    let mut o = opts(20_000);
    o.max_elements = 25;
    let r = a.walk(&f.obj, &o).await.expect("walk");
    println!(
        "max_elements 25: {} nodes, {:?}",
        r.nodes.len(),
        r.truncated_reason
    );
    assert!(r.truncated && r.nodes.len() <= 25);
    let mut o = opts(20_000);
    o.max_depth = 2;
    let r = a.walk(&f.obj, &o).await.expect("walk");
    println!("max_depth 2: {} nodes, {:?}", r.nodes.len(), r.truncated_reason);
    assert!(r.truncated && r.nodes.iter().all(|n| n.depth <= 2));
}

#[tokio::test]
#[ignore]
async fn gtk3_check_button_toggles() {
    let _g = serial().await;
    let a = connect().await;
    let app = app(&a, "gtk3-widget-factory").await;
    let f = frame(&a, &app).await;
    let (r, _) = walk(&a, &f.obj).await;
    let cb = r
        .nodes
        .iter()
        .find(|n| n.role == "check_box" && n.has_state("sensitive") && !n.actions.is_empty())
        .expect("a sensitive check box");
    let before = cb.has_state("checked");
    println!(
        "check box {:?} actions {:?} checked={before}",
        cb.name, cb.actions
    );
    let ran = a
        .do_action(&cb.obj, &["toggle", "click", "press", "activate"], false)
        .await
        .expect("do_action");
    println!("  ran {ran:?}");
    assert!(ran.is_some());
    let n = wait_node(&a, &cb.obj, |n| n.has_state("checked") != before)
        .await
        .expect("still there");
    assert_ne!(n.has_state("checked"), before, "checked state did not change");
    // Put it back.
    a.do_action(&cb.obj, &["toggle", "click"], false)
        .await
        .expect("do_action");
    let n = wait_node(&a, &cb.obj, |n| n.has_state("checked") == before)
        .await
        .expect("still there");
    assert_eq!(n.has_state("checked"), before);
    // An object that is gone reads as None, not as an error.
    let gone = ObjRef {
        bus: cb.obj.bus.clone(),
        path: "/org/a11y/atspi/accessible/999999".into(),
    };
    assert!(a
        .node(&gone, CoordKind::Screen)
        .await
        .expect("node of a gone object")
        .is_none());
    let dead = ObjRef {
        bus: ":1.99999".into(),
        path: "/org/a11y/atspi/accessible/1".into(),
    };
    assert!(a
        .node(&dead, CoordKind::Screen)
        .await
        .expect("node on a dead bus")
        .is_none());
}

async fn entry_roundtrip(a: &Atspi, app_name: &str) {
    let app = app(a, app_name).await;
    let f = frame(a, &app).await;
    let (r, _) = walk(a, &f.obj).await;
    let entry = r
        .nodes
        .iter()
        .find(|n| {
            n.role == "text"
                && n.has_interface("EditableText")
                && n.has_state("editable")
                && !n.has_state("multi_line")
        })
        .expect("an editable single-line text");
    println!(
        "{app_name}: entry {:?} value {:?} actions {:?}",
        entry.name, entry.value, entry.actions
    );
    let old = entry.value.clone().unwrap_or_default();
    let text = "한글 テスト";
    assert!(
        a.set_text(&entry.obj, text).await.expect("set_text"),
        "set_text refused"
    );
    let n = wait_node(a, &entry.obj, |n| n.value.as_deref() == Some(text))
        .await
        .expect("entry gone");
    assert_eq!(n.value.as_deref(), Some(text));
    // insert_text at the caret: the caret may be anywhere, so only the content is checked.
    assert!(
        a.insert_text(&entry.obj, "«é»").await.expect("insert_text"),
        "insert_text refused"
    );
    let n = wait_node(a, &entry.obj, |n| {
        n.value.as_deref().is_some_and(|v| v.contains("«é»"))
    })
    .await
    .expect("gone");
    println!("  after insert: {:?}", n.value);
    let v = n.value.unwrap_or_default();
    assert!(
        v.contains("«é»") && v.chars().count() == text.chars().count() + 3,
        "{v:?}"
    );
    assert!(a.set_text(&entry.obj, &old).await.expect("set_text"));
}

#[tokio::test]
#[ignore]
async fn gtk_set_text_round_trips_cjk() {
    let _g = serial().await;
    let a = connect().await;
    entry_roundtrip(&a, "gtk3-widget-factory").await;
    entry_roundtrip(&a, "gtk4-widget-factory").await;
}

#[tokio::test]
#[ignore]
async fn qt_calculator_digit_click() {
    let _g = serial().await;
    let a = connect().await;
    let app = app(&a, "calculator").await;
    let f = frame(&a, &app).await;
    let (r, _) = walk(&a, &f.obj).await;
    let display = r
        .nodes
        .iter()
        .find(|n| n.role == "text")
        .expect("calculator display");
    let clear = r
        .nodes
        .iter()
        .find(|n| n.role == "push_button" && n.name == "Clear All");
    if let Some(c) = clear {
        a.do_action(&c.obj, &["press", "click"], true)
            .await
            .expect("clear");
    }
    let seven = r
        .nodes
        .iter()
        .find(|n| n.role == "push_button" && n.name == "7")
        .expect("button 7");
    println!(
        "calculator: display {:?} {:?}; button 7 actions {:?}",
        display.value, display.states, seven.actions
    );
    let before = a
        .node(&display.obj, CoordKind::Screen)
        .await
        .expect("node")
        .expect("display")
        .value;
    let t = Instant::now();
    let ran = a
        .do_action(&seven.obj, &["click", "press", "activate"], true)
        .await
        .expect("do_action");
    assert!(ran.is_some(), "no action on button 7");
    let n = wait_node(&a, &display.obj, |n| n.value != before)
        .await
        .expect("display gone");
    println!(
        "  ran {ran:?}; display {:?} -> {:?} after {:?}",
        before,
        n.value,
        t.elapsed()
    );
    assert_ne!(n.value, before);
    assert!(n.value.as_deref().unwrap_or_default().ends_with('7'));
}

#[tokio::test]
#[ignore]
async fn gtk3_value_and_focus() {
    let _g = serial().await;
    let a = connect().await;
    let app = app(&a, "gtk3-widget-factory").await;
    let f = frame(&a, &app).await;
    let (r, _) = walk(&a, &f.obj).await;
    let spin = r
        .nodes
        .iter()
        .find(|n| n.role == "spin_button" && n.has_interface("Value") && n.has_state("sensitive"))
        .expect("a sensitive spin button");
    let old: f64 = spin.value.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0.0);
    println!("spin button {:?} value {:?}", spin.name, spin.value);
    assert!(a.set_numeric_value(&spin.obj, 42.0).await.expect("set value"));
    let n = wait_node(&a, &spin.obj, |n| n.value.as_deref() == Some("42"))
        .await
        .expect("gone");
    assert_eq!(n.value.as_deref(), Some("42"));
    // Clamped to the maximum rather than refused.
    assert!(a.set_numeric_value(&spin.obj, 1e12).await.expect("set value"));
    let n = wait_node(&a, &spin.obj, |n| n.value.as_deref() != Some("42"))
        .await
        .expect("gone");
    println!("  after 1e12: {:?}", n.value);
    assert!(a.set_numeric_value(&spin.obj, old).await.expect("set value"));

    let entry = r
        .nodes
        .iter()
        .find(|n| {
            n.role == "text" && n.has_state("editable") && n.has_state("sensitive") && !n.has_state("focused")
        })
        .expect("an unfocused entry");
    assert!(a.grab_focus(&entry.obj).await.expect("grab_focus"));
    let n = wait_node(&a, &entry.obj, |n| n.has_state("focused"))
        .await
        .expect("gone");
    assert!(n.has_state("focused"), "entry not focused: {:?}", n.states);
    // No such action / not editable: Ok(None) / Ok(false), not errors.
    assert_eq!(
        a.do_action(&entry.obj, &["no-such-action"], false)
            .await
            .expect("do_action"),
        None
    );
    assert!(!a.set_text(&f.obj, "x").await.expect("set_text on a frame"));
}
