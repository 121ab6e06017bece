//! `geogen finish-tiles DIR`: the finishing step of a tiled run, sharded or not.
//!
//! It checks that the directory is complete and consistent: every part record
//! (`geogen-tiles.part-I-of-N.json`, written by each run or shard when it finished) was made with
//! the manifest's settings over the same region and grid; every tile of the region has its marker,
//! and every file the marker lists for each map and format is there with its size and SHA-256; no
//! temporary file of an interrupted writer is left. With `--xyz OUT` it then writes the tiles of one
//! map as an XYZ tile set: `OUT/{z}/{x}/{y}.png`, 256-pixel RGBA tiles, the deepest zoom one tile
//! pixel per rendered pixel with the region's top-left corner at the top-left of tile 0/0/0's
//! world, each shallower zoom the 2×2 average of the one below (alpha-weighted; pixels outside the
//! region are transparent).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use geogen_io::dem::DemEncoding;
use geogen_io::Format;
use rayon::prelude::*;

use crate::args::FinishTilesCmd;
use crate::report::CliError;
use crate::tiles::{
    parse_part_record_name, read_marker, sha256_hex, Manifest, PartRecord, RecordedFile, Tile, TileGrid, MANIFEST_FILE,
};

const XYZ_TILE: usize = 256;
/// Problems listed one by one before the rest is only counted.
const LISTED: usize = 20;

fn cannot_read(path: &Path, e: impl std::fmt::Display) -> CliError {
    CliError::Usage(format!("{}: cannot read `{}`: {e}", geogen::diag::codes::GGE4024, path.display()))
}

fn intact(dir: &Path, file: &RecordedFile) -> bool {
    let Ok(path) = crate::outdir::file_in(dir, &file.name) else { return false };
    match std::fs::read(&path) {
        Ok(bytes) => bytes.len() as u64 == file.bytes && sha256_hex(&bytes) == file.sha256,
        Err(_) => false,
    }
}

/// What a finished check found.
struct Check {
    region: [i64; 4],
    tile: u32,
    formats: Vec<String>,
    maps: Vec<String>,
    tiles: u64,
    parts: Vec<(u64, u64)>,
    problems: Vec<String>,
}

fn check(dir: &Path) -> Result<Check, CliError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let bytes = std::fs::read(&manifest_path).map_err(|e| cannot_read(&manifest_path, e))?;
    let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| cannot_read(&manifest_path, e))?;
    let settings = serde_json::to_value(&manifest.settings).map_err(|e| cannot_read(&manifest_path, e))?;
    let mut problems = Vec::new();
    let mut parts: Vec<(u64, u64, PartRecord)> = Vec::new();
    let mut strays = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| cannot_read(dir, e))? {
        let name = entry.map_err(|e| cannot_read(dir, e))?.file_name();
        let Some(name) = name.to_str() else { continue };
        if geogen_io::is_temp_file_name(name) {
            strays.push(name.to_string());
        }
        if let Some((i, n)) = parse_part_record_name(name) {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).map_err(|e| cannot_read(&path, e))?;
            match serde_json::from_slice::<PartRecord>(&bytes) {
                Ok(record) => parts.push((i, n, record)),
                Err(e) => problems.push(format!("`{name}` cannot be read: {e}")),
            }
        }
    }
    parts.sort_by_key(|(i, n, _)| (*n, *i));
    if !strays.is_empty() {
        strays.sort();
        problems.push(format!("temporary files of an interrupted or running writer: {}", strays.join(", ")));
    }
    let Some((_, _, first)) = parts.first() else {
        problems.push("no run or shard has finished here (no geogen-tiles.part-*.json)".into());
        return Ok(Check {
            region: [0; 4],
            tile: manifest.settings.tile,
            formats: manifest.formats,
            maps: manifest.maps,
            tiles: 0,
            parts: Vec::new(),
            problems,
        });
    };
    let (region, tile) = (first.region, first.tile);
    let mut formats = BTreeSet::new();
    let mut maps = BTreeSet::new();
    for (i, n, part) in &parts {
        if part.settings != settings {
            problems.push(format!("part {i} of {n} was rendered with other settings than the manifest's"));
        }
        if part.region != region || part.tile != tile {
            problems.push(format!(
                "part {i} of {n} covers the region {:?} in tiles of {}, not {region:?} in tiles of {tile}",
                part.region, part.tile
            ));
        }
        formats.extend(part.formats.iter().cloned());
        maps.extend(part.maps.iter().cloned());
    }
    // Every shard of each sharded run finished (the tiles below are what really counts).
    let counts: BTreeSet<u64> = parts.iter().map(|(_, n, _)| *n).collect();
    for n in counts {
        let missing: Vec<String> =
            (0..n).filter(|i| !parts.iter().any(|(pi, pn, _)| pn == &n && pi == i)).map(|i| i.to_string()).collect();
        if !missing.is_empty() {
            problems.push(format!("of {n} shards, these have not finished: {}", missing.join(", ")));
        }
    }
    let grid = TileGrid {
        x: region[0],
        y: region[1],
        width: region[2].clamp(0, i64::from(u32::MAX)) as u32,
        height: region[3].clamp(0, i64::from(u32::MAX)) as u32,
        side: tile.max(1),
    };
    let (formats, maps): (Vec<String>, Vec<String>) = (formats.into_iter().collect(), maps.into_iter().collect());
    let incomplete: Vec<(u64, String)> = (0..grid.count())
        .into_par_iter()
        .filter_map(|index| {
            let tile = grid.tile(index);
            let why = tile_problem(dir, &tile, &formats, &maps)?;
            Some((index, format!("tile at {},{} ({}x{}): {why}", tile.x, tile.y, tile.width, tile.height)))
        })
        .collect();
    let count = incomplete.len();
    problems.extend(incomplete.into_iter().take(LISTED).map(|(_, p)| p));
    if count > LISTED {
        problems.push(format!("... and {} more incomplete tiles", count - LISTED));
    }
    Ok(Check {
        region,
        tile,
        formats,
        maps,
        tiles: grid.count(),
        parts: parts.iter().map(|(i, n, _)| (*i, *n)).collect(),
        problems,
    })
}

impl Check {
    /// The grid of the region's source tiles, and how many columns it has.
    fn grid(&self) -> (TileGrid, u64) {
        let [x, y, width, height] = self.region;
        let grid = TileGrid { x, y, width: width as u32, height: height as u32, side: self.tile.max(1) };
        let columns = grid.count() / u64::from(grid.height).div_ceil(u64::from(grid.side)).max(1);
        (grid, columns)
    }
}

fn make_dir(path: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(path).map_err(|e| CliError::Usage(format!("cannot create `{}`: {e}", path.display())))
}

/// Why a tile is not complete, or `None` when it is.
fn tile_problem(dir: &Path, tile: &Tile, formats: &[String], maps: &[String]) -> Option<String> {
    let Some(marker) = read_marker(&dir.join(tile.marker_name())) else { return Some("no marker".into()) };
    if marker.cell != tile.cell() {
        return Some(format!("its marker is for the cell {:?}", marker.cell));
    }
    for map in maps {
        for format in formats {
            match marker.outputs.iter().find(|o| &o.map == map && &o.format == format) {
                None => return Some(format!("no {format} file of the map \"{map}\"")),
                Some(output) => match &output.file {
                    Some(file) if !intact(dir, file) => {
                        return Some(format!("`{}` is missing, truncated or altered", file.name))
                    }
                    _ => {}
                },
            }
        }
    }
    None
}

/// What the web tile set shows.
#[derive(Clone, Copy, Debug)]
enum TileSet {
    /// The tiles' 8-bit previews in that format, as RGBA.
    Preview(Format),
    /// Elevations in metres from the tiles' heights, packed as web maps read terrain.
    Elevation(DemEncoding),
}

pub fn finish_tiles(cmd: &FinishTilesCmd) -> Result<ExitCode, CliError> {
    let tile_set = match (cmd.format.parse::<Format>(), DemEncoding::parse(&cmd.format)) {
        (Ok(f @ (Format::Colored | Format::Png8 | Format::Hillshade)), _) => TileSet::Preview(f),
        (_, Some(encoding)) => TileSet::Elevation(encoding),
        _ => {
            return Err(CliError::Usage(format!(
                "--format {} cannot make a web tile set: use colored, png8, hillshade, terrarium or terrain-rgb",
                cmd.format
            )))
        }
    };
    let scale = &cmd.scale;
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if !positive(scale.pixel_size) || !positive(scale.height_scale) {
        return Err(CliError::Usage(format!(
            "{}: --pixel-size and --height-scale must be positive numbers of metres",
            geogen::diag::codes::GGE4021
        )));
    }
    let geo = scale
        .geo_origin
        .as_deref()
        .map(crate::export::parse_geo_origin)
        .transpose()
        .map_err(|why| CliError::Usage(format!("{}: {why}", geogen::diag::codes::GGE4021)))?;
    refuse_outputs(cmd)?;
    let check = check(&cmd.dir)?;
    if !check.problems.is_empty() {
        eprintln!("`{}` is not complete and consistent:", cmd.dir.display());
        for problem in &check.problems {
            eprintln!("  {problem}");
        }
        return Err(CliError::Reported(1));
    }
    if !cmd.quiet {
        let shards: BTreeSet<u64> = check.parts.iter().map(|(_, n)| *n).collect();
        eprintln!(
            "`{}` is complete: {} tiles of {} over the region {},{},{},{}; maps {}; formats {}; {} part record{} ({} shards), one setting",
            cmd.dir.display(),
            check.tiles,
            check.tile,
            check.region[0],
            check.region[1],
            check.region[2],
            check.region[3],
            check.maps.join(", "),
            check.formats.join(", "),
            check.parts.len(),
            if check.parts.len() == 1 { "" } else { "s" },
            shards.iter().map(u64::to_string).collect::<Vec<_>>().join("/")
        );
    }
    if (cmd.xyz.is_some() || cmd.pmtiles.is_some() || cmd.cog.is_some()) && !check.maps.contains(&cmd.map) {
        return Err(CliError::Usage(format!(
            "the tiles hold no map \"{}\" (they hold {})",
            cmd.map,
            check.maps.join(", ")
        )));
    }
    if let Some(cog) = &cmd.cog {
        let source = heights_source(&check)?;
        let transform = geogen_io::cog::GeoTransform::of((check.region[0], check.region[1]), scale.pixel_size, geo);
        write_cog(&cmd.dir, &check, &cmd.map, source, scale.height_scale, &transform, cog)?;
        if !cmd.quiet {
            eprintln!("wrote the cloud-optimised GeoTIFF {} from the {} tiles", cog.display(), source.name());
        }
    }
    if cmd.xyz.is_some() || cmd.pmtiles.is_some() {
        let source_format = match tile_set {
            TileSet::Preview(format) => format,
            TileSet::Elevation(_) => heights_source(&check)?,
        };
        if !check.formats.iter().any(|f| f == source_format.name()) {
            return Err(CliError::Usage(format!(
                "the tiles were not written in {} (they are in {}); render them with --format {} too",
                source_format.name(),
                check.formats.join(", "),
                source_format.name()
            )));
        }
        // The archive is packed from an XYZ tile set: the one asked for, or a temporary one beside it.
        let (out, temporary) = match (&cmd.xyz, &cmd.pmtiles) {
            (Some(out), _) => (out.clone(), false),
            (None, Some(archive)) => {
                let name = archive.file_name().map_or("tiles".into(), |n| n.to_string_lossy().into_owned());
                (archive.with_file_name(format!(".{name}.xyz-{}", std::process::id())), true)
            }
            (None, None) => unreachable!("checked above"),
        };
        let written = match tile_set {
            TileSet::Preview(format) => write_xyz(&cmd.dir, &check, &cmd.map, format, &out),
            TileSet::Elevation(encoding) => {
                write_xyz_elevation(&cmd.dir, &check, &cmd.map, source_format, encoding, scale.height_scale, &out)
            }
        };
        let packed = written.and_then(|zooms| {
            if let Some(archive) = &cmd.pmtiles {
                write_pmtiles(&out, zooms, &check, &cmd.map, tile_set, archive, &cmd.pmtiles_compression)?;
            }
            Ok(zooms)
        });
        if temporary {
            let _ = std::fs::remove_dir_all(&out);
        }
        let zooms = packed?;
        if !cmd.quiet {
            if !temporary {
                eprintln!("wrote the XYZ tile set {}/{{z}}/{{x}}/{{y}}.png, zoom 0 to {}", out.display(), zooms - 1);
            }
            if let Some(archive) = &cmd.pmtiles {
                eprintln!("wrote the PMTiles archive {}, zoom 0 to {}", archive.display(), zooms - 1);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses a web tile set or archive written into the tiles directory (it would replace a tile or
/// the manifest, and every tile would have to be rendered again) and an existing archive unless
/// `--force`, before any work.
fn refuse_outputs(cmd: &FinishTilesCmd) -> Result<(), CliError> {
    let tiles = std::fs::canonicalize(&cmd.dir).unwrap_or_else(|_| cmd.dir.clone());
    let outputs = [("--xyz", &cmd.xyz), ("--pmtiles", &cmd.pmtiles), ("--cog", &cmd.cog)];
    for (flag, path) in outputs.iter().filter_map(|(flag, path)| Some((flag, path.as_ref()?))) {
        if resolved(path).starts_with(&tiles) {
            return Err(CliError::Usage(format!(
                "{flag} `{}` is inside the tiles directory `{}`, whose files it could replace; write it elsewhere",
                path.display(),
                cmd.dir.display()
            )));
        }
    }
    for (flag, file) in [("--pmtiles", &cmd.pmtiles), ("--cog", &cmd.cog)] {
        let Some(file) = file else { continue };
        match std::fs::symlink_metadata(file) {
            Ok(meta) if meta.is_dir() => {
                return Err(CliError::Usage(format!("{flag} `{}` is a directory; it names a file", file.display())))
            }
            Ok(_) if !cmd.force => {
                return Err(CliError::Usage(format!(
                    "{flag} `{}` exists; add --force to replace it, or name another file",
                    file.display()
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// `path` with its directory resolved (links, `..`), whether or not the file itself exists.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(full) = std::fs::canonicalize(path) {
        return full;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let base = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    match path.file_name() {
        Some(name) => base.join(name),
        None => base,
    }
}

/// An RGBA image.
struct Rgba {
    width: usize,
    height: usize,
    data: Vec<u8>,
}

fn decode_rgba(path: &Path) -> Result<Rgba, CliError> {
    let file = std::fs::File::open(path).map_err(|e| cannot_read(path, e))?;
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().map_err(|e| cannot_read(path, e))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| cannot_read(path, e))?;
    let (width, height) = (info.width as usize, info.height as usize);
    let pixels = &buf[..info.buffer_size()];
    let data = match (info.color_type, info.bit_depth) {
        (png::ColorType::Rgb, png::BitDepth::Eight) => {
            pixels.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect()
        }
        (png::ColorType::Grayscale, png::BitDepth::Eight) => pixels.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        other => return Err(CliError::Usage(format!("`{}` is a {other:?} PNG, not an 8-bit preview", path.display()))),
    };
    Ok(Rgba { width, height, data })
}

fn encode_rgba(image: &Rgba, path: &Path) -> Result<(), CliError> {
    encode_png(&image.data, (image.width, image.height), png::ColorType::Rgba, path)
}

/// Writes an 8-bit PNG of `width × height` pixels of `color`.
fn encode_png(
    pixels: &[u8],
    (width, height): (usize, usize),
    color: png::ColorType,
    path: &Path,
) -> Result<(), CliError> {
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, width as u32, height as u32);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(|e| CliError::Usage(e.to_string()))?;
        writer.write_image_data(pixels).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    geogen_io::write_bytes(path, &bytes).map_err(CliError::from)
}

/// The file of `map` in `format` of the tile at grid index `index`, with its first pixel.
fn source_file(dir: &Path, grid: &TileGrid, index: u64, map: &str, format: Format) -> Option<(PathBuf, i64, i64)> {
    let tile = grid.tile(index);
    let marker = read_marker(&dir.join(tile.marker_name()))?;
    let file = marker.outputs.into_iter().find(|o| o.map == map && o.format == format.name())?.file?;
    // `tile_X_Y_<map>...`: the map's own first pixel (a cell may be clipped by a finite map).
    let mut parts = file.name.strip_prefix("tile_")?.splitn(3, '_');
    let x = parts.next()?.parse().ok()?;
    let y = parts.next()?.parse().ok()?;
    Some((dir.join(&file.name), x, y))
}

/// Writes the tile set; returns the number of zoom levels.
fn write_xyz(dir: &Path, check: &Check, map: &str, format: Format, out: &Path) -> Result<u32, CliError> {
    let [rx, ry, rw, rh] = check.region;
    let (grid, columns) = check.grid();
    let zmax = deepest_zoom(rw, rh);
    // Deepest zoom: cut from the source tiles, one band of source tiles at a time.
    let tiles_x = (rw as usize).div_ceil(XYZ_TILE);
    let tiles_y = (rh as usize).div_ceil(XYZ_TILE);
    for ty in 0..tiles_y {
        let (y0, y1) = ((ty * XYZ_TILE) as i64, (((ty + 1) * XYZ_TILE) as i64).min(rh));
        // The source tiles of this band, decoded once.
        let first_row = (y0 / i64::from(grid.side)) as u64;
        let last_row = ((y1 - 1) / i64::from(grid.side)) as u64;
        let sources: Vec<(Rgba, i64, i64)> = (first_row..=last_row)
            .flat_map(|row| (0..columns).map(move |col| row * columns + col))
            .collect::<Vec<u64>>()
            .into_par_iter()
            .filter_map(|index| source_file(dir, &grid, index, map, format))
            .map(|(path, x, y)| decode_rgba(&path).map(|image| (image, x - rx, y - ry)))
            .collect::<Result<_, _>>()?;
        let column_dir = |tx: usize| out.join(zmax.to_string()).join(tx.to_string());
        (0..tiles_x).into_par_iter().try_for_each(|tx| {
            let mut image = Rgba { width: XYZ_TILE, height: XYZ_TILE, data: vec![0; XYZ_TILE * XYZ_TILE * 4] };
            let x0 = (tx * XYZ_TILE) as i64;
            for (source, sx, sy) in &sources {
                for row in 0..source.height as i64 {
                    let py = sy + row - y0;
                    if !(0..XYZ_TILE as i64).contains(&py) {
                        continue;
                    }
                    for col in 0..source.width as i64 {
                        let px = sx + col - x0;
                        if (0..XYZ_TILE as i64).contains(&px) {
                            let from = ((row as usize) * source.width + col as usize) * 4;
                            let to = (py as usize * XYZ_TILE + px as usize) * 4;
                            image.data[to..to + 4].copy_from_slice(&source.data[from..from + 4]);
                        }
                    }
                }
            }
            make_dir(&column_dir(tx))?;
            encode_rgba(&image, &column_dir(tx).join(format!("{ty}.png")))
        })?;
    }
    // Shallower zooms: each tile the 2×2 average of its four children.
    for z in (0..zmax).rev() {
        let n = 1usize << z;
        let child = |x: usize, y: usize| -> Result<Option<Rgba>, CliError> {
            let path = out.join((z + 1).to_string()).join(x.to_string()).join(format!("{y}.png"));
            if path.exists() {
                decode_rgba_any(&path).map(Some)
            } else {
                Ok(None)
            }
        };
        (0..n * n).into_par_iter().try_for_each(|i| {
            let (tx, ty) = (i % n, i / n);
            let children = [
                child(2 * tx, 2 * ty)?,
                child(2 * tx + 1, 2 * ty)?,
                child(2 * tx, 2 * ty + 1)?,
                child(2 * tx + 1, 2 * ty + 1)?,
            ];
            if children.iter().all(Option::is_none) {
                return Ok(());
            }
            let mut image = Rgba { width: XYZ_TILE, height: XYZ_TILE, data: vec![0; XYZ_TILE * XYZ_TILE * 4] };
            for y in 0..XYZ_TILE {
                for x in 0..XYZ_TILE {
                    let (cx, cy) = (x * 2, y * 2);
                    let quadrant = &children[(cy / XYZ_TILE) * 2 + cx / XYZ_TILE];
                    let Some(c) = quadrant else { continue };
                    let (lx, ly) = (cx % XYZ_TILE, cy % XYZ_TILE);
                    let mut sums = [0u32; 4];
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let p = &c.data[((ly + dy) * XYZ_TILE + lx + dx) * 4..][..4];
                        let a = u32::from(p[3]);
                        for k in 0..3 {
                            sums[k] += u32::from(p[k]) * a;
                        }
                        sums[3] += a;
                    }
                    let to = (y * XYZ_TILE + x) * 4;
                    // Colours weighted by alpha, rounded; fully transparent stays zero.
                    let alpha = sums[3];
                    for (out, &sum) in image.data[to..to + 3].iter_mut().zip(&sums[..3]) {
                        if let Some(v) = (sum + alpha / 2).checked_div(alpha) {
                            *out = v as u8;
                        }
                    }
                    if alpha > 0 {
                        image.data[to + 3] = ((alpha + 2) / 4) as u8;
                    }
                }
            }
            let column = out.join(z.to_string()).join(tx.to_string());
            make_dir(&column)?;
            encode_rgba(&image, &column.join(format!("{ty}.png")))
        })?;
    }
    Ok(zmax + 1)
}

/// An RGBA tile written above, read back.
fn decode_rgba_any(path: &Path) -> Result<Rgba, CliError> {
    let file = std::fs::File::open(path).map_err(|e| cannot_read(path, e))?;
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().map_err(|e| cannot_read(path, e))?;
    let mut data = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut data).map_err(|e| cannot_read(path, e))?;
    data.truncate(info.buffer_size());
    Ok(Rgba { width: info.width as usize, height: info.height as usize, data })
}

/// Packs the XYZ tile set in `xyz` (zooms `0..zooms`) into one PMTiles archive at `archive`.
fn write_pmtiles(
    xyz: &Path,
    zooms: u32,
    check: &Check,
    map: &str,
    tile_set: TileSet,
    archive: &Path,
    compression: &str,
) -> Result<(), CliError> {
    let mut tiles = Vec::new();
    for z in 0..zooms {
        let n = 1u64 << z;
        for x in 0..n {
            let column = xyz.join(z.to_string()).join(x.to_string());
            if !column.is_dir() {
                continue;
            }
            for y in 0..n {
                let path = column.join(format!("{y}.png"));
                match std::fs::read(&path) {
                    Ok(bytes) => tiles.push((z as u8, x, y, bytes)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(cannot_read(&path, e)),
                }
            }
        }
    }
    // The tile set's world is Web Mercator's: the region fills the top-left of zoom 0's tile, so its
    // bounds are the longitudes and latitudes of its corners there.
    let world = (XYZ_TILE as f64) * f64::from(1u32 << (zooms - 1));
    let lon = |px: f64| px / world * 360.0 - 180.0;
    let lat = |py: f64| {
        let k = std::f64::consts::PI * (1.0 - 2.0 * py / world);
        libm::atan(libm::sinh(k)).to_degrees()
    };
    let [_, _, width, height] = check.region;
    let mut metadata = serde_json::json!({
        "name": map,
        "format": "png",
        "type": "baselayer",
        "description": format!("geogen tiles of the map \"{map}\", region {:?}", check.region),
    });
    if let TileSet::Elevation(encoding) = tile_set {
        // The key MapLibre's PMTiles protocol reads to decode a raster-dem source.
        metadata["encoding"] = serde_json::json!(encoding.web_name());
    }
    let description = crate::pmtiles::Description {
        min_zoom: 0,
        max_zoom: (zooms - 1) as u8,
        bounds: [lon(0.0), lat(height as f64), lon(width as f64), lat(0.0)],
        metadata,
    };
    let compression =
        if compression == "none" { crate::pmtiles::Compression::None } else { crate::pmtiles::Compression::Gzip };
    let bytes = crate::pmtiles::archive(tiles, &description, compression);
    geogen_io::write_bytes(archive, &bytes).map_err(CliError::from)
}

/// The format of the tiles' heights an elevation tile set or GeoTIFF is made from: the float TIFF,
/// else the OpenEXR, else the 16-bit PNG (quantised: within 1/65534 of the height range).
fn heights_source(check: &Check) -> Result<Format, CliError> {
    [Format::Tiff32, Format::Exr, Format::Png16]
        .into_iter()
        .find(|f| check.formats.iter().any(|name| name == f.name()))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "elevations are made from the tiles' heights, and they hold none (they are in {}); render them with --format tiff too",
                check.formats.join(", ")
            ))
        })
}

/// The heights of one source tile.
fn read_tile_heights(path: &Path) -> Result<geogen_io::read::InputHeights, CliError> {
    geogen_io::read::read_heights(path, None, &geogen_io::read::InputLimits::default())
        .map_err(|e| CliError::Usage(format!("{}: {e}", geogen::diag::codes::GGE4024)))
}

/// The heights of the region's rows `y0..y1` (relative to the region), its full width, from the
/// source tiles that hold them.
fn heights_of_rows(
    dir: &Path,
    check: &Check,
    map: &str,
    source: Format,
    (y0, y1): (usize, usize),
) -> Result<Vec<f32>, CliError> {
    let [rx, ry, rw, _] = check.region;
    let (grid, columns) = check.grid();
    let side = grid.side as usize;
    let width = rw as usize;
    let indices: Vec<u64> = ((y0 / side) as u64..=((y1 - 1) / side) as u64)
        .flat_map(|row| (0..columns).map(move |col| row * columns + col))
        .collect();
    let sources: Vec<(geogen_io::read::InputHeights, i64, i64)> = indices
        .into_par_iter()
        .filter_map(|index| source_file(dir, &grid, index, map, source))
        .map(|(path, x, y)| read_tile_heights(&path).map(|heights| (heights, x - rx, y - ry)))
        .collect::<Result<_, _>>()?;
    let mut rows = vec![0f32; width * (y1 - y0)];
    for (tile, sx, sy) in &sources {
        let tile_width = tile.width as usize;
        for (row, line) in tile.data.chunks_exact(tile_width.max(1)).enumerate() {
            let y = sy + row as i64;
            if !(y0 as i64..y1 as i64).contains(&y) {
                continue;
            }
            // The part of the line within the region's columns.
            let first = (-sx).clamp(0, tile_width as i64) as usize;
            let last = (width as i64 - sx).clamp(0, tile_width as i64) as usize;
            if first < last {
                let at = (y as usize - y0) * width + (sx + first as i64) as usize;
                rows[at..at + last - first].copy_from_slice(&line[first..last]);
            }
        }
    }
    Ok(rows)
}

/// The deepest zoom of a web tile set of a `width × height` region: the smallest whose 2^z tiles
/// a side hold it.
fn deepest_zoom(width: i64, height: i64) -> u32 {
    let side = width.max(height) as u64;
    let mut zoom = 0u32;
    while (XYZ_TILE as u64) << zoom < side {
        zoom += 1;
    }
    zoom
}

/// An elevation tile written above, read back as metres.
fn decode_elevation(path: &Path, encoding: DemEncoding) -> Result<Vec<f64>, CliError> {
    let image = decode_rgba_any(path)?;
    if image.data.len() != XYZ_TILE * XYZ_TILE * 3 {
        return Err(cannot_read(path, "not an RGB elevation tile of 256 × 256 pixels"));
    }
    Ok(image.data.chunks_exact(3).map(|p| encoding.decode([p[0], p[1], p[2]])).collect())
}

/// Writes an elevation tile set (RGB PNG, `encoding`) of the region's heights at `height_scale`
/// metres per unit, laid out as [`write_xyz`] lays out previews; returns the number of zoom
/// levels. Elevations have no transparency: beyond the region each tile repeats its nearest edge
/// pixel, so 3D terrain ends level. A shallower zoom's pixel is the mean of the four below it.
fn write_xyz_elevation(
    dir: &Path,
    check: &Check,
    map: &str,
    source: Format,
    encoding: DemEncoding,
    height_scale: f64,
    out: &Path,
) -> Result<u32, CliError> {
    let [_, _, rw, rh] = check.region;
    let (width, height) = (rw as usize, rh as usize);
    let zmax = deepest_zoom(rw, rh);
    let tile_path = |z: u32, x: usize, y: usize| out.join(z.to_string()).join(x.to_string()).join(format!("{y}.png"));
    for ty in 0..height.div_ceil(XYZ_TILE) {
        let (y0, y1) = (ty * XYZ_TILE, ((ty + 1) * XYZ_TILE).min(height));
        let rows = heights_of_rows(dir, check, map, source, (y0, y1))?;
        (0..width.div_ceil(XYZ_TILE)).into_par_iter().try_for_each(|tx| {
            let mut pixels = vec![0u8; XYZ_TILE * XYZ_TILE * 3];
            for (py, line) in pixels.chunks_exact_mut(XYZ_TILE * 3).enumerate() {
                let y = (y0 + py).min(y1 - 1) - y0;
                for (px, pixel) in line.chunks_exact_mut(3).enumerate() {
                    let x = (tx * XYZ_TILE + px).min(width - 1);
                    pixel.copy_from_slice(&encoding.encode_height(rows[y * width + x], height_scale));
                }
            }
            let path = tile_path(zmax, tx, ty);
            make_dir(path.parent().unwrap_or(out))?;
            encode_png(&pixels, (XYZ_TILE, XYZ_TILE), png::ColorType::Rgb, &path)
        })?;
    }
    for z in (0..zmax).rev() {
        // The region's pixels at this zoom and the one below (rounded up), and its tiles.
        let extent = |zoom: u32| {
            let shift = zmax - zoom;
            (width.div_ceil(1 << shift), height.div_ceil(1 << shift))
        };
        let ((vw, vh), (cw, ch)) = (extent(z), extent(z + 1));
        let across = vw.div_ceil(XYZ_TILE);
        (0..across * vh.div_ceil(XYZ_TILE)).into_par_iter().try_for_each(|i| {
            let (tx, ty) = (i % across, i / across);
            let mut children: [Option<Vec<f64>>; 4] = Default::default();
            for (k, child) in children.iter_mut().enumerate() {
                let path = tile_path(z + 1, 2 * tx + k % 2, 2 * ty + k / 2);
                if path.exists() {
                    *child = Some(decode_elevation(&path, encoding)?);
                }
            }
            let metres_at = |cx: usize, cy: usize| -> Result<f64, CliError> {
                let k = (cy / XYZ_TILE - 2 * ty) * 2 + (cx / XYZ_TILE - 2 * tx);
                let child = children[k].as_ref().ok_or_else(|| {
                    CliError::Usage(format!("the tile {}/{}/{} is missing", z + 1, cx / XYZ_TILE, cy / XYZ_TILE))
                })?;
                Ok(child[(cy % XYZ_TILE) * XYZ_TILE + cx % XYZ_TILE])
            };
            let mut pixels = vec![0u8; XYZ_TILE * XYZ_TILE * 3];
            for (py, line) in pixels.chunks_exact_mut(XYZ_TILE * 3).enumerate() {
                let y = (ty * XYZ_TILE + py).min(vh - 1);
                for (px, pixel) in line.chunks_exact_mut(3).enumerate() {
                    let x = (tx * XYZ_TILE + px).min(vw - 1);
                    let mut sum = 0.0;
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        sum += metres_at((2 * x + dx).min(cw - 1), (2 * y + dy).min(ch - 1))?;
                    }
                    pixel.copy_from_slice(&encoding.encode(sum / 4.0));
                }
            }
            let path = tile_path(z, tx, ty);
            make_dir(path.parent().unwrap_or(out))?;
            encode_png(&pixels, (XYZ_TILE, XYZ_TILE), png::ColorType::Rgb, &path)
        })?;
    }
    Ok(zmax + 1)
}

/// Writes the region's heights as one cloud-optimised GeoTIFF (float32 metres, tiled, with
/// overviews), placed by `transform`. The whole region is held in memory, so it is refused beyond
/// the memory limit (and, as every GeoTIFF geogen writes, beyond 4 GiB).
fn write_cog(
    dir: &Path,
    check: &Check,
    map: &str,
    source: Format,
    height_scale: f64,
    transform: &geogen_io::cog::GeoTransform,
    path: &Path,
) -> Result<(), CliError> {
    let [_, _, rw, rh] = check.region;
    let (width, height) = (rw as usize, rh as usize);
    // The heights, the metres, the overviews (a third more) and the file.
    let needed = (width as u64) * (height as u64) * 4 * 4;
    let limit = crate::render::default_memory_limit();
    if needed > limit {
        return Err(CliError::Usage(format!(
            "{}: a GeoTIFF of the {width} × {height} region needs about {} MiB, more than the memory limit of {} MiB; \
             write an XYZ tile set instead, or tile the region in parts",
            geogen::diag::codes::GGE4003,
            needed >> 20,
            limit >> 20
        )));
    }
    let mut metres = Vec::with_capacity(width * height);
    for band in (0..height).step_by(XYZ_TILE) {
        let rows = heights_of_rows(dir, check, map, source, (band, (band + XYZ_TILE).min(height)))?;
        metres.extend(rows.iter().map(|&h| (f64::from(geogen_io::quantize::sanitize(h)) * height_scale) as f32));
    }
    let bytes = geogen_io::cog::encode_metres(rw as u32, rh as u32, metres, transform)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    geogen_io::write_bytes(path, &bytes).map_err(CliError::from)
}
