//! Raw input sequences on a Wayland compositor's remote-input session (mutter's own
//! remote-desktop API on GNOME, the RemoteDesktop portal on KDE), written once: clicks,
//! drags, scrolls, key combos and typing as events with the pauses toolkits need.
//!
//! Points are in whatever space the session's `motion` takes (a window's buffer on GNOME,
//! the screen on KDE); the caller converts.

use crate::input_timing::PRESS_HOLD;
use async_trait::async_trait;
use lsm_core::{GuiError, GuiResult, KeyCombo, Modifier, MouseButton};
use std::time::Duration;

/// Pause between pointer motion and press, and before a drag's release: a press and release
/// sent back to back were missed by GTK 4 (measured on mutter 43.8). A click's hold is
/// `PRESS_HOLD`, the same on every window system.
pub const INPUT_GAP: Duration = Duration::from_millis(50);
/// Drag: steps and the pause between them (toolkits need motion past their drag threshold).
const DRAG_STEPS: i32 = 8;
const DRAG_STEP_PAUSE: Duration = Duration::from_millis(20);
/// Pause between clicks of a double click.
const CLICK_GAP: Duration = Duration::from_millis(60);
pub const MAX_CLICKS: u32 = 3;
pub const MAX_SCROLL: i32 = 50;

/// Linux input button codes (`BTN_LEFT`…), what remote-desktop APIs take.
pub const BTN_LEFT: i32 = 0x110;
pub const BTN_RIGHT: i32 = 0x111;
pub const BTN_MIDDLE: i32 = 0x112;

/// The events a remote-input session can send.
#[async_trait]
pub trait RemoteInput: Send + Sync {
    /// Moves the pointer to (x, y) in the session's space (logical px).
    async fn motion(&self, x: f64, y: f64) -> GuiResult<()>;
    async fn button(&self, code: i32, pressed: bool) -> GuiResult<()>;
    /// Discrete scroll steps: axis 0 vertical (positive: down), 1 horizontal (positive: right).
    async fn axis_discrete(&self, axis: u32, steps: i32) -> GuiResult<()>;
    async fn keysym(&self, keysym: u32, pressed: bool) -> GuiResult<()>;
    /// Whether a click first moves next to its point: a motion to where the pointer already
    /// is may not be delivered (mutter). A session that reaches every point through the
    /// corner needs no such step.
    fn moves_away_first(&self) -> bool {
        true
    }
}

/// The button code for lsm's button names.
pub fn button_code(button: MouseButton) -> i32 {
    match button {
        MouseButton::Left => BTN_LEFT,
        MouseButton::Right => BTN_RIGHT,
        MouseButton::Middle => BTN_MIDDLE,
    }
}

/// The keysym of a modifier (the left key).
pub fn modifier_keysym(m: Modifier) -> u32 {
    match m {
        Modifier::Ctrl => 0xffe3,
        Modifier::Alt => 0xffe9,
        Modifier::Shift => 0xffe1,
        Modifier::Meta => 0xffeb,
    }
}

/// Refuses a click count out of range before anything is sent.
pub fn check_click_count(count: u32) -> GuiResult<()> {
    if count == 0 || count > MAX_CLICKS {
        return Err(GuiError::invalid(format!(
            "click count must be 1..={MAX_CLICKS}, not {count}"
        )));
    }
    Ok(())
}

/// Refuses scroll deltas out of range before anything is sent.
pub fn check_scroll(dx: i32, dy: i32) -> GuiResult<()> {
    if dx.abs() > MAX_SCROLL || dy.abs() > MAX_SCROLL {
        return Err(GuiError::invalid(format!(
            "scroll deltas must be within ±{MAX_SCROLL}"
        )));
    }
    Ok(())
}

pub async fn click(
    s: &dyn RemoteInput,
    (x, y): (f64, f64),
    button: MouseButton,
    count: u32,
) -> GuiResult<()> {
    check_click_count(count)?;
    let code = button_code(button);
    if s.moves_away_first() {
        s.motion(x + 1.0, y + 1.0).await?;
    }
    s.motion(x, y).await?;
    tokio::time::sleep(INPUT_GAP).await;
    for i in 0..count {
        if i > 0 {
            tokio::time::sleep(CLICK_GAP).await;
        }
        s.button(code, true).await?;
        tokio::time::sleep(PRESS_HOLD).await;
        s.button(code, false).await?;
    }
    Ok(())
}

pub async fn drag(
    s: &dyn RemoteInput,
    from: (f64, f64),
    to: (f64, f64),
    button: MouseButton,
) -> GuiResult<()> {
    let ((fx, fy), (tx, ty)) = (from, to);
    let code = button_code(button);
    s.motion(fx, fy).await?;
    tokio::time::sleep(INPUT_GAP).await;
    s.button(code, true).await?;
    let mut result = Ok(());
    for i in 1..=DRAG_STEPS {
        tokio::time::sleep(DRAG_STEP_PAUSE).await;
        let k = i as f64 / DRAG_STEPS as f64;
        result = s.motion(fx + (tx - fx) * k, fy + (ty - fy) * k).await;
        if result.is_err() {
            break;
        }
    }
    tokio::time::sleep(INPUT_GAP).await;
    // Always release, so no button stays held.
    let released = s.button(code, false).await;
    result.and(released)
}

pub async fn scroll(s: &dyn RemoteInput, (x, y): (f64, f64), dx: i32, dy: i32) -> GuiResult<()> {
    check_scroll(dx, dy)?;
    s.motion(x, y).await?;
    tokio::time::sleep(INPUT_GAP).await;
    for (axis, steps) in [(0u32, dy), (1, dx)] {
        for _ in 0..steps.unsigned_abs() {
            s.axis_discrete(axis, steps.signum()).await?;
        }
    }
    Ok(())
}

/// The keysyms of a combo: its modifiers, then its key (if any).
pub fn combo_keysyms(combo: &KeyCombo) -> GuiResult<(Vec<u32>, Option<u32>)> {
    let key = combo.key.as_deref().map(crate::keysyms::key_keysym).transpose()?;
    Ok((combo.modifiers.iter().map(|m| modifier_keysym(*m)).collect(), key))
}

/// Holds the modifiers, taps the key, releases the modifiers (always, even after a failure).
pub async fn key_combo(s: &dyn RemoteInput, mods: &[u32], key: Option<u32>) -> GuiResult<()> {
    for &m in mods {
        s.keysym(m, true).await?;
    }
    let pressed = match key {
        Some(k) => match s.keysym(k, true).await {
            Ok(()) => s.keysym(k, false).await,
            Err(e) => Err(e),
        },
        None => Ok(()),
    };
    let mut released = Ok(());
    for &m in mods.iter().rev() {
        released = released.and(s.keysym(m, false).await);
    }
    pressed.and(released)
}

pub async fn type_keysyms(s: &dyn RemoteInput, syms: &[u32]) -> GuiResult<()> {
    for &k in syms {
        s.keysym(k, true).await?;
        s.keysym(k, false).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what a sequence sends.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    #[async_trait]
    impl RemoteInput for Recorder {
        async fn motion(&self, x: f64, y: f64) -> GuiResult<()> {
            self.0.lock().unwrap().push(format!("m {x} {y}"));
            Ok(())
        }
        async fn button(&self, code: i32, pressed: bool) -> GuiResult<()> {
            self.0.lock().unwrap().push(format!("b {code:x} {pressed}"));
            Ok(())
        }
        async fn axis_discrete(&self, axis: u32, steps: i32) -> GuiResult<()> {
            self.0.lock().unwrap().push(format!("a {axis} {steps}"));
            Ok(())
        }
        async fn keysym(&self, keysym: u32, pressed: bool) -> GuiResult<()> {
            if keysym == 0xdead {
                return Err(GuiError::backend("refused"));
            }
            self.0.lock().unwrap().push(format!("k {keysym:x} {pressed}"));
            Ok(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_double_click_moves_away_first_and_presses_twice() {
        let r = Recorder::default();
        click(&r, (10.0, 20.0), MouseButton::Left, 2).await.unwrap();
        assert_eq!(
            *r.0.lock().unwrap(),
            [
                "m 11 21",
                "m 10 20",
                "b 110 true",
                "b 110 false",
                "b 110 true",
                "b 110 false"
            ]
        );
        assert!(click(&r, (1.0, 1.0), MouseButton::Left, 4).await.is_err());
        assert!(click(&r, (1.0, 1.0), MouseButton::Left, 0).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_combo_releases_its_modifiers_when_the_key_fails() {
        let r = Recorder::default();
        assert!(key_combo(&r, &[0xffe3, 0xffe1], Some(0xdead)).await.is_err());
        assert_eq!(
            *r.0.lock().unwrap(),
            ["k ffe3 true", "k ffe1 true", "k ffe1 false", "k ffe3 false"]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn scroll_sends_one_discrete_step_per_unit_and_refuses_huge_deltas() {
        let r = Recorder::default();
        scroll(&r, (5.0, 5.0), -1, 2).await.unwrap();
        assert_eq!(*r.0.lock().unwrap(), ["m 5 5", "a 0 1", "a 0 1", "a 1 -1"]);
        assert!(scroll(&r, (5.0, 5.0), 0, 51).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_drag_always_releases_the_button() {
        let r = Recorder::default();
        drag(&r, (0.0, 0.0), (80.0, 0.0), MouseButton::Left)
            .await
            .unwrap();
        let sent = r.0.lock().unwrap().clone();
        assert_eq!(sent.first().map(String::as_str), Some("m 0 0"));
        assert_eq!(sent[1], "b 110 true");
        assert_eq!(sent.last().map(String::as_str), Some("b 110 false"));
        assert_eq!(sent[sent.len() - 2], "m 80 0");
    }
}
