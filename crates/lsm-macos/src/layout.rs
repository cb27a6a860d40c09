//! Which key of the current keyboard layout types a character, for the character keys of combos.
//!
//! A Mac's virtual key codes are key positions (named after the US ANSI layout), not
//! characters: on AZERTY the code of ANSI "a" types "q", so pressing a combo's letter at its
//! ANSI position would turn cmd+a into cmd+q (quit). The macOS side (`cg::layout`) asks the
//! layout what every key types, without modifiers, with shift, with command and with both; this
//! module turns those answers into a map from characters to keys and decides, per combo, which
//! key to press or why none may be. Nothing here calls the OS, so the Linux tests run it with
//! fake layouts.
//!
//! The rules, all aimed at never pressing a key other than the one asked for:
//! - A combo holding command looks the character up in what the keys type *with command*:
//!   layouts such as "Dvorak - QWERTY ⌘" switch to QWERTY while command is held, and that is
//!   what applications match their shortcuts against. Without command, the plain map is used.
//!   Option and control are taken not to change which character a key stands for (applications
//!   match shortcuts on the characters without them).
//! - A key that types the character without shift is preferred to one that needs shift (shift
//!   is then added to the combo); among equals, the lowest key code (the main block before the
//!   keypad, whose keys are reached by their `KP_` names instead).
//! - Letters ignore case in a combo, as on Windows: "ctrl+T" is ctrl+t.
//! - A character the layout cannot type: with a modifier other than shift the combo is refused
//!   (`INVALID_ARGUMENT`, naming the layout); alone or with shift it is sent as a Unicode key
//!   event, which types it on any layout.
//! - A layout that cannot be read: the US ANSI positions are used only when the input source
//!   is one known to have them (`ANSI_SOURCES`); otherwise character keys with modifiers are
//!   refused with the reason.

use lsm_core::{ErrorCode, GuiError, GuiResult};
use std::collections::HashMap;

/// The virtual key codes that are asked what they type (`0..128`: every key of a Mac keyboard).
pub const KEY_CODES: std::ops::Range<u16> = 0..128;

/// Keypad keys (`kVK_ANSI_Keypad*`): left out of the map, so a digit or operator is pressed on
/// the main block; the keypad keys have their own names (`KP_1`, `KP_Add`).
const KEYPAD_CODES: &[u16] = &[
    0x41, 0x43, 0x45, 0x47, 0x4B, 0x4C, 0x4E, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5B,
    0x5C,
];

/// The modifier states a layout is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Plain,
    Shift,
    Command,
    CommandShift,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Plain, Level::Shift, Level::Command, Level::CommandShift];

    pub fn shift(self) -> bool {
        matches!(self, Level::Shift | Level::CommandShift)
    }

    pub fn command(self) -> bool {
        matches!(self, Level::Command | Level::CommandShift)
    }
}

/// A key that types a character: its virtual key code and whether shift must be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutKey {
    pub code: u16,
    pub shift: bool,
}

/// What the keys of one keyboard layout type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLayout {
    /// The input source's id (`kTISPropertyInputSourceID`), e.g. `com.apple.keyboardlayout.French`.
    pub id: String,
    /// Its name for people (`kTISPropertyLocalizedName`), e.g. "French"; the id when unknown.
    pub name: String,
    plain: HashMap<char, LayoutKey>,
    command: HashMap<char, LayoutKey>,
}

impl KeyLayout {
    /// Asks `translate` what every key of [`KEY_CODES`] types at every [`Level`] (`None`: nothing
    /// printable, a dead key's state, or an error) and keeps, per character, the key the rules
    /// of the module prefer. Control characters and keypad keys are left out.
    pub fn build(
        id: impl Into<String>,
        name: impl Into<String>,
        mut translate: impl FnMut(u16, Level) -> Option<char>,
    ) -> KeyLayout {
        let mut plain = HashMap::new();
        let mut command = HashMap::new();
        // Unshifted levels first, so a key without shift wins over one with it.
        for level in [Level::Plain, Level::Command, Level::Shift, Level::CommandShift] {
            let map = if level.command() { &mut command } else { &mut plain };
            for code in KEY_CODES.filter(|c| !KEYPAD_CODES.contains(c)) {
                let Some(c) = translate(code, level).filter(|c| !c.is_control()) else {
                    continue;
                };
                map.entry(c).or_insert(LayoutKey {
                    code,
                    shift: level.shift(),
                });
            }
        }
        let id = id.into();
        let name = name.into();
        let name = if name.is_empty() { id.clone() } else { name };
        KeyLayout {
            id,
            name,
            plain,
            command,
        }
    }

    /// The US ANSI layout (lsm's table of its key positions), for input sources known to have
    /// it when the layout itself cannot be read.
    pub fn us_ansi(id: &str) -> KeyLayout {
        KeyLayout::build(id, "U.S.", |code, level| {
            ANSI_CHARS
                .iter()
                .find(|(k, _, _)| *k == code)
                .map(|(_, plain, shifted)| if level.shift() { *shifted } else { *plain })
        })
    }

    /// The key typing `c` while command is (`command`) or is not held.
    pub fn key_for(&self, c: char, command: bool) -> Option<LayoutKey> {
        let map = if command { &self.command } else { &self.plain };
        map.get(&c).copied()
    }

    /// "French (com.apple.keyboardlayout.French)", for messages.
    pub fn label(&self) -> String {
        if self.name == self.id {
            self.id.clone()
        } else {
            format!("{} ({})", self.name, self.id)
        }
    }
}

/// The US ANSI layout: per key code, what it types without and with shift. The source of
/// [`KeyLayout::us_ansi`].
#[rustfmt::skip]
const ANSI_CHARS: &[(u16, char, char)] = &[
    (0x00, 'a', 'A'), (0x01, 's', 'S'), (0x02, 'd', 'D'), (0x03, 'f', 'F'), (0x04, 'h', 'H'), (0x05, 'g', 'G'),
    (0x06, 'z', 'Z'), (0x07, 'x', 'X'), (0x08, 'c', 'C'), (0x09, 'v', 'V'), (0x0B, 'b', 'B'), (0x0C, 'q', 'Q'),
    (0x0D, 'w', 'W'), (0x0E, 'e', 'E'), (0x0F, 'r', 'R'), (0x10, 'y', 'Y'), (0x11, 't', 'T'), (0x12, '1', '!'),
    (0x13, '2', '@'), (0x14, '3', '#'), (0x15, '4', '$'), (0x16, '6', '^'), (0x17, '5', '%'), (0x18, '=', '+'),
    (0x19, '9', '('), (0x1A, '7', '&'), (0x1B, '-', '_'), (0x1C, '8', '*'), (0x1D, '0', ')'), (0x1E, ']', '}'),
    (0x1F, 'o', 'O'), (0x20, 'u', 'U'), (0x21, '[', '{'), (0x22, 'i', 'I'), (0x23, 'p', 'P'), (0x25, 'l', 'L'),
    (0x26, 'j', 'J'), (0x27, '\'', '"'), (0x28, 'k', 'K'), (0x29, ';', ':'), (0x2A, '\\', '|'), (0x2B, ',', '<'),
    (0x2C, '/', '?'), (0x2D, 'n', 'N'), (0x2E, 'm', 'M'), (0x2F, '.', '>'), (0x32, '`', '~'), (0x31, ' ', ' '),
];

/// Input sources whose keys sit at the US ANSI positions: the only ones for which those
/// positions are used when the layout's key data cannot be read.
pub const ANSI_SOURCES: &[&str] = &["com.apple.keyboardlayout.US", "com.apple.keyboardlayout.ABC"];

/// What is known of the current layout when a combo is pressed.
#[derive(Debug, Clone)]
pub enum LayoutKnowledge {
    Read(std::sync::Arc<KeyLayout>),
    /// The layout's key data could not be read: the input source's id when known, and why.
    Unreadable {
        source: Option<String>,
        why: String,
    },
}

/// How a combo's character is pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharKey {
    /// This key of the layout, with shift added when `shift`.
    Key(LayoutKey),
    /// A key event carrying the character as its Unicode string (no modifier but shift held).
    Unicode(char),
}

/// The character a combo's letter stands for: letters ignore case ("T" is "t") when the
/// lowercase form is one character.
fn case_folded(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) if c.is_uppercase() => l,
        _ => c,
    }
}

/// The layout to look characters up in: the one read, or the US ANSI table for an unreadable
/// input source known to have its positions; otherwise why there is none.
fn lookup_table(layout: &LayoutKnowledge) -> Result<std::sync::Arc<KeyLayout>, (String, &str)> {
    match layout {
        LayoutKnowledge::Read(l) => Ok(l.clone()),
        LayoutKnowledge::Unreadable { source: Some(id), .. } if ANSI_SOURCES.contains(&id.as_str()) => {
            Ok(std::sync::Arc::new(KeyLayout::us_ansi(id)))
        }
        LayoutKnowledge::Unreadable { source, why } => {
            Err((source.clone().unwrap_or_else(|| "unknown".into()), why.as_str()))
        }
    }
}

/// The key for character `c` in a combo. `command`: command is held; `other_modifiers`:
/// control, option or fn is held (shift alone does not count: a Unicode event keeps it).
pub fn char_key(
    c: char,
    command: bool,
    other_modifiers: bool,
    layout: &LayoutKnowledge,
) -> GuiResult<CharKey> {
    let modified = command || other_modifiers;
    let table = match lookup_table(layout) {
        Ok(t) => t,
        Err(_) if !modified => return Ok(CharKey::Unicode(c)),
        Err((source, why)) => {
            return Err(GuiError::new(
                ErrorCode::UnsupportedAction,
                format!(
                    "the current keyboard layout ({source}) could not be read ({why}), so the key \
                     that types {c:?} is unknown and pressing a guessed one could trigger another \
                     shortcut; named keys (Return, Tab, arrows, F keys) and typed text still work"
                ),
            ))
        }
    };
    if let Some(key) = table
        .key_for(case_folded(c), command)
        .or_else(|| table.key_for(c, command))
    {
        return Ok(CharKey::Key(key));
    }
    if !modified {
        return Ok(CharKey::Unicode(c));
    }
    let held = if command { " while command is held" } else { "" };
    Err(GuiError::invalid(format!(
        "the keyboard layout {} has no key that types {c:?}{held}; lsm will not press another \
         key in its place. Type the character with a type action, or switch the Mac to a layout \
         that has it",
        table.label()
    )))
}

/// The key of lsm's named key "plus" (the =/+ key, as Windows' `VK_OEM_PLUS`): the key typing
/// "+"; when that needs shift and the same key types "=" without it (the US layout), that key
/// without shift, so cmd+plus is the cmd+= every browser zooms in with.
pub fn plus_key(command: bool, other_modifiers: bool, layout: &LayoutKnowledge) -> GuiResult<CharKey> {
    let key = char_key('+', command, other_modifiers, layout)?;
    if let (CharKey::Key(k), Ok(table)) = (key, lookup_table(layout)) {
        let unshifted = LayoutKey {
            code: k.code,
            shift: false,
        };
        if k.shift && table.key_for('=', command) == Some(unshifted) {
            return Ok(CharKey::Key(unshifted));
        }
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A fake layout: per key code, what it types plain and with shift; with command the same,
    /// unless `command` lists other keys (the "⌘ QWERTY" kind).
    struct Fake {
        plain: Vec<(u16, char, char)>,
        command: Option<Vec<(u16, char, char)>>,
    }

    impl Fake {
        fn translate(&self, code: u16, level: Level) -> Option<char> {
            let table = match (&self.command, level.command()) {
                (Some(cmd), true) => cmd,
                _ => &self.plain,
            };
            table
                .iter()
                .find(|(k, _, _)| *k == code)
                .map(|(_, plain, shift)| if level.shift() { *shift } else { *plain })
        }

        fn layout(&self, id: &str, name: &str) -> LayoutKnowledge {
            LayoutKnowledge::Read(Arc::new(KeyLayout::build(id, name, |code, level| {
                self.translate(code, level)
            })))
        }
    }

    fn us_rows() -> Vec<(u16, char, char)> {
        ANSI_CHARS.to_vec()
    }

    /// The US rows with some keys typing other characters.
    fn with(changes: &[(u16, char, char)]) -> Vec<(u16, char, char)> {
        let mut rows: Vec<(u16, char, char)> = us_rows()
            .into_iter()
            .filter(|(k, _, _)| !changes.iter().any(|(c, _, _)| c == k))
            .collect();
        rows.extend_from_slice(changes);
        rows
    }

    /// French AZERTY (Mac): a/q and z/w swapped, m where ANSI has ";", digits with shift on
    /// the number row (whose plain characters are & é " ' ( § è ! ç à), "," where ANSI has "m".
    #[rustfmt::skip]
    fn azerty() -> Fake {
        Fake { plain: with(&[
            (0x00, 'q', 'Q'), (0x0C, 'a', 'A'), (0x06, 'w', 'W'), (0x0D, 'z', 'Z'), (0x29, 'm', 'M'),
            (0x2E, ',', '?'), (0x2B, ';', '.'), (0x2F, ':', '/'), (0x2C, '=', '+'),
            (0x12, '&', '1'), (0x13, 'é', '2'), (0x14, '"', '3'), (0x15, '\'', '4'), (0x17, '(', '5'),
            (0x16, '§', '6'), (0x1A, 'è', '7'), (0x1C, '!', '8'), (0x19, 'ç', '9'), (0x1D, 'à', '0'),
            (0x1B, ')', '°'), (0x18, '-', '_'), (0x21, '^', '¨'), (0x1E, '$', '*'), (0x27, 'ù', '%'),
            (0x2A, '`', '£'), (0x32, '@', '#'),
        ]), command: None }
    }

    /// German QWERTZ: y and z swapped, ß ü ö ä on their own keys, "-" where ANSI has "/".
    #[rustfmt::skip]
    fn qwertz() -> Fake {
        Fake { plain: with(&[
            (0x06, 'y', 'Y'), (0x10, 'z', 'Z'), (0x1B, 'ß', '?'), (0x21, 'ü', 'Ü'), (0x29, 'ö', 'Ö'),
            (0x27, 'ä', 'Ä'), (0x2C, '-', '_'), (0x1E, '+', '*'), (0x18, '´', '`'), (0x2A, '#', '\''),
            (0x13, '2', '"'), (0x16, '6', '&'), (0x1A, '7', '/'), (0x1C, '8', '('), (0x19, '9', ')'),
            (0x1D, '0', '='), (0x2B, ',', ';'), (0x2F, '.', ':'), (0x32, '<', '>'),
        ]), command: None }
    }

    /// Dvorak: every letter elsewhere.
    #[rustfmt::skip]
    fn dvorak_rows() -> Vec<(u16, char, char)> {
        with(&[
            (0x00, 'a', 'A'), (0x01, 'o', 'O'), (0x02, 'e', 'E'), (0x03, 'u', 'U'), (0x04, 'd', 'D'),
            (0x05, 'i', 'I'), (0x06, ';', ':'), (0x07, 'q', 'Q'), (0x08, 'j', 'J'), (0x09, 'k', 'K'),
            (0x0B, 'x', 'X'), (0x0C, '\'', '"'), (0x0D, ',', '<'), (0x0E, '.', '>'), (0x0F, 'p', 'P'),
            (0x10, 'f', 'F'), (0x11, 'y', 'Y'), (0x1F, 'r', 'R'), (0x20, 'g', 'G'), (0x22, 'c', 'C'),
            (0x23, 'l', 'L'), (0x25, 'n', 'N'), (0x26, 'h', 'H'), (0x28, 't', 'T'), (0x29, 's', 'S'),
            (0x2D, 'b', 'B'), (0x2E, 'm', 'M'), (0x2C, 'z', 'Z'), (0x2B, 'w', 'W'), (0x2F, 'v', 'V'),
            (0x27, '-', '_'), (0x1E, '=', '+'), (0x21, '/', '?'), (0x18, ']', '}'), (0x1B, '[', '{'),
        ])
    }

    fn dvorak() -> Fake {
        Fake {
            plain: dvorak_rows(),
            command: None,
        }
    }

    /// "Dvorak - QWERTY ⌘": Dvorak, but QWERTY while command is held.
    fn dvorak_qwerty_command() -> Fake {
        Fake {
            plain: dvorak_rows(),
            command: Some(us_rows()),
        }
    }

    /// A Cyrillic layout: no Latin letters at all, with or without command.
    #[rustfmt::skip]
    fn russian() -> Fake {
        Fake { plain: with(&[
            (0x00, 'ф', 'Ф'), (0x01, 'ы', 'Ы'), (0x02, 'в', 'В'), (0x03, 'а', 'А'), (0x04, 'р', 'Р'),
            (0x05, 'п', 'П'), (0x06, 'я', 'Я'), (0x07, 'ч', 'Ч'), (0x08, 'с', 'С'), (0x09, 'м', 'М'),
            (0x0B, 'и', 'И'), (0x0C, 'й', 'Й'), (0x0D, 'ц', 'Ц'), (0x0E, 'у', 'У'), (0x0F, 'к', 'К'),
            (0x10, 'н', 'Н'), (0x11, 'е', 'Е'), (0x1F, 'щ', 'Щ'), (0x20, 'г', 'Г'), (0x22, 'ш', 'Ш'),
            (0x23, 'з', 'З'), (0x25, 'д', 'Д'), (0x26, 'о', 'О'), (0x28, 'л', 'Л'), (0x2D, 'т', 'Т'),
            (0x2E, 'ь', 'Ь'), (0x21, 'х', 'Х'), (0x1E, 'ъ', 'Ъ'), (0x29, 'ж', 'Ж'), (0x27, 'э', 'Э'),
            (0x2B, 'б', 'Б'), (0x2F, 'ю', 'Ю'), (0x32, 'ё', 'Ё'),
        ]), command: None }
    }

    fn key(code: u16, shift: bool) -> GuiResult<CharKey> {
        Ok(CharKey::Key(LayoutKey { code, shift }))
    }

    #[test]
    fn azerty_presses_the_key_labelled_with_the_letter() {
        let l = azerty().layout("com.apple.keyboardlayout.French", "French");
        // cmd+a presses the A key, at ANSI q's position; the ANSI a position types q (quit).
        assert_eq!(char_key('a', true, false, &l), key(0x0C, false));
        assert_eq!(char_key('q', true, false, &l), key(0x00, false));
        assert_eq!(char_key('w', true, false, &l), key(0x06, false));
        assert_eq!(char_key('m', false, true, &l), key(0x29, false));
        // Digits need shift on AZERTY's number row (not the keypad, which types them plain).
        assert_eq!(char_key('1', true, false, &l), key(0x12, true));
        assert_eq!(char_key('0', true, false, &l), key(0x1D, true));
        // An accented letter of the layout is a key too; "," sits where ANSI has "m".
        assert_eq!(char_key('é', true, false, &l), key(0x13, false));
        assert_eq!(char_key(',', true, false, &l), key(0x2E, false));
        // Uppercase letters are the same key, without shift ("ctrl+A" is ctrl+a).
        assert_eq!(char_key('A', false, true, &l), key(0x0C, false));
        // A character AZERTY has no key for: refused with a modifier, naming the layout.
        let e = char_key('ß', true, false, &l).expect_err("no ß on AZERTY");
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(
            e.message.contains("French (com.apple.keyboardlayout.French)"),
            "{}",
            e.message
        );
        assert!(e.message.contains("'ß'"), "{}", e.message);
        // Alone it is typed as Unicode, which needs no key of the layout.
        assert_eq!(char_key('ß', false, false, &l), Ok(CharKey::Unicode('ß')));
    }

    #[test]
    fn qwertz_swaps_y_and_z_and_has_its_own_letters() {
        let l = qwertz().layout("com.apple.keyboardlayout.German", "German");
        assert_eq!(char_key('z', true, false, &l), key(0x10, false));
        assert_eq!(char_key('y', true, false, &l), key(0x06, false));
        assert_eq!(char_key('ß', true, false, &l), key(0x1B, false));
        assert_eq!(char_key('Ü', true, false, &l), key(0x21, false));
        assert_eq!(char_key('-', true, false, &l), key(0x2C, false));
        assert_eq!(char_key('/', true, false, &l), key(0x1A, true));
        assert_eq!(char_key('?', true, false, &l), key(0x1B, true));
        // "+" is plain on QWERTZ, so "plus" presses it without shift.
        assert_eq!(plus_key(true, false, &l), key(0x1E, false));
    }

    #[test]
    fn dvorak_moves_every_letter_and_qwerty_command_follows_the_command_table() {
        let l = dvorak().layout("com.apple.keyboardlayout.Dvorak", "Dvorak");
        assert_eq!(char_key('c', true, false, &l), key(0x22, false));
        assert_eq!(char_key('v', true, false, &l), key(0x2F, false));
        assert_eq!(char_key('s', true, false, &l), key(0x29, false));
        // "Dvorak - QWERTY ⌘": with command, the QWERTY key; without, the Dvorak one.
        let q =
            dvorak_qwerty_command().layout("com.apple.keyboardlayout.DVORAK-QWERTYCMD", "Dvorak - QWERTY ⌘");
        assert_eq!(char_key('c', true, false, &q), key(0x08, false));
        assert_eq!(char_key('c', true, true, &q), key(0x08, false));
        assert_eq!(char_key('c', false, true, &q), key(0x22, false));
    }

    #[test]
    fn a_layout_without_the_letter_refuses_the_combo() {
        let l = russian().layout("com.apple.keyboardlayout.Russian", "Russian");
        let e = char_key('a', true, false, &l).expect_err("no Latin a");
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(
            e.message.contains("Russian (com.apple.keyboardlayout.Russian)"),
            "{}",
            e.message
        );
        assert!(e.message.contains("while command is held"), "{}", e.message);
        assert!(char_key('c', false, true, &l).is_err());
        // Its own letters are keys; punctuation it shares with US stays where US has it.
        assert_eq!(char_key('ф', true, false, &l), key(0x00, false));
        assert_eq!(char_key('Ж', false, true, &l), key(0x29, false));
        assert_eq!(char_key('1', true, false, &l), key(0x12, false));
        // Shift alone does not count as a modifier: the letter is typed as Unicode.
        assert_eq!(char_key('a', false, false, &l), Ok(CharKey::Unicode('a')));
    }

    #[test]
    fn the_us_layout_keeps_the_ansi_positions() {
        let us = Fake {
            plain: us_rows(),
            command: None,
        }
        .layout("com.apple.keyboardlayout.US", "U.S.");
        for (code, plain, shifted) in ANSI_CHARS {
            assert_eq!(char_key(*plain, true, false, &us), key(*code, false), "{plain:?}");
            if shifted != plain && !shifted.is_alphabetic() {
                assert_eq!(
                    char_key(*shifted, true, false, &us),
                    key(*code, true),
                    "{shifted:?}"
                );
            }
        }
        // "plus" is the = key without shift (cmd+= zooms in), "+" itself needs shift.
        assert_eq!(plus_key(true, false, &us), key(0x18, false));
        assert_eq!(char_key('+', true, false, &us), key(0x18, true));
        // The map built from the table is the same as the fake's.
        let LayoutKnowledge::Read(read) = us else {
            unreachable!()
        };
        let table = KeyLayout::us_ansi("com.apple.keyboardlayout.US");
        assert_eq!(table.plain, read.plain);
        assert_eq!(table.command, read.command);
    }

    #[test]
    fn keypad_and_control_characters_stay_out_of_the_map() {
        // A layout whose only "5" is on the keypad and whose Return types "\r".
        let l = KeyLayout::build("x", "", |code, level| match (code, level.shift()) {
            (0x57, false) => Some('5'),
            (0x24, false) => Some('\r'),
            (0x00, true) => Some('5'),
            _ => None,
        });
        assert_eq!(
            l.key_for('5', false),
            Some(LayoutKey {
                code: 0x00,
                shift: true
            })
        );
        assert_eq!(l.key_for('\r', false), None);
        assert_eq!(l.label(), "x");
    }

    #[test]
    fn an_unreadable_layout_uses_ansi_only_for_sources_known_to_have_it() {
        let us = LayoutKnowledge::Unreadable {
            source: Some("com.apple.keyboardlayout.ABC".into()),
            why: "no key layout data".into(),
        };
        assert_eq!(char_key('a', true, false, &us), key(0x00, false));
        assert_eq!(char_key('?', true, false, &us), key(0x2C, true));
        assert_eq!(plus_key(true, false, &us), key(0x18, false));
        for source in [Some("com.apple.keyboardlayout.French".to_string()), None] {
            let other = LayoutKnowledge::Unreadable {
                source: source.clone(),
                why: "the main queue did not answer".into(),
            };
            let e = char_key('a', true, false, &other).expect_err("refused");
            assert_eq!(e.code, ErrorCode::UnsupportedAction);
            assert!(
                e.message.contains("the main queue did not answer"),
                "{}",
                e.message
            );
            assert!(
                e.message.contains(source.as_deref().unwrap_or("unknown")),
                "{}",
                e.message
            );
            assert_eq!(char_key('a', false, false, &other), Ok(CharKey::Unicode('a')));
        }
    }
}
