//! `geogen render` and `geogen tiles`: simulate, render, write files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use geogen::{CompileOptions, Failure, HeightMap, MessageMode, Progress, RenderConfig, RunSettings, Script};
use geogen_io::{Format, HeightField};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::args::{OutputArgs, RenderCmd, TilesCmd};
use crate::commands::{compile_options, read_script, run_settings, script_settings};
use crate::report::{self, EXIT_SCRIPT};

/// A progress bar that appears only when a render takes more than half a second, and never when
/// quiet or when stderr is not a terminal.
#[derive(Clone)]
struct LazyBar {
    bar: ProgressBar,
    started: Instant,
    shown: Arc<AtomicBool>,
    enabled: bool,
}

impl LazyBar {
    fn new(quiet: bool, total: u64, what: &str) -> LazyBar {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {elapsed_precise} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(what.to_string());
        LazyBar { bar, started: Instant::now(), shown: Arc::new(AtomicBool::new(false)), enabled: !quiet }
    }

    fn update(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        if self.enabled && !self.shown.load(Ordering::Relaxed) && self.started.elapsed() > Duration::from_millis(500) {
            self.shown.store(true, Ordering::Relaxed);
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Bytes as KiB/MiB/GiB for people.
pub fn bytes(n: u64) -> String {
    geogen::human_bytes(n)
}

/// A quarter of this machine's memory (spec §6), or 1 GiB when it cannot be read.
fn default_memory_limit() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        text.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<u64>().ok())
    });
    total_kib.map(|kib| kib * 1024 / 4).unwrap_or(geogen::DEFAULT_MEMORY_LIMIT)
}

fn render_config(output: &OutputArgs) -> RenderConfig {
    let memory_limit = output.memory_limit.map(|mib| mib.saturating_mul(1 << 20)).unwrap_or_else(default_memory_limit);
    RenderConfig { memory_limit }
}

/// The formats, read before any work starts: a bad name is a usage error and nothing is written.
fn parse_formats(output: &OutputArgs) -> Result<Vec<Format>, String> {
    geogen_io::parse_list(&output.format).map_err(|e| e.to_string())
}

/// Creates the output directory only once there is something to put in it, so a script that
/// fails leaves nothing behind.
fn create_output_dir(output: &OutputArgs) -> Result<(), String> {
    std::fs::create_dir_all(&output.dir)
        .map_err(|e| format!("cannot create the output directory `{}`: {e}", output.dir.display()))
}

fn compile_or_report(name: &str, source: &[u8], options: &CompileOptions) -> Option<Script> {
    match Script::compile_bytes(name, source, options) {
        Ok(script) => Some(script),
        Err(failure) => {
            report::failure(&failure);
            None
        }
    }
}

/// Writes one map in each format; returns the paths written.
fn write_map(dir: &Path, file_stem: &str, map: &HeightMap, formats: &[Format]) -> Result<Vec<PathBuf>, String> {
    let rect = map.rect();
    let (width, height) = (rect.width as u32, rect.height as u32);
    let field = HeightField::new(width, height, map.data()).map_err(|e| format!("cannot write `{file_stem}`: {e}"))?;
    let mut written = Vec::new();
    for &format in formats {
        let path = dir.join(format.file_name(file_stem));
        geogen_io::write(format, &field, &path).map_err(|e| e.to_string())?;
        written.push(path);
    }
    Ok(written)
}

pub fn render(cmd: &RenderCmd) -> Result<ExitCode, String> {
    let options = compile_options(&cmd.settings.script.limits.source);
    let (name, source) = match &cmd.script {
        Some(path) => (path.display().to_string(), read_script(path, options.max_script_bytes)?),
        None => ("<built-in example: island>".to_string(), geogen::EXAMPLE_ISLAND.as_bytes().to_vec()),
    };
    let formats = parse_formats(&cmd.output)?;
    let Some(script) = compile_or_report(&name, &source, &options) else { return Ok(ExitCode::from(EXIT_SCRIPT)) };
    // Messages are printed as the script prints them, not held until the render ends.
    let messages = if cmd.output.quiet { MessageMode::Collect } else { MessageMode::stream(report::outln) };
    let settings = RunSettings { maps: cmd.output.maps.clone(), messages, ..run_settings(&cmd.settings) };
    let bar = LazyBar::new(cmd.output.quiet, 1, "rendering");
    let progress_bar = bar.clone();
    let callback: Box<dyn FnMut(Progress) + Send> =
        Box::new(move |p: Progress| progress_bar.update(p.done as u64, p.total as u64));
    let started = Instant::now();
    let result = script.render(&settings, &render_config(&cmd.output), Some(callback));
    bar.finish();
    let rendered = match result {
        Ok(r) => r,
        Err(failure) => {
            report::failure(&failure);
            return Ok(ExitCode::from(EXIT_SCRIPT));
        }
    };
    let render_time = started.elapsed();
    create_output_dir(&cmd.output)?;
    let mut pixels = 0u64;
    for (map_name, map) in &rendered.maps {
        if map.rect().is_empty() {
            eprintln!("warning: the map \"{map_name}\" is empty here (the render lies outside the finite map)");
            continue;
        }
        pixels += map.rect().area();
        let written = match write_map(&cmd.output.dir, map_name, map, &formats) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(EXIT_SCRIPT));
            }
        };
        if !cmd.output.quiet {
            for path in written {
                report::outln(&format!("wrote {} ({}x{})", path.display(), map.rect().width, map.rect().height));
            }
        }
    }
    if cmd.profile {
        report::out(&profile_table(&rendered.timings));
    }
    if !cmd.output.quiet && pixels > 0 {
        let seconds = render_time.as_secs_f64();
        eprintln!(
            "rendered {} map{} in {:.3} s ({:.1} ns per pixel)",
            rendered.maps.len(),
            if rendered.maps.len() == 1 { "" } else { "s" },
            seconds,
            seconds * 1e9 / pixels as f64
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--profile`: one line per step with its time and ns per pixel, slowest steps easy to spot.
fn profile_table(timings: &[geogen::StepTiming]) -> String {
    let mut out = format!("{:>5}  {:<28} {:>9} {:>12} {:>10}\n", "step", "operation", "line", "pixels", "ms");
    let mut total = std::time::Duration::ZERO;
    for t in timings {
        total += t.duration;
        let line = t.location.map(|(l, c)| format!("{l}:{c}")).unwrap_or_default();
        let per_pixel = if t.pixels > 0 {
            format!("  {:.2} ns/px", t.duration.as_secs_f64() * 1e9 / t.pixels as f64)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{:>5}  {:<28} {:>9} {:>12} {:>10.3}{per_pixel}\n",
            t.index + 1,
            t.name,
            line,
            t.pixels,
            t.duration.as_secs_f64() * 1e3
        ));
    }
    out.push_str(&format!("total rendering time: {:.3} ms\n", total.as_secs_f64() * 1e3));
    out
}

/// One tile of a `tiles` run, in physical pixels.
#[derive(Copy, Clone, Debug)]
struct Tile {
    x: i64,
    y: i64,
    width: u32,
    height: u32,
}

impl Tile {
    fn stem(&self) -> String {
        format!("tile_{}_{}", self.x, self.y)
    }

    fn manifest(&self, dir: &Path) -> PathBuf {
        dir.join(format!(".{}.done", self.stem()))
    }

    /// Complete when its manifest exists and every file it lists is still there.
    fn is_complete(&self, dir: &Path) -> bool {
        match std::fs::read_to_string(self.manifest(dir)) {
            Ok(list) => list.lines().filter(|l| !l.is_empty()).all(|file| dir.join(file).is_file()),
            Err(_) => false,
        }
    }
}

fn tiles_of(region: (i64, i64, u32, u32), side: u32) -> Vec<Tile> {
    let (x0, y0, w, h) = region;
    let mut tiles = Vec::new();
    for ty in (0..h).step_by(side as usize) {
        for tx in (0..w).step_by(side as usize) {
            tiles.push(Tile {
                x: x0 + i64::from(tx),
                y: y0 + i64::from(ty),
                width: side.min(w - tx),
                height: side.min(h - ty),
            });
        }
    }
    tiles
}

/// Writes the manifest atomically after all of a tile's files, so an interrupted run resumes.
fn write_manifest(tile: &Tile, dir: &Path, files: &[PathBuf]) -> Result<(), String> {
    let list: String =
        files.iter().filter_map(|p| p.file_name()).map(|n| format!("{}\n", n.to_string_lossy())).collect();
    let target = tile.manifest(dir);
    let temp = dir.join(format!(".{}.done.tmp-{}", tile.stem(), std::process::id()));
    std::fs::write(&temp, list)
        .and_then(|()| std::fs::rename(&temp, &target))
        .map_err(|e| format!("cannot write `{}`: {e}", target.display()))
}

enum TileError {
    Script(Box<Failure>),
    Io(String),
}

fn render_tile(
    script: &Script,
    base: &RunSettings,
    tile: &Tile,
    output: &OutputArgs,
    formats: &[Format],
) -> Result<usize, TileError> {
    let settings = RunSettings {
        render_origin: (tile.x, tile.y),
        render_width: Some(tile.width),
        render_height: Some(tile.height),
        ..base.clone()
    };
    let rendered =
        script.render(&settings, &render_config(output), None).map_err(|f| TileError::Script(Box::new(f)))?;
    let mut files = Vec::new();
    for (map_name, map) in &rendered.maps {
        if map.rect().is_empty() {
            continue;
        }
        // Named after the map's own rectangle, not the grid cell: on a finite map a cell reaching
        // past the edge (e.g. above y = 0) holds only the clipped pixels, which start elsewhere, and
        // a stitcher placing it at the cell's corner would shift it. The manifest keeps the cell.
        let rect = map.rect();
        let stem = format!("tile_{}_{}_{map_name}", rect.x, rect.y);
        files.extend(write_map(&output.dir, &stem, map, formats).map_err(TileError::Io)?);
    }
    write_manifest(tile, &output.dir, &files).map_err(TileError::Io)?;
    Ok(files.len())
}

pub fn tiles(cmd: &TilesCmd) -> Result<ExitCode, String> {
    let options = compile_options(&cmd.script_args.limits.source);
    let source = read_script(&cmd.script, options.max_script_bytes)?;
    let formats = parse_formats(&cmd.output)?;
    let Some(script) = compile_or_report(&cmd.script.display().to_string(), &source, &options) else {
        return Ok(ExitCode::from(EXIT_SCRIPT));
    };
    create_output_dir(&cmd.output)?;
    let scale = cmd.script_args.scale;
    let (_, _, region_w, region_h) = cmd.region;
    let mut base =
        RunSettings { render_scale: scale, maps: cmd.output.maps.clone(), ..script_settings(&cmd.script_args) };
    // Without --map-size, a finite map is the whole region (not one tile).
    if base.map_width.is_none() {
        base.map_width = Some(((f64::from(region_w) / scale).floor() as u32).max(1));
        base.map_height = Some(((f64::from(region_h) / scale).floor() as u32).max(1));
    }
    let all = tiles_of(cmd.region, cmd.tile);
    let todo: Vec<Tile> = all.iter().copied().filter(|t| !t.is_complete(&cmd.output.dir)).collect();
    let skipped = all.len() - todo.len();
    let bar = LazyBar::new(cmd.output.quiet, todo.len() as u64, "tiles");
    let done = Mutex::new(0u64);
    let files_written = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    let errors: Vec<(Tile, TileError)> = todo
        .par_iter()
        .filter_map(|tile| {
            let result = render_tile(&script, &base, tile, &cmd.output, &formats)
                .map(|n| files_written.fetch_add(n, Ordering::Relaxed));
            if let Ok(mut d) = done.lock() {
                *d += 1;
                bar.update(*d, todo.len() as u64);
            }
            result.err().map(|e| (*tile, e))
        })
        .collect();
    bar.finish();
    if let Some((tile, error)) = errors.into_iter().min_by_key(|(t, _)| (t.y, t.x)) {
        eprintln!("error in tile at {},{} ({}x{}):", tile.x, tile.y, tile.width, tile.height);
        match error {
            TileError::Script(failure) => report::failure(&failure),
            TileError::Io(message) => eprintln!("error: {message}"),
        }
        return Ok(ExitCode::from(EXIT_SCRIPT));
    }
    if !todo.is_empty() && files_written.load(Ordering::Relaxed) == 0 {
        // As `render` warns about empty maps: otherwise a region outside a finite map "succeeds"
        // silently with no files.
        eprintln!("warning: no tile wrote a file (the region lies outside the finite map)");
    }
    if !cmd.output.quiet {
        eprintln!(
            "rendered {} tile{} in {:.3} s into {}{}",
            todo.len(),
            if todo.len() == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64(),
            cmd.output.dir.display(),
            if skipped > 0 { format!(" ({skipped} complete tiles skipped)") } else { String::new() }
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_region_without_overlap() {
        let tiles = tiles_of((-10, 5, 25, 12), 10);
        assert_eq!(tiles.len(), 6);
        let area: u64 = tiles.iter().map(|t| u64::from(t.width) * u64::from(t.height)).sum();
        assert_eq!(area, 25 * 12);
        assert_eq!((tiles[2].x, tiles[2].width), (10, 5));
        assert_eq!((tiles[5].y, tiles[5].height), (15, 2));
    }

    #[test]
    fn bytes_are_human() {
        assert_eq!(bytes(10), "10 bytes");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
    }
}
