//! Accessibility (AX) roles, subroles and attributes to lsm's roles and states.
//!
//! Roles and states use the spelling the Linux and Windows backends report (AT-SPI's names with
//! underscores), the same name for the same kind of control on every platform, so a model
//! learns one vocabulary; lsm-core then leaves out the usual states and derives `disabled`,
//! `hidden` and `read_only` alike for all. Containers that carry nothing (an unnamed `grouping`,
//! `panel`) are folded away by lsm-core's `folds_raw`, as on Windows: no list of our own.

/// What the element's AXSubrole is for the roles whose meaning it changes.
fn button_role(subrole: Option<&str>) -> &'static str {
    match subrole {
        // A switch (NSSwitch) or a toggle is on or off, not a one-shot button.
        Some("AXSwitch" | "AXToggle") => "toggle_button",
        // Close, minimize, zoom, full-screen, toolbar and sort (table header) buttons are
        // buttons: the subrole only says which one, the name says it to the model.
        _ => "push_button",
    }
}

/// Window-like roles: a dialog is what macOS calls one (AXDialog, AXSystemDialog, a sheet),
/// everything else top-level is a `frame` as on Windows.
fn window_role(subrole: Option<&str>) -> &'static str {
    match subrole {
        Some("AXDialog" | "AXSystemDialog") => "dialog",
        // AXStandardWindow, AXFloatingWindow (a palette or inspector), unknown ones.
        _ => "frame",
    }
}

/// lsm's role for an element whose AXRole is `ax_role`, AXSubrole `subrole`, and whose
/// parent's AXRole is `parent_role` (a radio button in a tab group is a tab even when the
/// application set no AXTabButton subrole). Anything unknown is `unknown`.
pub fn role_of(ax_role: &str, subrole: Option<&str>, parent_role: Option<&str>) -> &'static str {
    match ax_role {
        "AXButton" => button_role(subrole),
        "AXCheckBox" => match subrole {
            Some("AXSwitch" | "AXToggle") => "toggle_button",
            _ => "check_box",
        },
        "AXRadioButton" if subrole == Some("AXTabButton") || parent_role == Some("AXTabGroup") => "page_tab",
        "AXRadioButton" => "radio_button",
        "AXTextField" if subrole == Some("AXSecureTextField") => "password_text",
        // Some applications (and WebKit) report the secure field as its own role.
        "AXSecureTextField" => "password_text",
        // A search field (AXSearchField) is a text field with a magnifier and a clear button.
        "AXTextField" | "AXTextArea" => "text",
        "AXStaticText" => "label",
        // A pop-up button is a drop-down list of choices: UI Automation's ComboBox.
        "AXPopUpButton" | "AXComboBox" => "combo_box",
        // A button with a menu, like UI Automation's SplitButton.
        "AXMenuButton" => "push_button",
        "AXSlider" => "slider",
        "AXIncrementor" | "AXStepper" => "spin_button",
        "AXTable" => "table",
        // A collection view's grid of items is a table of cells, as a DataGrid is.
        "AXGrid" => "table",
        // An outline view and a column browser show a hierarchy: UI Automation's Tree.
        "AXOutline" | "AXBrowser" => "tree",
        "AXRow" if subrole == Some("AXOutlineRow") => "tree_item",
        "AXRow" => "table_row",
        "AXCell" => "table_cell",
        // A column repeats the cells its table's rows hold; see [`skips_children`].
        "AXColumn" => "table_column",
        "AXList" => "list",
        "AXGroup" => match subrole {
            // Web content's ARIA dialogs.
            Some("AXApplicationDialog" | "AXApplicationAlertDialog" | "AXApplicationAlert") => "dialog",
            _ => "grouping",
        },
        "AXLayoutArea" | "AXMatte" | "AXDrawer" => "panel",
        "AXScrollArea" => "scroll_pane",
        "AXScrollBar" => "scroll_bar",
        "AXToolbar" => "tool_bar",
        "AXTabGroup" => "page_tab_list",
        "AXWindow" => window_role(subrole),
        // A sheet is a document-modal dialog attached to its window.
        "AXSheet" => "dialog",
        // A popover floats over its window like a popup (Linux's `window`).
        "AXPopover" => "window",
        "AXMenuBar" => "menu_bar",
        // Windows reports a menu bar's entries as menu items too.
        "AXMenuBarItem" | "AXMenuItem" => "menu_item",
        "AXMenu" => "menu",
        "AXImage" => "image",
        "AXLink" => "link",
        // A busy indicator is a progress bar without a value (indeterminate).
        "AXProgressIndicator" | "AXBusyIndicator" => "progress_bar",
        "AXSplitGroup" => "split_pane",
        "AXSplitter" => "separator",
        "AXWebArea" => "document_web",
        "AXHeading" => "heading",
        // Opens and closes what follows it (GTK's expander is a toggle button too).
        "AXDisclosureTriangle" => "toggle_button",
        // The knob of a scroll bar or slider: UI Automation's Thumb.
        "AXValueIndicator" | "AXHandle" => "thumb",
        // A colour well is a button that opens the colour panel.
        "AXColorWell" => "push_button",
        // Windows calls date controls `calendar`.
        "AXDateField" | "AXTimeField" => "calendar",
        "AXLevelIndicator" | "AXRelevanceIndicator" | "AXRatingIndicator" => "level_bar",
        "AXHelpTag" => "tool_tip",
        "AXApplication" => "application",
        _ => "unknown",
    }
}

/// Whether a walk leaves out the children of an element with this AXRole: an AXColumn's
/// children are the cells its table's rows already hold, read twice otherwise.
pub fn skips_children(ax_role: &str) -> bool {
    ax_role == "AXColumn"
}

/// Whether an element's AXValue may be read at all: a secure text field's never is (it would
/// copy a password out of the application), only its length (AXNumberOfCharacters).
pub fn value_readable(ax_role: &str, subrole: Option<&str>) -> bool {
    !(ax_role == "AXSecureTextField" || subrole == Some("AXSecureTextField"))
}

/// What a password field shows instead of its text: one "•" per character, as on Linux.
/// Negative counts (an application's error value) show nothing.
pub fn masked(char_count: i64) -> String {
    usize::try_from(char_count).map_or_else(|_| String::new(), |n| "•".repeat(n))
}

/// Whether the AXValue of an element with this AXRole is a toggle's 0/1/2 (off/on/mixed)
/// rather than its content.
pub fn value_is_toggle(ax_role: &str) -> bool {
    matches!(ax_role, "AXCheckBox" | "AXRadioButton" | "AXDisclosureTriangle")
}

/// An AXValue of a check box, radio button, switch or disclosure triangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    Off,
    On,
    Mixed,
}

impl Toggle {
    /// From the AXValue number: 0 off, 1 on, 2 mixed (NSControlStateValueMixed is -1 in
    /// AppKit but AX reports 2).
    pub fn from_value(v: i64) -> Option<Self> {
        match v {
            0 => Some(Self::Off),
            1 => Some(Self::On),
            2 => Some(Self::Mixed),
            _ => None,
        }
    }
}

/// What Accessibility says of an element's state; `None` where the attribute is missing (not
/// every element has each).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AxState {
    /// AXEnabled. Missing means enabled: many static elements do not report it.
    pub enabled: Option<bool>,
    /// AXFocused.
    pub focused: Option<bool>,
    /// Whether AXFocused is settable: the element takes keyboard focus.
    pub focus_settable: bool,
    /// AXSelected.
    pub selected: Option<bool>,
    /// AXExpanded (combo boxes, menus) or AXDisclosing (outline rows). `None` for a leaf row
    /// (no disclosure triangle): AXDisclosing is false there too, and it is not `collapsed`.
    pub expanded: Option<bool>,
    /// AXValue for the roles where [`value_is_toggle`].
    pub toggle: Option<Toggle>,
    /// Whether AXValue is settable (text, sliders, steppers).
    pub value_settable: Option<bool>,
    /// AXIncrement/AXDecrement are offered: a stepper's value changes even when AXValue is not
    /// settable.
    pub steps: bool,
    /// AXMinimized (windows).
    pub minimized: Option<bool>,
    /// AXModal (windows, sheets).
    pub modal: Option<bool>,
    /// AXRequired (form fields).
    pub required: Option<bool>,
    /// AXHidden, or the walk found the element outside what is shown.
    pub hidden: bool,
    /// AXMenuItemMarkChar: a check mark or dot on a menu item (non-empty means checked).
    pub mark_char: Option<String>,
}

/// Whether an lsm role holds text a user types.
fn text_role(role: &str) -> bool {
    matches!(role, "text" | "password_text" | "combo_box" | "spin_button")
}

/// The raw states in AT-SPI's spelling for an element of AXRole `ax_role` and lsm role `role`
/// (lsm-core's `element_states` makes what a model sees).
pub fn states_of(ax_role: &str, role: &str, s: &AxState) -> Vec<String> {
    let mut out: Vec<&str> = Vec::new();
    if s.enabled != Some(false) {
        out.extend(["enabled", "sensitive"]);
    }
    if !s.hidden {
        out.extend(["showing", "visible"]);
    }
    if s.focus_settable {
        out.push("focusable");
    }
    if s.focused == Some(true) {
        out.push("focused");
    }
    if ax_role == "AXDisclosureTriangle" {
        // Its value says whether what it discloses is open.
        match s
            .toggle
            .or(s.expanded.map(|e| if e { Toggle::On } else { Toggle::Off }))
        {
            Some(Toggle::On) => out.extend(["expandable", "expanded"]),
            Some(Toggle::Off) => out.extend(["expandable", "collapsed"]),
            _ => {}
        }
    } else {
        match s.toggle {
            // A toggle button is pressed, a check box checked (as GTK, Qt and Windows say).
            Some(Toggle::On) if role == "toggle_button" => out.push("pressed"),
            Some(Toggle::On) => out.push("checked"),
            Some(Toggle::Mixed) => out.push("indeterminate"),
            _ => {}
        }
        match s.expanded {
            Some(true) => out.extend(["expandable", "expanded"]),
            // A row that cannot open reports no AXDisclosing; one that is closed says false.
            Some(false) => out.extend(["expandable", "collapsed"]),
            None => {}
        }
    }
    if s.mark_char.as_deref().is_some_and(|m| !m.trim().is_empty()) {
        out.push("checked");
    }
    match s.selected {
        Some(true) => out.extend(["selectable", "selected"]),
        Some(false) => out.push("selectable"),
        None => {}
    }
    if text_role(role) {
        // A stepper's value changes by its arrows even when AXValue cannot be set.
        if s.value_settable == Some(true) || (role == "spin_button" && s.steps) {
            out.push("editable");
        }
        if ax_role == "AXTextArea" {
            out.push("multi_line");
        }
    } else if s.value_settable == Some(false) && matches!(role, "slider" | "level_bar") {
        // A slider that cannot be set says so, as on Windows.
        out.push("read_only");
    }
    if s.minimized == Some(true) {
        out.push("minimized");
    }
    if s.modal == Some(true) {
        out.push("modal");
    }
    if s.required == Some(true) {
        out.push("required");
    }
    if ax_role == "AXBusyIndicator" {
        out.push("busy");
    }
    out.into_iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::states::{element_states, folds_raw};

    #[test]
    fn controls_match_the_windows_names() {
        assert_eq!(role_of("AXButton", None, None), "push_button");
        for sub in [
            "AXCloseButton",
            "AXMinimizeButton",
            "AXZoomButton",
            "AXFullScreenButton",
            "AXToolbarButton",
            "AXSortButton",
        ] {
            assert_eq!(role_of("AXButton", Some(sub), None), "push_button", "{sub}");
        }
        assert_eq!(role_of("AXCheckBox", None, None), "check_box");
        assert_eq!(role_of("AXCheckBox", Some("AXSwitch"), None), "toggle_button");
        assert_eq!(role_of("AXCheckBox", Some("AXToggle"), None), "toggle_button");
        assert_eq!(role_of("AXRadioButton", None, Some("AXGroup")), "radio_button");
        assert_eq!(role_of("AXRadioButton", Some("AXTabButton"), None), "page_tab");
        assert_eq!(role_of("AXRadioButton", None, Some("AXTabGroup")), "page_tab");
        assert_eq!(role_of("AXTabGroup", None, None), "page_tab_list");
        assert_eq!(role_of("AXPopUpButton", None, None), "combo_box");
        assert_eq!(role_of("AXComboBox", None, None), "combo_box");
        assert_eq!(role_of("AXMenuButton", None, None), "push_button");
        assert_eq!(role_of("AXSlider", None, None), "slider");
        assert_eq!(role_of("AXIncrementor", None, None), "spin_button");
        assert_eq!(role_of("AXStepper", None, None), "spin_button");
        assert_eq!(role_of("AXImage", None, None), "image");
        assert_eq!(role_of("AXLink", None, None), "link");
        assert_eq!(role_of("AXProgressIndicator", None, None), "progress_bar");
        assert_eq!(role_of("AXBusyIndicator", None, None), "progress_bar");
        assert_eq!(role_of("AXSplitGroup", None, None), "split_pane");
        assert_eq!(role_of("AXSplitter", None, None), "separator");
        assert_eq!(role_of("AXWebArea", None, None), "document_web");
        assert_eq!(role_of("AXHeading", None, None), "heading");
        assert_eq!(role_of("AXDisclosureTriangle", None, None), "toggle_button");
        assert_eq!(role_of("AXValueIndicator", None, None), "thumb");
        assert_eq!(role_of("AXColorWell", None, None), "push_button");
        assert_eq!(role_of("AXDateField", None, None), "calendar");
        assert_eq!(role_of("AXLevelIndicator", None, None), "level_bar");
        assert_eq!(role_of("AXUnknown", None, None), "unknown");
        assert_eq!(role_of("AXSomethingNew", Some("AXWhatever"), None), "unknown");
    }

    #[test]
    fn text_tables_windows_and_menus() {
        assert_eq!(role_of("AXTextField", None, None), "text");
        assert_eq!(role_of("AXTextField", Some("AXSearchField"), None), "text");
        assert_eq!(
            role_of("AXTextField", Some("AXSecureTextField"), None),
            "password_text"
        );
        assert_eq!(role_of("AXSecureTextField", None, None), "password_text");
        assert_eq!(role_of("AXTextArea", None, None), "text");
        assert_eq!(role_of("AXStaticText", None, None), "label");
        assert_eq!(role_of("AXTable", None, None), "table");
        assert_eq!(role_of("AXGrid", None, None), "table");
        assert_eq!(role_of("AXOutline", None, None), "tree");
        assert_eq!(role_of("AXBrowser", None, None), "tree");
        assert_eq!(role_of("AXRow", None, Some("AXTable")), "table_row");
        assert_eq!(
            role_of("AXRow", Some("AXOutlineRow"), Some("AXOutline")),
            "tree_item"
        );
        assert_eq!(role_of("AXCell", None, None), "table_cell");
        assert_eq!(role_of("AXList", None, None), "list");
        assert_eq!(role_of("AXScrollArea", None, None), "scroll_pane");
        assert_eq!(role_of("AXScrollBar", None, None), "scroll_bar");
        assert_eq!(role_of("AXToolbar", None, None), "tool_bar");
        assert_eq!(role_of("AXWindow", Some("AXStandardWindow"), None), "frame");
        assert_eq!(role_of("AXWindow", Some("AXFloatingWindow"), None), "frame");
        assert_eq!(role_of("AXWindow", None, None), "frame");
        assert_eq!(role_of("AXWindow", Some("AXDialog"), None), "dialog");
        assert_eq!(role_of("AXWindow", Some("AXSystemDialog"), None), "dialog");
        assert_eq!(role_of("AXSheet", None, None), "dialog");
        assert_eq!(role_of("AXGroup", Some("AXApplicationDialog"), None), "dialog");
        assert_eq!(role_of("AXDrawer", None, None), "panel");
        assert_eq!(role_of("AXMenuBar", None, None), "menu_bar");
        assert_eq!(role_of("AXMenuBarItem", None, None), "menu_item");
        assert_eq!(role_of("AXMenu", None, None), "menu");
        assert_eq!(role_of("AXMenuItem", None, None), "menu_item");
        assert!(skips_children("AXColumn") && !skips_children("AXRow"));
    }

    #[test]
    fn unnamed_groups_fold_as_windows_panes_do() {
        let usual: Vec<String> = states_of("AXGroup", "grouping", &AxState::default());
        assert!(folds_raw(role_of("AXGroup", None, None), "", &[], None, &usual));
        assert!(folds_raw(role_of("AXDrawer", None, None), "", &[], None, &usual));
        assert!(!folds_raw(
            role_of("AXGroup", None, None),
            "Options",
            &[],
            None,
            &usual
        ));
        assert!(!folds_raw(role_of("AXButton", None, None), "", &[], None, &usual));
    }

    #[test]
    fn password_values_are_never_read() {
        assert!(!value_readable("AXTextField", Some("AXSecureTextField")));
        assert!(!value_readable("AXSecureTextField", None));
        assert!(value_readable("AXTextField", Some("AXSearchField")));
        assert!(value_readable("AXSlider", None));
        assert_eq!(masked(3), "•••");
        assert_eq!(masked(0), "");
        assert_eq!(masked(-1), "");
    }

    fn shown() -> AxState {
        AxState {
            enabled: Some(true),
            focus_settable: true,
            ..AxState::default()
        }
    }

    fn seen(ax_role: &str, s: &AxState) -> Vec<String> {
        let role = role_of(ax_role, None, None);
        element_states(role, &states_of(ax_role, role, s))
    }

    #[test]
    fn a_usual_control_shows_no_state_and_an_unusual_one_says_so() {
        assert!(seen("AXButton", &shown()).is_empty());
        // A missing AXEnabled is enabled (static text rarely reports it).
        assert!(seen("AXStaticText", &AxState::default()).is_empty());
        let off = AxState {
            enabled: Some(false),
            ..shown()
        };
        assert_eq!(seen("AXButton", &off), ["disabled"]);
        let hidden = AxState {
            hidden: true,
            ..shown()
        };
        assert_eq!(seen("AXButton", &hidden), ["hidden"]);
        let raw = states_of("AXButton", "push_button", &shown());
        assert!(["enabled", "sensitive", "showing", "visible", "focusable"]
            .iter()
            .all(|s| raw.contains(&s.to_string())));
    }

    #[test]
    fn toggles_say_checked_pressed_or_indeterminate() {
        assert_eq!(Toggle::from_value(0), Some(Toggle::Off));
        assert_eq!(Toggle::from_value(2), Some(Toggle::Mixed));
        assert_eq!(Toggle::from_value(5), None);
        assert!(value_is_toggle("AXCheckBox") && !value_is_toggle("AXSlider"));
        let on = AxState {
            toggle: Some(Toggle::On),
            focused: Some(true),
            ..shown()
        };
        assert_eq!(seen("AXCheckBox", &on), ["focused", "checked"]);
        assert_eq!(seen("AXRadioButton", &on), ["focused", "checked"]);
        let switch = states_of("AXCheckBox", "toggle_button", &on);
        assert_eq!(element_states("toggle_button", &switch), ["focused", "pressed"]);
        let mixed = AxState {
            toggle: Some(Toggle::Mixed),
            ..shown()
        };
        assert_eq!(seen("AXCheckBox", &mixed), ["indeterminate"]);
        let off = AxState {
            toggle: Some(Toggle::Off),
            ..shown()
        };
        assert!(seen("AXCheckBox", &off).is_empty());
        let marked = AxState {
            mark_char: Some("✓".into()),
            ..shown()
        };
        assert_eq!(seen("AXMenuItem", &marked), ["checked"]);
        let blank = AxState {
            mark_char: Some(String::new()),
            ..shown()
        };
        assert!(seen("AXMenuItem", &blank).is_empty());
    }

    #[test]
    fn expansion_selection_and_disclosure() {
        let open = AxState {
            expanded: Some(true),
            selected: Some(true),
            ..shown()
        };
        let role = role_of("AXRow", Some("AXOutlineRow"), None);
        let s = element_states(role, &states_of("AXRow", role, &open));
        assert_eq!(s, ["expandable", "expanded", "selected"]);
        let closed = AxState {
            expanded: Some(false),
            selected: Some(false),
            ..shown()
        };
        assert_eq!(seen("AXRow", &closed), ["expandable", "collapsed"]);
        let triangle = AxState {
            toggle: Some(Toggle::On),
            ..shown()
        };
        assert_eq!(
            seen("AXDisclosureTriangle", &triangle),
            ["expandable", "expanded"]
        );
        let shut = AxState {
            toggle: Some(Toggle::Off),
            ..shown()
        };
        assert_eq!(seen("AXDisclosureTriangle", &shut), ["expandable", "collapsed"]);
    }

    #[test]
    fn text_is_editable_read_only_or_multi_line() {
        let editable = AxState {
            value_settable: Some(true),
            ..shown()
        };
        assert_eq!(seen("AXTextField", &editable), ["editable"]);
        assert_eq!(seen("AXTextArea", &editable), ["editable", "multi_line"]);
        let locked = AxState {
            value_settable: Some(false),
            ..shown()
        };
        assert_eq!(seen("AXTextField", &locked), ["read_only"]);
        assert_eq!(seen("AXSlider", &locked), ["read_only"]);
        assert!(seen("AXSlider", &editable).is_empty());
        let stepper = AxState {
            value_settable: Some(false),
            steps: true,
            ..shown()
        };
        assert_eq!(seen("AXIncrementor", &stepper), ["editable"]);
        let secure = states_of("AXTextField", "password_text", &editable);
        assert_eq!(element_states("password_text", &secure), ["editable"]);
    }

    #[test]
    fn windows_and_forms() {
        let modal = AxState {
            modal: Some(true),
            minimized: Some(false),
            ..shown()
        };
        let role = role_of("AXWindow", Some("AXDialog"), None);
        assert_eq!(
            element_states(role, &states_of("AXWindow", role, &modal)),
            ["modal"]
        );
        let min = AxState {
            minimized: Some(true),
            ..shown()
        };
        assert_eq!(seen("AXWindow", &min), ["minimized"]);
        let required = AxState {
            required: Some(true),
            value_settable: Some(true),
            ..shown()
        };
        assert_eq!(seen("AXTextField", &required), ["editable", "required"]);
        assert_eq!(seen("AXBusyIndicator", &shown()), ["busy"]);
    }
}
