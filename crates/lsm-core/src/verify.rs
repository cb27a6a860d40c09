//! Platform-free rules for checking an action's effect: what counts as "the typed text arrived",
//! "the value was taken", "the toggle flipped", and the evidence strings a result carries.
//! Backends read the application before and after; these functions decide and say what was seen.

use crate::backend::Check;

/// Longest text quoted in evidence, in characters.
const QUOTE_CHARS: usize = 60;

/// Text as a model should read it in evidence: quoted, object replacement characters dropped,
/// shortened around the end (where typed text lands) when long.
pub fn quote(text: &str) -> String {
    let clean: String = text.chars().filter(|c| *c != '\u{fffc}').collect();
    let chars: Vec<char> = clean.chars().collect();
    let shown: String = if chars.len() > QUOTE_CHARS {
        let tail: String = chars[chars.len() - QUOTE_CHARS..].iter().collect();
        format!("…{tail}")
    } else {
        clean
    };
    serde_json::to_string(&shown).unwrap_or_else(|_| format!("\"{shown}\""))
}

/// Text compared for equality: line ends unified, object replacement characters and
/// non-breaking spaces (toolkits insert both) made neutral.
fn normalized(text: &str) -> String {
    text.replace("\r\n", "\n")
        .chars()
        .filter(|c| *c != '\u{fffc}')
        .map(|c| if c == '\u{a0}' { ' ' } else { c })
        .collect()
}

/// The part of typed text that must show up in the focused object afterwards: its last
/// non-empty line (after a newline the caret may be in a new paragraph object, as in a word
/// processor). `None`: nothing checkable (only newlines, tabs or spaces).
pub fn typed_needle(typed: &str) -> Option<String> {
    normalized(typed)
        .split('\n')
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
}

/// Whether typing `typed` has arrived, from the focused object's text before and after.
/// `None`: not (yet). Arrived means the last typed line is in the text, and the text changed
/// (or nothing was known before).
pub fn typed_arrived(before: Option<&str>, after: &str, typed: &str) -> Option<String> {
    let needle = typed_needle(typed)?;
    let after_n = normalized(after);
    if !after_n.contains(&needle) {
        return None;
    }
    let count = |s: &str| s.matches(needle.as_str()).count();
    match before.map(normalized) {
        Some(b) if b == after_n => None,
        // Appended to a text that had it already: wait for one more occurrence.
        Some(b) if after_n.starts_with(&b) && count(&after_n) <= count(&b) => None,
        _ => Some(format!("text is now {}", quote(after))),
    }
}

/// [`typed_arrived`], knowing whether the application reported a text change of that object
/// since typing began: then an unchanged text that holds the typed line means it was replaced by
/// the same text (select all, type what was there).
pub fn typed_arrived_after_change(
    before: Option<&str>,
    after: &str,
    typed: &str,
    changed: bool,
) -> Option<String> {
    if let Some(e) = typed_arrived(before, after, typed) {
        return Some(e);
    }
    let needle = typed_needle(typed)?;
    let same = before.is_some_and(|b| normalized(b) == normalized(after));
    (changed && same && normalized(after).contains(&needle))
        .then(|| format!("text is now {} (replaced by the same text)", quote(after)))
}

/// Why typed text could not be confirmed, from what was last read.
pub fn typed_missing(after: Option<&str>, typed: &str, waited_ms: u128) -> String {
    match (typed_needle(typed), after) {
        (None, _) => "only whitespace was typed: nothing to read back".into(),
        (Some(_), None) => "the focused element's text could not be read".into(),
        (Some(n), Some(a)) => format!(
            "after {waited_ms} ms the focused element's text {} does not contain {}",
            quote(a),
            quote(&n)
        ),
    }
}

/// Whether a text value was taken: the read-back equals the wanted text (line ends and
/// non-breaking spaces aside).
pub fn text_value_taken(wanted: &str, after: &str) -> bool {
    normalized(wanted) == normalized(after)
}

/// Whether a numeric value was taken: the read-back is within a small tolerance of the wanted
/// value (after clamping to the control's range by the caller).
pub fn number_taken(wanted: f64, after: f64) -> bool {
    let tol = (wanted.abs() * 1e-6).max(1e-6);
    (wanted - after).abs() <= tol
}

/// States whose change a click on a control is expected to make.
pub const TOGGLE_STATES: &[&str] = &["checked", "pressed", "expanded", "selected", "indeterminate"];

/// The watched states that differ between `before` and `after`, as `checked false -> true`.
pub fn state_changes(before: &[String], after: &[String], watched: &[&str]) -> Vec<String> {
    let has = |set: &[String], s: &str| set.iter().any(|x| x == s);
    watched
        .iter()
        .filter(|s| has(before, s) != has(after, s))
        .map(|s| format!("{s} {} -> {}", has(before, s), has(after, s)))
        .collect()
}

/// The check of a toggle-like click from the states before and after.
pub fn toggle_check(before: &[String], after: &[String], waited_ms: u128) -> Check {
    let changes = state_changes(before, after, TOGGLE_STATES);
    if changes.is_empty() {
        let now: Vec<&str> = TOGGLE_STATES
            .iter()
            .copied()
            .filter(|s| after.iter().any(|x| x == s))
            .collect();
        Check::Unverified(format!(
            "no checked/pressed/expanded/selected state changed within {waited_ms} ms (now: {})",
            if now.is_empty() {
                "none of them".to_string()
            } else {
                now.join(", ")
            }
        ))
    } else {
        Check::Verified(changes.join(", "))
    }
}

/// The watched states of an element of `role` that changed, less those that pass while a
/// control is operated (`pressed` on a push button, `armed`: see [`crate::effect::is_passing`]):
/// only these are evidence of a press.
pub fn effect_state_changes(
    role: &str,
    before: &[String],
    after: &[String],
    watched: &[&str],
) -> Vec<String> {
    let lasting: Vec<&str> = watched
        .iter()
        .copied()
        .filter(|s| !crate::effect::is_passing(role, s))
        .collect();
    state_changes(before, after, &lasting)
}

/// [`toggle_check`] for a control of `role`: a passing state is no evidence.
pub fn toggle_effect(role: &str, before: &[String], after: &[String], waited_ms: u128) -> Check {
    let changes = effect_state_changes(role, before, after, TOGGLE_STATES);
    if changes.is_empty() {
        match toggle_check(before, after, waited_ms) {
            Check::Unverified(w) => Check::Unverified(w),
            Check::Verified(passing) => Check::Unverified(format!(
                "only {passing} within {waited_ms} ms: the look of a control being pressed, not an effect"
            )),
        }
    } else {
        Check::Verified(changes.join(", "))
    }
}

/// Counts for a call's summary line.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Tally {
    pub done: usize,
    pub verified: usize,
    /// `(index, type, why)` of the unverified ones.
    pub unverified: Vec<(usize, String, String)>,
}

impl Tally {
    /// One line: `3 done, 2 verified, 1 unverified (1 key: why)`.
    pub fn line(&self) -> String {
        let mut s = format!("{} done, {} verified", self.done, self.verified);
        if !self.unverified.is_empty() {
            let parts: Vec<String> = self
                .unverified
                .iter()
                .map(|(i, t, why)| format!("{i} {t}: {why}"))
                .collect();
            s.push_str(&format!(
                ", {} unverified ({})",
                self.unverified.len(),
                parts.join("; ")
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn typed_text_arrives_only_when_the_last_line_is_there_and_the_text_changed() {
        let typed = "Grace Hopper Grüße 日本語";
        assert_eq!(typed_arrived(Some(""), "Grace Hop", typed), None);
        assert_eq!(
            typed_arrived(Some(""), "Grace Hopper Grüße 日本語", typed).as_deref(),
            Some("text is now \"Grace Hopper Grüße 日本語\"")
        );
        // Replacing a selection: the old text is gone, the new one is there.
        assert!(typed_arrived(Some("old name"), typed, typed).is_some());
        // Nothing changed: the typed text was already there.
        assert_eq!(typed_arrived(Some(typed), typed, typed), None);
        // A newline ends in a new paragraph: the last non-empty line counts.
        assert!(typed_arrived(None, "first line\u{fffc}", "first line\n").is_some());
        assert_eq!(typed_needle("\n\t "), None);
        assert!(typed_missing(Some("Gra"), typed, 1500).contains("does not contain"));
        // Select all and type the same text: only the change event tells it arrived.
        assert_eq!(typed_arrived_after_change(Some(typed), typed, typed, false), None);
        assert!(typed_arrived_after_change(Some(typed), typed, typed, true).is_some());
    }

    #[test]
    fn typing_a_repeated_word_counts_occurrences() {
        assert_eq!(typed_arrived(Some("ab"), "aba", "ab"), None);
        assert!(typed_arrived(Some("ab"), "abab", "ab").is_some());
        // Select all, then type a shorter text that the old one started with.
        assert!(typed_arrived(Some("Grace Hopper"), "Grace", "Grace").is_some());
    }

    #[test]
    fn quotes_are_short_clean_and_unescaped() {
        assert_eq!(quote("a\u{fffc}b"), "\"ab\"");
        assert_eq!(quote("72.1\u{a0}GiB"), "\"72.1\u{a0}GiB\"");
        let long = "x".repeat(100) + "END";
        let q = quote(&long);
        assert!(q.starts_with("\"…") && q.ends_with("END\""), "{q}");
    }

    #[test]
    fn values_compare_by_text_and_number() {
        assert!(text_value_taken("a\nb", "a\r\nb"));
        assert!(!text_value_taken("Ada", ""));
        assert!(number_taken(42.0, 42.0000001));
        assert!(!number_taken(42.0, 41.0));
    }

    #[test]
    fn toggles_report_the_states_that_changed() {
        assert_eq!(
            toggle_check(&v(&["enabled"]), &v(&["enabled", "checked"]), 10),
            Check::Verified("checked false -> true".into())
        );
        match toggle_check(&v(&["checked"]), &v(&["checked"]), 500) {
            Check::Unverified(w) => assert!(w.contains("now: checked"), "{w}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_push_buttons_pressed_look_is_no_toggle() {
        assert!(matches!(
            toggle_effect("push_button", &v(&[]), &v(&["pressed"]), 10),
            Check::Unverified(w) if w.contains("not an effect")
        ));
        assert_eq!(
            toggle_effect("toggle_button", &v(&[]), &v(&["pressed"]), 10),
            Check::Verified("pressed false -> true".into())
        );
        assert_eq!(
            effect_state_changes(
                "check_box",
                &v(&["armed"]),
                &v(&["checked"]),
                &["checked", "armed"]
            ),
            v(&["checked false -> true"])
        );
    }

    #[test]
    fn tally_line() {
        let t = Tally {
            done: 3,
            verified: 2,
            unverified: vec![(1, "key".into(), "no readable effect".into())],
        };
        assert_eq!(
            t.line(),
            "3 done, 2 verified, 1 unverified (1 key: no readable effect)"
        );
    }
}
