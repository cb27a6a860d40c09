//! Which AX action or attribute carries out an lsm action on an element, and what to read back.
//!
//! Semantic first, as on Linux and Windows: an element's own AX action (AXPress, AXPick,
//! AXShowMenu …) or a settable attribute (AXValue, AXSelected, AXFocused) is used where one
//! fits, and only where none does is the action a pointer event (CGEvent) at the element's
//! centre: [`Method::Pointer`]. A click on an item of a list, tree, table or tab strip selects
//! it, as on the other platforms, since applications answer a change of AXSelected the way they
//! answer a click.

use lsm_core::backend::{BackendAction, Target};
use lsm_core::MouseButton;

/// What an element offers, read once with the walk: its AXActionNames and which attributes
/// are settable (AXUIElementIsAttributeSettable).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Supported {
    pub press: bool,
    pub pick: bool,
    pub confirm: bool,
    pub show_menu: bool,
    pub increment: bool,
    pub decrement: bool,
    pub raise: bool,
    pub cancel: bool,
    pub value_settable: bool,
    pub selected_settable: bool,
    pub focused_settable: bool,
    /// What AXValue holds (a number for sliders and steppers, a string for text).
    pub value_kind: ValueKind,
    /// AXMinValue and AXMaxValue, when the element reports them.
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// The type of an element's AXValue (CFNumber, CFString, CFBoolean, other or none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ValueKind {
    #[default]
    None,
    Number,
    Text,
    Other,
}

impl Supported {
    /// From the AXActionNames and the names of the settable attributes; the rest is left as
    /// given by the caller (value kind and bounds).
    pub fn from_names(actions: &[&str], settable: &[&str]) -> Self {
        let has = |n: &str| actions.contains(&n);
        let set = |n: &str| settable.contains(&n);
        Self {
            press: has("AXPress"),
            pick: has("AXPick"),
            confirm: has("AXConfirm"),
            show_menu: has("AXShowMenu"),
            increment: has("AXIncrement"),
            decrement: has("AXDecrement"),
            raise: has("AXRaise"),
            cancel: has("AXCancel"),
            value_settable: set("AXValue"),
            selected_settable: set("AXSelected"),
            focused_settable: set("AXFocused"),
            ..Self::default()
        }
    }
}

/// How an action is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// AXPress.
    Press,
    /// AXPick (menu items that do not offer AXPress).
    Pick,
    /// AXConfirm: a text field's default action, as Return.
    Confirm,
    /// AXShowMenu: the element's context menu.
    ShowMenu,
    /// AXSelected = true.
    Select,
    /// AXValue = a string.
    SetText,
    /// AXValue = a number.
    SetNumber,
    /// AXIncrement / AXDecrement until the value is reached (AXValue not settable).
    Step,
    /// AXFocused = true.
    Focus,
    /// AXRaise on the window and activation of its application (NSRunningApplication).
    RaiseWindow,
    /// A CGEvent at the element's centre or the given point.
    Pointer,
}

impl Method {
    /// The name results report (`method`), like Windows' `uia_invoke`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Press => "ax_press",
            Method::Pick => "ax_pick",
            Method::Confirm => "ax_confirm",
            Method::ShowMenu => "ax_show_menu",
            Method::Select => "ax_selected",
            Method::SetText => "ax_value",
            Method::SetNumber => "ax_value_number",
            Method::Step => "ax_increment",
            Method::Focus => "ax_focused",
            Method::RaiseWindow => "ax_raise",
            Method::Pointer => "cgevent",
        }
    }

    /// Whether the method works without the window in front (no pointer event).
    pub fn semantic(self) -> bool {
        self != Method::Pointer
    }
}

/// Roles whose click selects the item.
const ITEM_ROLES: &[&str] = &["list_item", "tree_item", "table_row", "table_cell"];

/// Roles where a click puts the caret: focusing them is the click's effect.
const TEXT_ROLES: &[&str] = &["text", "password_text"];

/// The method for a click with `button`, `count` times, on an element of lsm role `role`.
pub fn click_method(role: &str, s: &Supported, button: MouseButton, count: u32) -> Method {
    match (button, count) {
        (MouseButton::Left, 1) => left_click_method(role, s),
        (MouseButton::Right, 1) => right_click_method(s),
        // A double click (open a row, select a word) and a middle click have no AX action.
        _ => Method::Pointer,
    }
}

/// A plain left click.
pub fn left_click_method(role: &str, s: &Supported) -> Method {
    if ITEM_ROLES.contains(&role) && s.selected_settable {
        return Method::Select;
    }
    if TEXT_ROLES.contains(&role) {
        // AXPress on a text field does nothing useful; a click there means "type here".
        return if s.focused_settable {
            Method::Focus
        } else {
            Method::Pointer
        };
    }
    if s.press {
        // Buttons, check boxes, radio buttons, tabs (AXRadioButton), menu items, pop-ups.
        return Method::Press;
    }
    if s.pick {
        return Method::Pick;
    }
    if s.selected_settable {
        // A tab or item the application made selectable only.
        return Method::Select;
    }
    Method::Pointer
}

/// A right click: the element's context menu where it offers one.
pub fn right_click_method(s: &Supported) -> Method {
    if s.show_menu {
        Method::ShowMenu
    } else {
        Method::Pointer
    }
}

/// The method for Return on a focused text field that offers AXConfirm (a search field runs
/// its search); `None`: send the key.
pub fn return_key_method(role: &str, s: &Supported) -> Option<Method> {
    (TEXT_ROLES.contains(&role) || role == "combo_box")
        .then_some(Method::Confirm)
        .filter(|_| s.confirm)
}

/// The method for `focus` on an element; `None`: it takes no keyboard focus (a click may).
pub fn focus_method(s: &Supported) -> Option<Method> {
    s.focused_settable.then_some(Method::Focus)
}

/// The method for `focus` on a window (no element): raise it and activate its application,
/// since AXRaise alone leaves another application's window in front of the keyboard.
pub fn window_focus_method() -> Method {
    Method::RaiseWindow
}

/// How `set_value` is carried out, with the value to set.
#[derive(Debug, Clone, PartialEq)]
pub enum ValuePlan {
    /// AXValue = the text. A password field takes it too (so a model can fill a login form),
    /// but its value is never read back, only its length.
    Text(String),
    /// AXValue = the number, clamped to AXMinValue/AXMaxValue; `requested` is set when it was.
    Number { value: f64, requested: Option<f64> },
    /// AXIncrement/AXDecrement toward `target` (clamped as for `Number`), one step at a time
    /// with the value read between (see [`next_step`]).
    Step { target: f64, requested: Option<f64> },
}

impl ValuePlan {
    pub fn method(&self) -> Method {
        match self {
            ValuePlan::Text(_) => Method::SetText,
            ValuePlan::Number { .. } => Method::SetNumber,
            ValuePlan::Step { .. } => Method::Step,
        }
    }

    /// What the result says besides the method: that the number was clamped.
    pub fn note(&self, s: &Supported) -> Option<String> {
        let (value, requested) = match self {
            ValuePlan::Number { value, requested }
            | ValuePlan::Step {
                target: value,
                requested,
            } => (*value, (*requested)?),
            ValuePlan::Text(_) => return None,
        };
        let bound = if Some(value) == s.max && requested > value {
            "maximum"
        } else {
            "minimum"
        };
        Some(format!(
            "{requested} is outside the control's range; set to its {bound} {value}"
        ))
    }
}

/// The number in `value`, clamped to the element's bounds.
fn number_in_range(value: &str, s: &Supported) -> Result<(f64, Option<f64>), String> {
    let v = match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => v,
        _ => return Err(format!("this control takes a number; {value:?} is not one")),
    };
    let (c, clamped) = clamp_range(v, s.min, s.max);
    Ok((c, clamped.then_some(v)))
}

/// The plan for `set_value` with `value` on an element of lsm role `role`.
pub fn set_value_plan(role: &str, s: &Supported, value: &str) -> Result<ValuePlan, String> {
    let numeric = s.value_kind == ValueKind::Number;
    if s.value_settable && !numeric && s.value_kind != ValueKind::Other {
        // Text fields, combo boxes and search fields hold a string.
        return Ok(ValuePlan::Text(value.to_string()));
    }
    if s.value_settable && numeric {
        let (value, requested) = number_in_range(value, s)?;
        return Ok(ValuePlan::Number { value, requested });
    }
    if s.increment || s.decrement {
        // A stepper whose AXValue cannot be set still moves by its arrows.
        let (target, requested) = number_in_range(value, s)?;
        return Ok(ValuePlan::Step { target, requested });
    }
    Err(match role {
        "check_box" | "radio_button" | "toggle_button" | "switch" => {
            "the control is a toggle without a value to set; click it to change it".into()
        }
        "combo_box" => "the pop-up's value cannot be set; click it and pick a menu item".into(),
        _ if s.value_kind != ValueKind::None => "the control's value is read-only".into(),
        _ => "the control has no value to set (no settable AXValue, no AXIncrement)".into(),
    })
}

/// A value is set only within the bounds the element reports: the value clamped to them, and
/// whether it had to be (the result says so).
pub fn clamp_range(v: f64, min: Option<f64>, max: Option<f64>) -> (f64, bool) {
    let lo = min.filter(|m| m.is_finite()).unwrap_or(f64::NEG_INFINITY);
    let hi = max.filter(|m| m.is_finite()).unwrap_or(f64::INFINITY);
    if lo <= hi && (v < lo || v > hi) {
        (v.clamp(lo, hi), true)
    } else {
        (v, false)
    }
}

/// Steps a [`ValuePlan::Step`] takes at most: a stepper of 0..1000 by 1 is not walked across.
pub const MAX_STEPS: u32 = 200;

/// What to do next while stepping toward a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Increment,
    Decrement,
    /// The value is at the target, or the next step would pass it (steps larger than the
    /// distance left): stop here.
    Done,
    /// The last step did not change the value (a bound, or the action did nothing).
    Stuck,
    /// [`MAX_STEPS`] were taken.
    TooMany,
}

/// The next step from `current` toward `target`, `previous` being the value before the last
/// step (None before the first) and `taken` the steps so far.
pub fn next_step(current: f64, target: f64, previous: Option<f64>, taken: u32) -> Step {
    if current == target {
        return Step::Done;
    }
    if let Some(p) = previous {
        if p == current {
            return Step::Stuck;
        }
        // The last step went past the target: it lies between two steps, stop at the nearer
        // side already passed (the backend reports the value it got).
        if (p < target) != (current < target) {
            return Step::Done;
        }
    }
    if taken >= MAX_STEPS {
        return Step::TooMany;
    }
    if current < target {
        Step::Increment
    } else {
        Step::Decrement
    }
}

/// What to read after a method to judge its effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadBack {
    /// AXValue (a toggle's state, a text, a number).
    Value,
    /// AXNumberOfCharacters only: a password field's text is never read.
    Length,
    /// AXSelected of the element.
    Selected,
    /// AXFocused of the element.
    Focused,
    /// AXMain/AXFocused of the window and the frontmost application.
    WindowFront,
    /// Nothing of the element: what changed is seen in the next observation of the window
    /// (a button's effect is elsewhere, a menu opened).
    Window,
}

/// Roles whose AXValue changes when pressed.
const TOGGLE_ROLES: &[&str] = &["check_box", "radio_button", "toggle_button", "page_tab"];

/// What to read back after `method` on an element of lsm role `role`.
pub fn read_back(method: Method, role: &str) -> ReadBack {
    match method {
        Method::Press | Method::Pick if TOGGLE_ROLES.contains(&role) => ReadBack::Value,
        Method::SetText | Method::SetNumber | Method::Step if role == "password_text" => ReadBack::Length,
        Method::SetText | Method::SetNumber | Method::Step => ReadBack::Value,
        Method::Select => ReadBack::Selected,
        Method::Focus => ReadBack::Focused,
        Method::RaiseWindow => ReadBack::WindowFront,
        Method::Press | Method::Pick | Method::Confirm | Method::ShowMenu | Method::Pointer => {
            ReadBack::Window
        }
    }
}

/// The method for a whole action when its element (if any) has lsm role `role` and offers `s`;
/// `set_value` is planned by [`set_value_plan`] and keys by the `keys` module, so they answer
/// with the method the plan would use or an error. Point targets are always pointer events.
pub fn action_method(action: &BackendAction, role: &str, s: &Supported) -> Result<Method, String> {
    let on_element = |t: &Target| matches!(t, Target::Element(_));
    Ok(match action {
        BackendAction::Click {
            target,
            button,
            count,
        } if on_element(target) => click_method(role, s, *button, *count),
        BackendAction::SetValue { value, .. } => set_value_plan(role, s, value)?.method(),
        BackendAction::Focus { element: Some(_) } => focus_method(s).ok_or_else(|| {
            "the element takes no keyboard focus (AXFocused is not settable); click it instead".to_string()
        })?,
        BackendAction::Focus { element: None } => window_focus_method(),
        // Typing focuses the element first, if it can be.
        BackendAction::Type { element: Some(_), .. } => focus_method(s).unwrap_or(Method::Pointer),
        // Moves, drags, scrolls, keys and clicks at a point are input events.
        _ => Method::Pointer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::geometry::Point;
    use lsm_core::state::ElementRef;

    fn element() -> ElementRef {
        ElementRef {
            id: "e1".into(),
            native: String::new(),
            key: String::new(),
            role: String::new(),
            name: String::new(),
            bounds: None,
            states: vec![],
            actions: vec![],
        }
    }

    fn with(actions: &[&str], settable: &[&str]) -> Supported {
        Supported::from_names(actions, settable)
    }

    #[test]
    fn names_are_read_into_supported() {
        let s = with(
            &["AXPress", "AXShowMenu", "AXIncrement"],
            &["AXValue", "AXFocused"],
        );
        assert!(s.press && s.show_menu && s.increment && !s.pick && !s.decrement);
        assert!(s.value_settable && s.focused_settable && !s.selected_settable);
    }

    #[test]
    fn clicks_use_the_elements_own_action() {
        let button = with(&["AXPress"], &[]);
        let left = MouseButton::Left;
        assert_eq!(click_method("push_button", &button, left, 1), Method::Press);
        assert_eq!(click_method("check_box", &button, left, 1), Method::Press);
        assert_eq!(click_method("menu_item", &button, left, 1), Method::Press);
        let pick_only = with(&["AXPick", "AXCancel"], &[]);
        assert_eq!(click_method("menu_item", &pick_only, left, 1), Method::Pick);
        let row = with(&["AXShowMenu"], &["AXSelected"]);
        assert_eq!(click_method("table_row", &row, left, 1), Method::Select);
        assert_eq!(click_method("tree_item", &row, left, 1), Method::Select);
        // A tab presses (AXRadioButton); one that only takes AXSelected is selected.
        assert_eq!(click_method("page_tab", &button, left, 1), Method::Press);
        assert_eq!(
            click_method("page_tab", &with(&[], &["AXSelected"]), left, 1),
            Method::Select
        );
        let field = with(&["AXConfirm", "AXShowMenu"], &["AXValue", "AXFocused"]);
        assert_eq!(click_method("text", &field, left, 1), Method::Focus);
        assert_eq!(
            click_method("text", &with(&["AXPress"], &[]), left, 1),
            Method::Pointer
        );
        assert_eq!(
            click_method("label", &Supported::default(), left, 1),
            Method::Pointer
        );
    }

    #[test]
    fn right_double_and_middle_clicks() {
        let menu = with(&["AXPress", "AXShowMenu"], &[]);
        assert_eq!(
            click_method("push_button", &menu, MouseButton::Right, 1),
            Method::ShowMenu
        );
        assert_eq!(
            click_method("push_button", &with(&["AXPress"], &[]), MouseButton::Right, 1),
            Method::Pointer
        );
        assert_eq!(
            click_method("table_row", &menu, MouseButton::Left, 2),
            Method::Pointer
        );
        assert_eq!(
            click_method("link", &menu, MouseButton::Middle, 1),
            Method::Pointer
        );
        assert!(!Method::Pointer.semantic() && Method::Press.semantic());
        assert_eq!(Method::Press.name(), "ax_press");
        assert_eq!(Method::Pointer.name(), "cgevent");
    }

    #[test]
    fn return_and_focus() {
        let field = with(&["AXConfirm"], &["AXFocused"]);
        assert_eq!(return_key_method("text", &field), Some(Method::Confirm));
        assert_eq!(return_key_method("push_button", &field), None);
        assert_eq!(return_key_method("text", &with(&[], &[])), None);
        assert_eq!(focus_method(&field), Some(Method::Focus));
        assert_eq!(focus_method(&Supported::default()), None);
        assert_eq!(window_focus_method(), Method::RaiseWindow);
    }

    fn refusal(role: &str, s: &Supported, value: &str) -> String {
        set_value_plan(role, s, value).err().unwrap_or_default()
    }

    fn number(value: f64, requested: Option<f64>) -> Result<ValuePlan, String> {
        Ok(ValuePlan::Number { value, requested })
    }

    fn slider(min: f64, max: f64) -> Supported {
        Supported {
            value_kind: ValueKind::Number,
            min: Some(min),
            max: Some(max),
            ..with(&["AXIncrement", "AXDecrement"], &["AXValue"])
        }
    }

    #[test]
    fn set_value_takes_text_or_a_clamped_number() {
        let field = Supported {
            value_kind: ValueKind::Text,
            ..with(&[], &["AXValue"])
        };
        let plan = set_value_plan("text", &field, "héllo 日本語");
        assert_eq!(plan, Ok(ValuePlan::Text("héllo 日本語".into())));
        // A password field is set; only its length is read back.
        assert_eq!(
            set_value_plan("password_text", &field, "s3cret").map(|p| p.method()),
            Ok(Method::SetText)
        );
        assert_eq!(read_back(Method::SetText, "password_text"), ReadBack::Length);
        let s = slider(0.0, 100.0);
        assert_eq!(set_value_plan("slider", &s, " 42.5 "), number(42.5, None));
        let high = set_value_plan("slider", &s, "150");
        assert_eq!(high, number(100.0, Some(150.0)));
        let note = high.ok().and_then(|p| p.note(&s)).unwrap_or_default();
        assert!(note.contains("150") && note.contains("maximum 100"), "{note}");
        let low = set_value_plan("slider", &s, "-3").ok().and_then(|p| p.note(&s));
        assert!(low.is_some_and(|n| n.contains("minimum 0")));
        assert!(refusal("slider", &s, "loud").contains("number"));
        assert!(set_value_plan("slider", &s, "NaN").is_err());
        assert!(set_value_plan("slider", &s, "inf").is_err());
    }

    #[test]
    fn steppers_step_and_others_refuse_with_a_reason() {
        let stepper = Supported {
            value_settable: false,
            ..slider(0.0, 10.0)
        };
        assert_eq!(
            set_value_plan("spin_button", &stepper, "12"),
            Ok(ValuePlan::Step {
                target: 10.0,
                requested: Some(12.0)
            })
        );
        let toggle = Supported {
            value_kind: ValueKind::Number,
            ..with(&["AXPress"], &[])
        };
        assert!(refusal("check_box", &toggle, "1").contains("click it"));
        let popup = Supported {
            value_kind: ValueKind::Text,
            ..with(&["AXPress", "AXShowMenu"], &[])
        };
        assert!(refusal("combo_box", &popup, "Large").contains("menu item"));
        assert!(refusal("label", &popup, "x").contains("read-only"));
        assert!(refusal("image", &Supported::default(), "x").contains("no value"));
    }

    #[test]
    fn stepping_stops_at_the_target_a_bound_or_the_limit() {
        assert_eq!(next_step(3.0, 5.0, None, 0), Step::Increment);
        assert_eq!(next_step(7.0, 5.0, None, 0), Step::Decrement);
        assert_eq!(next_step(5.0, 5.0, Some(4.0), 1), Step::Done);
        // Steps of 2 from 4 pass 5: stop at 6 rather than swing back and forth.
        assert_eq!(next_step(6.0, 5.0, Some(4.0), 1), Step::Done);
        assert_eq!(next_step(4.0, 5.0, Some(4.0), 1), Step::Stuck);
        assert_eq!(next_step(4.0, 500.0, Some(3.0), MAX_STEPS), Step::TooMany);
        assert_eq!(clamp_range(5.0, None, None), (5.0, false));
        assert_eq!(clamp_range(-1.0, Some(0.0), None), (0.0, true));
        assert_eq!(clamp_range(5.0, Some(10.0), Some(0.0)), (5.0, false));
    }

    #[test]
    fn what_is_read_back() {
        assert_eq!(read_back(Method::Press, "check_box"), ReadBack::Value);
        assert_eq!(read_back(Method::Press, "push_button"), ReadBack::Window);
        assert_eq!(read_back(Method::Pick, "menu_item"), ReadBack::Window);
        assert_eq!(read_back(Method::SetNumber, "slider"), ReadBack::Value);
        assert_eq!(read_back(Method::Step, "spin_button"), ReadBack::Value);
        assert_eq!(read_back(Method::Select, "table_row"), ReadBack::Selected);
        assert_eq!(read_back(Method::Focus, "text"), ReadBack::Focused);
        assert_eq!(read_back(Method::RaiseWindow, "frame"), ReadBack::WindowFront);
        assert_eq!(read_back(Method::Pointer, "check_box"), ReadBack::Window);
    }

    #[test]
    fn whole_actions() {
        let el = || Target::Element(element());
        let button = with(&["AXPress"], &["AXFocused"]);
        let click = BackendAction::Click {
            target: el(),
            button: MouseButton::Left,
            count: 1,
        };
        assert_eq!(action_method(&click, "push_button", &button), Ok(Method::Press));
        let at_point = BackendAction::Click {
            target: Target::Point(Point { x: 3, y: 4 }),
            button: MouseButton::Left,
            count: 1,
        };
        assert_eq!(
            action_method(&at_point, "push_button", &button),
            Ok(Method::Pointer)
        );
        let focus = BackendAction::Focus {
            element: Some(element()),
        };
        assert_eq!(action_method(&focus, "text", &button), Ok(Method::Focus));
        assert!(action_method(&focus, "label", &Supported::default())
            .unwrap_err()
            .contains("no keyboard focus"));
        let window = BackendAction::Focus { element: None };
        assert_eq!(action_method(&window, "", &button), Ok(Method::RaiseWindow));
        let scroll = BackendAction::Scroll {
            target: Some(el()),
            delta_x: 0,
            delta_y: 3,
        };
        assert_eq!(action_method(&scroll, "list", &button), Ok(Method::Pointer));
        let set = BackendAction::SetValue {
            element: element(),
            value: "x".into(),
        };
        assert!(action_method(&set, "push_button", &button).is_err());
    }
}
