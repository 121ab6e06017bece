//! `map.Stratify(strata, steepness = 0.5, smoothness = 0.5, includeNegative = false)`: terraces.

use geogen_diag::codes;
use geogen_render::raster::{saturate, HEIGHT_UNITS};
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use super::transform_heights::remap_heights;
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::blur::blur_centred_f64;

/// Entries of the terrace transfer function (the original's profile length, 32767).
pub const TERRACE_SAMPLES: usize = 32767;

const STRENGTH: Kind = Kind::Range { min: 0.0, max: 1.0, code: codes::GGE2715 };

#[derive(Clone, Debug, PartialEq)]
pub struct Stratify {
    pub strata: u32,
    pub steepness: f64,
    pub smoothness: f64,
    pub include_negative: bool,
}

/// The terrace transfer function (reference §4.7) as `TERRACE_SAMPLES` heights from 0 to 1:
/// `strata` equal strata, each a gentle ramp (a share f = 0.5 + 0.5·steepness of its length,
/// rising 1 − f of its height) then a steep one (the rest of the length, rising f), where a stratum
/// is N / (strata + f) long, so that a flat top of length f·N / (strata + f) remains; then smoothed
/// by a centred box blur of radius ⌊10·smoothness⌋ that divides by the number of samples it sums
/// (the original divided a sum of 2r samples by 2r + 1, shrinking the profile by 2r / (2r + 1)).
pub fn terrace_profile(strata: u32, steepness: f64, smoothness: f64) -> Vec<f64> {
    let n = f64::from(strata.max(1));
    let gentle_share = 0.5 + 0.5 * steepness;
    let steep_share = 1.0 - gentle_share;
    let stratum_length = TERRACE_SAMPLES as f64 / (n + gentle_share);
    let stratum_height = 1.0 / n;
    let gentle_length = gentle_share * stratum_length;
    let steep_length = steep_share * stratum_length;
    let values: Vec<f64> = (0..TERRACE_SAMPLES)
        .map(|i| {
            let x = i as f64;
            let k = libm::floor(x / stratum_length);
            if k >= n {
                return 1.0;
            }
            let base = k * stratum_height;
            let u = x - k * stratum_length;
            let h = if u < gentle_length {
                base + steep_share * stratum_height * (u / gentle_length)
            } else if steep_length > 0.0 {
                base + steep_share * stratum_height
                    + gentle_share * stratum_height * ((u - gentle_length) / steep_length)
            } else {
                base + stratum_height
            };
            h.min(1.0)
        })
        .collect();
    // ⌊10 × smoothness⌋ for smoothness in [0, 1]: 0 to 10.
    blur_centred_f64(&values, (10.0 * smoothness).clamp(0.0, 10.0) as usize)
}

impl Declared for Stratify {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Stratify",
        receiver: Receiver::Method,
        params: &[
            Param::new("strata", Kind::Range { min: 1.0, max: 100.0, code: codes::GGE2716 }),
            Param::new("steepness", STRENGTH).or(0.5),
            Param::new("smoothness", STRENGTH).or(0.5),
            Param::new("includeNegative", Kind::Boolean).or_bool(false),
        ],
        checks: &[],
        family: Family::Filter,
        summary: "Terraces: maps heights in (0, 1] (or [−1, 1] with includeNegative) through a staircase \
                  of `strata` (whole, in [1, 100], GGE2716) steps, each a gentle ramp then a steep rise; \
                  `steepness` in [0, 1] makes the rises steeper (1: vertical) and `smoothness` in \
                  [0, 1] rounds the edges (GGE2715). Positive heights stay positive. The smoothing \
                  averages over the samples it sums, where the original's shrank the staircase \
                  slightly.",
        examples: &[
            Example {
                // Two strata with vertical rises: a stratum is 32767 / 3 samples long, so heights
                // below 1/3 become the lowest positive height, up to 2/3 the middle terrace (0.5),
                // above it the top (1). A height of 0 stays.
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Stratify(2, 1, 0);",
                size: (5, 1),
                expect: &[(0, 0, 0.0), (1, 0, 1.0 / 32767.0), (2, 0, 0.5), (3, 0, 1.0), (4, 0, 1.0)],
            },
            Example {
                // One stratum, steepness 0.5: f = 0.75, the stratum is 32767 / 1.75 = 18724 samples
                // (gentle ramp over 14043 rising 0.25, steep over 4681 rising 0.75, then flat 1).
                // Height 0.25 reads position 8190.75 (= 0.25 × 32767 − 1): 0.25 × 8190.75 / 14043;
                // 0.5 reads 16382.5: 0.25 + 0.75 × (16382.5 − 14043) / 4681. The blur of radius 5
                // keeps ramps away from their corners unchanged.
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Stratify(1);",
                size: (5, 1),
                expect: &[
                    (1, 0, (0.25 * 8190.75 / 14043.0) as f32),
                    (2, 0, (0.25 + 0.75 * (16382.5 - 14043.0) / 4681.0) as f32),
                    (3, 0, 1.0),
                ],
            },
            Example {
                // With includeNegative the staircase spans [−1, 1]: height h reads position
                // (h + 1) / 2 × 32766 and the result is 2·T − 1; h = 0 reads 16383. At h = −1 the
                // blur (radius 5, the edge sample repeated) averages T(0) = 0 six times and
                // T(k) = 0.25·k / 14043 for k = 1..5: T = 0.25 × 15 / (11 × 14043).
                script: "yield HeightMap.Gradient([0, 0], [4, 0], -1, 1).Stratify(1, 0.5, 0.5, true);",
                size: (5, 1),
                expect: &[
                    (0, 0, (2.0 * (0.25 * 15.0 / (11.0 * 14043.0)) - 1.0) as f32),
                    (2, 0, (2.0 * (0.25 + 0.75 * (16383.0 - 14043.0) / 4681.0) - 1.0) as f32),
                    (4, 0, 1.0),
                ],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = Stratify {
            // In [1, 100] after the range check; truncated to whole strata as the original does.
            strata: call.number("strata")?.trunc().clamp(1.0, 100.0) as u32,
            steepness: call.number("steepness")?,
            smoothness: call.number("smoothness")?,
            include_negative: call.boolean("includeNegative")?,
        };
        rec.modify(op, &[])
    }
}

impl Operation for Stratify {
    fn name(&self) -> &str {
        "HeightMap.Stratify"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("{}, {}, {}, {}", self.strata, self.steepness, self.smoothness, self.include_negative)
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let lowest_positive = 1.0 / HEIGHT_UNITS;
        let table: Vec<f32> = terrace_profile(self.strata, self.steepness, self.smoothness)
            .into_iter()
            .map(|v| if self.include_negative { 2.0 * v - 1.0 } else { v.max(lowest_positive) } as f32)
            .collect();
        let min = if self.include_negative { -1.0 } else { lowest_positive as f32 };
        let last = table.len() - 1;
        remap_heights(target.as_map_mut()?, min, 1.0, table.len() as u64, |position| {
            let floor = libm::floor(position);
            let i = (floor.max(0.0) as usize).min(last);
            let t = position - floor;
            if t == 0.0 || i == last {
                return table[i];
            }
            let (a, b) = (f64::from(table[i]), f64::from(table[i + 1]));
            saturate((a + (b - a) * t) as f32)
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_staircase_rises_from_0_to_1_and_steepness_1_gives_flat_steps() {
        for (strata, steepness, smoothness) in [(1, 0.5, 0.5), (4, 0.0, 1.0), (7, 1.0, 0.0), (100, 0.3, 0.2)] {
            let t = terrace_profile(strata, steepness, smoothness);
            assert_eq!(t.len(), TERRACE_SAMPLES);
            assert!(t.windows(2).all(|w| w[1] >= w[0] - 1e-12), "monotone for {strata} strata");
            assert!(t[0] < 1e-3 && t[TERRACE_SAMPLES - 1] == 1.0);
        }
        // Two strata with vertical rises: 0 on the first third, 0.5 on the second, then 1.
        let steps = terrace_profile(2, 1.0, 0.0);
        assert_eq!((steps[0], steps[10922], steps[10923], steps[21844], steps[21845]), (0.0, 0.0, 0.5, 0.5, 1.0));
    }

    #[test]
    fn smoothing_keeps_plateaus_at_their_height() {
        // The blur divides by the samples it sums, so the flat top stays exactly 1 at the largest
        // radius (10); the original summed 2r and divided by 2r + 1, lowering it to 20/21.
        let smooth = terrace_profile(3, 1.0, 1.0);
        assert_eq!(smooth[TERRACE_SAMPLES - 1], 1.0);
        assert_eq!(smooth[TERRACE_SAMPLES - 100], 1.0);
        // Within a flat step the middle terrace keeps its height; the steps' edges are rounded.
        // Three strata with vertical rises are N / 4 long each: the third (2/3) spans [N/2, 3N/4).
        let middle = (2.5 * TERRACE_SAMPLES as f64 / 4.0) as usize;
        assert!((smooth[middle] - 2.0 / 3.0).abs() < 1e-12);
    }
}
