//! `map.Distort(perturbationSize, maximumDistance, seed = 0)`: displaces every pixel by two noise
//! fields.

use geogen_diag::codes;
use geogen_render::kernels::for_each_row;
use geogen_render::scale::scaled_distance;
use geogen_render::{Bounds, Effect, HeightMap, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::generators::{Flat, NoiseLayer};
use crate::kernels::sample::bilinear;
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

/// Amplitude of the two displacement fields: the full height range (±1 is ±maximumDistance).
const FIELD_AMPLITUDE: i32 = 32767;

/// The last of the five steps `Distort` records: pixel `p` of B becomes the bilinear sample of the
/// map at `p + (nx(p), ny(p)) × D`, where `nx` and `ny` are the two noise maps (arguments 1 and 2)
/// and `D = S(maximumDistance)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Distort {
    /// Logical maximum displacement.
    pub maximum_distance: f64,
}

impl Declared for Distort {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Distort",
        receiver: Receiver::Method,
        params: &[
            Param::new("perturbationSize", Kind::Range { min: 1.0, max: 4294967295.0, code: codes::GGE2309 }),
            Param::size("maximumDistance"),
            Param::seed("seed"),
        ],
        checks: &[],
        family: Family::Transform,
        summary: "Displaces every pixel by up to `maximumDistance` (scaled) along X and Y, as two \
                  single-layer noise fields of wavelength `perturbationSize` say (seeded by `seed`, the \
                  script seed and the name, as the original), sampling the map bilinearly. Equal \
                  neighbours give exactly their height, so flat areas stay exactly flat.",
        examples: &[
            Example {
                // A flat map stays exactly flat.
                script: "yield HeightMap.Flat(0.25).Distort(16, 8, 3);",
                size: (6, 6),
                expect: &[(0, 0, 0.25), (5, 2, 0.25), (3, 5, 0.25)],
            },
            Example {
                // A step at x = 3.5, displaced by at most 2: columns 0–1 only see 1, columns 6–7 only 0.
                script: "yield HeightMap.Flat(0).FillRectangle([-10, -10], [3, 20], 1).Distort(32, 2);",
                size: (8, 4),
                expect: &[(0, 0, 1.0), (1, 3, 1.0), (6, 1, 0.0), (7, 2, 0.0)],
            },
            Example {
                // A maximum distance of 0 moves nothing.
                script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Distort(8, 0);",
                size: (5, 2),
                expect: &[(1, 0, 0.25), (3, 1, 0.75)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        // The original truncates the wavelength to a whole number of units (≥ 1 by the check).
        let wavelength = call.number(0)?.trunc().clamp(1.0, u32::MAX as f64) as u32;
        let seed = geogen_random::combine_seeds(&[
            call.seed(2)?,
            rec.script_seed(),
            geogen_random::hash_str("HeightMap.Distort"),
        ]);
        let target = rec.this_slot()?;
        let mut field = |layer_index: u32| -> Result<_, RuntimeError> {
            let slot = rec.push_create(Flat::new(0.0), &[])?;
            rec.push_modify(NoiseLayer::new(wavelength, FIELD_AMPLITUDE, seed, layer_index, false), slot, &[])?;
            Ok(slot)
        };
        let (x_field, y_field) = (field(0)?, field(1)?);
        rec.push_modify(Distort { maximum_distance: call.number(1)? }, target, &[x_field, y_field])?;
        Ok(rec.this())
    }
}

impl Operation for Distort {
    fn name(&self) -> &str {
        "HeightMap.Distort"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map, ObjectKind::Map, ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        self.maximum_distance.to_string()
    }
    /// The map is read up to D pixels away from B (the fields are within ±1); the fields are
    /// read at B only.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let d = scaled_distance(self.maximum_distance, ctx.scale);
        vec![Bounds::Map(own.rect().expand(d)), own, own]
    }
    /// The result covers exactly B.
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        let field = |i: usize| -> Result<&HeightMap, RenderError> {
            inputs.get(i).ok_or_else(|| RenderError::Internal(format!("Distort without field {i}")))?.as_map()
        };
        let (x_field, y_field) = (field(0)?, field(1)?);
        let d = scaled_distance(self.maximum_distance, ctx.scale) as f64;
        let source = target.as_map()?;
        let rect = ctx.bounds.rect();
        let mut out = HeightMap::try_zeroed(rect)?;
        // The fields cover B when the bounds hold; otherwise a missing value moves nothing.
        let fields_cover = x_field.rect().contains_rect(&rect) && y_field.rect().contains_rect(&rect);
        for_each_row(&mut out, |py, x0, row| {
            let distort = |i: usize, nx: f32, ny: f32| {
                let (px, py) = ((x0 + i as i64) as f64, py as f64);
                bilinear(source, px + f64::from(nx) * d, py + f64::from(ny) * d)
            };
            if fields_cover {
                let (xs, ys) = (x_field.row_span(py, rect.x_interval()), y_field.row_span(py, rect.x_interval()));
                for (i, ((h, &nx), &ny)) in row.iter_mut().zip(xs).zip(ys).enumerate() {
                    *h = distort(i, nx, ny);
                }
            } else {
                for (i, h) in row.iter_mut().enumerate() {
                    let px = x0 + i as i64;
                    let value = |field: &HeightMap| field.get(px, py).unwrap_or(0.0);
                    *h = distort(i, value(x_field), value(y_field));
                }
            }
        });
        *target = Object::Map(out);
        Ok(())
    }
}
