//! Support rules shared by several operations (see `geogen_render::support`).
//!
//! Two facts every rule here leans on: every map holds finite heights in [−1, 1] (each kernel
//! saturates, and NaN becomes 0; `no_panic` checks it on random scripts), and a rule may claim
//! "unchanged" or "background" only where the bits are exactly the same, so −0 and +0 are told
//! apart.

use geogen_render::{Facts, Range, Rect, Support};

use geogen_kernels::sample::covering_rect;

/// The support of argument `i`, if known.
pub fn support_of(args: &[Facts], i: usize) -> Option<Support> {
    args.get(i).and_then(|a| a.support)
}

/// The range of argument `i` ([`Range::FULL`] if there is none).
pub fn range_of(args: &[Facts], i: usize) -> Range {
    args.get(i).map_or(Range::FULL, |a| a.range)
}

/// For a combiner `h = f(h, other)` that is the identity wherever `other` holds a height for which
/// `keeps(height)` is true: the region outside which the target is left unchanged (where `other`
/// is not its background).
pub fn unchanged_where_background(other: Option<Support>, keeps: impl Fn(f32) -> bool) -> Option<Rect> {
    other.filter(|o| keeps(o.background)).map(|o| o.rect)
}

/// Whether `max(h, b)` has the bits of `h` for every `h` of `range`: `b` is below all of them, or
/// equal to the lowest and not a zero (equal non-zero heights have the same bits; ±0 do not).
pub fn at_most_all(b: f32, range: Range) -> bool {
    b < range.low || (b == range.low && b != 0.0)
}

/// Whether `min(h, b)` has the bits of `h` for every `h` of `range` (see [`at_most_all`]).
pub fn at_least_all(b: f32, range: Range) -> bool {
    b > range.high || (b == range.high && b != 0.0)
}

/// For a kernel that adds a signed zero to the target wherever `other` is its background
/// (`h + a × max(m, 0)` with `m ≤ 0`): `h + (±0)` is `h` except that `−0 + +0` is `+0`, so the
/// target is unchanged only where it is its own background and that background is not −0. The
/// region is then `other`'s rectangle with the target's.
pub fn unchanged_adding_zero(target: Option<Support>, other: Option<Support>, adds_zero: bool) -> Option<Rect> {
    let (target, other) = (target?, other?);
    let keeps =
        adds_zero && target.background.to_bits() != (-0.0f32).to_bits() && (-1.0..=1.0).contains(&target.background);
    keeps.then(|| target.rect.combine(&other.rect))
}

/// The support of a map resampled bilinearly at `source(p)` for each output pixel `p`, where
/// `forward` maps a source position to the output position that samples it (the inverse of
/// `source`) and is affine, so the corners of a box bound its image. An output pixel reads the
/// source pixels around `source(p)` only (the floor and the next one per axis), so it can differ
/// from the background only if `source(p)` lies within a pixel of the source's rectangle: the image
/// of that box, plus a margin for rounding. The background is the source's: the interpolation
/// `a + (b − a) × t` of equal heights is exactly `a`, except that `−0 + (+0)` gives +0, so a −0
/// background gives no support.
///
/// `condition` bounds the transform's condition number: the kernel maps each output pixel back
/// with the computed inverse, whose error grows with it and with the coordinates, so the margin
/// does too. Far out (beyond 2^50) the bounds rules clamp rectangles and a sample may land
/// anywhere in the source: no support there.
pub fn resampled_support(
    source: Option<Support>,
    condition: f64,
    forward: impl Fn(f64, f64) -> (f64, f64),
) -> Option<Support> {
    const FAR: f64 = 1_125_899_906_842_624.0; // 2^50
    let source = source?;
    if source.background.to_bits() == (-0.0f32).to_bits() {
        return None;
    }
    if source.rect.is_empty() {
        return Some(source);
    }
    let r = source.rect;
    let (x1, y1) = r.last_pixel();
    let (x0, y0, x1, y1) = (r.x as f64 - 1.0, r.y as f64 - 1.0, x1 as f64 + 1.0, y1 as f64 + 1.0);
    let corners = [forward(x0, y0), forward(x1, y0), forward(x0, y1), forward(x1, y1)];
    let reach = corners.iter().flat_map(|&(x, y)| [x, y]).chain([x0, y0, x1, y1]).fold(0.0f64, |m, v| m.max(v.abs()));
    let usable = reach < FAR && condition.is_finite() && condition >= 1.0;
    if !usable {
        return None;
    }
    // The inverse's relative error is a few units of 2^-52 times the condition number; 2^-40 is
    // far more, and 2 pixels cover the floor, the next pixel and rounding.
    let slack = reach * condition / 1_099_511_627_776.0; // 2^40
    if slack.is_nan() || slack >= 1e6 {
        return None;
    }
    let span = |f: fn(&(f64, f64)) -> f64| {
        corners.iter().map(f).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
    };
    let margin = 2 + libm::ceil(slack) as i64;
    Some(Support { rect: covering_rect(span(|c| c.0), span(|c| c.1), margin), background: source.background })
}

/// The range of a bilinear resampling of a map of `range`, or of a linear interpolation between
/// two heights of it (`a + (b − a) × t` in `f64`, then rounded to `f32`). With exact arithmetic the
/// result lies between its inputs. In `f64` it may pass them by a few units of 2^−53 (when `b − a`
/// itself rounds), which the final rounding to `f32` takes back to the bound as long as the bound's
/// own `f32` spacing is far larger: true for bounds of magnitude 2^−20 or more. Bounds closer to 0
/// are widened by 2^−30, far more than any such excess.
pub fn interpolated_range(range: Range) -> Range {
    const SMALL: f32 = 1.0 / 1_048_576.0; // 2^-20
    const SLACK: f32 = 1.0 / 1_073_741_824.0; // 2^-30
    let low = if range.low.abs() >= SMALL { range.low } else { range.low - SLACK };
    let high = if range.high.abs() >= SMALL { range.high } else { range.high + SLACK };
    Range::between(low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_zero_target_or_background_is_never_kept() {
        let t = |rect, background| Some(Support { rect, background });
        let full = Range::FULL;
        assert!(at_most_all(-1.0, full) && !at_most_all(-0.5, full));
        assert!(at_most_all(-0.4, Range { low: -0.4, high: 0.0 }));
        assert!(!at_most_all(0.0, Range { low: 0.0, high: 1.0 }) && at_most_all(-0.0, Range { low: 1e-9, high: 1.0 }));
        assert!(at_least_all(1.0, full) && !at_least_all(0.0, Range { low: -1.0, high: 0.0 }));
        assert_eq!(interpolated_range(Range { low: -0.4, high: 0.0 }).low, -0.4);
        assert!(interpolated_range(Range { low: -0.4, high: 0.0 }).high > 0.0);
        let small = Rect::new(0, 0, 2, 2);
        assert_eq!(
            unchanged_adding_zero(t(small, 0.5), t(Rect::new(5, 5, 1, 1), 0.0), true),
            Some(Rect::new(0, 0, 6, 6))
        );
        assert_eq!(unchanged_adding_zero(t(small, -0.0), t(small, 0.0), true), None);
        assert_eq!(unchanged_adding_zero(t(small, 0.0), t(small, 0.0), false), None);
        assert_eq!(unchanged_adding_zero(None, t(small, 0.0), true), None);
        assert_eq!(resampled_support(t(small, -0.0), 1.0, |x, y| (x, y)), None);
        assert_eq!(resampled_support(t(Rect::EMPTY, 0.25), 2.0, |x, y| (2.0 * x, y)), t(Rect::EMPTY, 0.25));
        assert_eq!(resampled_support(t(Rect::new(1 << 51, 0, 2, 2), 0.25), 1.0, |x, y| (x, y)), None);
    }
}
