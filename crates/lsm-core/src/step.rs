//! `gui_action` closes the loop: after its actions, wait (bounded) until the window settles,
//! observe it again, issue a new `state_id` and say what changed and what each action did.
//!
//! How long it waits, and on what, is `settle.rs`.

use crate::changes::{effect_of, element_changes, pixels_changed, window_changes, Changes, Seen};
use crate::model::{Element, WindowInfo};

/// At most this many windows opened by one call are observed with it (a dialog, its menu).
const MAX_OPENED_OBSERVED: usize = 2;
use crate::output::{ActionOutput, ActionRequest, ObserveAfter, StateRequest};
use crate::service::LocalGui;
use crate::settle::{Before, Probe, SettleJob, Settled};
use crate::state::Observation;
use std::time::Instant;

impl LocalGui {
    /// After the actions of `out` ran on `obs`: settle, observe, issue, compare (observe
    /// `changes` or `full`). A failure to observe is said in `observe_note`; the actions' own
    /// results stand.
    pub(crate) async fn observe_after(
        &self,
        obs: &Observation,
        before: Before,
        request: &ActionRequest,
        out: &mut ActionOutput,
    ) {
        let bound = before.bound;
        let shown = obs.shown.clone();
        let state_request = match &shown {
            Some(s) => StateRequest {
                screenshot: false,
                ..s.request.clone()
            },
            None => StateRequest {
                window_id: obs.window.window_id.clone(),
                include_elements: true,
                ..StateRequest::default()
            },
        };
        let pixel_mode = before.pixels.is_some();
        let before_elements: Vec<Element> = shown.as_ref().map(|s| s.elements.to_vec()).unwrap_or_default();
        let complete = shown.as_ref().is_some_and(|s| s.complete);
        // Wait for a change only when nothing was checked and something could show it.
        let wait_for_change = !out.results.iter().any(|r| r.verified) && !pixel_mode;
        let changed_from_before = |p: &Probe| -> bool {
            if p.gone {
                return true;
            }
            let windows_moved = match (&before.windows, &p.windows) {
                (Some(a), Some(b)) => {
                    let (o, c) = window_changes(a, b);
                    !o.is_empty() || !c.is_empty()
                }
                _ => false,
            };
            windows_moved
                || p.looked
                    .as_ref()
                    .is_some_and(|l| !element_changes(&before_elements, &l.out.elements, complete).is_empty())
        };

        let started = Instant::now();
        let Settled { settled, mut last } = self
            .settle(SettleJob {
                window: &obs.window,
                request: &state_request,
                bound,
                pixels: pixel_mode,
                wait_for_change,
                changed: &changed_from_before,
            })
            .await;
        out.settled = Some(settled);
        out.settle_ms = Some(started.elapsed().as_millis() as u64);
        // The image is of the settled window: one more look, with the screenshot, is the
        // observation everything below reports on.
        if request.screenshot && !last.gone {
            let shot_request = StateRequest {
                screenshot: true,
                ..state_request.clone()
            };
            match self.look(shot_request).await {
                Ok(looked) => last.looked = Some(looked),
                Err(e) => {
                    out.observe_note = Some(format!("no screenshot of the settled window: {}", e.message))
                }
            }
        }

        let mut changes = Changes::default();
        if let (Some(a), Some(b)) = (&before.windows, &last.windows) {
            let (opened, closed) = window_changes(a, b);
            changes.opened = opened;
            changes.closed = closed;
        }
        if last.gone && !changes.closed.iter().any(|w| w.window_id == obs.window.window_id) {
            changes.closed.push((&obs.window).into());
        }
        let seen = if last.gone {
            Seen::Elements(changes.clone())
        } else if let (Some((a, scale)), Some((b, _))) = (&before.pixels, &last.pixels) {
            let logical = pixels_changed(a, b).map(|r| {
                let s = if *scale > 0.0 { *scale } else { 1.0 };
                crate::geometry::Rect::new(
                    (r.x as f64 / s).floor() as i32,
                    (r.y as f64 / s).floor() as i32,
                    (r.width as f64 / s).ceil() as i32,
                    (r.height as f64 / s).ceil() as i32,
                )
            });
            Seen::Pixels(logical)
        } else if let Some(l) = &last.looked {
            let els = element_changes(&before_elements, &l.out.elements, complete);
            changes.added = els.added;
            changes.removed = els.removed;
            changes.changed = els.changed;
            changes.focus = els.focus;
            if shown.is_some() {
                Seen::Elements(changes.clone())
            } else {
                Seen::Nothing("the observation the actions used kept no element list to compare with".into())
            }
        } else {
            Seen::Nothing("the window could not be observed after the actions".into())
        };

        let unchecked = out.results.iter().filter(|r| !r.verified).count();
        for r in &mut out.results {
            let (effect, text) = effect_of(r.verified, r.evidence.as_deref(), &seen);
            r.effect = Some(effect);
            if r.verified {
                continue;
            }
            let text = if unchecked > 1 {
                format!("after all the actions together: {text}")
            } else {
                text
            };
            match effect {
                crate::changes::Effect::Confirmed => {
                    r.verified = true;
                    r.evidence = Some(text);
                    r.unverified = None;
                }
                _ => r.unverified = Some(text),
            }
        }

        // Also when the acted-on window closed: what replaced it (the next step of a wizard, the
        // main window after a login) is where the model goes on.
        self.observe_opened(obs, &state_request, last.windows.as_deref(), &mut changes)
            .await;
        if last.gone {
            out.changes = Some(changes);
            out.next = "the window closed: call gui_list to pick another window".into();
            self.forget_window(&obs.window.window_id);
            return;
        }
        let Some(looked) = last.looked else {
            out.observe_note =
                Some("the window could not be observed after the actions: call gui_state".into());
            return;
        };
        let mut state = self.issue(looked);
        if request.screenshot {
            out.screenshot = state.screenshot.clone();
            out.image = state.image.take();
        }
        out.state_id = Some(state.state_id.clone());
        out.expires_in_ms = Some(state.expires_in_ms);
        out.next =
            "act again with state_id (single-use, like gui_state's), or call gui_state to re-sync".into();
        if request.observe == ObserveAfter::Full {
            // The whole observation replaces the change list; the opened windows' states stay.
            if !changes.opened.is_empty() {
                out.changes = Some(Changes {
                    opened: std::mem::take(&mut changes.opened),
                    ..Changes::default()
                });
            }
            out.observation = Some(Box::new(state));
        } else {
            out.changes = Some(changes);
        }
    }

    /// Observes the windows the actions opened in the same application (a dialog, a menu),
    /// so their elements can be acted on with a `state_id` of their own without a `gui_state`.
    async fn observe_opened(
        &self,
        acted: &Observation,
        like: &StateRequest,
        windows: Option<&[WindowInfo]>,
        changes: &mut Changes,
    ) {
        let ours = |w: &WindowInfo| {
            w.transient_for.as_deref() == Some(acted.window.window_id.as_str())
                || (w.pid.is_some() && w.pid == acted.window.pid)
        };
        let mut observed = 0;
        for opened in &mut changes.opened {
            let Some(info) = windows.and_then(|ws| ws.iter().find(|w| w.window_id == opened.window_id))
            else {
                continue;
            };
            if !ours(info) {
                continue;
            }
            if !info.accessible {
                opened.note = Some("no accessibility: call gui_state for its screenshot".into());
                continue;
            }
            if observed == MAX_OPENED_OBSERVED {
                opened.note = Some("not observed (too many windows opened): call gui_state".into());
                continue;
            }
            observed += 1;
            let request = StateRequest {
                window_id: opened.window_id.clone(),
                screenshot: false,
                include_elements: true,
                query: None,
                ..like.clone()
            };
            match self.look(request).await {
                Ok(looked) => {
                    let state = self.issue(looked);
                    opened.state_id = Some(state.state_id);
                    opened.expires_in_ms = Some(state.expires_in_ms);
                    opened.elements = state.elements;
                }
                Err(e) => opened.note = Some(format!("not observed: {} (call gui_state)", e.message)),
            }
        }
    }
}
