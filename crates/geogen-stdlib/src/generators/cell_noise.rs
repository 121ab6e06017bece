//! `HeightMap.CellNoise(meanCellSize, seed = 0)`: Worley (cellular) noise, the distance to the
//! nearest random feature point.

use geogen_diag::codes;
use geogen_random::{combine_seeds, field_int, hash1, Mt19937};
use geogen_render::raster::saturate;
use geogen_render::scale::to_logical;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_render::rows::for_each_row;

#[derive(Clone, Debug, PartialEq)]
pub struct CellNoise {
    /// Cell size n in logical units (≥ 1).
    pub cell_size: u32,
    /// The `RandomSequence2D` current values of the X and Y offsets.
    pub x_current: u32,
    pub y_current: u32,
}

impl CellNoise {
    /// The original's seeding: X offsets from `RandomSequence2D(CombineSeeds(seed, scriptSeed))`,
    /// Y offsets from `RandomSequence2D(Hash(that))`.
    pub fn new(cell_size: u32, seed: u32, script_seed: u32) -> CellNoise {
        let combined = combine_seeds(&[seed, script_seed]);
        CellNoise {
            cell_size: cell_size.max(1),
            x_current: Mt19937::new(combined).next_u32(),
            y_current: Mt19937::new(hash1(combined)).next_u32(),
        }
    }

    /// The feature point of the cell whose corner is the logical point (x, y) (multiples of n):
    /// the corner plus a random offset in [0, n − 1] per axis.
    #[inline]
    fn feature(&self, x: i64, y: i64) -> (f64, f64) {
        let n = self.cell_size;
        // Coordinates wrap to 32 bits as in the original's `int` arithmetic.
        let (hx, hy) = (x as i32, y as i32);
        let dx = field_int(self.x_current, hx, hy) % n;
        let dy = field_int(self.y_current, hx, hy) % n;
        (x as f64 + f64::from(dx), y as f64 + f64::from(dy))
    }
}

impl Declared for CellNoise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "CellNoise",
        receiver: Receiver::Static,
        params: &[
            Param::new("meanCellSize", Kind::Range { min: 1.0, max: 4294967295.0, code: codes::GGE2309 }),
            Param::seed("seed"),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "Cellular (Worley) noise: the plane is cut into squares of `meanCellSize` n (truncated to \
                  whole units), each holding one random point; each pixel's height is its distance to \
                  the nearest point divided by n√2, in [0, 1). Seeded by `seed` and the script seed as \
                  the original; unlike it, cells are right at negative coordinates and in logical units \
                  at any scale.",
        examples: &[Example {
            // Feature points from the original's hash and MT19937 for script seed 0 and seed 0; e.g.
            // (3, 1) is √5 from the nearest one, so its height is √5 / (4√2).
            script: "yield HeightMap.CellNoise(4);",
            size: (8, 8),
            expect: &[(0, 0, 0.0), (3, 1, 0.395_284_7), (5, 6, 0.353_553_4), (7, 2, 0.5)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let cell_size = call.number("meanCellSize")?.trunc().clamp(1.0, u32::MAX as f64) as u32;
        rec.create(CellNoise::new(cell_size, call.seed("seed")?, rec.script_seed()), &[])
    }
}

impl Operation for CellNoise {
    fn name(&self) -> &str {
        "HeightMap.CellNoise"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!("{}, {:#x}, {:#x}", self.cell_size, self.x_current, self.y_current)
    }
    fn is_row_local(&self) -> bool {
        true
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let map = target.as_map_mut()?;
        let rect = map.rect();
        if rect.is_empty() {
            return Ok(());
        }
        let n = i64::from(self.cell_size);
        let nf = n as f64;
        let normaliser = nf * std::f64::consts::SQRT_2;
        let scale = ctx.scale;
        let cell_of = |l: f64| {
            let c = libm::floor(l / nf);
            if c.is_nan() {
                0
            } else {
                c as i64
            }
        };
        let last_x = rect.last_pixel().0;
        let (first_cell, last_cell) = (cell_of(to_logical(rect.x, scale)), cell_of(to_logical(last_x, scale)));
        // Cells of the row plus one on each side; a 3×3 neighbourhood never leaves them.
        let columns = (last_cell.saturating_sub(first_cell) as u64).saturating_add(3);
        if columns > rect.width.saturating_mul(3) {
            // Cells smaller than pixels (a tiny scale): look each pixel's neighbourhood up directly.
            for_each_row(map, |py, x0, row| {
                let ly = to_logical(py, scale);
                for (i, h) in row.iter_mut().enumerate() {
                    let lx = to_logical(x0 + i as i64, scale);
                    let (cx, cy) = (cell_of(lx), cell_of(ly));
                    let mut nearest = f64::INFINITY;
                    for dj in -1..=1 {
                        for di in -1..=1 {
                            let (fx, fy) = self.feature(
                                cx.saturating_add(di).saturating_mul(n),
                                cy.saturating_add(dj).saturating_mul(n),
                            );
                            let (dx, dy) = (lx - fx, ly - fy);
                            nearest = nearest.min(dx * dx + dy * dy);
                        }
                    }
                    *h = saturate((libm::sqrt(nearest) / normaliser) as f32);
                }
            });
            return Ok(());
        }
        let columns = columns as usize;
        for_each_row(map, |py, x0, row| {
            let ly = to_logical(py, scale);
            let cy = cell_of(ly);
            // The feature points of the three cell rows around this row, per cell column.
            let features: Vec<[(f64, f64); 3]> = (0..columns)
                .map(|k| {
                    let x = first_cell.saturating_sub(1).saturating_add(k as i64).saturating_mul(n);
                    let y = |dj: i64| cy.saturating_add(dj).saturating_mul(n);
                    [self.feature(x, y(-1)), self.feature(x, y(0)), self.feature(x, y(1))]
                })
                .collect();
            for (i, h) in row.iter_mut().enumerate() {
                let lx = to_logical(x0 + i as i64, scale);
                let k = cell_of(lx).saturating_sub(first_cell) as usize; // the left neighbour's index
                let mut nearest = f64::INFINITY;
                for column in features.get(k..k.saturating_add(3)).unwrap_or(&[]) {
                    for &(fx, fy) in column {
                        let (dx, dy) = (lx - fx, ly - fy);
                        nearest = nearest.min(dx * dx + dy * dy);
                    }
                }
                *h = saturate((libm::sqrt(nearest) / normaliser) as f32);
            }
        });
        Ok(())
    }
}
