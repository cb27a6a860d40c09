//! Waiting, after one action, until its effect is there (or its bound passed), and the
//! observation that ends the wait.
//!
//! Two signals. Where the backend sees the application's accessibility events ([`Activity`]),
//! the window is walked again once the events stop for a moment, and the wait ends when the
//! walk began after the last event, the action's effect is in it, and no event came for a short
//! quiet period: `EFFECT_QUIET` after a burst, twice the events' spacing when they keep coming
//! (an animation ticking every 50 ms never ends the wait). Elsewhere (no events, or a window
//! without elements whose pixels are compared) the window is observed every `POLL` and the wait
//! ends once the effect is there and the window is unchanged for `QUIET`.
//!
//! Until the effect is there the wait goes on to the bound: a control that reacts a moment
//! after its press (Qt's 100 ms `animateClick`, GTK 4's deferred `clicked`) is seen, and the next
//! action does not overtake it. Where the elements show nothing, the window's pixels are
//! compared now and then, and a change that only pixels show ends the wait once they are
//! still. An action whose effect the backend read back waits only for the quiet.

use crate::activity::{Activity, Reach};
use crate::changes::pixels_changed_outside;
use crate::error::{ErrorCode, GuiError, GuiResult};
use crate::geometry::Rect;
use crate::limits::MAX_SETTLE;
use crate::looked::{Base, Looked};
use crate::model::{Element, WindowInfo};
use crate::output::{ActionRequest, StateRequest};
use crate::service::{bounded, LocalGui};
use crate::RgbaImage;
use std::time::{Duration, Instant};

/// Time between two observations while settling without events.
const POLL: Duration = Duration::from_millis(25);
/// How long the window must stay unchanged to count as settled, without events.
const QUIET: Duration = Duration::from_millis(100);
/// The shortest quiet period after the last event once the effect is there: the events of one
/// reaction come in one burst, a few ms apart, and what a toolkit lays out again comes with its
/// next frame (GTK 3 maps a widget shown by the reaction up to a 60 Hz frame later).
const EFFECT_QUIET: Duration = Duration::from_millis(20);
/// The same where every event since the action only changed a state of its sender that shows,
/// hides or moves nothing ([`Reach::OwnState`]): such a change lays nothing out again, so no
/// frame-late event follows it.
const OWN_STATE_QUIET: Duration = Duration::from_millis(10);
/// The shortest quiet period after the last event while no effect is there yet. Longer than
/// the frame of any animation that sends events (a 50 ms tick is caught by its second event).
const MIN_QUIET: Duration = Duration::from_millis(60);
/// The longest quiet period after the last event, however spaced the events were.
const MAX_QUIET: Duration = Duration::from_millis(200);
/// After events stop, how soon the window is walked again (the quiet period runs meanwhile).
const REWALK_AFTER: Duration = Duration::from_millis(10);
/// How long the first walk after an action waits for the action's first event (most come
/// within a few ms: a D-Bus or X round trip).
const FIRST_EVENT_WAIT: Duration = Duration::from_millis(8);
/// The quiet after the first burst of events that starts the first walk: the events of one
/// reaction come within a millisecond or two of each other; a later one costs a second walk.
const FIRST_BURST_QUIET: Duration = Duration::from_millis(4);
/// How often events are looked at while waiting for the first walk.
const FIRST_EVENT_POLL: Duration = Duration::from_millis(1);
/// The latest the first walk after an action begins while events keep coming.
const FIRST_WALK_LATEST: Duration = Duration::from_millis(60);
/// How often events are looked at while waiting (a read of a counter, no call).
const EVENT_POLL: Duration = Duration::from_millis(5);
/// The shortest sleep of the settle loop (the timer's own resolution is a millisecond).
const MIN_SLEEP: Duration = Duration::from_micros(500);
/// While waiting for an effect that sends no event, how often the window is walked anyway.
const SLOW_POLL: Duration = Duration::from_millis(250);
/// While the elements show no effect, how often the pixels are compared (a change only pixels
/// show ends the wait once two captures this far apart are the same).
const PIXEL_POLL: Duration = Duration::from_millis(250);

/// How long no event may come before the window counts as quiet, given when the action ended
/// and when the events since then came (oldest first): twice the longest spacing between them,
/// within `shortest..=MAX_QUIET`. The wait for the first event counts as a spacing unless the
/// effect was seen only in a later walk (GTK 4 sends its first event 250 ms after the action:
/// a late start, not an animation); an effect read back at once counts it (an animation ticking
/// after a toggle is caught by its first tick).
/// `own_states`: some event came, and all of them since the action began only changed their
/// sender's own state.
pub(crate) fn quiet_needed(
    actions_end: Instant,
    events: &[Instant],
    effect: Effect,
    own_states: bool,
) -> Duration {
    let shortest = match (effect, own_states) {
        (Effect::Unseen, _) => MIN_QUIET,
        (_, true) => OWN_STATE_QUIET,
        (_, false) => EFFECT_QUIET,
    };
    let mut previous: Option<Instant> = (effect != Effect::SeenLater).then_some(actions_end);
    let mut longest = Duration::ZERO;
    for &at in events.iter().filter(|&&at| at >= actions_end) {
        if let Some(p) = previous {
            longest = longest.max(at.saturating_duration_since(p));
        }
        previous = Some(at);
    }
    (longest * 2).clamp(shortest, MAX_QUIET)
}

/// Where the action's effect stands while settling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Not seen yet.
    Unseen,
    /// Known when the action returned (the backend read it back).
    AtOnce,
    /// Seen in a walk after the action.
    SeenLater,
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

/// The window's pixels before an action, and the boxes (image pixels) where they change on
/// their own.
pub(crate) struct PixelsBefore<'a> {
    pub(crate) image: &'a (RgbaImage, f64),
    pub(crate) ignore: &'a [Rect],
}

/// What one probe shows of the action's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shows {
    No,
    Yes,
    /// Only a state of the control itself changed, which may be its passing look (galculator's
    /// keys are toggle buttons checked for 100 ms): it counts in a probe taken once the action
    /// is this old.
    IfStillThereAfter(Duration),
}

/// Folds what a probe taken `age` after the action shows into "seen", and says when to look
/// again if the answer has to wait.
fn seen_now(shows: Shows, age: Duration) -> (bool, Option<Duration>) {
    match shows {
        Shows::No => (false, None),
        Shows::Yes => (true, None),
        Shows::IfStillThereAfter(d) if age >= d => (true, None),
        Shows::IfStillThereAfter(d) => (false, Some(d)),
    }
}

/// What the settle loop needs to know of the action.
pub(crate) struct SettleJob<'a> {
    pub(crate) window: &'a WindowInfo,
    pub(crate) request: &'a StateRequest,
    pub(crate) bound: Duration,
    /// Compare pixels (the window has no elements).
    pub(crate) pixels: bool,
    /// The effect is known to be there already (the backend read it back), or none is waited
    /// for (a hover): wait for the quiet alone.
    pub(crate) effect_known: bool,
    /// Whether a probe shows the action's effect.
    pub(crate) effect: &'a (dyn Fn(&Probe) -> Shows + Sync),
    /// Pixels before the action of a window with elements, to notice a change only they show.
    pub(crate) pixels_before: Option<PixelsBefore<'a>>,
    /// The observation the action is judged against, to be brought up to date where the
    /// events allow (`catch_up.rs`) instead of walking the window.
    pub(crate) base: Option<Base<'a>>,
    /// When the action was sent: events from then on are its first burst (a click by pointer
    /// waits for the application's round trip, so its reaction may be over when it returns).
    pub(crate) action_began: Instant,
}

/// Whether some event came at or after `since`, and every one of them changed only a state of
/// its sender that shows, hides or moves nothing.
fn own_states(activity: &Activity, since: Instant) -> bool {
    let mut after = activity.recent.iter().filter(|e| e.at >= since).peekable();
    after.peek().is_some() && after.all(|e| e.reach == Reach::OwnState)
}

/// When the action's reaction last sent an event (`actions_end` when none came) and whether
/// all its events only changed their sender's own state. The reaction's events are those from
/// `action_began` on: one that came while the action was sent (a click waits for the
/// application's round trip) is part of it, so the quiet runs from it.
fn reaction(activity: &Activity, action_began: Instant, actions_end: Instant) -> (Instant, bool) {
    let last = activity
        .last_at()
        .filter(|&at| at >= action_began)
        .unwrap_or(actions_end);
    (last, own_states(activity, action_began))
}

/// Events of the activity that came at or after `since`.
fn events_since(activity: &Activity, since: Instant) -> usize {
    activity.recent.iter().filter(|e| e.at >= since).count()
}

impl LocalGui {
    /// The settle bound of a call: its own `settle_ms`, else the server's.
    pub(crate) fn settle_bound(&self, request: &ActionRequest) -> GuiResult<Duration> {
        match request.settle_ms {
            None => Ok(self.limits().settle),
            Some(ms) if Duration::from_millis(ms) <= MAX_SETTLE => Ok(Duration::from_millis(ms)),
            Some(ms) => Err(GuiError::invalid(format!(
                "settle_ms is {ms}; at most {} ms are allowed",
                MAX_SETTLE.as_millis()
            ))),
        }
    }

    pub(crate) async fn pixels_of(&self, window_id: &str) -> Option<(RgbaImage, f64)> {
        let backend = self.backend().await.ok()?;
        let snap = bounded("capturing the window", backend.capture(window_id))
            .await
            .ok()?;
        snap.screenshot.map(|s| (s.image, snap.scale))
    }

    pub(crate) async fn probe(&self, request: &StateRequest, pixels: bool) -> Probe {
        match self.look(request.clone()).await {
            // The window list read beside the walk no longer has the window: it closed (a
            // closing dialog's X window can still be read for a moment), whatever the walk found.
            Ok(looked)
                if looked
                    .windows
                    .as_ref()
                    .is_some_and(|ws| !ws.iter().any(|w| w.window_id == request.window_id)) =>
            {
                Probe {
                    windows: looked.windows,
                    looked: None,
                    pixels: None,
                    gone: true,
                }
            }
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

    /// A look once events came: the last observation (else the job's) brought up to date where
    /// the events allow, else a walk.
    async fn look_after_events(&self, job: &SettleJob<'_>, last: Option<&Probe>) -> Probe {
        let base = match last {
            Some(p) => p.looked.as_ref().and_then(Base::of),
            None => job.base,
        };
        if let Some(base) = base {
            if let Some(looked) = self.catch_up(base, job.window).await {
                return Probe {
                    windows: looked.windows.clone(),
                    looked: Some(looked),
                    pixels: None,
                    gone: false,
                };
            }
        }
        self.probe(job.request, false).await
    }

    /// Compares the window's pixels now with `before`: `Some(None)` the same, `Some(Some(r))`
    /// changed in `r`, `None` when they could not be read.
    pub(crate) async fn pixels_now(
        &self,
        window_id: &str,
        before: &PixelsBefore<'_>,
    ) -> (Option<Option<Rect>>, Option<(RgbaImage, f64)>) {
        match self.pixels_of(window_id).await {
            Some(now) => (
                Some(
                    pixels_changed_outside(&before.image.0, &now.0, before.ignore)
                        .filter(|r| !crate::effect::caret_blink(*r, before.image.1)),
                ),
                Some(now),
            ),
            None => (None, None),
        }
    }

    /// Waits until the action's effect is there and the window is quiet, or the bound passes,
    /// and observes it.
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

    /// Settling by observations alone: the effect is there and two observations `QUIET` apart
    /// are equal.
    async fn settle_by_polling(&self, job: &SettleJob<'_>) -> Settled {
        let started = Instant::now();
        let mut last = self.probe(job.request, job.pixels).await;
        let mut last_change = started;
        let mut seen = job.effect_known || seen_now((job.effect)(&last), started.elapsed()).0;
        let mut pixels = PixelWatch::default();
        let settled = loop {
            if last.gone {
                break true;
            }
            let quiet = last_change.elapsed() >= QUIET;
            if quiet && seen {
                break true;
            }
            if started.elapsed() >= job.bound {
                break quiet;
            }
            if !seen && pixels.due(started) {
                if let Some(before) = &job.pixels_before {
                    if pixels.look(self, job.request, before).await {
                        break true;
                    }
                }
            }
            tokio::time::sleep(POLL.min(job.bound.saturating_sub(started.elapsed()))).await;
            let now = self.probe(job.request, job.pixels).await;
            if !now.same_as(&last) {
                last_change = Instant::now();
            }
            // Also unchanged: a passing look that stayed long enough counts now.
            seen = seen || seen_now((job.effect)(&now), started.elapsed()).0;
            last = now;
        };
        Settled { settled, last }
    }

    /// Settling on the application's events: the effect is there, no event came for the quiet
    /// period and the last walk began after the last of them.
    async fn settle_on_events(&self, job: &SettleJob<'_>, activity: impl Fn() -> Activity) -> Settled {
        let actions_end = Instant::now();
        // The first walk waits for the action's first burst of events to pass: a walk begun
        // before the last of them would have to be repeated.
        loop {
            let waited = actions_end.elapsed();
            let first_burst = activity().last_at().filter(|&at| at >= job.action_began);
            let wait = match first_burst {
                Some(at) => at.elapsed() < FIRST_BURST_QUIET && waited < FIRST_WALK_LATEST,
                None => waited < FIRST_EVENT_WAIT,
            };
            if !wait || waited >= job.bound {
                break;
            }
            tokio::time::sleep(FIRST_EVENT_POLL).await;
        }
        let mut walk_began = Instant::now();
        tracing::trace!("settle: first walk {:?} after the action", actions_end.elapsed());
        let mut last = self.look_after_events(job, None).await;
        let (first, mut look_again) = seen_now((job.effect)(&last), actions_end.elapsed());
        tracing::trace!(
            "settle: first walk done at {:?}, effect seen {first}",
            actions_end.elapsed()
        );
        let mut seen = job.effect_known || first;
        let effect_state = |seen: bool| match (seen, job.effect_known) {
            (false, _) => Effect::Unseen,
            (true, true) => Effect::AtOnce,
            (true, false) => Effect::SeenLater,
        };
        let mut pixels = PixelWatch::default();
        loop {
            if last.gone {
                return Settled { settled: true, last };
            }
            let now = activity();
            let (last_event, own_states) = reaction(&now, job.action_began, actions_end);
            let since_last = last_event.elapsed();
            let needed = quiet_needed(actions_end, &now.times(), effect_state(seen), own_states);
            let quiet = since_last >= needed;
            let stale = events_since(&now, walk_began) > 0;
            let waited = actions_end.elapsed();
            if quiet && !stale && seen {
                tracing::trace!("settle: settled at {waited:?}");
                return Settled { settled: true, last };
            }
            if waited >= job.bound {
                if stale {
                    // Not quiet: the observation is at least current.
                    last = self.look_after_events(job, Some(&last)).await;
                }
                let settled = quiet && !stale && !last.gone;
                return Settled { settled, last };
            }
            if !seen && !stale && pixels.due(actions_end) {
                if let Some(before) = &job.pixels_before {
                    if pixels.look(self, job.request, before).await {
                        return Settled { settled: quiet, last };
                    }
                }
            }
            // Walk again once the events stopped for a moment, or now and then while waiting
            // for an effect that may send no event.
            // A look that had to last: no event came since the last walk began, so that walk is
            // still the window as it is, and the look has lasted (its end would be an event).
            if !seen && !stale && look_again.is_some_and(|at| waited >= at) {
                let (now_seen, again) = seen_now((job.effect)(&last), actions_end.elapsed());
                seen = now_seen;
                look_again = again;
                continue;
            }
            let rewalk = if stale {
                since_last >= REWALK_AFTER
            } else {
                !seen && walk_began.elapsed() >= SLOW_POLL
            };
            if rewalk {
                tracing::trace!("settle: walk again at {waited:?} (stale {stale}, seen {seen})");
                walk_began = Instant::now();
                // Events came: the last look brought up to date where they allow. Waiting for an
                // effect that sent none: the window walked, as no event says where to look.
                last = if stale {
                    self.look_after_events(job, Some(&last)).await
                } else {
                    self.probe(job.request, false).await
                };
                let (now_seen, again) = seen_now((job.effect)(&last), actions_end.elapsed());
                seen = seen || now_seen;
                look_again = again;
                continue;
            }
            let due = Due {
                quiet_in: (seen && !stale).then(|| needed.saturating_sub(since_last)),
                rewalk_in: stale.then(|| REWALK_AFTER.saturating_sub(since_last)),
                look_in: look_again.filter(|_| !seen).map(|at| at.saturating_sub(waited)),
                bound_in: job.bound.saturating_sub(waited),
            };
            tokio::time::sleep(due.sleep()).await;
        }
    }
}

/// How long until each moment the settle loop acts on, where one is coming.
struct Due {
    /// The quiet period ends (the effect is seen and the last walk is current).
    quiet_in: Option<Duration>,
    /// Events came since the last walk: it is walked again this long after the last of them.
    rewalk_in: Option<Duration>,
    /// A look that has to last has lasted.
    look_in: Option<Duration>,
    bound_in: Duration,
}

impl Due {
    /// The loop's next sleep: until the first of those moments, at most `EVENT_POLL` (a new
    /// event may change them). Waking at the moment, not at the next poll, is what a settle
    /// that ends on a quiet period costs no more than the quiet itself.
    fn sleep(&self) -> Duration {
        [self.quiet_in, self.rewalk_in, self.look_in, Some(self.bound_in)]
            .into_iter()
            .flatten()
            .fold(EVENT_POLL, Duration::min)
            .max(MIN_SLEEP)
    }
}

/// Pixels compared now and then while no effect shows in the elements.
#[derive(Default)]
struct PixelWatch {
    last_look: Option<Instant>,
    /// The capture before, when it differed from the pixels before the action.
    changed: Option<RgbaImage>,
}

impl PixelWatch {
    /// Whether a look is due: `PIXEL_POLL` after the action and after the last look.
    fn due(&self, start: Instant) -> bool {
        let since = self.last_look.unwrap_or(start);
        since.elapsed() >= PIXEL_POLL
    }

    /// Captures and compares; true once pixels changed and stayed the same since the last look
    /// (a change only pixels show, and it is over).
    async fn look(&mut self, gui: &LocalGui, request: &StateRequest, before: &PixelsBefore<'_>) -> bool {
        self.last_look = Some(Instant::now());
        let (seen, now) = gui.pixels_now(&request.window_id, before).await;
        let Some((now, _)) = now else {
            return false;
        };
        let still = self.changed.as_ref().is_some_and(|prev| prev.data == now.data);
        let changed = matches!(seen, Some(Some(_)));
        self.changed = changed.then_some(now);
        changed && still
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
        assert_eq!(quiet_needed(end, &[], Effect::Unseen, false), MIN_QUIET);
        assert_eq!(
            quiet_needed(end, &at(end, &[1, 2, 3, 12]), Effect::Unseen, false),
            MIN_QUIET
        );
        assert_eq!(
            quiet_needed(end, &at(end, &[1, 2, 3, 6]), Effect::SeenLater, false),
            EFFECT_QUIET
        );
        assert_eq!(quiet_needed(end, &[], Effect::AtOnce, false), EFFECT_QUIET);
    }

    #[test]
    fn a_late_first_event_is_no_animation_once_the_effect_is_there() {
        let end = Instant::now();
        // GTK 4 emits `clicked` 250 ms after the accessible action returned.
        assert_eq!(
            quiet_needed(end, &at(end, &[250, 251, 253]), Effect::SeenLater, false),
            EFFECT_QUIET
        );
        assert_eq!(
            quiet_needed(end, &at(end, &[250]), Effect::Unseen, false),
            MAX_QUIET
        );
    }

    #[test]
    fn an_animation_needs_more_quiet_than_its_tick() {
        let end = Instant::now();
        let q = quiet_needed(end, &at(end, &[2, 52]), Effect::Unseen, false);
        assert!(q > Duration::from_millis(50), "{q:?}");
        let q = quiet_needed(end, &at(end, &[2, 52, 102]), Effect::SeenLater, false);
        assert!(q > Duration::from_millis(50), "{q:?}");
        // A toggle read back at once, then an animation's first tick.
        let q = quiet_needed(end, &at(end, &[50]), Effect::AtOnce, false);
        assert!(q > Duration::from_millis(50), "{q:?}");
        assert_eq!(
            quiet_needed(end, &at(end, &[300]), Effect::Unseen, false),
            MAX_QUIET
        );
    }

    #[test]
    fn an_own_state_burst_needs_less_quiet_once_the_effect_is_there() {
        let end = Instant::now();
        let burst = at(end, &[1, 2, 3]);
        assert_eq!(
            quiet_needed(end, &burst, Effect::SeenLater, true),
            OWN_STATE_QUIET
        );
        assert_eq!(quiet_needed(end, &burst, Effect::SeenLater, false), EFFECT_QUIET);
        assert_eq!(quiet_needed(end, &burst, Effect::Unseen, true), MIN_QUIET);
        // Spaced events still need twice their spacing.
        let q = quiet_needed(end, &at(end, &[2, 52]), Effect::SeenLater, true);
        assert!(q > Duration::from_millis(50), "{q:?}");
        let event = |at, reach| crate::activity::ActivityEvent {
            at,
            source: "x".into(),
            reach,
        };
        let a = Activity {
            count: 2,
            recent: vec![
                event(end - Duration::from_millis(5), Reach::Anything),
                event(end + Duration::from_millis(1), Reach::OwnState),
            ],
        };
        assert!(own_states(&a, end));
        assert!(!own_states(&a, end - Duration::from_millis(10)));
        assert!(!own_states(&a, end + Duration::from_millis(5)));
    }

    #[test]
    fn the_reaction_includes_what_came_while_the_action_was_sent() {
        let began = Instant::now();
        let end = began + Duration::from_millis(2);
        let event = |ms: u64, reach| crate::activity::ActivityEvent {
            at: began + Duration::from_millis(ms),
            source: "x".into(),
            reach,
        };
        // A check box checked while the click's round trip ran (gtk3-widget-factory): the quiet
        // runs from that event, and it is an own-state reaction.
        let during = Activity {
            count: 1,
            recent: vec![event(1, Reach::OwnState)],
        };
        assert_eq!(
            reaction(&during, began, end),
            (began + Duration::from_millis(1), true)
        );
        // Nothing came: the quiet runs from the action's end.
        assert_eq!(reaction(&Activity::default(), began, end), (end, false));
        // An event from before the action is none of its reaction.
        let before = Activity {
            count: 2,
            recent: vec![
                crate::activity::ActivityEvent {
                    at: began - Duration::from_millis(5),
                    source: "x".into(),
                    reach: Reach::Anything,
                },
                event(1, Reach::OwnState),
            ],
        };
        assert_eq!(
            reaction(&before, began, end),
            (began + Duration::from_millis(1), true)
        );
    }

    #[test]
    fn events_before_the_actions_ended_do_not_count() {
        let start = Instant::now();
        let end = start + Duration::from_millis(500);
        assert_eq!(
            quiet_needed(end, &at(start, &[0, 200, 400, 501]), Effect::Unseen, false),
            MIN_QUIET
        );
    }

    #[test]
    fn the_loop_wakes_when_the_quiet_ends_not_at_the_next_poll() {
        let ms = Duration::from_millis;
        let due = |quiet_in, rewalk_in, look_in, bound_in| Due {
            quiet_in,
            rewalk_in,
            look_in,
            bound_in,
        };
        // The quiet ends in 2 ms: woken then, not 5 ms later.
        assert_eq!(due(Some(ms(2)), None, None, ms(1500)).sleep(), ms(2));
        // Nothing due soon: the events are looked at every EVENT_POLL.
        assert_eq!(due(Some(ms(15)), None, None, ms(1500)).sleep(), EVENT_POLL);
        assert_eq!(due(None, None, None, ms(1500)).sleep(), EVENT_POLL);
        // The first of several moments, and the bound.
        assert_eq!(
            due(Some(ms(4)), Some(ms(3)), Some(ms(1)), ms(1500)).sleep(),
            ms(1)
        );
        assert_eq!(due(None, None, None, ms(2)).sleep(), ms(2));
        // A moment that has come (the loop acts on it elsewhere) does not spin the loop.
        assert_eq!(due(Some(Duration::ZERO), None, None, ms(1500)).sleep(), MIN_SLEEP);
    }
}
