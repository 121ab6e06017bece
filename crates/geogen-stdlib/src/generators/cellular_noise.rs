//! `HeightMap.CellularNoise(wavelength = 64, output = "F1", distance = "euclidean", jitter = 1,
//! octaves = 1, gain = 0.5, lacunarity = 2, fractal = "fbm", weighting = 0, seed = 0)`: cellular
//! (Worley) noise with its usual outputs and distance functions, and its fractal sums. (Not in the
//! original GeoGen; `CellNoise` is the original's.)

use geogen_diag::codes;
use geogen_vm::{RuntimeError, Value};

use super::coherent_noise::{
    noise_seed, read_fractal, CoherentNoise, FRACTAL, FRACTION, LACUNARITY, OCTAVES, WAVELENGTH,
};
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};
use geogen_kernels::coherent::{Basis, CellOutput, Cellular, Distance};

pub struct CellularNoise;

const NAME: &str = "HeightMap.CellularNoise";

impl Declared for CellularNoise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "CellularNoise",
        receiver: Receiver::Static,
        params: &[
            Param::new("wavelength", WAVELENGTH).or(64.0),
            Param::new("output", Kind::Choice { items: CellOutput::NAMES, code: codes::GGE2744 }).or_text("F1"),
            Param::new("distance", Kind::Choice { items: Distance::NAMES, code: codes::GGE2744 }).or_text("euclidean"),
            Param::new("jitter", FRACTION).or(1.0),
            Param::new("octaves", OCTAVES).or(1.0),
            Param::new("gain", FRACTION).or(0.5),
            Param::new("lacunarity", LACUNARITY).or(2.0),
            Param::new("fractal", FRACTAL).or_text("fbm"),
            Param::new("weighting", FRACTION).or(0.0),
            Param::seed("seed"),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "Cellular (Worley) noise: square cells of `wavelength` logical units (in [1, 1e9], \
                  GGE2740), each with one feature point up to `jitter`/2 cells from its centre (`jitter` in \
                  [0, 1], GGE2742: 0 is a regular grid). `output` \"F1\" is the distance to the nearest \
                  point, \"F2\" to the second nearest, \"F2-F1\" their difference (ridges along the cell \
                  borders), as 2d − 1, 1.5d − 1 and 2d − 1 of the distances d in cell units (Manhattan \
                  ones times √½); \"cell\" is a random height per cell (flat \
                  plates). `distance` is \"euclidean\", \"manhattan\" or \"chebyshev\" (GGE2744 for an \
                  unknown name). Fractal sums as `PerlinNoise` (by default one octave). Saturated to \
                  [-1, 1]. Seeded by `seed`, the script seed and the name; the same bits on every machine \
                  and instruction set. (Not in the original; `CellNoise` is the original's.)",
        examples: &[Example {
            // With jitter 0 the feature points are the cell centres (2, 2), (6, 2), …: F1 there is
            // 0, so the height is −1; on a cell corner (4, 4) the distance is half a diagonal,
            // √½ cell, so 2·√½ − 1 (f32).
            script: "yield HeightMap.CellularNoise(4, \"F1\", \"euclidean\", 0);",
            size: (9, 9),
            expect: &[(2, 2, -1.0), (6, 2, -1.0), (2, 6, -1.0), (4, 4, 0.414_213_57)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let cellular = Cellular {
            output: CellOutput::from_name(call.text("output")?).unwrap_or(CellOutput::F1),
            distance: Distance::from_name(call.text("distance")?).unwrap_or(Distance::Euclidean),
            jitter: call.number("jitter")? as f32,
        };
        let seed = noise_seed(call.seed("seed")?, rec.script_seed(), NAME);
        let basis = Basis::Cellular(cellular);
        rec.create(CoherentNoise::new(NAME, basis, call.number("wavelength")?, read_fractal(call)?, seed), &[])
    }
}
