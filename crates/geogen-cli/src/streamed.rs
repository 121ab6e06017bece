//! `geogen render` above the memory limit: the render is split into horizontal strips of full
//! width, rendered one after another and streamed into one file per map and format.
//!
//! Each strip is a render of its own rectangle, so by the tile contract its pixels are those of the
//! same rows of a render of the whole map, and [`geogen_io::StreamWriter`] writes exactly the bytes
//! a whole-image write gives: the files equal those of an in-memory render byte for byte (tested in
//! `tests/integration/cli.rs`). A writer thread encodes strip `k` while strip `k + 1` renders.
//!
//! The memory plan covers the whole run: the strip height is the largest whose plan, plus the
//! output of two strips (one being encoded, one handed over), fits the limit; a strip whose plan
//! turns out larger than the first one's (a region with more work) is split in two, again and again
//! if need be. Only the streamable formats (`Format::is_streamable`: png16, png8, r16, tiff, colored)
//! can be written this way.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;

use geogen::{HeightMap, RenderConfig, RunSettings, Script};
use geogen_io::{Format, StreamWriter};

use crate::outdir::OutputDir;
use crate::report::CliError;

/// What a streamed render did, for the summary and `--stats`.
pub struct Streamed {
    pub maps: usize,
    pub pixels: u64,
    pub strips: u64,
    pub strip_height: u32,
    /// The largest planned need of a strip plus the strip outputs in flight.
    pub planned_peak: u64,
    pub written: Vec<(PathBuf, u64, u64)>,
    pub render_time: std::time::Duration,
}

/// Settings for the rows `y .. y + height` of the render (full width).
fn strip_settings(full: &RunSettings, y: i64, height: u32) -> RunSettings {
    RunSettings { render_origin: (full.render_origin.0, y), render_height: Some(height), ..full.clone() }
}

/// The planned peak of a strip render, or the failure (a script error).
pub(crate) fn strip_peak(script: &Script, settings: &RunSettings) -> Result<u64, CliError> {
    let simulation = script.simulate(settings)?;
    let meta =
        geogen::RenderMetadata::calculate(&simulation.sequence).map_err(|e| script.failure(e.to_diagnostic()))?;
    Ok(meta.plan.peak())
}

/// The bytes of the outputs of a strip of `height` rows: every map, 4 bytes per pixel.
fn strip_output_bytes(width: u64, height: u32, maps: usize) -> u64 {
    width.saturating_mul(u64::from(height)).saturating_mul(4).saturating_mul(maps as u64)
}

/// Refuses formats that cannot be streamed, naming them.
pub fn check_streamable(formats: &[Format], limit: u64, peak: u64) -> Result<(), CliError> {
    let refused: Vec<String> = formats.iter().filter(|f| !f.is_streamable()).map(|f| f.name().to_string()).collect();
    if refused.is_empty() {
        return Ok(());
    }
    Err(CliError::Usage(format!(
        "the render needs {} but the memory limit is {}; it can be rendered in strips streamed to the files, but not \
         in {} (streamable: {}); raise --memory-limit, pick streamable formats, or use `geogen tiles`",
        geogen::host::human_bytes(peak),
        geogen::host::human_bytes(limit),
        refused.join(", "),
        Format::streamable_names()
    )))
}

/// Renders `settings` (whose map size is already fixed) strip by strip into `dir`; `None` (with a
/// note printed) when not even one row fits the limit.
#[allow(clippy::too_many_arguments)]
pub fn render_streamed(
    script: &Script,
    settings: &RunSettings,
    config: &RenderConfig,
    formats: &[Format],
    maps: &[String],
    dir: &OutputDir,
    progress: &dyn Fn(u64, u64),
) -> Result<Option<Streamed>, CliError> {
    let geometry = script.geometry(settings).map_err(|d| script.failure(d))?;
    let rect = geometry.yield_rect();
    let (width, height) = (rect.width, rect.height as u32);
    let limit = config.memory_limit;
    let fits = |h: u32| -> Result<Option<u64>, CliError> {
        let peak = strip_peak(script, &strip_settings(settings, rect.y, h))?;
        let need = peak.saturating_add(2 * strip_output_bytes(width, h, maps.len()));
        Ok((need <= limit).then_some(need))
    };
    // The tallest strip whose plan fits (plans grow with the strip's height).
    let (mut low, mut high) = (0u32, height);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if fits(mid)?.is_some() {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    if low == 0 {
        let one_row = strip_peak(script, &strip_settings(settings, rect.y, 1))?;
        eprintln!(
            "note: even one row of the render needs {} (with its output), more than the memory limit, so it cannot be \
             split into strips",
            geogen::host::human_bytes(one_row.saturating_add(2 * strip_output_bytes(width, 1, maps.len())))
        );
        return Ok(None);
    }
    let strip_height = low;

    // One writer per map and format, fed by a thread so encoding overlaps the next strip's render.
    let mut writers: Vec<(String, Vec<(PathBuf, StreamWriter)>)> = Vec::new();
    for map in maps {
        let mut per_format = Vec::new();
        for &format in formats {
            let path = dir.file(&format.file_name(map))?;
            let writer = StreamWriter::new(format, width as u32, height, &path).map_err(CliError::from)?;
            per_format.push((path, writer));
        }
        writers.push((map.clone(), per_format));
    }
    let (sender, receiver) = mpsc::sync_channel::<BTreeMap<String, HeightMap>>(1);
    let writer_thread = std::thread::spawn(move || -> Result<Vec<PathBuf>, String> {
        for strip in receiver {
            for (map, per_format) in writers.iter_mut() {
                let Some(data) = strip.get(map) else {
                    return Err(format!("a strip of the render has no map \"{map}\""));
                };
                for (_, writer) in per_format.iter_mut() {
                    writer.write_rows(data.data()).map_err(|e| e.to_string())?;
                }
            }
        }
        let mut paths = Vec::new();
        for (_, per_format) in writers {
            for (path, writer) in per_format {
                writer.finish().map_err(|e| e.to_string())?;
                paths.push(path);
            }
        }
        Ok(paths)
    });

    let started = std::time::Instant::now();
    let mut planned_peak = 0u64;
    let mut strips = 0u64;
    // Strips still to render, as (first row, rows); a strip too big for the limit is split.
    let mut pending = vec![];
    let mut y = rect.y;
    let end = rect.y + i64::from(height);
    while y < end {
        let h = (end - y).min(i64::from(strip_height)) as u32;
        pending.push((y, h));
        y += i64::from(h);
    }
    pending.reverse();
    // Whole-map solves (`Drainage`) are computed by the first strip and read by the others.
    let solutions = geogen::SolveCache::new(limit / 2);
    let render_result = (|| -> Result<(), CliError> {
        while let Some((y, h)) = pending.pop() {
            let strip = strip_settings(settings, y, h);
            let in_flight = 2 * strip_output_bytes(width, h, maps.len());
            let peak = strip_peak(script, &strip)?;
            if peak.saturating_add(in_flight) > limit && h > 1 {
                let first = h / 2;
                pending.push((y + i64::from(first), h - first));
                pending.push((y, first));
                continue;
            }
            planned_peak = planned_peak.max(peak.saturating_add(in_flight));
            let strip_config = RenderConfig {
                memory_limit: limit.saturating_sub(in_flight),
                solutions: Some(solutions.clone()),
                max_solve_cells: config.max_solve_cells,
                ..RenderConfig::default()
            };
            let rendered = script.render(&strip, &strip_config, None)?;
            for map in maps {
                match rendered.maps.get(map) {
                    Some(m) if m.rect().y == y && m.rect().height == u64::from(h) && m.rect().width == width => {}
                    _ => {
                        return Err(CliError::Usage(format!(
                            "the strip at row {y} did not yield the map \"{map}\" whole"
                        )))
                    }
                }
            }
            strips += 1;
            progress((y + i64::from(h) - rect.y) as u64, u64::from(height));
            if sender.send(rendered.maps).is_err() {
                break; // the writer stopped; its error is reported below
            }
        }
        Ok(())
    })();
    drop(sender);
    let written = writer_thread.join().map_err(|_| CliError::Usage("the writer thread panicked".into()))?;
    render_result?;
    let written = written.map_err(CliError::Usage)?;
    Ok(Some(Streamed {
        maps: maps.len(),
        pixels: width * u64::from(height) * maps.len() as u64,
        strips,
        strip_height,
        planned_peak,
        written: written.into_iter().map(|p| (p, width, u64::from(height))).collect(),
        render_time: started.elapsed(),
    }))
}
