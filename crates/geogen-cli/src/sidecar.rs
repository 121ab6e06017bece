//! The sidecar JSON of an engine preset: what the engine's import dialog asks for (sizes, height
//! range and scales in metres) and everything that made the files, so the world can be made again.
//!
//! Written next to the files: `<map>.<preset>.json` for `render`, `geogen-<preset>.json` for
//! `tiles`. The numbers follow from the height encoding of each preset's format:
//!
//! * Unity reads a 16-bit sample `v` as `position.y + v / 65535 × terrain height`; geogen's
//!   `v = round(h × 32767) + 32767` is `h × height_scale` metres when the terrain height is
//!   `2 × height_scale × 65535 / 65534` and the terrain sits at `y = −height_scale`.
//! * Unreal reads `v` as `(v − 32768) / 128 × Z scale` centimetres above the landscape's Z;
//!   geogen's heights come out right with `Z scale = 128 × 100 × height_scale / 32767` and the
//!   landscape raised by `Z scale / 128` cm (one 16-bit step).
//! * Terrain3D imports the EXR's heights as they are, times its import scale: `height_scale`.

use geogen::{HeightMap, Rect, RunSettings, Script};
use serde_json::{json, Value};

use crate::export::{Export, Preset};
use crate::report::CliError;
use crate::tiles::{parameter_json, sha256_hex};

pub struct Sidecar;

/// The smallest and largest height of `core` (NaN read as 0, clamped like every writer).
fn height_range(map: &HeightMap, core: Rect) -> (f64, f64) {
    let mut range = (f64::INFINITY, f64::NEG_INFINITY);
    for y in core.y..core.y + core.height as i64 {
        for x in core.x..core.x + core.width as i64 {
            let h = f64::from(geogen_io::quantize::sanitize(map.get(x, y).unwrap_or(0.0)));
            range = (range.0.min(h), range.1.max(h));
        }
    }
    if range.0 > range.1 {
        (0.0, 0.0)
    } else {
        range
    }
}

/// What the engine's import dialog wants, for a heightmap of `width × height` pixels.
pub fn engine_settings(preset: Preset, export: &Export, width: u64, height: u64) -> Value {
    let scale = export.options.scale;
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
            "region_sizes": crate::export::TERRAIN3D_REGION_SIZES,
        }),
    }
}

/// The settings that made the files: enough to run the same command again.
fn generator(script: &Script, source: &[u8], settings: &RunSettings) -> Result<Value, CliError> {
    let parameters: serde_json::Map<String, Value> =
        script.parameter_values(settings)?.iter().map(|(n, v)| (n.clone(), parameter_json(v))).collect();
    let inputs: Vec<Value> = settings
        .inputs
        .iter()
        .map(|(name, raster)| {
            let bytes: Vec<u8> = raster.data().iter().flat_map(|h| h.to_le_bytes()).collect();
            json!({ "name": name, "width": raster.width(), "height": raster.height(), "heights_sha256": sha256_hex(&bytes) })
        })
        .collect();
    let geometry = script.geometry(settings).map_err(|d| script.failure(d))?;
    Ok(json!({
        "geogen_version": env!("CARGO_PKG_VERSION"),
        "script": script.source().name(),
        "script_sha256": sha256_hex(source),
        "seed": settings.seed,
        "parameters": parameters,
        "scale": settings.render_scale,
        "map_size": [geometry.map_width, geometry.map_height],
        "inputs": inputs,
        "command": std::env::args().collect::<Vec<_>>(),
    }))
}

impl Sidecar {
    #[allow(clippy::too_many_arguments)]
    pub fn for_render(
        preset: Preset,
        export: &Export,
        map_name: &str,
        map: &HeightMap,
        core: Rect,
        files: &[String],
        source: &[u8],
        settings: &RunSettings,
        script: &Script,
    ) -> Result<String, CliError> {
        let v = export.options.scale.height_scale;
        let (low, high) = height_range(map, core);
        let value = json!({
            "preset": preset.name(),
            "map": map_name,
            "files": files,
            "width": core.width,
            "height": core.height,
            "origin_px": [core.x, core.y],
            "pixel_size_m": export.options.scale.pixel_size,
            "height_scale_m": v,
            "height_range_m": { "min": low * v, "max": high * v },
            "nominal_range_m": [-v, v],
            "engine": engine_settings(preset, export, core.width, core.height),
            "generator": generator(script, source, settings)?,
        });
        Ok(format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default()))
    }

    /// The sidecar of a tiles directory: the grid, each tile's file name pattern and size.
    #[allow(clippy::too_many_arguments)]
    pub fn for_tiles(
        preset: Preset,
        export: &Export,
        region: (i64, i64, u32, u32),
        tile: u32,
        maps: &[String],
        source: &[u8],
        settings: &RunSettings,
        script: &Script,
    ) -> Result<String, CliError> {
        let v = export.options.scale.height_scale;
        let side = u64::from(tile) + u64::from(preset.tile_overlap());
        let names: Vec<String> = maps.iter().map(|m| preset.tile_stem(m, 0, 0)).collect();
        let value = json!({
            "preset": preset.name(),
            "maps": maps,
            "first_tiles": names,
            "tile_px": tile,
            "tile_file_px": side,
            "shared_edge_px": preset.tile_overlap(),
            "tiles": [u64::from(region.2).div_ceil(u64::from(tile)), u64::from(region.3).div_ceil(u64::from(tile))],
            "rows_counted_from": if export.flip_y { "bottom" } else { "top" },
            "region_px": [region.0, region.1, region.2, region.3],
            "pixel_size_m": export.options.scale.pixel_size,
            "height_scale_m": v,
            "nominal_range_m": [-v, v],
            "engine": engine_settings(preset, export, side, side),
            "generator": generator(script, source, settings)?,
        });
        Ok(format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default()))
    }
}
