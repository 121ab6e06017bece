//! `map.Glaciate(strength = 0.2, includeNegative = false)`: deepens valleys and sharpens peaks with
//! the original's fixed height curve.

use geogen_diag::codes;
use geogen_render::raster::{saturate, HEIGHT_UNITS};
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::kernels::pointwise;
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

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

/// The original's profile in height units: P(0) = 0 and
/// P(i) = 1 + (1 − sin((N − 1 − i) / N × π/2))^(0.7 + 2 × strength) × 32766 for 0 < i < N.
fn profile(strength: f64) -> Vec<f64> {
    let n = SAMPLES as f64;
    let exponent = 0.7 + 2.0 * strength;
    (0..SAMPLES)
        .map(|i| {
            if i == 0 {
                0.0
            } else {
                let angle = (n - 1.0 - i as f64) / n * std::f64::consts::FRAC_PI_2;
                1.0 + libm::pow(1.0 - libm::sin(angle), exponent) * 32766.0
            }
        })
        .collect()
}

/// `table` (height units) at the real index `index`, linearly interpolated, as a height.
#[inline]
fn interpolate(table: &[f64], index: f64) -> f32 {
    let last = table.len() - 1;
    let index = index.clamp(0.0, last as f64);
    let i = (libm::floor(index) as usize).min(last.saturating_sub(1));
    let fraction = index - i as f64;
    let (a, b) = (table[i], table[(i + 1).min(last)]);
    saturate(((a + (b - a) * fraction) / HEIGHT_UNITS) as f32)
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
        rec.modify(Glaciate { strength: call.number(0)?, include_negative: call.boolean(1)? }, &[])
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
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let p = profile(self.strength);
        if self.include_negative {
            // The odd mirror image of P over [−32767, 32767]: 2N − 1 samples, P(0) = 0 in the middle;
            // a height's index is (h + 1)/2 × (2N − 2), as TransformHeights places it.
            let mirrored: Vec<f64> = p.iter().rev().map(|v| 0.0 - v).chain(p.iter().skip(1).copied()).collect();
            let last = (mirrored.len() - 1) as f64;
            pointwise::apply(target, |h| interpolate(&mirrored, (f64::from(h) + 1.0) / 2.0 * last))
        } else {
            // Heights from 1 unit up: index 32767h − 1 (TransformHeights over [1, 32767] with
            // N samples); lower ones are left alone.
            pointwise::apply(target, |h| {
                let units = f64::from(h) * HEIGHT_UNITS;
                if units < 1.0 - UNIT_TOLERANCE {
                    h
                } else {
                    interpolate(&p, units - 1.0)
                }
            })
        }
    }
}
