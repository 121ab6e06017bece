//! Failures as the C interface reports them: a status code, and an error object with the GGE
//! code, message, place and printable text. Every entry point runs its body through [`guard`],
//! which also turns a panic into an internal error, so no unwinding reaches the caller.

use std::any::Any;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use geogen::diag::{codes, render_diagnostics, Diagnostic, ErrorCode, RenderOptions, SourceFile};
use geogen::Failure;

use crate::text::c_text;
use crate::{
    geogen_status, GEOGEN_ERROR_INTERNAL, GEOGEN_ERROR_INVALID_ARGUMENT, GEOGEN_ERROR_LIMIT, GEOGEN_ERROR_RENDER,
    GEOGEN_ERROR_SCRIPT, GEOGEN_OK,
};

/// Why a call failed, before it becomes a [`geogen_error`].
#[derive(Debug)]
pub(crate) struct Fault {
    pub status: geogen_status,
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
    /// 1-based; 0 when the problem has no place in the script.
    pub line: u32,
    pub column: u32,
    pub count: u32,
    /// Every problem, rendered as the command line prints it.
    pub text: String,
}

impl Fault {
    /// A diagnostic that is not tied to script text (a bad argument, a limit of the whole call).
    pub fn host(diagnostic: Diagnostic) -> Fault {
        let text = render_diagnostics(&diagnostic.clone().into(), &SourceFile::new("", ""), RenderOptions::default());
        Fault {
            status: status_of(diagnostic.code),
            code: diagnostic.code,
            message: diagnostic.message,
            hint: diagnostic.hint.unwrap_or_default(),
            line: 0,
            column: 0,
            count: 1,
            text,
        }
    }

    /// A bad argument (GGE4000, the code of a host's misuse of the interface).
    pub fn invalid(message: impl Into<String>) -> Fault {
        Fault::host(Diagnostic::new(codes::GGE4000, message))
    }

    /// A required pointer argument that is NULL.
    pub fn null(argument: &str) -> Fault {
        Fault::invalid(format!("`{argument}` is a null pointer"))
    }

    /// The errors of a compile, run or render, with the first one's place in the script.
    pub fn from_failure(failure: &Failure) -> Fault {
        let first = failure.first();
        let place = failure.first_location();
        Fault {
            status: status_of(first.code),
            code: first.code,
            message: first.message.clone(),
            hint: first.hint.clone().unwrap_or_default(),
            line: place.map_or(0, |p| p.line),
            column: place.map_or(0, |p| p.column),
            count: u32::try_from(failure.diagnostics.total()).unwrap_or(u32::MAX),
            text: failure.render(RenderOptions::default()),
        }
    }

    /// A panic caught at the boundary: a bug, reported with what it said.
    fn panic(payload: &(dyn Any + Send)) -> Fault {
        let said = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        Fault::host(
            Diagnostic::new(codes::GGE5000, format!("internal error: geogen panicked: {said}"))
                .with_hint("this is a bug in geogen; please report it with the script and settings"),
        )
    }
}

/// The status of a failure with this (first) code; see the header's `geogen_status_code`.
pub(crate) fn status_of(code: ErrorCode) -> geogen_status {
    match code.number() {
        1107 | 2501..=2508 | 3001..=3003 | 8209 | 8301 | 8302 => GEOGEN_ERROR_LIMIT,
        3000..=3999 => GEOGEN_ERROR_RENDER,
        4000..=4999 => GEOGEN_ERROR_INVALID_ARGUMENT,
        5000..=5999 => GEOGEN_ERROR_INTERNAL,
        _ => GEOGEN_ERROR_SCRIPT,
    }
}

/// The error object the C caller holds: C strings made once, read by the accessors.
pub struct geogen_error {
    pub(crate) status: geogen_status,
    pub(crate) code: CString,
    pub(crate) message: CString,
    pub(crate) hint: CString,
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) count: u32,
    pub(crate) text: CString,
}

impl From<Fault> for geogen_error {
    fn from(fault: Fault) -> geogen_error {
        geogen_error {
            status: fault.status,
            code: c_text(&fault.code.to_string()),
            message: c_text(&fault.message),
            hint: c_text(&fault.hint),
            line: fault.line,
            column: fault.column,
            count: fault.count,
            text: c_text(&fault.text),
        }
    }
}

/// Runs an entry point's body: its status, and its error object (or NULL) stored through `error`
/// when that is not NULL. A panic becomes GEOGEN_ERROR_INTERNAL.
pub(crate) fn guard(error: *mut *mut geogen_error, body: impl FnOnce() -> Result<(), Fault>) -> geogen_status {
    let result = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => Err(Fault::panic(&*payload)),
    };
    let (status, fault) = match result {
        Ok(()) => (GEOGEN_OK, None),
        Err(fault) => (fault.status, Some(fault)),
    };
    if !error.is_null() {
        // Building the object allocates; should even that panic, the caller still gets the status.
        let object = catch_unwind(AssertUnwindSafe(|| {
            fault.map_or(std::ptr::null_mut(), |f| Box::into_raw(Box::new(geogen_error::from(f))))
        }))
        .unwrap_or(std::ptr::null_mut());
        // SAFETY: a non-NULL `error` points to a `geogen_error*` the caller lets us set (header:
        // "Conventions").
        unsafe { error.write(object) };
    }
    status
}

/// Runs an accessor or a destructor that returns no status: a panic gives `fallback`.
pub(crate) fn quietly<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// The empty C string, for accessors given NULL.
pub(crate) const EMPTY: &std::ffi::CStr = c"";

/// A C string of an error object, or "" for NULL.
pub(crate) fn error_text(error: *const geogen_error, pick: impl FnOnce(&geogen_error) -> &CString) -> *const c_char {
    quietly(EMPTY.as_ptr(), || {
        if error.is_null() {
            return EMPTY.as_ptr();
        }
        // SAFETY: a non-NULL error is one this library made and the caller has not freed.
        let error = unsafe { &*error };
        pick(error).as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_the_code_families() {
        assert_eq!(status_of(codes::GGE2202), GEOGEN_ERROR_SCRIPT);
        assert_eq!(status_of(codes::GGE1201), GEOGEN_ERROR_SCRIPT);
        assert_eq!(status_of(codes::GGE8108), GEOGEN_ERROR_SCRIPT);
        assert_eq!(status_of(codes::GGE1107), GEOGEN_ERROR_LIMIT);
        assert_eq!(status_of(codes::GGE2505), GEOGEN_ERROR_LIMIT);
        assert_eq!(status_of(codes::GGE2508), GEOGEN_ERROR_LIMIT);
        assert_eq!(status_of(codes::GGE3001), GEOGEN_ERROR_LIMIT);
        assert_eq!(status_of(codes::GGE8302), GEOGEN_ERROR_LIMIT);
        assert_eq!(status_of(codes::GGE4001), GEOGEN_ERROR_INVALID_ARGUMENT);
        assert_eq!(status_of(codes::GGE4003), GEOGEN_ERROR_INVALID_ARGUMENT);
        assert_eq!(status_of(codes::GGE5000), GEOGEN_ERROR_INTERNAL);
        assert_eq!(status_of(codes::GGE6000), GEOGEN_ERROR_SCRIPT);
    }

    #[test]
    fn a_panic_becomes_an_internal_error_with_its_message() {
        let mut error: *mut geogen_error = std::ptr::null_mut();
        let status = guard(&mut error, || panic!("the sky fell"));
        assert_eq!(status, GEOGEN_ERROR_INTERNAL);
        assert!(!error.is_null());
        // SAFETY: `guard` stored a boxed error object.
        let error = unsafe { Box::from_raw(error) };
        assert_eq!(error.code.to_str(), Ok("GGE5000"));
        assert!(error.message.to_str().unwrap().contains("the sky fell"), "{:?}", error.message);
        // Without an error pointer the status alone says it.
        assert_eq!(guard(std::ptr::null_mut(), || panic!("again")), GEOGEN_ERROR_INTERNAL);
    }

    #[test]
    fn success_clears_the_error_pointer() {
        let mut error: *mut geogen_error = std::ptr::NonNull::dangling().as_ptr();
        assert_eq!(guard(&mut error, || Ok(())), GEOGEN_OK);
        assert!(error.is_null());
    }
}
