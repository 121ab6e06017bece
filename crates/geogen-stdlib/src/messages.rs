//! `Print`, `TriggerError`, and the text form of values.
//!
//! Templates use `{n}` placeholders (n = 0-based argument index after the template, any number of
//! digits) and `{{` / `}}` for literal braces. Anything else involving a brace is GGE2701.

use geogen_diag::codes;
use geogen_vm::{Args, Ctx, Library, Message, Native, ObjectId, RuntimeError, Value};

/// A Number as C++ `ostream << double` prints it by default: `%g` with 6 significant digits
/// (`0.333333`, `1.23457e+06`, `100`, `-0.5`, `1e-05`).
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    const PRECISION: i32 = 6;
    // Scientific form rounded to PRECISION significant digits gives the decimal exponent X.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, x);
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exponent.parse().unwrap_or(0);
    if (-4..PRECISION).contains(&exp) {
        let fixed = format!("{:.*}", (PRECISION - 1 - exp) as usize, x);
        strip_zeros(&fixed).to_string()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip_zeros(mantissa), sign, exp.unsigned_abs())
    }
}

/// Removes trailing zeros of a decimal fraction, and the point if nothing is left after it.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// The text form of a value, as `Print` and string concatenation show it.
///
/// Number: `%g` (see [`format_number`]); Boolean `true`/`false`; null `null`; String as is;
/// Coordinate `5` or `@0.5`; Point `[1, 2]` or `[@0.5, @0.25]`; an enum item its integer value;
/// a type object `Type`; an Array a multi-line listing in insertion order (`{`, one `  key: value`
/// line per item with nested arrays indented further, `}`; an empty array is `{}`; an array that
/// contains itself shows the inner occurrence as `{...}`, and so do arrays nested deeper than
/// [`MAX_PRINT_DEPTH`] levels); maps and random sequences their type name.
///
/// For error messages and tests: a text longer than [`MAX_DIAGNOSTIC_TEXT`] bytes is cut there and
/// ends in ` ...`. Script-visible text goes through [`format_value_within`].
pub fn format_value(value: &Value) -> String {
    let mut out = String::new();
    if !write_value(&mut out, value, 0, &mut Vec::new(), MAX_DIAGNOSTIC_TEXT) {
        let mut cut = MAX_DIAGNOSTIC_TEXT.min(out.len());
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str(" ...");
    }
    out
}

/// The longest value text [`format_value`] returns (error messages need no more).
pub const MAX_DIAGNOSTIC_TEXT: usize = 10_000;

/// The text form of a value (as [`format_value`]) if it has at most `max` bytes; `None` otherwise.
/// Stops writing as soon as the text is too long: arrays that share sub-arrays (`a = {a, a}` 30
/// times) have a text exponentially longer than the memory they use.
pub fn format_value_within(value: &Value, max: usize) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, value, 0, &mut Vec::new(), max).then_some(out)
}

/// GGE2507 for a string that would be longer than the limit.
pub fn string_too_long(what: &str, max: usize) -> RuntimeError {
    RuntimeError::new(codes::GGE2507, format!("{what} would be longer than the limit of {max} bytes"))
        .with_hint("is a string doubling in a loop, or a large array being printed? the limit is --max-string-len N")
}

/// How many levels of nested arrays [`format_value`] lists; deeper ones print as `{...}`. (Scripts
/// can nest arrays a million deep; listing them all would overflow the stack and print terabytes.)
pub const MAX_PRINT_DEPTH: usize = 32;

fn format_coordinate(c: &geogen_vm::Coordinate) -> String {
    if c.relative {
        format!("@{}", format_number(c.value))
    } else {
        format_number(c.value)
    }
}

/// Appends the text of `value`; returns false (leaving `out` partly written) as soon as `out` is
/// longer than `max` bytes.
fn write_value(out: &mut String, value: &Value, indent: usize, open: &mut Vec<ObjectId>, max: usize) -> bool {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(x) => out.push_str(&format_number(*x)),
        Value::String(s) => out.push_str(s),
        Value::Coordinate(c) => out.push_str(&format_coordinate(c)),
        Value::Point(p) => {
            out.push('[');
            out.push_str(&format_coordinate(&p.x));
            out.push_str(", ");
            out.push_str(&format_coordinate(&p.y));
            out.push(']');
        }
        Value::Enum(e) => out.push_str(&format_number(e.value)),
        Value::Type(_) => out.push_str("Type"),
        Value::Array(a) => {
            if open.contains(&a.id) || open.len() >= MAX_PRINT_DEPTH {
                out.push_str("{...}");
                return out.len() <= max;
            }
            let items = a.items.borrow();
            if items.is_empty() {
                out.push_str("{}");
                return out.len() <= max;
            }
            open.push(a.id);
            out.push_str("{\n");
            for (k, v) in items.iter() {
                push_indent(out, indent + 1);
                let fits = write_value(out, k, indent + 1, open, max) && {
                    out.push_str(": ");
                    write_value(out, v, indent + 1, open, max)
                };
                out.push('\n');
                if !fits || out.len() > max {
                    open.pop();
                    return false;
                }
            }
            push_indent(out, indent);
            out.push('}');
            open.pop();
        }
        Value::RandomSequence2D(_) => out.push_str("RandomSequence2D"),
        Value::HeightMap(_) => out.push_str("HeightMap"),
        Value::HeightProfile(_) => out.push_str("HeightProfile"),
        Value::Reference(_) => out.push_str("<Reference>"),
    }
    out.len() <= max
}

fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Fills a template's `{n}` placeholders with the formatted `values`. A bad template is GGE2701.
/// A message longer than `max` bytes is GGE2507.
pub fn format_template(template: &str, values: &[Value], max: usize) -> Result<String, RuntimeError> {
    let bad = |what: String, hint: &str| {
        RuntimeError::new(codes::GGE2701, format!("bad message template \"{template}\": {what}")).with_hint(hint)
    };
    let mut out = String::with_capacity(template.len());
    let mut chars = template.char_indices().peekable();
    while let Some((pos, c)) = chars.next() {
        match c {
            '{' => {
                if chars.peek().map(|&(_, c)| c) == Some('{') {
                    chars.next();
                    out.push('{');
                    continue;
                }
                let mut digits = String::new();
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    if c == '}' {
                        closed = true;
                        break;
                    }
                    digits.push(c);
                }
                if !closed {
                    return Err(bad(
                        format!("the brace at position {pos} is never closed"),
                        "close it as {0}, or write {{ for a literal brace",
                    ));
                }
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad(
                        format!("`{{{digits}}}` is not a placeholder"),
                        "a placeholder is an argument number in braces, like {0}; write {{ and }} for literal braces",
                    ));
                }
                let index = digits.parse::<usize>().ok().filter(|&i| i < values.len());
                match index {
                    Some(i) => {
                        // What is left of the budget, so a huge argument stops early.
                        let room = max.saturating_sub(out.len());
                        let text =
                            format_value_within(&values[i], room).ok_or_else(|| string_too_long("the message", max))?;
                        out.push_str(&text);
                    }
                    None => {
                        let given = match values.len() {
                            0 => "no arguments follow the template".to_string(),
                            1 => "only 1 argument follows the template ({0})".to_string(),
                            k => format!("only {k} arguments follow the template ({{0}} to {{{}}})", k - 1),
                        };
                        return Err(bad(
                            format!("placeholder {{{digits}}} refers to a missing argument: {given}"),
                            "placeholders count the arguments after the template from 0",
                        ));
                    }
                }
            }
            '}' => {
                if chars.peek().map(|&(_, c)| c) == Some('}') {
                    chars.next();
                    out.push('}');
                } else {
                    return Err(bad(
                        format!("the closing brace at position {pos} has no opening brace"),
                        "write }} for a literal brace",
                    ));
                }
            }
            _ => out.push(c),
        }
    }
    if out.len() > max {
        return Err(string_too_long("the message", max));
    }
    Ok(out)
}

/// The formatted message. A type object (`Number`, `HeightMap`) as an argument is GGE2101, as in
/// the original: printing one is almost always a typo for a value.
fn template_and_text(args: &Args<'_>, max: usize) -> Result<String, RuntimeError> {
    let template = args.string(0)?;
    let rest = args.values.get(1..).unwrap_or(&[]);
    if let Some(i) = rest.iter().position(|v| matches!(v, Value::Type(_))) {
        return Err(args
            .type_error(i + 1, "value")
            .with_hint("a type name is not a value; did you mean one of its members, like `Direction.Vertical`?"));
    }
    format_template(template, rest, max)
}

const PRINT: Native = Native::function("Print", "Print(String template, any...)", 1, None, print);

fn print(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let text = template_and_text(args, ctx.env.limits.max_string_len)?;
    // Formatting costs in proportion to the text; a message kept for the caller (rather than
    // streamed to a sink) also counts on the script heap.
    ctx.env.spend(text.len() as u64 / 16)?;
    ctx.env.print(Message { text, span: ctx.span })?;
    Ok(Value::Null)
}

const TRIGGER_ERROR: Native =
    Native::function("TriggerError", "TriggerError(String template, any...)", 1, None, trigger_error);

fn trigger_error(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let text = template_and_text(args, ctx.env.limits.max_string_len)?;
    Err(RuntimeError::new(codes::GGE6000, text))
}

pub(crate) fn register(lib: &mut Library) {
    lib.add_global(PRINT);
    lib.add_global(TRIGGER_ERROR);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use geogen_diag::codes::*;
    use geogen_vm::{EnumValue, TypeId};

    #[test]
    fn numbers_print_like_cpp_streams() {
        let cases = [
            (1.0 / 3.0, "0.333333"),
            (1234567.0, "1.23457e+06"),
            (100.0, "100"),
            (-0.5, "-0.5"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.00012345678, "0.000123457"),
            (123456.0, "123456"),
            (999999.0, "999999"),
            (999999.5, "1e+06"),
            (1e100, "1e+100"),
            (-2.5e-300, "-2.5e-300"),
            (0.0, "0"),
            (-0.0, "-0"),
            (3.0, "3"),
            (2.5, "2.5"),
            (0.1, "0.1"),
            (1e15, "1e+15"),
            (5.92845, "5.92845"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (x, expected) in cases {
            assert_eq!(format_number(x), expected, "{x:e}");
        }
    }

    #[test]
    fn values_print() {
        let mut h = Harness::new();
        let cases = [
            (Value::Bool(true), "true"),
            (Value::Bool(false), "false"),
            (Value::Null, "null"),
            (s("text {0}"), "text {0}"),
            (Value::Coordinate(abs_c(5.0)), "5"),
            (Value::Coordinate(rel_c(0.5)), "@0.5"),
            (point(abs_c(1.0), abs_c(2.0)), "[1, 2]"),
            (point(rel_c(0.5), rel_c(0.25)), "[@0.5, @0.25]"),
            (Value::Enum(EnumValue { ty: TypeId::DIRECTION, value: 1.0 }), "1"),
            (Value::Type(TypeId::ARRAY), "Type"),
        ];
        for (v, expected) in cases {
            assert_eq!(format_value(&v), expected);
        }
        let seq = h.call_static("RandomSequence2D", "Create", &[num(1.0)]).unwrap();
        assert_eq!(format_value(&seq), "RandomSequence2D");
        let empty = h.list(&[]);
        assert_eq!(format_value(&empty), "{}");
    }

    #[test]
    fn arrays_print_in_insertion_order_with_nesting() {
        let mut h = Harness::new();
        let inner = h.list(&[num(1.0), s("x")]);
        let outer = h.array(&[(s("b"), num(2.0)), (s("a"), inner), (num(7.0), Value::Bool(false))]);
        assert_eq!(format_value(&outer), "{\n  b: 2\n  a: {\n    0: 1\n    1: x\n  }\n  7: false\n}");
    }

    #[test]
    fn self_containing_and_deep_arrays_print_finitely() {
        let mut h = Harness::new();
        let a = h.list(&[]);
        h.call_method(&a, "PushBack", &[a.clone()]).unwrap();
        assert_eq!(format_value(&a), "{\n  0: {...}\n}");
        let mut deep = h.list(&[]);
        for _ in 0..10_000 {
            deep = h.list(&[deep]);
        }
        let text = format_value(&deep);
        assert!(text.contains("{...}"));
        assert_eq!(text.matches('{').count(), MAX_PRINT_DEPTH + 1);
    }

    #[test]
    fn templates() {
        let v = [num(1.0), s("two"), num(0.5)];
        let ok = [
            ("plain", "plain"),
            ("{0} and {1}", "1 and two"),
            ("{2}{0}{2}", "0.510.5"),
            ("{{0}} is {0}", "{0} is 1"),
            ("}}{{", "}{"),
            ("{{{0}}}", "{1}"),
            ("", ""),
            ("é {1}", "é two"),
        ];
        for (t, expected) in ok {
            assert_eq!(format_template(t, &v, usize::MAX).unwrap(), expected, "{t}");
        }
        let many: Vec<Value> = (0..12).map(|i| num(i as f64)).collect();
        assert_eq!(format_template("{11}-{10}", &many, usize::MAX).unwrap(), "11-10");
        for bad in ["{", "{0", "x {3}", "{a}", "{}", "{-1}", "}", "a } b", "{ 0}", "{99999999999999999999999}"] {
            let e = format_template(bad, &v, usize::MAX).unwrap_err();
            assert_eq!(e.code, GGE2701, "{bad}");
            assert!(e.hint.is_some(), "{bad}");
        }
        let e = format_template("{1}", &[num(1.0)], usize::MAX).unwrap_err();
        assert!(e.message.contains("only 1 argument"), "{}", e.message);
        let e = format_template("{0", &[], usize::MAX).unwrap_err();
        assert!(e.message.contains("never closed"), "{}", e.message);
    }

    #[test]
    fn print_records_a_message() {
        let mut h = Harness::new();
        let r = h.call("Print", &[s("x = {0}, y = {1}"), num(1.5), Value::Null]).unwrap();
        assert!(r.is_null());
        h.call("Print", &[s("second")]).unwrap();
        assert_eq!(h.env.messages.len(), 2);
        assert_eq!(h.env.messages[0].text, "x = 1.5, y = null");
        assert_eq!(h.env.messages[0].span, geogen_diag::Span::new(3, 7));
        assert_eq!(h.env.messages[1].text, "second");
        assert_eq!(h.err("Print", &[s("{1}"), num(1.0)]), GGE2701);
        assert_eq!(h.err("Print", &[num(1.0)]), GGE2101);
        assert_eq!(h.err("Print", &[s("{0}"), Value::Type(geogen_vm::TypeId::NUMBER)]), GGE2101);
        assert_eq!(h.err("Print", &[]), GGE2103);
        assert_eq!(h.env.messages.len(), 2);
    }

    #[test]
    fn trigger_error_raises_user_errors() {
        let mut h = Harness::new();
        let e = h.call("TriggerError", &[s("bad {0}: {1}"), s("size"), num(3.0)]).unwrap_err();
        assert_eq!(e.code, GGE6000);
        assert_eq!(e.message, "bad size: 3");
        assert_eq!(h.err("TriggerError", &[s("{")]), GGE2701);
        assert_eq!(h.err("TriggerError", &[Value::Null]), GGE2101);
        assert!(h.env.messages.is_empty());
    }

    /// Found by review while adding the fuzz targets (`fuzz/`): a message had no length bound (GGE2507 now), and the text of
    /// arrays sharing sub-arrays is exponential in their size.
    #[test]
    fn messages_and_value_texts_are_bounded() {
        let mut h = Harness::new();
        h.env.limits.max_string_len = 10;
        assert!(h.call("Print", &[s("{0}{0}"), s("abcde")]).is_ok());
        assert_eq!(h.err("Print", &[s("{0}{0}!"), s("abcde")]), GGE2507);
        assert_eq!(h.err("Print", &[s("abcdefghijk")]), GGE2507);
        assert_eq!(h.err("TriggerError", &[s("{0}"), s("abcdefghijk")]), GGE2507);
        assert_eq!(h.env.messages.len(), 1);

        let mut shared = h.list(&[num(1.0)]);
        for _ in 0..40 {
            shared = h.list(&[shared.clone(), shared]);
        }
        h.env.limits.max_string_len = 1_000_000;
        assert_eq!(h.err("Print", &[s("{0}"), shared.clone()]), GGE2507);
        assert_eq!(format_value_within(&shared, 1_000_000), None);
        // Error messages and hints use the capped form.
        let text = format_value(&shared);
        assert!(text.len() <= MAX_DIAGNOSTIC_TEXT + 4 && text.ends_with(" ..."), "{}", text.len());
        assert_eq!(format_value_within(&num(12.5), 4), Some("12.5".to_string()));
        assert_eq!(format_value_within(&num(12.5), 3), None);
    }
}
