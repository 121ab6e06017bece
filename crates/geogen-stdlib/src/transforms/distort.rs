//! `map.Distort(perturbationSize, maximumDistance, seed = 0)`: displaces every pixel by two noise
//! fields.

use geogen_diag::codes;
use geogen_render::rows::serially;
use geogen_render::scale::scaled_distance;
use geogen_render::{
    Bounds, Effect, HeightMap, KernelContext, Object, ObjectKind, OpContext, Operation, Rect, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::generators::NoiseLayer;
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Isa;
use geogen_kernels::noise::{add_noise_layer_on, displaced_by_layers, LayerField};
use geogen_kernels::sample::{bilinear_many, displaced_positions, map_by_bands, prefetch_rows_ahead, BATCH};

/// Amplitude of the two displacement fields: the full height range (±1 is ±maximumDistance).
const FIELD_AMPLITUDE: i32 = 32767;

/// How far below the row being filled, and at every how many positions, the source lines are
/// prefetched (measured at 4000²: 4 to 8 rows and one position in 16 did best).
const PREFETCH_ROWS: i64 = 8;
const PREFETCH_STEP: usize = 16;
/// Rows per band of the result (each band is computed into a scratch of its own, then copied).
const BAND_ROWS: usize = 8;

/// The gather of a displacement by two field maps: pixel `p` of B becomes the bilinear sample of
/// the map at `p + (nx(p), ny(p)) × D`, where `nx` and `ny` are the two field maps (arguments 1
/// and 2) and `D = S(maximumDistance)`. `Warp` records it after its two coherent-noise fields;
/// `Distort` records [`NoiseDistort`], which computes its noise fields itself.
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
            Param::new("perturbationSize", Kind::Range { min: 0.0, max: 4294967295.0, code: codes::GGE2309 }),
            Param::size("maximumDistance"),
            Param::seed("seed"),
        ],
        checks: &[],
        family: Family::Transform,
        summary: "Displaces every pixel by up to `maximumDistance` (scaled) along X and Y, as two \
                  single-layer noise fields of wavelength `perturbationSize` say (whole units; below 1 it \
                  acts as 1, every pixel displaced on its own) (seeded by `seed`, the \
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
        // The original truncates the wavelength to a whole number of units; below 1 (it accepts 0)
        // it acts as 1: every pixel displaced on its own.
        let wavelength = call.number("perturbationSize")?.trunc().clamp(1.0, u32::MAX as f64) as u32;
        let seed = geogen_random::combine_seeds(&[
            call.seed("seed")?,
            rec.script_seed(),
            geogen_random::hash_str("HeightMap.Distort"),
        ]);
        let target = rec.this_slot()?;
        // The two fields (layers 0 and 1 of the seed) are computed row by row inside the step
        // (see [`NoiseDistort`]): the same pixels as two maps `Flat(0)` + `NoiseLayer`, never held.
        let field = |layer_index: u32| NoiseLayer::new(wavelength, FIELD_AMPLITUDE, seed, layer_index, false).field;
        let op =
            NoiseDistort { maximum_distance: call.number("maximumDistance")?, x_field: field(0), y_field: field(1) };
        rec.push_modify(op, target, &[])?;
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
    fn replaces_target(&self) -> bool {
        true
    }
    fn render_replacing(
        &self,
        ctx: &KernelContext,
        source: &Object,
        inputs: &[&Object],
    ) -> Result<Object, RenderError> {
        self.render_from(Isa::best(), ctx, source, inputs)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        self.render_on(Isa::best(), ctx, target, inputs)
    }
}

impl Distort {
    /// The kernel on `isa` (the tests force each).
    pub fn render_on(
        &self,
        isa: Isa,
        ctx: &KernelContext,
        target: &mut Object,
        inputs: &[&Object],
    ) -> Result<(), RenderError> {
        *target = self.render_from(isa, ctx, target, inputs)?;
        Ok(())
    }

    /// The distorted map of `source`, over the step's bounds.
    fn render_from(
        &self,
        isa: Isa,
        ctx: &KernelContext,
        source: &Object,
        inputs: &[&Object],
    ) -> Result<Object, RenderError> {
        let field = |i: usize| -> Result<&HeightMap, RenderError> {
            inputs.get(i).ok_or_else(|| RenderError::Internal(format!("Distort without field {i}")))?.as_map()
        };
        let (x_field, y_field) = (field(0)?, field(1)?);
        let d = scaled_distance(self.maximum_distance, ctx.scale) as f64;
        let source = source.as_map()?;
        let rect = ctx.bounds.rect();
        // The fields cover B when the bounds hold; otherwise a missing value moves nothing.
        let fields_cover = x_field.rect().contains_rect(&rect) && y_field.rect().contains_rect(&rect);
        let width = rect.width.max(1) as usize;
        let out = map_by_bands(rect, BAND_ROWS, |py0, x0, band| {
            for (r, row) in band.chunks_mut(width).enumerate() {
                let py = py0 + r as i64;
                let spans = fields_cover
                    .then(|| (x_field.row_span(py, rect.x_interval()), y_field.row_span(py, rect.x_interval())));
                let missing = |px: i64| {
                    let value = |field: &HeightMap| field.get(px, py).unwrap_or(0.0);
                    (value(x_field), value(y_field))
                };
                fill_row(isa, source, d, py, x0, row, spans, missing);
            }
        })?;
        Ok(Object::Map(out))
    }
}

/// Fills `row`, the pixels `(x0 + i, py)`, with the bilinear samples of `source` at
/// `p + (nx, ny) × d`: the field values from `spans` (the fields' values on this row), or where the
/// fields do not cover the row from `missing(px)`.
#[allow(clippy::too_many_arguments)]
fn fill_row(
    isa: Isa,
    source: &HeightMap,
    d: f64,
    py: i64,
    x0: i64,
    row: &mut [f32],
    spans: Option<(&[f32], &[f32])>,
    missing: impl Fn(i64) -> (f32, f32),
) {
    let (mut xs, mut ys) = ([0.0f64; BATCH], [0.0f64; BATCH]);
    let fy = py as f64;
    for (c, out) in row.chunks_mut(BATCH).enumerate() {
        let first = c * BATCH;
        let n = out.len();
        // Source position of the pixel at offset k: p + (nx, ny) × D.
        if let Some((nxs, nys)) = spans {
            let (nxs, nys) = (&nxs[first..first + n], &nys[first..first + n]);
            displaced_positions(isa, x0 + first as i64, py, d, nxs, nys, &mut xs[..n], &mut ys[..n]);
        } else {
            for k in 0..n {
                let px = x0 + (first + k) as i64;
                let (nx, ny) = missing(px);
                xs[k] = px as f64 + f64::from(nx) * d;
                ys[k] = fy + f64::from(ny) * d;
            }
        }
        // The rows below read about the source lines of this row moved down (the fields are
        // smooth): start loading the ones PREFETCH_ROWS rows on (−8 % CPU at 4000²).
        prefetch_rows_ahead(source, &xs[..n], &ys[..n], PREFETCH_ROWS, PREFETCH_STEP);
        bilinear_many(source, &xs[..n], &ys[..n], out, isa);
    }
}

/// The step `Distort` records: [`Distort`] with its two displacement fields, noise layers of
/// amplitude 1 (`Flat(0)` plus `NoiseLayer` of layers 0 and 1), computed row by row inside the
/// gather instead of two whole maps made by steps of their own, written, held and read back. On
/// AVX-512 with cells of four pixels or more, the positions come straight from both layers at once
/// ([`displaced_by_layers`]); otherwise each field row is a zeroed row to which the layer is added,
/// exactly as the map steps do on that row (the noise is row-local). The bytes are the same.
#[derive(Clone, Debug, PartialEq)]
pub struct NoiseDistort {
    /// Logical maximum displacement.
    pub maximum_distance: f64,
    /// The noise layer displacing along X.
    pub x_field: LayerField,
    /// The noise layer displacing along Y.
    pub y_field: LayerField,
}

impl Operation for NoiseDistort {
    fn name(&self) -> &str {
        "HeightMap.Distort"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!(
            "{}, fields of wavelength {} (layers {:08x}, {:08x})",
            self.maximum_distance, self.x_field.wavelength, self.x_field.current, self.y_field.current
        )
    }
    /// The map is read up to D pixels away from B.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let d = scaled_distance(self.maximum_distance, ctx.scale);
        vec![Bounds::Map(own.rect().expand(d))]
    }
    /// The result covers exactly B.
    fn result_extent(&self, own: Bounds, _: &[Bounds], _: &OpContext) -> Bounds {
        own
    }
    /// The two field rows of the band each worker thread gathers: per-thread scratch, O(width),
    /// which the plan leaves out (plan.rs), counted here for two threads all the same.
    fn extra_memory(&self, extent: Bounds, _: &OpContext) -> u64 {
        FIELD_BANDS_IN_FLIGHT * 2 * extent.rect().width.saturating_mul(4)
    }
    fn replaces_target(&self) -> bool {
        true
    }
    fn render_replacing(
        &self,
        ctx: &KernelContext,
        source: &Object,
        inputs: &[&Object],
    ) -> Result<Object, RenderError> {
        self.render_from(Isa::best(), true, ctx, source, inputs)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, inputs: &[&Object]) -> Result<(), RenderError> {
        self.render_on(Isa::best(), ctx, target, inputs)
    }
}

/// Field bands the memory plan counts for [`NoiseDistort`] (bands computed at once).
const FIELD_BANDS_IN_FLIGHT: u64 = 2;

/// A row of `width` field values (zeroed before each use), or the allocation error.
fn field_row(width: usize) -> Result<Vec<f32>, RenderError> {
    let mut row = Vec::new();
    row.try_reserve_exact(width).map_err(|_| RenderError::Allocation { bytes: width as u64 * 4 })?;
    row.resize(width, 0.0);
    Ok(row)
}

impl NoiseDistort {
    /// The kernel on `isa` (the tests force each).
    pub fn render_on(
        &self,
        isa: Isa,
        ctx: &KernelContext,
        target: &mut Object,
        inputs: &[&Object],
    ) -> Result<(), RenderError> {
        *target = self.render_from(isa, true, ctx, target, inputs)?;
        Ok(())
    }

    /// The distorted map of `source`, over the step's bounds; with `fuse`, the positions come
    /// straight from the layers where [`displaced_by_layers`] applies (the tests also run without).
    fn render_from(
        &self,
        isa: Isa,
        fuse: bool,
        ctx: &KernelContext,
        source: &Object,
        _: &[&Object],
    ) -> Result<Object, RenderError> {
        let d = scaled_distance(self.maximum_distance, ctx.scale) as f64;
        let source = source.as_map()?;
        let rect = ctx.bounds.rect();
        let width = rect.width.max(1) as usize;
        let failed = std::sync::Mutex::new(None);
        let fields = [self.x_field, self.y_field];
        let out = map_by_bands(rect, BAND_ROWS, |py0, x0, band| {
            // The fields' rows where the positions cannot come straight from the layers (made on
            // the first such row of the band, reused for the others).
            let mut rows: Option<(Vec<f32>, Vec<f32>)> = None;
            for (r, row) in band.chunks_mut(width).enumerate() {
                let py = py0 + r as i64;
                // The positions straight from the two layers, gathered piece by piece.
                let fused = fuse
                    && displaced_by_layers(isa, ctx.scale, fields, x0, row.len(), py, d, |first, xs, ys| {
                        let out = &mut row[first..first + xs.len()];
                        prefetch_rows_ahead(source, xs, ys, PREFETCH_ROWS, PREFETCH_STEP);
                        bilinear_many(source, xs, ys, out, isa);
                    });
                if fused {
                    continue;
                }
                if rows.is_none() {
                    match (field_row(width), field_row(width)) {
                        (Ok(x), Ok(y)) => rows = Some((x, y)),
                        (Err(e), _) | (_, Err(e)) => {
                            *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                            return;
                        }
                    }
                }
                let Some((x_row, y_row)) = rows.as_mut() else { return };
                let row_rect = Rect::new(x0, py, rect.width, 1);
                // Each field on this row: 0, plus the layer (what `Flat(0)` and `NoiseLayer` give
                // on it: the layer is row-local and addressed by absolute coordinates). On this
                // thread only: a layer split into parallel parts would let a waiting thread start
                // another band.
                let field = |layer: LayerField, data: &mut Vec<f32>| {
                    data.fill(0.0);
                    let Some(mut map) = HeightMap::from_data(row_rect, std::mem::take(data)) else {
                        return;
                    };
                    serially(|| add_noise_layer_on(isa, &mut map, ctx.scale, layer, false));
                    *data = map.into_data();
                };
                field(self.x_field, x_row);
                field(self.y_field, y_row);
                fill_row(isa, source, d, py, x0, row, Some((x_row, y_row)), |_| (0.0, 0.0));
            }
        })?;
        if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        Ok(Object::Map(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geogen_kernels::sample::bilinear;
    use geogen_render::Rect;

    /// The step `Distort` records gives, on every instruction set, the bits of its definition: the
    /// two fields as maps (`Flat(0)` plus the noise layer over B) and the gather by them, at
    /// scales 1, 0.7, 1.3 and 0.5, bands cut short, D = 0, odd widths, positions off the origin and
    /// past the source, on the fused path and off it.
    #[test]
    fn noise_distort_equals_the_fields_as_maps_then_the_gather_on_every_isa() {
        let source = HeightMap::from_data(
            Rect::new(-70, -60, 240, 190),
            (0..240u32 * 190).map(|k| geogen_random::hash1(k ^ 7) as f32 / u32::MAX as f32 * 2.0 - 1.0).collect(),
        )
        .unwrap();
        let cases = [
            (Rect::new(-13, -9, 97, 61), 1.0, 16, 7.0, 3),
            (Rect::new(5, -20, 70, 33), 0.7, 40, 12.0, 11),
            (Rect::new(-13, -9, 97, 61), 1.0, 3, 0.0, 5),
            (Rect::new(40, 30, 1, 17), 1.0, 9, 20.0, 8),
            // The fused path (cells of four pixels and more on AVX-512): cells of 4 to 5 pixels
            // (groups across two and three cells), odd widths and offsets, tails of 1 to 7
            // pixels, and displacements reaching past the source (clamped).
            (Rect::new(-50, -40, 203, 45), 1.0, 5, 40.0, 21),
            (Rect::new(-31, 7, 131, 19), 1.3, 4, 9.0, 2),
            (Rect::new(-64, -3, 9, 23), 0.5, 8, 15.0, 4),
            (Rect::new(-7, -50, 66, 70), 1.0, 200, 90.0, 6),
        ];
        for (rect, scale, wavelength, d, seed) in cases {
            let layer = |k| NoiseLayer::new(wavelength, FIELD_AMPLITUDE, seed, k, false);
            let ctx = KernelContext::new(scale, Bounds::Map(rect));
            let field = |layer: NoiseLayer| {
                let mut map = Object::Map(HeightMap::try_zeroed(rect).unwrap());
                layer.render(&ctx, &mut map, &[]).unwrap();
                map
            };
            let (nx, ny) = (field(layer(0)), field(layer(1)));
            let mut want = Object::Map(source.clone());
            Distort { maximum_distance: d }.render_on(Isa::Scalar, &ctx, &mut want, &[&nx, &ny]).unwrap();
            let want = want.as_map().unwrap();
            let op = NoiseDistort { maximum_distance: d, x_field: layer(0).field, y_field: layer(1).field };
            // Where the machine has AVX-512F and cells span four pixels or more, the vector
            // instruction set takes the fused path (the positions straight from the layers).
            let fused = displaced_by_layers(Isa::Avx2, scale, [op.x_field, op.y_field], rect.x, 8, 0, d, |_, _, _| {});
            let avx512 = geogen_simd::enabled(geogen_simd::Isa::Avx512);
            let expected = Isa::Avx2.is_available() && avx512 && (wavelength as f64 * scale).floor() >= 4.0;
            assert_eq!(fused, expected, "{rect} scale {scale} wavelength {wavelength}");
            // Every instruction set, fused where it applies and never (so the field rows of the
            // vector builds run too on machines where the fused path would take their place).
            for isa in Isa::available() {
                for fuse in [true, false] {
                    let got = op.render_from(isa, fuse, &ctx, &Object::Map(source.clone()), &[]).unwrap();
                    let got = got.as_map().unwrap();
                    assert_eq!(got.rect(), want.rect());
                    let same = got.data().iter().zip(want.data()).all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "{isa:?} fused {fuse} {rect} scale {scale} D {d}");
                }
            }
        }
    }

    /// The kernel on every instruction set gives the bits of the per-pixel definition, with the
    /// fields covering B and without (a missing field value moves nothing).
    #[test]
    fn kernel_equals_the_per_pixel_definition_on_every_isa() {
        let noise = |rect: Rect, salt: u32| {
            let len = (rect.width * rect.height) as u32;
            let data = (0..len).map(|k| geogen_random::hash1(k ^ salt) as f32 / u32::MAX as f32 * 2.0 - 1.0);
            HeightMap::from_data(rect, data.collect()).unwrap()
        };
        let source = noise(Rect::new(-40, -30, 150, 110), 1);
        let rect = Rect::new(-13, -9, 97, 61);
        for (fields, d) in [(rect, 7.0), (rect, 0.0), (Rect::new(0, -9, 60, 40), 25.0)] {
            let (nx, ny) = (noise(fields, 2), noise(fields, 3));
            let op = Distort { maximum_distance: d };
            let ctx = KernelContext::new(1.0, Bounds::Map(rect));
            let dd = scaled_distance(d, 1.0) as f64;
            for isa in Isa::available() {
                let mut target = Object::Map(source.clone());
                let (a, b) = (Object::Map(nx.clone()), Object::Map(ny.clone()));
                op.render_on(isa, &ctx, &mut target, &[&a, &b]).unwrap();
                let got = target.as_map().unwrap();
                for py in rect.y..rect.y + rect.height as i64 {
                    for px in rect.x..rect.x + rect.width as i64 {
                        let (fx, fy) = (nx.get(px, py).unwrap_or(0.0), ny.get(px, py).unwrap_or(0.0));
                        let want = bilinear(&source, px as f64 + f64::from(fx) * dd, py as f64 + f64::from(fy) * dd);
                        assert_eq!(got.get(px, py).unwrap().to_bits(), want.to_bits(), "{isa:?} ({px}, {py}) D {d}");
                    }
                }
            }
        }
    }
}
