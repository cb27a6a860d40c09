//! Reading an action's effect back over AT-SPI: text, numbers and states after an action, the
//! selection of a list or tree, the application's open modal dialogs, a round trip through an
//! application's main loop, the focus / text-change events that say where typing landed, and
//! each application's activity (its relevant events, which settling after actions waits on).

use crate::atspi::{
    value_as_ref, Atspi, CallError, FrameInfo, ObjRef, IFACE_ACCESSIBLE, IFACE_REGISTRY, IFACE_TABLE,
    IFACE_TEXT, IFACE_VALUE, REGISTRY_BUS, REGISTRY_PATH, ROOT_PATH,
};
use futures_util::StreamExt;
use lsm_core::activity::LAYOUT_STATES;
use lsm_core::{Activity, ActivityEvent, GuiResult, Reach};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zbus::zvariant::OwnedValue;

const IFACE_SELECTION: &str = "org.a11y.atspi.Selection";
const IFACE_EVENT_OBJECT: &str = "org.a11y.atspi.Event.Object";
const IFACE_EVENT_WINDOW: &str = "org.a11y.atspi.Event.Window";
/// The events watched: where keyboard input goes and lands (focus, text, caret), and what
/// changes an application's elements or windows (its activity). Applications send events only
/// while some client listens for them, so they are registered with the registry.
const WATCHED_EVENTS: &[&str] = &[
    "object:state-changed",
    "object:text-changed",
    "object:text-caret-moved",
    "object:children-changed",
    "object:property-change:accessible-name",
    "object:property-change:accessible-value",
    "object:property-change:accessible-description",
    "object:value-changed",
    "object:bounds-changed",
    // Popups (a completion list under an entry) come and go while an application digests input.
    "window:create",
    "window:destroy",
];
/// Times of the latest relevant events kept per application (GTK 3 announces a new layout of
/// every widget of a window, 100-odd for the widget factory, when the window becomes inactive).
const RECENT_EVENTS: usize = 256;
/// Applications whose activity is kept; the record starts over when more sent events.
const MAX_APPS: usize = 512;
/// Objects whose last announced bounds (and object-state pairs whose last announced value) are
/// kept; the record starts over when more announced.
const MAX_BOUNDS: usize = 8192;
/// Longest text read back, in characters.
const MAX_READ_CHARS: i64 = 8192;
/// Roles of top-levels that block their application while shown.
const DIALOG_ROLES: &[&str] = &["dialog", "alert", "file_chooser", "color_chooser", "font_chooser"];

#[derive(Default)]
struct Seen {
    focused: Option<ObjRef>,
    /// The object whose text last changed or whose caret last moved, and when.
    text: Option<(ObjRef, Instant)>,
    /// When a window (a popup, say) was last created or destroyed.
    window: Option<Instant>,
    /// Relevant events per application (bus name).
    activity: HashMap<String, Activity>,
    /// The events are being watched.
    watching: bool,
    /// The last bounds each object announced: GTK 3 announces them at every allocation, most
    /// often unchanged (every frame while anything in the window animates).
    bounds: HashMap<ObjRef, [i32; 4]>,
    /// The last value each object announced for each state: GTK 3 announces a window's
    /// `iconified 0` again at every focus change of the window, which changes nothing.
    states: HashMap<(ObjRef, String), i32>,
}

/// The properties whose change is an element's name, value or description changing.
const TEXTS: &[&str] = &["accessible-name", "accessible-value", "accessible-description"];

/// Whether an event says an application's elements or windows changed (caret moves and
/// property changes such as a table summary do not). An object saying it is not defunct does
/// not: GTK 3 says so of every object it makes for a client that asks about one (a walk of a
/// page never walked makes hundreds), and an element added to the window is announced as a
/// child added.
fn is_activity(member: &str, detail: &str, value: i32) -> bool {
    match member {
        "StateChanged" => !(detail == "defunct" && value == 0),
        "Create" | "Destroy" | "ChildrenChanged" | "TextChanged" | "ValueChanged" | "BoundsChanged" => true,
        "PropertyChange" => TEXTS.contains(&detail),
        _ => false,
    }
}

/// What a relevant event may have changed: a state of its sender that hides, shows or moves
/// nothing, or its name, description, value or text, changes only that object; a new box of its
/// sender moves only what lies in it.
fn reach_of(member: &str, detail: &str) -> Reach {
    match member {
        "StateChanged" if LAYOUT_STATES.contains(&detail) => Reach::OwnLayout,
        "StateChanged" => Reach::OwnState,
        "PropertyChange" if TEXTS.contains(&detail) => Reach::OwnContent,
        "TextChanged" | "ValueChanged" => Reach::OwnContent,
        "BoundsChanged" => Reach::OwnBounds,
        _ => Reach::Anything,
    }
}

/// What the event watcher has seen so far. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Events {
    seen: Arc<Mutex<Seen>>,
}

impl Events {
    /// The object that last gained the keyboard focus, if any was seen.
    pub(crate) fn focused(&self) -> Option<ObjRef> {
        self.seen.lock().ok()?.focused.clone()
    }

    /// The object whose text changed (or caret moved) most recently at or after `since`.
    pub(crate) fn text_changed_since(&self, since: Instant) -> Option<ObjRef> {
        let seen = self.seen.lock().ok()?;
        seen.text
            .as_ref()
            .filter(|(_, at)| *at >= since)
            .map(|(o, _)| o.clone())
    }

    /// When a window was last created or destroyed, if one was.
    pub(crate) fn last_window_event(&self) -> Option<Instant> {
        self.seen.lock().ok()?.window
    }

    /// The activity of the application at that bus name (none yet: nothing sent since the
    /// watch began). `None`: events are not watched.
    pub(crate) fn activity(&self, bus: &str) -> Option<Activity> {
        let seen = self.seen.lock().ok()?;
        if !seen.watching {
            return None;
        }
        Some(seen.activity.get(bus).cloned().unwrap_or_default())
    }

    fn record(&self, member: &str, obj: ObjRef, detail: &str, d1: i32, bounds: Option<[i32; 4]>) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        // What is no activity is not remembered either (GTK 3's `defunct 0` for every object a
        // walk makes would fill the record of states announced).
        let relevant = is_activity(member, detail, d1);
        let moved = relevant
            && match bounds {
                Some(b) => {
                    if seen.bounds.len() >= MAX_BOUNDS && !seen.bounds.contains_key(&obj) {
                        seen.bounds.clear();
                    }
                    seen.bounds.insert(obj.clone(), b) != Some(b)
                }
                None if member == "StateChanged" => {
                    let key = (obj.clone(), detail.to_string());
                    if seen.states.len() >= MAX_BOUNDS && !seen.states.contains_key(&key) {
                        seen.states.clear();
                    }
                    seen.states.insert(key, d1) != Some(d1)
                }
                None => true,
            };
        if moved {
            tracing::trace!("activity {member} {detail} {d1} {obj} {bounds:?}");
            if seen.activity.len() >= MAX_APPS && !seen.activity.contains_key(&obj.bus) {
                seen.activity.clear();
            }
            let app = seen.activity.entry(obj.bus.clone()).or_default();
            app.count += 1;
            if app.recent.len() >= RECENT_EVENTS {
                app.recent.remove(0);
            }
            app.recent.push(ActivityEvent {
                at: Instant::now(),
                source: obj.encode(),
                reach: reach_of(member, detail),
            });
        }
        match member {
            "Create" | "Destroy" => seen.window = Some(Instant::now()),
            "StateChanged" if detail == "focused" && d1 == 1 => seen.focused = Some(obj),
            "TextChanged" | "TextCaretMoved" => seen.text = Some((obj, Instant::now())),
            _ => {}
        }
    }
}

/// An AT-SPI object event body: `(detail, detail1, detail2, any_data, properties)`.
type EventBody = (String, i32, i32, OwnedValue, HashMap<String, OwnedValue>);

impl Atspi {
    /// Starts watching focus and text events for the life of the connection. Never fails: without
    /// events, verification reads the element the action named instead.
    pub(crate) async fn watch_events(&self) -> Events {
        let events = Events::default();
        // Object and window events only: the bus routes nothing else to this listener.
        let (objects, windows) = tokio::join!(
            self.signal_stream(IFACE_EVENT_OBJECT),
            self.signal_stream(IFACE_EVENT_WINDOW)
        );
        let Some(objects) = objects else {
            return events;
        };
        let mut stream = match windows {
            Some(w) => futures_util::stream::select(objects, w).boxed(),
            None => objects.boxed(),
        };
        futures_util::future::join_all(WATCHED_EVENTS.iter().map(|name| async move {
            // Registries before 2.42 take only the event name.
            if self
                .register_event(&(*name, Vec::<String>::new(), ""))
                .await
                .is_err()
            {
                let _ = self.register_event(&(*name,)).await;
            }
        }))
        .await;
        if let Ok(mut seen) = events.seen.lock() {
            seen.watching = true;
        }
        let sink = events.clone();
        tokio::spawn(async move {
            while let Some(msg) = stream.next().await {
                let Ok(msg) = msg else { continue };
                let header = msg.header();
                let (Some(member), Some(sender), Some(path)) =
                    (header.member(), header.sender(), header.path())
                else {
                    continue;
                };
                let member = member.as_str();
                if header.interface().map(|i| i.as_str()) == Some(IFACE_EVENT_WINDOW) {
                    sink.record(member, ObjRef::new(sender.as_str(), path.as_str()), "", 0, None);
                    continue;
                }
                if !matches!(
                    member,
                    "StateChanged"
                        | "TextChanged"
                        | "TextCaretMoved"
                        | "ChildrenChanged"
                        | "PropertyChange"
                        | "ValueChanged"
                        | "BoundsChanged"
                ) {
                    continue;
                }
                let Ok((detail, d1, _, data, _)) = msg.body().deserialize::<EventBody>() else {
                    continue;
                };
                let bounds = (member == "BoundsChanged")
                    .then(|| <(i32, i32, i32, i32)>::try_from(data).ok())
                    .flatten()
                    .map(|(x, y, w, h)| [x, y, w, h]);
                let obj = ObjRef::new(sender.as_str(), path.as_str());
                sink.record(member, obj, &detail, d1, bounds);
            }
        });
        events
    }

    /// The signals of one AT-SPI event interface on this connection (bounded wait for the
    /// match rule). `None`: not available.
    async fn signal_stream(&self, iface: &'static str) -> Option<zbus::MessageStream> {
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface(iface)
            .map_err(|e| tracing::debug!("event match rule: {e}"))
            .ok()?
            .build();
        let stream = tokio::time::timeout(
            Duration::from_secs(2),
            zbus::MessageStream::for_match_rule(rule, self.connection(), Some(256)),
        )
        .await;
        match stream {
            Ok(Ok(s)) => Some(s),
            other => {
                tracing::debug!("no AT-SPI {iface} stream: {:?}", other.err());
                None
            }
        }
    }

    /// `Registry.RegisterEvent` with this body, so that applications send the event.
    async fn register_event<B>(&self, body: &B) -> Result<(), CallError>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType + Sync,
    {
        let limit = Duration::from_secs(1);
        self.call_t::<_, ()>(
            limit,
            REGISTRY_BUS,
            REGISTRY_PATH,
            IFACE_REGISTRY,
            "RegisterEvent",
            body,
        )
        .await
    }

    /// The whole text of a Text object (up to a bound). `None`: it has no text interface.
    pub(crate) async fn read_text(&self, obj: &ObjRef) -> GuiResult<Option<String>> {
        let count = match self.prop_int(obj, IFACE_TEXT, "CharacterCount").await {
            Ok(c) => c,
            Err(CallError::Unsupported(_)) => return Ok(None),
            Err(e) => return Err(e.into_gui(obj)),
        };
        let end = count.clamp(0, MAX_READ_CHARS) as i32;
        if end == 0 {
            return Ok(Some(String::new()));
        }
        match self
            .call::<_, String>(obj, IFACE_TEXT, "GetText", &(0i32, end))
            .await
        {
            Ok(t) => Ok(Some(t)),
            Err(CallError::Unsupported(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// `Text.CharacterCount` alone (a password field's length). `None`: no text interface.
    pub(crate) async fn char_count(&self, obj: &ObjRef) -> GuiResult<Option<i64>> {
        match self.prop_int(obj, IFACE_TEXT, "CharacterCount").await {
            Ok(c) => Ok(Some(c)),
            Err(CallError::Unsupported(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// `Value.CurrentValue`. `None`: no value interface.
    pub(crate) async fn read_number(&self, obj: &ObjRef) -> GuiResult<Option<f64>> {
        match self.prop_f64(obj, IFACE_VALUE, "CurrentValue").await {
            Ok(v) => Ok(Some(v)),
            Err(CallError::Unsupported(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// The object's states. `None`: it is gone.
    pub(crate) async fn read_states(&self, obj: &ObjRef) -> GuiResult<Option<Vec<String>>> {
        match self.states_of(obj).await {
            Ok(s) => Ok(Some(s)),
            Err(CallError::Gone(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Whether `obj` is among its parent's children, where a walk finds it (GTK 3 parents a
    /// notebook's tab labels to the notebook without listing them). A failure answers yes.
    pub(crate) async fn listed_in_parent(&self, obj: &ObjRef) -> bool {
        self.call::<_, i32>(obj, IFACE_ACCESSIBLE, "GetIndexInParent", &())
            .await
            .map_or(true, |i| i >= 0)
    }

    /// Selects `obj` alone through its parent's `Selection` (a list or tree selecting a row).
    /// `false`: the parent has no selection interface or refused.
    pub(crate) async fn select_in_parent(&self, obj: &ObjRef) -> GuiResult<bool> {
        let (parent, index) = tokio::join!(
            self.prop(obj, IFACE_ACCESSIBLE, "Parent"),
            self.call::<_, i32>(obj, IFACE_ACCESSIBLE, "GetIndexInParent", &()),
        );
        let (Some(parent), Ok(index)) = (parent.ok().as_ref().and_then(value_as_ref), index) else {
            return Ok(false);
        };
        if index < 0 {
            return Ok(false);
        }
        // A click selects only what it lands on. Any failure means "not this way" (Qt has no
        // Selection on its trees, only Table): the caller tries the next way, then clicks.
        if self
            .call::<_, bool>(&parent, IFACE_SELECTION, "ClearSelection", &())
            .await
            .is_ok()
        {
            if let Ok(true) = self
                .call::<_, bool>(&parent, IFACE_SELECTION, "SelectChild", &(index,))
                .await
            {
                return Ok(true);
            }
        }
        self.select_row(&parent, index).await
    }

    /// Selects the row of child `index` alone through the parent's `Table` (Qt trees and tables).
    async fn select_row(&self, table: &ObjRef, index: i32) -> GuiResult<bool> {
        let Ok(row) = self
            .call::<_, i32>(table, IFACE_TABLE, "GetRowAtIndex", &(index,))
            .await
        else {
            return Ok(false);
        };
        if row < 0 {
            return Ok(false);
        }
        // Add first (a single-selection view replaces its selection), then drop the others.
        let added = self
            .call::<_, bool>(table, IFACE_TABLE, "AddRowSelection", &(row,))
            .await
            .unwrap_or(false);
        if !added {
            return Ok(false);
        }
        let selected: Vec<i32> = self
            .call(table, IFACE_TABLE, "GetSelectedRows", &())
            .await
            .unwrap_or_default();
        for r in selected.into_iter().filter(|r| *r != row) {
            let _ = self
                .call::<_, bool>(table, IFACE_TABLE, "RemoveRowSelection", &(r,))
                .await;
        }
        Ok(true)
    }

    /// One call answered by the application `bus`: the application's main loop has run since
    /// everything sent before it (X input already in its socket included) arrived. `false`:
    /// no answer within `limit`.
    pub(crate) async fn round_trip(&self, bus: &str, limit: Duration) -> bool {
        let root = ObjRef::new(bus, ROOT_PATH);
        let started = Instant::now();
        // Twice: the first may be answered in the same main loop iteration that read the input.
        for _ in 0..2 {
            let left = limit.saturating_sub(started.elapsed());
            let call =
                self.call_t::<_, Vec<u32>>(left, &root.bus, &root.path, IFACE_ACCESSIBLE, "GetState", &());
            if call.await.is_err() {
                return false;
            }
        }
        true
    }

    /// A showing dialog of the application `bus` (the one a blocked action opened), preferring
    /// one marked modal or active.
    pub(crate) async fn open_dialog(&self, bus: &str) -> GuiResult<Option<FrameInfo>> {
        let frames = self.frames(&ObjRef::new(bus, ROOT_PATH)).await?;
        let has = |f: &FrameInfo, s: &str| f.states.iter().any(|x| x == s);
        Ok(frames
            .into_iter()
            .filter(|f| has(f, "showing") && (DIALOG_ROLES.contains(&f.role.as_str()) || has(f, "modal")))
            .max_by_key(|f| (has(f, "modal"), has(f, "active"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_announced_again_unchanged_is_no_activity() {
        let events = Events::default();
        events.seen.lock().unwrap().watching = true;
        let frame = ObjRef::new(":1.5", "/org/a11y/atspi/accessible/1");
        let count = || events.activity(":1.5").unwrap_or_default().count;
        events.record("StateChanged", frame.clone(), "iconified", 0, None);
        assert_eq!(count(), 1, "the first announcement is not known to be unchanged");
        events.record("StateChanged", frame.clone(), "iconified", 0, None);
        events.record("StateChanged", frame.clone(), "iconified", 0, None);
        assert_eq!(count(), 1);
        events.record("StateChanged", frame.clone(), "checked", 0, None);
        events.record("StateChanged", frame.clone(), "iconified", 1, None);
        events.record("StateChanged", frame.clone(), "iconified", 0, None);
        assert_eq!(count(), 4);
        // Other kinds of events are all counted.
        events.record("TextChanged", frame.clone(), "insert", 0, None);
        events.record("TextChanged", frame, "insert", 0, None);
        assert_eq!(count(), 6);
    }

    #[test]
    fn only_a_state_that_moves_nothing_reaches_its_sender_alone() {
        assert_eq!(reach_of("StateChanged", "checked"), Reach::OwnState);
        // A window activated when another is clicked lays nothing out again.
        assert_eq!(reach_of("StateChanged", "active"), Reach::OwnState);
        assert_eq!(reach_of("StateChanged", "focused"), Reach::OwnState);
        for layout in ["showing", "visible", "expanded", "defunct"] {
            assert_eq!(reach_of("StateChanged", layout), Reach::OwnLayout, "{layout}");
        }
        for member in ["ChildrenChanged", "Create"] {
            assert_eq!(reach_of(member, ""), Reach::Anything, "{member}");
        }
        // A new box: it is read again, and the window walked if it moved.
        assert_eq!(reach_of("BoundsChanged", ""), Reach::OwnBounds);
        // A name, value or text changed: that object is read again (and the window walked if
        // its box changed with it).
        assert_eq!(reach_of("PropertyChange", "accessible-name"), Reach::OwnContent);
        assert_eq!(reach_of("TextChanged", "insert"), Reach::OwnContent);
        assert_eq!(reach_of("ValueChanged", ""), Reach::OwnContent);
    }

    #[test]
    fn an_object_made_for_a_client_is_no_activity() {
        // GTK 3 announces `defunct 0` for each object it makes when a client first asks.
        assert!(!is_activity("StateChanged", "defunct", 0));
        // An object gone, and every other state, are.
        assert!(is_activity("StateChanged", "defunct", 1));
        assert!(is_activity("StateChanged", "showing", 0));
        assert!(is_activity("StateChanged", "checked", 0));
        assert!(is_activity("ChildrenChanged", "add", 0));
        assert!(!is_activity("PropertyChange", "accessible-table-summary", 0));
    }

    #[test]
    fn the_record_of_an_application_leaves_out_objects_made_for_a_client() {
        let events = Events::default();
        events.seen.lock().unwrap().watching = true;
        let obj = |n: u32| ObjRef::new(":1.5", format!("/org/a11y/atspi/accessible/{n}"));
        for n in 0..500 {
            events.record("StateChanged", obj(n), "defunct", 0, None);
        }
        let a = events.activity(":1.5").unwrap_or_default();
        assert_eq!((a.count, a.recent.len()), (0, 0));
        assert!(events.seen.lock().unwrap().states.is_empty());
        // A state that changes is recorded, once per change.
        events.record("StateChanged", obj(1), "checked", 1, None);
        events.record("StateChanged", obj(1), "checked", 1, None);
        events.record("StateChanged", obj(1), "defunct", 1, None);
        let a = events.activity(":1.5").unwrap_or_default();
        assert_eq!(a.count, 2);
        assert_eq!(a.recent[0].reach, Reach::OwnState);
        assert_eq!(a.recent[1].reach, Reach::OwnLayout);
        // A new box, announced once: its own.
        events.record("BoundsChanged", obj(2), "", 0, Some([0, 0, 10, 10]));
        events.record("BoundsChanged", obj(2), "", 0, Some([0, 0, 10, 10]));
        let a = events.activity(":1.5").unwrap_or_default();
        assert_eq!(a.count, 3);
        assert_eq!(a.recent[2].reach, Reach::OwnBounds);
    }
}
