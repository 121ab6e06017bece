//! Randomness exactly as the original GeoGen computes it, so that the same seed gives the same
//! terrain: the 32-bit integer hash, MT19937, djb2 for strings, and seed combination.
//! All arithmetic is on `u32` with wrap-around.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

mod mt;

pub use mt::Mt19937;

/// The integer hash of one value.
#[inline]
pub fn hash1(x: u32) -> u32 {
    let mut x = x;
    x = ((x >> 16) ^ x).wrapping_mul(4256233);
    x = ((x >> 16) ^ x).wrapping_mul(4256249);
    (x >> 16) ^ x
}

/// The hash of two values.
#[inline]
pub fn hash2(a: u32, b: u32) -> u32 {
    let mixed = a.wrapping_mul(1028385129).wrapping_add(b.wrapping_mul(945191568)).wrapping_add(2015177);
    hash1(mixed ^ 1028385129)
}

/// The hash of three values: `hash2(hash2(a, b), c)`.
pub fn hash3(a: u32, b: u32, c: u32) -> u32 {
    hash2(hash2(a, b), c)
}

/// The hash of any number of values, chained left to right; one value is [`hash1`].
pub fn hash_all(values: &[u32]) -> u32 {
    match values {
        [] => hash1(0),
        [one] => hash1(*one),
        [first, rest @ ..] => rest.iter().fold(*first, |acc, &v| hash2(acc, v)),
    }
}

/// djb2 of a string's UTF-8 bytes, truncated to 32 bits (as the original on every platform).
pub fn hash_str(s: &str) -> u32 {
    s.bytes().fold(5381u32, |h, b| h.wrapping_mul(33).wrapping_add(b as u32))
}

/// `CombineSeeds(...)`: the chained hash of the seeds.
pub fn combine_seeds(seeds: &[u32]) -> u32 {
    hash_all(seeds)
}

/// The seed a user types: a decimal unsigned 32-bit number is used as is; anything else is hashed
/// with djb2 (`"0"` is 0, `"island"` is djb2("island")).
pub fn recognize_seed(text: &str) -> u32 {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = trimmed.parse::<u32>() {
            return n;
        }
    }
    hash_str(text)
}

/// A script seed argument (a Number) cast to unsigned the way the original's `(unsigned)` cast
/// behaves on x86-64 for in-range values; out-of-range and negative values wrap modulo 2^32 instead
/// of being undefined behaviour.
pub fn seed_from_number(n: f64) -> u32 {
    if !n.is_finite() {
        return 0;
    }
    let t = n.trunc();
    // Wrap through i64/i128 so negative values give their two's complement, as on the original.
    (t.rem_euclid(4294967296.0)) as u64 as u32
}

/// The per-point random field of `RandomSequence2D`: a stateless hash of the current value and the
/// point.
pub fn field_int(current: u32, x: i32, y: i32) -> u32 {
    hash3(current, x as u32, y as u32)
}

/// `u32 / 4294967295`: a value in [0, 1], both ends included.
pub fn unit_double(u: u32) -> f64 {
    u as f64 / 4294967295.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_sequence_2d_vectors_for_seed_8() {
        let mut mt = Mt19937::new(8);
        let current = mt.next_u32();
        assert_eq!(field_int(current, 0, 0) as i32, 1860076204);
        assert_eq!(field_int(current, 0, 0) as i32, 1860076204);
        assert_eq!(field_int(current, 0, 1) as i32, 806232052);
        assert_eq!(field_int(current, 1, 0) as i32, -247555535);
        assert_eq!(field_int(current, 0, 2) as i32, -1143852053);
    }

    #[test]
    fn seeds_are_recognized_like_the_original() {
        assert_eq!(recognize_seed("0"), 0);
        assert_eq!(recognize_seed("123"), 123);
        assert_eq!(recognize_seed("abc"), hash_str("abc"));
        assert_eq!(hash_str(""), 5381);
        assert_eq!(hash_str("a"), 5381 * 33 + 97);
        assert_eq!(seed_from_number(-1.0), u32::MAX);
        assert_eq!(seed_from_number(5.9), 5);
    }

    #[test]
    fn hash_chains_left_to_right() {
        assert_eq!(hash_all(&[1, 2, 3]), hash3(1, 2, 3));
        assert_eq!(combine_seeds(&[7, 9]), hash2(7, 9));
    }
}
