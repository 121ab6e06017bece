//! Math functions (reference §4.2, with the README fixes: `Asin(±1)`, `Acos(±1)` and a zero `Log`
//! result work). Computed with the pure-Rust `libm`, so results are the same on every platform.
//!
//! Every result is checked: an infinite result is GGE2302 (and so is a result that is not a real
//! number, such as `Pow(-8, 0.5)`, which the original let through as NaN).

use std::f64::consts::PI;

use geogen_diag::codes;
use geogen_vm::{Args, Ctx, Library, Native, RuntimeError, Value};

use crate::util::{finite, n};

/// A one-argument function whose result needs no check beyond finiteness.
macro_rules! unary {
    ($( $konst:ident, $fname:ident, $name:literal, $sig:literal, |$x:ident| $body:expr; )*) => {
        $(
            const $konst: Native = Native::function($name, $sig, 1, Some(1), $fname);
            fn $fname(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
                let $x = args.number(0)?;
                finite($body, || format!("{}({})", $name, n($x))).map(Value::Number)
            }
        )*
    };
}

unary! {
    SIN, sin, "Sin", "Sin(Number radians)", |x| libm::sin(x);
    COS, cos, "Cos", "Cos(Number radians)", |x| libm::cos(x);
    TAN, tan, "Tan", "Tan(Number radians)", |x| libm::tan(x);
    ATAN, atan, "Atan", "Atan(Number x)", |x| libm::atan(x);
    DEG_TO_RAD, deg_to_rad, "DegToRad", "DegToRad(Number degrees)", |x| x * (PI / 180.0);
    RAD_TO_DEG, rad_to_deg, "RadToDeg", "RadToDeg(Number radians)", |x| x * (180.0 / PI);
    ROUND, round, "Round", "Round(Number x)", |x| libm::round(x);
    CEIL, ceil, "Ceil", "Ceil(Number x)", |x| libm::ceil(x);
    FLOOR, floor, "Floor", "Floor(Number x)", |x| libm::floor(x);
    ABS, abs, "Abs", "Abs(Number x)", |x| libm::fabs(x);
}

const ASIN: Native = Native::function("Asin", "Asin(Number x)", 1, Some(1), asin);

fn asin(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let x = args.number(0)?;
    check_unit_range("Asin", x)?;
    Ok(Value::Number(libm::asin(x)))
}

const ACOS: Native = Native::function("Acos", "Acos(Number x)", 1, Some(1), acos);

fn acos(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let x = args.number(0)?;
    check_unit_range("Acos", x)?;
    Ok(Value::Number(libm::acos(x)))
}

/// GGE2305 unless -1 ≤ x ≤ 1.
fn check_unit_range(name: &str, x: f64) -> Result<(), RuntimeError> {
    if (-1.0..=1.0).contains(&x) {
        Ok(())
    } else {
        Err(RuntimeError::new(codes::GGE2305, format!("{name} of {}, which is outside [-1, 1]", n(x)))
            .with_hint(format!("{name} is only defined for values from -1 to 1")))
    }
}

const ATAN2: Native = Native::function("Atan2", "Atan2(Number y, Number x)", 2, Some(2), atan2);

fn atan2(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let y = args.number(0)?;
    let x = args.number(1)?;
    Ok(Value::Number(libm::atan2(y, x)))
}

const LOG: Native = Native::function("Log", "Log(Number x, Number base)", 2, Some(2), log);

/// ln x / ln base. x ≤ 0, base ≤ 0 and base 1 are GGE2306; a result of 0 (`Log(1, 10)`) is fine.
fn log(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let x = args.number(0)?;
    let base = args.number(1)?;
    if x <= 0.0 {
        return Err(RuntimeError::new(codes::GGE2306, format!("Log of {}, which is not positive", n(x)))
            .with_hint("the logarithm is only defined for positive numbers"));
    }
    if base <= 0.0 {
        return Err(RuntimeError::new(codes::GGE2306, format!("Log with the base {}, which is not positive", n(base)))
            .with_hint("the base of a logarithm must be positive and not 1"));
    }
    if base == 1.0 {
        return Err(RuntimeError::new(codes::GGE2306, "Log with the base 1".to_string())
            .with_hint("no power of 1 is anything but 1, so the base of a logarithm cannot be 1"));
    }
    let r = libm::log(x) / libm::log(base);
    finite(r, || format!("Log({}, {})", n(x), n(base))).map(Value::Number)
}

const POW: Native = Native::function("Pow", "Pow(Number x, Number power)", 2, Some(2), pow);

/// x^p. An infinite result is GGE2302, a non-zero x giving 0 is GGE2308, and a negative x with a
/// non-integer power (no real result) is GGE2302.
fn pow(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let x = args.number(0)?;
    let p = args.number(1)?;
    let r = libm::pow(x, p);
    if r.is_nan() {
        return Err(RuntimeError::new(codes::GGE2302, format!("Pow({}, {}) is not a real number", n(x), n(p)))
            .with_hint("a negative number can only be raised to an integer power"));
    }
    let r = finite(r, || format!("Pow({}, {})", n(x), n(p)))?;
    if r == 0.0 && x != 0.0 {
        return Err(RuntimeError::new(codes::GGE2308, format!("Pow({}, {}) underflows to 0", n(x), n(p)))
            .with_hint("the result is too small for a Number"));
    }
    Ok(Value::Number(r))
}

const SQRT: Native = Native::function("Sqrt", "Sqrt(Number x)", 1, Some(1), sqrt);

fn sqrt(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let x = args.number(0)?;
    if x < 0.0 {
        return Err(RuntimeError::new(codes::GGE2307, format!("Sqrt of a negative number ({})", n(x)))
            .with_hint("the square root is only defined for numbers ≥ 0"));
    }
    Ok(Value::Number(libm::sqrt(x)))
}

const MIN: Native = Native::function("Min", "Min(Number a, Number b, ...)", 2, None, min);

fn min(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    extreme(args, |candidate, best| candidate < best)
}

const MAX: Native = Native::function("Max", "Max(Number a, Number b, ...)", 2, None, max);

fn max(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    extreme(args, |candidate, best| candidate > best)
}

/// The first argument that no later one beats; every argument must be a Number.
fn extreme(args: &Args<'_>, better: fn(f64, f64) -> bool) -> Result<Value, RuntimeError> {
    let mut best = args.number(0)?;
    for i in 1..args.len() {
        let x = args.number(i)?;
        if better(x, best) {
            best = x;
        }
    }
    Ok(Value::Number(best))
}

pub(crate) fn register(lib: &mut Library) {
    for native in [
        MIN, MAX, SIN, COS, TAN, ASIN, ACOS, ATAN, ATAN2, DEG_TO_RAD, RAD_TO_DEG, LOG, POW, SQRT, ROUND, CEIL, FLOOR,
        ABS,
    ] {
        lib.add_global(native);
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use geogen_diag::codes::*;
    use geogen_vm::Value;

    fn f(name: &str, args: &[f64]) -> f64 {
        let values: Vec<Value> = args.iter().map(|&x| num(x)).collect();
        as_num(&Harness::new().call(name, &values).unwrap_or_else(|e| panic!("{name}{args:?}: {e}")))
    }

    fn e(name: &str, args: &[f64]) -> geogen_diag::ErrorCode {
        let values: Vec<Value> = args.iter().map(|&x| num(x)).collect();
        Harness::new().err(name, &values)
    }

    #[test]
    fn min_and_max() {
        assert_eq!(f("Min", &[3.0, 1.0]), 1.0);
        assert_eq!(f("Min", &[3.0, 1.0, -2.0, 5.0]), -2.0);
        assert_eq!(f("Max", &[3.0, 1.0]), 3.0);
        assert_eq!(f("Max", &[3.0, 1.0, 7.5, 5.0]), 7.5);
        assert_eq!(e("Min", &[1.0]), GGE2103);
        assert_eq!(e("Max", &[]), GGE2103);
        let mut h = Harness::new();
        let err = h.call("Max", &[num(1.0), num(2.0), s("3")]).unwrap_err();
        assert_eq!(err.code, GGE2101);
        assert!(err.message.contains("argument 3"), "{}", err.message);
    }

    #[test]
    fn trigonometry() {
        let pi = std::f64::consts::PI;
        assert_eq!(f("Sin", &[0.0]), 0.0);
        assert_6(f("Sin", &[pi / 6.0]), "0.5");
        assert_6(f("Cos", &[pi / 3.0]), "0.5");
        assert_6(f("Tan", &[pi / 4.0]), "1");
        assert_6(f("Atan", &[1.0]), "0.785398");
        assert_6(f("Atan2", &[1.0, 0.0]), "1.5708");
        assert_6(f("Atan2", &[0.0, -1.0]), "3.14159");
        assert_6(f("Atan2", &[-1.0, -1.0]), "-2.35619");
        // The README fix: ±1 are in the domain.
        assert_6(f("Asin", &[1.0]), "1.5708");
        assert_6(f("Asin", &[-1.0]), "-1.5708");
        assert_eq!(f("Acos", &[1.0]), 0.0);
        assert_6(f("Acos", &[-1.0]), "3.14159");
        assert_6(f("Asin", &[0.5]), "0.523599");
        assert_eq!(e("Asin", &[1.0000001]), GGE2305);
        assert_eq!(e("Acos", &[-2.0]), GGE2305);
        assert_6(f("DegToRad", &[180.0]), "3.14159");
        assert_6(f("RadToDeg", &[pi / 2.0]), "90");
        assert_eq!(e("RadToDeg", &[1e308]), GGE2302);
    }

    #[test]
    fn logarithms_and_powers() {
        assert_eq!(f("Log", &[1.0, 10.0]), 0.0);
        assert_6(f("Log", &[1000.0, 10.0]), "3");
        assert_6(f("Log", &[8.0, 2.0]), "3");
        assert_6(f("Log", &[0.25, 2.0]), "-2");
        assert_6(f("Log", &[2.0, 0.5]), "-1");
        assert_eq!(e("Log", &[0.0, 10.0]), GGE2306);
        assert_eq!(e("Log", &[-1.0, 10.0]), GGE2306);
        assert_eq!(e("Log", &[10.0, 0.0]), GGE2306);
        assert_eq!(e("Log", &[10.0, -2.0]), GGE2306);
        let err = Harness::new().call("Log", &[num(10.0), num(1.0)]).unwrap_err();
        assert_eq!(err.code, GGE2306);
        assert!(err.hint.is_some());
        assert_eq!(f("Pow", &[2.0, 10.0]), 1024.0);
        assert_eq!(f("Pow", &[0.0, 0.0]), 1.0);
        assert_eq!(f("Pow", &[0.0, 2.0]), 0.0);
        assert_eq!(f("Pow", &[-2.0, 3.0]), -8.0);
        assert_6(f("Pow", &[2.0, 0.5]), "1.41421");
        assert_eq!(e("Pow", &[10.0, 400.0]), GGE2302);
        assert_eq!(e("Pow", &[0.0, -1.0]), GGE2302);
        assert_eq!(e("Pow", &[10.0, -400.0]), GGE2308);
        assert_eq!(e("Pow", &[-8.0, 0.5]), GGE2302);
        assert_eq!(f("Sqrt", &[16.0]), 4.0);
        assert_eq!(f("Sqrt", &[0.0]), 0.0);
        let err = Harness::new().call("Sqrt", &[num(-4.0)]).unwrap_err();
        assert_eq!(err.code, GGE2307);
        assert_eq!(err.message, "Sqrt of a negative number (-4)");
    }

    #[test]
    fn rounding() {
        assert_eq!(f("Round", &[2.5]), 3.0);
        assert_eq!(f("Round", &[-2.5]), -3.0);
        assert_eq!(f("Round", &[2.4999]), 2.0);
        assert_eq!(f("Round", &[-0.4]), 0.0);
        assert_eq!(f("Ceil", &[1.1]), 2.0);
        assert_eq!(f("Ceil", &[-1.1]), -1.0);
        assert_eq!(f("Floor", &[1.9]), 1.0);
        assert_eq!(f("Floor", &[-1.1]), -2.0);
        assert_eq!(f("Abs", &[-3.5]), 3.5);
        assert_eq!(f("Abs", &[3.5]), 3.5);
    }

    #[test]
    fn argument_types_and_counts() {
        let mut h = Harness::new();
        for name in [
            "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "DegToRad", "RadToDeg", "Sqrt", "Round", "Ceil", "Floor",
            "Abs",
        ] {
            assert_eq!(h.err(name, &[Value::Bool(true)]), GGE2101, "{name}");
            assert_eq!(h.err(name, &[]), GGE2103, "{name}");
            assert_eq!(h.err(name, &[num(1.0), num(1.0)]), GGE2103, "{name}");
        }
        for name in ["Atan2", "Log", "Pow"] {
            assert_eq!(h.err(name, &[num(1.0), Value::Null]), GGE2101, "{name}");
            assert_eq!(h.err(name, &[num(1.0)]), GGE2103, "{name}");
        }
    }
}
