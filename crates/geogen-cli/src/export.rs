//! Into the engine and back: the options of derived maps and meshes (`--pixel-size`,
//! `--height-scale`, `--normal`, `--splat`, `--mesh-triangles`, `--mesh-error`), engine presets
//! (`--preset unity|unreal|godot`) and input height maps (`--input name=FILE`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use clap::builder::TypedValueParser;
use clap::{Args, ValueEnum};
use geogen::diag::{codes, Diagnostic};
use geogen::{HeightMap, InputRaster, Rect, Script};
use geogen_io::{ExportOptions, Format, HeightField, NormalConvention, SplatLayer, Surface, TerrainScale};

use crate::report::CliError;

pub use geogen_io::engine::Preset;

/// `--preset`: the names of [`Preset`], listed in `--help`.
fn preset_parser() -> impl clap::builder::TypedValueParser<Value = Preset> {
    clap::builder::PossibleValuesParser::new(Preset::ALL.map(Preset::name))
        .try_map(|name: String| name.parse::<Preset>())
}

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
    #[arg(long, value_parser = preset_parser())]
    pub preset: Option<Preset>,
    /// Metres between two pixels (hillshade, GeoTIFF, meshes, normal, slope, curvature and splat maps, sidecars).
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
    /// Where the map's origin (map coordinate 0, 0) lies on the Earth, `LON,LAT` in degrees: the
    /// GeoTIFF (`cog`) is then in Web Mercator (EPSG:3857), its pixels `--pixel-size` metres on the
    /// ground there. Without it the GeoTIFF is in the map's own plane, in metres.
    #[arg(long = "geo-origin", value_name = "LON,LAT", allow_hyphen_values = true)]
    pub geo_origin: Option<String>,
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

/// `--geo-origin LON,LAT`: where a map's origin lies on the Earth, in degrees.
pub fn parse_geo_origin(text: &str) -> Result<geogen_io::cog::GeoOrigin, String> {
    let parsed = text
        .split_once(',')
        .and_then(|(lon, lat)| Some((lon.trim().parse::<f64>().ok()?, lat.trim().parse::<f64>().ok()?)));
    let (lon, lat) = parsed.ok_or_else(|| format!("--geo-origin takes LON,LAT in degrees, not `{text}`"))?;
    geogen_io::cog::GeoOrigin::new(lon, lat).map_err(|why| format!("--geo-origin: {why}"))
}

/// `-1..0`, `0..0.5/0..30`, `@rock`: the layers and the maps they read (`geogen_io::engine`).
fn parse_splat(text: &str) -> Result<(Vec<SplatLayer>, Vec<String>), CliError> {
    geogen_io::engine::parse_splat(text, |name| geogen::check_map_name(name).map_err(|why| why.to_string()))
        .map_err(bad)
}

impl Export {
    pub fn from_args(args: &ExportArgs) -> Result<Export, CliError> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(args.pixel_size) || !positive(args.height_scale) {
            return Err(bad("--pixel-size and --height-scale must be positive numbers of metres".into()));
        }
        let simplify = geogen_io::engine::simplify(args.mesh_triangles, args.mesh_error).map_err(bad)?;
        let (splat, masks) = match &args.splat {
            Some(text) => parse_splat(text)?,
            None => (Vec::new(), Vec::new()),
        };
        let normal = match (args.normal, args.preset) {
            (Some(NormalArg::Opengl), _) => NormalConvention::OpenGl,
            (Some(NormalArg::Directx), _) => NormalConvention::DirectX,
            (None, Some(preset)) => preset.normal_convention(),
            (None, None) => NormalConvention::OpenGl,
        };
        let geo = args.geo_origin.as_deref().map(parse_geo_origin).transpose().map_err(bad)?;
        let options = ExportOptions {
            geo,
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
        check(args.geo_origin.is_some(), formats.contains(&Format::Cog), "--geo-origin", "GeoTIFFs (cog)");
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
            "pixel size {} m, height scale {} m, normals {:?}, splat {:?} from {:?}, meshes {:?}, preset {:?}, flip-y {}, \
             geo origin {:?}",
            o.scale.pixel_size,
            o.scale.height_scale,
            o.normal,
            o.splat,
            self.masks,
            o.simplify,
            self.preset,
            self.flip_y,
            o.geo
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

    /// Refuses, before rendering, a mesh or derived map of `width × height` whose encoding would
    /// not fit the memory limit (they are built whole in memory: an OBJ of a 4096² map takes
    /// about 5 GB).
    pub fn refuse_encodings_over(
        &self,
        formats: &[Format],
        width: u32,
        height: u32,
        limit: u64,
    ) -> Result<(), CliError> {
        for &format in formats {
            let bytes = geogen_io::encoding_bytes(format, width, height, &self.options);
            if bytes > limit {
                let thin = if format.is_mesh() { "thin the mesh (--mesh-triangles), " } else { "" };
                return Err(CliError::Usage(format!(
                    "{}: writing {width}x{height} as {format} takes about {} in memory, over the memory limit of {}; \
                     {thin}render smaller tiles or raise --memory-limit",
                    geogen::diag::codes::GGE3001,
                    geogen::host::human_bytes(bytes),
                    geogen::host::human_bytes(limit)
                )));
            }
        }
        Ok(())
    }

    /// Writes `map` in every format into `dir` under temporary names (as [`Export::encode_map`]
    /// encodes it), for the caller to publish with the rest of the run's files.
    pub fn stage_map(
        &self,
        dir: &geogen_io::OutputDir,
        stem: &str,
        map: &HeightMap,
        core: Rect,
        formats: &[Format],
        maps: &BTreeMap<String, HeightMap>,
    ) -> Result<Vec<geogen_io::StagedFile>, CliError> {
        let (surface, masks) = self.surface(stem, map, core, formats, maps)?;
        let staged = geogen_io::stage_map_files(dir, stem, &surface, formats, &self.options, &masks)?;
        Ok(staged.into_iter().map(|(file, _)| file).collect())
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
            Ok(size) => (path, Some(size)),
            // Digits x digits is meant as a size (`0x0`, too large): said so, not taken as part
            // of the file's name (which then "does not exist").
            Err(why) if looks_like_a_size(size) => return Err(format!("`{text}`: {why}")),
            Err(_) => (rest, None),
        },
        _ => (rest, None),
    };
    if path.is_empty() {
        return Err(format!("`{text}` has no file after `=`"));
    }
    Ok(InputArg { name: name.to_string(), path: PathBuf::from(path), size })
}

/// `WxH` in digits (whether or not the numbers are valid sizes).
fn looks_like_a_size(text: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    text.split_once(['x', 'X']).is_some_and(|(w, h)| digits(w.trim()) && digits(h.trim()))
}

/// Bytes a pixel of an input takes while it is read (the file's samples, up to 4 bytes, beside the
/// heights being made of them).
const INPUT_READ_BYTES_PER_PIXEL: u64 = 8;

/// Reads the `--input` maps, each within what is left of `memory_limit` after the ones before (a
/// small compressed file can hold a huge map: a 522 KB PNG of 16384² took 1.6 GB), refusing one
/// that would not fit before decoding it. The maps stay in memory for the whole run: see
/// [`input_bytes`]. A file that cannot be read is GGE4020 (exit 2).
pub fn load_inputs(
    script: &Script,
    inputs: &[InputArg],
    memory_limit: u64,
) -> Result<BTreeMap<String, Arc<InputRaster>>, CliError> {
    let mut loaded = BTreeMap::new();
    let mut held = 0u64;
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
        let defaults = geogen_io::InputLimits::default();
        let affordable = memory_limit.saturating_sub(held) / INPUT_READ_BYTES_PER_PIXEL;
        let limits = geogen_io::InputLimits { max_pixels: defaults.max_pixels.min(affordable), ..defaults };
        let heights = geogen_io::read_heights(&input.path, input.size, &limits).map_err(|e| {
            let hint = if limits.max_pixels < defaults.max_pixels {
                "inputs are read within the memory limit (8 bytes a pixel while read, 4 kept): raise --memory-limit, or \
                 give a smaller map"
            } else {
                "inputs are 8- or 16-bit PNG, 8/16-bit or float TIFF, EXR, or raw R16 (NAME=FILE:WxH unless square)"
            };
            failure(e.to_string(), hint)
        })?;
        held = held.saturating_add(4 * u64::from(heights.width) * u64::from(heights.height));
        let raster = InputRaster::new(heights.width, heights.height, heights.data)
            .ok_or_else(|| failure(format!("`{}` holds no pixels", input.path.display()), "check the file"))?;
        loaded.insert(input.name.clone(), Arc::new(raster));
    }
    Ok(loaded)
}

/// Bytes the input maps hold for the whole run (which the render's memory plan does not see, so
/// callers take them off the limit they give it).
pub fn input_bytes(inputs: &BTreeMap<String, Arc<InputRaster>>) -> u64 {
    inputs.values().map(|r| 4 * u64::from(r.width()) * u64::from(r.height())).fold(0, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splat_layers_refuse_what_is_no_map_name() {
        let (layers, masks) = parse_splat("-1..0;@rock;@rock").unwrap();
        assert_eq!(layers[1..], [SplatLayer::Mask(0), SplatLayer::Mask(0)]);
        assert_eq!(masks, ["rock"]);
        for bad in ["@", "@../x", "@a b", "1..0"] {
            match parse_splat(bad) {
                Err(CliError::Usage(message)) => assert!(message.starts_with("GGE4021"), "{message}"),
                other => panic!("{bad}: {other:?}"),
            }
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
        // A size holding no pixel is said to be one, not taken for part of the file's name.
        for bad in ["a=r.r16:0x0", "a=r.r16:0x5", "a=r.r16:99999999999x1"] {
            let why = parse_input(bad).unwrap_err();
            assert!(why.contains("at least 1") || why.contains("too large"), "{bad}: {why}");
        }
        assert_eq!(parse_input("a=map:v2.png").unwrap().path, PathBuf::from("map:v2.png"));
    }
}
