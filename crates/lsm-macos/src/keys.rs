//! Key names to macOS virtual key codes, combos to ordered key events, and text to Unicode key
//! events.
//!
//! The codes are HIToolbox's `kVK_*` (Events.h). Those named `kVK_ANSI_*` are key positions on
//! the US ANSI layout, not characters: on another layout the same code makes another character
//! (on AZERTY, `kVK_ANSI_A` is the key that types "q"). So a combo's character (a letter, digit
//! or symbol, and the named keys "plus" and "minus") is pressed on the key of the *current*
//! layout that types it ([`crate::layout`], read by `cg::layout`): cmd+a on AZERTY presses the
//! key labelled A. A character the layout cannot type is refused in a combo with modifiers,
//! never replaced by another key. Named keys (Return, arrows, F keys, keypad) are the same on
//! every layout. Text never depends on the layout: it is typed with
//! `CGEventKeyboardSetUnicodeString`, so any script arrives; line breaks and tabs are real keys.
//! Every named key of lsm-core's `NAMED_KEYS` has a code or a character (a unit test holds the
//! lists together).

use crate::layout::{char_key, plus_key, CharKey, LayoutKnowledge};
use lsm_core::{GuiError, GuiResult, KeyCombo, Modifier};

/// `CGEventFlags` bits (CGEventTypes.h) that the events carry.
pub mod flags {
    pub const SHIFT: u64 = 0x0002_0000;
    pub const CONTROL: u64 = 0x0004_0000;
    /// Option.
    pub const ALTERNATE: u64 = 0x0008_0000;
    pub const COMMAND: u64 = 0x0010_0000;
    /// Set by the hardware for keypad keys and the arrows; some applications look at it.
    pub const NUMERIC_PAD: u64 = 0x0020_0000;
    /// fn; set by the hardware for F keys, arrows and the navigation block too.
    pub const SECONDARY_FN: u64 = 0x0080_0000;
}

/// Layout-independent codes used by name below.
const KVK_RETURN: u16 = 0x24;
const KVK_TAB: u16 = 0x30;

/// A key to press: its virtual key code and the flags a real key press of it carries (fn for
/// F keys and the navigation block, numeric pad for the keypad and arrows), so that
/// applications reading the flags see what a keyboard would send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacKey {
    pub code: u16,
    pub implied_flags: u64,
}

const fn with(code: u16, implied_flags: u64) -> MacKey {
    MacKey { code, implied_flags }
}

const fn key(code: u16) -> MacKey {
    with(code, 0)
}

const fn fn_key(code: u16) -> MacKey {
    with(code, flags::SECONDARY_FN)
}

const fn arrow(code: u16) -> MacKey {
    with(code, flags::SECONDARY_FN | flags::NUMERIC_PAD)
}

const fn pad(code: u16) -> MacKey {
    with(code, flags::NUMERIC_PAD)
}

/// The canonical names of lsm-core's `NAMED_KEYS` and their keys.
#[rustfmt::skip]
const NAMED_CODES: &[(&str, MacKey)] = &[
    ("Return", key(KVK_RETURN)), ("Tab", key(KVK_TAB)), ("Escape", key(0x35)),
    // kVK_Delete is the Mac's backspace; kVK_ForwardDelete deletes forward.
    ("BackSpace", key(0x33)), ("Delete", fn_key(0x75)),
    // A Mac has no Insert key: a PC keyboard's Insert reads as Help (kVK_Help) on macOS.
    ("Insert", fn_key(0x72)), ("Home", fn_key(0x73)), ("End", fn_key(0x77)), ("Page_Up", fn_key(0x74)),
    ("Page_Down", fn_key(0x79)), ("Left", arrow(0x7B)), ("Right", arrow(0x7C)), ("Down", arrow(0x7D)),
    ("Up", arrow(0x7E)), ("space", key(0x31)),
    // kVK_ContextualMenu: what a PC keyboard's Menu key sends on macOS.
    ("Menu", key(0x6E)),
    // No Print Screen or Pause on a Mac: a PC keyboard's keys read as F13 and F15 there.
    ("Print", fn_key(0x69)), ("Pause", fn_key(0x71)), ("Caps_Lock", key(0x39)), ("F1", fn_key(0x7A)),
    ("F2", fn_key(0x78)), ("F3", fn_key(0x63)), ("F4", fn_key(0x76)), ("F5", fn_key(0x60)),
    ("F6", fn_key(0x61)), ("F7", fn_key(0x62)), ("F8", fn_key(0x64)), ("F9", fn_key(0x65)),
    ("F10", fn_key(0x6D)), ("F11", fn_key(0x67)), ("F12", fn_key(0x6F)),
];

/// lsm's named keys that are characters, so their key depends on the layout: "plus" is the
/// =/+ key, as on Windows (`VK_OEM_PLUS`; see [`crate::layout::plus_key`]), "minus" the key
/// typing "-".
const LAYOUT_NAMED: &[(&str, char)] = &[("plus", '+'), ("minus", '-')];

/// Keys macOS has that lsm-core's parser does not name yet (X keysym spellings), so they work
/// as soon as it does. Volume keys: the codes exist, but whether a posted key event changes
/// the volume (rather than the system-defined media event) must be checked on a Mac.
#[rustfmt::skip]
const EXTRA_CODES: &[(&str, MacKey)] = &[
    ("F13", fn_key(0x69)), ("F14", fn_key(0x6B)), ("F15", fn_key(0x71)), ("F16", fn_key(0x6A)),
    ("F17", fn_key(0x40)), ("F18", fn_key(0x4F)), ("F19", fn_key(0x50)), ("F20", fn_key(0x5A)),
    ("Help", fn_key(0x72)), ("KP_0", pad(0x52)), ("KP_1", pad(0x53)), ("KP_2", pad(0x54)),
    ("KP_3", pad(0x55)), ("KP_4", pad(0x56)), ("KP_5", pad(0x57)), ("KP_6", pad(0x58)),
    ("KP_7", pad(0x59)), ("KP_8", pad(0x5B)), ("KP_9", pad(0x5C)), ("KP_Decimal", pad(0x41)),
    ("KP_Multiply", pad(0x43)), ("KP_Add", pad(0x45)), ("KP_Subtract", pad(0x4E)), ("KP_Divide", pad(0x4B)),
    ("KP_Enter", pad(0x4C)), ("KP_Equal", pad(0x51)),
    // kVK_ANSI_KeypadClear sits where a PC keyboard's Num Lock is.
    ("Num_Lock", pad(0x47)), ("AudioRaiseVolume", key(0x48)), ("AudioLowerVolume", key(0x49)), ("AudioMute", key(0x4A)),
];

/// A modifier as macOS has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MacModifier {
    Control,
    Option,
    Shift,
    Command,
    /// fn: lsm-core's combos do not name it; for callers that need it (e.g. fn+F keys).
    Function,
}

impl MacModifier {
    /// The left key of the modifier (`kVK_Control`, `kVK_Option`, `kVK_Shift`, `kVK_Command`,
    /// `kVK_Function`).
    pub fn code(self) -> u16 {
        match self {
            MacModifier::Control => 0x3B,
            MacModifier::Option => 0x3A,
            MacModifier::Shift => 0x38,
            MacModifier::Command => 0x37,
            MacModifier::Function => 0x3F,
        }
    }

    /// Its `CGEventFlags` bit.
    pub fn flag(self) -> u64 {
        match self {
            MacModifier::Control => flags::CONTROL,
            MacModifier::Option => flags::ALTERNATE,
            MacModifier::Shift => flags::SHIFT,
            MacModifier::Command => flags::COMMAND,
            MacModifier::Function => flags::SECONDARY_FN,
        }
    }
}

/// lsm's modifiers on a Mac. `Meta` (super, meta, win, cmd) is Command: the Mac's primary
/// modifier, where Windows and Linux shortcuts use ctrl; ctrl stays Control, so a model asks
/// for cmd+c to copy on a Mac.
pub fn mac_modifier(m: Modifier) -> MacModifier {
    match m {
        Modifier::Ctrl => MacModifier::Control,
        Modifier::Alt => MacModifier::Option,
        Modifier::Shift => MacModifier::Shift,
        Modifier::Meta => MacModifier::Command,
    }
}

/// A modifier's name, as lsm-core accepts them plus "fn" (which only the Mac has).
pub fn parse_modifier(name: &str) -> Option<MacModifier> {
    Some(match name.to_ascii_lowercase().as_str() {
        "ctrl" | "control" | "ctl" => MacModifier::Control,
        "alt" | "option" | "opt" => MacModifier::Option,
        "shift" => MacModifier::Shift,
        "super" | "meta" | "win" | "windows" | "cmd" | "command" | "logo" => MacModifier::Command,
        "fn" | "function" => MacModifier::Function,
        _ => return None,
    })
}

/// How the key of a combo is pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyTarget {
    /// A layout-independent key (Return, F5, arrows, keypad).
    Code(MacKey),
    /// A character on the key of the current layout that types it, with shift when that
    /// layout needs it.
    Layout { c: char, code: u16, shift: bool },
    /// A character no key of the layout makes, alone or with shift only: a key event carrying
    /// it as its Unicode string.
    Unicode(char),
}

/// Whether a combo's key (a canonical name or a single character, as `KeyCombo` holds it)
/// needs the keyboard layout: characters and the named keys "plus" and "minus" do.
pub fn needs_layout(name: &str) -> bool {
    !NAMED_CODES.iter().chain(EXTRA_CODES).any(|(n, _)| *n == name)
}

/// The key of a combo, given the modifiers held with it and the current layout (read only
/// when [`needs_layout`] says so).
pub fn key_target(name: &str, modifiers: &[Modifier], layout: &LayoutKnowledge) -> GuiResult<KeyTarget> {
    if let Some((_, k)) = NAMED_CODES.iter().chain(EXTRA_CODES).find(|(n, _)| *n == name) {
        return Ok(KeyTarget::Code(*k));
    }
    let command = modifiers.contains(&Modifier::Meta);
    let other = modifiers
        .iter()
        .any(|m| matches!(m, Modifier::Ctrl | Modifier::Alt));
    let (c, key) = match LAYOUT_NAMED.iter().find(|(n, _)| *n == name) {
        Some((_, '+')) => ('+', plus_key(command, other, layout)?),
        Some((_, c)) => (*c, char_key(*c, command, other, layout)?),
        None => {
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if !c.is_control() => (c, char_key(c, command, other, layout)?),
                _ => return Err(GuiError::invalid(format!("unknown key {name:?}"))),
            }
        }
    };
    Ok(match key {
        CharKey::Key(k) => KeyTarget::Layout {
            c,
            code: k.code,
            shift: k.shift,
        },
        CharKey::Unicode(c) => KeyTarget::Unicode(c),
    })
}

/// One keyboard event to post (`CGEventCreateKeyboardEvent`, then `CGEventSetFlags`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyEvent {
    Key {
        code: u16,
        down: bool,
        flags: u64,
    },
    /// A key event whose text is set with `CGEventKeyboardSetUnicodeString` (code 0: the text,
    /// not the key, is what applications read).
    Text {
        text: String,
        down: bool,
        flags: u64,
    },
}

/// The events of a combo: modifiers down in order, each carrying the flags held so far, the key
/// down and up carrying all of them (and the key's own), modifiers up in reverse, each carrying
/// what is still held. A character that needs shift on the current layout adds shift.
pub fn combo_events(combo: &KeyCombo, target: Option<KeyTarget>) -> Vec<KeyEvent> {
    let mut mods: Vec<MacModifier> = combo.modifiers.iter().map(|m| mac_modifier(*m)).collect();
    if let Some(KeyTarget::Layout { shift: true, .. }) = target {
        mods.push(MacModifier::Shift);
    }
    mods.sort();
    mods.dedup();
    let mut out = Vec::with_capacity(mods.len() * 2 + 2);
    let mut held = 0u64;
    for m in &mods {
        held |= m.flag();
        out.push(KeyEvent::Key {
            code: m.code(),
            down: true,
            flags: held,
        });
    }
    match target {
        Some(KeyTarget::Code(k)) => {
            for down in [true, false] {
                out.push(KeyEvent::Key {
                    code: k.code,
                    down,
                    flags: held | k.implied_flags,
                });
            }
        }
        Some(KeyTarget::Layout { code, .. }) => {
            for down in [true, false] {
                out.push(KeyEvent::Key {
                    code,
                    down,
                    flags: held,
                });
            }
        }
        Some(KeyTarget::Unicode(c)) => {
            for down in [true, false] {
                out.push(KeyEvent::Text {
                    text: c.to_string(),
                    down,
                    flags: held,
                });
            }
        }
        None => {}
    }
    for m in mods.iter().rev() {
        held &= !m.flag();
        out.push(KeyEvent::Key {
            code: m.code(),
            down: false,
            flags: held,
        });
    }
    out
}

/// `CGEventKeyboardSetUnicodeString` carries at most 20 UTF-16 units per event (longer strings
/// are cut), so longer text is sent as several key events.
pub const UNICODE_CHUNK_UNITS: usize = 20;

/// One step of typing text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeStep {
    /// At most [`UNICODE_CHUNK_UNITS`] UTF-16 units: a key down carrying them, then a key up.
    Text(String),
    /// A real key press, for line breaks (Return) and tabs (Tab): applications handle those
    /// as keys (a field's Return submits, a Tab moves focus), not as inserted text.
    Key(u16),
}

/// What typing `text` sends: Unicode chunks that never split a surrogate pair nor (for the
/// usual combining marks, variation selectors, skin tones and ZWJ sequences) a character from
/// what follows it, line breaks as Return (`\r\n` once), tabs as Tab. Other control characters
/// are refused, as on Linux and Windows. Empty text sends nothing.
pub fn type_plan(text: &str) -> GuiResult<Vec<TypeStep>> {
    let mut steps = Vec::new();
    let mut chunk = String::new();
    let mut chunk_units = 0usize;
    let mut chars = text.chars().peekable();
    let flush = |steps: &mut Vec<TypeStep>, chunk: &mut String, units: &mut usize| {
        if !chunk.is_empty() {
            steps.push(TypeStep::Text(std::mem::take(chunk)));
            *units = 0;
        }
    };
    while let Some(c) = chars.next() {
        let key = match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                Some(KVK_RETURN)
            }
            '\n' => Some(KVK_RETURN),
            '\t' => Some(KVK_TAB),
            c if c.is_control() => {
                return Err(GuiError::invalid(format!(
                    "text contains the control character U+{:04X}; send it with a key action",
                    c as u32
                )))
            }
            _ => None,
        };
        if let Some(code) = key {
            flush(&mut steps, &mut chunk, &mut chunk_units);
            steps.push(TypeStep::Key(code));
            continue;
        }
        // The character and what joins it (one cluster), kept in one chunk when it fits.
        let mut cluster = String::from(c);
        let mut prev = c;
        while let Some(&next) = chars.peek() {
            if !joins(prev, next) {
                break;
            }
            cluster.push(next);
            prev = next;
            chars.next();
        }
        let units = cluster.encode_utf16().count();
        if chunk_units + units > UNICODE_CHUNK_UNITS {
            flush(&mut steps, &mut chunk, &mut chunk_units);
        }
        if units <= UNICODE_CHUNK_UNITS {
            chunk.push_str(&cluster);
            chunk_units += units;
            continue;
        }
        // A cluster longer than a chunk (a long ZWJ sequence or stacked marks): split it
        // between characters, so never inside a surrogate pair.
        for ch in cluster.chars() {
            let u = ch.len_utf16();
            if chunk_units + u > UNICODE_CHUNK_UNITS {
                flush(&mut steps, &mut chunk, &mut chunk_units);
            }
            chunk.push(ch);
            chunk_units += u;
        }
    }
    flush(&mut steps, &mut chunk, &mut chunk_units);
    Ok(steps)
}

/// Whether `next` belongs to the character before it: combining marks of the common blocks,
/// variation selectors, emoji skin tones, zero-width joiners and what follows a joiner. An
/// approximation of grapheme clusters (no Unicode tables in this crate); what it misses is
/// only split at a chunk boundary, where the two parts still arrive in order.
fn joins(prev: char, next: char) -> bool {
    let n = next as u32;
    prev == '\u{200D}'
        || matches!(n,
            0x0300..=0x036F     // combining diacritical marks
            | 0x1AB0..=0x1AFF   // ... extended
            | 0x1DC0..=0x1DFF   // ... supplement
            | 0x20D0..=0x20FF   // ... for symbols
            | 0xFE20..=0xFE2F   // combining half marks
            | 0x3099..=0x309A   // kana voicing marks
            | 0xFE00..=0xFE0F   // variation selectors
            | 0xE0100..=0xE01EF // variation selectors supplement
            | 0x1F3FB..=0x1F3FF // emoji skin tones
            | 0xE0020..=0xE007F // emoji tag sequences
            | 0x200D) // zero-width joiner
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::KeyLayout;
    use lsm_core::input::NAMED_KEYS;
    use std::sync::Arc;

    fn on_key(c: char, code: u16, shift: bool) -> GuiResult<KeyTarget> {
        Ok(KeyTarget::Layout { c, code, shift })
    }

    fn us() -> LayoutKnowledge {
        LayoutKnowledge::Read(Arc::new(KeyLayout::us_ansi("com.apple.keyboardlayout.US")))
    }

    /// A layout nobody could read: named keys must not need it.
    fn unread() -> LayoutKnowledge {
        LayoutKnowledge::Unreadable {
            source: None,
            why: "not read".into(),
        }
    }

    /// Two keys of AZERTY: the A key where ANSI has q, the Q key where ANSI has a; no other
    /// letters.
    fn a_q_swapped() -> LayoutKnowledge {
        let keys = [(0x00, 'q', 'Q'), (0x0C, 'a', 'A')];
        LayoutKnowledge::Read(Arc::new(KeyLayout::build(
            "com.apple.keyboardlayout.French",
            "French",
            |code, level| {
                keys.iter()
                    .find(|(k, _, _)| *k == code)
                    .map(|(_, plain, shifted)| if level.shift() { *shifted } else { *plain })
            },
        )))
    }

    fn named(name: &str) -> GuiResult<KeyTarget> {
        key_target(name, &[], &unread())
    }

    fn cmd(name: &str, layout: &LayoutKnowledge) -> GuiResult<KeyTarget> {
        key_target(name, &[Modifier::Meta], layout)
    }

    fn text(s: &str) -> TypeStep {
        TypeStep::Text(s.to_string())
    }

    fn texts(steps: &[TypeStep]) -> Vec<String> {
        steps
            .iter()
            .filter_map(|s| match s {
                TypeStep::Text(t) => Some(t.clone()),
                TypeStep::Key(_) => None,
            })
            .collect()
    }

    #[test]
    fn every_named_key_of_lsm_has_a_code_or_a_character() {
        for (name, _) in NAMED_KEYS {
            if LAYOUT_NAMED.iter().any(|(n, _)| n == name) {
                assert!(needs_layout(name), "{name}");
                assert!(matches!(cmd(name, &us()), Ok(KeyTarget::Layout { .. })), "{name}");
            } else {
                assert!(!needs_layout(name), "{name}");
                assert!(
                    matches!(named(name), Ok(KeyTarget::Code(_))),
                    "{name} has no key code"
                );
            }
        }
        assert_eq!(
            NAMED_CODES.len() + LAYOUT_NAMED.len(),
            NAMED_KEYS.len(),
            "a code for a name lsm does not know belongs in EXTRA_CODES"
        );
    }

    #[test]
    fn codes_are_those_of_events_h() {
        let code = |n: &str| match named(n) {
            Ok(KeyTarget::Code(k)) => k.code,
            other => panic!("{n}: {other:?}"),
        };
        #[rustfmt::skip]
        let expected = [
            ("Return", 0x24), ("Tab", 0x30), ("space", 0x31), ("BackSpace", 0x33), ("Escape", 0x35),
            ("Delete", 0x75), ("Insert", 0x72), ("Left", 0x7B), ("Up", 0x7E), ("F1", 0x7A),
            ("F20", 0x5A), ("KP_Enter", 0x4C),
        ];
        for (name, want) in expected {
            assert_eq!(code(name), want, "{name}");
        }
        // No two names share a code, except the aliases of one key.
        let mut all: Vec<(u16, &str)> = NAMED_CODES
            .iter()
            .chain(EXTRA_CODES)
            .map(|(n, k)| (k.code, *n))
            .collect();
        all.sort();
        let aliases = [("Print", "F13"), ("Pause", "F15"), ("Insert", "Help")];
        for w in all.windows(2).filter(|w| w[0].0 == w[1].0) {
            assert!(
                aliases
                    .iter()
                    .any(|(a, b)| (w[0].1 == *a && w[1].1 == *b) || (w[0].1 == *b && w[1].1 == *a)),
                "{} and {} share 0x{:02X}",
                w[0].1,
                w[1].1,
                w[0].0
            );
        }
        assert!(matches!(named("F5"), Ok(KeyTarget::Code(k)) if k.implied_flags == flags::SECONDARY_FN));
        assert!(matches!(named("Down"), Ok(KeyTarget::Code(k))
            if k.implied_flags == flags::SECONDARY_FN | flags::NUMERIC_PAD));
    }

    #[test]
    fn characters_take_the_layouts_key_or_unicode() {
        assert_eq!(cmd("a", &us()), on_key('a', 0x00, false));
        assert_eq!(cmd("T", &us()), on_key('T', 0x11, false));
        assert_eq!(cmd("0", &us()), on_key('0', 0x1D, false));
        assert_eq!(cmd("?", &us()), on_key('?', 0x2C, true));
        assert_eq!(cmd("plus", &us()), on_key('+', 0x18, false));
        assert_eq!(cmd("minus", &us()), on_key('-', 0x1B, false));
        assert_eq!(key_target("é", &[], &us()), Ok(KeyTarget::Unicode('é')));
        assert_eq!(
            key_target("한", &[Modifier::Shift], &us()),
            Ok(KeyTarget::Unicode('한'))
        );
        // With command, a character the layout lacks is refused, not sent on key code 0.
        let e = cmd("é", &us()).expect_err("no é on US");
        assert_eq!(e.code, lsm_core::ErrorCode::InvalidArgument);
        assert!(key_target("é", &[Modifier::Ctrl], &us()).is_err());
        let e = named("Hyper").expect_err("unknown");
        assert_eq!(e.code, lsm_core::ErrorCode::InvalidArgument);
        assert!(named("\u{7}").is_err());
        assert!(needs_layout("a") && needs_layout("plus") && !needs_layout("F5"));
    }

    #[test]
    fn cmd_a_on_azerty_presses_the_a_key_not_ansi_a_which_types_q() {
        let combo = KeyCombo::parse("cmd+a", 8).expect("parse");
        let layout = a_q_swapped();
        let target = cmd(combo.key.as_deref().expect("key"), &layout).expect("a");
        assert_eq!(
            target,
            KeyTarget::Layout {
                c: 'a',
                code: 0x0C,
                shift: false
            }
        );
        let pressed: Vec<u16> = combo_events(&combo, Some(target))
            .iter()
            .filter_map(|e| match e {
                KeyEvent::Key { code, down: true, .. } => Some(*code),
                _ => None,
            })
            .collect();
        assert_eq!(pressed, [0x37, 0x0C]);
        // The layout has no "c" at all here: cmd+c is refused, naming the layout.
        let e = cmd("c", &layout).expect_err("no c");
        assert!(
            e.message.contains("French (com.apple.keyboardlayout.French)"),
            "{}",
            e.message
        );
        // Unread, a letter combo is refused; a named key does not need the layout.
        assert_eq!(
            cmd("a", &unread()).expect_err("unread").code,
            lsm_core::ErrorCode::UnsupportedAction
        );
        assert!(matches!(cmd("Return", &unread()), Ok(KeyTarget::Code(_))));
    }

    #[test]
    fn modifiers_and_their_flags() {
        assert_eq!(mac_modifier(Modifier::Meta), MacModifier::Command);
        assert_eq!(mac_modifier(Modifier::Alt), MacModifier::Option);
        for name in ["super", "meta", "win", "cmd", "command"] {
            assert_eq!(parse_modifier(name), Some(MacModifier::Command), "{name}");
        }
        assert_eq!(parse_modifier("option"), Some(MacModifier::Option));
        assert_eq!(parse_modifier("fn"), Some(MacModifier::Function));
        assert_eq!(parse_modifier("hyper"), None);
        use MacModifier::*;
        let codes: Vec<(u16, u64)> = [Command, Shift, Option, Control, Function]
            .iter()
            .map(|m| (m.code(), m.flag()))
            .collect();
        assert_eq!(
            codes,
            [
                (0x37, 0x10_0000),
                (0x38, 0x2_0000),
                (0x3A, 0x8_0000),
                (0x3B, 0x4_0000),
                (0x3F, 0x80_0000)
            ]
        );
    }

    fn ev(code: u16, down: bool, flags: u64) -> KeyEvent {
        KeyEvent::Key { code, down, flags }
    }

    #[test]
    fn combos_press_in_order_release_in_reverse_with_the_flags_held() {
        let combo = KeyCombo::parse("cmd+shift+t", 8).expect("parse");
        let t = key_target(combo.key.as_deref().expect("key"), &combo.modifiers, &us()).expect("t");
        let (cmd, shift) = (flags::COMMAND, flags::SHIFT);
        assert_eq!(
            combo_events(&combo, Some(t)),
            [
                ev(0x38, true, shift),
                ev(0x37, true, shift | cmd),
                ev(0x11, true, shift | cmd),
                ev(0x11, false, shift | cmd),
                ev(0x37, false, shift),
                ev(0x38, false, 0),
            ]
        );
        let alone = KeyCombo::parse("alt", 8).expect("parse");
        assert_eq!(
            combo_events(&alone, None),
            [ev(0x3A, true, flags::ALTERNATE), ev(0x3A, false, 0)]
        );
        // The key's own flags join those of the modifiers on the key's events only.
        let f4 = KeyCombo::parse("ctrl+F4", 8).expect("parse");
        let target = named(f4.key.as_deref().expect("key")).expect("F4");
        let both = flags::CONTROL | flags::SECONDARY_FN;
        assert_eq!(
            combo_events(&f4, Some(target)),
            [
                ev(0x3B, true, flags::CONTROL),
                ev(0x76, true, both),
                ev(0x76, false, both),
                ev(0x3B, false, 0),
            ]
        );
    }

    #[test]
    fn shifted_characters_add_shift_once_and_others_go_as_text() {
        let bang = KeyCombo::parse("cmd+?", 8).expect("parse");
        let target = cmd("?", &us()).expect("?");
        let held = flags::SHIFT | flags::COMMAND;
        assert_eq!(
            combo_events(&bang, Some(target)),
            [
                ev(0x38, true, flags::SHIFT),
                ev(0x37, true, held),
                ev(0x2C, true, held),
                ev(0x2C, false, held),
                ev(0x37, false, flags::SHIFT),
                ev(0x38, false, 0),
            ]
        );
        let shifted = KeyCombo::parse("shift+?", 8).expect("parse");
        assert_eq!(combo_events(&shifted, Some(target)).len(), 4);
        let e = KeyCombo::parse("é", 8).expect("parse");
        assert_eq!(
            combo_events(&e, Some(KeyTarget::Unicode('é'))),
            [true, false].map(|down| KeyEvent::Text {
                text: "é".into(),
                down,
                flags: 0
            })
        );
    }

    #[test]
    fn ascii_is_chunked_by_twenty_units() {
        let s = "abcdefghijklmnopqrstuvwxyz0123456789 ABCDEFGH";
        let steps = type_plan(s).expect("plan");
        assert_eq!(texts(&steps), [&s[..20], &s[20..40], &s[40..]]);
        assert_eq!(type_plan("").expect("empty"), []);
        assert_eq!(type_plan("hi").expect("hi"), [text("hi")]);
    }

    #[test]
    fn accents_cjk_and_emoji_stay_whole_at_chunk_boundaries() {
        // Precomposed é and CJK are one unit each.
        let s = "é日本語한글";
        assert_eq!(type_plan(s).expect("plan"), [text(s)]);
        // An emoji (two units) that would straddle the boundary starts the next chunk.
        let nineteen = "a".repeat(19);
        let steps = type_plan(&format!("{nineteen}😀b")).expect("plan");
        assert_eq!(texts(&steps), [nineteen.clone(), "😀b".to_string()]);
        // An e with a combining acute stays with its mark.
        let steps = type_plan(&format!("{nineteen}e\u{301}x")).expect("plan");
        assert_eq!(texts(&steps), [nineteen.clone(), "e\u{301}x".to_string()]);
        // A family (ZWJ sequence, 8 units) and a thumbs-up with skin tone stay whole.
        let family = "👨\u{200D}👩\u{200D}👧";
        let thumbs = "👍\u{1F3FD}";
        let s = format!("{}{family}{thumbs}{family}{family}", "a".repeat(15));
        let steps = type_plan(&s).expect("plan");
        assert_eq!(
            texts(&steps),
            [
                "a".repeat(15),
                format!("{family}{thumbs}{family}"),
                family.to_string()
            ]
        );
        // Twenty emoji: ten per chunk, every chunk valid UTF-16 (a String could not hold a
        // split pair) and none longer than the limit.
        let many = "😀".repeat(20);
        let steps = type_plan(&many).expect("plan");
        assert_eq!(texts(&steps), ["😀".repeat(10), "😀".repeat(10)]);
        // A cluster longer than a chunk is split between characters.
        let stacked = format!("a{}", "\u{301}".repeat(30));
        let parts = texts(&type_plan(&stacked).expect("plan"));
        assert_eq!(parts.concat(), stacked);
        assert!(parts
            .iter()
            .all(|p| p.encode_utf16().count() <= UNICODE_CHUNK_UNITS));
    }

    #[test]
    fn line_breaks_and_tabs_are_keys() {
        let steps = type_plan("a\r\nb\nc\td\n").expect("plan");
        let (ret, tab) = (TypeStep::Key(0x24), TypeStep::Key(0x30));
        #[rustfmt::skip]
        let want = [text("a"), ret.clone(), text("b"), ret.clone(), text("c"), tab, text("d"), ret];
        assert_eq!(steps, want);
        let e = type_plan("bell\u{7}").expect_err("control");
        assert_eq!(e.code, lsm_core::ErrorCode::InvalidArgument);
    }
}
