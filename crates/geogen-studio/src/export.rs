//! Export: the render settings and formats of `geogen render`, written by the same writers into
//! the studio's export directory.
//!
//! `POST /api/export` renders the text being edited at full size (within [`MAX_RENDER_SIDE`] a
//! side and [`MAX_EXPORT_PIXELS`] in all) and writes every selected map in every asked format into
//! the export directory, through `geogen_io::OutputDir` and `geogen_io::write_map_files`, the
//! code path of `geogen render -o`: the directory is locked while the export writes (a `geogen
//! render` into it at the same time is refused, 409), every file is written atomically, and only
//! plain file names inside the directory are ever written. A file that already exists is not
//! replaced unless the request says `"replace": true`: without it the export is refused (409)
//! before anything is rendered, listing the files it would replace, so the page can ask first.
//!
//! One export runs at a time (another gets 409); it renders on a blocking thread, so previews and
//! tiles are served meanwhile, and `GET /api/export/progress` tells how far its render is.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::JsonRejection;
use axum::extract::State as AxState;
use axum::http::StatusCode;
use axum::Json;
use geogen::diag::codes;
use geogen::{Progress, RenderConfig};
use geogen_io::engine::{self, Preset};
use geogen_io::{
    ExportOptions, Format, HeightField, MapPlan, MapPlanError, NormalConvention, OutputDir, OutputDirError, Surface,
    TerrainScale,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::{compile_and_remember, internal, ApiError, RenderRequest};
use crate::{Shared, MAX_EXPORT_PIXELS, MAX_RENDER_SIDE};

/// An export the page asks for: a render request (source, seed, parameters, size, origin, scale,
/// map size, maps) and what to write.
#[derive(Deserialize)]
pub(crate) struct ExportRequest {
    #[serde(flatten)]
    render: RenderRequest,
    /// Format names as `geogen render --format` takes them (`png16`, `colored`, `glb`, ...);
    /// none with a preset is the preset's height format, as without `--format`.
    #[serde(default)]
    formats: Vec<String>,
    /// Metres between two pixels (derived maps and meshes), as `--pixel-size`.
    #[serde(default)]
    pixel_size: Option<f64>,
    /// Metres of the height 1, as `--height-scale`.
    #[serde(default)]
    height_scale: Option<f64>,
    /// `opengl` or `directx`, as `--normal` (default: the preset's, else opengl).
    #[serde(default)]
    normal: Option<String>,
    /// `unity`, `unreal` or `godot`, as `--preset`: the engine's sizes and a sidecar JSON per map.
    #[serde(default)]
    preset: Option<String>,
    /// Splat layers as `--splat` takes them: `H0..H1`, `H0..H1/S0..S1` or `@MAP`, `;` between.
    #[serde(default)]
    splat: Option<String>,
    /// Thin meshes to at most this many triangles, as `--mesh-triangles`.
    #[serde(default)]
    mesh_triangles: Option<u64>,
    /// Thin meshes while no sample is further than this many metres off, as `--mesh-error`.
    #[serde(default)]
    mesh_error: Option<f64>,
    /// Replace files of the same names already in the directory (otherwise refused: 409).
    #[serde(default)]
    replace: bool,
}

/// The labels the script placed, as `geogen render` writes them (GeoJSON, `geogen::labels`).
const LABELS_FILE: &str = "labels.geojson";

/// How far the running export is (what `GET /api/export/progress` answers).
#[derive(Clone, Debug, Default)]
pub(crate) struct ExportProgress {
    running: bool,
    done: usize,
    total: usize,
}

/// Every format name, in the order `geogen render --help` lists them.
pub(crate) fn format_names() -> Vec<&'static str> {
    Format::ALL.iter().map(|f| f.name()).collect()
}

fn bad(code: geogen::diag::ErrorCode, message: impl Into<String>, hint: &str) -> ApiError {
    ApiError::bad_request(code, message, Some(hint))
}

fn conflict(message: impl Into<String>, hint: &str) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, codes::GGE4000, message, Some(hint))
}

/// The formats, checked: at least one (none with a preset is its height format), each known,
/// none twice.
fn parse_formats(names: &[String], preset: Option<Preset>) -> Result<Vec<Format>, ApiError> {
    if let (true, Some(preset)) = (names.is_empty(), preset) {
        return Ok(vec![preset.height_format()]);
    }
    if names.is_empty() {
        return Err(bad(codes::GGE4000, "no format asked for", "formats is a list such as [\"png16\", \"colored\"]"));
    }
    if names.len() > 64 {
        return Err(bad(codes::GGE4000, "too many formats", "each format once"));
    }
    let mut formats = Vec::new();
    for name in names {
        let format: Format = name.parse().map_err(|_| {
            bad(codes::GGE4000, unknown("format", name), &format!("the formats are {}", format_names().join(", ")))
        })?;
        if !formats.contains(&format) {
            formats.push(format);
        }
    }
    Ok(formats)
}

/// The export settings, checked as `geogen render` checks its flags (GGE4021), by the same code
/// (`geogen_io::engine`).
pub(crate) struct Settings {
    options: ExportOptions,
    preset: Option<Preset>,
    /// The maps the splat layers read (`@MAP`), in layer order.
    masks: Vec<String>,
}

fn unknown(what: &str, text: &str) -> String {
    format!("unknown {what} `{}`", text.chars().take(40).collect::<String>().escape_debug())
}

fn parse_preset(request: &ExportRequest) -> Result<Option<Preset>, ApiError> {
    request
        .preset
        .as_deref()
        .map(|name| {
            name.parse::<Preset>()
                .map_err(|_| bad(codes::GGE4021, unknown("preset", name), "preset is unity, unreal or godot"))
        })
        .transpose()
}

fn export_settings(request: &ExportRequest, preset: Option<Preset>) -> Result<Settings, ApiError> {
    let scale = TerrainScale {
        pixel_size: request.pixel_size.unwrap_or(TerrainScale::default().pixel_size),
        height_scale: request.height_scale.unwrap_or(TerrainScale::default().height_scale),
    };
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if !positive(scale.pixel_size) || !positive(scale.height_scale) {
        return Err(bad(
            codes::GGE4021,
            "pixel_size and height_scale must be positive numbers of metres",
            "as --pixel-size and --height-scale: e.g. 1 and 100",
        ));
    }
    let normal = match (request.normal.as_deref(), preset) {
        (Some("opengl"), _) => NormalConvention::OpenGl,
        (Some("directx"), _) => NormalConvention::DirectX,
        (Some(other), _) => {
            return Err(bad(codes::GGE4021, unknown("normal convention", other), "normal is opengl or directx"))
        }
        (None, Some(preset)) => preset.normal_convention(),
        (None, None) => NormalConvention::OpenGl,
    };
    let simplify = engine::simplify(request.mesh_triangles, request.mesh_error).map_err(|why| {
        bad(
            codes::GGE4021,
            why.replace("--mesh-triangles", "mesh_triangles").replace("--mesh-error", "mesh_error"),
            "give mesh_triangles (at least 1) or mesh_error (metres, 0 or more), not both",
        )
    })?;
    let (splat, masks) = match request.splat.as_deref() {
        Some(text) if text.len() > 1000 => {
            return Err(bad(codes::GGE4021, "the splat layers are too long", "at most 4 layers"))
        }
        Some(text) => engine::parse_splat(text, |name| geogen::check_map_name(name).map_err(|why| why.to_string()))
            .map_err(|why| {
                bad(
                    codes::GGE4021,
                    why,
                    "up to 4 layers separated by `;`: -1..0, 0..0.5/0..30 (heights/slope degrees) or @MAP",
                )
            })?,
        None => (Vec::new(), Vec::new()),
    };
    Ok(Settings { options: ExportOptions { scale, geo: None, normal, splat, simplify }, preset, masks })
}

/// Refuses an export larger than the studio allows, before anything runs.
fn check_export_size(width: u32, height: u32) -> Result<(), ApiError> {
    if width == 0 || height == 0 {
        return Err(bad(codes::GGE4003, "the export size must be at least 1x1", "give width and height in pixels"));
    }
    if width > MAX_RENDER_SIDE || height > MAX_RENDER_SIDE || u64::from(width) * u64::from(height) > MAX_EXPORT_PIXELS {
        return Err(bad(
            codes::GGE4003,
            format!("an export of {width}x{height} pixels is larger than the studio allows"),
            &format!(
                "the studio exports at most {MAX_RENDER_SIDE} pixels a side; use `geogen render` (or `geogen tiles`) for larger maps"
            ),
        ));
    }
    Ok(())
}

/// `POST /api/export`: renders and writes; answers the files written (name, bytes, whether an
/// older file of that name was replaced) and the script's messages.
pub(crate) async fn export(
    AxState(state): AxState<Shared>,
    body: Result<Json<ExportRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(request) = body.map_err(ApiError::rejected)?;
    let preset = parse_preset(&request)?;
    let formats = parse_formats(&request.formats, preset)?;
    let options = export_settings(&request, preset)?;
    check_export_size(request.render.width, request.render.height)?;
    let Ok(permit) = state.export_slot.try_acquire() else {
        return Err(conflict("another export is running", "wait for it to finish (GET /api/export/progress)"));
    };
    let worker = Arc::clone(&state);
    let answer = tokio::task::spawn_blocking(move || export_blocking(&worker, &request, &formats, &options))
        .await
        .map_err(|e| internal(&e.to_string()));
    *state.export_progress.lock().unwrap_or_else(|e| e.into_inner()) = ExportProgress::default();
    drop(permit);
    Ok(Json(answer??))
}

/// `GET /api/export/progress`: `{running, done, total}` (rendering steps).
pub(crate) async fn progress(AxState(state): AxState<Shared>) -> Json<Value> {
    let p = state.export_progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Json(json!({ "running": p.running, "done": p.done, "total": p.total }))
}

fn dir_error(e: OutputDirError) -> ApiError {
    match e {
        OutputDirError::Busy(_) => ApiError::new(
            StatusCode::CONFLICT,
            codes::GGE4022,
            e.to_string(),
            Some("another program is writing into the export directory"),
        ),
        OutputDirError::NotADirectory(_) => ApiError::new(
            StatusCode::CONFLICT,
            codes::GGE4000,
            e.to_string(),
            Some("the export directory names a file: start the studio with another --export-dir"),
        ),
        OutputDirError::ForeignLock(_) => ApiError::new(
            StatusCode::CONFLICT,
            codes::GGE4000,
            e.to_string(),
            Some("something other than geogen's lock file sits in the export directory: remove it"),
        ),
        OutputDirError::Write(e) => crate::api::cannot_write("write the export", &e),
        other @ OutputDirError::Io { .. } => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::GGE4023,
            format!("cannot write the export: {other}"),
            Some("check the export directory's permissions and free space"),
        ),
        other => internal(&format!("cannot write the export: {other}")),
    }
}

fn export_blocking(
    state: &Shared,
    request: &ExportRequest,
    formats: &[Format],
    export: &Settings,
) -> Result<Value, ApiError> {
    let started = Instant::now();
    let name = state.document.lock().unwrap_or_else(|e| e.into_inner()).name.clone();
    let script = compile_and_remember(state, &name, &request.render.source).map_err(|f| ApiError::failure(&f))?;
    // The maps: every one the script yields, or those asked for, each a name the script yields
    // (so a hostile name never reaches a file name), and the splat masks (`@MAP`) rendered with
    // them, as `geogen render` plans them.
    let known = script.info().maps;
    let check_name = |name: &str| geogen::check_map_name(name).map_err(|why| why.to_string());
    let plan = geogen_io::plan_maps(&known, request.render.maps.as_deref(), formats, &export.masks, check_name)
        .map_err(|error| match error {
            MapPlanError::Unknown { name, known, mask: false } => bad(
                codes::GGE4000,
                format!(
                    "the script yields no map named \"{}\"",
                    name.chars().take(64).collect::<String>().escape_debug()
                ),
                &format!("it yields: {}", known.join(", ")),
            ),
            MapPlanError::Unknown { name, known, mask: true } => bad(
                codes::GGE4000,
                format!("the splat layer @{name} reads a map the script does not yield"),
                &format!("it yields: {}", known.join(", ")),
            ),
            MapPlanError::BadName(why) => bad(codes::GGE4000, why, "rename the map in the script"),
            MapPlanError::Files(why) => bad(codes::GGE4000, why, "drop one of the formats"),
        })?;
    let MapPlan { written: maps, rendered: rendered_maps } = plan;
    if maps.is_empty() {
        return Err(bad(codes::GGE4000, "no map to export", "the script yields no map, or maps is empty"));
    }
    let mut settings = request.render.settings(&state.options.limits);
    settings.maps = Some(rendered_maps);
    settings.yield_margin = u32::from(formats.iter().any(|f| f.needs_margin()));
    if let Some(preset) = export.preset {
        let geometry = script.geometry(&settings).map_err(|d| ApiError::failure(&script.failure(d)))?;
        let core = geometry.yield_rect();
        if !preset.accepts_size(core.width as u32, core.height as u32) {
            return Err(bad(
                codes::GGE4021,
                format!(
                    "{} cannot import a {}x{} heightmap without resizing it",
                    preset.name(),
                    core.width,
                    core.height
                ),
                &format!("export {}", preset.suggestion(false).replace("--size", "size")),
            ));
        }
    }
    // Meshes and derived maps are built whole in memory: one that would not fit the memory limit
    // is refused before rendering (an OBJ of a 4096² map takes about 5 GB).
    if formats.iter().any(|f| f.reads_export_options()) {
        let core = script.geometry(&settings).map_err(|d| ApiError::failure(&script.failure(d)))?.yield_rect();
        let limit = state.options.memory_limit;
        let largest: u64 = formats
            .iter()
            .map(|&f| geogen_io::encoding_bytes(f, core.width as u32, core.height as u32, &export.options))
            .max()
            .unwrap_or(0);
        if largest > limit {
            return Err(bad(
                codes::GGE3001,
                format!(
                    "exporting {}x{} as {} takes about {} in memory, over the studio's memory limit of {}",
                    core.width,
                    core.height,
                    formats.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
                    geogen::host::human_bytes(largest),
                    geogen::host::human_bytes(limit)
                ),
                "export a smaller size, thin the mesh (mesh triangles), or start the studio with a larger --memory-limit",
            ));
        }
    }
    // The directory is locked from here to the last file, as `geogen render -o` locks it.
    let dir = OutputDir::open(&state.options.export_dir).map_err(dir_error)?;
    let mut existing = Vec::new();
    for map in &maps {
        let mut names: Vec<String> = formats.iter().map(|f| f.file_name(map)).collect();
        names.extend(export.preset.map(|p| p.sidecar_name(map)));
        for file in names {
            let path = dir.file(&file).map_err(dir_error)?;
            if std::fs::symlink_metadata(&path).is_ok() {
                existing.push(file);
            }
        }
    }
    // `labels.geojson`, as `geogen render` writes it when the script places labels: if one is
    // there already, a simulation (no pixels) tells whether this export would replace it.
    let labels_path = dir.file(LABELS_FILE).map_err(dir_error)?;
    if std::fs::symlink_metadata(&labels_path).is_ok() {
        let simulation = script.simulate(&settings).map_err(|f| ApiError::failure(&f))?;
        if !simulation.output.labels.is_empty() {
            existing.push(LABELS_FILE.to_string());
        }
    }
    if !existing.is_empty() && !request.replace {
        let mut refusal = conflict(
            format!(
                "{} already in {}: {}",
                if existing.len() == 1 { "this file is" } else { "these files are" },
                state.options.export_dir.display(),
                existing.join(", ")
            ),
            "export again with replace to overwrite them, or move them away first",
        );
        refusal.body["existing"] = json!(existing);
        return Err(refusal);
    }
    let config = RenderConfig {
        memory_limit: state.options.memory_limit,
        solutions: Some(state.solutions.clone()),
        ..RenderConfig::default()
    };
    *state.export_progress.lock().unwrap_or_else(|e| e.into_inner()) =
        ExportProgress { running: true, done: 0, total: 0 };
    let progress_state = Arc::clone(state);
    let callback: Box<dyn FnMut(Progress) + Send> = Box::new(move |p: Progress| {
        *progress_state.export_progress.lock().unwrap_or_else(|e| e.into_inner()) =
            ExportProgress { running: true, done: p.done, total: p.total };
    });
    let rendered = script.render(&settings, &config, Some(callback)).map_err(|f| ApiError::failure(&f))?;
    let render_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for map_name in &maps {
        let Some(map) = rendered.maps.get(map_name) else { continue };
        let rect = map.rect();
        let core = rendered.yield_rect;
        let surface = if rect.is_empty() {
            None
        } else {
            let field = HeightField::new(rect.width as u32, rect.height as u32, map.data())
                .map_err(|e| internal(&e.to_string()))?;
            Surface::clipped(field, (rect.x, rect.y), (core.x, core.y, core.width as u32, core.height as u32))
        };
        let Some(surface) = surface else {
            skipped.push(map_name.clone());
            continue;
        };
        let mut masks = Vec::new();
        if formats.contains(&Format::Splat) {
            for name in &export.masks {
                let mask = rendered.maps.get(name).filter(|m| m.rect() == rect).ok_or_else(|| {
                    bad(
                        codes::GGE4000,
                        format!("the splat mask \"{name}\" was not rendered over the pixels of \"{map_name}\""),
                        "a mask must cover the same map as the map it textures",
                    )
                })?;
                masks.push(
                    HeightField::new(rect.width as u32, rect.height as u32, mask.data())
                        .map_err(|e| internal(&e.to_string()))?,
                );
            }
        }
        let mut written: Vec<(String, u64)> =
            geogen_io::write_map_files(&dir, map_name, &surface, formats, &export.options, &masks)
                .map_err(dir_error)?
                .into_iter()
                .map(|f| (f.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), f.bytes))
                .collect();
        if let Some(preset) = export.preset {
            let names: Vec<String> = written.iter().map(|(n, _)| n.clone()).collect();
            let command = render_command(state, request, formats, preset);
            let generator = script
                .run_record(request.render.source.as_bytes(), &settings, &command)
                .map_err(|f| ApiError::failure(&f))?;
            let sidecar = engine::render_sidecar(preset, export.options.scale, map_name, &surface, &names, generator);
            let name = preset.sidecar_name(map_name);
            let path = dir.file(&name).map_err(dir_error)?;
            geogen_io::write_bytes(&path, sidecar.as_bytes())
                .map_err(|e| crate::api::cannot_write("write the export", &e))?;
            written.push((name, sidecar.len() as u64));
        }
        for (name, bytes) in written {
            let replaced = existing.contains(&name);
            files.push(json!({
                "name": name, "map": map_name, "bytes": bytes, "replaced": replaced,
                "width": surface.core.width, "height": surface.core.height,
            }));
        }
    }
    if !rendered.output.labels.is_empty() {
        let text = geogen::labels::geojson(&rendered.output);
        geogen_io::write_bytes(&labels_path, text.as_bytes())
            .map_err(|e| crate::api::cannot_write("write the export", &e))?;
        files.push(json!({
            "name": LABELS_FILE, "bytes": text.len(), "replaced": existing.iter().any(|e| e == LABELS_FILE),
            "labels": geogen::labels::placed(&rendered.output).len(),
        }));
    }
    Ok(json!({
        "dir": state.options.export_dir.display().to_string(),
        "files": files,
        "skipped": skipped,
        "messages": rendered.output.messages,
        "render_ms": render_ms,
        "total_ms": started.elapsed().as_secs_f64() * 1e3,
    }))
}

/// The `geogen render` command that writes the same files (recorded in the sidecar, so the world
/// can be made again without the studio).
fn render_command(state: &Shared, request: &ExportRequest, formats: &[Format], preset: Preset) -> Vec<String> {
    let document = state.document.lock().unwrap_or_else(|e| e.into_inner());
    let script = document.path.as_ref().map_or_else(|| document.name.clone(), |p| p.display().to_string());
    drop(document);
    let render = &request.render;
    let mut command = vec!["geogen".to_string(), "render".to_string(), script];
    let mut flag = |name: &str, value: String| {
        command.push(name.to_string());
        command.push(value);
    };
    flag("--seed", render.settings(&state.options.limits).seed.to_string());
    for (name, value) in render.parameter_texts() {
        flag("-p", format!("{name}={value}"));
    }
    flag("--size", format!("{}x{}", render.width, render.height));
    if let Some((w, h)) = render.map_size() {
        flag("--map-size", format!("{w}x{h}"));
    }
    flag("--scale", render.scale().to_string());
    let (x, y) = render.origin();
    flag("--origin", format!("{x},{y}"));
    flag("--format", formats.iter().map(|f| f.name()).collect::<Vec<_>>().join(","));
    if let Some(maps) = &render.maps {
        flag("--maps", maps.join(","));
    }
    flag("--preset", preset.name().to_string());
    if let Some(p) = request.pixel_size {
        flag("--pixel-size", p.to_string());
    }
    if let Some(h) = request.height_scale {
        flag("--height-scale", h.to_string());
    }
    if let Some(n) = &request.normal {
        flag("--normal", n.clone());
    }
    if let Some(s) = &request.splat {
        flag("--splat", s.clone());
    }
    if let Some(t) = request.mesh_triangles {
        flag("--mesh-triangles", t.to_string());
    }
    if let Some(e) = request.mesh_error {
        flag("--mesh-error", e.to_string());
    }
    flag("-o", state.options.export_dir.display().to_string());
    // `--origin=-5,3`: a negative origin must not read as a flag.
    if let Some(at) = command.iter().position(|a| a == "--origin") {
        let value = command.remove(at + 1);
        command[at] = format!("--origin={value}");
    }
    command
}
