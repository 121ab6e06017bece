//! Elevations packed into the red, green and blue of 8-bit pictures, as web maps read terrain:
//! Mapzen's Terrarium and Mapbox's Terrain-RGB (MapLibre's `raster-dem` encodings `terrarium` and
//! `mapbox`). Both take metres; a height `h` of a map is `h × height_scale` metres.
//!
//! - Terrarium: `v = round((m + 32768) × 256)`, `R = v / 65536`, `G = v / 256 mod 256`,
//!   `B = v mod 256`; a reader gets `R × 256 + G + B / 256 - 32768` metres back, within 1/512 m.
//!   Metres outside [-32768, 32767.99] are clamped.
//! - Terrain-RGB: `v = round((m + 10000) × 10)`, `R = v / 65536`, `G = v / 256 mod 256`,
//!   `B = v mod 256`; a reader gets `-10000 + (R × 65536 + G × 256 + B) × 0.1` metres back, within
//!   0.05 m. Metres outside [-10000, 1667721.5] are clamped.
//!
//! The arithmetic is in `f64` on exact inputs and rounds halves away from zero, so the bytes are the
//! same on every machine.

use crate::quantize::sanitize;

/// How elevations are packed into a picture's red, green and blue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DemEncoding {
    /// Mapzen's Terrarium: 1/256 m steps from -32768 m.
    Terrarium,
    /// Mapbox's Terrain-RGB: 0.1 m steps from -10000 m.
    TerrainRgb,
}

impl DemEncoding {
    /// The name web maps give the encoding: MapLibre's `raster-dem` `encoding` and the PMTiles
    /// metadata key of the same name (`terrarium`, `mapbox`).
    pub fn web_name(self) -> &'static str {
        match self {
            DemEncoding::Terrarium => "terrarium",
            DemEncoding::TerrainRgb => "mapbox",
        }
    }

    /// The encoding's own name in geogen's options (`terrarium`, `terrain-rgb`).
    pub fn name(self) -> &'static str {
        match self {
            DemEncoding::Terrarium => "terrarium",
            DemEncoding::TerrainRgb => "terrain-rgb",
        }
    }

    /// The encoding of a name in geogen's options.
    pub fn parse(name: &str) -> Option<DemEncoding> {
        match name {
            "terrarium" => Some(DemEncoding::Terrarium),
            "terrain-rgb" => Some(DemEncoding::TerrainRgb),
            _ => None,
        }
    }

    /// The pixel of `metres` (NaN is 0 m).
    pub fn encode(self, metres: f64) -> [u8; 3] {
        let metres = if metres.is_nan() { 0.0 } else { metres };
        let (offset, steps, top) = self.steps();
        let v = ((metres + offset) * steps).round().clamp(0.0, top) as u32;
        [(v >> 16) as u8, (v >> 8) as u8, v as u8]
    }

    /// The metres a reader gets back from a pixel.
    pub fn decode(self, [r, g, b]: [u8; 3]) -> f64 {
        let (offset, steps, _) = self.steps();
        let v = (u32::from(r) << 16) | (u32::from(g) << 8) | u32::from(b);
        f64::from(v) / steps - offset
    }

    /// The pixel of a map height `h` (NaN is 0, clamped to [-1, 1] as every writer does) at
    /// `height_scale` metres per unit.
    pub fn encode_height(self, h: f32, height_scale: f64) -> [u8; 3] {
        self.encode(f64::from(sanitize(h)) * height_scale)
    }

    /// The offset in metres, the steps per metre, and the largest code.
    fn steps(self) -> (f64, f64, f64) {
        match self {
            // Terrarium's code has 24 bits like Terrain-RGB's, but its metres are R × 256 + G:
            // red carries 256 m, the top code 32767.996 m.
            DemEncoding::Terrarium => (32768.0, 256.0, f64::from((1u32 << 24) - 1)),
            DemEncoding::TerrainRgb => (10000.0, 10.0, f64::from((1u32 << 24) - 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terrarium_round_trips_within_half_a_step() {
        for metres in [-32768.0, -1000.25, -0.001, 0.0, 0.5, 1234.567, 8848.86, 32767.99] {
            let back = DemEncoding::Terrarium.decode(DemEncoding::Terrarium.encode(metres));
            assert!((back - metres).abs() <= 1.0 / 512.0, "{metres} → {back}");
        }
        assert_eq!(DemEncoding::Terrarium.encode(0.0), [128, 0, 0]);
        assert_eq!(DemEncoding::Terrarium.encode(-40000.0), [0, 0, 0], "clamped below");
        assert_eq!(DemEncoding::Terrarium.encode(f64::NAN), [128, 0, 0], "NaN is 0 m");
    }

    #[test]
    fn terrain_rgb_round_trips_within_half_a_step() {
        for metres in [-10000.0, -432.1, 0.0, 0.04, 999.95, 8848.86, 100_000.0] {
            let back = DemEncoding::TerrainRgb.decode(DemEncoding::TerrainRgb.encode(metres));
            assert!((back - metres).abs() <= 0.05 + 1e-9, "{metres} → {back}");
        }
        assert_eq!(DemEncoding::TerrainRgb.encode(0.0), [1, 134, 160], "v = 100000");
        assert_eq!(DemEncoding::TerrainRgb.encode(-20000.0), [0, 0, 0], "clamped below");
    }

    #[test]
    fn heights_are_clamped_and_scaled() {
        let e = DemEncoding::TerrainRgb;
        assert_eq!(e.encode_height(-1.0, 1000.0), [1, 95, 144], "v = 90000");
        assert_eq!(e.encode_height(1.0, 1000.0), [1, 173, 176], "v = 110000");
        assert_eq!(e.encode_height(2.0, 1000.0), e.encode_height(1.0, 1000.0));
        assert_eq!(e.encode_height(f32::NAN, 1000.0), [1, 134, 160]);
    }
}
