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
    if exp < PRECISION && exp >= -4 {
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
/// contains itself shows the inner occurrence as `{...}`); maps and random sequences their type name.
pub fn format_value(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0, &mut Vec::new());
    out
}

fn format_coordinate(c: &geogen_vm::Coordinate) -> String {
    if c.relative {
        format!("@{}", format_number(c.value))
    } else {
        format_number(c.value)
    }
}

fn write_value(out: &mut String, value: &Value, indent: usize, open: &mut Vec<ObjectId>) {
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
            if open.contains(&a.id) {
                out.push_str("{...}");
                return;
            }
            let items = a.items.borrow();
            if items.is_empty() {
                out.push_str("{}");
                return;
            }
            open.push(a.id);
            out.push_str("{\n");
            for (k, v) in items.iter() {
                push_indent(out, indent + 1);
                write_value(out, k, indent + 1, open);
                out.push_str(": ");
                write_value(out, v, indent + 1, open);
                out.push('\n');
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
}

fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Fills a template's `{n}` placeholders with the formatted `values`. A bad template is GGE2701.
pub fn format_template(template: &str, values: &[Value]) -> Result<String, RuntimeError> {
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
                    Some(i) => out.push_str(&format_value(&values[i])),
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
    Ok(out)
}

fn template_and_text(args: &Args<'_>) -> Result<String, RuntimeError> {
    let template = args.string(0)?;
    let rest = args.values.get(1..).unwrap_or(&[]);
    format_template(template, rest)
}

const PRINT: Native = Native::function("Print", "Print(String template, any...)", 1, None, print);

fn print(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let text = template_and_text(args)?;
    ctx.env.messages.push(Message { text, span: ctx.span });
    Ok(Value::Null)
}

const TRIGGER_ERROR: Native =
    Native::function("TriggerError", "TriggerError(String template, any...)", 1, None, trigger_error);

fn trigger_error(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let text = template_and_text(args)?;
    Err(RuntimeError::new(codes::GGE6000, text))
}

pub(crate) fn register(lib: &mut Library) {
    lib.add_global(PRINT);
    lib.add_global(TRIGGER_ERROR);
}
