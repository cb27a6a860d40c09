//! Key names to Windows virtual keys, and text to Unicode keyboard input.
//!
//! Every named key of lsm-core's `NAMED_KEYS` has a virtual key here (a unit test holds the two
//! lists together). Letters and digits are their own virtual keys; any other single character
//! in a combo (`ctrl+/`) depends on the keyboard layout and is looked up when the combo is sent
//! (`VkKeyScanW`). Text is typed as UTF-16 units with `KEYEVENTF_UNICODE`, so any script
//! arrives whatever the layout; line breaks are the Return key.

use lsm_core::{GuiError, GuiResult, KeyCombo, Modifier};

/// A virtual key, and whether it is an extended key (`KEYEVENTF_EXTENDEDKEY`: the arrows and
/// the block above them, which otherwise read as the numeric keypad's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtualKey {
    pub vk: u16,
    pub extended: bool,
}

const fn vk(vk: u16) -> VirtualKey {
    VirtualKey { vk, extended: false }
}

const fn ext(vk: u16) -> VirtualKey {
    VirtualKey { vk, extended: true }
}

/// Named keys (their canonical lsm names) and their virtual keys.
const NAMED_VKS: &[(&str, VirtualKey)] = &[
    ("Return", vk(0x0D)),
    ("Tab", vk(0x09)),
    ("Escape", vk(0x1B)),
    ("BackSpace", vk(0x08)),
    ("Delete", ext(0x2E)),
    ("Insert", ext(0x2D)),
    ("Home", ext(0x24)),
    ("End", ext(0x23)),
    ("Page_Up", ext(0x21)),
    ("Page_Down", ext(0x22)),
    ("Left", ext(0x25)),
    ("Right", ext(0x27)),
    ("Up", ext(0x26)),
    ("Down", ext(0x28)),
    ("space", vk(0x20)),
    ("Menu", ext(0x5D)),  // VK_APPS
    ("Print", ext(0x2C)), // VK_SNAPSHOT
    ("Pause", vk(0x13)),
    ("Caps_Lock", vk(0x14)),
    ("F1", vk(0x70)),
    ("F2", vk(0x71)),
    ("F3", vk(0x72)),
    ("F4", vk(0x73)),
    ("F5", vk(0x74)),
    ("F6", vk(0x75)),
    ("F7", vk(0x76)),
    ("F8", vk(0x77)),
    ("F9", vk(0x78)),
    ("F10", vk(0x79)),
    ("F11", vk(0x7A)),
    ("F12", vk(0x7B)),
    ("plus", vk(0xBB)),  // VK_OEM_PLUS
    ("minus", vk(0xBD)), // VK_OEM_MINUS
];

/// The virtual key held for a modifier (the left one).
pub fn modifier_vk(m: Modifier) -> VirtualKey {
    match m {
        Modifier::Ctrl => vk(0xA2),  // VK_LCONTROL
        Modifier::Alt => vk(0xA4),   // VK_LMENU
        Modifier::Shift => vk(0xA0), // VK_LSHIFT
        Modifier::Meta => ext(0x5B), // VK_LWIN
    }
}

/// How the key of a combo is pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyTarget {
    Virtual(VirtualKey),
    /// A character whose key depends on the layout: `VkKeyScanW` when sending (which may add
    /// shift); a character no key of the layout makes is typed as Unicode instead.
    LayoutChar(char),
}

/// The key of a combo (a canonical name or a single character, as `KeyCombo` holds it).
pub fn key_target(key: &str) -> GuiResult<KeyTarget> {
    if let Some((_, v)) = NAMED_VKS.iter().find(|(n, _)| *n == key) {
        return Ok(KeyTarget::Virtual(*v));
    }
    let mut chars = key.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphabetic() => {
            Ok(KeyTarget::Virtual(vk(c.to_ascii_uppercase() as u16)))
        }
        (Some(c), None) if c.is_ascii_digit() => Ok(KeyTarget::Virtual(vk(c as u16))),
        (Some(' '), None) => Ok(KeyTarget::Virtual(vk(0x20))),
        (Some(c), None) if !c.is_control() => Ok(KeyTarget::LayoutChar(c)),
        _ => Err(GuiError::invalid(format!("unknown key {key:?}"))),
    }
}

/// One keyboard event to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEvent {
    Down(VirtualKey),
    Up(VirtualKey),
}

/// The events of a combo whose key is a virtual key: modifiers down in order, the key down and
/// up, modifiers up in reverse.
pub fn combo_events(combo: &KeyCombo, key: Option<VirtualKey>) -> Vec<KeyEvent> {
    let mods: Vec<VirtualKey> = combo.modifiers.iter().map(|m| modifier_vk(*m)).collect();
    let mut out: Vec<KeyEvent> = mods.iter().map(|m| KeyEvent::Down(*m)).collect();
    if let Some(k) = key {
        out.push(KeyEvent::Down(k));
        out.push(KeyEvent::Up(k));
    }
    out.extend(mods.iter().rev().map(|m| KeyEvent::Up(*m)));
    out
}

/// What typing `text` sends: UTF-16 units as Unicode input, line breaks as the Return key
/// (`\r\n` once), a tab as Tab. Other control characters are refused, as on Linux.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeUnit {
    Unicode(u16),
    Key(VirtualKey),
}

pub fn text_units(text: &str) -> GuiResult<Vec<TypeUnit>> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(TypeUnit::Key(vk(0x0D)));
            }
            '\n' => out.push(TypeUnit::Key(vk(0x0D))),
            '\t' => out.push(TypeUnit::Key(vk(0x09))),
            c if c.is_control() => {
                return Err(GuiError::invalid(format!(
                    "text contains the control character U+{:04X}; send it with a key action",
                    c as u32
                )))
            }
            c => {
                let mut buf = [0u16; 2];
                out.extend(c.encode_utf16(&mut buf).iter().map(|u| TypeUnit::Unicode(*u)));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsm_core::input::NAMED_KEYS;

    #[test]
    fn every_named_key_of_lsm_has_a_virtual_key() {
        for (name, _) in NAMED_KEYS {
            assert!(
                matches!(key_target(name), Ok(KeyTarget::Virtual(_))),
                "{name} has no virtual key"
            );
        }
        assert_eq!(
            NAMED_VKS.len(),
            NAMED_KEYS.len(),
            "no virtual key for a name lsm does not know"
        );
    }

    #[test]
    fn letters_digits_and_layout_characters() {
        assert_eq!(key_target("a"), Ok(KeyTarget::Virtual(vk(0x41))));
        assert_eq!(key_target("T"), Ok(KeyTarget::Virtual(vk(0x54))));
        assert_eq!(key_target("7"), Ok(KeyTarget::Virtual(vk(0x37))));
        assert_eq!(key_target("/"), Ok(KeyTarget::LayoutChar('/')));
        assert_eq!(key_target("é"), Ok(KeyTarget::LayoutChar('é')));
        assert_eq!(key_target("Left"), Ok(KeyTarget::Virtual(ext(0x25))));
        assert!(key_target("Hyper").is_err());
    }

    #[test]
    fn combos_press_modifiers_in_order_and_release_in_reverse() {
        let combo = KeyCombo::parse("ctrl+shift+t", 8).expect("parse");
        let t = match key_target(combo.key.as_deref().expect("key")) {
            Ok(KeyTarget::Virtual(v)) => v,
            other => panic!("{other:?}"),
        };
        let ctrl = modifier_vk(Modifier::Ctrl);
        let shift = modifier_vk(Modifier::Shift);
        assert_eq!(
            combo_events(&combo, Some(t)),
            [
                KeyEvent::Down(ctrl),
                KeyEvent::Down(shift),
                KeyEvent::Down(t),
                KeyEvent::Up(t),
                KeyEvent::Up(shift),
                KeyEvent::Up(ctrl)
            ]
        );
        let alone = KeyCombo::parse("alt", 8).expect("parse");
        let alt = modifier_vk(Modifier::Alt);
        assert_eq!(
            combo_events(&alone, None),
            [KeyEvent::Down(alt), KeyEvent::Up(alt)]
        );
        let f4 = KeyCombo::parse("alt+F4", 8).expect("parse");
        assert_eq!(
            key_target(f4.key.as_deref().expect("key")),
            Ok(KeyTarget::Virtual(vk(0x73)))
        );
    }

    #[test]
    fn text_becomes_utf16_units_with_returns() {
        let units = text_units("abc 日本語 한글").expect("text");
        let expected: Vec<TypeUnit> = "abc 日本語 한글".encode_utf16().map(TypeUnit::Unicode).collect();
        assert_eq!(units, expected);
        // An emoji outside the BMP is a surrogate pair.
        assert_eq!(
            text_units("😀").expect("emoji"),
            [TypeUnit::Unicode(0xD83D), TypeUnit::Unicode(0xDE00)]
        );
        let lines = text_units("a\r\nb\nc\td").expect("lines");
        let ret = TypeUnit::Key(vk(0x0D));
        let tab = TypeUnit::Key(vk(0x09));
        assert_eq!(
            lines,
            [
                TypeUnit::Unicode(b'a'.into()),
                ret.clone(),
                TypeUnit::Unicode(b'b'.into()),
                ret,
                TypeUnit::Unicode(b'c'.into()),
                tab,
                TypeUnit::Unicode(b'd'.into())
            ]
        );
        assert!(text_units("bell\u{7}").is_err());
    }
}
