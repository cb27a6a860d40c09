//! The Windows desktop behind lsm's `DesktopBackend`: the Win32 half (window list, screen
//! capture, SendInput). UI Automation is not consulted yet, so windows have no elements and
//! are operated by coordinates read off the screenshot, as windows without accessibility are
//! on Linux. Every Win32 call runs on a blocking thread: a hung window costs a thread, never
//! the server.

use super::{capture, input, list};
use crate::dpi;
use crate::listing::{unavailable_reason, wine_display_problem};
use async_trait::async_trait;
use lsm_core::backend::{ActionOutcome, BackendAction, BackendConnector, DesktopBackend, Target};
use lsm_core::geometry::{Point, Rect};
use lsm_core::model::{BackendInfo, ObserveRequest, Screenshot, Snapshot, WindowInfo};
use lsm_core::{ErrorCode, GuiError, GuiResult};
use std::sync::Arc;
use windows::Win32::Foundation::HWND;
use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
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

/// Opens the Windows backend on the first GUI call (nothing before: headless safety).
pub struct WindowsConnector;

#[async_trait]
impl BackendConnector for WindowsConnector {
    async fn connect(&self) -> GuiResult<Arc<dyn DesktopBackend>> {
        blocking(|| {
            if let Some(why) = session_problem() {
                return Err(GuiError::unavailable(why));
            }
            // Physical pixels from every call; refused when already set (a manifest): fine.
            // SAFETY: a process-wide setting without pointers.
            let _ = unsafe { SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2) };
            Ok(())
        })
        .await?;
        Ok(Arc::new(Win32Backend))
    }
}

/// Whether this process runs under Wine (its ntdll exports `wine_get_version`).
fn under_wine() -> bool {
    // SAFETY: lookups by name in a module every process has loaded; nothing is called.
    unsafe {
        GetModuleHandleW(windows::core::w!("ntdll.dll"))
            .ok()
            .is_some_and(|ntdll| GetProcAddress(ntdll, windows::core::s!("wine_get_version")).is_some())
    }
}

/// Why this session cannot be operated, from the session id and the input desktop's name.
fn session_problem() -> Option<String> {
    let var = |k: &str| std::env::var(k).ok();
    if let Some(why) = wine_display_problem(
        under_wine(),
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
        .ok_or_else(|| GuiError::window_not_found(window_id))?;
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

pub struct Win32Backend;

impl Win32Backend {
    /// The listed window with this id, read alone (no enumeration of every window).
    fn find(window_id: &str) -> GuiResult<WindowInfo> {
        list::window_info(hwnd_of(window_id)?).ok_or_else(|| GuiError::window_not_found(window_id))
    }
}

const COVERED_NOTE: &str = "the screenshot is copied from the screen: windows on top of this one show in it";

#[async_trait]
impl DesktopBackend for Win32Backend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "windows-win32".into(),
            platform: "windows".into(),
            session: "desktop".into(),
            capabilities: ["windows", "raw_input", "unicode_typing", "screenshot"]
                .into_iter()
                .map(String::from)
                .collect(),
            notes: vec![
                "UI Automation is not used yet: windows have no elements; act by coordinates read off the \
                 screenshot"
                    .into(),
            ],
        }
    }

    async fn list_windows(&self) -> GuiResult<Vec<WindowInfo>> {
        blocking(|| Ok(list::list_windows())).await
    }

    async fn window(&self, window_id: &str) -> GuiResult<WindowInfo> {
        let id = window_id.to_string();
        blocking(move || Win32Backend::find(&id)).await
    }

    async fn observe(&self, window_id: &str, request: &ObserveRequest) -> GuiResult<Snapshot> {
        let id = window_id.to_string();
        let shoot = request.screenshot;
        blocking(move || {
            let window = Win32Backend::find(&id)?;
            let (_, frame, dpi_value) = frame_and_dpi(&id)?;
            let screenshot = if shoot && !window.minimized {
                Some(Screenshot {
                    image: capture::capture_screen_rect(frame)?,
                    occluded: true,
                })
            } else {
                None
            };
            Ok(Snapshot {
                window,
                scale: dpi::scale_of(dpi_value),
                elements: Vec::new(),
                truncated: false,
                truncated_reason: None,
                notes: screenshot
                    .as_ref()
                    .map(|_| COVERED_NOTE.to_string())
                    .into_iter()
                    .collect(),
                screenshot,
            })
        })
        .await
    }

    async fn perform(&self, window: &WindowInfo, action: &BackendAction) -> GuiResult<ActionOutcome> {
        let id = window.window_id.clone();
        let action = action.clone();
        blocking(move || {
            let (hwnd, frame, dpi_value) = frame_and_dpi(&id)?;
            let at = |p: Point| dpi::window_point_to_screen(f64::from(p.x), f64::from(p.y), frame, dpi_value);
            let point = |t: &Target| match t {
                Target::Point(p) => Ok(at(*p)),
                Target::Element(_) => Err(no_elements()),
            };
            let centre = Point::new(frame.width / 2, frame.height / 2);
            // SAFETY: a live window handle; refusal is reported below, not an error.
            let foreground = unsafe { SetForegroundWindow(hwnd) }.as_bool();
            match &action {
                BackendAction::Click { target, button, count } => {
                    let (x, y) = point(target)?;
                    input::click(x, y, *button, *count)?;
                }
                BackendAction::Move { target } => {
                    let (x, y) = point(target)?;
                    input::pointer_move(x, y)?;
                }
                BackendAction::Scroll { target, delta_x, delta_y } => {
                    let (x, y) = match target {
                        Some(t) => point(t)?,
                        None => at(centre),
                    };
                    input::scroll(x, y, *delta_x, *delta_y)?;
                }
                BackendAction::Drag { from, to, button } => input::drag(point(from)?, at(*to), *button)?,
                BackendAction::Type { element: Some(_), .. } => return Err(no_elements()),
                BackendAction::Type { element: None, text } => input::type_text(text)?,
                BackendAction::Key { combo } => input::key_combo(combo)?,
                BackendAction::SetValue { .. } | BackendAction::Focus { element: Some(_) } => {
                    return Err(no_elements())
                }
                BackendAction::Focus { element: None } => {}
            }
            let outcome = ActionOutcome::new("sendinput");
            Ok(if foreground {
                outcome
            } else {
                outcome.with_detail("Windows refused to bring the window to the front; the input went to the foreground window")
            })
        })
        .await
    }
}

fn no_elements() -> GuiError {
    GuiError::new(
        ErrorCode::UnsupportedAction,
        "this Windows backend has no UI Automation yet: act by x/y read off the screenshot",
    )
}
