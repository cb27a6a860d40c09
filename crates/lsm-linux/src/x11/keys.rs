//! Keyboard input through XTest: key names and characters as keysyms, the keyboard mapping,
//! combos, and typing any Unicode text by temporarily remapping spare keycodes.

use super::*;

// ---------------------------------------------------------------- keysyms (pure)

const XK_RETURN: u32 = 0xff0d;
const XK_TAB: u32 = 0xff09;
const XK_BACKSPACE: u32 = 0xff08;
const XK_ESCAPE: u32 = 0xff1b;
const XK_DELETE: u32 = 0xffff;
const XK_SHIFT_L: u32 = 0xffe1;

/// Keysyms of the canonical names of `lsm_core::input::NAMED_KEYS`.
const NAMED_KEYSYMS: &[(&str, u32)] = &[
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
fn modifier_keysyms(m: Modifier) -> &'static [u32] {
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
fn keysym_char(ks: u32) -> Option<char> {
    match ks {
        0x20..=0x7e | 0xa0..=0xff => char::from_u32(ks),
        0x0100_0100..=0x0110_ffff => char::from_u32(ks & 0x00ff_ffff),
        _ => None,
    }
}

fn char_to_keysym_plain(c: char) -> u32 {
    let cp = c as u32;
    if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) {
        cp
    } else {
        0x0100_0000 | cp
    }
}

/// Lower and upper case forms of an alphabetic keysym, if it has both.
fn case_pair(ks: u32) -> Option<(u32, u32)> {
    let c = keysym_char(ks)?;
    let lower = single_char(c.to_lowercase())?;
    let upper = single_char(c.to_uppercase())?;
    (lower != upper).then(|| (char_to_keysym_plain(lower), char_to_keysym_plain(upper)))
}

/// The only item of an iterator, if it has exactly one.
fn single_char(mut it: impl Iterator<Item = char>) -> Option<char> {
    let first = it.next()?;
    it.next().is_none().then_some(first)
}

/// The two shift levels of group 1, with the core protocol's rule for a missing second
/// keysym (a letter's second level is its upper case, anything else repeats the first).
fn group1_levels(l0: u32, l1: u32) -> (u32, u32) {
    if l1 != 0 {
        return (l0, l1);
    }
    match case_pair(l0) {
        Some(pair) => pair,
        None => (l0, l0),
    }
}

/// A key to press: its keycode and whether Shift must be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stroke {
    pub keycode: u8,
    pub shift: bool,
}

/// A cached copy of the core keyboard mapping.
#[derive(Debug, Clone)]
pub(super) struct KeyMap {
    min_keycode: u8,
    per: usize,
    syms: Vec<u32>,
    /// Keycodes bound to a modifier: never used as spares.
    modifier_keycodes: Vec<u8>,
}

impl KeyMap {
    fn keycodes(&self) -> impl Iterator<Item = (u8, &[u32])> {
        let min = self.min_keycode;
        self.syms
            .chunks(self.per.max(1))
            .enumerate()
            .map(move |(i, s)| (min.saturating_add(i as u8), s))
    }

    /// A keycode typing `ks`, preferring one without Shift.
    fn find(&self, ks: u32) -> Option<Stroke> {
        let mut shifted = None;
        for (kc, syms) in self.keycodes() {
            let l0 = syms.first().copied().unwrap_or(0);
            let l1 = syms.get(1).copied().unwrap_or(0);
            let (a, b) = group1_levels(l0, l1);
            if a == ks {
                return Some(Stroke {
                    keycode: kc,
                    shift: false,
                });
            }
            if b == ks && shifted.is_none() {
                shifted = Some(Stroke {
                    keycode: kc,
                    shift: true,
                });
            }
        }
        shifted
    }

    /// Keycodes without any keysym and not bound to a modifier, highest first.
    fn spare_keycodes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self
            .keycodes()
            .filter(|(kc, syms)| syms.iter().all(|&s| s == 0) && !self.modifier_keycodes.contains(kc))
            .map(|(kc, _)| kc)
            .collect();
        out.reverse();
        out
    }
}

/// A run of text typed with one set of temporary remaps.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    remaps: Vec<(u8, u32)>,
    strokes: Vec<Stroke>,
}

/// Splits keysyms into segments so each needs at most `spares.len()` remapped keycodes.
fn plan_segments(map: &KeyMap, spares: &[u8], syms: &[u32]) -> GuiResult<Vec<Segment>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < syms.len() {
        let mut seg = Segment {
            remaps: Vec::new(),
            strokes: Vec::new(),
        };
        while let Some(&ks) = syms.get(i) {
            let stroke = if let Some(s) = map.find(ks) {
                s
            } else if let Some(&(kc, _)) = seg.remaps.iter().find(|(_, k)| *k == ks) {
                Stroke {
                    keycode: kc,
                    shift: false,
                }
            } else if let Some(&kc) = spares.get(seg.remaps.len()) {
                seg.remaps.push((kc, ks));
                Stroke {
                    keycode: kc,
                    shift: false,
                }
            } else {
                break;
            };
            seg.strokes.push(stroke);
            i += 1;
        }
        if seg.strokes.is_empty() {
            return Err(GuiError::backend(format!(
                "keysym 0x{:x} is not on the keyboard and no spare keycode is free to map it",
                syms[i]
            )));
        }
        out.push(seg);
    }
    Ok(out)
}

// ---------------------------------------------------------------- keyboard

impl X11 {
    /// The cached keyboard mapping, fetched when missing (after a MappingNotify or our remaps).
    fn keymap(&self) -> GuiResult<KeyMap> {
        let mut guard = self.lock_keymap();
        if let Some(m) = guard.as_ref() {
            return Ok(m.clone());
        }
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let count = max.saturating_sub(min).saturating_add(1);
        let km = self.conn.get_keyboard_mapping(min, count).map_err(conn_err)?;
        let mm = self.conn.get_modifier_mapping().map_err(conn_err)?;
        let km = km.reply().map_err(|e| reply_err("GetKeyboardMapping", e))?;
        let mm = mm.reply().map_err(|e| reply_err("GetModifierMapping", e))?;
        let map = KeyMap {
            min_keycode: min,
            per: km.keysyms_per_keycode as usize,
            syms: km.keysyms,
            modifier_keycodes: mm.keycodes.into_iter().filter(|&k| k != 0).collect(),
        };
        *guard = Some(map.clone());
        Ok(map)
    }

    fn invalidate_keymap(&self) {
        *self.lock_keymap() = None;
    }

    fn key(&self, keycode: u8, press: bool) -> GuiResult<()> {
        self.fake(if press { KEY_PRESS } else { KEY_RELEASE }, keycode, 0, 0)
    }

    /// Keycode of the first keysym of `syms` present on the keyboard.
    fn modifier_keycode(&self, map: &KeyMap, m: Modifier) -> GuiResult<u8> {
        modifier_keysyms(m)
            .iter()
            .find_map(|&ks| map.find(ks))
            .map(|s| s.keycode)
            .ok_or_else(|| GuiError::backend(format!("the keyboard mapping has no {m:?} key")))
    }

    /// Binds each `(keycode, keysym)` (all levels), or unbinds with keysym 0.
    fn set_keysyms(&self, per: usize, remaps: &[(u8, u32)]) -> GuiResult<()> {
        for &(kc, ks) in remaps {
            let syms = vec![ks; per.max(1)];
            self.conn
                .change_keyboard_mapping(1, kc, per.max(1) as u8, &syms)
                .map_err(conn_err)?
                .check()
                .map_err(|e| reply_err("ChangeKeyboardMapping", e))?;
        }
        self.invalidate_keymap();
        Ok(())
    }

    /// Runs `send` with `remaps` bound, giving clients time to see the mapping before and to
    /// translate the keys after; the remaps are always undone.
    fn with_remaps(
        &self,
        per: usize,
        remaps: &[(u8, u32)],
        send: impl FnOnce() -> GuiResult<()>,
    ) -> GuiResult<()> {
        if remaps.is_empty() {
            return send().and_then(|_| self.sync());
        }
        self.set_keysyms(per, remaps)?;
        self.sync()?;
        std::thread::sleep(REMAP_SETTLE);
        let sent = send().and_then(|_| self.sync());
        std::thread::sleep(REMAP_SETTLE);
        let cleared: Vec<(u8, u32)> = remaps.iter().map(|&(kc, _)| (kc, 0)).collect();
        let restored = self.set_keysyms(per, &cleared).and_then(|_| self.sync());
        sent.and(restored)
    }

    fn send_strokes(&self, strokes: &[Stroke], shift: Option<u8>) -> GuiResult<()> {
        for s in strokes {
            let sh = if s.shift { shift } else { None };
            if let Some(k) = sh {
                self.key(k, true)?;
            }
            self.key(s.keycode, true)?;
            self.key(s.keycode, false)?;
            if let Some(k) = sh {
                self.key(k, false)?;
            }
        }
        Ok(())
    }

    /// Types any Unicode text; characters missing from the keyboard are typed through a
    /// temporarily remapped spare keycode.
    pub fn type_text(&self, text: &str) -> GuiResult<()> {
        self.require_xtest()?;
        let syms = text_keysyms(text)?;
        if syms.is_empty() {
            return Ok(());
        }
        self.pump();
        let _g = self.lock_input();
        let map = self.keymap()?;
        let segments = plan_segments(&map, &map.spare_keycodes(), &syms)?;
        let shift = if segments.iter().flat_map(|s| &s.strokes).any(|s| s.shift) {
            Some(self.modifier_keycode(&map, Modifier::Shift)?)
        } else {
            None
        };
        for seg in &segments {
            self.with_remaps(map.per, &seg.remaps, || self.send_strokes(&seg.strokes, shift))?;
        }
        Ok(())
    }

    /// Presses the modifiers, presses and releases the key, releases the modifiers in reverse.
    pub fn key_combo(&self, combo: &KeyCombo) -> GuiResult<()> {
        self.require_xtest()?;
        let keysym = combo.key.as_deref().map(key_keysym).transpose()?;
        self.pump();
        let _g = self.lock_input();
        let map = self.keymap()?;
        let mut remaps = Vec::new();
        let stroke = match keysym {
            None => None,
            Some(ks) => Some(match map.find(ks) {
                Some(s) => s,
                None => {
                    let kc = *map.spare_keycodes().first().ok_or_else(|| {
                        GuiError::backend(format!(
                            "key 0x{ks:x} is not on the keyboard and no spare keycode is free"
                        ))
                    })?;
                    remaps.push((kc, ks));
                    Stroke {
                        keycode: kc,
                        shift: false,
                    }
                }
            }),
        };
        let mut mods = combo.modifiers.clone();
        if stroke.is_some_and(|s| s.shift) && !mods.contains(&Modifier::Shift) {
            mods.push(Modifier::Shift);
            mods.sort();
        }
        let codes = mods
            .iter()
            .map(|&m| self.modifier_keycode(&map, m))
            .collect::<GuiResult<Vec<u8>>>()?;
        self.with_remaps(map.per, &remaps, || {
            self.send_combo(&codes, stroke.map(|s| s.keycode))
        })
    }

    fn send_combo(&self, modifiers: &[u8], key: Option<u8>) -> GuiResult<()> {
        for &m in modifiers {
            self.key(m, true)?;
        }
        if !modifiers.is_empty() && key.is_some() {
            self.sync()?;
            std::thread::sleep(MODIFIER_SETTLE);
        }
        let pressed = match key {
            Some(k) => self.key(k, true).and_then(|_| self.key(k, false)),
            None => Ok(()),
        };
        // Release modifiers even if the key failed, so none stays held.
        let mut released = Ok(());
        for &m in modifiers.iter().rev() {
            released = released.and(self.key(m, false));
        }
        pressed.and(released)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us_map() -> KeyMap {
        // keycodes 10..=15: a A | 1 ! | é (single) | Shift_L | (spare) | (spare, but a modifier)
        KeyMap {
            min_keycode: 10,
            per: 2,
            syms: vec![0x61, 0x41, 0x31, 0x21, 0xe9, 0, XK_SHIFT_L, 0, 0, 0, 0, 0],
            modifier_keycodes: vec![13, 15],
        }
    }

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
    fn keymap_lookup_prefers_unshifted_levels() {
        let m = us_map();
        assert_eq!(
            m.find(0x61),
            Some(Stroke {
                keycode: 10,
                shift: false
            })
        );
        assert_eq!(
            m.find(0x41),
            Some(Stroke {
                keycode: 10,
                shift: true
            })
        );
        assert_eq!(
            m.find(0x21),
            Some(Stroke {
                keycode: 11,
                shift: true
            })
        );
        assert_eq!(
            m.find(0xc9),
            Some(Stroke {
                keycode: 12,
                shift: true
            })
        );
        assert_eq!(m.find(0x0100_d55c), None);
        assert_eq!(m.spare_keycodes(), vec![14]);
    }

    #[test]
    fn segments_reuse_remaps_and_split_when_spares_run_out() {
        let m = us_map();
        let (h, g) = (0x0100_d55c, 0x0100_ae00);
        let segs = plan_segments(&m, &[14], &[0x61, h, h, g, 0x41]).expect("plan");
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].remaps, vec![(14, h)]);
        assert_eq!(segs[0].strokes.len(), 3);
        assert_eq!(segs[1].remaps, vec![(14, g)]);
        assert_eq!(
            segs[1].strokes[1],
            Stroke {
                keycode: 10,
                shift: true
            }
        );
        assert!(plan_segments(&m, &[], &[h]).is_err());
    }
}
