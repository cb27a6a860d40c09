//! Live AT-SPI checks against a running desktop with gtk3-widget-factory, gtk4-widget-factory and
//! the Qt5 calculator example, e.g. the project's bed:
//!
//! ```sh
//! export LSM_BED_APPS="gtk3-widget-factory gtk4-widget-factory testapp qt5-calculator"
//! eval "$(bash tests/bed/desktop.sh up)"
//! cargo test --release -p lsm-linux --test atspi_live -- --ignored --nocapture --test-threads 1
//! ```
//! `LSM_DUMP=1` also prints each walked tree. The big-list test starts tests/apps/lsm_biglist.py
//! itself (system python3 with python3-gi) and stops it at the end.

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
        prune: true,
        max_elements: 10_000,
        max_depth: 200,
        deadline: Instant::now() + Duration::from_millis(ms),
        coords: CoordKind::Screen,
        query: None,
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

/// CPU time (user + system) a process has used so far, in ms (10 ms resolution).
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map(|(_, rest)| rest.split(' ').collect())
        .unwrap_or_default();
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name.
    let tick = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) * 10.0
}

/// Median and 95th percentile (nearest rank) of some times.
fn median_p95(times: &[f64]) -> (f64, f64) {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    if t.is_empty() {
        return (0.0, 0.0);
    }
    let median = if t.len() % 2 == 1 {
        t[t.len() / 2]
    } else {
        (t[t.len() / 2 - 1] + t[t.len() / 2]) / 2.0
    };
    let rank = ((0.95 * t.len() as f64).ceil() as usize).clamp(1, t.len());
    (median, t[rank - 1])
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
        let n = a.node(obj, CoordKind::Screen, (0, 0)).await.expect("node");
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
        // The first walk may register the listener that makes GTK 3 serve its cache.
        let (_, cold) = walk(&a, &f.obj).await;
        let mut times = Vec::new();
        let mut last = None;
        let calls = a.calls_made();
        let cpu0 = app.pid.map(cpu_ms);
        let own0 = cpu_ms(std::process::id());
        for _ in 0..10 {
            let (r, dt) = walk(&a, &f.obj).await;
            times.push(dt.as_secs_f64() * 1000.0);
            last = Some(r);
        }
        let r = last.expect("walked");
        let (median, p95) = median_p95(&times);
        println!(
            "  {} nodes, truncated={} {:?}; first walk {:.1} ms; then ms per walk: {}",
            r.nodes.len(),
            r.truncated,
            r.truncated_reason,
            cold.as_secs_f64() * 1000.0,
            times
                .iter()
                .map(|t| format!("{t:.1}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let app_cpu = match (cpu0, app.pid.map(cpu_ms)) {
            (Some(a0), Some(a1)) => format!("{:.1} ms", (a1 - a0) / 10.0),
            _ => "?".into(),
        };
        let own = (cpu_ms(std::process::id()) - own0) / 10.0;
        println!(
            "  WALK {name}: median {median:.1} ms, p95 {p95:.1} ms, {} nodes; per walk {} D-Bus calls, \
             CPU: {app_cpu} in the application, {own:.1} ms here",
            r.nodes.len(),
            (a.calls_made() - calls) / 10
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
        .node(&gone, CoordKind::Screen, (0, 0))
        .await
        .expect("node of a gone object")
        .is_none());
    let dead = ObjRef {
        bus: ":1.99999".into(),
        path: "/org/a11y/atspi/accessible/1".into(),
    };
    assert!(a
        .node(&dead, CoordKind::Screen, (0, 0))
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
        .node(&display.obj, CoordKind::Screen, (0, 0))
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

/// Pipelined cost of each AT-SPI method per application (all calls in flight at once): the
/// numbers the walk's design rests on, over the bus and over a direct connection. Informational.
#[tokio::test]
#[ignore]
async fn method_costs() {
    let _g = serial().await;
    let a = connect().await;
    let conn = a.connection().clone();
    for name in ["gtk3-widget-factory", "gtk4-widget-factory"] {
        let app = app(&a, name).await;
        let bus = app.obj.bus.clone();
        type Item = lsm_linux::atspi::CacheItem;
        let t = Instant::now();
        let reply = conn
            .call_method(
                Some(bus.as_str()),
                "/org/a11y/atspi/cache",
                Some("org.a11y.atspi.Cache"),
                "GetItems",
                &(),
            )
            .await;
        let items: Vec<Item> = match reply.and_then(|m| m.body().deserialize()) {
            Ok(i) => i,
            Err(e) => {
                println!("{name}: no cache ({e})");
                continue;
            }
        };
        println!("{name}: GetItems {} items in {:?}", items.len(), t.elapsed());
        let all: Vec<String> = items.iter().map(|i| i.0 .1.to_string()).collect();
        let with = |iface: &str| -> Vec<String> {
            items
                .iter()
                .filter(|i| i.5.iter().any(|x| x == iface))
                .map(|i| i.0 .1.to_string())
                .collect()
        };
        let comp = with("org.a11y.atspi.Component");
        let act = with("org.a11y.atspi.Action");
        let text = with("org.a11y.atspi.Text");
        macro_rules! burst {
            ($label:expr, $paths:expr, $iface:expr, $method:expr, $body:expr) => {{
                let paths: &Vec<String> = $paths;
                let body = $body;
                let t = Instant::now();
                let calls = paths
                    .iter()
                    .map(|p| conn.call_method(Some(bus.as_str()), p.as_str(), Some($iface), $method, &body));
                let res = futures_util::future::join_all(calls).await;
                let dt = t.elapsed();
                let ok = res.iter().filter(|r| r.is_ok()).count();
                println!(
                    "  {:24} n={:4} ok={:4} total {:6.1} ms, {:5.1} us/call",
                    $label,
                    paths.len(),
                    ok,
                    dt.as_secs_f64() * 1e3,
                    dt.as_secs_f64() * 1e6 / paths.len().max(1) as f64
                );
            }};
        }
        let acc = "org.a11y.atspi.Accessible";
        let props = "org.freedesktop.DBus.Properties";
        // The same over a direct connection to the application, where it offers one.
        let p2p = async {
            let reply = conn
                .call_method(
                    Some(bus.as_str()),
                    "/org/a11y/atspi/accessible/root",
                    Some("org.a11y.atspi.Application"),
                    "GetApplicationBusAddress",
                    &(),
                )
                .await
                .ok()?;
            let addr: String = reply.body().deserialize().ok()?;
            zbus::connection::Builder::address(addr.as_str())
                .ok()?
                .p2p()
                .build()
                .await
                .ok()
        }
        .await;
        if let Some(p2p) = &p2p {
            for _ in 0..2 {
                let t = Instant::now();
                let calls = comp.iter().map(|p| {
                    p2p.call_method(
                        Some(bus.as_str()),
                        p.as_str(),
                        Some("org.a11y.atspi.Component"),
                        "GetExtents",
                        &(0u32,),
                    )
                });
                let res = futures_util::future::join_all(calls).await;
                let dt = t.elapsed();
                println!(
                    "  p2p GetExtents          n={:4} ok={:4} total {:6.1} ms, {:5.1} us/call",
                    comp.len(),
                    res.iter().filter(|r| r.is_ok()).count(),
                    dt.as_secs_f64() * 1e3,
                    dt.as_secs_f64() * 1e6 / comp.len().max(1) as f64
                );
            }
        } else {
            println!("  {name}: no direct connection");
        }
        for _ in 0..2 {
            burst!("GetRole", &all, acc, "GetRole", ());
            burst!("GetState", &all, acc, "GetState", ());
            burst!("GetInterfaces", &all, acc, "GetInterfaces", ());
            burst!("GetAll(Accessible)", &all, props, "GetAll", (acc,));
            burst!("GetChildren", &all, acc, "GetChildren", ());
            burst!("GetIndexInParent", &all, acc, "GetIndexInParent", ());
            burst!(
                "GetExtents",
                &comp,
                "org.a11y.atspi.Component",
                "GetExtents",
                (0u32,)
            );
            burst!("GetActions", &act, "org.a11y.atspi.Action", "GetActions", ());
            burst!("GetText", &text, "org.a11y.atspi.Text", "GetText", (0i32, -1i32));
            let t = Instant::now();
            let _ = conn
                .call_method(
                    Some(bus.as_str()),
                    "/org/a11y/atspi/cache",
                    Some("org.a11y.atspi.Cache"),
                    "GetItems",
                    &(),
                )
                .await;
            println!("  GetItems                 {:?}", t.elapsed());
        }
    }
}

/// tests/apps/lsm_biglist.py, started for one test and killed when dropped.
struct BigList {
    child: std::process::Child,
}

impl Drop for BigList {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_biglist(a: &Atspi) -> (BigList, AppInfo) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/apps/lsm_biglist.py");
    let child = std::process::Command::new("/usr/bin/python3")
        .arg(script)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start lsm_biglist.py");
    let pid = child.id();
    let guard = BigList { child };
    let t = Instant::now();
    loop {
        let apps = a.applications().await.expect("applications");
        if let Some(x) = apps.into_iter().find(|x| x.pid == Some(pid)) {
            // Registered; wait for the window to be laid out.
            let frames = a.frames(&x.obj).await.expect("frames");
            if frames.iter().any(|f| f.screen_extents.is_some()) {
                tokio::time::sleep(Duration::from_millis(300)).await;
                return (guard, x);
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "lsm_biglist.py did not register"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn default_opts() -> WalkOptions {
    // lsm's defaults: 300 elements, depth 12, 2.5 s.
    WalkOptions {
        prune: true,
        max_elements: 300,
        max_depth: 12,
        deadline: Instant::now() + Duration::from_millis(2500),
        coords: CoordKind::Screen,
        query: None,
    }
}

fn item_numbers(nodes: &[RawNode]) -> Vec<u32> {
    let mut v: Vec<u32> = nodes
        .iter()
        .filter(|n| n.role == "table_cell")
        .filter_map(|n| n.name.strip_prefix("Item ").and_then(|x| x.parse().ok()))
        .collect();
    v.sort_unstable();
    v
}

/// A GTK 3 tree view of 10,000 rows (20,002 children): the walk reads only the rows on screen.
#[tokio::test]
#[ignore]
async fn biglist_reads_only_the_visible_rows() {
    let _g = serial().await;
    let a = connect().await;
    let (_app_guard, app) = start_biglist(&a).await;
    let f = frame(&a, &app).await;
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..10 {
        let t = Instant::now();
        let r = a.walk(&f.obj, &default_opts()).await.expect("walk");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        last = Some(r);
    }
    let r = last.expect("walked");
    let (median, p95) = median_p95(&times);
    println!(
        "  WALK lsm_biglist.py: median {median:.1} ms, p95 {p95:.1} ms, {} nodes",
        r.nodes.len()
    );
    dump(&r.nodes);
    assert!(!r.truncated, "{:?}", r.truncated_reason);
    let table = r
        .nodes
        .iter()
        .find(|n| n.role == "table" && n.name == "Items")
        .expect("the Items table");
    println!(
        "  table: {} children, description {:?}",
        table.child_count, table.description
    );
    assert_eq!(table.child_count, 20_002);
    assert!(
        table.summary.as_deref().is_some_and(|s| s.contains("10000 rows")),
        "{:?}",
        table.summary
    );
    let items = item_numbers(&r.nodes);
    println!("  items read: {items:?}");
    assert!(items.len() >= 10 && items.len() <= 40, "{items:?}");
    assert_eq!(items.first(), Some(&0));
    for i in 0..10 {
        assert!(items.contains(&i), "Item {i} missing: {items:?}");
    }
    let cells: Vec<&RawNode> = r.nodes.iter().filter(|n| n.role == "table_cell").collect();
    assert!(
        cells.iter().all(|n| n.extents.is_some()),
        "a cell without extents"
    );
    let ping = r.nodes.iter().find(|n| n.name == "Ping").expect("Ping button");
    assert!(ping.actions.iter().any(|x| x == "click"), "{:?}", ping.actions);
    assert!(median < 300.0, "median walk {median:.1} ms");

    // Scroll far down (focus a cell of row 5000: GTK moves the cursor there) and walk again.
    let far = a
        .walk(
            &table.obj,
            &WalkOptions {
                max_depth: 0,
                ..default_opts()
            },
        )
        .await
        .expect("walk");
    assert!(
        far.truncated,
        "max_depth 0 under a table with children is a truncation"
    );
    let cell_path = {
        let conn = a.connection();
        let reply = conn
            .call_method(
                Some(table.obj.bus.as_str()),
                table.obj.path.as_str(),
                Some("org.a11y.atspi.Accessible"),
                "GetChildAtIndex",
                &(2 + 5000 * 2i32,),
            )
            .await
            .expect("GetChildAtIndex");
        let (bus, path): (String, zbus::zvariant::OwnedObjectPath) =
            reply.body().deserialize().expect("reference");
        ObjRef {
            bus,
            path: path.to_string(),
        }
    };
    assert!(
        a.grab_focus(&cell_path).await.expect("grab_focus"),
        "focus refused"
    );
    let t = Instant::now();
    let items = loop {
        let r = a.walk(&f.obj, &default_opts()).await.expect("walk");
        let items = item_numbers(&r.nodes);
        if items.contains(&5000) || t.elapsed() > Duration::from_secs(5) {
            assert!(!r.truncated, "{:?}", r.truncated_reason);
            break items;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    println!("  after scrolling: items read {items:?}");
    assert!(items.contains(&5000), "{items:?}");
    assert!(!items.contains(&0) && items.len() <= 40, "{items:?}");
}

/// Qt's list and table views: a walk of the interview example (a 1000-row tree model in three
/// views) stays quick and is not cut.
#[tokio::test]
#[ignore]
async fn qt_big_views_stay_quick() {
    let _g = serial().await;
    let bin = "/usr/lib/x86_64-linux-gnu/qt5/examples/widgets/itemviews/interview/interview";
    if !std::path::Path::new(bin).exists() {
        println!("no {bin}: skipped");
        return;
    }
    let a = connect().await;
    let child = std::process::Command::new(bin)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start interview");
    let pid = child.id();
    let _guard = BigList { child };
    let t = Instant::now();
    let app = loop {
        let apps = a.applications().await.expect("applications");
        if let Some(x) = apps.into_iter().find(|x| x.pid == Some(pid)) {
            let frames = a.frames(&x.obj).await.expect("frames");
            if frames.iter().any(|f| f.screen_extents.is_some()) {
                tokio::time::sleep(Duration::from_millis(500)).await;
                break x;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "interview did not register"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let f = frame(&a, &app).await;
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let t = Instant::now();
        let r = a.walk(&f.obj, &default_opts()).await.expect("walk");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        last = Some(r);
    }
    let r = last.expect("walked");
    let (median, p95) = median_p95(&times);
    println!(
        "  WALK interview (Qt): median {median:.1} ms, p95 {p95:.1} ms, {} nodes, truncated {:?}",
        r.nodes.len(),
        r.truncated_reason
    );
    summary("interview", &r.nodes);
    dump(&r.nodes);
    for n in r.nodes.iter().filter(|n| n.summary.is_some()) {
        println!("  {} {:?}: {:?}", n.role, n.name, n.summary);
    }
    assert!(median < 1000.0, "median walk {median:.1} ms");
}

/// What `gui_state` asks of AT-SPI besides the walk (the backend's frame look-up), timed per app.
#[tokio::test]
#[ignore]
async fn observe_path_costs() {
    let _g = serial().await;
    let a = connect().await;
    for name in ["gtk3-widget-factory", "gtk4-widget-factory", "calculator"] {
        let app = app(&a, name).await;
        let f = frame(&a, &app).await;
        let _ = walk(&a, &f.obj).await;
        let (mut apps_t, mut frames_t, mut walk_t) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..10 {
            let t = Instant::now();
            let _ = a.applications().await.expect("applications");
            apps_t.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let frames = a.frames(&app.obj).await.expect("frames");
            frames_t.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let _ = a.walk(&f.obj, &default_opts()).await.expect("walk");
            walk_t.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(!frames.is_empty());
        }
        let m = |v: &[f64]| median_p95(v).0;
        println!(
            "  PATH {name}: applications {:.1} ms, frames {:.1} ms ({} frames), walk {:.1} ms (medians)",
            m(&apps_t),
            m(&frames_t),
            a.frames(&app.obj).await.map(|f| f.len()).unwrap_or(0),
            m(&walk_t)
        );
    }
}

/// The walk timed on a runtime like lsm's (multi-threaded, 2 workers) rather than the test's
/// single thread: cross-thread wake-ups cost time per call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn walk_on_a_server_runtime() {
    let _g = serial().await;
    let a = connect().await;
    for name in ["gtk3-widget-factory", "gtk4-widget-factory", "calculator"] {
        let app = app(&a, name).await;
        let f = frame(&a, &app).await;
        let _ = walk(&a, &f.obj).await;
        let mut times = Vec::new();
        for _ in 0..10 {
            let t = Instant::now();
            let _ = a.walk(&f.obj, &default_opts()).await.expect("walk");
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let (median, p95) = median_p95(&times);
        println!("  MT-WALK {name}: median {median:.1} ms, p95 {p95:.1} ms");
    }
}
