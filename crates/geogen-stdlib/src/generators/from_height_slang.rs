//! `HeightMap.FromHeightSlang(program, unitSize = 1000, dialect = "documented")`: an infinite
//! map computed by a Height-Slang program (picogen's mkheightmap language, `docs/height-slang.md`).
//!
//! Coordinates: the pixel at physical `(px, py)` has the logical point `(px, py) / scale` (as every
//! operation), and the program sees `x = (px / scale) / unitSize`, `y = (py / scale) / unitSize`:
//! one Height-Slang unit spans `unitSize` map units, y grows downwards as the map's rows do. The
//! value is the height, saturated to [-1, 1] (NaN is 0, ±∞ are ±1). Each pixel is a pure function
//! of its logical point, so any tile is exact.

use std::sync::{Arc, Mutex};

use geogen_diag::{codes, Diagnostic, SourceFile};
use geogen_render::raster::{saturate, HeightMap};
use geogen_render::scale::to_logical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_slang::{Dialect, EvalError, Limits, Options, Program};
use geogen_vm::{RuntimeError, Value};
use rayon::prelude::*;

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

/// The range of `unitSize` (and of PicogenNoise's).
pub(crate) const UNIT_SIZE: Kind = Kind::Range { min: 1e-6, max: 1e12, code: codes::GGE8401 };

#[derive(Clone, Debug)]
pub struct FromHeightSlang {
    pub program: Arc<Program>,
    /// The program text (for listings and error positions).
    pub text: Arc<str>,
    pub unit_size: f64,
}

impl FromHeightSlang {
    /// Compiles `text` with the run's self-depth limit; errors are reported at the call, with the
    /// position inside the program.
    pub fn compile(
        text: &str,
        unit_size: f64,
        dialect: Dialect,
        max_self_depth: usize,
    ) -> Result<FromHeightSlang, RuntimeError> {
        let options = Options { dialect, limits: Limits { max_self_depth, ..Limits::default() } };
        let program = geogen_slang::compile(text, &options).map_err(|d| program_error(text, &d))?;
        Ok(FromHeightSlang { program: Arc::new(program), text: Arc::from(text), unit_size })
    }
}

/// A Height-Slang diagnostic as an error of the script call: its code, and its position and
/// excerpt inside the program in the message.
pub(crate) fn program_error(text: &str, d: &Diagnostic) -> RuntimeError {
    let error =
        RuntimeError::new(d.code, format!("in the Height-Slang program{}: {}", position(text, d.span), d.message));
    match &d.hint {
        Some(hint) => error.with_hint(hint.clone()),
        None => error,
    }
}

/// ` at L:C (near `...`)` for a span of the program.
fn position(text: &str, span: Option<geogen_diag::Span>) -> String {
    let Some(span) = span else { return String::new() };
    let file = SourceFile::new("program", text);
    let at = file.span_start(span);
    let start = (span.start as usize).min(text.len());
    let excerpt: String = text[start..].chars().take(24).collect();
    format!(" at {at} (near `{}`)", excerpt.escape_debug())
}

impl Declared for FromHeightSlang {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "FromHeightSlang",
        receiver: Receiver::Static,
        params: &[
            Param::new("program", Kind::HeightSlang),
            Param::new("unitSize", UNIT_SIZE).or(1000.0),
            Param::new("dialect", Kind::Choice { items: Dialect::NAMES, code: codes::GGE8402 }).or_text("documented"),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "An infinite map computed by a Height-Slang program h(x, y) (picogen's mkheightmap language, \
                  docs/height-slang.md): the program sees x = mapX / unitSize, y = mapY / unitSize (y down), \
                  its value is the height, saturated (NaN is 0). `dialect` \"picogen-2008\" reproduces the \
                  original's quirks. Program errors (GGE81xx, GGE82xx) point at the call and name the \
                  position in the program; `self` recursion is bounded by --max-call-depth (GGE8301).",
        examples: &[
            Example {
                // x = px / 4: h = 2·px/4 − 1, saturated at 1 from px = 4.
                script: "yield HeightMap.FromHeightSlang(\"(- (* 2 x) 1)\", 4);",
                size: (6, 2),
                expect: &[(0, 0, -1.0), (1, 0, -0.5), (2, 1, 0.0), (3, 0, 0.5), (4, 1, 1.0), (5, 0, 1.0)],
            },
            Example {
                // y grows downwards: y = py / 8; NaN (0/0 at no pixel here) would be 0.
                script: "yield HeightMap.FromHeightSlang(\"(? (>= y 0.5) y (/ 0 0))\", 8);",
                size: (2, 8),
                expect: &[(0, 3, 0.0), (0, 4, 0.5), (1, 6, 0.75)],
            },
            Example {
                // picogen's noise at the lattice point (0, 0) is L(0, 0) = −0.14743114720271694
                // for seed 42 (spec height-slang §1.4); `or` is AND in the original.
                script: "var n = HeightMap.FromHeightSlang(\"([2 Noise frequency(1)] x y)\", 1);\n\
                         var q = HeightMap.FromHeightSlang(\"(or 1 0)\", 1, \"picogen-2008\");\n\
                         n.Add(q);\nyield n;",
                size: (1, 1),
                expect: &[(0, 0, -0.147_431_15)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let dialect = Dialect::from_name(call.text("dialect")?).unwrap_or_default();
        let op = FromHeightSlang::compile(
            call.text("program")?,
            call.number("unitSize")?,
            dialect,
            rec.limits().max_call_depth,
        )?;
        rec.create(op, &[])
    }
}

impl Operation for FromHeightSlang {
    fn name(&self) -> &str {
        "HeightMap.FromHeightSlang"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        let excerpt: String = self.text.chars().take(40).collect();
        let more = if self.text.chars().count() > 40 { "..." } else { "" };
        format!("\"{}{more}\", {}, {}", excerpt.escape_debug(), self.unit_size, self.program.dialect())
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        render_program(target.as_map_mut()?, ctx, self.unit_size, &self.program, &self.text)
    }
}

/// Minimum rows per rayon task (as the engine's row loops).
const MIN_ROWS_PER_TASK: usize = 8;

/// Evaluates `program` at every pixel of `map` (rows in parallel, one workspace per task so its
/// row cache serves the next rows), heights saturated. An evaluation error is reported for the
/// first failing pixel in row order, whatever the thread count. A program can take long over a
/// large map: once the render is given up (`ctx.stop`), the rows not yet evaluated are left as
/// they are (the render is abandoned at its next step).
pub(crate) fn render_program(
    map: &mut HeightMap,
    ctx: &KernelContext,
    unit_size: f64,
    program: &Program,
    text: &str,
) -> Result<(), RenderError> {
    let rect = map.rect();
    if rect.is_empty() {
        return Ok(());
    }
    let (scale, stop) = (ctx.scale, &ctx.stop);
    let width = map.width();
    let first_error: Mutex<Option<(i64, i64, EvalError)>> = Mutex::new(None);
    map.data_mut().par_chunks_mut(width).with_min_len(MIN_ROWS_PER_TASK).enumerate().for_each_init(
        || (program.workspace(), vec![0.0f64; width], vec![0.0f64; width]),
        |(ws, xs, values), (row, data)| {
            if stop.requested() {
                return;
            }
            let py = rect.y + row as i64;
            let y = to_logical(py, scale) / unit_size;
            for (i, x) in xs.iter_mut().enumerate() {
                *x = to_logical(rect.x + i as i64, scale) / unit_size;
            }
            match program.eval_row(xs, y, values, ws) {
                Ok(()) => {
                    for (h, &v) in data.iter_mut().zip(values.iter()) {
                        *h = saturate(v as f32);
                    }
                }
                Err(error) => {
                    let column = xs.iter().position(|&x| program.eval_point(&[x, y]).is_err()).unwrap_or(0);
                    let px = rect.x + column as i64;
                    if let Ok(mut first) = first_error.lock() {
                        if first.as_ref().is_none_or(|(fy, fx, _)| (py, px) < (*fy, *fx)) {
                            *first = Some((py, px, error));
                        }
                    }
                }
            }
        },
    );
    let first = first_error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    match first {
        None => Ok(()),
        Some((py, px, error)) => {
            let (lx, ly) = (to_logical(px, scale), to_logical(py, scale));
            let message = format!(
                "in the Height-Slang program{}: {} (at the map point ({lx}, {ly}), where x = {}, y = {})",
                position(text, error.span),
                error.message,
                lx / unit_size,
                ly / unit_size
            );
            let mut diagnostic = Diagnostic::new(error.code, message);
            diagnostic.hint = error.hint;
            Err(RenderError::Kernel { diagnostic: Box::new(diagnostic), location: None })
        }
    }
}
