//! The Windows desktop behind lsm's `DesktopBackend`: UI Automation for elements and semantic
//! actions (on its own COM thread, see [`crate::uia`]), Win32 for the window list, capture and
//! SendInput. Where UI Automation is missing (Wine, Server Core) windows have no elements and
//! are operated by coordinates read off the screenshot, and every observation says why. Every
//! Win32 call runs on a blocking thread: a hung window costs a thread, never the server.

use super::{capture, input, list, ontop};
use crate::dpi;
use crate::listing::{unavailable_reason, wine_display_problem};
use crate::uia::act::Press;
use crate::uia::UiaThread;
use crate::walk::WalkLimits;
use async_trait::async_trait;
use lsm_core::backend::{ActionOutcome, BackendAction, BackendConnector, DesktopBackend, Target};
use lsm_core::geometry::{Point, Rect};
use lsm_core::model::{BackendInfo, ObserveRequest, Screenshot, Snapshot, WindowInfo};
use lsm_core::state::ElementRef;
use lsm_core::{ErrorCode, GuiError, GuiResult};
use std::sync::Arc;
use std::time::{Duration, Instant};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::RemoteDesktop::ProcessIdToSessionId;
use windows::Win32::System::StationsAndDesktops::{
    CloseDesktop, GetUserObjectInformationW, OpenInputDesktop, DESKTOP_ACCESS_FLAGS, DESKTOP_CONTROL_FLAGS,
    UOI_NAME,
};
use windows::Win32::System::Threading::GetCurrentProcessId;
use windows::Win32::UI::HiDpi::{
    GetDpiForWindow, SetProcessDpiAwarenessContext, DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2,
};
use windows::Win32::UI::WindowsAndMessaging::{IsWindow, SetForegroundWindow};

/// `WINDOW_BLOCKED` when a modal dialog blocks the window now (nothing is sent then).
fn refuse_if_blocked(window_id: &str, hwnd: HWND) -> GuiResult<()> {
    match list::blocked_by(hwnd) {
        Some(dialog) => Err(GuiError::window_blocked(
            window_id,
            &list::window_id(dialog),
            Some(&list::title_of(dialog)),
        )),
        None => Ok(()),
    }
}

/// Opens the Windows backend on the first GUI call (nothing before: headless safety).
pub struct WindowsConnector;

#[async_trait]
impl BackendConnector for WindowsConnector {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        let uia = blocking(|| {
            if let Some(why) = session_problem() {
                return Err(GuiError::unavailable(why));
            }
            // Physical pixels from every call; refused when already set (a manifest): fine.
            // SAFETY: a process-wide setting without pointers.
            let _ = unsafe { SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2) };
            // COM and UI Automation start here, at the first GUI call, never before.
            Ok(UiaThread::start().map(Arc::new))
        })
        .await?;
        Ok(Arc::new(WindowsBackend { uia }))
    }

    async fn preflight(&self) -> Vec<lsm_core::doctor::Item> {
        let problem = blocking(|| Ok(session_problem()))
            .await
            .unwrap_or_else(|e| Some(e.message));
        vec![crate::doctor::session_item(problem)]
    }
}

/// Why this session cannot be operated, from the session id and the input desktop's name.
fn session_problem() -> Option<String> {
    let var = |k: &str| std::env::var(k).ok();
    if let Some(why) = wine_display_problem(
        list::under_wine(),
        var("DISPLAY").as_deref(),
        var("WAYLAND_DISPLAY").as_deref(),
    ) {
        return Some(why);
    }
    let mut session = 0u32;
    // SAFETY: `session` is a valid out pointer.
    let known = unsafe { ProcessIdToSessionId(GetCurrentProcessId(), &mut session) }.is_ok();
    // SAFETY: the desktop handle is closed; the buffer's size is passed.
    let desktop = unsafe {
        OpenInputDesktop(DESKTOP_CONTROL_FLAGS(0), false, DESKTOP_ACCESS_FLAGS(0x0001))
            .ok()
            .and_then(|d| {
                let mut name = [0u16; 256];
                let mut needed = 0u32;
                let ok = GetUserObjectInformationW(
                    windows::Win32::Foundation::HANDLE(d.0),
                    UOI_NAME,
                    Some(name.as_mut_ptr().cast()),
                    (name.len() * 2) as u32,
                    Some(&mut needed),
                )
                .is_ok();
                let _ = CloseDesktop(d);
                let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
                ok.then(|| String::from_utf16_lossy(&name[..len]))
            })
    };
    unavailable_reason(known.then_some(session), desktop.as_deref())
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> GuiResult<T> + Send + 'static) -> GuiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| GuiError::backend(format!("a Win32 call failed: {e}")))?
}

fn hwnd_of(window_id: &str) -> GuiResult<HWND> {
    let raw = window_id
        .strip_prefix("0x")
        .and_then(|h| usize::from_str_radix(h, 16).ok())
        .ok_or_else(|| GuiError::malformed_window_id(window_id, "0x30a12"))?;
    let hwnd = HWND(raw as *mut std::ffi::c_void);
    // SAFETY: IsWindow accepts any value and says whether it is a live window.
    if unsafe { IsWindow(Some(hwnd)) }.as_bool() {
        Ok(hwnd)
    } else {
        Err(GuiError::window_not_found(window_id))
    }
}

/// The window's physical frame and DPI, read now.
fn frame_and_dpi(window_id: &str) -> GuiResult<(HWND, Rect, u32)> {
    let hwnd = hwnd_of(window_id)?;
    // SAFETY: a handle query; 0 counts as 96 DPI.
    let dpi_value = unsafe { GetDpiForWindow(hwnd) };
    Ok((hwnd, list::frame_of(hwnd), dpi_value))
}

/// How long one element action may take on the UI Automation thread (re-verification, the
/// pattern call, the effect read back).
const ACTION_TIMEOUT: Duration = Duration::from_secs(10);
/// What a walk may overrun its budget by (the call in flight at the deadline).
const WALK_GRACE: Duration = Duration::from_secs(4);

pub struct WindowsBackend {
    /// The UI Automation client, or why there is none.
    uia: Result<Arc<UiaThread>, String>,
}

impl WindowsBackend {
    /// The listed window with this id, read alone (no enumeration of every window).
    fn find(window_id: &str) -> GuiResult<WindowInfo> {
        list::window_info(hwnd_of(window_id)?).ok_or_else(|| GuiError::window_not_found(window_id))
    }

    fn accessible(&self, mut w: WindowInfo) -> WindowInfo {
        w.accessible = self.uia.is_ok();
        w
    }

    fn uia(&self) -> GuiResult<Arc<UiaThread>> {
        self.uia
            .clone()
            .map_err(|why| GuiError::new(ErrorCode::UnsupportedAction, why))
    }
}

#[async_trait]
impl DesktopBackend for WindowsBackend {
    fn info(&self) -> BackendInfo {
        let mut capabilities = vec!["windows", "raw_input", "unicode_typing", "screenshot"];
        let mut notes = Vec::new();
        match &self.uia {
            Ok(_) => capabilities.extend(["accessibility", "semantic_actions", "set_value"]),
            Err(why) => notes.push(why.clone()),
        }
        BackendInfo {
            name: if self.uia.is_ok() {
                "windows-uia"
            } else {
                "windows-win32"
            }
            .into(),
            platform: "windows".into(),
            session: "desktop".into(),
            capabilities: capabilities.into_iter().map(String::from).collect(),
            notes,
        }
    }

    async fn diagnose(&self, _windows: &[WindowInfo]) -> Vec<lsm_core::doctor::Item> {
        let client = self.uia.as_ref().map(|_| ()).map_err(String::as_str);
        vec![
            crate::doctor::ui_automation_item(client),
            crate::doctor::input_item(),
        ]
    }

    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        let windows = blocking(|| Ok(list::list_windows())).await?;
        Ok(windows.into_iter().map(|w| self.accessible(w)).collect())
    }

    async fn window(&self, window_id: &str) -> GuiResult<WindowInfo> {
        let id = window_id.to_string();
        Ok(self.accessible(blocking(move || WindowsBackend::find(&id)).await?))
    }

    async fn observe(&self, window_id: &str, request: &ObserveRequest) -> GuiResult<Snapshot> {
        let id = window_id.to_string();
        let shoot = request.screenshot;
        let base = blocking(move || {
            let window = WindowsBackend::find(&id)?;
            let (hwnd, frame, dpi_value) = frame_and_dpi(&id)?;
            let captured = if shoot && !window.minimized {
                Some(capture::capture_window(hwnd, frame)?)
            } else {
                None
            };
            Ok((window, frame, dpi_value, captured))
        })
        .await?;
        let (window, frame, dpi_value, captured) = base;
        let mut notes: Vec<String> = captured
            .as_ref()
            .and_then(|c| c.note.clone())
            .into_iter()
            .collect();
        if let Some(dialog) = &window.blocked_by {
            let id = dialog.clone();
            let title = blocking(move || Ok(hwnd_of(&id).map(list::title_of).unwrap_or_default())).await?;
            notes.push(format!(
                "blocked by modal dialog {dialog} {title:?}: this window takes no input until it is closed, and \
                 actions here are refused (WINDOW_BLOCKED); observe and act on that window (gui_state {dialog})"
            ));
        }
        let screenshot = captured.map(|c| Screenshot {
            image: c.image,
            occluded: c.occluded,
        });
        let (mut elements, mut truncated_reason) = (Vec::new(), None);
        if request.include_elements {
            match &self.uia {
                Ok(uia) => {
                    let uia = uia.clone();
                    let hwnd = hwnd_of(window_id)?.0 as usize;
                    let limits = WalkLimits {
                        max_elements: request.max_elements,
                        max_depth: request.max_depth,
                        include_hidden: request.include_hidden || request.query.is_some(),
                        deadline: Instant::now() + request.walk_budget,
                        frame,
                        dpi: dpi_value,
                    };
                    let bound = request.walk_budget + WALK_GRACE;
                    let walked = blocking(move || {
                        uia.run(bound, move |client| {
                            let walked = client.walk_window(HWND(hwnd as *mut std::ffi::c_void), &limits)?;
                            Ok((walked.elements, walked.truncated_reason, walked.skipped_note))
                        })
                    })
                    .await?;
                    elements = walked.0;
                    truncated_reason = walked.1;
                    notes.extend(walked.2);
                }
                Err(why) => notes.push(why.clone()),
            }
        }
        Ok(Snapshot {
            window: self.accessible(window),
            scale: dpi::scale_of(dpi_value),
            elements,
            truncated: truncated_reason.is_some(),
            truncated_reason,
            notes,
            screenshot,
        })
    }

    async fn perform(&self, window: &WindowInfo, action: &BackendAction) -> GuiResult<ActionOutcome> {
        let id = window.window_id.clone();
        let action = action.clone();
        let uia = self.uia();
        blocking(move || {
            let (hwnd, frame, dpi_value) = frame_and_dpi(&id)?;
            // Element actions reach the control through UI Automation, past the core's check:
            // a modal dialog refuses them all the same, before anything is sent.
            refuse_if_blocked(&id, hwnd)?;
            let on_uia = |job: ElementJob| -> GuiResult<ElementAnswer> {
                let uia = uia.clone()?;
                let raw = hwnd.0 as usize;
                uia.run(ACTION_TIMEOUT, move |client| {
                    let hwnd = HWND(raw as *mut std::ffi::c_void);
                    Ok(match job {
                        ElementJob::Press(r) => ElementAnswer::Press(client.press(hwnd, &r)?),
                        ElementJob::Centre(r) => ElementAnswer::Point(client.centre(hwnd, &r)?),
                        ElementJob::SetValue(r, v) => ElementAnswer::Done(client.set_value(hwnd, &r, &v)?),
                        ElementJob::Focus(r) => ElementAnswer::Done(client.focus(hwnd, &r)?),
                        ElementJob::Type(r, t) => ElementAnswer::Done(client.type_into(hwnd, &r, &t)?),
                    })
                })
            };
            let at = |p: Point| dpi::window_point_to_screen(f64::from(p.x), f64::from(p.y), frame, dpi_value);
            // Raw input only where it lands in this window: raised first, verified on top there.
            let reach = |(x, y): (i32, i32), what: String| -> GuiResult<(i32, i32)> {
                ontop::ensure_at_point(hwnd, x, y, &what)?;
                Ok((x, y))
            };
            let at_checked = |p: Point| reach(at(p), format!("point ({}, {})", p.x, p.y));
            let point = |t: &Target| match t {
                Target::Point(p) => at_checked(*p),
                Target::Element(r) => match on_uia(ElementJob::Centre(r.clone()))? {
                    ElementAnswer::Point(p) => reach(p, format!("the centre of element {}", r.id)),
                    _ => Err(GuiError::backend("the element's position could not be read")),
                },
            };
            // In window-relative logical pixels, as every point lsm is given.
            let logical = dpi::window_to_logical(frame, dpi_value);
            let centre = Point::new(logical.width / 2, logical.height / 2);
            // SAFETY: a live window handle; refusal is reported below, not an error.
            let foreground = unsafe { SetForegroundWindow(hwnd) }.as_bool();
            let outcome = match &action {
                BackendAction::Click {
                    target: Target::Element(r),
                    button: lsm_core::input::MouseButton::Left,
                    count: 1,
                } => match on_uia(ElementJob::Press(r.clone()))? {
                    ElementAnswer::Press(Press::Done(outcome)) => outcome,
                    ElementAnswer::Press(Press::AtPoint(x, y)) => {
                        let (x, y) = reach((x, y), format!("the centre of element {}", r.id))?;
                        input::click(x, y, lsm_core::input::MouseButton::Left, 1)?;
                        sent("the click at the element's centre (it has no pattern for it)")
                    }
                    _ => return Err(GuiError::backend("unexpected answer from UI Automation")),
                },
                BackendAction::Click {
                    target,
                    button,
                    count,
                } => {
                    let (x, y) = point(target)?;
                    input::click(x, y, *button, *count)?;
                    sent("the click")
                }
                BackendAction::Move { target } => {
                    let (x, y) = point(target)?;
                    input::pointer_move(x, y)?;
                    ActionOutcome::new("sendinput")
                        .unverified("the pointer was moved; hover effects are not read back")
                }
                BackendAction::Scroll {
                    target,
                    delta_x,
                    delta_y,
                } => {
                    let (x, y) = match target {
                        Some(t) => point(t)?,
                        None => at_checked(centre)?,
                    };
                    input::scroll(x, y, *delta_x, *delta_y)?;
                    sent("the scroll")
                }
                BackendAction::Drag { from, to, button } => {
                    let start = point(from)?;
                    let end = at_checked(*to)?;
                    input::drag(start, end, *button)?;
                    sent("the drag")
                }
                BackendAction::Type {
                    element: Some(r),
                    text,
                } => done(on_uia(ElementJob::Type(r.clone(), text.clone()))?)?,
                BackendAction::Type { element: None, text } => {
                    ontop::ensure_foreground(hwnd)?;
                    input::type_text(text)?;
                    sent("the text")
                }
                BackendAction::Key { combo } => {
                    ontop::ensure_foreground(hwnd)?;
                    input::key_combo(combo)?;
                    sent("the key")
                }
                BackendAction::SetValue { element, value } => {
                    done(on_uia(ElementJob::SetValue(element.clone(), value.clone()))?)?
                }
                BackendAction::Focus { element: Some(r) } => done(on_uia(ElementJob::Focus(r.clone()))?)?,
                BackendAction::Focus { element: None } => {
                    let out = ActionOutcome::new("set_foreground_window");
                    if foreground {
                        out.verified("the window is in the foreground")
                    } else {
                        out.unverified("Windows refused to bring the window to the front")
                    }
                }
            };
            // Raw input was sent only after the window was seen on top at the point, or in the
            // foreground for keys; patterns reach the control itself.
            Ok(outcome)
        })
        .await
    }
}

/// A job for the UI Automation thread, on one observed element.
enum ElementJob {
    Press(ElementRef),
    Centre(ElementRef),
    SetValue(ElementRef, String),
    Focus(ElementRef),
    Type(ElementRef, String),
}

enum ElementAnswer {
    Press(Press),
    Point((i32, i32)),
    Done(ActionOutcome),
}

fn done(answer: ElementAnswer) -> GuiResult<ActionOutcome> {
    match answer {
        ElementAnswer::Done(outcome) => Ok(outcome),
        _ => Err(GuiError::backend("unexpected answer from UI Automation")),
    }
}

/// Raw input that was sent; its effect is for the observation to show.
fn sent(what: &str) -> ActionOutcome {
    ActionOutcome::new("sendinput").unverified(format!("{what} was sent; the effect is not read back"))
}
