//! Number formatting: the shortest text that reads back as the same `f64` (for `geogen slang
//! eval`), plain decimals that are valid Height-Slang numbers, and the C formats mkheightmap
//! prints (`%f`, and `%g` with 6 significant digits as C++ streams print by default).

/// The shortest decimal that reads back as exactly `v`: `0.1`, `3`, `-0`, `1e300`,
/// `2.5e-7`; `nan`, `inf`, `-inf` for the non-finite values.
pub fn shortest(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // `{:?}` is Rust's shortest round-trip form (with an exponent for very large or small
    // values); only its `.0` on whole numbers is not needed.
    let text = format!("{v:?}");
    match text.strip_suffix(".0") {
        Some(whole) => whole.to_string(),
        None => text,
    }
}

/// `v` as a Height-Slang number (digits, at most one dot, no exponent; the fewest digits that
/// read back as `v`). Non-finite values become forms that compute them.
pub fn plain_decimal(v: f64) -> String {
    if v.is_nan() {
        "(/ 0 0)".into()
    } else if v == f64::INFINITY {
        "(/ 1 0)".into()
    } else if v == f64::NEG_INFINITY {
        "(/ -1 0)".into()
    } else {
        format!("{v}")
    }
}

/// C's `%f`: six decimals; `nan`/`-nan`, `inf`/`-inf` as glibc prints them.
pub fn c_fixed6(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    format!("{v:.6}")
}

/// C's `%g` with 6 significant digits (C++'s default stream format): fixed notation when the
/// decimal exponent is in [-4, 6), scientific otherwise, trailing zeros removed.
pub fn c_general6(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // Rounded to 6 significant digits first: the exponent of the rounded value decides.
    let scientific = format!("{v:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        let decimals = (5 - exponent).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}"))
    } else {
        let mantissa = strip_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

fn strip_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_round_trips() {
        assert_eq!(shortest(3.0), "3");
        assert_eq!(shortest(0.1), "0.1");
        assert_eq!(shortest(-0.0), "-0");
        assert_eq!(shortest(1e300), "1e300");
        assert_eq!(shortest(-0.147_431_147_202_716_94), "-0.14743114720271694");
        assert_eq!(shortest(f64::NAN), "nan");
        for v in [0.1 + 0.2, 1.0 / 3.0, 5e-324, f64::MAX, -2.5e-7, 123_456_789.0] {
            assert_eq!(shortest(v).parse::<f64>().unwrap().to_bits(), v.to_bits(), "{v}");
        }
    }

    #[test]
    fn plain_decimals_are_height_slang_numbers() {
        assert_eq!(plain_decimal(1e-7), "0.0000001");
        assert_eq!(plain_decimal(-2.5), "-2.5");
        assert_eq!(plain_decimal(1e21), "1000000000000000000000");
    }

    #[test]
    fn c_formats() {
        assert_eq!(c_fixed6(0.0625), "0.062500");
        assert_eq!(c_fixed6(-0.0), "-0.000000");
        assert_eq!(c_fixed6(-f64::NAN), "-nan");
        assert_eq!(c_general6(0.5), "0.5");
        assert_eq!(c_general6(1.0), "1");
        assert_eq!(c_general6(0.0625), "0.0625");
        assert_eq!(c_general6(0.8125), "0.8125");
        assert_eq!(c_general6(123_456_789.0), "1.23457e+08");
        assert_eq!(c_general6(1e-7), "1e-07");
        assert_eq!(c_general6(0.0001), "0.0001");
        assert_eq!(c_general6(999_999.5), "1e+06");
        assert_eq!(c_general6(0.333_333_333), "0.333333");
        assert_eq!(c_general6(-1.5), "-1.5");
    }
}
