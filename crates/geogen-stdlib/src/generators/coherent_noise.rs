//! The rendering step shared by `PerlinNoise`, `SimplexNoise`, `CellularNoise` (and the fields of
//! `Warp`): a map filled with one coherent-noise field (see `geogen_kernels::coherent`), and the
//! parameters the three operations share (the fractal sum and the seed).

use geogen_diag::codes;
use geogen_render::{Bounds, Effect, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError};
use geogen_vm::RuntimeError;

use crate::operation::{Call, Kind, Param};
use geogen_kernels::coherent::{render_field, Basis, Fractal, FractalKind, Isa, NoiseSpec, MAX_OCTAVES};

/// A map of one noise field (a generator step).
#[derive(Clone, Debug, PartialEq)]
pub struct CoherentNoise {
    /// The script-facing name, e.g. `"HeightMap.PerlinNoise"`.
    pub name: &'static str,
    pub spec: NoiseSpec,
}

pub(crate) const WAVELENGTH: Kind = Kind::Range { min: 1.0, max: 1.0e9, code: codes::GGE2740 };
pub(crate) const OCTAVES: Kind = Kind::Range { min: 1.0, max: MAX_OCTAVES as f64, code: codes::GGE2741 };
pub(crate) const FRACTION: Kind = Kind::Range { min: 0.0, max: 1.0, code: codes::GGE2742 };
pub(crate) const LACUNARITY: Kind = Kind::Range { min: 1.0, max: 16.0, code: codes::GGE2743 };
pub(crate) const FRACTAL: Kind = Kind::Choice { items: FractalKind::NAMES, code: codes::GGE2744 };

/// The parameters of the gradient families (`PerlinNoise`, `SimplexNoise`): one lattice and its
/// fractal sum, in the order scripts pass them.
pub(crate) const GRADIENT_PARAMS: &[Param] = &[
    Param::new("wavelength", WAVELENGTH).or(128.0),
    Param::new("octaves", OCTAVES).or(5.0),
    Param::new("gain", FRACTION).or(0.5),
    Param::new("lacunarity", LACUNARITY).or(2.0),
    Param::new("fractal", FRACTAL).or_text("fbm"),
    Param::new("weighting", FRACTION).or(0.0),
    Param::seed("seed"),
];

/// Reads the five fractal parameters every noise has by name: `octaves`, `gain`, `lacunarity`,
/// `fractal`, `weighting` (already checked by their kinds).
pub(crate) fn read_fractal(call: &Call) -> Result<Fractal, RuntimeError> {
    Ok(Fractal {
        kind: FractalKind::from_name(call.text("fractal")?).unwrap_or(FractalKind::Fbm),
        octaves: libm::trunc(call.number("octaves")?).clamp(1.0, MAX_OCTAVES as f64) as u32,
        gain: call.number("gain")? as f32,
        lacunarity: call.number("lacunarity")?,
        weighting: call.number("weighting")? as f32,
    })
}

/// The seed of a noise: the seed argument, the script seed and the operation's name combined (so
/// two families with one seed differ).
pub(crate) fn noise_seed(seed_arg: u32, script_seed: u32, name: &str) -> u32 {
    geogen_random::combine_seeds(&[seed_arg, script_seed, geogen_random::hash_str(name)])
}

/// Text of a fractal for listings.
pub(crate) fn describe_fractal(f: &Fractal) -> String {
    format!(
        "{} octaves, gain {}, lacunarity {}, {}, weighting {}",
        f.octaves,
        f.gain,
        f.lacunarity,
        f.kind.name(),
        f.weighting
    )
}

impl CoherentNoise {
    pub fn new(name: &'static str, basis: Basis, wavelength: f64, fractal: Fractal, seed: u32) -> CoherentNoise {
        CoherentNoise { name, spec: NoiseSpec { basis, wavelength, fractal, seed } }
    }
}

impl Operation for CoherentNoise {
    fn name(&self) -> &str {
        self.name
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!(
            "{:?}, wavelength {}, {}, seed {:#x}",
            self.spec.basis,
            self.spec.wavelength,
            describe_fractal(&self.spec.fractal),
            self.spec.seed
        )
    }
    /// The per-octave column tables.
    fn extra_memory(&self, extent: Bounds, _: &OpContext) -> u64 {
        self.spec.scratch_bytes(extent.rect().width)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        render_field(target.as_map_mut()?, ctx.scale, &self.spec, Isa::best());
        Ok(())
    }
}
