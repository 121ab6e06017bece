//! Coherent noise: gradient (Perlin), OpenSimplex2-style simplex and cellular (Worley) noise,
//! their fractal sums (fBm, billow, ridged, with per-octave weighting) and the point evaluation
//! domain warping needs; vectorised, and bit-identical on every instruction set.
//!
//! **Coordinates.** A pixel is evaluated at its logical coordinate `l = p / scale` (f64), times
//! the octave's frequency `f_o = lacunarity^o / wavelength` (f64, by repeated multiplication). The
//! product is split in f64 into the lattice cell (floor, clamped to i32) and the fraction (exact,
//! then rounded to f32); everything after that is f32. So a pixel depends only on its own logical
//! coordinate: every tile, origin and thread count gives the same bits. For gradient and cellular
//! noise the split of each column is the same in every row and is made once per step (a table per
//! octave); simplex noise skews x and y together, so it splits per pixel (four f64 lanes at a time).
//!
//! **Vectors.** The kernels are generic over [`simd::Lanes`]: the scalar instantiation is the
//! reference, AVX2 (eight lanes, detected at run time on x86-64) gives the same bits lane by lane
//! (see `simd.rs` for why, and the tests below, which compare them on random inputs). Other
//! targets run the scalar instantiation, which gives the same bits too.
//!
//! **Seeds.** Octave `o` uses seed `seed + o` (wrapping); operations derive `seed` from the
//! script's seed (see the operations).

mod basis;
use crate::lanes as simd;

pub use basis::{CellOutput, Cellular, Distance};

use geogen_render::raster::HeightMap;
use geogen_render::rows::for_each_row;
use geogen_render::scale::to_logical;
use simd::{Lanes, Scalar, Vf, Vi};

/// The widest vector: tables and rows are padded to a multiple of it.
const MAX_LANES: usize = 8;
/// The most octaves a fractal may have.
pub const MAX_OCTAVES: u32 = 16;

/// The basis function of a noise.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Basis {
    Perlin,
    Simplex,
    Cellular(Cellular),
}

/// How octaves are combined.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FractalKind {
    /// Σ aₒ·n: fractal Brownian motion.
    Fbm,
    /// Σ aₒ·(2|n| − 1): rounded hills, sharp valleys.
    Billow,
    /// Σ aₒ·(1 − 2|n|): sharp ridges where the noise crosses zero.
    Ridged,
}

impl FractalKind {
    pub const NAMES: &'static [&'static str] = &["fbm", "billow", "ridged"];
    pub fn from_name(name: &str) -> Option<FractalKind> {
        Some(match name {
            "fbm" => FractalKind::Fbm,
            "billow" => FractalKind::Billow,
            "ridged" => FractalKind::Ridged,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            FractalKind::Fbm => "fbm",
            FractalKind::Billow => "billow",
            FractalKind::Ridged => "ridged",
        }
    }
}

/// A fractal sum of octaves.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Fractal {
    pub kind: FractalKind,
    /// 1..=[`MAX_OCTAVES`].
    pub octaves: u32,
    /// Amplitude ratio of successive octaves.
    pub gain: f32,
    /// Frequency ratio of successive octaves.
    pub lacunarity: f64,
    /// Per-octave weighting in [0, 1]: each octave's amplitude is also multiplied by
    /// `1 + w·(t − 1)`, t = (v + 1)/2 the previous octave's value mapped to [0, 1] (0: plain sums).
    pub weighting: f32,
}

impl Fractal {
    /// One octave.
    pub const SINGLE: Fractal =
        Fractal { kind: FractalKind::Fbm, octaves: 1, gain: 0.5, lacunarity: 2.0, weighting: 0.0 };

    fn octaves(&self) -> usize {
        self.octaves.clamp(1, MAX_OCTAVES) as usize
    }

    /// The nominal amplitudes gᵒ (f32, by repeated multiplication) and `1 / Σ gᵒ`, which bounds
    /// the sum to [−1, 1].
    pub fn bounding(&self) -> f32 {
        let mut amp = 1.0f32;
        let mut total = 0.0f32;
        for _ in 0..self.octaves() {
            total += amp;
            amp *= self.gain;
        }
        1.0 / total
    }
}

/// A noise field: basis, wavelength (logical units), fractal, seed.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct NoiseSpec {
    pub basis: Basis,
    pub wavelength: f64,
    pub fractal: Fractal,
    pub seed: u32,
}

impl NoiseSpec {
    /// The frequency of each octave: `1 / wavelength`, times the lacunarity per octave.
    pub fn frequencies(&self) -> Vec<f64> {
        let mut f = 1.0 / self.wavelength;
        (0..self.fractal.octaves())
            .map(|_| {
                let this = f;
                f *= self.fractal.lacunarity;
                this
            })
            .collect()
    }

    /// Scratch bytes of one render over `width` columns (the per-octave column tables).
    pub fn scratch_bytes(&self, width: u64) -> u64 {
        let padded = width.saturating_add(MAX_LANES as u64);
        padded.saturating_mul(16).saturating_mul(self.fractal.octaves() as u64)
    }
}

/// The instruction sets a kernel can run on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Isa {
    /// One lane of plain Rust: the reference, on every target.
    Scalar,
    /// Eight lanes of AVX2 (x86-64, detected at run time).
    Avx2,
}

impl Isa {
    /// Whether this machine can run it.
    pub fn is_available(self) -> bool {
        match self {
            Isa::Scalar => true,
            Isa::Avx2 => geogen_simd::Isa::Avx2.is_supported(),
        }
    }

    /// The one the process runs ([`geogen_simd::active`]; the vector builds take AVX-512 where
    /// that is the process's level).
    pub fn best() -> Isa {
        if geogen_simd::enabled(geogen_simd::Isa::Avx2) {
            Isa::Avx2
        } else {
            Isa::Scalar
        }
    }

    /// All available ones (for the tests and the benchmark).
    pub fn available() -> Vec<Isa> {
        [Isa::Scalar, Isa::Avx2].into_iter().filter(|i| i.is_available()).collect()
    }
}

/// Per-octave column tables of a row render: for separable bases the cell and fraction of each
/// column, for simplex the f64 coordinate itself (`[octave × stride + column]`).
struct Columns {
    stride: usize,
    cells: Vec<i32>,
    fracs: Vec<f32>,
    coords: Vec<f64>,
}

/// One octave's per-row values: cell, fraction and coordinate (eight copies, for simplex).
#[derive(Copy, Clone, Default)]
struct RowOctave {
    cell: i32,
    frac: f32,
    coord: [f64; MAX_LANES],
}

/// Everything a row kernel reads.
struct RowJob<'a> {
    spec: &'a NoiseSpec,
    bounding: f32,
    columns: &'a Columns,
    rows: &'a [RowOctave],
}

fn padded(width: usize) -> usize {
    width.div_ceil(MAX_LANES) * MAX_LANES
}

/// Fills `map` (every pixel) with the noise, rows in parallel, on `isa` if available (else scalar).
pub fn render_field(map: &mut HeightMap, scale: f64, spec: &NoiseSpec, isa: Isa) {
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    let width = rect.width as usize;
    let stride = padded(width);
    let freqs = spec.frequencies();
    let logical: Vec<f64> = (0..stride as i64).map(|i| to_logical(rect.x.saturating_add(i), scale)).collect();
    let simplex = matches!(spec.basis, Basis::Simplex);
    let mut columns = Columns { stride, cells: Vec::new(), fracs: Vec::new(), coords: Vec::new() };
    for &f in &freqs {
        for &l in &logical {
            if simplex {
                columns.coords.push(l * f);
            } else {
                let (c, t) = simd::split1(l * f);
                columns.cells.push(c);
                columns.fracs.push(t);
            }
        }
    }
    let bounding = spec.fractal.bounding();
    let isa = if isa.is_available() { isa } else { Isa::Scalar };
    for_each_row(map, |py, _, row| {
        let ly = to_logical(py, scale);
        let rows: Vec<RowOctave> = freqs
            .iter()
            .map(|&f| {
                let y = ly * f;
                let (cell, frac) = simd::split1(y);
                RowOctave { cell, frac, coord: [y; MAX_LANES] }
            })
            .collect();
        let job = RowJob { spec, bounding, columns: &columns, rows: &rows };
        run_row(isa, &job, row);
    });
}

fn run_row(isa: Isa, job: &RowJob<'_>, out: &mut [f32]) {
    match isa {
        // SAFETY: `render_field` only passes Avx2 when it is available.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { row_avx2(job, out) },
        _ => row_generic::<Scalar>(job, out),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn row_avx2(job: &RowJob<'_>, out: &mut [f32]) {
    row_generic::<simd::Avx2>(job, out)
}

#[inline(always)]
fn row_generic<S: Lanes>(job: &RowJob<'_>, out: &mut [f32]) {
    match job.spec.basis {
        Basis::Perlin => row_with::<S>(job, out, |s, xi, xf, yi, yf| basis::perlin(s, xi, xf, yi, yf)),
        Basis::Cellular(c) => row_with::<S>(job, out, |s, xi, xf, yi, yf| basis::cellular(s, xi, xf, yi, yf, &c)),
        Basis::Simplex => row_simplex::<S>(job, out),
    }
}

/// Writes `LANES` values of a chunk starting at `i` (through a buffer at the padded end).
#[inline(always)]
fn store<S: Lanes>(v: Vf<S>, out: &mut [f32], i: usize) {
    let v = v.max(Vf::splat(-1.0)).min(Vf::splat(1.0));
    if i + S::LANES <= out.len() {
        S::store(v.0, &mut out[i..]);
    } else {
        let mut buffer = [0.0f32; MAX_LANES];
        S::store(v.0, &mut buffer);
        let n = out.len() - i;
        out[i..].copy_from_slice(&buffer[..n]);
    }
}

/// The fractal sum over octaves of `sample(o, seed_o)`, one chunk of lanes.
#[inline(always)]
fn fractal<S: Lanes>(f: &Fractal, bounding: f32, seed: u32, mut sample: impl FnMut(usize, Vi<S>) -> Vf<S>) -> Vf<S> {
    let one = Vf::splat(1.0);
    let half = Vf::splat(0.5);
    let two = Vf::splat(2.0);
    let gain = Vf::splat(f.gain);
    let weighting = Vf::splat(f.weighting);
    let mut sum = Vf::splat(0.0);
    let mut amp = one;
    for o in 0..f.octaves() {
        let n = sample(o, Vi::splat(seed.wrapping_add(o as u32) as i32));
        let v = match f.kind {
            FractalKind::Fbm => n,
            FractalKind::Billow => n.abs() * two - one,
            FractalKind::Ridged => one - n.abs() * two,
        };
        sum = sum + v * amp;
        amp = amp * gain;
        if f.weighting != 0.0 {
            let t = (v + one) * half;
            amp = amp * (one + weighting * (t - one));
        }
    }
    sum * Vf::splat(bounding)
}

#[inline(always)]
fn row_with<S: Lanes>(job: &RowJob<'_>, out: &mut [f32], basis: impl Fn(Vi<S>, Vi<S>, Vf<S>, Vi<S>, Vf<S>) -> Vf<S>) {
    let c = job.columns;
    let mut i = 0;
    while i < out.len() {
        let v = fractal::<S>(&job.spec.fractal, job.bounding, job.spec.seed, |o, seed| {
            let at = o * c.stride + i;
            let r = &job.rows[o];
            let xi = Vi(S::load_i(&c.cells[at..]));
            let xf = Vf(S::load(&c.fracs[at..]));
            basis(seed, xi, xf, Vi::splat(r.cell), Vf::splat(r.frac))
        });
        store(v, out, i);
        i += S::LANES;
    }
}

#[inline(always)]
fn row_simplex<S: Lanes>(job: &RowJob<'_>, out: &mut [f32]) {
    let c = job.columns;
    let mut i = 0;
    while i < out.len() {
        let v = fractal::<S>(&job.spec.fractal, job.bounding, job.spec.seed, |o, seed| {
            let at = o * c.stride + i;
            let (xi, xf, yi, yf) = S::split_skewed(&c.coords[at..], &job.rows[o].coord, basis::SKEW_F2);
            basis::simplex(seed, Vi(xi), Vf(xf), Vi(yi), Vf(yf))
        });
        store(v, out, i);
        i += S::LANES;
    }
}

/// One octave of a basis at arbitrary points: `out[k] = basis(seed, (xs[k]·f, ys[k]·f))`, not
/// clamped. `xs` and `ys` are as long as `out` (the tail is padded internally). Used by domain
/// warping; at `xs = l_x`, `ys = l_y` it gives exactly the first octave of [`render_field`].
pub fn eval_points(basis: &Basis, seed: u32, frequency: f64, xs: &[f64], ys: &[f64], out: &mut [f32], isa: Isa) {
    let isa = if isa.is_available() { isa } else { Isa::Scalar };
    let job = PointJob { basis, seed, frequency };
    let n = out.len().min(xs.len()).min(ys.len());
    let whole = n / MAX_LANES * MAX_LANES;
    run_points(isa, &job, &xs[..whole], &ys[..whole], &mut out[..whole]);
    if whole < n {
        let mut bx = [0.0f64; MAX_LANES];
        let mut by = [0.0f64; MAX_LANES];
        let mut bo = [0.0f32; MAX_LANES];
        bx[..n - whole].copy_from_slice(&xs[whole..n]);
        by[..n - whole].copy_from_slice(&ys[whole..n]);
        run_points(isa, &job, &bx, &by, &mut bo);
        out[whole..n].copy_from_slice(&bo[..n - whole]);
    }
}

struct PointJob<'a> {
    basis: &'a Basis,
    seed: u32,
    frequency: f64,
}

fn run_points(isa: Isa, job: &PointJob<'_>, xs: &[f64], ys: &[f64], out: &mut [f32]) {
    match isa {
        // SAFETY: `eval_points` only passes Avx2 when it is available.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { points_avx2(job, xs, ys, out) },
        _ => points_generic::<Scalar>(job, xs, ys, out),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn points_avx2(job: &PointJob<'_>, xs: &[f64], ys: &[f64], out: &mut [f32]) {
    points_generic::<simd::Avx2>(job, xs, ys, out)
}

/// `xs`, `ys`, `out` of equal lengths, a multiple of `S::LANES`.
#[inline(always)]
fn points_generic<S: Lanes>(job: &PointJob<'_>, xs: &[f64], ys: &[f64], out: &mut [f32]) {
    let seed = Vi::<S>::splat(job.seed as i32);
    let f = job.frequency;
    let mut bx = [0.0f64; MAX_LANES];
    let mut by = [0.0f64; MAX_LANES];
    let mut i = 0;
    while i + S::LANES <= out.len() {
        for k in 0..S::LANES {
            bx[k] = xs[i + k] * f;
            by[k] = ys[i + k] * f;
        }
        let v = match job.basis {
            Basis::Simplex => {
                let (xi, xf, yi, yf) = S::split_skewed(&bx, &by, basis::SKEW_F2);
                basis::simplex(seed, Vi(xi), Vf(xf), Vi(yi), Vf(yf))
            }
            other => {
                let (xi, xf) = S::split(&bx);
                let (yi, yf) = S::split(&by);
                match other {
                    Basis::Cellular(c) => basis::cellular(seed, Vi(xi), Vf(xf), Vi(yi), Vf(yf), c),
                    _ => basis::perlin(seed, Vi(xi), Vf(xf), Vi(yi), Vf(yf)),
                }
            }
        };
        S::store(v.0, &mut out[i..]);
        i += S::LANES;
    }
}

#[cfg(test)]
mod tests;
