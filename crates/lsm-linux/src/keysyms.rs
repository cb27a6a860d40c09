//! X keysyms: key names and characters as the keysym numbers that both X11 (XTest, the core
//! keyboard mapping) and GNOME's remote-desktop input (mutter and the portal take keysyms) use.
//! Pure tables and rules, no connection.

use lsm_core::{GuiError, GuiResult, Modifier};

pub(crate) const XK_RETURN: u32 = 0xff0d;
pub(crate) const XK_TAB: u32 = 0xff09;
pub(crate) const XK_BACKSPACE: u32 = 0xff08;
pub(crate) const XK_ESCAPE: u32 = 0xff1b;
pub(crate) const XK_DELETE: u32 = 0xffff;
pub(crate) const XK_SHIFT_L: u32 = 0xffe1;

/// Keysyms of the canonical names of `lsm_core::input::NAMED_KEYS`.
pub(crate) const NAMED_KEYSYMS: &[(&str, u32)] = &[
    ("Return", XK_RETURN),
    ("Tab", XK_TAB),
    ("Escape", XK_ESCAPE),
    ("BackSpace", XK_BACKSPACE),
    ("Delete", XK_DELETE),
    ("Insert", 0xff63),
    ("Home", 0xff50),
    ("End", 0xff57),
    ("Page_Up", 0xff55),
    ("Page_Down", 0xff56),
    ("Left", 0xff51),
    ("Up", 0xff52),
    ("Right", 0xff53),
    ("Down", 0xff54),
    ("space", 0x20),
    ("Menu", 0xff67),
    ("Print", 0xff61),
    ("Pause", 0xff13),
    ("Caps_Lock", 0xffe5),
    ("F1", 0xffbe),
    ("F2", 0xffbf),
    ("F3", 0xffc0),
    ("F4", 0xffc1),
    ("F5", 0xffc2),
    ("F6", 0xffc3),
    ("F7", 0xffc4),
    ("F8", 0xffc5),
    ("F9", 0xffc6),
    ("F10", 0xffc7),
    ("F11", 0xffc8),
    ("F12", 0xffc9),
    ("plus", 0x2b),
    ("minus", 0x2d),
];

/// Keysyms of a modifier, preferred first (left keys, then right, then alternatives).
pub(crate) fn modifier_keysyms(m: Modifier) -> &'static [u32] {
    match m {
        Modifier::Ctrl => &[0xffe3, 0xffe4],
        Modifier::Alt => &[0xffe9, 0xffea, 0xffe7],
        Modifier::Shift => &[XK_SHIFT_L, 0xffe2],
        Modifier::Meta => &[0xffeb, 0xffec, 0xffe7],
    }
}

/// The keysym of a canonical key name (`"Return"`, `"F4"`).
pub fn named_keysym(name: &str) -> Option<u32> {
    NAMED_KEYSYMS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// The keysym that types `c`: Latin-1 keysyms equal the code point, all other characters
/// use the Unicode keysym range; a few control characters map to their keys.
pub fn char_keysym(c: char) -> Option<u32> {
    let cp = c as u32;
    match c {
        '\n' | '\r' => Some(XK_RETURN),
        '\t' => Some(XK_TAB),
        '\u{8}' => Some(XK_BACKSPACE),
        '\u{1b}' => Some(XK_ESCAPE),
        '\u{7f}' => Some(XK_DELETE),
        _ if c.is_control() => None,
        _ if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) => Some(cp),
        _ => Some(0x0100_0000 | cp),
    }
}

/// The keysym of a `KeyCombo::key`: one character or a canonical name.
pub fn key_keysym(key: &str) -> GuiResult<u32> {
    let mut chars = key.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return char_keysym(c)
            .ok_or_else(|| GuiError::invalid(format!("key {key:?} is a control character")));
    }
    named_keysym(key).ok_or_else(|| GuiError::invalid(format!("unknown key name {key:?}")))
}

/// Keysyms to type `text`; "\r\n" counts as one Return.
pub fn text_keysyms(text: &str) -> GuiResult<Vec<u32>> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        let ks = char_keysym(c).ok_or_else(|| {
            GuiError::invalid(format!(
                "text contains control character U+{:04X}, which has no key",
                c as u32
            ))
        })?;
        out.push(ks);
    }
    Ok(out)
}

/// The character a Latin-1 or Unicode keysym stands for.
pub(crate) fn keysym_char(ks: u32) -> Option<char> {
    match ks {
        0x20..=0x7e | 0xa0..=0xff => char::from_u32(ks),
        0x0100_0100..=0x0110_ffff => char::from_u32(ks & 0x00ff_ffff),
        _ => None,
    }
}

pub(crate) fn char_to_keysym_plain(c: char) -> u32 {
    let cp = c as u32;
    if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) {
        cp
    } else {
        0x0100_0000 | cp
    }
}

/// Lower and upper case forms of an alphabetic keysym, if it has both.
pub(crate) fn case_pair(ks: u32) -> Option<(u32, u32)> {
    let c = keysym_char(ks)?;
    let lower = single_char(c.to_lowercase())?;
    let upper = single_char(c.to_uppercase())?;
    (lower != upper).then(|| (char_to_keysym_plain(lower), char_to_keysym_plain(upper)))
}

/// The only item of an iterator, if it has exactly one.
pub(crate) fn single_char(mut it: impl Iterator<Item = char>) -> Option<char> {
    let first = it.next()?;
    it.next().is_none().then_some(first)
}

/// The two shift levels of group 1, with the core protocol's rule for a missing second
/// keysym (a letter's second level is its upper case, anything else repeats the first).
pub(crate) fn group1_levels(l0: u32, l1: u32) -> (u32, u32) {
    if l1 != 0 {
        return (l0, l1);
    }
    match case_pair(l0) {
        Some(pair) => pair,
        None => (l0, l0),
    }
}

/// True when every character of `text` can be typed as a keysym on GNOME: mutter drops keysyms
/// that are not in the active keyboard layout, so only printable ASCII (and Return, Tab) is
/// safe to send that way; anything else goes through the clipboard.
pub fn typeable_by_keysym(text: &str) -> bool {
    text.chars().all(|c| matches!(c, ' '..='~' | '\n' | '\r' | '\t'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_key_has_a_keysym() {
        for (name, _) in lsm_core::input::NAMED_KEYS {
            assert!(named_keysym(name).is_some(), "{name}");
        }
        assert_eq!(named_keysym("Return"), Some(0xff0d));
        assert_eq!(named_keysym("F12"), Some(0xffc9));
        assert_eq!(named_keysym("Page_Down"), Some(0xff56));
        assert_eq!(named_keysym("nope"), None);
    }

    #[test]
    fn chars_map_to_latin1_or_unicode_keysyms() {
        assert_eq!(char_keysym('a'), Some(0x61));
        assert_eq!(char_keysym('é'), Some(0xe9));
        assert_eq!(char_keysym('\u{a0}'), Some(0xa0));
        assert_eq!(char_keysym('한'), Some(0x0100_d55c));
        assert_eq!(char_keysym('€'), Some(0x0100_20ac));
        assert_eq!(char_keysym('😀'), Some(0x0101_f600));
        assert_eq!(char_keysym('\n'), Some(XK_RETURN));
        assert_eq!(char_keysym('\t'), Some(XK_TAB));
        assert_eq!(char_keysym('\u{1}'), None);
        assert_eq!(char_keysym('\u{85}'), None);
    }

    #[test]
    fn key_names_and_chars_resolve() {
        assert_eq!(key_keysym("t").ok(), Some(0x74));
        assert_eq!(key_keysym("+").ok(), Some(0x2b));
        assert_eq!(key_keysym("plus").ok(), Some(0x2b));
        assert_eq!(key_keysym("F4").ok(), Some(0xffc1));
        assert!(key_keysym("Hyper").is_err());
    }

    #[test]
    fn text_turns_crlf_into_one_return_and_rejects_controls() {
        assert_eq!(
            text_keysyms("a\r\nb\tc").ok(),
            Some(vec![0x61, XK_RETURN, 0x62, XK_TAB, 0x63])
        );
        assert!(text_keysyms("a\u{7}").is_err());
    }

    #[test]
    fn missing_second_level_follows_the_core_rule() {
        assert_eq!(group1_levels(0x61, 0), (0x61, 0x41));
        assert_eq!(group1_levels(0xe9, 0), (0xe9, 0xc9));
        assert_eq!(group1_levels(0x31, 0), (0x31, 0x31));
        assert_eq!(group1_levels(0x0100_0430, 0), (0x0100_0430, 0x0100_0410));
        assert_eq!(group1_levels(0xff0d, 0), (0xff0d, 0xff0d));
    }
    #[test]
    fn only_ascii_is_typed_by_keysym() {
        assert!(typeable_by_keysym("Hello, World! ~\n\t"));
        assert!(!typeable_by_keysym("é"));
        assert!(!typeable_by_keysym("日本語"));
        assert!(!typeable_by_keysym("😀"));
    }
}
