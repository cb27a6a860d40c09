//! A safe face on one `AXUIElement`: attributes read one at a time or many in one message
//! (`AXUIElementCopyMultipleAttributeValues`), actions, settable attributes, and the messaging
//! timeout that makes a hung application cost one timeout instead of a hang.

use crate::ax_errors::AxFailure;
use objc2_application_services::{
    AXCopyMultipleAttributeOptions, AXError, AXUIElement, AXValue, AXValueType,
};
use objc2_core_foundation::{CFArray, CFBoolean, CFNumber, CFRetained, CFString, CFType, CGPoint, CGSize};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::time::Duration;

/// One attribute's value, converted to what lsm uses.
#[derive(Debug, Clone)]
pub enum AxValue {
    Text(String),
    Number(f64),
    Bool(bool),
    Point(f64, f64),
    Size(f64, f64),
    Element(AxElement),
    Elements(Vec<AxElement>),
    /// A value of a type lsm does not read (an attributed string, a range…).
    Other,
    /// The element has the attribute but no value, or not the attribute.
    Missing,
}

impl AxValue {
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }
    pub fn number(&self) -> Option<f64> {
        match self {
            Self::Number(n) => Some(*n),
            Self::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }
    /// The value as a model reads it: text as is, whole numbers without a fraction, booleans
    /// as 0/1; `None` for what has no text form.
    pub fn display(&self) -> Option<String> {
        match self {
            Self::Text(s) => Some(s.clone()),
            Self::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => Some(format!("{}", *n as i64)),
            Self::Number(n) => Some(n.to_string()),
            Self::Bool(b) => Some(if *b { "1" } else { "0" }.into()),
            _ => None,
        }
    }

    pub fn flag(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            Self::Number(n) => Some(*n != 0.0),
            _ => None,
        }
    }
}

/// One accessibility object of an application (or the application itself).
#[derive(Debug, Clone)]
pub struct AxElement(CFRetained<AXUIElement>);

fn check(err: AXError) -> Result<(), AxFailure> {
    match AxFailure::of(err.0) {
        None => Ok(()),
        Some(f) => Err(f),
    }
}

impl AxElement {
    /// The application with that process id, every call to it bounded by `timeout`.
    pub fn application(pid: i32, timeout: Duration) -> Self {
        // SAFETY: creating an application element has no precondition; it does not message
        // the application.
        let app = Self(unsafe { AXUIElement::new_application(pid) });
        app.set_timeout(timeout);
        app
    }

    /// The system-wide element (the focused application, the element at a point).
    pub fn system_wide(timeout: Duration) -> Self {
        // SAFETY: creating the system-wide element has no precondition.
        let system = Self(unsafe { AXUIElement::new_system_wide() });
        system.set_timeout(timeout);
        system
    }

    /// Bounds every later call on this element (and, for an application element, on all of
    /// its elements) by `timeout`.
    pub fn set_timeout(&self, timeout: Duration) {
        // SAFETY: a plain setter on a valid element.
        let _ = unsafe { self.0.set_messaging_timeout(timeout.as_secs_f32()) };
    }

    /// The process that owns the element.
    pub fn pid(&self) -> Option<i32> {
        let mut pid: i32 = 0;
        // SAFETY: the out pointer is valid for the call.
        let err = unsafe { self.0.pid(NonNull::from(&mut pid)) };
        check(err).ok().map(|_| pid)
    }

    /// One attribute (`AXRole`, `AXChildren`…).
    pub fn attribute(&self, name: &str) -> Result<AxValue, AxFailure> {
        let name = CFString::from_str(name);
        let mut out: *const CFType = std::ptr::null();
        // SAFETY: the out pointer is valid; on success it holds a +1 reference we take over.
        let err = unsafe { self.0.copy_attribute_value(&name, NonNull::from(&mut out)) };
        match AxFailure::of(err.0) {
            None => Ok(take(out).map(convert).unwrap_or(AxValue::Missing)),
            Some(AxFailure::Unsupported) => Ok(AxValue::Missing),
            Some(f) => Err(f),
        }
    }

    /// Several attributes in one message to the application, in the order asked. An attribute
    /// the element lacks comes back `Missing`; a gone element or a timeout fails the whole read.
    pub fn attributes(&self, names: &[&str]) -> Result<Vec<AxValue>, AxFailure> {
        let names: Vec<CFRetained<CFString>> = names.iter().map(|n| CFString::from_str(n)).collect();
        let refs: Vec<&CFString> = names.iter().map(|n| &**n).collect();
        let array = CFArray::from_objects(&refs);
        let mut out: *const CFArray = std::ptr::null();
        // SAFETY: the array holds CFStrings as the call expects; the out pointer is valid and on
        // success holds a +1 reference we take over.
        let err = unsafe {
            self.0.copy_multiple_attribute_values(
                array.as_opaque(),
                AXCopyMultipleAttributeOptions::empty(),
                NonNull::from(&mut out),
            )
        };
        check(err)?;
        let Some(values) = take(out.cast::<CFType>()).and_then(|v| v.downcast::<CFArray>().ok()) else {
            return Ok(vec![AxValue::Missing; names.len()]);
        };
        // SAFETY: an attribute array holds CF objects.
        let values: &CFArray<CFType> = unsafe { values.cast_unchecked() };
        let mut read = Vec::with_capacity(names.len());
        for i in 0..names.len() {
            let v = values.get(i);
            read.push(match v {
                // Without the stop-on-error option, a failed attribute comes back as an AXValue
                // holding its AXError.
                Some(v) => match ax_error_in(&v) {
                    Some(AxFailure::Gone) => return Err(AxFailure::Gone),
                    Some(AxFailure::Timeout) => return Err(AxFailure::Timeout),
                    Some(_) => AxValue::Missing,
                    None => convert(v),
                },
                None => AxValue::Missing,
            });
        }
        Ok(read)
    }

    /// How many values an array attribute holds (`AXChildren`), without copying them.
    pub fn count(&self, name: &str) -> Result<usize, AxFailure> {
        let name = CFString::from_str(name);
        let mut count: objc2_core_foundation::CFIndex = 0;
        // SAFETY: the out pointer is valid for the call.
        let err = unsafe { self.0.attribute_value_count(&name, NonNull::from(&mut count)) };
        match AxFailure::of(err.0) {
            None => Ok(usize::try_from(count).unwrap_or(0)),
            Some(AxFailure::Unsupported) => Ok(0),
            Some(f) => Err(f),
        }
    }

    /// At most `max` elements of an array attribute (`AXChildren`) from the first.
    pub fn elements(&self, name: &str, max: usize) -> Result<Vec<AxElement>, AxFailure> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let name = CFString::from_str(name);
        let mut out: *const CFArray = std::ptr::null();
        let max =
            objc2_core_foundation::CFIndex::try_from(max).unwrap_or(objc2_core_foundation::CFIndex::MAX);
        // SAFETY: the out pointer is valid; on success it holds a +1 reference we take over.
        let err = unsafe {
            self.0
                .copy_attribute_values(&name, 0, max, NonNull::from(&mut out))
        };
        match AxFailure::of(err.0) {
            None => {}
            Some(AxFailure::Unsupported) => return Ok(Vec::new()),
            Some(f) => return Err(f),
        }
        Ok(match take(out.cast::<CFType>()).map(convert) {
            Some(AxValue::Elements(e)) => e,
            _ => Vec::new(),
        })
    }

    /// The element's action names (`AXPress`, `AXShowMenu`…).
    pub fn actions(&self) -> Result<Vec<String>, AxFailure> {
        let mut out: *const CFArray = std::ptr::null();
        // SAFETY: the out pointer is valid; on success it holds a +1 reference we take over.
        let err = unsafe { self.0.copy_action_names(NonNull::from(&mut out)) };
        match AxFailure::of(err.0) {
            None => {}
            Some(AxFailure::Unsupported) => return Ok(Vec::new()),
            Some(f) => return Err(f),
        }
        let Some(names) = take(out.cast::<CFType>()).and_then(|v| v.downcast::<CFArray>().ok()) else {
            return Ok(Vec::new());
        };
        // SAFETY: an action-name array holds CFStrings.
        let names: &CFArray<CFType> = unsafe { names.cast_unchecked() };
        Ok(names
            .iter()
            .filter_map(|n| n.downcast::<CFString>().ok().map(|s| s.to_string()))
            .collect())
    }

    /// Runs one action.
    pub fn perform(&self, action: &str) -> Result<(), AxFailure> {
        let action = CFString::from_str(action);
        // SAFETY: a valid element and action name.
        check(unsafe { self.0.perform_action(&action) })
    }

    /// Whether the attribute can be set (`AXValue` of a slider, `AXFocused`…).
    pub fn settable(&self, name: &str) -> Result<bool, AxFailure> {
        let name = CFString::from_str(name);
        let mut settable: u8 = 0;
        // SAFETY: the out pointer is valid for the call.
        let err = unsafe { self.0.is_attribute_settable(&name, NonNull::from(&mut settable)) };
        match AxFailure::of(err.0) {
            None => Ok(settable != 0),
            Some(AxFailure::Unsupported) => Ok(false),
            Some(f) => Err(f),
        }
    }

    pub fn set_flag(&self, name: &str, value: bool) -> Result<(), AxFailure> {
        self.set(name, CFBoolean::new(value).as_ref())
    }

    pub fn set_number(&self, name: &str, value: f64) -> Result<(), AxFailure> {
        self.set(name, CFNumber::new_f64(value).as_ref())
    }

    pub fn set_text(&self, name: &str, value: &str) -> Result<(), AxFailure> {
        self.set(name, CFString::from_str(value).as_ref())
    }

    fn set(&self, name: &str, value: &CFType) -> Result<(), AxFailure> {
        let name = CFString::from_str(name);
        // SAFETY: a valid element, attribute name and CF value.
        check(unsafe { self.0.set_attribute_value(&name, value) })
    }

    /// A key for the element's identity within its process: equal elements (`CFEqual`) have
    /// equal hashes; the process id tells applications apart.
    pub fn identity_key(&self) -> String {
        identity_key(self.pid().unwrap_or(0), &self.0)
    }

    /// The element as the framework has it, for calls made elsewhere (observers).
    pub fn raw(&self) -> &AXUIElement {
        &self.0
    }
}

/// The key of an element of process `pid`, as [`AxElement::identity_key`] makes it: the same
/// for the walk and for a notification's sender. Local: neither `CFHash` nor the pid asks the
/// application anything.
pub fn identity_key(pid: i32, element: &AXUIElement) -> String {
    let hash = objc2_core_foundation::CFHash(Some(element.as_ref()));
    format!("{pid}:{hash:x}")
}

/// Takes over a +1 reference returned through an out pointer.
fn take(ptr: *const CFType) -> Option<CFRetained<CFType>> {
    // SAFETY: the pointer came from a Copy/Create call that returned a +1 reference (or null).
    NonNull::new(ptr.cast_mut()).map(|p| unsafe { CFRetained::from_raw(p) })
}

/// The failure an attribute array holds in place of a value, if it holds one.
fn ax_error_in(v: &CFType) -> Option<AxFailure> {
    let value = v.downcast_ref::<AXValue>()?;
    // SAFETY: reading the type of a valid AXValue.
    if unsafe { value.r#type() } != AXValueType::AXError {
        return None;
    }
    let mut code: i32 = 0;
    // SAFETY: an AXError value holds an i32-sized AXError; the pointer is valid.
    let ok = unsafe { value.value(AXValueType::AXError, NonNull::from(&mut code).cast::<c_void>()) };
    if ok {
        AxFailure::of(code)
    } else {
        Some(AxFailure::Other(0))
    }
}

fn convert(v: CFRetained<CFType>) -> AxValue {
    if let Some(s) = v.downcast_ref::<CFString>() {
        return AxValue::Text(s.to_string());
    }
    if let Some(b) = v.downcast_ref::<CFBoolean>() {
        return AxValue::Bool(b.as_bool());
    }
    if let Some(n) = v.downcast_ref::<CFNumber>() {
        return n.as_f64().map(AxValue::Number).unwrap_or(AxValue::Other);
    }
    if let Some(value) = v.downcast_ref::<AXValue>() {
        // SAFETY: reading the type and the matching struct of a valid AXValue.
        unsafe {
            match value.r#type() {
                t if t == AXValueType::CGPoint => {
                    let mut p = CGPoint { x: 0.0, y: 0.0 };
                    if value.value(t, NonNull::from(&mut p).cast::<c_void>()) {
                        return AxValue::Point(p.x, p.y);
                    }
                }
                t if t == AXValueType::CGSize => {
                    let mut s = CGSize {
                        width: 0.0,
                        height: 0.0,
                    };
                    if value.value(t, NonNull::from(&mut s).cast::<c_void>()) {
                        return AxValue::Size(s.width, s.height);
                    }
                }
                _ => {}
            }
        }
        return AxValue::Other;
    }
    if v.downcast_ref::<AXUIElement>().is_some() {
        // SAFETY: checked to be an AXUIElement just above.
        return AxValue::Element(AxElement(unsafe { CFRetained::cast_unchecked(v) }));
    }
    if let Some(array) = v.downcast_ref::<CFArray>() {
        // SAFETY: an attribute array holds CF objects.
        let array: &CFArray<CFType> = unsafe { array.cast_unchecked() };
        let elements: Vec<AxElement> = array
            .iter()
            .filter_map(|e| e.downcast::<AXUIElement>().ok().map(AxElement))
            .collect();
        return AxValue::Elements(elements);
    }
    AxValue::Other
}
