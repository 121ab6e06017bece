//! The container of `tiff` output: one channel of 32-bit IEEE floats, uncompressed, in strips, laid out
//! so that everything but the pixels comes first.
//!
//! Uncompressed strips have sizes known from the image's dimensions alone, so the header, the one image
//! file directory and its two arrays (where each strip starts, how long it is) are written before the
//! first pixel, and the strips follow in order. Nothing is patched afterwards: the writer never seeks, a
//! map is written strip by strip as the renderer produces it ([`crate::StreamWriter`]), and the bytes are
//! the same as for the whole map at once.
//!
//! Little-endian throughout. Files whose size would pass 4 GiB − 1 (the reach of classic TIFF's 32-bit
//! offsets) are BigTIFF (version 43, 64-bit offsets and counts), which GDAL, libtiff 4 and the `tiff`
//! crate read.

/// Rows per strip: as many as fit in about 64 KiB (at least one): small enough for a reader to fetch a
/// region without much waste, few enough strips that the arrays stay small (a 100 000-pixel-wide map
/// has one row per strip, 400 KB, and 100 000 strips: 1.6 MB of arrays in BigTIFF).
const STRIP_TARGET_BYTES: u64 = 64 << 10;

/// Where the pixel data starts is rounded up to this, so every strip of whole rows of floats is
/// aligned for readers that map the file.
const DATA_ALIGNMENT: u64 = 16;

/// TIFF field types used here.
const SHORT: u16 = 3;
const LONG: u16 = 4;
const LONG8: u16 = 16;

/// The layout of one image: everything derived from its width and height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Layout {
    width: u64,
    height: u64,
    big: bool,
    rows_per_strip: u64,
    strips: u64,
    /// Byte offset of the first strip (after the header, directory and arrays, aligned).
    data_start: u64,
}

impl Layout {
    /// The layout of a `width × height` image (both at least 1: `check_dimensions` refuses empty
    /// images before any encoder starts).
    pub(crate) fn new(width: u32, height: u32) -> Layout {
        debug_assert!(width > 0 && height > 0);
        let (width, height) = (u64::from(width), u64::from(height));
        let row_bytes = width * 4;
        let rows_per_strip = (STRIP_TARGET_BYTES / row_bytes).clamp(1, height);
        let strips = height.div_ceil(rows_per_strip);
        let classic = Layout::with(width, height, false, rows_per_strip, strips);
        if classic.file_len() <= u64::from(u32::MAX) {
            classic
        } else {
            Layout::with(width, height, true, rows_per_strip, strips)
        }
    }

    fn with(width: u64, height: u64, big: bool, rows_per_strip: u64, strips: u64) -> Layout {
        let mut layout = Layout { width, height, big, rows_per_strip, strips, data_start: 0 };
        let arrays = if strips > 1 { 2 * strips * layout.offset_bytes() } else { 0 };
        layout.data_start = (layout.header_len() + layout.directory_len() + arrays).next_multiple_of(DATA_ALIGNMENT);
        layout
    }

    /// Bytes of an offset or count in the arrays: 4 (LONG) or 8 (LONG8 in BigTIFF).
    fn offset_bytes(&self) -> u64 {
        if self.big {
            8
        } else {
            4
        }
    }

    fn header_len(&self) -> u64 {
        if self.big {
            16
        } else {
            8
        }
    }

    fn directory_len(&self) -> u64 {
        let entries = ENTRIES as u64;
        if self.big {
            8 + entries * 20 + 8
        } else {
            2 + entries * 12 + 4
        }
    }

    /// The length of the whole file.
    pub(crate) fn file_len(&self) -> u64 {
        self.data_start + self.width * self.height * 4
    }

    /// Bytes of strip `k` (the last may hold fewer rows).
    fn strip_len(&self, k: u64) -> u64 {
        let rows = self.rows_per_strip.min(self.height - k * self.rows_per_strip);
        rows * self.width * 4
    }

    /// Whether the file is BigTIFF.
    #[cfg(test)]
    pub(crate) fn is_big(&self) -> bool {
        self.big
    }

    /// Everything before the first pixel: header, directory, strip offsets and byte counts, padding.
    pub(crate) fn prefix(&self) -> Vec<u8> {
        let mut out = Prefix { bytes: Vec::with_capacity(self.data_start as usize), big: self.big };
        let arrays_at = self.header_len() + self.directory_len();
        let strip_arrays = self.strips > 1;
        let counts_at = arrays_at + self.strips * self.offset_bytes();
        // Header: byte order, version (42, or 43 with the offset size for BigTIFF), first directory.
        out.bytes.extend_from_slice(b"II");
        if self.big {
            out.u16(43);
            out.u16(8);
            out.u16(0);
        } else {
            out.u16(42);
        }
        out.offset(self.header_len());
        // The directory, its entries in ascending tag order.
        out.count(ENTRIES as u64);
        let array_type = if self.big { LONG8 } else { LONG };
        let (width, height) = (self.width, self.height);
        let inline_or = |at: u64| if strip_arrays { at } else { self.data_start };
        let single_len = if strip_arrays { counts_at } else { self.strip_len(0) };
        let entries: [(u16, u16, u64, u64); ENTRIES] = [
            (256, LONG, 1, width),                                // ImageWidth
            (257, LONG, 1, height),                               // ImageLength
            (258, SHORT, 1, 32),                                  // BitsPerSample
            (259, SHORT, 1, 1),                                   // Compression: none
            (262, SHORT, 1, 1),                                   // PhotometricInterpretation: BlackIsZero
            (273, array_type, self.strips, inline_or(arrays_at)), // StripOffsets
            (277, SHORT, 1, 1),                                   // SamplesPerPixel
            (278, LONG, 1, self.rows_per_strip),                  // RowsPerStrip
            (279, array_type, self.strips, single_len),           // StripByteCounts
            (284, SHORT, 1, 1),                                   // PlanarConfiguration: contiguous
            (339, SHORT, 1, 3),                                   // SampleFormat: IEEE floating point
        ];
        for (tag, kind, count, value) in entries {
            out.entry(tag, kind, count, value);
        }
        out.offset(0); // no next directory
        if strip_arrays {
            for k in 0..self.strips {
                out.offset(self.data_start + k * self.rows_per_strip * self.width * 4);
            }
            for k in 0..self.strips {
                out.offset(self.strip_len(k));
            }
        }
        out.bytes.resize(self.data_start as usize, 0);
        out.bytes
    }
}

/// Directory entries written.
const ENTRIES: usize = 11;

/// The bytes before the pixels, being built.
struct Prefix {
    bytes: Vec<u8>,
    big: bool,
}

impl Prefix {
    fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// An offset (or an array element): 4 bytes, or 8 in BigTIFF. Classic values fit: the layout is
    /// BigTIFF whenever the file passes `u32::MAX`.
    fn offset(&mut self, v: u64) {
        if self.big {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        } else {
            self.bytes.extend_from_slice(&(v as u32).to_le_bytes());
        }
    }

    /// A directory's entry count: 2 bytes, or 8 in BigTIFF.
    fn count(&mut self, n: u64) {
        if self.big {
            self.bytes.extend_from_slice(&n.to_le_bytes());
        } else {
            self.u16(n as u16);
        }
    }

    /// One directory entry; `value` is the value itself when it fits the entry's value field (left
    /// justified, as TIFF wants), else the offset of the values.
    fn entry(&mut self, tag: u16, kind: u16, count: u64, value: u64) {
        self.u16(tag);
        self.u16(kind);
        self.offset(count);
        let field = if self.big { 8 } else { 4 };
        let start = self.bytes.len();
        match kind {
            SHORT if count == 1 => self.u16(value as u16),
            LONG if count == 1 => self.bytes.extend_from_slice(&(value as u32).to_le_bytes()),
            _ => self.offset(value),
        }
        self.bytes.resize(start + field, 0);
    }
}

/// The little-endian bytes of a run of heights as TIFF stores them: the raw `f32`, NaN written as 0.
/// `out.len()` must be `4 × heights.len()`.
pub(crate) fn f32_le(heights: &[f32], out: &mut [u8]) {
    for (h, bytes) in heights.iter().zip(out.chunks_exact_mut(4)) {
        let h = if h.is_nan() { 0.0 } else { *h };
        bytes.copy_from_slice(&h.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16_at(b: &[u8], at: u64) -> u16 {
        u16::from_le_bytes([b[at as usize], b[at as usize + 1]])
    }
    fn u32_at(b: &[u8], at: u64) -> u32 {
        u32::from_le_bytes(b[at as usize..at as usize + 4].try_into().unwrap())
    }
    fn u64_at(b: &[u8], at: u64) -> u64 {
        u64::from_le_bytes(b[at as usize..at as usize + 8].try_into().unwrap())
    }

    /// The entries of the first directory of a classic or BigTIFF prefix: (tag, type, count, value).
    fn entries(b: &[u8]) -> Vec<(u16, u16, u64, u64)> {
        let big = u16_at(b, 2) == 43;
        if big {
            let at = u64_at(b, 8);
            let n = u64_at(b, at);
            (0..n)
                .map(|i| {
                    let e = at + 8 + i * 20;
                    (u16_at(b, e), u16_at(b, e + 2), u64_at(b, e + 4), u64_at(b, e + 12))
                })
                .collect()
        } else {
            let at = u64::from(u32_at(b, 4));
            let n = u64::from(u16_at(b, at));
            (0..n)
                .map(|i| {
                    let e = at + 2 + i * 12;
                    let kind = u16_at(b, e + 2);
                    let count = u64::from(u32_at(b, e + 4));
                    let value = if kind == SHORT && count == 1 {
                        u64::from(u16_at(b, e + 8))
                    } else {
                        u64::from(u32_at(b, e + 8))
                    };
                    (u16_at(b, e), kind, count, value)
                })
                .collect()
        }
    }

    #[test]
    fn strips_are_whole_rows_of_about_64_kib_and_cover_the_image() {
        for (w, h) in [(1, 1), (3, 5), (16384, 3), (16385, 2), (100, 1000), (100_000, 7)] {
            let l = Layout::new(w, h);
            assert!(l.rows_per_strip >= 1 && l.rows_per_strip <= u64::from(h));
            assert!(l.rows_per_strip == 1 || l.rows_per_strip * u64::from(w) * 4 <= STRIP_TARGET_BYTES);
            let total: u64 = (0..l.strips).map(|k| l.strip_len(k)).sum();
            assert_eq!(total, u64::from(w) * u64::from(h) * 4, "{w}×{h}");
            assert_eq!(l.data_start % DATA_ALIGNMENT, 0);
            assert_eq!(l.prefix().len() as u64, l.data_start);
        }
    }

    #[test]
    fn the_directory_points_at_consecutive_strips_after_the_prefix() {
        for (w, h) in [(1, 1), (53, 41), (5000, 30)] {
            let l = Layout::new(w, h);
            let b = l.prefix();
            assert_eq!(&b[..4], b"II*\0");
            let e = entries(&b);
            let tags: Vec<u16> = e.iter().map(|e| e.0).collect();
            assert_eq!(tags, [256, 257, 258, 259, 262, 273, 277, 278, 279, 284, 339], "ascending");
            let get = |tag: u16| *e.iter().find(|e| e.0 == tag).unwrap();
            assert_eq!((get(256).3, get(257).3), (u64::from(w), u64::from(h)));
            assert_eq!((get(258).3, get(259).3, get(277).3, get(339).3), (32, 1, 1, 3));
            let (offsets, counts) = (get(273), get(279));
            assert_eq!((offsets.2, counts.2), (l.strips, l.strips));
            let (starts, lens): (Vec<u64>, Vec<u64>) = if l.strips == 1 {
                (vec![offsets.3], vec![counts.3])
            } else {
                let read = |at: u64| (0..l.strips).map(|k| u64::from(u32_at(&b, at + 4 * k))).collect::<Vec<_>>();
                (read(offsets.3), read(counts.3))
            };
            let mut next = l.data_start;
            for (start, len) in starts.iter().zip(&lens) {
                assert_eq!(*start, next);
                next += len;
            }
            assert_eq!(next, l.file_len());
        }
    }

    #[test]
    fn files_past_4_gib_are_bigtiff_with_64_bit_offsets() {
        // 40 000 × 30 000 floats: 4.8 GB of pixels.
        let l = Layout::new(40_000, 30_000);
        assert!(l.is_big());
        assert!(l.file_len() > u64::from(u32::MAX));
        let b = l.prefix();
        assert_eq!(&b[..8], &[b'I', b'I', 43, 0, 8, 0, 0, 0]);
        let e = entries(&b);
        let offsets = *e.iter().find(|e| e.0 == 273).unwrap();
        assert_eq!((offsets.1, offsets.2), (LONG8, 30_000));
        let last = u64_at(&b, offsets.3 + 8 * (l.strips - 1));
        assert_eq!(last, l.file_len() - l.strip_len(l.strips - 1));
        assert!(last > u64::from(u32::MAX), "an offset past 4 GiB is stored whole");
        // Just under the limit stays classic.
        assert!(!Layout::new(32_768, 32_000).is_big());
    }

    /// Whether the layout is BigTIFF exactly when the classic one would pass `u32::MAX`, on sizes
    /// around that line.
    #[test]
    fn bigtiff_starts_exactly_past_the_reach_of_32_bit_offsets() {
        for width in [16_384u32, 32_768, 65_535, 100_000] {
            let rows_at_limit = (u64::from(u32::MAX) / (u64::from(width) * 4)) as u32;
            for height in rows_at_limit.saturating_sub(2)..=rows_at_limit + 2 {
                let l = Layout::new(width, height);
                let classic = Layout::with(l.width, l.height, false, l.rows_per_strip, l.strips);
                assert_eq!(l.is_big(), classic.file_len() > u64::from(u32::MAX), "{width}×{height}");
            }
        }
    }

    /// A real reader (the `tiff` crate) decodes the floats bit for bit from several strips with a
    /// short last one, in classic TIFF and in BigTIFF (forced on a small image).
    #[test]
    fn the_tiff_crate_reads_every_strip_in_classic_and_bigtiff() {
        use tiff::decoder::{Decoder, DecodingResult};
        let (w, h) = (300u32, 100u32);
        let heights: Vec<f32> = (0..w * h).map(|i| ((i * 37 % 1001) as f32 / 500.0) - 1.0).collect();
        let classic = Layout::new(w, h);
        let big = Layout::with(classic.width, classic.height, true, classic.rows_per_strip, classic.strips);
        assert!(classic.strips >= 2 && u64::from(h) % classic.rows_per_strip != 0, "a short last strip");
        for layout in [classic, big] {
            let mut file = layout.prefix();
            let mut pixels = vec![0u8; heights.len() * 4];
            f32_le(&heights, &mut pixels);
            file.extend_from_slice(&pixels);
            assert_eq!(file.len() as u64, layout.file_len());
            let mut decoder = Decoder::new(std::io::Cursor::new(file)).expect("header");
            assert_eq!(decoder.dimensions().expect("dimensions"), (w, h));
            match decoder.read_image().expect("pixels") {
                DecodingResult::F32(read) => {
                    assert!(read.iter().zip(&heights).all(|(a, b)| a.to_bits() == b.to_bits()), "big: {}", layout.big)
                }
                _ => panic!("not f32"),
            }
        }
    }

    #[test]
    fn heights_are_raw_little_endian_floats_with_nan_as_zero() {
        let heights = [1.5, -0.0, f32::NAN, -2.25, f32::INFINITY];
        let mut out = [0u8; 20];
        f32_le(&heights, &mut out);
        let back: Vec<u32> = out.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(back, [1.5f32.to_bits(), (-0.0f32).to_bits(), 0, (-2.25f32).to_bits(), f32::INFINITY.to_bits()]);
    }
}
