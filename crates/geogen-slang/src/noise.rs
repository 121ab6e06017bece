//! picogen's value noise and the three configurable functions built on it (`LayeredNoise`,
//! `Noise`, `Layers`), as the final 2008 code computes them (spec height-slang §1.4).
//!
//! * **Tables**: MT19937 seeded with `init_genrand(seed)`; 256 times, alternately,
//!   `P[i] = trunc(256·r)` and `V[i] = r' − 0.5`, with `r = u32 / 4294967295`.
//! * **Lattice**: `L(i, j) = V[(j + P[(i + P[0]) & 255]) & 255]`, so the noise repeats every 256
//!   cells, and every octave reads the same lattice.
//! * **Filters** at `(s, t)` in lattice units: `nearest` is `L(⌊s⌋, ⌊t⌋)`; `bilinear`
//!   interpolates the four corners with `fs = s − ⌊s⌋`, `ft`; `cosine` replaces each weight `w`
//!   by `(1 − cos(π·w)) / 2`, with the single-precision π the original uses.
//!
//! Interpolation order (fixed here, so every path gives the same bits): first along y for each
//! of the two columns, `c(i) = L(i, j0)·(1 − wt) + L(i, j1)·wt`, then along x,
//! `c(i0)·(1 − ws) + c(i1)·ws`. On a row, y is the same for every pixel, so the kernel computes
//! `c(i)` once per octave for all 256 columns and each pixel only interpolates along x.
//!
//! The cosine weight is evaluated by a polynomial (within 2.3e-16 of `(1 − cos(π·w))/2` for
//! `w ∈ [0, 1]`, the only weights the documented dialect produces), because a call of `cos` per
//! pixel and octave would cost more than everything else; other weights (the picogen-2008
//! dialect can produce `w = 1` and, for huge coordinates, any value) go through `libm::cos`.

use std::sync::Arc;

use geogen_diag::{codes, Diagnostic, Span};
use geogen_random::Mt19937;

use crate::dialect::Dialect;
use crate::eval::{EvalError, Program, Workspace};
use crate::ops::{x86_i32, x86_u32};

/// π as the original's `3.14159265f`, read as a double.
pub const PI_F32: f64 = 3.141_592_741_012_573_2;

/// The permutation and value tables of one seed.
#[derive(Clone, PartialEq)]
pub struct Tables {
    seed: u32,
    /// `trunc(256·r)`: 0..=256 (256 only if the draw is exactly 1).
    p: [u32; 256],
    v: [f64; 256],
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tables {{ seed: {} }}", self.seed)
    }
}

impl Tables {
    pub fn new(seed: u32) -> Tables {
        let mut mt = Mt19937::new(seed);
        let mut p = [0u32; 256];
        let mut v = [0.0f64; 256];
        for i in 0..256 {
            // 256·r is exact (a power of two), so `as` truncates exactly as the original's cast.
            p[i] = (256.0 * mt.next_unit()) as u32;
            v[i] = mt.next_unit() - 0.5;
        }
        Tables { seed, p, v }
    }

    pub fn seed(&self) -> u32 {
        self.seed
    }

    pub fn permutation(&self) -> &[u32; 256] {
        &self.p
    }

    pub fn values(&self) -> &[f64; 256] {
        &self.v
    }

    /// `L(i, j)`; integer arithmetic wraps, so any `i`, `j` (only their low 8 bits matter).
    #[inline]
    pub fn lattice(&self, i: u32, j: u32) -> f64 {
        let column = self.p[(i.wrapping_add(self.p[0]) & 255) as usize];
        self.v[(j.wrapping_add(column) & 255) as usize]
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    Nearest,
    Bilinear,
    Cosine,
}

impl Filter {
    pub const NAMES: &'static [&'static str] = &["nearest", "bilinear", "cosine"];

    pub fn name(self) -> &'static str {
        match self {
            Filter::Nearest => "nearest",
            Filter::Bilinear => "bilinear",
            Filter::Cosine => "cosine",
        }
    }

    pub fn from_name(name: &str) -> Option<Filter> {
        [Filter::Nearest, Filter::Bilinear, Filter::Cosine].into_iter().find(|f| f.name() == name)
    }
}

/// `(1 − cos(π·w)) / 2` with the original's single-precision π.
#[inline]
pub fn cosine_weight(w: f64) -> f64 {
    if (0.0..=1.0).contains(&w) {
        cosine_weight_unit(w)
    } else {
        (1.0 - libm::cos(PI_F32 * w)) / 2.0
    }
}

/// [`cosine_weight`] for `w` ∈ [0, 1].
#[inline(always)]
fn cosine_weight_unit(w: f64) -> f64 {
    {
        // cos(θ) = −sin(θ − π/2): with u = θ − π/2 (Cody-Waite, π/2 in two parts) the polynomial
        // only sees |u| ≤ π/2, where the Taylor series of sin to u^23 is exact to 1e-20.
        const PIO2_HI: f64 = std::f64::consts::FRAC_PI_2;
        const PIO2_LO: f64 = 6.123_233_995_736_766e-17;
        let u = (PI_F32 * w - PIO2_HI) - PIO2_LO;
        let z = u * u;
        // sin(u)/u = Σ (−1)^k z^k / (2k+1)!, k ≤ 10, by Estrin's scheme (a short dependency chain:
        // this runs once per pixel and octave).
        const C: [f64; 11] = [
            1.0,
            -1.666_666_666_666_666_6e-1,
            8.333_333_333_333_333e-3,
            -1.984_126_984_126_984e-4,
            2.755_731_922_398_589_3e-6,
            -2.505_210_838_544_172e-8,
            1.605_904_383_682_161_3e-10,
            -7.647_163_731_819_816e-13,
            2.811_457_254_345_520_6e-15,
            -8.220_635_246_624_33e-18,
            1.957_294_106_339_126_3e-20,
        ];
        let z2 = z * z;
        let z4 = z2 * z2;
        let z8 = z4 * z4;
        let q0 = (C[0] + C[1] * z) + (C[2] + C[3] * z) * z2;
        let q1 = (C[4] + C[5] * z) + (C[6] + C[7] * z) * z2;
        let q2 = (C[8] + C[9] * z) + C[10] * z2;
        let p = (q0 + q1 * z4) + q2 * z8;
        0.5 + 0.5 * (u * p)
    }
}

/// The low 32 bits of `⌊s⌋` (exact for every finite `s`; 0 for NaN and infinities, whose
/// weight is NaN anyway).
#[inline]
fn floor_bits(fl: f64) -> u32 {
    if fl.abs() < 9_223_372_036_854_775_808.0 {
        (fl as i64) as u32
    } else {
        // |fl| ≥ 2^63 is a multiple of 2^11: its low bits are 0.
        0
    }
}

/// One coordinate's two lattice corners and the weight of the second.
#[inline]
fn corners(s: f64, quirk: bool) -> (u32, u32, f64) {
    if quirk {
        // The original: `i = s < 0 ? int(s − 1) : int(s)` for s and for s + 1, and the weight
        // `s − i0`. Equal to the floor except at s = −1 exactly, where i1 is 0 instead of −1
        // (and at negative integers the cosine weight of 1 is 1 − 2e-15 rather than 0 of the
        // other corner).
        let corner = |v: f64| if v < 0.0 { x86_i32(v - 1.0) } else { x86_i32(v) };
        let i0 = corner(s);
        let i1 = corner(s + 1.0);
        (i0 as u32, i1 as u32, s - f64::from(i0))
    } else {
        let fl = crate::ops::floor(s);
        let i0 = floor_bits(fl);
        (i0, i0.wrapping_add(1), s - fl)
    }
}

/// The lattice and filter of `LayeredNoise` and `Noise`.
#[derive(Clone, Debug, PartialEq)]
pub struct Lattice {
    pub tables: Arc<Tables>,
    pub filter: Filter,
    /// The picogen-2008 corner computation and x86 conversions.
    pub quirks: bool,
}

impl Lattice {
    pub fn new(tables: Arc<Tables>, filter: Filter, dialect: Dialect) -> Lattice {
        Lattice { tables, filter, quirks: dialect.is_compat() }
    }

    #[inline]
    fn weight(&self, w: f64) -> f64 {
        match self.filter {
            Filter::Cosine => cosine_weight(w),
            _ => w,
        }
    }

    /// The lattice column of `nearest`.
    #[inline]
    fn nearest_index(&self, s: f64) -> u32 {
        if self.quirks {
            x86_u32(s)
        } else {
            floor_bits(crate::ops::floor(s))
        }
    }

    /// `c(i)` for the row `t`, as in the module docs: the y-interpolated value of column `i`.
    #[inline]
    fn column(&self, i: u32, j0: u32, j1: u32, wt: f64) -> f64 {
        self.tables.lattice(i, j0) * (1.0 - wt) + self.tables.lattice(i, j1) * wt
    }

    /// The filtered noise at `(s, t)` in lattice units, in [−0.5, 0.5] (NaN for NaN or infinite
    /// coordinates in the documented dialect).
    #[inline]
    pub fn sample(&self, s: f64, t: f64) -> f64 {
        if self.filter == Filter::Nearest {
            if !self.quirks && (!s.is_finite() || !t.is_finite()) {
                return f64::NAN;
            }
            return self.tables.lattice(self.nearest_index(s), self.nearest_index(t));
        }
        let (i0, i1, fs) = corners(s, self.quirks);
        let (j0, j1, ft) = corners(t, self.quirks);
        let (ws, wt) = (self.weight(fs), self.weight(ft));
        self.column(i0, j0, j1, wt) * (1.0 - ws) + self.column(i1, j0, j1, wt) * ws
    }

    /// `out[l] = sample(s[l], t[l])`. When `t` is the same for every lane (a row), the 256
    /// column values are computed once and each lane only interpolates along x: the same
    /// operations as [`Lattice::sample`], so the same bits.
    pub fn sample_lanes(&self, s: &[f64], t: &[f64], out: &mut [f64], columns: &mut [f64; 256]) {
        let uniform = t.first().is_some_and(|t0| t.iter().all(|v| v.to_bits() == t0.to_bits()));
        if !uniform || s.len() < 32 {
            for ((o, &s), &t) in out.iter_mut().zip(s).zip(t) {
                *o = self.sample(s, t);
            }
            return;
        }
        let t0 = t[0];
        if self.filter == Filter::Nearest {
            if !self.quirks && !t0.is_finite() {
                out.fill(f64::NAN);
                return;
            }
            let j = self.nearest_index(t0);
            for (i, c) in columns.iter_mut().enumerate() {
                *c = self.tables.lattice(i as u32, j);
            }
            for (o, &s) in out.iter_mut().zip(s) {
                *o = if !self.quirks && !s.is_finite() {
                    f64::NAN
                } else {
                    columns[(self.nearest_index(s) & 255) as usize]
                };
            }
            return;
        }
        let (j0, j1, ft) = corners(t0, self.quirks);
        let wt = self.weight(ft);
        for (i, c) in columns.iter_mut().enumerate() {
            *c = self.column(i as u32, j0, j1, wt);
        }
        for (o, &s) in out.iter_mut().zip(s) {
            let (i0, i1, fs) = corners(s, self.quirks);
            let ws = self.weight(fs);
            *o = columns[(i0 & 255) as usize] * (1.0 - ws) + columns[(i1 & 255) as usize] * ws;
        }
    }
}

/// The octave loop shared by `LayeredNoise` and `Layers`: `f` starts at `frequency` and doubles,
/// `H = amp·e(Z)`, `amp = amp·p(H)`, `sum += H`.
#[derive(Clone, Debug)]
pub struct Octaves {
    pub frequency: f64,
    pub layer_count: u32,
    /// `p(x)`, x = this octave's H.
    pub persistence: Arc<Program>,
    /// `e(x)`, x = the raw noise Z.
    pub level: Arc<Program>,
}

/// A configurable function, its parameters read and its tables built.
#[derive(Clone, Debug)]
pub enum Function {
    LayeredNoise {
        lattice: Lattice,
        octaves: Octaves,
    },
    Noise {
        lattice: Lattice,
        frequency: f64,
    },
    /// `seed` is accepted and ignored, as in the original.
    Layers {
        octaves: Octaves,
        base: Arc<Program>,
    },
}

/// Scratch space of one function for one thread.
#[derive(Debug)]
pub struct FunctionWorkspace {
    bufs: Vec<f64>,
    columns: Box<[f64; 256]>,
    /// persistence, level, base (those the function has).
    nested: Vec<Workspace>,
    /// Which block of a row this call evaluates (set by the caller), for [`XCache`].
    pub(crate) slot: usize,
    /// Whether this function may cache (its program has few enough functions).
    caching: bool,
    /// Per block of a row: the x part of every octave, reused by the next rows.
    xcache: Vec<XCache>,
}

/// Blocks per row whose x part is cached (rows up to 32 × 256 = 8192 points), and octaves per
/// function: with at most [`MAX_CACHING_FUNCTIONS`] caching functions in a program, a thread's
/// caches stay under 40 MB whatever the program (about 5 KB per block and octave).
const CACHED_SLOTS: usize = 32;
const CACHED_OCTAVES: usize = 16;
pub(crate) const MAX_CACHING_FUNCTIONS: usize = 16;

/// The part of the noise that depends only on the first coordinate `a`, for one block: every
/// row of a grid has the same x values, so each octave's corners and weights are computed once
/// per block position and reused by every row (checked bit for bit against the block's `a`).
#[derive(Debug, Default)]
struct XCache {
    key: Vec<u64>,
    octaves: Vec<XOctave>,
}

#[derive(Debug, Default)]
struct XOctave {
    i0: Vec<u8>,
    i1: Vec<u8>,
    w: Vec<f64>,
    /// The lattice columns the block reads.
    used: [u64; 4],
}

impl XOctave {
    fn build(&mut self, lattice: &Lattice, s: &[f64]) {
        self.i0.clear();
        self.i1.clear();
        self.w.clear();
        self.used = [0; 4];
        for &s in s {
            let (i0, i1, fs) = corners(s, lattice.quirks);
            let (i0, i1) = ((i0 & 255) as u8, (i1 & 255) as u8);
            self.i0.push(i0);
            self.i1.push(i1);
            self.w.push(fs);
            for i in [i0, i1] {
                self.used[usize::from(i >> 6)] |= 1 << (i & 63);
            }
        }
        if lattice.filter == Filter::Cosine {
            cosine_weights(&mut self.w);
        }
    }
}

/// `w = cosine_weight(w)` for every lane; branch-free (so vectorised) when all are in [0, 1].
fn cosine_weights(w: &mut [f64]) {
    if w.iter().all(|w| (0.0..=1.0).contains(w)) {
        for w in w.iter_mut() {
            *w = cosine_weight_unit(*w);
        }
    } else {
        for w in w.iter_mut() {
            *w = cosine_weight(*w);
        }
    }
}

impl FunctionWorkspace {
    /// Whether this call can use the x cache: a row (the same `b` everywhere), long enough, an
    /// interpolating filter; resets the block's entry when its `a` changed.
    fn use_xcache(&mut self, lattice: &Lattice, a: &[f64], b: &[f64]) -> bool {
        let uniform = b.first().is_some_and(|b0| b.iter().all(|v| v.to_bits() == b0.to_bits()));
        if !self.caching || !uniform || a.len() < 32 || self.slot >= CACHED_SLOTS || lattice.filter == Filter::Nearest {
            return false;
        }
        if self.xcache.len() <= self.slot {
            self.xcache.resize_with(self.slot + 1, XCache::default);
        }
        let entry = &mut self.xcache[self.slot];
        let same = entry.key.len() == a.len() && entry.key.iter().zip(a).all(|(k, a)| *k == a.to_bits());
        if !same {
            entry.key.clear();
            entry.key.extend(a.iter().map(|a| a.to_bits()));
            entry.octaves.clear();
        }
        true
    }

    /// Octave `k`'s noise on a row `t`, with the block's cached x part (built from `s` the first
    /// time): the operations of [`Lattice::sample`], so the same bits.
    fn sample_cached(&mut self, lattice: &Lattice, k: usize, s: &[f64], t: f64, out: &mut [f64]) {
        let entry = &mut self.xcache[self.slot];
        while entry.octaves.len() <= k {
            entry.octaves.push(XOctave::default());
        }
        let octave = &mut entry.octaves[k];
        if octave.w.len() != s.len() {
            octave.build(lattice, s);
        }
        let (j0, j1, ft) = corners(t, lattice.quirks);
        let wt = lattice.weight(ft);
        let columns = &mut self.columns;
        for (word, &bits) in octave.used.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                columns[i] = lattice.column(i as u32, j0, j1, wt);
                bits &= bits - 1;
            }
        }
        for (((o, &i0), &i1), &w) in out.iter_mut().zip(&octave.i0).zip(&octave.i1).zip(&octave.w) {
            *o = columns[usize::from(i0)] * (1.0 - w) + columns[usize::from(i1)] * w;
        }
    }
}

impl Function {
    pub fn name(&self) -> &'static str {
        match self {
            Function::LayeredNoise { .. } => "LayeredNoise",
            Function::Noise { .. } => "Noise",
            Function::Layers { .. } => "Layers",
        }
    }

    /// The nested programs, in the order of [`FunctionWorkspace::nested`].
    pub fn programs(&self) -> Vec<&Arc<Program>> {
        match self {
            Function::LayeredNoise { octaves, .. } => vec![&octaves.persistence, &octaves.level],
            Function::Noise { .. } => Vec::new(),
            Function::Layers { octaves, base } => vec![&octaves.persistence, &octaves.level, base],
        }
    }

    pub fn workspace(&self, caching: bool) -> FunctionWorkspace {
        FunctionWorkspace {
            caching,
            bufs: Vec::new(),
            columns: Box::new([0.0; 256]),
            nested: self.programs().iter().map(|p| p.workspace()).collect(),
            slot: 0,
            xcache: Vec::new(),
        }
    }

    /// Operations one point costs (static; a recursive nested program counts one activation).
    pub fn cost(&self) -> u64 {
        let octaves_cost = |o: &Octaves, per_octave: u64| {
            u64::from(o.layer_count)
                .saturating_mul(per_octave.saturating_add(o.persistence.cost()).saturating_add(o.level.cost()))
        };
        match self {
            Function::LayeredNoise { octaves, .. } => octaves_cost(octaves, 12),
            Function::Noise { .. } => 12,
            Function::Layers { octaves, base } => octaves_cost(octaves, 4u64.saturating_add(base.cost())),
        }
    }

    /// Configurable functions in it, its parameter programs' included.
    pub fn function_count(&self) -> usize {
        1 + self.programs().iter().map(|p| p.function_count()).sum::<usize>()
    }

    /// Whether evaluating it can fail (a nested program recurses).
    pub fn may_fail(&self) -> bool {
        self.programs().iter().any(|p| p.may_fail())
    }

    /// `out[l] = f(a[l], b[l])`.
    pub fn eval(&self, a: &[f64], b: &[f64], out: &mut [f64], ws: &mut FunctionWorkspace) -> Result<(), EvalError> {
        let n = out.len().min(a.len()).min(b.len());
        let (a, b, out) = (&a[..n], &b[..n], &mut out[..n]);
        match self {
            Function::Noise { lattice, frequency } => {
                let cached = ws.use_xcache(lattice, a, b);
                // The coordinates live outside the workspace while it is borrowed for sampling.
                let mut bufs = std::mem::take(&mut ws.bufs);
                bufs.resize(2 * n, 0.0);
                let (s, t) = bufs.split_at_mut(n);
                for ((s, t), (&a, &b)) in s.iter_mut().zip(t.iter_mut()).zip(a.iter().zip(b)) {
                    *s = a * frequency;
                    *t = b * frequency;
                }
                if cached {
                    ws.sample_cached(lattice, 0, s, t[0], out);
                } else {
                    lattice.sample_lanes(s, t, out, &mut ws.columns);
                }
                ws.bufs = bufs;
                Ok(())
            }
            Function::LayeredNoise { lattice, octaves, .. } => {
                let cached = ws.use_xcache(lattice, a, b);
                octave_loop(octaves, a, b, out, ws, |k, s, t, z, ws| {
                    if cached && k < CACHED_OCTAVES {
                        ws.sample_cached(lattice, k, s, t[0], z);
                    } else {
                        lattice.sample_lanes(s, t, z, &mut ws.columns);
                    }
                    Ok(())
                })
            }
            Function::Layers { octaves, base } => octave_loop(octaves, a, b, out, ws, |_, s, t, z, ws| {
                let slot = ws.slot;
                let Some(base_ws) = ws.nested.get_mut(2) else {
                    return Err(EvalError::internal("Layers without base workspace"));
                };
                base_ws.slot_base = slot;
                base.eval_lanes(&[s, t], z, base_ws)
            }),
        }
    }
}

/// The octave loop over `n` lanes; `noise(s, t, z, ws)` writes octave k's raw noise Z for the
/// scaled coordinates `s = a·f`, `t = b·f`.
fn octave_loop(
    octaves: &Octaves,
    a: &[f64],
    b: &[f64],
    sum: &mut [f64],
    ws: &mut FunctionWorkspace,
    noise: impl Fn(usize, &[f64], &[f64], &mut [f64], &mut FunctionWorkspace) -> Result<(), EvalError>,
) -> Result<(), EvalError> {
    let n = sum.len();
    sum.fill(0.0);
    // bufs: s, t, z, e, h, p, amp
    let mut bufs = std::mem::take(&mut ws.bufs);
    bufs.resize(7 * n, 0.0);
    let result = (|| {
        let (s, rest) = bufs.split_at_mut(n);
        let (t, rest) = rest.split_at_mut(n);
        let (z, rest) = rest.split_at_mut(n);
        let (e, rest) = rest.split_at_mut(n);
        let (h, rest) = rest.split_at_mut(n);
        let (p, amp) = rest.split_at_mut(n);
        amp.fill(1.0);
        let level_identity = octaves.level.is_identity();
        let level_constant = octaves.level.constant();
        let persistence_constant = octaves.persistence.constant();
        let mut f = octaves.frequency;
        let slot = ws.slot;
        for nested in ws.nested.iter_mut() {
            nested.slot_base = slot;
        }
        for k in 0..octaves.layer_count as usize {
            for ((s, t), (&a, &b)) in s.iter_mut().zip(t.iter_mut()).zip(a.iter().zip(b)) {
                *s = a * f;
                *t = b * f;
            }
            noise(k, s, t, z, ws)?;
            let e: &[f64] = if level_identity {
                z
            } else if let Some(c) = level_constant {
                e.fill(c);
                e
            } else {
                let Some(level_ws) = ws.nested.get_mut(1) else {
                    return Err(EvalError::internal("no level workspace"));
                };
                octaves.level.eval_lanes(&[z], e, level_ws)?;
                e
            };
            for ((h, &amp), &e) in h.iter_mut().zip(amp.iter()).zip(e) {
                *h = amp * e;
            }
            if let Some(c) = persistence_constant {
                for amp in amp.iter_mut() {
                    *amp *= c;
                }
            } else {
                let Some(persistence_ws) = ws.nested.get_mut(0) else {
                    return Err(EvalError::internal("no persistence workspace"));
                };
                octaves.persistence.eval_lanes(&[h], p, persistence_ws)?;
                for (amp, &p) in amp.iter_mut().zip(p.iter()) {
                    *amp *= p;
                }
            }
            f *= 2.0;
            for (sum, &h) in sum.iter_mut().zip(h.iter()) {
                *sum += h;
            }
        }
        Ok(())
    })();
    ws.bufs = bufs;
    result
}

/// A configurable function's parameter as written: `name(value)`.
#[derive(Clone, Debug)]
pub struct RawParam {
    pub name: String,
    pub name_span: Span,
    /// Byte range of the value text (inside the parentheses) in the program text.
    pub value: std::ops::Range<usize>,
}

impl RawParam {
    pub fn value_span(&self) -> Span {
        Span::new(self.value.start as u32, self.value.end as u32)
    }
}

/// What [`build`] needs from the parser: the text and a way to compile parameter programs.
pub trait ParamContext {
    fn text(&self) -> &str;
    fn dialect(&self) -> Dialect;
    /// Compiles the value of `param` as a program of `arity` variables.
    fn program(&mut self, param: &RawParam, arity: usize) -> Result<Arc<Program>, Diagnostic>;
    /// The default program `text` (e.g. `0.5`) of `arity` variables.
    fn default_program(&mut self, text: &str, arity: usize) -> Result<Arc<Program>, Diagnostic>;
}

const LAYERED_NOISE_PARAMS: &[&str] =
    &["seed", "frequency", "layercount", "filter", "persistence", "levelEvaluationFunction"];
const NOISE_PARAMS: &[&str] = &["seed", "frequency", "filter"];
const LAYERS_PARAMS: &[&str] = &["seed", "frequency", "layercount", "persistence", "levelEvaluationFunction", "base"];
pub const FUNCTION_NAMES: &[&str] = &["LayeredNoise", "Noise", "Layers"];

/// Builds the configurable function `name` from its parameters (the last of a repeated one wins).
pub fn build(
    name: &str,
    name_span: Span,
    params: &[RawParam],
    ctx: &mut dyn ParamContext,
) -> Result<Function, Diagnostic> {
    let dialect = ctx.dialect();
    let allowed: &[&str] = match name {
        "LayeredNoise" => LAYERED_NOISE_PARAMS,
        "Noise" => NOISE_PARAMS,
        "Layers" => LAYERS_PARAMS,
        _ => {
            return Err(Diagnostic::at(codes::GGE8206, name_span, format!("unknown configurable function: '{name}'"))
                .with_hint("the configurable functions are LayeredNoise, Noise and Layers (names are case-sensitive)"))
        }
    };
    // The documented name of LayeredNoise's filter (2008-06-25 reference) is accepted as an alias.
    let canonical = |p: &str| -> Option<&'static str> {
        if name == "LayeredNoise" && p == "noisemapfilter" && dialect == Dialect::Documented {
            return Some("filter");
        }
        allowed.iter().copied().find(|a| *a == p)
    };
    let unknown: Vec<&RawParam> = params.iter().filter(|p| canonical(&p.name).is_none()).collect();
    if let Some(first) = unknown.first() {
        let list: Vec<String> = unknown.iter().map(|p| format!("'{}'", p.name)).collect();
        return Err(Diagnostic::at(
            codes::GGE8207,
            first.name_span,
            format!("the following parameters do not exist for '{name}': {}", list.join(", ")),
        )
        .with_hint(format!("{name} has {}", allowed.join(", "))));
    }
    let get = |key: &str| params.iter().rev().find(|p| canonical(&p.name) == Some(key));
    let text = ctx.text().to_string();
    let value_of = |p: &RawParam| text.get(p.value.clone()).unwrap_or("").to_string();

    let seed = match get("seed") {
        Some(p) => read_unsigned(&value_of(p), dialect).map_err(|why| bad_value(p, &why, dialect))?,
        None => 42,
    };
    let default_frequency = if name == "Noise" { 8.0 } else { 2.0 };
    let frequency = match get("frequency") {
        Some(p) => read_real(&value_of(p), dialect).map_err(|why| bad_value(p, &why, dialect))?,
        None => default_frequency,
    };
    let layer_count = match get("layercount") {
        Some(p) => read_unsigned(&value_of(p), dialect).map_err(|why| bad_value(p, &why, dialect))?,
        None => 6,
    };
    let filter = match get("filter") {
        Some(p) => {
            let value = value_of(p);
            let trimmed = value.trim();
            Filter::from_name(trimmed).ok_or_else(|| {
                Diagnostic::at(
                    codes::GGE8208,
                    p.value_span(),
                    format!("unknown filter type for '{}': '{trimmed}'", p.name),
                )
                .with_hint("the filters are nearest, bilinear and cosine")
            })?
        }
        None => Filter::Cosine,
    };
    let mut program = |key: &str, arity: usize, default: &str| -> Result<Arc<Program>, Diagnostic> {
        match get(key) {
            Some(p) => ctx.program(p, arity),
            None => ctx.default_program(default, arity),
        }
    };
    Ok(match name {
        "Noise" => Function::Noise { lattice: Lattice::new(Arc::new(Tables::new(seed)), filter, dialect), frequency },
        "LayeredNoise" => {
            let persistence = program("persistence", 1, "0.5")?;
            let level = program("levelEvaluationFunction", 1, "x")?;
            Function::LayeredNoise {
                lattice: Lattice::new(Arc::new(Tables::new(seed)), filter, dialect),
                octaves: Octaves { frequency, layer_count, persistence, level },
            }
        }
        _ => {
            let persistence = program("persistence", 1, "0.5")?;
            let level = program("levelEvaluationFunction", 1, "x")?;
            let base = program("base", 2, "([2 Noise frequency(1)] xy)")?;
            Function::Layers { octaves: Octaves { frequency, layer_count, persistence, level }, base }
        }
    })
}

fn bad_value(p: &RawParam, why: &str, dialect: Dialect) -> Diagnostic {
    let d = Diagnostic::at(codes::GGE8208, p.value_span(), format!("bad value for parameter '{}': {why}", p.name));
    match dialect {
        Dialect::Documented => d.with_hint(
            "write a plain number, e.g. frequency(4) or seed(7); the original silently read such a value as 0 \
             (the picogen-2008 dialect does too)",
        ),
        Dialect::Picogen2008 => d,
    }
}

/// A real parameter (`frequency`): in the documented dialect the whole (trimmed) text must be a
/// finite number; in picogen-2008 it is read as `std::istream >> double` reads it.
pub fn read_real(text: &str, dialect: Dialect) -> Result<f64, String> {
    match dialect {
        Dialect::Documented => {
            let trimmed = text.trim();
            match trimmed.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                Ok(_) => Err(format!("'{trimmed}' is not a finite number")),
                Err(_) => Err(format!("'{trimmed}' is not a number")),
            }
        }
        Dialect::Picogen2008 => Ok(cxx_extract_double(text)),
    }
}

/// An unsigned parameter (`seed`, `layercount`): in the documented dialect a whole number in
/// [0, 4294967295]; in picogen-2008 as `std::istream >> unsigned` reads it.
pub fn read_unsigned(text: &str, dialect: Dialect) -> Result<u32, String> {
    match dialect {
        Dialect::Documented => {
            let trimmed = text.trim();
            match trimmed.parse::<f64>() {
                Ok(v) if v.fract() == 0.0 && (0.0..=4_294_967_295.0).contains(&v) => Ok(v as u32),
                Ok(_) => Err(format!("'{trimmed}' is not a whole number from 0 to 4294967295")),
                Err(_) => Err(format!("'{trimmed}' is not a number")),
            }
        }
        Dialect::Picogen2008 => Ok(cxx_extract_unsigned(text)),
    }
}

fn is_cxx_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// libstdc++'s `num_get` for `double` (C++11): leading whitespace skipped; the longest run of
/// sign, digits, `.`, exponent characters is collected and must convert as a whole (otherwise 0);
/// an overflow gives ±`DBL_MAX`; no digit at all gives 0.
pub fn cxx_extract_double(text: &str) -> f64 {
    let s = text.trim_start_matches(is_cxx_space);
    let bytes = s.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    let mut digits = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits > 0 && i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
            i += 1;
        }
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    match s[..i].parse::<f64>() {
        Ok(v) if v.is_infinite() => f64::MAX.copysign(v),
        Ok(v) => v,
        Err(_) => 0.0,
    }
}

/// libstdc++'s `num_get` for `unsigned int`: whitespace, an optional sign, decimal digits; no
/// digit gives 0, a value above `UINT_MAX` gives `UINT_MAX`, a negative one wraps.
pub fn cxx_extract_unsigned(text: &str) -> u32 {
    let s = text.trim_start_matches(is_cxx_space);
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut value: u64 = 0;
    let mut any = false;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            break;
        }
        any = true;
        value = value.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    if !any {
        return 0;
    }
    if value > u64::from(u32::MAX) {
        return u32::MAX;
    }
    let v = value as u32;
    if negative {
        v.wrapping_neg()
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_for_seed_42_match_the_original() {
        let t = Tables::new(42);
        assert_eq!(&t.permutation()[..8], &[95, 243, 187, 153, 39, 39, 14, 221]);
        assert_eq!(t.values()[0], 0.296_542_984_386_101_16);
        assert_eq!(t.lattice(0, 0), -0.147_431_147_202_716_94);
        // The lattice repeats every 256 cells, negative indices included.
        assert_eq!(t.lattice(256, 3), t.lattice(0, 3));
        assert_eq!(t.lattice((-1i32) as u32, 5), t.lattice(255, 5));
    }

    #[test]
    fn the_cosine_weight_polynomial_agrees_with_libm() {
        let mut worst = 0.0f64;
        for k in 0..=100_000 {
            let w = f64::from(k) / 100_000.0;
            let reference = (1.0 - libm::cos(PI_F32 * w)) / 2.0;
            worst = worst.max((cosine_weight(w) - reference).abs());
        }
        assert!(worst < 5e-16, "{worst}");
        assert!(cosine_weight(f64::NAN).is_nan());
        assert_eq!(cosine_weight(2.0), (1.0 - libm::cos(PI_F32 * 2.0)) / 2.0);
    }

    #[test]
    fn corners_with_and_without_the_quirk() {
        assert_eq!(corners(-0.5, false), (u32::MAX, 0, 0.5));
        assert_eq!(corners(-0.5, true), (u32::MAX, 0, 0.5));
        // At −1 the original's second corner is column 0 and the weight is 1.
        assert_eq!(corners(-1.0, false), ((-1i32) as u32, 0, 0.0));
        assert_eq!(corners(-1.0, true), ((-2i32) as u32, 0, 1.0));
        assert_eq!(corners(-2.0, true), ((-3i32) as u32, (-2i32) as u32, 1.0));
        assert_eq!(corners(1e300, false).0, 0);
        assert!(corners(f64::NAN, false).2.is_nan());
    }

    #[test]
    fn cxx_stream_extraction() {
        assert_eq!(cxx_extract_double(" 2.5xyz"), 2.5);
        assert_eq!(cxx_extract_double("abc"), 0.0);
        assert_eq!(cxx_extract_double("1e3"), 1000.0);
        assert_eq!(cxx_extract_double("1e"), 0.0);
        assert_eq!(cxx_extract_double("-.5"), -0.5);
        assert_eq!(cxx_extract_double("1e999"), f64::MAX);
        assert_eq!(cxx_extract_unsigned("42.7"), 42);
        assert_eq!(cxx_extract_unsigned("-1"), u32::MAX);
        assert_eq!(cxx_extract_unsigned("99999999999"), u32::MAX);
        assert_eq!(cxx_extract_unsigned("x"), 0);
        assert_eq!(read_unsigned("7", Dialect::Documented), Ok(7));
        assert!(read_unsigned("7.5", Dialect::Documented).is_err());
        assert!(read_real("abc", Dialect::Documented).is_err());
        assert_eq!(read_real("abc", Dialect::Picogen2008), Ok(0.0));
    }
}
