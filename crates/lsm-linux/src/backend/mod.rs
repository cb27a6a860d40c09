//! `DesktopBackend` for every Linux session: elements and semantic actions from the AT-SPI half
//! (`crate::atspi`), windows, capture and raw input from the window system under it
//! (`crate::windowing`: X11, GNOME or KDE), joined by process id, title and geometry
//! (`find_frame.rs` reads, `frames.rs` decides). How a window's pixels and its elements' coordinates relate is in `view.rs`;
//! carrying out an action and reading its effect back in `perform.rs` and `perform_check.rs`;
//! the window-system calls the backend makes in `windows.rs`.

mod find_frame;
mod frames;
mod on_screen;
mod perform;
mod perform_check;
mod view;
mod windows;

use crate::atspi::app_name::AppNames;
use crate::atspi::{Atspi, ObjRef, RawNode, Skipped, WalkOptions};
use crate::session::Session;
use crate::wayland::window_list::{observation_stands, Stands};
use crate::window::{format_window_id, modal, parse_window_id, WindowRecord};
use crate::windowing::WindowSystem;
use crate::x11::{Capture, Gap, X11};
use async_trait::async_trait;
use frames::Found;
use lsm_core::{
    ActionOutcome, Activity, BackendAction, BackendInfo, DesktopBackend, ErrorCode, GuiError, GuiResult,
    ObserveRequest, RawElement, Rect, Screenshot, Snapshot, WindowInfo,
};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use view::{detect_scale, encode_native, scale_from_resources, CoordRule, View};

/// Bound on any one X11 round of work (X replies are local; this guards a stuck server).
const X11_TIMEOUT: Duration = Duration::from_secs(5);

const MINIMIZED_NOTE: &str =
    "the window is minimized: restore it with gui_action [{\"type\":\"focus\"}] (no element_id)";

/// What a model must know about a capture whose pixels are not all the window's own.
fn capture_notes(c: &Capture) -> Vec<String> {
    c.via
        .map(|path| format!("screenshot taken through {path}"))
        .into_iter()
        .chain(c.gaps.iter()
        .map(|g| match g {
            Gap::Covered { why } => format!(
                "another window covers part of this one and {why}: the covered parts of the screenshot show that window"
            ),
            Gap::OffScreen { why } => format!(
                "part of the window lies outside the screen and {why}: that part of the screenshot is black"
            ),
            Gap::NotRepainted => format!(
                "the window was redirected for capture just now and had not repainted its covered or off-screen parts \
                 within {} ms: those parts of the screenshot may still show other windows or black; observe again",
                crate::x11::REPAINT_WAIT.as_millis()
            ),
        }))
        .collect()
}

/// In a Wayland session the X display is XWayland: what it shows is only part of the desktop.
fn xwayland_note(wayland_display: Option<&str>) -> Option<String> {
    wayland_display.filter(|w| !w.is_empty()).map(|w| {
        format!(
            "this is a Wayland session (WAYLAND_DISPLAY={w}): only X11 applications running under \
             XWayland are listed and can be acted on; native Wayland windows are not visible to \
             lsm yet"
        )
    })
}

/// The part of the window that is on screen, window-relative logical px; None when all of it
/// is (nothing to mark).
fn on_screen_part(view: &View, screen: Rect) -> Option<Option<Rect>> {
    let b = view.win.bounds;
    let Some(vis) = screen.intersect(&b) else {
        return Some(None);
    };
    if vis == b {
        return None;
    }
    let r = vis.translate(-b.x, -b.y);
    let (x, y) = (view.logical(r.x), view.logical(r.y));
    let (right, bottom) = (view.logical(r.x + r.width), view.logical(r.y + r.height));
    Some(Some(Rect::new(x, y, right - x, bottom - y)))
}

/// Adds the state `off_screen` to the elements wholly outside `visible` (the on-screen part of
/// the window); how many.
fn mark_off_screen(elements: &mut [RawElement], visible: Option<Rect>) -> usize {
    let mut n = 0;
    for e in elements.iter_mut() {
        let Some(b) = e.bounds else { continue };
        if visible.and_then(|v| v.intersect(&b)).is_none() && !e.states.iter().any(|s| s == OFF_SCREEN) {
            e.states.push(OFF_SCREEN.into());
            n += 1;
        }
    }
    n
}

const OFF_SCREEN: &str = "off_screen";

pub struct LinuxBackend {
    pub(crate) ws: WindowSystem,
    pub(crate) atspi: Option<Atspi>,
    pub(crate) atspi_error: Option<String>,
    /// Which display, for `gui_list`'s notes.
    display: String,
    /// `WAYLAND_DISPLAY` when the X display is XWayland inside a Wayland session.
    wayland: Option<String>,
    /// Why screenshots cannot be taken (GNOME: the frame helper is not installed).
    screenshot_helper: Option<String>,
    /// Pids that have an AT-SPI application, refreshed by list/observe.
    a11y_pids: Mutex<HashSet<u32>>,
    /// Display-wide scale (Xft.dpi), for windows whose own scale is not known yet.
    display_scale: f64,
    /// Per-window scale found when the window was observed.
    scales: Mutex<HashMap<u32, f64>>,
    /// Wayland: per window, what to add to its AT-SPI coordinates to make them window-relative
    /// (found when it was observed; `wayland::coords`).
    pub(crate) local_offsets: Mutex<HashMap<u32, (i32, i32)>>,
    /// Window -> AT-SPI frame and its coordinate rule, remembered when a match was certain; a
    /// tie-breaker for later matches, used only while the frame is still among the
    /// application's top-levels, and where the next walk starts while the match is made again.
    known_frames: Mutex<HashMap<u32, (ObjRef, CoordRule)>>,
    /// Focus and text events, for checking where input landed (perform.rs).
    pub(crate) events: crate::atspi::verify::Events,
    /// AT-SPI bus name of each process whose window was observed (for round trips after input).
    pub(crate) app_buses: Mutex<HashMap<u32, String>>,
    app_names: AppNames,
    /// Windows observed before (their first observation waits for the application).
    seen: crate::atspi::fresh::Seen,
    /// When this backend connected (a missing accessibility bus is looked for again later).
    connected_at: Instant,
}

/// How long an X11 desktop without an accessibility bus is used before the bus is looked for
/// again (it may have been restarted).
const ATSPI_RETRY: Duration = Duration::from_secs(10);

/// Bound on remembered window -> frame links (cleared when reached).
const MAX_KNOWN_FRAMES: usize = 512;

impl LinuxBackend {
    pub async fn connect(session: &Session) -> GuiResult<Self> {
        let display = session.get("DISPLAY").map(str::to_string).ok_or_else(|| {
            GuiError::unavailable(format!(
                "no X11 display found (looked in {}); start lsm inside the graphical session",
                session.looked.join(", ")
            ))
        })?;
        let d = display.clone();
        let x11 = tokio::time::timeout(
            X11_TIMEOUT,
            tokio::task::spawn_blocking(move || X11::connect(Some(&d))),
        )
        .await
        .map_err(|_| GuiError::unavailable(format!("connecting to X display {display} timed out")))?
        .map_err(|e| GuiError::backend(format!("X11 connect task failed: {e}")))??;
        // Two root properties: the display's DPI, and the accessibility bus address that
        // at-spi-bus-launcher publishes (our way in when no session bus is inherited).
        let resources = x11
            .root_text_property("RESOURCE_MANAGER")
            .ok()
            .flatten()
            .unwrap_or_default();
        let root_bus = x11.root_text_property("AT_SPI_BUS").ok().flatten();
        let display_scale = scale_from_resources(&resources).unwrap_or(1.0);
        let ws = WindowSystem::X11(Arc::new(Mutex::new(x11)));
        Ok(Self::assemble(ws, session, format!("display {display}"), display_scale, root_bus).await)
    }

    /// The backend of a GNOME Wayland session whose lsm Shell extension answers.
    pub async fn connect_gnome(session: &Session, gnome: crate::wayland::gnome::Gnome) -> GuiResult<Self> {
        let wd = session.get("WAYLAND_DISPLAY").unwrap_or("wayland-0").to_string();
        let ws = WindowSystem::Gnome(Arc::new(gnome));
        Ok(Self::assemble(
            ws,
            session,
            format!("Wayland display {wd} (GNOME Shell, lsm extension)"),
            1.0,
            None,
        )
        .await)
    }

    pub async fn connect_kde(session: &Session, kde: crate::wayland::kde::Kde) -> GuiResult<Self> {
        let wd = session.get("WAYLAND_DISPLAY").unwrap_or("wayland-0").to_string();
        let ws = WindowSystem::Kde(Arc::new(kde));
        Ok(Self::assemble(
            ws,
            session,
            format!("Wayland display {wd} (KDE Plasma: KWin scripts, RemoteDesktop portal)"),
            1.0,
            None,
        )
        .await)
    }

    /// The parts every window system shares: AT-SPI and the bookkeeping.
    async fn assemble(
        ws: WindowSystem,
        session: &Session,
        display: String,
        display_scale: f64,
        root_bus: Option<String>,
    ) -> Self {
        let bus = session.get("AT_SPI_BUS_ADDRESS").map(str::to_string);
        let mut attempt = Atspi::connect(bus.as_deref()).await;
        if let (Err(e), None, Some(addr)) = (&attempt, &bus, &root_bus) {
            tracing::info!("AT-SPI via the session bus failed ({e}); trying the X root property AT_SPI_BUS");
            attempt = Atspi::connect(Some(addr)).await;
        }
        let (atspi, atspi_error) = match attempt {
            Ok(a) => (Some(a), None),
            Err(e) => {
                tracing::warn!("AT-SPI unavailable, coordinates only: {e}");
                (None, Some(e.message))
            }
        };
        let events = match &atspi {
            Some(a) => a.watch_events().await,
            None => Default::default(),
        };
        let wayland = match ws {
            WindowSystem::X11(_) => session.get("WAYLAND_DISPLAY").map(str::to_string),
            WindowSystem::Gnome(_) | WindowSystem::Kde(_) => None,
        };
        let screenshot_helper = match ws {
            WindowSystem::X11(_) => None,
            WindowSystem::Kde(ref k) => k.capture_refusal().map(str::to_string),
            WindowSystem::Gnome(ref g) => {
                let missing = tokio::task::spawn_blocking(crate::wayland::stream_frames::helper_missing)
                    .await
                    .unwrap_or_else(|e| Some(format!("checking the frame helper failed: {e}")));
                match missing {
                    Some(why) => g.fall_back_to_screenshot_portal(why).await,
                    None => None,
                }
            }
        };
        Self {
            ws,
            atspi,
            atspi_error,
            display,
            wayland,
            screenshot_helper,
            a11y_pids: Mutex::default(),
            display_scale,
            scales: Mutex::default(),
            local_offsets: Mutex::default(),
            known_frames: Mutex::default(),
            events,
            app_buses: Mutex::default(),
            app_names: AppNames::default(),
            seen: Default::default(),
            connected_at: Instant::now(),
        }
    }

    /// Runs blocking X11 work off the async threads, bounded in time.
    pub(crate) async fn x<T: Send + 'static>(
        &self,
        f: impl FnOnce(&X11) -> GuiResult<T> + Send + 'static,
    ) -> GuiResult<T> {
        let WindowSystem::X11(x11) = &self.ws else {
            return Err(GuiError::backend("an X11 request in a session without X11"));
        };
        let x11 = x11.clone();
        let task = tokio::task::spawn_blocking(move || {
            let guard = x11.lock().unwrap_or_else(|p| p.into_inner());
            f(&guard)
        });
        match tokio::time::timeout(X11_TIMEOUT, task).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(GuiError::backend(format!("X11 task failed: {e}"))),
            Err(_) => Err(GuiError::timeout("the X11 request")),
        }
    }

    pub(crate) fn atspi(&self) -> GuiResult<&Atspi> {
        self.atspi.as_ref().ok_or_else(|| {
            GuiError::new(
                ErrorCode::UnsupportedAction,
                format!(
                    "accessibility (AT-SPI) is not available: {}; use x/y coordinates",
                    self.atspi_error.as_deref().unwrap_or("not connected")
                ),
            )
        })
    }

    async fn refresh_a11y_pids(&self) -> HashSet<u32> {
        let apps = match &self.atspi {
            Some(a) => a.applications().await.unwrap_or_default(),
            None => Vec::new(),
        };
        let pids: HashSet<u32> = apps.iter().filter_map(|a| a.pid).collect();
        self.app_names
            .set_accessible(apps.into_iter().filter_map(|a| Some((a.pid?, a.name))));
        *self.a11y_pids.lock().unwrap_or_else(|p| p.into_inner()) = pids.clone();
        pids
    }

    fn view(&self, win: WindowRecord) -> View {
        let scale = self
            .scales
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&win.id)
            .copied();
        let local = self
            .local_offsets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&win.id)
            .copied()
            .unwrap_or((0, 0));
        // On GNOME the shell's rects are stage px: physical, or logical with fractional scaling.
        let scale = match self.compositor() {
            Some(c) => c.shell_window(win.id).map(|w| c.stage_scale(&w)).ok(),
            None => scale,
        };
        View {
            win,
            scale: scale.unwrap_or(self.display_scale),
            local,
        }
    }

    fn info_of(&self, view: &View, a11y: &HashSet<u32>) -> WindowInfo {
        let w = &view.win;
        WindowInfo {
            window_id: format_window_id(w.id),
            title: w.title.clone(),
            app: self.app_names.name(w),
            app_id: w.instance.clone(),
            pid: w.pid,
            bounds: view.logical_bounds(),
            focused: w.focused,
            minimized: w.minimized,
            accessible: w.pid.is_some_and(|p| a11y.contains(&p)),
            transient_for: w.transient_for.map(format_window_id),
            modal: w.modal,
            blocked_by: None,
            policy: None,
        }
    }

    /// The modal dialog that blocks window `xid` now (two X11 round trips), if any.
    async fn blocker_of(&self, xid: u32, pid: Option<u32>) -> GuiResult<Option<u32>> {
        let (stacking, modals) = self.ws_modal_windows().await?;
        Ok(modal::blocker(xid, pid, &stacking, &modals))
    }

    /// `WINDOW_BLOCKED` for `window_id`, naming the dialog and its title.
    async fn blocked(&self, window_id: &str, dialog: u32) -> GuiError {
        let title = self.ws_window(dialog).await.ok().flatten().map(|w| w.title);
        GuiError::window_blocked(window_id, &format_window_id(dialog), title.as_deref())
    }

    pub(crate) async fn x11_window(&self, window_id: &str) -> GuiResult<View> {
        let xid = parse_window_id(window_id)?;
        let win = self
            .ws_window(xid)
            .await?
            .ok_or_else(|| GuiError::window_not_found(window_id))?;
        Ok(self.view(win))
    }

    /// The first observation of a window not seen before (or just restored) waits, bounded,
    /// until the application's tree is consistent and stable (see `atspi/fresh.rs`); a note when it
    /// was not in time.
    async fn first_look(&self, view: &View, found: Option<&Found>) -> Option<String> {
        let (Found { frame, rule, .. }, atspi) = (found?, self.atspi.as_ref()?);
        if !self.seen.first_look(view.win.id, view.win.minimized) {
            return None;
        }
        let gecko = crate::atspi::fresh::builds_document_on_demand(&view.win.class, &view.win.instance);
        let screen = *rule == CoordRule::Screen;
        match crate::atspi::fresh::settle(atspi, &frame.obj, view.logical_bounds(), screen, gecko).await {
            crate::atspi::fresh::Settled::After(_) => None,
            crate::atspi::fresh::Settled::NotWithin(why) => Some(format!(
                "the window is new and its application had not settled within {} ms ({why}): element bounds \
                 or content may still change; observe again",
                crate::atspi::fresh::FRESH_WAIT.as_millis()
            )),
        }
    }
}

impl LinuxBackend {
    /// Physical image pixels per logical pixel of the window's screenshot: on X11 the window's
    /// scale; on GNOME its monitor's (stage coordinates are logical there).
    fn image_scale(&self, view: &View) -> f64 {
        match self.compositor() {
            None => view.scale,
            Some(c) => c.shell_window(view.win.id).map(|w| w.scale).unwrap_or(1.0),
        }
    }
}

fn to_raw_element(n: RawNode, rule: CoordRule, offset: (i32, i32)) -> RawElement {
    RawElement {
        native: encode_native(rule, n.shift, &n.obj),
        key: n.obj.encode(),
        parent: n.parent,
        depth: n.depth,
        role: n.role,
        name: n.name,
        description: n.description,
        value: n.value,
        states: n.states,
        actions: n.actions,
        bounds: n
            .extents
            .filter(|r| !r.is_empty())
            .map(|r| r.translate(offset.0, offset.1)),
        summary: n.summary,
    }
}

#[async_trait]
impl DesktopBackend for LinuxBackend {
    fn info(&self) -> BackendInfo {
        let mut capabilities = vec!["windows", "raw_input"];
        // KWin, and GNOME through the portal, type only the keyboard layout's characters.
        let portal = match &self.ws {
            WindowSystem::Gnome(g) => g.portal_reason(),
            _ => None,
        };
        if !matches!(self.ws, WindowSystem::Kde(_)) && portal.is_none() {
            capabilities.push("unicode_typing");
        }
        if self.screenshot_helper.is_none() {
            capabilities.push("screenshot");
        }
        if self.atspi.is_some() {
            capabilities.extend(["accessibility", "semantic_actions", "set_value"]);
        }
        BackendInfo {
            name: self.ws.name().into(),
            platform: "linux".into(),
            session: self.ws.session().into(),
            capabilities: capabilities.into_iter().map(String::from).collect(),
            notes: std::iter::once(self.display.clone())
                .chain(xwayland_note(self.wayland.as_deref()))
                .chain(portal.map(|why| {
                    format!(
                        "input and pixels through the desktop portal ({why}): the user is asked once per lsm run \
                         (where the portal remembers grants, once), screenshots are cut from the shared screen (parts \
                         covered by other windows show them), and only the keyboard layout's characters can be typed"
                    )
                }))
                .chain(
                    self.screenshot_helper
                        .iter()
                        .map(|e| format!("no screenshots: {e}")),
                )
                .chain(
                    self.atspi_error
                        .iter()
                        .map(|e| format!("AT-SPI unavailable: {e}")),
                )
                .collect(),
        }
    }

    async fn diagnose(&self, windows: &[WindowInfo]) -> Vec<lsm_core::doctor::Item> {
        self.linux_diagnosis(windows).await
    }

    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        let (windows, pids) = tokio::join!(self.ws_list_windows(), self.refresh_a11y_pids());
        let windows = windows?;
        let stacking: Vec<u32> = windows.iter().map(|w| w.id).collect();
        let modals = modal::ModalWindow::of_list(&windows);
        Ok(windows
            .into_iter()
            .map(|w| {
                let blocker = modal::blocker(w.id, w.pid, &stacking, &modals);
                let mut info = self.info_of(&self.view(w), &pids);
                info.blocked_by = blocker.map(format_window_id);
                info
            })
            .collect())
    }

    async fn window(&self, window_id: &str) -> GuiResult<WindowInfo> {
        let w = self.x11_window(window_id).await?;
        let blocker = self.blocker_of(w.win.id, w.win.pid).await?;
        let pids = self.a11y_pids.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut info = self.info_of(&w, &pids);
        info.blocked_by = blocker.map(format_window_id);
        Ok(info)
    }

    async fn observe(&self, window_id: &str, req: &ObserveRequest) -> GuiResult<Snapshot> {
        // On GNOME, asking the shell where the window is costs a pass of its main loop (7-30 ms
        // while it renders). The walk starts from the last list's records of the window's
        // process (the window, and its siblings that tell its accessibility frame from theirs)
        // while the shell is asked, and stands only when those records are still exactly the
        // process's windows; otherwise the window is looked at again where it is now.
        if let Some(g) = self.compositor() {
            let xid = parse_window_id(window_id)?;
            if let Ok(known) = g.shell_window(xid) {
                let siblings = g.last_of_process(known.pid);
                let listed: Vec<WindowRecord> = siblings.iter().map(|w| g.window_of(w)).collect();
                let known_view = self.view(g.window_of(&known));
                let (now, looked) = tokio::join!(
                    g.process_windows_now(known.pid),
                    self.observe_view(known_view, req, Some(&listed))
                );
                match observation_stands(&known, &siblings, &now?) {
                    Stands::Gone => return Err(GuiError::window_not_found(window_id)),
                    Stands::Yes => return looked,
                    Stands::Again => tracing::debug!(
                        "observe {window_id}: the window or its process's others changed during the walk; again"
                    ),
                }
            }
        }
        let win = self.x11_window(window_id).await?;
        self.observe_view(win, req, None).await
    }

    async fn capture(&self, window_id: &str) -> GuiResult<Snapshot> {
        Ok(self.capture_of(window_id, false).await?.0)
    }

    async fn capture_watched(&self, window_id: &str) -> GuiResult<(Snapshot, Option<u64>)> {
        if !matches!(self.ws, WindowSystem::X11(_)) {
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                "only X11 windows are watched for repaints",
            ));
        }
        self.capture_of(window_id, true).await
    }

    async fn repaints_since(&self, watch: u64) -> Option<Vec<lsm_core::Repaint>> {
        if !matches!(self.ws, WindowSystem::X11(_)) {
            return None;
        }
        self.x(move |x| Ok(x.repaints_since(watch))).await.ok().flatten()
    }

    async fn perform(&self, window: &WindowInfo, action: &BackendAction) -> GuiResult<ActionOutcome> {
        // Input to a window under a modal dialog is lost (or lands in the dialog): refuse it,
        // checked now, since the dialog may have opened after the observation.
        let xid = parse_window_id(&window.window_id)?;
        // GNOME: the action works from the windows as they are now, and what comes after it (the
        // next action's window check) does not see the list from before it.
        self.ws_forget_windows().await;
        if let Some(dialog) = self.blocker_of(xid, window.pid).await? {
            return Err(self.blocked(&window.window_id, dialog).await);
        }
        let done = self.run_action(window, action).await;
        self.ws_forget_windows().await;
        done
    }

    fn stale(&self) -> Option<String> {
        if let WindowSystem::X11(x) = &self.ws {
            // Busy with a call: that call reports a lost server itself.
            if x.try_lock().is_ok_and(|x| x.connection_lost()) {
                return Some(format!(
                    "the connection to the X server ({}) was lost",
                    self.display
                ));
            }
        }
        match (&self.atspi, &self.ws) {
            (Some(a), _) if a.conn.is_closed() => {
                Some("the accessibility (AT-SPI) bus connection was lost".into())
            }
            (None, WindowSystem::X11(_)) if self.connected_at.elapsed() >= ATSPI_RETRY => {
                Some("looking for the accessibility (AT-SPI) bus again".into())
            }
            _ => None,
        }
    }

    fn activity(&self, window: &WindowInfo) -> Option<Activity> {
        let pid = window.pid?;
        let bus = self.app_buses.lock().ok()?.get(&pid).cloned()?;
        self.events.activity(&bus)
    }

    async fn reread_states(
        &self,
        _window_id: &str,
        elements: &[&RawElement],
    ) -> GuiResult<Vec<Option<Vec<String>>>> {
        let atspi = self.atspi()?;
        Ok(
            futures_util::future::join_all(elements.iter().map(|e| async move {
                let obj = ObjRef::decode(&e.key)?;
                let mut states = atspi.states_of(&obj).await.ok()?;
                // What the observation added of its own stays (the walk does not read it).
                if e.states.iter().any(|s| s == OFF_SCREEN) {
                    states.push(OFF_SCREEN.into());
                }
                Some(states)
            }))
            .await,
        )
    }

    async fn reread_bounds(
        &self,
        window_id: &str,
        elements: &[&RawElement],
    ) -> GuiResult<Vec<Option<Option<Rect>>>> {
        let atspi = self.atspi()?;
        let view = &self.x11_window(window_id).await?;
        // As the walk placed them: each element's coordinate rule and correction (its handle),
        // then the window's offset.
        Ok(
            futures_util::future::join_all(elements.iter().map(|e| async move {
                let (rule, shift, obj) = view::decode_native(&e.native).ok()?;
                let extents = atspi.extents_of(&obj, rule.kind()).await.ok()?;
                let offset = rule.offset(view);
                Some(extents.map(|r| r.translate(shift.0 + offset.0, shift.1 + offset.1)))
            }))
            .await,
        )
    }

    async fn in_tree(&self, _window_id: &str, keys: &[&str]) -> GuiResult<Vec<bool>> {
        let atspi = self.atspi()?;
        Ok(futures_util::future::join_all(keys.iter().map(|k| async move {
            match ObjRef::decode(k) {
                Some(obj) => atspi.listed_in_parent(&obj).await,
                None => true,
            }
        }))
        .await)
    }

    async fn reread_elements(
        &self,
        window_id: &str,
        elements: &[&RawElement],
    ) -> GuiResult<Vec<Option<RawElement>>> {
        let atspi = self.atspi()?;
        // The window's frame says how its elements' boxes are read, as in `observe`.
        let view = self.x11_window(window_id).await?;
        let Some(found) = self.find_frame(&view, None).await? else {
            return Err(GuiError::new(
                ErrorCode::ElementStale,
                "the window's accessibility frame is gone",
            ));
        };
        let (rule, offset) = (found.rule, found.rule.offset(&view));
        let opts = WalkOptions {
            max_elements: 1,
            max_depth: 0,
            prune: false,
            deadline: Instant::now() + REREAD_TIME,
            coords: rule.kind(),
            query: None,
        };
        Ok(futures_util::future::join_all(elements.iter().map(|e| {
            let opts = opts.clone();
            async move {
                let obj = ObjRef::decode(&e.key)?;
                let node = atspi.walk(&obj, &opts).await.ok()?.nodes.into_iter().next()?;
                let mut now = to_raw_element(node, rule, offset);
                // What the observation added of its own stays (the walk does not read it).
                if e.states.iter().any(|s| s == OFF_SCREEN) {
                    now.states.push(OFF_SCREEN.into());
                }
                Some(now)
            }
        }))
        .await)
    }
}

/// How long reading a few elements again may take before the window is walked instead.
const REREAD_TIME: Duration = Duration::from_secs(1);

impl LinuxBackend {
    /// The window's pixels alone; `watched`: also watched for repaints from then on (X11 only;
    /// see `x11/repaints.rs`), with the watch id.
    async fn capture_of(&self, window_id: &str, watched: bool) -> GuiResult<(Snapshot, Option<u64>)> {
        if let Some(why) = &self.screenshot_helper {
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                format!("no screenshots: {why}"),
            ));
        }
        let xid = parse_window_id(window_id)?;
        let (win, ()) = tokio::join!(self.x11_window(window_id), self.ws_warm_capture(xid));
        let win = win?;
        let (shot, watch) = if watched {
            let ((shot, watch), gap) = self.x_capture(&win.win, X11::capture_watched).await?;
            (shot.with_gap(gap), watch)
        } else {
            (self.ws_capture(&win.win).await?, None)
        };
        let mut notes = capture_notes(&shot);
        if win.win.minimized {
            notes.push(MINIMIZED_NOTE.into());
        }
        // The accessible-process list of the last look is enough here; the walk beside this
        // call refreshes it.
        let pids = self.a11y_pids.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let snapshot = Snapshot {
            window: self.info_of(&win, &pids),
            scale: self.image_scale(&win),
            elements: Vec::new(),
            truncated: false,
            truncated_reason: None,
            screenshot: Some(Screenshot {
                image: shot.image,
                occluded: shot.occluded,
            }),
            notes,
        };
        Ok((snapshot, watch))
    }

    /// Observes the window as `win` describes it (`observe` says which record that is);
    /// `listed`: its process's windows as that record's list had them (None: listed when needed).
    async fn observe_view(
        &self,
        mut win: View,
        req: &ObserveRequest,
        listed: Option<&[WindowRecord]>,
    ) -> GuiResult<Snapshot> {
        let window_id = format_window_id(win.win.id);
        let window_id = window_id.as_str();
        let xid = win.win.id;
        // Find the frame first: it tells the window's scale, which the walk's offsets need.
        // Meanwhile a window seen before is walked from where its last walk started: kept when
        // the lookup finds that frame again with the same rule (a new window's first look
        // waits for its application first).
        let looked = Instant::now();
        let early = match &self.atspi {
            Some(atspi) if req.include_elements && !self.seen.is_new(xid, win.win.minimized) => {
                self.known_frame(xid).map(|(obj, rule)| (atspi, obj, rule))
            }
            _ => None,
        };
        let early_deadline = looked + req.walk_budget;
        let root_options = |coords, deadline| WalkOptions {
            max_elements: req.max_elements,
            max_depth: req.max_depth,
            prune: !req.include_hidden,
            deadline,
            coords,
            query: req.query.clone(),
        };
        let early_walk = async {
            let (atspi, obj, rule) = early.as_ref()?;
            let walked = atspi.walk(obj, &root_options(rule.kind(), early_deadline)).await;
            Some((obj.clone(), rule.kind(), walked.ok()?))
        };
        let lookup = async {
            let found = match req.include_elements {
                true => self.find_frame(&win, listed).await,
                false => Ok(None),
            };
            tracing::debug!("observe {window_id}: frame lookup {:?}", looked.elapsed());
            found
        };
        let (found, mut early_walked) = tokio::join!(lookup, early_walk);
        let found = found?;
        let is_x11 = matches!(self.ws, WindowSystem::X11(_));
        if let Some(scale) = found
            .as_ref()
            .filter(|_| is_x11)
            .and_then(|f| detect_scale(&win.win, &f.frame))
        {
            self.scales
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(xid, scale);
            win.scale = scale;
        }
        if let Some(local) = self
            .local_offsets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&xid)
        {
            win.local = *local;
        }
        let fresh_note = self.first_look(&win, found.as_ref()).await;
        // The budget is the walk's own: finding the window and waiting for a fresh one to
        // settle are not charged to it.
        let deadline = Instant::now() + req.walk_budget;
        // Without the frame helper the observation goes on without its image (said in a note).
        let capture = async {
            if req.screenshot && self.screenshot_helper.is_none() {
                self.ws_capture(&win.win).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let walk = async {
            if !req.include_elements {
                return Ok((Vec::new(), false, None, Vec::new()));
            }
            let mut notes = Vec::new();
            let Some(Found {
                frame,
                rule,
                popups,
                doubt,
            }) = found.clone()
            else {
                notes.push(match &self.atspi {
                    None => {
                        "no accessibility bus: elements unavailable, use x/y with the screenshot".to_string()
                    }
                    Some(_) => {
                        "no accessibility tree found for this window: use x/y with the screenshot".to_string()
                    }
                });
                return Ok((Vec::new(), false, None, notes));
            };
            let atspi = self.atspi()?;
            notes.extend(doubt);
            let offset = rule.offset(&win);
            let mut elements: Vec<RawElement> = Vec::new();
            let (mut truncated, mut reason) = (false, None);
            let mut skipped = Skipped::default();
            for root in std::iter::once(&frame).chain(popups.iter()) {
                let room = req.max_elements.saturating_sub(elements.len());
                if room == 0 {
                    truncated = true;
                    reason.get_or_insert_with(|| format!("max_elements ({}) reached", req.max_elements));
                    break;
                }
                let early = early_walked.take().filter(|(obj, kind, _)| {
                    *obj == root.obj && *kind == rule.kind() && fresh_note.is_none()
                });
                let res = match early {
                    Some((_, _, walked)) => {
                        tracing::debug!("observe {window_id}: the walk begun beside the frame lookup stands");
                        walked
                    }
                    None => {
                        let opts = WalkOptions {
                            max_elements: room,
                            ..root_options(rule.kind(), deadline)
                        };
                        atspi.walk(&root.obj, &opts).await?
                    }
                };
                let base = elements.len();
                elements.extend(res.nodes.into_iter().map(|mut n| {
                    n.parent = n.parent.map(|p| p + base);
                    to_raw_element(n, rule, offset)
                }));
                truncated |= res.truncated;
                skipped.add(&res.skipped);
                if reason.is_none() {
                    reason = res.truncated_reason;
                }
            }
            notes.extend(skipped.on_purpose());
            notes.extend(skipped.by_limits());
            if !popups.is_empty() {
                notes.push(format!("{} open popup(s) of this application (e.g. a menu) are included after the window's own elements", popups.len()));
            }
            GuiResult::Ok((elements, truncated, reason, notes))
        };
        let screen = async {
            if req.include_elements {
                self.ws_screen_rect().await.map(Some)
            } else {
                Ok(None)
            }
        };
        let (shot, walked, pids, screen, blocker) = tokio::join!(
            capture,
            walk,
            self.refresh_a11y_pids(),
            screen,
            self.blocker_of(xid, win.win.pid)
        );
        let (mut elements, truncated, truncated_reason, mut notes) = walked?;
        if let Some(visible) = screen?.and_then(|s| on_screen_part(&win, s)) {
            notes.push(on_screen::window_note(visible));
            let n = mark_off_screen(&mut elements, visible);
            if n > 0 {
                notes.push(format!(
                    "{n} element(s) lie outside the part of the window that is on the screen (state off_screen): \
                     a pointer click cannot reach them; act on them by element_id"
                ));
            }
        }
        let mut window = self.info_of(&win, &pids);
        // Its elements were read: it is accessible, even when the registry that lists the
        // accessible applications does not answer (the application's own connection does).
        window.accessible |= found.is_some();
        // The toolkit's own word counts too: not every dialog sets _NET_WM_STATE_MODAL.
        window.modal |= found
            .as_ref()
            .is_some_and(|f| f.frame.states.iter().any(|s| s == "modal"));
        if let Some(dialog) = blocker? {
            let (id, title) = (
                format_window_id(dialog),
                self.ws_window(dialog).await?.map(|w| w.title),
            );
            notes.push(format!(
                "blocked by modal dialog {id} {:?}: this window takes no input until it is closed, and actions \
                 here are refused (WINDOW_BLOCKED); observe and act on that window (gui_state {id})",
                title.unwrap_or_default()
            ));
            window.blocked_by = Some(id);
        }
        let screenshot = shot?.map(|c| {
            notes.extend(capture_notes(&c));
            Screenshot {
                image: c.image,
                occluded: c.occluded,
            }
        });
        if win.win.minimized {
            notes.push(MINIMIZED_NOTE.into());
        }
        notes.extend(fresh_note);
        Ok(Snapshot {
            window,
            scale: self.image_scale(&win),
            elements,
            truncated,
            truncated_reason,
            screenshot,
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xwayland_display_says_what_it_does_not_show() {
        assert_eq!(xwayland_note(None), None);
        assert_eq!(xwayland_note(Some("")), None);
        let n = xwayland_note(Some("wayland-0")).expect("a note");
        assert!(
            n.contains("WAYLAND_DISPLAY=wayland-0") && n.contains("XWayland"),
            "{n}"
        );
    }
}
