//! The connection to one X display (`X11`), the window list (EWMH), focus, raising and the
//! modal state of windows; capture, pointer and keyboard input are further `impl X11` blocks
//! beside it (`capture.rs`, `pointer.rs`, `keys.rs`).
//!
//! Every request goes to a local server, so replies are quick; what could block forever
//! (the connect, waits for focus) is bounded explicitly.

use super::keymap::KeyMap;
use super::shm;
use crate::window::WindowRecord;
use lsm_core::{ErrorCode, GuiError, GuiResult, MouseButton, Rect};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::errors::{ConnectionError, ReplyError, ReplyOrIdError};
use x11rb::protocol::composite::ConnectionExt as _;
use x11rb::protocol::damage::ConnectionExt as _;
use x11rb::protocol::xproto::{
    self, AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, CreateWindowAux, EventMask,
    GetPropertyReply, InputFocus, MapState, PropMode, StackMode, WindowClass,
};
use x11rb::protocol::{ErrorKind, Event};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// How long `connect` waits for the server's handshake.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Upper bound for `activate` to see the focus arrive.
pub(super) const FOCUS_WAIT: Duration = Duration::from_millis(500);
pub(super) const FOCUS_POLL: Duration = Duration::from_millis(10);
/// Time given to clients to fetch a changed keyboard mapping (MappingNotify) before we type
/// with it, and to translate our keys before we restore it.
pub(super) const REMAP_SETTLE: Duration = Duration::from_millis(60);
/// Between a combo's modifier presses and its key, as a hand leaves it: Qt reads the modifier
/// state from XKB state events, and a key in the same instant as its Alt opened no menu.
pub(super) const MODIFIER_SETTLE: Duration = Duration::from_millis(15);
/// Gap between the clicks of a multi-click: well inside GTK's 400 ms double-click time.
pub(super) const CLICK_GAP: Duration = Duration::from_millis(40);
/// Quiet time before a multi-click: longer than the usual double-click time (GTK: 400 ms).
pub(super) const MULTI_CLICK_QUIET: Duration = Duration::from_millis(600);
/// Between moving the pointer onto a point and pressing there: GTK 3 drops a press that comes
/// in the same instant as the pointer's first arrival over a window's control (galculator on a
/// fresh desktop: the first click at a key lost every time with no pause, never with 5 ms).
pub(super) const POINTER_ARRIVE: Duration = Duration::from_millis(15);
pub(super) const DRAG_STEPS: i32 = 10;
pub(super) const DRAG_STEP_PAUSE: Duration = Duration::from_millis(15);
/// How long a check for an EWMH window manager is trusted (it only changes when one starts or quits).
pub(super) const EWMH_RECHECK: Duration = Duration::from_secs(2);
/// Bounds that keep every input call short.
pub(super) const MAX_CLICKS: u32 = 10;
pub(super) const MAX_SCROLL: i32 = 200;
/// Bound on parent-chain walks (real trees are a few levels deep).
pub(super) const MAX_TREE_DEPTH: usize = 64;
/// Bound on events drained in one go.
pub(super) const MAX_DRAIN: usize = 100_000;

// Core protocol event codes used by XTest FakeInput.
pub(super) const KEY_PRESS: u8 = xproto::KEY_PRESS_EVENT;
pub(super) const KEY_RELEASE: u8 = xproto::KEY_RELEASE_EVENT;
pub(super) const BUTTON_PRESS: u8 = xproto::BUTTON_PRESS_EVENT;
pub(super) const BUTTON_RELEASE: u8 = xproto::BUTTON_RELEASE_EVENT;
pub(super) const MOTION: u8 = xproto::MOTION_NOTIFY_EVENT;

// ICCCM WM_STATE values.
pub(super) const WM_STATE_ICONIC: u32 = 3;

x11rb::atom_manager! {
    Atoms: AtomsCookie {
        _NET_CLIENT_LIST_STACKING,
        _NET_CLIENT_LIST,
        _NET_ACTIVE_WINDOW,
        _NET_SUPPORTING_WM_CHECK,
        _NET_WM_NAME,
        UTF8_STRING,
        _NET_WM_PID,
        _NET_WM_WINDOW_TYPE,
        _NET_WM_WINDOW_TYPE_DOCK,
        _NET_WM_WINDOW_TYPE_DESKTOP,
        _NET_WM_STATE,
        _NET_WM_STATE_HIDDEN,
        _NET_WM_STATE_MODAL,
        WM_STATE,
        _GTK_FRAME_EXTENTS,
        _LSM_TIMESTAMP,
    }
}

/// A connection to one X display.
pub struct X11 {
    pub(super) conn: RustConnection,
    pub(super) root: u32,
    atoms: Atoms,
    /// `_NET_WM_CM_S<screen>`: owned while a compositing manager runs.
    pub(super) cm_atom: u32,
    /// Our own unmapped window, used to obtain server timestamps.
    pub(super) helper: u32,
    pub(super) has_composite: bool,
    /// The Damage extension, to see when a window has repainted after its redirection.
    pub(super) has_damage: bool,
    /// Areas (root coordinates) of the DamageNotify events `pump` saw since they were last
    /// taken, per Damage object that waits for a repaint (see `redirect.rs`; the watches of
    /// `repaints.rs` are apart).
    pub(super) damage_areas: Mutex<HashMap<u32, Vec<Rect>>>,
    /// Top-levels being redirected whose repaint is waited for, since when (see `redirect.rs`).
    pub(super) pending_redirects: Mutex<HashMap<u32, Instant>>,
    /// Top-levels we redirected for capture (see `capture.rs`).
    pub(super) redirected: Mutex<HashSet<u32>>,
    /// Captured top-levels watched for repaints (see `repaints.rs`).
    pub(super) watches: Mutex<super::watches::Watches>,
    pub(super) has_xtest: bool,
    /// Latest server time seen on a PropertyNotify of `helper`.
    pub(super) last_time: AtomicU32,
    pub(super) keymap: Mutex<Option<KeyMap>>,
    /// Serialises input sequences so modifier presses and remaps never interleave.
    pub(super) input: Mutex<()>,
    /// When we last pressed a mouse button (see `MULTI_CLICK_QUIET`).
    pub(super) last_press: Mutex<Option<Instant>>,
    /// Whether an EWMH window manager runs, and when that was read (see `EWMH_RECHECK`).
    pub(super) ewmh: Mutex<Option<(Instant, bool)>>,
    /// MIT-SHM for captures: offered and not yet found broken.
    pub(super) shm_usable: AtomicBool,
    pub(super) shm_segment: Mutex<Option<shm::Segment>>,
    /// The connection failed (the server went away): this X11 is done for.
    pub(super) lost: AtomicBool,
}

// ---------------------------------------------------------------- errors

pub(super) fn conn_err(e: ConnectionError) -> GuiError {
    GuiError::unavailable(format!("X11 connection failed: {e}"))
}

pub(super) fn reply_err(what: &str, e: ReplyError) -> GuiError {
    match e {
        ReplyError::ConnectionError(e) => conn_err(e),
        ReplyError::X11Error(x) => GuiError::backend(format!("X11 {what} failed: {:?}", x.error_kind)),
    }
}

/// Like `reply_err`, but a BadWindow/BadDrawable on `id` means the window is gone.
pub(super) fn win_err(id: u32, what: &str, e: ReplyError) -> GuiError {
    match &e {
        ReplyError::X11Error(x)
            if matches!(x.error_kind, ErrorKind::Window | ErrorKind::Drawable) && x.bad_value == id =>
        {
            GuiError::window_not_found(&format!("0x{id:x}"))
        }
        _ => reply_err(what, e),
    }
}

pub(super) fn id_err(e: ReplyOrIdError) -> GuiError {
    match e {
        ReplyOrIdError::ConnectionError(e) => conn_err(e),
        other => GuiError::backend(format!("X11: {other}")),
    }
}

pub(super) fn is_not_found(e: &GuiError) -> bool {
    e.code == ErrorCode::WindowNotFound
}

// ---------------------------------------------------------------- properties

pub(super) fn prop_u32s(r: &GetPropertyReply) -> Vec<u32> {
    r.value32().map(|it| it.collect()).unwrap_or_default()
}

pub(super) fn prop_text(r: &GetPropertyReply) -> Option<String> {
    if r.value.is_empty() {
        return None;
    }
    let v = r.value.split(|&b| b == 0).next().unwrap_or(&[]);
    Some(match std::str::from_utf8(v) {
        Ok(s) => s.to_owned(),
        // STRING is Latin-1.
        Err(_) => v.iter().map(|&b| b as char).collect(),
    })
}

pub(super) fn wm_class(r: &GetPropertyReply) -> (String, String) {
    let mut parts = r
        .value
        .split(|&b| b == 0)
        .map(|p| String::from_utf8_lossy(p).into_owned());
    (parts.next().unwrap_or_default(), parts.next().unwrap_or_default())
}

pub(super) fn to_i16(v: i32) -> i16 {
    v.clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

pub(super) fn button_number(b: MouseButton) -> u8 {
    match b {
        MouseButton::Left => 1,
        MouseButton::Middle => 2,
        MouseButton::Right => 3,
    }
}

/// Who has the focus, read once for a whole window list.
pub(super) struct FocusInfo {
    /// `_NET_ACTIVE_WINDOW` when an EWMH window manager runs.
    active: Option<u32>,
    /// The input focus window and its ancestors.
    chain: Vec<u32>,
}

impl FocusInfo {
    fn is_focused(&self, id: u32) -> bool {
        match self.active {
            Some(a) => a == id,
            None => self.chain.contains(&id),
        }
    }
}

/// Facts about one window beyond `WindowRecord`.
pub(super) struct Described {
    window: WindowRecord,
    types: Vec<u32>,
}

// ---------------------------------------------------------------- connection

impl X11 {
    /// Connects to `display` (None = `$DISPLAY`), bounded by a timeout.
    pub fn connect(display: Option<&str>) -> GuiResult<X11> {
        let name = match display {
            Some(d) => d.to_owned(),
            None => std::env::var("DISPLAY")
                .ok()
                .filter(|d| !d.is_empty())
                .ok_or_else(|| GuiError::unavailable("DISPLAY is not set: no X display to connect to"))?,
        };
        let (conn, screen) = connect_bounded(&name)?;
        Self::init(conn, screen)
            .map_err(|e| GuiError::unavailable(format!("X display {name}: {}", e.message)))
    }

    fn init(conn: RustConnection, screen: usize) -> GuiResult<X11> {
        let root = conn
            .setup()
            .roots
            .get(screen)
            .map(|s| s.root)
            .ok_or_else(|| GuiError::backend(format!("X server has no screen {screen}")))?;
        let atoms = Atoms::new(&conn)
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("InternAtom", e))?;
        let cm_atom = conn
            .intern_atom(false, format!("_NET_WM_CM_S{screen}").as_bytes())
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("InternAtom", e))?
            .atom;
        let has_composite = init_composite(&conn)?;
        let has_damage = has_composite && init_damage(&conn);
        let has_xtest = conn
            .extension_information(x11rb::protocol::xtest::X11_EXTENSION_NAME)
            .map_err(conn_err)?
            .is_some();
        let helper = create_helper(&conn, root)?;
        let shm_usable = shm::supported(&conn);
        Ok(X11 {
            conn,
            root,
            atoms,
            cm_atom,
            helper,
            has_composite,
            has_damage,
            damage_areas: Mutex::default(),
            pending_redirects: Mutex::default(),
            redirected: Mutex::new(HashSet::new()),
            watches: Mutex::default(),
            has_xtest,
            last_time: AtomicU32::new(0),
            keymap: Mutex::new(None),
            input: Mutex::new(()),
            last_press: Mutex::new(None),
            ewmh: Mutex::new(None),
            shm_usable: AtomicBool::new(shm_usable),
            shm_segment: Mutex::new(None),
            lost: AtomicBool::new(false),
        })
    }

    /// Makes sure the server has processed every request sent so far.
    pub fn sync(&self) -> GuiResult<()> {
        self.conn
            .get_input_focus()
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("GetInputFocus", e))?;
        Ok(())
    }

    /// Whether a compositing manager owns `_NET_WM_CM_S<n>`.
    pub fn compositor_running(&self) -> GuiResult<bool> {
        let owner = self
            .conn
            .get_selection_owner(self.cm_atom)
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("GetSelectionOwner", e))?
            .owner;
        Ok(owner != x11rb::NONE)
    }

    /// The root window's size (it changes with RandR, so it is read each time).
    pub fn screen_rect(&self) -> GuiResult<Rect> {
        let g = self.geometry(self.root)?;
        Ok(Rect::new(0, 0, g.width as i32, g.height as i32))
    }

    /// Whether the connection to the server is gone (read from the socket without blocking).
    /// Whether the server offers XTEST (raw pointer and keyboard input).
    pub fn has_xtest(&self) -> bool {
        self.has_xtest
    }

    pub fn connection_lost(&self) -> bool {
        self.pump();
        self.lost.load(Ordering::Relaxed)
    }

    /// Drains queued events: keeps the queue bounded, notices keymap changes (MappingNotify
    /// goes to every client) and records the time of our own PropertyNotify.
    pub(super) fn pump(&self) {
        for _ in 0..MAX_DRAIN {
            match self.conn.poll_for_event() {
                Ok(Some(Event::MappingNotify(_))) => *self.lock_keymap() = None,
                Ok(Some(Event::PropertyNotify(ev))) if ev.window == self.helper => {
                    self.last_time.store(ev.time, Ordering::Relaxed)
                }
                Ok(Some(Event::DamageNotify(ev))) => self.note_damage(&ev),
                Ok(Some(Event::Error(e))) => tracing::debug!("X11 async error: {e:?}"),
                Ok(Some(_)) => {}
                Ok(None) => return,
                Err(_) => {
                    self.lost.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    }

    /// A current server timestamp (0 = CurrentTime if none could be obtained).
    fn server_time(&self) -> GuiResult<u32> {
        let atom = self.atoms._LSM_TIMESTAMP;
        self.conn
            .change_property8(PropMode::APPEND, self.helper, atom, AtomEnum::STRING, &[])
            .map_err(conn_err)?;
        // The PropertyNotify is queued before the sync reply arrives.
        self.sync()?;
        self.pump();
        Ok(self.last_time.load(Ordering::Relaxed))
    }

    pub(super) fn lock_keymap(&self) -> MutexGuard<'_, Option<KeyMap>> {
        self.keymap.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn lock_input(&self) -> MutexGuard<'_, ()> {
        self.input.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Connects on a helper thread so a server that accepts but never answers cannot hang us.
pub(super) fn connect_bounded(name: &str) -> GuiResult<(RustConnection, usize)> {
    let (tx, rx) = mpsc::channel();
    let n = name.to_owned();
    std::thread::Builder::new()
        .name("x11-connect".into())
        .spawn(move || {
            let _ = tx.send(RustConnection::connect(Some(&n)));
        })
        .map_err(|e| GuiError::backend(format!("cannot start the X11 connect thread: {e}")))?;
    match rx.recv_timeout(CONNECT_TIMEOUT) {
        Ok(Ok(pair)) => Ok(pair),
        Ok(Err(e)) => Err(GuiError::unavailable(crate::x11::display_error::cannot_open(
            name, &e,
        ))),
        Err(_) => Err(GuiError::unavailable(format!(
            "cannot connect to X display {name}: no answer within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// Announces our Composite version (required before other Composite requests).
pub(super) fn init_composite(conn: &RustConnection) -> GuiResult<bool> {
    let present = conn
        .extension_information(x11rb::protocol::composite::X11_EXTENSION_NAME)
        .map_err(conn_err)?
        .is_some();
    if !present {
        return Ok(false);
    }
    let v = conn
        .composite_query_version(0, 4)
        .map_err(conn_err)?
        .reply()
        .map_err(|e| reply_err("CompositeQueryVersion", e))?;
    // NameWindowPixmap needs 0.2.
    Ok(v.major_version > 0 || v.minor_version >= 2)
}

/// Announces our Damage version (required before other Damage requests); false without it.
pub(super) fn init_damage(conn: &RustConnection) -> bool {
    let present = conn
        .extension_information(x11rb::protocol::damage::X11_EXTENSION_NAME)
        .is_ok_and(|e| e.is_some());
    present
        && conn
            .damage_query_version(1, 1)
            .map(|c| c.reply().is_ok())
            .unwrap_or(false)
}

/// An unmapped 1x1 InputOnly window whose property changes tell us the server time.
pub(super) fn create_helper(conn: &RustConnection, root: u32) -> GuiResult<u32> {
    let id = conn.generate_id().map_err(id_err)?;
    let aux = CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE);
    conn.create_window(0, id, root, -1, -1, 1, 1, 0, WindowClass::INPUT_ONLY, 0, &aux)
        .map_err(conn_err)?
        .check()
        .map_err(|e| reply_err("CreateWindow", e))?;
    Ok(id)
}

impl Drop for X11 {
    fn drop(&mut self) {
        let _ = self.conn.destroy_window(self.helper);
        let _ = self.conn.flush();
    }
}

// ---------------------------------------------------------------- windows

impl X11 {
    pub(super) fn geometry(&self, id: u32) -> GuiResult<xproto::GetGeometryReply> {
        self.conn
            .get_geometry(id)
            .map_err(conn_err)?
            .reply()
            .map_err(|e| win_err(id, "GetGeometry", e))
    }

    fn root_prop(&self, atom: u32, ty: impl Into<u32>) -> GuiResult<GetPropertyReply> {
        self.conn
            .get_property(false, self.root, atom, ty, 0, 1 << 16)
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("GetProperty", e))
    }

    /// A text property of the root window by name (e.g. `RESOURCE_MANAGER`, `AT_SPI_BUS`);
    /// None when it is not set.
    pub fn root_text_property(&self, name: &str) -> GuiResult<Option<String>> {
        let atom = self
            .conn
            .intern_atom(true, name.as_bytes())
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("InternAtom", e))?
            .atom;
        if atom == x11rb::NONE {
            return Ok(None);
        }
        Ok(prop_text(&self.root_prop(atom, AtomEnum::ANY)?))
    }

    /// True when an EWMH window manager runs: `_NET_SUPPORTING_WM_CHECK` on the root names
    /// a window that points to itself (a stale property from a dead WM fails this).
    pub fn ewmh_wm(&self) -> GuiResult<bool> {
        let mut cached = self.ewmh.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, running)) = *cached {
            if at.elapsed() < EWMH_RECHECK {
                return Ok(running);
            }
        }
        let running = self.read_ewmh_wm()?;
        *cached = Some((Instant::now(), running));
        Ok(running)
    }

    fn read_ewmh_wm(&self) -> GuiResult<bool> {
        let check = self.atoms._NET_SUPPORTING_WM_CHECK;
        let Some(w) = prop_u32s(&self.root_prop(check, AtomEnum::WINDOW)?)
            .first()
            .copied()
        else {
            return Ok(false);
        };
        let own = self
            .conn
            .get_property(false, w, check, AtomEnum::WINDOW, 0, 1)
            .map_err(conn_err)?
            .reply();
        Ok(matches!(own, Ok(r) if prop_u32s(&r).first() == Some(&w)))
    }

    fn active_window(&self) -> GuiResult<Option<u32>> {
        let r = self.root_prop(self.atoms._NET_ACTIVE_WINDOW, AtomEnum::WINDOW)?;
        Ok(prop_u32s(&r).first().copied())
    }

    /// `id` and its ancestors up to (excluding) the root.
    fn ancestors(&self, id: u32) -> GuiResult<Vec<u32>> {
        let mut chain = Vec::new();
        let mut w = id;
        for _ in 0..MAX_TREE_DEPTH {
            if w == self.root || w == x11rb::NONE {
                break;
            }
            chain.push(w);
            w = self
                .conn
                .query_tree(w)
                .map_err(conn_err)?
                .reply()
                .map_err(|e| win_err(id, "QueryTree", e))?
                .parent;
        }
        Ok(chain)
    }

    /// The input focus window and its ancestors (PointerRoot: the root child under the pointer).
    fn focus_chain(&self) -> GuiResult<Vec<u32>> {
        let mut focus = self
            .conn
            .get_input_focus()
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("GetInputFocus", e))?
            .focus;
        if focus == u32::from(InputFocus::POINTER_ROOT) {
            focus = self
                .conn
                .query_pointer(self.root)
                .map_err(conn_err)?
                .reply()
                .map_err(|e| reply_err("QueryPointer", e))?
                .child;
        }
        match self.ancestors(focus) {
            Ok(c) => Ok(c),
            // The focus window vanished meanwhile: nobody has the focus.
            Err(e) if is_not_found(&e) || e.code == ErrorCode::BackendError => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    fn focus_info(&self) -> GuiResult<FocusInfo> {
        let active = if self.ewmh_wm()? {
            self.active_window()?
        } else {
            None
        };
        let chain = if active.is_none() {
            self.focus_chain()?
        } else {
            Vec::new()
        };
        Ok(FocusInfo { active, chain })
    }

    /// Client windows, topmost first.
    fn client_ids(&self) -> GuiResult<Vec<u32>> {
        if self.ewmh_wm()? {
            for atom in [self.atoms._NET_CLIENT_LIST_STACKING, self.atoms._NET_CLIENT_LIST] {
                let r = self.root_prop(atom, AtomEnum::WINDOW)?;
                if r.type_ != x11rb::NONE {
                    let mut ids = prop_u32s(&r);
                    ids.reverse();
                    return Ok(ids);
                }
            }
        }
        self.root_clients()
    }

    /// The root's children, bottom to top of the stack.
    pub(super) fn root_children(&self) -> GuiResult<Vec<u32>> {
        let tree = self
            .conn
            .query_tree(self.root)
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("QueryTree", e))?;
        Ok(tree.children)
    }

    /// Without an EWMH WM: viewable, managed children of the root, topmost first; for a
    /// reparenting WM the client is the descendant carrying WM_STATE.
    fn root_clients(&self) -> GuiResult<Vec<u32>> {
        let mut out = Vec::new();
        for &child in self.root_children()?.iter().rev() {
            let Ok(attrs) = self.conn.get_window_attributes(child).map_err(conn_err)?.reply() else {
                continue;
            };
            if attrs.map_state != MapState::VIEWABLE
                || attrs.override_redirect
                || attrs.class != WindowClass::INPUT_OUTPUT
            {
                continue;
            }
            out.push(self.find_client(child, 3)?.unwrap_or(child));
        }
        Ok(out)
    }

    /// The first window at or below `w` (depth-limited) that has WM_STATE.
    fn find_client(&self, w: u32, depth: u32) -> GuiResult<Option<u32>> {
        let r = self
            .conn
            .get_property(false, w, self.atoms.WM_STATE, AtomEnum::ANY, 0, 0)
            .map_err(conn_err)?
            .reply();
        if matches!(&r, Ok(p) if p.type_ != x11rb::NONE) {
            return Ok(Some(w));
        }
        if depth == 0 {
            return Ok(None);
        }
        let Ok(tree) = self.conn.query_tree(w).map_err(conn_err)?.reply() else {
            return Ok(None);
        };
        for &c in &tree.children {
            if let Some(found) = self.find_client(c, depth - 1)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Top-level application windows, topmost first, without docks and desktops.
    pub fn list_windows(&self) -> GuiResult<Vec<WindowRecord>> {
        self.pump();
        let focus = self.focus_info()?;
        let skip = [
            self.atoms._NET_WM_WINDOW_TYPE_DOCK,
            self.atoms._NET_WM_WINDOW_TYPE_DESKTOP,
        ];
        let mut out = Vec::new();
        for id in self.client_ids()? {
            match self.describe(id, &focus) {
                Ok(Some(d)) if !d.types.iter().any(|t| skip.contains(t)) => out.push(d.window),
                Ok(_) => {}
                // Closed while we were listing.
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Current state of one window; None when it no longer exists or is withdrawn (unmapped
    /// and not iconified).
    pub fn window(&self, id: u32) -> GuiResult<Option<WindowRecord>> {
        self.pump();
        let described = if self.ewmh_wm()? {
            // One round trip: the active window is asked for in the same batch as the rest.
            let active = self
                .conn
                .get_property(
                    false,
                    self.root,
                    self.atoms._NET_ACTIVE_WINDOW,
                    AtomEnum::WINDOW,
                    0,
                    1,
                )
                .map_err(conn_err)?;
            let unknown = FocusInfo {
                active: Some(x11rb::NONE),
                chain: Vec::new(),
            };
            let d = self.describe(id, &unknown);
            let active = active.reply().map_err(|e| reply_err("GetProperty", e))?;
            d.map(|d| {
                d.map(|mut d| {
                    d.window.focused = prop_u32s(&active).first() == Some(&id);
                    d
                })
            })
        } else {
            self.focus_info().and_then(|focus| self.describe(id, &focus))
        };
        match described {
            Ok(d) => Ok(d.map(|d| d.window)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads everything about `id` in one pipelined batch of requests.
    fn describe(&self, id: u32, focus: &FocusInfo) -> GuiResult<Option<Described>> {
        let a = &self.atoms;
        let c = &self.conn;
        let prop =
            |atom: u32, ty: u32, len: u32| c.get_property(false, id, atom, ty, 0, len).map_err(conn_err);
        let attrs = c.get_window_attributes(id).map_err(conn_err)?;
        let geom = c.get_geometry(id).map_err(conn_err)?;
        let pos = c.translate_coordinates(id, self.root, 0, 0).map_err(conn_err)?;
        let net_name = prop(a._NET_WM_NAME, a.UTF8_STRING, 4096)?;
        let name = prop(AtomEnum::WM_NAME.into(), AtomEnum::ANY.into(), 4096)?;
        let class = prop(AtomEnum::WM_CLASS.into(), AtomEnum::STRING.into(), 1024)?;
        let pid = prop(a._NET_WM_PID, AtomEnum::CARDINAL.into(), 1)?;
        let types = prop(a._NET_WM_WINDOW_TYPE, AtomEnum::ATOM.into(), 64)?;
        let state = prop(a._NET_WM_STATE, AtomEnum::ATOM.into(), 64)?;
        let wm_state = prop(a.WM_STATE, a.WM_STATE, 2)?;
        let extents = prop(a._GTK_FRAME_EXTENTS, AtomEnum::CARDINAL.into(), 4)?;
        let transient = prop(AtomEnum::WM_TRANSIENT_FOR.into(), AtomEnum::WINDOW.into(), 1)?;

        let e = |what: &'static str| move |err| win_err(id, what, err);
        let attrs = attrs.reply().map_err(e("GetWindowAttributes"))?;
        let geom = geom.reply().map_err(e("GetGeometry"))?;
        let pos = pos.reply().map_err(e("TranslateCoordinates"))?;
        let net_name = net_name.reply().map_err(e("GetProperty"))?;
        let name = name.reply().map_err(e("GetProperty"))?;
        let class = class.reply().map_err(e("GetProperty"))?;
        let pid = prop_u32s(&pid.reply().map_err(e("GetProperty"))?)
            .first()
            .copied();
        let types = prop_u32s(&types.reply().map_err(e("GetProperty"))?);
        let state = prop_u32s(&state.reply().map_err(e("GetProperty"))?);
        let wm_state = prop_u32s(&wm_state.reply().map_err(e("GetProperty"))?)
            .first()
            .copied();
        let extents = prop_u32s(&extents.reply().map_err(e("GetProperty"))?);
        let transient_for = prop_u32s(&transient.reply().map_err(e("GetProperty"))?)
            .first()
            .copied()
            .filter(|w| *w != x11rb::NONE && *w != self.root && *w != id);

        let hidden = state.contains(&a._NET_WM_STATE_HIDDEN);
        let iconic = wm_state == Some(WM_STATE_ICONIC);
        if attrs.map_state == MapState::UNMAPPED && !iconic && !hidden {
            return Ok(None);
        }
        let (instance, class) = wm_class(&class);
        let window = WindowRecord {
            id,
            title: prop_text(&net_name)
                .or_else(|| prop_text(&name))
                .unwrap_or_default(),
            instance,
            class,
            pid,
            bounds: Rect::new(
                pos.dst_x as i32,
                pos.dst_y as i32,
                geom.width as i32,
                geom.height as i32,
            ),
            gtk_frame_extents: <[u32; 4]>::try_from(extents.as_slice()).ok(),
            focused: focus.is_focused(id),
            minimized: hidden || iconic || attrs.map_state != MapState::VIEWABLE,
            transient_for,
            modal: state.contains(&a._NET_WM_STATE_MODAL),
        };
        Ok(Some(Described { window, types }))
    }

    /// The managed windows topmost first and, of them, the mapped modal ones, in two round
    /// trips (the client list, then three properties of every client in one batch): cheap
    /// enough to check before every action whether a modal dialog blocks its window.
    pub fn modal_windows(&self) -> GuiResult<(Vec<u32>, Vec<crate::window::modal::ModalWindow>)> {
        self.pump();
        let ids = self.client_ids()?;
        let (a, c) = (&self.atoms, &self.conn);
        let mut cookies = Vec::with_capacity(ids.len());
        for &id in &ids {
            let state = c.get_property(false, id, a._NET_WM_STATE, AtomEnum::ATOM, 0, 64);
            let parent = c.get_property(false, id, AtomEnum::WM_TRANSIENT_FOR, AtomEnum::WINDOW, 0, 1);
            let pid = c.get_property(false, id, a._NET_WM_PID, AtomEnum::CARDINAL, 0, 1);
            cookies.push((
                id,
                state.map_err(conn_err)?,
                parent.map_err(conn_err)?,
                pid.map_err(conn_err)?,
            ));
        }
        let mut modals = Vec::new();
        for (id, state, parent, pid) in cookies {
            // A window that closed meanwhile answers an error: it blocks nothing.
            let (Ok(state), Ok(parent), Ok(pid)) = (state.reply(), parent.reply(), pid.reply()) else {
                continue;
            };
            let state = prop_u32s(&state);
            if !state.contains(&a._NET_WM_STATE_MODAL) || state.contains(&a._NET_WM_STATE_HIDDEN) {
                continue;
            }
            modals.push(crate::window::modal::ModalWindow {
                id,
                transient_for: prop_u32s(&parent)
                    .first()
                    .copied()
                    .filter(|w| *w != x11rb::NONE && *w != self.root && *w != id),
                pid: prop_u32s(&pid).first().copied(),
            });
        }
        Ok((ids, modals))
    }

    /// The child of the root that contains `id` (the WM frame, or `id` itself).
    pub(super) fn toplevel_of(&self, id: u32) -> GuiResult<u32> {
        self.ancestors(id)?
            .last()
            .copied()
            .ok_or_else(|| GuiError::window_not_found(&format!("0x{id:x}")))
    }
}

// ---------------------------------------------------------------- focus

impl X11 {
    /// Raises and focuses `id`; true once the input focus is confirmed within 500 ms.
    pub fn activate(&self, id: u32) -> GuiResult<bool> {
        self.pump();
        self.geometry(id)?; // fails with WindowNotFound for a stale id
                            // Asking again makes the WM refocus it: the FocusOut/FocusIn arrives after our check,
                            // amid the keys that follow, and Qt drops a pending Alt mnemonic (alt+f opened nothing).
        if self.has_focus(id)? {
            return Ok(true);
        }
        let time = self.server_time()?;
        if self.ewmh_wm()? {
            self.request_activation(id, time)?;
        } else if !self.focus_directly(id, time)? {
            return Ok(false);
        }
        self.sync()?;
        let deadline = Instant::now() + FOCUS_WAIT;
        loop {
            if self.has_focus(id)? {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(FOCUS_POLL);
        }
    }

    /// EWMH activation request, as a pager would send it (source indication 2).
    fn request_activation(&self, id: u32, time: u32) -> GuiResult<()> {
        let current = self.active_window()?.unwrap_or(x11rb::NONE);
        let ev = ClientMessageEvent::new(32, id, self.atoms._NET_ACTIVE_WINDOW, [2, time, current, 0, 0]);
        let mask = EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY;
        self.conn
            .send_event(false, self.root, mask, ev)
            .map_err(conn_err)?
            .check()
            .map_err(|e| reply_err("SendEvent", e))
    }

    /// Without a WM: raise and SetInputFocus ourselves; false if the window cannot take it.
    fn focus_directly(&self, id: u32, time: u32) -> GuiResult<bool> {
        let top = self.toplevel_of(id)?;
        let raise = ConfigureWindowAux::new().stack_mode(StackMode::ABOVE);
        let _ = self.conn.configure_window(top, &raise).map_err(conn_err)?;
        let r = self
            .conn
            .set_input_focus(InputFocus::PARENT, id, time)
            .map_err(conn_err)?
            .check();
        match r {
            Ok(()) => Ok(true),
            // BadMatch: not viewable.
            Err(ReplyError::X11Error(x)) if x.error_kind == ErrorKind::Match => Ok(false),
            Err(e) => Err(win_err(id, "SetInputFocus", e)),
        }
    }

    /// True when the input focus is `id` or inside it (and, under an EWMH WM, `id` is the
    /// active window).
    pub fn has_focus(&self, id: u32) -> GuiResult<bool> {
        if !self.focus_chain()?.contains(&id) {
            return Ok(false);
        }
        if self.ewmh_wm()? {
            return Ok(self.active_window()? == Some(id));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x11_is_shareable_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<X11>();
    }
}
