//! A fast deflate encoder for filtered PNG rows: Huffman coding with a table built for each piece of
//! data, plus runs of zero bytes (a match at distance 1), no other string matching.
//!
//! Filtered terrain rows have little to gain from a general string search: the high byte of a 16-bit
//! difference is nearly always 0x00 or 0xFF and the low byte is close to noise, so an entropy coder
//! fitted to the data, plus matches at the two distances where filtered rows repeat (the previous byte
//! and the previous pixel), compresses them better than zlib's fast level, in less time. Runs of zeros
//! (flat sea floors, plateaus) collapse to a few bits per 258 bytes.
//!
//! [`Compressor::compress`] turns one piece of filtered bytes into one dynamic-Huffman deflate block. A piece
//! that is not the last ends with an empty stored block (a "sync flush"): the output is byte-aligned
//! and nothing in a later piece refers back into it, so pieces compressed independently (on several
//! threads) and concatenated behind one zlib header form one valid stream. The zlib trailer's Adler-32
//! is combined from the pieces' sums with [`adler32_combine`].
//!
//! Everything here is integer arithmetic on the bytes alone: the same piece gives the same bits on
//! every machine.

/// Longest code the format allows for literals, lengths and distances.
const MAX_BITS: u8 = 15;
/// Longest code of the code-length alphabet.
const MAX_CL_BITS: u8 = 7;
/// Symbols of the literal/length alphabet that can occur (0–255 bytes, 256 end of block, 257–285
/// lengths).
const LITLEN_SYMBOLS: usize = 286;
/// The end-of-block symbol.
const END_OF_BLOCK: usize = 256;
/// The order in which the code-length code's lengths are sent (RFC 1951, 3.2.7).
const CL_ORDER: [usize; 19] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
/// Shortest run of zeros worth a match (after the literal zero that starts it).
const MIN_MATCH: usize = 3;
/// Longest match the format allows.
const MAX_MATCH: usize = 258;

/// Base length of each length symbol 257–285 and its extra bits.
const LENGTH_BASE: [u16; 29] =
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA: [u8; 29] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];

/// The length symbol (index into [`LENGTH_BASE`]) of every match length 0–258 (0–2 unused).
const LENGTH_CODE: [u8; MAX_MATCH + 1] = {
    let mut table = [0u8; MAX_MATCH + 1];
    let mut code = 0;
    let mut len = MIN_MATCH;
    while len <= MAX_MATCH {
        while code + 1 < LENGTH_BASE.len() && LENGTH_BASE[code + 1] as usize <= len {
            code += 1;
        }
        table[len] = code as u8;
        len += 1;
    }
    table
};

/// Largest distance the format allows.
const MAX_DIST: usize = 32768;
/// Tokens (of the test reference) are `u32`s: a literal byte is its value (below [`MATCH`]); a match is
/// `len << 16 | MATCH | which`, `which` 0 for distance 1 and 1 for the second distance.
#[cfg(test)]
const MATCH: u32 = 0x100;

/// The three bytes at `at` (the low 24 bits of a little-endian load; `at + 4 <= data.len()`).
#[inline(always)]
fn three(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap_or([0; 4])) & 0x00ff_ffff
}

/// The eight bytes at `at` (`at + 8 <= data.len()`).
#[inline(always)]
fn eight(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Bit 7 of each byte of the result is set exactly where that byte of `x` is zero.
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// How far the bytes from `at` equal those `d` before, from `MIN_MATCH` known equal, up to `limit`.
#[inline(always)]
fn extend(data: &[u8], at: usize, d: usize, limit: usize) -> usize {
    let mut len = MIN_MATCH;
    while len + 8 <= limit {
        let a = u64::from_le_bytes(data[at + len..at + len + 8].try_into().unwrap_or([0; 8]));
        let b = u64::from_le_bytes(data[at - d + len..at - d + len + 8].try_into().unwrap_or([0; 8]));
        let x = a ^ b;
        if x != 0 {
            return len + (x.trailing_zeros() / 8) as usize;
        }
        len += 8;
    }
    while len < limit && data[at + len] == data[at - d + len] {
        len += 1;
    }
    len
}

/// Splits `data` into tokens (see [`MATCH`]), counting the literal/length symbols and the uses of
/// each distance. Instead of searching a window, a match is only tried at distance 1 and at `d2`
/// (when it is above 1); the longer wins, distance 1 on ties.
#[cfg(test)]
fn tokenize(data: &[u8], d2: usize, litlen_freq: &mut [u32; LITLEN_SYMBOLS], uses: &mut [u32; 2]) -> Vec<u32> {
    let n = data.len();
    let mut tokens = Vec::with_capacity(n + 1);
    let mut i = 0;
    let d2_or_1 = d2.max(1);
    // Positions with four bytes ahead compare three bytes at once; the last few are literals.
    while i + 4 <= n {
        // Fast path: eight bytes against the eight one and `d2` before; where no three equal bytes in a
        // row start within the first six, those six are literals.
        if i >= d2_or_1 && i + 8 <= n {
            let w = eight(data, i);
            let z1 = zero_bytes(w ^ eight(data, i - 1));
            let z2 = zero_bytes(w ^ eight(data, i - d2_or_1));
            let starts = (z1 & (z1 >> 8) & (z1 >> 16)) | (z2 & (z2 >> 8) & (z2 >> 16));
            let literals = ((starts & 0x0000_8080_8080_8080).trailing_zeros() / 8).min(6) as usize;
            for &b in &data[i..i + literals] {
                tokens.push(u32::from(b));
                litlen_freq[usize::from(b)] += 1;
            }
            i += literals;
            if literals > 0 {
                // Back to the loop's test: fewer than four bytes may be left now.
                continue;
            }
        }
        let here = three(data, i);
        let limit = (n - i).min(MAX_MATCH);
        let mut best = 0;
        let mut which = 0;
        if i >= 1 && three(data, i - 1) == here {
            best = extend(data, i, 1, limit);
        }
        if d2 > 1 && i >= d2 && three(data, i - d2) == here {
            let len = extend(data, i, d2, limit);
            if len > best {
                best = len;
                which = 1;
            }
        }
        if best >= MIN_MATCH {
            tokens.push((best as u32) << 16 | MATCH | which);
            litlen_freq[257 + usize::from(LENGTH_CODE[best])] += 1;
            uses[which as usize] += 1;
            i += best;
        } else {
            let b = data[i];
            tokens.push(u32::from(b));
            litlen_freq[usize::from(b)] += 1;
            i += 1;
        }
    }
    for &b in &data[i..] {
        tokens.push(u32::from(b));
        litlen_freq[usize::from(b)] += 1;
    }
    tokens
}

/// Base distance of each distance symbol 0–29 and its extra bits.
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
    8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] =
    [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];

/// The distance symbol of a distance 1–32768.
fn dist_symbol(dist: usize) -> usize {
    DIST_BASE.iter().rposition(|&b| usize::from(b) <= dist).unwrap_or(0)
}

/// Code lengths (at most `limit` bits) of a Huffman code for `freq`; symbols of frequency 0 get no
/// code. At least two symbols always get a code (a lone symbol is paired with the first unused one), so
/// every code is complete, as strict decoders want.
fn code_lengths(freq: &[u32], limit: u8) -> Vec<u8> {
    let mut freq: Vec<u64> = freq.iter().map(|&f| u64::from(f)).collect();
    let used = freq.iter().filter(|&&f| f > 0).count();
    if used < 2 {
        for f in freq.iter_mut().filter(|f| **f == 0).take(2 - used) {
            *f = 1;
        }
    }
    loop {
        let lengths = huffman_lengths(&freq);
        if lengths.iter().all(|&l| l <= limit) {
            return lengths;
        }
        // Too deep: flatten the distribution (halve every count, keeping used symbols used) and retry.
        for f in freq.iter_mut().filter(|f| **f > 0) {
            *f = (*f >> 1).max(1);
        }
    }
}

/// Unlimited Huffman code lengths of the symbols with a non-zero count (ties broken by symbol, so the
/// result depends on the counts alone).
fn huffman_lengths(freq: &[u64]) -> Vec<u8> {
    // Leaves sorted by (count, symbol); internal nodes are created in non-decreasing count order, so
    // the two-queue method finds the two smallest without a heap.
    let mut leaves: Vec<(u64, usize)> = freq.iter().enumerate().filter(|(_, &f)| f > 0).map(|(s, &f)| (f, s)).collect();
    leaves.sort_unstable();
    let n = leaves.len();
    // Nodes 0..n are the leaves, n.. the internal nodes; parent links give the depths.
    let mut parent = vec![0usize; 2 * n - 1];
    let mut weight: Vec<u64> = leaves.iter().map(|&(f, _)| f).collect();
    weight.reserve(n - 1);
    let (mut next_leaf, mut next_node) = (0, n);
    let pick = |weight: &Vec<u64>, next_leaf: &mut usize, next_node: &mut usize| {
        let node_ready = *next_node < weight.len();
        if *next_leaf < n && (!node_ready || weight[*next_leaf] <= weight[*next_node]) {
            *next_leaf += 1;
            *next_leaf - 1
        } else {
            *next_node += 1;
            *next_node - 1
        }
    };
    for _ in 0..n - 1 {
        let a = pick(&weight, &mut next_leaf, &mut next_node);
        let b = pick(&weight, &mut next_leaf, &mut next_node);
        let node = weight.len();
        weight.push(weight[a] + weight[b]);
        parent[a] = node;
        parent[b] = node;
    }
    // Depths from the root (the last node) down: parents always come after their children.
    let mut depth = vec![0u8; 2 * n - 1];
    for node in (0..2 * n - 2).rev() {
        depth[node] = depth[parent[node]].saturating_add(1);
    }
    let mut lengths = vec![0u8; freq.len()];
    for (leaf, &(_, symbol)) in leaves.iter().enumerate() {
        lengths[symbol] = depth[leaf];
    }
    lengths
}

/// Canonical codes for `lengths` (RFC 1951, 3.2.2), bit-reversed for least-significant-bit-first
/// output.
fn canonical_codes(lengths: &[u8]) -> Vec<u16> {
    let mut count = [0u16; 16];
    for &l in lengths {
        count[usize::from(l)] += 1;
    }
    count[0] = 0;
    let mut next = [0u16; 16];
    let mut code = 0u16;
    for bits in 1..16 {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                return 0;
            }
            let c = next[usize::from(l)];
            next[usize::from(l)] += 1;
            c.reverse_bits() >> (16 - l)
        })
        .collect()
}

/// The Huffman codes of one block, as the hot loops want them.
struct Codes {
    /// Per byte: its literal code in the low 16 bits, the code's length above.
    literal: [u32; 256],
    /// Per match length: the length symbol's code with its extra bits, as one value and bit count.
    length: [(u32, u32); MAX_MATCH + 1],
    /// The same for the two distances (1 and the second distance).
    dist: [(u32, u32); 2],
    /// The end-of-block code and its length.
    end: (u32, u32),
}

/// Builds the codes for the counts and writes the block header (final-block bit, type, the code
/// lengths run-length coded under their own code) through `put(value, bits)`.
fn block_header(
    litlen_freq: &mut [u32; LITLEN_SYMBOLS],
    uses: &[u32; 2],
    dists: [usize; 2],
    last: bool,
    mut put: impl FnMut(u32, u32),
) -> Codes {
    let mut dist_freq = [0u32; 30];
    for (&d, &count) in dists.iter().zip(uses) {
        dist_freq[dist_symbol(d)] += count;
    }
    litlen_freq[END_OF_BLOCK] = 1;
    let litlen_lengths = code_lengths(litlen_freq, MAX_BITS);
    let litlen_codes = canonical_codes(&litlen_lengths);
    let dist_lengths_all = code_lengths(&dist_freq, MAX_BITS);
    let dist_codes = canonical_codes(&dist_lengths_all);
    let hdist = (1..=30).rev().find(|&n| dist_lengths_all[n - 1] != 0).unwrap_or(1);
    let dist_lengths = &dist_lengths_all[..hdist];

    let hlit = (257..=LITLEN_SYMBOLS).rev().find(|&n| litlen_lengths[n - 1] != 0).unwrap_or(257).max(257);
    let mut all_lengths: Vec<u8> = litlen_lengths[..hlit].to_vec();
    all_lengths.extend_from_slice(dist_lengths);

    // The code lengths, run-length coded: (symbol, extra bits value, extra bit count).
    let mut cl_tokens: Vec<(u8, u8, u8)> = Vec::with_capacity(all_lengths.len());
    let mut i = 0;
    while i < all_lengths.len() {
        let l = all_lengths[i];
        let mut run = 1;
        while i + run < all_lengths.len() && all_lengths[i + run] == l {
            run += 1;
        }
        let mut left = run;
        if l == 0 {
            while left >= 11 {
                let n = left.min(138);
                cl_tokens.push((18, (n - 11) as u8, 7));
                left -= n;
            }
            if left >= 3 {
                cl_tokens.push((17, (left - 3) as u8, 3));
                left = 0;
            }
        } else {
            cl_tokens.push((l, 0, 0));
            left -= 1;
            while left >= 3 {
                let n = left.min(6);
                cl_tokens.push((16, (n - 3) as u8, 2));
                left -= n;
            }
        }
        for _ in 0..left {
            cl_tokens.push((l, 0, 0));
        }
        i += run;
    }
    let mut cl_freq = [0u32; 19];
    for &(s, _, _) in &cl_tokens {
        cl_freq[usize::from(s)] += 1;
    }
    let cl_lengths = code_lengths(&cl_freq, MAX_CL_BITS);
    let cl_codes = canonical_codes(&cl_lengths);
    let hclen = (4..=19).rev().find(|&n| cl_lengths[CL_ORDER[n - 1]] != 0).unwrap_or(4);

    put(u32::from(last), 1);
    put(0b10, 2); // dynamic Huffman
    put((hlit - 257) as u32, 5);
    put((dist_lengths.len() - 1) as u32, 5);
    put((hclen - 4) as u32, 4);
    for &symbol in &CL_ORDER[..hclen] {
        put(u32::from(cl_lengths[symbol]), 3);
    }
    for &(s, extra, extra_bits) in &cl_tokens {
        let s = usize::from(s);
        put(u32::from(cl_codes[s]), u32::from(cl_lengths[s]));
        put(u32::from(extra), u32::from(extra_bits));
    }

    let mut literal = [0u32; 256];
    for (b, entry) in literal.iter_mut().enumerate() {
        *entry = u32::from(litlen_codes[b]) | u32::from(litlen_lengths[b]) << 16;
    }
    let mut length = [(0u32, 0u32); MAX_MATCH + 1];
    for (len, entry) in length.iter_mut().enumerate().skip(MIN_MATCH) {
        let code = usize::from(LENGTH_CODE[len]);
        let symbol = 257 + code;
        let (c, l) = (u32::from(litlen_codes[symbol]), u32::from(litlen_lengths[symbol]));
        *entry = (c | ((len as u32 - u32::from(LENGTH_BASE[code])) << l), l + u32::from(LENGTH_EXTRA[code]));
    }
    let dist = dists.map(|d| {
        let symbol = dist_symbol(d);
        let (c, l) = (u32::from(dist_codes[symbol]), u32::from(dist_lengths_all[symbol]));
        (c | ((d as u32 - u32::from(DIST_BASE[symbol])) << l), l + u32::from(DIST_EXTRA[symbol]))
    });
    let end = (u32::from(litlen_codes[END_OF_BLOCK]), u32::from(litlen_lengths[END_OF_BLOCK]));
    Codes { literal, length, dist, end }
}

/// A match found by [`find_matches`]: its position, length and distance (0 for 1, 1 for the second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Match {
    at: u32,
    len: u16,
    which: u16,
}

/// Instruction sets of the match scanner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// Eight bytes at a time in a `u64`: every target.
    Scalar,
    /// 32 bytes at a time, and the codes written with BMI2's shifts (x86-64 with AVX2 and BMI2,
    /// detected at run time).
    Avx2,
}

impl Isa {
    /// The one the process runs ([`geogen_simd::active`]; its AVX2 level includes BMI2).
    pub(crate) fn best() -> Isa {
        if geogen_simd::enabled(geogen_simd::Isa::Avx2) {
            Isa::Avx2
        } else {
            Isa::Scalar
        }
    }
}

/// Whether a match of at least [`MIN_MATCH`] starts at `p` (`p + 4 <= data.len()`): the three bytes
/// there equal the three one before, or the three `d2` before (`d2 > 1`).
#[inline(always)]
fn starts_at(data: &[u8], p: usize, d2: usize) -> bool {
    let here = three(data, p);
    (p >= 1 && three(data, p - 1) == here) || (d2 > 1 && p >= d2 && three(data, p - d2) == here)
}

/// The first position `p` in `from..=data.len() - 4` where a match starts (see [`starts_at`]).
#[inline(always)]
fn next_start(data: &[u8], from: usize, d2: usize, isa: Isa) -> Option<usize> {
    let n = data.len();
    let back = d2.max(1);
    let mut p = from;
    // Before `back` bytes of history, position by position.
    while p < back && p + 4 <= n {
        if starts_at(data, p, d2) {
            return Some(p);
        }
        p += 1;
    }
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 {
        // SAFETY: `Isa::Avx2` is only used where AVX2 was detected (`Isa::best`, and the tests check).
        p = unsafe { scan_avx2(data, p, back) };
        if let Some(found) = (p + 34 <= n).then_some(p) {
            return Some(found);
        }
    }
    // Eight bytes against the eight one and `back` before: starts among the first six positions.
    while p + 9 <= n {
        let w = eight(data, p);
        let z1 = zero_bytes(w ^ eight(data, p - 1));
        let z2 = zero_bytes(w ^ eight(data, p - back));
        let starts = (z1 & (z1 >> 8) & (z1 >> 16)) | (z2 & (z2 >> 8) & (z2 >> 16));
        let k = (starts & 0x0000_8080_8080_8080).trailing_zeros() / 8;
        if k < 6 {
            return Some(p + k as usize);
        }
        p += 6;
    }
    while p + 4 <= n {
        if starts_at(data, p, d2) {
            return Some(p);
        }
        p += 1;
    }
    None
}

/// From `p` (`p >= back`), 30 positions at a time while 34 bytes are left: the first position where
/// a match starts, or the first position the blocks did not reach (`p + 34 > data.len()`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2(data: &[u8], mut p: usize, back: usize) -> usize {
    use std::arch::x86_64::*;
    let n = data.len();
    let ptr = data.as_ptr();
    while p + 34 <= n {
        // SAFETY: p >= back >= 1 and p + 32 <= n: all three loads are inside `data`.
        let (x, x1, x2) = unsafe {
            (
                _mm256_loadu_si256(ptr.add(p).cast()),
                _mm256_loadu_si256(ptr.add(p - 1).cast()),
                _mm256_loadu_si256(ptr.add(p - back).cast()),
            )
        };
        // Bit k: byte p + k equals the byte one (`back`) before.
        let e1 = _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, x1)) as u32;
        let e2 = _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, x2)) as u32;
        // A match starts at p + k when bytes k, k + 1 and k + 2 equal theirs: known for k < 30, and
        // p + k + 4 <= n holds for all of those.
        let starts = ((e1 & (e1 >> 1) & (e1 >> 2)) | (e2 & (e2 >> 1) & (e2 >> 2))) & 0x3fff_ffff;
        if starts != 0 {
            return p + starts.trailing_zeros() as usize;
        }
        p += 30;
    }
    p
}

/// The greedy parse of [`Compressor::compress`]: from each position, the longest match at distance 1 or
/// `d2` (when above 1; distance 1 on ties) if one of at least [`MIN_MATCH`] bytes starts there, else a
/// literal; the last three bytes are always literals. Only the matches are recorded (the literals are
/// the bytes between them), with the counts of the length symbols and of each distance's uses.
fn find_matches(
    data: &[u8],
    d2: usize,
    isa: Isa,
    matches: &mut Vec<Match>,
    litlen_freq: &mut [u32; LITLEN_SYMBOLS],
    uses: &mut [u32; 2],
) {
    matches.clear();
    let n = data.len();
    let mut i = 0;
    while let Some(p) = next_start(data, i, d2, isa) {
        let limit = (n - p).min(MAX_MATCH);
        let here = three(data, p);
        let mut best = 0;
        let mut which = 0;
        if p >= 1 && three(data, p - 1) == here {
            best = extend(data, p, 1, limit);
        }
        if d2 > 1 && p >= d2 && three(data, p - d2) == here {
            let len = extend(data, p, d2, limit);
            if len > best {
                best = len;
                which = 1;
            }
        }
        matches.push(Match { at: p as u32, len: best as u16, which });
        litlen_freq[257 + usize::from(LENGTH_CODE[best])] += 1;
        uses[usize::from(which)] += 1;
        i = p + best;
    }
}

/// Adds the count of each byte value of `data` to `freq`.
fn byte_counts(data: &[u8], freq: &mut [u32; LITLEN_SYMBOLS]) {
    // Eight tables, so that runs of one byte do not wait on their own increments.
    let mut tables = [[0u32; 256]; 8];
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        for (table, &b) in tables.iter_mut().zip(chunk) {
            table[usize::from(b)] += 1;
        }
    }
    for &b in chunks.remainder() {
        tables[0][usize::from(b)] += 1;
    }
    for (b, f) in freq.iter_mut().take(256).enumerate() {
        *f += tables.iter().map(|t| t[b]).sum::<u32>();
    }
}

/// Bits least significant first into a buffer sized beforehand: every [`flush`](Self::flush) stores
/// eight bytes and keeps the partial byte.
struct Bits<'a> {
    out: &'a mut [u8],
    at: usize,
    buffer: u64,
    count: u32,
}

impl Bits<'_> {
    /// Adds the low `n` bits of `value`; at most 56 bits may be added between flushes.
    #[inline(always)]
    fn add(&mut self, value: u32, n: u32) {
        self.buffer |= u64::from(value) << self.count;
        self.count += n;
    }

    /// Adds the low `n` bits of `value` (`n` <= 57 - the bits buffered).
    #[inline(always)]
    fn add_wide(&mut self, value: u64, n: u32) {
        self.buffer |= value << self.count;
        self.count += n;
    }

    /// Stores the whole bytes buffered (at most 7 bits stay).
    #[inline(always)]
    fn flush(&mut self) {
        self.out[self.at..self.at + 8].copy_from_slice(&self.buffer.to_le_bytes());
        let bytes = self.count / 8;
        self.at += bytes as usize;
        // `bytes` <= 7: the shift is below 64.
        self.buffer >>= bytes * 8;
        self.count -= bytes * 8;
    }

    /// Pads with zero bits to a byte boundary.
    fn align(&mut self) {
        self.count = self.count.div_ceil(8) * 8;
        self.flush();
    }
}

/// Masks of the three literals of a step that takes `take` (0–3) of them: a literal's table entry
/// (code and length) and-ed with 0 adds nothing.
const TAKE_MASK: [[u32; 3]; 4] = [[0, 0, 0], [!0, 0, 0], [!0, !0, 0], [!0, !0, !0]];

/// Three literals' table entries (each its code in the low 16 bits and its length above) joined
/// into one run of bits, the first literal's code first: the bits and their count.
#[inline(always)]
fn joined_triple(e0: u32, e1: u32, e2: u32) -> (u64, u32) {
    let (n0, n1) = (e0 >> 16, e1 >> 16);
    let joined = u64::from(e0 & 0xffff) | u64::from(e1 & 0xffff) << n0 | u64::from(e2 & 0xffff) << (n0 + n1);
    (joined, n0 + n1 + (e2 >> 16))
}

/// Adds `n` bits to the bit state kept in the caller's locals (next byte, buffer, bits in the
/// buffer) and stores its eight bytes at once; the whole bytes among them are then done, so fewer
/// than eight bits stay in the buffer.
#[inline(always)]
fn put_bits(out: &mut [u8], (at_byte, buffer, count): (&mut usize, &mut u64, &mut u32), bits: u64, n: u32) {
    *buffer |= bits << *count;
    *count += n;
    out[*at_byte..*at_byte + 8].copy_from_slice(&buffer.to_le_bytes());
    let whole = *count / 8;
    *at_byte += whole as usize;
    // `whole` <= 7: the shift is below 64.
    *buffer >>= whole * 8;
    *count -= whole * 8;
}

/// The block's symbols: the literals between the matches and the matches, in order (everything but
/// the header and the end of block).
///
/// The literal runs between matches are short on terrain (a 4000² dunesea has a match every 20 bytes,
/// and a third of its runs are one byte long). A run's last 0–3 literals are therefore not a loop of
/// their own: they are always coded as one masked triple (entries and-ed with 0 add nothing), in the
/// same pass as the match's codes, so a run pays no branch on its length modulo 3 and no separate flush.
/// Coding every run as masked triples with the match optional in each step (no branch on the run's
/// length at all) was slower: 3 % on dunesea and 45 % on conflux, whose runs are long.
#[inline(always)]
fn code_symbols<'a>(mut bits: Bits<'a>, data: &[u8], matches: &[Match], codes: &Codes) -> Bits<'a> {
    let literal = &codes.literal;
    // The state is kept in locals: through `bits` it went to memory at every store.
    let (mut at_byte, mut buffer, mut count) = (bits.at, bits.buffer, bits.count);
    let out = &mut *bits.out;
    let mut i = 0;
    for m in matches {
        let at = m.at as usize;
        // While more than three bytes are left before the match: three literals a step.
        while at - i > 3 {
            let bytes = &data[i..i + 3];
            let (joined, n) = joined_triple(
                literal[usize::from(bytes[0])],
                literal[usize::from(bytes[1])],
                literal[usize::from(bytes[2])],
            );
            put_bits(out, (&mut at_byte, &mut buffer, &mut count), joined, n);
            i += 3;
        }
        // The last 0–3 literals (masked), then the match. A match covers at least three bytes, so the
        // three bytes from `i <= at` are inside `data`.
        let bytes = &data[i..i + 3];
        let mask = TAKE_MASK[at - i];
        let (e0, e1, e2) = (
            literal[usize::from(bytes[0])] & mask[0],
            literal[usize::from(bytes[1])] & mask[1],
            literal[usize::from(bytes[2])] & mask[2],
        );
        let (joined, n) = joined_triple(e0, e1, e2);
        put_bits(out, (&mut at_byte, &mut buffer, &mut count), joined, n);
        let (lc, ll) = codes.length[usize::from(m.len)];
        let (dc, dl) = codes.dist[usize::from(m.which)];
        put_bits(out, (&mut at_byte, &mut buffer, &mut count), u64::from(lc) | u64::from(dc) << ll, ll + dl);
        i = at + usize::from(m.len);
    }
    (bits.at, bits.buffer, bits.count) = (at_byte, buffer, count);
    // The literals after the last match, three at a time, then one by one.
    let mut tail = data[i..].chunks_exact(3);
    for three in &mut tail {
        let (joined, n) = joined_triple(
            literal[usize::from(three[0])],
            literal[usize::from(three[1])],
            literal[usize::from(three[2])],
        );
        bits.add_wide(joined, n);
        bits.flush();
    }
    for &b in tail.remainder() {
        let e = literal[usize::from(b)];
        bits.add(e & 0xffff, e >> 16);
    }
    bits.flush();
    bits
}

/// [`code_symbols`] compiled with BMI2's shifts (a shift by a variable count in one instruction).
///
/// # Safety
/// The CPU must support BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
unsafe fn code_symbols_bmi2<'a>(bits: Bits<'a>, data: &[u8], matches: &[Match], codes: &Codes) -> Bits<'a> {
    code_symbols(bits, data, matches, codes)
}

/// Compresses pieces, keeping its buffers from one piece to the next (fresh memory is slow to touch).
#[derive(Default)]
pub(crate) struct Compressor {
    matches: Vec<Match>,
    /// Always at its full length, so that growing it never writes zeros again.
    out: Vec<u8>,
    /// The bytes of `out` the last piece filled.
    used: usize,
}

impl Compressor {
    /// `data` compressed as one dynamic-Huffman deflate block: the stream's final block if `last`,
    /// otherwise followed by an empty stored block so that the output ends byte-aligned and the next
    /// piece can start a block of its own.
    ///
    /// Matches are only looked for at distances 1 (runs of one byte, such as the zeros of flat areas)
    /// and `bpp`, the bytes per pixel (a repeated filtered pixel: constant slopes, terraces). On the
    /// examples' 4000² PNG16 renders that gives files 0.7–16 % smaller than zlib's fast level; adding
    /// the row above as a third distance made them larger (greedy matches along the row pre-empt
    /// better ones).
    pub(crate) fn compress(&mut self, data: &[u8], bpp: usize, last: bool) -> &[u8] {
        self.compress_with(data, bpp, last, Isa::best())
    }

    fn compress_with(&mut self, data: &[u8], bpp: usize, last: bool, isa: Isa) -> &[u8] {
        let d2 = if bpp > 1 && bpp <= MAX_DIST { bpp } else { 0 };
        let dists = [1, d2.max(1)];
        let mut litlen_freq = [0u32; LITLEN_SYMBOLS];
        let mut uses = [0u32; 2];
        find_matches(data, d2, isa, &mut self.matches, &mut litlen_freq, &mut uses);
        // The literals are every byte outside the matches. A match of length `len` at distance `d`
        // repeats its first `d` bytes (or fewer), the k-th of them (len - k).div_ceil(d) times.
        byte_counts(data, &mut litlen_freq);
        for m in &self.matches {
            let (at, len, d) = (m.at as usize, usize::from(m.len), dists[usize::from(m.which)]);
            for k in 0..len.min(d) {
                litlen_freq[usize::from(data[at + k])] -= (len - k).div_ceil(d) as u32;
            }
        }

        // Header under 400 bytes, then at most 15 bits a literal and 48 bits a match (of 3 bytes or
        // more), the end of block, the stored block and the eight bytes a flush stores.
        let size = data.len() * 2 + 1024;
        if self.out.len() < size {
            self.out.resize(size, 0);
        }
        let mut bits = Bits { out: &mut self.out, at: 0, buffer: 0, count: 0 };
        let codes = block_header(&mut litlen_freq, &uses, dists, last, |value, n| {
            bits.add(value, n);
            bits.flush();
        });
        #[cfg(target_arch = "x86_64")]
        if isa == Isa::Avx2 {
            // SAFETY: `Isa::Avx2` is only used where AVX2 and BMI2 were detected (`Isa::best`).
            bits = unsafe { code_symbols_bmi2(bits, data, &self.matches, &codes) };
        } else {
            bits = code_symbols(bits, data, &self.matches, &codes);
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            bits = code_symbols(bits, data, &self.matches, &codes);
        }
        bits.add(codes.end.0, codes.end.1);
        bits.flush();
        if !last {
            // An empty stored block: header bits, padding to the byte, LEN 0 and NLEN 0xFFFF.
            bits.add(0, 3);
            bits.align();
            bits.add(0xffff_0000, 32);
            bits.flush();
        } else {
            bits.align();
        }
        self.used = bits.at;
        self.output()
    }

    /// The last piece compressed.
    pub(crate) fn output(&self) -> &[u8] {
        &self.out[..self.used]
    }
}

/// Appends `data` compressed as one deflate block to `out` (see [`Compressor::compress`]).
#[cfg(test)]
pub(crate) fn compress_piece(data: &[u8], bpp: usize, last: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(Compressor::default().compress(data, bpp, last));
}

/// The encoder before matches were found 32 bytes at a time: every token in a `Vec`. The reference
/// the tests hold [`Compressor`] to, byte for byte.
#[cfg(test)]
pub(crate) mod reference {
    use super::*;

    /// Appends bits least significant first.
    struct BitWriter<'a> {
        out: &'a mut Vec<u8>,
        buffer: u64,
        bits: u32,
    }

    impl BitWriter<'_> {
        fn put(&mut self, value: u32, n: u32) {
            self.buffer |= u64::from(value) << self.bits;
            self.bits += n;
            if self.bits >= 32 {
                self.out.extend_from_slice(&(self.buffer as u32).to_le_bytes());
                self.buffer >>= 32;
                self.bits -= 32;
            }
        }

        fn align(&mut self) {
            let bytes = self.bits.div_ceil(8) as usize;
            self.out.extend_from_slice(&self.buffer.to_le_bytes()[..bytes]);
            self.buffer = 0;
            self.bits = 0;
        }
    }

    pub(crate) fn compress_piece(data: &[u8], bpp: usize, last: bool, out: &mut Vec<u8>) {
        let d2 = if bpp > 1 && bpp <= MAX_DIST { bpp } else { 0 };
        let dists = [1, d2.max(1)];
        let mut litlen_freq = [0u32; LITLEN_SYMBOLS];
        let mut uses = [0u32; 2];
        let tokens = tokenize(data, d2, &mut litlen_freq, &mut uses);
        let mut bits = BitWriter { out, buffer: 0, bits: 0 };
        let codes = block_header(&mut litlen_freq, &uses, dists, last, |v, n| bits.put(v, n));
        for &t in &tokens {
            if t < MATCH {
                let e = codes.literal[t as usize];
                bits.put(e & 0xffff, e >> 16);
            } else {
                let (c, l) = codes.length[(t >> 16) as usize];
                bits.put(c, l);
                let (c, l) = codes.dist[(t & 1) as usize];
                bits.put(c, l);
            }
        }
        bits.put(codes.end.0, codes.end.1);
        if !last {
            bits.put(0, 3);
            bits.align();
            bits.out.extend_from_slice(&[0, 0, 0xff, 0xff]);
        } else {
            bits.align();
        }
    }
}

/// The Adler-32 of `a ++ b` from the sums of `a` and of `b` (`b_len` bytes). With A the byte sum plus
/// one and B the sum of the running A's: A = A_a + A_b − 1, and each of b's running sums includes
/// A_a − 1 more, so B = B_a + B_b + b_len·(A_a − 1); all modulo 65521.
pub(crate) fn adler32_combine(a: u32, b: u32, b_len: u64) -> u32 {
    const M: u64 = 65521;
    let (a_lo, a_hi) = (u64::from(a & 0xffff), u64::from(a >> 16));
    let (b_lo, b_hi) = (u64::from(b & 0xffff), u64::from(b >> 16));
    let lo = (a_lo + b_lo + M - 1) % M;
    let hi = (a_hi + b_hi + (b_len % M) * ((a_lo + M - 1) % M)) % M;
    ((hi << 16) | lo) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compresses `pieces` as one zlib stream (header, pieces, combined Adler-32).
    fn zlib(pieces: &[&[u8]]) -> Vec<u8> {
        let mut out = vec![0x78, 0x01];
        let mut adler = 1;
        for (i, piece) in pieces.iter().enumerate() {
            compress_piece(piece, 2, i + 1 == pieces.len(), &mut out);
            adler = adler32_combine(adler, adler2::adler32_slice(piece), piece.len() as u64);
        }
        out.extend_from_slice(&adler.to_be_bytes());
        out
    }

    fn round_trip(pieces: &[&[u8]]) {
        let stream = zlib(pieces);
        // miniz checks the Adler-32 of a zlib stream.
        let back = miniz_oxide::inflate::decompress_to_vec_zlib(&stream).expect("a valid zlib stream");
        assert_eq!(back, pieces.concat());
    }

    fn pseudo_random(n: usize, seed: u32) -> Vec<u8> {
        (0..n as u32).map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 13) as u8).collect()
    }

    #[test]
    fn pieces_decode_to_the_input() {
        round_trip(&[b"a"]);
        round_trip(&[&[0]]);
        round_trip(&[&[0, 0, 0, 0]]);
        round_trip(&[&[7; 1000]]);
        round_trip(&[&pseudo_random(100_000, 1)]);
        round_trip(&[&pseudo_random(5, 2), &pseudo_random(70_000, 3), b"z"]);
        // Runs of zeros of every length around the match limits, between and at the ends.
        let mut runs = Vec::new();
        for n in 0..600 {
            runs.push(1 + (n % 7) as u8);
            runs.extend(std::iter::repeat_n(0, n));
        }
        round_trip(&[&runs]);
        round_trip(&[&runs[..1000], &runs[1000..], &[0; 300]]);
        // Skewed counts that make an unlimited Huffman code deeper than 15 bits.
        let mut fib = Vec::new();
        let (mut a, mut b) = (1usize, 1usize);
        for symbol in 1..=25u8 {
            fib.extend(std::iter::repeat_n(symbol, a));
            (a, b) = (b, a + b);
        }
        round_trip(&[&fib]);
    }

    #[test]
    fn short_repetitive_inputs_of_every_length_decode() {
        // Two-letter alphabets make matches start at every offset, up to the last bytes of a piece.
        let mut state = 0x2545_f491_u32;
        for len in 1..200 {
            for alphabet in [2u32, 3] {
                let data: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 17;
                        state ^= state << 5;
                        (state % alphabet) as u8
                    })
                    .collect();
                round_trip(&[&data]);
                round_trip(&[&data, &data]);
            }
        }
    }

    /// The ISAs this machine runs (AVX2 is required on x86-64 CI machines that have it).
    fn isas() -> Vec<Isa> {
        let mut isas = vec![Isa::Scalar];
        if Isa::best() == Isa::Avx2 {
            isas.push(Isa::Avx2);
        }
        isas
    }

    /// Filtered-looking 16-bit rows: smooth heights with terraces and flat stretches, Up-filtered.
    fn filtered_terrain(width: usize, rows: usize, seed: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut prev = vec![0u8; width * 2];
        let mut state = seed | 1;
        for y in 0..rows {
            let mut row = Vec::with_capacity(width * 2);
            for x in 0..width {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                let smooth = ((x as f32 * 0.01).sin() * (y as f32 * 0.02).cos() * 20000.0) as i32 + 32767;
                let v = match (x / 97 + y / 13) % 4 {
                    0 => 32767,                              // flat
                    1 => smooth & !0xff,                     // terraces
                    2 => (x as i32 * 3 + y as i32) & 0xffff, // constant slope
                    _ => smooth + (state % 64) as i32,       // noise
                };
                row.extend_from_slice(&(v.clamp(0, 65534) as u16).to_be_bytes());
            }
            out.push(2);
            out.extend(row.iter().zip(&prev).map(|(&a, &b)| a.wrapping_sub(b)));
            prev = row;
        }
        out
    }

    #[test]
    fn same_bytes_as_the_reference_on_every_isa() {
        let mut inputs: Vec<Vec<u8>> = vec![
            vec![],
            b"a".to_vec(),
            vec![0; 4],
            vec![7; 1000],
            pseudo_random(100_000, 1),
            filtered_terrain(1000, 40, 5),
            filtered_terrain(333, 17, 6),
        ];
        let mut runs = Vec::new();
        for n in 0..600 {
            runs.push(1 + (n % 7) as u8);
            runs.extend(std::iter::repeat_n(0, n));
        }
        inputs.push(runs);
        let mut state = 0x2545_f491_u32;
        for len in 1..120 {
            for alphabet in [2u32, 3] {
                inputs.push(
                    (0..len)
                        .map(|_| {
                            state ^= state << 13;
                            state ^= state >> 17;
                            state ^= state << 5;
                            (state % alphabet) as u8
                        })
                        .collect(),
                );
            }
        }
        for isa in isas() {
            // One compressor for everything: its buffers are reused across sizes.
            let mut compressor = Compressor::default();
            for data in &inputs {
                for bpp in [1, 2, 3, 6] {
                    for last in [false, true] {
                        let mut expected = Vec::new();
                        reference::compress_piece(data, bpp, last, &mut expected);
                        let got = compressor.compress_with(data, bpp, last, isa);
                        assert!(got == expected, "{isa:?}, {} bytes, bpp {bpp}, last {last}", data.len());
                    }
                }
            }
        }
    }

    #[test]
    fn codes_respect_the_length_limit() {
        let freq: Vec<u32> = (0..286).map(|i| if i < 30 { 1 << (i.min(30)) } else { 1 }).collect();
        let lengths = code_lengths(&freq, MAX_BITS);
        assert!(lengths.iter().all(|&l| (1..=MAX_BITS).contains(&l)));
        // Kraft equality: the code is complete.
        let kraft: u64 = lengths.iter().map(|&l| 1u64 << (MAX_BITS - l)).sum();
        assert_eq!(kraft, 1 << MAX_BITS);
    }

    #[test]
    fn adler_of_a_concatenation_combines_from_the_parts() {
        let data = pseudo_random(300_000, 9);
        for split in [0, 1, 2, 5551, 5552, 65521, 65522, 100_000, 299_999, 300_000] {
            let (a, b) = data.split_at(split);
            let combined = adler32_combine(adler2::adler32_slice(a), adler2::adler32_slice(b), b.len() as u64);
            assert_eq!(combined, adler2::adler32_slice(&data), "split at {split}");
        }
        let ones = vec![0xffu8; 200_000];
        let (a, b) = ones.split_at(77_777);
        let combined = adler32_combine(adler2::adler32_slice(a), adler2::adler32_slice(b), b.len() as u64);
        assert_eq!(combined, adler2::adler32_slice(&ones));
    }
}

/// Sizes and times on real renders: `GEOGEN_R16=a.r16,b.r16 GEOGEN_R16_WIDTH=4000 cargo test --release
/// -p geogen-io --lib deflate::measure -- --ignored --nocapture`.
#[cfg(test)]
mod measure {
    #[test]
    #[ignore = "a measurement on files given by the environment"]
    fn sizes_on_r16_files() {
        let width: usize = std::env::var("GEOGEN_R16_WIDTH").map_or(4000, |w| w.parse().expect("width"));
        for path in std::env::var("GEOGEN_R16").unwrap_or_default().split(',').filter(|p| !p.is_empty()) {
            let raw = std::fs::read(path).expect("read");
            let row = width * 2;
            let mut filtered = Vec::with_capacity(raw.len() + raw.len() / row);
            let mut prev = vec![0u8; row];
            for line in raw.chunks_exact(row) {
                let be: Vec<u8> = line.chunks_exact(2).flat_map(|p| [p[1], p[0]]).collect();
                filtered.push(2);
                filtered.extend(be.iter().zip(&prev).map(|(&a, &b)| a.wrapping_sub(b)));
                prev = be;
            }
            let piece = (super::super::parpng::PIECE_BYTES / (row + 1)).max(1) * (row + 1);
            let start = std::time::Instant::now();
            let mut out = Vec::new();
            let pieces: Vec<&[u8]> = filtered.chunks(piece).collect();
            for (i, p) in pieces.iter().enumerate() {
                super::compress_piece(p, 2, i + 1 == pieces.len(), &mut out);
            }
            let ns = start.elapsed().as_nanos() as f64 / (raw.len() / 2) as f64;
            println!("{path}: {} bytes, {ns:.2} ns/px on one thread", out.len());
        }
    }
}
