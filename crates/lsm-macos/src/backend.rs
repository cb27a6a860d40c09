//! The macOS backend assembled: the connector checks the login session and the Accessibility
//! grant (without a prompt) before anything else; windows come from the window server joined
//! to each application's Accessibility windows; elements from a bounded walk on the
//! Accessibility worker thread; pixels from ScreenCaptureKit or `screencapture`; actions
//! semantic where the element supports one, else Quartz events at a point checked to be on the
//! window. Compiled for macOS only; every rule it follows is in the platform-free modules.

use crate::actions::{click_method, read_back, set_value_plan, Method, ReadBack};
use crate::ax::act::{self, Readable};
use crate::ax::context::{AxContext, AxWindowRead};
use crate::ax::element::AxElement;
use crate::ax::tree::WindowTree;
use crate::cg;
use crate::element::raw_elements;
use crate::geometry::{capture_scale, input_point, window_scale, Display, PointRect};
use crate::join::{is_normal_window, list_windows, AppWindows, CgWindow};
use crate::keys::{combo_events, key_target, needs_layout, type_plan, KeyTarget};
use crate::layout::LayoutKnowledge;
use crate::listing::{window_id, window_infos};
use crate::permissions::{
    check_accessibility, check_screen_recording, check_session, missing_titles_note, SessionFacts,
};
use crate::pointer::{click_steps, drag_steps, scroll_wheels, MouseStep};
use crate::walk::{walk_timed, WalkLimits};
use async_trait::async_trait;
use lsm_core::worker::Worker;
use lsm_core::{
    ActionOutcome, Activity, BackendAction, BackendConnector, BackendInfo, Check, DesktopBackend, ElementRef,
    ErrorCode, GuiError, GuiResult, ObserveRequest, Point, Screenshot, Snapshot, Target, WindowInfo,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest an Accessibility job may take beyond its own budget.
const JOB_SLACK: Duration = Duration::from_secs(1);
/// The bound of a listing or an action on the Accessibility thread.
const JOB_TIMEOUT: Duration = Duration::from_secs(5);
/// What a combo of a named key (layout-independent) is resolved with: the layout is not read.
const LAYOUT_NOT_NEEDED: LayoutKnowledge = LayoutKnowledge::Unreadable {
    source: None,
    why: String::new(),
};

/// Runs blocking work off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> GuiResult<T> + Send + 'static) -> GuiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| GuiError::backend(format!("a macOS backend task failed: {e}")))?
}

/// The running binary's resolved path and the terminal that started it, for the permission
/// messages: read once (neither changes while lsm runs), not on every screenshot.
fn exe_and_terminal() -> (String, Option<String>) {
    static FOUND: std::sync::OnceLock<(String, Option<String>)> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let exe = std::env::current_exe()
                .ok()
                .and_then(|p| p.canonicalize().ok())
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "lsm".into());
            (exe, std::env::var("TERM_PROGRAM").ok())
        })
        .clone()
}

/// Opens the macOS backend on the first GUI call.
pub struct MacConnector;

#[async_trait]
impl BackendConnector for MacConnector {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        blocking(|| {
            let session = cg::session::gui_session();
            check_session(&SessionFacts {
                console_user: crate::session::console_user(),
                ssh: crate::session::over_ssh(),
                window_server: session.is_some(),
                root: crate::session::as_root(),
                on_console: session.map(|s| s.on_console),
            })?;
            let (exe, term) = exe_and_terminal();
            check_accessibility(crate::ax::trust::accessibility_trusted(), &exe, term.as_deref())?;
            Ok(())
        })
        .await?;
        // The keyboard layout is read once now (on the main queue, off this task), so the first
        // combo with a letter finds it built.
        tokio::task::spawn_blocking(cg::layout::current);
        Ok(Arc::new(MacBackend::default()))
    }

    async fn preflight(&self) -> Vec<lsm_core::doctor::Item> {
        let facts = blocking(|| {
            let session = cg::session::gui_session();
            let (exe, term_program) = exe_and_terminal();
            Ok(crate::doctor::Facts {
                session: SessionFacts {
                    console_user: crate::session::console_user(),
                    ssh: crate::session::over_ssh(),
                    window_server: session.is_some(),
                    root: crate::session::as_root(),
                    on_console: session.map(|s| s.on_console),
                },
                accessibility: crate::ax::trust::accessibility_trusted(),
                screen_recording: cg::windows::screen_recording_allowed(),
                exe,
                term_program,
            })
        })
        .await;
        match facts {
            Ok(f) => crate::doctor::items(&f),
            Err(e) => vec![lsm_core::doctor::Item::fail(
                "macos_session",
                "Login session",
                e.message,
            )],
        }
    }
}

/// What the last listing said of a window.
#[derive(Clone)]
struct Known {
    info: WindowInfo,
    frame: PointRect,
    number: Option<u32>,
    /// The window's element in the Accessibility thread's registry.
    handle: Option<String>,
}

/// The last listing: what each id stands for, and the displays.
struct Listing {
    at: Instant,
    windows: HashMap<String, Known>,
    displays: Vec<Display>,
}

/// How old a listing an action may use: the core reads the window (a fresh listing) to check
/// its geometry just before it acts, so listing again for the action would repeat that work.
const LISTING_REUSE: Duration = Duration::from_millis(500);

pub struct MacBackend {
    ax: Arc<Worker<AxContext>>,
    listing: Mutex<Option<Listing>>,
}

impl Default for MacBackend {
    fn default() -> Self {
        Self {
            ax: Arc::new(Worker::new("Accessibility", || Ok(AxContext::default()))),
            listing: Mutex::new(None),
        }
    }
}

impl MacBackend {
    /// Lists the windows and remembers what each id stands for.
    async fn refresh(&self) -> GuiResult<(Vec<WindowInfo>, Vec<Display>)> {
        let ax = self.ax.clone();
        let (infos, known, displays) = blocking(move || {
            let cg_windows = cg::windows::server_windows();
            let displays = cg::windows::server_displays();
            let mut pids: Vec<i32> = cg_windows
                .iter()
                .filter(|w| is_normal_window(w))
                .map(|w| w.pid)
                .collect();
            pids.sort_unstable();
            pids.dedup();
            let read = ax.run(JOB_TIMEOUT, move |ctx| {
                ctx.keep_only(&pids);
                let mut apps = Vec::new();
                let mut handles: HashMap<(i32, usize), String> = HashMap::new();
                for &pid in &pids {
                    // An application that does not answer is listed without a tree.
                    let Ok(windows) = ctx.windows_of(pid) else {
                        continue;
                    };
                    let hidden = ctx.hidden(pid).unwrap_or(false);
                    for AxWindowRead { handle, window } in &windows {
                        handles.insert((pid, window.index), handle.clone());
                    }
                    apps.push(AppWindows {
                        pid,
                        hidden,
                        windows: windows.into_iter().map(|r| r.window).collect(),
                    });
                }
                Ok((apps, handles, ctx.frontmost_pid()))
            })?;
            let (apps, handles, front) = read;
            let listed = list_windows(&cg_windows, &apps, front);
            let owners: HashMap<i32, String> = cg_windows
                .iter()
                .map(|w: &CgWindow| (w.pid, w.owner_name.clone()))
                .collect();
            let infos = window_infos(&listed, |pid| owners.get(&pid).cloned());
            let known: HashMap<String, Known> = listed
                .iter()
                .zip(&infos)
                .map(|(l, info)| {
                    let handle = l.ax.index().and_then(|i| handles.get(&(l.pid, i)).cloned());
                    let known = Known {
                        info: info.clone(),
                        frame: l.frame.unwrap_or_default(),
                        number: l.cg.as_ref().map(|c| c.number),
                        handle,
                    };
                    (window_id(l), known)
                })
                .collect();
            Ok((infos, known, displays))
        })
        .await?;
        *self.listing.lock().unwrap_or_else(|p| p.into_inner()) = Some(Listing {
            at: Instant::now(),
            windows: known,
            displays: displays.clone(),
        });
        Ok((infos, displays))
    }

    /// What a window id stands for now (`reuse`: a listing younger than this will do).
    async fn known(&self, window_id: &str, reuse: Duration) -> GuiResult<(Known, Vec<Display>)> {
        if crate::listing::parse_window_id(window_id).is_none() {
            return Err(GuiError::malformed_window_id(window_id, "m42"));
        }
        let recent = |listing: &Option<Listing>| {
            let l = listing.as_ref().filter(|l| l.at.elapsed() < reuse)?;
            Some((l.windows.get(window_id).cloned(), l.displays.clone()))
        };
        let cached = recent(&self.listing.lock().unwrap_or_else(|p| p.into_inner()));
        let found = match cached {
            Some(found) => found,
            None => {
                self.refresh().await?;
                let listed = recent(&self.listing.lock().unwrap_or_else(|p| p.into_inner()));
                listed.unwrap_or((None, Vec::new()))
            }
        };
        match found {
            (Some(k), displays) => Ok((k, displays)),
            (None, _) => Err(GuiError::new(
                ErrorCode::WindowNotFound,
                format!("no window {window_id}; call gui_list"),
            )),
        }
    }

    /// Brings the window's application to the front and raises the window.
    async fn raise(&self, known: &Known) -> GuiResult<()> {
        let (Some(handle), Some(pid)) = (known.handle.clone(), known.info.pid) else {
            return Ok(());
        };
        self.ax.run(JOB_TIMEOUT, move |ctx| {
            let app = ctx.app(pid as i32);
            let window = ctx.elements.get(&handle).cloned().ok_or_else(stale)?;
            crate::ax::app::bring_to_front(&app, &window).map_err(|f| f.into_gui("raising the window"))
        })
    }

    /// Quartz mouse steps at window-relative points, after the raise.
    async fn pointer(&self, known: &Known, steps: Vec<MouseStep>) -> GuiResult<()> {
        self.raise(known).await?;
        blocking(move || cg::input::post_mouse(&steps)).await
    }
}

fn stale() -> GuiError {
    GuiError::new(
        ErrorCode::ElementStale,
        "the element is gone; call gui_state again",
    )
}

/// A window-relative point as a global one, checked to be on the window and a display.
fn global(known: &Known, displays: &[Display], p: Point) -> GuiResult<(f64, f64)> {
    let g = input_point(f64::from(p.x), f64::from(p.y), &known.frame, displays)?;
    Ok((g.x, g.y))
}

/// The centre of an element as a window-relative point.
fn centre(e: &ElementRef) -> GuiResult<Point> {
    let b = e.bounds.ok_or_else(|| {
        GuiError::new(
            ErrorCode::UnsupportedAction,
            "the element has no place on the screen",
        )
    })?;
    Ok(Point::new(b.x + b.width / 2, b.y + b.height / 2))
}

fn target_point(t: &Target) -> GuiResult<Point> {
    match t {
        Target::Point(p) => Ok(*p),
        Target::Element(e) => centre(e),
    }
}

#[async_trait]
impl DesktopBackend for MacBackend {
    fn info(&self) -> BackendInfo {
        let (exe, term) = exe_and_terminal();
        let recording = cg::windows::screen_recording_allowed();
        BackendInfo {
            name: "macos-ax".into(),
            platform: "macos".into(),
            session: "aqua".into(),
            capabilities: [
                "windows",
                "accessibility",
                "semantic_actions",
                "set_value",
                "raw_input",
                "unicode_typing",
                "screenshot",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            notes: missing_titles_note(recording, &exe, term.as_deref())
                .into_iter()
                .collect(),
        }
    }

    /// The application's Accessibility notifications, once one of its windows was observed and
    /// its observer registered; `None` otherwise (settling then compares observations).
    fn activity(&self, window: &WindowInfo) -> Option<Activity> {
        crate::ax::observer::activity(i32::try_from(window.pid?).ok()?)
    }

    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        Ok(self.refresh().await?.0)
    }

    async fn window(&self, window_id: &str) -> GuiResult<WindowInfo> {
        Ok(self.known(window_id, Duration::ZERO).await?.0.info)
    }

    async fn observe(&self, window_id: &str, request: &ObserveRequest) -> GuiResult<Snapshot> {
        let (known, displays) = self.known(window_id, Duration::ZERO).await?;
        let scale = window_scale(&known.frame, &displays);
        let mut snapshot = Snapshot {
            window: known.info.clone(),
            scale,
            elements: Vec::new(),
            truncated: false,
            truncated_reason: None,
            screenshot: None,
            notes: Vec::new(),
        };
        if request.include_elements {
            match known.handle.clone() {
                None => snapshot
                    .notes
                    .push("no Accessibility window could be matched to this window: pixels only".into()),
                Some(handle) => {
                    let limits = WalkLimits::from_request(request);
                    let frame = known.frame;
                    let (pid, app) = (known.info.pid, known.info.app.clone());
                    let (elements, truncated, notes) =
                        self.ax.run(request.walk_budget + JOB_SLACK, move |ctx| {
                            // Chromium and Electron asked to build their trees on first contact:
                            // said once, in the first observation of the application's window.
                            let woken = pid.and_then(|p| ctx.take_first_contact_note(p as i32));
                            // The settle signal from here on (registration bounded by the messaging
                            // timeout; done once per application).
                            let watch_note = pid.and_then(|p| ctx.watch(p as i32, &app));
                            let window = ctx.elements.get(&handle).cloned().ok_or_else(stale)?;
                            let walked = walk_timed(&mut WindowTree { window }, &limits)
                                .map_err(|f| f.into_gui("reading the window's elements"))?;
                            let registry = &mut ctx.elements;
                            let elements = raw_elements(
                                &walked,
                                &frame,
                                |node| registry.keep(node.clone()),
                                AxElement::identity_key,
                            );
                            let notes: Vec<String> = woken.into_iter().chain(watch_note).collect();
                            Ok((elements, walked.truncated_reason.clone(), notes))
                        })?;
                    snapshot.notes.extend(notes);
                    snapshot.elements = elements;
                    snapshot.truncated = truncated.is_some();
                    snapshot.truncated_reason = truncated;
                }
            }
        }
        if request.screenshot {
            // Without Screen Recording the window server gives no pixels of other applications'
            // windows (a capture could be the desktop behind them): refused, naming who needs it.
            let (exe, term) = exe_and_terminal();
            check_screen_recording(cg::windows::screen_recording_allowed(), &exe, term.as_deref())?;
            let Some(number) = known.number else {
                return Err(GuiError::new(
                    ErrorCode::UnsupportedAction,
                    "the window is minimized (the window server draws nothing of it): no screenshot",
                ));
            };
            let (w, h) = (
                (known.frame.width * scale).round().max(1.0) as usize,
                (known.frame.height * scale).round().max(1.0) as usize,
            );
            let shot = crate::sck::shot::capture(number, w, h).await?;
            // screencapture takes the size it likes: the scale is the one the picture has.
            snapshot.scale = capture_scale(shot.image.width, &known.frame, &displays);
            snapshot.notes.push(format!("captured with {}", shot.path.name()));
            snapshot.notes.extend(shot.notes);
            snapshot.screenshot = Some(Screenshot {
                image: shot.image,
                // A desktop-independent capture shows the window alone, whatever covers it.
                occluded: false,
            });
        }
        Ok(snapshot)
    }

    async fn perform(&self, window: &WindowInfo, action: &BackendAction) -> GuiResult<ActionOutcome> {
        let (known, displays) = self.known(&window.window_id, LISTING_REUSE).await?;
        match action {
            BackendAction::Click {
                target,
                button,
                count,
            } => {
                if let Target::Element(e) = target {
                    let (native, role, button, count) = (e.native.clone(), e.role.clone(), *button, *count);
                    let done = self.ax.run(JOB_TIMEOUT, move |ctx| {
                        let el = ctx.elements.get(&native).cloned().ok_or_else(stale)?;
                        let s = act::supported(&el).map_err(|f| f.into_gui("reading the element"))?;
                        let method = click_method(&role, &s, button, count);
                        if method == Method::Pointer {
                            return Ok(None);
                        }
                        let reads_value = read_back(method, &role) == ReadBack::Value;
                        let value_of =
                            |el: &AxElement| el.attribute("AXValue").ok().and_then(|v| v.display());
                        let before = if reads_value { value_of(&el) } else { None };
                        act::run(&el, method).map_err(|f| f.into_gui("acting on the element"))?;
                        let check = match (reads_value, before, value_of(&el)) {
                            (true, Some(b), Some(a)) if a != b => {
                                Check::Verified(format!("value {b} -> {a}"))
                            }
                            (true, Some(b), Some(_)) => {
                                Check::Unverified(format!("{} done; its value stayed {b}", method.name()))
                            }
                            _ => Check::Unverified(format!(
                                "{} done; its effect is judged from the window",
                                method.name()
                            )),
                        };
                        Ok(Some(ActionOutcome::new(method.name()).with_check(check)))
                    })?;
                    if let Some(outcome) = done {
                        return Ok(outcome);
                    }
                }
                let (x, y) = global(&known, &displays, target_point(target)?)?;
                self.pointer(&known, click_steps(x, y, *button, *count)).await?;
                Ok(ActionOutcome::new("cgevent").unverified("clicked; the effect is judged from the window"))
            }
            BackendAction::Move { target } => {
                let (x, y) = global(&known, &displays, target_point(target)?)?;
                self.pointer(&known, vec![MouseStep::Move { x, y }]).await?;
                Ok(ActionOutcome::new("cgevent").unverified("moved the pointer"))
            }
            BackendAction::Scroll {
                target,
                delta_x,
                delta_y,
            } => {
                let p = match target {
                    Some(t) => target_point(t)?,
                    None => Point::new(known.info.bounds.width / 2, known.info.bounds.height / 2),
                };
                let (x, y) = global(&known, &displays, p)?;
                self.pointer(&known, vec![MouseStep::Move { x, y }]).await?;
                let (v, h) = scroll_wheels(*delta_x, *delta_y);
                blocking(move || cg::input::post_scroll(v, h)).await?;
                Ok(
                    ActionOutcome::new("cgevent")
                        .unverified("scrolled; the effect is judged from the window"),
                )
            }
            BackendAction::Drag { from, to, button } => {
                let a = global(&known, &displays, target_point(from)?)?;
                let b = global(&known, &displays, *to)?;
                self.pointer(&known, drag_steps(a, b, *button)).await?;
                Ok(ActionOutcome::new("cgevent").unverified("dragged; the effect is judged from the window"))
            }
            BackendAction::Type { element, text } => {
                self.raise(&known).await?;
                if let Some(e) = element {
                    let native = e.native.clone();
                    self.ax.run(JOB_TIMEOUT, move |ctx| {
                        let el = ctx.elements.get(&native).cloned().ok_or_else(stale)?;
                        act::run(&el, Method::Focus).map_err(|f| f.into_gui("focusing the element"))
                    })?;
                }
                let plan = type_plan(text)?;
                blocking(move || cg::input::post_type_plan(&plan)).await?;
                Ok(ActionOutcome::new("cgevent_unicode")
                    .unverified("typed; the text is judged from the window"))
            }
            BackendAction::Key { combo } => {
                // The key is resolved before anything happens: a combo the layout cannot
                // press is refused without raising the window.
                let (target, layout_note) = match combo.key.as_deref() {
                    None => (None, None),
                    Some(name) if !needs_layout(name) => (
                        Some(key_target(name, &combo.modifiers, &LAYOUT_NOT_NEEDED)?),
                        None,
                    ),
                    Some(name) => {
                        let layout = blocking(|| Ok(cg::layout::current())).await?;
                        let target = key_target(name, &combo.modifiers, &layout)?;
                        let note = match (&target, &layout) {
                            (KeyTarget::Layout { c, .. }, LayoutKnowledge::Read(l)) => {
                                Some(format!("{c:?} pressed on its key of the {} layout", l.label()))
                            }
                            (KeyTarget::Layout { c, .. }, LayoutKnowledge::Unreadable { source, .. }) => {
                                Some(format!(
                                    "{c:?} pressed at its US position: {} has them and its key data could not be read",
                                    source.as_deref().unwrap_or("the layout")
                                ))
                            }
                            _ => None,
                        };
                        (Some(target), note)
                    }
                };
                self.raise(&known).await?;
                let events = combo_events(combo, target);
                blocking(move || cg::input::post_key_events(&events)).await?;
                let outcome = ActionOutcome::new("cgevent");
                let outcome = match layout_note {
                    Some(note) => outcome.with_detail(note),
                    None => outcome,
                };
                Ok(outcome.unverified("keys sent; the effect is judged from the window"))
            }
            BackendAction::SetValue { element, value } => {
                let (native, role, value) = (element.native.clone(), element.role.clone(), value.clone());
                self.ax.run(JOB_TIMEOUT, move |ctx| {
                    let el = ctx.elements.get(&native).cloned().ok_or_else(stale)?;
                    let s = act::supported(&el).map_err(|f| f.into_gui("reading the element"))?;
                    let plan = set_value_plan(&role, &s, &value)
                        .map_err(|why| GuiError::new(ErrorCode::UnsupportedAction, why))?;
                    let method = plan.method();
                    let readable = match read_back(method, &role) {
                        ReadBack::Length => Readable::Length,
                        _ => Readable::Value,
                    };
                    let now =
                        act::set_value(&el, &plan, readable).map_err(|f| f.into_gui("setting the value"))?;
                    let mut outcome = ActionOutcome::new(method.name());
                    if let Some(note) = plan.note(&s) {
                        outcome = outcome.with_detail(note);
                    }
                    Ok(outcome.with_check(match now.as_ref().and_then(|v| v.display()) {
                        Some(v) if readable == Readable::Length => {
                            Check::Verified(format!("{v} characters now"))
                        }
                        Some(v) => Check::Verified(format!("value is now \"{v}\"")),
                        None => Check::Unverified("set; the value could not be read back".into()),
                    }))
                })
            }
            BackendAction::Focus { element } => match element {
                None => {
                    self.raise(&known).await?;
                    Ok(ActionOutcome::new("ax_raise").unverified("raised the window"))
                }
                Some(e) => {
                    let native = e.native.clone();
                    self.ax.run(JOB_TIMEOUT, move |ctx| {
                        let el = ctx.elements.get(&native).cloned().ok_or_else(stale)?;
                        act::run(&el, Method::Focus).map_err(|f| f.into_gui("focusing the element"))?;
                        let focused = el.attribute("AXFocused").ok().and_then(|v| v.flag()) == Some(true);
                        Ok(ActionOutcome::new("ax_focus").with_check(if focused {
                            Check::Verified("it has the focus".into())
                        } else {
                            Check::Unverified("asked for the focus; it does not say it has it".into())
                        }))
                    })
                }
            },
        }
    }
}
