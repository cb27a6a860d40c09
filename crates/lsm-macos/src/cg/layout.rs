//! The current keyboard layout, read from Text Input Sources and `UCKeyTranslate`, for the
//! character keys of combos (the map and its rules are platform-free: [`crate::layout`]).
//!
//! Hand-written bindings, on purpose: no maintained crate binds these calls. `objc2-carbon` 0.3
//! binds nothing of HIToolbox (where Text Input Sources and `LMGetKbdType` live) and
//! `objc2-core-services` 0.3 leaves out CarbonCore (where `UCKeyTranslate` lives). The block
//! below declares exactly the five functions and three constants used, each with its
//! declaration in Apple's SDK headers (HIToolbox `TextInputSources.h` and `Events.h`, CarbonCore
//! `UnicodeUtilities.h`, MacTypes: `UniCharCount` is `unsigned long`, `OptionBits` `UInt32`,
//! `OSStatus` `SInt32`, `UniChar` `UInt16`).
//!
//! Every call runs on the main dispatch queue ([`crate::main_queue`]): HIToolbox asserts it for
//! Text Input Sources, and `LMGetKbdType` is documented as not thread safe. A main queue that
//! does not answer leaves the layout unreadable, and combos with characters are refused.
//! Compiled for macOS only.

use crate::layout::{KeyLayout, LayoutKnowledge, Level};
use crate::main_queue;
use objc2_core_foundation::{CFData, CFRetained, CFString, CFType};
use std::ffi::{c_ulong, c_void};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[link(name = "Carbon", kind = "framework")]
unsafe extern "C" {
    /// `TISInputSourceRef TISCopyCurrentKeyboardLayoutInputSource(void)`: the keyboard layout
    /// in use (an input method's own layout when one is selected); Create rule.
    fn TISCopyCurrentKeyboardLayoutInputSource() -> *mut CFType;
    /// `TISInputSourceRef TISCopyCurrentASCIICapableKeyboardLayoutInputSource(void)`: the most
    /// recently used ASCII-capable layout, which input methods translate keys with; Create rule.
    fn TISCopyCurrentASCIICapableKeyboardLayoutInputSource() -> *mut CFType;
    /// `void *TISGetInputSourceProperty(TISInputSourceRef inputSource, CFStringRef propertyKey)`:
    /// Get rule (owned by the input source); NULL when the property is missing.
    fn TISGetInputSourceProperty(input_source: &CFType, property_key: &CFString) -> *const c_void;
    /// `extern const CFStringRef kTISPropertyUnicodeKeyLayoutData`: a CFDataRef of the layout's
    /// 'uchr' data; NULL for input sources that are not layouts or have only 'KCHR' data.
    static kTISPropertyUnicodeKeyLayoutData: Option<&'static CFString>;
    /// `extern const CFStringRef kTISPropertyInputSourceID`: a CFStringRef, e.g.
    /// "com.apple.keyboardlayout.French".
    static kTISPropertyInputSourceID: Option<&'static CFString>;
    /// `extern const CFStringRef kTISPropertyLocalizedName`: a CFStringRef for people.
    static kTISPropertyLocalizedName: Option<&'static CFString>;
    /// `UInt8 LMGetKbdType(void)` (Events.h): the type of the keyboard used last, which selects
    /// the ANSI, ISO or JIS table of a layout.
    fn LMGetKbdType() -> u8;
}

#[link(name = "CoreServices", kind = "framework")]
unsafe extern "C" {
    /// `OSStatus UCKeyTranslate(const UCKeyboardLayout *keyLayoutPtr, UInt16 virtualKeyCode,
    /// UInt16 keyAction, UInt32 modifierKeyState, UInt32 keyboardType, OptionBits
    /// keyTranslateOptions, UInt32 *deadKeyState, UniCharCount maxStringLength, UniCharCount
    /// *actualStringLength, UniChar unicodeString[])`.
    fn UCKeyTranslate(
        key_layout: *const c_void,
        virtual_key_code: u16,
        key_action: u16,
        modifier_key_state: u32,
        keyboard_type: u32,
        key_translate_options: u32,
        dead_key_state: *mut u32,
        max_string_length: c_ulong,
        actual_string_length: *mut c_ulong,
        unicode_string: *mut u16,
    ) -> i32;
}

/// `kUCKeyActionDown` (UnicodeUtilities.h).
const UC_KEY_ACTION_DOWN: u16 = 0;
/// `kUCKeyTranslateNoDeadKeysMask` (`1 << kUCKeyTranslateNoDeadKeysBit`, bit 0): a dead key
/// gives its own character instead of starting a dead-key state.
const UC_NO_DEAD_KEYS_MASK: u32 = 1;
/// `UCKeyTranslate`'s modifier state is the Carbon `EventModifiers` shifted right by 8
/// (Events.h: `cmdKey` is `1 << 8`, `shiftKey` `1 << 9`).
const UC_COMMAND: u32 = 0x01;
const UC_SHIFT: u32 = 0x02;

/// How long a combo waits for the main queue to read the layout.
const MAIN_QUEUE_TIMEOUT: Duration = Duration::from_millis(1500);

/// An input source retained for the duration of a read.
struct Source(CFRetained<CFType>);

impl Source {
    /// Takes ownership of a Create-rule result.
    fn adopt(raw: *mut CFType) -> Option<Source> {
        // SAFETY: the TISCopy* functions return a +1 reference (Create rule) or NULL; the
        // CFRetained releases it once.
        NonNull::new(raw).map(|p| Source(unsafe { CFRetained::from_raw(p) }))
    }

    fn property(&self, key: Option<&'static CFString>) -> *const c_void {
        match key {
            // SAFETY: a live input source and a property key constant of TextInputSources.h.
            Some(key) => unsafe { TISGetInputSourceProperty(&self.0, key) },
            None => std::ptr::null(),
        }
    }

    fn string(&self, key: Option<&'static CFString>) -> Option<String> {
        let p = self.property(key).cast::<CFString>();
        // SAFETY: the id and name properties are CFStringRefs (TextInputSources.h), owned by
        // the input source, which outlives this borrow.
        (!p.is_null()).then(|| unsafe { &*p }.to_string())
    }

    fn id(&self) -> Option<String> {
        // SAFETY: reading an immutable constant exported by HIToolbox.
        self.string(unsafe { kTISPropertyInputSourceID })
    }

    /// The 'uchr' data, borrowed from the input source.
    fn layout_data(&self) -> Option<&CFData> {
        // SAFETY: as for `id`; the value is a CFDataRef owned by the input source.
        let p = self
            .property(unsafe { kTISPropertyUnicodeKeyLayoutData })
            .cast::<CFData>();
        // SAFETY: non-null CFDataRef under the Get rule, alive as long as `self`.
        (!p.is_null()).then(|| unsafe { &*p })
    }
}

/// What one key types at one level, or `None` (an error, nothing, or more than one character).
fn translate(data: &CFData, keyboard_type: u8, code: u16, level: Level) -> Option<char> {
    let mut state = 0u32;
    if level.command() {
        state |= UC_COMMAND;
    }
    if level.shift() {
        state |= UC_SHIFT;
    }
    let mut dead_key_state = 0u32;
    let mut units = [0u16; 4];
    let mut length: c_ulong = 0;
    // SAFETY: `data` is the layout's 'uchr' data (native-endian, as UCKeyTranslate expects),
    // alive for the call; the out-pointers are to live locals, `units` holds `max` units.
    let status = unsafe {
        UCKeyTranslate(
            data.byte_ptr().cast(),
            code,
            UC_KEY_ACTION_DOWN,
            state,
            u32::from(keyboard_type),
            UC_NO_DEAD_KEYS_MASK,
            &mut dead_key_state,
            units.len() as c_ulong,
            &mut length,
            units.as_mut_ptr(),
        )
    };
    if status != 0 || length == 0 || length as usize > units.len() {
        return None;
    }
    let mut chars = char::decode_utf16(units[..length as usize].iter().copied());
    match (chars.next(), chars.next()) {
        (Some(Ok(c)), None) => Some(c),
        _ => None,
    }
}

/// What the main queue found.
enum Reading {
    /// The layout is the one read last (same input source and keyboard type).
    Same,
    New {
        layout: KeyLayout,
        keyboard_type: u8,
    },
    Unreadable {
        source: Option<String>,
        why: String,
    },
}

/// Reads the layout on the main queue; `known` is the id and keyboard type of the cached one.
fn read_on_main_queue(known: Option<(String, u8)>) -> Reading {
    // SAFETY: no arguments; the results are adopted (Create rule).
    let current = Source::adopt(unsafe { TISCopyCurrentKeyboardLayoutInputSource() });
    let current_id = current.as_ref().and_then(Source::id);
    // An input method (e.g. Japanese) may report a layout without 'uchr' data: keys are then
    // translated with the ASCII-capable layout, as the system itself does.
    let source = match current {
        Some(s) if s.layout_data().is_some() => Some(s),
        // SAFETY: as above.
        _ => Source::adopt(unsafe { TISCopyCurrentASCIICapableKeyboardLayoutInputSource() })
            .filter(|s| s.layout_data().is_some()),
    };
    let Some(source) = source else {
        return Reading::Unreadable {
            source: current_id,
            why: "the input source has no 'uchr' key layout data".into(),
        };
    };
    let Some(data) = source.layout_data() else {
        return Reading::Unreadable {
            source: current_id,
            why: "the input source has no 'uchr' key layout data".into(),
        };
    };
    let id = source.id().unwrap_or_else(|| "unknown".into());
    // SAFETY: no arguments; on the main queue, where its caller must be.
    let keyboard_type = unsafe { LMGetKbdType() };
    if known.as_ref() == Some(&(id.clone(), keyboard_type)) {
        return Reading::Same;
    }
    // SAFETY: reading an immutable constant exported by HIToolbox.
    let name = source
        .string(unsafe { kTISPropertyLocalizedName })
        .unwrap_or_default();
    let layout = KeyLayout::build(id, name, |code, level| {
        translate(data, keyboard_type, code, level)
    });
    Reading::New {
        layout,
        keyboard_type,
    }
}

/// The layout read last and the keyboard type it was read for.
static CACHE: Mutex<Option<(Arc<KeyLayout>, u8)>> = Mutex::new(None);

/// The current keyboard layout: read on the main queue when the input source or keyboard type
/// changed since the last read, else the map built then. Blocks up to [`MAIN_QUEUE_TIMEOUT`].
pub fn current() -> LayoutKnowledge {
    // One read at a time: the main queue sees one job of ours at most.
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let known = cache.as_ref().map(|(l, kbd)| (l.id.clone(), *kbd));
    match main_queue::run(MAIN_QUEUE_TIMEOUT, move || read_on_main_queue(known)) {
        Ok(Reading::Same) => match cache.as_ref() {
            Some((layout, _)) => LayoutKnowledge::Read(layout.clone()),
            None => LayoutKnowledge::Unreadable {
                source: None,
                why: "the layout cache was emptied during the read".into(),
            },
        },
        Ok(Reading::New {
            layout,
            keyboard_type,
        }) => {
            let layout = Arc::new(layout);
            *cache = Some((layout.clone(), keyboard_type));
            LayoutKnowledge::Read(layout)
        }
        Ok(Reading::Unreadable { source, why }) => LayoutKnowledge::Unreadable { source, why },
        Err(why) => LayoutKnowledge::Unreadable { source: None, why },
    }
}
