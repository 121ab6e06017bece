//! `geogen tiles`: a region rendered in square tiles, several at once, resumable.
//!
//! Resuming must never mix two worlds, so the output directory records what its tiles are:
//!
//! - `geogen-tiles.json`, the manifest: everything that determines the bytes of a tile (geogen
//!   version, SHA-256 of the script, the value of every parameter, seed, scale, map size, tile size
//!   and the phase of the tile grid), and the formats and maps written so far. A run whose settings
//!   differ refuses, listing the differences (exit 2), unless `--restart` deletes the earlier run's
//!   files and starts over. More formats, more maps or a larger region on the same grid are fine.
//! - `.tile_X_Y.done` for each grid cell (X, Y its first pixel), written atomically after the
//!   cell's files: the cell's rectangle, and for each map and format the file written (name, size,
//!   SHA-256), or that the map has no pixels in this cell.
//!
//! A cell is complete when its marker is for the same rectangle, covers every map and format of
//! this run, and every file it lists is still there with the recorded size and checksum. Anything
//! else (no marker, a 0-byte, truncated or replaced file) renders the cell again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

use std::collections::BTreeMap;

use geogen::{Failure, HeightMap, ParameterValue, Rect, RenderConfig, RunSettings, Script};
use geogen_io::{Format, MapPlan};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::TilesCmd;
use crate::commands::{compile_options, read_script, script_settings};
use crate::export::Export;
use crate::outdir::{self, OutputDir};
use crate::render::{compile_script, parse_formats, plan_maps, refuse_render_outside_the_map, render_config, LazyBar};
use crate::report::CliError;
use crate::signals;

/// The run manifest of a tiles directory.
pub const MANIFEST_FILE: &str = "geogen-tiles.json";
/// The version of the manifest and marker layout.
const LAYOUT_VERSION: u32 = 1;

/// The record of one run (or shard) over a region: `geogen-tiles.part-I-of-N.json`, written when it
/// has finished every tile of its part. `finish-tiles` reads them for the region and checks that
/// every part was made with the manifest's settings.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PartRecord {
    pub settings: serde_json::Value,
    /// x, y, width, height of the whole region.
    pub region: [i64; 4],
    pub tile: u32,
    /// [I, N]: this part is every N-th block of tiles from the I-th (row-major), [0, 1] for a whole run.
    pub shard: [u64; 2],
    pub formats: Vec<String>,
    pub maps: Vec<String>,
    /// Tiles of the part (rendered now or found complete).
    pub tiles: u64,
}

/// The file name of the record of part `index` of `count`.
pub fn part_record_name(index: u64, count: u64) -> String {
    format!("geogen-tiles.part-{index}-of-{count}.json")
}

/// `geogen-tiles.part-I-of-N.json` → (I, N).
pub fn parse_part_record_name(name: &str) -> Option<(u64, u64)> {
    let inner = name.strip_prefix("geogen-tiles.part-")?.strip_suffix(".json")?;
    let (i, n) = inner.split_once("-of-")?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

/// The shard of this process: `--shard I/N`, or `--shard N` with I from the environment.
fn resolve_shard(shard: Option<(Option<u64>, u64)>) -> Result<(u64, u64), CliError> {
    let Some((index, count)) = shard else { return Ok((0, 1)) };
    if let Some(index) = index {
        return Ok((index, count));
    }
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let parse = |name: &str, value: String| {
        value.trim().parse::<u64>().map_err(|_| CliError::Usage(format!("{name}={value} is not a shard index")))
    };
    let index = if let Some(value) = var("JOB_COMPLETION_INDEX") {
        parse("JOB_COMPLETION_INDEX", value)?
    } else if let Some(value) = var("SLURM_ARRAY_TASK_ID") {
        // The index itself, not its offset from SLURM_ARRAY_TASK_MIN: resubmitting some tasks
        // (`--array=3,5`) must render shards 3 and 5 again, and there the minimum is 3.
        parse("SLURM_ARRAY_TASK_ID", value)?
    } else {
        return Err(CliError::Usage(format!(
            "--shard {count} needs the shard index: give --shard I/{count}, or run as a Kubernetes Indexed Job \
             (JOB_COMPLETION_INDEX) or a Slurm job array (SLURM_ARRAY_TASK_ID)"
        )));
    };
    if index >= count {
        return Err(CliError::Usage(format!(
            "shard index {index} is not below the number of shards {count} (shards are numbered 0 to {}; \
             a Slurm array for {count} shards is --array=0-{})",
            count - 1,
            count - 1
        )));
    }
    Ok((index, count))
}

/// Everything that determines the bytes of a tile. Two runs may share a directory only if these
/// are equal.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RunSettingsRecord {
    geogen_version: String,
    script_sha256: String,
    /// Every declared parameter with its effective value (given or default), in declaration order.
    parameters: serde_json::Map<String, Value>,
    seed: u32,
    scale: f64,
    /// The map size of finite dimensions (null when infinite).
    map_width: Option<u32>,
    map_height: Option<u32>,
    pub tile: u32,
    /// The grid's phase: its origin modulo the tile size, so a region grown by whole tiles keeps it.
    grid_origin: [i64; 2],
    /// The export settings (derived maps, meshes, preset) and the input maps' checksums, which
    /// decide bytes too ("" for a run with neither).
    #[serde(default)]
    export: String,
    /// The SHA-256 of each Lodestone rule file given with `--rules NAME=FILE`: a script may let
    /// names decide what it draws. Absent in manifests written before `--rules` existed.
    #[serde(default)]
    rules: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Manifest {
    pub geogen_tiles_layout: u32,
    pub settings: RunSettingsRecord,
    /// Formats and maps written so far, over all runs (for people; the markers are what counts).
    pub formats: Vec<String>,
    pub maps: Vec<String>,
}

/// The marker of one grid cell.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Marker {
    /// x, y, width, height of the cell in physical pixels.
    pub cell: [i64; 4],
    pub outputs: Vec<TileOutput>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct TileOutput {
    pub map: String,
    pub format: String,
    /// None when the map has no pixels in this cell (outside a finite map, or not yielded).
    pub file: Option<RecordedFile>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct RecordedFile {
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
}

/// One tile of a `tiles` run, in physical pixels.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Tile {
    pub x: i64,
    pub y: i64,
    pub width: u32,
    pub height: u32,
}

impl Tile {
    pub fn marker_name(&self) -> String {
        format!(".tile_{}_{}.done", self.x, self.y)
    }

    pub fn cell(&self) -> [i64; 4] {
        [self.x, self.y, i64::from(self.width), i64::from(self.height)]
    }
}

/// The cells of a region, computed one at a time: a region may have more cells than fit in memory
/// as a list (`--max-tiles` bounds the run, not the arithmetic).
#[derive(Copy, Clone, Debug)]
pub struct TileGrid {
    pub x: i64,
    pub y: i64,
    pub width: u32,
    pub height: u32,
    pub side: u32,
}

impl TileGrid {
    fn columns(&self) -> u64 {
        u64::from(self.width).div_ceil(u64::from(self.side))
    }

    fn rows(&self) -> u64 {
        u64::from(self.height).div_ceil(u64::from(self.side))
    }

    /// Below 2^64: both factors are below 2^32.
    pub fn count(&self) -> u64 {
        self.columns() * self.rows()
    }

    /// The row-major index of a cell of this grid.
    pub fn index_of(&self, tile: &Tile) -> u64 {
        let side = u64::from(self.side);
        let (column, row) = ((tile.x - self.x) as u64 / side, (tile.y - self.y) as u64 / side);
        row * self.columns() + column
    }

    /// The cells in blocks of `tiles` × `tiles`.
    pub fn blocks(&self, tiles: u32) -> BlockGrid {
        BlockGrid { grid: *self, tiles: u64::from(tiles.max(1)) }
    }

    /// The cell at `index` (row-major), `index < count()`.
    pub fn tile(&self, index: u64) -> Tile {
        let side = u64::from(self.side);
        let (tx, ty) = ((index % self.columns()) * side, (index / self.columns()) * side);
        // tx < width and ty < height, so both fit in u32 and the remainders are positive.
        let (tx, ty) = (tx as u32, ty as u32);
        Tile {
            x: self.x + i64::from(tx),
            y: self.y + i64::from(ty),
            width: self.side.min(self.width - tx),
            height: self.side.min(self.height - ty),
        }
    }
}

/// Tiles are rendered in square blocks of at most this many pixels a side and cut apart. Every
/// tile equals the same rectangle of a larger render (the tile contract), so a block pays the
/// simulation and the halo its operations need around it once for all its tiles: 250² tiles cost
/// about what 1000² tiles cost instead of up to several times more, and the larger the block, the
/// less its halo and the features it shares with its neighbours are computed again (a feature
/// computed whole, like a template several islands are rotated from, is computed once for all
/// the blocks of one run: `geogen_render::SharedParts`). The cap keeps what one interrupted block
/// loses, and the wait for the first tiles, small.
pub const BLOCK_PIXELS: u32 = 4096;

/// Blocks of a sharded run: a fixed size, since every shard must cut the region into the same
/// blocks and the shards' machines (so their default memory limits) may differ.
pub const SHARD_BLOCK_PIXELS: u32 = 2048;

/// The tiles a side of one block: `--block` when given; else as many as fit in [`BLOCK_PIXELS`]
/// (one shard) or [`SHARD_BLOCK_PIXELS`] (several), fewer when the shards' shares of the tiles
/// would otherwise be uneven (see [`shares_are_even`]), and, for one shard, halved until `fits`
/// says a block of that many tiles a side fits the memory limit (a block that does not fit would
/// render its tiles one by one, the costliest way).
fn block_tiles(given: Option<u32>, grid: &TileGrid, shards: u64, fits: impl Fn(u32) -> bool) -> u32 {
    if let Some(given) = given {
        return given.max(1);
    }
    let pixels = if shards > 1 { SHARD_BLOCK_PIXELS } else { BLOCK_PIXELS };
    let mut tiles = (pixels / grid.side).max(1);
    // Not more tiles a side than the region has: the same blocks, and `fits` plans no more than them.
    let most = grid.columns().max(grid.rows());
    tiles = tiles.min(u32::try_from(most).unwrap_or(u32::MAX).max(1));
    while tiles > 1 && !shares_are_even(grid, tiles, shards) {
        tiles -= 1;
    }
    if shards == 1 {
        while tiles > 1 && !fits(tiles) {
            tiles /= 2;
        }
    }
    tiles
}

/// Whether the shards' shares of the tiles, with blocks of `tiles` a side dealt out in turn (shard
/// `i` takes blocks `i`, `i + shards`, ...), differ little: the largest share at most a quarter
/// above the mean. Smaller blocks cost more halo, so the largest even size is wanted: a region of
/// 4 × 4 tiles in 3 × 3 blocks would give four shards 9, 3, 3 and 1 tiles, in 2 × 2 blocks 4 each.
fn shares_are_even(grid: &TileGrid, tiles: u32, shards: u64) -> bool {
    let blocks = grid.blocks(tiles);
    if blocks.count() < shards {
        return false;
    }
    if shards <= 1 {
        return true;
    }
    // Counting block by block costs one step per block: bounded, since a region of more blocks
    // than this is even whatever its edges (the edge blocks are a vanishing part of each share).
    if blocks.count() > 1 << 20 {
        return true;
    }
    let mut shares = vec![0u64; usize::try_from(shards).unwrap_or(usize::MAX).min(1 << 20)];
    for index in 0..blocks.count() {
        let slot = (index % shards) as usize;
        if let Some(share) = shares.get_mut(slot) {
            *share += blocks.cells(index).count() as u64;
        }
    }
    let largest = shares.iter().copied().max().unwrap_or(0);
    // largest ≤ 1.25 × total / shards, in integers.
    largest.saturating_mul(4).saturating_mul(shards) <= grid.count().saturating_mul(5)
}

/// The grid cells grouped in blocks of `tiles` × `tiles` (fewer at the region's right and bottom).
#[derive(Copy, Clone, Debug)]
pub struct BlockGrid {
    grid: TileGrid,
    tiles: u64,
}

impl BlockGrid {
    fn columns(&self) -> u64 {
        self.grid.columns().div_ceil(self.tiles)
    }

    pub fn count(&self) -> u64 {
        self.columns() * self.grid.rows().div_ceil(self.tiles)
    }

    /// The grid indices (row-major) of the cells of block `index`, in grid order.
    pub fn cells(&self, index: u64) -> impl Iterator<Item = u64> {
        let (columns, rows) = (self.grid.columns(), self.grid.rows());
        let (c0, r0) = ((index % self.columns()) * self.tiles, (index / self.columns()) * self.tiles);
        let (c1, r1) = ((c0 + self.tiles).min(columns), (r0 + self.tiles).min(rows));
        (r0..r1).flat_map(move |r| (c0..c1).map(move |c| r * columns + c))
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    geogen::host::sha256_hex(bytes)
}

/// A parameter's effective value as the manifest and the sidecar record it.
pub(crate) fn parameter_json(value: &ParameterValue) -> Value {
    geogen::host::parameter_value_json(value)
}

/// What the settings of an earlier run and this one disagree on, one line each.
fn differences(before: &RunSettingsRecord, now: &RunSettingsRecord) -> Vec<String> {
    let mut lines = Vec::new();
    let mut compare = |what: &str, a: String, b: String| {
        if a != b {
            lines.push(format!("{what}: {a} before, {b} now"));
        }
    };
    compare("geogen version", before.geogen_version.clone(), now.geogen_version.clone());
    compare("script (SHA-256)", before.script_sha256.clone(), now.script_sha256.clone());
    let mut names: Vec<&String> = before.parameters.keys().collect();
    names.extend(now.parameters.keys().filter(|k| !before.parameters.contains_key(*k)));
    for name in names {
        let show = |v: Option<&Value>| v.map_or("not declared".to_string(), Value::to_string);
        compare(&format!("parameter {name}"), show(before.parameters.get(name)), show(now.parameters.get(name)));
    }
    compare("seed", before.seed.to_string(), now.seed.to_string());
    compare("scale", before.scale.to_string(), now.scale.to_string());
    let size = |w: Option<u32>, h: Option<u32>| {
        let axis = |a: Option<u32>| a.map_or("infinite".to_string(), |a| a.to_string());
        format!("{}x{}", axis(w), axis(h))
    };
    compare("map size", size(before.map_width, before.map_height), size(now.map_width, now.map_height));
    compare("tile size", before.tile.to_string(), now.tile.to_string());
    let phase = |p: [i64; 2]| format!("{},{}", p[0], p[1]);
    compare("tile grid origin (modulo the tile size)", phase(before.grid_origin), phase(now.grid_origin));
    compare("export settings and inputs", format!("[{}]", before.export), format!("[{}]", now.export));
    let mut rule_names: Vec<&String> = before.rules.keys().collect();
    rule_names.extend(now.rules.keys().filter(|k| !before.rules.contains_key(*k)));
    for name in rule_names {
        let show = |v: Option<&String>| v.map_or("not given".to_string(), |sha| format!("SHA-256 {sha}"));
        compare(&format!("rules {name}"), show(before.rules.get(name)), show(now.rules.get(name)));
    }
    lines
}

/// What besides the script settings decides a tile's bytes: the export settings when a format or
/// preset uses them, and the checksum of every input map.
fn export_record(export: &Export, formats: &[Format], settings: &RunSettings) -> String {
    let mut parts = Vec::new();
    if export.preset.is_some() || formats.iter().any(|f| f.reads_export_options()) {
        parts.push(export.describe());
    }
    for (name, raster) in &settings.inputs {
        let bytes: Vec<u8> = raster.data().iter().flat_map(|h| h.to_le_bytes()).collect();
        parts.push(format!("input {name} {}x{} {}", raster.width(), raster.height(), sha256_hex(&bytes)));
    }
    parts.join("; ")
}

/// `.tile_X_Y.done` → (X, Y).
fn parse_marker_name(name: &str) -> Option<(i64, i64)> {
    let inner = name.strip_prefix(".tile_")?.strip_suffix(".done")?;
    let (x, y) = inner.split_once('_')?;
    Some((x.parse().ok()?, y.parse().ok()?))
}

pub fn read_marker(path: &Path) -> Option<Marker> {
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice(&text).ok()
}

/// The markers in the directory, by file name.
fn marker_names(dir: &Path) -> Result<Vec<String>, CliError> {
    let cannot = |e: std::io::Error| CliError::Usage(format!("cannot read `{}`: {e}", dir.display()));
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(cannot)? {
        let name = entry.map_err(cannot)?.file_name();
        if let Some(name) = name.to_str() {
            if parse_marker_name(name).is_some() {
                names.push(name.to_string());
            }
        }
    }
    Ok(names)
}

/// Whether `name` is a file name `tiles` writes: `tile_X_Y_MAP` or a preset's `MAP_xI_yJ` or
/// `MAP_I_J`, followed by the suffix of a format.
fn is_tile_file_name(name: &str) -> bool {
    let Some(stem) = Format::ALL.iter().find_map(|f| name.strip_suffix(f.suffix())) else { return false };
    if stem.starts_with("tile_") {
        return true;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut parts = stem.rsplitn(3, '_');
    let (Some(j), Some(i), Some(map)) = (parts.next(), parts.next(), parts.next()) else { return false };
    let indexed = (digits(i) && digits(j))
        || (i.strip_prefix('x').is_some_and(digits) && j.strip_prefix('y').is_some_and(digits));
    indexed && geogen::check_map_name(map).is_ok()
}

fn remove_if_present(path: &Path) -> Result<bool, CliError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(CliError::Usage(format!("cannot remove `{}`: {e}", path.display()))),
    }
}

/// `--restart`: removes what an earlier run wrote, and only that: the tile files its markers list,
/// the markers and the manifest. Returns the number of files removed.
fn remove_previous_run(dir: &OutputDir) -> Result<usize, CliError> {
    let mut removed = 0;
    for name in marker_names(dir.path())? {
        let marker_path = dir.file(&name)?;
        if let Some(marker) = read_marker(&marker_path) {
            for file in marker.outputs.iter().filter_map(|o| o.file.as_ref()) {
                // A marker is a file anyone could edit: only ever delete tile files inside the directory.
                if !is_tile_file_name(&file.name) {
                    continue;
                }
                if let Ok(path) = dir.file(&file.name) {
                    removed += usize::from(remove_if_present(&path)?);
                }
            }
        }
        removed += usize::from(remove_if_present(&marker_path)?);
    }
    let cannot = |e: std::io::Error| CliError::Usage(format!("cannot read `{}`: {e}", dir.path().display()));
    for entry in std::fs::read_dir(dir.path()).map_err(cannot)? {
        let name = entry.map_err(cannot)?.file_name();
        if let Some(name) = name.to_str().filter(|n| parse_part_record_name(n).is_some()) {
            removed += usize::from(remove_if_present(&dir.file(name)?)?);
        }
    }
    removed += usize::from(remove_if_present(&dir.file(MANIFEST_FILE)?)?);
    Ok(removed)
}

fn union(previous: &[String], current: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut all = previous.to_vec();
    for item in current {
        if !all.contains(&item) {
            all.push(item);
        }
    }
    all
}

/// Checks this run against the directory's manifest (refusing another run's directory), handles
/// `--restart`, and writes the manifest for this run before any tile.
fn claim_directory(
    dir: &OutputDir,
    settings: RunSettingsRecord,
    formats: &[Format],
    maps: &[String],
    restart: bool,
    quiet: bool,
) -> Result<(), CliError> {
    let manifest_path = dir.file(MANIFEST_FILE)?;
    let shown = dir.path().display();
    if restart {
        let removed = remove_previous_run(dir)?;
        if removed > 0 && !quiet {
            eprintln!(
                "--restart: removed {removed} file{} of the earlier run in {shown}",
                if removed == 1 { "" } else { "s" }
            );
        }
    }
    let previous = match std::fs::read(&manifest_path) {
        Ok(bytes) => Some(serde_json::from_slice::<Manifest>(&bytes).map_err(|e| {
            CliError::Usage(format!(
                "`{}` is not a manifest this geogen can read ({e}); use --restart to delete the earlier run's tiles and start over",
                manifest_path.display()
            ))
        })?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(CliError::Usage(format!("cannot read `{}`: {e}", manifest_path.display()))),
    };
    let (previous_formats, previous_maps) = match previous {
        Some(manifest) => {
            let differ = if manifest.geogen_tiles_layout == LAYOUT_VERSION {
                differences(&manifest.settings, &settings)
            } else {
                vec![format!("manifest layout: {} before, {LAYOUT_VERSION} now", manifest.geogen_tiles_layout)]
            };
            if !differ.is_empty() {
                return Err(CliError::Usage(format!(
                    "`{shown}` holds tiles rendered with other settings; tiles of two settings would not fit together:\n  {}\n\
                     use --restart to delete the earlier run's tiles and start over, or choose another directory{}",
                    differ.join("\n  "),
                    if differ.iter().any(|d| d.starts_with("map size")) && settings.map_width.is_some() {
                        " (without --map-size a finite map is the size of the region: give --map-size to grow the region)"
                    } else {
                        ""
                    }
                )));
            }
            (manifest.formats, manifest.maps)
        }
        None => {
            if !marker_names(dir.path())?.is_empty() {
                return Err(CliError::Usage(format!(
                    "`{shown}` holds tile markers but no manifest ({MANIFEST_FILE}), so which settings made them is unknown; \
                     use --restart to delete those tiles and start over, or choose another directory"
                )));
            }
            (Vec::new(), Vec::new())
        }
    };
    let manifest = Manifest {
        geogen_tiles_layout: LAYOUT_VERSION,
        settings,
        formats: union(&previous_formats, formats.iter().map(|f| f.name().to_string())),
        maps: union(&previous_maps, maps.iter().cloned()),
    };
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| CliError::Usage(format!("cannot write `{}`: {e}", manifest_path.display())))?;
    geogen_io::write_bytes(&manifest_path, format!("{text}\n").as_bytes()).map_err(CliError::from)
}

/// The memory of the renders running at once. Each block or tile reserves its memory plan's peak
/// before it computes a pixel and waits while the reservations would pass the limit, so
/// `--memory-limit` bounds the whole run, not each of the renders running at once.
struct MemoryBudget {
    limit: u64,
    reserved: Mutex<u64>,
    freed: Condvar,
    /// The parts the blocks share (`geogen_render::SharedParts`): their bytes count too.
    shared: Option<geogen::SharedParts>,
    /// The whole-map solutions the blocks share (`geogen_render::solve`): so do theirs.
    solutions: Option<geogen::SolveCache>,
}

/// Bytes of a [`MemoryBudget`] held until dropped.
struct Reservation<'a> {
    budget: &'a MemoryBudget,
    bytes: u64,
}

impl MemoryBudget {
    fn new(limit: u64, shared: Option<geogen::SharedParts>, solutions: Option<geogen::SolveCache>) -> MemoryBudget {
        MemoryBudget { limit, reserved: Mutex::new(0), freed: Condvar::new(), shared, solutions }
    }

    /// Waits until `bytes` fit beside what the others and the shared parts hold, then holds them.
    /// A render alone always starts (its plan was checked against the limit): the shared parts
    /// give up the room it needs.
    fn reserve(&self, bytes: u64) -> Reservation<'_> {
        let bytes = bytes.min(self.limit);
        let shared = || {
            self.shared.as_ref().map_or(0, geogen::SharedParts::held_bytes)
                + self.solutions.as_ref().map_or(0, geogen::SolveCache::held_bytes)
        };
        let mut reserved = self.reserved.lock().unwrap_or_else(PoisonError::into_inner);
        while *reserved > 0 && *reserved + shared() + bytes > self.limit {
            reserved = self.freed.wait(reserved).unwrap_or_else(PoisonError::into_inner);
        }
        if *reserved == 0 {
            // Shared parts give up their room first; solutions (dear to compute again) only what
            // is still missing.
            if let Some(parts) = &self.shared {
                let solutions = self.solutions.as_ref().map_or(0, geogen::SolveCache::held_bytes);
                parts.release_finished((self.limit - bytes).saturating_sub(solutions));
            }
            if let Some(solutions) = &self.solutions {
                let parts = self.shared.as_ref().map_or(0, geogen::SharedParts::held_bytes);
                solutions.release((self.limit - bytes).saturating_sub(parts));
            }
        }
        *reserved += bytes;
        Reservation { budget: self, bytes }
    }

    #[cfg(test)]
    fn reserved(&self) -> u64 {
        *self.reserved.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut reserved = self.budget.reserved.lock().unwrap_or_else(PoisonError::into_inner);
        *reserved -= self.bytes;
        self.budget.freed.notify_all();
    }
}

/// What every tile of a run shares.
struct Job<'a> {
    script: &'a Script,
    settings: RunSettings,
    config: RenderConfig,
    budget: MemoryBudget,
    formats: &'a [Format],
    maps: &'a [String],
    dir: &'a OutputDir,
    export: &'a Export,
    grid: TileGrid,
}

enum TileError {
    Script(Box<Failure>),
    Other(CliError),
}

impl From<CliError> for TileError {
    fn from(e: CliError) -> TileError {
        TileError::Other(e)
    }
}

/// A file a marker lists, still there with its size and checksum.
fn intact(dir: &OutputDir, file: &RecordedFile) -> bool {
    let Ok(path) = dir.file(&file.name) else { return false };
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() && meta.len() == file.bytes => {}
        _ => return false,
    }
    std::fs::read(&path).is_ok_and(|bytes| bytes.len() as u64 == file.bytes && sha256_hex(&bytes) == file.sha256)
}

impl Job<'_> {
    fn marker_path(&self, tile: &Tile) -> Result<std::path::PathBuf, CliError> {
        Ok(self.dir.file(&tile.marker_name())?)
    }

    /// The cell's marker, if it is for this very cell.
    fn marker(&self, tile: &Tile) -> Option<Marker> {
        let marker = read_marker(&self.marker_path(tile).ok()?)?;
        (marker.cell == tile.cell()).then_some(marker)
    }

    fn is_complete(&self, tile: &Tile) -> bool {
        let Some(marker) = self.marker(tile) else { return false };
        self.maps.iter().all(|map| {
            self.formats.iter().all(|format| {
                marker.outputs.iter().find(|o| &o.map == map && o.format == format.name()).is_some_and(|o| {
                    match &o.file {
                        None => true,
                        Some(file) => intact(self.dir, file),
                    }
                })
            })
        })
    }

    /// The run's settings for a render of the rectangle `x, y, width, height`, grown by the preset's
    /// overlap (a preset's tiles repeat their neighbours' first column and row: Unity and Unreal
    /// terrains share edge vertices).
    fn settings_for(&self, x: i64, y: i64, width: u32, height: u32) -> RunSettings {
        let overlap = self.export.preset.map_or(0, |p| p.tile_overlap());
        RunSettings {
            render_origin: (x, y),
            render_width: Some(width + overlap),
            render_height: Some(height + overlap),
            ..self.settings.clone()
        }
    }

    /// What encoding `tiles` holds in memory at once beside the render: meshes and derived maps
    /// are built whole (every other format is streamed from the heights), and a block's tiles are
    /// all encoded before they are written together.
    fn encoding_bytes(&self, tiles: &[Tile]) -> u64 {
        let per_map = tiles
            .iter()
            .flat_map(|t| {
                self.formats.iter().map(|&f| geogen_io::encoding_bytes(f, t.width, t.height, &self.export.options))
            })
            .fold(0, u64::saturating_add);
        per_map.saturating_mul(self.maps.len() as u64)
    }

    /// Renders the cell alone, writes its files, then its marker. Returns the number of files written.
    fn render(&self, tile: &Tile) -> Result<usize, TileError> {
        let settings = self.settings_for(tile.x, tile.y, tile.width, tile.height);
        let encoding = self.encoding_bytes(std::slice::from_ref(tile));
        let (rendered, _reservation) = self
            .script
            .render_admitted(&settings, &self.config, |bytes| self.budget.reserve(bytes.saturating_add(encoding)))
            .map_err(|f| TileError::Script(Box::new(f)))?;
        let files = self.encode(tile, &rendered.maps, rendered.yield_rect)?;
        self.commit(&[(*tile, files)]).map_err(|(_, e)| e)
    }

    /// Renders the cells of one block (`tiles`, in grid order) as one rectangle and writes each cell's
    /// files cut out of it: the same bytes as [`Job::render`] of each cell (the tile contract; tested).
    /// A block that cannot be rendered at once (over the memory limit, or any other failure) renders
    /// its cells one by one, so a failure is reported for the first cell it happens in. A block's
    /// cells go to `write` (the run's writer, see [`Job::commit`]) in groups; cells rendered one
    /// by one are written at once.
    fn render_block(&self, tiles: &[Tile], write: &Writes) -> Result<(), (Tile, TileError)> {
        let one_by_one = || tiles.iter().try_for_each(|tile| self.render(tile).map(drop).map_err(|e| (*tile, e)));
        if tiles.len() == 1 {
            return one_by_one();
        }
        let Some((x0, y0, width, height)) = cells_rect(tiles) else { return Ok(()) };
        let settings = self.settings_for(x0, y0, width, height);
        let encoding = self.encoding_bytes(tiles);
        let Ok((rendered, _reservation)) = self
            .script
            .render_admitted(&settings, &self.config, |bytes| self.budget.reserve(bytes.saturating_add(encoding)))
        else {
            return one_by_one();
        };
        let margin = self.settings.yield_margin;
        // Formats that read each pixel of the tile alone are encoded straight from the block's
        // maps, clipped to the tile (the surface `Export::encode_map` makes either way), instead of
        // from a copy of the tile cut out first: a copy and fresh pages less per tile.
        let direct = margin == 0
            && self.export.preset.is_none()
            && self
                .formats
                .iter()
                .all(|f| matches!(f, Format::Png16 | Format::Png8 | Format::R16 | Format::Tiff32 | Format::Exr));
        let encode_group = |group: &[Tile]| {
            group
                .par_iter()
                .map(|tile| {
                    let geometry = self
                        .script
                        .geometry(&self.settings_for(tile.x, tile.y, tile.width, tile.height))
                        .map_err(|d| (*tile, TileError::Script(Box::new(self.script.failure(d)))))?;
                    let rect = geometry.yield_rect_with_margin(margin);
                    if direct && !rect.is_empty() && rendered.maps.values().all(|m| m.rect().contains_rect(&rect)) {
                        let files = self.encode(tile, &rendered.maps, geometry.yield_rect()).map_err(|e| (*tile, e))?;
                        return Ok((*tile, files));
                    }
                    let mut maps = BTreeMap::new();
                    for (name, map) in &rendered.maps {
                        let cut = if rect.is_empty() || map.rect().is_empty() {
                            HeightMap::empty()
                        } else {
                            map.cut_out(rect).map_err(|e| (*tile, TileError::Other(CliError::Usage(e.to_string()))))?
                        };
                        maps.insert(name.clone(), cut);
                    }
                    let files = self.encode(tile, &maps, geometry.yield_rect()).map_err(|e| (*tile, e))?;
                    Ok((*tile, files))
                })
                .collect::<Result<Vec<_>, (Tile, TileError)>>()
        };
        // The cells are cut out and encoded on every core, a group of about COMMIT_PIXELS at a time
        // so that encoded files held at once stay small next to the render; the run's writer
        // thread writes each group (waiting for the disk) while the next one is encoded, and the
        // last ones while the next block renders.
        for group in commit_groups(tiles, rayon::current_num_threads()) {
            let encoded = encode_group(group)?;
            // A send fails only when the writer has stopped on an error: it reports that.
            if write.send(encoded).is_err() {
                break;
            }
        }
        Ok(())
    }

    /// Encodes the cell's files from its rendered maps (`yield_rect` is the cell's render rectangle
    /// clipped to the map), and its marker.
    fn encode(
        &self,
        tile: &Tile,
        rendered_maps: &BTreeMap<String, HeightMap>,
        yield_rect: Rect,
    ) -> Result<CellFiles, TileError> {
        let mut outputs = Vec::new();
        let mut files = Vec::new();
        for map_name in self.maps {
            let map = rendered_maps.get(map_name).filter(|m| !m.rect().is_empty());
            let Some(map) = map else {
                outputs.extend(self.formats.iter().map(|f| TileOutput {
                    map: map_name.clone(),
                    format: f.name().to_string(),
                    file: None,
                }));
                continue;
            };
            // Named after the map's own rectangle, not the grid cell: on a finite map a cell reaching
            // past the edge (e.g. above y = 0) holds only the clipped pixels, which start elsewhere, and
            // a stitcher placing it at the cell's corner would shift it. The marker keeps the cell.
            let core = yield_rect.intersect(&map.rect());
            let stem = match self.export.preset {
                Some(preset) => {
                    let side = i64::from(self.grid.side);
                    let i = ((tile.x - self.grid.x) / side) as u64;
                    let j = ((tile.y - self.grid.y) / side) as u64;
                    let j = if self.export.flip_y { self.grid.rows() - 1 - j } else { j };
                    preset.tile_stem(map_name, i, j)
                }
                None => format!("tile_{}_{}_{map_name}", core.x, core.y),
            };
            let encoded = self.export.encode_map(&stem, map, core, self.formats, rendered_maps)?;
            for (&format, (name, bytes)) in self.formats.iter().zip(encoded) {
                let path = self.dir.file(&name).map_err(CliError::from)?;
                outputs.push(TileOutput {
                    map: map_name.clone(),
                    format: format.name().to_string(),
                    file: Some(RecordedFile { name, bytes: bytes.len() as u64, sha256: sha256_hex(&bytes) }),
                });
                files.push((path, bytes));
            }
        }
        // Keep what an earlier run recorded for other maps or formats of this very cell.
        if let Some(earlier) = self.marker(tile) {
            for output in earlier.outputs {
                if !outputs.iter().any(|o| o.map == output.map && o.format == output.format) {
                    outputs.push(output);
                }
            }
        }
        let marker = Marker { cell: tile.cell(), outputs };
        let marker_path = self.marker_path(tile)?;
        let marker_text =
            serde_json::to_vec(&marker).map_err(|e| CliError::Usage(format!("cannot write a marker: {e}")))?;
        Ok(CellFiles { files, marker: (marker_path, marker_text) })
    }

    /// Writes the cells' files, then their markers (a marker only once the files it lists are
    /// durable), each file atomically, the disk waited for once per batch rather than per file.
    /// Returns the number of tile files written; a failure names the cell of the file it hit.
    fn commit(&self, cells: &[(Tile, CellFiles)]) -> Result<usize, (Tile, TileError)> {
        let owners: Vec<Tile> = cells.iter().flat_map(|(tile, c)| c.files.iter().map(|_| *tile)).collect();
        let files: Vec<(&Path, &[u8])> =
            cells.iter().flat_map(|(_, c)| c.files.iter().map(|(p, b)| (p.as_path(), b.as_slice()))).collect();
        let failed = |owners: &[Tile], (i, e): (usize, geogen_io::IoError)| {
            (owners[i], TileError::Other(CliError::Usage(e.to_string())))
        };
        geogen_io::write_files(&files).map_err(|e| failed(&owners, e))?;
        let markers: Vec<(&Path, &[u8])> =
            cells.iter().map(|(_, c)| (c.marker.0.as_path(), c.marker.1.as_slice())).collect();
        let marker_owners: Vec<Tile> = cells.iter().map(|(tile, _)| *tile).collect();
        geogen_io::write_files(&markers).map_err(|e| failed(&marker_owners, e))?;
        Ok(files.len())
    }
}

/// Pixels of the cells encoded and written as one group (see [`Job::commit`]): 250² tiles go 67 at
/// a time, 1000² tiles 4 at a time, or one per thread when there are more threads. Each group waits
/// for the disk twice (its files, then their markers), so fewer groups finish sooner; the encoded
/// files of a group (a few MB) stay small next to the block they are cut from.
const COMMIT_PIXELS: u64 = 1 << 22;

/// Consecutive runs of `tiles` of about [`COMMIT_PIXELS`] each, and of at least `at_least` tiles
/// (one per thread, so that every thread encodes while the others do).
fn commit_groups(tiles: &[Tile], at_least: usize) -> Vec<&[Tile]> {
    let mut groups = Vec::new();
    let (mut start, mut pixels) = (0, 0u64);
    for (i, tile) in tiles.iter().enumerate() {
        let area = u64::from(tile.width) * u64::from(tile.height);
        if i >= start + at_least.max(1) && pixels + area > COMMIT_PIXELS {
            groups.push(&tiles[start..i]);
            (start, pixels) = (i, 0);
        }
        pixels += area;
    }
    if start < tiles.len() {
        groups.push(&tiles[start..]);
    }
    groups
}

/// The rectangle `x, y, width, height` the cells of a block (in grid order) cover together.
fn cells_rect(tiles: &[Tile]) -> Option<(i64, i64, u32, u32)> {
    let (first, last) = (tiles.first()?, tiles.last()?);
    let (x0, y0) = (tiles.iter().map(|t| t.x).min().unwrap_or(first.x), first.y);
    let x1 = tiles.iter().map(|t| t.x + i64::from(t.width)).max().unwrap_or(x0);
    let y1 = last.y + i64::from(last.height);
    Some((x0, y0, (x1 - x0) as u32, (y1 - y0) as u32))
}

/// Where blocks send their encoded cells, a group at a time: the run's writer thread.
type Writes = std::sync::mpsc::SyncSender<Vec<(Tile, CellFiles)>>;

/// One cell's encoded files (path and bytes) and its marker, ready to be written.
struct CellFiles {
    files: Vec<(PathBuf, Vec<u8>)>,
    marker: (PathBuf, Vec<u8>),
}

pub fn tiles(cmd: &TilesCmd) -> Result<ExitCode, CliError> {
    let (x, y, width, height) = cmd.region;
    let grid = TileGrid { x, y, width, height, side: cmd.tile };
    // Before anything else, and without listing the cells: a region of 10^10 cells is refused at once.
    if grid.count() > cmd.max_tiles {
        return Err(CliError::Usage(format!(
            "the region {width}x{height} in tiles of {} makes {} tiles, more than the limit of {}; use larger tiles, \
             a smaller region, or raise the limit with --max-tiles",
            cmd.tile,
            grid.count(),
            cmd.max_tiles
        )));
    }
    let (shard, shards) = resolve_shard(cmd.shard)?;
    if shards > 1 && cmd.restart {
        return Err(CliError::Usage(
            "--restart cannot be combined with --shard: one shard would delete the tiles of the others; \
             restart with one run (or delete the directory) first"
                .into(),
        ));
    }
    let options = compile_options(&cmd.script_args.limits.source);
    let source = read_script(&cmd.script, options.max_script_bytes)?;
    let formats = parse_formats(&cmd.output)?;
    let export = Export::from_args(&cmd.output.export)?;
    for warning in Export::unused_settings(&cmd.output.export, &formats) {
        eprintln!("{warning}");
    }
    if let Some(preset) = export.preset {
        let whole = preset.tile_overlap() == 0 || (width % cmd.tile == 0 && height % cmd.tile == 0);
        if !preset.accepts_tile(cmd.tile) || !whole {
            return Err(CliError::Usage(format!(
                "{}: {} cannot import tiles of {} pixels{} without resizing them; use {}{}",
                geogen::diag::codes::GGE4021,
                preset.name(),
                cmd.tile + preset.tile_overlap(),
                if whole { "" } else { " (the region must be whole tiles)" },
                preset.suggestion(true),
                if whole { String::new() } else { format!(" and a region of whole tiles of {}", cmd.tile) }
            )));
        }
    }
    outdir::refuse_non_directory(&cmd.output.dir)?;
    let language = crate::slang::language(Some(&cmd.script), &cmd.script_args)?;
    let script = compile_script(&cmd.script.display().to_string(), &source, &options, language)?;
    let MapPlan { written: maps, rendered: rendered_maps } =
        plan_maps(&script, cmd.output.maps.as_deref(), &formats, &export.masks)?;
    let scale = cmd.script_args.scale;
    let mut settings = RunSettings {
        render_scale: scale,
        maps: Some(rendered_maps),
        inputs: crate::export::load_inputs(&script, &cmd.script_args.inputs, render_config(&cmd.output).memory_limit)?,
        yield_margin: Export::margin(&formats),
        ..script_settings(&cmd.script_args)
    };
    // Without --map-size, a finite map is the whole region (not one tile).
    if settings.map_width.is_none() {
        settings.map_width = Some(((f64::from(width) / scale).floor() as u32).max(1));
        settings.map_height = Some(((f64::from(height) / scale).floor() as u32).max(1));
    }
    let whole_region = RunSettings {
        render_origin: (x, y),
        render_width: Some(width),
        render_height: Some(height),
        ..settings.clone()
    };
    refuse_render_outside_the_map(&script, &whole_region, "region")?;
    let geometry = script.geometry(&whole_region).map_err(|d| script.failure(d))?;
    let parameters = script.parameter_values(&settings)?;
    let record = RunSettingsRecord {
        geogen_version: env!("CARGO_PKG_VERSION").to_string(),
        // The compiled text: the file's bytes for a script; for a Height-Slang file, the script
        // that wraps it, which holds the dialect too.
        script_sha256: sha256_hex(script.source().text().as_bytes()),
        parameters: parameters.iter().map(|(name, value)| (name.clone(), parameter_json(value))).collect(),
        seed: settings.seed,
        scale,
        map_width: geometry.map_width,
        map_height: geometry.map_height,
        tile: cmd.tile,
        grid_origin: [x.rem_euclid(i64::from(cmd.tile)), y.rem_euclid(i64::from(cmd.tile))],
        export: export_record(&export, &formats, &settings),
        rules: settings.rules.iter().map(|(name, text)| (name.clone(), sha256_hex(text.as_bytes()))).collect(),
    };

    export.refuse_encodings_over(&formats, cmd.tile, cmd.tile, render_config(&cmd.output).memory_limit)?;
    signals::clean_up_on_interrupt();
    let dir =
        if shards > 1 { outdir::open_shard(&cmd.output.dir, shard, shards)? } else { outdir::open(&cmd.output.dir)? };
    let settings_json =
        serde_json::to_value(&record).map_err(|e| CliError::Usage(format!("cannot record the settings: {e}")))?;
    claim_directory(&dir, record, &formats, &maps, cmd.restart, cmd.output.quiet)?;
    if let Some(preset) = export.preset {
        let sidecar = crate::sidecar::Sidecar::for_tiles(
            preset, &export, cmd.region, cmd.tile, &maps, &source, &settings, &script,
        )?;
        let path = dir.file(&format!("geogen-{}.json", preset.name()))?;
        geogen_io::write_bytes(&path, sidecar.as_bytes()).map_err(CliError::from)?;
    }

    let mut config = render_config(&cmd.output);
    config.memory_limit = config.memory_limit.saturating_sub(crate::export::input_bytes(&settings.inputs));
    // The blocks share what their renders compute alike: a part of the script made whatever the
    // block (ouroboros' island template, read by every block showing an island) is computed by
    // the first block that needs it and taken by the others (`geogen_render::SharedParts`; the
    // same bytes). It holds at most an eighth of the memory limit; the budget below counts what
    // it holds beside the renders' reservations, so `--memory-limit` bounds both together.
    let shared = geogen::SharedParts::new(config.memory_limit / 8);
    config.shared = Some(shared.clone());
    // Whole-map solves (`Drainage`) are computed once for the run, by the first block that needs
    // one, and read by all: up to half the memory limit of them are kept (counted by the budget).
    let solutions = geogen::SolveCache::new(config.memory_limit / 2);
    config.solutions = Some(solutions.clone());
    // The pages one block's maps leave are kept for the next block (within the most ever in use
    // at once; each block's first step trims them to its own plan): else every block faults its
    // whole peak in afresh, about 2.3 µs a page on this project's KVM machine.
    config.keep_pages_after = true;
    let job = Job {
        script: &script,
        settings,
        budget: MemoryBudget::new(config.memory_limit, Some(shared), Some(solutions)),
        config,
        formats: &formats,
        maps: &maps,
        dir: &dir,
        export: &export,
        grid,
    };
    // This shard's blocks: every `shards`-th block from the `shard`-th (all of them for one run).
    // A block fits when the memory plans of the first block and of the one in the middle of the
    // region do (blocks elsewhere may differ; one that does not fit renders its tiles one by one).
    // A script error is left to the render, which reports it for its tile.
    let fits = |tiles: u32| {
        let blocks = grid.blocks(tiles);
        let middle = blocks.count() / 2;
        // One block alone is planned once.
        [0, middle][..if middle > 0 { 2 } else { 1 }].iter().all(|&block| {
            let cells: Vec<Tile> = blocks.cells(block).map(|index| grid.tile(index)).collect();
            let Some(rect) = cells_rect(&cells) else { return true };
            let block_settings = job.settings_for(rect.0, rect.1, rect.2, rect.3);
            crate::streamed::strip_peak(&script, &block_settings)
                .map_or(true, |peak| peak.saturating_add(job.encoding_bytes(&cells)) <= job.config.memory_limit)
        })
    };
    let blocks = grid.blocks(block_tiles(cmd.block, &grid, shards, fits));
    let shard_blocks: Vec<u64> = (shard..blocks.count()).step_by(shards as usize).collect();
    let total: u64 = shard_blocks.iter().map(|&b| blocks.cells(b).count() as u64).sum();
    let bar = LazyBar::new(cmd.output.quiet, total, "tiles");
    let (done, rendered, skipped) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let stop = AtomicBool::new(false);
    // The first failing cell in grid order among those that failed; the others stop early.
    let first_error: Mutex<Option<(u64, Tile, TileError)>> = Mutex::new(None);
    let started = Instant::now();
    // Blocks run on threads of their own, as many at once as the renderer has threads, each block's
    // render using the renderer's threads: a block waiting for memory (see `MemoryBudget`) then
    // never waits on a thread that holds the memory it needs, which waiting inside rayon could.
    let next = AtomicU64::new(0);
    // Records a failure (the first in grid order is reported) and stops the blocks not yet started.
    let fail = |tile: Tile, error: TileError| {
        stop.store(true, Ordering::Relaxed);
        let index = grid.index_of(&tile);
        // A poisoned lock still holds the errors recorded so far: never drop this one.
        let mut first = first_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if first.as_ref().is_none_or(|(i, _, _)| index < *i) {
            *first = Some((index, tile, error));
        }
    };
    let run_blocks = |write: Writes| loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(&block) = shard_blocks.get(k as usize) else { break };
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let cells: Vec<u64> = blocks.cells(block).collect();
        let missing: Vec<Tile> =
            cells.iter().map(|&index| grid.tile(index)).filter(|tile| !job.is_complete(tile)).collect();
        skipped.fetch_add((cells.len() - missing.len()) as u64, Ordering::Relaxed);
        match job.render_block(&missing, &write) {
            Ok(()) => {
                rendered.fetch_add(missing.len() as u64, Ordering::Relaxed);
            }
            Err((tile, error)) => fail(tile, error),
        }
        bar.update(done.fetch_add(cells.len() as u64, Ordering::Relaxed) + cells.len() as u64, total);
    };
    let workers = rayon::current_num_threads().clamp(1, shard_blocks.len().max(1));
    std::thread::scope(|scope| {
        // One writer for the run: a block's last files are written and synced while the next block
        // renders (a block does not wait for the disk), and the groups of all blocks go through
        // one queue. It stops at the first failure; the blocks' sends then fail and they stop.
        let (write, groups) = std::sync::mpsc::sync_channel::<Vec<(Tile, CellFiles)>>(1);
        let (job, fail, run_blocks) = (&job, &fail, &run_blocks);
        scope.spawn(move || {
            for group in groups {
                if let Err((tile, error)) = job.commit(&group) {
                    fail(tile, error);
                    break;
                }
            }
        });
        for _ in 0..workers {
            let write = write.clone();
            scope.spawn(move || run_blocks(write));
        }
        // The writer ends once every block's sender is gone.
        drop(write);
    });
    bar.finish();
    let first_error = first_error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, tile, error)) = first_error {
        eprintln!("error in tile at {},{} ({}x{}):", tile.x, tile.y, tile.width, tile.height);
        return Err(match error {
            TileError::Script(failure) => CliError::Script(failure),
            TileError::Other(other) => other,
        });
    }
    let part = PartRecord {
        settings: settings_json,
        region: [x, y, i64::from(width), i64::from(height)],
        tile: cmd.tile,
        shard: [shard, shards],
        formats: formats.iter().map(|f| f.name().to_string()).collect(),
        maps: maps.clone(),
        tiles: total,
    };
    let text = serde_json::to_string_pretty(&part)
        .map_err(|e| CliError::Usage(format!("cannot write the part record: {e}")))?;
    geogen_io::write_bytes(&dir.file(&part_record_name(shard, shards))?, format!("{text}\n").as_bytes())
        .map_err(CliError::from)?;
    if !cmd.output.quiet {
        let (rendered, skipped) = (rendered.into_inner(), skipped.into_inner());
        eprintln!(
            "rendered {rendered} tile{} in {:.3} s into {}{}{}",
            if rendered == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64(),
            dir.path().display(),
            if shards > 1 { format!(" (shard {shard} of {shards})") } else { String::new() },
            if skipped > 0 { format!(" ({skipped} complete tiles skipped)") } else { String::new() }
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reservations never hold more than the limit together; one larger than the limit runs alone.
    #[test]
    fn the_memory_budget_holds_renders_back_until_they_fit() {
        let budget = MemoryBudget::new(100, None, None);
        let first = budget.reserve(60);
        let peak = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let second = budget.reserve(60);
                peak.fetch_max(budget.reserved(), Ordering::SeqCst);
                drop(second);
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!waiter.is_finished(), "60 + 60 bytes do not fit in 100: the second waits");
            assert_eq!(budget.reserved(), 60);
            drop(first);
            waiter.join().unwrap();
        });
        assert_eq!(peak.load(Ordering::SeqCst), 60);
        assert_eq!(budget.reserved(), 0);
        let huge = budget.reserve(1000);
        assert_eq!(budget.reserved(), 100, "a render over the limit is counted as the whole limit");
        drop(huge);
        let (a, b) = (budget.reserve(40), budget.reserve(50));
        assert_eq!(budget.reserved(), 90, "what fits together runs together");
        drop((a, b));
    }

    fn all(grid: &TileGrid) -> Vec<Tile> {
        (0..grid.count()).map(|i| grid.tile(i)).collect()
    }

    #[test]
    fn tiles_cover_the_region_without_overlap() {
        let grid = TileGrid { x: -10, y: 5, width: 25, height: 12, side: 10 };
        let tiles = all(&grid);
        assert_eq!(tiles.len(), 6);
        let area: u64 = tiles.iter().map(|t| u64::from(t.width) * u64::from(t.height)).sum();
        assert_eq!(area, 25 * 12);
        assert_eq!((tiles[2].x, tiles[2].width), (10, 5));
        assert_eq!((tiles[5].y, tiles[5].height), (15, 2));
    }

    #[test]
    fn a_huge_grid_is_counted_not_listed() {
        let grid = TileGrid { x: 0, y: 0, width: u32::MAX, height: u32::MAX, side: 1 };
        assert_eq!(grid.count(), u64::from(u32::MAX) * u64::from(u32::MAX));
        let last = grid.tile(grid.count() - 1);
        assert_eq!((last.x, last.y, last.width, last.height), (i64::from(u32::MAX) - 1, i64::from(u32::MAX) - 1, 1, 1));
    }

    #[test]
    fn blocks_are_as_large_as_the_memory_limit_allows_and_fixed_for_shards() {
        let grid = TileGrid { x: -300, y: 0, width: 40_000, height: 40_000, side: 250 };
        // 4096 / 250 = 16 tiles a side when they fit; halved until they do.
        assert_eq!(block_tiles(None, &grid, 1, |_| true), 16);
        assert_eq!(block_tiles(None, &grid, 1, |t| t <= 5), 4);
        assert_eq!(block_tiles(None, &grid, 1, |_| false), 1);
        // Shards cut the region alike on every machine: the fixed size, whatever the memory says.
        let asked = std::cell::Cell::new(false);
        assert_eq!(
            block_tiles(None, &grid, 3, |_| {
                asked.set(true);
                false
            }),
            8
        );
        assert!(!asked.get(), "a sharded run must not depend on the memory limit");
        // Shards get even shares: 4 × 4 tiles for four shards in 2 × 2 blocks, not 3 × 3 blocks
        // (9, 3, 3 and 1 tiles).
        let four = TileGrid { side: 256, width: 1024, height: 1024, ..grid };
        assert_eq!(block_tiles(None, &four, 4, |_| true), 2);
        let wide = TileGrid { side: 256, width: 2048, height: 2048, ..grid };
        assert_eq!(block_tiles(None, &wide, 4, |_| true), 4);
        // Never more tiles a side than the region has, and --block as given.
        let small = TileGrid { side: 1000, width: 2500, height: 1000, ..grid };
        assert_eq!(block_tiles(None, &small, 1, |_| true), 3);
        assert_eq!(block_tiles(Some(7), &grid, 1, |_| false), 7);
    }

    #[test]
    fn commit_groups_cover_the_tiles_in_order_in_groups_of_about_four_megapixels() {
        let tile = |i: i64, side: u32| Tile { x: i * i64::from(side), y: 0, width: side, height: side };
        let small: Vec<Tile> = (0..100).map(|i| tile(i, 250)).collect();
        let groups = commit_groups(&small, 1);
        assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), [67, 33]);
        assert_eq!(commit_groups(&small, 80).iter().map(|g| g.len()).collect::<Vec<_>>(), [80, 20]);
        let big: Vec<Tile> = (0..3).map(|i| tile(i, 2500)).collect();
        assert_eq!(
            commit_groups(&big, 1).iter().map(|g| g.len()).collect::<Vec<_>>(),
            [1, 1, 1],
            "one oversized tile each"
        );
        assert_eq!(commit_groups(&big, 2).iter().map(|g| g.len()).collect::<Vec<_>>(), [2, 1], "one per thread");
        assert!(commit_groups(&[], 2).is_empty());
        let flat: Vec<Tile> = groups.concat();
        assert_eq!(flat, small);
    }

    #[test]
    fn marker_names_parse() {
        assert_eq!(parse_marker_name(".tile_-30_12.done"), Some((-30, 12)));
        assert_eq!(parse_marker_name(".tile_1_2.done.tmp-1-2"), None);
        assert_eq!(parse_marker_name(".tile_a_2.done"), None);
        assert_eq!(parse_marker_name("tile_1_2.done"), None);
    }

    #[test]
    fn differences_name_each_setting() {
        let record = RunSettingsRecord {
            geogen_version: "1".into(),
            script_sha256: "ab".into(),
            parameters: [("Count".to_string(), Value::from(3.0))].into_iter().collect(),
            seed: 1,
            scale: 1.0,
            map_width: Some(10),
            map_height: Some(10),
            tile: 32,
            grid_origin: [0, 0],
            export: String::new(),
            rules: Default::default(),
        };
        assert!(differences(&record, &record).is_empty());
        let with_rules =
            RunSettingsRecord { rules: [("rivers".to_string(), "cd".to_string())].into(), ..record.clone() };
        assert_eq!(differences(&record, &with_rules), ["rules rivers: not given before, SHA-256 cd now"]);
        let other = RunSettingsRecord {
            seed: 2,
            parameters: [("Count".to_string(), Value::from(4.0))].into_iter().collect(),
            ..record.clone()
        };
        assert_eq!(differences(&record, &other), ["parameter Count: 3.0 before, 4.0 now", "seed: 1 before, 2 now"]);
    }
}
