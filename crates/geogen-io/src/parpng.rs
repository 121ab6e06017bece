//! PNG image data compressed on every core.
//!
//! The rows are cut into pieces of a fixed number of rows, a function of the row length alone (never
//! of the thread count or of how the rows arrive). Each piece is filtered (Up, as every PNG here) and
//! compressed on its own by a [`Compressor`](crate::deflate::Compressor); the pieces,
//! concatenated behind one zlib header and closed by the Adler-32 combined from theirs, form the one
//! zlib stream of the image's IDAT chunks. So an image gives the same bytes whether it is written
//! whole ([`encode`](crate::encode)) or strip by strip ([`StreamWriter`](crate::StreamWriter)), with
//! one thread or many.
//!
//! Images of one piece (under [`PIECE_BYTES`] of rows: tiles, thumbnails, the golden renders) keep the
//! png crate's encoder and its bytes: nothing to share among cores there.

use std::io::{self, Write};

use rayon::prelude::*;

use crate::deflate::{adler32_combine, Compressor};

/// Filtered bytes per piece (about): small enough that a 1000² PNG16 already spreads over 8 cores,
/// large enough that a piece's Huffman table header (about 100 bytes) costs nothing.
pub(crate) const PIECE_BYTES: usize = 256 * 1024;
/// Pieces of a batch, at least (more with more cores): the rows that wait for a batch are fewer than
/// this many pieces, and two batches' filtered and compressed bytes are held (one compressed while
/// the other is written): about 10 MiB with 8, which still gives each of 2 cores 4 pieces per batch.
const BATCH_PIECES: usize = 8;
/// The PNG filter of every row: Up (rows of terrain predict each other well).
const FILTER_UP: u8 = 2;

/// Rows per piece for rows of `row_bytes` bytes (without the filter byte).
pub(crate) fn piece_rows(row_bytes: usize) -> usize {
    (PIECE_BYTES / (row_bytes + 1)).max(1)
}

/// Whether an image is written in pieces: when it has more than one.
pub(crate) fn is_pieced(row_bytes: usize, height: u32) -> bool {
    height as usize > piece_rows(row_bytes)
}

/// A PNG written in pieces: the header at once, the image data batch by batch, IEND at the end.
pub(crate) struct ParallelPng {
    row_bytes: usize,
    /// Bytes per pixel.
    bpp: usize,
    height: u32,
    piece_rows: usize,
    /// Rows received, converted, but not yet compressed (its first `pending_len` bytes; fewer than a
    /// batch); always starts at a piece boundary. The buffer never shrinks, so refilling it writes no
    /// zeros first.
    pending: Vec<u8>,
    pending_len: usize,
    /// The last raw row compressed (the Up filter's row above), zeros before the first row.
    above: Vec<u8>,
    /// Rows received (in `pending` or compressed).
    rows_received: u64,
    /// What was written of the zlib stream.
    stream: ZlibStream,
    /// One per piece of a batch, kept from batch to batch: touching fresh memory costs more than
    /// filtering it.
    slots: Vec<Slot>,
    /// The last batch compressed, its first `ready_pieces` slots, written while the next one is
    /// compressed (then the two swap).
    ready: Vec<Slot>,
    ready_pieces: usize,
}

/// The state of the zlib stream the IDAT chunks carry.
struct ZlibStream {
    /// Adler-32 of the filtered bytes written so far.
    adler: u32,
    wrote_header: bool,
}

impl ZlibStream {
    /// Writes the pieces of `slots` as IDAT chunks, in order; with `last`, the last one carries the
    /// zlib trailer.
    fn write(&mut self, out: &mut impl Write, slots: &[Slot], last: bool) -> io::Result<()> {
        for (i, slot) in slots.iter().enumerate() {
            // CM 8 (deflate), 32 KiB window, FLEVEL 0 (fastest), FCHECK making it a multiple of 31.
            let header: &[u8] = if self.wrote_header { &[] } else { &[0x78, 0x01] };
            self.wrote_header = true;
            self.adler = adler32_combine(self.adler, slot.adler, slot.filtered.len() as u64);
            let checksum = self.adler.to_be_bytes();
            let trailer: &[u8] = if last && i + 1 == slots.len() { &checksum } else { &[] };
            write_chunk_parts(out, b"IDAT", &[header, slot.compressor.output(), trailer])?;
        }
        Ok(())
    }
}

/// A piece's raw rows (two at a time), filtered bytes, compressed bytes and checksum.
#[derive(Default)]
struct Slot {
    filtered: Vec<u8>,
    /// A raw row and the one above it, converted from the samples.
    row: Vec<u8>,
    prior: Vec<u8>,
    compressor: Compressor,
    adler: u32,
}

impl ParallelPng {
    /// Writes the signature and IHDR of a `width × height` image of `depth` bits per sample and PNG
    /// colour type `color` (0 gray, 2 RGB) of `bpp` bytes per pixel.
    pub(crate) fn start(
        out: &mut impl Write,
        width: u32,
        height: u32,
        depth: u8,
        color: u8,
        bpp: usize,
    ) -> io::Result<ParallelPng> {
        let row_bytes = width as usize * bpp;
        out.write_all(b"\x89PNG\r\n\x1a\n")?;
        let mut ihdr = Vec::with_capacity(13);
        ihdr.extend_from_slice(&width.to_be_bytes());
        ihdr.extend_from_slice(&height.to_be_bytes());
        // Depth, colour type, compression 0 (deflate), filter method 0, no interlace.
        ihdr.extend_from_slice(&[depth, color, 0, 0, 0]);
        write_chunk(out, b"IHDR", &ihdr)?;
        Ok(ParallelPng {
            row_bytes,
            bpp,
            height,
            piece_rows: piece_rows(row_bytes),
            pending: Vec::new(),
            pending_len: 0,
            above: vec![0; row_bytes],
            rows_received: 0,
            stream: ZlibStream { adler: 1, wrote_header: false },
            slots: Vec::new(),
            ready: Vec::new(),
            ready_pieces: 0,
        })
    }

    /// Rows a batch holds: its pieces are compressed at once, on every core, while memory stays
    /// bounded.
    fn batch_rows(&self) -> usize {
        self.piece_rows * BATCH_PIECES.max(4 * rayon::current_num_threads())
    }

    /// Hands over the next rows, `src.len() / per_row` of them (the caller checked they fit the image),
    /// each `per_row` samples that `convert` turns into the row's `row_bytes` raw bytes. Compresses and
    /// writes every complete batch, and everything once the last row is in; the rest waits, converted,
    /// for the next call.
    ///
    /// The pieces convert their own rows (and the row above their first): the raw rows of a batch never
    /// exist as one buffer, only a row or two per piece at a time, next to the filtered bytes.
    pub(crate) fn push_rows<T: Sync>(
        &mut self,
        out: &mut impl Write,
        src: &[T],
        per_row: usize,
        convert: &(impl Fn(&[T], &mut [u8]) + Sync),
    ) -> io::Result<()> {
        let src_rows = src.len() / per_row;
        let row_bytes = self.row_bytes;
        self.rows_received += src_rows as u64;
        let complete = self.rows_received == u64::from(self.height);
        let batch = self.batch_rows();
        let pending_rows = self.pending_len / row_bytes;
        let mut start = 0; // rows of `pending` then `src` compressed so far in this call
        let available = pending_rows + src_rows;
        // Out of `self` while the batches borrow it, and put back (with its capacity) after.
        let pending = std::mem::take(&mut self.pending);
        let source = Source { pending: &pending[..self.pending_len], pending_rows, src, per_row, convert };
        let mut result = Ok(());
        while result.is_ok() && (available - start >= batch || (complete && start < available)) {
            let rows = (available - start).min(batch);
            result = self.compress_batch(out, &source, start, rows, complete && start + rows == available);
            start += rows;
        }
        self.pending = pending;
        result?;
        if start > 0 {
            // A batch is more rows than `pending` holds, and every batch begins with them: used up.
            self.pending_len = 0;
        }
        // The rest (fewer than a batch) waits in `pending`, converted: the rows of `src` after `skip`.
        let skip = start.saturating_sub(pending_rows);
        let end = self.pending_len + (src_rows - skip) * row_bytes;
        if self.pending.len() < end {
            self.pending.resize(end, 0);
        }
        self.pending[self.pending_len..end]
            .par_chunks_mut(row_bytes)
            .zip(src[skip * per_row..].par_chunks(per_row))
            .for_each(|(row, samples)| convert(samples, row));
        self.pending_len = end;
        Ok(())
    }

    /// Compresses rows `start..start + rows` of `source` (whole pieces, but for the image's last) in
    /// parallel, a piece per task, while this thread writes the batch compressed before (if any); the
    /// image's last batch is written at once.
    fn compress_batch<T: Sync, F: Fn(&[T], &mut [u8]) + Sync>(
        &mut self,
        out: &mut impl Write,
        source: &Source<'_, T, F>,
        start: usize,
        rows: usize,
        last_batch: bool,
    ) -> io::Result<()> {
        let (row_bytes, bpp, piece_rows) = (self.row_bytes, self.bpp, self.piece_rows);
        let pieces = rows.div_ceil(piece_rows);
        let last = pieces - 1;
        if self.slots.len() < pieces {
            self.slots.resize_with(pieces, Slot::default);
        }
        let ParallelPng { slots, ready, ready_pieces, above, stream, .. } = self;
        let mut written = Ok(());
        rayon::in_place_scope(|scope| {
            for (i, slot) in slots[..pieces].iter_mut().enumerate() {
                let above = &above[..];
                scope.spawn(move |_| {
                    let first = start + i * piece_rows;
                    let end = (first + piece_rows).min(start + rows);
                    slot.filter_rows(source, row_bytes, first, end, (i == 0).then_some(above));
                    slot.compressor.compress(&slot.filtered, bpp, last_batch && i == last);
                    slot.adler = adler2::adler32_slice(&slot.filtered);
                });
            }
            // Meanwhile the previous batch goes out: the chunks' CRCs and the copies into the file
            // overlap the compression instead of leaving the other cores idle.
            written = stream.write(out, &ready[..*ready_pieces], false);
        });
        written?;
        std::mem::swap(slots, ready);
        *ready_pieces = pieces;
        if last_batch {
            stream.write(out, &ready[..pieces], true)?;
            *ready_pieces = 0;
        }
        source.fill_row(start + rows - 1, above);
        Ok(())
    }

    /// Writes IEND (the caller checked that every row arrived).
    pub(crate) fn finish(self, out: &mut impl Write) -> io::Result<()> {
        debug_assert_eq!(self.ready_pieces, 0, "the last batch is written at once");
        write_chunk(out, b"IEND", &[])
    }
}

/// The rows of the current call: first the converted rows `pending` held, then the samples of `src`,
/// converted when a piece wants them.
struct Source<'a, T, F> {
    pending: &'a [u8],
    pending_rows: usize,
    src: &'a [T],
    per_row: usize,
    convert: &'a F,
}

impl<T, F: Fn(&[T], &mut [u8])> Source<'_, T, F> {
    /// Row `k`'s raw bytes into `row`.
    fn fill_row(&self, k: usize, row: &mut [u8]) {
        if k < self.pending_rows {
            row.copy_from_slice(&self.pending[k * row.len()..(k + 1) * row.len()]);
        } else {
            let k = k - self.pending_rows;
            (self.convert)(&self.src[k * self.per_row..(k + 1) * self.per_row], row);
        }
    }
}

impl Slot {
    /// Rows `first..end` of `source`, each preceded by the Up filter byte and replaced by its
    /// difference from the row above (`above` if given, else row `first - 1`), into `filtered`.
    fn filter_rows<T, F: Fn(&[T], &mut [u8])>(
        &mut self,
        source: &Source<'_, T, F>,
        row_bytes: usize,
        first: usize,
        end: usize,
        above: Option<&[u8]>,
    ) {
        self.filtered.resize((end - first) * (row_bytes + 1), 0);
        self.row.resize(row_bytes, 0);
        self.prior.resize(row_bytes, 0);
        match above {
            Some(above) => self.prior.copy_from_slice(above),
            None => source.fill_row(first - 1, &mut self.prior),
        }
        for (k, dst) in (first..end).zip(self.filtered.chunks_exact_mut(row_bytes + 1)) {
            source.fill_row(k, &mut self.row);
            dst[0] = FILTER_UP;
            for ((d, &x), &b) in dst[1..].iter_mut().zip(&self.row).zip(&self.prior) {
                *d = x.wrapping_sub(b);
            }
            std::mem::swap(&mut self.row, &mut self.prior);
        }
    }
}

fn write_chunk(out: &mut impl Write, kind: &[u8; 4], data: &[u8]) -> io::Result<()> {
    write_chunk_parts(out, kind, &[data])
}

/// A chunk whose data is `parts` in order, written without gathering them into one buffer.
fn write_chunk_parts(out: &mut impl Write, kind: &[u8; 4], parts: &[&[u8]]) -> io::Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    out.write_all(&(len as u32).to_be_bytes())?;
    out.write_all(kind)?;
    for part in parts {
        crc.update(part);
        out.write_all(part)?;
    }
    out.write_all(&crc.finalize().to_be_bytes())
}
