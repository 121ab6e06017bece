//! Host-supplied parameter values (`geogen render -p Size=5`), read by the parameter's declared
//! type (reference §2.2, §2.3), with the original console's defect fixed: a Boolean can be set to
//! false.

use geogen_diag::{codes, Diagnostic};

use crate::metadata::{ParameterKind, ParameterValue, ScriptParameter};

const TRUE_WORDS: &[&str] = &["true", "True", "TRUE", "t", "T", "1", "on", "On", "yes", "Yes", "y", "Y"];
const FALSE_WORDS: &[&str] = &["false", "False", "FALSE", "f", "F", "0", "off", "Off", "no", "No", "n", "N"];

/// The value a parameter has when the host does not set it.
pub fn default_value(param: &ScriptParameter) -> ParameterValue {
    match &param.kind {
        ParameterKind::Boolean { default } => ParameterValue::Boolean(*default),
        ParameterKind::Number { default, .. } => ParameterValue::Number(*default),
        ParameterKind::Enum { items, default, .. } => {
            let value = items.iter().find(|(n, _)| n == default).map_or(0.0, |(_, v)| *v);
            ParameterValue::Enum(default.clone(), value)
        }
    }
}

/// Reads `text` as a value of `param`.
///
/// - Boolean: `true/True/TRUE/t/T/1/on/On/yes/Yes/y/Y` or `false/False/FALSE/f/F/0/off/Off/no/No/n/N`.
/// - Number: a decimal number (a sign and an exponent are allowed), clamped to [Min, Max], then
///   forced into the restriction (which, as in the original, may take it below Min).
/// - Enum: an item name, or the number of an item.
///
/// Anything else is GGE4002, naming the parameter, the text and the accepted forms.
pub fn parse_parameter_value(param: &ScriptParameter, text: &str) -> Result<ParameterValue, Diagnostic> {
    let trimmed = text.trim();
    match &param.kind {
        ParameterKind::Boolean { .. } => {
            if TRUE_WORDS.contains(&trimmed) {
                Ok(ParameterValue::Boolean(true))
            } else if FALSE_WORDS.contains(&trimmed) {
                Ok(ParameterValue::Boolean(false))
            } else {
                Err(invalid(param, text, "true or false (also yes/no, on/off, 1/0, t/f, y/n)"))
            }
        }
        ParameterKind::Number { min, max, restriction, .. } => {
            let value = parse_number(trimmed).ok_or_else(|| {
                invalid(param, text, &format!("a number, such as 5, -2.5 or 1e3 (range {min} to {max})"))
            })?;
            Ok(ParameterValue::Number(restriction.apply(value.clamp(*min, *max))))
        }
        ParameterKind::Enum { type_name, items, .. } => {
            if let Some((name, value)) = items.iter().find(|(n, _)| **n == *trimmed) {
                return Ok(ParameterValue::Enum(name.clone(), *value));
            }
            if let Some(number) = parse_number(trimmed) {
                if let Some((name, value)) = items.iter().find(|(_, v)| *v == number) {
                    return Ok(ParameterValue::Enum(name.clone(), *value));
                }
            }
            let names: Vec<String> = items.iter().map(|(n, v)| format!("{n} ({v})")).collect();
            Err(invalid(param, text, &format!("an item of {type_name}: {}", names.join(", "))))
        }
    }
}

fn invalid(param: &ScriptParameter, text: &str, accepted: &str) -> Diagnostic {
    Diagnostic::new(
        codes::GGE4002,
        format!("`{text}` is not a valid value for the {} parameter `{}`", param.kind.type_name(), param.name),
    )
    .with_hint(format!("`{}` accepts {accepted}", param.name))
}

/// A finite decimal number: digits with an optional sign, fraction and exponent. Rust's own
/// parser would also take `inf`, `NaN` and `infinity`, which are no parameter values.
fn parse_number(text: &str) -> Option<f64> {
    let plausible = !text.is_empty()
        && text.bytes().any(|b| b.is_ascii_digit())
        && text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    if !plausible {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::Restriction;
    use crate::Name;

    fn param(kind: ParameterKind) -> ScriptParameter {
        ScriptParameter {
            name: Name::from("P"),
            label: "P".into(),
            description: String::new(),
            kind,
            span: Default::default(),
        }
    }

    fn number(min: f64, max: f64, restriction: Restriction) -> ScriptParameter {
        param(ParameterKind::Number { default: min, min, max, restriction })
    }

    fn color() -> ScriptParameter {
        param(ParameterKind::Enum {
            type_name: Name::from("Color"),
            items: vec![(Name::from("Red"), 0.0), (Name::from("Green"), 5.0), (Name::from("Blue"), 6.0)],
            default: Name::from("Red"),
        })
    }

    #[test]
    fn booleans_accept_every_true_and_false_word() {
        let p = param(ParameterKind::Boolean { default: true });
        for word in TRUE_WORDS {
            assert_eq!(parse_parameter_value(&p, word), Ok(ParameterValue::Boolean(true)), "{word}");
        }
        for word in FALSE_WORDS {
            assert_eq!(parse_parameter_value(&p, word), Ok(ParameterValue::Boolean(false)), "{word}");
        }
    }

    #[test]
    fn a_boolean_can_be_set_to_false() {
        let p = param(ParameterKind::Boolean { default: true });
        assert_eq!(parse_parameter_value(&p, "false"), Ok(ParameterValue::Boolean(false)));
    }

    #[test]
    fn bad_booleans_are_gge4002_naming_parameter_text_and_forms() {
        let p = param(ParameterKind::Boolean { default: false });
        for text in ["maybe", "", "2", "tru", "yes!"] {
            let e = parse_parameter_value(&p, text).unwrap_err();
            assert_eq!(e.code, codes::GGE4002);
            assert!(e.message.contains("`P`") && e.message.contains(&format!("`{text}`")), "{}", e.message);
            assert!(e.hint.as_deref().unwrap_or("").contains("true or false"));
        }
    }

    #[test]
    fn numbers_parse_signs_fractions_and_exponents() {
        let p = number(-1e9, 1e9, Restriction::Unrestricted);
        for (text, v) in [("5", 5.0), ("-2.5", -2.5), ("1e3", 1000.0), ("2.5E-1", 0.25), (" 7 ", 7.0), ("+3", 3.0)] {
            assert_eq!(parse_parameter_value(&p, text), Ok(ParameterValue::Number(v)), "{text}");
        }
    }

    #[test]
    fn bad_numbers_are_gge4002() {
        let p = number(0.0, 100.0, Restriction::Unrestricted);
        for text in ["", "abc", "inf", "NaN", "infinity", "1e999", "1,5", "--1", "e", "."] {
            let e = parse_parameter_value(&p, text).unwrap_err();
            assert_eq!(e.code, codes::GGE4002, "{text}");
            assert!(e.hint.as_deref().unwrap_or("").contains("a number"));
        }
    }

    #[test]
    fn numbers_are_clamped_to_the_range() {
        let p = number(10.0, 20.0, Restriction::Unrestricted);
        assert_eq!(parse_parameter_value(&p, "5"), Ok(ParameterValue::Number(10.0)));
        assert_eq!(parse_parameter_value(&p, "25"), Ok(ParameterValue::Number(20.0)));
        assert_eq!(parse_parameter_value(&p, "15.5"), Ok(ParameterValue::Number(15.5)));
        assert_eq!(parse_parameter_value(&p, "-1e300"), Ok(ParameterValue::Number(10.0)));
    }

    #[test]
    fn restrictions_apply_after_clamping() {
        let p = number(0.0, 5000.0, Restriction::Integers);
        assert_eq!(parse_parameter_value(&p, "10.5"), Ok(ParameterValue::Number(10.0)));
        let p = number(1.0, 5000.0, Restriction::PowersOf2);
        assert_eq!(parse_parameter_value(&p, "1050"), Ok(ParameterValue::Number(1024.0)));
        assert_eq!(parse_parameter_value(&p, "1024"), Ok(ParameterValue::Number(1024.0)));
        assert_eq!(parse_parameter_value(&p, "0.3"), Ok(ParameterValue::Number(1.0)));
        let p = number(1.0, 5000.0, Restriction::PowersOf10);
        assert_eq!(parse_parameter_value(&p, "1050"), Ok(ParameterValue::Number(1000.0)));
        assert_eq!(parse_parameter_value(&p, "999"), Ok(ParameterValue::Number(100.0)));
        // Clamped to 5000 first, then forced down to a power of 10.
        assert_eq!(parse_parameter_value(&p, "1e9"), Ok(ParameterValue::Number(1000.0)));
        // The restriction can take a value below Min, as in the original.
        let p = number(3.0, 7.0, Restriction::PowersOf2);
        assert_eq!(parse_parameter_value(&p, "3"), Ok(ParameterValue::Number(2.0)));
    }

    #[test]
    fn restriction_arithmetic_is_exact_at_powers() {
        assert_eq!(Restriction::PowersOf10.apply(1000.0), 1000.0);
        assert_eq!(Restriction::PowersOf10.apply(1e15), 1e15);
        assert_eq!(Restriction::PowersOf2.apply(2f64.powi(40)), 2f64.powi(40));
        assert_eq!(Restriction::PowersOf2.apply(f64::MAX), 2f64.powi(1023));
        assert_eq!(Restriction::PowersOf2.apply(-5.0), 1.0);
        assert_eq!(Restriction::Integers.apply(-0.5), -1.0);
        assert!(Restriction::PowersOf2.allows(64.0) && !Restriction::PowersOf2.allows(0.0));
    }

    #[test]
    fn enums_accept_names_and_numbers() {
        let p = color();
        assert_eq!(parse_parameter_value(&p, "Green"), Ok(ParameterValue::Enum(Name::from("Green"), 5.0)));
        assert_eq!(parse_parameter_value(&p, "6"), Ok(ParameterValue::Enum(Name::from("Blue"), 6.0)));
        assert_eq!(parse_parameter_value(&p, "0"), Ok(ParameterValue::Enum(Name::from("Red"), 0.0)));
        for text in ["green", "1", "Purple", ""] {
            let e = parse_parameter_value(&p, text).unwrap_err();
            assert_eq!(e.code, codes::GGE4002, "{text}");
            let hint = e.hint.unwrap_or_default();
            assert!(hint.contains("Red (0), Green (5), Blue (6)"), "{hint}");
        }
    }

    #[test]
    fn defaults() {
        assert_eq!(default_value(&color()), ParameterValue::Enum(Name::from("Red"), 0.0));
        assert_eq!(default_value(&param(ParameterKind::Boolean { default: true })), ParameterValue::Boolean(true));
        assert_eq!(default_value(&number(3.0, 7.0, Restriction::Unrestricted)), ParameterValue::Number(3.0));
    }
}
