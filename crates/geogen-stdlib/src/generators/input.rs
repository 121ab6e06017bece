//! `HeightMap.Input(name)`: a height map the host gave under `name` (`geogen render --input
//! name=FILE`), sampled at logical coordinates.
//!
//! The script never opens the file: the host reads it once into a shared, read-only
//! [`InputRaster`], the VM hands the `Arc` to the recorded step, and only the kernel reads pixels.

use std::collections::BTreeMap;
use std::sync::Arc;

use geogen_diag::codes;
use geogen_render::rows::for_each_row;
use geogen_render::scale::to_logical;
use geogen_render::{Effect, InputRaster, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

/// The input rasters the worked examples (and the derived tests) render with: `sketch`, 2 × 2
/// pixels, heights -1 and 1 in the top row, 0 and 0.5 in the bottom row.
pub fn example_inputs() -> BTreeMap<String, Arc<InputRaster>> {
    let sketch = InputRaster::new(2, 2, vec![-1.0, 1.0, 0.0, 0.5]).map(Arc::new);
    sketch.into_iter().map(|raster| ("sketch".to_string(), raster)).collect()
}

/// The raster stretched over `span_x × span_y` map units from the origin: pixel (i, j) of the
/// file stands at logical (i × span_x / width, j × span_y / height), where a render samples its
/// own pixels (a pixel's logical coordinate is its corner), so a file rendered at its own size
/// and scale 1 comes back pixel for pixel. Between those points heights are bilinear, past the
/// last pixel they are the edge pixel's, and outside the spanned rectangle 0.
#[derive(Clone, Debug)]
pub struct Input {
    pub name: String,
    pub raster: Arc<InputRaster>,
    /// Logical size the raster covers: the map size in a finite dimension, one map unit per file
    /// pixel in an infinite one.
    pub span_x: f64,
    pub span_y: f64,
}

impl Input {
    /// The file position (in pixels) of a logical coordinate, or `None` outside the spanned range.
    #[inline]
    fn file_position(logical: f64, span: f64, pixels: u32) -> Option<f64> {
        (0.0..span).contains(&logical).then(|| logical * f64::from(pixels) / span)
    }

    /// The sample at a logical position inside the span.
    #[inline]
    fn sample(&self, fx: f64, fy: f64) -> f32 {
        let split = |f: f64| {
            let floor = f.floor();
            (floor as i64, f - floor)
        };
        let ((x0, tx), (y0, ty)) = (split(fx), split(fy));
        let at = |x: i64, y: i64| f64::from(self.raster.clamped(x, y));
        let lerp = |a: f64, b: f64, t: f64| if t == 0.0 { a } else { a + (b - a) * t };
        let top = lerp(at(x0, y0), at(x0 + 1, y0), tx);
        let bottom = lerp(at(x0, y0 + 1), at(x0 + 1, y0 + 1), tx);
        lerp(top, bottom, ty) as f32
    }
}

impl Declared for Input {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Input",
        receiver: Receiver::Static,
        params: &[Param::new("name", Kind::Text)],
        checks: &[],
        family: Family::Generator,
        summary: "A new map from the input height map the host gave under `name` (`geogen render \
                  --input name=FILE`; GGE2730 if there is none). The file is stretched over the map \
                  in a finite dimension and laid one pixel per map unit from 0 in an infinite one; \
                  file pixel i stands at i × map size / file size (so a file rendered at its own \
                  size comes back pixel for pixel), heights between pixels are bilinear, past the \
                  last pixel the edge pixel's, and 0 outside the covered rectangle. The examples \
                  use the 2 × 2 input `sketch` (-1, 1 / 0, 0.5).",
        examples: &[
            Example {
                // A 4 × 4 finite map over the 2 × 2 sketch: file pixels at 0 and 2, halfway at 1.
                script: "metadata { Width: Finite, Height: Finite }\nyield HeightMap.Input(\"sketch\");",
                size: (4, 4),
                expect: &[(0, 0, -1.0), (1, 0, 0.0), (1, 1, 0.125), (2, 0, 1.0), (2, 2, 0.5), (3, 3, 0.5), (0, 3, 0.0)],
            },
            Example {
                // Infinite: one file pixel per unit, nothing from 2 on.
                script: "yield HeightMap.Input(\"sketch\");",
                size: (4, 2),
                expect: &[(0, 0, -1.0), (1, 0, 1.0), (1, 1, 0.5), (0, 1, 0.0), (2, 0, 0.0), (3, 1, 0.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let name = call.text("name")?;
        let Some(raster) = rec.input(name) else {
            let given = rec.input_names();
            let hint = if given.is_empty() {
                format!("give the file on the command line: --input {name}=FILE")
            } else {
                format!("the inputs given are: {}", given.join(", "))
            };
            return Err(
                RuntimeError::new(codes::GGE2730, format!("there is no input map named \"{name}\"")).with_hint(hint)
            );
        };
        let geometry = rec.geometry();
        let span_x = f64::from(geometry.map_width.unwrap_or(raster.width()));
        let span_y = f64::from(geometry.map_height.unwrap_or(raster.height()));
        rec.create(Input { name: name.to_string(), raster, span_x, span_y }, &[])
    }
}

impl Operation for Input {
    fn name(&self) -> &str {
        "HeightMap.Input"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!(
            "\"{}\" ({}x{} over {}x{})",
            self.name,
            self.raster.width(),
            self.raster.height(),
            self.span_x,
            self.span_y
        )
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let scale = ctx.scale;
        let (width, height) = (self.raster.width(), self.raster.height());
        for_each_row(target.as_map_mut()?, |py, x0, row| {
            let Some(fy) = Input::file_position(to_logical(py, scale), self.span_y, height) else {
                row.fill(0.0);
                return;
            };
            for (i, h) in row.iter_mut().enumerate() {
                let lx = to_logical(x0 + i as i64, scale);
                *h = match Input::file_position(lx, self.span_x, width) {
                    Some(fx) => self.sample(fx, fy),
                    None => 0.0,
                };
            }
        });
        Ok(())
    }
}
