//! What each operator computes, one scalar function each, shared by the compiled evaluator (its
//! row loops call these), constant folding and the tests. Everything is IEEE basic arithmetic or
//! `libm`, never `mul_add`, so every machine gets the same bits.

/// `(^ a b)`: C `pow`: `(^ -8 0.5)` is NaN, `(^ 0 -1)` is +inf.
#[inline]
pub fn pow(a: f64, b: f64) -> f64 {
    libm::pow(a, b)
}

#[inline]
pub fn bool01(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// Truth as documented: `v >= 0.5` (NaN is false).
#[inline]
pub fn truth_documented(v: f64) -> f64 {
    bool01(v >= 0.5)
}

/// Truth as picogen's code computes it: `v > 0.5`, so 0.5 is false.
#[inline]
pub fn truth_picogen(v: f64) -> f64 {
    bool01(v > 0.5)
}

/// `(min a b)` = `a < b ? a : b`: with NaN the second operand wins unless the first is NaN...
/// exactly as C's conditional, so `min(NaN, 1)` = 1 and `min(1, NaN)` = NaN.
#[inline]
pub fn min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// `(max a b)` = `a > b ? a : b`.
#[inline]
pub fn max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// `(delta a b)` = `a < b ? 0 : 1` (NaN gives 1).
#[inline]
pub fn delta(a: f64, b: f64) -> f64 {
    if a < b {
        0.0
    } else {
        1.0
    }
}

/// `(trunc a)` as documented: toward zero to a 32-bit integer, saturating at the `i32` range;
/// NaN gives 0 (the original's cast is undefined there).
#[inline]
pub fn trunc_documented(a: f64) -> f64 {
    f64::from(a as i32)
}

/// `(trunc a)` as picogen computes it on x86-64: `cvttsd2si` gives `i32::MIN` for NaN and for
/// anything outside the `i32` range.
#[inline]
pub fn trunc_picogen(a: f64) -> f64 {
    f64::from(x86_i32(a))
}

/// C's `(int)v` as x86-64 computes it: toward zero, and `i32::MIN` (the "integer indefinite")
/// when the result does not fit or `v` is NaN.
#[inline]
pub fn x86_i32(v: f64) -> i32 {
    if v > -2_147_483_649.0 && v < 2_147_483_648.0 {
        v as i32
    } else {
        i32::MIN
    }
}

/// C's `(unsigned)v` as gcc compiles it on x86-64: a 64-bit `cvttsd2si` (toward zero,
/// `i64::MIN` when out of range or NaN), of which the low 32 bits are kept.
#[inline]
pub fn x86_u32(v: f64) -> u32 {
    let wide = if v > -9_223_372_036_854_777_856.0 && v < 9_223_372_036_854_775_808.0 { v as i64 } else { i64::MIN };
    wide as u32
}

/// IEEE `floor`, exactly (signed zeros, NaN and infinities included), without a library call:
/// below 2^52 in magnitude the conversion to `i64` truncates exactly; above, every double is a
/// whole number already.
#[inline]
pub fn floor(a: f64) -> f64 {
    if a.abs() < 4_503_599_627_370_496.0 {
        let t = (a as i64) as f64;
        // The floor has the sign of `a` (−0.5 → −1, −0 → −0).
        (if t > a { t - 1.0 } else { t }).copysign(a)
    } else {
        a
    }
}

/// `(frac a)` = `a − floor(a)`.
#[inline]
pub fn frac(a: f64) -> f64 {
    a - floor(a)
}

/// `(lerp a b t)` = `a·(1−t) + b·t` (t is not clamped).
#[inline]
pub fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a * (1.0 - t) + b * t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_min_and_max_are_asymmetric_with_nan() {
        assert_eq!(min(f64::NAN, 1.0), 1.0);
        assert!(min(1.0, f64::NAN).is_nan());
        assert_eq!(max(f64::NAN, 1.0), 1.0);
        assert!(max(1.0, f64::NAN).is_nan());
        assert_eq!(delta(f64::NAN, 1.0), 1.0);
    }

    #[test]
    fn trunc_is_defined_everywhere() {
        assert_eq!(trunc_documented(-2.7), -2.0);
        assert_eq!(trunc_documented(1e300), 2_147_483_647.0);
        assert_eq!(trunc_documented(f64::NAN), 0.0);
        assert_eq!(trunc_picogen(-2.7), -2.0);
        assert_eq!(trunc_picogen(1e300), -2_147_483_648.0);
        assert_eq!(trunc_picogen(f64::NAN), -2_147_483_648.0);
        assert_eq!(trunc_picogen(2_147_483_647.9), 2_147_483_647.0);
        assert_eq!(trunc_picogen(-2_147_483_648.9), -2_147_483_648.0);
    }

    #[test]
    fn unsigned_conversion_wraps_like_x86() {
        assert_eq!(x86_u32(3.9), 3);
        assert_eq!(x86_u32(-1.5), u32::MAX);
        assert_eq!(x86_u32(-0.5), 0);
        assert_eq!(x86_u32(f64::NAN), 0);
        assert_eq!(x86_u32(4_294_967_296.0 + 5.0), 5);
    }

    #[test]
    fn floor_is_ieee_floor() {
        let mut values = vec![0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 1e-300, -1e-300, 4503599627370495.5];
        values.extend([-4503599627370495.5, 4503599627370496.0, 1e300, -1e300, f64::INFINITY, f64::NEG_INFINITY]);
        values.extend((0..20_000).map(|k| (f64::from(k) - 10_000.0) * 0.0173));
        for v in values {
            assert_eq!(floor(v).to_bits(), libm::floor(v).to_bits(), "{v}");
        }
        assert!(floor(f64::NAN).is_nan());
    }

    #[test]
    fn truth_thresholds() {
        assert_eq!(truth_documented(0.5), 1.0);
        assert_eq!(truth_picogen(0.5), 0.0);
        assert_eq!(truth_documented(f64::NAN), 0.0);
        assert_eq!(frac(-0.25), 0.75);
        assert!(pow(-8.0, 0.5).is_nan());
        assert_eq!(pow(0.0, -1.0), f64::INFINITY);
    }
}
