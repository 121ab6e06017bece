//! `map.Glaciate(strength = 0.2, includeNegative = false)`: deepens valleys and sharpens peaks with
//! the original's fixed height curve.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use geogen_diag::codes;
use geogen_render::raster::{saturate, HEIGHT_UNITS};
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::pointwise;
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Isa;
use geogen_render::rows::for_each_row;

/// Samples of the original's profile P.
const SAMPLES: usize = 32767;
/// Heights (in units) this close below 1 still count as 1 unit: an f32 height k/32767 times 32767
/// is k only within about 0.002.
const UNIT_TOLERANCE: f64 = 1e-3;

#[derive(Clone, Debug, PartialEq)]
pub struct Glaciate {
    pub strength: f64,
    pub include_negative: bool,
}

/// Sample `i` of the original's profile in height units: P(0) = 0 and
/// P(i) = 1 + (1 − sin((N − 1 − i) / N × π/2))^(0.7 + 2 × strength) × 32766 for 0 < i < N.
fn sample(strength: f64, i: usize) -> f64 {
    if i == 0 {
        return 0.0;
    }
    let n = SAMPLES as f64;
    let exponent = 0.7 + 2.0 * strength;
    let angle = (n - 1.0 - i as f64) / n * std::f64::consts::FRAC_PI_2;
    1.0 + libm::pow(1.0 - libm::sin(angle), exponent) * 32766.0
}

/// The original's profile in height units, all N samples.
#[cfg(test)]
fn profile(strength: f64) -> Vec<f64> {
    (0..SAMPLES).map(|i| sample(strength, i)).collect()
}

/// `table` (height units) at the real index `index`, linearly interpolated, as a height: the
/// definition [`Segments::at`] computes faster (kept for the tests).
#[cfg(test)]
fn interpolate(table: &[f64], index: f64) -> f32 {
    let last = table.len() - 1;
    let index = index.clamp(0.0, last as f64);
    let i = (libm::floor(index) as usize).min(last.saturating_sub(1));
    let fraction = index - i as f64;
    let (a, b) = (table[i], table[(i + 1).min(last)]);
    saturate(((a + (b - a) * fraction) / HEIGHT_UNITS) as f32)
}

/// A table of samples as its segments `(a, b − a)` (the sample and the step to the next one),
/// so a pixel reads one pair and does no subtraction: the same operands, so the same bits as
/// [`interpolate`] (the table has at least two samples).
struct Segments {
    pairs: Vec<[f64; 2]>,
    /// The last index, as a real.
    last: f64,
}

impl Segments {
    fn new(table: &[f64]) -> Segments {
        debug_assert!(table.len() >= 2);
        let pairs = table.windows(2).map(|w| [w[0], w[1] - w[0]]).collect();
        Segments { pairs, last: (table.len() - 1) as f64 }
    }

    /// The table at the real `index`, linearly interpolated, as a height. For an index clamped
    /// into [0, last] the truncating conversion is `floor` (and maps NaN to 0 like `floor(NaN)
    /// as usize`), the segment the last index falls in is the one before it, as in the
    /// definition.
    #[inline(always)]
    fn at(&self, index: f64) -> f32 {
        let index = index.clamp(0.0, self.last);
        let i = (index as usize).min(self.pairs.len() - 1);
        let fraction = index - i as f64;
        let [a, step] = self.pairs[i];
        saturate(((a + step * fraction) / HEIGHT_UNITS) as f32)
    }
}

/// Samples of the profile computed per claim by [`Filling::help`].
const CHUNK: usize = 512;
const CHUNKS: usize = SAMPLES.div_ceil(CHUNK);

/// The profile of one `strength` being computed by whoever needs it: callers claim chunks of
/// samples in turn, so bands asking at the same time share the work instead of each computing the
/// whole table, and a lone caller spreads it over the thread pool. Every sample depends on its
/// index only, so who computes it does not change a bit.
struct Filling {
    strength: f64,
    include_negative: bool,
    /// The bits of each sample, written once by the caller that claimed its chunk.
    samples: Vec<AtomicU64>,
    /// The next chunk to claim.
    next: AtomicUsize,
    /// Chunks finished.
    done: AtomicUsize,
    segments: OnceLock<Arc<Segments>>,
}

impl Filling {
    fn new(strength: f64, include_negative: bool) -> Filling {
        Filling {
            strength,
            include_negative,
            samples: (0..SAMPLES).map(|_| AtomicU64::new(0)).collect(),
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            segments: OnceLock::new(),
        }
    }

    /// Computes unclaimed chunks until none is left. Straight-line work between claims (no
    /// waiting, no nested parallelism), so every claimed chunk is finished.
    fn help(&self) {
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= CHUNKS {
                return;
            }
            for i in c * CHUNK..((c + 1) * CHUNK).min(SAMPLES) {
                self.samples[i].store(sample(self.strength, i).to_bits(), Ordering::Relaxed);
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }

    /// The segments, once every chunk is computed (by this caller, the pool, or other callers).
    fn segments(&self) -> Arc<Segments> {
        if let Some(made) = self.segments.get() {
            return Arc::clone(made);
        }
        if self.next.load(Ordering::Relaxed) < CHUNKS {
            use rayon::prelude::*;
            (0..rayon::current_num_threads().min(CHUNKS)).into_par_iter().for_each(|_| self.help());
        }
        // The chunks others claimed are being finished (a chunk is a few tens of microseconds).
        while self.done.load(Ordering::Acquire) < CHUNKS {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
        // Building the segments is straight-line too, so waiting on the cell cannot deadlock.
        Arc::clone(self.segments.get_or_init(|| {
            let p: Vec<f64> = self.samples.iter().map(|v| f64::from_bits(v.load(Ordering::Relaxed))).collect();
            Arc::new(if self.include_negative {
                // The odd mirror image of P over [−32767, 32767]: 2N − 1 samples, P(0) = 0 in the middle.
                let mirrored: Vec<f64> = p.iter().rev().map(|v| 0.0 - v).chain(p.iter().skip(1).copied()).collect();
                Segments::new(&mirrored)
            } else {
                Segments::new(&p)
            })
        }))
    }
}

/// The segments of the curve for `strength` (mirrored for `include_negative`), made once per
/// pair and shared: a render asks for them once per band of rows (Glaciate is row-local), and
/// computing the 32767 samples takes a few milliseconds of one core. A handful of pairs are kept.
fn segments(strength: f64, include_negative: bool) -> Arc<Segments> {
    type Cache = Vec<((u64, bool), Arc<Filling>)>;
    static CACHE: Mutex<Cache> = Mutex::new(Vec::new());
    let key = (strength.to_bits(), include_negative);
    let filling = {
        let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match cache.iter().find(|(k, _)| *k == key) {
            Some((_, found)) => Arc::clone(found),
            None => {
                if cache.len() >= 8 {
                    cache.remove(0);
                }
                let made = Arc::new(Filling::new(strength, include_negative));
                cache.push((key, Arc::clone(&made)));
                made
            }
        }
    };
    filling.segments()
}

impl Declared for Glaciate {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Glaciate",
        receiver: Receiver::Method,
        params: &[
            Param::new("strength", Kind::Range { min: 0.0, max: 1.0, code: codes::GGE2715 }).or(0.2),
            Param::new("includeNegative", Kind::Boolean).or_bool(false),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "Lowers low land and keeps the peaks, like glaciers widening valleys: heights h in \
                  [1/32767, 1] become P(32767h − 1) / 32767, the original's curve P(0) = 0, P(i) = 1 + \
                  (1 − sin((32766 − i)/32767 × π/2))^(0.7 + 2 strength) × 32766, interpolated between \
                  its samples (the original rounds each to an integer). With `includeNegative` the curve \
                  is mirrored over [−1, 1], as the original applies it. `strength` in [0, 1] (GGE2715).",
        examples: &[
            Example {
                // strength 0.15: exponent 1, so P(i) = 1 + (1 − sin((32766 − i)/32767 × π/2)) × 32766.
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Glaciate(0.15);",
                size: (5, 1),
                expect: &[(0, 0, 0.0), (1, 0, 0.076_148_66), (2, 0, 0.292_914_8), (4, 0, 1.0)],
            },
            Example {
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Glaciate();",
                size: (5, 1),
                expect: &[(1, 0, 0.058_865_87), (2, 0, 0.259_070_6), (4, 0, 1.0)],
            },
            Example {
                // Mirrored over [−1, 1]: the curve has 65533 samples, index (h + 1)/2 × 65532.
                script: "yield HeightMap.Gradient([0, 0], [8, 0], -1, 1).Glaciate(0.15, true);",
                size: (9, 1),
                expect: &[(0, 0, -1.0), (2, 0, -0.292_931_75), (4, 0, 0.0), (6, 0, 0.292_931_75), (8, 0, 1.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(
            Glaciate { strength: call.number("strength")?, include_negative: call.boolean("includeNegative")? },
            &[],
        )
    }
}

impl Operation for Glaciate {
    fn name(&self) -> &str {
        "HeightMap.Glaciate"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}", self.strength, self.include_negative)
    }
    /// Pointwise: every pixel's new height depends on its old one only.
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let curve = segments(self.strength, self.include_negative);
        let negative = self.include_negative;
        match target {
            Object::Map(map) => {
                let isa = Isa::best();
                for_each_row(map, |_, _, row| glaciate_row(isa, &curve, negative, row));
                Ok(())
            }
            profile => pointwise::apply(profile, |h| glaciated(&curve, negative, h)),
        }
    }
}

/// One height glaciated: the definition.
#[inline(always)]
fn glaciated(curve: &Segments, include_negative: bool, h: f32) -> f32 {
    if include_negative {
        // A height's index is (h + 1)/2 × (2N − 2), as TransformHeights places it.
        curve.at((f64::from(h) + 1.0) / 2.0 * curve.last)
    } else {
        // Heights from 1 unit up: index 32767h − 1 (TransformHeights over [1, 32767] with
        // N samples); lower ones are left alone.
        let units = f64::from(h) * HEIGHT_UNITS;
        if units < 1.0 - UNIT_TOLERANCE {
            h
        } else {
            curve.at(units - 1.0)
        }
    }
}

/// A row glaciated on `isa` (the tests force each): [`glaciated`] for every height.
fn glaciate_row(isa: Isa, curve: &Segments, include_negative: bool, row: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && isa.is_available() {
        // SAFETY: AVX2 is available (checked just above).
        let done = unsafe { avx2::glaciate_row(curve, include_negative, row) };
        for h in &mut row[done..] {
            *h = glaciated(curve, include_negative, *h);
        }
        return;
    }
    let _ = isa;
    for h in row.iter_mut() {
        *h = glaciated(curve, include_negative, *h);
    }
}

/// [`glaciated`] four heights at a time in `f64` lanes: the same operations in the same order
/// (each lane's pair of the table read with one load), so the same bits. The lanes differ from the scalar code
/// only on the way for a NaN height (the clamp sends it to index 0 instead of keeping it), whose
/// result both give as 0 (`saturate`).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{Segments, HEIGHT_UNITS, UNIT_TOLERANCE};

    /// Glaciates the longest prefix of `row` that is a multiple of four heights; returns its length.
    ///
    /// # Safety
    /// AVX2 must be available.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn glaciate_row(curve: &Segments, include_negative: bool, row: &mut [f32]) -> usize {
        let n = row.len() / 4 * 4;
        let pairs = curve.pairs.as_ptr().cast::<f64>();
        let last = _mm256_set1_pd(curve.last);
        let last_pair = _mm_set1_epi32(curve.pairs.len() as i32 - 1);
        let zero = _mm256_setzero_pd();
        let units = _mm256_set1_pd(HEIGHT_UNITS);
        let one = _mm256_set1_pd(1.0);
        let keep_below = _mm256_set1_pd(1.0 - UNIT_TOLERANCE);
        for chunk in row[..n].chunks_exact_mut(4) {
            // SAFETY: four heights in the chunk; AVX2 is available (the caller's).
            unsafe {
                let h32 = _mm_loadu_ps(chunk.as_ptr());
                let h = _mm256_cvtps_pd(h32);
                let (index, keep) = if include_negative {
                    // (h + 1) / 2 × last: halving is exact, so a product by 0.5 gives the quotient.
                    (_mm256_mul_pd(_mm256_mul_pd(_mm256_add_pd(h, one), _mm256_set1_pd(0.5)), last), _mm_setzero_ps())
                } else {
                    let u = _mm256_mul_pd(h, units);
                    // The comparison's all-ones lanes convert to NaNs with the sign bit set, its
                    // zero lanes to +0: the sign bits are the mask `blendv` reads.
                    let keep = _mm256_cvtpd_ps(_mm256_cmp_pd::<_CMP_LT_OQ>(u, keep_below));
                    (_mm256_sub_pd(u, one), keep)
                };
                // clamp(0, last); a NaN becomes 0 here (max returns its second operand), fixed below.
                let clamped = _mm256_min_pd(_mm256_max_pd(index, zero), last);
                let i = _mm_min_epi32(_mm256_cvttpd_epi32(clamped), last_pair);
                let fraction = _mm256_sub_pd(clamped, _mm256_cvtepi32_pd(i));
                // Each lane's pair `[a, step]` with one 16-byte load (two gathers of single values
                // cost about twice as much on AMD Zen 3), transposed by in-lane unpacks.
                let mut at = [0i32; 4];
                _mm_storeu_si128(at.as_mut_ptr().cast(), i);
                let pair = |lane: usize| _mm_loadu_pd(pairs.add(2 * at[lane] as usize));
                let (even, odd) = (
                    _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(pair(0)), pair(2)), // a₀ s₀ a₂ s₂
                    _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(pair(1)), pair(3)), // a₁ s₁ a₃ s₃
                );
                let (a, step) = (_mm256_unpacklo_pd(even, odd), _mm256_unpackhi_pd(even, odd));
                let value = _mm256_div_pd(_mm256_add_pd(a, _mm256_mul_pd(step, fraction)), units);
                // saturate: clamp to [−1, 1], NaN (only from a NaN height) to 0.
                let v = _mm_max_ps(_mm_min_ps(_mm256_cvtpd_ps(value), _mm_set1_ps(1.0)), _mm_set1_ps(-1.0));
                let nan = _mm_cmpunord_ps(h32, h32);
                let v = _mm_andnot_ps(nan, v);
                // Heights below one unit are kept (never a NaN: its comparison is false).
                let out = _mm_blendv_ps(v, h32, keep);
                _mm_storeu_ps(chunk.as_mut_ptr(), out);
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every f32 height in [-1, 1] with a few low mantissa patterns, the extremes and NaN: the
    /// segments give the bits of the definition, on both curves.
    #[test]
    fn segments_equal_the_interpolation_of_the_table() {
        for strength in [0.0, 0.2, 0.15, 1.0] {
            let p = profile(strength);
            let mirrored: Vec<f64> = p.iter().rev().map(|v| 0.0 - v).chain(p.iter().skip(1).copied()).collect();
            for (table, negative) in [(&p, false), (&mirrored, true)] {
                let curve = segments(strength, negative);
                let last = (table.len() - 1) as f64;
                let mut indices: Vec<f64> = vec![f64::NAN, -1.0, -0.0, 0.0, last - 1.0, last, last + 0.5, 1e300];
                let mut x = 0x9e37_79b9u32;
                for _ in 0..20_000 {
                    x = geogen_random::hash1(x);
                    let h = (x >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0;
                    indices.push(f64::from(h) * HEIGHT_UNITS - 1.0);
                    indices.push((f64::from(h) + 1.0) / 2.0 * last);
                }
                for k in 0..=table.len() {
                    indices.push(k as f64);
                }
                for index in indices {
                    assert_eq!(
                        curve.at(index).to_bits(),
                        interpolate(table, index).to_bits(),
                        "strength {strength}, negative {negative}, index {index}"
                    );
                }
            }
        }
    }

    /// The AVX2 row gives the bits of the scalar definition for heights all over [−1, 1], at and
    /// around the one-unit threshold, signed zeros, infinities, out-of-range heights and NaN, in
    /// rows whose lengths leave every tail length.
    #[test]
    fn avx2_row_equals_the_scalar_row() {
        let mut heights: Vec<f32> = vec![f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.0, -1.0];
        heights.extend([1.5, -2.0, f32::MAX, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-45, -1e-45]);
        for k in -3..=3 {
            let unit = 1.0 / 32767.0f32;
            heights.push(unit + k as f32 * f32::EPSILON * unit);
            heights.push((1.0 - UNIT_TOLERANCE) as f32 / 32767.0 + k as f32 * 1e-9);
        }
        let mut x = 0x2545_f491u32;
        for _ in 0..40_000 {
            x = geogen_random::hash1(x);
            heights.push((x >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0);
            heights.push(f32::from_bits(x) % 1.0);
        }
        for strength in [0.0, 0.05, 0.2, 1.0] {
            for negative in [false, true] {
                let curve = segments(strength, negative);
                for len in [heights.len(), 1, 2, 3, 5, 7] {
                    let mut scalar = heights[..len].to_vec();
                    let mut vector = scalar.clone();
                    glaciate_row(Isa::Scalar, &curve, negative, &mut scalar);
                    glaciate_row(Isa::Avx2, &curve, negative, &mut vector);
                    for (i, (s, v)) in scalar.iter().zip(&vector).enumerate() {
                        assert_eq!(
                            s.to_bits(),
                            v.to_bits(),
                            "strength {strength}, negative {negative}, h {}",
                            heights[i]
                        );
                    }
                }
            }
        }
    }
}
