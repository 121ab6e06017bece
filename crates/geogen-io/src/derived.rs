//! Maps derived from the heights and their neighbours: normal, slope and curvature maps, and
//! splat (texture weight) maps.
//!
//! # Tile-exact by construction
//!
//! A derived pixel needs its neighbours, so a tile alone cannot know its border pixels. The
//! renderer therefore renders each map with a one-pixel margin (`RunSettings::yield_margin`), which
//! is exact like every other pixel, and hands it here as a [`Surface`]: the whole rendered field
//! plus the window of it to write (the *core*). A neighbour outside the field is missing only at
//! the edge of a finite map, where the larger render has no neighbour either; there the border
//! sample is repeated and the difference is taken over the real distance (one-sided). So every
//! core pixel is a function of the same heights in a tile as in a larger render, and the tiles of
//! a world are byte for byte the crops of its whole derived maps.
//!
//! # Units
//!
//! Heights are first made safe as for every writer (NaN → 0, clamped to [-1, 1]), then taken to
//! metres: `z = h × height_scale`; pixels are `pixel_size` metres apart ([`TerrainScale`]).
//! Gradients are central differences `(z[x+1] − z[x−1]) / (2 × pixel_size)`.
//!
//! All arithmetic is IEEE `f64` `+ − × / sqrt` in a fixed order, and `atan` comes from the
//! pure-Rust `libm`: the same bytes on every machine.

use crate::quantize::sanitize;
use crate::HeightField;

/// Metres per pixel and per height unit: what turns heights into a surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TerrainScale {
    /// Horizontal distance between two pixels, in metres.
    pub pixel_size: f64,
    /// The height 1.0 in metres (-1.0 is minus that): the vertical scale.
    pub height_scale: f64,
}

impl Default for TerrainScale {
    /// 1 m pixels and ±100 m heights: a 1000-pixel map is a square kilometre of hills.
    fn default() -> Self {
        TerrainScale { pixel_size: 1.0, height_scale: 100.0 }
    }
}

/// Which way the green channel of a normal map points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NormalConvention {
    /// Green up (towards the top of the image, north): OpenGL, Unity, Godot, Blender.
    #[default]
    OpenGl,
    /// Green down (towards the bottom of the image): DirectX, Unreal.
    DirectX,
}

/// A rectangle of a field, in the field's pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// A rendered field with its margin, the window of it to write, and where it lies in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surface<'a> {
    /// Every rendered pixel: the core and the margin around it (none at a finite map's edge).
    pub field: HeightField<'a>,
    /// The pixels to write, inside `field`.
    pub core: Window,
    /// The physical pixel coordinate of the field's top-left pixel (meshes place their vertices
    /// in the world with it, so the meshes of tiles line up).
    pub origin: (i64, i64),
}

impl<'a> Surface<'a> {
    /// A field without margin: the core is all of it, placed at the origin.
    pub fn whole(field: HeightField<'a>) -> Surface<'a> {
        Surface { field, core: Window { x: 0, y: 0, width: field.width, height: field.height }, origin: (0, 0) }
    }

    /// A field placed at `origin` (the physical pixel of its top-left sample) with the part of
    /// `core` (`x, y, width, height` in physical pixels) that lies inside it as the window to
    /// write; `None` when they do not overlap.
    pub fn clipped(field: HeightField<'a>, origin: (i64, i64), core: (i64, i64, u32, u32)) -> Option<Surface<'a>> {
        let x0 = core.0.max(origin.0);
        let y0 = core.1.max(origin.1);
        let x1 = (core.0 + i64::from(core.2)).min(origin.0 + i64::from(field.width));
        let y1 = (core.1 + i64::from(core.3)).min(origin.1 + i64::from(field.height));
        if x1 <= x0 || y1 <= y0 {
            return None;
        }
        let core = Window {
            x: (x0 - origin.0) as u32,
            y: (y0 - origin.1) as u32,
            width: (x1 - x0) as u32,
            height: (y1 - y0) as u32,
        };
        Some(Surface { field, core, origin })
    }

    /// Whether the core lies inside the field and is not empty.
    pub fn is_consistent(&self) -> bool {
        let c = self.core;
        c.width > 0
            && c.height > 0
            && u64::from(c.x) + u64::from(c.width) <= u64::from(self.field.width)
            && u64::from(c.y) + u64::from(c.height) <= u64::from(self.field.height)
    }

    /// The height (in metres) at field pixel (x, y), clamped into the field.
    #[inline]
    pub(crate) fn z(&self, x: i64, y: i64, scale: &TerrainScale) -> f64 {
        let w = i64::from(self.field.width);
        let h = i64::from(self.field.height);
        let (cx, cy) = (x.clamp(0, w - 1) as usize, y.clamp(0, h - 1) as usize);
        f64::from(sanitize(self.field.data[cy * self.field.width as usize + cx])) * scale.height_scale
    }

    /// `(∂z/∂x, ∂z/∂row)` in metres per metre at field pixel (x, y): central differences, one-sided
    /// where the field ends, 0 along an axis the field is one pixel wide in.
    #[inline]
    pub(crate) fn gradient(&self, x: i64, y: i64, scale: &TerrainScale) -> (f64, f64) {
        let last_x = i64::from(self.field.width) - 1;
        let last_y = i64::from(self.field.height) - 1;
        let (left, right) = ((x - 1).max(0), (x + 1).min(last_x));
        let (up, down) = ((y - 1).max(0), (y + 1).min(last_y));
        let along = |a: f64, b: f64, steps: i64| {
            if steps == 0 {
                0.0
            } else {
                (b - a) / (steps as f64 * scale.pixel_size)
            }
        };
        let dx = along(self.z(left, y, scale), self.z(right, y, scale), right - left);
        let dy = along(self.z(x, up, scale), self.z(x, down, scale), down - up);
        (dx, dy)
    }

    /// The core's pixels in row-major order, as field coordinates.
    fn core_pixels(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        let c = self.core;
        (c.y..c.y + c.height).flat_map(move |y| (c.x..c.x + c.width).map(move |x| (i64::from(x), i64::from(y))))
    }
}

/// A unit component in [-1, 1] as a byte: `round((c + 1) / 2 × 255)`.
#[inline]
fn unit_byte(c: f64) -> u8 {
    let v = ((c + 1.0) * 0.5 * 255.0 + 0.5).floor();
    v.clamp(0.0, 255.0) as u8
}

/// The tangent-space normal map of the core as RGB bytes: `n = normalize(−∂z/∂x, ±∂z/∂row, 1)`
/// with `+` (green up, towards north) for OpenGL and `−` for DirectX, each component stored as
/// `round((n + 1) / 2 × 255)`. Flat ground is (128, 128, 255). Steeper relief, a larger
/// `height_scale` or a smaller `pixel_size` tilt the normals more: the strength follows the
/// vertical scale.
pub fn normal_map(surface: &Surface<'_>, scale: &TerrainScale, convention: NormalConvention) -> Vec<u8> {
    let mut out = Vec::with_capacity(surface.core.width as usize * surface.core.height as usize * 3);
    for (x, y) in surface.core_pixels() {
        let (dx, drow) = surface.gradient(x, y, scale);
        let green = match convention {
            // North is up in the image, i.e. −row: the north component of −∇z is +∂z/∂row.
            NormalConvention::OpenGl => drow,
            NormalConvention::DirectX => -drow,
        };
        let len = (dx * dx + drow * drow + 1.0).sqrt();
        out.extend_from_slice(&[unit_byte(-dx / len), unit_byte(green / len), unit_byte(1.0 / len)]);
    }
    out
}

/// The slope in degrees at a field pixel: `atan(|∇z|)`, 0 (flat) to 90 (vertical).
#[inline]
pub(crate) fn slope_degrees(surface: &Surface<'_>, x: i64, y: i64, scale: &TerrainScale) -> f64 {
    let (dx, dy) = surface.gradient(x, y, scale);
    libm::atan((dx * dx + dy * dy).sqrt()).to_degrees()
}

/// The slope map of the core as 16-bit samples: `round(degrees / 90 × 65535)`, so 0 is flat and
/// 65535 vertical (one unit is 0.0014°).
pub fn slope_map(surface: &Surface<'_>, scale: &TerrainScale) -> Vec<u16> {
    surface
        .core_pixels()
        .map(|(x, y)| {
            let v = (slope_degrees(surface, x, y, scale) / 90.0 * 65535.0 + 0.5).floor();
            v.clamp(0.0, 65535.0) as u16
        })
        .collect()
}

/// The curvature map of the core as bytes: the negative Laplacian of the surface,
/// `c = −(z[x−1] + z[x+1] + z[y−1] + z[y+1] − 4z) / pixel_size` (dimensionless: the sum of the
/// bends in metres per metre; missing neighbours repeat the border sample), stored as
/// `128 + round(127 × clamp(c, −1, 1))`. Ridges and peaks (convex) are brighter than 128, valleys
/// and pits (concave) darker; flat and evenly sloping ground is 128.
pub fn curvature_map(surface: &Surface<'_>, scale: &TerrainScale) -> Vec<u8> {
    surface
        .core_pixels()
        .map(|(x, y)| {
            let z = |dx: i64, dy: i64| surface.z(x + dx, y + dy, scale);
            let centre = z(0, 0);
            let bends = (z(-1, 0) - centre) + (z(1, 0) - centre) + (z(0, -1) - centre) + (z(0, 1) - centre);
            let c = (-bends / scale.pixel_size).clamp(-1.0, 1.0);
            (128.0 + (127.0 * c + 0.5).floor()).clamp(1.0, 255.0) as u8
        })
        .collect()
}

/// One layer (channel) of a splat map.
#[derive(Clone, Debug, PartialEq)]
pub enum SplatLayer {
    /// Weight 1 where the height (in height units, -1 to 1) and the slope (in degrees) both lie in
    /// their closed ranges, 0 elsewhere.
    Rule { height: (f64, f64), slope_degrees: (f64, f64) },
    /// The weight is a mask the script yields, read as `clamp(h, 0, 1)`: the index of the mask in
    /// the list given to [`splat_map`].
    Mask(usize),
}

/// The layers of `--format splat` without `--splat`: water and sea floor (R), low gentle ground
/// (G), steep ground (B), high gentle ground (A).
pub fn default_splat_layers() -> Vec<SplatLayer> {
    vec![
        SplatLayer::Rule { height: (-1.0, 0.0), slope_degrees: (0.0, 90.0) },
        SplatLayer::Rule { height: (0.0, 0.5), slope_degrees: (0.0, 30.0) },
        SplatLayer::Rule { height: (-1.0, 1.0), slope_degrees: (30.0, 90.0) },
        SplatLayer::Rule { height: (0.5, 1.0), slope_degrees: (0.0, 30.0) },
    ]
}

/// The most layers one RGBA splat image holds.
pub const SPLAT_CHANNELS: usize = 4;

/// The splat map of the core as RGBA bytes, one layer per channel (unused channels 0). The raw
/// weights of a pixel are normalised to sum to 255 exactly (largest remainders get the rounding,
/// the first layer on ties); a pixel no layer claims is all 0, so an engine shows its base layer.
/// `masks` are fields of the same size as the surface's (rendered with it), read at the same pixels.
/// At most [`SPLAT_CHANNELS`] layers; the caller checks.
pub fn splat_map(
    surface: &Surface<'_>,
    scale: &TerrainScale,
    layers: &[SplatLayer],
    masks: &[HeightField<'_>],
) -> Vec<u8> {
    let width = surface.field.width as usize;
    let mut out = Vec::with_capacity(surface.core.width as usize * surface.core.height as usize * SPLAT_CHANNELS);
    for (x, y) in surface.core_pixels() {
        let index = y as usize * width + x as usize;
        let height = f64::from(sanitize(surface.field.data[index]));
        let slope = slope_degrees(surface, x, y, scale);
        let mut weights = [0.0f64; SPLAT_CHANNELS];
        for (weight, layer) in weights.iter_mut().zip(layers) {
            *weight = match layer {
                SplatLayer::Rule { height: (h0, h1), slope_degrees: (s0, s1) } => {
                    let inside = (*h0..=*h1).contains(&height) && (*s0..=*s1).contains(&slope);
                    if inside {
                        1.0
                    } else {
                        0.0
                    }
                }
                SplatLayer::Mask(m) => masks
                    .get(*m)
                    .and_then(|mask| mask.data.get(index))
                    .map_or(0.0, |&h| f64::from(sanitize(h)).clamp(0.0, 1.0)),
            };
        }
        out.extend_from_slice(&normalised_bytes(&weights));
    }
    out
}

/// Weights → bytes summing to 255 (all 0 when every weight is 0).
fn normalised_bytes(weights: &[f64; SPLAT_CHANNELS]) -> [u8; SPLAT_CHANNELS] {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return [0; SPLAT_CHANNELS];
    }
    let exact: Vec<f64> = weights.iter().map(|w| w / total * 255.0).collect();
    let mut bytes = [0u8; SPLAT_CHANNELS];
    let mut given = 0u32;
    for (b, e) in bytes.iter_mut().zip(&exact) {
        *b = e.floor().clamp(0.0, 255.0) as u8;
        given += u32::from(*b);
    }
    let mut order: Vec<usize> = (0..SPLAT_CHANNELS).collect();
    // Largest remainder first; the sort is stable, so ties keep the lower layer first.
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().take(255u32.saturating_sub(given) as usize) {
        bytes[i] = bytes[i].saturating_add(1);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface(width: u32, height: u32, data: &[f32]) -> Surface<'_> {
        Surface::whole(HeightField::new(width, height, data).unwrap())
    }

    #[test]
    fn flat_ground_has_straight_up_normals_no_slope_and_no_curvature() {
        let data = vec![0.3; 12];
        let s = surface(4, 3, &data);
        let scale = TerrainScale::default();
        let normals = normal_map(&s, &scale, NormalConvention::OpenGl);
        assert!(normals.chunks(3).all(|n| n == [128, 128, 255]), "{normals:?}");
        assert!(slope_map(&s, &scale).iter().all(|&v| v == 0));
        assert!(curvature_map(&s, &scale).iter().all(|&v| v == 128));
    }

    #[test]
    fn a_45_degree_ramp_to_the_east_by_hand() {
        // h rises 0.01 per pixel: with 100 m per unit and 1 m pixels, 1 m per metre = 45°.
        let data: Vec<f32> = (0..5).map(|x| x as f32 * 0.01).collect();
        let s = surface(5, 1, &data);
        let scale = TerrainScale::default();
        // n = (−1, 0, 1)/√2: red round((1 − 0.7071)/2 × 255) = 37, blue round(1.7071/2 × 255) = 218.
        let normals = normal_map(&s, &scale, NormalConvention::OpenGl);
        assert_eq!(&normals[6..9], &[37, 128, 218]);
        // 45° of 90° is half of 65535, 32767.5 (0.01 in f32 is a hair less than 0.01).
        let slopes = slope_map(&s, &scale);
        assert!(slopes.iter().all(|&v| v == 32767), "{slopes:?}");
        // An even slope has no curvature inside; the one-sided ends do bend.
        assert!(curvature_map(&s, &scale)[1..4].iter().all(|&v| v == 128));
    }

    #[test]
    fn green_follows_the_convention() {
        // Heights rise towards the bottom of the image (south): the normal leans north (up).
        let data: Vec<f32> = (0..9).map(|i| (i / 3) as f32 * 0.005).collect();
        let s = surface(3, 3, &data);
        let scale = TerrainScale::default();
        let gl = normal_map(&s, &scale, NormalConvention::OpenGl);
        let dx = normal_map(&s, &scale, NormalConvention::DirectX);
        assert!(gl[13] > 128 && dx[13] < 128, "{} {}", gl[13], dx[13]);
        assert_eq!(u16::from(gl[13]) + u16::from(dx[13]), 255);
    }

    #[test]
    fn a_peak_is_convex_and_a_pit_concave() {
        let mut data = vec![0.0f32; 9];
        data[4] = 0.005;
        let s = surface(3, 3, &data);
        assert!(curvature_map(&s, &TerrainScale::default())[4] > 128);
        data[4] = -0.005;
        let s = surface(3, 3, &data);
        assert!(curvature_map(&s, &TerrainScale::default())[4] < 128);
    }

    #[test]
    fn the_margin_decides_the_border_pixels() {
        // The same pixels seen as a whole and as a 1-pixel core with margin agree.
        let data: Vec<f32> = (0..25).map(|i| ((i * 7 % 11) as f32 - 5.0) / 10.0).collect();
        let whole = surface(5, 5, &data);
        let scale = TerrainScale { pixel_size: 2.0, height_scale: 30.0 };
        let all = normal_map(&whole, &scale, NormalConvention::DirectX);
        let inner = Surface { core: Window { x: 2, y: 1, width: 2, height: 3 }, ..whole };
        let part = normal_map(&inner, &scale, NormalConvention::DirectX);
        for row in 0..3 {
            let from = ((1 + row) * 5 + 2) * 3;
            assert_eq!(&part[row * 6..row * 6 + 6], &all[from..from + 6]);
        }
    }

    #[test]
    fn splat_weights_sum_to_255() {
        assert_eq!(normalised_bytes(&[1.0, 1.0, 1.0, 0.0]), [85, 85, 85, 0]);
        assert_eq!(normalised_bytes(&[1.0, 1.0, 0.0, 0.0]), [128, 127, 0, 0]);
        assert_eq!(normalised_bytes(&[0.0; 4]), [0; 4]);
        assert_eq!(normalised_bytes(&[0.2, 0.0, 0.0, 0.0]), [255, 0, 0, 0]);
        let data = [-0.5f32, 0.2, 0.9];
        let s = surface(3, 1, &data);
        // Flat pieces? No: a 3-pixel ramp; with 1 m per unit the slopes stay below 30°.
        let scale = TerrainScale { pixel_size: 1.0, height_scale: 0.1 };
        let splat = splat_map(&s, &scale, &default_splat_layers(), &[]);
        assert_eq!(&splat[0..4], &[255, 0, 0, 0]);
        assert_eq!(&splat[4..8], &[0, 255, 0, 0]);
        assert_eq!(&splat[8..12], &[0, 0, 0, 255]);
        let mask_data = [0.5f32, -1.0, 2.0];
        let mask = HeightField::new(3, 1, &mask_data).unwrap();
        let splat = splat_map(&s, &scale, &[SplatLayer::Mask(0), SplatLayer::Mask(0)], &[mask]);
        assert_eq!(&splat[0..4], &[128, 127, 0, 0]);
        assert_eq!(&splat[4..8], &[0, 0, 0, 0]);
    }
}
