//! The parallel loops every kernel shares: rows and bands of a map in parallel, zips of maps, and
//! the serial mode of a fused pass (the pixel math itself is in `geogen-kernels` and the operations).
//!
//! Determinism rules (spec §4): each output pixel is computed by exactly one thread, from its
//! inputs, in a fixed order that does not depend on where the buffer starts or how rows are split
//! among threads; no FMA (`mul_add`), no platform math (only IEEE basic operations and `libm`).
//! Parallelism is across rows (rayon); a row's computation depends only on its absolute `y`.
//!
//! Inside a fused pass (the renderer runs several row-local steps band by band, see
//! [`crate::Operation::is_row_local`]) each band is already one rayon task: [`serially`] marks the
//! current thread so that these loops then run on it alone instead of splitting the band again.

use std::cell::Cell;
use std::time::Instant;

use rayon::prelude::*;

use crate::geometry::{Interval, Rect};
use crate::raster::HeightMap;

/// Minimum rows per rayon task, so tiny maps do not drown in scheduling overhead.
const MIN_ROWS_PER_TASK: usize = 8;

/// Bytes of one band: a band of rows is a unit of work that stays in the core's cache (L2) while
/// the steps of a fused pass, or a kernel's per-band caches, work on it.
pub const BAND_BYTES: usize = 128 << 10;

thread_local! {
    static SERIAL: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the loops of this module running serially on the current thread (restored after,
/// also on panic). The renderer's fused passes call kernels this way, one band per task.
pub fn serially<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SERIAL.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SERIAL.with(|s| s.replace(true)));
    f()
}

/// Whether the loops of this module run serially on this thread (inside [`serially`]).
pub fn in_serial_mode() -> bool {
    SERIAL.with(|s| s.get())
}

/// Rows per band for rows of `width` pixels: [`BAND_BYTES`] worth, at least one.
pub fn band_rows(width: usize) -> usize {
    (BAND_BYTES / 4 / width.max(1)).max(1)
}

/// Calls `f(absolute_y_of_first_row, absolute_x_of_first_pixel, rows)` for consecutive bands of
/// whole rows (`rows.len()` a multiple of the width), in parallel. A kernel that keeps per-band
/// caches (noise lattice rows) uses this; bands never split rows, and in serial mode the whole map
/// is one band.
pub fn for_each_band(map: &mut HeightMap, f: impl Fn(i64, i64, &mut [f32]) + Sync + Send) {
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    let width = map.width();
    if in_serial_mode() {
        f(rect.y, rect.x, map.data_mut());
        return;
    }
    let rows = band_rows(width);
    map.data_mut()
        .par_chunks_mut(width * rows)
        .enumerate()
        .for_each(|(band, data)| f(rect.y + (band * rows) as i64, rect.x, data));
}

/// Calls `f(absolute_y, absolute_x_of_first_pixel, row)` for every row, in parallel.
pub fn for_each_row(map: &mut HeightMap, f: impl Fn(i64, i64, &mut [f32]) + Sync + Send) {
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    let width = map.width();
    if in_serial_mode() {
        for (row, data) in map.data_mut().chunks_mut(width).enumerate() {
            f(rect.y + row as i64, rect.x, data);
        }
        return;
    }
    map.data_mut()
        .par_chunks_mut(width)
        .with_min_len(MIN_ROWS_PER_TASK)
        .enumerate()
        .for_each(|(row, data)| f(rect.y + row as i64, rect.x, data));
}

/// Replaces every pixel `h` with `f(h)`, in parallel.
pub fn map_pixels(map: &mut HeightMap, f: impl Fn(f32) -> f32 + Sync + Send) {
    for_each_row(map, |_, _, row| {
        for h in row.iter_mut() {
            *h = f(*h);
        }
    });
}

/// Calls `f(absolute_y, xs, row)` in parallel for every row of `common` (a rectangle inside the
/// target), where `row` is the target's part of that row and `xs` its x interval.
fn for_each_common_row(target: &mut HeightMap, common: Rect, f: impl Fn(i64, Interval, &mut [f32]) + Sync + Send) {
    if common.is_empty() {
        return;
    }
    let xs = common.x_interval();
    let offset = (common.x - target.rect().x) as usize;
    let len = common.width as usize;
    let skip = (common.y - target.rect().y) as usize;
    let width = target.width();
    if in_serial_mode() {
        let rows = target.data_mut().chunks_mut(width).skip(skip).take(common.height as usize);
        for (i, row) in rows.enumerate() {
            f(common.y + i as i64, xs, &mut row[offset..offset + len]);
        }
        return;
    }
    target
        .data_mut()
        .par_chunks_mut(width)
        .with_min_len(MIN_ROWS_PER_TASK)
        .skip(skip)
        .take(common.height as usize)
        .enumerate()
        .for_each(|(i, row)| f(common.y + i as i64, xs, &mut row[offset..offset + len]));
}

/// On the intersection of the extents, `h = f(h, a)`; pixels outside it are left alone.
pub fn zip1(target: &mut HeightMap, a: &HeightMap, f: impl Fn(f32, f32) -> f32 + Sync + Send) {
    let common = target.rect().intersect(&a.rect());
    for_each_common_row(target, common, |py, xs, row| {
        for (h, &s) in row.iter_mut().zip(a.row_span(py, xs)) {
            *h = f(*h, s);
        }
    });
}

/// On the intersection of the three extents, `h = f(h, a, b)`; pixels outside it are left alone.
pub fn zip2(target: &mut HeightMap, a: &HeightMap, b: &HeightMap, f: impl Fn(f32, f32, f32) -> f32 + Sync + Send) {
    let common = target.rect().intersect(&a.rect()).intersect(&b.rect());
    for_each_common_row(target, common, |py, xs, row| {
        for ((h, &va), &vb) in row.iter_mut().zip(a.row_span(py, xs)).zip(b.row_span(py, xs)) {
            *h = f(*h, va, vb);
        }
    });
}

/// Copies `src` into `dst` (equal lengths) in parallel, in chunks of whole bands.
pub fn parallel_copy(dst: &mut [f32], src: &[f32]) {
    const CHUNK: usize = BAND_BYTES / 4;
    dst.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// Sets every element of `dst` to `value`, in parallel.
pub fn parallel_fill(dst: &mut [f32], value: f32) {
    const CHUNK: usize = BAND_BYTES / 4;
    dst.par_chunks_mut(CHUNK).for_each(|d| d.fill(value));
}

/// The memory floor of one pass over a map: nanoseconds per pixel of a parallel copy of `pixels`
/// `f32` (one read and one write each) on the current rayon pool, the median of `runs` copies
/// after a warm-up. Kernels are reported as multiples of it (`geogen render --profile`, benches).
pub fn copy_floor_ns_per_pixel(pixels: usize, runs: usize) -> f64 {
    let pixels = pixels.max(1);
    let src = vec![0.5f32; pixels];
    let mut dst = vec![0.0f32; pixels];
    parallel_copy(&mut dst, &src);
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let started = Instant::now();
            parallel_copy(&mut dst, &src);
            started.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    std::hint::black_box(&dst);
    times[times.len() / 2] * 1e9 / pixels as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_mode_is_scoped_and_loops_cover_every_row() {
        assert!(!in_serial_mode());
        let rect = Rect::new(-3, 7, 5, 41);
        let mut parallel = HeightMap::try_zeroed(rect).unwrap();
        for_each_row(&mut parallel, |py, px, row| {
            for (i, h) in row.iter_mut().enumerate() {
                *h = (py * 100 + px + i as i64) as f32;
            }
        });
        let mut serial = HeightMap::try_zeroed(rect).unwrap();
        serially(|| {
            assert!(in_serial_mode());
            for_each_band(&mut serial, |y0, px, rows| {
                for (r, row) in rows.chunks_mut(5).enumerate() {
                    for (i, h) in row.iter_mut().enumerate() {
                        *h = ((y0 + r as i64) * 100 + px + i as i64) as f32;
                    }
                }
            });
        });
        assert!(!in_serial_mode());
        assert_eq!(parallel, serial);
        let mut banded = HeightMap::try_zeroed(rect).unwrap();
        for_each_band(&mut banded, |y0, px, rows| {
            for (r, row) in rows.chunks_mut(5).enumerate() {
                for (i, h) in row.iter_mut().enumerate() {
                    *h = ((y0 + r as i64) * 100 + px + i as i64) as f32;
                }
            }
        });
        assert_eq!(parallel, banded);
    }

    #[test]
    fn copy_floor_is_positive() {
        assert!(copy_floor_ns_per_pixel(1 << 12, 3) > 0.0);
    }
}
