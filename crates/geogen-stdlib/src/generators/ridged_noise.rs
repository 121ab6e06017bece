//! `HeightMap.RidgedNoise(layers?, seed = 0)`: `1 − Σ|layer|` of the same layers as `Noise`.

use geogen_render::ObjectKind;
use geogen_vm::{RuntimeError, Value};

use super::noise::{record_noise, NOISE_PARAMS};
use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct RidgedNoise;

impl Declared for RidgedNoise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "RidgedNoise",
        receiver: Receiver::Static,
        params: NOISE_PARAMS,
        checks: &[],
        family: Family::Generator,
        summary: "Like `Noise`, but each layer adds the absolute value of its interpolated field, and \
                  the sum is then inverted and raised by 1 (`1 − Σ|layer|`): sharp ridges where the \
                  noise crosses zero.",
        examples: &[Example {
            script: "yield HeightMap.RidgedNoise({4: 0.000001}, 3);",
            size: (4, 4),
            // An amplitude below one height unit truncates to 0: every layer adds 0, so 1 − 0 = 1.
            expect: &[(0, 0, 1.0), (3, 3, 1.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let slot = record_noise(call, rec, true)?;
        Ok(rec.handle(ObjectKind::Map, slot))
    }
}
