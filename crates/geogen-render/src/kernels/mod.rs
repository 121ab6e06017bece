//! The parallel loops every kernel shares (the kernels themselves live with their operations, in
//! the standard library).
//!
//! Determinism rules (spec §4): each output pixel is computed by exactly one thread, from its
//! inputs, in a fixed order that does not depend on where the buffer starts or how rows are split
//! among threads; no FMA (`mul_add`), no platform math (only IEEE basic operations and `libm`).
//! Parallelism is across rows (rayon); a row's computation depends only on its absolute `y`.

use rayon::prelude::*;

use crate::geometry::{Interval, Rect};
use crate::raster::HeightMap;

/// Minimum rows per rayon task, so tiny maps do not drown in scheduling overhead.
const MIN_ROWS_PER_TASK: usize = 8;

/// Calls `f(absolute_y, absolute_x_of_first_pixel, row)` for every row, in parallel.
pub fn for_each_row(map: &mut HeightMap, f: impl Fn(i64, i64, &mut [f32]) + Sync + Send) {
    let rect = map.rect();
    if rect.is_empty() {
        return;
    }
    let width = map.width();
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
