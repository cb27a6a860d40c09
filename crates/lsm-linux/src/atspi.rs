//! The AT-SPI half of the Linux backend: applications, their top-level windows, fast tree walks and
//! semantic actions over the accessibility bus.
//!
//! Every D-Bus call goes through `Atspi::call_t`, which bounds it with a timeout: a hung
//! application must never block a caller. Calls are raw `call_method`s rather than generated
//! proxies so that replies the `atspi` types reject (unknown roles, states or interfaces from a
//! newer toolkit) still decode, and so that no proxy property cache or match rule is set up.
//!
//! Speed comes from few calls, all in flight at once: the application answers one call at a time
//! (30–150 µs each here), so the number of calls is the cost. Toolkit quirks decide which shortcuts
//! are safe (see `Flavor`): `Properties.GetAll` only for GTK (Qt 5.15 crashes on it),
//! `Cache.GetItems` for GTK 3 and 4, the cache's parent links for GTK 3, and how `Text.GetText` may
//! be bounded. GTK 3's bridge (at-spi2-atk) serves the cache only once some client has registered
//! an event listener with the registry, so a walk that finds it missing registers one narrow
//! listener for the life of the connection (what every screen reader does, and more).
//!
//! Only what is on screen is read: hidden objects, objects without area and objects outside the
//! window or outside the scrolled area of their scroll pane / list are dropped with their subtrees
//! without reading them. A huge container (GTK 3 creates one accessible per tree view cell) is read
//! only around its visible area; its node keeps `child_count` and gets a `summary`.

use ::atspi as at;
use futures_util::stream::{FuturesUnordered, StreamExt};
use lsm_core::{ErrorCode, GuiError, GuiResult, Rect};
use serde::de::DeserializeOwned;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zbus::zvariant::{self as zv, OwnedObjectPath, OwnedValue};

/// Bound on every single D-Bus call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on the per-application look-ups of `applications()`: a hung app must not slow every listing.
const APP_INFO_TIMEOUT: Duration = Duration::from_millis(700);
/// Objects fetched at once during a walk. Each is up to ~6 concurrent calls; the application answers
/// them in order, so this mostly hides round-trip latency.
const WALK_CONCURRENCY: usize = 64;
/// Longest `value` text read from a Text object, in characters.
const MAX_TEXT_CHARS: i32 = 4096;
/// Above this many children only the visible ones are read (see `Atspi::visible_children`): a
/// `GetChildren` on a huge table makes the application create an accessible for every cell.
const MAX_BULK_CHILDREN: i32 = 512;
/// A container that manages its descendants (tables, trees) is read around its visible area
/// already above this many children.
const MAX_MANAGED_CHILDREN: i32 = 64;
/// Points probed down a huge container's visible area to find the children shown there.
const LIST_PROBES: i32 = 7;
/// No row is shorter than this (px): bounds how many children lie between two probes.
const MIN_ROW_PX: i32 = 8;
/// Children read from a huge container when probing finds none (no point lookup support).
const LIST_FALLBACK: usize = 64;
/// The event listener registered to make GTK 3 serve `Cache.GetItems`: one no application sends in
/// normal use, so registering it costs nothing but the activation of the bridge.
const CACHE_LISTENER_EVENT: &str = "object:property-change:accessible-table-summary";
/// After a failed activation, the cache of that application is not asked for again for this long.
const CACHE_RETRY: Duration = Duration::from_secs(10);
/// Bound on opening a direct connection to an application.
const PEER_TIMEOUT: Duration = Duration::from_millis(500);

pub(crate) const REGISTRY_BUS: &str = "org.a11y.atspi.Registry";
pub(crate) const REGISTRY_PATH: &str = "/org/a11y/atspi/registry";
pub(crate) const IFACE_REGISTRY: &str = "org.a11y.atspi.Registry";
pub(crate) const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
const CACHE_PATH: &str = "/org/a11y/atspi/cache";
const IFACE_CACHE: &str = "org.a11y.atspi.Cache";
const NULL_PATH: &str = "/org/a11y/atspi/null";
pub(crate) const IFACE_ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
const IFACE_ACTION: &str = "org.a11y.atspi.Action";
const IFACE_APPLICATION: &str = "org.a11y.atspi.Application";
const IFACE_COMPONENT: &str = "org.a11y.atspi.Component";
const IFACE_EDITABLE_TEXT: &str = "org.a11y.atspi.EditableText";
const IFACE_TABLE: &str = "org.a11y.atspi.Table";
pub(crate) const IFACE_TEXT: &str = "org.a11y.atspi.Text";
pub(crate) const IFACE_VALUE: &str = "org.a11y.atspi.Value";
pub(crate) const IFACE_PROPERTIES: &str = "org.freedesktop.DBus.Properties";
const IFACE_PREFIX: &str = "org.a11y.atspi.";

/// A reference to one accessible object: D-Bus unique bus name + object path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjRef {
    pub bus: String,
    pub path: String,
}

impl ObjRef {
    pub fn new(bus: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            bus: bus.into(),
            path: path.into(),
        }
    }

    /// `"bus|path"`; neither part can contain `|`.
    pub fn encode(&self) -> String {
        format!("{}|{}", self.bus, self.path)
    }

    /// The inverse of [`ObjRef::encode`]; `None` unless both parts are valid D-Bus names.
    pub fn decode(s: &str) -> Option<ObjRef> {
        let (bus, path) = s.split_once('|')?;
        zbus::names::BusName::try_from(bus).ok()?;
        zv::ObjectPath::try_from(path).ok()?;
        Some(ObjRef::new(bus, path))
    }

    fn is_null(&self) -> bool {
        self.bus.is_empty() || self.path == NULL_PATH
    }
}

impl std::fmt::Display for ObjRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.bus, self.path)
    }
}

/// One application registered on the accessibility bus.
#[derive(Debug, Clone)]
pub struct AppInfo {
    /// The application root object.
    pub obj: ObjRef,
    pub pid: Option<u32>,
    pub name: String,
    /// `ToolkitName`, e.g. "GTK", "Qt"; empty when the application did not say.
    pub toolkit: String,
    pub toolkit_version: String,
}

/// One top-level child of an application (frame, dialog, window, alert, ...).
#[derive(Debug, Clone)]
pub struct FrameInfo {
    pub obj: ObjRef,
    pub role: String,
    pub name: String,
    pub screen_extents: Option<Rect>,
    pub states: Vec<String>,
}

/// One entry of `org.a11y.atspi.Cache.GetItems`: object, application, parent, index in parent,
/// child count, interfaces, name, role, description, state bits.
pub type CacheItem = (
    (String, OwnedObjectPath),
    (String, OwnedObjectPath),
    (String, OwnedObjectPath),
    i32,
    i32,
    Vec<String>,
    String,
    u32,
    String,
    Vec<u32>,
);

/// Which coordinates `Component.GetExtents` is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordKind {
    Screen,
    Window,
}

impl CoordKind {
    fn atspi(self) -> u32 {
        match self {
            CoordKind::Screen => 0,
            CoordKind::Window => 1,
        }
    }
}

/// One accessible object as read from the application.
#[derive(Debug, Clone)]
pub struct RawNode {
    pub obj: ObjRef,
    /// Index of the parent in the returned Vec.
    pub parent: Option<usize>,
    /// The walk root (usually the frame) is 0.
    pub depth: u32,
    /// AT-SPI role name in snake_case, e.g. "push_button".
    pub role: String,
    pub name: String,
    pub description: String,
    /// Text content (at most 4096 characters) for Text objects, else the formatted
    /// `Value.CurrentValue`, else None. Password fields give one "•" per character.
    pub value: Option<String>,
    /// snake_case names of the states that are set.
    pub states: Vec<String>,
    /// Action interface action names.
    pub actions: Vec<String>,
    /// `Component.GetExtents` in the requested coordinates; None without Component, when empty
    /// or (-1,-1).
    pub extents: Option<Rect>,
    /// Short interface names: "Action", "Text", "Component", ...
    pub interfaces: Vec<String>,
    /// Number of children the object has, whether or not the walk read them.
    pub child_count: i32,
    /// What the walk left out below this object on purpose, in words for the model: a huge list
    /// read only around its visible area, or children beyond `max_depth`. The walk also appends
    /// it to `description` in brackets (the element model has no field for it yet).
    pub summary: Option<String>,
}

impl RawNode {
    pub fn has_state(&self, state: &str) -> bool {
        self.states.iter().any(|s| s == state)
    }
    pub fn has_interface(&self, iface: &str) -> bool {
        self.interfaces.iter().any(|s| s == iface)
    }
}

/// Bounds of a walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    pub max_elements: usize,
    pub max_depth: u32,
    /// Skip hidden and off-screen subtrees (counted in the result).
    pub prune: bool,
    pub deadline: Instant,
    pub coords: CoordKind,
}

#[derive(Debug, Clone)]
pub struct WalkResult {
    /// Depth-first pre-order; `parent` indexes into this Vec.
    pub nodes: Vec<RawNode>,
    pub truncated: bool,
    pub truncated_reason: Option<String>,
    /// Subtrees skipped on purpose, not walked: hidden ones, and ones with no area or outside
    /// the window or the scrolled area of their container.
    pub skipped_hidden: usize,
    pub skipped_off_screen: usize,
}

/// Why one call failed, before it becomes a `GuiError`.
#[derive(Debug, Clone)]
pub(crate) enum CallError {
    Timeout(String),
    /// The object or its application no longer exists.
    Gone(String),
    /// The object does not implement the interface, method or property.
    Unsupported(String),
    Other(String),
}

impl CallError {
    pub(crate) fn into_gui(self, obj: &ObjRef) -> GuiError {
        match self {
            CallError::Timeout(what) => GuiError::timeout(format!("AT-SPI call {what} on {obj}")),
            CallError::Gone(why) => GuiError::new(
                ErrorCode::ElementStale,
                format!("the accessible object {obj} no longer exists ({why}); observe the window again"),
            ),
            CallError::Unsupported(why) => GuiError::new(
                ErrorCode::UnsupportedAction,
                format!("the accessible object {obj} does not support this ({why})"),
            ),
            CallError::Other(why) => GuiError::backend(format!("AT-SPI call on {obj} failed: {why}")),
        }
    }
}

fn classify(what: &str, e: zbus::Error) -> CallError {
    match e {
        zbus::Error::MethodError(name, detail, _) => {
            let msg = format!(
                "{what}: {}{}",
                name.as_str(),
                detail.map(|d| format!(": {d}")).unwrap_or_default()
            );
            match name.as_str() {
                "org.freedesktop.DBus.Error.UnknownObject"
                | "org.freedesktop.DBus.Error.ServiceUnknown"
                | "org.freedesktop.DBus.Error.NameHasNoOwner"
                | "org.freedesktop.DBus.Error.NoReply"
                | "org.freedesktop.DBus.Error.Disconnected" => CallError::Gone(msg),
                "org.freedesktop.DBus.Error.UnknownMethod"
                | "org.freedesktop.DBus.Error.UnknownInterface"
                | "org.freedesktop.DBus.Error.UnknownProperty"
                | "org.freedesktop.DBus.Error.NotSupported"
                | "org.freedesktop.DBus.Error.PropertyReadOnly" => CallError::Unsupported(msg),
                _ => CallError::Other(msg),
            }
        }
        other => CallError::Other(format!("{what}: {other}")),
    }
}

/// Connection to the accessibility bus. Cheap to clone.
#[derive(Clone)]
pub struct Atspi {
    conn: zbus::Connection,
    address: String,
    call_timeout: Duration,
    /// Application info by unique bus name: it never changes for a given connection.
    apps: Arc<Mutex<HashMap<String, AppInfo>>>,
    /// Toolkit name and version by unique bus name, for the toolkit-specific paths.
    toolkits: Arc<Mutex<HashMap<String, (String, String)>>>,
    /// Whether the event listener that makes GTK 3 serve its cache is registered (set once per
    /// connection; the registry drops it when the connection closes).
    listener: Arc<tokio::sync::OnceCell<bool>>,
    /// Applications whose cache could not be had, and when that was found.
    no_cache: Arc<Mutex<HashMap<String, Instant>>>,
    /// D-Bus calls made so far (for measurements).
    calls: Arc<AtomicUsize>,
    /// Direct (peer-to-peer) connections by application bus name; `None` inside: not offered.
    peers: Arc<Mutex<HashMap<String, PeerSlot>>>,
}

/// A direct connection to one application, opened once.
type PeerSlot = Arc<tokio::sync::OnceCell<Option<zbus::Connection>>>;

/// A slot that says "no direct connection".
fn no_peer() -> PeerSlot {
    Arc::new(tokio::sync::OnceCell::new_with(Some(None)))
}

impl std::fmt::Debug for Atspi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Atspi").field("address", &self.address).finish()
    }
}

/// What one object fetch produced.
struct Fetched {
    node: RawNode,
    /// Children to visit (empty unless asked for and the node is kept).
    children: Vec<ObjRef>,
    /// Children that were not listed for lack of element budget (the walk is then truncated).
    cut: usize,
    /// The clip for the children: the walk's clip, narrowed to a scrolling container's area.
    child_clip: Option<Rect>,
    /// False when the node is hidden or outside the clip: drop it with its subtree.
    keep: bool,
    /// With `keep` false: hidden (true) or off-screen (false).
    hidden: bool,
}

impl Fetched {
    fn dropped(node: RawNode, hidden: bool) -> Fetched {
        Fetched {
            node,
            children: Vec::new(),
            cut: 0,
            child_clip: None,
            keep: false,
            hidden,
        }
    }
}

/// The properties every object is read for first.
#[derive(Clone)]
struct Basics {
    role: String,
    states: Vec<String>,
    interfaces: Vec<String>,
    name: String,
    description: String,
    /// -1: unknown (the cache does not count the children of objects managing descendants).
    child_count: i32,
}

/// What `Cache.GetItems` told about an application's objects.
#[derive(Default)]
struct Prefetch {
    basics: HashMap<ObjRef, Basics>,
    /// Children in order, for the parents whose children the cache lists completely (its parent
    /// links and indices agree with the live child count). Only where the toolkit's links are
    /// trusted (`Flavor::cache_tree`).
    children: HashMap<ObjRef, Vec<ObjRef>>,
}

/// Shared state of one walk.
struct WalkCtx {
    pre: Option<Prefetch>,
    /// "showing" is reliable here: objects without it are not on screen (GTK 3, window shown).
    showing: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TextMode {
    /// `GetText(0, -1)`: all of it in one call (GTK 3; GTK 4.8 answers "" to it).
    ToEnd,
    /// `GetText(0, 4096)`: the toolkit clamps the end (GTK 4, Qt; GTK 3 would read past the end).
    Clamped,
    /// Ask `CharacterCount` first, then read at most [`MAX_TEXT_CHARS`].
    CountFirst,
    /// Only the length, as bullets.
    Masked,
}

/// How to talk to one toolkit: what it gets wrong decides the fastest safe calls.
#[derive(Clone, Copy, Debug)]
struct Flavor {
    /// `Properties.GetAll` works (GTK). Qt 5.15 crashes on it, so only where known to work.
    getall: bool,
    text: TextMode,
    /// `Cache.GetItems` gives live data for the whole application (GTK 3 and 4).
    cache: bool,
    /// The cache's parent links and indices agree with `GetChildren` (GTK 3; not GTK 4.8, whose
    /// stack pages disagree), so a complete set of them replaces the `GetChildren` call.
    cache_tree: bool,
    /// The cache appears only once an event listener is registered (at-spi2-atk: GTK 3).
    cache_needs_listener: bool,
    /// "showing" means on screen (GTK 3; GTK 4.8 never sets it below the window).
    showing: bool,
}

impl Flavor {
    fn of(toolkit: &str, version: &str) -> Flavor {
        let major = version
            .split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(0);
        let plain = Flavor {
            getall: false,
            text: TextMode::CountFirst,
            cache: false,
            cache_tree: false,
            cache_needs_listener: false,
            showing: false,
        };
        if toolkit.eq_ignore_ascii_case("gtk") && major >= 4 {
            Flavor {
                getall: true,
                text: TextMode::Clamped,
                cache: true,
                ..plain
            }
        } else if toolkit.eq_ignore_ascii_case("gtk") {
            Flavor {
                getall: true,
                text: TextMode::ToEnd,
                cache: true,
                cache_tree: true,
                cache_needs_listener: true,
                showing: true,
            }
        } else if toolkit.eq_ignore_ascii_case("qt") {
            Flavor {
                text: TextMode::Clamped,
                ..plain
            }
        } else {
            plain
        }
    }
}

/// One completed walk node waiting for the pre-order renumbering.
struct Slot {
    node: RawNode,
    parent: Option<usize>,
    order: usize,
    kids: Vec<usize>,
}

impl Atspi {
    /// Connects to the accessibility bus at `address`, else `$AT_SPI_BUS_ADDRESS`, else the address
    /// `org.a11y.Bus.GetAddress` gives on the session bus.
    pub async fn connect(address: Option<&str>) -> GuiResult<Atspi> {
        Self::connect_with_timeout(address, DEFAULT_CALL_TIMEOUT).await
    }

    /// [`Atspi::connect`] with another per-call timeout.
    pub async fn connect_with_timeout(address: Option<&str>, call_timeout: Duration) -> GuiResult<Atspi> {
        let env = std::env::var("AT_SPI_BUS_ADDRESS")
            .ok()
            .filter(|a| !a.trim().is_empty());
        let address = match address.map(str::to_string).or(env) {
            Some(a) => a,
            None => Self::address_from_session_bus(call_timeout).await?,
        };
        let builder = zbus::connection::Builder::address(address.as_str())
            .map_err(|e| GuiError::unavailable(format!("bad accessibility bus address {address:?}: {e}")))?;
        let conn = match tokio::time::timeout(call_timeout * 2, builder.build()).await {
            Err(_) => {
                return Err(GuiError::unavailable(format!(
                    "connecting to the accessibility bus {address} timed out"
                )))
            }
            Ok(Err(e)) => {
                return Err(GuiError::unavailable(format!(
                    "cannot connect to the accessibility bus {address}: {e}"
                )))
            }
            Ok(Ok(c)) => c,
        };
        Ok(Atspi {
            conn,
            address,
            call_timeout,
            apps: Arc::default(),
            toolkits: Arc::default(),
            listener: Arc::default(),
            no_cache: Arc::default(),
            calls: Arc::default(),
            peers: Arc::default(),
        })
    }

    async fn address_from_session_bus(call_timeout: Duration) -> GuiResult<String> {
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
            return Err(GuiError::unavailable(
                "no accessibility bus: neither AT_SPI_BUS_ADDRESS nor DBUS_SESSION_BUS_ADDRESS is set",
            ));
        }
        let work = async {
            let session = zbus::Connection::session()
                .await
                .map_err(|e| format!("session bus: {e}"))?;
            let proxy = at::proxy::bus::BusProxy::builder(&session)
                .cache_properties(zbus::proxy::CacheProperties::No)
                .build()
                .await
                .map_err(|e| format!("org.a11y.Bus proxy: {e}"))?;
            proxy
                .get_address()
                .await
                .map_err(|e| format!("org.a11y.Bus.GetAddress: {e}"))
        };
        match tokio::time::timeout(call_timeout * 2, work).await {
            Err(_) => Err(GuiError::unavailable(
                "asking the session bus for the accessibility bus timed out",
            )),
            Ok(Err(e)) => Err(GuiError::unavailable(format!("no accessibility bus found: {e}"))),
            Ok(Ok(a)) if a.trim().is_empty() => Err(GuiError::unavailable(
                "org.a11y.Bus.GetAddress returned an empty address",
            )),
            Ok(Ok(a)) => Ok(a),
        }
    }

    /// The accessibility bus address in use.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The underlying connection, for callers that need another call (keep it bounded).
    pub fn connection(&self) -> &zbus::Connection {
        &self.conn
    }

    /// How many D-Bus calls this connection (and its clones) made so far: the cost of a walk.
    pub fn calls_made(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    // ---------------------------------------------------------------- raw calls

    pub(crate) async fn call_t<B, R>(
        &self,
        limit: Duration,
        dest: &str,
        path: &str,
        iface: &str,
        method: &str,
        body: &B,
    ) -> Result<R, CallError>
    where
        B: serde::Serialize + zv::DynamicType + Sync,
        R: zv::Type + DeserializeOwned,
    {
        let started = tokio::time::Instant::now();
        if let Some(peer) = self.peer_of(dest) {
            match self
                .call_on(&peer, limit, Some(dest), path, iface, method, body)
                .await
            {
                // The direct connection broke (closed, I/O error): forget it and ask over the
                // bus, which tells whether the application is gone.
                Err(Err(e)) => {
                    tracing::debug!("direct connection to {dest} failed ({e}); using the bus");
                    if let Ok(mut m) = self.peers.lock() {
                        m.insert(dest.to_string(), no_peer());
                    }
                }
                Err(Ok(e)) => return Err(e),
                Ok(r) => return Ok(r),
            }
        }
        let left = limit.saturating_sub(started.elapsed());
        match self
            .call_on(&self.conn, left, Some(dest), path, iface, method, body)
            .await
        {
            Ok(r) => Ok(r),
            Err(Ok(e)) => Err(e),
            Err(Err(e)) => Err(classify(&format!("{iface}.{method}"), e)),
        }
    }

    /// One bounded call on one connection. `Err(Err(_))`: the connection failed (not the method:
    /// a method error, a timeout or a bad reply are `Err(Ok(_))`).
    #[allow(clippy::too_many_arguments)]
    async fn call_on<B, R>(
        &self,
        conn: &zbus::Connection,
        limit: Duration,
        dest: Option<&str>,
        path: &str,
        iface: &str,
        method: &str,
        body: &B,
    ) -> Result<R, Result<CallError, zbus::Error>>
    where
        B: serde::Serialize + zv::DynamicType + Sync,
        R: zv::Type + DeserializeOwned,
    {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let fut = conn.call_method(dest, path, Some(iface), method, body);
        match tokio::time::timeout(limit, fut).await {
            Err(_) => Err(Ok(CallError::Timeout(format!("{iface}.{method}")))),
            Ok(Err(e @ zbus::Error::MethodError(..))) => Err(Ok(classify(&format!("{iface}.{method}"), e))),
            Ok(Err(e)) => Err(Err(e)),
            Ok(Ok(msg)) => msg.body().deserialize::<R>().map_err(|e| {
                Ok(CallError::Other(format!(
                    "unexpected reply to {iface}.{method}: {e}"
                )))
            }),
        }
    }

    /// The direct connection to the application owning `bus`, if one is open.
    fn peer_of(&self, bus: &str) -> Option<zbus::Connection> {
        let slot = self.peers.lock().ok()?.get(bus).cloned()?;
        slot.get().cloned().flatten()
    }

    /// Opens (once per application) a direct connection to the application owning `bus` when it
    /// offers one (`Application.GetApplicationBusAddress`: at-spi2-atk, i.e. GTK 3), so that its
    /// calls skip the bus daemon: half the messages, and its CPU time, per call.
    async fn ensure_peer(&self, bus: &str) {
        if !bus.starts_with(':') {
            return;
        }
        let slot = match self.peers.lock() {
            Ok(mut m) => m.entry(bus.to_string()).or_insert_with(PeerSlot::default).clone(),
            Err(_) => return,
        };
        slot.get_or_init(|| async {
            let t = PEER_TIMEOUT.min(self.call_timeout);
            let root = ObjRef::new(bus, ROOT_PATH);
            let addr = match self
                .call_on::<_, String>(
                    &self.conn,
                    t,
                    Some(bus),
                    &root.path,
                    IFACE_APPLICATION,
                    "GetApplicationBusAddress",
                    &(),
                )
                .await
            {
                Ok(a) if a.starts_with("unix:") => a,
                _ => return None,
            };
            let builder = zbus::connection::Builder::address(addr.as_str()).ok()?.p2p();
            match tokio::time::timeout(t, builder.build()).await {
                Ok(Ok(c)) => {
                    tracing::debug!("direct connection to {bus} at {addr}");
                    Some(c)
                }
                other => {
                    tracing::debug!("no direct connection to {bus} at {addr}: {other:?}");
                    None
                }
            }
        })
        .await;
    }

    pub(crate) async fn call<B, R>(
        &self,
        obj: &ObjRef,
        iface: &str,
        method: &str,
        body: &B,
    ) -> Result<R, CallError>
    where
        B: serde::Serialize + zv::DynamicType + Sync,
        R: zv::Type + DeserializeOwned,
    {
        self.call_t(self.call_timeout, &obj.bus, &obj.path, iface, method, body)
            .await
    }

    async fn prop_t(
        &self,
        limit: Duration,
        obj: &ObjRef,
        iface: &str,
        name: &str,
    ) -> Result<OwnedValue, CallError> {
        self.call_t(
            limit,
            &obj.bus,
            &obj.path,
            IFACE_PROPERTIES,
            "Get",
            &(iface, name),
        )
        .await
    }

    pub(crate) async fn prop(&self, obj: &ObjRef, iface: &str, name: &str) -> Result<OwnedValue, CallError> {
        self.prop_t(self.call_timeout, obj, iface, name).await
    }

    async fn prop_string(&self, obj: &ObjRef, iface: &str, name: &str) -> Result<String, CallError> {
        let v = self.prop(obj, iface, name).await?;
        String::try_from(v).map_err(|e| CallError::Other(format!("{iface}.{name} is not a string: {e}")))
    }

    pub(crate) async fn prop_int(&self, obj: &ObjRef, iface: &str, name: &str) -> Result<i64, CallError> {
        let v = self.prop(obj, iface, name).await?;
        value_as_i64(&v).ok_or_else(|| CallError::Other(format!("{iface}.{name} is not an integer")))
    }

    pub(crate) async fn prop_f64(&self, obj: &ObjRef, iface: &str, name: &str) -> Result<f64, CallError> {
        let v = self.prop(obj, iface, name).await?;
        value_as_f64(&v).ok_or_else(|| CallError::Other(format!("{iface}.{name} is not a number")))
    }

    async fn children_of(&self, obj: &ObjRef) -> Result<Vec<ObjRef>, CallError> {
        let list: Vec<(String, OwnedObjectPath)> =
            self.call(obj, IFACE_ACCESSIBLE, "GetChildren", &()).await?;
        Ok(list
            .into_iter()
            .map(|(bus, path)| ObjRef::new(bus, path.as_str()))
            .filter(|r| !r.is_null())
            .collect())
    }

    /// The children at these indices, in order (all requests in flight at once).
    async fn children_at(&self, obj: &ObjRef, indices: impl Iterator<Item = i32>) -> Vec<ObjRef> {
        let calls = indices.map(|i| async move {
            self.call::<_, (String, OwnedObjectPath)>(obj, IFACE_ACCESSIBLE, "GetChildAtIndex", &(i,))
                .await
                .ok()
                .map(|(bus, path)| ObjRef::new(bus, path.as_str()))
        });
        futures_util::future::join_all(calls)
            .await
            .into_iter()
            .flatten()
            .filter(|r| !r.is_null())
            .collect()
    }

    /// Index of the child of `parent` at point (x, y) (`Component.GetAccessibleAtPoint` with
    /// `GetIndexInParent`), `None` when nothing is there or what is there is not a direct child.
    async fn child_index_at(&self, parent: &ObjRef, x: i32, y: i32, coords: CoordKind) -> Option<i32> {
        let (bus, path): (String, OwnedObjectPath) = self
            .call(
                parent,
                IFACE_COMPONENT,
                "GetAccessibleAtPoint",
                &(x, y, coords.atspi()),
            )
            .await
            .ok()?;
        let hit = ObjRef::new(bus, path.as_str());
        if hit.is_null() || hit == *parent {
            return None;
        }
        let (index, up) = tokio::join!(
            self.call::<_, i32>(&hit, IFACE_ACCESSIBLE, "GetIndexInParent", &()),
            self.prop(&hit, IFACE_ACCESSIBLE, "Parent"),
        );
        (value_as_ref(&up.ok()?).as_ref() == Some(parent))
            .then_some(index.ok()?)
            .filter(|i| *i >= 0)
    }

    /// The children of a huge container that are on screen: what `view` (its visible area) shows
    /// at a few points down its left edge, every child between two such points when few enough
    /// rows fit between them, and a row of margin around each, at most `budget` in all. Returns
    /// the children, how many were left out for the budget, and a summary for the model.
    async fn visible_children(
        &self,
        node: &RawNode,
        view: Rect,
        coords: CoordKind,
        budget: usize,
    ) -> (Vec<ObjRef>, usize, String) {
        let obj = &node.obj;
        let count = node.child_count;
        let table = node.has_interface("Table");
        let table_size = async {
            if !table {
                return (None, None);
            }
            let (rows, cols) = tokio::join!(
                self.prop_int(obj, IFACE_TABLE, "NRows"),
                self.prop_int(obj, IFACE_TABLE, "NColumns"),
            );
            (rows.ok(), cols.ok())
        };
        // Two columns of probes: near the left edge, and in the middle (a table's row headers
        // on the left may not answer).
        let span = (view.height - 3).max(0);
        let ys: Vec<i32> = (0..LIST_PROBES)
            .map(|k| view.y + 1 + span * k / (LIST_PROBES - 1))
            .collect();
        let xs = [view.x + 3.min(view.width / 2), view.x + view.width / 2];
        let probes = xs
            .iter()
            .flat_map(|&x| ys.iter().map(move |&y| (x, y)))
            .map(|(x, y)| self.child_index_at(obj, x, y, coords));
        let ((rows, cols), hits) = tokio::join!(table_size, futures_util::future::join_all(probes));
        let cols = cols.filter(|c| (1..=256).contains(c)).unwrap_or(1) as i32;
        let step = span / (LIST_PROBES - 1);
        let max_gap = (step / MIN_ROW_PX + 2) * cols;
        let mut ranges: Vec<(i32, i32)> = hits
            .chunks(ys.len().max(1))
            .flat_map(|column| visible_ranges(column, cols, max_gap, count))
            .collect();
        ranges.sort_unstable();
        let mut indices: Vec<i32> = Vec::new();
        for (a, b) in ranges.iter().copied() {
            let from = indices.last().map_or(a, |&l| a.max(l + 1));
            indices.extend(from..=b);
        }
        if indices.is_empty() {
            indices = (0..count.min(LIST_FALLBACK as i32)).collect();
        }
        let cut = indices.len().saturating_sub(budget);
        indices.truncate(budget);
        let read = indices.len();
        let (first, last) = (
            indices.first().copied().unwrap_or(0),
            indices.last().copied().unwrap_or(0),
        );
        let kids = self.children_at(obj, indices.into_iter()).await;
        let what = match rows {
            Some(r) if r > 0 && cols > 1 => format!("{r} rows × {cols} columns"),
            Some(r) if r > 0 => format!("{r} rows"),
            _ => format!("{count} items"),
        };
        let summary = if ranges.is_empty() {
            format!("{what} ({count} children); no visible child found, the first {read} were read")
        } else {
            format!(
                "{what} ({count} children); only the {read} in and next to the visible area \
                 (children {first}–{last}) were read: scroll it to see others"
            )
        };
        (kids, cut, summary)
    }

    pub(crate) async fn states_of(&self, obj: &ObjRef) -> Result<Vec<String>, CallError> {
        let words: Vec<u32> = self.call(obj, IFACE_ACCESSIBLE, "GetState", &()).await?;
        Ok(state_names(&words))
    }

    async fn role_of(&self, obj: &ObjRef) -> Result<String, CallError> {
        let role: u32 = self.call(obj, IFACE_ACCESSIBLE, "GetRole", &()).await?;
        Ok(role_name(role))
    }

    async fn extents_of(&self, obj: &ObjRef, coords: CoordKind) -> Result<Option<Rect>, CallError> {
        let (x, y, w, h): (i32, i32, i32, i32) = self
            .call(obj, IFACE_COMPONENT, "GetExtents", &(coords.atspi(),))
            .await?;
        Ok(extents_rect(x, y, w, h))
    }

    /// Action names for the tree, in one `GetActions` call. Those are the localized names ("Click"
    /// for "click" in GTK): lowercased they match the canonical ones in English sessions.
    async fn action_names(&self, obj: &ObjRef) -> Result<Vec<String>, CallError> {
        match self
            .call::<_, Vec<(String, String, String)>>(obj, IFACE_ACTION, "GetActions", &())
            .await
        {
            Ok(list) => Ok(list.into_iter().map(|(name, _, _)| name.to_lowercase()).collect()),
            Err(CallError::Unsupported(_)) => self.raw_action_names(obj).await,
            Err(e) => Err(e),
        }
    }

    /// The canonical, not localized, action names (`NActions` + `GetName` each).
    async fn raw_action_names(&self, obj: &ObjRef) -> Result<Vec<String>, CallError> {
        let n = self.prop_int(obj, IFACE_ACTION, "NActions").await?.clamp(0, 256) as i32;
        let names =
            (0..n).map(|i| async move { self.call::<_, String>(obj, IFACE_ACTION, "GetName", &(i,)).await });
        futures_util::future::join_all(names).await.into_iter().collect()
    }

    /// The text of a Text object, at most [`MAX_TEXT_CHARS`] characters.
    async fn text_of(&self, obj: &ObjRef, mode: TextMode) -> Result<String, CallError> {
        let end = match mode {
            TextMode::ToEnd => -1,
            TextMode::Clamped => MAX_TEXT_CHARS,
            TextMode::CountFirst | TextMode::Masked => {
                let count = self.prop_int(obj, IFACE_TEXT, "CharacterCount").await?;
                let end = count.clamp(0, MAX_TEXT_CHARS as i64) as i32;
                if end == 0 {
                    return Ok(String::new());
                }
                if mode == TextMode::Masked {
                    // Never copy a password out of the application, only its length.
                    return Ok("•".repeat(end as usize));
                }
                end
            }
        };
        let text: String = self.call(obj, IFACE_TEXT, "GetText", &(0i32, end)).await?;
        // Toolkits count characters differently (UTF-16 units in Qt): cut here as well.
        Ok(match text.char_indices().nth(MAX_TEXT_CHARS as usize) {
            Some((i, _)) => text[..i].to_string(),
            None => text,
        })
    }

    async fn value_of(&self, obj: &ObjRef) -> Result<String, CallError> {
        Ok(format_number(
            self.prop_f64(obj, IFACE_VALUE, "CurrentValue").await?,
        ))
    }

    /// Role, states, interfaces, name, description and child count of one object. `None` when it
    /// is gone or defunct. `getall`: read the Accessible properties in one `GetAll`.
    async fn basics(&self, obj: &ObjRef, getall: bool) -> Result<Option<Basics>, CallError> {
        let props = async {
            if getall {
                let all: Result<HashMap<String, OwnedValue>, CallError> = self
                    .call(obj, IFACE_PROPERTIES, "GetAll", &(IFACE_ACCESSIBLE,))
                    .await;
                if let Ok(mut all) = all {
                    let mut s = |k: &str| {
                        all.remove(k)
                            .and_then(|v| String::try_from(v).ok())
                            .unwrap_or_default()
                    };
                    let (name, description) = (s("Name"), s("Description"));
                    let count = all.get("ChildCount").and_then(value_as_i64).unwrap_or(0);
                    return (name, description, count);
                }
            }
            let (name, description, count) = tokio::join!(
                self.prop_string(obj, IFACE_ACCESSIBLE, "Name"),
                self.prop_string(obj, IFACE_ACCESSIBLE, "Description"),
                self.prop_int(obj, IFACE_ACCESSIBLE, "ChildCount"),
            );
            (
                name.unwrap_or_default(),
                description.unwrap_or_default(),
                count.unwrap_or(0),
            )
        };
        let (role, states, ifaces, (name, description, child_count)) = tokio::join!(
            self.role_of(obj),
            self.states_of(obj),
            self.call::<_, Vec<String>>(obj, IFACE_ACCESSIBLE, "GetInterfaces", &()),
            props,
        );
        // Role and states are what the object is: without them there is nothing to report.
        let states = match states {
            Ok(s) => s,
            Err(CallError::Gone(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let role = match role {
            Ok(r) => r,
            Err(CallError::Gone(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(Some(Basics {
            role,
            states,
            interfaces: short_interfaces(ifaces.unwrap_or_default()),
            name,
            description,
            child_count: child_count.clamp(0, i32::MAX as i64) as i32,
        }))
    }

    /// Every object the application has registered, from `Cache.GetItems`: live properties in one
    /// call (GTK 4; GTK 3 once a listener is registered, see [`Atspi::ensure_listener`]; Qt 5
    /// answers with nothing). With `Flavor::cache_tree`, also the complete children lists.
    async fn cache_items(&self, bus: &str, limit: Duration, flavor: Flavor) -> Option<Prefetch> {
        type Item = CacheItem;
        let recent_failure = self
            .no_cache
            .lock()
            .ok()
            .and_then(|m| m.get(bus).copied())
            .is_some_and(|t| t.elapsed() < CACHE_RETRY);
        if recent_failure {
            return None;
        }
        let t0 = Instant::now();
        // at-spi2-atk serves (and keeps current) its cache only while a client listens: register
        // before the first call. Right after registering, ask over the bus, which delivers the
        // registry's signal to the application first; a direct connection could overtake it.
        let fresh = flavor.cache_needs_listener && self.listener.get().is_none();
        if flavor.cache_needs_listener {
            self.ensure_listener().await;
        }
        let first = if fresh {
            let conn = &self.conn;
            self.call_on::<_, Vec<Item>>(conn, limit, Some(bus), CACHE_PATH, IFACE_CACHE, "GetItems", &())
                .await
                .map_err(|e| e.unwrap_or_else(|e| classify("GetItems", e)))
        } else {
            self.call_t::<_, Vec<Item>>(limit, bus, CACHE_PATH, IFACE_CACHE, "GetItems", &())
                .await
        };
        let items = match first {
            Ok(items) => Some(items),
            // Registered, but not yet seen by the application (another thread of this
            // connection registered it a moment ago): once more, over the bus.
            Err(CallError::Unsupported(_) | CallError::Gone(_)) if flavor.cache_needs_listener && !fresh => {
                if self.ensure_listener().await {
                    let conn = &self.conn;
                    self.call_on::<_, Vec<Item>>(
                        conn,
                        limit,
                        Some(bus),
                        CACHE_PATH,
                        IFACE_CACHE,
                        "GetItems",
                        &(),
                    )
                    .await
                    .ok()
                } else {
                    None
                }
            }
            Err(_) => None,
        };
        let Some(items) = items else {
            tracing::debug!("no cache for {bus}");
            if let Ok(mut m) = self.no_cache.lock() {
                m.insert(bus.to_string(), Instant::now());
            }
            return None;
        };
        let mut pre = Prefetch::default();
        // (index, child) by parent, for the children lists.
        let mut by_parent: HashMap<ObjRef, Vec<(i32, ObjRef)>> = HashMap::new();
        for (o, _app, parent, index, count, ifaces, name, role, description, states) in items {
            let obj = ObjRef::new(o.0, o.1.as_str());
            let basics = Basics {
                role: role_name(role),
                states: state_names(&states),
                interfaces: short_interfaces(ifaces),
                name,
                description,
                child_count: count.max(-1),
            };
            if flavor.cache_tree && !basics.states.iter().any(|s| s == "defunct") {
                by_parent
                    .entry(ObjRef::new(parent.0, parent.1.as_str()))
                    .or_default()
                    .push((index, obj.clone()));
            }
            pre.basics.insert(obj, basics);
        }
        // A list is used only when complete: exactly the live child count, indices 0..n. Else
        // (children added while the bridge did not listen, index -1 for scroll bars and menu
        // items) the walk asks GetChildren.
        for (parent, mut kids) in by_parent {
            let Some(count) = pre.basics.get(&parent).map(|b| b.child_count) else {
                continue;
            };
            kids.sort_unstable_by_key(|(i, _)| *i);
            let complete = kids.len() == count.max(0) as usize
                && kids.iter().enumerate().all(|(k, (i, _))| *i == k as i32);
            if complete && count > 0 {
                pre.children
                    .insert(parent, kids.into_iter().map(|(_, o)| o).collect());
            }
        }
        tracing::debug!(
            "cache of {bus}: {} objects, {} complete child lists, in {:?}",
            pre.basics.len(),
            pre.children.len(),
            t0.elapsed()
        );
        Some(pre)
    }

    /// Registers, once per connection, an event listener with the registry: at-spi2-atk (GTK 3)
    /// serves `Cache.GetItems`, and keeps it current, only while some client listens. The event is
    /// one applications do not send in normal use. `true` when registered (now or before).
    async fn ensure_listener(&self) -> bool {
        *self
            .listener
            .get_or_init(|| async {
                let t = self.call_timeout;
                let with_props = (CACHE_LISTENER_EVENT, Vec::<String>::new(), "");
                let res = match self
                    .call_t::<_, ()>(
                        t,
                        REGISTRY_BUS,
                        REGISTRY_PATH,
                        IFACE_REGISTRY,
                        "RegisterEvent",
                        &with_props,
                    )
                    .await
                {
                    // Registries before 2.42 take only the event name.
                    Err(CallError::Unsupported(_) | CallError::Other(_)) => {
                        let name_only = (CACHE_LISTENER_EVENT,);
                        self.call_t::<_, ()>(
                            t,
                            REGISTRY_BUS,
                            REGISTRY_PATH,
                            IFACE_REGISTRY,
                            "RegisterEvent",
                            &name_only,
                        )
                        .await
                    }
                    r => r,
                };
                match res {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::debug!("registering an event listener failed: {e:?}");
                        false
                    }
                }
            })
            .await
    }

    /// Reads one object. `None` when it is gone or defunct. With `prune`, hidden objects, empty
    /// ones and those outside `clip` come back with `keep == false` (and fewer properties).
    /// `children`: read the child list of kept objects, at most this many.
    #[allow(clippy::too_many_arguments)]
    async fn fetch(
        &self,
        obj: ObjRef,
        coords: CoordKind,
        flavor: Flavor,
        walk: Option<&WalkCtx>,
        clip: Option<Rect>,
        prune: bool,
        children: Option<usize>,
    ) -> Result<Option<Fetched>, CallError> {
        let pre = walk.and_then(|w| w.pre.as_ref());
        let mut b = match pre.and_then(|p| p.basics.get(&obj)) {
            Some(b) => b.clone(),
            None => match self.basics(&obj, flavor.getall).await? {
                Some(b) => b,
                None => return Ok(None),
            },
        };
        if b.states.iter().any(|s| s == "defunct") {
            return Ok(None);
        }
        let showing_known = walk.is_some_and(|w| w.showing);
        let hidden = |states: &[String]| {
            // GTK 4.8 never sets "showing" below the window: decide from "visible" and geometry,
            // and from "showing" only where it is reliable.
            !states.iter().any(|s| s == "visible")
                || (showing_known && !states.iter().any(|s| s == "showing"))
        };
        if prune && hidden(&b.states) {
            return Ok(Some(Fetched::dropped(raw_node(obj, b), true)));
        }
        let has = |iface: &str| b.interfaces.iter().any(|i| i == iface);
        let (has_component, has_action, has_text, has_value) =
            (has("Component"), has("Action"), has("Text"), has("Value"));
        let long = b.states.iter().any(|s| s == "multi_line")
            || b.role.starts_with("document")
            || b.role == "terminal";
        let text_mode = match flavor.text {
            _ if b.role == "password_text" => TextMode::Masked,
            // Possibly long and no clamping: ask the length first and read only the head.
            TextMode::ToEnd if long => TextMode::CountFirst,
            m => m,
        };
        let (extents, actions, value, count) = tokio::join!(
            async {
                if has_component {
                    let arg = (coords.atspi(),);
                    let e = self.call::<_, (i32, i32, i32, i32)>(&obj, IFACE_COMPONENT, "GetExtents", &arg);
                    e.await.ok()
                } else {
                    None
                }
            },
            async {
                if has_action {
                    self.action_names(&obj).await.unwrap_or_default()
                } else {
                    Vec::new()
                }
            },
            async {
                if has_text {
                    if let Ok(t) = self.text_of(&obj, text_mode).await {
                        return Some(t);
                    }
                }
                if has_value {
                    return self.value_of(&obj).await.ok();
                }
                None
            },
            async {
                // The cache does not count the children of objects managing their descendants.
                if b.child_count < 0 {
                    self.prop_int(&obj, IFACE_ACCESSIBLE, "ChildCount")
                        .await
                        .unwrap_or(0)
                } else {
                    b.child_count as i64
                }
            },
        );
        b.child_count = count.clamp(0, i32::MAX as i64) as i32;
        let mut node = raw_node(obj, b);
        node.extents = extents.and_then(|(x, y, w, h)| extents_rect(x, y, w, h));
        node.actions = actions;
        node.value = value;
        // An object that answered with no area is not laid out (a hidden stack page in GTK 4,
        // a scrolled-away row in GTK 3): nothing below it has any area either.
        let empty = extents.is_some() && node.extents.is_none();
        let outside = match (node.extents, clip) {
            (Some(e), Some(c)) => e.intersect(&c).is_none(),
            _ => false,
        };
        if prune && (empty || outside) {
            return Ok(Some(Fetched::dropped(node, false)));
        }
        // What scrolls inside this object and lies outside its area is scrolled away.
        let scrolls = matches!(
            node.role.as_str(),
            "scroll_pane" | "viewport" | "table" | "tree_table" | "tree" | "list" | "list_box"
        );
        let child_clip = match (clip, node.extents) {
            (Some(c), Some(e)) if scrolls => c.intersect(&e),
            (c, Some(e)) if scrolls => c.or(Some(e)),
            (c, _) => c,
        };

        let count = node.child_count;
        let budget = children.unwrap_or(0);
        let managed = node.has_state("manages_descendants");
        let huge = count > MAX_BULK_CHILDREN || (managed && count > MAX_MANAGED_CHILDREN);
        let listed = pre.and_then(|p| p.children.get(&node.obj));
        let (kids, cut) = if count == 0 || budget == 0 {
            (Vec::new(), 0)
        } else if let (Some(list), false) = (listed, huge) {
            let cut = list.len().saturating_sub(budget);
            (list.iter().take(budget).cloned().collect(), cut)
        } else if let (true, Some(view)) = (huge, child_clip) {
            let (kids, cut, summary) = self.visible_children(&node, view, coords, budget).await;
            node.summary = Some(summary);
            (kids, cut)
        } else if count <= MAX_BULK_CHILDREN {
            match self.children_of(&node.obj).await {
                Ok(k) => {
                    let cut = k.len().saturating_sub(budget);
                    (k.into_iter().take(budget).collect(), cut)
                }
                Err(CallError::Gone(_)) => return Ok(None),
                Err(_) => {
                    let n = (count as usize).min(budget);
                    let k = self.children_at(&node.obj, 0..n as i32).await;
                    (k, count as usize - n)
                }
            }
        } else {
            // Huge and not on screen as far as the geometry tells: the first few.
            let n = (count as usize).min(budget).min(LIST_FALLBACK);
            let k = self.children_at(&node.obj, 0..n as i32).await;
            node.summary = Some(format!(
                "{count} children; only the first {n} were read (no visible area known)"
            ));
            (k, 0)
        };
        Ok(Some(Fetched {
            node,
            children: kids,
            cut,
            child_clip,
            keep: true,
            hidden: false,
        }))
    }

    // ---------------------------------------------------------------- public API

    /// Applications registered on the accessibility bus (children of the registry root). Apps whose
    /// connection is gone are skipped; one that does not answer in time is listed with what is known.
    pub async fn applications(&self) -> GuiResult<Vec<AppInfo>> {
        let registry = ObjRef::new(REGISTRY_BUS, ROOT_PATH);
        let roots = self.children_of(&registry).await.map_err(|e| match e {
            CallError::Gone(why) => {
                GuiError::unavailable(format!("the AT-SPI registry is not running ({why})"))
            }
            other => other.into_gui(&registry),
        })?;
        let cached: HashMap<String, AppInfo> = self.apps.lock().map(|m| m.clone()).unwrap_or_default();
        let infos = roots.into_iter().map(|root| {
            let known = cached.get(&root.bus).filter(|a| a.obj == root).cloned();
            async move {
                match known {
                    Some(a) => Some((a, true)),
                    None => self.app_info(root).await.map(|a| (a, false)),
                }
            }
        });
        let apps = futures_util::future::join_all(infos).await;
        let mut out = Vec::new();
        let mut fresh: HashMap<String, AppInfo> = HashMap::new();
        for (app, _) in apps.into_iter().flatten() {
            // Only complete answers are remembered, so a slow app is asked again next time.
            if !app.name.is_empty() || !app.toolkit.is_empty() {
                fresh.insert(app.obj.bus.clone(), app.clone());
            }
            if !app.toolkit.is_empty() {
                if let Ok(mut m) = self.toolkits.lock() {
                    m.insert(
                        app.obj.bus.clone(),
                        (app.toolkit.clone(), app.toolkit_version.clone()),
                    );
                }
            }
            out.push(app);
        }
        if let Ok(mut m) = self.apps.lock() {
            // Rebuilt from the registry each time: connections that left drop out.
            *m = fresh;
        }
        Ok(out)
    }

    async fn app_info(&self, root: ObjRef) -> Option<AppInfo> {
        let t = APP_INFO_TIMEOUT.min(self.call_timeout);
        let bus_arg = (root.bus.as_str(),);
        let pid = self.call_t::<_, u32>(
            t,
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "GetConnectionUnixProcessID",
            &bus_arg,
        );
        let name = self.prop_t(t, &root, IFACE_ACCESSIBLE, "Name");
        let toolkit = self.prop_t(t, &root, IFACE_APPLICATION, "ToolkitName");
        let version = self.prop_t(t, &root, IFACE_APPLICATION, "Version");
        let (pid, name, toolkit, version) = tokio::join!(pid, name, toolkit, version);
        // The bus daemon answers for the connection (NameHasNoOwner): the app is gone; so it is
        // when the app's own connection vanished under the Name call.
        if matches!(pid, Err(CallError::Gone(_))) || matches!(name, Err(CallError::Gone(_))) {
            return None;
        }
        let s = |v: Result<OwnedValue, CallError>| {
            v.ok().and_then(|v| String::try_from(v).ok()).unwrap_or_default()
        };
        Some(AppInfo {
            obj: root,
            pid: pid.ok().filter(|p| *p > 0),
            name: s(name),
            toolkit: s(toolkit),
            toolkit_version: s(version),
        })
    }

    /// Toolkit name and version of the application owning `bus` ("" when unknown).
    async fn toolkit_of(&self, bus: &str) -> (String, String) {
        if let Some(t) = self.toolkits.lock().ok().and_then(|m| m.get(bus).cloned()) {
            return t;
        }
        let root = ObjRef::new(bus, ROOT_PATH);
        let (name, version) = tokio::join!(
            self.prop_string(&root, IFACE_APPLICATION, "ToolkitName"),
            self.prop_string(&root, IFACE_APPLICATION, "Version"),
        );
        let t = (name.unwrap_or_default(), version.unwrap_or_default());
        if !t.0.is_empty() {
            if let Ok(mut m) = self.toolkits.lock() {
                m.insert(bus.to_string(), t.clone());
            }
        }
        t
    }

    /// The application's top-level children (frame, dialog, window, alert, ...), with screen
    /// extents. Children that vanish meanwhile are left out.
    pub async fn frames(&self, app: &ObjRef) -> GuiResult<Vec<FrameInfo>> {
        let kids = self.children_of(app).await.map_err(|e| match e {
            CallError::Gone(why) => GuiError::new(
                ErrorCode::WindowNotFound,
                format!("the application {} is gone ({why}); call gui_list again", app.bus),
            ),
            other => other.into_gui(app),
        })?;
        let infos = kids.into_iter().map(|obj| async move {
            let (role, name, states, extents) = tokio::join!(
                self.role_of(&obj),
                self.prop_string(&obj, IFACE_ACCESSIBLE, "Name"),
                self.states_of(&obj),
                self.extents_of(&obj, CoordKind::Screen),
            );
            let states = states.ok()?;
            if states.iter().any(|s| s == "defunct") {
                return None;
            }
            Some(FrameInfo {
                obj,
                role: role.ok()?,
                name: name.unwrap_or_default(),
                screen_extents: extents.ok().flatten(),
                states,
            })
        });
        Ok(futures_util::future::join_all(infos)
            .await
            .into_iter()
            .flatten()
            .collect())
    }

    /// Walks the subtree under `root` (included, depth 0), depth-first pre-order in the result.
    /// Objects are fetched many at a time, roughly breadth first, so a cut by `max_elements` or
    /// the deadline keeps the upper levels. Only what is on screen is read: hidden objects
    /// ("visible" unset; "showing" unset where the toolkit keeps it right), objects with no area,
    /// objects entirely outside the root's extents or outside the area of the scroll pane or list
    /// they scroll in are dropped with their subtrees. A huge container is read around its
    /// visible area only (see `RawNode::summary`).
    ///
    /// `truncated` is set exactly when something the walk would have reported was not read: the
    /// deadline passed, `max_elements` or `max_depth` stopped it, or objects failed to answer.
    /// What is skipped on purpose (hidden, off-screen, outside a list's visible window) is not a
    /// truncation.
    pub async fn walk(&self, root: &ObjRef, opts: &WalkOptions) -> GuiResult<WalkResult> {
        let (started, calls) = (Instant::now(), self.calls_made());
        let deadline = tokio::time::Instant::from_std(opts.deadline);
        let max = opts.max_elements;
        let cut = |why: String| WalkResult {
            nodes: Vec::new(),
            truncated: true,
            truncated_reason: Some(why),
            skipped_hidden: 0,
            skipped_off_screen: 0,
        };
        if max == 0 {
            return Ok(cut("max_elements is 0".into()));
        }
        let setup = async { tokio::join!(self.toolkit_of(&root.bus), self.ensure_peer(&root.bus)).0 };
        let (toolkit, version) = match tokio::time::timeout_at(deadline, setup).await {
            Ok(t) => t,
            Err(_) => return Ok(cut("deadline reached before the first element was read".into())),
        };
        let flavor = Flavor::of(&toolkit, &version);
        let coords = opts.coords;
        let want = |depth: u32, budget: usize| (depth < opts.max_depth).then_some(budget.max(1));

        // The root first (never pruned), with the application's whole cache in parallel.
        let first = async {
            let cache = async {
                // The cache covers the whole application (5-25 ms for the widget factories): worth
                // it for a real walk, not for a few elements, and never more than half the time left.
                let left = opts.deadline.saturating_duration_since(Instant::now());
                if flavor.cache && max >= 64 {
                    self.cache_items(&root.bus, self.call_timeout.min(left / 2), flavor)
                        .await
                } else {
                    None
                }
            };
            let top = self.fetch(root.clone(), coords, flavor, None, None, false, want(0, max));
            tokio::join!(cache, top)
        };
        let (pre, top) = match tokio::time::timeout_at(deadline, first).await {
            Ok(r) => r,
            Err(_) => return Ok(cut("deadline reached before the first element was read".into())),
        };
        let top = match top {
            Ok(Some(f)) => f,
            Ok(None) => return Err(CallError::Gone("defunct".into()).into_gui(root)),
            Err(e) => return Err(e.into_gui(root)),
        };
        let ctx = WalkCtx {
            pre,
            // A window that is not shown itself (minimized) shows nothing: fall back to geometry.
            showing: flavor.showing && top.node.has_state("showing"),
        };
        let ctx = &ctx;
        let top_clip = top.child_clip.or(top.node.extents);

        let mut slots: Vec<Slot> = Vec::new();
        // (object, parent slot, index among the parent's children, depth, clip)
        let mut pending: VecDeque<(ObjRef, usize, usize, u32, Option<Rect>)> = VecDeque::new();
        let mut reason: Option<String> = None;
        let mut depth_cut = top.node.child_count > 0 && opts.max_depth == 0;
        let mut failed = 0usize;
        let (mut skipped_hidden, mut skipped_off_screen) = (0usize, 0usize);
        let mut budget_cut = top.cut;
        for (i, kid) in top.children.into_iter().enumerate() {
            pending.push_back((kid, 0, i, 1, top_clip));
        }
        let mut top_node = top.node;
        if depth_cut {
            top_node.summary = Some(depth_summary(top_node.child_count, opts.max_depth));
        }
        slots.push(Slot {
            node: top_node,
            parent: None,
            order: 0,
            kids: Vec::new(),
        });

        let mut in_flight = FuturesUnordered::new();
        loop {
            while in_flight.len() < WALK_CONCURRENCY && slots.len() + in_flight.len() < max {
                let Some((obj, parent, order, depth, clip)) = pending.pop_front() else {
                    break;
                };
                let budget = max.saturating_sub(slots.len() + in_flight.len() + pending.len());
                let fut = self.fetch(
                    obj.clone(),
                    coords,
                    flavor,
                    Some(ctx),
                    clip,
                    opts.prune,
                    want(depth, budget),
                );
                in_flight.push(async move { (obj, parent, order, depth, fut.await) });
            }
            if in_flight.is_empty() {
                break;
            }
            let next = tokio::select! {
                biased;
                n = in_flight.next() => n,
                _ = tokio::time::sleep_until(deadline) => {
                    reason = Some(format!(
                        "deadline reached after {} elements; narrow the request or raise the time limit",
                        slots.len()
                    ));
                    break;
                }
            };
            let Some((obj, parent, order, depth, res)) = next else {
                break;
            };
            let fetched = match res {
                Ok(Some(f)) if f.keep => f,
                Ok(Some(f)) => {
                    if f.hidden {
                        skipped_hidden += 1;
                    } else {
                        skipped_off_screen += 1;
                    }
                    continue;
                }
                // Gone meanwhile, or skipped on purpose (hidden, off-screen).
                Ok(_) | Err(CallError::Gone(_)) => continue,
                Err(e) => {
                    tracing::debug!("walk: skipping {obj}: {e:?}");
                    failed += 1;
                    continue;
                }
            };
            let idx = slots.len();
            let mut node = fetched.node;
            node.depth = depth;
            if depth >= opts.max_depth && node.child_count > 0 {
                depth_cut = true;
                node.summary = Some(depth_summary(node.child_count, opts.max_depth));
            }
            budget_cut += fetched.cut;
            for (i, kid) in fetched.children.into_iter().enumerate() {
                pending.push_back((kid, idx, i, depth + 1, fetched.child_clip));
            }
            slots.push(Slot {
                node,
                parent: Some(parent),
                order,
                kids: Vec::new(),
            });
            if let Some(ps) = slots.get_mut(parent) {
                ps.kids.push(idx);
            }
        }

        let unread = pending.len() + budget_cut;
        if reason.is_none() && unread > 0 {
            reason = Some(format!(
                "max_elements ({max}) reached; {unread} more objects were not read"
            ));
        }
        if reason.is_none() && failed > 0 {
            reason = Some(format!("{failed} objects did not answer and were left out"));
        }
        if reason.is_none() && depth_cut {
            reason = Some(format!(
                "max_depth ({}) reached; deeper objects were not read",
                opts.max_depth
            ));
        }
        let nodes = preorder(slots, 0);
        tracing::debug!(
            "walk of {root}: {} nodes, {} calls, {:?}{}",
            nodes.len(),
            self.calls_made().saturating_sub(calls),
            started.elapsed(),
            reason
                .as_deref()
                .map(|r| format!("; truncated: {r}"))
                .unwrap_or_default()
        );
        Ok(WalkResult {
            nodes,
            truncated: reason.is_some(),
            truncated_reason: reason,
            skipped_hidden,
            skipped_off_screen,
        })
    }

    /// Re-reads one object. `Ok(None)` when it is gone or defunct.
    pub async fn node(&self, obj: &ObjRef, coords: CoordKind) -> GuiResult<Option<RawNode>> {
        let (toolkit, version) = self.toolkit_of(&obj.bus).await;
        match self
            .fetch(
                obj.clone(),
                coords,
                Flavor::of(&toolkit, &version),
                None,
                None,
                false,
                None,
            )
            .await
        {
            Ok(Some(f)) => Ok(Some(f.node)),
            Ok(None) | Err(CallError::Gone(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Role and states only, both in flight at once: the cheap "is it still that control" check
    /// before acting. `None`: the object is gone.
    pub async fn role_and_states(&self, obj: &ObjRef) -> GuiResult<Option<(String, Vec<String>)>> {
        match tokio::join!(self.role_of(obj), self.states_of(obj)) {
            (Ok(role), Ok(states)) => Ok(Some((role, states))),
            (Err(CallError::Gone(_)), _) | (_, Err(CallError::Gone(_))) => Ok(None),
            (Err(e), _) | (_, Err(e)) => Err(e.into_gui(obj)),
        }
    }

    /// `DoAction(index)`. `false`: the application refused it or has no Action interface.
    pub async fn do_action_at(&self, obj: &ObjRef, index: usize) -> GuiResult<bool> {
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        match self
            .call::<_, bool>(obj, IFACE_ACTION, "DoAction", &(index,))
            .await
        {
            Ok(done) => Ok(done),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Runs the first action among `preferred` (case-insensitive) the object has, else action 0
    /// when `allow_any`. `Ok(Some(name))`: it ran; `Ok(None)`: no such action, or the application
    /// refused it (fall back to input events).
    pub async fn do_action(
        &self,
        obj: &ObjRef,
        preferred: &[&str],
        allow_any: bool,
    ) -> GuiResult<Option<String>> {
        // Canonical names first (locale-independent), the localized ones as a second chance:
        // GTK 3 table cells report descriptions as localized names, GTK 4 icons disagree.
        let (raw, localized) = tokio::join!(
            self.raw_action_names(obj),
            self.call::<_, Vec<(String, String, String)>>(obj, IFACE_ACTION, "GetActions", &()),
        );
        let localized: Vec<String> = localized
            .map(|l| l.into_iter().map(|(n, _, _)| n).collect())
            .unwrap_or_default();
        let raw = match raw {
            Ok(r) => r,
            Err(CallError::Gone(w)) => return Err(CallError::Gone(w).into_gui(obj)),
            Err(CallError::Timeout(w)) => return Err(CallError::Timeout(w).into_gui(obj)),
            Err(_) if !localized.is_empty() => Vec::new(),
            Err(_) => return Ok(None),
        };
        let count = raw.len().max(localized.len());
        let matches =
            |list: &[String], p: &str| list.iter().position(|n| n.trim().eq_ignore_ascii_case(p.trim()));
        let chosen = preferred
            .iter()
            .find_map(|p| matches(&raw, p).or_else(|| matches(&localized, p)))
            .or(if allow_any && count > 0 { Some(0) } else { None });
        let Some(index) = chosen else { return Ok(None) };
        let label = raw
            .get(index)
            .filter(|n| !n.is_empty())
            .or(localized.get(index))
            .cloned()
            .unwrap_or_else(|| format!("action {index}"));
        match self
            .call::<_, bool>(obj, IFACE_ACTION, "DoAction", &(index as i32,))
            .await
        {
            Ok(true) => Ok(Some(label)),
            Ok(false) => {
                tracing::debug!("{obj}: application refused action {label}");
                Ok(None)
            }
            Err(CallError::Unsupported(_)) => Ok(None),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Replaces the whole text (`EditableText.SetTextContents`). `false`: not editable or refused.
    pub async fn set_text(&self, obj: &ObjRef, text: &str) -> GuiResult<bool> {
        match self
            .call::<_, bool>(obj, IFACE_EDITABLE_TEXT, "SetTextContents", &(text,))
            .await
        {
            Ok(ok) => Ok(ok),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Inserts at the caret (`Text.CaretOffset`, the end when there is none) with
    /// `EditableText.InsertText`. `false`: not editable or refused.
    pub async fn insert_text(&self, obj: &ObjRef, text: &str) -> GuiResult<bool> {
        let (caret, count, toolkit) = tokio::join!(
            self.prop_int(obj, IFACE_TEXT, "CaretOffset"),
            self.prop_int(obj, IFACE_TEXT, "CharacterCount"),
            self.toolkit_of(&obj.bus),
        );
        let toolkit = toolkit.0;
        if let Err(CallError::Gone(w)) = &caret {
            return Err(CallError::Gone(w.clone()).into_gui(obj));
        }
        let count = count.unwrap_or(0);
        let pos = match caret {
            Ok(c) if c >= 0 && c <= count => c,
            _ => count,
        }
        .clamp(0, i32::MAX as i64) as i32;
        // The length argument is read differently: GTK passes it on as a byte count, Qt truncates
        // the QString (UTF-16 units) to it; the specification says characters.
        let len = if toolkit.eq_ignore_ascii_case("gtk") {
            text.len()
        } else if toolkit.eq_ignore_ascii_case("qt") {
            text.encode_utf16().count()
        } else {
            text.chars().count()
        };
        let len = i32::try_from(len).map_err(|_| GuiError::invalid("text too long"))?;
        match self
            .call::<_, bool>(obj, IFACE_EDITABLE_TEXT, "InsertText", &(pos, text, len))
            .await
        {
            Ok(ok) => Ok(ok),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// Sets `Value.CurrentValue`, clamped to the object's minimum and maximum. `false`: no Value
    /// interface, or the application refused.
    pub async fn set_numeric_value(&self, obj: &ObjRef, v: f64) -> GuiResult<bool> {
        if !v.is_finite() {
            return Err(GuiError::invalid(format!("{v} is not a finite number")));
        }
        let (min, max) = tokio::join!(
            self.prop_f64(obj, IFACE_VALUE, "MinimumValue"),
            self.prop_f64(obj, IFACE_VALUE, "MaximumValue"),
        );
        match (&min, &max) {
            (Err(CallError::Unsupported(_)), _) => return Ok(false),
            (Err(CallError::Gone(w)), _) => return Err(CallError::Gone(w.clone()).into_gui(obj)),
            _ => {}
        }
        let mut v = v;
        if let Ok(lo) = min {
            v = v.max(lo);
        }
        if let Ok(hi) = max {
            // Some toolkits report max < min when there is no bound.
            if hi >= min.as_ref().copied().unwrap_or(f64::MIN) {
                v = v.min(hi);
            }
        }
        let body = (IFACE_VALUE, "CurrentValue", zv::Value::from(v));
        match self.call::<_, ()>(obj, IFACE_PROPERTIES, "Set", &body).await {
            Ok(()) => Ok(true),
            Err(CallError::Unsupported(_)) | Err(CallError::Other(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }

    /// `Component.GrabFocus`. `false`: no Component interface or refused.
    pub async fn grab_focus(&self, obj: &ObjRef) -> GuiResult<bool> {
        match self.call::<_, bool>(obj, IFACE_COMPONENT, "GrabFocus", &()).await {
            Ok(ok) => Ok(ok),
            Err(CallError::Unsupported(_)) => Ok(false),
            Err(e) => Err(e.into_gui(obj)),
        }
    }
}

/// Renumbers the completed slots into depth-first pre-order with parent indices.
fn preorder(mut slots: Vec<Slot>, root: usize) -> Vec<RawNode> {
    let orders: Vec<usize> = slots.iter().map(|s| s.order).collect();
    for s in slots.iter_mut() {
        s.kids
            .sort_by_key(|k| orders.get(*k).copied().unwrap_or(usize::MAX));
    }
    let mut taken: Vec<Option<Slot>> = slots.into_iter().map(Some).collect();
    let mut out: Vec<RawNode> = Vec::with_capacity(taken.len());
    // (slot, new parent index)
    let mut stack: Vec<(usize, Option<usize>)> = vec![(root, None)];
    while let Some((si, parent)) = stack.pop() {
        let Some(slot) = taken.get_mut(si).and_then(Option::take) else {
            continue;
        };
        let idx = out.len();
        let mut node = slot.node;
        node.parent = parent;
        debug_assert!(slot.parent.is_some() == parent.is_some());
        out.push(node);
        for k in slot.kids.into_iter().rev() {
            stack.push((k, Some(idx)));
        }
    }
    out
}

/// "org.a11y.atspi.Text" -> "Text".
fn short_interfaces(ifaces: Vec<String>) -> Vec<String> {
    ifaces
        .into_iter()
        .map(|i| i.strip_prefix(IFACE_PREFIX).map(str::to_string).unwrap_or(i))
        .collect()
}

/// snake_case role name; "unknown" for roles this crate does not know.
fn role_name(role: u32) -> String {
    match at::Role::try_from(role) {
        // The crate says "button"; AT-SPI itself (GetRoleName, libatspi) says "push button".
        Ok(at::Role::Button) => "push_button".into(),
        Ok(r) => r.name().replace([' ', '-'], "_"),
        Err(_) => "unknown".into(),
    }
}

/// snake_case names of the set bits of an AT-SPI state set (two u32 words, low first).
fn state_names(words: &[u32]) -> Vec<String> {
    let lo = words.first().copied().unwrap_or(0) as u64;
    let hi = words.get(1).copied().unwrap_or(0) as u64;
    let bits = lo | (hi << 32);
    (0..64)
        .filter(|i| bits & (1u64 << i) != 0)
        .filter_map(|i| at::StateSet::from_bits(1u64 << i).ok())
        .filter_map(|set| set.iter().next())
        .map(|s| s.to_static_str().replace('-', "_"))
        .collect()
}

fn depth_summary(children: i32, max_depth: u32) -> String {
    format!("{children} children not read: max_depth ({max_depth}) reached")
}

/// A node with the basic properties only.
fn raw_node(obj: ObjRef, b: Basics) -> RawNode {
    RawNode {
        obj,
        parent: None,
        depth: 0,
        role: b.role,
        name: b.name,
        description: b.description,
        value: None,
        states: b.states,
        actions: Vec::new(),
        extents: None,
        interfaces: b.interfaces,
        child_count: b.child_count,
        summary: None,
    }
}

fn extents_rect(x: i32, y: i32, w: i32, h: i32) -> Option<Rect> {
    // GTK answers (-1,-1) or a zero size for objects that are not laid out.
    if w <= 0 || h <= 0 || (x == -1 && y == -1) || x == i32::MIN || y == i32::MIN {
        return None;
    }
    Some(Rect::new(x, y, w, h))
}

fn format_number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn value_as_i64(v: &OwnedValue) -> Option<i64> {
    match &**v {
        zv::Value::I32(n) => Some(*n as i64),
        zv::Value::U32(n) => Some(*n as i64),
        zv::Value::I64(n) => Some(*n),
        zv::Value::U64(n) => i64::try_from(*n).ok(),
        zv::Value::I16(n) => Some(*n as i64),
        zv::Value::U16(n) => Some(*n as i64),
        zv::Value::U8(n) => Some(*n as i64),
        zv::Value::F64(f) if f.is_finite() => Some(*f as i64),
        _ => None,
    }
}

/// An object reference `(so)` inside a variant.
pub(crate) fn value_as_ref(v: &OwnedValue) -> Option<ObjRef> {
    let zv::Value::Structure(st) = &**v else {
        return None;
    };
    match st.fields() {
        [zv::Value::Str(bus), zv::Value::ObjectPath(path)] => Some(ObjRef::new(bus.as_str(), path.as_str())),
        _ => None,
    }
}

/// Which children of a huge container to read, as inclusive index ranges in ascending order,
/// from the child indices found at evenly spaced probe points down its visible area, top first
/// (`None`: nothing there, e.g. a column header or the empty space below the last row). At most
/// `max_gap` children fit between two neighbouring probes. Each hit brings its row (`cols`
/// children each side); two neighbouring hits bring everything between them when at most
/// `max_gap` children lie between (more means they are not on screen together); a hit next to a
/// probe that found nothing brings `max_gap` children on that side (rows, or headers, whose left
/// edge the probes missed). Every range gets a row of margin. Clamped to `0..count`.
fn visible_ranges(hits: &[Option<i32>], cols: i32, max_gap: i32, count: i32) -> Vec<(i32, i32)> {
    let cols = cols.max(1);
    let mut ranges: Vec<(i32, i32)> = Vec::new();
    for (k, hit) in hits.iter().enumerate() {
        let Some(h) = *hit else { continue };
        let (mut a, mut b) = (h - cols + 1, h + cols - 1);
        let before = k.checked_sub(1).and_then(|j| hits.get(j));
        let after = hits.get(k + 1);
        match before {
            Some(Some(p)) if (h - p).abs() <= max_gap => a = a.min(*p),
            Some(None) => a -= max_gap,
            _ => {}
        }
        match after {
            Some(Some(n)) if (n - h).abs() <= max_gap => b = b.max(*n),
            Some(None) => b += max_gap,
            _ => {}
        }
        ranges.push((a.min(b), a.max(b)));
    }
    let mut ranges: Vec<(i32, i32)> = ranges
        .into_iter()
        .map(|(a, b)| ((a - cols).max(0), (b + cols).min(count - 1)))
        .filter(|(a, b)| a <= b)
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(i32, i32)> = Vec::new();
    for (a, b) in ranges {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

fn value_as_f64(v: &OwnedValue) -> Option<f64> {
    match &**v {
        zv::Value::F64(f) => Some(*f),
        _ => value_as_i64(v).map(|n| n as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The backend calls these from async_trait methods, which need Send futures.
    #[allow(dead_code)]
    fn futures_are_send(a: &Atspi, r: &ObjRef, o: &WalkOptions) {
        fn send<T: Send>(_: T) {}
        send(a.walk(r, o));
        send(a.applications());
        send(a.frames(r));
        send(a.node(r, CoordKind::Screen));
        send(a.do_action(r, &["click"], true));
        send(a.set_text(r, "x"));
        send(a.insert_text(r, "x"));
        send(a.set_numeric_value(r, 1.0));
        send(a.grab_focus(r));
        send(Atspi::connect(None));
    }

    #[test]
    fn objref_round_trip() {
        let r = ObjRef::new(":1.42", "/org/a11y/atspi/accessible/12");
        assert_eq!(r.encode(), ":1.42|/org/a11y/atspi/accessible/12");
        assert_eq!(ObjRef::decode(&r.encode()), Some(r));
        assert_eq!(ObjRef::decode("nonsense"), None);
        assert_eq!(ObjRef::decode(":1.2|not a path"), None);
        assert_eq!(ObjRef::decode("|/a"), None);
    }

    #[test]
    fn names_are_snake_case() {
        assert_eq!(role_name(at::Role::Button as u32), "push_button");
        assert_eq!(role_name(at::Role::CheckBox as u32), "check_box");
        assert_eq!(role_name(9999), "unknown");
        let words = [
            (at::State::Focused as u64 | at::State::MultiLine as u64) as u32,
            ((at::State::Focused as u64 | at::State::MultiLine as u64) >> 32) as u32,
        ];
        let mut names = state_names(&words);
        names.sort();
        assert_eq!(names, vec!["focused", "multi_line"]);
        // Bits this crate does not know are ignored, not fatal.
        assert!(state_names(&[0, 0x8000_0000]).is_empty());
    }

    #[test]
    fn extents_filter_and_numbers() {
        assert_eq!(extents_rect(-1, -1, -1, -1), None);
        assert_eq!(extents_rect(5, 5, 0, 10), None);
        assert_eq!(extents_rect(0, 0, 10, 10), Some(Rect::new(0, 0, 10, 10)));
        assert_eq!(format_number(5.0), "5");
        assert_eq!(format_number(0.25), "0.25");
    }

    #[test]
    fn visible_ranges_cover_the_rows_on_screen() {
        // Header not hit (None), rows 0..17 of a 2-column table (children 2 + 2 * row).
        let hits = [None, Some(8), Some(14), Some(20), Some(26), Some(32), Some(36)];
        assert_eq!(visible_ranges(&hits, 2, 22, 20_002), vec![(0, 39)]);
        // Scrolled to row 5000: the header is far from the rows, the list ends below.
        let hits = [None, Some(10_010), Some(10_016), Some(10_022), None, None, None];
        assert_eq!(
            visible_ranges(&hits, 2, 22, 20_002),
            vec![(10_010 - 1 - 22 - 2, 10_022 + 1 + 22 + 2)]
        );
        // A hit far from its neighbour (a header above a list scrolled far) stays on its own.
        let hits = [Some(0), Some(10_010), Some(10_020)];
        assert_eq!(
            visible_ranges(&hits, 2, 22, 20_002),
            vec![(0, 3), (10_010 - 1 - 2, 10_020 + 1 + 2)]
        );
        assert!(visible_ranges(&[None, None], 1, 10, 100).is_empty());
        assert_eq!(visible_ranges(&[Some(98), Some(99)], 1, 10, 100), vec![(97, 99)]);
    }

    #[test]
    fn preorder_renumbers() {
        let mk = |name: &str| RawNode {
            obj: ObjRef::new(":1.1", format!("/{name}")),
            parent: None,
            depth: 0,
            role: "panel".into(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: Vec::new(),
            actions: Vec::new(),
            extents: None,
            interfaces: Vec::new(),
            child_count: 0,
            summary: None,
        };
        // Completed out of order: root, b (order 1), a (order 0), a1.
        let slots = vec![
            Slot {
                node: mk("root"),
                parent: None,
                order: 0,
                kids: vec![1, 2],
            },
            Slot {
                node: mk("b"),
                parent: Some(0),
                order: 1,
                kids: vec![],
            },
            Slot {
                node: mk("a"),
                parent: Some(0),
                order: 0,
                kids: vec![3],
            },
            Slot {
                node: mk("a1"),
                parent: Some(2),
                order: 0,
                kids: vec![],
            },
        ];
        let out = preorder(slots, 0);
        let names: Vec<&str> = out.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, vec!["root", "a", "a1", "b"]);
        let parents: Vec<Option<usize>> = out.iter().map(|n| n.parent).collect();
        assert_eq!(parents, vec![None, Some(0), Some(1), Some(0)]);
    }
}
