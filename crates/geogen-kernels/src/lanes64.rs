//! f64 lanes: the [`Lanes`](crate::lanes::Lanes) idea for the kernels that compute in `f64`
//! (exact fixed-point sums, cubic interpolation of lattice values). The same three rules hold:
//! IEEE basic operations and exact ones only, each vector primitive lane by lane what its scalar
//! twin is, and the order of every operation fixed by the generic code. The types are the same
//! ones ([`Scalar`], [`Avx2`], [`Avx512`]) with half as many f64 lanes as f32 lanes: one, four,
//! eight.
//!
//! The few primitives that combine lanes ([`Lanes64::prefix`], [`Lanes64::sum`]) are only exact
//! where the kernels use them: on integer-valued `f64` whose partial sums stay below 2^53, where
//! every order of additions gives the same number.

pub use crate::lanes::Scalar;
#[cfg(target_arch = "x86_64")]
pub use crate::lanes::{Avx2, Avx512};

/// f64 lanes `D` and as many u32 lanes `W` (the bits of f32 values read beside them).
///
/// # Safety of the vector implementations
/// As for [`Lanes`](crate::lanes::Lanes): the vector implementations are instantiated only inside
/// `#[target_feature]` entry points of their level, run only where [`geogen_simd`] says the
/// process runs it. The pointer primitives are `unsafe`: their callers guarantee `D_LANES`
/// readable (or writable) values.
pub trait Lanes64: Copy + 'static {
    /// f64 lanes per vector.
    const D_LANES: usize;
    /// f64 lanes.
    type D: Copy;
    /// u32 lanes, `D_LANES` of them.
    type W: Copy;

    /// `x` in every lane.
    fn splat(x: f64) -> Self::D;
    /// Lane i holds `i` (0.0, 1.0, ...).
    fn iota() -> Self::D;
    /// # Safety
    /// `D_LANES` values are readable at `p`.
    unsafe fn load(p: *const f64) -> Self::D;
    /// # Safety
    /// `D_LANES` values are writable at `p`.
    unsafe fn store(p: *mut f64, v: Self::D);
    fn add(a: Self::D, b: Self::D) -> Self::D;
    fn sub(a: Self::D, b: Self::D) -> Self::D;
    fn mul(a: Self::D, b: Self::D) -> Self::D;
    /// Rounded toward zero (`roundpd` with truncation; −0.0 for a negative fraction).
    fn trunc(a: Self::D) -> Self::D;
    /// Inclusive prefix sums of the lanes (lane i: lanes 0..=i added); exact only on integers
    /// whose sums stay below 2^53 (see the module docs).
    fn prefix(a: Self::D) -> Self::D;
    /// The last lane in every lane.
    fn broadcast_last(a: Self::D) -> Self::D;
    /// Lane 0.
    fn first(a: Self::D) -> f64;
    /// The sum of the lanes; exact only on integers whose sums stay below 2^53.
    fn sum(a: Self::D) -> f64;
    /// `D_LANES` f32 values widened to f64 (exact), and their bits.
    ///
    /// # Safety
    /// `D_LANES` values are readable at `p`.
    unsafe fn load_f32(p: *const f32) -> (Self::D, Self::W);
    /// The lanes rounded to f32 (to nearest, as `as f32` does).
    ///
    /// # Safety
    /// `D_LANES` values are writable at `p`.
    unsafe fn store_f32(p: *mut f32, v: Self::D);
    /// `0` in every u32 lane.
    fn zero_w() -> Self::W;
    /// Per lane the larger of `acc` and the magnitude bits of `bits` (`bits & 0x7fff_ffff`).
    fn max_magnitude(acc: Self::W, bits: Self::W) -> Self::W;
    /// The largest u32 lane.
    fn max_of(w: Self::W) -> u32;
}

/// 1.5 × 2^52: adding it rounds an `f64` below 2^51 in magnitude to an integer.
const MAGIC: f64 = 6_755_399_441_055_744.0;

impl Lanes64 for Scalar {
    const D_LANES: usize = 1;
    type D = f64;
    type W = u32;

    #[inline(always)]
    fn splat(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn iota() -> f64 {
        0.0
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> f64 {
        // SAFETY: the caller guarantees one readable value.
        unsafe { *p }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: f64) {
        // SAFETY: the caller guarantees one writable value.
        unsafe { *p = v }
    }
    #[inline(always)]
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
    #[inline(always)]
    fn sub(a: f64, b: f64) -> f64 {
        a - b
    }
    #[inline(always)]
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    #[inline(always)]
    fn trunc(a: f64) -> f64 {
        let magnitude = a.abs();
        if magnitude < 2_251_799_813_685_248.0 {
            // Below 2^51: round to nearest with MAGIC, then down when that went up.
            let nearest = (magnitude + MAGIC) - MAGIC;
            let down = if nearest > magnitude { nearest - 1.0 } else { nearest };
            down.copysign(a)
        } else {
            libm::trunc(a)
        }
    }
    #[inline(always)]
    fn prefix(a: f64) -> f64 {
        a
    }
    #[inline(always)]
    fn broadcast_last(a: f64) -> f64 {
        a
    }
    #[inline(always)]
    fn first(a: f64) -> f64 {
        a
    }
    #[inline(always)]
    fn sum(a: f64) -> f64 {
        a
    }
    #[inline(always)]
    unsafe fn load_f32(p: *const f32) -> (f64, u32) {
        // SAFETY: the caller guarantees one readable value.
        let h = unsafe { *p };
        (f64::from(h), h.to_bits())
    }
    #[inline(always)]
    unsafe fn store_f32(p: *mut f32, v: f64) {
        // SAFETY: the caller guarantees one writable value.
        unsafe { *p = v as f32 }
    }
    #[inline(always)]
    fn zero_w() -> u32 {
        0
    }
    #[inline(always)]
    fn max_magnitude(acc: u32, bits: u32) -> u32 {
        acc.max(bits & 0x7fff_ffff)
    }
    #[inline(always)]
    fn max_of(w: u32) -> u32 {
        w
    }
}

// SAFETY (every `unsafe` block below): the intrinsics need AVX/AVX2, which the dispatcher has
// detected before any code instantiated with `Avx2` runs; pointer loads and stores are unaligned,
// at the addresses the callers of the `unsafe` primitives vouch for.
#[cfg(target_arch = "x86_64")]
#[allow(
    clippy::undocumented_unsafe_blocks,
    reason = "each block is one intrinsic; the note above is the safety argument of them all"
)]
impl Lanes64 for Avx2 {
    const D_LANES: usize = 4;
    type D = std::arch::x86_64::__m256d;
    type W = std::arch::x86_64::__m128i;

    #[inline(always)]
    fn splat(x: f64) -> Self::D {
        unsafe { std::arch::x86_64::_mm256_set1_pd(x) }
    }
    #[inline(always)]
    fn iota() -> Self::D {
        unsafe { std::arch::x86_64::_mm256_setr_pd(0.0, 1.0, 2.0, 3.0) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self::D {
        unsafe { std::arch::x86_64::_mm256_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self::D) {
        unsafe { std::arch::x86_64::_mm256_storeu_pd(p, v) }
    }
    #[inline(always)]
    fn add(a: Self::D, b: Self::D) -> Self::D {
        unsafe { std::arch::x86_64::_mm256_add_pd(a, b) }
    }
    #[inline(always)]
    fn sub(a: Self::D, b: Self::D) -> Self::D {
        unsafe { std::arch::x86_64::_mm256_sub_pd(a, b) }
    }
    #[inline(always)]
    fn mul(a: Self::D, b: Self::D) -> Self::D {
        unsafe { std::arch::x86_64::_mm256_mul_pd(a, b) }
    }
    #[inline(always)]
    fn trunc(a: Self::D) -> Self::D {
        use std::arch::x86_64::*;
        unsafe { _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a) }
    }
    #[inline(always)]
    fn prefix(a: Self::D) -> Self::D {
        use std::arch::x86_64::*;
        unsafe {
            // Lanes moved up by one (lane 0 zero), added; then the low half added to the high.
            let shifted = _mm256_blend_pd::<0b0001>(_mm256_permute4x64_pd::<0b10_01_00_00>(a), _mm256_setzero_pd());
            let p = _mm256_add_pd(a, shifted);
            _mm256_add_pd(p, _mm256_permute2f128_pd::<0x08>(p, p))
        }
    }
    #[inline(always)]
    fn broadcast_last(a: Self::D) -> Self::D {
        unsafe { std::arch::x86_64::_mm256_permute4x64_pd::<0xff>(a) }
    }
    #[inline(always)]
    fn first(a: Self::D) -> f64 {
        unsafe { std::arch::x86_64::_mm256_cvtsd_f64(a) }
    }
    #[inline(always)]
    fn sum(a: Self::D) -> f64 {
        let mut lanes = [0.0f64; 4];
        unsafe { std::arch::x86_64::_mm256_storeu_pd(lanes.as_mut_ptr(), a) };
        (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    }
    #[inline(always)]
    unsafe fn load_f32(p: *const f32) -> (Self::D, Self::W) {
        use std::arch::x86_64::*;
        unsafe {
            let bits = _mm_loadu_si128(p.cast());
            (_mm256_cvtps_pd(_mm_castsi128_ps(bits)), bits)
        }
    }
    #[inline(always)]
    unsafe fn store_f32(p: *mut f32, v: Self::D) {
        use std::arch::x86_64::*;
        unsafe { _mm_storeu_ps(p, _mm256_cvtpd_ps(v)) }
    }
    #[inline(always)]
    fn zero_w() -> Self::W {
        unsafe { std::arch::x86_64::_mm_setzero_si128() }
    }
    #[inline(always)]
    fn max_magnitude(acc: Self::W, bits: Self::W) -> Self::W {
        use std::arch::x86_64::*;
        unsafe { _mm_max_epu32(acc, _mm_and_si128(bits, _mm_set1_epi32(0x7fff_ffff))) }
    }
    #[inline(always)]
    fn max_of(w: Self::W) -> u32 {
        let mut lanes = [0u32; 4];
        unsafe { std::arch::x86_64::_mm_storeu_si128(lanes.as_mut_ptr().cast(), w) };
        lanes.into_iter().max().unwrap_or(0)
    }
}

// SAFETY (every `unsafe` block below): the intrinsics need AVX-512F (and AVX2 for the u32 lanes),
// which the process's AVX-512 level has and the dispatcher has checked before any code
// instantiated with `Avx512` runs; pointer loads and stores are unaligned, at the addresses the
// callers of the `unsafe` primitives vouch for.
#[cfg(target_arch = "x86_64")]
#[allow(
    clippy::undocumented_unsafe_blocks,
    reason = "each block is one intrinsic; the note above is the safety argument of them all"
)]
impl Lanes64 for Avx512 {
    const D_LANES: usize = 8;
    type D = std::arch::x86_64::__m512d;
    type W = std::arch::x86_64::__m256i;

    #[inline(always)]
    fn splat(x: f64) -> Self::D {
        unsafe { std::arch::x86_64::_mm512_set1_pd(x) }
    }
    #[inline(always)]
    fn iota() -> Self::D {
        unsafe { std::arch::x86_64::_mm512_setr_pd(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self::D {
        unsafe { std::arch::x86_64::_mm512_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self::D) {
        unsafe { std::arch::x86_64::_mm512_storeu_pd(p, v) }
    }
    #[inline(always)]
    fn add(a: Self::D, b: Self::D) -> Self::D {
        unsafe { std::arch::x86_64::_mm512_add_pd(a, b) }
    }
    #[inline(always)]
    fn sub(a: Self::D, b: Self::D) -> Self::D {
        unsafe { std::arch::x86_64::_mm512_sub_pd(a, b) }
    }
    #[inline(always)]
    fn mul(a: Self::D, b: Self::D) -> Self::D {
        unsafe { std::arch::x86_64::_mm512_mul_pd(a, b) }
    }
    #[inline(always)]
    fn trunc(a: Self::D) -> Self::D {
        use std::arch::x86_64::*;
        unsafe { _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a) }
    }
    #[inline(always)]
    fn prefix(a: Self::D) -> Self::D {
        use std::arch::x86_64::*;
        // Lanes moved up by one, two and four (the low ones zero), added after each move.
        unsafe {
            let by1 = _mm512_maskz_permutexvar_pd(0xfe, _mm512_setr_epi64(0, 0, 1, 2, 3, 4, 5, 6), a);
            let p = _mm512_add_pd(a, by1);
            let by2 = _mm512_maskz_permutexvar_pd(0xfc, _mm512_setr_epi64(0, 0, 0, 1, 2, 3, 4, 5), p);
            let p = _mm512_add_pd(p, by2);
            let by4 = _mm512_maskz_permutexvar_pd(0xf0, _mm512_setr_epi64(0, 0, 0, 0, 0, 1, 2, 3), p);
            _mm512_add_pd(p, by4)
        }
    }
    #[inline(always)]
    fn broadcast_last(a: Self::D) -> Self::D {
        use std::arch::x86_64::*;
        unsafe { _mm512_permutexvar_pd(_mm512_set1_epi64(7), a) }
    }
    #[inline(always)]
    fn first(a: Self::D) -> f64 {
        use std::arch::x86_64::*;
        unsafe { _mm_cvtsd_f64(_mm512_castpd512_pd128(a)) }
    }
    #[inline(always)]
    fn sum(a: Self::D) -> f64 {
        let mut lanes = [0.0f64; 8];
        unsafe { std::arch::x86_64::_mm512_storeu_pd(lanes.as_mut_ptr(), a) };
        lanes.into_iter().sum()
    }
    #[inline(always)]
    unsafe fn load_f32(p: *const f32) -> (Self::D, Self::W) {
        use std::arch::x86_64::*;
        unsafe {
            let bits = _mm256_loadu_si256(p.cast());
            (_mm512_cvtps_pd(_mm256_castsi256_ps(bits)), bits)
        }
    }
    #[inline(always)]
    unsafe fn store_f32(p: *mut f32, v: Self::D) {
        use std::arch::x86_64::*;
        unsafe { _mm256_storeu_ps(p, _mm512_cvtpd_ps(v)) }
    }
    #[inline(always)]
    fn zero_w() -> Self::W {
        unsafe { std::arch::x86_64::_mm256_setzero_si256() }
    }
    #[inline(always)]
    fn max_magnitude(acc: Self::W, bits: Self::W) -> Self::W {
        use std::arch::x86_64::*;
        unsafe { _mm256_max_epu32(acc, _mm256_and_si256(bits, _mm256_set1_epi32(0x7fff_ffff))) }
    }
    #[inline(always)]
    fn max_of(w: Self::W) -> u32 {
        let mut lanes = [0u32; 8];
        unsafe { std::arch::x86_64::_mm256_storeu_si256(lanes.as_mut_ptr().cast(), w) };
        lanes.into_iter().max().unwrap_or(0)
    }
}
