//! The connection to the accessibility bus and what every AT-SPI call shares: object references,
//! the records a walk and a listing return, bounded calls and their errors, toolkit flavours.
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
//! The walk itself is in `walk.rs` (with `list.rs` for huge containers and `cache.rs` for
//! `Cache.GetItems`), as further `impl Atspi` blocks.

use super::TextMode;
use ::atspi as at;
use lsm_core::{ErrorCode, GuiError, GuiResult, Rect};
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zbus::zvariant::{self as zv, OwnedObjectPath, OwnedValue};

/// Bound on every single D-Bus call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on the per-application look-ups of `applications()`: a hung app must not slow every listing.
pub(crate) const APP_INFO_TIMEOUT: Duration = Duration::from_millis(700);
/// Longest `value` text read from a Text object, in characters.
pub(crate) const MAX_TEXT_CHARS: i32 = 4096;
/// Bound on opening a direct connection to an application.
pub(crate) const PEER_TIMEOUT: Duration = Duration::from_millis(500);

pub(crate) const REGISTRY_BUS: &str = "org.a11y.atspi.Registry";
pub(crate) const REGISTRY_PATH: &str = "/org/a11y/atspi/registry";
pub(crate) const IFACE_REGISTRY: &str = "org.a11y.atspi.Registry";
pub(crate) const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
pub(crate) const CACHE_PATH: &str = "/org/a11y/atspi/cache";
pub(crate) const IFACE_CACHE: &str = "org.a11y.atspi.Cache";
pub(crate) const NULL_PATH: &str = "/org/a11y/atspi/null";
pub(crate) const IFACE_ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
pub(crate) const IFACE_ACTION: &str = "org.a11y.atspi.Action";
pub(crate) const IFACE_APPLICATION: &str = "org.a11y.atspi.Application";
pub(crate) const IFACE_COMPONENT: &str = "org.a11y.atspi.Component";
pub(crate) const IFACE_EDITABLE_TEXT: &str = "org.a11y.atspi.EditableText";
pub(crate) const IFACE_TABLE: &str = "org.a11y.atspi.Table";
pub(crate) const IFACE_TEXT: &str = "org.a11y.atspi.Text";
pub(crate) const IFACE_VALUE: &str = "org.a11y.atspi.Value";
pub(crate) const IFACE_PROPERTIES: &str = "org.freedesktop.DBus.Properties";
pub(crate) const IFACE_PREFIX: &str = "org.a11y.atspi.";

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

    pub(crate) fn is_null(&self) -> bool {
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
    pub(crate) fn atspi(self) -> u32 {
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
    /// or (-1,-1). `shift` is already added.
    pub extents: Option<Rect>,
    /// A correction added to this object's raw extents: LibreOffice's gtk3 root pane reports
    /// itself and all below it at its container's position minus the native menu bar's
    /// height. Kept in the element handle so that re-reads apply it too.
    pub shift: (i32, i32),
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

pub(crate) fn classify(what: &str, e: zbus::Error) -> CallError {
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
    pub(crate) conn: zbus::Connection,
    pub(crate) address: String,
    pub(crate) call_timeout: Duration,
    /// Application info by unique bus name: it never changes for a given connection.
    pub(crate) apps: Arc<Mutex<HashMap<String, AppInfo>>>,
    /// Toolkit name and version by unique bus name, for the toolkit-specific paths.
    pub(crate) toolkits: Arc<Mutex<HashMap<String, (String, String)>>>,
    /// Whether the event listener that makes GTK 3 serve its cache is registered (set once per
    /// connection; the registry drops it when the connection closes).
    pub(crate) listener: Arc<tokio::sync::OnceCell<bool>>,
    /// Applications whose cache could not be had, and when that was found.
    pub(crate) no_cache: Arc<Mutex<HashMap<String, Instant>>>,
    /// D-Bus calls made so far (for measurements).
    pub(crate) calls: Arc<AtomicUsize>,
    /// Action names read in earlier walks, for toolkits whose object paths are never given to
    /// another object (`Flavor::stable_paths`): an object's actions come with its class.
    pub(crate) action_memo: Arc<Mutex<HashMap<ObjRef, Vec<String>>>>,
    /// Direct (peer-to-peer) connections by application bus name; `None` inside: not offered.
    pub(crate) peers: Arc<Mutex<HashMap<String, PeerSlot>>>,
}

/// A direct connection to one application, opened once.
type PeerSlot = Arc<tokio::sync::OnceCell<Option<zbus::Connection>>>;

/// A slot that says "no direct connection".
pub(crate) fn no_peer() -> PeerSlot {
    Arc::new(tokio::sync::OnceCell::new_with(Some(None)))
}

impl std::fmt::Debug for Atspi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Atspi").field("address", &self.address).finish()
    }
}

/// The properties every object is read for first.
#[derive(Clone)]
pub(crate) struct Basics {
    pub(crate) role: String,
    pub(crate) states: Vec<String>,
    pub(crate) interfaces: Vec<String>,
    pub(crate) name: String,
    pub(crate) description: String,
    /// -1: unknown (the cache does not count the children of objects managing descendants).
    pub(crate) child_count: i32,
}

impl Basics {
    /// Only the states known (an object dropped before the rest was read).
    pub(crate) fn unknown(states: Vec<String>) -> Basics {
        Basics {
            role: "unknown".into(),
            states,
            interfaces: Vec::new(),
            name: String::new(),
            description: String::new(),
            child_count: 0,
        }
    }
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
            action_memo: Arc::default(),
            calls: Arc::default(),
            peers: Arc::default(),
        })
    }

    pub(crate) async fn address_from_session_bus(call_timeout: Duration) -> GuiResult<String> {
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
            return Err(GuiError::unavailable(
                "no accessibility bus: neither AT_SPI_BUS_ADDRESS nor DBUS_SESSION_BUS_ADDRESS is set",
            ));
        }
        let work = async {
            let session = crate::session::bus::connect()
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
    pub(crate) async fn call_on<B, R>(
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
        // LSM_LOG=lsm_calls=trace lists every call (what a walk costs an application) and how
        // long its answer took (where a walk waits).
        tracing::trace!(target: "lsm_calls", "{iface}.{method} {path}");
        let fut = conn.call_method(dest, path, Some(iface), method, body);
        let sent = Instant::now();
        let answer = tokio::time::timeout(limit, fut).await;
        tracing::trace!(target: "lsm_calls", "{iface}.{method} {path} answered in {:?}", sent.elapsed());
        match answer {
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
    pub(crate) fn peer_of(&self, bus: &str) -> Option<zbus::Connection> {
        let slot = self.peers.lock().ok()?.get(bus).cloned()?;
        slot.get().cloned().flatten()
    }

    /// Opens (once per application) a direct connection to the application owning `bus` when it
    /// offers one (`Application.GetApplicationBusAddress`: at-spi2-atk, i.e. GTK 3), so that its
    /// calls skip the bus daemon: half the messages, and its CPU time, per call.
    pub(crate) async fn ensure_peer(&self, bus: &str) {
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

    pub(crate) async fn prop_t(
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

    pub(crate) async fn prop_string(
        &self,
        obj: &ObjRef,
        iface: &str,
        name: &str,
    ) -> Result<String, CallError> {
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

    pub(crate) async fn children_of(&self, obj: &ObjRef) -> Result<Vec<ObjRef>, CallError> {
        let list: Vec<(String, OwnedObjectPath)> =
            self.call(obj, IFACE_ACCESSIBLE, "GetChildren", &()).await?;
        Ok(list
            .into_iter()
            .map(|(bus, path)| ObjRef::new(bus, path.as_str()))
            .filter(|r| !r.is_null())
            .collect())
    }

    pub(crate) async fn states_of(&self, obj: &ObjRef) -> Result<Vec<String>, CallError> {
        let words: Vec<u32> = self.call(obj, IFACE_ACCESSIBLE, "GetState", &()).await?;
        Ok(state_names(&words))
    }

    pub(crate) async fn role_of(&self, obj: &ObjRef) -> Result<String, CallError> {
        let role: u32 = self.call(obj, IFACE_ACCESSIBLE, "GetRole", &()).await?;
        Ok(role_name(role))
    }

    pub(crate) async fn extents_of(
        &self,
        obj: &ObjRef,
        coords: CoordKind,
    ) -> Result<Option<Rect>, CallError> {
        let (x, y, w, h): (i32, i32, i32, i32) = self
            .call(obj, IFACE_COMPONENT, "GetExtents", &(coords.atspi(),))
            .await?;
        Ok(extents_rect(x, y, w, h))
    }

    /// Action names for the tree, in one `GetActions` call. Those are the localized names ("Click"
    /// for "click" in GTK): lowercased they match the canonical ones in English sessions.
    pub(crate) async fn action_names(&self, obj: &ObjRef) -> Result<Vec<String>, CallError> {
        match self
            .call::<_, Vec<(String, String, String)>>(obj, IFACE_ACTION, "GetActions", &())
            .await
        {
            Ok(list) => Ok(list.into_iter().map(|(name, _, _)| name.to_lowercase()).collect()),
            Err(CallError::Unsupported(_)) => self.raw_action_names(obj).await,
            Err(e) => Err(e),
        }
    }

    /// [`Atspi::action_names`], read once per object where `stable_paths` (see
    /// [`super::Flavor::stable_paths`]); acting reads them again, so a remembered list only describes.
    pub(crate) async fn action_names_once(&self, obj: &ObjRef, stable_paths: bool) -> Vec<String> {
        /// Objects remembered at most; past it the memo starts again (an application that
        /// made that many actionable objects has dropped most of them).
        const MAX_REMEMBERED: usize = 50_000;
        if !stable_paths {
            return self.action_names(obj).await.unwrap_or_default();
        }
        if let Some(names) = self.action_memo.lock().ok().and_then(|m| m.get(obj).cloned()) {
            return names;
        }
        match self.action_names(obj).await {
            Ok(names) => {
                if let Ok(mut memo) = self.action_memo.lock() {
                    if memo.len() >= MAX_REMEMBERED {
                        memo.clear();
                    }
                    memo.insert(obj.clone(), names.clone());
                }
                names
            }
            Err(_) => Vec::new(),
        }
    }

    /// The canonical, not localized, action names (`NActions` + `GetName` each).
    pub(crate) async fn raw_action_names(&self, obj: &ObjRef) -> Result<Vec<String>, CallError> {
        let n = self.prop_int(obj, IFACE_ACTION, "NActions").await?.clamp(0, 256) as i32;
        let names =
            (0..n).map(|i| async move { self.call::<_, String>(obj, IFACE_ACTION, "GetName", &(i,)).await });
        futures_util::future::join_all(names).await.into_iter().collect()
    }

    /// The text of a Text object, at most [`MAX_TEXT_CHARS`] characters.
    pub(crate) async fn text_of(&self, obj: &ObjRef, mode: TextMode) -> Result<String, CallError> {
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

    pub(crate) async fn value_of(&self, obj: &ObjRef) -> Result<String, CallError> {
        Ok(format_number(
            self.prop_f64(obj, IFACE_VALUE, "CurrentValue").await?,
        ))
    }

    /// Role, states, interfaces, name, description and child count of one object. `None` when it
    /// is gone or defunct. `getall`: read the Accessible properties in one `GetAll`. `known`:
    /// the states, when already read.
    pub(crate) async fn basics(
        &self,
        obj: &ObjRef,
        getall: bool,
        known: Option<Vec<String>>,
    ) -> Result<Option<Basics>, CallError> {
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
            async {
                match known {
                    Some(s) => Ok(s),
                    None => self.states_of(obj).await,
                }
            },
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
}

/// "org.a11y.atspi.Text" -> "Text".
pub(crate) fn short_interfaces(ifaces: Vec<String>) -> Vec<String> {
    ifaces
        .into_iter()
        .map(|i| i.strip_prefix(IFACE_PREFIX).map(str::to_string).unwrap_or(i))
        .collect()
}

/// snake_case role name; "unknown" for roles this crate does not know.
pub(crate) fn role_name(role: u32) -> String {
    match at::Role::try_from(role) {
        // The crate says "button"; AT-SPI itself (GetRoleName, libatspi) says "push button".
        Ok(at::Role::Button) => "push_button".into(),
        Ok(r) => r.name().replace([' ', '-'], "_"),
        Err(_) => "unknown".into(),
    }
}

/// snake_case names of the set bits of an AT-SPI state set (two u32 words, low first).
pub(crate) fn state_names(words: &[u32]) -> Vec<String> {
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

pub(crate) fn extents_rect(x: i32, y: i32, w: i32, h: i32) -> Option<Rect> {
    // Placeholders for "not known" ((-1,-1,-1,-1), i32::MIN positions) and empty areas. A real
    // size at (-1,-1) is a real area (GTK 4 header bars overhang their window by a pixel).
    if w <= 0 || h <= 0 || x == i32::MIN || y == i32::MIN {
        return None;
    }
    Some(Rect::new(x, y, w, h))
}

pub(crate) fn format_number(v: f64) -> String {
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

fn value_as_f64(v: &OwnedValue) -> Option<f64> {
    match &**v {
        zv::Value::F64(f) => Some(*f),
        _ => value_as_i64(v).map(|n| n as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
