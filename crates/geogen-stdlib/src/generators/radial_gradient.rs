//! `HeightMap.RadialGradient(center, radius, centerHeight, rimHeight)`: a cone.

use geogen_render::raster::{height_from_f64, saturate};
use geogen_render::scale::{scaled_distance, to_physical};
use geogen_render::{
    Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, Rect, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Isa;
use geogen_render::rows::for_each_row;

#[derive(Clone, Debug, PartialEq)]
pub struct RadialGradient {
    pub center: (f64, f64),
    pub radius: f64,
    pub center_height: f32,
    pub rim_height: f32,
}

impl RadialGradient {
    pub fn new(center: (f64, f64), radius: f64, center_height: f64, rim_height: f64) -> RadialGradient {
        RadialGradient {
            center,
            radius,
            center_height: height_from_f64(center_height),
            rim_height: height_from_f64(rim_height),
        }
    }
}

impl Declared for RadialGradient {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "RadialGradient",
        receiver: Receiver::Static,
        params: &[
            Param::point("center"),
            Param::size("radius"),
            Param::height("centerHeight"),
            Param::height("rimHeight"),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "A cone: `centerHeight` at `center`, falling linearly to `rimHeight` at distance \
                  `radius` and `rimHeight` beyond. Distances are measured in pixels from the scaled \
                  centre against the scaled radius, as the original does.",
        examples: &[Example {
            script: "yield HeightMap.RadialGradient([2, 2], 4, 1, -1);",
            size: (8, 8),
            expect: &[(2, 2, 1.0), (4, 2, 0.0), (2, 6, -1.0), (7, 7, -1.0), (2, 3, 0.5)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let op = RadialGradient::new(
            call.point_f64("center")?,
            call.number("radius")?,
            call.number("centerHeight")?,
            call.number("rimHeight")?,
        );
        rec.create(op, &[])
    }
}

impl Operation for RadialGradient {
    fn name(&self) -> &str {
        "HeightMap.RadialGradient"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}], {}, {}, {}", self.center.0, self.center.1, self.radius, self.center_height, self.rim_height)
    }
    fn is_row_local(&self) -> bool {
        true
    }
    /// Beyond the radius every pixel is the rim height as the kernel writes it. A pixel more than
    /// `ceil(r) + 1` from the centre along either axis has a computed distance above `r` (the
    /// rounding of `sqrt(dx² + dy²)` is far below a pixel at these magnitudes).
    fn support(&self, _: &[Facts], ctx: &OpContext) -> Option<Support> {
        const FAR: i64 = 1 << 50;
        let cx = to_physical(self.center.0, ctx.scale);
        let cy = to_physical(self.center.1, ctx.scale);
        let r = scaled_distance(self.radius, ctx.scale) as f64;
        if !(0.0..FAR as f64).contains(&r) || cx.unsigned_abs() > FAR as u64 || cy.unsigned_abs() > FAR as u64 {
            return None;
        }
        let reach = libm::ceil(r) as i64 + 1;
        Some(Support {
            rect: Rect::from_corners((cx - reach, cy - reach), (cx + reach, cy + reach)),
            background: saturate(f64::from(self.rim_height) as f32),
        })
    }
    /// Between the two heights: the interpolation `center + (rim − center) × d / r` with
    /// `d ≤ r` (see `interpolated_range`).
    fn range(&self, _: &[Facts], _: &OpContext) -> Range {
        crate::support::interpolated_range(Range::between(self.center_height, self.rim_height))
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let cone = Cone {
            cx: to_physical(self.center.0, ctx.scale) as f64,
            cy: to_physical(self.center.1, ctx.scale) as f64,
            r: scaled_distance(self.radius, ctx.scale) as f64,
            center: f64::from(self.center_height),
            rim: f64::from(self.rim_height),
        };
        let isa = Isa::best();
        for_each_row(target.as_map_mut()?, |py, x0, row| cone_row(isa, &cone, py, x0, row));
        Ok(())
    }
}

/// The cone in physical pixels.
struct Cone {
    cx: f64,
    cy: f64,
    r: f64,
    center: f64,
    rim: f64,
}

/// The height of the cone at distance `d` from its centre.
#[inline(always)]
fn cone_height(cone: &Cone, d: f64) -> f32 {
    let v = if d > cone.r {
        cone.rim
    } else if cone.r == 0.0 {
        cone.center
    } else {
        cone.center + (cone.rim - cone.center) * d / cone.r
    };
    saturate(v as f32)
}

/// Row `py` of the cone from column `x0`, on `isa` (the tests force each). The square root is
/// IEEE 754's correctly rounded `squareRoot` everywhere (`f64::sqrt`, `vsqrtpd`), so every build
/// gives the same bits.
fn cone_row(isa: Isa, cone: &Cone, py: i64, x0: i64, row: &mut [f32]) {
    let dy = py as f64 - cone.cy;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && isa.is_available() && cone.r != 0.0 && exact_columns(x0, row.len()) {
        // SAFETY: AVX2 is available (checked just above).
        done = unsafe { avx2::cone_row(cone, dy, x0, row) };
    }
    let _ = isa;
    for (i, h) in row.iter_mut().enumerate().skip(done) {
        let dx = x0.wrapping_add(i as i64) as f64 - cone.cx;
        *h = cone_height(cone, (dx * dx + dy * dy).sqrt());
    }
}

/// Whether every column `x0 .. x0 + len` is an `f64` integer reached exactly by adding 1.0s to
/// `x0 as f64` (all below 2^53 in magnitude).
fn exact_columns(x0: i64, len: usize) -> bool {
    const EXACT: i64 = 1 << 53;
    i64::try_from(len).ok().and_then(|n| x0.checked_add(n)).is_some_and(|end| x0 > -EXACT && end < EXACT)
}

/// [`cone_height`] four pixels at a time in `f64` lanes: the same operations in the same order.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Cone;

    /// The longest prefix of `row` that is a multiple of four pixels; returns its length. The
    /// columns are counted in `f64` lanes, exact by [`super::exact_columns`]; `cone.r` is not 0.
    ///
    /// # Safety
    /// AVX2 must be available.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn cone_row(cone: &Cone, dy: f64, x0: i64, row: &mut [f32]) -> usize {
        let n = row.len() / 4 * 4;
        let dy2 = _mm256_set1_pd(dy * dy);
        let (cx, r) = (_mm256_set1_pd(cone.cx), _mm256_set1_pd(cone.r));
        let (center, rim, slope) =
            (_mm256_set1_pd(cone.center), _mm256_set1_pd(cone.rim), _mm256_set1_pd(cone.rim - cone.center));
        let (low, high) = (_mm_set1_ps(-1.0), _mm_set1_ps(1.0));
        let mut x = _mm256_add_pd(_mm256_set1_pd(x0 as f64), _mm256_setr_pd(0.0, 1.0, 2.0, 3.0));
        let four = _mm256_set1_pd(4.0);
        for chunk in row[..n].chunks_exact_mut(4) {
            let dx = _mm256_sub_pd(x, cx);
            let d = _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), dy2));
            let inside = _mm256_add_pd(center, _mm256_div_pd(_mm256_mul_pd(slope, d), r));
            let v = _mm256_blendv_pd(inside, rim, _mm256_cmp_pd::<_CMP_GT_OQ>(d, r));
            let h = _mm256_cvtpd_ps(v);
            // `saturate`: NaN to 0, then the clamp (`max`/`min` keep -0.0 as the clamp does).
            let h = _mm_and_ps(h, _mm_cmp_ps::<_CMP_ORD_Q>(h, h));
            let h = _mm_min_ps(_mm_max_ps(h, low), high);
            // SAFETY: four pixels in the chunk.
            unsafe { _mm_storeu_ps(chunk.as_mut_ptr(), h) };
            x = _mm256_add_pd(x, four);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cone_rows_are_the_same_on_every_isa() {
        let cones = [
            Cone { cx: 3.0, cy: -2.0, r: 7.5, center: 1.0, rim: -1.0 },
            Cone { cx: -1e9, cy: 5e8, r: 1.2e9, center: 0.3, rim: 0.7 },
            Cone { cx: 0.25, cy: 0.0, r: 1e-300, center: -0.5, rim: 0.5 },
            Cone { cx: 10.0, cy: 10.0, r: f64::NAN, center: 1.0, rim: 0.0 },
            Cone { cx: 10.0, cy: 10.0, r: f64::INFINITY, center: 1.0, rim: 0.0 },
            Cone { cx: 0.0, cy: 0.0, r: 0.0, center: 1.0, rim: -1.0 },
            Cone { cx: 2.0, cy: 1.0, r: 3.0, center: 1e300, rim: -1e300 },
        ];
        let starts = [-40i64, 0, 7, -(1 << 53) + 3, (1 << 53) - 20, i64::MIN, i64::MAX - 30];
        for (k, cone) in cones.iter().enumerate() {
            for &x0 in &starts {
                for py in [-3i64, 0, 2, 1 << 40] {
                    for len in [0usize, 1, 3, 4, 5, 17, 64] {
                        let mut scalar = vec![9.0f32; len];
                        let mut vector = vec![9.0f32; len];
                        cone_row(Isa::Scalar, cone, py, x0, &mut scalar);
                        cone_row(Isa::Avx2, cone, py, x0, &mut vector);
                        let bits = |v: &[f32]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&scalar), bits(&vector), "cone {k}, x0 {x0}, py {py}, len {len}");
                        // And the per-pixel definition (libm's square root, as before).
                        for (i, h) in scalar.iter().enumerate() {
                            let dx = x0.wrapping_add(i as i64) as f64 - cone.cx;
                            let dy = py as f64 - cone.cy;
                            let want = cone_height(cone, libm::sqrt(dx * dx + dy * dy));
                            assert_eq!(h.to_bits(), want.to_bits(), "cone {k}, x0 {x0}, pixel {i}");
                        }
                    }
                }
            }
        }
    }
}
