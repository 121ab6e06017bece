//! `map.Move(offset)`: translates the map.

use geogen_render::scale::to_physical;
use geogen_render::{
    Bounds, Effect, Facts, KernelContext, Object, ObjectKind, OpContext, Operation, Range, RenderError, Support,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Param, Receiver, Recorder, Signature};

/// Moves the map's rectangle by the offset in physical pixels; no pixel is resampled.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    /// The offset in logical units.
    pub offset: (f64, f64),
}

impl Move {
    /// The offset in physical pixels: `trunc(offset × scale)` per axis (a move by a fraction of a
    /// pixel cannot be done without resampling, so it is rounded toward zero).
    fn physical(&self, scale: f64) -> (i64, i64) {
        (to_physical(self.offset.0, scale), to_physical(self.offset.1, scale))
    }
}

impl Declared for Move {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "Move",
        receiver: Receiver::Method,
        params: &[Param::point("offset")],
        checks: &[],
        family: Family::Transform,
        summary: "Translates the map by `offset` (scaled to pixels and truncated toward zero); the pixels \
                  move without resampling.",
        examples: &[Example {
            // The ramp x / 4 moved right by 2 and down by 1: pixel (x, y) takes (x − 2, y − 1).
            script: "yield HeightMap.Gradient([0, 0], [4, 0], 0, 1).Move([2, 1]);",
            size: (7, 3),
            expect: &[(2, 1, 0.0), (3, 0, 0.25), (6, 2, 1.0), (5, 1, 0.75)],
        }],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(Move { offset: call.point_f64("offset")? }, &[])
    }
}

impl Operation for Move {
    fn name(&self) -> &str {
        "HeightMap.Move"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Map]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    fn describe_params(&self) -> String {
        format!("[{}, {}]", self.offset.0, self.offset.1)
    }
    /// The map must cover B moved back by the offset.
    fn required_bounds(&self, own: Bounds, ctx: &OpContext) -> Vec<Bounds> {
        let (dx, dy) = self.physical(ctx.scale);
        vec![Bounds::Map(own.rect().translate(dx.saturating_neg(), dy.saturating_neg()))]
    }
    /// The map's own extent, moved.
    fn result_extent(&self, own: Bounds, arg_extents: &[Bounds], ctx: &OpContext) -> Bounds {
        let (dx, dy) = self.physical(ctx.scale);
        Bounds::Map(arg_extents.first().copied().unwrap_or(own).rect().translate(dx, dy))
    }
    /// The pixels move unchanged, background and all, as long as no rectangle is clipped at the
    /// ends of the coordinate range (then the moved map does not cover its bounds).
    fn support(&self, args: &[Facts], ctx: &OpContext) -> Option<Support> {
        const FAR: u64 = 1 << 40;
        let (dx, dy) = self.physical(ctx.scale);
        if dx.unsigned_abs() > FAR || dy.unsigned_abs() > FAR {
            return None;
        }
        let source = crate::support::support_of(args, 0)?;
        Some(Support { rect: source.rect.translate(dx, dy), ..source })
    }
    fn range(&self, args: &[Facts], _: &OpContext) -> Range {
        crate::support::range_of(args, 0)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let (dx, dy) = self.physical(ctx.scale);
        let map = std::mem::replace(target.as_map_mut()?, geogen_render::HeightMap::empty());
        *target = Object::Map(map.translated(dx, dy));
        Ok(())
    }
}
