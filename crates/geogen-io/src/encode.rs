//! The encoders. Each writes one format into any [`Write`] (plus [`Seek`] for EXR, whose library
//! patches offsets), so the same code serves [`encode`](crate::encode) (into memory),
//! [`write`](crate::write) (into a temporary file) and [`StreamWriter`](crate::StreamWriter).

use std::io::{self, Seek, Write};

use crate::parpng::{is_pieced, ParallelPng};
use crate::sink::Shared;
use crate::{palette, quantize, Format, HeightField, StreamError};

/// Why an encoder stopped; the public API adds the path and turns it into an [`IoError`](crate::IoError).
#[derive(Debug)]
pub(crate) enum Failure {
    /// The output refused bytes.
    Io(io::Error),
    /// The image library failed for a reason other than I/O.
    Encode(Box<dyn std::error::Error + Send + Sync>),
    /// Rows that do not fit the declared image.
    Stream(StreamError),
}

/// PNG compression settings shared by every PNG flavour, whole or streamed, so both paths produce
/// identical bytes. Chosen with `benches/writers.rs` on a 1024² terrain field: the default deflate level
/// took ~6× as long for a 4% smaller PNG16, and Paeth (or adaptive) filtering ~25% longer for 5%
/// smaller; the fast level with the Up filter (terrain rows predict each other well) is the balance.
/// Images of more than one piece use geogen's own coder on every core instead ([`crate::parpng`]),
/// with the same Up filter.
const PNG_COMPRESSION: png::Compression = png::Compression::Fast;
const PNG_FILTER: png::FilterType = png::FilterType::Up;

/// Encodes whole rows of one of the row formats (PNG16, PNG8, R16, TIFF, colored, and the hillshade's gray
/// bytes) into `W`, one row at a time.
pub(crate) struct RowEncoder<W: Write + 'static> {
    format: Format,
    width: usize,
    height: u32,
    rows_done: u64,
    out: Shared<W>,
    /// `None` for R16 and TIFF, whose samples are written raw (TIFF's after its prefix), and for PNGs of
    /// more than one piece.
    png: Option<png::StreamWriter<'static, Shared<W>>>,
    /// PNGs of more than one piece, compressed on every core (see [`crate::parpng`]).
    pieced: Option<ParallelPng>,
    /// One converted row.
    row: Vec<u8>,
    /// Set once anything fails: a half-written row can't be resumed.
    poisoned: bool,
}

impl<W: Write + 'static> RowEncoder<W> {
    /// Starts an image of `width × height` pixels (both non-zero, checked by the caller). Writes the PNG
    /// header immediately.
    pub(crate) fn new(format: Format, width: u32, height: u32, out: W) -> Result<Self, Failure> {
        let out = Shared::new(out);
        // The PNG colour type and bit depth of the PNG formats; none for the raw ones: R16, and TIFF's
        // floats after its prefix (see `tiff32.rs`).
        let (png_kind, bytes_per_pixel) = match format {
            Format::Png16 => (Some((png::ColorType::Grayscale, png::BitDepth::Sixteen)), 2),
            Format::Png8 | Format::Hillshade => (Some((png::ColorType::Grayscale, png::BitDepth::Eight)), 1),
            Format::Colored => (Some((png::ColorType::Rgb, png::BitDepth::Eight)), 3),
            Format::R16 => (None, 2),
            Format::Tiff32 => (None, 4),
            Format::Exr
            | Format::Cog
            | Format::Normal
            | Format::Slope
            | Format::Curvature
            | Format::Splat
            | Format::Glb
            | Format::Obj => {
                return Err(Failure::Encode(format!("{format} is not a row format").into()));
            }
        };
        let row_bytes = width as usize * bytes_per_pixel;
        let mut pieced = None;
        let png = match png_kind {
            None => {
                if format == Format::Tiff32 {
                    let prefix = crate::tiff32::Layout::new(width, height).prefix();
                    out.clone().write_all(&prefix).map_err(|e| io_failure(&out, e))?;
                }
                None
            }
            Some((color, depth)) if is_pieced(row_bytes, height) => {
                let depth = if depth == png::BitDepth::Sixteen { 16 } else { 8 };
                let color = if color == png::ColorType::Rgb { 2 } else { 0 };
                let mut sink = out.clone();
                let started = ParallelPng::start(&mut sink, width, height, depth, color, bytes_per_pixel);
                pieced = Some(started.map_err(|e| io_failure(&out, e))?);
                None
            }
            Some((color, depth)) => {
                let mut encoder = png::Encoder::new(out.clone(), width, height);
                encoder.set_color(color);
                encoder.set_depth(depth);
                encoder.set_compression(PNG_COMPRESSION);
                encoder.set_filter(PNG_FILTER);
                let result = encoder.write_header().and_then(|w| w.into_stream_writer());
                Some(result.map_err(|e| png_failure(&out, e))?)
            }
        };
        let width = width as usize;
        Ok(RowEncoder {
            format,
            width,
            height,
            rows_done: 0,
            out,
            png,
            pieced,
            row: vec![0; width * bytes_per_pixel],
            poisoned: false,
        })
    }

    /// Converts and writes whole rows of heights, top to bottom.
    pub(crate) fn write_rows(&mut self, heights: &[f32]) -> Result<(), Failure> {
        self.check_rows(heights.len())?;
        if self.pieced.is_some() {
            // Converted by the pieces that compress them, on every core (see `ParallelPng::push_rows`).
            let convert: fn(&[f32], &mut [u8]) = match self.format {
                Format::Png16 => quantize::u16_be,
                Format::Png8 => quantize::u8s,
                Format::Colored => palette::colors,
                _ => return Err(Failure::Encode(format!("{} rows are not heights", self.format).into())),
            };
            let width = self.width;
            return self.push_pieced(heights, width, &convert);
        }
        for line in heights.chunks_exact(self.width) {
            match self.format {
                Format::Png16 => quantize::u16_be(line, &mut self.row),
                Format::R16 => quantize::u16_le(line, &mut self.row),
                Format::Tiff32 => crate::tiff32::f32_le(line, &mut self.row),
                Format::Png8 => quantize::u8s(line, &mut self.row),
                Format::Colored => palette::colors(line, &mut self.row),
                // Hillshade rows arrive as bytes through `write_byte_rows`; `new` ruled out the rest.
                _ => {
                    return Err(Failure::Encode(format!("{} rows are not heights", self.format).into()));
                }
            }
            self.emit_row()?;
        }
        Ok(())
    }

    /// Writes already-converted rows (one byte per pixel) of an 8-bit gray image.
    fn write_byte_rows(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.check_rows(bytes.len())?;
        if self.pieced.is_some() {
            let width = self.width;
            return self.push_pieced(bytes, width, &|line: &[u8], row: &mut [u8]| row.copy_from_slice(line));
        }
        for line in bytes.chunks_exact(self.width) {
            self.row.copy_from_slice(line);
            self.emit_row()?;
        }
        Ok(())
    }

    fn check_rows(&mut self, samples: usize) -> Result<(), Failure> {
        if self.poisoned {
            return Err(Failure::Stream(StreamError::Poisoned));
        }
        if !samples.is_multiple_of(self.width) {
            return Err(Failure::Stream(StreamError::PartialRow { len: samples, width: self.width as u32 }));
        }
        let given = self.rows_done + (samples / self.width) as u64;
        if given > u64::from(self.height) {
            return Err(Failure::Stream(StreamError::TooManyRows { given, height: self.height }));
        }
        Ok(())
    }

    /// Hands whole rows of `per_row` samples each to the pieced encoder, which converts them with
    /// `convert` as its pieces need them.
    fn push_pieced<T: Sync>(
        &mut self,
        src: &[T],
        per_row: usize,
        convert: &(impl Fn(&[T], &mut [u8]) + Sync),
    ) -> Result<(), Failure> {
        let Some(pieced) = self.pieced.as_mut() else {
            return Err(Failure::Encode("not a pieced image".into()));
        };
        let mut sink = self.out.clone();
        if let Err(e) = pieced.push_rows(&mut sink, src, per_row, convert) {
            self.poisoned = true;
            return Err(io_failure(&self.out, e));
        }
        self.rows_done += (src.len() / per_row) as u64;
        Ok(())
    }

    fn emit_row(&mut self) -> Result<(), Failure> {
        let result = match &mut self.png {
            Some(png) => png.write_all(&self.row),
            None => self.out.write_all(&self.row),
        };
        if let Err(e) = result {
            self.poisoned = true;
            return Err(io_failure(&self.out, e));
        }
        self.rows_done += 1;
        Ok(())
    }

    /// Completes the image and hands back the output writer (not yet flushed, if it buffers).
    pub(crate) fn finish(mut self) -> Result<W, Failure> {
        if self.poisoned {
            return Err(Failure::Stream(StreamError::Poisoned));
        }
        if self.rows_done != u64::from(self.height) {
            return Err(Failure::Stream(StreamError::MissingRows { written: self.rows_done, height: self.height }));
        }
        if let Some(pieced) = self.pieced.take() {
            let mut sink = self.out.clone();
            pieced.finish(&mut sink).map_err(|e| io_failure(&self.out, e))?;
        }
        if let Some(png) = self.png.take() {
            png.finish().map_err(|e| png_failure(&self.out, e))?;
            // Dropping the stream writer (inside `finish`) wrote the zlib trailer, the last IDAT chunk
            // and IEND into `out`, discarding errors; `Shared` kept them, and `take` reports them.
        }
        self.out.take().map_err(Failure::Io)
    }
}

/// Classifies a png error, preferring the I/O error the output recorded (the png crate may have
/// rewrapped or dropped it).
fn png_failure<W: Write>(out: &Shared<W>, e: png::EncodingError) -> Failure {
    match (out.error(), e) {
        (Some(io), _) => Failure::Io(io),
        (None, png::EncodingError::IoError(io)) => Failure::Io(io),
        (None, other) => Failure::Encode(Box::new(other)),
    }
}

fn io_failure<W: Write>(out: &Shared<W>, e: io::Error) -> Failure {
    match out.error() {
        Some(io) => Failure::Io(io),
        // The png stream writer reports its own format errors as io::Error too.
        None if e.kind() == io::ErrorKind::Other => Failure::Encode(Box::new(e)),
        None => Failure::Io(e),
    }
}

/// Encodes a validated field in `format` into `out`, returning `out` (unflushed).
pub(crate) fn encode_into<W: Write + Seek + 'static>(
    format: Format,
    field: &HeightField,
    mut out: W,
) -> Result<W, Failure> {
    match format {
        Format::Png16 | Format::Png8 | Format::R16 | Format::Colored | Format::Tiff32 => {
            let mut rows = RowEncoder::new(format, field.width, field.height, out)?;
            rows.write_rows(field.data)?;
            rows.finish()
        }
        Format::Exr => {
            write_exr(field, &mut out)?;
            Ok(out)
        }
        Format::Cog => {
            let surface = crate::derived::Surface::whole(*field);
            let bytes = crate::cog::encode(&surface, &crate::ExportOptions::default())
                .map_err(|e| Failure::Encode(e.into()))?;
            out.write_all(&bytes).map_err(Failure::Io)?;
            Ok(out)
        }
        Format::Hillshade
        | Format::Normal
        | Format::Slope
        | Format::Curvature
        | Format::Splat
        | Format::Glb
        | Format::Obj => {
            let surface = crate::derived::Surface::whole(*field);
            let bytes = crate::export::encode_derived(format, &surface, &crate::ExportOptions::default(), &[], "map")
                .map_err(|e| Failure::Encode(e.into()))?;
            out.write_all(&bytes).map_err(Failure::Io)?;
            Ok(out)
        }
    }
}

/// Writes an 8-bit or 16-bit PNG of already converted samples (`bytes` row-major, 16-bit samples
/// big-endian), with the compression settings of every other PNG.
pub(crate) fn encode_png_samples<W: Write>(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    bytes: &[u8],
    out: W,
) -> Result<W, Failure> {
    let out = Shared::new(out);
    let mut encoder = png::Encoder::new(out.clone(), width, height);
    encoder.set_color(color);
    encoder.set_depth(depth);
    encoder.set_compression(PNG_COMPRESSION);
    encoder.set_filter(PNG_FILTER);
    let mut writer = encoder.write_header().map_err(|e| png_failure(&out, e))?;
    writer.write_image_data(bytes).map_err(|e| png_failure(&out, e))?;
    writer.finish().map_err(|e| png_failure(&out, e))?;
    out.take().map_err(Failure::Io)
}

/// Writes an 8-bit grayscale PNG of `width × height` bytes (used by the hillshade).
pub(crate) fn encode_gray8<W: Write + 'static>(width: u32, height: u32, gray: &[u8], out: W) -> Result<W, Failure> {
    let mut rows = RowEncoder::new(Format::Hillshade, width, height, out)?;
    rows.write_byte_rows(gray)?;
    rows.finish()
}

/// Makes every `write` a `write_all`, so that a short write of an image library either completes or
/// becomes an error instead of silently dropping bytes on a nearly full disk (the tiff crate 0.9 did
/// exactly that; kept for the EXR writer, whose buffered output we do not control either).
struct WriteAll<W>(W);

impl<W: Write> Write for WriteAll<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<W: Seek> Seek for WriteAll<W> {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.0.seek(pos)
    }
}

fn write_exr<W: Write + Seek>(field: &HeightField, out: &mut W) -> Result<(), Failure> {
    use exr::prelude::*;
    let width = field.width as usize;
    let data = field.data;
    let pixels = SpecificChannels::build().with_channel("Y").with_pixel_fn(|pos: Vec2<usize>| {
        let h = data[pos.y() * width + pos.x()];
        (if h.is_nan() { 0.0_f32 } else { h },)
    });
    // RLE scan lines in increasing order. Lossless float compression gains little on terrain (the low
    // mantissa bits are noise: ZIP saved ~3% on the bench field at 10× the time of RLE), but RLE still
    // collapses the flat, saturated areas (sea floors clamped at -1, plateaus) that are common in
    // generated maps. Increasing line order keeps the block order, and so the bytes, deterministic.
    // Single-threaded: the exr crate would build a thread pool per file, which fights callers that
    // already write tiles in parallel.
    let encoding =
        Encoding { compression: Compression::RLE, blocks: Blocks::ScanLines, line_order: LineOrder::Increasing };
    let layer = Layer::new((width, field.height as usize), LayerAttributes::default(), encoding, pixels);
    Image::from_layer(layer).write().non_parallel().to_buffered(WriteAll(out)).map_err(|e| match e {
        exr::error::Error::Io(io) => Failure::Io(io),
        other => Failure::Encode(Box::new(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, SeekFrom};

    /// An in-memory file that refuses to grow beyond `cap` bytes, like a full disk.
    struct Capped {
        inner: Cursor<Vec<u8>>,
        cap: u64,
    }

    impl Write for Capped {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let room = self.cap.saturating_sub(self.inner.position());
            if room == 0 && !buf.is_empty() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = buf.len().min(room as usize);
            self.inner.write(&buf[..n])
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Capped {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    #[test]
    fn a_full_disk_is_always_reported_never_a_truncated_success() {
        let (w, h) = (24_u32, 9_u32);
        let data: Vec<f32> = (0..w * h).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
        let field = HeightField { width: w, height: h, data: &data };
        for format in Format::ALL {
            let full = encode_into(format, &field, Cursor::new(Vec::new())).expect("unbounded").into_inner();
            // Cut the output at every length short of complete (for the large outputs, a GeoTIFF's
            // padded tile, at every 4093rd and the last 64): each must fail with the I/O error.
            let len = full.len() as u64;
            let caps: Vec<u64> =
                if len <= 1 << 16 { (0..len).collect() } else { (0..len).step_by(4093).chain(len - 64..len).collect() };
            for cap in caps {
                let out = Capped { inner: Cursor::new(Vec::new()), cap };
                match encode_into(format, &field, out) {
                    Ok(_) => panic!("{format}: a {cap}-byte disk reported success (needs {})", full.len()),
                    Err(Failure::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{format} at {cap}"),
                    Err(other) => panic!("{format} at {cap}: unexpected {other:?}"),
                }
            }
            let exact = Capped { inner: Cursor::new(Vec::new()), cap: full.len() as u64 };
            let out = encode_into(format, &field, exact).expect("exactly enough room");
            assert_eq!(out.inner.into_inner(), full, "{format}");
        }
    }
}
