//! Short text forms of results, for models that read text rather than structured content.

use crate::geometry::Rect;
use crate::model::{Element, WindowInfo};
use crate::output::{ActionOutput, ListOutput, StateOutput};
use crate::states::notable_states;
use std::collections::HashMap;
use std::fmt::Write;

/// `s` in double quotes, as it reads: real Unicode, no escapes. Only what would break the
/// line or the quotes is marked: `"` as `\"`, a newline as `⏎`, a tab as a space; the text is
/// cut after `max` characters with `…`.
fn quote(s: &str, max: usize) -> String {
    let mut t = String::with_capacity(s.len().min(max * 4) + 2);
    t.push('"');
    for c in s.chars().take(max) {
        match c {
            '"' => t.push_str("\\\""),
            '\n' => t.push('⏎'),
            '\t' => t.push(' '),
            c if c.is_control() => {}
            c => t.push(c),
        }
    }
    if s.chars().count() > max {
        t.push('…');
    }
    t.push('"');
    t
}

/// A word as it is, or quoted when it has spaces or quotes (an application's name).
fn word(s: &str) -> String {
    if !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c == '"') {
        s.to_string()
    } else {
        quote(s, 80)
    }
}

fn window_line(w: &WindowInfo) -> String {
    let b = &w.bounds;
    let mut line = format!(
        "{} {} app={} {}x{} at ({},{})",
        w.window_id,
        quote(&w.title, 80),
        word(&w.app),
        b.width,
        b.height,
        b.x,
        b.y
    );
    if let Some(pid) = w.pid {
        let _ = write!(line, " pid={pid}");
    }
    for (flag, word) in [
        (w.focused, "focused"),
        (w.minimized, "minimized"),
        (!w.accessible, "no-a11y"),
    ] {
        if flag {
            let _ = write!(line, " {word}");
        }
    }
    line
}

pub fn list_text(out: &ListOutput) -> String {
    let mut s = format!(
        "machine {} backend {} ({} session); {} window(s){}:\n",
        out.machine,
        out.backend.name,
        out.backend.session,
        out.windows.len(),
        if out.truncated { ", truncated" } else { "" }
    );
    for w in &out.windows {
        let _ = writeln!(s, "{}", window_line(w));
    }
    for n in &out.backend.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

fn element_line(line: &mut String, e: &Element, depth: usize, parent_bounds: Option<Rect>) {
    for _ in 0..depth {
        line.push(' ');
    }
    let _ = write!(line, "{} {}", e.id, e.role);
    if !e.name.is_empty() {
        let _ = write!(line, " {}", quote(&e.name, 60));
    }
    if let Some(v) = &e.value {
        if !v.is_empty() && v != &e.name {
            if v.len() <= 24 && v.parse::<f64>().is_ok_and(f64::is_finite) {
                let _ = write!(line, " value={v}");
            } else {
                let _ = write!(line, " value={}", quote(v, 60));
            }
        }
    }
    let states = notable_states(e);
    if !states.is_empty() {
        let _ = write!(line, " [{}]", states.join(","));
    }
    match e.bounds {
        Some(b) if Some(b) == parent_bounds => {}
        Some(b) => {
            let _ = write!(line, " @{},{} {}x{}", b.x, b.y, b.width, b.height);
        }
        None => line.push_str(" @-"),
    }
    if let Some(summary) = &e.summary {
        let _ = write!(line, " ({summary})");
    }
    line.push('\n');
}

/// The element lines of an outline.
///
/// One line per element, in walk order, indented one space per ancestor in the observation:
/// `ID ROLE ["NAME"] [value=VALUE] [[STATE,...]] [@X,Y WxH] [(SUMMARY)]`. Bounds are omitted when they
/// equal those of the parent; `@-` means no on-screen area.
pub fn elements_outline(elements: &[Element]) -> String {
    // id -> (outline depth of its children, bounds its children compare against)
    let mut seen: HashMap<&str, (usize, Option<Rect>)> = HashMap::with_capacity(elements.len());
    let mut out = String::with_capacity(elements.len() * 40);
    for e in elements {
        let (depth, parent_bounds) = e
            .parent
            .as_deref()
            .and_then(|p| seen.get(p).copied())
            .unwrap_or((0, None));
        element_line(&mut out, e, depth, parent_bounds);
        seen.insert(&e.id, (depth + 1, e.bounds));
    }
    out
}

pub fn state_text(out: &StateOutput) -> String {
    let cs = &out.coordinate_space;
    let mut s = format!(
        "state_id {} (single use, expires in {} s)\nwindow {}\n",
        out.state_id,
        out.expires_in_ms / 1000,
        window_line(&out.window),
    );
    if cs.units == "logical_px" {
        let _ = writeln!(
            s,
            "coordinates: window-relative logical px, {}x{}",
            cs.width, cs.height
        );
    } else {
        let _ = writeln!(
            s,
            "coordinates: window-relative, scaled x{:.4} to {}x{} (window {}x{} logical px); bounds, \
             screenshot and gui_action x/y all use this space",
            cs.scale, cs.width, cs.height, out.window.bounds.width, out.window.bounds.height
        );
    }
    if let Some(shot) = &out.screenshot {
        let _ = write!(s, "screenshot {}x{} {}", shot.width, shot.height, shot.format);
        if shot.occluded {
            s.push_str(" (other windows may cover parts of it)");
        }
        if shot.redacted > 0 {
            let _ = write!(s, " ({} password field(s) painted over)", shot.redacted);
        }
        s.push('\n');
    }
    if let (Some(q), Some(m)) = (&out.query, out.matched) {
        let _ = writeln!(
            s,
            "query {}: {m} matched; shown with their ancestors",
            quote(q, 80)
        );
    }
    let lines = elements_outline(&out.elements);
    let folded = out.folded;
    let _ = write!(s, "{} element(s)", out.element_count);
    if out.truncated {
        s.push_str(" (truncated)");
    }
    if folded > 0 {
        let _ = write!(s, ", {folded} unnamed layout container(s) left out");
    }
    if !out.elements.is_empty() {
        s.push_str("; id role \"name\" value= [states] @x,y wxh (no @: same box as parent):");
    }
    s.push('\n');
    s.push_str(&lines);
    if let Some(reason) = &out.truncated_reason {
        let _ = writeln!(s, "truncated: {reason}");
    }
    for n in &out.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

pub fn action_text(out: &ActionOutput) -> String {
    let mut tally = crate::verify::Tally::default();
    let parts: Vec<String> = out
        .results
        .iter()
        .map(|r| {
            tally.done += 1;
            let seen = if r.verified {
                tally.verified += 1;
                r.evidence.as_deref().unwrap_or("verified").to_string()
            } else {
                let why = r.unverified.as_deref().unwrap_or("not checked").to_string();
                tally.unverified.push((r.index, r.action_type.clone(), why));
                "unverified".to_string()
            };
            let effect = match r.effect {
                Some(crate::changes::Effect::Confirmed) | None => String::new(),
                Some(crate::changes::Effect::NoChange) => {
                    format!(" NO CHANGE: {}", r.unverified.as_deref().unwrap_or(""))
                }
                Some(crate::changes::Effect::Unverifiable) => " unverifiable".into(),
            };
            format!(
                "{}:{}({}: {seen}{effect})",
                r.index,
                r.action_type,
                r.method.as_deref().unwrap_or("-")
            )
        })
        .collect();
    let mut text = format!("ok: {}. {}.", tally.line(), parts.join(", "));
    if let Some(s) = &out.stopped {
        text.push_str(&format!(" {s}."));
    }
    text.push_str(&format!(" {}", out.next));
    if let (Some(settled), Some(ms)) = (out.settled, out.settle_ms) {
        text.push_str(&if settled {
            format!("\nsettled after {ms} ms")
        } else {
            format!("\nNOT settled within {ms} ms (still changing): observe again before relying on it")
        });
    }
    if let Some(id) = &out.state_id {
        text.push_str(&format!("\nstate_id: {id}"));
    }
    if let Some(note) = &out.observe_note {
        text.push_str(&format!("\n{note}"));
    }
    if let Some(c) = &out.changes {
        text.push_str(&changes_text(c));
    }
    if let Some(obs) = &out.observation {
        text.push('\n');
        text.push_str(&state_text(obs));
    }
    text
}

/// The change list as text: one line per change, added elements as outline lines.
pub fn changes_text(c: &crate::changes::Changes) -> String {
    if c.is_empty() {
        return "\nchanges: none".into();
    }
    let mut t = String::from("\nchanges:");
    for w in &c.opened {
        t.push_str(&format!(
            "\n opened window {} {}",
            w.window_id,
            quote(&w.title, 80)
        ));
        if let Some(id) = &w.state_id {
            t.push_str(&format!(
                " (gui_action it with window_id {} and state_id {id}; {} element(s)):",
                w.window_id,
                w.elements.len()
            ));
            for line in elements_outline(&w.elements).lines() {
                t.push_str("\n  ");
                t.push_str(line);
            }
        }
        if let Some(note) = &w.note {
            t.push_str(&format!(" ({note})"));
        }
    }
    for w in &c.closed {
        t.push_str(&format!(
            "\n closed window {} {}",
            w.window_id,
            quote(&w.title, 80)
        ));
    }
    if let Some(f) = &c.focus {
        let name = |id: &Option<String>| id.clone().unwrap_or_else(|| "-".into());
        t.push_str(&format!("\n focus {} -> {}", name(&f.from), name(&f.to)));
    }
    for e in &c.changed {
        let mut what: Vec<String> = Vec::new();
        if let Some(was) = &e.name_was {
            what.push(format!("name {} -> {}", quote(was, 60), quote(&e.name, 60)));
        }
        if let Some(v) = &e.value {
            let was = e.value_was.clone().flatten().unwrap_or_default();
            what.push(format!(
                "value {} -> {}",
                quote(&was, 60),
                quote(v.as_deref().unwrap_or(""), 60)
            ));
        }
        what.extend(e.states_on.iter().map(|s| format!("+{s}")));
        what.extend(e.states_off.iter().map(|s| format!("-{s}")));
        if let Some(b) = e.bounds {
            what.push(format!("@{},{} {}x{}", b.x, b.y, b.width, b.height));
        }
        let label = if e.name_was.is_some() {
            String::new()
        } else {
            format!(" {}", quote(&e.name, 60))
        };
        t.push_str(&format!(
            "\n ~ {} {}{label}: {}",
            e.id,
            word(&e.role),
            what.join(" ")
        ));
    }
    if !c.removed.is_empty() {
        t.push_str(&format!("\n - removed {}", c.removed.join(" ")));
    }
    if !c.added.is_empty() {
        let outline = elements_outline(&c.added);
        t.push_str("\n + added:\n");
        t.push_str(outline.trim_end());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::states::element_states;

    struct Tree(Vec<Element>);

    impl Tree {
        /// Adds an element under `parent` (an index) and returns its index. Its states are as
        /// an observation gives them (`element_states`) of a usable, shown element.
        fn add(&mut self, parent: Option<usize>, role: &str, name: &str, bounds: Option<Rect>) -> usize {
            self.add_with(parent, role, name, bounds, &[])
        }
        fn add_with(
            &mut self,
            parent: Option<usize>,
            role: &str,
            name: &str,
            bounds: Option<Rect>,
            states: &[&str],
        ) -> usize {
            let i = self.0.len();
            let raw: Vec<String> = ["enabled", "sensitive", "showing", "visible"]
                .iter()
                .chain(states)
                .map(|s| s.to_string())
                .collect();
            self.0.push(Element {
                id: format!("e{i}"),
                role: role.into(),
                name: name.into(),
                description: String::new(),
                value: None,
                states: element_states(role, &raw),
                actions: vec![],
                bounds,
                summary: None,
                parent: parent.map(|p| format!("e{p}")),
            });
            i
        }
        fn with(&mut self, i: usize, f: impl FnOnce(&mut Element)) {
            f(&mut self.0[i]);
        }
    }

    fn r(x: i32, y: i32, w: i32, h: i32) -> Option<Rect> {
        Some(Rect::new(x, y, w, h))
    }

    #[test]
    fn outline_lines_follow_the_format() {
        let mut t = Tree(vec![]);
        let frame = t.add(None, "frame", "lsm test app", r(0, 0, 600, 511));
        let check = t.add_with(
            Some(frame),
            "check_box",
            "Enable feature",
            r(10, 10, 284, 22),
            &["checked"],
        );
        t.with(check, |e| e.actions = vec!["click".into()]);
        let entry = t.add_with(
            Some(frame),
            "text",
            "Name entry",
            r(10, 80, 284, 34),
            &["focused", "editable"],
        );
        t.with(entry, |e| e.value = Some("hello \"you\"".into()));
        let slider = t.add(Some(frame), "slider", "Volume", r(10, 120, 284, 20));
        t.with(slider, |e| e.value = Some("37".into()));
        let named = t.add(Some(frame), "panel", "Settings", r(300, 10, 290, 200));
        t.add(Some(named), "label", "Same box", r(300, 10, 290, 200));
        let off = t.add(Some(named), "push_button", "Hidden", None);
        t.with(off, |e| {
            e.states = element_states("push_button", &["visible".into()])
        });
        let table = t.add(Some(frame), "table", "Items", r(10, 220, 580, 280));
        t.with(table, |e| {
            e.summary = Some("10000 rows × 2 columns; rows 0-15 read".into())
        });
        assert_eq!(
            elements_outline(&t.0),
            "e0 frame \"lsm test app\" @0,0 600x511\n\
             \x20e1 check_box \"Enable feature\" [checked] @10,10 284x22\n\
             \x20e2 text \"Name entry\" value=\"hello \\\"you\\\"\" [focused] @10,80 284x34\n\
             \x20e3 slider \"Volume\" value=37 @10,120 284x20\n\
             \x20e4 panel \"Settings\" @300,10 290x200\n\
             \x20\x20e5 label \"Same box\"\n\
             \x20\x20e6 push_button \"Hidden\" [disabled] @-\n\
             \x20e7 table \"Items\" @10,220 580x280 (10000 rows × 2 columns; rows 0-15 read)\n"
        );
    }

    #[test]
    fn text_is_quoted_as_it_reads() {
        assert_eq!(quote("Free space: 72.1 GiB", 60), "\"Free space: 72.1 GiB\"");
        assert_eq!(
            quote("Grüße 日本語 👩\u{200d}💻", 60),
            "\"Grüße 日本語 👩\u{200d}💻\""
        );
        assert_eq!(quote("say \"hi\"\nbye\tnow", 60), "\"say \\\"hi\\\"⏎bye now\"");
        assert_eq!(quote("abcdef", 3), "\"abc…\"");
        assert_eq!(word("Firefox"), "Firefox");
        assert_eq!(word("LibreOffice Writer"), "\"LibreOffice Writer\"");
    }

    #[test]
    fn states_show_only_what_is_not_the_rule() {
        let mut t = Tree(vec![]);
        let frame = t.add(None, "frame", "w", r(0, 0, 100, 100));
        t.add_with(Some(frame), "label", "Status", r(0, 0, 10, 10), &["multi_line"]);
        t.add_with(Some(frame), "text", "Log", r(0, 10, 10, 10), &["multi_line"]);
        t.add_with(
            Some(frame),
            "text",
            "Notes",
            r(0, 20, 10, 10),
            &["multi_line", "editable"],
        );
        t.add_with(
            Some(frame),
            "label",
            "Editable label",
            r(0, 30, 10, 10),
            &["editable"],
        );
        assert_eq!(
            elements_outline(&t.0),
            "e0 frame \"w\" @0,0 100x100\n e1 label \"Status\" @0,0 10x10\n e2 text \"Log\" [read_only] @0,10 10x10\n \
             e3 text \"Notes\" [multi_line] @0,20 10x10\n e4 label \"Editable label\" [editable] @0,30 10x10\n"
        );
    }

    /// A GTK-like window as an observation gives it: a menu bar, columns of controls, lists of
    /// rows of cells, menus without area.
    fn big_tree() -> Vec<Element> {
        let mut t = Tree(vec![]);
        let frame = t.add(None, "frame", "GTK Widget Factory", r(0, 0, 1366, 741));
        let bar = t.add(Some(frame), "menu_bar", "", r(0, 0, 1366, 30));
        for i in 0..6 {
            let m = t.add(Some(bar), "menu", &format!("Menu {i}"), r(i * 60, 0, 60, 30));
            t.with(m, |e| e.actions = vec!["click".into()]);
            for j in 0..5 {
                let it = t.add(Some(m), "menu_item", &format!("Item {i}.{j}"), None);
                t.with(it, |e| e.actions = vec!["click".into()]);
            }
        }
        for col in 0..3 {
            let scroll = t.add(Some(frame), "scroll_pane", "", r(col * 450 + 220, 50, 210, 400));
            for k in 0..12 {
                let role = ["push_button", "check_box", "radio_button", "toggle_button"][k % 4];
                let b = t.add(
                    Some(frame),
                    role,
                    &format!("Option {col}-{k}"),
                    r(col * 450 + 10, 50 + k as i32 * 30, 200, 26),
                );
                t.with(b, |e| e.actions = vec!["click".into()]);
            }
            let table = t.add(
                Some(scroll),
                "tree_table",
                "Rows",
                r(col * 450 + 220, 50, 210, 400),
            );
            for row in 0..20 {
                let c = t.add(
                    Some(table),
                    "table_cell",
                    &format!("Row {row}"),
                    r(col * 450 + 220, 50 + row * 20, 210, 20),
                );
                t.with(c, |e| e.actions = vec!["activate".into()]);
            }
            let e = t.add_with(
                Some(frame),
                "text",
                "Entry",
                r(col * 450 + 10, 460, 420, 30),
                &["editable"],
            );
            t.with(e, |e| e.value = Some("some text".into()));
        }
        t.0
    }

    #[test]
    fn outline_is_under_half_of_the_element_json() {
        let elements = big_tree();
        let json = serde_json::to_vec(&elements).expect("json").len();
        let text = elements_outline(&elements);
        assert!(
            text.len() * 2 < json,
            "outline {} bytes vs JSON {} bytes:\n{text}",
            text.len(),
            json
        );
        // Every element that can be acted on has its line.
        for e in elements.iter().filter(|e| !e.actions.is_empty()) {
            assert!(text.contains(&format!("{} ", e.id)), "{} missing", e.id);
        }
    }
}
