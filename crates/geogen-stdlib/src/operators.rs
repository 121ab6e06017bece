//! Operator natives (reference §4.1, with the README fixes).
//!
//! * `+ - * /` on Numbers: an infinite result is GGE2302; `*` and `/` with non-zero operands that
//!   give 0 are GGE2308; division by zero is GGE2301. `+` with a String on either side
//!   concatenates, the other side formatted with [`format_value`](crate::messages::format_value).
//! * `%` truncates both operands to int32 (GGE2302 outside that range; GGE2301 for a zero divisor
//!   after truncation); the remainder has the sign of the dividend, as in C.
//! * `<<` and `>>` truncate both operands to int32 (GGE2302 outside that range), then shift the
//!   32-bit value; `>>` is arithmetic (sign-extending). **The shift count is masked to its low five
//!   bits** (0..31), as Java and JavaScript do, so `1 << 32` is 1 and `1 << -1` is `1 << 31`;
//!   bits shifted out of the 32-bit value are lost (`1 << 31` is -2147483648).
//! * `< <= > >=` compare Numbers, or Strings lexicographically (by UTF-8 bytes).
//! * `== !=` use [`Value::script_eq`].
//! * `& | ^` take Numbers or Booleans (a Boolean counts as 1/0, a Number is truncated to int32);
//!   the result is a Boolean only when both operands are Booleans.
//! * `!` Boolean; `+un`, `-un` Number; `@` Number/Coordinate → relative Coordinate, Point → both
//!   components relative (GGE2704 if both map dimensions are infinite).
//! * `++pre ++post --pre --post` take a reference to a Number; pre returns the new value, post the
//!   old.
//! * Compound assignments `op=` take (reference, value), compute like `op`, store the result back
//!   and return it. For `&= |= ^=` the right operand decides the mode: a Boolean right operand
//!   needs a Boolean target and a Number one a Number target (GGE2102 otherwise).

use std::rc::Rc;

use geogen_diag::codes;
use geogen_vm::value::Reference;
use geogen_vm::{Args, Coordinate, Ctx, Heap, Library, Native, Point, RuntimeError, ScriptString, TypeRegistry, Value};

use crate::messages::{format_value_within, string_too_long};
use crate::util::{finite, n, trunc_i32, type_error};

/// The operands of a binary operation, with what is needed to report errors about them.
struct Operands<'a> {
    native: &'a Native,
    types: &'a TypeRegistry,
    a: &'a Value,
    b: &'a Value,
    /// `Limits::max_string_len`, for concatenation.
    max_string_len: usize,
    /// Where a concatenation's bytes are counted.
    heap: &'a Heap,
}

impl Operands<'_> {
    fn bad(&self, i: usize, expected: &str) -> RuntimeError {
        let actual = if i == 0 { self.a } else { self.b };
        type_error(self.native, self.types, i, expected, actual)
    }

    fn numbers(&self) -> Result<(f64, f64), RuntimeError> {
        match (self.a, self.b) {
            (Value::Number(a), Value::Number(b)) => Ok((*a, *b)),
            (Value::Number(_), _) => Err(self.bad(1, "Number")),
            _ => Err(self.bad(0, "Number")),
        }
    }

    /// Both operands truncated to int32 (GGE2302 if one does not fit).
    fn ints(&self) -> Result<(i32, i32), RuntimeError> {
        let (a, b) = self.numbers()?;
        let int = |x: f64| {
            trunc_i32(x).ok_or_else(|| {
                RuntimeError::new(
                    codes::GGE2302,
                    format!("`{}` needs 32-bit integer operands, but {} is out of that range", self.native.name, n(x)),
                )
                .with_hint("integer operators truncate their operands to [-2147483648, 2147483647]")
            })
        };
        Ok((int(a)?, int(b)?))
    }
}

/// The binary operations shared by the plain and the compound operators.
#[derive(Copy, Clone, Debug, PartialEq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
        }
    }

    fn apply(self, ops: &Operands<'_>) -> Result<Value, RuntimeError> {
        let sym = self.symbol();
        match self {
            BinOp::Add => {
                if matches!(ops.a, Value::String(_)) || matches!(ops.b, Value::String(_)) {
                    // Bounded (GGE2507): doubling a string in a loop would otherwise ask for
                    // terabytes, and so would the text of arrays sharing sub-arrays.
                    let max = ops.max_string_len;
                    let too_long = || string_too_long("the concatenated string", max);
                    let mut s = format_value_within(ops.a, max).ok_or_else(too_long)?;
                    let b = format_value_within(ops.b, max - s.len()).ok_or_else(too_long)?;
                    s.push_str(&b);
                    return Ok(Value::String(ScriptString::built(s, ops.heap)?));
                }
                let (a, b) = ops.numbers()?;
                finite(a + b, || format!("{} + {}", n(a), n(b))).map(Value::Number)
            }
            BinOp::Sub => {
                let (a, b) = ops.numbers()?;
                finite(a - b, || format!("{} - {}", n(a), n(b))).map(Value::Number)
            }
            BinOp::Mul => {
                let (a, b) = ops.numbers()?;
                let r = finite(a * b, || format!("{} * {}", n(a), n(b)))?;
                if r == 0.0 && a != 0.0 && b != 0.0 {
                    return Err(underflow(format!("{} * {}", n(a), n(b))));
                }
                Ok(Value::Number(r))
            }
            BinOp::Div => {
                let (a, b) = ops.numbers()?;
                if b == 0.0 {
                    return Err(RuntimeError::new(codes::GGE2301, format!("division by zero ({} / 0)", n(a))));
                }
                let r = finite(a / b, || format!("{} / {}", n(a), n(b)))?;
                if r == 0.0 && a != 0.0 {
                    return Err(underflow(format!("{} / {}", n(a), n(b))));
                }
                Ok(Value::Number(r))
            }
            BinOp::Rem => {
                let (a, b) = ops.ints()?;
                if b == 0 {
                    let (x, y) = ops.numbers()?;
                    return Err(RuntimeError::new(
                        codes::GGE2301,
                        format!("remainder of a division by zero ({} % {})", n(x), n(y)),
                    )
                    .with_hint("`%` truncates its operands to integers first"));
                }
                Ok(Value::Number(a.wrapping_rem(b) as f64))
            }
            BinOp::Shl => {
                let (a, b) = ops.ints()?;
                Ok(Value::Number(a.wrapping_shl(b as u32) as f64))
            }
            BinOp::Shr => {
                let (a, b) = ops.ints()?;
                Ok(Value::Number(a.wrapping_shr(b as u32) as f64))
            }
            BinOp::And | BinOp::Or | BinOp::Xor => {
                let f = |x: i32, y: i32| match self {
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    _ => x ^ y,
                };
                if let (Value::Bool(a), Value::Bool(b)) = (ops.a, ops.b) {
                    return Ok(Value::Bool(f(*a as i32, *b as i32) != 0));
                }
                let int = |i: usize, v: &Value| -> Result<i32, RuntimeError> {
                    match v {
                        Value::Bool(b) => Ok(*b as i32),
                        Value::Number(x) => trunc_i32(*x).ok_or_else(|| {
                            RuntimeError::new(
                                codes::GGE2302,
                                format!("`{sym}` needs 32-bit integer operands, but {} is out of that range", n(*x)),
                            )
                            .with_hint("bitwise operators truncate Numbers to [-2147483648, 2147483647]")
                        }),
                        _ => Err(ops.bad(i, "Number or Boolean")),
                    }
                };
                let a = int(0, ops.a)?;
                let b = int(1, ops.b)?;
                Ok(Value::Number(f(a, b) as f64))
            }
        }
    }
}

fn underflow(what: String) -> RuntimeError {
    RuntimeError::new(codes::GGE2308, format!("{what} underflows to 0"))
        .with_hint("the result is too small for a Number")
}

fn binary(ctx: &mut Ctx<'_>, args: &Args<'_>, op: BinOp) -> Result<Value, RuntimeError> {
    let ops = Operands {
        native: args.native,
        types: ctx.types,
        a: args.value(0)?,
        b: args.value(1)?,
        max_string_len: ctx.env.limits.max_string_len,
        heap: &ctx.env.heap,
    };
    let result = op.apply(&ops)?;
    charge_string(ctx, &result)?;
    Ok(result)
}

/// Building a string copies it: charge the budget for its length, so a loop that grows a string
/// pays for the quadratic copying it does.
fn charge_string(ctx: &mut Ctx<'_>, result: &Value) -> Result<(), RuntimeError> {
    match result {
        Value::String(s) => ctx.env.spend(s.len() as u64 / 16),
        _ => Ok(()),
    }
}

/// `op=`: reads the target, computes, stores the result back and returns it.
fn compound(ctx: &mut Ctx<'_>, args: &Args<'_>, op: BinOp) -> Result<Value, RuntimeError> {
    let reference = reference_arg(args)?;
    let current = reference.get()?;
    let rhs = args.value(1)?;
    if matches!(op, BinOp::And | BinOp::Or | BinOp::Xor) {
        let needed = match rhs {
            Value::Bool(_) => Some("Boolean"),
            Value::Number(_) => Some("Number"),
            _ => None,
        };
        let ok = matches!((&current, rhs), (Value::Bool(_), Value::Bool(_)) | (Value::Number(_), Value::Number(_)));
        if let (Some(needed), false) = (needed, ok) {
            return Err(type_error(args.native, ctx.types, 0, needed, &current).with_hint(format!(
                "with a {needed} on the right, `{}` needs a {needed} variable (expected {})",
                args.native.name,
                args.native.signature()
            )));
        }
    }
    let ops = Operands {
        native: args.native,
        types: ctx.types,
        a: &current,
        b: rhs,
        max_string_len: ctx.env.limits.max_string_len,
        heap: &ctx.env.heap,
    };
    let result = op.apply(&ops)?;
    charge_string(ctx, &result)?;
    reference.set(result.clone())?;
    Ok(result)
}

fn reference_arg<'a>(args: &Args<'a>) -> Result<&'a Rc<Reference>, RuntimeError> {
    match args.value(0)? {
        Value::Reference(r) => Ok(r),
        other => Err(RuntimeError::internal(format!(
            "`{}` expects a reference as its first operand, got {}",
            args.native.name,
            other.type_name(args.types)
        ))),
    }
}

/// `++` and `--`: `delta` is +1 or -1; returns the new value (pre) or the old one (post).
fn step(ctx: &Ctx<'_>, args: &Args<'_>, delta: f64, pre: bool) -> Result<Value, RuntimeError> {
    let reference = reference_arg(args)?;
    let old = match reference.get()? {
        Value::Number(x) => x,
        other => return Err(type_error(args.native, ctx.types, 0, "Number", &other)),
    };
    let new = finite(old + delta, || format!("{} {} 1", n(old), if delta > 0.0 { '+' } else { '-' }))?;
    reference.set(Value::Number(new))?;
    Ok(Value::Number(if pre { new } else { old }))
}

#[derive(Copy, Clone)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

fn compare(ctx: &Ctx<'_>, args: &Args<'_>, cmp: Cmp) -> Result<Value, RuntimeError> {
    let (a, b) = (args.value(0)?, args.value(1)?);
    let ord = match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.partial_cmp(y),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Number(_), _) => return Err(type_error(args.native, ctx.types, 1, "Number", b)),
        (Value::String(_), _) => return Err(type_error(args.native, ctx.types, 1, "String", b)),
        _ => return Err(type_error(args.native, ctx.types, 0, "Number", a)),
    };
    use std::cmp::Ordering::*;
    let result = match (cmp, ord) {
        (_, None) => false,
        (Cmp::Lt, Some(o)) => o == Less,
        (Cmp::Le, Some(o)) => o != Greater,
        (Cmp::Gt, Some(o)) => o == Greater,
        (Cmp::Ge, Some(o)) => o != Less,
    };
    Ok(Value::Bool(result))
}

/// Declares two-operand operator natives that all forward to one dispatch function
/// (`binary`, `compound` or `compare`) with their operation.
macro_rules! operators_via {
    ($dispatch:ident: $( $konst:ident, $fname:ident, $sym:literal, $sig:literal, $op:expr; )*) => {
        $(
            const $konst: Native = Native::operator($sym, $sig, 2, $fname);
            fn $fname(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
                $dispatch(ctx, args, $op)
            }
        )*
    };
}

operators_via! {
    binary:
    ADD, op_add, "+", "Number + Number, or String + any", BinOp::Add;
    SUB, op_sub, "-", "Number - Number", BinOp::Sub;
    MUL, op_mul, "*", "Number * Number", BinOp::Mul;
    DIV, op_div, "/", "Number / Number", BinOp::Div;
    REM, op_rem, "%", "Number % Number", BinOp::Rem;
    SHL, op_shl, "<<", "Number << Number", BinOp::Shl;
    SHR, op_shr, ">>", "Number >> Number", BinOp::Shr;
    AND, op_and, "&", "Number|Boolean & Number|Boolean", BinOp::And;
    OR, op_or, "|", "Number|Boolean | Number|Boolean", BinOp::Or;
    XOR, op_xor, "^", "Number|Boolean ^ Number|Boolean", BinOp::Xor;
}

operators_via! {
    compound:
    ADD_ASSIGN, op_add_assign, "+=", "variable += Number (or String += any)", BinOp::Add;
    SUB_ASSIGN, op_sub_assign, "-=", "variable -= Number", BinOp::Sub;
    MUL_ASSIGN, op_mul_assign, "*=", "variable *= Number", BinOp::Mul;
    DIV_ASSIGN, op_div_assign, "/=", "variable /= Number", BinOp::Div;
    REM_ASSIGN, op_rem_assign, "%=", "variable %= Number", BinOp::Rem;
    SHL_ASSIGN, op_shl_assign, "<<=", "variable <<= Number", BinOp::Shl;
    SHR_ASSIGN, op_shr_assign, ">>=", "variable >>= Number", BinOp::Shr;
    AND_ASSIGN, op_and_assign, "&=", "Number variable &= Number, or Boolean variable &= Boolean", BinOp::And;
    OR_ASSIGN, op_or_assign, "|=", "Number variable |= Number, or Boolean variable |= Boolean", BinOp::Or;
    XOR_ASSIGN, op_xor_assign, "^=", "Number variable ^= Number, or Boolean variable ^= Boolean", BinOp::Xor;
}

operators_via! {
    compare:
    LT, op_lt, "<", "Number < Number (or String < String)", Cmp::Lt;
    LE, op_le, "<=", "Number <= Number (or String <= String)", Cmp::Le;
    GT, op_gt, ">", "Number > Number (or String > String)", Cmp::Gt;
    GE, op_ge, ">=", "Number >= Number (or String >= String)", Cmp::Ge;
}

const EQ: Native = Native::operator("==", "any == any", 2, op_eq);
fn op_eq(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Bool(args.value(0)?.script_eq(args.value(1)?)))
}

const NE: Native = Native::operator("!=", "any != any", 2, op_ne);
fn op_ne(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Bool(!args.value(0)?.script_eq(args.value(1)?)))
}

const NOT: Native = Native::operator("!", "!Boolean", 1, op_not);
fn op_not(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Bool(!args.boolean(0)?))
}

const PLUS: Native = Native::operator("+un", "+Number", 1, op_plus);
fn op_plus(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(args.number(0)?))
}

const MINUS: Native = Native::operator("-un", "-Number", 1, op_minus);
fn op_minus(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(-args.number(0)?))
}

const RELATIVE: Native = Native::operator("@", "@Number, @Coordinate or @Point", 1, op_relative);
fn op_relative(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    match args.value(0)? {
        Value::Number(x) => Ok(Value::Coordinate(Coordinate::relative(*x))),
        Value::Coordinate(c) => Ok(Value::Coordinate(Coordinate::relative(c.value))),
        Value::Point(p) => {
            let g = &ctx.env.geometry;
            if g.map_width.is_none() && g.map_height.is_none() {
                return Err(RuntimeError::new(
                    codes::GGE2704,
                    format!(
                        "the relative point @[{}, {}] cannot be used: the map is infinite in both dimensions",
                        n(p.x.value),
                        n(p.y.value)
                    ),
                )
                .with_hint("relative coordinates are fractions of the map size; use absolute coordinates here"));
            }
            Ok(Value::Point(Point { x: Coordinate::relative(p.x.value), y: Coordinate::relative(p.y.value) }))
        }
        _ => Err(args.type_error(0, "Number, Coordinate or Point")),
    }
}

macro_rules! step_ops {
    ($( $konst:ident, $fname:ident, $sym:literal, $sig:literal, $delta:expr, $pre:expr; )*) => {
        $(
            const $konst: Native = Native::operator($sym, $sig, 1, $fname);
            fn $fname(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
                step(ctx, args, $delta, $pre)
            }
        )*
    };
}

step_ops! {
    INC_PRE, op_inc_pre, "++pre", "++variable (a Number)", 1.0, true;
    INC_POST, op_inc_post, "++post", "variable++ (a Number)", 1.0, false;
    DEC_PRE, op_dec_pre, "--pre", "--variable (a Number)", -1.0, true;
    DEC_POST, op_dec_post, "--post", "variable-- (a Number)", -1.0, false;
}

/// Every operator native.
pub const OPERATORS: &[Native] = &[
    ADD, SUB, MUL, DIV, REM, SHL, SHR, AND, OR, XOR, LT, LE, GT, GE, EQ, NE, NOT, PLUS, MINUS, RELATIVE, INC_PRE,
    INC_POST, DEC_PRE, DEC_POST, ADD_ASSIGN, SUB_ASSIGN, MUL_ASSIGN, DIV_ASSIGN, REM_ASSIGN, SHL_ASSIGN, SHR_ASSIGN,
    AND_ASSIGN, OR_ASSIGN, XOR_ASSIGN,
];

pub(crate) fn register(lib: &mut Library) {
    for native in OPERATORS {
        lib.add_global(*native);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use geogen_diag::codes::*;

    fn b(x: bool) -> Value {
        Value::Bool(x)
    }

    fn calc(name: &str, a: Value, bv: Value) -> Value {
        Harness::new().call(name, &[a, bv]).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn n2(name: &str, a: f64, bv: f64) -> f64 {
        as_num(&calc(name, num(a), num(bv)))
    }

    #[test]
    fn arithmetic() {
        assert_eq!(n2("+", 1.5, 2.0), 3.5);
        assert_eq!(n2("-", 1.5, 2.0), -0.5);
        assert_eq!(n2("*", 1.5, 2.0), 3.0);
        assert_eq!(n2("/", 1.0, 4.0), 0.25);
        assert_eq!(n2("*", 0.0, 5.0), 0.0);
        assert_eq!(n2("/", 0.0, 5.0), 0.0);
    }

    #[test]
    fn arithmetic_errors() {
        let mut h = Harness::new();
        assert_eq!(h.err("+", &[num(1e308), num(1e308)]), GGE2302);
        assert_eq!(h.err("-", &[num(-1e308), num(1e308)]), GGE2302);
        assert_eq!(h.err("*", &[num(1e200), num(1e200)]), GGE2302);
        assert_eq!(h.err("/", &[num(1e300), num(1e-300)]), GGE2302);
        assert_eq!(h.err("*", &[num(1e-200), num(1e-200)]), GGE2308);
        assert_eq!(h.err("/", &[num(1e-300), num(1e300)]), GGE2308);
        assert_eq!(h.err("/", &[num(1.0), num(0.0)]), GGE2301);
        assert_eq!(h.err("/", &[num(0.0), num(0.0)]), GGE2301);
        assert_eq!(h.err("-", &[s("a"), num(1.0)]), GGE2102);
        assert_eq!(h.err("*", &[num(1.0), Value::Null]), GGE2102);
        assert_eq!(h.err("+", &[num(1.0), b(true)]), GGE2102);
        assert_eq!(h.err("+", &[Value::Coordinate(abs_c(1.0)), num(1.0)]), GGE2102);
        let e = h.call("/", &[num(7.0), num(0.0)]).unwrap_err();
        assert!(e.message.contains("7 / 0"), "{}", e.message);
        let e = h.call("-", &[num(1.0), s("x")]).unwrap_err();
        assert!(e.message.contains("operand 2") && e.message.contains("a String"), "{}", e.message);
        assert!(e.hint.unwrap().contains("Number - Number"));
    }

    #[test]
    fn string_concatenation() {
        let cases = [
            (s("a"), num(1.0), "a1"),
            (num(0.5), s("x"), "0.5x"),
            (s("a"), s("b"), "ab"),
            (s("v="), Value::Null, "v=null"),
            (s(""), b(true), "true"),
            (s("p"), point(abs_c(1.0), rel_c(0.5)), "p[1, @0.5]"),
            (s("n"), num(1.0 / 3.0), "n0.333333"),
        ];
        for (a, bv, expected) in cases {
            match calc("+", a, bv) {
                Value::String(t) => assert_eq!(&*t, expected),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn remainder_truncates_with_c_sign() {
        assert_eq!(n2("%", 7.0, 3.0), 1.0);
        assert_eq!(n2("%", 7.0, -3.0), 1.0);
        assert_eq!(n2("%", -7.0, 3.0), -1.0);
        assert_eq!(n2("%", 7.9, 3.9), 1.0);
        assert_eq!(n2("%", -2147483648.0, -1.0), 0.0);
        let mut h = Harness::new();
        assert_eq!(h.err("%", &[num(1.0), num(0.0)]), GGE2301);
        assert_eq!(h.err("%", &[num(1.0), num(0.5)]), GGE2301);
        assert_eq!(h.err("%", &[num(3e9), num(2.0)]), GGE2302);
        assert_eq!(h.err("%", &[num(3.0), num(-3e9)]), GGE2302);
        assert_eq!(h.err("%", &[s("3"), num(2.0)]), GGE2102);
    }

    #[test]
    fn shifts() {
        assert_eq!(n2("<<", 1.0, 4.0), 16.0);
        assert_eq!(n2(">>", 5.7, 1.0), 2.0);
        assert_eq!(n2(">>", -8.0, 1.0), -4.0);
        assert_eq!(n2("<<", 1.0, 31.0), -2147483648.0);
        // Shift counts are masked to 0..31.
        assert_eq!(n2("<<", 1.0, 32.0), 1.0);
        assert_eq!(n2("<<", 1.0, -1.0), -2147483648.0);
        assert_eq!(n2(">>", 256.0, 33.0), 128.0);
        let mut h = Harness::new();
        assert_eq!(h.err("<<", &[num(1e10), num(1.0)]), GGE2302);
        assert_eq!(h.err(">>", &[num(1.0), num(-1e10)]), GGE2302);
        assert_eq!(h.err("<<", &[b(true), num(1.0)]), GGE2102);
    }

    #[test]
    fn comparisons() {
        let cases = [
            ("<", 1.0, 2.0, true),
            ("<", 2.0, 2.0, false),
            ("<=", 2.0, 2.0, true),
            ("<=", 3.0, 2.0, false),
            (">", 3.0, 2.0, true),
            (">", 2.0, 2.0, false),
            (">=", 2.0, 2.0, true),
            (">=", 1.0, 2.0, false),
        ];
        for (op, a, bv, expected) in cases {
            assert!(calc(op, num(a), num(bv)).script_eq(&b(expected)), "{a} {op} {bv}");
        }
        assert!(calc("<", s("abc"), s("abd")).script_eq(&b(true)));
        assert!(calc(">=", s("b"), s("abc")).script_eq(&b(true)));
        let mut h = Harness::new();
        assert_eq!(h.err("<", &[num(1.0), s("a")]), GGE2102);
        assert_eq!(h.err("<", &[s("a"), num(1.0)]), GGE2102);
        assert_eq!(h.err(">", &[b(true), b(false)]), GGE2102);
        assert_eq!(h.err("<=", &[Value::Null, num(1.0)]), GGE2102);
    }

    #[test]
    fn equality() {
        let mut h = Harness::new();
        let a = h.list(&[]);
        let a2 = h.list(&[]);
        let cases = [
            (num(1.0), num(1.0), true),
            (num(1.0), b(true), false),
            (num(2.0), Value::Null, false),
            (Value::Null, Value::Null, true),
            (s("x"), s("x"), true),
            (Value::Coordinate(rel_c(0.5)), Value::Coordinate(abs_c(0.5)), true),
            (point(rel_c(0.5), abs_c(1.0)), point(abs_c(0.5), abs_c(1.0)), false),
            (a.clone(), a.clone(), true),
            (a.clone(), a2, false),
        ];
        for (x, y, expected) in cases {
            assert!(h.call("==", &[x.clone(), y.clone()]).unwrap().script_eq(&b(expected)), "{x:?} == {y:?}");
            assert!(h.call("!=", &[x.clone(), y.clone()]).unwrap().script_eq(&b(!expected)), "{x:?} != {y:?}");
        }
    }

    #[test]
    fn bitwise() {
        assert_eq!(n2("&", 6.0, 3.0), 2.0);
        assert_eq!(n2("|", 6.0, 3.0), 7.0);
        assert_eq!(n2("^", 6.0, 3.0), 5.0);
        assert_eq!(n2("&", 6.9, 3.2), 2.0);
        assert_eq!(n2("&", -1.0, 255.0), 255.0);
        assert!(calc("&", b(true), b(false)).script_eq(&b(false)));
        assert!(calc("|", b(true), b(false)).script_eq(&b(true)));
        assert!(calc("^", b(true), b(true)).script_eq(&b(false)));
        // Mixed: a Number result.
        assert!(calc("&", num(2.0), b(true)).script_eq(&num(0.0)));
        assert!(calc("|", b(true), num(2.0)).script_eq(&num(3.0)));
        let mut h = Harness::new();
        assert_eq!(h.err("&", &[num(1.0), s("1")]), GGE2102);
        assert_eq!(h.err("|", &[Value::Null, num(1.0)]), GGE2102);
        assert_eq!(h.err("^", &[num(5e9), num(1.0)]), GGE2302);
    }

    #[test]
    fn unary() {
        let mut h = Harness::new();
        assert!(h.call("!", &[b(true)]).unwrap().script_eq(&b(false)));
        assert_eq!(h.err("!", &[num(0.0)]), GGE2102);
        assert!(h.call("-un", &[num(2.0)]).unwrap().script_eq(&num(-2.0)));
        assert!(h.call("+un", &[num(2.0)]).unwrap().script_eq(&num(2.0)));
        assert_eq!(h.err("-un", &[b(true)]), GGE2102);
        assert_eq!(h.err("+un", &[s("1")]), GGE2102);
    }

    #[test]
    fn relative_operator() {
        let mut h = Harness::new();
        match h.call("@", &[num(0.5)]).unwrap() {
            Value::Coordinate(c) => assert_eq!(c, rel_c(0.5)),
            other => panic!("{other:?}"),
        }
        match h.call("@", &[Value::Coordinate(abs_c(2.0))]).unwrap() {
            Value::Coordinate(c) => assert_eq!(c, rel_c(2.0)),
            other => panic!("{other:?}"),
        }
        // Both dimensions infinite: a relative point cannot exist.
        assert_eq!(h.err("@", &[point(abs_c(0.5), abs_c(0.5))]), GGE2704);
        assert_eq!(h.err("@", &[s("x")]), GGE2102);
        // One finite dimension is enough.
        let mut h =
            Harness::with(0, geogen_vm::MapGeometry { map_width: Some(100), map_height: None, ..Default::default() });
        match h.call("@", &[point(abs_c(0.5), rel_c(0.25))]).unwrap() {
            Value::Point(p) => assert_eq!((p.x, p.y), (rel_c(0.5), rel_c(0.25))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn increments() {
        let mut h = Harness::new();
        let (scope, r) = variable(num(5.0));
        assert!(h.call("++pre", &[r.clone()]).unwrap().script_eq(&num(6.0)));
        assert!(read(&scope).script_eq(&num(6.0)));
        assert!(h.call("++post", &[r.clone()]).unwrap().script_eq(&num(6.0)));
        assert!(read(&scope).script_eq(&num(7.0)));
        assert!(h.call("--pre", &[r.clone()]).unwrap().script_eq(&num(6.0)));
        assert!(h.call("--post", &[r.clone()]).unwrap().script_eq(&num(6.0)));
        assert!(read(&scope).script_eq(&num(5.0)));
        let (_, r) = variable(s("x"));
        assert_eq!(h.err("++pre", &[r]), GGE2102);
        let (_, r) = variable_with(num(1.0), true);
        assert_eq!(h.err("++post", &[r]), GGE2108);
        assert_eq!(h.err("++pre", &[num(1.0)]), GGE5000);
    }

    #[test]
    fn compound_assignment() {
        let mut h = Harness::new();
        let cases = [
            ("+=", 6.0, 3.0, 9.0),
            ("-=", 6.0, 3.0, 3.0),
            ("*=", 6.0, 3.0, 18.0),
            ("/=", 6.0, 3.0, 2.0),
            ("%=", 7.0, 3.0, 1.0),
            ("<<=", 6.0, 1.0, 12.0),
            (">>=", 6.0, 1.0, 3.0),
            ("&=", 6.0, 3.0, 2.0),
            ("|=", 6.0, 3.0, 7.0),
            ("^=", 6.0, 3.0, 5.0),
        ];
        for (op, a, bv, expected) in cases {
            let (scope, r) = variable(num(a));
            let got = h.call(op, &[r, num(bv)]).unwrap();
            assert!(got.script_eq(&num(expected)), "{a} {op} {bv} gave {got:?}");
            assert!(read(&scope).script_eq(&num(expected)), "{op} stored {:?}", read(&scope));
        }
        let (scope, r) = variable(b(true));
        assert!(h.call("&=", &[r.clone(), b(false)]).unwrap().script_eq(&b(false)));
        assert!(read(&scope).script_eq(&b(false)));
        assert!(h.call("^=", &[r.clone(), b(true)]).unwrap().script_eq(&b(true)));
        assert!(h.call("|=", &[r, b(false)]).unwrap().script_eq(&b(true)));
        let (scope, r) = variable(s("a"));
        assert!(h.call("+=", &[r, num(1.0)]).unwrap().script_eq(&s("a1")));
        assert!(read(&scope).script_eq(&s("a1")));
    }

    #[test]
    fn compound_assignment_errors() {
        let mut h = Harness::new();
        let (scope, r) = variable(num(6.0));
        assert_eq!(h.err("&=", &[r.clone(), b(true)]), GGE2102);
        assert_eq!(h.err("/=", &[r.clone(), num(0.0)]), GGE2301);
        assert_eq!(h.err("*=", &[r.clone(), num(f64::MAX)]), GGE2302);
        assert_eq!(h.err("*=", &[variable(num(1e-200)).1, num(1e-200)]), GGE2308);
        assert_eq!(h.err("-=", &[r.clone(), Value::Null]), GGE2102);
        // Failed operations store nothing.
        assert!(read(&scope).script_eq(&num(6.0)));
        let (_, r) = variable(b(true));
        assert_eq!(h.err("|=", &[r.clone(), num(1.0)]), GGE2102);
        assert_eq!(h.err("+=", &[r, num(1.0)]), GGE2102);
        let (_, r) = variable_with(num(1.0), true);
        assert_eq!(h.err("+=", &[r, num(1.0)]), GGE2108);
        let e = Harness::new().call("&=", &[variable(num(6.0)).1, b(true)]).unwrap_err();
        assert!(e.message.contains("a Boolean, not a Number"), "{}", e.message);
    }

    #[test]
    fn array_item_references() {
        let mut h = Harness::new();
        let a = h.list(&[num(10.0)]);
        let r = h.call_method(&a, "[]ref", &[num(0.0)]).unwrap();
        assert!(h.call("+=", &[r.clone(), num(5.0)]).unwrap().script_eq(&num(15.0)));
        assert!(h.call("++post", &[r]).unwrap().script_eq(&num(15.0)));
        assert!(h.call_method(&a, "[]", &[num(0.0)]).unwrap().script_eq(&num(16.0)));
    }

    /// Found by review while adding the fuzz targets (`fuzz/`): concatenation had no bound, so doubling a string in a loop
    /// or adding an array whose sub-arrays are shared (its text is exponential in its size)
    /// asked for terabytes. Now GGE2507 at `Limits::max_string_len`.
    #[test]
    fn concatenation_is_bounded_by_the_string_limit() {
        let mut h = Harness::new();
        h.env.limits.max_string_len = 8;
        assert!(h.call("+", &[s("abcd"), s("efgh")]).unwrap().script_eq(&s("abcdefgh")));
        assert_eq!(h.err("+", &[s("abcde"), s("fghi")]), GGE2507);
        assert_eq!(h.err("+", &[s("abcdefghi"), s("")]), GGE2507);
        assert_eq!(h.err("+", &[num(123456.0), s("abc")]), GGE2507);
        // `+=` on a string variable goes through the same check.
        let a = h.list(&[s("abcde")]);
        let r = h.call_method(&a, "[]ref", &[num(0.0)]).unwrap();
        assert_eq!(h.err("+=", &[r, s("fghi")]), GGE2507);

        // An array sharing its sub-array 40 levels deep: about 2^32 lines of text, refused early.
        h.env.limits.max_string_len = 1_000_000;
        let mut shared = h.list(&[num(1.0)]);
        for _ in 0..40 {
            shared = h.list(&[shared.clone(), shared]);
        }
        assert_eq!(h.err("+", &[s(""), shared]), GGE2507);
    }

    #[test]
    fn every_operator_is_registered_as_an_operator() {
        let lib = crate::core_library();
        let names = [
            "+", "-", "*", "/", "%", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^", "+un", "-un", "!",
            "@", "++pre", "++post", "--pre", "--post", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=",
        ];
        for name in names {
            let native = lib.globals.get(name).unwrap_or_else(|| panic!("missing `{name}`"));
            assert!(native.operator, "`{name}`");
        }
        assert_eq!(OPERATORS.len(), names.len());
    }
}
