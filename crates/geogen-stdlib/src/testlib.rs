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

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use geogen_diag::codes::*;
    use geogen_vm::Value;

    #[test]
    fn equal_values_pass() {
        let mut h = Harness::new();
        let a = h.list(&[]);
        for (x, y) in [(num(1.0), num(1.0)), (s("a"), s("a")), (Value::Null, Value::Null), (a.clone(), a)] {
            assert!(h.call("AssertEquals", &[x, y]).unwrap().is_null());
        }
    }

    #[test]
    fn unequal_values_fail_with_both_shown() {
        let mut h = Harness::new();
        let e = h.call("AssertEquals", &[num(3.0), num(1.0 / 3.0)]).unwrap_err();
        assert_eq!(e.code, GGE9000);
        assert_eq!(e.message, "expected 3, got 0.333333");
        let e = h.call("AssertEquals", &[num(1.0), s("1")]).unwrap_err();
        assert_eq!(e.message, "expected 1, got 1");
        assert!(e.hint.unwrap().contains("different types"));
        let e = h.call("AssertEquals", &[num(0.1), num(0.1000000001)]).unwrap_err();
        assert!(e.hint.unwrap().contains("print alike"));
        let (a, b) = (h.list(&[]), h.list(&[]));
        assert_eq!(h.err("AssertEquals", &[a, b]), GGE9000);
        assert_eq!(h.err("AssertEquals", &[num(1.0)]), GGE2103);
        // Only the test library has it.
        assert!(!crate::core_library().globals.contains_key("AssertEquals"));
        assert!(crate::test_library().globals.contains_key("AssertEquals"));
    }
}
