//! Height maps the host hands to a render (`geogen render --input base=sketch.png`).
//!
//! An [`InputRaster`] is read once by the host (the CLI reads files, a library caller may build
//! one from memory), shared read-only behind an `Arc`, and referenced by the rendering step that
//! samples it (`HeightMap.Input`). The VM only passes the `Arc` along: it never reads a pixel, and
//! scripts still open no files.

use std::fmt;

/// A read-only grid of heights in [-1, 1], row-major, row 0 at the top.
#[derive(Clone, PartialEq)]
pub struct InputRaster {
    width: u32,
    height: u32,
    data: Vec<f32>,
}

impl fmt::Debug for InputRaster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InputRaster({}x{})", self.width, self.height)
    }
}

impl InputRaster {
    /// A raster of `width × height` heights; `None` if a side is 0 or the data does not match.
    /// Heights are saturated to [-1, 1] and NaN becomes 0, as everywhere in the renderer.
    pub fn new(width: u32, height: u32, mut data: Vec<f32>) -> Option<InputRaster> {
        if width == 0 || height == 0 || (width as u64).checked_mul(height as u64)? != data.len() as u64 {
            return None;
        }
        for h in &mut data {
            *h = crate::raster::saturate(*h);
        }
        Some(InputRaster { width, height, data })
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The height of pixel (x, y), clamped to the nearest pixel of the raster.
    #[inline]
    pub fn clamped(&self, x: i64, y: i64) -> f32 {
        let cx = x.clamp(0, i64::from(self.width) - 1) as usize;
        let cy = y.clamp(0, i64::from(self.height) - 1) as usize;
        self.data[cy * self.width as usize + cx]
    }
}
