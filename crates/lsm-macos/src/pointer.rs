//! The mouse events of a click, double click, right click, drag or scroll as Quartz wants them:
//! a double click is two down/up pairs, the second carrying click state 2 (applications read
//! the click count from the event, not from the timing); a drag moves with the button's own
//! "dragged" event type in steps so applications see the motion. Platform-free so the Linux
//! tests run it; `cg::input` posts the steps.

use lsm_core::MouseButton;

/// Which button an event is for, as Quartz tells them apart (left, right, other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuartzButton {
    Left,
    Right,
    /// The middle button (Quartz's "other" button number 2).
    Middle,
}

impl QuartzButton {
    pub fn of(button: MouseButton) -> Self {
        match button {
            MouseButton::Left => Self::Left,
            MouseButton::Right => Self::Right,
            MouseButton::Middle => Self::Middle,
        }
    }
}

/// One mouse event to post, at a global point in points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MouseStep {
    Move {
        x: f64,
        y: f64,
    },
    Down {
        x: f64,
        y: f64,
        button: QuartzButton,
        click_state: i64,
    },
    Up {
        x: f64,
        y: f64,
        button: QuartzButton,
        click_state: i64,
    },
    Dragged {
        x: f64,
        y: f64,
        button: QuartzButton,
    },
}

/// The most clicks one action may ask for (a triple click selects a paragraph).
pub const MAX_CLICKS: u32 = 3;

/// A click of `count` (1 to [`MAX_CLICKS`]) at one point: a move there first (hover effects and
/// tooltips expect it), then one down/up pair per click, numbered.
pub fn click_steps(x: f64, y: f64, button: MouseButton, count: u32) -> Vec<MouseStep> {
    let button = QuartzButton::of(button);
    let mut steps = vec![MouseStep::Move { x, y }];
    for n in 1..=count.clamp(1, MAX_CLICKS) {
        let click_state = i64::from(n);
        steps.push(MouseStep::Down {
            x,
            y,
            button,
            click_state,
        });
        steps.push(MouseStep::Up {
            x,
            y,
            button,
            click_state,
        });
    }
    steps
}

/// How many intermediate positions a drag passes through (at least one per 20 points, at most 30).
fn drag_segments(from: (f64, f64), to: (f64, f64)) -> u32 {
    let distance = ((to.0 - from.0).powi(2) + (to.1 - from.1).powi(2)).sqrt();
    ((distance / 20.0).ceil() as u32).clamp(1, 30)
}

/// A drag from one point to another with the button held: move, down, dragged steps, up.
pub fn drag_steps(from: (f64, f64), to: (f64, f64), button: MouseButton) -> Vec<MouseStep> {
    let button = QuartzButton::of(button);
    let mut steps = vec![
        MouseStep::Move { x: from.0, y: from.1 },
        MouseStep::Down {
            x: from.0,
            y: from.1,
            button,
            click_state: 1,
        },
    ];
    let n = drag_segments(from, to);
    for i in 1..=n {
        let t = f64::from(i) / f64::from(n);
        steps.push(MouseStep::Dragged {
            x: from.0 + (to.0 - from.0) * t,
            y: from.1 + (to.1 - from.1) * t,
            button,
        });
    }
    steps.push(MouseStep::Up {
        x: to.0,
        y: to.1,
        button,
        click_state: 1,
    });
    steps
}

/// lsm's scroll deltas (positive y: down, as on the other platforms; in wheel notches) as
/// Quartz's line-unit wheel values (positive: up/left), vertical first.
pub fn scroll_wheels(delta_x: i32, delta_y: i32) -> (i32, i32) {
    (delta_y.saturating_neg(), delta_x.saturating_neg())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_double_click_is_two_numbered_pairs_after_a_move() {
        let steps = click_steps(10.0, 20.0, MouseButton::Left, 2);
        assert_eq!(steps.len(), 5);
        assert_eq!(steps[0], MouseStep::Move { x: 10.0, y: 20.0 });
        let states: Vec<i64> = steps
            .iter()
            .filter_map(|s| match s {
                MouseStep::Down { click_state, .. } | MouseStep::Up { click_state, .. } => Some(*click_state),
                _ => None,
            })
            .collect();
        assert_eq!(states, vec![1, 1, 2, 2]);
    }

    #[test]
    fn clicks_are_bounded_and_buttons_kept() {
        assert_eq!(click_steps(0.0, 0.0, MouseButton::Right, 0).len(), 3);
        assert_eq!(
            click_steps(0.0, 0.0, MouseButton::Left, 9).len(),
            1 + 2 * MAX_CLICKS as usize
        );
        assert!(matches!(
            click_steps(0.0, 0.0, MouseButton::Right, 1)[1],
            MouseStep::Down {
                button: QuartzButton::Right,
                ..
            }
        ));
    }

    #[test]
    fn a_drag_moves_in_steps_and_ends_where_asked() {
        let steps = drag_steps((0.0, 0.0), (100.0, 0.0), MouseButton::Left);
        let dragged = steps
            .iter()
            .filter(|s| matches!(s, MouseStep::Dragged { .. }))
            .count();
        assert_eq!(dragged, 5);
        assert_eq!(
            steps.last(),
            Some(&MouseStep::Up {
                x: 100.0,
                y: 0.0,
                button: QuartzButton::Left,
                click_state: 1
            })
        );
        // A drag of no distance still moves once with the button held.
        assert_eq!(drag_steps((5.0, 5.0), (5.0, 5.0), MouseButton::Left).len(), 4);
    }

    #[test]
    fn scrolling_down_is_a_negative_wheel() {
        assert_eq!(scroll_wheels(0, 3), (-3, 0));
        assert_eq!(scroll_wheels(-2, 0), (0, 2));
        assert_eq!(scroll_wheels(0, i32::MIN), (i32::MAX, 0));
    }
}
