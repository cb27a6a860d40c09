//! Posts Quartz events at the HID level: the mouse steps of [`crate::pointer`], scroll wheels,
//! key codes with their modifier flags, and Unicode text in chunks. What to post is decided in
//! the platform-free modules; here it is only sent, in order.

use crate::keys::{KeyEvent, TypeStep};
use crate::main_queue;
use crate::pointer::{MouseStep, QuartzButton};
use lsm_core::{GuiError, GuiResult};
use objc2_core_foundation::{CFRetained, CGPoint};
use objc2_core_graphics::{
    CGEvent, CGEventField, CGEventFlags, CGEventTapLocation, CGEventType, CGMouseButton, CGScrollEventUnit,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long the main queue may take to create the first keyboard event.
const KEY_TRANSLATION_TIMEOUT: Duration = Duration::from_millis(1500);

/// Set once a keyboard event was created on the main queue.
static KEY_TRANSLATION_READY: AtomicBool = AtomicBool::new(false);

/// Makes sure Quartz's key translation was set up on the main queue before any keyboard event
/// is created here. The first `CGEventCreateKeyboardEvent` of a process runs SkyLight's
/// one-time `key_translate_initialize`, which reads the input source (TSM) and, off the main
/// queue, trips HIToolbox's `dispatch_assert_queue` and kills the process. Creating one event
/// there first runs that set-up where it is allowed; later events reuse it from any thread.
/// Fails (nothing posted) when the main queue does not answer.
fn ensure_key_translation() -> GuiResult<()> {
    if KEY_TRANSLATION_READY.load(Ordering::Acquire) {
        return Ok(());
    }
    let created_there = main_queue::run(KEY_TRANSLATION_TIMEOUT, || {
        CGEvent::new_keyboard_event(None, 0, true).is_some()
    })
    .map_err(|why| GuiError::backend(format!("keyboard input not sent: {why}")))?;
    if !created_there {
        return Err(GuiError::backend("Quartz could not create a keyboard event"));
    }
    KEY_TRANSLATION_READY.store(true, Ordering::Release);
    Ok(())
}

fn created(event: Option<CFRetained<CGEvent>>) -> GuiResult<CFRetained<CGEvent>> {
    event.ok_or_else(|| GuiError::backend("Quartz could not create the input event"))
}

fn post(event: &CGEvent) {
    CGEvent::post(CGEventTapLocation::HIDEventTap, Some(event));
}

fn kinds(button: QuartzButton) -> (CGEventType, CGEventType, CGEventType, CGMouseButton) {
    match button {
        QuartzButton::Left => (
            CGEventType::LeftMouseDown,
            CGEventType::LeftMouseUp,
            CGEventType::LeftMouseDragged,
            CGMouseButton::Left,
        ),
        QuartzButton::Right => (
            CGEventType::RightMouseDown,
            CGEventType::RightMouseUp,
            CGEventType::RightMouseDragged,
            CGMouseButton::Right,
        ),
        QuartzButton::Middle => (
            CGEventType::OtherMouseDown,
            CGEventType::OtherMouseUp,
            CGEventType::OtherMouseDragged,
            CGMouseButton::Center,
        ),
    }
}

/// Posts the mouse steps in order.
pub fn post_mouse(steps: &[MouseStep]) -> GuiResult<()> {
    for step in steps {
        let (kind, x, y, button, click_state) = match *step {
            MouseStep::Move { x, y } => (CGEventType::MouseMoved, x, y, CGMouseButton::Left, None),
            MouseStep::Down {
                x,
                y,
                button,
                click_state,
            } => {
                let (down, _, _, b) = kinds(button);
                (down, x, y, b, Some(click_state))
            }
            MouseStep::Up {
                x,
                y,
                button,
                click_state,
            } => {
                let (_, up, _, b) = kinds(button);
                (up, x, y, b, Some(click_state))
            }
            MouseStep::Dragged { x, y, button } => {
                let (_, _, dragged, b) = kinds(button);
                (dragged, x, y, b, None)
            }
        };
        let event = created(CGEvent::new_mouse_event(None, kind, CGPoint { x, y }, button))?;
        if let Some(n) = click_state {
            CGEvent::set_integer_value_field(Some(&event), CGEventField::MouseEventClickState, n);
        }
        post(&event);
    }
    Ok(())
}

/// Posts one scroll of whole lines (`vertical`, `horizontal`: Quartz's signs, positive up/left).
pub fn post_scroll(vertical: i32, horizontal: i32) -> GuiResult<()> {
    let event = created(CGEvent::new_scroll_wheel_event2(
        None,
        CGScrollEventUnit::Line,
        2,
        vertical,
        horizontal,
        0,
    ))?;
    post(&event);
    Ok(())
}

/// Posts one key transition of a virtual key code with the modifier flags that hold.
pub fn post_key(code: u16, down: bool, flags: u64) -> GuiResult<()> {
    ensure_key_translation()?;
    let event = created(CGEvent::new_keyboard_event(None, code, down))?;
    CGEvent::set_flags(Some(&event), CGEventFlags(flags));
    post(&event);
    Ok(())
}

/// Types one chunk of UTF-16 text (at most 20 units, split by the keys module so that no
/// surrogate pair is cut) as a key down and up carrying the string.
pub fn post_unicode(chunk: &[u16]) -> GuiResult<()> {
    ensure_key_translation()?;
    for down in [true, false] {
        let event = created(CGEvent::new_keyboard_event(None, 0, down))?;
        // SAFETY: the pointer and length describe `chunk`, alive for the call.
        unsafe { CGEvent::keyboard_set_unicode_string(Some(&event), chunk.len() as _, chunk.as_ptr()) };
        post(&event);
    }
    Ok(())
}

/// Posts a combo's events in order (see [`crate::keys::combo_events`]).
pub fn post_key_events(events: &[KeyEvent]) -> GuiResult<()> {
    ensure_key_translation()?;
    for e in events {
        match e {
            KeyEvent::Key { code, down, flags } => post_key(*code, *down, *flags)?,
            KeyEvent::Text { text, down, flags } => {
                let units: Vec<u16> = text.encode_utf16().collect();
                let event = created(CGEvent::new_keyboard_event(None, 0, *down))?;
                CGEvent::set_flags(Some(&event), CGEventFlags(*flags));
                // SAFETY: the pointer and length describe `units`, alive for the call.
                unsafe {
                    CGEvent::keyboard_set_unicode_string(Some(&event), units.len() as _, units.as_ptr())
                };
                post(&event);
            }
        }
    }
    Ok(())
}

/// Types a plan's steps in order (see [`crate::keys::type_plan`]): text chunks as Unicode key
/// events, line breaks and tabs as their keys.
pub fn post_type_plan(steps: &[TypeStep]) -> GuiResult<()> {
    ensure_key_translation()?;
    for step in steps {
        match step {
            TypeStep::Text(text) => post_unicode(&text.encode_utf16().collect::<Vec<u16>>())?,
            TypeStep::Key(code) => {
                post_key(*code, true, 0)?;
                post_key(*code, false, 0)?;
            }
        }
    }
    Ok(())
}
