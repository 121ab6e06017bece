//! One rectangle of one map, rendered as `geogen render SCRIPT --origin X,Y --size WxH --scale S`
//! renders it, and copied row by row into the caller's buffer.

use geogen::diag::{codes, Diagnostic};
use geogen::{HeightMap, MessageMode, Rect, RenderConfig, RunSettings};

use crate::fault::Fault;
use crate::script::{geogen_script, geogen_settings};

/// The rectangle asked for, in physical pixels.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Request<'a> {
    pub map: &'a str,
    pub x: i64,
    pub y: i64,
    pub width: u32,
    pub height: u32,
    pub scale: f64,
}

impl Request<'_> {
    fn rect(&self) -> Rect {
        Rect { x: self.x, y: self.y, width: u64::from(self.width), height: u64::from(self.height) }
    }
}

/// Where the rows go: `rows` rows of `width` elements, `stride` elements apart.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Layout {
    pub width: usize,
    pub rows: usize,
    pub stride: usize,
}

impl Layout {
    /// Checks that the buffer this layout describes is addressable: the stride is at least a
    /// row and the last element's offset, in bytes, fits in `isize`.
    pub fn check<T>(width: u32, height: u32, stride: usize) -> Result<Layout, Fault> {
        let width = usize::try_from(width).map_err(|_| Fault::invalid("the width does not fit in memory"))?;
        let rows = usize::try_from(height).map_err(|_| Fault::invalid("the height does not fit in memory"))?;
        if stride < width {
            return Err(Fault::invalid(format!(
                "the row stride {stride} is shorter than a row of {width} pixels (the stride counts elements, not bytes)"
            )));
        }
        let elements = rows.saturating_sub(1).checked_mul(stride).and_then(|n| n.checked_add(width));
        let bytes = elements.and_then(|n| n.checked_mul(std::mem::size_of::<T>()));
        if bytes.is_none_or(|b| b > isize::MAX as usize) {
            return Err(Fault::invalid(format!(
                "a buffer of {height} rows {stride} elements apart is larger than memory can address"
            )));
        }
        Ok(Layout { width, rows, stride })
    }
}

/// Renders the request's map over exactly its rectangle.
pub(crate) fn render(
    script: &geogen_script,
    settings: &geogen_settings,
    request: &Request<'_>,
) -> Result<HeightMap, Fault> {
    if !script.maps.iter().any(|(name, _)| name == request.map) {
        let names: Vec<&str> = script.maps.iter().map(|(name, _)| name.as_str()).collect();
        return Err(Fault::host(
            Diagnostic::new(codes::GGE4000, format!("the script yields no map named \"{}\"", request.map))
                .with_hint(format!("it yields: {}", names.join(", "))),
        ));
    }
    if request.width == 0 || request.height == 0 {
        return Err(Fault::host(Diagnostic::new(
            codes::GGE4003,
            format!("the rectangle is {}x{} pixels: both sides must be at least 1", request.width, request.height),
        )));
    }
    let limits = settings.limits_for(script)?;
    let run = RunSettings {
        seed: settings.seed,
        parameters: settings.parameters.clone(),
        map_width: settings.map_width,
        map_height: settings.map_height,
        render_origin: (request.x, request.y),
        render_width: Some(request.width),
        render_height: Some(request.height),
        render_scale: request.scale,
        limits: limits.script.clone(),
        maps: Some(vec![request.map.to_string()]),
        // Print output has nowhere to go; streamed to nothing, it is not kept on the script heap.
        messages: MessageMode::stream(|_| {}),
        ..RunSettings::default()
    };
    let geometry = script.script.geometry(&run).map_err(|d| Fault::from_failure(&script.script.failure(d)))?;
    let wanted = request.rect();
    if geometry.yield_rect() != wanted {
        let extent = |size: Option<u32>| match size {
            Some(size) => format!("{}", (f64::from(size) * request.scale).floor()),
            None => "unbounded".to_string(),
        };
        return Err(Fault::host(
            Diagnostic::new(
                codes::GGE4003,
                format!(
                    "the rectangle of {}x{} pixels at {},{} reaches outside the finite map, which spans {} x {} pixels from 0,0 at scale {}",
                    request.width,
                    request.height,
                    request.x,
                    request.y,
                    extent(geometry.map_width),
                    extent(geometry.map_height),
                    request.scale
                ),
            )
            .with_hint("set the map size (geogen_settings_set_map_size) and render rectangles inside it"),
        ));
    }
    let config = RenderConfig {
        memory_limit: limits.memory_bytes,
        max_solve_cells: limits.solve_cells,
        ..RenderConfig::default()
    };
    let mut rendered = script.script.render(&run, &config, None).map_err(|failure| Fault::from_failure(&failure))?;
    match rendered.maps.remove(request.map) {
        Some(map) if map.rect() == wanted => Ok(map),
        Some(map) => {
            Err(internal(format!("the map \"{}\" was rendered over {} instead of {wanted}", request.map, map.rect())))
        }
        None => Err(internal(format!("the render returned no map \"{}\"", request.map))),
    }
}

fn internal(message: String) -> Fault {
    Fault::host(Diagnostic::new(codes::GGE5000, format!("internal error: {message}")))
}

/// Copies the map's rows into the caller's buffer, each converted by `convert` (a row of heights
/// into a row of samples of the same length).
///
/// # Safety
///
/// `out` points to a writable buffer of the shape `layout` describes (checked by
/// [`Layout::check`]), that nothing else uses meanwhile.
pub(crate) unsafe fn copy_rows<T>(
    map: &HeightMap,
    layout: Layout,
    out: *mut T,
    mut convert: impl FnMut(&[f32], &mut [T]),
) {
    for (j, row) in map.data().chunks_exact(layout.width).take(layout.rows).enumerate() {
        // SAFETY: row j starts j × stride elements in and holds `width` elements, all inside the
        // buffer by this function's contract (the last row ends at (rows − 1) × stride + width).
        let target = unsafe { std::slice::from_raw_parts_mut(out.add(j * layout.stride), layout.width) };
        convert(row, target);
    }
}

/// The least and greatest of some values (NaN never counts; `None` when there is nothing else).
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Range<T> {
    pub bounds: Option<(T, T)>,
}

impl<T: PartialOrd + Copy> Range<T> {
    pub fn add_all(&mut self, values: &[T]) {
        for &v in values {
            #[allow(clippy::eq_op)] // v != v: NaN, which has no place in a range
            if v != v {
                continue;
            }
            self.bounds = Some(match self.bounds {
                None => (v, v),
                Some((lo, hi)) => (if v < lo { v } else { lo }, if v > hi { v } else { hi }),
            });
        }
    }
}

/// 16-bit samples of a row of heights, exactly as the command line's `--format r16` writes them:
/// through the same quantiser (`geogen_io::quantize::u16_le`), read back as native integers.
pub(crate) fn quantize_row(heights: &[f32], samples: &mut [u16], scratch: &mut Vec<u8>) {
    scratch.resize(heights.len() * 2, 0);
    geogen_io::quantize::u16_le(heights, scratch);
    for (sample, bytes) in samples.iter_mut().zip(scratch.chunks_exact(2)) {
        *sample = u16::from_le_bytes([bytes[0], bytes[1]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_checked() {
        assert!(Layout::check::<f32>(10, 5, 10).is_ok());
        assert!(Layout::check::<f32>(10, 5, 9).is_err(), "a stride shorter than a row");
        assert!(Layout::check::<f32>(10, 5, usize::MAX / 2).is_err(), "past the address space");
        assert!(Layout::check::<f32>(10, 1, usize::MAX / 2).is_ok(), "one row: the stride is never used");
    }

    #[test]
    fn ranges_skip_nan() {
        let mut range = Range::default();
        range.add_all(&[0.5f32, f32::NAN, -0.25, 0.75]);
        assert_eq!(range.bounds, Some((-0.25, 0.75)));
        let mut empty = Range::<f32>::default();
        empty.add_all(&[f32::NAN]);
        assert_eq!(empty.bounds, None);
    }

    #[test]
    fn samples_are_those_of_r16_files() {
        let heights = [-1.0f32, 0.0, 1.0, 0.5, -0.5, 1e-30, 2.0, f32::NAN, 0.25, -0.75];
        let mut samples = [0u16; 10];
        quantize_row(&heights, &mut samples, &mut Vec::new());
        let expected: Vec<u16> = heights.iter().map(|&h| geogen_io::quantize::to_u16(h)).collect();
        assert_eq!(samples.as_slice(), expected.as_slice());
        assert_eq!(&samples[..3], &[0, 32767, 65534]);
    }
}
