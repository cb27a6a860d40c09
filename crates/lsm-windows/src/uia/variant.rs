//! Reading the VARIANTs UI Automation returns for cached properties. UIA answers a property a
//! control does not support with a reserved object (VT_UNKNOWN), which reads as `None` here.

use windows::Win32::System::Com::SAFEARRAY;
use windows::Win32::System::Ole::{
    SafeArrayAccessData, SafeArrayGetLBound, SafeArrayGetUBound, SafeArrayUnaccessData,
};
use windows::Win32::System::Variant::{VariantClear, VARIANT, VT_ARRAY, VT_BOOL, VT_BSTR, VT_I4, VT_R8};

/// A VARIANT this process owns, cleared when dropped.
pub struct Owned(pub VARIANT);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the VARIANT came from UI Automation and is cleared once.
        let _ = unsafe { VariantClear(&mut self.0) };
    }
}

impl Owned {
    fn vt(&self) -> u16 {
        // SAFETY: `vt` is valid in every VARIANT.
        unsafe { self.0.Anonymous.Anonymous.vt.0 }
    }

    pub fn as_i32(&self) -> Option<i32> {
        // SAFETY: the union field read matches the type tag.
        (self.vt() == VT_I4.0).then(|| unsafe { self.0.Anonymous.Anonymous.Anonymous.lVal })
    }

    pub fn as_bool(&self) -> Option<bool> {
        // SAFETY: as above.
        (self.vt() == VT_BOOL.0).then(|| unsafe { self.0.Anonymous.Anonymous.Anonymous.boolVal.0 != 0 })
    }

    pub fn as_f64(&self) -> Option<f64> {
        // SAFETY: as above.
        (self.vt() == VT_R8.0).then(|| unsafe { self.0.Anonymous.Anonymous.Anonymous.dblVal })
    }

    pub fn as_string(&self) -> Option<String> {
        if self.vt() != VT_BSTR.0 {
            return None;
        }
        // SAFETY: as above; the BSTR stays owned by the VARIANT.
        Some(unsafe { self.0.Anonymous.Anonymous.Anonymous.bstrVal.to_string() })
    }

    /// A one-dimensional array of 32-bit integers (a runtime id).
    pub fn as_i32_array(&self) -> Option<Vec<i32>> {
        if self.vt() != (VT_ARRAY.0 | VT_I4.0) {
            return None;
        }
        // SAFETY: as above.
        let array = unsafe { self.0.Anonymous.Anonymous.Anonymous.parray };
        i32_array(array)
    }
}

/// The integers of a one-dimensional SAFEARRAY of VT_I4 (not destroyed here).
fn i32_array(array: *const SAFEARRAY) -> Option<Vec<i32>> {
    if array.is_null() {
        return None;
    }
    // SAFETY: a valid SAFEARRAY of i32, locked while read.
    unsafe {
        let lower = SafeArrayGetLBound(array, 1).ok()?;
        let upper = SafeArrayGetUBound(array, 1).ok()?;
        let len = usize::try_from(upper - lower + 1).ok()?;
        let mut data: *mut std::ffi::c_void = std::ptr::null_mut();
        SafeArrayAccessData(array, &mut data).ok()?;
        let out = if data.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(data.cast::<i32>(), len).to_vec()
        };
        let _ = SafeArrayUnaccessData(array);
        Some(out)
    }
}
