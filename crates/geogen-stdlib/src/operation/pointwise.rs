//! Pointwise in-place kernels: each height's new value depends only on its old value and
//! constants, so the default bounds rule (the argument needs exactly B) is exact, for maps and
//! profiles alike.

use geogen_render::{Object, RenderError};

/// Replaces every height `h` of a map or profile with `f(h)` (rows in parallel for maps).
pub fn apply(target: &mut Object, f: impl Fn(f32) -> f32 + Sync + Send) -> Result<(), RenderError> {
    match target {
        Object::Map(map) => geogen_render::rows::map_pixels(map, f),
        Object::Profile(profile) => {
            for h in profile.data_mut() {
                *h = f(*h);
            }
        }
    }
    Ok(())
}

/// Implements [`geogen_render::Operation`] for a pointwise in-place operation on one object:
/// `pointwise_operation!(Abs, "HeightMap.Abs", Map, |s| describe, |s, h| new height)`.
#[macro_export]
macro_rules! pointwise_operation {
    ($ty:ty, $name:literal, $kind:ident, |$d:ident| $describe:expr, |$s:ident, $h:ident| $kernel:expr) => {
        impl geogen_render::Operation for $ty {
            fn name(&self) -> &str {
                $name
            }
            fn arg_kinds(&self) -> &[geogen_render::ObjectKind] {
                &[geogen_render::ObjectKind::$kind]
            }
            fn effect(&self) -> geogen_render::Effect {
                geogen_render::Effect::Modify
            }
            fn describe_params(&self) -> String {
                let $d = self;
                $describe
            }
            fn is_row_local(&self) -> bool {
                true
            }
            fn is_pointwise(&self) -> bool {
                true
            }
            fn render(
                &self,
                _: &geogen_render::KernelContext,
                target: &mut geogen_render::Object,
                _: &[&geogen_render::Object],
            ) -> Result<(), geogen_render::RenderError> {
                let $s = self;
                $crate::operation::pointwise::apply(target, |$h: f32| $kernel)
            }
        }
    };
}
