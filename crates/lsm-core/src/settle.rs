//! Waiting, after a call's actions, until the window is quiet (bounded by the call's settle
//! bound), and the observation that ends the wait.
//!
//! Two signals. Where the backend sees the application's accessibility events ([`Activity`]),
//! the window is settled once no event came for a quiet period, and the last walk began after
//! the last event: the walk runs while the quiet period passes, so a fast window costs the quiet
//! period alone. The quiet period grows with the spacing of the events after the actions (a
//! burst: `MIN_QUIET`; an animation ticking every 50 ms: 100 ms, so it never settles). Elsewhere
//! (no events, or a window without elements whose pixels are compared) the window is observed
//! every `POLL` and settled once unchanged for `QUIET`.
//!
//! Either way, when no action's effect was checked and nothing changed yet, the wait goes on to
//! the bound: a control that updates a moment after the click is then seen, and a click that did
//! nothing costs the bound, once.

use crate::backend::Activity;
use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::limits::MAX_SETTLE;
use crate::model::{Element, WindowInfo};
use crate::output::{ActionRequest, ObserveAfter, StateRequest};
use crate::service::{bounded, LocalGui, Looked};
use crate::state::Observation;
use crate::RgbaImage;
use std::time::{Duration, Instant};

/// Time between two observations while settling without events.
const POLL: Duration = Duration::from_millis(25);
/// How long the window must stay unchanged to count as settled, without events.
const QUIET: Duration = Duration::from_millis(100);
/// The shortest quiet period after the last event. Longer than the frame of any animation
/// that sends events (a 50 ms tick is caught by its second event).
const MIN_QUIET: Duration = Duration::from_millis(60);
/// The longest quiet period after the last event, however spaced the events were.
const MAX_QUIET: Duration = Duration::from_millis(200);
/// After events stop, how soon the window is walked again (the quiet period runs meanwhile).
const REWALK_AFTER: Duration = Duration::from_millis(10);
/// How often events are looked at while waiting (a read of a counter, no call).
const EVENT_POLL: Duration = Duration::from_millis(5);
/// While waiting for a change that sends no event, how often the window is walked anyway.
const SLOW_POLL: Duration = Duration::from_millis(250);

/// How long no event may come before the window counts as quiet, given when the actions ended
/// and when the events since then came (oldest first): twice the longest spacing between them,
/// within `MIN_QUIET..=MAX_QUIET`.
pub(crate) fn quiet_needed(actions_end: Instant, events: &[Instant]) -> Duration {
    let mut previous = actions_end;
    let mut longest = Duration::ZERO;
    for &at in events.iter().filter(|&&at| at >= actions_end) {
        longest = longest.max(at.saturating_duration_since(previous));
        previous = at;
    }
    (longest * 2).clamp(MIN_QUIET, MAX_QUIET)
}

/// What was read before the actions, to compare with after them.
pub(crate) struct Before {
    /// How long the call may wait for the window to settle.
    pub(crate) bound: Duration,
    pub(crate) windows: Option<Vec<WindowInfo>>,
    /// The window's pixels, when it has no elements to compare.
    pub(crate) pixels: Option<(RgbaImage, f64)>,
}

/// One observation while settling.
pub(crate) struct Probe {
    pub(crate) looked: Option<Looked>,
    pub(crate) windows: Option<Vec<WindowInfo>>,
    pub(crate) pixels: Option<(RgbaImage, f64)>,
    /// The window is gone.
    pub(crate) gone: bool,
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

/// How a settle went: whether the window was quiet, and its last observation.
pub(crate) struct Settled {
    pub(crate) settled: bool,
    pub(crate) last: Probe,
}

/// What the settle loop needs to know of the call.
pub(crate) struct SettleJob<'a> {
    pub(crate) window: &'a WindowInfo,
    pub(crate) request: &'a StateRequest,
    pub(crate) bound: Duration,
    /// Compare pixels (the window has no elements).
    pub(crate) pixels: bool,
    /// Wait until something changed (nothing was checked by the backend).
    pub(crate) wait_for_change: bool,
    /// Whether a probe differs from the observation the actions used.
    pub(crate) changed: &'a (dyn Fn(&Probe) -> bool + Sync),
}

/// Events of the activity that came at or after `since`.
fn events_since(activity: &Activity, since: Instant) -> usize {
    activity.recent.iter().filter(|&&at| at >= since).count()
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

    /// Waits until the window is quiet or the bound passes, and observes it.
    pub(crate) async fn settle(&self, job: SettleJob<'_>) -> Settled {
        let backend = if job.pixels {
            None
        } else {
            self.backend().await.ok()
        };
        match backend {
            Some(b) if b.activity(job.window).is_some() => {
                self.settle_on_events(&job, || b.activity(job.window).unwrap_or_default())
                    .await
            }
            _ => self.settle_by_polling(&job).await,
        }
    }

    /// Settling by observations alone: settled once two observations `QUIET` apart are equal.
    async fn settle_by_polling(&self, job: &SettleJob<'_>) -> Settled {
        let started = Instant::now();
        let mut last = self.probe(job.request, job.pixels).await;
        let mut last_change = started;
        let mut seen_change = (job.changed)(&last);
        let settled = loop {
            if last.gone {
                break true;
            }
            let quiet = last_change.elapsed() >= QUIET;
            if quiet && (seen_change || !job.wait_for_change) {
                break true;
            }
            if started.elapsed() >= job.bound {
                break quiet;
            }
            tokio::time::sleep(POLL.min(job.bound.saturating_sub(started.elapsed()))).await;
            let now = self.probe(job.request, job.pixels).await;
            if !now.same_as(&last) {
                last_change = Instant::now();
                seen_change = seen_change || (job.changed)(&now);
            }
            last = now;
        };
        Settled { settled, last }
    }

    /// Settling on the application's events: settled once none came for the quiet period and
    /// the last walk began after the last of them.
    async fn settle_on_events(&self, job: &SettleJob<'_>, activity: impl Fn() -> Activity) -> Settled {
        let actions_end = Instant::now();
        let mut walk_began = Instant::now();
        let mut last = self.probe(job.request, false).await;
        let mut seen_change = (job.changed)(&last);
        loop {
            if last.gone {
                return Settled { settled: true, last };
            }
            let now = activity();
            let last_event = now
                .recent
                .last()
                .copied()
                .filter(|&at| at >= actions_end)
                .unwrap_or(actions_end);
            let since_last = last_event.elapsed();
            let quiet = since_last >= quiet_needed(actions_end, &now.recent);
            let stale = events_since(&now, walk_began) > 0;
            let waited = actions_end.elapsed();
            if quiet && !stale && (seen_change || !job.wait_for_change) {
                return Settled { settled: true, last };
            }
            if waited >= job.bound {
                if stale {
                    // Not quiet: the observation is at least current.
                    last = self.probe(job.request, false).await;
                }
                let settled = quiet && !stale && !last.gone;
                return Settled { settled, last };
            }
            // Walk again once the events stopped for a moment, or now and then while waiting
            // for a change that may send no event.
            let rewalk = if stale {
                since_last >= REWALK_AFTER
            } else {
                job.wait_for_change && !seen_change && walk_began.elapsed() >= SLOW_POLL
            };
            if rewalk {
                walk_began = Instant::now();
                last = self.probe(job.request, false).await;
                seen_change = seen_change || (job.changed)(&last);
                continue;
            }
            tokio::time::sleep(EVENT_POLL.min(job.bound.saturating_sub(waited))).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, ms: &[u64]) -> Vec<Instant> {
        ms.iter().map(|&m| start + Duration::from_millis(m)).collect()
    }

    #[test]
    fn a_burst_needs_the_shortest_quiet() {
        let end = Instant::now();
        assert_eq!(quiet_needed(end, &[]), MIN_QUIET);
        assert_eq!(quiet_needed(end, &at(end, &[1, 2, 3, 12])), MIN_QUIET);
    }

    #[test]
    fn an_animation_needs_more_quiet_than_its_tick() {
        let end = Instant::now();
        let q = quiet_needed(end, &at(end, &[2, 52]));
        assert!(q > Duration::from_millis(50), "{q:?}");
        assert_eq!(quiet_needed(end, &at(end, &[300])), MAX_QUIET);
    }

    #[test]
    fn events_before_the_actions_ended_do_not_count() {
        let start = Instant::now();
        let end = start + Duration::from_millis(500);
        assert_eq!(quiet_needed(end, &at(start, &[0, 200, 400, 501])), MIN_QUIET);
    }
}
