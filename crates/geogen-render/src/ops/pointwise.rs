//! Pointwise in-place operations: each pixel's new value depends only on its old value and
//! constants, so the default bounds rule (the argument needs exactly B) is exact.

use crate::error::RenderError;
use crate::kernels::map_pixels;
use crate::operation::{Effect, KernelContext, ObjectKind, Operation};
use crate::ops::kinds;
use crate::raster::{height_from_f64, saturate, Object};

/// Implements the parts every pointwise in-place operation shares.
macro_rules! pointwise_op {
    ($ty:ty, $name:literal, |$self_:ident| $describe:expr, |$s:ident, $h:ident| $kernel:expr) => {
        impl Operation for $ty {
            fn name(&self) -> &str {
                $name
            }
            fn arg_kinds(&self) -> &[ObjectKind] {
                kinds::ONE_MAP
            }
            fn effect(&self) -> Effect {
                Effect::Modify
            }
            fn describe_params(&self) -> String {
                let $self_ = self;
                $describe
            }
            fn render(&self, _: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
                let $s = self;
                map_pixels(target.as_map_mut()?, |$h: f32| $kernel);
                Ok(())
            }
        }
    };
}

/// `map.Abs()`: |h|.
#[derive(Clone, Debug, PartialEq)]
pub struct Abs;
pointwise_op!(Abs, "HeightMap.Abs", |_o| String::new(), |_s, h| h.abs());

/// `map.Invert()`: −h.
#[derive(Clone, Debug, PartialEq)]
pub struct Invert;
pointwise_op!(Invert, "HeightMap.Invert", |_o| String::new(), |_s, h| -h);

/// `map.Add(number)`: saturating h + x.
#[derive(Clone, Debug, PartialEq)]
pub struct AddNumber {
    pub addend: f32,
}
impl AddNumber {
    /// The addend is a height difference, so it may be up to 2 in magnitude; NaN becomes 0.
    pub fn new(addend: f64) -> AddNumber {
        let a = addend as f32;
        AddNumber { addend: if a.is_nan() { 0.0 } else { a.clamp(-2.0, 2.0) } }
    }
}
pointwise_op!(AddNumber, "HeightMap.Add", |o| o.addend.to_string(), |s, h| saturate(h + s.addend));

/// `map.Multiply(number)`: saturating h × f (no range check on f, as the original).
#[derive(Clone, Debug, PartialEq)]
pub struct MultiplyNumber {
    pub factor: f32,
}
impl MultiplyNumber {
    pub fn new(factor: f64) -> MultiplyNumber {
        MultiplyNumber { factor: factor as f32 }
    }
}
pointwise_op!(MultiplyNumber, "HeightMap.Multiply", |o| o.factor.to_string(), |s, h| saturate(h * s.factor));

/// `map.ClampHeights(min, max)`. (min > max is GGE2705 at the script binding; here, defensively,
/// the result is then `max`.)
#[derive(Clone, Debug, PartialEq)]
pub struct ClampHeights {
    pub min: f32,
    pub max: f32,
}
impl ClampHeights {
    pub fn new(min: f64, max: f64) -> ClampHeights {
        ClampHeights { min: height_from_f64(min), max: height_from_f64(max) }
    }
}
pointwise_op!(ClampHeights, "HeightMap.ClampHeights", |o| format!("{}, {}", o.min, o.max), |s, h| h
    .max(s.min)
    .min(s.max));

/// `map.Fill(h)`: every pixel = h.
#[derive(Clone, Debug, PartialEq)]
pub struct Fill {
    pub height: f32,
}
impl Fill {
    pub fn new(height: f64) -> Fill {
        Fill { height: height_from_f64(height) }
    }
}
pointwise_op!(Fill, "HeightMap.Fill", |o| o.height.to_string(), |s, _h| s.height);

/// `map.CropHeights(min, max, replace)`: pixels with h < min or h > max become `replace`.
#[derive(Clone, Debug, PartialEq)]
pub struct CropHeights {
    pub min: f32,
    pub max: f32,
    pub replace: f32,
}
impl CropHeights {
    pub fn new(min: f64, max: f64, replace: f64) -> CropHeights {
        CropHeights { min: height_from_f64(min), max: height_from_f64(max), replace: height_from_f64(replace) }
    }
}
pointwise_op!(
    CropHeights,
    "HeightMap.CropHeights",
    |o| format!("{}, {}, {}", o.min, o.max, o.replace),
    |s, h| if h < s.min || h > s.max { s.replace } else { h }
);
