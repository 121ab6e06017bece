//! Rectangles and intervals in **physical pixel space**.
//!
//! Invariants:
//! * A [`Rect`] covers the pixels `x <= px < x + width`, `y <= py < y + height` (half-open).
//! * A rectangle with zero width or zero height is *empty*. All empty rectangles are equal for the
//!   purposes of [`Rect::is_empty`], union and intersection (their position is meaningless), and
//!   [`Rect::EMPTY`] is the canonical one.
//! * `x + width` and `y + height` never exceed `i64::MAX` for rectangles this module builds
//!   (results are clipped there), so pixel coordinates always fit in `i64`.
//! * Arithmetic never overflows or panics: positions are `i64`, sizes `u64`, and every computation
//!   is done in `i128` and clamped back. Absurd sizes (e.g. a blur of radius 10^15) therefore stay
//!   representable, and the memory plan rejects them before anything is allocated.
//!
//! [`Interval`] is the same for one dimension. (The original's 1-D `Interval::FromCoordinates`,
//! `Intersect` and `Combine` were broken; these are written from the definitions and tested.)

use std::fmt;

/// Clamp an `i128` into `i64`.
fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Clamp an `i128` (known non-negative) into `u64`.
fn clamp_u64(v: i128) -> u64 {
    v.clamp(0, u64::MAX as i128) as u64
}

/// A half-open 1-D range of physical pixels `[start, start + length)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    pub start: i64,
    pub length: u64,
}

impl Interval {
    /// The canonical empty interval.
    pub const EMPTY: Interval = Interval { start: 0, length: 0 };

    pub const fn new(start: i64, length: u64) -> Interval {
        Interval { start, length }
    }

    /// The interval covering both coordinates, *inclusive* at both ends, in either order
    /// (`from_coordinates(10, 40)` and `from_coordinates(40, 10)` are both 31 long).
    pub fn from_coordinates(a: i64, b: i64) -> Interval {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        Interval { start: lo, length: clamp_u64(hi as i128 - lo as i128 + 1) }
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Whether the interval respects the invariant `end() <= i64::MAX` (intervals built by this
    /// module always do; ones built from raw fields may not).
    pub fn is_valid(&self) -> bool {
        self.end() <= i64::MAX as i128
    }

    /// One past the last pixel, as `i128` so it never overflows.
    pub fn end(&self) -> i128 {
        self.start as i128 + self.length as i128
    }

    /// Keeps the invariant `end() <= i64::MAX`, so every pixel coordinate `start + i` (with
    /// `i < length`) fits in an `i64` and kernels can add offsets without overflow checks.
    fn from_bounds(start: i128, end: i128) -> Interval {
        let end = end.min(i64::MAX as i128);
        if end <= start {
            return Interval::EMPTY;
        }
        let s = clamp_i64(start);
        Interval { start: s, length: clamp_u64(end - s as i128) }
    }

    /// The smallest interval containing both (the union's hull). Empty operands are ignored.
    pub fn combine(&self, other: &Interval) -> Interval {
        match (self.is_empty(), other.is_empty()) {
            (true, true) => Interval::EMPTY,
            (true, false) => *other,
            (false, true) => *self,
            (false, false) => {
                Interval::from_bounds((self.start as i128).min(other.start as i128), self.end().max(other.end()))
            }
        }
    }

    /// The common part (empty if they do not overlap).
    pub fn intersect(&self, other: &Interval) -> Interval {
        if self.is_empty() || other.is_empty() {
            return Interval::EMPTY;
        }
        Interval::from_bounds((self.start as i128).max(other.start as i128), self.end().min(other.end()))
    }

    /// Grown by `margin` on both sides. An empty interval stays empty (nothing is needed, so no
    /// margin is needed either).
    pub fn expand(&self, margin: u64) -> Interval {
        if self.is_empty() {
            return Interval::EMPTY;
        }
        Interval::from_bounds(self.start as i128 - margin as i128, self.end() + margin as i128)
    }

    /// Grown by `low` before the start and `high` after the end (asymmetric windows such as the
    /// original's blur). An empty interval stays empty.
    pub fn expand_sides(&self, low: u64, high: u64) -> Interval {
        if self.is_empty() {
            return Interval::EMPTY;
        }
        Interval::from_bounds(self.start as i128 - low as i128, self.end() + high as i128)
    }

    /// The interval `[start, end)` given as `i128` bounds, clipped to the coordinate range; empty if
    /// `end <= start`.
    pub fn from_range(start: i128, end: i128) -> Interval {
        Interval::from_bounds(start.max(i64::MIN as i128), end)
    }

    pub fn translate(&self, offset: i64) -> Interval {
        if self.is_empty() {
            return Interval::EMPTY;
        }
        Interval::from_bounds(self.start as i128 + offset as i128, self.end() + offset as i128)
    }

    pub fn contains(&self, p: i64) -> bool {
        !self.is_empty() && p >= self.start && (p as i128) < self.end()
    }

    /// Whether `other` lies completely inside (an empty `other` always does).
    pub fn contains_interval(&self, other: &Interval) -> bool {
        other.is_empty() || (!self.is_empty() && other.start >= self.start && other.end() <= self.end())
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            write!(f, "[empty]")
        } else {
            write!(f, "[{}, {})", self.start, self.end())
        }
    }
}

/// A half-open rectangle of physical pixels.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rect {
    pub x: i64,
    pub y: i64,
    pub width: u64,
    pub height: u64,
}

impl Rect {
    /// The canonical empty rectangle.
    pub const EMPTY: Rect = Rect { x: 0, y: 0, width: 0, height: 0 };

    pub const fn new(x: i64, y: i64, width: u64, height: u64) -> Rect {
        Rect { x, y, width, height }
    }

    /// The rectangle spanned by two corner pixels, both *included*, in any order
    /// (`[10,10]–[20,20]` is 11×11, as the original's "rectangle from two points").
    pub fn from_corners(a: (i64, i64), b: (i64, i64)) -> Rect {
        Rect::from_intervals(Interval::from_coordinates(a.0, b.0), Interval::from_coordinates(a.1, b.1))
    }

    /// The product of an X and a Y interval (empty if either is).
    pub fn from_intervals(xs: Interval, ys: Interval) -> Rect {
        if xs.is_empty() || ys.is_empty() {
            return Rect::EMPTY;
        }
        Rect { x: xs.start, y: ys.start, width: xs.length, height: ys.length }
    }

    pub fn x_interval(&self) -> Interval {
        if self.is_empty() {
            Interval::EMPTY
        } else {
            Interval::new(self.x, self.width)
        }
    }

    pub fn y_interval(&self) -> Interval {
        if self.is_empty() {
            Interval::EMPTY
        } else {
            Interval::new(self.y, self.height)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// Whether both intervals respect `end <= i64::MAX` (see [`Interval::is_valid`]).
    pub fn is_valid(&self) -> bool {
        Interval::new(self.x, self.width).is_valid() && Interval::new(self.y, self.height).is_valid()
    }

    /// The last pixel of each side, `(x + width − 1, y + height − 1)`, saturating at the ends of
    /// the coordinate range (one before the origin on an empty side).
    pub fn last_pixel(&self) -> (i64, i64) {
        let last = |start: i64, len: u64| {
            (i128::from(start) + i128::from(len) - 1).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
        };
        (last(self.x, self.width), last(self.y, self.height))
    }

    /// Number of pixels, saturating (never overflows).
    pub fn area(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.width.saturating_mul(self.height)
        }
    }

    /// The smallest rectangle containing both; empty operands are ignored (the thesis' `combine`).
    pub fn combine(&self, other: &Rect) -> Rect {
        Rect::from_intervals(
            self.x_interval().combine(&other.x_interval()),
            self.y_interval().combine(&other.y_interval()),
        )
    }

    /// The common part (empty if they do not overlap).
    pub fn intersect(&self, other: &Rect) -> Rect {
        Rect::from_intervals(
            self.x_interval().intersect(&other.x_interval()),
            self.y_interval().intersect(&other.y_interval()),
        )
    }

    /// Grown by `margin` pixels in each of the four directions; empty stays empty.
    pub fn expand(&self, margin: u64) -> Rect {
        Rect::from_intervals(self.x_interval().expand(margin), self.y_interval().expand(margin))
    }

    /// Grown by `low` pixels towards negative coordinates and `high` towards positive ones, on both
    /// axes; empty stays empty.
    pub fn expand_sides(&self, low: u64, high: u64) -> Rect {
        Rect::from_intervals(self.x_interval().expand_sides(low, high), self.y_interval().expand_sides(low, high))
    }

    pub fn translate(&self, dx: i64, dy: i64) -> Rect {
        Rect::from_intervals(self.x_interval().translate(dx), self.y_interval().translate(dy))
    }

    pub fn contains_point(&self, px: i64, py: i64) -> bool {
        self.x_interval().contains(px) && self.y_interval().contains(py)
    }

    /// Whether `other` lies completely inside (an empty `other` always does).
    pub fn contains_rect(&self, other: &Rect) -> bool {
        other.is_empty()
            || (self.x_interval().contains_interval(&other.x_interval())
                && self.y_interval().contains_interval(&other.y_interval()))
    }
}

impl fmt::Display for Rect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            write!(f, "[empty]")
        } else {
            write!(f, "[{}, {}, {}×{}]", self.x, self.y, self.width, self.height)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rescale's bounds rule once overflowed here for a rectangle from i64::MIN of 2^63 pixels.
    #[test]
    fn the_last_pixel_saturates_at_the_ends_of_the_range() {
        assert_eq!(Rect::new(10, -5, 3, 1).last_pixel(), (12, -5));
        assert_eq!(Rect::new(4, 4, 0, 0).last_pixel(), (3, 3));
        assert_eq!(Rect::new(i64::MIN, i64::MIN, 1 << 63, u64::MAX).last_pixel(), (-1, i64::MAX - 1));
        assert_eq!(Rect::new(1, 0, u64::MAX, 1).last_pixel(), (i64::MAX, 0));
        assert_eq!(Rect::new(i64::MAX, i64::MIN, 5, 0).last_pixel(), (i64::MAX, i64::MIN));
    }

    #[test]
    fn interval_from_coordinates_is_inclusive_in_both_orders() {
        // The original returned length 1 for (10, 40): defect 21.
        assert_eq!(Interval::from_coordinates(10, 40), Interval::new(10, 31));
        assert_eq!(Interval::from_coordinates(40, 10), Interval::new(10, 31));
        assert_eq!(Interval::from_coordinates(-5, -5), Interval::new(-5, 1));
    }

    #[test]
    fn interval_intersect_in_both_orders() {
        let a = Interval::new(0, 10);
        let b = Interval::new(5, 10);
        assert_eq!(a.intersect(&b), Interval::new(5, 5));
        assert_eq!(b.intersect(&a), Interval::new(5, 5));
        assert!(Interval::new(0, 5).intersect(&Interval::new(5, 5)).is_empty());
        assert_eq!(Interval::new(-10, 30).intersect(&Interval::new(0, 3)), Interval::new(0, 3));
        assert!(a.intersect(&Interval::EMPTY).is_empty());
    }

    #[test]
    fn interval_combine_is_the_hull_and_ignores_empty() {
        assert_eq!(Interval::new(0, 2).combine(&Interval::new(10, 2)), Interval::new(0, 12));
        assert_eq!(Interval::new(10, 2).combine(&Interval::new(0, 2)), Interval::new(0, 12));
        assert_eq!(Interval::new(-3, 1).combine(&Interval::EMPTY), Interval::new(-3, 1));
        assert_eq!(Interval::EMPTY.combine(&Interval::new(7, 1)), Interval::new(7, 1));
        // An empty interval positioned far away must not stretch the union.
        assert_eq!(Interval::new(1000, 0).combine(&Interval::new(0, 1)), Interval::new(0, 1));
    }

    #[test]
    fn interval_expand_translate_contains() {
        assert_eq!(Interval::new(0, 1).expand(3), Interval::new(-3, 7));
        assert!(Interval::EMPTY.expand(3).is_empty());
        assert_eq!(Interval::new(2, 4).translate(-5), Interval::new(-3, 4));
        let i = Interval::new(-2, 4);
        assert!(i.contains(-2) && i.contains(1) && !i.contains(2) && !i.contains(-3));
        assert!(i.contains_interval(&Interval::new(-1, 2)));
        assert!(!i.contains_interval(&Interval::new(-1, 4)));
    }

    #[test]
    fn arithmetic_saturates_instead_of_overflowing() {
        let huge = Interval::new(i64::MAX - 10, 5).expand(u64::MAX);
        assert!(!huge.is_empty());
        assert!(huge.is_valid() && huge.end() == i64::MAX as i128);
        assert!(!Interval::new(i64::MAX - 1, 5).is_valid());
        let r = Rect::new(i64::MIN, i64::MIN, u64::MAX, 1).expand(10);
        assert!(!r.is_empty());
        assert_eq!(Rect::new(0, 0, u64::MAX, u64::MAX).area(), u64::MAX);
    }

    #[test]
    fn rect_combine_intersect_expand_translate() {
        let a = Rect::new(0, 0, 10, 10);
        let b = Rect::new(5, -5, 10, 10);
        assert_eq!(a.combine(&b), Rect::new(0, -5, 15, 15));
        assert_eq!(a.intersect(&b), Rect::new(5, 0, 5, 5));
        assert_eq!(b.intersect(&a), Rect::new(5, 0, 5, 5));
        assert!(a.intersect(&Rect::new(10, 0, 5, 5)).is_empty());
        assert_eq!(a.combine(&Rect::new(100, 100, 0, 7)), a);
        assert_eq!(a.expand(2), Rect::new(-2, -2, 14, 14));
        assert_eq!(a.translate(-3, 4), Rect::new(-3, 4, 10, 10));
        assert!(Rect::EMPTY.expand(5).is_empty());
        assert_eq!(Rect::from_corners((20, 20), (10, 10)), Rect::new(10, 10, 11, 11));
        assert!(a.contains_rect(&Rect::new(2, 2, 8, 8)));
        assert!(!a.contains_rect(&Rect::new(2, 2, 9, 8)));
        assert!(a.contains_point(9, 0) && !a.contains_point(10, 0));
    }
}
