//! A monotone priority queue (a radix heap) for the priority flood.
//!
//! A priority flood only ever pushes keys at least as large as the last one popped, which is what a
//! radix heap needs: items sit in buckets by the highest bit in which their key differs from the
//! last key popped, so a push is one `leading_zeros` and a pop refills the lowest bucket from the
//! next non-empty one at most once per item and bit. That is several times cheaper than a binary
//! heap at the millions of items of a 4096² grid. Equal keys come out last in, first out; the
//! order is a function of the pushes alone, so the flood is deterministic.

/// A height as a key whose unsigned order is the heights' order (−0 below +0; no NaN expected).
#[inline]
pub fn height_key(h: f64) -> u64 {
    let bits = h.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

pub struct RadixHeap {
    buckets: Vec<Vec<(u64, u32)>>,
    last: u64,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> RadixHeap {
        RadixHeap::new()
    }
}

impl RadixHeap {
    pub fn new() -> RadixHeap {
        RadixHeap { buckets: (0..65).map(|_| Vec::new()).collect(), last: 0, len: 0 }
    }

    #[inline]
    fn bucket(key: u64, last: u64) -> usize {
        (64 - (key ^ last).leading_zeros()) as usize
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pushes `value` with `key`; a key below the last one popped is raised to it (the flood never
    /// pushes one: a node reached from a lower level is in a depression and takes that level).
    #[inline]
    pub fn push(&mut self, key: u64, value: u32) {
        let key = key.max(self.last);
        self.buckets[Self::bucket(key, self.last)].push((key, value));
        self.len += 1;
    }

    /// The item with the least key.
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = self.buckets.iter().position(|b| !b.is_empty())?;
            let items = std::mem::take(&mut self.buckets[i]);
            self.last = items.iter().map(|&(k, _)| k).min()?;
            for &(key, value) in &items {
                self.buckets[Self::bucket(key, self.last)].push((key, value));
            }
            // Give the drained bucket's capacity back for reuse.
            let mut items = items;
            items.clear();
            if self.buckets[i].is_empty() {
                self.buckets[i] = items;
            }
        }
        self.len -= 1;
        self.buckets[0].pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order() {
        let mut heap = RadixHeap::new();
        let mut state = 12345u64;
        let mut keys = Vec::new();
        for i in 0..2000u32 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let h = ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
            keys.push(height_key(h));
            heap.push(height_key(h), i);
        }
        keys.sort_unstable();
        let mut popped = Vec::new();
        while let Some((k, _)) = heap.pop() {
            popped.push(k);
        }
        assert_eq!(popped, keys);
    }

    #[test]
    fn interleaved_monotone_pushes() {
        let mut heap = RadixHeap::new();
        heap.push(height_key(0.5), 0);
        heap.push(height_key(-0.5), 1);
        assert_eq!(heap.pop().map(|p| p.1), Some(1));
        heap.push(height_key(0.1), 2);
        heap.push(height_key(0.7), 3);
        assert_eq!(heap.pop().map(|p| p.1), Some(2));
        assert_eq!(heap.pop().map(|p| p.1), Some(0));
        assert_eq!(heap.pop().map(|p| p.1), Some(3));
        assert_eq!(heap.pop(), None);
        assert!(height_key(-0.0) < height_key(0.0) && height_key(-1.0) < height_key(-0.5));
    }
}
