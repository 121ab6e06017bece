//! `map.Warp(distance, wavelength = 64, octaves = 1, gain = 0.5, lacunarity = 2,
//! basis = "simplex", seed = 0)`: domain warp, the map's coordinates displaced by two coherent-noise
//! fields, single or fractal. (Not in the original GeoGen.)

use geogen_diag::codes;
use geogen_vm::{RuntimeError, Value};

use super::Distort;
use crate::generators::coherent_noise::{noise_seed, CoherentNoise, FRACTION, LACUNARITY, OCTAVES, WAVELENGTH};
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::{Basis, Fractal, FractalKind};

pub struct Warp;

const NAME: &str = "HeightMap.Warp";

/// The bases a warp can use.
const BASES: &[&str] = &["simplex", "perlin"];

impl Declared for Warp {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Warp",
        receiver: Receiver::Method,
        params: &[
            Param::size("distance"),
            Param::new("wavelength", WAVELENGTH).or(64.0),
            Param::new("octaves", OCTAVES).or(1.0),
            Param::new("gain", FRACTION).or(0.5),
            Param::new("lacunarity", LACUNARITY).or(2.0),
            Param::new("basis", Kind::Choice { items: BASES, code: codes::GGE2744 }).or_text("simplex"),
            Param::seed("seed"),
        ],
        checks: &[],
        family: Family::Transform,
        summary: "Domain warp: every pixel takes the height found up to `distance` (scaled) away along X \
                  and Y, as two independent noise fields say, sampling the map bilinearly (the `Distort` \
                  step). The fields are \"simplex\" or \"perlin\" (`basis`, GGE2744) fBm noise of \
                  `wavelength` (in [1, 1e9], GGE2740), `octaves` (1–16, GGE2741: more octaves, a more \
                  ragged warp), `gain` ([0, 1], GGE2742) and `lacunarity` ([1, 16], GGE2743), seeded by \
                  `seed`, the script seed and the name. Flat areas stay exactly flat. (Not in the \
                  original.)",
        examples: &[
            Example {
                // A flat map stays exactly flat.
                script: "yield HeightMap.Flat(0.25).Warp(8, 16, 3);",
                size: (6, 6),
                expect: &[(0, 0, 0.25), (5, 2, 0.25), (3, 5, 0.25)],
            },
            Example {
                // A step at x = 3.5, moved by at most 2: columns 0–1 only see 1, columns 6–7 only 0.
                script: "yield HeightMap.Flat(0).FillRectangle([-10, -10], [3, 20], 1).Warp(2, 32);",
                size: (8, 4),
                expect: &[(0, 0, 1.0), (1, 3, 1.0), (6, 1, 0.0), (7, 2, 0.0)],
            },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let basis = if call.text("basis")? == "perlin" { Basis::Perlin } else { Basis::Simplex };
        let fractal = Fractal {
            kind: FractalKind::Fbm,
            octaves: libm::trunc(call.number("octaves")?).clamp(1.0, 16.0) as u32,
            gain: call.number("gain")? as f32,
            lacunarity: call.number("lacunarity")?,
            weighting: 0.0,
        };
        let seed = noise_seed(call.seed("seed")?, rec.script_seed(), NAME);
        let wavelength = call.number("wavelength")?;
        let target = rec.this_slot()?;
        // The two fields: seeds `seed` and its hash, so X and Y move independently.
        let x_field = rec.push_create(CoherentNoise::new(NAME, basis, wavelength, fractal, seed), &[])?;
        let y_seed = geogen_random::hash1(seed);
        let y_field = rec.push_create(CoherentNoise::new(NAME, basis, wavelength, fractal, y_seed), &[])?;
        rec.push_modify(Distort { maximum_distance: call.number("distance")? }, target, &[x_field, y_field])?;
        Ok(rec.this())
    }
}
