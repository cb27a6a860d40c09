//! Clean text for models: what toolkits put in names, values and descriptions that a model
//! would misread. Applied once, where a backend's [`RawElement`]s become the observation's
//! elements, so the structured elements, the outline and `query` all see the same text.
//!
//! - Placeholder and format characters go: U+FFFC (an embedded object inside hypertext, e.g.
//!   an image or link of a web page) becomes the name of the child it stands for, when the
//!   children line up one for one, and is dropped otherwise; zero-width and bidi marks, the
//!   byte-order mark, soft hyphens and control characters are dropped; non-breaking and other
//!   fixed-width spaces become plain spaces; line and paragraph separators become newlines.
//! - Toolkit placeholders for a missing name go: a GTK class name (`GtkButton`), and a name
//!   that is a child's name repeated (`4 4`).
//! - A number is a value only where the role has one: a push button or a separator that
//!   implements the value interface with 0 shows no value.
//! - One element is focused: a container keeps `focused` only when none of its descendants
//!   has it, and of unrelated elements that all claim it only the last in walk order keeps it
//!   (the others' state is stale).

use crate::model::RawElement;

/// Roles whose value is a number that means something (a position, a level, a count).
const NUMERIC_ROLES: &[&str] = &[
    "slider",
    "spin_button",
    "scroll_bar",
    "progress_bar",
    "level_bar",
    "dial",
    "meter",
    "split_pane",
    "combo_box",
    "value",
    "calendar",
];

/// Roles whose value is their text: a number there is content ("42" in a cell), except a bare
/// 0 beside a name, which is a value interface that merely exists.
const TEXT_ROLES: &[&str] = &[
    "text",
    "entry",
    "password_text",
    "paragraph",
    "label",
    "static",
    "heading",
    "caption",
    "table_cell",
    "cell",
    "list_item",
    "tree_item",
    "document_text",
    "document_frame",
    "document_web",
    "terminal",
    "editbar",
    "section",
    "link",
    "status_bar",
];

/// U+FFFC OBJECT REPLACEMENT CHARACTER: where hypertext embeds a child object.
const OBJECT: char = '\u{fffc}';

/// What one character becomes in clean text.
enum Fix {
    Keep,
    Drop,
    Space,
    Newline,
}

fn fix(c: char) -> Fix {
    match c {
        '\n' | '\t' => Fix::Keep,
        '\r' => Fix::Drop,
        c if c.is_control() => Fix::Drop,
        // Interlinear annotation marks, the replacement object, the byte-order mark / ZWNBSP.
        '\u{fff9}'..='\u{fffc}' | '\u{feff}' => Fix::Drop,
        // Soft hyphen, zero-width space, word joiner and invisible operators, bidi marks and
        // embeddings. ZWJ and ZWNJ (U+200C, U+200D) stay: emoji and some scripts need them.
        '\u{ad}' | '\u{200b}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' => Fix::Drop,
        '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{061c}' => Fix::Drop,
        // No-break, fixed-width and thin spaces: a model sees a space either way.
        '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' => Fix::Space,
        '\u{2028}' | '\u{2029}' | '\u{85}' => Fix::Newline,
        _ => Fix::Keep,
    }
}

/// `s` without placeholder, format and control characters; U+FFFC is dropped (see
/// [`clean_hypertext`] to put the embedded objects' names in its place).
pub fn clean_text(s: &str) -> String {
    clean_hypertext(s, &[])
}

/// `s` cleaned, each U+FFFC replaced by the matching entry of `objects` (the names of the
/// embedded children, in order) when there is one per placeholder and it is not empty, and
/// dropped otherwise. Where something was dropped, the spaces around it are joined into one.
pub fn clean_hypertext(s: &str, objects: &[&str]) -> String {
    if s.chars().all(|c| matches!(fix(c), Fix::Keep)) {
        return s.to_string();
    }
    let placeholders = s.chars().filter(|&c| c == OBJECT).count();
    let substitute = placeholders == objects.len() && objects.iter().all(|o| !o.trim().is_empty());
    let mut out = String::with_capacity(s.len());
    let mut next_object = objects.iter();
    // After a dropped character, a space that would double the one before it is left out.
    let mut dropped = false;
    for c in s.chars() {
        match (c, fix(c)) {
            (OBJECT, _) if substitute => {
                if let Some(name) = next_object.next() {
                    out.push_str(&clean_text(name.trim()));
                }
                dropped = false;
            }
            (_, Fix::Drop) => dropped = true,
            (_, Fix::Newline) => {
                out.push('\n');
                dropped = false;
            }
            (c, f) => {
                let c = if matches!(f, Fix::Space) { ' ' } else { c };
                if dropped && c == ' ' && (out.is_empty() || out.ends_with([' ', '\n'])) {
                    continue;
                }
                out.push(c);
                dropped = false;
            }
        }
    }
    if placeholders > 0 && !substitute {
        // Only objects (or objects and spaces) were there: nothing to show.
        let trimmed = out.trim();
        if trimmed.len() != out.len() {
            out = trimmed.to_string();
        }
    }
    out
}

/// A GTK widget class name used as a stand-in for a missing accessible name.
fn is_class_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("Gtk").or_else(|| name.strip_prefix("Adw")) else {
        return false;
    };
    rest.starts_with(|c: char| c.is_ascii_uppercase()) && rest.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `Some(part)` when `name` is `part` repeated two or more times with white space between.
fn repeated(name: &str) -> Option<String> {
    let words: Vec<&str> = name.split_whitespace().collect();
    (1..=words.len() / 2)
        .filter(|&per| words.len().is_multiple_of(per))
        .find(|&per| words.chunks(per).all(|c| c == &words[..per]))
        .map(|per| words[..per].join(" "))
}

/// The name shown for an element: placeholders of a missing name removed.
fn clean_name(name: &str, child_names: &[&str]) -> String {
    let name = clean_hypertext(name, child_names);
    if is_class_name(name.trim()) {
        return String::new();
    }
    if let Some(part) = repeated(&name) {
        if child_names.iter().any(|c| c.trim() == part) {
            return part;
        }
    }
    name
}

/// Whether a value is worth showing for this role (a number only where the role has one).
fn meaningful_value(role: &str, name: &str, value: &str) -> bool {
    if value.trim().is_empty() {
        return false;
    }
    if !value.trim().parse::<f64>().is_ok_and(f64::is_finite) || NUMERIC_ROLES.contains(&role) {
        return true;
    }
    if TEXT_ROLES.contains(&role) {
        // A 0 beside a name is a value interface, not the text; "0" alone is content.
        return !(value.trim() == "0" && !name.trim().is_empty() && name.trim() != "0");
    }
    false
}

/// Cleans a walk in place (parents precede their children): names, values and descriptions,
/// values only where meaningful, one focused element.
pub fn clean_elements(elements: &mut [RawElement]) {
    let n = elements.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, e) in elements.iter().enumerate() {
        if let Some(p) = e.parent.filter(|&p| p < n && p != i) {
            children[p].push(i);
        }
    }
    // Children's names as the toolkit gave them (U+FFFC stands for the child object itself).
    let raw_names: Vec<String> = elements.iter().map(|e| e.name.clone()).collect();
    for (i, e) in elements.iter_mut().enumerate() {
        let kids: Vec<&str> = children[i].iter().map(|&k| raw_names[k].as_str()).collect();
        let kids: Vec<String> = kids.iter().map(|k| clean_text(k)).collect();
        let kids: Vec<&str> = kids.iter().map(String::as_str).collect();
        e.name = clean_name(&e.name, &kids);
        e.description = clean_hypertext(&e.description, &kids);
        if is_class_name(e.description.trim()) {
            e.description.clear();
        }
        e.value = e
            .value
            .take()
            .map(|v| clean_hypertext(&v, &kids))
            .filter(|v| meaningful_value(&e.role, &e.name, v));
    }
    one_focus(elements);
}

/// Keeps `focused` on one element: the deepest of a chain, the last of unrelated claimants.
fn one_focus(elements: &mut [RawElement]) {
    let focused = |e: &RawElement| e.states.iter().any(|s| s == "focused");
    let claimants: Vec<usize> = (0..elements.len()).filter(|&i| focused(&elements[i])).collect();
    if claimants.len() <= 1 {
        return;
    }
    // The claimant last in walk order that no other claimant lies below.
    let mut keep = None;
    for &c in claimants.iter().rev() {
        let has_focused_descendant = claimants.iter().any(|&d| {
            let mut p = elements[d].parent;
            let mut steps = 0;
            while let Some(pi) = p {
                if pi == c {
                    return true;
                }
                steps += 1;
                if steps > elements.len() {
                    break;
                }
                p = elements.get(pi).and_then(|e| e.parent);
            }
            false
        });
        if !has_focused_descendant {
            keep = Some(c);
            break;
        }
    }
    for c in claimants {
        if Some(c) != keep {
            elements[c].states.retain(|s| s != "focused");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(role: &str, name: &str, parent: Option<usize>) -> RawElement {
        RawElement {
            native: String::new(),
            key: String::new(),
            parent,
            depth: parent.map_or(0, |_| 1),
            role: role.into(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: vec![],
            actions: vec![],
            bounds: None,
            summary: None,
        }
    }

    #[test]
    fn object_placeholders_take_the_childrens_names_or_go() {
        assert_eq!(clean_text("\u{fffc}\u{fffc}"), "");
        assert_eq!(clean_text("Before \u{fffc} after"), "Before after");
        assert_eq!(
            clean_hypertext("See \u{fffc} for more", &["the manual"]),
            "See the manual for more"
        );
        // Counts differ, or a child has no name: the placeholders are dropped.
        assert_eq!(clean_hypertext("a \u{fffc} b \u{fffc}", &["x"]), "a b");
        assert_eq!(clean_hypertext("\u{fffc}\u{fffc}", &["", "y"]), "");
    }

    #[test]
    fn format_characters_go_and_odd_spaces_become_spaces() {
        assert_eq!(clean_text("Free space: 72.1\u{a0}GiB"), "Free space: 72.1 GiB");
        assert_eq!(clean_text("10\u{202f}%"), "10 %");
        assert_eq!(clean_text("zero\u{200b}width\u{feff}"), "zerowidth");
        assert_eq!(clean_text("\u{200e}left\u{202b}right\u{202c}"), "leftright");
        assert_eq!(clean_text("soft\u{ad}hyphen"), "softhyphen");
        assert_eq!(clean_text("bell\u{7}\r\n"), "bell\n");
        assert_eq!(clean_text("one\u{2028}two"), "one\ntwo");
        // Real Unicode stays as it is, joiners included.
        for s in ["Grüße 日本語", "👩\u{200d}💻", "tab\there", "\"quoted\""] {
            assert_eq!(clean_text(s), s);
        }
    }

    #[test]
    fn gtk_class_names_are_no_names() {
        for n in ["GtkButton", "GtkToggleButton", "GtkBuiltinIcon", "AdwHeaderBar"] {
            assert_eq!(clean_name(n, &[]), "", "{n}");
        }
        for n in ["Gtk", "GtkButton clicked", "Gtk-demo", "Gtkfoo", "Button"] {
            assert_eq!(clean_name(n, &[]), n);
        }
    }

    #[test]
    fn a_childs_name_doubled_is_said_once() {
        assert_eq!(clean_name("4 4", &["4"]), "4");
        assert_eq!(clean_name("Page 1 Page 1", &["Page 1"]), "Page 1");
        assert_eq!(clean_name("Zoom Zoom Zoom", &["Zoom"]), "Zoom");
        // Not a child's name: a real name that repeats a word stays.
        assert_eq!(clean_name("Bora Bora", &[]), "Bora Bora");
        assert_eq!(clean_name("4 4", &["5"]), "4 4");
        assert_eq!(clean_name("4 5", &["4"]), "4 5");
    }

    #[test]
    fn numbers_are_values_only_where_the_role_has_one() {
        let mut w = vec![
            el("frame", "w", None),
            el("push_button", "Save", Some(0)),
            el("separator", "", Some(0)),
            el("slider", "Volume", Some(0)),
            el("scroll_bar", "Vertical scroll bar", Some(0)),
            el("label", "Status", Some(0)),
            el("label", "", Some(0)),
            el("table_cell", "", Some(0)),
            el("text", "Name", Some(0)),
            el("push_button", "Go", Some(0)),
        ];
        let values = ["", "0", "0", "0", "0", "0", "0", "42", "17", "text"];
        for (e, v) in w.iter_mut().zip(values) {
            e.value = (!v.is_empty()).then(|| v.to_string());
        }
        clean_elements(&mut w);
        let got: Vec<Option<&str>> = w.iter().map(|e| e.value.as_deref()).collect();
        assert_eq!(
            got,
            [
                None,
                None,
                None,
                Some("0"),
                Some("0"),
                None,
                Some("0"),
                Some("42"),
                Some("17"),
                Some("text")
            ]
        );
    }

    #[test]
    fn firefox_lines_of_only_objects_have_no_value() {
        let mut w = vec![
            el("section", "", None),
            el("image", "", Some(0)),
            el("image", "", Some(0)),
        ];
        w[0].value = Some("\u{fffc}\u{fffc}".into());
        let mut p = vec![
            el("paragraph", "", None),
            el("image", "red dot", Some(0)),
            el("link", "link here", Some(0)),
        ];
        p[0].value = Some("Before \u{fffc} after the image, and a \u{fffc} too.".into());
        clean_elements(&mut w);
        clean_elements(&mut p);
        assert_eq!(w[0].value, None);
        assert_eq!(
            p[0].value.as_deref(),
            Some("Before red dot after the image, and a link here too.")
        );
    }

    #[test]
    fn one_element_keeps_focused() {
        let mut w = vec![
            el("dialog", "d", None),
            el("text", "a", Some(0)),
            el("push_button", "b", Some(0)),
            el("list", "l", Some(0)),
            el("list_item", "row", Some(3)),
        ];
        for i in [1, 2, 3, 4] {
            w[i].states = vec!["focusable".into(), "focused".into()];
        }
        clean_elements(&mut w);
        let focused: Vec<&str> = w
            .iter()
            .filter(|e| e.states.iter().any(|s| s == "focused"))
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(focused, ["row"]);
        assert!(w[1].states.contains(&"focusable".to_string()));
        // One claimant alone is left as it is.
        let mut one = vec![el("frame", "f", None), el("text", "t", Some(0))];
        one[1].states = vec!["focused".into()];
        clean_elements(&mut one);
        assert_eq!(one[1].states, ["focused"]);
    }
}
