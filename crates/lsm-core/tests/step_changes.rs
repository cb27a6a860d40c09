//! `gui_action` closing the loop (settle, changes, a new state_id, effects), against a scripted
//! fake application: a check box, a button whose label updates 300 ms later, a button that
//! closes the window, a plain label, and a clock that never stops. Each test runs twice: with a
//! backend that sees no events (settling compares observations) and with one that reports the
//! application's events (settling waits for them to stop).

use async_trait::async_trait;
use lsm_core::changes::Effect;
use lsm_core::*;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct App {
    checked: bool,
    /// The "Open dialog" button shows a dialog window (0x2) of the same application.
    dialog: bool,
    later_at: Option<Instant>,
    /// The "Deferred" button (as Qt's accessible press): `pressed` for 100 ms, then it opens
    /// the dialog.
    deferred_at: Option<Instant>,
    /// The "Paint" button changes the window's pixels and nothing else; "Flash" shows `pressed`
    /// (and its pixels) for 50 ms and does nothing.
    painted: bool,
    flash_at: Option<Instant>,
    /// When each action reached the application, and what it saw then (`Later: 1`?).
    performed: Vec<(String, bool)>,
    closed: bool,
    /// The clock label changes on every look (with events: every 20 ms, each change an event).
    animating: Option<Instant>,
    ticks: u64,
    /// Report events (`DesktopBackend::activity`), and when the actions sent them.
    events: Option<Vec<Instant>>,
    /// The check box's events name it and say only its own state changed (as AT-SPI's
    /// `state-changed:checked` does), so the service may read its states again instead of
    /// walking the window; how often it did.
    own_state_events: Vec<Instant>,
    own_state: bool,
    rereads: u32,
    /// Watch captures for repaints (`capture_watched`): the `painted` the watched capture
    /// showed (`None`: nothing watched). `lying_watch`: the watch never reports a repaint.
    watching: bool,
    watched: Option<bool>,
    lying_watch: bool,
    /// Captures read whole (`observe` with a screenshot).
    captures: u32,
}

/// How long the "Deferred" button is pressed before its dialog opens.
const DEFERRAL: Duration = Duration::from_millis(100);
/// How long "Flash" looks pressed.
const FLASH: Duration = Duration::from_millis(50);

impl App {
    fn deferred_done(&self) -> bool {
        self.deferred_at.is_some_and(|t| t.elapsed() >= DEFERRAL)
    }
    fn later_done(&self) -> bool {
        self.later_at
            .is_some_and(|t| t.elapsed() >= Duration::from_millis(300))
    }
}

/// A tick of the clock, with events.
const TICK: Duration = Duration::from_millis(20);

impl App {
    fn activity(&self) -> Option<Activity> {
        let mut recent = self.events.clone()?;
        for t in [
            self.later_at.map(|t| t + Duration::from_millis(300)),
            self.deferred_at.map(|t| t + DEFERRAL),
            self.flash_at.map(|t| t + FLASH),
        ]
        .into_iter()
        .flatten()
        {
            if t <= Instant::now() {
                recent.push(t);
            }
        }
        if let Some(start) = self.animating {
            let ticks = (start.elapsed().as_millis() / TICK.as_millis()) as u32;
            recent.extend((1..=ticks).map(|k| start + TICK * k));
        }
        let mut recent: Vec<ActivityEvent> = recent
            .into_iter()
            .map(|at| ActivityEvent {
                at,
                source: String::new(),
                reach: Reach::Anything,
            })
            .chain(self.own_state_events.iter().map(|&at| ActivityEvent {
                at,
                source: "feature".into(),
                reach: Reach::OwnState,
            }))
            .collect();
        recent.sort_by_key(|e| e.at);
        Some(Activity {
            count: recent.len() as u64,
            recent,
        })
    }
}

#[derive(Default)]
struct Fake(Mutex<App>);

fn dialog_window() -> WindowInfo {
    WindowInfo {
        window_id: "0x2".into(),
        title: "Dialog".into(),
        bounds: Rect::new(50, 50, 100, 80),
        transient_for: Some("0x1".into()),
        ..window()
    }
}

fn window() -> WindowInfo {
    WindowInfo {
        pid: Some(1),
        focused: true,
        ..WindowInfo::new("0x1", "fake", "fake", Rect::new(0, 0, 300, 200))
    }
}

fn el(key: &str, role: &str, name: &str, states: &[&str], parent: Option<usize>) -> RawElement {
    RawElement {
        native: key.into(),
        key: key.into(),
        parent,
        depth: parent.map_or(0, |_| 1),
        role: role.into(),
        name: name.into(),
        description: String::new(),
        value: None,
        states: ["enabled", "sensitive", "showing", "visible"]
            .iter()
            .chain(states)
            .map(|s| s.to_string())
            .collect(),
        actions: vec!["click".into()],
        bounds: Some(Rect::new(1, 1, 10, 10)),
        summary: None,
    }
}

#[async_trait]
impl DesktopBackend for Fake {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "fake".into(),
            platform: "test".into(),
            session: "none".into(),
            capabilities: vec!["screenshot".into()],
            notes: vec![],
        }
    }
    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        let app = self.0.lock().unwrap();
        let mut list = Vec::new();
        if !app.closed {
            list.push(window());
        }
        if app.dialog || app.deferred_done() {
            list.push(dialog_window());
        }
        Ok(list)
    }
    async fn window(&self, id: &str) -> GuiResult<WindowInfo> {
        self.list_windows()
            .await?
            .into_iter()
            .find(|w| w.window_id == id)
            .ok_or_else(|| GuiError::window_not_found(id))
    }
    async fn observe(&self, id: &str, r: &ObserveRequest) -> GuiResult<Snapshot> {
        let w = self.window(id).await?;
        let mut app = self.0.lock().unwrap();
        let flashing = app.flash_at.is_some_and(|t| t.elapsed() < FLASH);
        let shade = if app.painted || flashing { 90 } else { 200 };
        let screenshot = r.screenshot.then(|| Screenshot {
            image: RgbaImage::filled(
                w.bounds.width as u32,
                w.bounds.height as u32,
                [shade, shade, shade, 255],
            ),
            occluded: false,
        });
        app.ticks += 1;
        app.captures += u32::from(r.screenshot);
        let later = app
            .later_at
            .is_some_and(|t| t.elapsed() >= Duration::from_millis(300));
        let clock = match (app.animating, &app.events) {
            (Some(start), Some(_)) => format!("tick {}", start.elapsed().as_millis() / TICK.as_millis()),
            (Some(_), None) => format!("tick {}", app.ticks),
            (None, _) => "clock".into(),
        };
        if id == "0x2" {
            return Ok(Snapshot {
                window: w,
                scale: 1.0,
                elements: vec![
                    el("dialog", "dialog", "Dialog", &[], None),
                    el("ok", "push_button", "OK", &[], Some(0)),
                ],
                truncated: false,
                truncated_reason: None,
                screenshot,
                notes: vec![],
            });
        }
        let checked: &[&str] = if app.checked { &["checked"] } else { &[] };
        Ok(Snapshot {
            window: w,
            scale: 1.0,
            elements: vec![
                el("root", "frame", "fake", &[], None),
                el("feature", "check_box", "Feature", checked, Some(0)),
                el("later", "push_button", "Later", &[], Some(0)),
                el(
                    "status",
                    "label",
                    if later { "Later: 1" } else { "Later: 0" },
                    &[],
                    Some(0),
                ),
                el("close", "push_button", "Close", &[], Some(0)),
                el("plain", "label", "Plain", &[], Some(0)),
                el("clock", "label", &clock, &[], Some(0)),
                el("open", "push_button", "Open dialog", &[], Some(0)),
                el("swap", "push_button", "Next", &[], Some(0)),
                el(
                    "deferred",
                    "push_button",
                    "Deferred",
                    if app.deferred_at.is_some() && !app.deferred_done() {
                        &["pressed"]
                    } else {
                        &[]
                    },
                    Some(0),
                ),
                el("paint", "push_button", "Paint", &[], Some(0)),
                el(
                    "flash",
                    "push_button",
                    "Flash",
                    if flashing { &["pressed"] } else { &[] },
                    Some(0),
                ),
            ],
            truncated: false,
            truncated_reason: None,
            screenshot,
            notes: vec![],
        })
    }
    async fn perform(&self, _w: &WindowInfo, a: &BackendAction) -> GuiResult<ActionOutcome> {
        let BackendAction::Click {
            target: Target::Element(e),
            ..
        } = a
        else {
            return Ok(ActionOutcome::new("fake"));
        };
        let mut app = self.0.lock().unwrap();
        let later_seen = app.later_done();
        app.performed.push((e.native.clone(), later_seen));
        Ok(match e.native.as_str() {
            "deferred" => {
                app.deferred_at = Some(Instant::now());
                if let Some(events) = &mut app.events {
                    events.push(Instant::now());
                }
                // As Qt's: the button shows `pressed` at once, and a backend that reads it back
                // must not call that the effect.
                ActionOutcome::new("fake").unverified("pressed; no lasting state to read back")
            }
            "paint" => {
                app.painted = true;
                ActionOutcome::new("fake")
            }
            "flash" => {
                app.flash_at = Some(Instant::now());
                if let Some(events) = &mut app.events {
                    events.push(Instant::now());
                }
                ActionOutcome::new("fake")
            }
            "feature" => {
                app.checked = !app.checked;
                if app.own_state {
                    app.own_state_events.push(Instant::now());
                } else if let Some(events) = &mut app.events {
                    events.push(Instant::now());
                }
                ActionOutcome::new("fake").verified(format!("checked {} -> {}", !app.checked, app.checked))
            }
            "later" => {
                app.later_at = Some(Instant::now());
                ActionOutcome::new("fake")
            }
            "open" | "ok" => {
                app.dialog = e.native == "open";
                if let Some(events) = &mut app.events {
                    events.push(Instant::now());
                }
                ActionOutcome::new("fake")
            }
            "swap" => {
                // A wizard's next step: this window goes, the next one comes.
                app.closed = true;
                app.dialog = true;
                if let Some(events) = &mut app.events {
                    events.push(Instant::now());
                }
                ActionOutcome::new("fake")
            }
            "close" => {
                app.closed = true;
                if let Some(events) = &mut app.events {
                    events.push(Instant::now());
                }
                ActionOutcome::new("fake")
            }
            _ => ActionOutcome::new("fake"),
        })
    }
    fn activity(&self, _w: &WindowInfo) -> Option<Activity> {
        self.0.lock().unwrap().activity()
    }
    async fn capture_watched(&self, id: &str) -> GuiResult<(Snapshot, Option<u64>)> {
        if !self.0.lock().unwrap().watching {
            return Err(GuiError::new(ErrorCode::UnsupportedAction, "no watch"));
        }
        let snap = self.capture(id).await?;
        let mut app = self.0.lock().unwrap();
        app.watched = Some(app.painted);
        Ok((snap, Some(7)))
    }
    async fn repaints_since(&self, watch: u64) -> Option<Vec<Repaint>> {
        let mut app = self.0.lock().unwrap();
        let was = app.watched.filter(|_| watch == 7)?;
        app.watched = Some(app.painted);
        if was == app.painted || app.lying_watch {
            return Some(Vec::new());
        }
        // The whole window drawn again, in its new shade.
        let shade = if app.painted { 90 } else { 200 };
        Some(vec![Repaint {
            at: Rect::new(0, 0, 300, 200),
            image: RgbaImage::filled(300, 200, [shade, shade, shade, 255]),
        }])
    }
    async fn reread_states(
        &self,
        _id: &str,
        elements: &[&RawElement],
    ) -> GuiResult<Vec<Option<Vec<String>>>> {
        let mut app = self.0.lock().unwrap();
        app.rereads += 1;
        let checked: &[&str] = if app.checked { &["checked"] } else { &[] };
        Ok(elements
            .iter()
            .map(|e| {
                (e.key == "feature").then(|| el("feature", "check_box", "Feature", checked, Some(0)).states)
            })
            .collect())
    }
}

struct Conn(Arc<Fake>);

#[async_trait]
impl BackendConnector for Conn {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        Ok(self.0.clone())
    }
}

/// Without events, then with them.
const MODES: [bool; 2] = [false, true];

fn setup(events: bool) -> (Arc<Fake>, LocalGui) {
    let fake = Arc::new(Fake::default());
    fake.0.lock().unwrap().events = events.then(Vec::new);
    let gui = LocalGui::new("local", Limits::default(), Arc::new(Conn(fake.clone())));
    (fake, gui)
}

async fn observe(gui: &LocalGui) -> StateOutput {
    gui.state(StateRequest {
        window_id: "0x1".into(),
        include_elements: true,
        ..Default::default()
    })
    .await
    .expect("observe")
}

fn id_of(elements: &[Element], name: &str) -> String {
    elements.iter().find(|e| e.name == name).expect(name).id.clone()
}

async fn click(gui: &LocalGui, state_id: &str, id: &str, settle_ms: Option<u64>) -> GuiResult<ActionOutput> {
    gui.action(ActionRequest {
        window_id: "0x1".into(),
        state_id: state_id.into(),
        actions: json!([{"type": "click", "element_id": id}]),
        settle_ms,
        ..Default::default()
    })
    .await
}

#[tokio::test]
async fn a_toggle_is_confirmed_and_the_next_action_needs_no_gui_state() {
    for events in MODES {
        let (fake, gui) = setup(events);
        let s = observe(&gui).await;
        let feature = id_of(&s.elements, "Feature");
        let looks = fake.0.lock().unwrap().ticks;
        let out = click(&gui, &s.state_id, &feature, None).await.expect("click");
        // With events, one capture before the press (to tell `no_change` from a change only
        // pixels show) and one walk while the quiet period passes; without, until two agree.
        let walks = fake.0.lock().unwrap().ticks - looks;
        assert!(if events { walks == 2 } else { walks > 2 }, "{walks} walks");
        assert_eq!(out.results[0].effect, Some(Effect::Confirmed));
        assert_eq!(out.results[0].evidence.as_deref(), Some("checked false -> true"));
        assert_eq!(out.settled, Some(true));
        let changes = out.changes.expect("changes");
        assert_eq!(changes.changed.len(), 1);
        assert_eq!(
            (
                changes.changed[0].id.as_str(),
                changes.changed[0].states_on.clone()
            ),
            (feature.as_str(), vec!["checked".to_string()])
        );
        // The new state_id acts, and the same control has the same id.
        let next = click(&gui, out.state_id.as_deref().expect("state_id"), &feature, None)
            .await
            .expect("second click");
        assert_eq!(next.changes.expect("changes").changed[0].states_off, ["checked"]);
        assert_eq!(id_of(&observe(&gui).await.elements, "Feature"), feature);
    }
}

#[tokio::test]
async fn a_change_of_its_own_state_alone_is_read_again_without_a_walk() {
    let (fake, gui) = setup(true);
    fake.0.lock().unwrap().own_state = true;
    let s = observe(&gui).await;
    let feature = id_of(&s.elements, "Feature");
    let mut state_id = s.state_id;
    for (before, after) in [(false, true), (true, false)] {
        let looks = fake.0.lock().unwrap().ticks;
        let out = click(&gui, &state_id, &feature, None).await.expect("click");
        // The capture before the press, and no walk: the check box's states read again.
        assert_eq!(fake.0.lock().unwrap().ticks - looks, 1);
        assert_eq!(out.results[0].effect, Some(Effect::Confirmed));
        assert_eq!(
            out.results[0].evidence.as_deref(),
            Some(format!("checked {before} -> {after}").as_str())
        );
        let changes = out.changes.expect("changes");
        assert_eq!(changes.changed.len(), 1, "{changes:?}");
        assert_eq!(changes.changed[0].id, feature);
        state_id = out.state_id.expect("state_id");
    }
    assert_eq!(fake.0.lock().unwrap().rereads, 2);
    // Any other event walks the window: the button that opens a dialog.
    let looks = fake.0.lock().unwrap().ticks;
    let out = click(&gui, &state_id, &id_of(&s.elements, "Open dialog"), None)
        .await
        .expect("click");
    assert!(fake.0.lock().unwrap().ticks - looks >= 2);
    assert_eq!(fake.0.lock().unwrap().rereads, 2);
    assert_eq!(out.results[0].effect, Some(Effect::Confirmed));
}

#[tokio::test]
async fn a_control_that_updates_300_ms_later_is_in_the_result() {
    for events in MODES {
        let (_, gui) = setup(events);
        let s = observe(&gui).await;
        let out = click(&gui, &s.state_id, &id_of(&s.elements, "Later"), None)
            .await
            .expect("click");
        let changes = out.changes.expect("changes");
        assert_eq!(changes.changed[0].name, "Later: 1", "{changes:?}");
        assert_eq!(changes.changed[0].name_was.as_deref(), Some("Later: 0"));
        assert_eq!(out.results[0].effect, Some(Effect::Confirmed));
        assert!(out.settle_ms.unwrap() >= 300);
    }
}

#[tokio::test]
async fn a_click_that_changes_nothing_is_no_change() {
    for events in MODES {
        let (_, gui) = setup(events);
        let s = observe(&gui).await;
        let started = Instant::now();
        let out = click(&gui, &s.state_id, &id_of(&s.elements, "Plain"), Some(400))
            .await
            .expect("click");
        assert_eq!(out.results[0].effect, Some(Effect::NoChange));
        assert_eq!(out.settled, Some(true));
        assert!(out.changes.expect("changes").is_empty());
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn a_dialog_that_opens_is_observed_and_actable_at_once() {
    for events in MODES {
        let (fake, gui) = setup(events);
        let s = observe(&gui).await;
        let out = click(&gui, &s.state_id, &id_of(&s.elements, "Open dialog"), None)
            .await
            .expect("click");
        assert_eq!(out.results[0].effect, Some(Effect::Confirmed));
        let changes = out.changes.expect("changes");
        let opened = &changes.opened[0];
        assert_eq!(
            (opened.window_id.as_str(), opened.title.as_str()),
            ("0x2", "Dialog")
        );
        let ok = id_of(&opened.elements, "OK");
        // Its own state_id acts on its elements: no gui_state in between.
        let shut = gui
            .action(ActionRequest {
                window_id: "0x2".into(),
                state_id: opened.state_id.clone().expect("the dialog's state_id"),
                actions: json!([{"type": "click", "element_id": ok}]),
                ..Default::default()
            })
            .await
            .expect("click OK");
        assert!(!fake.0.lock().unwrap().dialog, "OK closed the dialog");
        assert_eq!(shut.changes.expect("changes").closed[0].window_id, "0x2");
        // The main window's own next state_id is still good.
        let next = out.state_id.expect("main window state_id");
        click(&gui, &next, &id_of(&s.elements, "Feature"), None)
            .await
            .expect("main window acts with its own state_id");
        // The text form names the dialog's state_id and lists its elements.
        let text = outline::changes_text(&changes);
        assert!(
            text.contains("opened window 0x2") && text.contains("state_id st_") && text.contains("\"OK\""),
            "{text}"
        );
    }
}

#[tokio::test]
async fn the_window_that_replaces_a_closed_one_comes_observed() {
    for events in MODES {
        let (_, gui) = setup(events);
        let s = observe(&gui).await;
        let out = click(&gui, &s.state_id, &id_of(&s.elements, "Next"), None)
            .await
            .expect("click");
        assert_eq!(out.state_id, None, "the acted-on window is gone");
        let changes = out.changes.expect("changes");
        assert_eq!(changes.closed[0].window_id, "0x1");
        let next = &changes.opened[0];
        assert_eq!(next.window_id, "0x2");
        gui.action(ActionRequest {
            window_id: "0x2".into(),
            state_id: next.state_id.clone().expect("the new window's state_id"),
            actions: json!([{"type": "click", "element_id": id_of(&next.elements, "OK")}]),
            ..Default::default()
        })
        .await
        .expect("acts on the new window without gui_state");
    }
}

#[tokio::test]
async fn a_button_that_closes_the_window() {
    for events in MODES {
        let (_, gui) = setup(events);
        let s = observe(&gui).await;
        let out = click(&gui, &s.state_id, &id_of(&s.elements, "Close"), None)
            .await
            .expect("click");
        assert_eq!(out.state_id, None);
        let changes = out.changes.expect("changes");
        assert_eq!(changes.closed[0].window_id, "0x1");
        assert_eq!(out.results[0].effect, Some(Effect::Confirmed));
        assert!(out.results[0].evidence.as_deref().unwrap().contains("closed"));
        let e = gui
            .state(StateRequest {
                window_id: "0x1".into(),
                ..Default::default()
            })
            .await
            .expect_err("gone");
        assert_eq!(e.code, ErrorCode::WindowNotFound);
    }
}

#[tokio::test]
async fn a_window_that_never_stops_is_not_settled_within_the_bound() {
    for events in MODES {
        let (fake, gui) = setup(events);
        fake.0.lock().unwrap().animating = Some(Instant::now());
        let s = observe(&gui).await;
        let started = Instant::now();
        let out = click(&gui, &s.state_id, &id_of(&s.elements, "Feature"), Some(500))
            .await
            .expect("click");
        assert_eq!(out.settled, Some(false));
        assert!(started.elapsed() < Duration::from_millis(1500));
        assert!(out.state_id.is_some());
    }
}

#[tokio::test]
async fn observe_none_and_full() {
    for events in MODES {
        let (_, gui) = setup(events);
        let s = observe(&gui).await;
        let feature = id_of(&s.elements, "Feature");
        let none = gui
            .action(ActionRequest {
                window_id: "0x1".into(),
                state_id: s.state_id,
                actions: json!([{"type": "click", "element_id": feature}]),
                observe: ObserveAfter::None,
                ..Default::default()
            })
            .await
            .expect("none");
        assert!(none.state_id.is_none() && none.changes.is_none() && none.results[0].effect.is_none());
        let s = observe(&gui).await;
        let full = gui
            .action(ActionRequest {
                window_id: "0x1".into(),
                state_id: s.state_id,
                actions: json!([{"type": "click", "element_id": feature}]),
                observe: ObserveAfter::Full,
                screenshot: true,
                ..Default::default()
            })
            .await
            .expect("full");
        // The settled image comes with it, in the new state's coordinates.
        let shot = full.screenshot.clone().expect("screenshot info");
        assert_eq!((shot.width, shot.height), (300, 200));
        assert_eq!(full.image.as_ref().map(|i| i.bytes.len()), Some(shot.bytes));
        let obs = full.observation.expect("observation");
        assert_eq!(Some(obs.state_id.clone()), full.state_id);
        assert_eq!(obs.elements.len(), 12);
        let e = click(&gui, &s_id(&gui).await, "e1", Some(20_000))
            .await
            .expect_err("too long");
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }
}

async fn s_id(gui: &LocalGui) -> String {
    observe(gui).await.state_id
}

async fn act(gui: &LocalGui, state_id: &str, actions: serde_json::Value) -> ActionOutput {
    gui.action(ActionRequest {
        window_id: "0x1".into(),
        state_id: state_id.into(),
        actions,
        ..Default::default()
    })
    .await
    .expect("action")
}

#[tokio::test]
async fn each_action_is_judged_on_its_own_and_none_overtakes_another() {
    for events in MODES {
        let (fake, gui) = setup(events);
        let s = observe(&gui).await;
        let (later, plain) = (id_of(&s.elements, "Later"), id_of(&s.elements, "Plain"));
        let out = act(
            &gui,
            &s.state_id,
            json!([{"type": "click", "element_id": later}, {"type": "click", "element_id": plain}]),
        )
        .await;
        // The second click reached the application after the first one's effect.
        let performed = fake.0.lock().unwrap().performed.clone();
        assert_eq!(
            performed,
            [("later".to_string(), false), ("plain".to_string(), true)]
        );
        let (a, b) = (&out.results[0], &out.results[1]);
        assert_eq!(a.effect, Some(Effect::Confirmed), "{a:?}");
        assert!(a.evidence.as_deref().unwrap_or("").contains("Later: 1"), "{a:?}");
        // The plain label did nothing: its result borrows nothing from the first click.
        assert_eq!(b.effect, Some(Effect::NoChange), "events {events}: {b:?}");
    }
}

#[tokio::test]
async fn a_pressed_look_is_no_effect_and_a_deferred_press_is_waited_for() {
    for events in MODES {
        let (_fake, gui) = setup(events);
        let s = observe(&gui).await;
        let deferred = id_of(&s.elements, "Deferred");
        let out = act(
            &gui,
            &s.state_id,
            json!([{"type": "click", "element_id": deferred}]),
        )
        .await;
        let r = &out.results[0];
        assert_eq!(r.effect, Some(Effect::Confirmed), "{r:?}");
        let evidence = r.evidence.as_deref().unwrap_or("");
        assert!(evidence.contains("window \"Dialog\" opened"), "{evidence}");
        assert!(!evidence.contains("pressed"), "{evidence}");
        let changes = out.changes.expect("changes");
        assert!(
            changes
                .opened
                .iter()
                .any(|w| w.window_id == "0x2" && w.state_id.is_some()),
            "{changes:?}"
        );
    }
}

#[tokio::test]
async fn only_pixels_changed_is_unverifiable_and_a_flash_is_no_change() {
    for events in MODES {
        let (_fake, gui) = setup(events);
        let s = observe(&gui).await;
        let (paint, flash) = (id_of(&s.elements, "Paint"), id_of(&s.elements, "Flash"));
        let out = act(&gui, &s.state_id, json!([{"type": "click", "element_id": flash}])).await;
        let r = &out.results[0];
        // `pressed` and its pixels came and went: nothing happened.
        assert_eq!(r.effect, Some(Effect::NoChange), "events {events}: {r:?}");
        let out = act(
            &gui,
            out.state_id.as_deref().expect("state"),
            json!([{"type": "click", "element_id": paint}]),
        )
        .await;
        let r = &out.results[0];
        assert_eq!(r.effect, Some(Effect::Unverifiable), "{r:?}");
        assert!(
            r.unverified.as_deref().unwrap_or("").contains("pixels changed"),
            "{r:?}"
        );
    }
}

/// The pixels before an action are the capture kept after the last answer, with what was drawn
/// since pasted in: a window that drew by itself between two calls does not lend that to the
/// next action (a click that does nothing is `no_change`), and the window is not read whole
/// before the action. With a watch that misses the repaint, the same click would be told
/// "pixels changed", which is what the check against `lying_watch` shows.
#[tokio::test]
async fn a_change_drawn_between_two_calls_is_not_the_next_actions_effect() {
    for lying in [false, true] {
        let (fake, gui) = setup(true);
        {
            let mut app = fake.0.lock().unwrap();
            app.watching = true;
            app.lying_watch = lying;
        }
        let s = observe(&gui).await;
        // The kept capture is read in the background after the answer.
        let deadline = Instant::now() + Duration::from_secs(5);
        while fake.0.lock().unwrap().watched.is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let captures = {
            let mut app = fake.0.lock().unwrap();
            app.painted = true; // drawn by the application itself
            app.captures
        };
        let out = click(&gui, &s.state_id, &id_of(&s.elements, "Plain"), Some(400))
            .await
            .expect("click");
        let effect = out.results[0].effect;
        if lying {
            assert_ne!(effect, Some(Effect::NoChange), "{:?}", out.results[0]);
        } else {
            assert_eq!(effect, Some(Effect::NoChange), "{:?}", out.results[0]);
            // The pixels before the click came from the kept capture and its repaint.
            let before_click = fake.0.lock().unwrap().captures - captures;
            let settle_looks = out.settle_ms.unwrap_or(0) / 250 + 1;
            assert!(u64::from(before_click) <= settle_looks, "{before_click} captures");
        }
    }
}

#[tokio::test]
async fn a_kept_capture_whose_watch_is_lost_is_read_again_after_an_observation() {
    let (fake, gui) = setup(true);
    fake.0.lock().unwrap().watching = true;
    let kept = || async {
        let deadline = Instant::now() + Duration::from_secs(5);
        while fake.0.lock().unwrap().watched.is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The background task is done once it has put what it read back.
        tokio::time::sleep(Duration::from_millis(50)).await;
        fake.0.lock().unwrap().captures
    };
    observe(&gui).await;
    let first = kept().await;
    assert_eq!(first, 1, "the first observation's pixels are kept");
    // Observed again with the watch intact: brought up to date, not read whole.
    observe(&gui).await;
    assert_eq!(kept().await, first);
    // The watch lost (the window id now names a restarted application's window): read whole.
    fake.0.lock().unwrap().watched = None;
    observe(&gui).await;
    assert_eq!(kept().await, first + 1);
}
