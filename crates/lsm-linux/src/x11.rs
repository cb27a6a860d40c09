//! The X11 half of the Linux backend, in pure Rust over `x11rb`: the window list (EWMH),
//! client-area capture (`capture.rs`: the window's own pixmap through Composite), focus, and raw
//! input through XTest, including typing any Unicode text by temporarily remapping a spare
//! keycode.
//!
//! Every request goes to a local server, so replies are quick; what could block forever
//! (the connect, waits for focus) is bounded explicitly.

#[path = "capture.rs"]
mod capture;

pub use capture::{minimized_error, Capture, Gap, REPAINT_WAIT};

use crate::shm;
use lsm_core::{ErrorCode, GuiError, GuiResult, KeyCombo, Modifier, MouseButton, Point, Rect};
use std::collections::HashSet;
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
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::protocol::{ErrorKind, Event};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// How long `connect` waits for the server's handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Upper bound for `activate` to see the focus arrive.
const FOCUS_WAIT: Duration = Duration::from_millis(500);
const FOCUS_POLL: Duration = Duration::from_millis(10);
/// Time given to clients to fetch a changed keyboard mapping (MappingNotify) before we type
/// with it, and to translate our keys before we restore it.
const REMAP_SETTLE: Duration = Duration::from_millis(60);
/// Between a combo's modifier presses and its key, as a hand leaves it: Qt reads the modifier
/// state from XKB state events, and a key in the same instant as its Alt opened no menu.
const MODIFIER_SETTLE: Duration = Duration::from_millis(15);
/// Gap between the clicks of a multi-click: well inside GTK's 400 ms double-click time.
const CLICK_GAP: Duration = Duration::from_millis(40);
/// Quiet time before a multi-click: longer than the usual double-click time (GTK: 400 ms).
const MULTI_CLICK_QUIET: Duration = Duration::from_millis(600);
/// How long a button is held in a click.
const PRESS_HOLD: Duration = Duration::from_millis(15);
const DRAG_STEPS: i32 = 10;
const DRAG_STEP_PAUSE: Duration = Duration::from_millis(15);
/// How long a check for an EWMH window manager is trusted (it only changes when one starts or quits).
const EWMH_RECHECK: Duration = Duration::from_secs(2);
/// Bounds that keep every input call short.
const MAX_CLICKS: u32 = 10;
const MAX_SCROLL: i32 = 200;
/// Bound on parent-chain walks (real trees are a few levels deep).
const MAX_TREE_DEPTH: usize = 64;
/// Bound on events drained in one go.
const MAX_DRAIN: usize = 100_000;

// Core protocol event codes used by XTest FakeInput.
const KEY_PRESS: u8 = xproto::KEY_PRESS_EVENT;
const KEY_RELEASE: u8 = xproto::KEY_RELEASE_EVENT;
const BUTTON_PRESS: u8 = xproto::BUTTON_PRESS_EVENT;
const BUTTON_RELEASE: u8 = xproto::BUTTON_RELEASE_EVENT;
const MOTION: u8 = xproto::MOTION_NOTIFY_EVENT;

// ICCCM WM_STATE values.
const WM_STATE_ICONIC: u32 = 3;

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

/// One top-level application window.
#[derive(Debug, Clone, PartialEq)]
pub struct X11Window {
    /// The client (application) window XID, not the WM frame.
    pub id: u32,
    /// `_NET_WM_NAME` (UTF-8), else `WM_NAME`.
    pub title: String,
    /// `WM_CLASS` instance.
    pub instance: String,
    /// `WM_CLASS` class.
    pub class: String,
    /// `_NET_WM_PID`.
    pub pid: Option<u32>,
    /// The client area in root coordinates, without WM decorations.
    pub bounds: Rect,
    /// `_GTK_FRAME_EXTENTS` left, right, top, bottom (client-side shadow), if set.
    pub gtk_frame_extents: Option<[u32; 4]>,
    pub focused: bool,
    /// Iconified, hidden, or not viewable (e.g. on another workspace).
    pub minimized: bool,
    /// `WM_TRANSIENT_FOR`: the window this one is a dialog of (None when unset or the root).
    pub transient_for: Option<u32>,
    /// `_NET_WM_STATE_MODAL`: it blocks input to the window it is transient for (or, with no
    /// such window, to its whole application).
    pub modal: bool,
}

/// A connection to one X display.
pub struct X11 {
    conn: RustConnection,
    root: u32,
    atoms: Atoms,
    /// `_NET_WM_CM_S<screen>`: owned while a compositing manager runs.
    cm_atom: u32,
    /// Our own unmapped window, used to obtain server timestamps.
    helper: u32,
    has_composite: bool,
    /// The Damage extension, to see when a window has repainted after its redirection.
    has_damage: bool,
    /// Areas (root coordinates) of the DamageNotify events `pump` saw since they were last
    /// taken (only one Damage object exists at a time; see `capture.rs`).
    damage_areas: Mutex<Vec<Rect>>,
    /// Top-levels we redirected for capture (see `capture.rs`).
    redirected: Mutex<HashSet<u32>>,
    has_xtest: bool,
    /// Latest server time seen on a PropertyNotify of `helper`.
    last_time: AtomicU32,
    keymap: Mutex<Option<KeyMap>>,
    /// Serialises input sequences so modifier presses and remaps never interleave.
    input: Mutex<()>,
    /// When we last pressed a mouse button (see `MULTI_CLICK_QUIET`).
    last_press: Mutex<Option<Instant>>,
    /// Whether an EWMH window manager runs, and when that was read (see `EWMH_RECHECK`).
    ewmh: Mutex<Option<(Instant, bool)>>,
    /// MIT-SHM for captures: offered and not yet found broken.
    shm_usable: AtomicBool,
    shm_segment: Mutex<Option<shm::Segment>>,
}

// ---------------------------------------------------------------- errors

fn conn_err(e: ConnectionError) -> GuiError {
    GuiError::unavailable(format!("X11 connection failed: {e}"))
}

fn reply_err(what: &str, e: ReplyError) -> GuiError {
    match e {
        ReplyError::ConnectionError(e) => conn_err(e),
        ReplyError::X11Error(x) => GuiError::backend(format!("X11 {what} failed: {:?}", x.error_kind)),
    }
}

/// Like `reply_err`, but a BadWindow/BadDrawable on `id` means the window is gone.
fn win_err(id: u32, what: &str, e: ReplyError) -> GuiError {
    match &e {
        ReplyError::X11Error(x)
            if matches!(x.error_kind, ErrorKind::Window | ErrorKind::Drawable) && x.bad_value == id =>
        {
            GuiError::window_not_found(&format!("0x{id:x}"))
        }
        _ => reply_err(what, e),
    }
}

fn id_err(e: ReplyOrIdError) -> GuiError {
    match e {
        ReplyOrIdError::ConnectionError(e) => conn_err(e),
        other => GuiError::backend(format!("X11: {other}")),
    }
}

fn is_not_found(e: &GuiError) -> bool {
    e.code == ErrorCode::WindowNotFound
}

// ---------------------------------------------------------------- keysyms (pure)

const XK_RETURN: u32 = 0xff0d;
const XK_TAB: u32 = 0xff09;
const XK_BACKSPACE: u32 = 0xff08;
const XK_ESCAPE: u32 = 0xff1b;
const XK_DELETE: u32 = 0xffff;
const XK_SHIFT_L: u32 = 0xffe1;

/// Keysyms of the canonical names of `lsm_core::input::NAMED_KEYS`.
const NAMED_KEYSYMS: &[(&str, u32)] = &[
    ("Return", XK_RETURN),
    ("Tab", XK_TAB),
    ("Escape", XK_ESCAPE),
    ("BackSpace", XK_BACKSPACE),
    ("Delete", XK_DELETE),
    ("Insert", 0xff63),
    ("Home", 0xff50),
    ("End", 0xff57),
    ("Page_Up", 0xff55),
    ("Page_Down", 0xff56),
    ("Left", 0xff51),
    ("Up", 0xff52),
    ("Right", 0xff53),
    ("Down", 0xff54),
    ("space", 0x20),
    ("Menu", 0xff67),
    ("Print", 0xff61),
    ("Pause", 0xff13),
    ("Caps_Lock", 0xffe5),
    ("F1", 0xffbe),
    ("F2", 0xffbf),
    ("F3", 0xffc0),
    ("F4", 0xffc1),
    ("F5", 0xffc2),
    ("F6", 0xffc3),
    ("F7", 0xffc4),
    ("F8", 0xffc5),
    ("F9", 0xffc6),
    ("F10", 0xffc7),
    ("F11", 0xffc8),
    ("F12", 0xffc9),
    ("plus", 0x2b),
    ("minus", 0x2d),
];

/// Keysyms of a modifier, preferred first (left keys, then right, then alternatives).
fn modifier_keysyms(m: Modifier) -> &'static [u32] {
    match m {
        Modifier::Ctrl => &[0xffe3, 0xffe4],
        Modifier::Alt => &[0xffe9, 0xffea, 0xffe7],
        Modifier::Shift => &[XK_SHIFT_L, 0xffe2],
        Modifier::Meta => &[0xffeb, 0xffec, 0xffe7],
    }
}

/// The keysym of a canonical key name (`"Return"`, `"F4"`).
pub fn named_keysym(name: &str) -> Option<u32> {
    NAMED_KEYSYMS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// The keysym that types `c`: Latin-1 keysyms equal the code point, all other characters
/// use the Unicode keysym range; a few control characters map to their keys.
pub fn char_keysym(c: char) -> Option<u32> {
    let cp = c as u32;
    match c {
        '\n' | '\r' => Some(XK_RETURN),
        '\t' => Some(XK_TAB),
        '\u{8}' => Some(XK_BACKSPACE),
        '\u{1b}' => Some(XK_ESCAPE),
        '\u{7f}' => Some(XK_DELETE),
        _ if c.is_control() => None,
        _ if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) => Some(cp),
        _ => Some(0x0100_0000 | cp),
    }
}

/// The keysym of a `KeyCombo::key`: one character or a canonical name.
pub fn key_keysym(key: &str) -> GuiResult<u32> {
    let mut chars = key.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return char_keysym(c)
            .ok_or_else(|| GuiError::invalid(format!("key {key:?} is a control character")));
    }
    named_keysym(key).ok_or_else(|| GuiError::invalid(format!("unknown key name {key:?}")))
}

/// Keysyms to type `text`; "\r\n" counts as one Return.
pub fn text_keysyms(text: &str) -> GuiResult<Vec<u32>> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        let ks = char_keysym(c).ok_or_else(|| {
            GuiError::invalid(format!(
                "text contains control character U+{:04X}, which has no key",
                c as u32
            ))
        })?;
        out.push(ks);
    }
    Ok(out)
}

/// The character a Latin-1 or Unicode keysym stands for.
fn keysym_char(ks: u32) -> Option<char> {
    match ks {
        0x20..=0x7e | 0xa0..=0xff => char::from_u32(ks),
        0x0100_0100..=0x0110_ffff => char::from_u32(ks & 0x00ff_ffff),
        _ => None,
    }
}

fn char_to_keysym_plain(c: char) -> u32 {
    let cp = c as u32;
    if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) {
        cp
    } else {
        0x0100_0000 | cp
    }
}

/// Lower and upper case forms of an alphabetic keysym, if it has both.
fn case_pair(ks: u32) -> Option<(u32, u32)> {
    let c = keysym_char(ks)?;
    let lower = single_char(c.to_lowercase())?;
    let upper = single_char(c.to_uppercase())?;
    (lower != upper).then(|| (char_to_keysym_plain(lower), char_to_keysym_plain(upper)))
}

/// The only item of an iterator, if it has exactly one.
fn single_char(mut it: impl Iterator<Item = char>) -> Option<char> {
    let first = it.next()?;
    it.next().is_none().then_some(first)
}

/// The two shift levels of group 1, with the core protocol's rule for a missing second
/// keysym (a letter's second level is its upper case, anything else repeats the first).
fn group1_levels(l0: u32, l1: u32) -> (u32, u32) {
    if l1 != 0 {
        return (l0, l1);
    }
    match case_pair(l0) {
        Some(pair) => pair,
        None => (l0, l0),
    }
}

/// A key to press: its keycode and whether Shift must be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stroke {
    pub keycode: u8,
    pub shift: bool,
}

/// A cached copy of the core keyboard mapping.
#[derive(Debug, Clone)]
struct KeyMap {
    min_keycode: u8,
    per: usize,
    syms: Vec<u32>,
    /// Keycodes bound to a modifier: never used as spares.
    modifier_keycodes: Vec<u8>,
}

impl KeyMap {
    fn keycodes(&self) -> impl Iterator<Item = (u8, &[u32])> {
        let min = self.min_keycode;
        self.syms
            .chunks(self.per.max(1))
            .enumerate()
            .map(move |(i, s)| (min.saturating_add(i as u8), s))
    }

    /// A keycode typing `ks`, preferring one without Shift.
    fn find(&self, ks: u32) -> Option<Stroke> {
        let mut shifted = None;
        for (kc, syms) in self.keycodes() {
            let l0 = syms.first().copied().unwrap_or(0);
            let l1 = syms.get(1).copied().unwrap_or(0);
            let (a, b) = group1_levels(l0, l1);
            if a == ks {
                return Some(Stroke {
                    keycode: kc,
                    shift: false,
                });
            }
            if b == ks && shifted.is_none() {
                shifted = Some(Stroke {
                    keycode: kc,
                    shift: true,
                });
            }
        }
        shifted
    }

    /// Keycodes without any keysym and not bound to a modifier, highest first.
    fn spare_keycodes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self
            .keycodes()
            .filter(|(kc, syms)| syms.iter().all(|&s| s == 0) && !self.modifier_keycodes.contains(kc))
            .map(|(kc, _)| kc)
            .collect();
        out.reverse();
        out
    }
}

/// A run of text typed with one set of temporary remaps.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    remaps: Vec<(u8, u32)>,
    strokes: Vec<Stroke>,
}

/// Splits keysyms into segments so each needs at most `spares.len()` remapped keycodes.
fn plan_segments(map: &KeyMap, spares: &[u8], syms: &[u32]) -> GuiResult<Vec<Segment>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < syms.len() {
        let mut seg = Segment {
            remaps: Vec::new(),
            strokes: Vec::new(),
        };
        while let Some(&ks) = syms.get(i) {
            let stroke = if let Some(s) = map.find(ks) {
                s
            } else if let Some(&(kc, _)) = seg.remaps.iter().find(|(_, k)| *k == ks) {
                Stroke {
                    keycode: kc,
                    shift: false,
                }
            } else if let Some(&kc) = spares.get(seg.remaps.len()) {
                seg.remaps.push((kc, ks));
                Stroke {
                    keycode: kc,
                    shift: false,
                }
            } else {
                break;
            };
            seg.strokes.push(stroke);
            i += 1;
        }
        if seg.strokes.is_empty() {
            return Err(GuiError::backend(format!(
                "keysym 0x{:x} is not on the keyboard and no spare keycode is free to map it",
                syms[i]
            )));
        }
        out.push(seg);
    }
    Ok(out)
}

// ---------------------------------------------------------------- properties

fn prop_u32s(r: &GetPropertyReply) -> Vec<u32> {
    r.value32().map(|it| it.collect()).unwrap_or_default()
}

fn prop_text(r: &GetPropertyReply) -> Option<String> {
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

fn wm_class(r: &GetPropertyReply) -> (String, String) {
    let mut parts = r
        .value
        .split(|&b| b == 0)
        .map(|p| String::from_utf8_lossy(p).into_owned());
    (parts.next().unwrap_or_default(), parts.next().unwrap_or_default())
}

fn to_i16(v: i32) -> i16 {
    v.clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

fn button_number(b: MouseButton) -> u8 {
    match b {
        MouseButton::Left => 1,
        MouseButton::Middle => 2,
        MouseButton::Right => 3,
    }
}

/// Who has the focus, read once for a whole window list.
struct FocusInfo {
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

/// Facts about one window beyond `X11Window`.
struct Described {
    window: X11Window,
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
            damage_areas: Mutex::new(Vec::new()),
            redirected: Mutex::new(HashSet::new()),
            has_xtest,
            last_time: AtomicU32::new(0),
            keymap: Mutex::new(None),
            input: Mutex::new(()),
            last_press: Mutex::new(None),
            ewmh: Mutex::new(None),
            shm_usable: AtomicBool::new(shm_usable),
            shm_segment: Mutex::new(None),
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

    /// Drains queued events: keeps the queue bounded, notices keymap changes (MappingNotify
    /// goes to every client) and records the time of our own PropertyNotify.
    fn pump(&self) {
        for _ in 0..MAX_DRAIN {
            match self.conn.poll_for_event() {
                Ok(Some(Event::MappingNotify(_))) => *self.lock_keymap() = None,
                Ok(Some(Event::PropertyNotify(ev))) if ev.window == self.helper => {
                    self.last_time.store(ev.time, Ordering::Relaxed)
                }
                Ok(Some(Event::DamageNotify(ev))) => self.note_damage(&ev),
                Ok(Some(Event::Error(e))) => tracing::debug!("X11 async error: {e:?}"),
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return,
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

    fn lock_keymap(&self) -> MutexGuard<'_, Option<KeyMap>> {
        self.keymap.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_input(&self) -> MutexGuard<'_, ()> {
        self.input.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Connects on a helper thread so a server that accepts but never answers cannot hang us.
fn connect_bounded(name: &str) -> GuiResult<(RustConnection, usize)> {
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
        Ok(Err(e)) => Err(GuiError::unavailable(format!(
            "cannot connect to X display {name}: {e}"
        ))),
        Err(_) => Err(GuiError::unavailable(format!(
            "cannot connect to X display {name}: no answer within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// Announces our Composite version (required before other Composite requests).
fn init_composite(conn: &RustConnection) -> GuiResult<bool> {
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
fn init_damage(conn: &RustConnection) -> bool {
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
fn create_helper(conn: &RustConnection, root: u32) -> GuiResult<u32> {
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
    fn geometry(&self, id: u32) -> GuiResult<xproto::GetGeometryReply> {
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

    /// Without an EWMH WM: viewable, managed children of the root, topmost first; for a
    /// reparenting WM the client is the descendant carrying WM_STATE.
    fn root_clients(&self) -> GuiResult<Vec<u32>> {
        let tree = self
            .conn
            .query_tree(self.root)
            .map_err(conn_err)?
            .reply()
            .map_err(|e| reply_err("QueryTree", e))?;
        let mut out = Vec::new();
        for &child in tree.children.iter().rev() {
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
    pub fn list_windows(&self) -> GuiResult<Vec<X11Window>> {
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
    pub fn window(&self, id: u32) -> GuiResult<Option<X11Window>> {
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
        let window = X11Window {
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
    pub fn modal_windows(&self) -> GuiResult<(Vec<u32>, Vec<crate::modal::ModalWindow>)> {
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
            modals.push(crate::modal::ModalWindow {
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
    fn toplevel_of(&self, id: u32) -> GuiResult<u32> {
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

// ---------------------------------------------------------------- pointer

impl X11 {
    fn require_xtest(&self) -> GuiResult<()> {
        if self.has_xtest {
            Ok(())
        } else {
            Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                "the X server has no XTEST extension: input cannot be sent",
            ))
        }
    }

    fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> GuiResult<()> {
        self.conn
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, self.root, x, y, 0)
            .map_err(conn_err)?;
        Ok(())
    }

    /// Checks that `p` is on the screen and converts it to protocol coordinates.
    fn screen_point(&self, p: Point) -> GuiResult<(i16, i16)> {
        let s = self.screen_rect()?;
        if !s.contains(p) {
            return Err(GuiError::new(
                ErrorCode::OutOfBounds,
                format!(
                    "point ({}, {}) is outside the {}x{} screen",
                    p.x, p.y, s.width, s.height
                ),
            ));
        }
        Ok((to_i16(p.x), to_i16(p.y)))
    }

    fn move_to(&self, p: Point) -> GuiResult<()> {
        let (x, y) = self.screen_point(p)?;
        self.fake(MOTION, 0, x, y)
    }

    fn button(&self, button: u8, press: bool) -> GuiResult<()> {
        if press {
            *self.last_press.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        }
        self.fake(if press { BUTTON_PRESS } else { BUTTON_RELEASE }, button, 0, 0)
    }

    /// GTK counts a press within its double-click time of an earlier click (even elsewhere)
    /// into the same sequence, which spoils a following double click: wait until that time
    /// has passed since our last press.
    fn wait_multi_click_quiet(&self) {
        let last = *self.last_press.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(left) = last.and_then(|t| MULTI_CLICK_QUIET.checked_sub(t.elapsed())) {
            std::thread::sleep(left);
        }
    }

    /// Moves the pointer to `p` (root coordinates).
    pub fn pointer_move(&self, p: Point) -> GuiResult<()> {
        self.require_xtest()?;
        self.pump();
        self.move_to(p)?;
        self.sync()
    }

    /// Moves to `p` and clicks `count` times, fast enough to make a double click.
    pub fn click(&self, p: Point, button: MouseButton, count: u32) -> GuiResult<()> {
        self.require_xtest()?;
        if count == 0 || count > MAX_CLICKS {
            return Err(GuiError::invalid(format!(
                "click count must be 1..={MAX_CLICKS}, not {count}"
            )));
        }
        self.pump();
        let _g = self.lock_input();
        if count > 1 {
            self.wait_multi_click_quiet();
        }
        self.move_to(p)?;
        let b = button_number(button);
        for i in 0..count {
            if i > 0 {
                self.conn.flush().map_err(conn_err)?;
                std::thread::sleep(CLICK_GAP);
            }
            self.button(b, true)?;
            self.conn.flush().map_err(conn_err)?;
            std::thread::sleep(PRESS_HOLD);
            self.button(b, false)?;
        }
        self.sync()
    }

    pub fn button_down(&self, p: Point, button: MouseButton) -> GuiResult<()> {
        self.require_xtest()?;
        self.pump();
        self.move_to(p)?;
        self.button(button_number(button), true)?;
        self.sync()
    }

    pub fn button_up(&self, p: Point, button: MouseButton) -> GuiResult<()> {
        self.require_xtest()?;
        self.pump();
        self.move_to(p)?;
        self.button(button_number(button), false)?;
        self.sync()
    }

    /// Press at `from`, move in steps (toolkits need motion past their drag threshold),
    /// release at `to`.
    pub fn drag(&self, from: Point, to: Point, button: MouseButton) -> GuiResult<()> {
        self.require_xtest()?;
        self.screen_point(to)?;
        self.pump();
        let _g = self.lock_input();
        let b = button_number(button);
        self.move_to(from)?;
        self.button(b, true)?;
        let result = self.drag_steps(from, to);
        // Always release, even if a step failed, so no button stays held.
        let release = self.move_to(to).and_then(|_| self.button(b, false));
        let synced = self.sync();
        result.and(release).and(synced)
    }

    fn drag_steps(&self, from: Point, to: Point) -> GuiResult<()> {
        self.sync()?;
        std::thread::sleep(DRAG_STEP_PAUSE);
        for i in 1..=DRAG_STEPS {
            let x = from.x + (to.x - from.x) * i / DRAG_STEPS;
            let y = from.y + (to.y - from.y) * i / DRAG_STEPS;
            self.move_to(Point::new(x, y))?;
            self.conn.flush().map_err(conn_err)?;
            std::thread::sleep(DRAG_STEP_PAUSE);
        }
        Ok(())
    }

    /// Wheel clicks at `at`: delta_y < 0 scrolls up (button 4), > 0 down (5); delta_x < 0
    /// left (6), > 0 right (7).
    pub fn scroll(&self, at: Point, delta_x: i32, delta_y: i32) -> GuiResult<()> {
        self.require_xtest()?;
        if delta_x.abs() > MAX_SCROLL || delta_y.abs() > MAX_SCROLL {
            return Err(GuiError::invalid(format!(
                "scroll deltas must be within ±{MAX_SCROLL}"
            )));
        }
        self.pump();
        let _g = self.lock_input();
        self.move_to(at)?;
        let plan = [(delta_y, 4u8, 5u8), (delta_x, 6, 7)];
        for (delta, neg, pos) in plan {
            let b = if delta < 0 { neg } else { pos };
            for _ in 0..delta.unsigned_abs() {
                self.button(b, true)?;
                self.button(b, false)?;
            }
        }
        self.sync()
    }
}

// ---------------------------------------------------------------- keyboard

impl X11 {
    /// The cached keyboard mapping, fetched when missing (after a MappingNotify or our remaps).
    fn keymap(&self) -> GuiResult<KeyMap> {
        let mut guard = self.lock_keymap();
        if let Some(m) = guard.as_ref() {
            return Ok(m.clone());
        }
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let count = max.saturating_sub(min).saturating_add(1);
        let km = self.conn.get_keyboard_mapping(min, count).map_err(conn_err)?;
        let mm = self.conn.get_modifier_mapping().map_err(conn_err)?;
        let km = km.reply().map_err(|e| reply_err("GetKeyboardMapping", e))?;
        let mm = mm.reply().map_err(|e| reply_err("GetModifierMapping", e))?;
        let map = KeyMap {
            min_keycode: min,
            per: km.keysyms_per_keycode as usize,
            syms: km.keysyms,
            modifier_keycodes: mm.keycodes.into_iter().filter(|&k| k != 0).collect(),
        };
        *guard = Some(map.clone());
        Ok(map)
    }

    fn invalidate_keymap(&self) {
        *self.lock_keymap() = None;
    }

    fn key(&self, keycode: u8, press: bool) -> GuiResult<()> {
        self.fake(if press { KEY_PRESS } else { KEY_RELEASE }, keycode, 0, 0)
    }

    /// Keycode of the first keysym of `syms` present on the keyboard.
    fn modifier_keycode(&self, map: &KeyMap, m: Modifier) -> GuiResult<u8> {
        modifier_keysyms(m)
            .iter()
            .find_map(|&ks| map.find(ks))
            .map(|s| s.keycode)
            .ok_or_else(|| GuiError::backend(format!("the keyboard mapping has no {m:?} key")))
    }

    /// Binds each `(keycode, keysym)` (all levels), or unbinds with keysym 0.
    fn set_keysyms(&self, per: usize, remaps: &[(u8, u32)]) -> GuiResult<()> {
        for &(kc, ks) in remaps {
            let syms = vec![ks; per.max(1)];
            self.conn
                .change_keyboard_mapping(1, kc, per.max(1) as u8, &syms)
                .map_err(conn_err)?
                .check()
                .map_err(|e| reply_err("ChangeKeyboardMapping", e))?;
        }
        self.invalidate_keymap();
        Ok(())
    }

    /// Runs `send` with `remaps` bound, giving clients time to see the mapping before and to
    /// translate the keys after; the remaps are always undone.
    fn with_remaps(
        &self,
        per: usize,
        remaps: &[(u8, u32)],
        send: impl FnOnce() -> GuiResult<()>,
    ) -> GuiResult<()> {
        if remaps.is_empty() {
            return send().and_then(|_| self.sync());
        }
        self.set_keysyms(per, remaps)?;
        self.sync()?;
        std::thread::sleep(REMAP_SETTLE);
        let sent = send().and_then(|_| self.sync());
        std::thread::sleep(REMAP_SETTLE);
        let cleared: Vec<(u8, u32)> = remaps.iter().map(|&(kc, _)| (kc, 0)).collect();
        let restored = self.set_keysyms(per, &cleared).and_then(|_| self.sync());
        sent.and(restored)
    }

    fn send_strokes(&self, strokes: &[Stroke], shift: Option<u8>) -> GuiResult<()> {
        for s in strokes {
            let sh = if s.shift { shift } else { None };
            if let Some(k) = sh {
                self.key(k, true)?;
            }
            self.key(s.keycode, true)?;
            self.key(s.keycode, false)?;
            if let Some(k) = sh {
                self.key(k, false)?;
            }
        }
        Ok(())
    }

    /// Types any Unicode text; characters missing from the keyboard are typed through a
    /// temporarily remapped spare keycode.
    pub fn type_text(&self, text: &str) -> GuiResult<()> {
        self.require_xtest()?;
        let syms = text_keysyms(text)?;
        if syms.is_empty() {
            return Ok(());
        }
        self.pump();
        let _g = self.lock_input();
        let map = self.keymap()?;
        let segments = plan_segments(&map, &map.spare_keycodes(), &syms)?;
        let shift = if segments.iter().flat_map(|s| &s.strokes).any(|s| s.shift) {
            Some(self.modifier_keycode(&map, Modifier::Shift)?)
        } else {
            None
        };
        for seg in &segments {
            self.with_remaps(map.per, &seg.remaps, || self.send_strokes(&seg.strokes, shift))?;
        }
        Ok(())
    }

    /// Presses the modifiers, presses and releases the key, releases the modifiers in reverse.
    pub fn key_combo(&self, combo: &KeyCombo) -> GuiResult<()> {
        self.require_xtest()?;
        let keysym = combo.key.as_deref().map(key_keysym).transpose()?;
        self.pump();
        let _g = self.lock_input();
        let map = self.keymap()?;
        let mut remaps = Vec::new();
        let stroke = match keysym {
            None => None,
            Some(ks) => Some(match map.find(ks) {
                Some(s) => s,
                None => {
                    let kc = *map.spare_keycodes().first().ok_or_else(|| {
                        GuiError::backend(format!(
                            "key 0x{ks:x} is not on the keyboard and no spare keycode is free"
                        ))
                    })?;
                    remaps.push((kc, ks));
                    Stroke {
                        keycode: kc,
                        shift: false,
                    }
                }
            }),
        };
        let mut mods = combo.modifiers.clone();
        if stroke.is_some_and(|s| s.shift) && !mods.contains(&Modifier::Shift) {
            mods.push(Modifier::Shift);
            mods.sort();
        }
        let codes = mods
            .iter()
            .map(|&m| self.modifier_keycode(&map, m))
            .collect::<GuiResult<Vec<u8>>>()?;
        self.with_remaps(map.per, &remaps, || {
            self.send_combo(&codes, stroke.map(|s| s.keycode))
        })
    }

    fn send_combo(&self, modifiers: &[u8], key: Option<u8>) -> GuiResult<()> {
        for &m in modifiers {
            self.key(m, true)?;
        }
        if !modifiers.is_empty() && key.is_some() {
            self.sync()?;
            std::thread::sleep(MODIFIER_SETTLE);
        }
        let pressed = match key {
            Some(k) => self.key(k, true).and_then(|_| self.key(k, false)),
            None => Ok(()),
        };
        // Release modifiers even if the key failed, so none stays held.
        let mut released = Ok(());
        for &m in modifiers.iter().rev() {
            released = released.and(self.key(m, false));
        }
        pressed.and(released)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us_map() -> KeyMap {
        // keycodes 10..=15: a A | 1 ! | é (single) | Shift_L | (spare) | (spare, but a modifier)
        KeyMap {
            min_keycode: 10,
            per: 2,
            syms: vec![0x61, 0x41, 0x31, 0x21, 0xe9, 0, XK_SHIFT_L, 0, 0, 0, 0, 0],
            modifier_keycodes: vec![13, 15],
        }
    }

    #[test]
    fn every_named_key_has_a_keysym() {
        for (name, _) in lsm_core::input::NAMED_KEYS {
            assert!(named_keysym(name).is_some(), "{name}");
        }
        assert_eq!(named_keysym("Return"), Some(0xff0d));
        assert_eq!(named_keysym("F12"), Some(0xffc9));
        assert_eq!(named_keysym("Page_Down"), Some(0xff56));
        assert_eq!(named_keysym("nope"), None);
    }

    #[test]
    fn chars_map_to_latin1_or_unicode_keysyms() {
        assert_eq!(char_keysym('a'), Some(0x61));
        assert_eq!(char_keysym('é'), Some(0xe9));
        assert_eq!(char_keysym('\u{a0}'), Some(0xa0));
        assert_eq!(char_keysym('한'), Some(0x0100_d55c));
        assert_eq!(char_keysym('€'), Some(0x0100_20ac));
        assert_eq!(char_keysym('😀'), Some(0x0101_f600));
        assert_eq!(char_keysym('\n'), Some(XK_RETURN));
        assert_eq!(char_keysym('\t'), Some(XK_TAB));
        assert_eq!(char_keysym('\u{1}'), None);
        assert_eq!(char_keysym('\u{85}'), None);
    }

    #[test]
    fn key_names_and_chars_resolve() {
        assert_eq!(key_keysym("t").ok(), Some(0x74));
        assert_eq!(key_keysym("+").ok(), Some(0x2b));
        assert_eq!(key_keysym("plus").ok(), Some(0x2b));
        assert_eq!(key_keysym("F4").ok(), Some(0xffc1));
        assert!(key_keysym("Hyper").is_err());
    }

    #[test]
    fn text_turns_crlf_into_one_return_and_rejects_controls() {
        assert_eq!(
            text_keysyms("a\r\nb\tc").ok(),
            Some(vec![0x61, XK_RETURN, 0x62, XK_TAB, 0x63])
        );
        assert!(text_keysyms("a\u{7}").is_err());
    }

    #[test]
    fn missing_second_level_follows_the_core_rule() {
        assert_eq!(group1_levels(0x61, 0), (0x61, 0x41));
        assert_eq!(group1_levels(0xe9, 0), (0xe9, 0xc9));
        assert_eq!(group1_levels(0x31, 0), (0x31, 0x31));
        assert_eq!(group1_levels(0x0100_0430, 0), (0x0100_0430, 0x0100_0410));
        assert_eq!(group1_levels(0xff0d, 0), (0xff0d, 0xff0d));
    }

    #[test]
    fn keymap_lookup_prefers_unshifted_levels() {
        let m = us_map();
        assert_eq!(
            m.find(0x61),
            Some(Stroke {
                keycode: 10,
                shift: false
            })
        );
        assert_eq!(
            m.find(0x41),
            Some(Stroke {
                keycode: 10,
                shift: true
            })
        );
        assert_eq!(
            m.find(0x21),
            Some(Stroke {
                keycode: 11,
                shift: true
            })
        );
        assert_eq!(
            m.find(0xc9),
            Some(Stroke {
                keycode: 12,
                shift: true
            })
        );
        assert_eq!(m.find(0x0100_d55c), None);
        assert_eq!(m.spare_keycodes(), vec![14]);
    }

    #[test]
    fn segments_reuse_remaps_and_split_when_spares_run_out() {
        let m = us_map();
        let (h, g) = (0x0100_d55c, 0x0100_ae00);
        let segs = plan_segments(&m, &[14], &[0x61, h, h, g, 0x41]).expect("plan");
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].remaps, vec![(14, h)]);
        assert_eq!(segs[0].strokes.len(), 3);
        assert_eq!(segs[1].remaps, vec![(14, g)]);
        assert_eq!(
            segs[1].strokes[1],
            Stroke {
                keycode: 10,
                shift: true
            }
        );
        assert!(plan_segments(&m, &[], &[h]).is_err());
    }

    #[test]
    fn x11_is_shareable_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<X11>();
    }
}
