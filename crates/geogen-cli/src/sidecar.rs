//! The sidecar JSON of an engine preset: what the engine's import dialog asks for (sizes, height
//! range and scales in metres) and everything that made the files, so the world can be made again.
//!
//! Written next to the files: `<map>.<preset>.json` for `render`, `geogen-<preset>.json` for
//! `tiles`. The JSON of `render` and the engine settings are `geogen_io::engine`'s (shared with
//! the studio's export), where the numbers are explained.

use geogen::{HeightMap, Rect, RunSettings, Script};
use geogen_io::engine::engine_settings;
use geogen_io::{HeightField, Surface};
use serde_json::{json, Value};

use crate::export::{Export, Preset};
use crate::report::CliError;

pub struct Sidecar;

/// The settings that made the files: enough to run the same command again (this one's arguments).
fn generator(script: &Script, source: &[u8], settings: &RunSettings) -> Result<Value, CliError> {
    Ok(script.run_record(source, settings, &std::env::args().collect::<Vec<_>>())?)
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
        // The same JSON as the studio's export writes (`geogen_io::engine::render_sidecar`).
        let rect = map.rect();
        let cannot = |e: String| CliError::Usage(format!("cannot write the sidecar of `{map_name}`: {e}"));
        let field =
            HeightField::new(rect.width as u32, rect.height as u32, map.data()).map_err(|e| cannot(e.to_string()))?;
        let surface =
            Surface::clipped(field, (rect.x, rect.y), (core.x, core.y, core.width as u32, core.height as u32))
                .ok_or_else(|| cannot("it has no pixels here".into()))?;
        let generator = generator(script, source, settings)?;
        Ok(geogen_io::engine::render_sidecar(preset, export.options.scale, map_name, &surface, files, generator))
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
            "engine": engine_settings(preset, export.options.scale, side, side),
            "generator": generator(script, source, settings)?,
        });
        Ok(format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default()))
    }
}
