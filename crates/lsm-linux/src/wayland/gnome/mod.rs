//! The GNOME Wayland window system: where windows are and raising them through lsm's Shell
//! extension (`dev.lsm.Windows`), input and pixels through mutter's remote-desktop and
//! screen-cast API (`mutter.rs`, one session per window acted on or captured), frames through a
//! long-lived helper per window (`wayland/stream_frames.rs`). Beside it: installing the extension
//! (`setup.rs`, `lsm setup gnome`; its JavaScript in `extension/`), typing what the layout lacks
//! through mutter's clipboard (`clipboard.rs`), and the desktop portal where mutter's API is out
//! of reach (`portal.rs`).

pub mod clipboard;
pub mod mutter;
pub mod portal;
pub mod setup;

use self::clipboard::{Clipboard, Content};
use self::mutter::WindowSession;
use self::portal::{self as gnome_portal, GnomePortal};
use super::dbus;
use super::input::{self, RemoteInput};
use super::shell_windows::{self, ShellList, ShellWindow};
use super::stream_frames::{self, FrameReader};
use super::window_list::WindowList;
use crate::window::WindowRecord;
use lsm_core::{ErrorCode, GuiError, GuiResult, KeyCombo, Modifier, MouseButton, Point, Rect, RgbaImage};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SHELL: &str = "org.gnome.Shell";
const EXT_PATH: &str = "/dev/lsm/Windows";
const EXT_IFACE: &str = "dev.lsm.Windows";
/// How long a raised window may take to get the focus.
const FOCUS_WAIT: Duration = Duration::from_millis(800);
const FOCUS_POLL: Duration = Duration::from_millis(25);
/// Right after input to a window, a screenshot waits this long at most for the frame that
/// shows its effect.
const FRAME_AFTER_INPUT: Duration = Duration::from_millis(120);
/// After a paste was served, how long no further request must come before the user's
/// clipboard is put back, and the bound on that wait.
const PASTE_QUIET: Duration = Duration::from_millis(150);
const PASTE_SETTLE: Duration = Duration::from_millis(1000);
/// How long the focused application may take to ask for pasted text.
const PASTE_WAIT: Duration = Duration::from_millis(1500);

/// What the user must do when the extension does not answer.
pub fn extension_missing_message(detail: &str) -> String {
    format!(
        "this is a GNOME Wayland session, and lsm's GNOME Shell extension ({}) is not running ({detail}). \
         No Wayland protocol tells an application where windows are, so lsm needs it: run `lsm setup gnome`, \
         then log out and log in again once (GNOME Shell loads new extensions only when it starts). \
         If you already did, check `gnome-extensions info {}` and that user extensions are enabled",
        setup::UUID,
        setup::UUID
    )
}

/// A mutter session and, once a screenshot was asked for, its frame helper.
struct Recorded {
    session: Arc<WindowSession>,
    frames: Option<Arc<FrameReader>>,
    /// When input was last sent to the window (a screenshot then waits for its frame).
    last_input: Option<Instant>,
}

pub struct Gnome {
    conn: zbus::Connection,
    windows: WindowList,
    recorded: tokio::sync::Mutex<HashMap<u64, Recorded>>,
    /// Serialises input: two actions' events must not interleave.
    input: tokio::sync::Mutex<()>,
    /// Our clipboard session, for text the keymap cannot type (started on first need).
    clipboard: tokio::sync::OnceCell<Clipboard>,
    /// Mutter's layout mode: true when stage coordinates are logical px (fractional scaling
    /// on), false when they are physical px (the default: each monitor's scale applies).
    logical_layout: std::sync::atomic::AtomicBool,
    /// Set when input and pixels go through the desktop portal instead of mutter's API.
    portal: Option<GnomePortal>,
    /// Set (to why mutter's window streams cannot be read) when pixels come from the desktop
    /// portal's Screenshot of the whole screen instead.
    screenshot_portal: std::sync::OnceLock<String>,
}

/// A window's pixels as captured.
pub struct WindowPixels {
    pub image: RgbaImage,
    /// Part of the window lay outside the captured stream.
    pub clipped: bool,
    /// Read from the screen (the portal's monitor stream), not the window's own buffer.
    pub from_screen: bool,
    /// From the screen, and other windows lie over part of this one: those parts show them.
    pub covered: bool,
    /// Through the desktop portal's Screenshot (why the window's stream was not used).
    pub screenshot_portal: Option<String>,
}

/// `org.gnome.Mutter.DisplayConfig.GetCurrentState`'s reply, read for its layout mode.
type DisplayMode = (
    String,
    i32,
    i32,
    f64,
    f64,
    Vec<f64>,
    HashMap<String, zbus::zvariant::OwnedValue>,
);
type DisplayMonitor = (
    (String, String, String, String),
    Vec<DisplayMode>,
    HashMap<String, zbus::zvariant::OwnedValue>,
);
type LogicalMonitor = (
    i32,
    i32,
    f64,
    u32,
    bool,
    Vec<(String, String, String, String)>,
    HashMap<String, zbus::zvariant::OwnedValue>,
);
type DisplayState = (
    u32,
    Vec<DisplayMonitor>,
    Vec<LogicalMonitor>,
    HashMap<String, zbus::zvariant::OwnedValue>,
);

/// Mutter's `layout-mode` 1: logical stage coordinates (2 is physical).
const LAYOUT_LOGICAL: u32 = 1;

fn ext_error(e: GuiError) -> GuiError {
    match e.code {
        ErrorCode::Timeout => e,
        _ => GuiError::unavailable(extension_missing_message(&e.message)),
    }
}

impl Gnome {
    /// Connects to the session bus; `None` when GNOME Shell is not on it (another desktop),
    /// `GUI_UNAVAILABLE` saying what to do when the Shell runs without lsm's extension.
    pub async fn connect(bus: Option<&str>) -> GuiResult<Option<Self>> {
        let build = async {
            match bus {
                Some(a) => zbus::connection::Builder::address(a)?.build().await,
                None => crate::session::bus::connect().await,
            }
        };
        let conn = tokio::time::timeout(dbus::CALL_TIMEOUT, build)
            .await
            .map_err(|_| GuiError::unavailable("connecting to the session bus timed out"))?
            .map_err(|e| GuiError::unavailable(format!("cannot connect to the session bus: {e}")))?;
        let shell: bool = dbus::call(
            &conn,
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "NameHasOwner",
            &(SHELL,),
        )
        .await?;
        if !shell {
            return Ok(None);
        }
        let mutter_on_bus: bool = dbus::call(
            &conn,
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "NameHasOwner",
            &(mutter::RD_NAME,),
        )
        .await?;
        let forced = std::env::var(gnome_portal::FORCE_ENV).ok();
        let portal = gnome_portal::portal_reason(forced.as_deref(), mutter_on_bus).map(GnomePortal::new);
        let g = Self {
            conn,
            windows: WindowList::default(),
            recorded: tokio::sync::Mutex::default(),
            input: tokio::sync::Mutex::new(()),
            clipboard: tokio::sync::OnceCell::new(),
            logical_layout: std::sync::atomic::AtomicBool::new(false),
            portal,
            screenshot_portal: std::sync::OnceLock::new(),
        };
        g.list().await?;
        g.read_layout().await;
        Ok(Some(g))
    }

    /// Reads mutter's layout mode (physical when it cannot be read: mutter's default).
    async fn read_layout(&self) {
        let state: GuiResult<DisplayState> = dbus::call(
            &self.conn,
            "org.gnome.Mutter.DisplayConfig",
            "/org/gnome/Mutter/DisplayConfig",
            "org.gnome.Mutter.DisplayConfig",
            "GetCurrentState",
            &(),
        )
        .await;
        let logical = match state {
            Ok((_, _, _, props)) => props
                .get("layout-mode")
                .and_then(|v| u32::try_from(v).ok())
                .is_some_and(|m| m == LAYOUT_LOGICAL),
            Err(e) => {
                tracing::info!(
                    "mutter's display configuration is not readable ({}); assuming physical layout",
                    e.message
                );
                false
            }
        };
        self.logical_layout
            .store(logical, std::sync::atomic::Ordering::Relaxed);
    }

    /// Why input and pixels go through the desktop portal (None: mutter's own API).
    pub fn portal_reason(&self) -> Option<&str> {
        self.portal.as_ref().map(|p| p.reason.as_str())
    }

    /// Where mutter's window streams cannot be read (`why`): pixels from the desktop portal's
    /// Screenshot when it will take them without asking. None: it will (and is used from now
    /// on); else why there are no screenshots at all.
    pub async fn fall_back_to_screenshot_portal(&self, why: String) -> Option<String> {
        match crate::wayland::portal::screenshot::refusal(&self.conn).await {
            None => {
                let _ = self.screenshot_portal.set(why);
                None
            }
            Some(no) => Some(format!("{why}; and {no}")),
        }
    }

    /// Stage px per logical px of a window: its monitor's scale in the physical layout, 1 in
    /// the logical one.
    pub fn stage_scale(&self, w: &ShellWindow) -> f64 {
        if self.logical_layout.load(std::sync::atomic::Ordering::Relaxed) {
            1.0
        } else {
            w.scale
        }
    }

    /// The extension's list, as read within `LIST_FRESH` (one call for an observation's lookups).
    pub(crate) async fn list(&self) -> GuiResult<ShellList> {
        self.windows.get(|| self.list_now()).await
    }

    /// Forgets the shared list (after input, windows may have changed).
    pub async fn forget_list(&self) {
        self.windows.forget().await;
    }

    /// The extension's list now, remembered for the calls that follow.
    async fn list_now(&self) -> GuiResult<ShellList> {
        let t0 = Instant::now();
        let json: String = dbus::call(&self.conn, SHELL, EXT_PATH, EXT_IFACE, "List", &())
            .await
            .map_err(ext_error)?;
        tracing::debug!("shell List: {:?}", t0.elapsed());
        let list = shell_windows::parse_list(&json).map_err(GuiError::backend)?;
        let ids = self.windows.remember(&list);
        let gone: Vec<u64> = {
            let rec = self.recorded.lock().await;
            rec.keys().filter(|id| !ids.contains(id)).copied().collect()
        };
        if !gone.is_empty() {
            let mut rec = self.recorded.lock().await;
            for id in gone {
                if let Some(r) = rec.remove(&id) {
                    r.session.stop().await;
                }
            }
        }
        Ok(list)
    }

    fn to_window(&self, w: &ShellWindow) -> WindowRecord {
        self.windows.to_window(w)
    }

    fn mutter_id(&self, handle: u32) -> GuiResult<u64> {
        self.windows.id(handle)
    }

    /// Windows, bottom to top.
    pub async fn list_windows(&self) -> GuiResult<Vec<WindowRecord>> {
        let list = self.list().await?;
        Ok(list.windows.iter().map(|w| self.to_window(w)).collect())
    }

    /// One window now (None when it is gone). A window id from an earlier lsm process of the
    /// same shell session is found too: handles are the mutter ids' low bits.
    pub async fn window(&self, handle: u32) -> GuiResult<Option<WindowRecord>> {
        let list = self.list().await?;
        Ok(list
            .windows
            .iter()
            .map(|w| self.to_window(w))
            .find(|w| w.id == handle))
    }

    /// The X11-shaped record of a shell window.
    pub fn window_of(&self, w: &ShellWindow) -> WindowRecord {
        self.to_window(w)
    }

    /// The window list and its records (shared by observations, see `window_list.rs`).
    pub(crate) fn window_list(&self) -> &WindowList {
        &self.windows
    }

    /// The extension's record of a window as of the last list.
    pub fn shell_window(&self, handle: u32) -> GuiResult<ShellWindow> {
        self.windows.last(handle)
    }

    pub async fn screen_rect(&self) -> GuiResult<Rect> {
        Ok(self.list().await?.screen())
    }

    /// Stacking order (bottom to top) and the modal windows, as `X11::modal_windows`.
    pub async fn modal_windows(&self) -> GuiResult<(Vec<u32>, Vec<crate::window::modal::ModalWindow>)> {
        let windows = self.list_windows().await?;
        let stacking = windows.iter().map(|w| w.id).collect();
        Ok((stacking, crate::window::modal::ModalWindow::of_list(&windows)))
    }

    /// Raises and focuses a window; true once the shell says it has the focus.
    pub async fn activate(&self, handle: u32) -> GuiResult<bool> {
        let id = self.mutter_id(handle)?;
        if self.list().await?.windows.iter().any(|w| w.id == id && w.focus) {
            return Ok(true);
        }
        let found: bool = dbus::call(&self.conn, SHELL, EXT_PATH, EXT_IFACE, "Activate", &(id,))
            .await
            .map_err(ext_error)?;
        if !found {
            return Err(GuiError::window_not_found(&crate::window::format_window_id(
                handle,
            )));
        }
        let deadline = Instant::now() + FOCUS_WAIT;
        loop {
            if self
                .list_now()
                .await?
                .windows
                .iter()
                .any(|w| w.id == id && w.focus)
            {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(FOCUS_POLL).await;
        }
    }

    /// The window's mutter session, started on first use.
    async fn session(&self, handle: u32) -> GuiResult<Arc<WindowSession>> {
        let id = self.mutter_id(handle)?;
        let mut rec = self.recorded.lock().await;
        if let Some(r) = rec.get(&id) {
            return Ok(r.session.clone());
        }
        let s = Arc::new(WindowSession::start(&self.conn, id).await?);
        rec.insert(
            id,
            Recorded {
                session: s.clone(),
                frames: None,
                last_input: None,
            },
        );
        Ok(s)
    }

    async fn mark_input(&self, handle: u32) {
        if let Ok(id) = self.mutter_id(handle) {
            if let Some(r) = self.recorded.lock().await.get_mut(&id) {
                r.last_input = Some(Instant::now());
            }
        }
    }

    /// Forgets a window's session after a failed call (the window may have been re-mapped).
    async fn drop_session(&self, handle: u32) {
        if let Ok(id) = self.mutter_id(handle) {
            if let Some(r) = self.recorded.lock().await.remove(&id) {
                r.session.stop().await;
            }
        }
    }

    /// A stage point as the input session takes it: on a window stream, logical px from the
    /// window's surface's top left, whatever the layout mode (measured on mutter 43.8 at scale
    /// 2); through the portal, logical px in the layout (its monitor stream's offset is added
    /// by the session).
    fn buffer_point(&self, handle: u32, p: Point) -> GuiResult<(f64, f64)> {
        let w = self.shell_window(handle)?;
        let s = self.stage_scale(&w);
        if self.portal.is_some() {
            return Ok(((p.x as f64 + 0.5) / s, (p.y as f64 + 0.5) / s));
        }
        Ok((
            ((p.x - w.buffer.x) as f64 + 0.5) / s,
            ((p.y - w.buffer.y) as f64 + 0.5) / s,
        ))
    }

    /// Runs input on the window's session; a failure on a session that may be stale is
    /// retried once on a new one.
    async fn with_session<F, Fut>(&self, handle: u32, f: F) -> GuiResult<()>
    where
        F: Fn(Arc<dyn RemoteInput>) -> Fut,
        Fut: std::future::Future<Output = GuiResult<()>>,
    {
        let _g = self.input.lock().await;
        if let Some(portal) = &self.portal {
            let s = portal.session(&self.conn).await?;
            portal.mark_input();
            let r = f(s).await;
            if r.as_ref().is_err_and(|e| e.code == ErrorCode::BackendError) {
                // The user may have ended the sharing: the next call asks again.
                portal.drop_session().await;
            }
            return r;
        }
        let s: Arc<dyn RemoteInput> = self.session(handle).await?;
        self.mark_input(handle).await;
        match f(s).await {
            Ok(()) => Ok(()),
            Err(e) if e.code == ErrorCode::BackendError => {
                tracing::debug!("mutter input failed ({}), retrying on a new session", e.message);
                self.drop_session(handle).await;
                let s: Arc<dyn RemoteInput> = self.session(handle).await?;
                f(s).await
            }
            Err(e) => Err(e),
        }
    }

    pub async fn pointer_move(&self, handle: u32, p: Point) -> GuiResult<()> {
        let (x, y) = self.buffer_point(handle, p)?;
        self.with_session(handle, |s| async move { s.motion(x, y).await })
            .await
    }

    pub async fn click(&self, handle: u32, p: Point, button: MouseButton, count: u32) -> GuiResult<()> {
        input::check_click_count(count)?;
        let at = self.buffer_point(handle, p)?;
        self.with_session(
            handle,
            |s| async move { input::click(&*s, at, button, count).await },
        )
        .await
    }

    pub async fn drag(&self, handle: u32, from: Point, to: Point, button: MouseButton) -> GuiResult<()> {
        let (from, to) = (self.buffer_point(handle, from)?, self.buffer_point(handle, to)?);
        self.with_session(
            handle,
            |s| async move { input::drag(&*s, from, to, button).await },
        )
        .await
    }

    pub async fn scroll(&self, handle: u32, at: Point, dx: i32, dy: i32) -> GuiResult<()> {
        input::check_scroll(dx, dy)?;
        let at = self.buffer_point(handle, at)?;
        self.with_session(handle, |s| async move { input::scroll(&*s, at, dx, dy).await })
            .await
    }

    pub async fn key_combo(&self, handle: u32, combo: &KeyCombo) -> GuiResult<()> {
        let (mods, key) = input::combo_keysyms(combo)?;
        self.with_session(handle, |s| {
            let mods = mods.clone();
            async move { input::key_combo(&*s, &mods, key).await }
        })
        .await
    }

    /// Types text whose every character the keymap has (see `keysyms::typeable_by_keysym`).
    pub async fn type_keysyms(&self, handle: u32, text: &str) -> GuiResult<()> {
        let syms = crate::keysyms::text_keysyms(text)?;
        self.with_session(handle, |s| {
            let syms = syms.clone();
            async move { input::type_keysyms(&*s, &syms).await }
        })
        .await
    }

    /// Types any text by pasting it: the user's clipboard is saved, the text put on it, Ctrl+V
    /// pressed, and the user's content put back once the application has taken the text.
    pub async fn paste_text(&self, handle: u32, text: &str) -> GuiResult<()> {
        if self.portal.is_some() {
            // The portal's clipboard arrives with xdg-desktop-portal 1.18; mutter's is out of reach.
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                "through the desktop portal lsm types only characters of the keyboard layout (printable ASCII, \
                 Return, Tab): other keysyms are dropped, and pasting needs mutter's clipboard, which lsm cannot \
                 reach here. Put other text into a field with set_value on its element_id",
            ));
        }
        let cb = self
            .clipboard
            .get_or_try_init(|| Clipboard::start(&self.conn))
            .await?;
        let saved = cb.save().await;
        let before = cb.served();
        cb.set(Some(Content::text(text))).await?;
        let paste = KeyCombo {
            modifiers: vec![Modifier::Ctrl],
            key: Some("v".into()),
        };
        let pasted = self.key_combo(handle, &paste).await;
        let deadline = Instant::now() + PASTE_WAIT;
        while pasted.is_ok() && cb.served() == before && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let taken = cb.served() > before;
        // GTK asks a second time (another type) tens of ms later, more under load, and a new
        // selection would cancel that request: put the user's content back only once no request
        // came for PASTE_QUIET (bounded).
        if taken {
            let until = Instant::now() + PASTE_SETTLE;
            let mut seen = cb.served();
            loop {
                tokio::time::sleep(PASTE_QUIET).await;
                let now = cb.served();
                if now == seen || Instant::now() >= until {
                    break;
                }
                seen = now;
            }
        }
        let restored = cb.set(saved).await;
        pasted?;
        restored?;
        if !taken {
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                format!(
                    "the text has characters the keyboard layout lacks, so it was pasted (Ctrl+V), but the focused \
                     control did not take the clipboard within {} ms: it may not accept pasting",
                    PASTE_WAIT.as_millis()
                ),
            ));
        }
        Ok(())
    }

    /// The latest frame of the stream that shows window `w` (its own, or the portal's shared
    /// monitor) and the rect (stage px) that frame shows; a helper is started on first use.
    async fn stream_frame(&self, handle: u32, w: &ShellWindow) -> GuiResult<(Arc<RgbaImage>, Rect)> {
        let (reader, shown, last_input) = match &self.portal {
            Some(portal) => {
                let (screen, reader) = portal.frames(&self.conn).await?;
                let s = self.stage_scale(w);
                let at = |v: i32| (v as f64 * s).round() as i32;
                let shown = Rect::new(
                    at(screen.position.0),
                    at(screen.position.1),
                    at(screen.size.0),
                    at(screen.size.1),
                );
                (reader, shown, portal.last_input())
            }
            None => {
                let session = self.session(handle).await?;
                let mut rec = self.recorded.lock().await;
                let r = rec
                    .get_mut(&w.id)
                    .ok_or_else(|| GuiError::window_not_found(&crate::window::format_window_id(handle)))?;
                let reader = match &r.frames {
                    Some(f) if f.alive() => f.clone(),
                    _ => {
                        let f = Arc::new(FrameReader::start(session.node, None)?);
                        r.frames = Some(f.clone());
                        f
                    }
                };
                (reader, Rect::from(w.buffer), r.last_input)
            }
        };
        let img = tokio::task::spawn_blocking(move || {
            let png = reader.latest(stream_frames::FIRST_FRAME_WAIT, last_input, FRAME_AFTER_INPUT)?;
            reader.image(png)
        })
        .await
        .map_err(|e| GuiError::backend(format!("frame task failed: {e}")))??;
        Ok((img, shown))
    }

    /// Decodes the latest frame of window `handle`'s own stream, when it has a running one, so
    /// that the capture that follows finds it decoded. Runs beside the window-list call a capture
    /// starts with: the frame does not depend on the list, and a busy shell answers that call
    /// in 10-20 ms here. Nothing is started or waited for; any failure is left to the capture.
    pub async fn warm_frame(&self, handle: u32) {
        if self.portal.is_some() {
            return;
        }
        let Ok(id) = self.mutter_id(handle) else {
            return;
        };
        let reader = {
            let rec = self.recorded.lock().await;
            rec.get(&id).and_then(|r| r.frames.clone()).filter(|f| f.alive())
        };
        if let Some(reader) = reader {
            let _ = tokio::task::spawn_blocking(move || {
                if let Some(png) = reader.peek() {
                    let _ = reader.image(png);
                }
            })
            .await;
        }
    }

    /// Ends the stream that shows window `w` and its helper, so the next frame comes from new ones.
    async fn restart_stream(&self, handle: u32) {
        match &self.portal {
            Some(portal) => portal.drop_frames().await,
            None => self.drop_session(handle).await,
        }
    }

    /// The window's pixels, in physical px (the monitor's scale per logical px): the latest
    /// frame of its own stream (mutter), or of the shared monitor's stream (portal), cut to
    /// the frame rect.
    pub async fn capture_window(&self, handle: u32) -> GuiResult<WindowPixels> {
        let w = self.shell_window(handle)?;
        let started = Instant::now();
        let screenshot_portal = self.screenshot_portal.get().cloned();
        let from_screen = self.portal.is_some() || screenshot_portal.is_some();
        let (frame_img, shown) = if screenshot_portal.is_some() {
            // The whole stage: the shell's list says where the screen lies in stage px.
            let img = crate::wayland::portal::screenshot::take(&self.conn).await?;
            (Arc::new(img), self.screen_rect().await?)
        } else {
            self.stream_frame_once_more(handle, &w).await?
        };
        let decoded = started.elapsed();
        let frame = Rect::from(w.frame);
        // Pixels per stage pixel: a window stream is in its buffer's physical px; a monitor
        // stream's or a screenshot's image spans the monitor or the screen.
        let k = if from_screen {
            frame_img.width as f64 / shown.width.max(1) as f64
        } else {
            w.scale / self.stage_scale(&w)
        };
        let full = (
            (frame.width as f64 * k).round() as u32,
            (frame.height as f64 * k).round() as u32,
        );
        let crop = stream_frames::window_crop((frame_img.width, frame_img.height), frame, shown, k)
            .ok_or_else(|| match (&self.portal, &screenshot_portal) {
                (_, Some(_)) => GuiError::new(ErrorCode::UnsupportedAction, "the window is off the screen"),
                (Some(_), _) => GuiError::new(
                    ErrorCode::UnsupportedAction,
                    "the window is not on the monitor shared with lsm through the desktop portal: move it there \
                     (or restart lsm and share its monitor) to capture it",
                ),
                (None, None) => GuiError::backend("the window is not in its stream's frame"),
            })?;
        let (out, clipped) =
            stream_frames::cut_to_frame(&frame_img, crop, full, (frame.x - shown.x, frame.y - shown.y), k);
        let covered = from_screen && self.covered_by_others(&w).await;
        tracing::debug!(
            "window frame: {decoded:?} to the decoded frame, {:?} in all",
            started.elapsed()
        );
        Ok(WindowPixels {
            image: out,
            clipped,
            from_screen,
            covered,
            screenshot_portal,
        })
    }

    /// The latest frame of the window's stream, the stream started again once when it sent none.
    async fn stream_frame_once_more(
        &self,
        handle: u32,
        w: &ShellWindow,
    ) -> GuiResult<(Arc<RgbaImage>, Rect)> {
        match self.stream_frame(handle, w).await {
            Err(e) if e.code == ErrorCode::Timeout => {
                // No first frame: mutter sent the stream's first frame before the helper was
                // listening, and an idle window sends no other (seen once in several suite runs).
                // A new session and helper get one.
                tracing::info!("no first frame from the window's stream; starting it again");
                self.restart_stream(handle).await;
                self.stream_frame(handle, w).await
            }
            other => other,
        }
    }

    /// Whether a window higher in the stacking order overlaps `w`'s frame.
    async fn covered_by_others(&self, w: &ShellWindow) -> bool {
        let Ok(list) = self.list().await else {
            return true;
        };
        let frame = Rect::from(w.frame);
        list.windows
            .iter()
            .skip_while(|o| o.id != w.id)
            .skip(1)
            .filter(|o| !o.minimized)
            .any(|o| {
                frame
                    .intersect(&Rect::from(o.frame))
                    .is_some_and(|r| !r.is_empty())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_extension_message_says_what_to_do() {
        let m = extension_missing_message("no such object");
        assert!(m.contains("lsm setup gnome") && m.contains("log out") && m.contains("lsm-windows@lsm"));
    }
}
