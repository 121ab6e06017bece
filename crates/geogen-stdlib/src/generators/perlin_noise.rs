//! `HeightMap.PerlinNoise(wavelength = 128, octaves = 5, gain = 0.5, lacunarity = 2,
//! fractal = "fbm", weighting = 0, seed = 0)`: gradient (Perlin) noise and its fractal sums.
//! (Not in the original GeoGen.)

use geogen_vm::{RuntimeError, Value};

use super::coherent_noise::{noise_seed, read_fractal, CoherentNoise, GRADIENT_PARAMS};
use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};
use geogen_kernels::coherent::Basis;

pub struct PerlinNoise;

const NAME: &str = "HeightMap.PerlinNoise";

impl Declared for PerlinNoise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "PerlinNoise",
        receiver: Receiver::Static,
        params: GRADIENT_PARAMS,
        checks: &[],
        family: Family::Generator,
        summary: "Gradient (Perlin) noise: a random unit gradient at every lattice point `wavelength` \
                  logical units apart (in [1, 1e9], GGE2740), blended by the quintic fade; smooth, \
                  without the value noise's grid look. `octaves` (whole, 1–16, GGE2741) copies of it, each \
                  `lacunarity` (in [1, 16], GGE2743) times finer and `gain` (in [0, 1], GGE2742) times \
                  weaker, are summed: `fractal` \"fbm\" adds them, \"billow\" adds 2|n| − 1 (round hills), \
                  \"ridged\" adds 1 − 2|n| (sharp crests) (GGE2744 otherwise); `weighting` (in [0, 1]) also \
                  scales each octave by the previous one's height, so detail gathers on high ground. \
                  Normalised by the sum of the amplitudes and saturated to [-1, 1]. Seeded by `seed`, the \
                  script seed and the name; the same bits on every machine and instruction set. (Not in \
                  the original.)",
        examples: &[Example {
            // Every lattice point is a zero of gradient noise: with one octave, wavelength 4, the
            // pixels at multiples of 4 are exactly 0, the others are not.
            script: "yield HeightMap.PerlinNoise(4, 1);",
            size: (9, 9),
            expect: &[(0, 0, 0.0), (4, 0, 0.0), (8, 4, 0.0), (4, 8, 0.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let seed = noise_seed(call.seed("seed")?, rec.script_seed(), NAME);
        rec.create(CoherentNoise::new(NAME, Basis::Perlin, call.number("wavelength")?, read_fractal(call)?, seed), &[])
    }
}
