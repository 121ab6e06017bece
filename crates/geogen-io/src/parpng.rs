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
/// Pieces held at once, at least: the raw rows buffered are this many pieces (more with more cores),
/// plus their filtered and compressed bytes while the batch is compressed: about 5 MiB with 8,
/// which still gives each of 2 cores 4 pieces per batch.
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
    /// Raw rows received but not yet compressed (its first `pending_len` bytes); always starts at a
    /// piece boundary. The buffer never shrinks, so refilling it writes no zeros first.
    pending: Vec<u8>,
    pending_len: usize,
    /// The last raw row compressed (the Up filter's row above), zeros before the first row.
    above: Vec<u8>,
    /// Rows received (in `pending` or compressed).
    rows_received: u64,
    /// Adler-32 of the filtered bytes compressed so far.
    adler: u32,
    wrote_zlib_header: bool,
    /// One per piece of a batch, kept from batch to batch: touching fresh memory costs more than
    /// filtering it.
    slots: Vec<Slot>,
}

/// A piece's filtered bytes, compressed bytes and checksum.
#[derive(Default)]
struct Slot {
    filtered: Vec<u8>,
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
            adler: 1,
            wrote_zlib_header: false,
            slots: Vec::new(),
        })
    }

    /// Raw rows a caller should convert and hand over at once, to keep memory bounded and every core
    /// busy.
    pub(crate) fn batch_rows(&self) -> usize {
        self.piece_rows * BATCH_PIECES.max(4 * rayon::current_num_threads())
    }

    /// Room for `rows` more raw rows (the caller checked they fit the image), to be filled by the caller
    /// and then handed over with [`flush`](Self::flush).
    pub(crate) fn append_rows(&mut self, rows: usize) -> &mut [u8] {
        let (start, end) = (self.pending_len, self.pending_len + rows * self.row_bytes);
        if self.pending.len() < end {
            self.pending.resize(end, 0);
        }
        self.pending_len = end;
        self.rows_received += rows as u64;
        &mut self.pending[start..end]
    }

    /// Compresses and writes the complete pieces received once a batch is full, and everything once the
    /// last row is in.
    pub(crate) fn flush(&mut self, out: &mut impl Write) -> io::Result<()> {
        let complete = self.rows_received == u64::from(self.height);
        if complete || self.pending_len >= self.batch_rows() * self.row_bytes {
            self.compress_pending(out, complete)?;
        }
        Ok(())
    }

    /// Compresses the whole pieces in `pending` (all of it when the image is complete) in parallel and
    /// writes them in order.
    fn compress_pending(&mut self, out: &mut impl Write, complete: bool) -> io::Result<()> {
        let piece_bytes = self.piece_rows * self.row_bytes;
        let usable = if complete { self.pending_len } else { self.pending_len / piece_bytes * piece_bytes };
        if usable == 0 {
            return Ok(());
        }
        let pieces: Vec<&[u8]> = self.pending[..usable].chunks(piece_bytes).collect();
        let last = pieces.len() - 1;
        let (row_bytes, bpp) = (self.row_bytes, self.bpp);
        let above = &self.above;
        if self.slots.len() < pieces.len() {
            self.slots.resize_with(pieces.len(), Slot::default);
        }
        self.slots[..pieces.len()].par_iter_mut().enumerate().for_each(|(i, slot)| {
            let above = if i == 0 { &above[..] } else { &pieces[i - 1][piece_bytes - row_bytes..] };
            filter_up(above, pieces[i], row_bytes, &mut slot.filtered);
            slot.compressor.compress(&slot.filtered, bpp, complete && i == last);
            slot.adler = adler2::adler32_slice(&slot.filtered);
        });
        for (i, slot) in self.slots[..pieces.len()].iter().enumerate() {
            // CM 8 (deflate), 32 KiB window, FLEVEL 0 (fastest), FCHECK making it a multiple of 31.
            let header: &[u8] = if self.wrote_zlib_header { &[] } else { &[0x78, 0x01] };
            self.wrote_zlib_header = true;
            self.adler = adler32_combine(self.adler, slot.adler, slot.filtered.len() as u64);
            let checksum = self.adler.to_be_bytes();
            let trailer: &[u8] = if complete && i == last { &checksum } else { &[] };
            write_chunk_parts(out, b"IDAT", &[header, slot.compressor.output(), trailer])?;
        }
        self.above.copy_from_slice(&self.pending[usable - row_bytes..usable]);
        self.pending.copy_within(usable..self.pending_len, 0);
        self.pending_len -= usable;
        Ok(())
    }

    /// Writes IEND (the caller checked that every row arrived).
    pub(crate) fn finish(self, out: &mut impl Write) -> io::Result<()> {
        write_chunk(out, b"IEND", &[])
    }
}

/// `rows` with each row preceded by the Up filter byte and replaced by its difference from the row
/// above (`above` for the first), into `filtered` (resized to fit).
fn filter_up(above: &[u8], rows: &[u8], row_bytes: usize, filtered: &mut Vec<u8>) {
    filtered.resize(rows.len() / row_bytes * (row_bytes + 1), 0);
    let mut prior = above;
    for (row, dst) in rows.chunks_exact(row_bytes).zip(filtered.chunks_exact_mut(row_bytes + 1)) {
        dst[0] = FILTER_UP;
        for ((d, &x), &b) in dst[1..].iter_mut().zip(row).zip(prior) {
            *d = x.wrapping_sub(b);
        }
        prior = row;
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
