//! Combiners: operations reading the receiver and other maps pixel by pixel. They work on the
//! intersection of the extents and leave the rest alone; the default bounds rule (every argument
//! needs B) guarantees the intersection covers B, so the pixels anyone needs are exact.

mod add;
mod combine;
mod intersect;
mod multiply;
mod unify;

pub use add::{Add, AddMap, AddMasked, AddNumber};
pub use combine::Combine;
pub use intersect::Intersect;
pub use multiply::{Multiply, MultiplyMap, MultiplyNumber};
pub use unify::Unify;

use geogen_render::{HeightMap, Object, RenderError};

use crate::operation::Entry;

pub const OPERATIONS: &[Entry] =
    crate::operations![add::Add, multiply::Multiply, combine::Combine, intersect::Intersect, unify::Unify];

/// Input `i` of a kernel as a map.
pub(crate) fn input<'a>(inputs: &[&'a Object], i: usize) -> Result<&'a HeightMap, RenderError> {
    inputs.get(i).ok_or_else(|| RenderError::Internal(format!("missing input {i}")))?.as_map()
}

/// Implements [`geogen_render::Operation`] for an in-place combiner `h = f(h, other)` of two maps.
macro_rules! binary_map_operation {
    ($ty:ident, $name:literal, |$h:ident, $o:ident| $kernel:expr, unchanged where |$b:ident, $r:ident| $keeps:expr) => {
        impl geogen_render::Operation for $ty {
            fn name(&self) -> &str {
                $name
            }
            fn arg_kinds(&self) -> &[geogen_render::ObjectKind] {
                &[geogen_render::ObjectKind::Map, geogen_render::ObjectKind::Map]
            }
            fn effect(&self) -> geogen_render::Effect {
                geogen_render::Effect::Modify
            }
            fn is_row_local(&self) -> bool {
                true
            }
            fn reads_inputs_on_its_rows(&self) -> bool {
                true
            }
            /// Monotonic in both maps.
            fn range(&self, args: &[geogen_render::Facts], ctx: &geogen_render::OpContext) -> geogen_render::Range {
                geogen_render::monotone_range(self, args, ctx)
            }
            fn is_pointwise(&self) -> bool {
                true
            }
            /// The target is left alone where the other map's background `b` and the target's
            /// range `r` make the kernel the identity.
            fn changes_only(
                &self,
                args: &[geogen_render::Facts],
                _: &geogen_render::OpContext,
            ) -> Option<geogen_render::Rect> {
                let $r = $crate::support::range_of(args, 0);
                $crate::support::unchanged_where_background($crate::support::support_of(args, 1), |$b: f32| $keeps)
            }
            fn render(
                &self,
                _: &geogen_render::KernelContext,
                target: &mut geogen_render::Object,
                inputs: &[&geogen_render::Object],
            ) -> Result<(), geogen_render::RenderError> {
                geogen_render::rows::zip1(
                    target.as_map_mut()?,
                    $crate::combiners::input(inputs, 0)?,
                    |$h: f32, $o: f32| $kernel,
                );
                Ok(())
            }
        }
    };
}
pub(crate) use binary_map_operation;
