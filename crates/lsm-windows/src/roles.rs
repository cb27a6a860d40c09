//! UI Automation control types and properties to lsm's roles and states.
//!
//! Roles and states use the spelling the Linux backend reports (AT-SPI's names with
//! underscores), so one vocabulary reaches the model from every platform; lsm-core then leaves
//! out the usual states and derives `disabled`, `hidden` and `read_only` the same way for all.

/// UI Automation control type ids (`UIA_ButtonControlTypeId` = 50000 …), in id order.
const CONTROL_TYPES: &[(i32, &str)] = &[
    (50000, "push_button"),   // Button
    (50001, "calendar"),      // Calendar
    (50002, "check_box"),     // CheckBox
    (50003, "combo_box"),     // ComboBox
    (50004, "text"),          // Edit
    (50005, "link"),          // Hyperlink
    (50006, "image"),         // Image
    (50007, "list_item"),     // ListItem
    (50008, "list"),          // List
    (50009, "menu"),          // Menu
    (50010, "menu_bar"),      // MenuBar
    (50011, "menu_item"),     // MenuItem
    (50012, "progress_bar"),  // ProgressBar
    (50013, "radio_button"),  // RadioButton
    (50014, "scroll_bar"),    // ScrollBar
    (50015, "slider"),        // Slider
    (50016, "spin_button"),   // Spinner
    (50017, "status_bar"),    // StatusBar
    (50018, "page_tab_list"), // Tab
    (50019, "page_tab"),      // TabItem
    (50020, "label"),         // Text
    (50021, "tool_bar"),      // ToolBar
    (50022, "tool_tip"),      // ToolTip
    (50023, "tree"),          // Tree
    (50024, "tree_item"),     // TreeItem
    (50025, "unknown"),       // Custom
    (50026, "grouping"),      // Group
    (50027, "thumb"),         // Thumb (of a scroll bar or slider)
    (50028, "table"),         // DataGrid
    (50029, "table_row"),     // DataItem
    (50030, "document_text"), // Document
    (50031, "push_button"),   // SplitButton (a button with a drop-down part)
    (50032, "frame"),         // Window
    (50033, "panel"),         // Pane
    (50034, "header"),        // Header
    (50035, "column_header"), // HeaderItem
    (50036, "table"),         // Table
    (50037, "title_bar"),     // TitleBar
    (50038, "separator"),     // Separator
    (50039, "panel"),         // SemanticZoom
    (50040, "tool_bar"),      // AppBar
];

/// The UI Automation `Window` control type: a top-level window, or a dialog inside one.
pub const WINDOW_CONTROL_TYPE: i32 = 50032;

/// lsm's role for a control type; a password edit is `password_text`, a window that is not the
/// observed top-level one is a `dialog`, anything unknown is `unknown`.
pub fn role_of(control_type: i32, is_password: bool, is_top_level: bool) -> &'static str {
    if is_password && control_type == 50004 {
        return "password_text";
    }
    if control_type == WINDOW_CONTROL_TYPE && !is_top_level {
        return "dialog";
    }
    CONTROL_TYPES
        .binary_search_by_key(&control_type, |(id, _)| *id)
        .map_or("unknown", |i| CONTROL_TYPES[i].1)
}

/// `ToggleState` of the Toggle pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    Off,
    On,
    Indeterminate,
}

impl Toggle {
    /// From `ToggleState_Off` (0), `_On` (1), `_Indeterminate` (2).
    pub fn from_raw(v: i32) -> Option<Self> {
        match v {
            0 => Some(Self::Off),
            1 => Some(Self::On),
            2 => Some(Self::Indeterminate),
            _ => None,
        }
    }
}

/// `ExpandCollapseState` of the ExpandCollapse pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expansion {
    Collapsed,
    Expanded,
    PartiallyExpanded,
    /// A node that cannot expand (a leaf of a tree).
    Leaf,
}

impl Expansion {
    /// From `ExpandCollapseState_Collapsed` (0), `_Expanded` (1), `_PartiallyExpanded` (2),
    /// `_LeafNode` (3).
    pub fn from_raw(v: i32) -> Option<Self> {
        match v {
            0 => Some(Self::Collapsed),
            1 => Some(Self::Expanded),
            2 => Some(Self::PartiallyExpanded),
            3 => Some(Self::Leaf),
            _ => None,
        }
    }
}

/// What UI Automation says of an element's state (cached in one request per walk).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UiaState {
    pub enabled: bool,
    pub offscreen: bool,
    pub has_keyboard_focus: bool,
    pub keyboard_focusable: bool,
    pub is_password: bool,
    pub toggle: Option<Toggle>,
    pub expansion: Option<Expansion>,
    /// `SelectionItem.IsSelected`, when the element supports the pattern.
    pub selected: Option<bool>,
    /// `Value.IsReadOnly`, when the element supports the Value pattern.
    pub value_read_only: Option<bool>,
    /// `Window.IsModal`, for windows.
    pub modal: bool,
}

/// The raw states in AT-SPI's spelling (lsm-core's `element_states` makes what a model sees).
pub fn states_of(role: &str, s: &UiaState) -> Vec<String> {
    let mut out: Vec<&str> = Vec::new();
    if s.enabled {
        out.extend(["enabled", "sensitive"]);
    }
    if !s.offscreen {
        out.extend(["showing", "visible"]);
    }
    if s.keyboard_focusable {
        out.push("focusable");
    }
    if s.has_keyboard_focus {
        out.push("focused");
    }
    match s.toggle {
        // A toggle button is pressed, a check box checked (as GTK and Qt report them).
        Some(Toggle::On) if role == "toggle_button" => out.push("pressed"),
        Some(Toggle::On) => out.push("checked"),
        Some(Toggle::Indeterminate) => out.push("indeterminate"),
        _ => {}
    }
    match s.expansion {
        Some(Expansion::Collapsed) => out.extend(["expandable", "collapsed"]),
        Some(Expansion::Expanded | Expansion::PartiallyExpanded) => out.extend(["expandable", "expanded"]),
        _ => {}
    }
    match s.selected {
        Some(true) => out.extend(["selectable", "selected"]),
        Some(false) => out.push("selectable"),
        None => {}
    }
    // Text that takes input says so; lsm-core calls a text role without it read-only.
    if s.value_read_only == Some(false) || (s.is_password && s.value_read_only.is_none()) {
        out.push("editable");
    }
    if s.value_read_only == Some(true) {
        // A slider or spinner that cannot be set says so too, not only text.
        out.push("read_only");
    }
    if s.modal {
        out.push("modal");
    }
    out.into_iter().map(str::to_string).collect()
}

/// A button with the Toggle pattern is a toggle button (UI Automation has no control type for
/// it); other roles stay as they are.
pub fn refine_role(role: &'static str, has_toggle: bool) -> &'static str {
    if role == "push_button" && has_toggle {
        "toggle_button"
    } else {
        role
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::states::element_states;

    #[test]
    fn the_table_is_sorted_and_complete() {
        assert!(CONTROL_TYPES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(CONTROL_TYPES.len(), 41, "50000..=50040");
        assert_eq!(CONTROL_TYPES.first().map(|c| c.0), Some(50000));
        assert_eq!(CONTROL_TYPES.last().map(|c| c.0), Some(50040));
    }

    #[test]
    fn roles_match_the_linux_spelling() {
        assert_eq!(role_of(50000, false, false), "push_button");
        assert_eq!(role_of(50002, false, false), "check_box");
        assert_eq!(role_of(50004, false, false), "text");
        assert_eq!(role_of(50004, true, false), "password_text");
        assert_eq!(role_of(50020, false, false), "label");
        assert_eq!(role_of(50019, false, false), "page_tab");
        assert_eq!(role_of(50032, false, true), "frame");
        assert_eq!(role_of(50032, false, false), "dialog");
        assert_eq!(role_of(12345, false, false), "unknown");
        assert_eq!(refine_role(role_of(50000, false, false), true), "toggle_button");
        assert_eq!(refine_role(role_of(50002, false, false), true), "check_box");
    }

    fn shown() -> UiaState {
        UiaState {
            enabled: true,
            keyboard_focusable: true,
            ..UiaState::default()
        }
    }

    #[test]
    fn a_usual_control_shows_no_state_and_a_disabled_one_says_so() {
        assert!(element_states("push_button", &states_of("push_button", &shown())).is_empty());
        let off = UiaState {
            enabled: false,
            ..shown()
        };
        assert_eq!(
            element_states("push_button", &states_of("push_button", &off)),
            ["disabled"]
        );
        let hidden = UiaState {
            offscreen: true,
            ..shown()
        };
        assert_eq!(
            element_states("push_button", &states_of("push_button", &hidden)),
            ["hidden"]
        );
    }

    #[test]
    fn toggles_expansion_selection_and_text() {
        let on = UiaState {
            toggle: Some(Toggle::On),
            has_keyboard_focus: true,
            ..shown()
        };
        assert_eq!(
            element_states("check_box", &states_of("check_box", &on)),
            ["focused", "checked"]
        );
        assert_eq!(
            element_states("toggle_button", &states_of("toggle_button", &on)),
            ["focused", "pressed"]
        );
        let mixed = UiaState {
            toggle: Some(Toggle::Indeterminate),
            ..shown()
        };
        assert_eq!(
            element_states("check_box", &states_of("check_box", &mixed)),
            ["indeterminate"]
        );
        let open = UiaState {
            expansion: Some(Expansion::Expanded),
            selected: Some(true),
            ..shown()
        };
        let s = element_states("tree_item", &states_of("tree_item", &open));
        assert!(
            s.contains(&"expanded".to_string()) && s.contains(&"selected".to_string()),
            "{s:?}"
        );
        let leaf = UiaState {
            expansion: Some(Expansion::Leaf),
            ..shown()
        };
        assert!(element_states("tree_item", &states_of("tree_item", &leaf)).is_empty());
        let editable = UiaState {
            value_read_only: Some(false),
            ..shown()
        };
        assert_eq!(
            element_states("text", &states_of("text", &editable)),
            ["editable"]
        );
        let read_only = UiaState {
            value_read_only: Some(true),
            ..shown()
        };
        assert_eq!(
            element_states("text", &states_of("text", &read_only)),
            ["read_only"]
        );
        assert_eq!(Toggle::from_raw(1), Some(Toggle::On));
        assert_eq!(Toggle::from_raw(7), None);
        assert_eq!(Expansion::from_raw(3), Some(Expansion::Leaf));
    }
}
