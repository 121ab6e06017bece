//! Into the engine and back: the options of derived maps and meshes (`--pixel-size`,
//! `--height-scale`, `--normal`, `--splat`, `--mesh-triangles`, `--mesh-error`), engine presets
//! (`--preset unity|unreal|godot`) and input height maps (`--input name=FILE`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use geogen::diag::{codes, Diagnostic};
use geogen::{HeightMap, InputRaster, Rect, Script};
use geogen_io::{ExportOptions, Format, HeightField, NormalConvention, Simplify, SplatLayer, Surface, TerrainScale};

use crate::report::CliError;

/// An engine whose import rules a run follows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    // Unity Terrain: square RAW 16-bit little-endian heightmaps of 2^n + 1 pixels (33 to 4097),
    // neighbouring tiles sharing their edge row.
    Unity,
    // Unreal Engine Landscape: 16-bit PNG of component-friendly sizes, tiles named `_x0_y0` for
    // World Partition, neighbouring tiles sharing their edge row.
    Unreal,
    // Godot with Terrain3D: 32-bit float EXR, tiles of one region (64 to 2048 pixels).
    Godot,
}

impl Preset {
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
            Preset::Unity => width == height && unity_resolution(width),
            Preset::Unreal => unreal_landscape_side(width) && unreal_landscape_side(height),
            // Terrain3D slices and pads any size into regions.
            Preset::Godot => width > 0 && height > 0,
        }
    }

    /// Whether tiles of `side` pixels (before the overlap) import as they are.
    pub fn accepts_tile(self, side: u32) -> bool {
        match self {
            Preset::Unity => unity_resolution(side.saturating_add(1)),
            Preset::Unreal => unreal_landscape_side(side.saturating_add(1)),
            Preset::Godot => TERRAIN3D_REGION_SIZES.contains(&side),
        }
    }

    /// The sizes to suggest when a size is refused.
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
}

/// `TerrainData.heightmapResolution`: Unity clamps it to one of these (2^n + 1).
pub const UNITY_RESOLUTIONS: [u32; 8] = [33, 65, 129, 257, 513, 1025, 2049, 4097];

fn unity_resolution(side: u32) -> bool {
    UNITY_RESOLUTIONS.contains(&side)
}

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

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum NormalArg {
    // Green up (OpenGL: Unity, Godot, Blender).
    Opengl,
    // Green down (DirectX: Unreal).
    Directx,
}

/// How derived maps, meshes and engine files are made.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Engines, meshes and derived maps")]
pub struct ExportArgs {
    /// Follow an engine's import rules: sizes, format, tile names and overlap, and a sidecar JSON
    /// with the height range in metres and the settings that made the files.
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,
    /// Metres between two pixels (meshes, normal, slope, curvature and splat maps, sidecars).
    #[arg(long = "pixel-size", value_name = "M", default_value_t = 1.0)]
    pub pixel_size: f64,
    /// Metres of the height 1.0 (-1.0 is minus that): the vertical scale.
    #[arg(long = "height-scale", value_name = "M", default_value_t = 100.0)]
    pub height_scale: f64,
    /// Normal map green channel (default: the preset's, else opengl).
    #[arg(long, value_enum)]
    pub normal: Option<NormalArg>,
    /// Splat layers, up to 4, separated by `;`: `@MAP` takes a mask the script yields (0 to 1),
    /// `H0..H1` or `H0..H1/S0..S1` a range of heights (-1 to 1) and slopes (degrees).
    #[arg(long, value_name = "LAYERS", allow_hyphen_values = true)]
    pub splat: Option<String>,
    /// Thin meshes out to at most this many triangles (if even one cell per 128 × 128 chunk has
    /// more, to that), keeping more of them in the roughest chunks.
    #[arg(long = "mesh-triangles", value_name = "N", conflicts_with = "mesh_error")]
    pub mesh_triangles: Option<u64>,
    /// Thin meshes out chunk by chunk while no sample is further than this many metres (vertically)
    /// from the mesh.
    #[arg(long = "mesh-error", value_name = "M")]
    pub mesh_error: Option<f64>,
    /// Count tile rows from the bottom in preset tile names (engines whose Y axis points north).
    #[arg(long = "flip-y")]
    pub flip_y: bool,
}

/// The export settings of a run, checked.
#[derive(Clone, Debug)]
pub struct Export {
    pub options: ExportOptions,
    /// The maps the splat layers read, in layer order (`@MAP`).
    pub masks: Vec<String>,
    pub preset: Option<Preset>,
    pub flip_y: bool,
}

fn bad(message: String) -> CliError {
    CliError::Usage(format!("{}: {message}", codes::GGE4021))
}

/// `-1..0`, `0..0.5/0..30`, `@rock`.
fn parse_splat(text: &str, masks: &mut Vec<String>) -> Result<Vec<SplatLayer>, CliError> {
    let mut layers = Vec::new();
    for item in text.split(';').map(str::trim) {
        if let Some(name) = item.strip_prefix('@') {
            geogen::check_map_name(name).map_err(|why| bad(format!("`{item}` names no map: {why}")))?;
            let index = masks.iter().position(|m| m == name).unwrap_or_else(|| {
                masks.push(name.to_string());
                masks.len() - 1
            });
            layers.push(SplatLayer::Mask(index));
            continue;
        }
        let range = |part: &str, lo: f64, hi: f64, what: &str| -> Result<(f64, f64), CliError> {
            let (a, b) = part.split_once("..").ok_or_else(|| bad(format!("`{part}` in `{item}` is not LOW..HIGH")))?;
            let parse = |s: &str| s.trim().parse::<f64>().ok().filter(|x| x.is_finite());
            match (parse(a), parse(b)) {
                (Some(a), Some(b)) if a <= b && a >= lo && b <= hi => Ok((a, b)),
                _ => Err(bad(format!("`{part}` in `{item}` is not a {what} range LOW..HIGH within [{lo}, {hi}]"))),
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
    if layers.len() > geogen_io::derived::SPLAT_CHANNELS {
        return Err(bad(format!("{} splat layers, one RGBA image holds at most 4", layers.len())));
    }
    Ok(layers)
}

impl Export {
    pub fn from_args(args: &ExportArgs) -> Result<Export, CliError> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(args.pixel_size) || !positive(args.height_scale) {
            return Err(bad("--pixel-size and --height-scale must be positive numbers of metres".into()));
        }
        let simplify = match (args.mesh_triangles, args.mesh_error) {
            (Some(0), _) => return Err(bad("--mesh-triangles must be at least 1".into())),
            (Some(n), _) => Simplify::TriangleBudget(n),
            (None, Some(e)) if e.is_finite() && e >= 0.0 => Simplify::MaxError(e),
            (None, Some(_)) => return Err(bad("--mesh-error must be a number of metres, 0 or more".into())),
            (None, None) => Simplify::Full,
        };
        let mut masks = Vec::new();
        let splat = match &args.splat {
            Some(text) => parse_splat(text, &mut masks)?,
            None => Vec::new(),
        };
        let normal = match (args.normal, args.preset) {
            (Some(NormalArg::Opengl), _) => NormalConvention::OpenGl,
            (Some(NormalArg::Directx), _) => NormalConvention::DirectX,
            (None, Some(preset)) => preset.normal_convention(),
            (None, None) => NormalConvention::OpenGl,
        };
        let options = ExportOptions {
            scale: TerrainScale { pixel_size: args.pixel_size, height_scale: args.height_scale },
            normal,
            splat,
            simplify,
        };
        Ok(Export { options, masks, preset: args.preset, flip_y: args.flip_y })
    }

    /// The settings given that none of `formats` uses, each as a warning to print: a flag that
    /// silently did nothing would leave a user wondering why the files look the same.
    pub fn unused_settings(args: &ExportArgs, formats: &[Format]) -> Vec<String> {
        let mut unused = Vec::new();
        let mut check = |given: bool, used: bool, flag: &str, formats: &str| {
            if given && !used {
                unused.push(format!("warning: {flag} changes only {formats}, and --format asks for none"));
            }
        };
        let meshes = formats.iter().any(|f| f.is_mesh());
        check(
            args.mesh_triangles.is_some() || args.mesh_error.is_some(),
            meshes,
            "--mesh-triangles/--mesh-error",
            "meshes (glb, obj)",
        );
        check(args.splat.is_some(), formats.contains(&Format::Splat), "--splat", "splat maps (splat)");
        check(args.normal.is_some(), formats.contains(&Format::Normal), "--normal", "normal maps (normal)");
        check(args.flip_y && args.preset.is_none(), false, "--flip-y", "the tile names of a --preset");
        unused
    }

    /// The pixels each map must be rendered with beyond its rectangle for these formats.
    pub fn margin(formats: &[Format]) -> u32 {
        u32::from(formats.iter().any(|f| f.needs_margin()))
    }

    /// What the settings are, for a tiles manifest: two runs with other export settings write other
    /// bytes.
    pub fn describe(&self) -> String {
        let o = &self.options;
        format!(
            "pixel size {} m, height scale {} m, normals {:?}, splat {:?} from {:?}, meshes {:?}, preset {:?}, flip-y {}",
            o.scale.pixel_size, o.scale.height_scale, o.normal, o.splat, self.masks, o.simplify, self.preset, self.flip_y
        )
    }

    /// The surface of `map` whose core is `core` (clipped to the map), and the splat masks the
    /// formats read, of the same pixels.
    fn surface<'a>(
        &self,
        stem: &str,
        map: &'a HeightMap,
        core: Rect,
        formats: &[Format],
        maps: &'a BTreeMap<String, HeightMap>,
    ) -> Result<(Surface<'a>, Vec<HeightField<'a>>), CliError> {
        let rect = map.rect();
        let cannot = |e: String| CliError::Usage(format!("cannot write `{stem}`: {e}"));
        if rect.is_empty() {
            return Err(cannot("it has no pixels here".into()));
        }
        let field =
            HeightField::new(rect.width as u32, rect.height as u32, map.data()).map_err(|e| cannot(e.to_string()))?;
        let surface =
            Surface::clipped(field, (rect.x, rect.y), (core.x, core.y, core.width as u32, core.height as u32))
                .ok_or_else(|| cannot("it has no pixels here".into()))?;
        let mut mask_fields = Vec::new();
        if formats.contains(&Format::Splat) {
            for name in &self.masks {
                let mask = maps.get(name).filter(|m| m.rect() == rect).ok_or_else(|| {
                    cannot(format!("the splat mask \"{name}\" was not rendered over the same pixels"))
                })?;
                mask_fields.push(
                    HeightField::new(rect.width as u32, rect.height as u32, mask.data())
                        .map_err(|e| cannot(e.to_string()))?,
                );
            }
        }
        Ok((surface, mask_fields))
    }

    /// Encodes `map` (rendered with its margin) in every format: the file name suffix of each
    /// format after `stem`, and its bytes. `core` is the rectangle to write; `maps` holds the masks.
    pub fn encode_map(
        &self,
        stem: &str,
        map: &HeightMap,
        core: Rect,
        formats: &[Format],
        maps: &BTreeMap<String, HeightMap>,
    ) -> Result<Vec<(String, Vec<u8>)>, CliError> {
        let (surface, masks) = self.surface(stem, map, core, formats, maps)?;
        let mut out = Vec::new();
        for &format in formats {
            let bytes = geogen_io::encode_surface(format, &surface, &self.options, &masks, stem)
                .map_err(|e| CliError::Usage(format!("cannot write `{stem}`: {e}")))?;
            out.push((format.file_name(stem), bytes));
        }
        Ok(out)
    }

    /// Writes `map` in every format into `dir`, as [`Export::encode_map`] encodes it.
    pub fn write_map(
        &self,
        dir: &geogen_io::OutputDir,
        stem: &str,
        map: &HeightMap,
        core: Rect,
        formats: &[Format],
        maps: &BTreeMap<String, HeightMap>,
    ) -> Result<Vec<geogen_io::WrittenFile>, CliError> {
        let (surface, masks) = self.surface(stem, map, core, formats, maps)?;
        Ok(geogen_io::write_map_files(dir, stem, &surface, formats, &self.options, &masks)?)
    }
}

/// `--input NAME=FILE` or `NAME=FILE:WxH` (the size of a raw R16 file).
#[derive(Clone, Debug, PartialEq)]
pub struct InputArg {
    pub name: String,
    pub path: PathBuf,
    pub size: Option<(u32, u32)>,
}

pub fn parse_input(text: &str) -> Result<InputArg, String> {
    let (name, rest) = text.split_once('=').ok_or_else(|| format!("`{text}` is not NAME=FILE"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("`{text}` has no input name before `=`"));
    }
    // A trailing `:WxH` is a size only if it reads as one (paths may hold colons).
    let (path, size) = match rest.rsplit_once(':') {
        Some((path, size)) if !path.is_empty() => match crate::args::parse_size(size) {
            Ok(size) if size.0 > 0 => (path, Some(size)),
            _ => (rest, None),
        },
        _ => (rest, None),
    };
    if path.is_empty() {
        return Err(format!("`{text}` has no file after `=`"));
    }
    Ok(InputArg { name: name.to_string(), path: PathBuf::from(path), size })
}

/// Reads every `--input` once; a file that cannot be read is GGE4020 (exit 2).
pub fn load_inputs(script: &Script, inputs: &[InputArg]) -> Result<BTreeMap<String, Arc<InputRaster>>, CliError> {
    let mut loaded = BTreeMap::new();
    for input in inputs {
        let failure = |message: String, hint: &str| -> CliError {
            script.failure(Diagnostic::new(codes::GGE4020, message).with_hint(hint.to_string())).into()
        };
        if loaded.contains_key(&input.name) {
            return Err(failure(
                format!("the input \"{}\" is given twice", input.name),
                "give each input its own name",
            ));
        }
        let heights =
            geogen_io::read_heights(&input.path, input.size, &geogen_io::InputLimits::default()).map_err(|e| {
                failure(
                e.to_string(),
                "inputs are 8- or 16-bit PNG, 8/16-bit or float TIFF, EXR, or raw R16 (NAME=FILE:WxH unless square)",
            )
            })?;
        let raster = InputRaster::new(heights.width, heights.height, heights.data)
            .ok_or_else(|| failure(format!("`{}` holds no pixels", input.path.display()), "check the file"))?;
        loaded.insert(input.name.clone(), Arc::new(raster));
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn splat_layers_parse_and_refuse_nonsense() {
        let mut masks = Vec::new();
        let layers = parse_splat("-1..0; 0..0.5/0..30 ;@rock;@rock", &mut masks).unwrap();
        assert_eq!(layers[0], SplatLayer::Rule { height: (-1.0, 0.0), slope_degrees: (0.0, 90.0) });
        assert_eq!(layers[1], SplatLayer::Rule { height: (0.0, 0.5), slope_degrees: (0.0, 30.0) });
        assert_eq!(layers[2..], [SplatLayer::Mask(0), SplatLayer::Mask(0)]);
        assert_eq!(masks, ["rock"]);
        for bad in ["", "1..0", "-2..0", "0..1/0..100", "a..b", "0..1;0..1;0..1;0..1;0..1", "@", "@../x", "0..1/"] {
            assert!(parse_splat(bad, &mut Vec::new()).is_err(), "{bad}");
        }
    }

    #[test]
    fn input_arguments_parse() {
        assert_eq!(
            parse_input("base=sketch.png").unwrap(),
            InputArg { name: "base".into(), path: "sketch.png".into(), size: None }
        );
        assert_eq!(parse_input("h=dem.r16:1025x513").unwrap().size, Some((1025, 513)));
        assert_eq!(parse_input("h=C:dir/x.png").unwrap().path, PathBuf::from("C:dir/x.png"));
        assert!(parse_input("nothing").is_err());
        assert!(parse_input("=x.png").is_err());
        assert!(parse_input("a=").is_err());
    }
}
