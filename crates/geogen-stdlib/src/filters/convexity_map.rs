//! `HeightMap.ConvexityMap(map, radius)`: the map minus its blurred self.

use geogen_render::ObjectKind;
use geogen_vm::{RuntimeError, Value};

use super::{Blur, Invert};
use crate::combiners::AddMap;
use crate::generators::Clone;
use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

/// Records `Clone(map)`, `Blur(radius)`, `Invert()` and `AddMap(map)` on the copy, as the original
/// computes it. As separate steps, each brings its own bounds rule: the blur's margin reaches the
/// source through the clone, so the result is exact in every tile (the original's had no margin).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexityMap;

impl Declared for ConvexityMap {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "ConvexityMap",
        receiver: Receiver::Static,
        params: &[Param::map("map"), Param::size("radius")],
        checks: &[],
        family: Family::Filter,
        summary: "A new map of `map` minus `map` blurred with `radius` (saturating): positive where the \
                  terrain bulges up (convex), negative where it dips (concave). The blur is `Blur`'s, \
                  window [x − r + 1, x + r + 1] included.",
        examples: &[Example {
            // A step up at x = 3 (0 → 0.75); the blur of radius 1 averages [x, x + 2]: 0, 0.25, 0.5,
            // 0.75 at x = 0..3, and the map minus that is 0, −0.25, −0.5, 0.
            script: "yield HeightMap.ConvexityMap(HeightMap.Flat(0).FillRectangle([3, 0], [9, 9], 0.75), 1);",
            size: (6, 3),
            expect: &[(0, 1, 0.0), (1, 1, -0.25), (2, 0, -0.5), (3, 2, 0.0), (5, 1, 0.0)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let source = call.object("map")?;
        let copy = rec.push_create(Clone, &[source])?;
        rec.push_modify(Blur::new(call.number("radius")?), copy, &[])?;
        rec.push_modify(Invert, copy, &[])?;
        rec.push_modify(AddMap, copy, &[source])?;
        Ok(rec.handle(ObjectKind::Map, copy))
    }
}
