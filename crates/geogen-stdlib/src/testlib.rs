//! The test library, added by `geogen test`: `AssertEquals(expected, actual)`.

use geogen_diag::codes;
use geogen_vm::{Args, Ctx, Library, Native, RuntimeError, Value};

use crate::messages::format_value;

const ASSERT_EQUALS: Native =
    Native::function("AssertEquals", "AssertEquals(any expected, any actual)", 2, Some(2), assert_equals);

/// Script equality (`==`); unequal values are GGE9000 showing both.
fn assert_equals(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let expected = args.value(0)?;
    let actual = args.value(1)?;
    if expected.script_eq(actual) {
        return Ok(Value::Null);
    }
    let mut error =
        RuntimeError::new(codes::GGE9000, format!("expected {}, got {}", format_value(expected), format_value(actual)));
    let (te, ta) = (expected.type_name(args.types), actual.type_name(args.types));
    if te != ta {
        error = error.with_hint(format!("values of different types are never equal (a {te} and a {ta})"));
    } else if format_value(expected) == format_value(actual) {
        error = error.with_hint(format!("the two {te} values print alike but differ (precision or identity)"));
    }
    Err(error)
}

pub(crate) fn register(lib: &mut Library) {
    lib.add_global(ASSERT_EQUALS);
}
