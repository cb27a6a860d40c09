//! `gui_action` closes the loop: after its actions, wait (bounded) until the window settles,
//! observe it again, issue a new `state_id` and say what changed and what each action did.
//!
//! Settling is judged by observations, which every backend has: the window's elements (or, for
//! a window without accessibility, its pixels) and the list of windows, read every `POLL`,
//! are settled once unchanged for `QUIET`. When no action's effect was checked by the backend
//! and nothing has changed yet, the wait goes on to the bound: a control that updates a moment
//! after the click is then seen, and a click that did nothing costs the bound, once.

use crate::changes::{effect_of, element_changes, pixels_changed, window_changes, Changes, Seen};
use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::limits::MAX_SETTLE;
use crate::model::{Element, WindowInfo};
use crate::output::{ActionOutput, ActionRequest, ObserveAfter, StateRequest};
use crate::service::{bounded, LocalGui, Looked};
use crate::state::Observation;
use crate::RgbaImage;
use std::time::{Duration, Instant};

/// Time between two observations while settling.
const POLL: Duration = Duration::from_millis(25);
/// How long the window must stay unchanged to count as settled.
const QUIET: Duration = Duration::from_millis(100);

/// What was read before the actions, to compare with after them.
pub(crate) struct Before {
    /// How long the call may wait for the window to settle.
    bound: Duration,
    windows: Option<Vec<WindowInfo>>,
    /// The window's pixels, when it has no elements to compare.
    pixels: Option<(RgbaImage, f64)>,
}

/// One observation while settling.
struct Probe {
    looked: Option<Looked>,
    windows: Option<Vec<WindowInfo>>,
    pixels: Option<(RgbaImage, f64)>,
    /// The window is gone.
    gone: bool,
}

impl Probe {
    /// Whether two probes show the same window.
    fn same_as(&self, other: &Probe) -> bool {
        fn els(p: &Probe) -> Option<&Vec<Element>> {
            p.looked.as_ref().map(|l| &l.out.elements)
        }
        fn wins(p: &Probe) -> Option<Vec<(&str, &str)>> {
            p.windows.as_ref().map(|w| {
                w.iter()
                    .map(|w| (w.window_id.as_str(), w.title.as_str()))
                    .collect()
            })
        }
        fn px(p: &Probe) -> Option<&[u8]> {
            p.pixels.as_ref().map(|(i, _)| i.data.as_slice())
        }
        self.gone == other.gone
            && els(self) == els(other)
            && wins(self) == wins(other)
            && px(self) == px(other)
    }
}

impl LocalGui {
    /// The settle bound of a call: its own `settle_ms`, else the server's.
    fn settle_bound(&self, request: &ActionRequest) -> GuiResult<Duration> {
        match request.settle_ms {
            None => Ok(self.limits().settle),
            Some(ms) if Duration::from_millis(ms) <= MAX_SETTLE => Ok(Duration::from_millis(ms)),
            Some(ms) => Err(GuiError::invalid(format!(
                "settle_ms is {ms}; at most {} ms are allowed",
                MAX_SETTLE.as_millis()
            ))),
        }
    }

    /// Reads what the change list compares against, before any action runs.
    pub(crate) async fn before_actions(
        &self,
        obs: &Observation,
        request: &ActionRequest,
    ) -> GuiResult<Before> {
        let bound = self.settle_bound(request)?;
        if request.observe == ObserveAfter::None {
            return Ok(Before {
                bound,
                windows: None,
                pixels: None,
            });
        }
        // The window list of the observation, read beside its walk: nothing is read here
        // before the actions unless the window has no elements (then its pixels are).
        let windows = obs.shown.as_ref().and_then(|s| s.windows.clone());
        let no_elements = obs.shown.as_ref().is_none_or(|s| s.elements.is_empty());
        let pixels = if no_elements {
            self.pixels_of(&obs.window.window_id).await
        } else {
            None
        };
        Ok(Before {
            bound,
            windows,
            pixels,
        })
    }

    async fn pixels_of(&self, window_id: &str) -> Option<(RgbaImage, f64)> {
        let backend = self.backend().await.ok()?;
        let snap = bounded("capturing the window", backend.capture(window_id))
            .await
            .ok()?;
        snap.screenshot.map(|s| (s.image, snap.scale))
    }

    async fn probe(&self, request: &StateRequest, pixels: bool) -> Probe {
        match self.look(request.clone()).await {
            Ok(looked) => Probe {
                windows: looked.windows.clone(),
                looked: Some(looked),
                pixels: if pixels {
                    self.pixels_of(&request.window_id).await
                } else {
                    None
                },
                gone: false,
            },
            Err(e) => Probe {
                looked: None,
                windows: match self.backend().await {
                    Ok(b) => bounded("listing windows", b.list_windows()).await.ok(),
                    Err(_) => None,
                },
                pixels: None,
                gone: e.code == ErrorCode::WindowNotFound,
            },
        }
    }

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
        let mut last = self.probe(&state_request, pixel_mode).await;
        let mut last_change = started;
        let mut seen_change = changed_from_before(&last);
        let settled = loop {
            if last.gone {
                break true;
            }
            let quiet = last_change.elapsed() >= QUIET;
            if quiet && (seen_change || !wait_for_change) {
                break true;
            }
            if started.elapsed() >= bound {
                break quiet;
            }
            tokio::time::sleep(POLL.min(bound.saturating_sub(started.elapsed()))).await;
            let now = self.probe(&state_request, pixel_mode).await;
            if !now.same_as(&last) {
                last_change = Instant::now();
                seen_change = seen_change || changed_from_before(&now);
            }
            last = now;
        };
        out.settled = Some(settled);
        out.settle_ms = Some(started.elapsed().as_millis() as u64);

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
        let full = request.observe == ObserveAfter::Full;
        let state = self.issue(looked);
        out.state_id = Some(state.state_id.clone());
        out.expires_in_ms = Some(state.expires_in_ms);
        out.next =
            "act again with state_id (single-use, like gui_state's), or call gui_state to re-sync".into();
        if full {
            out.observation = Some(Box::new(state));
        } else {
            out.changes = Some(changes);
        }
    }
}
