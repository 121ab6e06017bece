//! Small helpers shared by the family modules: numeric checks and error construction.

use geogen_diag::codes;
use geogen_vm::{Args, Native, RuntimeError, TypeRegistry, Value};

use crate::messages::format_number;

/// Shorthand for a Number in an error message (`%g` style, like Print).
pub(crate) fn n(x: f64) -> String {
    format_number(x)
}

/// GGE2302 if `result` is infinite; a NaN (a result that is not a real number) is also refused,
/// so that NaN never enters a script. `what` describes the computation for the message.
pub(crate) fn finite(result: f64, what: impl FnOnce() -> String) -> Result<f64, RuntimeError> {
    if result.is_infinite() {
        Err(RuntimeError::new(codes::GGE2302, format!("{} overflows to infinity", what()))
            .with_hint("the result is too large for a Number"))
    } else if result.is_nan() {
        Err(RuntimeError::new(codes::GGE2302, format!("{} is not a real number", what())))
    } else {
        Ok(result)
    }
}

/// A Number truncated toward zero to a 32-bit integer, or `None` if it does not fit.
pub(crate) fn trunc_i32(x: f64) -> Option<i32> {
    let t = x.trunc();
    if t.is_finite() && t >= i32::MIN as f64 && t <= i32::MAX as f64 {
        Some(t as i32)
    } else {
        None
    }
}

/// GGE2101 (functions) or GGE2102 (operators): operand `i` (0-based) of `native` should have been
/// `expected` but is `actual`. Used where the offending value is not literally `args.values[i]`
/// (the target of a compound assignment, the value behind a reference).
pub(crate) fn type_error(
    native: &Native,
    types: &TypeRegistry,
    i: usize,
    expected: &str,
    actual: &Value,
) -> RuntimeError {
    let (code, what) = if native.operator {
        (codes::GGE2102, format!("operand {} of `{}`", i + 1, native.name))
    } else {
        (codes::GGE2101, format!("argument {} of `{}`", i + 1, native.name))
    };
    RuntimeError::new(code, format!("{what} must be {}, not {}", article(expected), article(actual.type_name(types))))
        .with_hint(format!("expected {}", native.signature()))
}

pub(crate) fn article(type_name: &str) -> String {
    match type_name.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U' | 'a' | 'e' | 'i' | 'o' | 'u') => format!("an {type_name}"),
        Some(_) if type_name == "null" || type_name == "nothing" || type_name.starts_with('<') => type_name.to_string(),
        _ => format!("a {type_name}"),
    }
}

/// An internal error: the VM called a method with a `this` of the wrong kind.
pub(crate) fn bad_this(args: &Args<'_>, expected: &str) -> RuntimeError {
    RuntimeError::internal(format!(
        "`{}` was called on {} instead of {}",
        args.native.name,
        article(args.this.type_name(args.types)),
        article(expected)
    ))
}
