//! `profile.Flip()`: mirror around position 0.

use geogen_render::{
    Bounds, Effect, HeightProfile, Interval, KernelContext, Object, ObjectKind, OpContext, Operation, RenderError,
};
use geogen_vm::{RuntimeError, Value};

use crate::operation::{Call, Declared, Example, Family, Owner, Receiver, Recorder, Signature};

#[derive(Clone, Debug, PartialEq)]
pub struct ProfileFlip;

/// The pixels `−p` for every `p` of the interval: `[s, e)` becomes `[1 − e, 1 − s)`.
pub fn mirrored(interval: Interval) -> Interval {
    if interval.is_empty() {
        return Interval::EMPTY;
    }
    Interval::from_range(1 - interval.end(), 1 - interval.start as i128)
}

impl Declared for ProfileFlip {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightProfile,
        name: "Flip",
        receiver: Receiver::Method,
        params: &[],
        checks: &[],
        family: Family::Transform,
        summary: "Mirrors the profile around position 0: the height at x becomes the old height at −x \
                  (exact, no resampling).",
        examples: &[Example {
            script: "var p = HeightProfile.Gradient(-4, 0, -1, 1).Flip();\
                     yield HeightMap.Projection(p, Direction.Vertical);",
            size: (6, 1),
            expect: &[(0, 0, 1.0), (1, 0, 0.5), (2, 0, 0.0), (4, 0, -1.0), (5, 0, -1.0)],
        }],
    };

    fn record(_: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        rec.modify(ProfileFlip, &[])
    }
}

impl Operation for ProfileFlip {
    fn name(&self) -> &str {
        "HeightProfile.Flip"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[ObjectKind::Profile]
    }
    fn effect(&self) -> Effect {
        Effect::Modify
    }
    /// The mirror image of B.
    fn required_bounds(&self, own: Bounds, _: &OpContext) -> Vec<Bounds> {
        match own {
            Bounds::Profile(interval) => vec![Bounds::Profile(mirrored(interval))],
            Bounds::Map(_) => vec![own],
        }
    }
    /// The mirror image of the input's extent.
    fn result_extent(&self, own: Bounds, arg_extents: &[Bounds], _: &OpContext) -> Bounds {
        match arg_extents.first() {
            Some(Bounds::Profile(interval)) => Bounds::Profile(mirrored(*interval)),
            _ => own,
        }
    }
    fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let profile = target.as_profile_mut()?;
        let interval = mirrored(profile.interval());
        let mut data = std::mem::replace(profile, HeightProfile::empty()).into_data();
        data.reverse();
        *profile = HeightProfile::from_data(interval, data)
            .ok_or_else(|| RenderError::Internal(format!("flip: interval {interval} lost pixels")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirroring_maps_each_pixel_to_its_negative() {
        assert_eq!(mirrored(Interval::new(2, 3)), Interval::new(-4, 3)); // 2, 3, 4 → −4, −3, −2
        assert_eq!(mirrored(Interval::new(-1, 3)), Interval::new(-1, 3)); // −1, 0, 1 → −1, 0, 1
        assert!(mirrored(Interval::EMPTY).is_empty());
        assert_eq!(mirrored(mirrored(Interval::new(-7, 5))), Interval::new(-7, 5));
    }
}
