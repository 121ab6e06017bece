//! Values of embedded code and one-time nonterminals, and how they become text.

/// What embedded code gives, what a one-time nonterminal holds, and what a variable passed in
/// from outside is.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Becomes the empty text (so code run for its effect, `` `hide(<@n> = 3)` ``, prints nothing).
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
}

impl Value {
    /// The text appended to the output: numbers as JavaScript's `String(n)` writes them (the
    /// original ran JavaScript), Booleans as `true`/`false`, null as nothing.
    pub fn to_text(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => js_number(*n),
            Value::Text(t) => t.clone(),
        }
    }

    /// A value given as text on a command line: a number if it reads as one (`0.8`, `-3`,
    /// `1e3`), `true`/`false` as Booleans, anything else as text.
    pub fn from_cli(text: &str) -> Value {
        match text {
            "true" => return Value::Bool(true),
            "false" => return Value::Bool(false),
            _ => {}
        }
        let trimmed = text.trim();
        let numeric = !trimmed.is_empty()
            && trimmed.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
        match trimmed.parse::<f64>() {
            Ok(n) if numeric && n.is_finite() => Value::Number(n),
            _ => Value::Text(text.to_string()),
        }
    }
}

/// JavaScript's Number-to-String: the shortest digits that read back as the same number, in
/// plain notation for exponents from -7 to 20 and in `1.5e+21` notation beyond; `-0` is `0`.
pub fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_string();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if n == 0.0 {
        return "0".to_string();
    }
    // Rust's `{:e}` writes the shortest round-trip digits: `d.ddde[-]x`.
    let formatted = format!("{:e}", n.abs());
    let (mantissa, exponent) = formatted.split_once('e').unwrap_or((&formatted, "0"));
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let k = digits.len() as i32;
    // JavaScript's n: the position of the decimal point after the first digit.
    let point = exponent + 1;
    let body = if k <= point && point <= 21 {
        format!("{digits}{}", "0".repeat((point - k) as usize))
    } else if 0 < point && point <= 21 {
        format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let sign = if point - 1 < 0 { '-' } else { '+' };
        let exp = (point - 1).abs();
        if k == 1 {
            format!("{digits}e{sign}{exp}")
        } else {
            format!("{}.{}e{sign}{exp}", &digits[..1], &digits[1..])
        }
    };
    if n < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// JavaScript's `parseFloat`: leading whitespace skipped, then the longest prefix that is a
/// decimal number (or `Infinity`); NaN when there is none. `"3abc"` is 3 and `"1+2"` is 1.
pub fn parse_float(text: &str) -> f64 {
    let s = text.trim_start();
    let bytes = s.as_bytes();
    let mut i = 0;
    if i < bytes.len() && matches!(bytes[i], b'+' | b'-') {
        i += 1;
    }
    if s[i..].starts_with("Infinity") {
        return if bytes.first() == Some(&b'-') { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let mut mantissa_digits = i - digits_start;
    if i < bytes.len() && bytes[i] == b'.' {
        let frac_start = i + 1;
        let mut j = frac_start;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        mantissa_digits += j - frac_start;
        if mantissa_digits > 0 {
            i = j;
        }
    }
    if mantissa_digits == 0 {
        return f64::NAN;
    }
    if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < bytes.len() && matches!(bytes[j], b'+' | b'-') {
            j += 1;
        }
        let exp_start = j;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    s[..i].parse().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        for (n, text) in [
            (3.0, "3"),
            (-3.5, "-3.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (std::f64::consts::PI, "3.141592653589793"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (1e20, "100000000000000000000"),
            (123456789.0, "123456789"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.25e-7, "1.25e-7"),
            (-0.0, "0"),
            (0.5, "0.5"),
            (198.0, "198"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
        ] {
            assert_eq!(js_number(n), text, "{n:e}");
        }
        assert_eq!(Value::Bool(true).to_text(), "true");
        assert_eq!(Value::Null.to_text(), "");
    }

    #[test]
    fn parse_float_reads_the_longest_numeric_prefix() {
        assert_eq!(parse_float("3abc"), 3.0);
        assert_eq!(parse_float("1+2"), 1.0);
        assert_eq!(parse_float("  2.5e1x"), 25.0);
        assert_eq!(parse_float(".5"), 0.5);
        assert_eq!(parse_float("5."), 5.0);
        assert_eq!(parse_float("1e"), 1.0);
        assert_eq!(parse_float("-Infinity"), f64::NEG_INFINITY);
        assert!(parse_float("foo").is_nan());
        assert!(parse_float("").is_nan());
        assert!(parse_float(".").is_nan());
        assert!(parse_float("-").is_nan());
    }

    #[test]
    fn command_line_values_are_numbers_booleans_or_text() {
        assert_eq!(Value::from_cli("0.8"), Value::Number(0.8));
        assert_eq!(Value::from_cli("-3"), Value::Number(-3.0));
        assert_eq!(Value::from_cli("true"), Value::Bool(true));
        assert_eq!(Value::from_cli("inf"), Value::Text("inf".into()));
        assert_eq!(Value::from_cli("north"), Value::Text("north".into()));
        assert_eq!(Value::from_cli(""), Value::Text(String::new()));
    }
}
