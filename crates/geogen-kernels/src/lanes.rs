//! The lane types vector kernels are written over, one body for every width.
//!
//! A kernel written over [`Lanes`] is one generic function; it is instantiated once with
//! [`Scalar`] (one lane, plain Rust `f32`/`i32`, the reference) and once per vector instruction set
//! ([`Avx2`]: eight lanes, [`Avx512`]: sixteen, on x86-64), inside a `#[target_feature]` entry
//! point chosen by [`geogen_simd::active`]. Bit-identity across the instantiations rests on three
//! rules:
//!
//! * every primitive is an IEEE basic operation or an exact one (add, sub, mul, sqrt correctly
//!   rounded; integer wrapping arithmetic; selects, sign flips and comparisons), and each vector
//!   primitive has exactly the semantics of its scalar twin, lane by lane (including `min`/`max`,
//!   written in scalar the way `minps`/`maxps` behave: `if a < b { a } else { b }`);
//! * lanes never mix: a lane's result depends only on that lane's inputs, so the width of the
//!   vector and the padding at the end of a row change nothing;
//! * the generic code fixes the order of every operation (no reassociation, no FMA: Rust never
//!   contracts `a * b + c`, and no `fma` target feature is enabled).
//!
//! The f64 → (cell, fraction) splits are also primitives, in f64: `floor`, `x - floor(x)` (exact),
//! a round-to-nearest conversion of the fraction to f32, and a clamp of the cell to the i32 range
//! before truncation.

use std::ops::{Add, BitAnd, BitXor, Div, Mul, Sub};

/// One lane type: `F` holds f32 lanes, `I` i32 lanes, `M` a lane mask.
///
/// # Safety of the vector implementations
/// The AVX2 and AVX-512 implementations call intrinsics from safe associated functions; each is
/// only ever instantiated inside `#[target_feature]` entry points of its instruction set that
/// run only where [`geogen_simd`] says the process runs that level (which the processor has).
/// The trait is crate-private for that reason.
pub trait Lanes: Copy + 'static {
    const LANES: usize;
    type F: Copy;
    type I: Copy;
    type M: Copy;

    fn splat(x: f32) -> Self::F;
    fn splat_i(x: i32) -> Self::I;
    /// The first `LANES` values of `s` (callers guarantee the length).
    fn load(s: &[f32]) -> Self::F;
    fn load_i(s: &[i32]) -> Self::I;
    fn store(v: Self::F, out: &mut [f32]);

    fn add(a: Self::F, b: Self::F) -> Self::F;
    fn sub(a: Self::F, b: Self::F) -> Self::F;
    fn mul(a: Self::F, b: Self::F) -> Self::F;
    /// `if a < b { a } else { b }` per lane (`minps`).
    fn min(a: Self::F, b: Self::F) -> Self::F;
    /// `if a > b { a } else { b }` per lane (`maxps`).
    fn max(a: Self::F, b: Self::F) -> Self::F;
    fn abs(a: Self::F) -> Self::F;
    fn sqrt(a: Self::F) -> Self::F;
    /// Flips the sign of `a` where bit 31 of `bits` is set.
    fn xor_sign(a: Self::F, bits: Self::I) -> Self::F;
    fn lt(a: Self::F, b: Self::F) -> Self::M;
    /// `m ? a : b` per lane.
    fn select(m: Self::M, a: Self::F, b: Self::F) -> Self::F;
    fn select_i(m: Self::M, a: Self::I, b: Self::I) -> Self::I;

    fn add_i(a: Self::I, b: Self::I) -> Self::I;
    /// Wrapping 32-bit multiplication.
    fn mul_i(a: Self::I, b: Self::I) -> Self::I;
    fn xor_i(a: Self::I, b: Self::I) -> Self::I;
    fn and_i(a: Self::I, b: Self::I) -> Self::I;
    /// Logical right shift.
    fn shr_i<const N: i32>(a: Self::I) -> Self::I;
    fn shl_i<const N: i32>(a: Self::I) -> Self::I;
    /// `a & bit != 0` per lane.
    fn has_bit(a: Self::I, bit: i32) -> Self::M;
    /// i32 → f32, exact for |a| < 2^24 (all the kernels use).
    fn to_f(a: Self::I) -> Self::F;

    /// IEEE division, correctly rounded.
    fn div(a: Self::F, b: Self::F) -> Self::F;
    /// `a > b` per lane (false where either is NaN).
    fn gt(a: Self::F, b: Self::F) -> Self::M;
    /// `!(a <= b)` per lane: true where either is NaN.
    fn not_le(a: Self::F, b: Self::F) -> Self::M;
    /// Whether the lane is NaN.
    fn is_nan(a: Self::F) -> Self::M;
    /// Both masks.
    fn and_m(a: Self::M, b: Self::M) -> Self::M;
    /// Whether any lane of the mask is set.
    fn any(m: Self::M) -> bool;
    /// `a` with its sign bit flipped (`-a`, also for zeros and NaN).
    fn neg(a: Self::F) -> Self::F;
    /// f32 → i32 truncated toward zero as `cvttps2dq` does: `i32::MIN` for NaN and values out of
    /// range.
    fn trunc_i(a: Self::F) -> Self::I;
    /// The lanes of `v` rotated up by one: lane i holds lane i − 1, lane 0 the last lane.
    fn rotate_up(v: Self::F) -> Self::F;
    /// Lane 0 of `first`, the other lanes of `rest`. With [`Lanes::rotate_up`]: the left
    /// neighbours of a run of cells, `blend_first(rotate_up(v), rotate_up(previous run))`.
    fn blend_first(rest: Self::F, first: Self::F) -> Self::F;

    /// `LANES` f64 coordinates split into cells and fractions (by default lane by lane, as
    /// [`split1`] does).
    #[inline(always)]
    fn split(x: &[f64]) -> (Self::I, Self::F) {
        let (mut cells, mut fractions) = ([0i32; MAX_LANES], [0.0f32; MAX_LANES]);
        for lane in 0..Self::LANES {
            (cells[lane], fractions[lane]) = split1(x[lane]);
        }
        (Self::load_i(&cells), Self::load(&fractions))
    }
    /// `LANES` points skewed onto the simplex lattice, `s = (x + y) × F2`, `(x + s, y + s)`, each
    /// split into cells and fractions (by default lane by lane).
    #[inline(always)]
    fn split_skewed(x: &[f64], y: &[f64], f2: f64) -> (Self::I, Self::F, Self::I, Self::F) {
        let (mut xi, mut xf) = ([0i32; MAX_LANES], [0.0f32; MAX_LANES]);
        let (mut yi, mut yf) = ([0i32; MAX_LANES], [0.0f32; MAX_LANES]);
        for lane in 0..Self::LANES {
            let s = (x[lane] + y[lane]) * f2;
            (xi[lane], xf[lane]) = split1(x[lane] + s);
            (yi[lane], yf[lane]) = split1(y[lane] + s);
        }
        (Self::load_i(&xi), Self::load(&xf), Self::load_i(&yi), Self::load(&yf))
    }
}

/// The most lanes of any implementation (AVX-512's sixteen).
pub const MAX_LANES: usize = 16;

/// The `cvttps2dq` conversion in scalar: truncation toward zero, `i32::MIN` (the "integer
/// indefinite" value) for NaN and for values outside the i32 range.
#[inline(always)]
fn trunc_like_cvtt(a: f32) -> i32 {
    if (-2147483648.0..2147483648.0).contains(&a) {
        a as i32
    } else {
        i32::MIN
    }
}

/// The scalar definition of a split: the cell `floor(x)` clamped to the i32 range, and the
/// fraction `x − floor(x)` (exact in f64) rounded to f32.
#[inline(always)]
pub fn split1(x: f64) -> (i32, f32) {
    let f = floor(x);
    let frac = (x - f) as f32;
    let c = max64(f, -2147483648.0);
    let c = min64(c, 2147483647.0);
    (c as i32, frac)
}

/// `floor(x)`, bit for bit as `libm::floor` (and `vroundpd`), faster: below 2^52 in magnitude
/// through an exact truncation to i64; at or above it (and for ±0, integers, NaN) `x` itself or
/// `libm::floor`.
#[inline(always)]
pub fn floor(x: f64) -> f64 {
    if x.abs() < 4.0e15 {
        let t = (x as i64) as f64;
        if t > x {
            t - 1.0
        } else if t == x {
            x
        } else {
            t
        }
    } else {
        libm::floor(x)
    }
}

#[inline(always)]
fn max64(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

#[inline(always)]
fn min64(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// The scalar reference: one lane.
#[derive(Copy, Clone, Debug)]
pub struct Scalar;

impl Lanes for Scalar {
    const LANES: usize = 1;
    type F = f32;
    type I = i32;
    type M = bool;

    #[inline(always)]
    fn splat(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn splat_i(x: i32) -> i32 {
        x
    }
    #[inline(always)]
    fn load(s: &[f32]) -> f32 {
        s[0]
    }
    #[inline(always)]
    fn load_i(s: &[i32]) -> i32 {
        s[0]
    }
    #[inline(always)]
    fn store(v: f32, out: &mut [f32]) {
        out[0] = v;
    }
    #[inline(always)]
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn sub(a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline(always)]
    fn mul(a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline(always)]
    fn min(a: f32, b: f32) -> f32 {
        if a < b {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn max(a: f32, b: f32) -> f32 {
        if a > b {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn abs(a: f32) -> f32 {
        f32::from_bits(a.to_bits() & 0x7fff_ffff)
    }
    #[inline(always)]
    fn sqrt(a: f32) -> f32 {
        // IEEE 754 square root, correctly rounded (sqrtss / fsqrt), as `sqrtps` per lane.
        a.sqrt()
    }
    #[inline(always)]
    fn xor_sign(a: f32, bits: i32) -> f32 {
        f32::from_bits(a.to_bits() ^ (bits as u32 & 0x8000_0000))
    }
    #[inline(always)]
    fn lt(a: f32, b: f32) -> bool {
        a < b
    }
    #[inline(always)]
    fn select(m: bool, a: f32, b: f32) -> f32 {
        if m {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn select_i(m: bool, a: i32, b: i32) -> i32 {
        if m {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn add_i(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn mul_i(a: i32, b: i32) -> i32 {
        a.wrapping_mul(b)
    }
    #[inline(always)]
    fn xor_i(a: i32, b: i32) -> i32 {
        a ^ b
    }
    #[inline(always)]
    fn and_i(a: i32, b: i32) -> i32 {
        a & b
    }
    #[inline(always)]
    fn shr_i<const N: i32>(a: i32) -> i32 {
        ((a as u32) >> N) as i32
    }
    #[inline(always)]
    fn shl_i<const N: i32>(a: i32) -> i32 {
        ((a as u32) << N) as i32
    }
    #[inline(always)]
    fn has_bit(a: i32, bit: i32) -> bool {
        a & bit != 0
    }
    #[inline(always)]
    fn to_f(a: i32) -> f32 {
        a as f32
    }
    #[inline(always)]
    fn div(a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline(always)]
    fn gt(a: f32, b: f32) -> bool {
        a > b
    }
    #[inline(always)]
    fn not_le(a: f32, b: f32) -> bool {
        // `!(a <= b)`, NaN included: the vector compare's "not less or equal, unordered".
        a.partial_cmp(&b).is_none_or(|o| o == std::cmp::Ordering::Greater)
    }
    #[inline(always)]
    fn is_nan(a: f32) -> bool {
        a.is_nan()
    }
    #[inline(always)]
    fn and_m(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn any(m: bool) -> bool {
        m
    }
    #[inline(always)]
    fn neg(a: f32) -> f32 {
        f32::from_bits(a.to_bits() ^ 0x8000_0000)
    }
    #[inline(always)]
    fn trunc_i(a: f32) -> i32 {
        trunc_like_cvtt(a)
    }
    #[inline(always)]
    fn rotate_up(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn blend_first(_: f32, first: f32) -> f32 {
        first
    }
    #[inline(always)]
    fn split(x: &[f64]) -> (i32, f32) {
        split1(x[0])
    }
    #[inline(always)]
    fn split_skewed(x: &[f64], y: &[f64], f2: f64) -> (i32, f32, i32, f32) {
        let s = (x[0] + y[0]) * f2;
        let (xi, xf) = split1(x[0] + s);
        let (yi, yf) = split1(y[0] + s);
        (xi, xf, yi, yf)
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx2::Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Lanes;

    /// Eight lanes of AVX2 (see the safety note on [`Lanes`]).
    #[derive(Copy, Clone, Debug)]
    pub struct Avx2;

    /// Four f64 lanes split as [`super::split1`] does.
    #[inline(always)]
    unsafe fn split4(x: __m256d) -> (__m128i, __m128) {
        // SAFETY: register-only AVX intrinsics; the caller guarantees AVX2 (this function's
        // contract).
        unsafe {
            let f = _mm256_floor_pd(x);
            let frac = _mm256_cvtpd_ps(_mm256_sub_pd(x, f));
            // max(f, lo) then min(·, hi): `maxpd`/`minpd` return the second operand unless the
            // first is strictly greater / smaller, exactly as the scalar `max64`/`min64`.
            let c = _mm256_min_pd(_mm256_max_pd(f, _mm256_set1_pd(-2147483648.0)), _mm256_set1_pd(2147483647.0));
            (_mm256_cvttpd_epi32(c), frac)
        }
    }

    /// Four points skewed as [`super::Scalar`]'s `split_skewed` does, then split.
    #[inline(always)]
    unsafe fn skew4(x: *const f64, y: *const f64, f2: f64) -> ((__m128i, __m128), (__m128i, __m128)) {
        // SAFETY: the caller guarantees AVX2 and four readable f64 at `x` and at `y` (this
        // function's contract); the loads are unaligned.
        unsafe {
            let xv = _mm256_loadu_pd(x);
            let yv = _mm256_loadu_pd(y);
            let s = _mm256_mul_pd(_mm256_add_pd(xv, yv), _mm256_set1_pd(f2));
            (split4(_mm256_add_pd(xv, s)), split4(_mm256_add_pd(yv, s)))
        }
    }

    #[inline(always)]
    unsafe fn join(lo: (__m128i, __m128), hi: (__m128i, __m128)) -> (__m256i, __m256) {
        // SAFETY: register-only AVX intrinsics; the caller guarantees AVX2.
        unsafe { (_mm256_set_m128i(hi.0, lo.0), _mm256_set_m128(hi.1, lo.1)) }
    }

    // SAFETY (every `unsafe` block below): the intrinsics need AVX/AVX2, which the dispatcher has
    // detected before any code instantiated with `Avx2` runs; loads and stores are unaligned and
    // within slices of at least 8 elements (indexing checks the length first).
    #[allow(
        clippy::undocumented_unsafe_blocks,
        reason = "each block is one intrinsic; the note above is the safety argument of them all"
    )]
    impl Lanes for Avx2 {
        const LANES: usize = 8;
        type F = __m256;
        type I = __m256i;
        type M = __m256;

        #[inline(always)]
        fn splat(x: f32) -> __m256 {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        fn splat_i(x: i32) -> __m256i {
            unsafe { _mm256_set1_epi32(x) }
        }
        #[inline(always)]
        fn load(s: &[f32]) -> __m256 {
            let s = &s[..8];
            unsafe { _mm256_loadu_ps(s.as_ptr()) }
        }
        #[inline(always)]
        fn load_i(s: &[i32]) -> __m256i {
            let s = &s[..8];
            unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
        }
        #[inline(always)]
        fn store(v: __m256, out: &mut [f32]) {
            let out = &mut out[..8];
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), v) }
        }
        #[inline(always)]
        fn add(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn min(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_min_ps(a, b) }
        }
        #[inline(always)]
        fn max(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_max_ps(a, b) }
        }
        #[inline(always)]
        fn abs(a: __m256) -> __m256 {
            unsafe { _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff))) }
        }
        #[inline(always)]
        fn sqrt(a: __m256) -> __m256 {
            unsafe { _mm256_sqrt_ps(a) }
        }
        #[inline(always)]
        fn xor_sign(a: __m256, bits: __m256i) -> __m256 {
            unsafe {
                let sign = _mm256_and_si256(bits, _mm256_set1_epi32(i32::MIN));
                _mm256_xor_ps(a, _mm256_castsi256_ps(sign))
            }
        }
        #[inline(always)]
        fn lt(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a, b) }
        }
        #[inline(always)]
        fn select(m: __m256, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_blendv_ps(b, a, m) }
        }
        #[inline(always)]
        fn select_i(m: __m256, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m)) }
        }
        #[inline(always)]
        fn add_i(a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_add_epi32(a, b) }
        }
        #[inline(always)]
        fn mul_i(a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_mullo_epi32(a, b) }
        }
        #[inline(always)]
        fn xor_i(a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_xor_si256(a, b) }
        }
        #[inline(always)]
        fn and_i(a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_and_si256(a, b) }
        }
        #[inline(always)]
        fn shr_i<const N: i32>(a: __m256i) -> __m256i {
            unsafe { _mm256_srli_epi32::<N>(a) }
        }
        #[inline(always)]
        fn shl_i<const N: i32>(a: __m256i) -> __m256i {
            unsafe { _mm256_slli_epi32::<N>(a) }
        }
        #[inline(always)]
        fn has_bit(a: __m256i, bit: i32) -> __m256 {
            unsafe {
                let b = _mm256_set1_epi32(bit);
                _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(a, b), b))
            }
        }
        #[inline(always)]
        fn to_f(a: __m256i) -> __m256 {
            unsafe { _mm256_cvtepi32_ps(a) }
        }
        #[inline(always)]
        fn div(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_div_ps(a, b) }
        }
        #[inline(always)]
        fn gt(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(a, b) }
        }
        #[inline(always)]
        fn not_le(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_NLE_UQ>(a, b) }
        }
        #[inline(always)]
        fn is_nan(a: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_UNORD_Q>(a, a) }
        }
        #[inline(always)]
        fn and_m(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_and_ps(a, b) }
        }
        #[inline(always)]
        fn any(m: __m256) -> bool {
            unsafe { _mm256_movemask_ps(m) != 0 }
        }
        #[inline(always)]
        fn neg(a: __m256) -> __m256 {
            unsafe { _mm256_xor_ps(a, _mm256_set1_ps(-0.0)) }
        }
        #[inline(always)]
        fn trunc_i(a: __m256) -> __m256i {
            unsafe { _mm256_cvttps_epi32(a) }
        }
        #[inline(always)]
        fn rotate_up(v: __m256) -> __m256 {
            unsafe { _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6)) }
        }
        #[inline(always)]
        fn blend_first(rest: __m256, first: __m256) -> __m256 {
            unsafe { _mm256_blend_ps::<1>(rest, first) }
        }
        #[inline(always)]
        fn split(x: &[f64]) -> (__m256i, __m256) {
            let x = &x[..8];
            unsafe {
                let lo = split4(_mm256_loadu_pd(x.as_ptr()));
                let hi = split4(_mm256_loadu_pd(x.as_ptr().add(4)));
                join(lo, hi)
            }
        }
        #[inline(always)]
        fn split_skewed(x: &[f64], y: &[f64], f2: f64) -> (__m256i, __m256, __m256i, __m256) {
            let (x, y) = (&x[..8], &y[..8]);
            // No closure here: a closure would be compiled without AVX2 and call every intrinsic.
            unsafe {
                let (xl, yl) = skew4(x.as_ptr(), y.as_ptr(), f2);
                let (xh, yh) = skew4(x.as_ptr().add(4), y.as_ptr().add(4), f2);
                let (xi, xf) = join(xl, xh);
                let (yi, yf) = join(yl, yh);
                (xi, xf, yi, yf)
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx512::Avx512;

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::Lanes;

    /// Sixteen lanes of AVX-512 (see the safety note on [`Lanes`]); masks are `__mmask16`.
    #[derive(Copy, Clone, Debug)]
    pub struct Avx512;

    // SAFETY (every `unsafe` block below): the intrinsics need AVX-512F (with VL, DQ and BW in
    // the process's AVX-512 level), which the dispatcher has checked before any code
    // instantiated with `Avx512` runs; loads and stores are unaligned and within slices of at
    // least 16 elements (indexing checks the length first).
    #[allow(
        clippy::undocumented_unsafe_blocks,
        reason = "each block is one intrinsic; the note above is the safety argument of them all"
    )]
    impl Lanes for Avx512 {
        const LANES: usize = 16;
        type F = __m512;
        type I = __m512i;
        type M = __mmask16;

        #[inline(always)]
        fn splat(x: f32) -> __m512 {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        fn splat_i(x: i32) -> __m512i {
            unsafe { _mm512_set1_epi32(x) }
        }
        #[inline(always)]
        fn load(s: &[f32]) -> __m512 {
            let s = &s[..16];
            unsafe { _mm512_loadu_ps(s.as_ptr()) }
        }
        #[inline(always)]
        fn load_i(s: &[i32]) -> __m512i {
            let s = &s[..16];
            unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
        }
        #[inline(always)]
        fn store(v: __m512, out: &mut [f32]) {
            let out = &mut out[..16];
            unsafe { _mm512_storeu_ps(out.as_mut_ptr(), v) }
        }
        #[inline(always)]
        fn add(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_mul_ps(a, b) }
        }
        #[inline(always)]
        fn min(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_min_ps(a, b) }
        }
        #[inline(always)]
        fn max(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_max_ps(a, b) }
        }
        #[inline(always)]
        fn abs(a: __m512) -> __m512 {
            unsafe { _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fff_ffff))) }
        }
        #[inline(always)]
        fn sqrt(a: __m512) -> __m512 {
            unsafe { _mm512_sqrt_ps(a) }
        }
        #[inline(always)]
        fn xor_sign(a: __m512, bits: __m512i) -> __m512 {
            unsafe {
                let sign = _mm512_and_si512(bits, _mm512_set1_epi32(i32::MIN));
                _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), sign))
            }
        }
        #[inline(always)]
        fn lt(a: __m512, b: __m512) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b) }
        }
        #[inline(always)]
        fn select(m: __mmask16, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_mask_blend_ps(m, b, a) }
        }
        #[inline(always)]
        fn select_i(m: __mmask16, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_mask_blend_epi32(m, b, a) }
        }
        #[inline(always)]
        fn add_i(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi32(a, b) }
        }
        #[inline(always)]
        fn mul_i(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_mullo_epi32(a, b) }
        }
        #[inline(always)]
        fn xor_i(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_xor_si512(a, b) }
        }
        #[inline(always)]
        fn and_i(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_and_si512(a, b) }
        }
        #[inline(always)]
        fn shr_i<const N: i32>(a: __m512i) -> __m512i {
            // The count as a value: the immediate form takes a `u32` const, which `N` cannot become.
            unsafe { _mm512_srl_epi32(a, _mm_cvtsi32_si128(N)) }
        }
        #[inline(always)]
        fn shl_i<const N: i32>(a: __m512i) -> __m512i {
            unsafe { _mm512_sll_epi32(a, _mm_cvtsi32_si128(N)) }
        }
        #[inline(always)]
        fn has_bit(a: __m512i, bit: i32) -> __mmask16 {
            unsafe { _mm512_test_epi32_mask(a, _mm512_set1_epi32(bit)) }
        }
        #[inline(always)]
        fn to_f(a: __m512i) -> __m512 {
            unsafe { _mm512_cvtepi32_ps(a) }
        }
        #[inline(always)]
        fn div(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_div_ps(a, b) }
        }
        #[inline(always)]
        fn gt(a: __m512, b: __m512) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b) }
        }
        #[inline(always)]
        fn not_le(a: __m512, b: __m512) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_NLE_UQ>(a, b) }
        }
        #[inline(always)]
        fn is_nan(a: __m512) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a) }
        }
        #[inline(always)]
        fn and_m(a: __mmask16, b: __mmask16) -> __mmask16 {
            a & b
        }
        #[inline(always)]
        fn any(m: __mmask16) -> bool {
            m != 0
        }
        #[inline(always)]
        fn neg(a: __m512) -> __m512 {
            unsafe { _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(i32::MIN))) }
        }
        #[inline(always)]
        fn trunc_i(a: __m512) -> __m512i {
            unsafe { _mm512_cvttps_epi32(a) }
        }
        #[inline(always)]
        fn rotate_up(v: __m512) -> __m512 {
            unsafe {
                let up = _mm512_setr_epi32(15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
                _mm512_permutexvar_ps(up, v)
            }
        }
        #[inline(always)]
        fn blend_first(rest: __m512, first: __m512) -> __m512 {
            unsafe { _mm512_mask_blend_ps(1, rest, first) }
        }
    }
}

/// f32 lanes with operators, so formulas read as formulas; the evaluation order is Rust's (left to
/// right as written, no reassociation).
#[derive(Copy, Clone)]
pub struct Vf<S: Lanes>(pub S::F);

/// i32 lanes with wrapping operators.
#[derive(Copy, Clone)]
pub struct Vi<S: Lanes>(pub S::I);

impl<S: Lanes> Vf<S> {
    #[inline(always)]
    pub fn splat(x: f32) -> Self {
        Vf(S::splat(x))
    }
    /// The first `LANES` values of `s`.
    #[inline(always)]
    pub fn load(s: &[f32]) -> Self {
        Vf(S::load(s))
    }
    /// Into the first `LANES` values of `out`.
    #[inline(always)]
    pub fn store(self, out: &mut [f32]) {
        S::store(self.0, out)
    }
    #[inline(always)]
    pub fn gt(self, o: Self) -> S::M {
        S::gt(self.0, o.0)
    }
    /// `!(self <= o)`: true where either is NaN.
    #[inline(always)]
    pub fn not_le(self, o: Self) -> S::M {
        S::not_le(self.0, o.0)
    }
    #[inline(always)]
    pub fn is_nan(self) -> S::M {
        S::is_nan(self.0)
    }
    /// Truncated to i32 as [`Lanes::trunc_i`] does.
    #[inline(always)]
    pub fn trunc(self) -> Vi<S> {
        Vi(S::trunc_i(self.0))
    }
    #[inline(always)]
    pub fn min(self, o: Self) -> Self {
        Vf(S::min(self.0, o.0))
    }
    #[inline(always)]
    pub fn max(self, o: Self) -> Self {
        Vf(S::max(self.0, o.0))
    }
    #[inline(always)]
    pub fn abs(self) -> Self {
        Vf(S::abs(self.0))
    }
    #[inline(always)]
    pub fn sqrt(self) -> Self {
        Vf(S::sqrt(self.0))
    }
    #[inline(always)]
    pub fn lt(self, o: Self) -> S::M {
        S::lt(self.0, o.0)
    }
    /// `self` with its sign flipped where bit 31 of `bits` is set.
    #[inline(always)]
    pub fn flip(self, bits: Vi<S>) -> Self {
        Vf(S::xor_sign(self.0, bits.0))
    }
    #[inline(always)]
    pub fn select(m: S::M, a: Self, b: Self) -> Self {
        Vf(S::select(m, a.0, b.0))
    }
}

/// The sign bit flipped (also for zeros and NaN).
impl<S: Lanes> std::ops::Neg for Vf<S> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Vf(S::neg(self.0))
    }
}

impl<S: Lanes> Vi<S> {
    #[inline(always)]
    pub fn splat(x: i32) -> Self {
        Vi(S::splat_i(x))
    }
    /// The first `LANES` values of `s`.
    #[inline(always)]
    pub fn load(s: &[i32]) -> Self {
        Vi(S::load_i(s))
    }
    #[inline(always)]
    pub fn shr<const N: i32>(self) -> Self {
        Vi(S::shr_i::<N>(self.0))
    }
    #[inline(always)]
    pub fn shl<const N: i32>(self) -> Self {
        Vi(S::shl_i::<N>(self.0))
    }
    #[inline(always)]
    pub fn has_bit(self, bit: i32) -> S::M {
        S::has_bit(self.0, bit)
    }
    #[inline(always)]
    pub fn to_f(self) -> Vf<S> {
        Vf(S::to_f(self.0))
    }
    #[inline(always)]
    pub fn select(m: S::M, a: Self, b: Self) -> Self {
        Vi(S::select_i(m, a.0, b.0))
    }
}

macro_rules! binary {
    ($ty:ident, $tr:ident, $method:ident, $prim:ident) => {
        impl<S: Lanes> $tr for $ty<S> {
            type Output = $ty<S>;
            #[inline(always)]
            fn $method(self, o: Self) -> Self {
                $ty(S::$prim(self.0, o.0))
            }
        }
    };
}

binary!(Vf, Add, add, add);
binary!(Vf, Sub, sub, sub);
binary!(Vf, Mul, mul, mul);
binary!(Vf, Div, div, div);
binary!(Vi, Add, add, add_i);
binary!(Vi, Mul, mul, mul_i);
binary!(Vi, BitXor, bitxor, xor_i);
binary!(Vi, BitAnd, bitand, and_i);
