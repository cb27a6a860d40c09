//! Keyboard input through XTest: key names and characters as keysyms, the keyboard mapping,
//! combos, and typing any Unicode text by temporarily remapping spare keycodes.

use super::connection::*;
use super::keymap::{plan_segments, KeyMap, Stroke};
use crate::keysyms::*;
use lsm_core::{GuiError, GuiResult, KeyCombo, Modifier};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::ConnectionExt as _;

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
