//! The hillshaded preview: Lambertian shading of the height field under a distant light.
//!
//! For each pixel the gradient comes from central differences, `(h[x+1] - h[x-1]) / 2`; on the border
//! the missing neighbour is replaced by the border pixel itself (clamped addressing) and the difference
//! is divided by the real distance (1), so border pixels get a one-sided slope of the same scale
//! rather than half of it.
//!
//! The surface is `z = z_scale × h(x, y)` with x to the east and y to the south (image rows go down),
//! so its normal is `(-z_scale·∂h/∂x, -z_scale·∂h/∂y, 1)` normalised. The shade is `max(0, n · l)` for
//! the unit vector `l` toward the light, scaled to 0..=255. A flat field shades to
//! `round(255 × sin(altitude))` (180 for the default 45°).
//!
//! By default the light comes from three directions, the azimuth and 45° either side of it, weighted
//! 1:2:1 (after the cartographers' multidirectional hillshade): a slope facing away from the main
//! light still shows its shape instead of going black, which keeps rough terrain readable. The
//! exaggeration follows from the terrain's scale ([`HillshadeOptions::for_terrain`]): metres of height
//! per metre of ground, so a render zoomed out (larger pixels) is not shaded steeper than one zoomed in.
//!
//! The kernel uses only `+ - * /` and `sqrt` on `f32` (no fused multiply-add, no library calls), and
//! runs sequentially, so the bytes are the same on every machine and thread count. The light vector is
//! computed once from the angles with `libm`, the pure-Rust math library, for the same reason.

/// Hillshade parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HillshadeOptions {
    /// Direction the light comes from, in degrees clockwise from north (up): 315 is the north-west,
    /// the cartographic convention that makes hills read as raised rather than sunken.
    pub azimuth_deg: f64,
    /// Elevation of the light above the horizon, in degrees (0..=90).
    pub altitude_deg: f64,
    /// Vertical exaggeration: how many pixel widths one unit of height spans.
    ///
    /// The default, 100, is the true slope of the default terrain scale (1 m pixels, heights of
    /// ±100 m; [`HillshadeOptions::for_terrain`] for others): the height range [-1, 1] spans 200 px,
    /// a fifth of a typical 1000 px map, readable relief without slopes saturated to black. It does
    /// not depend on the map size, so that tiles of one map shade alike.
    pub z_scale: f32,
    /// Light from the azimuth and 45° either side of it (weights 1:2:1) instead of the azimuth alone.
    pub multidirectional: bool,
}

impl Default for HillshadeOptions {
    fn default() -> Self {
        Self { azimuth_deg: 315.0, altitude_deg: 45.0, z_scale: DEFAULT_Z_SCALE, multidirectional: true }
    }
}

/// See [`HillshadeOptions::z_scale`].
pub const DEFAULT_Z_SCALE: f32 = 100.0;

impl HillshadeOptions {
    /// The default lighting with the exaggeration of a terrain whose pixels are `pixel_size` metres
    /// apart and whose height 1.0 is `height_scale` metres: `height_scale / pixel_size` pixel widths
    /// per unit of height, the true slope. Rendering the same terrain at half the scale doubles
    /// `pixel_size`, so the shading does not change its steepness with the zoom.
    pub fn for_terrain(pixel_size: f64, height_scale: f64) -> HillshadeOptions {
        let z = height_scale / pixel_size;
        let z_scale = if z.is_finite() && z > 0.0 { z as f32 } else { DEFAULT_Z_SCALE };
        HillshadeOptions { z_scale, ..HillshadeOptions::default() }
    }

    /// [`HillshadeOptions::for_terrain`] of the default terrain scale (a map unit is 1 m, the height
    /// 1.0 is 100 m) rendered at `render_scale` (a pixel spans `1 / render_scale` map units): what
    /// previews and tiles at any zoom use, so zooming out does not steepen the shading.
    pub fn for_render_scale(render_scale: f64) -> HillshadeOptions {
        let terrain = crate::TerrainScale::default();
        HillshadeOptions::for_terrain(terrain.pixel_size / render_scale, terrain.height_scale)
    }

    /// The lights and their weights (summing to 1): the azimuth alone, or it and 45° either side.
    fn lights(&self) -> Vec<([f32; 3], f32)> {
        if self.multidirectional {
            [(-45.0, 0.25), (0.0, 0.5), (45.0, 0.25)]
                .into_iter()
                .map(|(offset, weight)| (self.light_at(self.azimuth_deg + offset), weight))
                .collect()
        } else {
            vec![(self.light_at(self.azimuth_deg), 1.0)]
        }
    }

    /// The unit vector toward a light at `azimuth_deg` in (east, south, up) coordinates.
    fn light_at(&self, azimuth_deg: f64) -> [f32; 3] {
        let az = azimuth_deg.to_radians();
        let alt = self.altitude_deg.to_radians();
        let horizontal = libm::cos(alt);
        // Azimuth is clockwise from north: east component sin(az), north component cos(az); rows grow
        // southwards, hence the minus sign.
        [(horizontal * libm::sin(az)) as f32, (-horizontal * libm::cos(az)) as f32, libm::sin(alt) as f32]
    }
}

/// Shades a `width × height` row-major field into one 8-bit gray value per pixel. NaN heights are read
/// as 0 and heights are clamped to [-1, 1] first, like every other writer. `data.len()` must equal
/// `width × height`.
pub fn hillshade(width: usize, height: usize, data: &[f32], options: &HillshadeOptions) -> Vec<u8> {
    debug_assert_eq!(data.len(), width * height);
    let lights = options.lights();
    let z = options.z_scale;
    let at = |x: usize, y: usize| crate::quantize::sanitize(data[y * width + x]);
    let mut out = Vec::with_capacity(data.len());
    for y in 0..height {
        let (up, down) = (y.saturating_sub(1), (y + 1).min(height - 1));
        let dy_dist = (down - up) as f32;
        for x in 0..width {
            let (left, right) = (x.saturating_sub(1), (x + 1).min(width - 1));
            let dx_dist = (right - left) as f32;
            // A 1-pixel-wide (or tall) field has no slope along that axis.
            let dhdx = if dx_dist > 0.0 { (at(right, y) - at(left, y)) / dx_dist } else { 0.0 };
            let dhdy = if dy_dist > 0.0 { (at(x, down) - at(x, up)) / dy_dist } else { 0.0 };
            let nx = -z * dhdx;
            let ny = -z * dhdy;
            let len = (nx * nx + ny * ny + 1.0).sqrt();
            let mut shade = 0.0f32;
            for &([lx, ly, lz], weight) in &lights {
                // Each light's shade clamped (a NaN from infinite inputs becomes 0), then weighted.
                let lit = (nx * lx + ny * ly + lz) / len;
                shade += weight * if lit > 0.0 { lit.min(1.0) } else { 0.0 };
            }
            // Round half up.
            let shade = shade.min(1.0);
            out.push((shade * 255.0 + 0.5) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(w: usize, h: usize, f: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).map(|(x, y)| f(x, y)).collect()
    }

    #[test]
    fn flat_field_is_uniform() {
        for level in [-1.0, -0.3, 0.0, 0.7, 1.0] {
            let data = field(17, 9, |_, _| level);
            let out = hillshade(17, 9, &data, &HillshadeOptions::default());
            assert!(out.iter().all(|&v| v == 180), "level {level}: {:?}", &out[..5]);
        }
    }

    #[test]
    fn slope_facing_the_light_is_brighter() {
        let opts = HillshadeOptions::default();
        // Rises toward the south-east, so it faces the north-west light.
        let facing = field(16, 16, |x, y| (x + y) as f32 * 0.002);
        // Rises toward the north-west: faces away.
        let away = field(16, 16, |x, y| -((x + y) as f32) * 0.002);
        let flat = hillshade(16, 16, &vec![0.0; 256], &opts)[0];
        let a = hillshade(16, 16, &facing, &opts);
        let b = hillshade(16, 16, &away, &opts);
        for i in 0..256 {
            assert!(a[i] > flat && flat > b[i], "pixel {i}: facing {} flat {} away {}", a[i], flat, b[i]);
        }
        // East-facing vs west-facing slopes (light from the west side).
        let west_facing = field(8, 8, |x, _| x as f32 * 0.004);
        let east_facing = field(8, 8, |x, _| -(x as f32) * 0.004);
        assert!(hillshade(8, 8, &west_facing, &opts)[27] > hillshade(8, 8, &east_facing, &opts)[27]);
    }

    #[test]
    fn border_uses_one_sided_slope_of_the_same_scale() {
        let data = field(10, 4, |x, _| x as f32 * 0.003);
        let out = hillshade(10, 4, &data, &HillshadeOptions::default());
        // A plane shades identically everywhere, borders included.
        assert!(out.iter().all(|&v| v == out[0]), "{out:?}");
    }

    #[test]
    fn degenerate_sizes_and_bad_values() {
        let opts = HillshadeOptions::default();
        assert_eq!(hillshade(1, 1, &[0.5], &opts), vec![180]);
        assert_eq!(hillshade(1, 3, &[0.0, 0.0, 0.0], &opts), vec![180; 3]);
        let out = hillshade(3, 1, &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY], &opts);
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn z_scale_exaggerates() {
        let data = field(8, 8, |x, y| (x + y) as f32 * 0.002);
        let soft = HillshadeOptions { z_scale: 10.0, ..Default::default() };
        let strong = HillshadeOptions { z_scale: 200.0, ..Default::default() };
        assert!(hillshade(8, 8, &data, &strong)[20] > hillshade(8, 8, &data, &soft)[20]);
    }
}
