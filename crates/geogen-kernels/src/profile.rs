//! Kernels shared by the profile operations (1-D counterparts of the map loops) and by the map
//! operations that read profiles.
//!
//! A profile is a run of heights over a physical interval. Operations between two profiles work on
//! the intersection of their intervals, exactly as map-map operations work on the intersection of
//! rectangles: the default bounds rule makes every argument cover the step's bounds, so the
//! intersection covers every pixel anybody needs.

use geogen_render::raster::saturate;
use geogen_render::scale::to_physical;
use geogen_render::{HeightProfile, Interval, Object, RenderError};

/// Input `i` of a kernel as a profile.
pub fn profile_input<'a>(inputs: &[&'a Object], i: usize) -> Result<&'a HeightProfile, RenderError> {
    inputs.get(i).ok_or_else(|| RenderError::Internal(format!("missing input {i}")))?.as_profile()
}

/// The heights of `p` over `common`, which must lie inside its interval (callers pass
/// intersections).
fn span(p: &HeightProfile, common: Interval) -> &[f32] {
    let from = (common.start - p.interval().start) as usize;
    &p.data()[from..from + common.length as usize]
}

/// The target's heights over `common` (inside its interval).
fn span_mut(p: &mut HeightProfile, common: Interval) -> &mut [f32] {
    let from = (common.start - p.interval().start) as usize;
    &mut p.data_mut()[from..from + common.length as usize]
}

/// On the intersection of the intervals, `h = f(h, a)`; heights outside it are left alone.
pub fn profile_zip1(target: &mut HeightProfile, a: &HeightProfile, f: impl Fn(f32, f32) -> f32) {
    let common = target.interval().intersect(&a.interval());
    if common.is_empty() {
        return;
    }
    for (h, &va) in span_mut(target, common).iter_mut().zip(span(a, common)) {
        *h = f(*h, va);
    }
}

/// On the intersection of the three intervals, `h = f(h, a, b)`; heights outside it are left
/// alone.
pub fn profile_zip2(
    target: &mut HeightProfile,
    a: &HeightProfile,
    b: &HeightProfile,
    f: impl Fn(f32, f32, f32) -> f32,
) {
    let common = target.interval().intersect(&a.interval()).intersect(&b.interval());
    if common.is_empty() {
        return;
    }
    for ((h, &va), &vb) in span_mut(target, common).iter_mut().zip(span(a, common)).zip(span(b, common)) {
        *h = f(*h, va, vb);
    }
}

/// Calls `f(absolute position, height)` for every height of the profile, in order.
pub fn for_each_position(profile: &mut HeightProfile, mut f: impl FnMut(i64, &mut f32)) {
    let start = profile.interval().start;
    for (i, h) in profile.data_mut().iter_mut().enumerate() {
        // Cannot overflow: an interval never reaches past i64::MAX.
        f(start + i as i64, h);
    }
}

/// The physical interval of two logical positions, both included, in either order: what
/// `FillInterval(10, 40, h)` and `FillInterval(40, 10, h)` both cover (31 pixels at scale 1; the
/// original covered 1 pixel for the first order, reference §4.8).
pub fn physical_interval(a: i32, b: i32, scale: f64) -> Interval {
    Interval::from_coordinates(to_physical(f64::from(a), scale), to_physical(f64::from(b), scale))
}

/// The height at `position` (physical, fractional) read linearly between the two pixels around it;
/// pixels outside the profile read as 0. A whole position reads exactly one pixel, so a caller
/// whose positions stay within `[lo, hi]` only needs the pixels of `[floor(lo), ceil(hi)]`.
pub fn sample_linear(profile: &HeightProfile, position: f64) -> f32 {
    let floor = libm::floor(position);
    if !floor.is_finite() {
        return 0.0;
    }
    let i = floor as i64;
    let t = position - floor;
    let at = |p: i64| f64::from(profile.get(p).unwrap_or(0.0));
    if t == 0.0 {
        return at(i) as f32;
    }
    let (a, b) = (at(i), at(i.saturating_add(1)));
    saturate((a + (b - a) * t) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(start: i64, data: &[f32]) -> HeightProfile {
        HeightProfile::from_data(Interval::new(start, data.len() as u64), data.to_vec()).unwrap()
    }

    #[test]
    fn zips_work_on_the_intersection_only() {
        let mut t = profile(-2, &[0.1, 0.1, 0.1, 0.1]);
        let a = profile(0, &[0.5, 0.5, 0.5]);
        profile_zip1(&mut t, &a, |h, o| h + o);
        assert_eq!(t.data(), &[0.1, 0.1, 0.6, 0.6]);
        let b = profile(1, &[1.0]);
        profile_zip2(&mut t, &a, &b, |_, o, m| o * m);
        assert_eq!(t.data(), &[0.1, 0.1, 0.6, 0.5]);
        profile_zip1(&mut t, &profile(10, &[1.0]), |_, _| 9.0);
        assert_eq!(t.data(), &[0.1, 0.1, 0.6, 0.5]);
    }

    #[test]
    fn physical_intervals_include_both_ends_in_either_order() {
        assert_eq!(physical_interval(10, 40, 1.0), Interval::new(10, 31));
        assert_eq!(physical_interval(40, 10, 1.0), Interval::new(10, 31));
        assert_eq!(physical_interval(10, 40, 0.5), Interval::new(5, 16));
        assert_eq!(physical_interval(-3, -3, 2.0), Interval::new(-6, 1));
    }

    #[test]
    fn linear_sampling_reads_whole_positions_exactly() {
        let p = profile(4, &[0.0, 1.0, 0.5]);
        assert_eq!(sample_linear(&p, 5.0), 1.0);
        assert_eq!(sample_linear(&p, 5.5), 0.75);
        assert_eq!(sample_linear(&p, 4.25), 0.25);
        assert_eq!(sample_linear(&p, 6.5), 0.25); // the pixel after the end reads 0
        assert_eq!(sample_linear(&p, f64::NAN), 0.0);
        assert_eq!(sample_linear(&p, -1e300), 0.0);
    }
}
