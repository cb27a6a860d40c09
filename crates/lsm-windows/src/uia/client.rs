//! The UI Automation client of the COM thread: the automation object with its timeouts set,
//! the one cache request that fetches every property lsm reports in bulk, the window walk, and
//! the elements of each window's latest walk (so an action finds its control without a search).

use super::variant::Owned;
use crate::element::{parse_runtime_id_key, RangeProps, UiaProps};
use crate::errors::{classify, unavailable_reason};
use crate::patterns::Supported;
use crate::roles::{Expansion, Toggle};
use crate::walk::{walk, TreeError, UiaTree, WalkLimits, Walked};
use lsm_core::geometry::Rect;
use lsm_core::{GuiError, GuiResult};
use std::collections::HashMap;
use std::time::Duration;
use windows::core::Interface;
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{CoCreateInstance, CLSCTX_INPROC_SERVER};
use windows::Win32::UI::Accessibility::*;

/// UIA's own bound on reaching a provider (a process that does not answer at all).
const CONNECTION_TIMEOUT: Duration = Duration::from_millis(2_000);
/// UIA's bound on one call into a provider, unless a walk's budget is shorter.
pub const TRANSACTION_TIMEOUT: Duration = Duration::from_millis(3_000);
/// How many windows' element handles are kept.
const KNOWN_WINDOWS: usize = 16;

/// Every property an element of an observation carries, fetched in one request.
const PROPERTIES: &[UIA_PROPERTY_ID] = &[
    UIA_RuntimeIdPropertyId,
    UIA_ControlTypePropertyId,
    UIA_NamePropertyId,
    UIA_HelpTextPropertyId,
    UIA_BoundingRectanglePropertyId,
    UIA_IsEnabledPropertyId,
    UIA_IsOffscreenPropertyId,
    UIA_HasKeyboardFocusPropertyId,
    UIA_IsKeyboardFocusablePropertyId,
    UIA_IsPasswordPropertyId,
    UIA_WindowIsModalPropertyId,
    UIA_ToggleToggleStatePropertyId,
    UIA_ExpandCollapseExpandCollapseStatePropertyId,
    UIA_SelectionItemIsSelectedPropertyId,
    UIA_ValueValuePropertyId,
    UIA_ValueIsReadOnlyPropertyId,
    UIA_RangeValueValuePropertyId,
    UIA_RangeValueMinimumPropertyId,
    UIA_RangeValueMaximumPropertyId,
    UIA_RangeValueIsReadOnlyPropertyId,
    UIA_IsInvokePatternAvailablePropertyId,
    UIA_IsTogglePatternAvailablePropertyId,
    UIA_IsSelectionItemPatternAvailablePropertyId,
    UIA_IsExpandCollapsePatternAvailablePropertyId,
    UIA_IsValuePatternAvailablePropertyId,
    UIA_IsRangeValuePatternAvailablePropertyId,
    UIA_IsLegacyIAccessiblePatternAvailablePropertyId,
    UIA_LegacyIAccessibleDefaultActionPropertyId,
];

pub struct Client {
    pub automation: IUIAutomation,
    automation2: Option<IUIAutomation2>,
    pub cache: IUIAutomationCacheRequest,
    pub control_view: IUIAutomationCondition,
    /// Per window (by handle), the elements of its latest walk by native key.
    known: Vec<(isize, HashMap<String, IUIAutomationElement>)>,
}

/// A failed COM call as lsm's error, with what was being done.
pub fn gui_error(what: &str, e: &windows::core::Error) -> GuiError {
    let hresult = e.code().0 as u32;
    let (code, sentence) = classify(hresult);
    GuiError::new(code, format!("{what}: {sentence} (HRESULT {hresult:#010x})"))
}

pub fn tree_error(e: &windows::core::Error) -> TreeError {
    match classify(e.code().0 as u32).0 {
        lsm_core::ErrorCode::ElementStale => TreeError::Gone,
        lsm_core::ErrorCode::Timeout => TreeError::Timeout,
        _ => TreeError::Other(e.to_string()),
    }
}

impl Client {
    /// Creates the automation object (the Windows 8+ class first, for its timeouts). `Err`: why
    /// UI Automation cannot be used.
    pub fn new() -> Result<Self, String> {
        // SAFETY: plain COM creation on a thread with COM initialised.
        let automation: IUIAutomation = unsafe {
            CoCreateInstance(&CUIAutomation8, None, CLSCTX_INPROC_SERVER)
                .or_else(|_| CoCreateInstance(&CUIAutomation, None, CLSCTX_INPROC_SERVER))
        }
        .map_err(|e| unavailable_reason(e.code().0 as u32))?;
        let automation2 = automation.cast::<IUIAutomation2>().ok();
        if let Some(a2) = &automation2 {
            // SAFETY: setters on a live object.
            unsafe {
                let _ = a2.SetConnectionTimeout(CONNECTION_TIMEOUT.as_millis() as u32);
                let _ = a2.SetTransactionTimeout(TRANSACTION_TIMEOUT.as_millis() as u32);
            }
        }
        let broken = |e: windows::core::Error| format!("UI Automation is not usable: {e}");
        // SAFETY: calls on the live automation object; the request is configured before use.
        let (cache, control_view) = unsafe {
            let cache = automation.CreateCacheRequest().map_err(broken)?;
            for id in PROPERTIES {
                // A property an old UIA does not know is left out, not fatal.
                let _ = cache.AddProperty(*id);
            }
            cache.SetTreeScope(TreeScope_Element).map_err(broken)?;
            let control_view = automation.ControlViewCondition().map_err(broken)?;
            cache.SetTreeFilter(&control_view).map_err(broken)?;
            (cache, control_view)
        };
        Ok(Self {
            automation,
            automation2,
            cache,
            control_view,
            known: Vec::new(),
        })
    }

    /// Bounds UIA's calls into a provider by `limit` (never above [`TRANSACTION_TIMEOUT`], never
    /// below 200 ms).
    pub fn limit_calls(&self, limit: Duration) {
        if let Some(a2) = &self.automation2 {
            let ms = limit
                .clamp(Duration::from_millis(200), TRANSACTION_TIMEOUT)
                .as_millis() as u32;
            // SAFETY: a setter on a live object.
            let _ = unsafe { a2.SetTransactionTimeout(ms) };
        }
    }

    /// Walks the window's tree and keeps its elements' handles for later actions.
    pub fn walk_window(
        &mut self,
        hwnd: HWND,
        limits: &WalkLimits,
    ) -> GuiResult<Walked<IUIAutomationElement>> {
        let remaining = limits
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        self.limit_calls(remaining);
        let mut tree = WindowTree { client: self, hwnd };
        let walked = walk(&mut tree, limits);
        self.limit_calls(TRANSACTION_TIMEOUT);
        let walked = walked.map_err(|e| match e {
            TreeError::Gone => GuiError::window_not_found(&crate::win32::list::window_id(hwnd)),
            TreeError::Timeout => {
                GuiError::timeout("UI Automation (the window's application did not answer)")
            }
            TreeError::Other(m) => GuiError::backend(format!("the window's UI Automation element: {m}")),
        })?;
        let handles: HashMap<String, IUIAutomationElement> = walked
            .elements
            .iter()
            .zip(walked.nodes.iter())
            .map(|(e, n)| (e.native.clone(), n.clone()))
            .collect();
        let key = hwnd.0 as isize;
        self.known.retain(|(k, _)| *k != key);
        self.known.push((key, handles));
        if self.known.len() > KNOWN_WINDOWS {
            self.known.remove(0);
        }
        Ok(walked)
    }

    /// The element an observation's native key names, if the latest walk of its window had it.
    pub fn known(&self, hwnd: HWND, native: &str) -> Option<IUIAutomationElement> {
        let key = hwnd.0 as isize;
        self.known
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, m)| m.get(native).cloned())
    }

    /// The element with this runtime id in the window, searched (when the handles of the walk
    /// were lost with an abandoned thread). `Ok(None)`: not there.
    pub fn search(&self, hwnd: HWND, native: &str) -> GuiResult<Option<IUIAutomationElement>> {
        let Some(wanted) = parse_runtime_id_key(native) else {
            return Ok(None);
        };
        // SAFETY: calls on live COM objects of this thread.
        unsafe {
            let root = self
                .automation
                .ElementFromHandleBuildCache(hwnd, &self.cache)
                .map_err(|e| gui_error("the window's element", &e))?;
            if props_of(&root).runtime_id == wanted {
                return Ok(Some(root));
            }
            let all = match root.FindAllBuildCache(TreeScope_Descendants, &self.control_view, &self.cache) {
                Ok(a) => a,
                // An empty result comes back from some implementations as a null array.
                Err(e) if e.code().0 == 0 => return Ok(None),
                Err(e) => return Err(gui_error("searching the window for the element", &e)),
            };
            let n = all.Length().unwrap_or(0);
            for i in 0..n {
                if let Ok(e) = all.GetElement(i) {
                    if props_of(&e).runtime_id == wanted {
                        return Ok(Some(e));
                    }
                }
            }
        }
        Ok(None)
    }

    /// The element re-read now, with every property fresh.
    pub fn refresh(
        &self,
        element: &IUIAutomationElement,
    ) -> Result<(IUIAutomationElement, UiaProps), windows::core::Error> {
        // SAFETY: a call on a live element with this thread's cache request.
        let fresh = unsafe { element.BuildUpdatedCache(&self.cache) }?;
        let props = props_of(&fresh);
        Ok((fresh, props))
    }
}

struct WindowTree<'a> {
    client: &'a Client,
    hwnd: HWND,
}

impl UiaTree for WindowTree<'_> {
    type Node = IUIAutomationElement;

    fn root(&mut self) -> Result<(IUIAutomationElement, UiaProps), TreeError> {
        // SAFETY: a call on the live automation object with a valid window handle.
        let root = unsafe {
            self.client
                .automation
                .ElementFromHandleBuildCache(self.hwnd, &self.client.cache)
        }
        .map_err(|e| tree_error(&e))?;
        let props = props_of(&root);
        Ok((root, props))
    }

    fn children(
        &mut self,
        node: &IUIAutomationElement,
    ) -> Result<Vec<(IUIAutomationElement, UiaProps)>, TreeError> {
        // SAFETY: calls on live COM objects of this thread.
        unsafe {
            let kids = match node.FindAllBuildCache(
                TreeScope_Children,
                &self.client.control_view,
                &self.client.cache,
            ) {
                Ok(k) => k,
                Err(e) if e.code().0 == 0 => return Ok(Vec::new()),
                Err(e) => return Err(tree_error(&e)),
            };
            let n = kids.Length().map_err(|e| tree_error(&e))?;
            let mut out = Vec::with_capacity(n.max(0) as usize);
            for i in 0..n {
                if let Ok(e) = kids.GetElement(i) {
                    let props = props_of(&e);
                    out.push((e, props));
                }
            }
            Ok(out)
        }
    }
}

fn cached(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<Owned> {
    // SAFETY: reading a cached property of a live element; the VARIANT is owned and cleared.
    unsafe { e.GetCachedPropertyValue(id) }.ok().map(Owned)
}

fn cached_bool(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<bool> {
    cached(e, id).and_then(|v| v.as_bool())
}

fn cached_f64(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<f64> {
    cached(e, id).and_then(|v| v.as_f64())
}

/// The cached properties of an element as lsm's platform-free record.
pub fn props_of(e: &IUIAutomationElement) -> UiaProps {
    let flag = |id| cached_bool(e, id).unwrap_or(false);
    let is_password = flag(UIA_IsPasswordPropertyId);
    let patterns = Supported {
        invoke: flag(UIA_IsInvokePatternAvailablePropertyId),
        toggle: flag(UIA_IsTogglePatternAvailablePropertyId),
        selection_item: flag(UIA_IsSelectionItemPatternAvailablePropertyId),
        expand_collapse: flag(UIA_IsExpandCollapsePatternAvailablePropertyId),
        value: flag(UIA_IsValuePatternAvailablePropertyId),
        value_read_only: flag(UIA_ValueIsReadOnlyPropertyId),
        range_value: flag(UIA_IsRangeValuePatternAvailablePropertyId),
        range_read_only: flag(UIA_RangeValueIsReadOnlyPropertyId),
        legacy_default_action: flag(UIA_IsLegacyIAccessiblePatternAvailablePropertyId),
        keyboard_focusable: flag(UIA_IsKeyboardFocusablePropertyId),
    };
    // SAFETY: typed reads of cached properties of a live element.
    let (control_type, name, help_text, rect) = unsafe {
        (
            e.CachedControlType().map(|c| c.0).unwrap_or(0),
            e.CachedName().map(|b| b.to_string()).unwrap_or_default(),
            e.CachedHelpText().map(|b| b.to_string()).unwrap_or_default(),
            e.CachedBoundingRectangle().ok(),
        )
    };
    let range = if patterns.range_value {
        cached_f64(e, UIA_RangeValueValuePropertyId).map(|value| RangeProps {
            value,
            minimum: cached_f64(e, UIA_RangeValueMinimumPropertyId).unwrap_or(f64::NAN),
            maximum: cached_f64(e, UIA_RangeValueMaximumPropertyId).unwrap_or(f64::NAN),
        })
    } else {
        None
    };
    UiaProps {
        runtime_id: cached(e, UIA_RuntimeIdPropertyId)
            .and_then(|v| v.as_i32_array())
            .unwrap_or_default(),
        control_type,
        name,
        help_text,
        bounds: rect
            .filter(|r| r.right > r.left && r.bottom > r.top)
            .map(|r| Rect::new(r.left, r.top, r.right - r.left, r.bottom - r.top)),
        enabled: flag(UIA_IsEnabledPropertyId),
        offscreen: flag(UIA_IsOffscreenPropertyId),
        has_keyboard_focus: flag(UIA_HasKeyboardFocusPropertyId),
        keyboard_focusable: patterns.keyboard_focusable,
        is_password,
        modal: flag(UIA_WindowIsModalPropertyId),
        toggle: patterns
            .toggle
            .then(|| cached(e, UIA_ToggleToggleStatePropertyId).and_then(|v| v.as_i32()))
            .flatten()
            .and_then(Toggle::from_raw),
        expansion: patterns
            .expand_collapse
            .then(|| cached(e, UIA_ExpandCollapseExpandCollapseStatePropertyId).and_then(|v| v.as_i32()))
            .flatten()
            .and_then(Expansion::from_raw),
        selected: patterns
            .selection_item
            .then(|| cached_bool(e, UIA_SelectionItemIsSelectedPropertyId))
            .flatten(),
        // A password field's value is never read (UIA refuses it anyway).
        value: (patterns.value && !is_password)
            .then(|| cached(e, UIA_ValueValuePropertyId).and_then(|v| v.as_string()))
            .flatten(),
        range,
        patterns,
        default_action: patterns
            .legacy_default_action
            .then(|| cached(e, UIA_LegacyIAccessibleDefaultActionPropertyId).and_then(|v| v.as_string()))
            .flatten(),
    }
}
