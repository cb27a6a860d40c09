//! Take-over: a person puts the whole machine, or one window, under their own control. While a
//! hold is on, the model's `gui_action` there is refused with `HUMAN_CONTROL` (a running one
//! stops before its next action); the person's own input goes through and keeps the hold alive.
//! A hold ends when the person releases it, or after it has been idle (no input from the person)
//! for its idle time; the model's next call then hears that control came back.

use crate::error::{ErrorCode, GuiError, GuiResult};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One hold, as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hold {
    /// None: the whole machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<String>,
    /// When it began (ms since the Unix epoch).
    pub since_ms: u64,
    /// Seconds of no input from the person after which it ends by itself.
    pub idle_release_s: u64,
    /// Seconds left before that, as of this answer.
    pub releases_in_s: u64,
}

struct Held {
    since: SystemTime,
    last_input: Instant,
    idle: Duration,
}

impl Held {
    fn left(&self, now: Instant) -> Duration {
        self.idle
            .saturating_sub(now.saturating_duration_since(self.last_input))
    }
}

#[derive(Default)]
struct Holds {
    machine: Option<Held>,
    windows: HashMap<String, Held>,
    /// What the model's next call is told, once: which hold ended, and how.
    came_back: Vec<String>,
}

/// The take-over state of one machine.
pub struct Control {
    holds: Mutex<Holds>,
    default_idle: Duration,
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn scope(window_id: Option<&str>) -> String {
    match window_id {
        None => "this machine".to_string(),
        Some(w) => format!("window {w}"),
    }
}

impl Control {
    /// Holds end by themselves after `default_idle` without the person's input, unless a take
    /// over names its own idle time.
    pub fn new(default_idle: Duration) -> Self {
        Self {
            holds: Mutex::new(Holds::default()),
            default_idle,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Holds> {
        self.holds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts the machine (`window_id` None) or one window under the person's control; taking
    /// over again renews the hold.
    pub fn take(&self, window_id: Option<&str>, idle: Option<Duration>) {
        let held = Held {
            since: SystemTime::now(),
            last_input: Instant::now(),
            idle: idle.filter(|d| !d.is_zero()).unwrap_or(self.default_idle),
        };
        let mut h = self.lock();
        match window_id {
            None => h.machine = Some(held),
            Some(w) => {
                h.windows.insert(w.to_string(), held);
            }
        }
        h.came_back.retain(|n| !n.contains(&scope(window_id)));
    }

    /// Ends a hold (the machine's with `window_id` None); false when there was none.
    pub fn release(&self, window_id: Option<&str>) -> bool {
        let mut h = self.lock();
        let ended = match window_id {
            None => h.machine.take(),
            Some(w) => h.windows.remove(w),
        };
        if ended.is_some() {
            h.came_back.push(format!(
                "the person released {}: control came back to you; the window may have changed, call gui_state \
                 before acting",
                scope(window_id)
            ));
        }
        ended.is_some()
    }

    /// Ends the holds whose idle time ran out (said to the model's next call).
    fn expire(h: &mut Holds, now: Instant) {
        if h.machine.as_ref().is_some_and(|m| m.left(now).is_zero()) {
            h.machine = None;
            h.came_back.push(format!(
                "the person's hold on {} ended after it was idle: control came back to you; the window may have \
                 changed, call gui_state before acting",
                scope(None)
            ));
        }
        let idle: Vec<String> = h
            .windows
            .iter()
            .filter(|(_, held)| held.left(now).is_zero())
            .map(|(w, _)| w.clone())
            .collect();
        for w in idle {
            h.windows.remove(&w);
            h.came_back.push(format!(
                "the person's hold on {} ended after it was idle: control came back to you; call gui_state before \
                 acting",
                scope(Some(&w))
            ));
        }
    }

    /// The person's own input on `window_id`: the holds that cover it stay on.
    pub fn touch(&self, window_id: &str) {
        let now = Instant::now();
        let mut h = self.lock();
        Self::expire(&mut h, now);
        if let Some(m) = h.machine.as_mut() {
            m.last_input = now;
        }
        if let Some(w) = h.windows.get_mut(window_id) {
            w.last_input = now;
        }
    }

    /// Ok when the model may act on `window_id` now; `HUMAN_CONTROL` while a person holds it.
    pub fn check(&self, window_id: &str) -> GuiResult<()> {
        let mut h = self.lock();
        Self::expire(&mut h, Instant::now());
        let (held, what) = match (&h.machine, h.windows.get(window_id)) {
            (Some(m), _) => (m, scope(None)),
            (None, Some(w)) => (w, scope(Some(window_id))),
            (None, None) => return Ok(()),
        };
        let left = held.left(Instant::now()).as_secs();
        Err(GuiError::new(
            ErrorCode::HumanControl,
            format!(
                "a person has taken over {what} on the Desktop page: no input of yours is sent there now \
                 (nothing was done). gui_state still works: observe again later (the hold ends when the person \
                 releases it, or after {left} s without their input), and do not try to work around it"
            ),
        )
        .with_details(serde_json::json!({ "held": what, "releases_in_s": left })))
    }

    /// What the model's next call is told once: that control came back (None: nothing new).
    pub fn came_back(&self) -> Option<String> {
        let mut h = self.lock();
        Self::expire(&mut h, Instant::now());
        let notes = std::mem::take(&mut h.came_back);
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// A note the model's call was given but did not get to see (its call was refused): said
    /// again on the next one.
    pub fn say_again(&self, note: String) {
        self.lock().came_back.insert(0, note);
    }

    /// The holds on now, the machine's first.
    pub fn holds(&self) -> Vec<Hold> {
        let now = Instant::now();
        let mut h = self.lock();
        Self::expire(&mut h, now);
        let show = |window_id: Option<&str>, held: &Held| Hold {
            window_id: window_id.map(str::to_string),
            since_ms: unix_ms(held.since),
            idle_release_s: held.idle.as_secs(),
            releases_in_s: held.left(now).as_secs(),
        };
        let mut out: Vec<Hold> = h.machine.iter().map(|m| show(None, m)).collect();
        let mut windows: Vec<Hold> = h.windows.iter().map(|(w, held)| show(Some(w), held)).collect();
        windows.sort_by(|a, b| a.window_id.cmp(&b.window_id));
        out.extend(windows);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_hold_refuses_every_window_until_released() {
        let c = Control::new(Duration::from_secs(60));
        assert!(c.check("0x1").is_ok());
        c.take(None, None);
        for w in ["0x1", "0x2"] {
            let e = c.check(w).unwrap_err();
            assert_eq!(e.code, ErrorCode::HumanControl);
            assert!(e.message.contains("observe again later"), "{}", e.message);
        }
        assert_eq!(c.came_back(), None);
        assert!(c.release(None));
        assert!(c.check("0x1").is_ok());
        let note = c.came_back().expect("a note after release");
        assert!(note.contains("control came back"), "{note}");
        // Said once.
        assert_eq!(c.came_back(), None);
        assert!(!c.release(None));
    }

    #[test]
    fn a_window_hold_leaves_the_other_windows_to_the_model() {
        let c = Control::new(Duration::from_secs(60));
        c.take(Some("0x1"), None);
        assert_eq!(c.check("0x1").unwrap_err().code, ErrorCode::HumanControl);
        assert!(c.check("0x2").is_ok());
        assert_eq!(c.holds().len(), 1);
        assert_eq!(c.holds()[0].window_id.as_deref(), Some("0x1"));
    }

    #[test]
    fn an_idle_hold_ends_by_itself_and_input_keeps_it() {
        let c = Control::new(Duration::from_secs(60));
        c.take(None, Some(Duration::from_millis(150)));
        std::thread::sleep(Duration::from_millis(100));
        c.touch("0x1");
        std::thread::sleep(Duration::from_millis(100));
        // 200 ms after the take, but only 100 ms after the person's input.
        assert!(c.check("0x1").is_err());
        std::thread::sleep(Duration::from_millis(120));
        assert!(c.check("0x1").is_ok());
        let note = c.came_back().expect("a note after the idle release");
        assert!(note.contains("idle"), "{note}");
        assert!(c.holds().is_empty());
    }
}
