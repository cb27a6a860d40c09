//! The core keyboard mapping as lsm caches it: which keycode types a keysym (with or without
//! Shift), which keycodes are spare for temporary remaps, and how text is split into runs that
//! fit the spare keycodes.

use crate::keysyms::group1_levels;
use lsm_core::{GuiError, GuiResult};

/// A key to press: its keycode and whether Shift must be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stroke {
    pub keycode: u8,
    pub shift: bool,
}

/// A cached copy of the core keyboard mapping.
#[derive(Debug, Clone)]
pub(super) struct KeyMap {
    pub(super) min_keycode: u8,
    pub(super) per: usize,
    pub(super) syms: Vec<u32>,
    /// Keycodes bound to a modifier: never used as spares.
    pub(super) modifier_keycodes: Vec<u8>,
}

impl KeyMap {
    pub(super) fn keycodes(&self) -> impl Iterator<Item = (u8, &[u32])> {
        let min = self.min_keycode;
        self.syms
            .chunks(self.per.max(1))
            .enumerate()
            .map(move |(i, s)| (min.saturating_add(i as u8), s))
    }

    /// A keycode typing `ks`, preferring one without Shift.
    pub(super) fn find(&self, ks: u32) -> Option<Stroke> {
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
    pub(super) fn spare_keycodes(&self) -> Vec<u8> {
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
pub(super) struct Segment {
    pub(super) remaps: Vec<(u8, u32)>,
    pub(super) strokes: Vec<Stroke>,
}

/// Splits keysyms into segments so each needs at most `spares.len()` remapped keycodes.
pub(super) fn plan_segments(map: &KeyMap, spares: &[u8], syms: &[u32]) -> GuiResult<Vec<Segment>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keysyms::XK_SHIFT_L;

    pub(super) fn us_map() -> KeyMap {
        // keycodes 10..=15: a A | 1 ! | é (single) | Shift_L | (spare) | (spare, but a modifier)
        KeyMap {
            min_keycode: 10,
            per: 2,
            syms: vec![0x61, 0x41, 0x31, 0x21, 0xe9, 0, XK_SHIFT_L, 0, 0, 0, 0, 0],
            modifier_keycodes: vec![13, 15],
        }
    }

    #[test]
    pub(super) fn keymap_lookup_prefers_unshifted_levels() {
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
    pub(super) fn segments_reuse_remaps_and_split_when_spares_run_out() {
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
