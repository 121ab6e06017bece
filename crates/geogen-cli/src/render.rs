//! `geogen render` and `geogen tiles`: simulate, render, write files.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use geogen::diag::{codes, Diagnostic};
use geogen::{CompileOptions, HeightMap, MessageMode, Progress, RenderConfig, RunSettings, Script};
use geogen_io::{Format, HeightField, MapPlan, MapPlanError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::{OutputArgs, RenderCmd};
use crate::commands::{compile_options, read_script, run_settings};
use crate::export::Export;
use crate::outdir::{self, OutputDir};
use crate::report::{self, CliError};
use crate::signals;

/// A progress bar that appears only when a render takes more than half a second, and never when
/// quiet or when stderr is not a terminal.
#[derive(Clone)]
pub struct LazyBar {
    bar: ProgressBar,
    started: Instant,
    shown: Arc<AtomicBool>,
    enabled: bool,
}

impl LazyBar {
    pub fn new(quiet: bool, total: u64, what: &str) -> LazyBar {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {elapsed_precise} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(what.to_string());
        LazyBar { bar, started: Instant::now(), shown: Arc::new(AtomicBool::new(false)), enabled: !quiet }
    }

    pub fn update(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        if self.enabled && !self.shown.load(Ordering::Relaxed) && self.started.elapsed() > Duration::from_millis(500) {
            self.shown.store(true, Ordering::Relaxed);
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Bytes as KiB/MiB/GiB for people.
pub fn bytes(n: u64) -> String {
    geogen::host::human_bytes(n)
}

/// A quarter of this machine's memory (spec §6), or 1 GiB when it cannot be read.
pub fn default_memory_limit() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        text.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<u64>().ok())
    });
    total_kib.map(|kib| kib * 1024 / 4).unwrap_or(geogen::DEFAULT_MEMORY_LIMIT)
}

pub fn render_config(output: &OutputArgs) -> RenderConfig {
    let memory_limit = output.memory_limit.map(|mib| mib.saturating_mul(1 << 20)).unwrap_or_else(default_memory_limit);
    let max_solve_cells = output.max_solve_cells.unwrap_or(geogen::DEFAULT_MAX_SOLVE_CELLS);
    RenderConfig { memory_limit, max_solve_cells, ..RenderConfig::default() }
}

/// The formats, read before any work starts: a bad name is a usage error and nothing is written.
/// Without `--format`, png16, or the height format of the `--preset`.
pub fn parse_formats(output: &OutputArgs) -> Result<Vec<Format>, CliError> {
    match &output.format {
        Some(list) => geogen_io::parse_list(list).map_err(|e| CliError::Usage(e.to_string())),
        None => Ok(vec![output.export.preset.map_or(Format::Png16, |p| p.height_format())]),
    }
}

pub fn compile_script(
    name: &str,
    source: &[u8],
    options: &CompileOptions,
    language: crate::slang::Language,
) -> Result<Script, CliError> {
    Ok(crate::slang::compile_in(language, name, source, options)?)
}

/// The maps a run writes (those `--maps` names, each one the script yields: GGE4000; else every
/// map it can yield, in the script's order) and renders (with the splat masks they read), by the
/// plan every front end shares (`geogen_io::plan_maps`); two outputs sharing a file (a map
/// `main_8bit` in png16 and a map `main` in png8 both give `main_8bit.png`) are refused before
/// anything is rendered. It holds for tiles too: `tiles` prefixes every map of a tile with the
/// same `tile_X_Y_`, so their names collide exactly when the plain names do.
pub fn plan_maps(
    script: &Script,
    wanted: Option<&[String]>,
    formats: &[Format],
    masks: &[String],
) -> Result<MapPlan, CliError> {
    let known = script.info().maps;
    geogen_io::plan_maps(&known, wanted, formats, masks, |name| {
        geogen::check_map_name(name).map_err(|why| why.to_string())
    })
    .map_err(|error| match error {
        MapPlanError::Unknown { name, known, .. } => {
            let diagnostic = Diagnostic::new(codes::GGE4000, format!("the script yields no map named \"{name}\""))
                .with_hint(format!("it yields: {}", known.join(", ")));
            script.failure(diagnostic).into()
        }
        MapPlanError::BadName(message) | MapPlanError::Files(message) => CliError::Usage(message),
    })
}

/// Refuses a render rectangle that lies entirely outside a finite map: it would write nothing.
pub fn refuse_render_outside_the_map(script: &Script, settings: &RunSettings, what: &str) -> Result<(), CliError> {
    let geometry = script.geometry(settings).map_err(|d| script.failure(d))?;
    if geometry.yield_rect().is_empty() {
        let size = |m: Option<u32>| m.map_or("infinite".to_string(), |m| m.to_string());
        return Err(CliError::Usage(format!(
            "the {what} ({}x{} pixels at {},{}) lies entirely outside the map ({} x {} map units at scale {}), so nothing would be written",
            geometry.render_width,
            geometry.render_height,
            geometry.render_origin_x,
            geometry.render_origin_y,
            size(geometry.map_width),
            size(geometry.map_height),
            geometry.render_scale
        )));
    }
    Ok(())
}

/// The colored preview again, with the labels drawn on it (staged): the pixels of the render
/// rectangle only (a margin rendered for derived maps or meshes is left out).
fn draw_labels(
    dir: &OutputDir,
    file_stem: &str,
    map: &HeightMap,
    rendered: &geogen::Rendered,
) -> Result<geogen_io::StagedFile, CliError> {
    let rect = map.rect();
    let core = rendered.yield_rect.intersect(&rect);
    let (skip_x, skip_y) = ((core.x - rect.x) as usize, (core.y - rect.y) as usize);
    let data: Vec<f32> = map
        .data()
        .chunks(rect.width as usize)
        .skip(skip_y)
        .take(core.height as usize)
        .flat_map(|row| &row[skip_x..skip_x + core.width as usize])
        .copied()
        .collect();
    let field = HeightField::new(core.width as u32, core.height as u32, &data)
        .map_err(|e| CliError::Usage(format!("cannot write `{file_stem}`: {e}")))?;
    // Label positions count from the render rectangle's corner; the image starts at the core's.
    let (shift_x, shift_y) = ((core.x - rendered.yield_rect.x) as f64, (core.y - rendered.yield_rect.y) as f64);
    let placed = geogen::labels::placed(&rendered.output);
    let labels: Vec<geogen_io::PixelLabel<'_>> = placed
        .iter()
        .map(|p| geogen_io::PixelLabel {
            x: p.px - shift_x,
            y: p.py - shift_y,
            text: &p.label.text,
            kind: &p.label.kind,
        })
        .collect();
    let path = dir.file(&Format::Colored.file_name(file_stem))?;
    geogen_io::stage_colored_with_labels(&field, &labels, &path).map_err(CliError::from)
}

pub fn render(cmd: &RenderCmd) -> Result<ExitCode, CliError> {
    let command_started = Instant::now();
    let options = compile_options(&cmd.settings.script.limits.source);
    let (name, source) = match &cmd.script {
        Some(path) => (path.display().to_string(), read_script(path, options.max_script_bytes)?),
        None => ("<built-in example: island>".to_string(), geogen::EXAMPLE_ISLAND.as_bytes().to_vec()),
    };
    let formats = parse_formats(&cmd.output)?;
    let export = Export::from_args(&cmd.output.export)?;
    for warning in Export::unused_settings(&cmd.output.export, &formats) {
        eprintln!("{warning}");
    }
    if cmd.draw_labels && !formats.contains(&Format::Colored) {
        eprintln!("warning: --draw-labels draws on the colored preview; add `colored` to --format to see them");
    }
    outdir::refuse_non_directory(&cmd.output.dir)?;
    let language = crate::slang::language(cmd.script.as_deref(), &cmd.settings.script)?;
    let script = compile_script(&name, &source, &options, language)?;
    // The splat masks are rendered with the maps, but written only if they were asked for.
    let MapPlan { written: maps, rendered: rendered_maps } =
        plan_maps(&script, cmd.output.maps.as_deref(), &formats, &export.masks)?;
    // Script messages are output, not chatter (-q does not hide them), printed as the script
    // prints them rather than held until the render ends.
    let settings = RunSettings {
        maps: Some(rendered_maps),
        messages: MessageMode::stream(report::outln),
        inputs: crate::export::load_inputs(
            &script,
            &cmd.settings.script.inputs,
            render_config(&cmd.output).memory_limit,
        )?,
        yield_margin: Export::margin(&formats),
        ..run_settings(&cmd.settings)
    };
    refuse_render_outside_the_map(&script, &settings, "render")?;
    if let Some(preset) = export.preset {
        let geometry = script.geometry(&settings).map_err(|d| script.failure(d))?;
        let core = geometry.yield_rect();
        if !preset.accepts_size(core.width as u32, core.height as u32) {
            return Err(CliError::Usage(format!(
                "{}: {} cannot import a {}x{} heightmap without resizing it; render {}",
                geogen::diag::codes::GGE4021,
                preset.name(),
                core.width,
                core.height,
                preset.suggestion(false)
            )));
        }
    }
    if formats.iter().any(|f| f.reads_export_options()) {
        let core = script.geometry(&settings).map_err(|d| script.failure(d))?.yield_rect();
        let limit = render_config(&cmd.output).memory_limit;
        export.refuse_encodings_over(&formats, core.width as u32, core.height as u32, limit)?;
    }
    signals::clean_up_on_interrupt();
    // An existing directory is locked before rendering, so a busy one is refused at once; a new
    // one is created only once there is something to put in it, so a failed render leaves nothing.
    let locked = if cmd.output.dir.is_dir() { Some(outdir::open(&cmd.output.dir)?) } else { None };
    let bar = LazyBar::new(cmd.output.quiet, 1, "rendering");
    let progress_bar = bar.clone();
    let callback: Box<dyn FnMut(Progress) + Send> =
        Box::new(move |p: Progress| progress_bar.update(p.done as u64, p.total as u64));
    let started = Instant::now();
    let mut config = render_config(&cmd.output);
    config.memory_limit = config.memory_limit.saturating_sub(crate::export::input_bytes(&settings.inputs));
    let result = script.render(&settings, &config, Some(callback));
    bar.finish();
    let rendered = match result {
        // Above the memory limit: render in strips streamed into the files (see `streamed`).
        Err(failure) if failure.first().code == codes::GGE3001 => {
            // Engine presets, masks, flipped rows and margins (derived maps) are written from a
            // whole map only.
            let plain =
                export.preset.is_none() && !export.flip_y && export.masks.is_empty() && settings.yield_margin == 0;
            if !plain {
                eprintln!(
                    "note: the render is above the memory limit, and engine presets, splat masks, --flip-y and derived maps are \
                     not written in strips; raise --memory-limit or use `geogen tiles`"
                );
                return Err(failure.into());
            }
            return render_streamed(cmd, &script, settings, &config, &formats, locked, command_started, failure);
        }
        other => other?,
    };
    let render_time = started.elapsed();
    let dir = match locked {
        Some(dir) => dir,
        None => outdir::open(&cmd.output.dir)?,
    };
    let writing_started = Instant::now();
    let mut pixels = 0u64;
    // Every file of the run is written under a temporary name first and all are moved into place
    // at the end: a run that fails half-way (a full disk, a format that cannot hold the map)
    // leaves the files of the previous run whole, not a mix of old and new.
    let mut staged: Vec<geogen_io::StagedFile> = Vec::new();
    let mut said: Vec<String> = Vec::new();
    for (map_name, map) in &rendered.maps {
        if !maps.contains(map_name) {
            continue;
        }
        if map.rect().is_empty() {
            eprintln!("warning: the map \"{map_name}\" is empty here (the render lies outside the finite map)");
            continue;
        }
        let core = rendered.yield_rect.intersect(&map.rect());
        pixels += core.area();
        let drawn = cmd.draw_labels && formats.contains(&Format::Colored);
        let plain: Vec<Format> = formats.iter().copied().filter(|&f| !(drawn && f == Format::Colored)).collect();
        let mut files = export.stage_map(&dir, map_name, map, rendered.yield_rect, &plain, &rendered.maps)?;
        if drawn {
            files.push(draw_labels(&dir, map_name, map, &rendered)?);
        }
        if let Some(preset) = export.preset {
            let names: Vec<String> = files
                .iter()
                .filter_map(|f| f.target().file_name().and_then(|n| n.to_str()).map(str::to_string))
                .collect();
            let sidecar = crate::sidecar::Sidecar::for_render(
                preset, &export, map_name, map, core, &names, &source, &settings, &script,
            )?;
            let path = dir.file(&format!("{map_name}.{}.json", preset.name()))?;
            files.push(geogen_io::stage_bytes(&path, sidecar.as_bytes()).map_err(CliError::from)?);
        }
        for file in &files {
            said.push(format!("wrote {} ({}x{})", file.target().display(), core.width, core.height));
        }
        staged.extend(files);
    }
    if !rendered.output.labels.is_empty() {
        let path = dir.file("labels.geojson")?;
        let file = geogen_io::stage_bytes(&path, geogen::labels::geojson(&rendered.output).as_bytes())
            .map_err(CliError::from)?;
        let count = geogen::labels::placed(&rendered.output).len();
        said.push(format!("wrote {} ({count} label{})", path.display(), if count == 1 { "" } else { "s" }));
        staged.push(file);
    }
    geogen_io::publish(staged).map_err(CliError::from)?;
    if !cmd.output.quiet {
        for line in said {
            report::outln(&line);
        }
    }
    let write_time = writing_started.elapsed();
    let wall = command_started.elapsed();
    // Measured before anything else is allocated (the copy floor below needs two buffers).
    let peak_rss = crate::stats::peak_rss_bytes();
    let (timings, planned_peak, maps) = (rendered.timings, rendered.planned_peak, rendered.maps.len());
    drop(rendered.maps);
    if cmd.profile {
        let largest = timings.iter().map(|t| t.pixels).max().unwrap_or(0);
        let floor = geogen::host::copy_floor_ns_per_pixel(largest.clamp(1, 1 << 24) as usize, 5);
        report::out(&profile_table(&timings, floor));
    }
    if cmd.stats {
        let stepped: Duration = timings.iter().map(|t| t.duration).sum();
        report::outln(&crate::stats::line(&[
            ("wall_ms", format!("{:.1}", wall.as_secs_f64() * 1e3)),
            ("simulate_ms", format!("{:.1}", render_time.saturating_sub(stepped).as_secs_f64() * 1e3)),
            ("render_ms", format!("{:.1}", stepped.as_secs_f64() * 1e3)),
            ("write_ms", format!("{:.1}", write_time.as_secs_f64() * 1e3)),
            ("write_share", format!("{:.3}", write_time.as_secs_f64() / wall.as_secs_f64().max(1e-9))),
            ("pixels", pixels.to_string()),
            ("ns_per_px", format!("{:.2}", wall.as_secs_f64() * 1e9 / (pixels.max(1) as f64))),
            ("peak_rss_bytes", peak_rss.map_or("unknown".to_string(), |b| b.to_string())),
            ("planned_peak_bytes", planned_peak.to_string()),
            ("threads", rayon::current_num_threads().to_string()),
            ("isa", geogen::simd::active().to_string()),
        ]));
    }
    if !cmd.output.quiet && pixels > 0 {
        eprintln!("{}", render_summary(maps, pixels, render_time));
    }
    Ok(ExitCode::SUCCESS)
}

/// `render` of a map whose plan exceeds the memory limit: strips streamed into the files.
#[allow(clippy::too_many_arguments)]
fn render_streamed(
    cmd: &RenderCmd,
    script: &Script,
    mut settings: RunSettings,
    config: &RenderConfig,
    formats: &[Format],
    locked: Option<OutputDir>,
    command_started: Instant,
    failure: geogen::Failure,
) -> Result<ExitCode, CliError> {
    let geometry = script.geometry(&settings).map_err(|d| script.failure(d))?;
    // A finite map keeps the size of the whole render in every strip.
    settings.map_width = geometry.map_width;
    settings.map_height = geometry.map_height;
    let simulation = script.simulate(&settings)?;
    let peak = geogen::RenderMetadata::calculate(&simulation.sequence)
        .map(|meta| meta.plan.peak())
        .map_err(|e| script.failure(e.to_diagnostic()))?;
    if let Err(CliError::Usage(why)) = crate::streamed::check_streamable(formats, config.memory_limit, peak) {
        // Not streamable: the memory-limit error itself says best what happened, with a note why
        // it was not split.
        eprintln!("note: {why}");
        return Err(failure.into());
    }
    let maps = settings.maps.clone().unwrap_or_else(|| script.info().maps);
    let created = locked.is_none();
    let dir = match locked {
        Some(dir) => dir,
        None => outdir::open(&cmd.output.dir)?,
    };
    if !cmd.output.quiet {
        eprintln!(
            "the render needs {} in one piece, more than the memory limit of {}: rendering it in strips streamed into the files",
            geogen::host::human_bytes(peak),
            geogen::host::human_bytes(config.memory_limit)
        );
    }
    let bar = LazyBar::new(cmd.output.quiet, 1, "rendering strips");
    let progress = |done: u64, total: u64| bar.update(done, total);
    let streamed = crate::streamed::render_streamed(script, &settings, config, formats, &maps, &dir, &progress);
    bar.finish();
    let Some(streamed) = streamed? else {
        // Not even one row fits: nothing was written, so a directory this run created goes again
        // (a failed render leaves nothing).
        if created {
            drop(dir);
            let _ = std::fs::remove_file(cmd.output.dir.join(crate::outdir::LOCK_FILE));
            let _ = std::fs::remove_dir(&cmd.output.dir);
        }
        return Err(failure.into());
    };
    if !cmd.output.quiet {
        for (path, width, height) in &streamed.written {
            report::outln(&format!("wrote {} ({width}x{height})", path.display()));
        }
    }
    // The labels come from the simulation of the whole render; strips are never drawn on.
    let output = &simulation.output;
    if !output.labels.is_empty() {
        if cmd.draw_labels {
            eprintln!("warning: --draw-labels is not supported when the render is streamed in strips; the labels are only in labels.geojson");
        }
        let path = dir.file("labels.geojson")?;
        geogen_io::write_bytes(&path, geogen::labels::geojson(output).as_bytes()).map_err(CliError::from)?;
        if !cmd.output.quiet {
            let count = geogen::labels::placed(output).len();
            report::outln(&format!("wrote {} ({count} label{})", path.display(), if count == 1 { "" } else { "s" }));
        }
    }
    let wall = command_started.elapsed();
    if cmd.stats {
        let peak_rss = crate::stats::peak_rss_bytes();
        report::outln(&crate::stats::line(&[
            ("wall_ms", format!("{:.1}", wall.as_secs_f64() * 1e3)),
            ("render_and_write_ms", format!("{:.1}", streamed.render_time.as_secs_f64() * 1e3)),
            ("pixels", streamed.pixels.to_string()),
            ("ns_per_px", format!("{:.2}", wall.as_secs_f64() * 1e9 / (streamed.pixels.max(1) as f64))),
            ("peak_rss_bytes", peak_rss.map_or("unknown".to_string(), |b| b.to_string())),
            ("planned_peak_bytes", streamed.planned_peak.to_string()),
            ("strips", streamed.strips.to_string()),
            ("strip_height", streamed.strip_height.to_string()),
            ("threads", rayon::current_num_threads().to_string()),
            ("isa", geogen::simd::active().to_string()),
        ]));
    }
    if !cmd.output.quiet {
        eprintln!(
            "{} in {} strips of up to {} rows",
            render_summary(streamed.maps, streamed.pixels, streamed.render_time),
            streamed.strips,
            streamed.strip_height
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// How long a render must take before a time per pixel means something: below it, compiling,
/// simulating and starting threads dominate and the figure would mislead.
const PER_PIXEL_MIN_TIME: Duration = Duration::from_millis(500);

/// `rendered 2 maps (131072 pixels) in 1.234 s (9.4 ns per pixel)`; the per-pixel figure only
/// when the render took long enough for it to be about pixels.
fn render_summary(maps: usize, pixels: u64, time: Duration) -> String {
    let seconds = time.as_secs_f64();
    let per_pixel = if time >= PER_PIXEL_MIN_TIME {
        format!(" ({:.1} ns per pixel)", seconds * 1e9 / pixels as f64)
    } else {
        String::new()
    };
    format!("rendered {maps} map{} ({pixels} pixels) in {seconds:.3} s{per_pixel}", if maps == 1 { "" } else { "s" })
}

/// `--profile`: one line per step (or fused pass) with its time, ns per pixel and the multiple of
/// `copy_floor` (ns per pixel of a plain parallel copy measured in this process), slowest steps
/// easy to spot.
fn profile_table(timings: &[geogen::StepTiming], copy_floor: f64) -> String {
    let mut out = format!(
        "{:>5}  {:<40} {:>9} {:>12} {:>10} {:>12} {:>8}\n",
        "step", "operation", "line", "pixels", "ms", "ns/px", "x copy"
    );
    let mut total = std::time::Duration::ZERO;
    for t in timings {
        total += t.duration;
        let line = t.location.map(|(l, c)| format!("{l}:{c}")).unwrap_or_default();
        let name = match &t.alongside {
            // Two units at once: both names, the step count of both (the x copy is of their pixels).
            Some((j, other)) => format!("{} with #{} {} ({} steps)", t.name, j + 1, other, t.steps),
            None if t.steps > 1 => format!("{} +{} fused", t.name, t.steps - 1),
            None => t.name.clone(),
        };
        let (per_pixel, ratio) = if t.pixels > 0 {
            let ns = t.duration.as_secs_f64() * 1e9 / t.pixels as f64;
            (format!("{ns:.2}"), format!("{:.1}", ns / copy_floor))
        } else {
            ("-".to_string(), "-".to_string())
        };
        out.push_str(&format!(
            "{:>5}  {:<40} {:>9} {:>12} {:>10.3} {per_pixel:>12} {ratio:>8}\n",
            t.index + 1,
            name,
            line,
            t.pixels,
            t.duration.as_secs_f64() * 1e3
        ));
    }
    out.push_str(&format!("total rendering time: {:.3} ms\n", total.as_secs_f64() * 1e3));
    out.push_str(&format!("copy floor: {copy_floor:.3} ns/px ({} threads)\n", rayon::current_num_threads()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_per_pixel_shows_only_for_renders_long_enough_to_mean_it() {
        let tiny = render_summary(1, 4096, Duration::from_millis(35));
        assert_eq!(tiny, "rendered 1 map (4096 pixels) in 0.035 s");
        let long = render_summary(2, 100_000_000, Duration::from_secs(2));
        assert_eq!(long, "rendered 2 maps (100000000 pixels) in 2.000 s (20.0 ns per pixel)");
    }

    #[test]
    fn bytes_are_human() {
        assert_eq!(bytes(10), "10 bytes");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
    }
}
