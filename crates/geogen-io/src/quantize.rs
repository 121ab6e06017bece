//! Height → integer sample conversions.
//!
//! Every integer format goes through these two functions, so the value mappings documented in the crate
//! root hold for PNG16, R16 and PNG8 alike. Both are *exact*: they round the mathematically exact
//! product, not an `f32` approximation of it, so `h = -1e-30` really lands below the midpoint.
//!
//! The implementations avoid `f32::round`/`floor` (library calls on baseline x86-64, which stop the
//! loops from vectorising) and use only conversions, comparisons and `f64` arithmetic that is exact for
//! every `f32` input, so they are branch-free and give the same bits on every platform.

/// Replaces NaN by 0 and clamps to [-1, 1]: the domain every quantiser works on.
///
/// Written as a select rather than `f32::clamp` alone because `clamp` passes NaN through, and
/// `max`/`min` would silently turn NaN into -1.
#[inline]
pub fn sanitize(h: f32) -> f32 {
    if h.is_nan() {
        0.0
    } else {
        h.clamp(-1.0, 1.0)
    }
}

/// The 16-bit sample of a height: `round(h × 32767) + 32767`, with `h` clamped to [-1, 1], NaN read as 0
/// and `round` rounding halves away from zero. So -1 → 0, 0 → 32767, 1 → 65534 (65535 is never produced),
/// exactly as the original GeoGen writes its PNGs.
#[inline]
pub fn to_u16(h: f32) -> u16 {
    // `h` has a 24-bit significand and 32767 < 2^15, so the f64 product is exact.
    let x = f64::from(sanitize(h)) * 32767.0;
    // |x| <= 32767: truncation is exact and so is the fractional part.
    let t = x as i32;
    let frac = x - f64::from(t);
    // Round half away from zero: bump the magnitude when the dropped part is at least one half.
    let r = t + i32::from(frac >= 0.5) - i32::from(frac <= -0.5);
    (r + 32767) as u16
}

/// The 8-bit sample of a height: `round((h + 1) / 2 × 255)`, with `h` clamped to [-1, 1] and NaN read as 0.
/// So -1 → 0, 0 → 128 (127.5 rounds up), 1 → 255; a tiny negative height gives 127.
#[inline]
pub fn to_u8(h: f32) -> u8 {
    // (h + 1) / 2 × 255 = 127.5 + 127.5·h is never negative, so "half away from zero" is "half up":
    // floor(127.5 + 127.5·h + 0.5) = 128 + floor(127.5·h). Computing it this way avoids forming h + 1,
    // which would round away the low bits of tiny heights. 127.5·h is exact in f64.
    let x = f64::from(sanitize(h)) * 127.5;
    let t = x as i32; // rounds toward zero; floor differs for negative non-integers
    let floor = t - i32::from(f64::from(t) > x);
    (128 + floor) as u8
}

/// Quantises a run of heights to 16-bit big-endian bytes (PNG sample order). `out.len()` must be
/// `2 × heights.len()`.
pub fn u16_be(heights: &[f32], out: &mut [u8]) {
    u16_bytes::<true>(heights, out, simd_available());
}

/// Quantises a run of heights to 16-bit little-endian bytes (R16 sample order). `out.len()` must be
/// `2 × heights.len()`.
pub fn u16_le(heights: &[f32], out: &mut [u8]) {
    u16_bytes::<false>(heights, out, simd_available());
}

/// Whether the AVX2 build of the 16-bit quantiser runs in this process.
fn simd_available() -> bool {
    geogen_simd::enabled(geogen_simd::Isa::Avx2)
}

/// [`to_u16`] of every height as bytes, big-endian if `BIG`, eight at a time with AVX2 when `simd`
/// (which the caller checked is available): the same IEEE operations on `f64` lanes, so the same bits.
fn u16_bytes<const BIG: bool>(heights: &[f32], out: &mut [u8], simd: bool) {
    assert_eq!(out.len(), heights.len() * 2, "two bytes per height");
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if simd {
        // SAFETY: `simd` is only true where AVX2 was detected (see `simd_available` and the tests).
        done = unsafe { u16_avx2::<BIG>(heights, out) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    for (h, o) in heights[done..].iter().zip(out[2 * done..].chunks_exact_mut(2)) {
        let v = to_u16(*h);
        o.copy_from_slice(&if BIG { v.to_be_bytes() } else { v.to_le_bytes() });
    }
}

/// The whole groups of eight heights of [`u16_bytes`]; returns how many heights it converted.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn u16_avx2<const BIG: bool>(heights: &[f32], out: &mut [u8]) -> usize {
    use std::arch::x86_64::*;
    // The steps of `to_u16`: NaN → 0 and the clamp on eight f32 lanes (exact, and ±1 convert exactly,
    // so it is the same as doing them in f64), then on four f64 lanes × 32767 (exact), truncate
    // (exact), add ±1 where the dropped fraction is at least one half; the + 32767 on 16-bit integers.
    #[inline(always)]
    fn lanes(h: __m128) -> __m128i {
        // SAFETY: the intrinsics need AVX2, which is enabled for the enclosing function, and this
        // helper is inlined into it.
        unsafe {
            let x = _mm256_mul_pd(_mm256_cvtps_pd(h), _mm256_set1_pd(32767.0));
            let t = _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x);
            let frac = _mm256_sub_pd(x, t);
            let one = _mm256_set1_pd(1.0);
            let up = _mm256_and_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(frac, _mm256_set1_pd(0.5)), one);
            let down = _mm256_and_pd(_mm256_cmp_pd::<_CMP_LE_OQ>(frac, _mm256_set1_pd(-0.5)), one);
            _mm256_cvtpd_epi32(_mm256_sub_pd(_mm256_add_pd(t, up), down))
        }
    }
    /// Heights between the one prefetched and the one converted.
    const PREFETCH_AHEAD: usize = 512;
    let groups = heights.len() / 8;
    let swap = _mm_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    for g in 0..groups {
        // SAFETY: 8 heights from 8·g and 16 bytes from 16·g are inside the slices (`out` holds two
        // bytes per height, asserted by the caller).
        unsafe {
            // The heights come from DRAM and the hardware prefetcher stops at every 4 KiB page: ask
            // for the line 2 KiB ahead (a hint: an address past the slice is never read).
            _mm_prefetch::<_MM_HINT_T0>(heights.as_ptr().wrapping_add(8 * g + PREFETCH_AHEAD).cast());
            let v = _mm256_loadu_ps(heights.as_ptr().add(8 * g));
            let v = _mm256_and_ps(v, _mm256_cmp_ps::<_CMP_ORD_Q>(v, v));
            let v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-1.0)), _mm256_set1_ps(1.0));
            let lo = lanes(_mm256_castps256_ps128(v));
            let hi = lanes(_mm256_extractf128_ps::<1>(v));
            // Every rounded value is in -32767..=32767: the signed saturation never applies, and the
            // wrapping 16-bit + 32767 gives the sample, 0..=65534.
            let mut packed = _mm_add_epi16(_mm_packs_epi32(lo, hi), _mm_set1_epi16(32767));
            if BIG {
                packed = _mm_shuffle_epi8(packed, swap);
            }
            _mm_storeu_si128(out.as_mut_ptr().add(16 * g).cast(), packed);
        }
    }
    groups * 8
}

/// Quantises a run of heights to 8-bit samples. `out.len()` must be `heights.len()`.
pub fn u8s(heights: &[f32], out: &mut [u8]) {
    debug_assert_eq!(out.len(), heights.len());
    for (h, o) in heights.iter().zip(out.iter_mut()) {
        *o = to_u8(*h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent reference: f64 `round` (half away from zero) of the exact product.
    fn ref_u16(h: f32) -> u16 {
        let h = if h.is_nan() { 0.0 } else { h.clamp(-1.0, 1.0) };
        ((f64::from(h) * 32767.0).round() as i32 + 32767) as u16
    }

    #[test]
    fn u16_anchors() {
        assert_eq!(to_u16(-1.0), 0);
        assert_eq!(to_u16(0.0), 32767);
        assert_eq!(to_u16(-0.0), 32767);
        assert_eq!(to_u16(1.0), 65534);
        assert_eq!(to_u16(0.5), 49151); // 16383.5 rounds away from zero → 16384
        assert_eq!(to_u16(-0.5), 16383); // -16383.5 → -16384
    }

    #[test]
    fn u16_clamps_and_handles_nan() {
        assert_eq!(to_u16(1.5), 65534);
        assert_eq!(to_u16(-1.5), 0);
        assert_eq!(to_u16(f32::INFINITY), 65534);
        assert_eq!(to_u16(f32::NEG_INFINITY), 0);
        assert_eq!(to_u16(f32::NAN), 32767);
        assert_eq!(to_u16(-f32::NAN), 32767);
    }

    #[test]
    fn u16_tiny_values() {
        for h in [1e-30_f32, -1e-30, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-45, -1e-45] {
            assert_eq!(to_u16(h), 32767, "h = {h:e}");
        }
        // Either side of the first rounding step, one f32 ulp apart.
        let half_step = 0.5_f32 / 32767.0;
        for h in [half_step, f32::from_bits(half_step.to_bits() - 1), f32::from_bits(half_step.to_bits() + 1)] {
            assert_eq!(to_u16(h), ref_u16(h), "h = {h:e}");
            assert_eq!(to_u16(-h), ref_u16(-h), "h = {:e}", -h);
        }
    }

    #[test]
    fn u16_matches_reference_on_many_values() {
        // Every 16-bit level's exact midpoint neighbourhood, plus a dense sweep.
        for k in -32767_i32..32767 {
            let mid = (f64::from(k) + 0.5) / 32767.0;
            let m = mid as f32;
            for h in [m, f32::from_bits(m.to_bits().wrapping_sub(1)), f32::from_bits(m.to_bits() + 1)] {
                assert_eq!(to_u16(h), ref_u16(h), "h = {h:e}");
            }
        }
        for i in 0..=200_000 {
            let h = -1.2 + 2.4 * (i as f32) / 200_000.0;
            assert_eq!(to_u16(h), ref_u16(h), "h = {h:e}");
        }
    }

    #[test]
    fn u8_anchors_and_edges() {
        assert_eq!(to_u8(-1.0), 0);
        assert_eq!(to_u8(0.0), 128);
        assert_eq!(to_u8(1.0), 255);
        assert_eq!(to_u8(1.5), 255);
        assert_eq!(to_u8(-1.5), 0);
        assert_eq!(to_u8(f32::NAN), 128);
        assert_eq!(to_u8(1e-30), 128);
        assert_eq!(to_u8(-1e-30), 127); // 127.4999… rounds down
        assert_eq!(to_u8(0.5), 191); // 191.25
        assert_eq!(to_u8(-0.5), 64); // 63.75
                                     // Around the first step (real value 0.5 at h = -254/255, which no f32 hits exactly): for these
                                     // inputs f64 evaluates (h + 1) · 127.5 exactly, so it decides the side.
        let m = (-254.0_f64 / 255.0) as f32;
        for h in [f32::from_bits(m.to_bits() + 1), m, f32::from_bits(m.to_bits() - 1)] {
            let expected = u8::from((f64::from(h) + 1.0) * 127.5 >= 0.5);
            assert_eq!(to_u8(h), expected, "h = {h:e}");
        }
    }

    #[test]
    fn u8_matches_reference_where_f64_is_exact() {
        // For these inputs (h + 1) · 127.5 is exact in f64, so plain `round` is a valid reference.
        for i in 0..=100_000 {
            let h = -1.2 + 2.4 * (i as f32) / 100_000.0;
            let s = f64::from(h.clamp(-1.0, 1.0));
            let expected = ((s + 1.0) * 127.5).round() as u8;
            assert_eq!(to_u8(h), expected, "h = {h:e}");
        }
    }

    /// Heights that probe every step of `to_u16`: specials, the clamp, halves, and their neighbours.
    fn edge_heights() -> Vec<f32> {
        let mut hs = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7fc0_1234),
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1e-45,
            -1e-45,
            1.5,
            -1.5,
        ];
        for k in [-32767_i32, -32766, -16384, -1, 0, 1, 2, 16383, 32765, 32766] {
            let m = ((f64::from(k) + 0.5) / 32767.0) as f32;
            for bits in [m.to_bits().wrapping_sub(1), m.to_bits(), m.to_bits() + 1] {
                hs.push(f32::from_bits(bits));
                hs.push(-f32::from_bits(bits));
            }
        }
        let mut state = 0x9e37_79b9_u32;
        for i in 0..50_000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            // Arbitrary bit patterns, and values spread over [-1.2, 1.2].
            hs.push(if i % 2 == 0 { f32::from_bits(state) } else { (state as f32 / u32::MAX as f32) * 2.4 - 1.2 });
        }
        hs
    }

    #[test]
    fn simd_and_scalar_give_the_same_bytes() {
        let hs = edge_heights();
        let mut isas = vec![false];
        if simd_available() {
            isas.push(true);
        }
        // Every length up to a few groups of eight (the tails), and every alignment of the start.
        for start in 0..8 {
            for len in (0..40).chain([hs.len() - start]) {
                let line = &hs[start..start + len];
                let expected_be: Vec<u8> = line.iter().flat_map(|&h| to_u16(h).to_be_bytes()).collect();
                let expected_le: Vec<u8> = line.iter().flat_map(|&h| to_u16(h).to_le_bytes()).collect();
                for &simd in &isas {
                    let mut be = vec![0u8; len * 2];
                    let mut le = vec![0u8; len * 2];
                    u16_bytes::<true>(line, &mut be, simd);
                    u16_bytes::<false>(line, &mut le, simd);
                    assert!(be == expected_be, "big-endian, simd {simd}, start {start}, len {len}");
                    assert!(le == expected_le, "little-endian, simd {simd}, start {start}, len {len}");
                }
            }
        }
        for &h in &hs[..100] {
            assert_eq!(to_u16(h), ref_u16(h), "h = {h:e}");
        }
    }

    #[test]
    fn byte_orders() {
        let hs = [-1.0, 0.0, 1.0];
        let mut be = [0u8; 6];
        let mut le = [0u8; 6];
        u16_be(&hs, &mut be);
        u16_le(&hs, &mut le);
        assert_eq!(be, [0, 0, 0x7f, 0xff, 0xff, 0xfe]);
        assert_eq!(le, [0, 0, 0xff, 0x7f, 0xfe, 0xff]);
        let mut b = [0u8; 3];
        u8s(&hs, &mut b);
        assert_eq!(b, [0, 128, 255]);
    }
}
