//! What counts as the effect of one action, platform-free: every backend's results are judged
//! by these rules.
//!
//! An action's evidence is what changed between it and the next action (its own settled
//! observation against the one before it), less what a control shows while it is being
//! operated: the clicked control's `pressed`, `armed` or hover look, the focus landing on the
//! control itself, the window becoming active. Those pass whether or not the application
//! reacted (a Qt button is `pressed` for 100 ms before its click fires; a GTK button is `armed`
//! while a dialog it closes is still there), so they are never evidence.
//!
//! `confirmed` needs evidence of the effect: the backend's read-back of what the action was meant
//! to do (typed text, a set value, a toggled state), or a change beyond the passing states.
//! `no_change` needs the window's elements, its window list and its pixels all unchanged.
//! Anything in between (only pixels changed in a window with elements, pixels not comparable)
//! is `unverifiable`, with what was seen.

use crate::changes::{Changes, Effect};
use crate::geometry::{Point, Rect};
use crate::model::Element;

/// States a control shows while it is operated, which pass without any effect.
const PASSING: &[&str] = &["pressed", "armed", "hover", "hovered", "hot_tracked", "active"];

/// States that are a window's, and change when it is activated or deactivated.
const WINDOW_ROLES: &[&str] = &["frame", "window", "dialog", "alert", "file_chooser"];

/// Roles where `pressed` is the control's lasting state (a GTK 4 toggle button is `pressed` while
/// it is on), not a passing one.
const PRESSED_IS_STATE: &[&str] = &["toggle_button"];

/// Roles that take text: focus landing on one is what a click on it is for.
const TEXT_ROLES: &[&str] = &[
    "text",
    "entry",
    "password_text",
    "paragraph",
    "document_text",
    "terminal",
    "spin_button",
    "combo_box",
    "editbar",
];

/// What an action is meant to do, as far as judging its effect needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// A click (any button or count) on an element or at a point: anything beyond the passing
    /// states of the control under it.
    Press { target: Option<String> },
    /// Typing, a set value, a focus: the backend reads the effect back.
    ReadBack { target: Option<String> },
    /// A key combo, a scroll, a drag: anything that changed.
    Input { target: Option<String> },
    /// Moving the pointer: hover effects are passing by definition.
    Hover,
    /// A pause: nothing to judge.
    Wait,
}

impl Intent {
    /// The element the action is aimed at, if known.
    pub fn target(&self) -> Option<&str> {
        match self {
            Intent::Press { target } | Intent::ReadBack { target } | Intent::Input { target } => {
                target.as_deref()
            }
            Intent::Hover | Intent::Wait => None,
        }
    }

    /// Whether the action's effect is judged from the window at all.
    pub fn judged(&self) -> bool {
        !matches!(self, Intent::Wait)
    }

    /// Whether pixels are worth reading before the action (to tell `no_change` from a change
    /// only pixels show): not where the backend reads the effect back.
    pub fn wants_pixels(&self) -> bool {
        // A read-back intent too: when the backend finds the value already there, only elements
        // and pixels unchanged make that `no_change`.
        matches!(
            self,
            Intent::Press { .. } | Intent::Input { .. } | Intent::ReadBack { .. }
        )
    }
}

/// The element of `elements` under `p` (the smallest box that holds it, the deepest on a tie).
pub fn element_at(elements: &[Element], p: Point) -> Option<&Element> {
    elements
        .iter()
        .filter(|e| e.bounds.is_some_and(|b| b.contains(p)))
        .min_by_key(|e| {
            e.bounds
                .map(|b| b.width as i64 * b.height as i64)
                .unwrap_or(i64::MAX)
        })
}

/// The ids of `root` and every element below it (by `parent`).
fn subtree(elements: &[Element], root: &str) -> Vec<String> {
    let mut ids = vec![root.to_string()];
    let mut grew = true;
    while grew {
        grew = false;
        for e in elements {
            if let Some(p) = &e.parent {
                if ids.contains(p) && !ids.contains(&e.id) {
                    ids.push(e.id.clone());
                    grew = true;
                }
            }
        }
    }
    ids
}

/// Whether `state` on an element of `role` passes while a control is operated.
pub fn is_passing(role: &str, state: &str) -> bool {
    if state == "pressed" && PRESSED_IS_STATE.contains(&role) {
        return false;
    }
    if state == "active" {
        return WINDOW_ROLES.contains(&role);
    }
    PASSING.contains(&state)
}

/// Whether focus landing on an element of this role and states is what acting on it is for.
fn takes_text(role: &str, states: &[String]) -> bool {
    TEXT_ROLES.contains(&role) || states.iter().any(|s| s == "editable")
}

/// `changes` less what passes while the action's target is operated: passing states anywhere
/// (the window's activation, a hover look, `pressed`/`armed`), the focus moving onto the target
/// itself (unless it takes text), and the target's own boxes moving (a pressed button shifts its
/// label). `before` is the observation the action ran on (to find the target's subtree).
pub fn effect_changes(changes: &Changes, intent: &Intent, before: &[Element]) -> Changes {
    let target = intent.target();
    let own: Vec<String> = target.map(|t| subtree(before, t)).unwrap_or_default();
    let mut out = changes.clone();
    let pairs = rebuilt_pairs(changes, before);
    out.added = (changes.added.iter().enumerate())
        .filter(|(i, _)| !pairs.iter().any(|(a, _)| a == i))
        .map(|(_, e)| e.clone())
        .collect();
    out.removed.retain(|id| !pairs.iter().any(|(_, r)| r == id));
    out.changed = changes
        .changed
        .iter()
        .filter_map(|c| {
            let mut c = c.clone();
            c.states_on.retain(|s| !is_passing(&c.role, s));
            c.states_off.retain(|s| !is_passing(&c.role, s));
            if own.contains(&c.id) {
                c.bounds = None;
            }
            if target == Some(c.id.as_str()) {
                // A control does not enable itself by being pressed (a disabled one refuses the
                // press): its becoming usable is another action's late effect.
                c.states_off.retain(|s| s != "disabled");
            }
            let lasting = c.name_was.is_some()
                || c.value.is_some()
                || !c.states_on.is_empty()
                || !c.states_off.is_empty()
                || c.bounds.is_some();
            lasting.then_some(c)
        })
        .collect();
    if let (Some(f), Some(t)) = (&changes.focus, target) {
        let onto_target = f.to.as_deref() == Some(t);
        let text_target = before
            .iter()
            .find(|e| e.id == t)
            .is_some_and(|e| takes_text(&e.role, &e.states));
        if onto_target && !text_target {
            out.focus = None;
        }
    }
    out
}

/// The elements that went away and came back just as they were under new ids (an application
/// rebuilding its view: a file dialog's list refilled by its directory watcher): pairs of an
/// index into `changes.added` and the id of a removed element of `before` with the same role,
/// name, value, states and place. Such a pair shows nothing a person could see change.
pub fn rebuilt_pairs(changes: &Changes, before: &[Element]) -> Vec<(usize, String)> {
    let same = |a: &Element, b: &Element| {
        a.role == b.role && a.name == b.name && a.value == b.value && a.bounds == b.bounds && {
            let (mut x, mut y) = (a.states.clone(), b.states.clone());
            x.sort_unstable();
            y.sort_unstable();
            x == y
        }
    };
    let mut gone: Vec<&Element> = changes
        .removed
        .iter()
        .filter_map(|id| before.iter().find(|e| &e.id == id))
        .collect();
    let mut pairs = Vec::new();
    for (i, a) in changes.added.iter().enumerate() {
        if let Some(k) = gone.iter().position(|g| same(a, g)) {
            pairs.push((i, gone.swap_remove(k).id.clone()));
        }
    }
    pairs
}

/// Roles whose own state changing may be their passing look: GTK toggle buttons that an
/// application checks for a moment as a key's "pressed" look (galculator), Qt push buttons
/// pressed for 100 ms by an accessible press.
const MOMENTARY_ROLES: &[&str] = &["toggle_button", "push_button"];

/// How long such a state must last to count as the effect (galculator holds a key 105 ms, Qt's
/// animateClick 100 ms).
pub const PERSIST: std::time::Duration = std::time::Duration::from_millis(130);

/// Whether a control of this role may show a state only for a moment (see `MOMENTARY_ROLES`).
pub fn momentary_role(role: &str) -> bool {
    MOMENTARY_ROLES.contains(&role)
}

/// Whether `effect` (already without passing states) is nothing but a state change of the
/// action's target whose role may show it only for a moment: then it counts only if it is still
/// there [`PERSIST`] after the action.
pub fn only_momentary(effect: &Changes, intent: &Intent, before: &[Element]) -> bool {
    let Some(t) = intent.target() else {
        return false;
    };
    let momentary = before
        .iter()
        .find(|e| e.id == t)
        .is_some_and(|e| MOMENTARY_ROLES.contains(&e.role.as_str()));
    momentary
        && effect.opened.is_empty()
        && effect.closed.is_empty()
        && effect.added.is_empty()
        && effect.removed.is_empty()
        && effect.focus.is_none()
        && effect
            .changed
            .iter()
            .all(|c| c.id == t && c.name_was.is_none() && c.value.is_none() && c.bounds.is_none())
        // A look is a state put on for a moment: a state only taken off (a toggle button
        // unchecked) is no look (the end of the previous action's look is `without_reverts`').
        && effect.changed.iter().any(|c| !c.states_on.is_empty())
}

/// Whether the action's target is a control of a momentary role that took on a state it did not
/// have before the action (`all`: every change, passing states included): it may still be
/// showing its pressed look, and the next action waits until that is over (galculator ignores a key
/// pressed while another still looks pressed).
pub fn target_in_motion(all: &Changes, intent: &Intent, before: &[Element]) -> bool {
    let Some(t) = intent.target() else {
        return false;
    };
    let momentary = before
        .iter()
        .find(|e| e.id == t)
        .is_some_and(|e| MOMENTARY_ROLES.contains(&e.role.as_str()));
    momentary && all.changed.iter().any(|c| c.id == t && !c.states_on.is_empty())
}

/// Whether everything in `effect` is elements that moved or were resized (nothing appeared,
/// went, was renamed, changed value or state, and the focus stayed): an element that animates
/// by itself (GTK 4's widget factory has one that moves every frame, with no event) shows the
/// same, so such an effect counts only for elements that then stay where they went.
pub fn only_moves(effect: &Changes) -> bool {
    !effect.changed.is_empty()
        && effect.added.is_empty()
        && effect.removed.is_empty()
        && effect.opened.is_empty()
        && effect.closed.is_empty()
        && effect.focus.is_none()
        && effect.changed.iter().all(|c| {
            c.bounds.is_some()
                && c.name_was.is_none()
                && c.value.is_none()
                && c.states_on.is_empty()
                && c.states_off.is_empty()
        })
}

/// `effect` (see [`only_moves`]) less the elements that moved again in `again` (the changes
/// from the settled observation to one taken a moment later, with no action between): those
/// move by themselves.
pub fn without_moving(mut effect: Changes, again: &Changes) -> Changes {
    effect
        .changed
        .retain(|c| !again.changed.iter().any(|a| a.id == c.id && a.bounds.is_some()));
    effect
}

/// How long after the settled observation a move must still be where it went to count.
pub const STEADY: std::time::Duration = std::time::Duration::from_millis(120);

/// `effect` less the state changes that undo the ones the action before made (`previous`, its
/// raw changes): a key released after its 100 ms "pressed" look is the end of the previous
/// action's reaction, never the effect of this one.
pub fn without_reverts(mut effect: Changes, previous: &Changes) -> Changes {
    for c in &mut effect.changed {
        if let Some(p) = previous.changed.iter().find(|p| p.id == c.id) {
            c.states_on.retain(|s| !p.states_off.contains(s));
            c.states_off.retain(|s| !p.states_on.contains(s));
        }
    }
    effect.changed.retain(|c| {
        c.name_was.is_some()
            || c.value.is_some()
            || !c.states_on.is_empty()
            || !c.states_off.is_empty()
            || c.bounds.is_some()
    });
    effect
}

/// What was seen of one action once it settled (or its bound passed).
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// The acted-on window closed.
    WindowClosed,
    /// The window's elements and window list, compared with before the action: the changes
    /// that are the action's effect (passing states removed; maybe none), and whether its pixels
    /// changed (`None`: not compared; `Some(None)`: compared, the same).
    Elements {
        effect: Changes,
        pixels: Option<Option<Rect>>,
        /// How many elements were replaced by ones just like them (see [`rebuilt_pairs`]).
        rebuilt: usize,
    },
    /// The window has no elements (no accessibility): its pixels were compared.
    Pixels(Option<Rect>),
    /// Nothing could be compared, and why.
    Nothing(String),
}

/// The backend's own read-back of an action.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadBack {
    /// The effect the action was meant to have, read back (`text is now "a"`).
    Effect(String),
    /// Not checked, and why.
    None(String),
}

/// One action's effect and its evidence (or why it is `no_change` or `unverifiable`).
pub fn judge(read_back: &ReadBack, seen: &Seen) -> (Effect, String) {
    if let ReadBack::Effect(e) = read_back {
        return (Effect::Confirmed, e.clone());
    }
    let why = match read_back {
        ReadBack::None(w) => w.as_str(),
        ReadBack::Effect(_) => "",
    };
    match seen {
        Seen::WindowClosed => (Effect::Confirmed, "the window closed".into()),
        Seen::Elements { effect, .. } if !effect.is_empty() => (Effect::Confirmed, effect.evidence()),
        Seen::Elements {
            pixels: Some(Some(r)),
            ..
        } => (
            Effect::Unverifiable,
            format!(
                "no element, state, value or window changed, but pixels changed in {}x{} at {},{} \
                 (window-relative): look before relying on it",
                r.width, r.height, r.x, r.y
            ),
        ),
        Seen::Elements { rebuilt, .. } if *rebuilt > 0 => (
            Effect::Unverifiable,
            format!(
                "{rebuilt} element(s) were replaced by ones just like them (the application rebuilt \
                 its view, maybe on its own) and nothing else changed: look before relying on it"
            ),
        ),
        Seen::Elements { pixels: Some(None), .. } => (
            Effect::NoChange,
            "the window's elements, states, values, windows and pixels are the same after the action".into(),
        ),
        Seen::Elements { pixels: None, .. } => (
            Effect::Unverifiable,
            format!(
                "no element, state, value or window changed, and the window's pixels could not be \
                 compared ({why})"
            ),
        ),
        Seen::Pixels(Some(r)) => (
            Effect::Unverifiable,
            format!(
                "the window has no accessibility to read back; pixels changed in {}x{} at {},{} (window-relative)",
                r.width, r.height, r.x, r.y
            ),
        ),
        Seen::Pixels(None) => (
            Effect::Unverifiable,
            "the window has no accessibility to read back, and none of its pixels changed".into(),
        ),
        Seen::Nothing(w) => (Effect::Unverifiable, w.clone()),
    }
}

/// Whether a box of changed pixels (image pixels at `scale` per logical pixel) is no more than a
/// text caret blinking: a column at most 2 logical pixels wide and one line of text tall (the
/// focused field is not always known, the caret of an editor always blinks).
pub fn caret_blink(r: Rect, scale: f64) -> bool {
    let s = if scale > 0.0 { scale } else { 1.0 };
    (r.width as f64) <= 2.0 * s && (r.height as f64) <= 48.0 * s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::{element_changes, FocusMove};

    fn el(id: &str, role: &str, states: &[&str], parent: Option<&str>) -> Element {
        Element {
            id: id.into(),
            role: role.into(),
            name: id.into(),
            description: String::new(),
            value: None,
            states: states.iter().map(|s| s.to_string()).collect(),
            actions: vec![],
            bounds: Some(Rect::new(0, 0, 10, 10)),
            summary: None,
            parent: parent.map(str::to_string),
        }
    }

    fn press(t: &str) -> Intent {
        Intent::Press {
            target: Some(t.into()),
        }
    }

    #[test]
    fn a_pressed_button_alone_is_no_effect() {
        let before = [
            el("e0", "frame", &["active"], None),
            el("e1", "push_button", &[], Some("e0")),
        ];
        let after = [
            el("e0", "frame", &[], None),
            el("e1", "push_button", &["pressed", "focused"], Some("e0")),
        ];
        let all = element_changes(&before, &after, true);
        assert!(!all.is_empty());
        let eff = effect_changes(&all, &press("e1"), &before);
        assert!(eff.is_empty(), "{eff:?}");
        let (e, why) = judge(
            &ReadBack::None("pressed".into()),
            &Seen::Elements {
                effect: eff.clone(),
                pixels: Some(Some(Rect::new(0, 0, 10, 10))),
                rebuilt: 0,
            },
        );
        assert_eq!(e, Effect::Unverifiable, "{why}");
        let (e, _) = judge(
            &ReadBack::None("pressed".into()),
            &Seen::Elements {
                effect: eff,
                pixels: Some(None),
                rebuilt: 0,
            },
        );
        assert_eq!(e, Effect::NoChange);
    }

    #[test]
    fn a_keys_own_check_is_momentary_and_its_release_belongs_to_the_action_before() {
        let before = [el("e1", "toggle_button", &[], None), el("e2", "text", &[], None)];
        let after = [el("e1", "toggle_button", &["checked"], None), before[1].clone()];
        let on = element_changes(&before, &after, true);
        let eff = effect_changes(&on, &press("e1"), &before);
        assert!(only_momentary(&eff, &press("e1"), &before));
        // With the display's change beside it, it is an effect at once.
        let mut shown = after.clone();
        shown[1].name = "7".into();
        let both = effect_changes(&element_changes(&before, &shown, true), &press("e1"), &before);
        assert!(!only_momentary(&both, &press("e1"), &before));
        // A check box's check is its lasting state.
        let boxes = [el("e1", "check_box", &[], None)];
        let checked = [el("e1", "check_box", &["checked"], None)];
        let c = effect_changes(&element_changes(&boxes, &checked, true), &press("e1"), &boxes);
        assert!(!only_momentary(&c, &press("e1"), &boxes));
        // The release during the next action undoes the previous action's change: no evidence.
        let off = element_changes(&after, &before, true);
        assert!(without_reverts(off.clone(), &on).is_empty());
        assert!(!without_reverts(off.clone(), &Changes::default()).is_empty());
        // A toggle button unchecked by a click (no previous look): its state taken off is no
        // look, and nothing is in motion.
        let unchecked = effect_changes(&off, &press("e1"), &after);
        assert!(!only_momentary(&unchecked, &press("e1"), &after));
        assert!(!target_in_motion(&off, &press("e1"), &after));
        assert!(target_in_motion(&on, &press("e1"), &before));
    }

    #[test]
    fn a_control_becoming_enabled_is_no_effect_of_pressing_it() {
        let before = [el("e1", "push_button", &["disabled"], None)];
        let after = [el("e1", "push_button", &[], None)];
        let c = element_changes(&before, &after, true);
        assert!(effect_changes(&c, &press("e1"), &before).is_empty());
        // Another control enabled by the press is an effect.
        assert!(!effect_changes(&c, &press("e9"), &before).is_empty());
    }

    #[test]
    fn armed_is_passing_and_a_closed_window_is_an_effect() {
        assert!(is_passing("push_button", "armed"));
        assert!(is_passing("frame", "active"));
        assert!(!is_passing("push_button", "active"));
        assert!(!is_passing("toggle_button", "pressed"));
        assert!(!is_passing("check_box", "checked"));
        assert_eq!(
            judge(&ReadBack::None(String::new()), &Seen::WindowClosed).0,
            Effect::Confirmed
        );
    }

    #[test]
    fn a_label_that_changed_is_the_effect_of_a_press() {
        let mut label = el("e2", "label", &[], Some("e0"));
        let before = [
            el("e0", "frame", &[], None),
            el("e1", "push_button", &[], Some("e0")),
            label.clone(),
        ];
        label.name = "Count: 1".into();
        let after = [
            before[0].clone(),
            el("e1", "push_button", &["pressed"], Some("e0")),
            label,
        ];
        let eff = effect_changes(&element_changes(&before, &after, true), &press("e1"), &before);
        assert_eq!(eff.changed.len(), 1);
        let (e, why) = judge(
            &ReadBack::None(String::new()),
            &Seen::Elements {
                effect: eff,
                pixels: None,
                rebuilt: 0,
            },
        );
        assert_eq!(e, Effect::Confirmed);
        assert!(why.contains("e2 name"), "{why}");
    }

    #[test]
    fn focus_on_the_clicked_control_counts_only_for_text_fields() {
        let mut changes = Changes {
            focus: Some(FocusMove {
                from: None,
                to: Some("e1".into()),
            }),
            ..Changes::default()
        };
        let button = [el("e1", "push_button", &[], None)];
        assert!(effect_changes(&changes, &press("e1"), &button).is_empty());
        let entry = [el("e1", "text", &["editable"], None)];
        assert!(!effect_changes(&changes, &press("e1"), &entry).is_empty());
        // Focus moving elsewhere (Tab) is an effect of a key.
        changes.focus = Some(FocusMove {
            from: Some("e1".into()),
            to: Some("e2".into()),
        });
        assert!(!effect_changes(&changes, &Intent::Input { target: None }, &button).is_empty());
    }

    #[test]
    fn the_targets_own_boxes_moving_is_no_effect_but_others_are() {
        let before = [
            el("e1", "push_button", &[], None),
            el("e2", "label", &[], Some("e1")),
            el("e3", "label", &[], None),
        ];
        let mut after = before.clone();
        after[1].bounds = Some(Rect::new(1, 1, 10, 10));
        let c = element_changes(&before, &after, true);
        assert!(effect_changes(&c, &press("e1"), &before).is_empty());
        after[2].bounds = Some(Rect::new(0, 20, 10, 10));
        let c = element_changes(&before, &after, true);
        assert_eq!(effect_changes(&c, &press("e1"), &before).changed.len(), 1);
    }

    #[test]
    fn a_read_back_confirms_whatever_the_window_shows() {
        let (e, why) = judge(&ReadBack::Effect("text is now \"a\"".into()), &Seen::Pixels(None));
        assert_eq!((e, why.as_str()), (Effect::Confirmed, "text is now \"a\""));
    }

    #[test]
    fn the_element_under_a_point_is_the_smallest() {
        let mut outer = el("e0", "frame", &[], None);
        outer.bounds = Some(Rect::new(0, 0, 100, 100));
        let mut inner = el("e1", "push_button", &[], Some("e0"));
        inner.bounds = Some(Rect::new(10, 10, 20, 20));
        let all = [outer, inner];
        assert_eq!(
            element_at(&all, Point::new(15, 15)).map(|e| e.id.as_str()),
            Some("e1")
        );
        assert_eq!(
            element_at(&all, Point::new(50, 50)).map(|e| e.id.as_str()),
            Some("e0")
        );
        assert_eq!(element_at(&all, Point::new(500, 50)), None);
    }

    #[test]
    fn a_caret_is_a_thin_short_column() {
        assert!(caret_blink(Rect::new(4, 110, 1, 15), 1.0));
        assert!(caret_blink(Rect::new(4, 110, 4, 30), 2.0));
        assert!(!caret_blink(Rect::new(4, 110, 3, 15), 1.0));
        assert!(!caret_blink(Rect::new(4, 110, 1, 200), 1.0));
    }

    #[test]
    fn a_view_rebuilt_just_as_it_was_is_no_effect() {
        let before = [
            el("e0", "frame", &[], None),
            el("e1", "push_button", &[], Some("e0")),
            el("e2", "table_cell", &[], Some("e0")),
        ];
        let mut again = el("e9", "table_cell", &[], Some("e0"));
        again.name = "e2".into();
        let after = [before[0].clone(), before[1].clone(), again.clone()];
        let all = element_changes(&before, &after, true);
        assert_eq!((all.added.len(), all.removed.len()), (1, 1), "{all:?}");
        assert_eq!(rebuilt_pairs(&all, &before).len(), 1);
        let eff = effect_changes(&all, &press("e1"), &before);
        assert!(eff.is_empty(), "{eff:?}");
        let (e, why) = judge(
            &ReadBack::None("pressed".into()),
            &Seen::Elements {
                effect: eff,
                pixels: Some(None),
                rebuilt: 1,
            },
        );
        assert_eq!(e, Effect::Unverifiable, "{why}");
        // A cell that came back with another name is an effect.
        again.name = "other".into();
        let after = [before[0].clone(), before[1].clone(), again];
        let all = element_changes(&before, &after, true);
        assert!(rebuilt_pairs(&all, &before).is_empty());
        assert!(!effect_changes(&all, &press("e1"), &before).is_empty());
    }

    #[test]
    fn a_move_counts_only_where_the_element_then_stays() {
        let mut moved = el("e2", "filler", &[], None);
        moved.bounds = Some(Rect::new(30, 0, 10, 10));
        let before = [el("e1", "check_box", &[], None), el("e2", "filler", &[], None)];
        let after = [el("e1", "check_box", &[], None), moved.clone()];
        let effect = effect_changes(&element_changes(&before, &after, true), &press("e1"), &before);
        assert!(only_moves(&effect));
        // A moment later it moved again: it moves by itself, and nothing is left.
        let mut again = moved.clone();
        again.bounds = Some(Rect::new(5, 3, 10, 10));
        let later = [el("e1", "check_box", &[], None), again];
        let still = without_moving(effect.clone(), &element_changes(&after, &later, true));
        assert!(still.is_empty());
        // It stayed: the move is the effect.
        let stayed = without_moving(effect.clone(), &element_changes(&after, &after, true));
        assert_eq!(stayed, effect);
        // A state changed beside it: more than moves.
        let checked = [el("e1", "check_box", &["checked"], None), moved];
        let both = effect_changes(&element_changes(&before, &checked, true), &press("e1"), &before);
        assert!(!only_moves(&both));
        assert!(!only_moves(&Changes::default()));
    }
}
