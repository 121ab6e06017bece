//! `HeightMap.SimplexNoise(wavelength = 128, octaves = 5, gain = 0.5, lacunarity = 2,
//! fractal = "fbm", weighting = 0, seed = 0)`: OpenSimplex2-style simplex noise and its
//! fractal sums.
//! (Not in the original GeoGen.)

use geogen_vm::{RuntimeError, Value};

use super::coherent_noise::{noise_seed, read_fractal, CoherentNoise, GRADIENT_PARAMS};
use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Basis;

pub struct SimplexNoise;

const NAME: &str = "HeightMap.SimplexNoise";

impl Declared for SimplexNoise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "SimplexNoise",
        receiver: Receiver::Static,
        params: GRADIENT_PARAMS,
        checks: &[],
        family: Family::Generator,
        summary: "OpenSimplex2-style simplex noise: gradients at the corners of a triangular lattice \
                  (spacing about `wavelength` logical units, in [1, 1e9], GGE2740), each with a \
                  round falloff; no axis-aligned features at all, and cheaper per octave than Perlin. \
                  Fractal sums as `PerlinNoise`: `octaves` (1–16, GGE2741), `lacunarity` ([1, 16], \
                  GGE2743), `gain` and `weighting` ([0, 1], GGE2742), `fractal` \"fbm\", \"billow\" or \
                  \"ridged\" (GGE2744). Normalised by the sum of the amplitudes and saturated to [-1, 1]. Seeded by `seed`, the \
                  script seed and the name; the same bits on every machine and instruction set. (Not in \
                  the original.)",
        examples: &[Example {
            // The lattice point at the origin is a zero of the noise; elsewhere it is not.
            script: "yield HeightMap.SimplexNoise(4, 1);",
            size: (9, 9),
            expect: &[(0, 0, 0.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let seed = noise_seed(call.seed("seed")?, rec.script_seed(), NAME);
        rec.create(CoherentNoise::new(NAME, Basis::Simplex, call.number("wavelength")?, read_fractal(call)?, seed), &[])
    }
}
