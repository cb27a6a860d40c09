//! Mouse and keyboard through `SendInput`: absolute coordinates over the virtual desktop
//! ([`crate::dpi::absolute_input`]), text as UTF-16 Unicode input ([`crate::keys`]).

use crate::dpi;
use crate::keys::{combo_events, key_target, text_units, KeyEvent, KeyTarget, TypeUnit, VirtualKey};
use lsm_core::geometry::Rect;
use lsm_core::{GuiError, GuiResult, KeyCombo, Modifier, MouseButton};
use windows::Win32::UI::Input::KeyboardAndMouse::{
    SendInput, VkKeyScanW, INPUT, INPUT_0, INPUT_KEYBOARD, INPUT_MOUSE, KEYBDINPUT, KEYBD_EVENT_FLAGS,
    KEYEVENTF_EXTENDEDKEY, KEYEVENTF_KEYUP, KEYEVENTF_UNICODE, MOUSEEVENTF_ABSOLUTE, MOUSEEVENTF_HWHEEL,
    MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, MOUSEEVENTF_MIDDLEDOWN, MOUSEEVENTF_MIDDLEUP, MOUSEEVENTF_MOVE,
    MOUSEEVENTF_RIGHTDOWN, MOUSEEVENTF_RIGHTUP, MOUSEEVENTF_VIRTUALDESK, MOUSEEVENTF_WHEEL, MOUSEINPUT,
    MOUSE_EVENT_FLAGS, VIRTUAL_KEY,
};
use windows::Win32::UI::WindowsAndMessaging::{
    GetSystemMetrics, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN, SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN,
};

/// One wheel click.
const WHEEL_DELTA: i32 = 120;

/// The virtual desktop: every monitor's physical pixels, its origin possibly negative.
pub fn virtual_desktop() -> Rect {
    // SAFETY: plain metric queries.
    unsafe {
        Rect::new(
            GetSystemMetrics(SM_XVIRTUALSCREEN),
            GetSystemMetrics(SM_YVIRTUALSCREEN),
            GetSystemMetrics(SM_CXVIRTUALSCREEN),
            GetSystemMetrics(SM_CYVIRTUALSCREEN),
        )
    }
}

fn send(inputs: &[INPUT]) -> GuiResult<()> {
    if inputs.is_empty() {
        return Ok(());
    }
    // SAFETY: the slice is of INPUT structures of the size passed.
    let sent = unsafe { SendInput(inputs, std::mem::size_of::<INPUT>() as i32) };
    if sent as usize == inputs.len() {
        Ok(())
    } else {
        Err(GuiError::backend(format!(
            "SendInput injected {sent} of {} events (another desktop has the input, or a higher-integrity \
             window is in front)",
            inputs.len()
        )))
    }
}

fn mouse(flags: MOUSE_EVENT_FLAGS, dx: i32, dy: i32, data: i32) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                mouseData: data as u32,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

fn key(vk: u16, scan: u16, flags: KEYBD_EVENT_FLAGS) -> INPUT {
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT {
                wVk: VIRTUAL_KEY(vk),
                wScan: scan,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

fn vk_event(v: VirtualKey, up: bool) -> INPUT {
    let mut flags = KEYBD_EVENT_FLAGS(0);
    if v.extended {
        flags |= KEYEVENTF_EXTENDEDKEY;
    }
    if up {
        flags |= KEYEVENTF_KEYUP;
    }
    key(v.vk, 0, flags)
}

/// A move to a physical screen pixel.
fn move_to(px: i32, py: i32) -> GuiResult<INPUT> {
    let (ax, ay) = dpi::absolute_input(px, py, virtual_desktop())
        .ok_or_else(|| GuiError::backend(format!("({px},{py}) is outside the virtual desktop")))?;
    Ok(mouse(
        MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK,
        ax,
        ay,
        0,
    ))
}

fn button_flags(b: MouseButton) -> (MOUSE_EVENT_FLAGS, MOUSE_EVENT_FLAGS) {
    match b {
        MouseButton::Left => (MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP),
        MouseButton::Middle => (MOUSEEVENTF_MIDDLEDOWN, MOUSEEVENTF_MIDDLEUP),
        MouseButton::Right => (MOUSEEVENTF_RIGHTDOWN, MOUSEEVENTF_RIGHTUP),
    }
}

pub fn click(px: i32, py: i32, button: MouseButton, count: u32) -> GuiResult<()> {
    let (down, up) = button_flags(button);
    let mut inputs = vec![move_to(px, py)?];
    for _ in 0..count.max(1) {
        inputs.push(mouse(down, 0, 0, 0));
        inputs.push(mouse(up, 0, 0, 0));
    }
    send(&inputs)
}

pub fn pointer_move(px: i32, py: i32) -> GuiResult<()> {
    send(&[move_to(px, py)?])
}

pub fn scroll(px: i32, py: i32, delta_x: i32, delta_y: i32) -> GuiResult<()> {
    let mut inputs = vec![move_to(px, py)?];
    if delta_y != 0 {
        // Windows' wheel is positive away from the user (up); lsm's delta_y is positive down.
        inputs.push(mouse(
            MOUSEEVENTF_WHEEL,
            0,
            0,
            -delta_y.saturating_mul(WHEEL_DELTA),
        ));
    }
    if delta_x != 0 {
        inputs.push(mouse(
            MOUSEEVENTF_HWHEEL,
            0,
            0,
            delta_x.saturating_mul(WHEEL_DELTA),
        ));
    }
    send(&inputs)
}

/// Press at `from`, move in steps (applications see a drag start), release at `to`.
pub fn drag(from: (i32, i32), to: (i32, i32), button: MouseButton) -> GuiResult<()> {
    let (down, up) = button_flags(button);
    send(&[move_to(from.0, from.1)?, mouse(down, 0, 0, 0)])?;
    const STEPS: i32 = 8;
    for i in 1..=STEPS {
        let x = from.0 + (to.0 - from.0) * i / STEPS;
        let y = from.1 + (to.1 - from.1) * i / STEPS;
        std::thread::sleep(std::time::Duration::from_millis(15));
        send(&[move_to(x, y)?])?;
    }
    send(&[mouse(up, 0, 0, 0)])
}

pub fn type_text(text: &str) -> GuiResult<()> {
    let mut inputs = Vec::new();
    for unit in text_units(text)? {
        match unit {
            TypeUnit::Unicode(u) => {
                inputs.push(key(0, u, KEYEVENTF_UNICODE));
                inputs.push(key(0, u, KEYEVENTF_UNICODE | KEYEVENTF_KEYUP));
            }
            TypeUnit::Key(v) => {
                inputs.push(vk_event(v, false));
                inputs.push(vk_event(v, true));
            }
        }
    }
    send(&inputs)
}

pub fn key_combo(combo: &KeyCombo) -> GuiResult<()> {
    let mut combo = combo.clone();
    let key = match combo.key.as_deref().map(key_target).transpose()? {
        None => None,
        Some(KeyTarget::Virtual(v)) => Some(v),
        Some(KeyTarget::LayoutChar(c)) => {
            let mut units = [0u16; 2];
            let encoded = c.encode_utf16(&mut units);
            // SAFETY: a pure lookup in the current keyboard layout.
            let scan = if encoded.len() == 1 {
                unsafe { VkKeyScanW(encoded[0]) }
            } else {
                -1
            };
            if scan == -1 {
                if !combo.modifiers.is_empty() {
                    return Err(GuiError::new(
                        lsm_core::ErrorCode::UnsupportedAction,
                        format!(
                            "no key of the keyboard layout makes {c:?}, so it cannot be held with modifiers"
                        ),
                    ));
                }
                return type_text(&c.to_string());
            }
            let shift_state = (scan >> 8) & 0xff;
            for (bit, m) in [(1, Modifier::Shift), (2, Modifier::Ctrl), (4, Modifier::Alt)] {
                if shift_state & bit != 0 && !combo.modifiers.contains(&m) {
                    combo.modifiers.push(m);
                }
            }
            combo.modifiers.sort();
            Some(VirtualKey {
                vk: (scan & 0xff) as u16,
                extended: false,
            })
        }
    };
    let inputs: Vec<INPUT> = combo_events(&combo, key)
        .into_iter()
        .map(|e| match e {
            KeyEvent::Down(v) => vk_event(v, false),
            KeyEvent::Up(v) => vk_event(v, true),
        })
        .collect();
    send(&inputs)
}
