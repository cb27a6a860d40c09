//! `gui_action` judges each action on its own, in order: after an action, wait (bounded) until
//! its effect is there and the window is quiet, observe the window, and take what changed since
//! the action before as this action's evidence; the next action starts from that observation.
//! After the last one, the settled observation gets a new `state_id` and the call says what
//! changed in all.
//!
//! What counts as an effect is `effect.rs`; how long the wait is, and on what, is `settle.rs`.

use crate::action::{ActionResult, ActionSpec, Where};
use crate::changes::{element_changes, pixels_changed_outside, window_changes, Changes, Effect};
use crate::effect::{
    effect_changes, element_at, judge, only_momentary, only_moves, rebuilt_pairs, target_in_motion,
    without_moving, without_reverts, Intent, ReadBack, Seen, PERSIST, STEADY,
};
use crate::geometry::Rect;
use crate::looked::Base;
use crate::model::{Element, WindowInfo};
use crate::output::{ActionOutput, ActionRequest, ObserveAfter, StateRequest};
use crate::service::LocalGui;
use crate::settle::{PixelsBefore, Probe, SettleJob, Settled, Shows};
use crate::state::Observation;
use crate::state::Walked;
use crate::RgbaImage;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// At most this many windows opened by one call are observed with it (a dialog, its menu).
const MAX_OPENED_OBSERVED: usize = 2;

/// The state of a call whose actions are judged one by one.
pub(crate) struct Judging {
    /// How the window is observed after each action (as the `gui_state` that began the chain,
    /// without a screenshot).
    request: StateRequest,
    bound: Duration,
    /// The window has no elements: its pixels are what is compared.
    pixel_mode: bool,
    /// The observations hold every element (no query, nothing cut).
    complete: bool,
    /// The observation the call's actions began on (for the call's change list).
    first_elements: Arc<Vec<Element>>,
    first_windows: Option<Vec<WindowInfo>>,
    /// What the next action is judged against: the last settled observation ...
    elements: Vec<Element>,
    /// ... and the walk it was made of (to bring it up to date instead of walking again).
    walked: Option<Walked>,
    windows: Option<Vec<WindowInfo>>,
    /// The window's pixels right before the current action, where they are compared.
    pixels: Option<(RgbaImage, f64)>,
    /// When the current action was sent (its pixels read before).
    action_began: Instant,
    /// The first action's pixels, read beside the window list before it.
    early_pixels: Option<(RgbaImage, f64)>,
    /// The last settled observation.
    last: Option<Probe>,
    /// What changed in the elements with the action before (its passing looks ending now are
    /// not this action's effect).
    previous: Changes,
    settled: bool,
    settle_time: Duration,
    /// Judge the last action too (observe `none` judges all but the last, so none overtakes
    /// another, and returns right after the last).
    observe_last: bool,
}

impl Judging {
    /// Whether the acted-on window is gone.
    pub(crate) fn gone(&self) -> bool {
        self.last.as_ref().is_some_and(|p| p.gone)
    }
}

/// What an action is meant to do, with its target found in the observation it runs on.
fn intent_of(spec: &ActionSpec, elements: &[Element]) -> Intent {
    let at = |w: &Where| match w {
        Where::Element(id) => Some(id.clone()),
        Where::Point(p) => element_at(elements, *p).map(|e| e.id.clone()),
    };
    match spec {
        ActionSpec::Click { at: w, .. } => Intent::Press { target: at(w) },
        ActionSpec::Move { .. } => Intent::Hover,
        ActionSpec::Scroll { at: w, .. } => Intent::Input {
            target: w.as_ref().and_then(at),
        },
        ActionSpec::Drag { from, .. } => Intent::Input { target: at(from) },
        ActionSpec::Key { .. } => Intent::Input { target: None },
        ActionSpec::Type { element, .. } => Intent::ReadBack {
            target: element.clone(),
        },
        ActionSpec::SetValue { element, .. } => Intent::ReadBack {
            target: Some(element.clone()),
        },
        ActionSpec::Focus { element } => Intent::ReadBack {
            target: element.clone(),
        },
        ActionSpec::Wait { .. } => Intent::Wait,
    }
}

/// An image-pixel box in the window's logical pixels.
fn to_logical(r: Rect, scale: f64) -> Rect {
    let s = if scale > 0.0 { scale } else { 1.0 };
    Rect::new(
        (r.x as f64 / s).floor() as i32,
        (r.y as f64 / s).floor() as i32,
        (r.width as f64 / s).ceil() as i32,
        (r.height as f64 / s).ceil() as i32,
    )
}

impl LocalGui {
    /// Sets up judging for a call on `obs`; `None` when nothing is to be judged (observe `none`
    /// with one action).
    pub(crate) async fn start_judging(
        &self,
        obs: &Observation,
        request: &ActionRequest,
        actions: usize,
        first: Option<&ActionSpec>,
    ) -> crate::GuiResult<Option<Judging>> {
        let bound = self.settle_bound(request)?;
        let observe_last = request.observe != ObserveAfter::None;
        if !observe_last && actions < 2 {
            return Ok(None);
        }
        let shown = obs.shown.as_ref();
        let state_request = match shown {
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
        let first_elements = shown.map(|s| s.elements.clone()).unwrap_or_default();
        let mut judging = Judging {
            request: state_request,
            bound,
            pixel_mode: first_elements.is_empty(),
            complete: shown.is_some_and(|s| s.complete),
            elements: first_elements.to_vec(),
            walked: shown.and_then(|s| s.walked.clone()),
            first_elements,
            first_windows: shown.and_then(|s| s.windows.clone()),
            windows: shown.and_then(|s| s.windows.clone()),
            pixels: None,
            action_began: Instant::now(),
            early_pixels: None,
            last: None,
            previous: Changes::default(),
            settled: true,
            settle_time: Duration::ZERO,
            observe_last,
        };
        let Ok(backend) = self.backend().await else {
            return Ok(Some(judging));
        };
        // The first action is judged against the windows as they are now (one opened since the
        // observation is none of its doing), and, where the application changed since (events
        // came), against its elements now.
        let moved_on = !judging.pixel_mode
            && backend.activity(&obs.window).is_some_and(|a| {
                // The shown keys are gathered only when some event came since the observation.
                let shown = std::cell::OnceCell::new();
                a.outdates(obs.issued, judging.complete, |key| {
                    shown
                        .get_or_init(|| {
                            obs.elements
                                .values()
                                .map(|e| e.key.as_str())
                                .collect::<std::collections::HashSet<&str>>()
                        })
                        .contains(key)
                })
            });
        if moved_on {
            // Read again (its window list with it); the pixels are read right before the action,
            // once the application has drawn what its events announced.
            let caught_up = match &judging.walked {
                Some(walked) => {
                    let base = Base {
                        walked,
                        request: &judging.request,
                    };
                    self.catch_up(base, &obs.window).await
                }
                None => None,
            };
            let now = match caught_up {
                Some(looked) => Some(looked),
                None => self.probe(&judging.request, false).await.looked,
            };
            if let Some(l) = now {
                judging.elements = l.out.elements.clone();
                judging.walked = l.walked;
                if l.windows.is_some() {
                    judging.windows = l.windows;
                    return Ok(Some(judging));
                }
            }
        }
        // Nothing read again: the first action's pixels are read beside the window list.
        let early_pixels = !moved_on
            && first.is_some_and(|spec| {
                let intent = intent_of(spec, &judging.elements);
                intent != Intent::Wait && (judging.pixel_mode || intent.wants_pixels())
            });
        let (listed, pixels) = tokio::join!(
            crate::service::bounded("listing windows", backend.list_windows()),
            async {
                match early_pixels {
                    true => self.pixels_before(&judging.request.window_id).await,
                    false => None,
                }
            }
        );
        if let Ok(now) = listed {
            judging.windows = Some(now);
        }
        judging.early_pixels = pixels;
        Ok(Some(judging))
    }

    /// Before action `spec` runs: reads the window's pixels where they will be compared.
    pub(crate) async fn before_action(&self, j: &mut Judging, spec: &ActionSpec, last_action: bool) {
        j.pixels = None;
        let early = j.early_pixels.take();
        if last_action && !j.observe_last {
            return;
        }
        let intent = intent_of(spec, &j.elements);
        if early.is_some() {
            j.pixels = early;
        } else if j.pixel_mode || intent.wants_pixels() {
            let t = Instant::now();
            j.pixels = self.pixels_before(&j.request.window_id).await;
            tracing::trace!("before the action: pixels read in {:?}", t.elapsed());
        }
        j.action_began = Instant::now();
    }

    /// After action `spec` ran (its result in `result`): waits for its effect, observes, and
    /// says what the effect was. The observation becomes what the next action is judged against.
    pub(crate) async fn after_action(
        &self,
        j: &mut Judging,
        obs: &Observation,
        spec: &ActionSpec,
        result: &mut ActionResult,
        last_action: bool,
    ) {
        let intent = intent_of(spec, &j.elements);
        if !intent.judged() {
            result.effect = Some(Effect::Confirmed);
            return;
        }
        if last_action && !j.observe_last {
            return;
        }
        // A press's read-back (a toggle's state) is judged like any change, once it has lasted:
        // a key checked for 100 ms is a look, not an effect.
        let press = matches!(intent, Intent::Press { .. });
        let hint = result.verified.then(|| result.evidence.clone()).flatten();
        let read_back = match (&hint, press) {
            (Some(e), false) => ReadBack::Effect(e.clone()),
            _ => ReadBack::None(result.unverified.clone().unwrap_or_default()),
        };
        let effect_known = matches!(read_back, ReadBack::Effect(_))
            || matches!(intent, Intent::Hover | Intent::ReadBack { .. });
        let previous = std::mem::take(&mut j.previous);
        // Nothing is left out of the comparison but a caret's blink (see `caret_blink`): masking
        // the focused field would hide a selection or an edit in an editor that fills the window.
        let ignore: Vec<Rect> = Vec::new();
        let before_elements = j.elements.clone();
        let before_windows = j.windows.clone();
        let complete = j.complete;
        let pixel_mode = j.pixel_mode;
        let pixels_before = j.pixels.take();
        let shows_effect = |p: &Probe| -> Shows {
            if p.gone {
                return Shows::Yes;
            }
            if let (Some(a), Some(b)) = (&before_windows, &p.windows) {
                let (o, c) = window_changes(a, b);
                if !o.is_empty() || !c.is_empty() {
                    return Shows::Yes;
                }
            }
            if pixel_mode {
                return match (&pixels_before, &p.pixels) {
                    (Some((a, _)), Some((b, _))) if pixels_changed_outside(a, b, &[]).is_some() => Shows::Yes,
                    _ => Shows::No,
                };
            }
            let Some(l) = &p.looked else {
                return Shows::No;
            };
            let all = element_changes(&before_elements, &l.out.elements, complete);
            let effect = without_reverts(effect_changes(&all, &intent, &before_elements), &previous);
            if effect.is_empty() {
                Shows::No
            } else if only_momentary(&effect, &intent, &before_elements)
                || target_in_motion(&all, &intent, &before_elements)
            {
                Shows::IfStillThereAfter(PERSIST)
            } else {
                Shows::Yes
            }
        };
        let started = Instant::now();
        let Settled { settled, mut last } = self
            .settle(SettleJob {
                window: &obs.window,
                request: &j.request,
                bound: j.bound,
                pixels: pixel_mode,
                effect_known,
                effect: &shows_effect,
                pixels_before: match (&pixels_before, pixel_mode) {
                    (Some(image), false) => Some(PixelsBefore {
                        image,
                        ignore: &ignore,
                    }),
                    _ => None,
                },
                action_began: j.action_began,
                base: j.walked.as_ref().map(|walked| Base {
                    walked,
                    request: &j.request,
                }),
            })
            .await;
        j.settle_time += started.elapsed();
        j.settled = settled;

        let mut windows_moved = Changes::default();
        if let (Some(a), Some(b)) = (&before_windows, &last.windows) {
            let (opened, closed) = window_changes(a, b);
            windows_moved.opened = opened;
            windows_moved.closed = closed;
        }
        // A later observation that replaces the settled one (see `only_moves`).
        let mut steadied: Option<Probe> = None;
        let seen = if last.gone {
            Seen::WindowClosed
        } else if pixel_mode {
            match (&pixels_before, &last.pixels) {
                _ if !windows_moved.is_empty() => Seen::Elements {
                    effect: windows_moved,
                    pixels: None,
                    rebuilt: 0,
                },
                (Some((a, scale)), Some((b, _))) => {
                    Seen::Pixels(pixels_changed_outside(a, b, &[]).map(|r| to_logical(r, *scale)))
                }
                _ => {
                    Seen::Nothing("the window's pixels could not be read before and after the action".into())
                }
            }
        } else if let Some(l) = &last.looked {
            let mut all = element_changes(&before_elements, &l.out.elements, complete);
            j.previous = all.clone();
            all.opened = windows_moved.opened;
            all.closed = windows_moved.closed;
            let mut effect = without_reverts(effect_changes(&all, &intent, &before_elements), &previous);
            let rebuilt = rebuilt_pairs(&all, &before_elements).len();
            let age = started.elapsed();
            if only_momentary(&effect, &intent, &before_elements) && age < PERSIST {
                // The bound came before the look could be told from an effect.
                effect = Changes::default();
            }
            if only_moves(&effect) && !matches!(read_back, ReadBack::Effect(_)) {
                // Only elements moved (and the backend read back nothing that would answer for
                // the action): those that go on moving with no action move by themselves.
                tokio::time::sleep(STEADY).await;
                let again = self.probe(&j.request, false).await;
                if let Some(a) = &again.looked {
                    let moved_again = element_changes(&l.out.elements, &a.out.elements, complete);
                    effect = without_moving(effect, &moved_again);
                    steadied = Some(again);
                }
            }
            let pixels = if !effect.is_empty() || matches!(read_back, ReadBack::Effect(_)) {
                None
            } else {
                match &pixels_before {
                    // Compared now: the wait may have ended on the elements' quiet.
                    Some(image) => {
                        let before = PixelsBefore {
                            image,
                            ignore: &ignore,
                        };
                        let (seen, _) = self.pixels_now(&j.request.window_id, &before).await;
                        seen.map(|r| r.map(|r| to_logical(r, image.1)))
                    }
                    None => None,
                }
            };
            Seen::Elements {
                effect,
                pixels,
                rebuilt,
            }
        } else {
            Seen::Nothing("the window could not be observed after the action".into())
        };
        if let Some(p) = steadied {
            last = p;
        }
        let (effect, mut text) = judge(&read_back, &seen);
        if let (Effect::Confirmed, Some(h), Seen::Elements { effect: changes, .. }) = (effect, &hint, &seen) {
            // The backend's read-back says it best: that of a control whose states do not come
            // and go (a cell selected, a menu item that opened its dialog) as it is; that of a
            // button or toggle button once its change is in the settled observation.
            let target = intent.target();
            let lasting = changes.changed.iter().any(|c| {
                Some(c.id.as_str()) == target && !(c.states_on.is_empty() && c.states_off.is_empty())
            });
            let steady = before_elements
                .iter()
                .find(|e| Some(e.id.as_str()) == target)
                .is_some_and(|e| !crate::effect::momentary_role(&e.role));
            if press && (lasting || steady) {
                text = h.clone();
            }
        }
        result.effect = Some(effect);
        match effect {
            Effect::Confirmed => {
                result.verified = true;
                result.evidence = Some(text);
                result.unverified = None;
            }
            _ => {
                result.verified = false;
                result.evidence = None;
                result.unverified = Some(text);
            }
        }
        if let Some(l) = &last.looked {
            j.elements = l.out.elements.clone();
            j.walked = l.walked.clone();
        }
        if last.windows.is_some() {
            j.windows = last.windows.clone();
        }
        j.last = Some(last);
    }

    /// After the last action: the settled observation gets a new `state_id`; the call's change
    /// list compares it with the observation the call began on.
    pub(crate) async fn finish_judging(
        &self,
        obs: &Observation,
        mut j: Judging,
        request: &ActionRequest,
        out: &mut ActionOutput,
    ) {
        if !j.observe_last {
            return;
        }
        out.settled = Some(j.settled);
        out.settle_ms = Some(j.settle_time.as_millis() as u64);
        let Some(mut last) = j.last.take() else {
            out.observe_note = Some("no action was observed: call gui_state".into());
            return;
        };
        // The image is of the settled window: one more look, with the screenshot.
        if request.screenshot && !last.gone {
            let shot_request = StateRequest {
                screenshot: true,
                ..j.request.clone()
            };
            match self.look(shot_request).await {
                Ok(looked) => last.looked = Some(looked),
                Err(e) => {
                    out.observe_note = Some(format!("no screenshot of the settled window: {}", e.message))
                }
            }
        }
        let mut changes = Changes::default();
        if let (Some(a), Some(b)) = (&j.first_windows, &last.windows) {
            let (opened, closed) = window_changes(a, b);
            changes.opened = opened;
            changes.closed = closed;
        }
        if last.gone && !changes.closed.iter().any(|w| w.window_id == obs.window.window_id) {
            changes.closed.push((&obs.window).into());
        }
        if let (Some(l), false) = (&last.looked, last.gone) {
            let els = element_changes(&j.first_elements, &l.out.elements, j.complete);
            changes.added = els.added;
            changes.removed = els.removed;
            changes.changed = els.changed;
            changes.focus = els.focus;
        }
        // Also when the acted-on window closed: what replaced it (the next step of a wizard, the
        // main window after a login) is where the model goes on.
        self.observe_opened(obs, &j.request, last.windows.as_deref(), &mut changes)
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
        out.feed_image = state.feed_image.take();
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
