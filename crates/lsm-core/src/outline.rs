//! Short text forms of results, for models that read text rather than structured content.

use crate::model::{Element, WindowInfo};
use crate::service::{ActionOutput, ListOutput, StateOutput};
use std::fmt::Write;

fn quote(s: &str, max: usize) -> String {
    let mut t: String = s.chars().take(max).collect();
    if s.chars().count() > max {
        t.push('…');
    }
    format!("{t:?}")
}

fn window_line(w: &WindowInfo) -> String {
    let b = &w.bounds;
    let mut line = format!(
        "{} {} app={} {}x{} at ({},{})",
        w.window_id,
        quote(&w.title, 80),
        w.app,
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
    s
}

/// States worth a model's attention; the rest are noise in an outline.
const NOTABLE_STATES: &[&str] = &[
    "focused",
    "checked",
    "pressed",
    "selected",
    "expanded",
    "collapsed",
    "indeterminate",
    "editable",
    "read_only",
    "multi_line",
];

fn element_line(e: &Element) -> String {
    let mut line = format!("{}{} {}", "  ".repeat(e.depth as usize), e.id, e.role);
    if !e.name.is_empty() {
        let _ = write!(line, " {}", quote(&e.name, 60));
    }
    if let Some(v) = &e.value {
        if !v.is_empty() && v != &e.name {
            let _ = write!(line, " value={}", quote(v, 60));
        }
    }
    let notable: Vec<&str> = e
        .states
        .iter()
        .map(String::as_str)
        .filter(|s| NOTABLE_STATES.contains(s))
        .collect();
    if !notable.is_empty() {
        let _ = write!(line, " [{}]", notable.join(","));
    }
    let disabled = !e.states.is_empty() && !e.states.iter().any(|s| s == "sensitive" || s == "enabled");
    if disabled {
        line.push_str(" [disabled]");
    }
    if let Some(b) = e.bounds {
        let _ = write!(line, " @{},{} {}x{}", b.x, b.y, b.width, b.height);
    }
    line
}

pub fn state_text(out: &StateOutput) -> String {
    let mut s = format!(
        "state_id {} (single use, expires in {} s)\nwindow {}\ncoordinates: window-relative logical px, {}x{}\n",
        out.state_id,
        out.expires_in_ms / 1000,
        window_line(&out.window),
        out.coordinate_space.width,
        out.coordinate_space.height,
    );
    if let Some(shot) = &out.screenshot {
        let _ = writeln!(
            s,
            "screenshot {}x{} {}{}",
            shot.width,
            shot.height,
            shot.format,
            if shot.occluded {
                " (other windows may cover parts of it)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        s,
        "{} element(s){}:",
        out.element_count,
        if out.truncated { " (truncated)" } else { "" }
    );
    for e in &out.elements {
        let _ = writeln!(s, "{}", element_line(e));
    }
    if let Some(reason) = &out.truncated_reason {
        let _ = writeln!(s, "truncated: {reason}");
    }
    for n in &out.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

pub fn action_text(out: &ActionOutput) -> String {
    let parts: Vec<String> = out
        .results
        .iter()
        .map(|r| {
            format!(
                "{}:{}({})",
                r.index,
                r.action_type,
                r.method.as_deref().unwrap_or("-")
            )
        })
        .collect();
    format!(
        "ok: {} action(s) done: {}. {}",
        out.results.len(),
        parts.join(", "),
        out.next
    )
}
