//! Logical ↔ physical coordinates (reference §5.6).
//!
//! Physical pixel space is anchored at the logical origin: the physical pixel `p` has the logical
//! coordinate `p / scale`, and a logical coordinate `l` falls on physical `trunc(l × scale)`. The
//! render origin of §5.6 is therefore always 0 here: a tile or an offset render is simply a yield
//! rectangle placed elsewhere in the same physical space, which is what makes tiles of one render
//! agree bit for bit. Distances and radii scale with `S(x) = floor(x × scale)`.

/// Logical coordinate of physical pixel `p`: `p / scale`.
#[inline]
pub fn to_logical(p: i64, scale: f64) -> f64 {
    p as f64 / scale
}

/// Physical pixel of logical coordinate `l`: `trunc(l × scale)`, saturating.
#[inline]
pub fn to_physical(l: f64, scale: f64) -> i64 {
    let v = (l * scale).trunc();
    if v.is_nan() {
        0
    } else {
        v as i64 // `as` saturates at the i64 range
    }
}

/// `S(x) = floor(x × scale)` for a distance, clamped to ≥ 0 (negative or NaN distances are 0; the
/// script binding reports them as errors before they get here).
#[inline]
pub fn scaled_distance(x: f64, scale: f64) -> u64 {
    let v = (x * scale).floor();
    if v.is_nan() || v <= 0.0 {
        0
    } else {
        v as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(to_logical(16, 0.5), 32.0);
        assert_eq!(to_physical(32.0, 0.5), 16);
        assert_eq!(to_physical(-3.0, 0.5), -1); // trunc, toward zero
        assert_eq!(scaled_distance(5.0, 0.5), 2);
        assert_eq!(scaled_distance(-5.0, 1.0), 0);
        assert_eq!(scaled_distance(f64::NAN, 1.0), 0);
        assert_eq!(scaled_distance(1e300, 1.0), u64::MAX);
    }
}
