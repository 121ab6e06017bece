//! A PMTiles (version 3) archive of an XYZ tile set: one file a web map can read by HTTP range
//! requests, written from the format's public specification.
//!
//! Layout: the 127-byte header, the root directory (it and the header within the first 16 KiB), the
//! JSON metadata, the leaf directories (only when the root would not fit), then the tile data. Tiles
//! are addressed by tile ID (the tiles of all shallower zooms, then the position along the zoom's
//! Hilbert curve) and stored in ID order; identical tiles (the empty corners of a map, seas of one
//! colour) are stored once, consecutive IDs with the same bytes as one run. Directories are
//! varint-encoded column by column (IDs as deltas, run lengths, lengths, offsets with 0 meaning "right
//! after the previous entry") and gzip-compressed or not ([`Compression`]); the tiles are PNGs, stored
//! as they are.

use std::collections::HashMap;
use std::io::Write;

use sha2::{Digest, Sha256};

/// The header's size.
const HEADER: usize = 127;
/// The header and the root directory must fit in the first 16 KiB.
const ROOT_LIMIT: usize = 16_384 - HEADER;

/// How the directories and the metadata are compressed (the tiles never are).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
}

impl Compression {
    fn code(self) -> u8 {
        match self {
            Compression::None => 1,
            Compression::Gzip => 2,
        }
    }

    fn apply(self, bytes: Vec<u8>) -> Vec<u8> {
        match self {
            Compression::None => bytes,
            Compression::Gzip => {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                // Writing into memory cannot fail.
                let _ = gz.write_all(&bytes);
                gz.finish().unwrap_or_default()
            }
        }
    }
}

/// The tile ID of tile `x`, `y` at zoom `z`: the number of tiles of the shallower zooms plus the
/// tile's position along the zoom's Hilbert curve.
pub fn tile_id(z: u8, x: u64, y: u64) -> u64 {
    let mut id = ((1u64 << (2 * u32::from(z))) - 1) / 3;
    let n = 1u64 << z;
    let (mut x, mut y) = (x, y);
    let mut s = n / 2;
    while s > 0 {
        let rx = u64::from(x & s > 0);
        let ry = u64::from(y & s > 0);
        id += s * s * ((3 * rx) ^ ry);
        // Rotate the quadrant so the curve continues in the next level.
        if ry == 0 {
            if rx == 1 {
                x = n - 1 - x;
                y = n - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s >>= 1;
    }
    id
}

/// One directory entry: `run` consecutive tile IDs from `id` with the bytes at `offset`, or (`run` 0)
/// a leaf directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    id: u64,
    offset: u64,
    length: u64,
    run: u64,
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn encode_directory(entries: &[Entry], compression: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, entries.len() as u64);
    let mut last = 0;
    for e in entries {
        varint(&mut out, e.id - last);
        last = e.id;
    }
    for e in entries {
        varint(&mut out, e.run);
    }
    for e in entries {
        varint(&mut out, e.length);
    }
    for (i, e) in entries.iter().enumerate() {
        if i > 0 && e.offset == entries[i - 1].offset + entries[i - 1].length {
            varint(&mut out, 0);
        } else {
            varint(&mut out, e.offset + 1);
        }
    }
    compression.apply(out)
}

/// The root and the leaf directories: everything in the root if it fits in `root_limit` bytes,
/// otherwise leaves of `leaf` entries (doubled until the root of pointers to them fits).
fn directories(entries: &[Entry], compression: Compression, root_limit: usize) -> (Vec<u8>, Vec<u8>) {
    let root = encode_directory(entries, compression);
    if root.len() <= root_limit {
        return (root, Vec::new());
    }
    let mut leaf = 4096;
    loop {
        let mut leaves = Vec::new();
        let mut pointers = Vec::new();
        for chunk in entries.chunks(leaf) {
            let bytes = encode_directory(chunk, compression);
            pointers.push(Entry { id: chunk[0].id, offset: leaves.len() as u64, length: bytes.len() as u64, run: 0 });
            leaves.extend_from_slice(&bytes);
        }
        let root = encode_directory(&pointers, compression);
        if root.len() <= root_limit {
            return (root, leaves);
        }
        leaf *= 2;
    }
}

/// What the header says about the map beyond the directories.
pub struct Description {
    pub min_zoom: u8,
    pub max_zoom: u8,
    /// West, south, east, north, in degrees.
    pub bounds: [f64; 4],
    /// JSON metadata.
    pub metadata: serde_json::Value,
}

/// Builds the archive of `tiles` (zoom, x, y, PNG bytes; any order, each tile once).
pub fn archive(
    mut tiles: Vec<(u8, u64, u64, Vec<u8>)>,
    description: &Description,
    compression: Compression,
) -> Vec<u8> {
    archive_with_root_limit(&mut tiles, description, compression, ROOT_LIMIT)
}

fn archive_with_root_limit(
    tiles: &mut [(u8, u64, u64, Vec<u8>)],
    description: &Description,
    compression: Compression,
    root_limit: usize,
) -> Vec<u8> {
    let mut ids: Vec<(u64, usize)> = tiles.iter().enumerate().map(|(i, t)| (tile_id(t.0, t.1, t.2), i)).collect();
    ids.sort_unstable();
    let mut data = Vec::new();
    let mut stored: HashMap<[u8; 32], (u64, u64)> = HashMap::new();
    let mut entries: Vec<Entry> = Vec::new();
    for &(id, i) in &ids {
        let bytes = std::mem::take(&mut tiles[i].3);
        let hash: [u8; 32] = Sha256::digest(&bytes).into();
        let (offset, length) = *stored.entry(hash).or_insert_with(|| {
            let at = data.len() as u64;
            data.extend_from_slice(&bytes);
            (at, bytes.len() as u64)
        });
        match entries.last_mut() {
            Some(last) if last.id + last.run == id && last.offset == offset && last.length == length => last.run += 1,
            _ => entries.push(Entry { id, offset, length, run: 1 }),
        }
    }
    let (root, leaves) = directories(&entries, compression, root_limit);
    let metadata = compression.apply(description.metadata.to_string().into_bytes());

    let root_offset = HEADER as u64;
    let metadata_offset = root_offset + root.len() as u64;
    let leaves_offset = metadata_offset + metadata.len() as u64;
    let data_offset = leaves_offset + leaves.len() as u64;
    let mut out = Vec::with_capacity(data_offset as usize + data.len());
    out.extend_from_slice(b"PMTiles");
    out.push(3);
    for v in [
        root_offset,
        root.len() as u64,
        metadata_offset,
        metadata.len() as u64,
        leaves_offset,
        leaves.len() as u64,
        data_offset,
        data.len() as u64,
        ids.len() as u64,
        entries.len() as u64,
        stored.len() as u64,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    // Clustered (tile data in ID order), internal compression, tile compression none, tile type PNG.
    out.extend_from_slice(&[1, compression.code(), 1, 2]);
    out.push(description.min_zoom);
    out.push(description.max_zoom);
    let e7 = |deg: f64| ((deg * 1e7).round() as i32).to_le_bytes();
    let [west, south, east, north] = description.bounds;
    for v in [west, south, east, north] {
        out.extend_from_slice(&e7(v));
    }
    out.push(description.min_zoom);
    out.extend_from_slice(&e7((west + east) / 2.0));
    out.extend_from_slice(&e7((south + north) / 2.0));
    debug_assert_eq!(out.len(), HEADER);
    out.extend_from_slice(&root);
    out.extend_from_slice(&metadata);
    out.extend_from_slice(&leaves);
    out.extend_from_slice(&data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// A reader following the specification: the header's fields, then a tile looked up by ID through
    /// the root and leaf directories.
    struct Reader<'a> {
        bytes: &'a [u8],
    }

    fn read_varint(bytes: &[u8], at: &mut usize) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = bytes[*at];
            *at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }

    impl Reader<'_> {
        fn field(&self, i: usize) -> u64 {
            u64::from_le_bytes(self.bytes[8 + 8 * i..16 + 8 * i].try_into().unwrap())
        }

        fn directory(&self, offset: u64, length: u64) -> Vec<Entry> {
            let raw = &self.bytes[offset as usize..(offset + length) as usize];
            let bytes = match self.bytes[97] {
                1 => raw.to_vec(),
                2 => {
                    let mut out = Vec::new();
                    flate2::read::GzDecoder::new(raw).read_to_end(&mut out).unwrap();
                    out
                }
                other => panic!("internal compression {other}"),
            };
            let mut at = 0;
            let n = read_varint(&bytes, &mut at) as usize;
            let mut entries = vec![Entry { id: 0, offset: 0, length: 0, run: 0 }; n];
            let mut id = 0;
            for e in entries.iter_mut() {
                id += read_varint(&bytes, &mut at);
                e.id = id;
            }
            for e in entries.iter_mut() {
                e.run = read_varint(&bytes, &mut at);
            }
            for e in entries.iter_mut() {
                e.length = read_varint(&bytes, &mut at);
            }
            for i in 0..n {
                let v = read_varint(&bytes, &mut at);
                entries[i].offset = if v == 0 && i > 0 { entries[i - 1].offset + entries[i - 1].length } else { v - 1 };
            }
            assert_eq!(at, bytes.len(), "the directory has trailing bytes");
            entries
        }

        fn tile(&self, z: u8, x: u64, y: u64) -> Option<&[u8]> {
            let id = tile_id(z, x, y);
            let (mut offset, mut length) = (self.field(0), self.field(1));
            for _depth in 0..4 {
                let entries = self.directory(offset, length);
                let i = entries.partition_point(|e| e.id <= id).checked_sub(1)?;
                let e = entries[i];
                if e.run == 0 {
                    (offset, length) = (self.field(4) + e.offset, e.length);
                    continue;
                }
                if id >= e.id + e.run {
                    return None;
                }
                let start = (self.field(6) + e.offset) as usize;
                return Some(&self.bytes[start..start + e.length as usize]);
            }
            None
        }
    }

    #[test]
    fn tile_ids_follow_the_specification() {
        assert_eq!(tile_id(0, 0, 0), 0);
        assert_eq!([tile_id(1, 0, 0), tile_id(1, 0, 1), tile_id(1, 1, 1), tile_id(1, 1, 0)], [1, 2, 3, 4]);
        assert_eq!(tile_id(2, 0, 0), 5);
        assert_eq!(tile_id(3, 0, 0), 21);
        // Every ID of a zoom is used exactly once.
        for z in 0..6u8 {
            let n = 1u64 << z;
            let mut ids: Vec<u64> = (0..n * n).map(|i| tile_id(z, i % n, i / n)).collect();
            ids.sort_unstable();
            let first = ((1u64 << (2 * u32::from(z))) - 1) / 3;
            assert_eq!(ids, (first..first + n * n).collect::<Vec<_>>(), "zoom {z}");
        }
    }

    fn sample_tiles(max_zoom: u8) -> Vec<(u8, u64, u64, Vec<u8>)> {
        let mut tiles = Vec::new();
        for z in 0..=max_zoom {
            let n = 1u64 << z;
            for y in 0..n {
                for x in 0..n {
                    // Some tiles alike (runs and duplicates), most different; a few missing.
                    if (x + y) % 7 == 3 {
                        continue;
                    }
                    let bytes = if x > n / 2 { b"sea".to_vec() } else { format!("tile {z}/{x}/{y}").into_bytes() };
                    tiles.push((z, x, y, bytes));
                }
            }
        }
        tiles
    }

    #[test]
    fn every_tile_reads_back_with_and_without_leaves_and_compression() {
        let description = Description {
            min_zoom: 0,
            max_zoom: 6,
            bounds: [-180.0, -85.0, 0.0, 0.0],
            metadata: serde_json::json!({"format": "png"}),
        };
        for compression in [Compression::None, Compression::Gzip] {
            for root_limit in [ROOT_LIMIT, 200] {
                let tiles = sample_tiles(6);
                let bytes = archive_with_root_limit(&mut tiles.clone(), &description, compression, root_limit);
                let reader = Reader { bytes: &bytes };
                assert_eq!(&bytes[..8], b"PMTiles\x03");
                assert_eq!(reader.field(8), tiles.len() as u64, "addressed tiles");
                assert_eq!(reader.field(5) > 0, root_limit == 200, "leaf directories only when needed");
                assert!(reader.field(1) as usize <= root_limit);
                // Stored once: the shared "sea" tile and the distinct others.
                let distinct: std::collections::BTreeSet<&Vec<u8>> = tiles.iter().map(|t| &t.3).collect();
                assert_eq!(reader.field(10), distinct.len() as u64);
                for (z, x, y, expected) in &tiles {
                    assert_eq!(reader.tile(*z, *x, *y), Some(&expected[..]), "{z}/{x}/{y}");
                }
                // Missing tiles are missing.
                assert_eq!(reader.tile(6, 3, 0), None);
                assert_eq!(reader.tile(7, 0, 0), None);
            }
        }
    }
}
