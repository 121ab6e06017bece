//! Arguments from C, checked before use: NULL pointers refused, strings read as UTF-8; and text
//! handed back to C as NUL-terminated strings.

use std::ffi::{c_char, CStr, CString};

use crate::fault::Fault;

/// `text` as a C string. A NUL inside it (a script may hold one) would end the string early, so
/// it becomes U+FFFD instead and nothing after it is lost.
pub(crate) fn c_text(text: &str) -> CString {
    let cleaned = if text.contains('\0') { text.replace('\0', "\u{FFFD}") } else { text.to_string() };
    CString::new(cleaned).unwrap_or_default()
}

/// A caller's NUL-terminated UTF-8 string argument.
///
/// # Safety
///
/// `pointer` is NULL or points to a NUL-terminated string that outlives the returned borrow.
pub(crate) unsafe fn arg_str<'a>(pointer: *const c_char, argument: &str) -> Result<&'a str, Fault> {
    if pointer.is_null() {
        return Err(Fault::null(argument));
    }
    // SAFETY: not NULL, and by this function's contract a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(pointer) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        Fault::invalid(format!("`{argument}` is not UTF-8 text: invalid byte at offset {}", e.valid_up_to()))
    })
}

/// A caller's object argument, read only.
///
/// # Safety
///
/// `pointer` is NULL or points to a live `T` that nothing changes during the borrow.
pub(crate) unsafe fn arg_ref<'a, T>(pointer: *const T, argument: &str) -> Result<&'a T, Fault> {
    // SAFETY: by this function's contract, a non-NULL pointer is a live `T` not changed meanwhile.
    unsafe { pointer.as_ref() }.ok_or_else(|| Fault::null(argument))
}

/// A caller's object argument, to change.
///
/// # Safety
///
/// `pointer` is NULL or points to a live `T` that nothing else uses during the borrow.
pub(crate) unsafe fn arg_mut<'a, T>(pointer: *mut T, argument: &str) -> Result<&'a mut T, Fault> {
    // SAFETY: by this function's contract, a non-NULL pointer is a live `T` used by us alone.
    unsafe { pointer.as_mut() }.ok_or_else(|| Fault::null(argument))
}

/// A required place for a result: refused when NULL, cleared (set to NULL) otherwise, so it holds
/// no stale pointer if the call fails.
///
/// # Safety
///
/// `pointer` is NULL or points to a writable `*mut T`.
pub(crate) unsafe fn out_object<T>(pointer: *mut *mut T, argument: &str) -> Result<OutObject<T>, Fault> {
    if pointer.is_null() {
        return Err(Fault::null(argument));
    }
    // SAFETY: not NULL, and by this function's contract writable.
    unsafe { pointer.write(std::ptr::null_mut()) };
    Ok(OutObject(pointer))
}

/// A checked place for a new object (see [`out_object`]).
pub(crate) struct OutObject<T>(*mut *mut T);

impl<T> OutObject<T> {
    /// Hands `value` to the caller, who frees it with its `_free` function.
    pub fn set(self, value: T) {
        // SAFETY: checked writable by `out_object`.
        unsafe { self.0.write(Box::into_raw(Box::new(value))) };
    }
}

/// Stores `value` through an optional result pointer (nothing when NULL).
///
/// # Safety
///
/// `pointer` is NULL or points to a writable `T`.
pub(crate) unsafe fn set_optional<T>(pointer: *mut T, value: T) {
    if !pointer.is_null() {
        // SAFETY: not NULL, and by this function's contract writable.
        unsafe { pointer.write(value) };
    }
}

/// Frees an object made with [`OutObject::set`] (NULL is fine).
///
/// # Safety
///
/// `pointer` is NULL or came from [`OutObject::set`] and is not used again.
pub(crate) unsafe fn free_object<T>(pointer: *mut T) {
    if !pointer.is_null() {
        // SAFETY: by this function's contract, a box this library leaked to the caller, once.
        drop(unsafe { Box::from_raw(pointer) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nul_inside_text_is_replaced_not_cut() {
        assert_eq!(c_text("a\0b").to_str(), Ok("a\u{FFFD}b"));
        assert_eq!(c_text("plain").to_str(), Ok("plain"));
    }

    #[test]
    fn arguments_are_checked() {
        // SAFETY: NULL and a literal C string are both allowed.
        unsafe {
            assert_eq!(arg_str(std::ptr::null(), "name").unwrap_err().code.to_string(), "GGE4000");
            assert_eq!(arg_str(c"island.ggs".as_ptr(), "name").unwrap(), "island.ggs");
            let bad = [0xffu8, 0];
            let e = arg_str(bad.as_ptr().cast(), "name").unwrap_err();
            assert!(e.message.contains("not UTF-8"), "{}", e.message);
        }
    }
}
