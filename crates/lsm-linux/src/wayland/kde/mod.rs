//! The KDE Plasma (KWin on Wayland) window system: the window list and raising through small
//! KWin scripts (`kwin.rs`), keyboard and pointer through the RemoteDesktop portal
//! (`wayland/portal/`; no dialog on Plasma 5.27), a window's own pixels through KWin's
//! ScreenShot2 interface where KWin has authorised lsm (`screenshot.rs`); where it has not,
//! `gui_list` reports no `screenshot` capability and says how to authorise it.

pub mod kwin;
pub mod screenshot;

use self::kwin::{KWinScripts, ACTIVATE_JS, CURSOR_JS, KWIN, LIST_JS};
use super::input::{self, RemoteInput};
use super::portal::PortalSession;
use super::shell_windows::{self, ShellList, ShellWindow};
use super::window_list::WindowList;
use crate::window::WindowRecord;
use lsm_core::{ErrorCode, GuiError, GuiResult, KeyCombo, MouseButton, Point, Rect};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a raised window may take to get the focus.
const FOCUS_WAIT: Duration = Duration::from_millis(800);
const FOCUS_POLL: Duration = Duration::from_millis(25);
/// Bound on the portal's Start (a desktop that asks the user shows a dialog then).
const PORTAL_START_WAIT: Duration = Duration::from_secs(60);

pub struct Kde {
    conn: zbus::Connection,
    scripts: KWinScripts,
    windows: WindowList,
    /// The portal session for input, started on first use.
    portal: tokio::sync::Mutex<Option<Arc<PortalSession>>>,
    /// Serialises input: two actions' events must not interleave.
    input: tokio::sync::Mutex<()>,
    /// Why KWin will not capture windows for lsm (None: it will), asked once at connect.
    capture_refusal: Option<String>,
}

impl Kde {
    /// Connects to the session bus; `None` when KWin is not on it.
    pub async fn connect(bus: Option<&str>, runtime_dir: Option<&str>) -> GuiResult<Option<Self>> {
        let build = async {
            match bus {
                Some(a) => zbus::connection::Builder::address(a)?.build().await,
                None => crate::session::bus::connect().await,
            }
        };
        let conn = tokio::time::timeout(super::dbus::CALL_TIMEOUT, build)
            .await
            .map_err(|_| GuiError::unavailable("connecting to the session bus timed out"))?
            .map_err(|e| GuiError::unavailable(format!("cannot connect to the session bus: {e}")))?;
        let kwin: bool = super::dbus::call(
            &conn,
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "NameHasOwner",
            &(KWIN,),
        )
        .await?;
        if !kwin {
            return Ok(None);
        }
        let base = runtime_dir.map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("lsm-kwin-{}", std::process::id()));
        let scripts = KWinScripts::new(&conn, dir).await?;
        let capture_refusal = screenshot::refusal(&conn).await;
        let k = Self {
            conn,
            scripts,
            windows: WindowList::default(),
            portal: tokio::sync::Mutex::new(None),
            input: tokio::sync::Mutex::new(()),
            capture_refusal,
        };
        // Once more after a timeout: a script's answer can be lost while KWin reloads its
        // application database (seen right after a .desktop grant, about 1 run in 10).
        let first = k.list_now().await;
        let listed = match first {
            Err(e) if e.code == ErrorCode::Timeout => k.list_now().await,
            other => other,
        };
        listed.map_err(|e| {
            GuiError::unavailable(format!(
                "this is a KDE Plasma Wayland session, and KWin did not run lsm's window-list script ({}); \
                 lsm needs KWin's scripting D-Bus interface (org.kde.kwin.Scripting)",
                e.message
            ))
        })?;
        Ok(Some(k))
    }

    pub(crate) async fn list(&self) -> GuiResult<ShellList> {
        self.windows.get(|| self.list_now()).await
    }

    /// Forgets the shared list (after input, windows may have changed).
    pub async fn forget_list(&self) {
        self.windows.forget().await;
    }

    async fn list_now(&self) -> GuiResult<ShellList> {
        let t0 = Instant::now();
        let json = self.scripts.run("list", &[], LIST_JS).await?;
        tracing::debug!("kwin list: {:?}", t0.elapsed());
        let list = shell_windows::parse_list(&json).map_err(GuiError::backend)?;
        self.windows.remember(&list);
        Ok(list)
    }

    /// Why windows cannot be captured here; None when KWin captures them for lsm.
    pub fn capture_refusal(&self) -> Option<&str> {
        self.capture_refusal.as_deref()
    }

    /// The window's own pixels through KWin's ScreenShot2 (its frame, in logical px).
    pub async fn capture_window(&self, handle: u32) -> GuiResult<lsm_core::RgbaImage> {
        if let Some(why) = &self.capture_refusal {
            return Err(GuiError::new(ErrorCode::UnsupportedAction, why.clone()));
        }
        let w = self.shell_window(handle)?;
        screenshot::capture(&self.conn, &w.uuid).await
    }

    pub fn window_of(&self, w: &ShellWindow) -> WindowRecord {
        self.windows.to_window(w)
    }

    pub fn shell_window(&self, handle: u32) -> GuiResult<ShellWindow> {
        self.windows.last(handle)
    }

    /// The window list and its records (shared by observations, see `window_list.rs`).
    pub(crate) fn window_list(&self) -> &WindowList {
        &self.windows
    }

    pub async fn list_windows(&self) -> GuiResult<Vec<WindowRecord>> {
        let list = self.list().await?;
        Ok(list.windows.iter().map(|w| self.window_of(w)).collect())
    }

    pub async fn window(&self, handle: u32) -> GuiResult<Option<WindowRecord>> {
        let list = self.list().await?;
        Ok(list
            .windows
            .iter()
            .map(|w| self.window_of(w))
            .find(|w| w.id == handle))
    }

    pub async fn screen_rect(&self) -> GuiResult<Rect> {
        Ok(self.list().await?.screen())
    }

    pub async fn modal_windows(&self) -> GuiResult<(Vec<u32>, Vec<crate::window::modal::ModalWindow>)> {
        let windows = self.list_windows().await?;
        let stacking = windows.iter().map(|w| w.id).collect();
        Ok((stacking, crate::window::modal::ModalWindow::of_list(&windows)))
    }

    /// Raises and focuses a window; true once KWin says it is the active one.
    pub async fn activate(&self, handle: u32) -> GuiResult<bool> {
        let w = self.shell_window(handle)?;
        if self.list().await?.windows.iter().any(|l| l.id == w.id && l.focus) {
            return Ok(true);
        }
        let found = self
            .scripts
            .run("activate", &[("want", w.uuid.as_str())], ACTIVATE_JS)
            .await?;
        if found.trim() != "true" {
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
                .any(|l| l.id == w.id && l.focus)
            {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(FOCUS_POLL).await;
        }
    }

    /// Where the pointer is, as KWin says.
    async fn cursor(&self) -> GuiResult<(f64, f64)> {
        #[derive(serde::Deserialize)]
        struct At {
            x: f64,
            y: f64,
        }
        let json = self.scripts.run("cursor", &[], CURSOR_JS).await?;
        let at: At = serde_json::from_str(&json)
            .map_err(|e| GuiError::backend(format!("KWin's cursor position is not understood: {e}")))?;
        Ok((at.x, at.y))
    }

    /// The portal session, started (and its corner measured) on first use.
    async fn session(&self) -> GuiResult<Arc<PortalSession>> {
        let mut slot = self.portal.lock().await;
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let s = Arc::new(PortalSession::start(&self.conn, PORTAL_START_WAIT, false).await?);
        *slot = Some(s.clone());
        Ok(s)
    }

    /// Runs one input sequence on the portal session; the pointer starts from the corner,
    /// measured again (the user's own mouse may have moved since the last one, and where a
    /// push ends varies). A failed session is dropped, so the next action starts a new one.
    async fn with_session<F, Fut>(&self, f: F) -> GuiResult<()>
    where
        F: FnOnce(Arc<PortalSession>) -> Fut,
        Fut: std::future::Future<Output = GuiResult<()>>,
    {
        let _one = self.input.lock().await;
        let s = self.session().await?;
        let result = match s.calibrate(|| self.cursor()).await {
            Ok(_) => f(s.clone()).await,
            Err(e) => Err(e),
        };
        if let Err(e) = &result {
            if e.code == ErrorCode::BackendError {
                s.close().await;
                *self.portal.lock().await = None;
            }
        }
        result
    }

    /// A screen point (logical px) as the pointer's target. KWin applies the portal's relative
    /// motion in whole pixels (measured: a move of 650.9 went 651), so the pointer goes to
    /// the pixel's top-left corner, which is inside it.
    fn at(p: Point) -> (f64, f64) {
        (p.x as f64, p.y as f64)
    }

    pub async fn pointer_move(&self, p: Point) -> GuiResult<()> {
        let (x, y) = Self::at(p);
        self.with_session(|s| async move { s.motion(x, y).await }).await
    }

    pub async fn click(&self, p: Point, button: MouseButton, count: u32) -> GuiResult<()> {
        input::check_click_count(count)?;
        let at = Self::at(p);
        self.with_session(|s| async move { input::click(&*s, at, button, count).await })
            .await
    }

    pub async fn drag(&self, from: Point, to: Point, button: MouseButton) -> GuiResult<()> {
        let (from, to) = (Self::at(from), Self::at(to));
        self.with_session(|s| async move { input::drag(&*s, from, to, button).await })
            .await
    }

    pub async fn scroll(&self, at: Point, dx: i32, dy: i32) -> GuiResult<()> {
        input::check_scroll(dx, dy)?;
        let at = Self::at(at);
        self.with_session(|s| async move { input::scroll(&*s, at, dx, dy).await })
            .await
    }

    pub async fn key_combo(&self, combo: &KeyCombo) -> GuiResult<()> {
        let (mods, key) = input::combo_keysyms(combo)?;
        self.with_session(|s| async move { input::key_combo(&*s, &mods, key).await })
            .await
    }

    /// Types text by keysym. KWin types only characters of the active keyboard layout
    /// (measured: é and CJK keysyms are dropped without an error), so other text is refused
    /// before anything is sent.
    pub async fn type_text(&self, text: &str) -> GuiResult<()> {
        if !crate::keysyms::typeable_by_keysym(text) {
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                "on KDE Plasma lsm types only characters of the keyboard layout (printable ASCII, Return, Tab): \
                 KWin drops other keysyms. Put other text into a field with set_value on its element_id",
            ));
        }
        let syms = crate::keysyms::text_keysyms(text)?;
        self.with_session(|s| async move { input::type_keysyms(&*s, &syms).await })
            .await
    }
}
