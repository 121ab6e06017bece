//! Into the engine: the import rules of engine presets (Unity, Unreal, Godot with Terrain3D), the
//! sidecar JSON written next to their files, splat layers as text and mesh thinning settings:
//! everything `geogen render --preset/--splat/--mesh-*` and the studio's export share, so both
//! check the same settings the same way and write the same bytes.
//!
//! The sidecar's numbers follow from the height encoding of each preset's format:
//!
//! * Unity reads a 16-bit sample `v` as `position.y + v / 65535 × terrain height`; geogen's
//!   `v = round(h × 32767) + 32767` is `h × height_scale` metres when the terrain height is
//!   `2 × height_scale × 65535 / 65534` and the terrain sits at `y = −height_scale`.
//! * Unreal reads `v` as `(v − 32768) / 128 × Z scale` centimetres above the landscape's Z;
//!   geogen's heights come out right with `Z scale = 128 × 100 × height_scale / 32767` and the
//!   landscape raised by `Z scale / 128` cm (one 16-bit step).
//! * Terrain3D imports the EXR's heights as they are, times its import scale: `height_scale`.

use std::str::FromStr;

use serde_json::{json, Value};

use crate::derived::{NormalConvention, SplatLayer, Surface, TerrainScale};
use crate::mesh::Simplify;
use crate::Format;

/// An engine whose import rules a run follows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Unity Terrain: square RAW 16-bit little-endian heightmaps of 2^n + 1 pixels (33 to 4097),
    /// neighbouring tiles sharing their edge row.
    Unity,
    /// Unreal Engine Landscape: 16-bit PNG of component-friendly sizes, tiles named `_x0_y0` for
    /// World Partition, neighbouring tiles sharing their edge row.
    Unreal,
    /// Godot with Terrain3D: 32-bit float EXR, tiles of one region (64 to 2048 pixels).
    Godot,
}

impl FromStr for Preset {
    type Err = String;

    fn from_str(text: &str) -> Result<Preset, String> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| format!("unknown preset `{}`: the presets are unity, unreal and godot", text.escape_debug()))
    }
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Unity, Preset::Unreal, Preset::Godot];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Unity => "unity",
            Preset::Unreal => "unreal",
            Preset::Godot => "godot",
        }
    }

    /// The height format the engine imports.
    pub fn height_format(self) -> Format {
        match self {
            Preset::Unity => Format::R16,
            Preset::Unreal => Format::Png16,
            Preset::Godot => Format::Exr,
        }
    }

    /// Pixels each tile repeats of its right and bottom neighbours: Unity and Unreal terrains share
    /// the vertices of their common edge; Terrain3D regions do not.
    pub fn tile_overlap(self) -> u32 {
        match self {
            Preset::Unity | Preset::Unreal => 1,
            Preset::Godot => 0,
        }
    }

    /// The green channel convention of the engine's normal maps.
    pub fn normal_convention(self) -> NormalConvention {
        match self {
            Preset::Unreal => NormalConvention::DirectX,
            Preset::Unity | Preset::Godot => NormalConvention::OpenGl,
        }
    }

    /// Whether a heightmap of `width × height` pixels imports without a resize.
    pub fn accepts_size(self, width: u32, height: u32) -> bool {
        match self {
            Preset::Unity => width == height && UNITY_RESOLUTIONS.contains(&width),
            Preset::Unreal => unreal_landscape_side(width) && unreal_landscape_side(height),
            // Terrain3D slices and pads any size into regions.
            Preset::Godot => width > 0 && height > 0,
        }
    }

    /// Whether tiles of `side` pixels (before the overlap) import as they are.
    pub fn accepts_tile(self, side: u32) -> bool {
        match self {
            Preset::Unity => UNITY_RESOLUTIONS.contains(&side.saturating_add(1)),
            Preset::Unreal => unreal_landscape_side(side.saturating_add(1)),
            Preset::Godot => TERRAIN3D_REGION_SIZES.contains(&side),
        }
    }

    /// The sizes to suggest when a size is refused (`--size`/`--tile` as the command line says).
    pub fn suggestion(self, tiles: bool) -> String {
        let list = |sizes: &[u32]| sizes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        match (self, tiles) {
            (Preset::Unity, false) => format!("a square --size of {}", list(&UNITY_RESOLUTIONS)),
            (Preset::Unity, true) => format!(
                "a --tile of {} (each file then holds one more pixel, shared with its neighbour)",
                list(&UNITY_RESOLUTIONS.map(|r| r - 1))
            ),
            (Preset::Unreal, false) => {
                format!("a --size whose sides are recommended landscape sizes, e.g. {}", list(&UNREAL_RECOMMENDED))
            }
            (Preset::Unreal, true) => format!(
                "a --tile of {} (each file then holds one more pixel, shared with its neighbour)",
                list(&UNREAL_RECOMMENDED.map(|r| r - 1))
            ),
            (Preset::Godot, _) => format!("a --tile of a Terrain3D region size: {}", list(&TERRAIN3D_REGION_SIZES)),
        }
    }

    /// The file name of tile (i, j) of a map: `<map>_x<i>_y<j>` (Unreal's World Partition import
    /// reads the coordinates from this suffix), `<map>_<i>_<j>` for Unity's Terrain Tools batch
    /// import, `<map>_<i>_<j>` for Terrain3D.
    pub fn tile_stem(self, map: &str, i: u64, j: u64) -> String {
        match self {
            Preset::Unreal => format!("{map}_x{i}_y{j}"),
            Preset::Unity | Preset::Godot => format!("{map}_{i}_{j}"),
        }
    }

    /// The sidecar file of a rendered map: `<map>.<preset>.json`.
    pub fn sidecar_name(self, map: &str) -> String {
        format!("{map}.{}.json", self.name())
    }
}

/// `TerrainData.heightmapResolution`: Unity clamps it to one of these (2^n + 1).
pub const UNITY_RESOLUTIONS: [u32; 8] = [33, 65, 129, 257, 513, 1025, 2049, 4097];

/// Quads per landscape section Unreal offers (`FLandscapeConfig::SubsectionSizeQuadsValues`).
pub const UNREAL_SECTION_QUADS: [u32; 6] = [7, 15, 31, 63, 127, 255];
/// The sizes Epic's Landscape technical guide recommends.
pub const UNREAL_RECOMMENDED: [u32; 7] = [127, 253, 505, 1009, 2017, 4033, 8129];
/// The most components along a side geogen proposes (the guide's largest recommended landscape,
/// 8129², is 32 × 32 components).
pub const UNREAL_MAX_COMPONENTS: u32 = 32;

/// Whether `side` vertices make a whole number of landscape components: `side − 1` is
/// components × sections (1 or 2) × section quads, with at most 32 components.
pub fn unreal_landscape_side(side: u32) -> bool {
    let Some(quads) = side.checked_sub(1).filter(|q| *q > 0) else { return false };
    UNREAL_SECTION_QUADS.iter().any(|&section| {
        [1, 2].iter().any(|&sections| {
            let component = section * sections;
            quads.is_multiple_of(component) && quads / component <= UNREAL_MAX_COMPONENTS
        })
    })
}

/// Terrain3D's region sizes.
pub const TERRAIN3D_REGION_SIZES: [u32; 6] = [64, 128, 256, 512, 1024, 2048];

/// Splat layers as `--splat` writes them, up to 4, separated by `;`: `@MAP` takes a mask the
/// script yields (its name checked by `check_name`), `H0..H1` or `H0..H1/S0..S1` a range of
/// heights (-1 to 1) and slopes (degrees). Returns the layers and the mask maps they read, in
/// layer order (a map named twice is read once); the error says what is wrong with which item.
pub fn parse_splat(
    text: &str,
    check_name: impl Fn(&str) -> Result<(), String>,
) -> Result<(Vec<SplatLayer>, Vec<String>), String> {
    let mut layers = Vec::new();
    let mut masks: Vec<String> = Vec::new();
    for item in text.split(';').map(str::trim) {
        if let Some(name) = item.strip_prefix('@') {
            check_name(name).map_err(|why| format!("`{item}` names no map: {why}"))?;
            let index = masks.iter().position(|m| m == name).unwrap_or_else(|| {
                masks.push(name.to_string());
                masks.len() - 1
            });
            layers.push(SplatLayer::Mask(index));
            continue;
        }
        let range = |part: &str, lo: f64, hi: f64, what: &str| -> Result<(f64, f64), String> {
            let (a, b) = part.split_once("..").ok_or_else(|| format!("`{part}` in `{item}` is not LOW..HIGH"))?;
            let parse = |s: &str| s.trim().parse::<f64>().ok().filter(|x| x.is_finite());
            match (parse(a), parse(b)) {
                (Some(a), Some(b)) if a <= b && a >= lo && b <= hi => Ok((a, b)),
                _ => Err(format!("`{part}` in `{item}` is not a {what} range LOW..HIGH within [{lo}, {hi}]")),
            }
        };
        let (heights, slopes) = match item.split_once('/') {
            Some((h, s)) => (h, Some(s)),
            None => (item, None),
        };
        layers.push(SplatLayer::Rule {
            height: range(heights, -1.0, 1.0, "height")?,
            slope_degrees: match slopes {
                Some(s) => range(s, 0.0, 90.0, "slope")?,
                None => (0.0, 90.0),
            },
        });
    }
    if layers.len() > crate::derived::SPLAT_CHANNELS {
        return Err(format!("{} splat layers, one RGBA image holds at most 4", layers.len()));
    }
    Ok((layers, masks))
}

/// Mesh thinning from `--mesh-triangles` and `--mesh-error` (at most one of them).
pub fn simplify(mesh_triangles: Option<u64>, mesh_error: Option<f64>) -> Result<Simplify, String> {
    match (mesh_triangles, mesh_error) {
        (Some(_), Some(_)) => Err("--mesh-triangles and --mesh-error cannot be given together".into()),
        (Some(0), None) => Err("--mesh-triangles must be at least 1".into()),
        (Some(n), None) => Ok(Simplify::TriangleBudget(n)),
        (None, Some(e)) if e.is_finite() && e >= 0.0 => Ok(Simplify::MaxError(e)),
        (None, Some(_)) => Err("--mesh-error must be a number of metres, 0 or more".into()),
        (None, None) => Ok(Simplify::Full),
    }
}

/// What the engine's import dialog wants, for a heightmap of `width × height` pixels.
pub fn engine_settings(preset: Preset, scale: TerrainScale, width: u64, height: u64) -> Value {
    let (p, v) = (scale.pixel_size, scale.height_scale);
    match preset {
        Preset::Unity => json!({
            "import": "Terrain > Import Raw: Depth Bit 16, Byte Order Windows, Flip Vertically off",
            "resolution": width,
            "terrain_size_m": [(width.saturating_sub(1)) as f64 * p, 2.0 * v * 65535.0 / 65534.0, (height.saturating_sub(1)) as f64 * p],
            "position_y_m": -v,
        }),
        Preset::Unreal => {
            let z_scale = 128.0 * 100.0 * v / 32767.0;
            json!({
                "import": "Landscape > Import from File: the 16-bit PNG, then the scale below",
                "scale_cm": [p * 100.0, p * 100.0, z_scale],
                "location_z_cm": z_scale / 128.0,
                "normal_maps": "DirectX (green down)",
            })
        }
        Preset::Godot => json!({
            "import": "Terrain3D importer: height file the EXR, import scale and offset below",
            "import_scale": v,
            "import_offset": 0.0,
            "vertex_spacing_m": p,
            "region_sizes": TERRAIN3D_REGION_SIZES,
        }),
    }
}

/// The smallest and largest height of the surface's core (NaN read as 0, clamped like every
/// writer).
pub fn height_range(surface: &Surface<'_>) -> (f64, f64) {
    let core = surface.core;
    let width = surface.field.width as usize;
    let mut range = (f64::INFINITY, f64::NEG_INFINITY);
    for y in core.y as usize..(core.y + core.height) as usize {
        let row = &surface.field.data[y * width + core.x as usize..y * width + (core.x + core.width) as usize];
        for &h in row {
            let h = f64::from(crate::quantize::sanitize(h));
            range = (range.0.min(h), range.1.max(h));
        }
    }
    if range.0 > range.1 {
        (0.0, 0.0)
    } else {
        range
    }
}

/// The sidecar JSON of one rendered map (`<map>.<preset>.json`): what the engine's import dialog
/// asks for and `generator`, the settings that made the files (see `geogen::run_record`).
pub fn render_sidecar(
    preset: Preset,
    scale: TerrainScale,
    map: &str,
    surface: &Surface<'_>,
    files: &[String],
    generator: Value,
) -> String {
    let v = scale.height_scale;
    let (low, high) = height_range(surface);
    let core = surface.core;
    let value = json!({
        "preset": preset.name(),
        "map": map,
        "files": files,
        "width": core.width,
        "height": core.height,
        "origin_px": [surface.origin.0 + i64::from(core.x), surface.origin.1 + i64::from(core.y)],
        "pixel_size_m": scale.pixel_size,
        "height_scale_m": v,
        "height_range_m": { "min": low * v, "max": high * v },
        "nominal_range_m": [-v, v],
        "engine": engine_settings(preset, scale, u64::from(core.width), u64::from(core.height)),
        "generator": generator,
    });
    format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HeightField;

    #[test]
    fn unity_sizes_follow_heightmap_resolution() {
        // Unity clamps TerrainData.heightmapResolution to 2^n + 1 from 33 to 4097.
        for n in 5..=12 {
            assert!(Preset::Unity.accepts_size((1 << n) + 1, (1 << n) + 1), "{n}");
            assert!(Preset::Unity.accepts_tile(1 << n));
        }
        for bad in [32, 34, 1024, 8193, 17] {
            assert!(!Preset::Unity.accepts_size(bad, bad), "{bad}");
        }
        assert!(!Preset::Unity.accepts_size(513, 1025), "Unity terrains are square");
    }

    #[test]
    fn unreal_sizes_are_whole_components() {
        // Every size the Landscape technical guide recommends is whole components.
        for size in UNREAL_RECOMMENDED {
            assert!(unreal_landscape_side(size), "{size}");
        }
        // 8129 = 32 components of 2 × 2 sections of 127 quads, plus the closing vertex.
        assert_eq!((8129 - 1) / (2 * 127), 32);
        for bad in [0, 1, 2, 1000, 1024, 1025, 4097, 8130, 32 * 510 + 2] {
            assert!(!unreal_landscape_side(bad), "{bad}");
        }
        assert!(unreal_landscape_side(8 * 7 + 1), "the smallest sections");
        assert!(!unreal_landscape_side(33 * 255 + 1), "more than 32 components");
        assert!(Preset::Unreal.accepts_tile(1008) && !Preset::Unreal.accepts_tile(1024));
    }

    #[test]
    fn godot_tiles_are_terrain3d_regions() {
        for side in TERRAIN3D_REGION_SIZES {
            assert!(Preset::Godot.accepts_tile(side));
        }
        assert!(!Preset::Godot.accepts_tile(1000) && !Preset::Godot.accepts_tile(4096));
        assert!(Preset::Godot.accepts_size(5123, 3769), "Terrain3D slices and pads any size");
    }

    #[test]
    fn tile_names_follow_each_importer() {
        assert_eq!(Preset::Unreal.tile_stem("main", 0, 0), "main_x0_y0");
        assert_eq!(Preset::Unreal.tile_stem("main", 3, 12), "main_x3_y12");
        assert_eq!(Preset::Unity.tile_stem("main", 1, 0), "main_1_0");
        assert_eq!(Preset::Godot.tile_stem("main", 2, 5), "main_2_5");
    }

    #[test]
    fn presets_parse_by_name_only() {
        for preset in Preset::ALL {
            assert_eq!(preset.name().parse::<Preset>(), Ok(preset));
        }
        for bad in ["", "Unity", "unity ", "cryengine"] {
            assert!(bad.parse::<Preset>().is_err(), "{bad}");
        }
    }

    #[test]
    fn splat_layers_parse_and_refuse_nonsense() {
        let check = |name: &str| if name.is_empty() || name.contains('/') { Err("bad".to_string()) } else { Ok(()) };
        let (layers, masks) = parse_splat("-1..0; 0..0.5/0..30 ;@rock;@rock", check).unwrap();
        assert_eq!(layers[0], SplatLayer::Rule { height: (-1.0, 0.0), slope_degrees: (0.0, 90.0) });
        assert_eq!(layers[1], SplatLayer::Rule { height: (0.0, 0.5), slope_degrees: (0.0, 30.0) });
        assert_eq!(layers[2..], [SplatLayer::Mask(0), SplatLayer::Mask(0)]);
        assert_eq!(masks, ["rock"]);
        for bad in ["", "1..0", "-2..0", "0..1/0..100", "a..b", "0..1;0..1;0..1;0..1;0..1", "@", "@../x", "0..1/"] {
            assert!(parse_splat(bad, check).is_err(), "{bad}");
        }
    }

    #[test]
    fn mesh_thinning_takes_one_setting_within_its_range() {
        assert_eq!(simplify(None, None), Ok(Simplify::Full));
        assert_eq!(simplify(Some(500), None), Ok(Simplify::TriangleBudget(500)));
        assert_eq!(simplify(None, Some(0.5)), Ok(Simplify::MaxError(0.5)));
        for (t, e) in [(Some(0), None), (None, Some(-1.0)), (None, Some(f64::NAN)), (Some(5), Some(1.0))] {
            assert!(simplify(t, e).is_err(), "{t:?} {e:?}");
        }
    }

    #[test]
    fn the_height_range_is_of_the_core_only() {
        let data = [9.0, 9.0, 9.0, 9.0, -0.5, 0.25, 9.0, f32::NAN, 0.5];
        let field = HeightField::new(3, 3, &data).unwrap();
        let surface = Surface::clipped(field, (10, 20), (11, 21, 2, 2)).unwrap();
        assert_eq!(height_range(&surface), (-0.5, 0.5), "the NaN reads as 0, the margin's 9s are left out");
        let sidecar: Value = serde_json::from_str(&render_sidecar(
            Preset::Unity,
            TerrainScale { pixel_size: 2.0, height_scale: 100.0 },
            "main",
            &surface,
            &["main.r16".into()],
            json!({}),
        ))
        .unwrap();
        assert_eq!(sidecar["origin_px"], json!([11, 21]));
        assert_eq!(sidecar["height_range_m"], json!({ "min": -50.0, "max": 50.0 }));
        assert_eq!(sidecar["engine"]["terrain_size_m"][0], 2.0);
    }
}
