//! An allocator for binaries that keeps the pages of big freed buffers for the next big one.
//!
//! A render allocates and frees maps of tens of megabytes step after step. The system allocator
//! gives each freed one back to the kernel, so the next map's first writes fault in every 4 KiB
//! page again, each zeroed by the kernel: at 4000², 350 000 faults and a fifth of the CPU time of a
//! transform-heavy script. [`LargePages`] maps big blocks itself and keeps a few freed ones; the
//! next big allocation takes the best-fitting kept block, cutting its tail off or growing it
//! (`mremap` moves pages, not bytes), so most pages are already there.
//!
//! Resident memory stays within the high-water mark of the big blocks in use: kept blocks fill
//! at most the gap between what is in use now and the most that was ever in use at once, and are
//! given back to the system as soon as they would exceed it. It changes where memory comes from,
//! never what is computed. (Transparent huge pages were tried first: a twentieth of the faults,
//! but more kernel time than before.)
//!
//! The pages a new block still needs from the system are faulted in at about half the cost by
//! one `MADV_POPULATE_WRITE` per band than by a fault at each page's first write, and they are
//! zero already: [`take_fresh_range`] tells the thread that just allocated which bytes are fresh,
//! and the renderer's zeroing of a new map ([`crate::HeightMap::try_zeroed`],
//! [`crate::HeightMap::try_from_bands`]) populates those bands ([`zero_fresh`]) instead of writing
//! zeros on them.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, except for blocks of at least [`LargePages::THRESHOLD`] bytes on Linux,
/// which it maps itself and recycles. Install it in a binary with `#[global_allocator]`.
///
/// Its state is global (one per process, whichever `LargePages` value is installed), so that the
/// renderer can bound what is kept by its memory plan with [`keep_at_most`].
pub struct LargePages;

#[cfg(target_os = "linux")]
static STATE: std::sync::Mutex<large::State> = std::sync::Mutex::new(large::State::new());

/// Gives kept blocks back to the system (shrinking the last one kept) until at most `bytes` are
/// kept. The renderer calls it before each step with the memory its plan grants the step beyond
/// the objects alive, so freed maps are kept only for a step that allocates as much again: resident
/// memory stays within the plan. A no-op where [`LargePages`] is not the global allocator.
pub fn keep_at_most(bytes: u64) {
    #[cfg(target_os = "linux")]
    if let Ok(mut state) = STATE.lock() {
        state.keep_at_most(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

/// Tells the system allocator to keep the pages of freed small and middle-sized blocks (below
/// [`LargePages::THRESHOLD`]) for reuse instead of giving them back to the kernel at once, so the
/// band buffers and scratch of step after step do not fault their pages in again. What it keeps
/// is bounded by the most it ever had in use at once. Call it once, at the start of `main`, in a
/// binary that installs [`LargePages`]. A no-op except with glibc on Linux.
pub fn keep_small_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes glibc's tuning parameters; both values are in range.
    unsafe {
        // Blocks below our threshold come from the heap, never from a mapping of their own
        // (whose pages would be unmapped on every free) ...
        libc::mallopt(libc::M_MMAP_THRESHOLD, LargePages::THRESHOLD as libc::c_int);
        // ... and free memory at the top of a heap is not trimmed below this much.
        libc::mallopt(libc::M_TRIM_THRESHOLD, SMALL_PAGES_KEPT as libc::c_int);
    }
}

/// How much freed memory the system allocator keeps on top of its heaps (see [`keep_small_pages`]).
// 16 MiB: at 4000² it takes the faults of the examples' small buffers down to the peak's own
// (dunesea 179 -> 131 MB faulted, conflux 495 -> 416) for at most 7 MiB more peak; 256 MiB
// saved slightly more faults but raised continents' peak from 227 to 273 MiB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const SMALL_PAGES_KEPT: usize = 16 << 20;

/// Bytes of big blocks mapped fresh from the system so far (new mappings and growth), the pages
/// that recycling could not provide: a render's own measure of how well its freed maps were
/// reused. Zero where [`LargePages`] is not the global allocator.
pub fn fresh_bytes() -> u64 {
    #[cfg(target_os = "linux")]
    if let Ok(state) = STATE.lock() {
        return state.fresh_bytes as u64;
    }
    0
}

#[cfg(target_os = "linux")]
thread_local! {
    // The last big block handed out on this thread by `LargePages` and the byte range of it that
    // was mapped fresh (its pages not yet faulted in, all zero): `(address, start, end)`.
    static LAST_FRESH: std::cell::Cell<(usize, usize, usize)> = const { std::cell::Cell::new((0, 0, 0)) };
}

/// Records that the block at `ptr` was just handed out with the bytes `fresh` mapped fresh
/// (`ptr` null, or `fresh` empty: nothing is fresh).
#[cfg(target_os = "linux")]
fn record_fresh(ptr: *mut u8, fresh: std::ops::Range<usize>) {
    let _ = LAST_FRESH.try_with(|last| last.set((ptr as usize, fresh.start, fresh.end)));
}

/// Which bytes of the `len`-byte buffer at `ptr`, just allocated on this thread, are fresh pages: zero, and
/// not yet faulted in. Empty unless `ptr` is the last big block [`LargePages`] handed out on this
/// thread (so always empty where it is not the global allocator); the record is consumed.
///
/// A caller that zeroes a new buffer can skip those bytes and let [`populate`] fault them in.
pub(crate) fn take_fresh_range(ptr: *const u8, len: usize) -> std::ops::Range<usize> {
    #[cfg(target_os = "linux")]
    if let Ok((address, start, end)) = LAST_FRESH.try_with(|last| last.replace((0, 0, 0))) {
        // Every big allocation on this thread rewrites the record, so a big buffer's address
        // matching it was handed out by the last one.
        if address == ptr as usize && address != 0 && len >= LargePages::THRESHOLD {
            return start.min(len)..end.min(len);
        }
    }
    let _ = (ptr, len);
    0..0
}

/// Makes `bytes`, which lie in fresh pages (zero, see [`take_fresh_range`]), initialised zeros at
/// about half the cost of writing them: the whole pages among them are faulted in with one
/// `MADV_POPULATE_WRITE` (which writes them as far as the program can tell, and leaves them zero),
/// the partial pages at the ends are written. Where the system cannot populate (another OS, a
/// kernel before 5.14), every byte is written.
pub(crate) fn zero_fresh(bytes: &mut [std::mem::MaybeUninit<u8>]) {
    const PAGE: usize = 4096;
    let start = bytes.as_ptr() as usize;
    let first = (start.div_ceil(PAGE) * PAGE - start).min(bytes.len());
    let last = ((start + bytes.len()) / PAGE * PAGE).saturating_sub(start).max(first);
    let (head, rest) = bytes.split_at_mut(first);
    let (pages, tail) = rest.split_at_mut(last - first);
    #[cfg(target_os = "linux")]
    // SAFETY: `pages` is memory we may write, whole pages; populating only faults them in, and a
    // failure leaves them untouched.
    let populated = pages.is_empty()
        || unsafe { libc::madvise(pages.as_mut_ptr().cast(), pages.len(), libc::MADV_POPULATE_WRITE) } == 0;
    #[cfg(not(target_os = "linux"))]
    let populated = pages.is_empty();
    let written: [&mut [std::mem::MaybeUninit<u8>]; 3] =
        if populated { [head, tail, &mut []] } else { [head, pages, tail] };
    for part in written {
        // SAFETY: `part` is `part.len()` bytes we may write.
        unsafe { std::ptr::write_bytes(part.as_mut_ptr(), 0, part.len()) };
    }
}

impl LargePages {
    /// Blocks from this size up are mapped and recycled here.
    pub const THRESHOLD: usize = 4 << 20;

    pub const fn new() -> LargePages {
        LargePages
    }
}

impl Default for LargePages {
    fn default() -> Self {
        LargePages::new()
    }
}

#[cfg(not(target_os = "linux"))]
// SAFETY: every call goes to `System` unchanged.
unsafe impl GlobalAlloc for LargePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(target_os = "linux")]
// SAFETY: a layout is served here if and only if `large::is_large` holds for it, on allocation
// and on release alike (a layout's size and alignment are the same for both), and everything else
// goes to `System`; blocks served here are page-aligned mappings of at least the size asked.
unsafe impl GlobalAlloc for LargePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !large::is_large(layout.size(), layout.align()) {
            // SAFETY: the caller's guarantees for this call, passed on to the system allocator.
            return unsafe { System.alloc(layout) };
        }
        let (ptr, fresh) = match STATE.lock() {
            Ok(mut state) => state.take(layout.size()),
            Err(_) => return std::ptr::null_mut(),
        };
        record_fresh(ptr, fresh);
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !large::is_large(layout.size(), layout.align()) {
            // SAFETY: the caller's guarantees for this call, passed on to the system allocator.
            return unsafe { System.alloc_zeroed(layout) };
        }
        match STATE.lock() {
            // A fresh mapping is zero already; a recycled block is not, and zeroing it here would
            // be one thread's work, so zeroed blocks are always fresh.
            Ok(mut state) => {
                let ptr = state.fresh(layout.size());
                record_fresh(ptr, 0..layout.size());
                ptr
            }
            Err(_) => std::ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !large::is_large(layout.size(), layout.align()) {
            // SAFETY: the caller's guarantees for this call, passed on to the system allocator.
            return unsafe { System.dealloc(ptr, layout) };
        }
        // A record of this block must not outlive it: its address may come back recycled.
        let _ = LAST_FRESH.try_with(|last| {
            if last.get().0 == ptr as usize {
                last.set((0, 0, 0));
            }
        });
        if let Ok(mut state) = STATE.lock() {
            state.give_back(ptr, layout.size());
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (was, will) = (large::is_large(layout.size(), layout.align()), large::is_large(new_size, layout.align()));
        if !was && !will {
            // SAFETY: the caller's guarantees for this call, passed on to the system allocator.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        record_fresh(std::ptr::null_mut(), 0..0);
        if was && will {
            return match STATE.lock() {
                Ok(mut state) => state.resize(ptr, layout.size(), new_size),
                Err(_) => std::ptr::null_mut(),
            };
        }
        // Across the threshold: a new block from the other side, the bytes copied over.
        // SAFETY: the caller guarantees `new_size` is a valid size for `layout.align()`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `new_layout` is valid (above) and `new_size` is not zero (the caller's guarantee).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: `new` holds at least `min(old, new size)` bytes and `ptr` as many (the
            // caller's block), the two blocks are distinct, and `ptr` was allocated here with
            // `layout` (the caller's guarantee).
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        // The new block holds the old bytes now: none of it is fresh.
        record_fresh(std::ptr::null_mut(), 0..0);
        new
    }
}

#[cfg(target_os = "linux")]
mod large {
    use super::LargePages;

    const PAGE: usize = 4096;
    /// How many freed blocks are kept at most.
    const KEPT: usize = 8;

    pub fn is_large(size: usize, align: usize) -> bool {
        size >= LargePages::THRESHOLD && align <= PAGE
    }

    fn pages(size: usize) -> usize {
        size.div_ceil(PAGE) * PAGE
    }

    #[derive(Clone, Copy)]
    struct Block {
        address: usize,
        /// Mapped bytes, a multiple of the page size; 0 for an empty slot.
        bytes: usize,
    }

    const NONE: Block = Block { address: 0, bytes: 0 };

    pub struct State {
        kept: [Block; KEPT],
        /// Mapped bytes handed out and not yet given back.
        in_use: usize,
        /// The most that `in_use` has ever been: kept and in-use blocks together stay within it.
        high_water: usize,
        /// Bytes mapped fresh so far (see [`super::fresh_bytes`]).
        pub fresh_bytes: usize,
    }

    impl State {
        pub const fn new() -> State {
            State { kept: [NONE; KEPT], in_use: 0, high_water: 0, fresh_bytes: 0 }
        }

        fn kept_bytes(&self) -> usize {
            self.kept.iter().map(|b| b.bytes).sum()
        }

        /// Bytes in use, kept, and the high-water mark (for the tests).
        #[cfg(test)]
        pub fn accounts(&self) -> (usize, usize, usize) {
            (self.in_use, self.kept_bytes(), self.high_water)
        }

        /// A block for `size` bytes: the head of the smallest kept block that holds it (the tail
        /// kept if it is big enough to be recycled, else unmapped); else the largest kept block,
        /// grown; else a fresh mapping.
        pub fn take(&mut self, size: usize) -> (*mut u8, std::ops::Range<usize>) {
            let bytes = pages(size);
            let fits = (0..KEPT).filter(|&i| self.kept[i].bytes >= bytes).min_by_key(|&i| self.kept[i].bytes);
            let largest = (0..KEPT).filter(|&i| self.kept[i].bytes > 0).max_by_key(|&i| self.kept[i].bytes);
            let mut fresh = 0..0;
            let address = match fits.or(largest) {
                // A block bigger than needed by a recyclable block's worth: its head is handed
                // out and its tail stays kept (unmapping the tail would throw away pages that
                // the next big allocation would fault in again).
                Some(i) if self.kept[i].bytes >= bytes + LargePages::THRESHOLD => {
                    let block = self.kept[i];
                    self.kept[i] = Block { address: block.address + bytes, bytes: block.bytes - bytes };
                    Some(block.address)
                }
                Some(i) => {
                    let block = std::mem::replace(&mut self.kept[i], NONE);
                    self.fresh_bytes += bytes.saturating_sub(block.bytes);
                    fresh = block.bytes.min(bytes)..bytes;
                    resize_mapping(block.address, block.bytes, bytes)
                }
                None => {
                    self.fresh_bytes += bytes;
                    fresh = 0..bytes;
                    map(bytes)
                }
            };
            (self.handed_out(address, bytes), fresh)
        }

        /// A fresh (zeroed) mapping for `size` bytes.
        pub fn fresh(&mut self, size: usize) -> *mut u8 {
            let bytes = pages(size);
            self.fresh_bytes += bytes;
            let address = map(bytes);
            self.handed_out(address, bytes)
        }

        fn handed_out(&mut self, address: Option<usize>, bytes: usize) -> *mut u8 {
            let Some(address) = address else { return std::ptr::null_mut() };
            self.in_use += bytes;
            self.high_water = self.high_water.max(self.in_use);
            self.trim();
            address as *mut u8
        }

        /// Keeps a freed block if there is room under the high-water mark, else unmaps it.
        pub fn give_back(&mut self, ptr: *mut u8, size: usize) {
            let bytes = pages(size);
            self.in_use = self.in_use.saturating_sub(bytes);
            match self.kept.iter_mut().find(|b| b.bytes == 0) {
                Some(slot) => *slot = Block { address: ptr as usize, bytes },
                None => unmap(ptr as usize, bytes),
            }
            self.trim();
        }

        /// Grows or shrinks a block in use, keeping its contents.
        pub fn resize(&mut self, ptr: *mut u8, old_size: usize, new_size: usize) -> *mut u8 {
            let (old, new) = (pages(old_size), pages(new_size));
            self.fresh_bytes += new.saturating_sub(old);
            match resize_mapping(ptr as usize, old, new) {
                Some(address) => {
                    self.in_use = self.in_use - old + new;
                    self.high_water = self.high_water.max(self.in_use);
                    self.trim();
                    address as *mut u8
                }
                None => std::ptr::null_mut(),
            }
        }

        /// Keeps the largest blocks that fit in `budget` bytes, the next one shrunk to what is
        /// left of it, and unmaps the rest.
        pub fn keep_at_most(&mut self, budget: usize) {
            let mut order: [usize; KEPT] = std::array::from_fn(|i| i);
            order.sort_by_key(|&i| std::cmp::Reverse(self.kept[i].bytes));
            let mut left = budget / PAGE * PAGE;
            for i in order {
                let block = self.kept[i];
                if block.bytes == 0 {
                    continue;
                }
                if block.bytes <= left {
                    left -= block.bytes;
                } else if left >= LargePages::THRESHOLD {
                    self.kept[i] = match resize_mapping(block.address, block.bytes, left) {
                        Some(address) => Block { address, bytes: left },
                        None => {
                            unmap(block.address, block.bytes);
                            NONE
                        }
                    };
                    left = 0;
                } else {
                    unmap(block.address, block.bytes);
                    self.kept[i] = NONE;
                }
            }
        }

        /// Unmaps kept blocks, smallest first, until kept and in use fit under the high-water mark.
        fn trim(&mut self) {
            while self.in_use + self.kept_bytes() > self.high_water {
                let Some(i) = (0..KEPT).filter(|&i| self.kept[i].bytes > 0).min_by_key(|&i| self.kept[i].bytes) else {
                    return;
                };
                let block = std::mem::replace(&mut self.kept[i], NONE);
                unmap(block.address, block.bytes);
            }
        }
    }

    fn map(bytes: usize) -> Option<usize> {
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no
        // existing memory.
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        (address != libc::MAP_FAILED).then_some(address as usize)
    }

    fn unmap(address: usize, bytes: usize) {
        // SAFETY: [address, address + bytes) is a whole mapping of ours that nobody uses any more.
        unsafe {
            libc::munmap(address as *mut libc::c_void, bytes);
        }
    }

    /// The mapping at `address` resized from `old` to `new` bytes, its pages (and contents) kept
    /// up to the smaller of the two; it may move when it grows.
    fn resize_mapping(address: usize, old: usize, new: usize) -> Option<usize> {
        if new == old {
            return Some(address);
        }
        // SAFETY: [address, address + old) is a whole mapping of ours; MREMAP_MAYMOVE lets the
        // kernel move it (pages, not bytes) where it has room to grow.
        let moved = unsafe { libc::mremap(address as *mut libc::c_void, old, new, libc::MREMAP_MAYMOVE) };
        (moved != libc::MAP_FAILED).then_some(moved as usize)
    }
}

#[cfg(all(test, target_os = "linux"))]
#[allow(
    clippy::undocumented_unsafe_blocks,
    reason = "the tests read and write only blocks they took just before, within their sizes"
)]
mod tests {
    use super::large::State;
    use super::*;

    const MIB: usize = 1 << 20;

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 8).unwrap()
    }

    /// Writes a pattern on every page of a block, and checks it back.
    unsafe fn fill(ptr: *mut u8, size: usize, seed: u8) {
        for i in (0..size).step_by(4096) {
            unsafe { *ptr.add(i) = seed.wrapping_add((i / 4096) as u8) };
        }
    }
    unsafe fn holds(ptr: *mut u8, size: usize, seed: u8) -> bool {
        (0..size).step_by(4096).all(|i| unsafe { *ptr.add(i) } == seed.wrapping_add((i / 4096) as u8))
    }

    #[test]
    fn a_freed_block_serves_the_next_allocation_of_its_size_or_less() {
        let mut s = State::new();
        let (p, fresh) = s.take(16 * MIB);
        assert!(!p.is_null());
        assert_eq!(fresh, 0..16 * MIB, "a new mapping is fresh");
        s.give_back(p, 16 * MIB);
        let (q, fresh) = s.take(16 * MIB);
        assert_eq!(q, p, "the same block again");
        assert!(fresh.is_empty(), "a recycled block is not fresh");
        s.give_back(q, 16 * MIB);
        let (r, _) = s.take(10 * MIB);
        assert_eq!(r, p, "its head, in place");
        assert_eq!(s.accounts(), (10 * MIB, 6 * MIB, 16 * MIB));
        s.give_back(r, 10 * MIB);
        s.keep_at_most(0);
        assert_eq!(s.accounts(), (0, 0, 16 * MIB));
    }

    #[test]
    fn a_small_allocation_takes_the_head_of_a_big_kept_block_and_leaves_its_tail_kept() {
        let mut s = State::new();
        let (p, _) = s.take(40 * MIB);
        unsafe { fill(p, 40 * MIB, 7) };
        s.give_back(p, 40 * MIB);
        let (q, _) = s.take(10 * MIB);
        assert_eq!(q, p, "the head of the kept block");
        assert_eq!(s.accounts(), (10 * MIB, 30 * MIB, 40 * MIB), "the tail is still kept");
        let (r, _) = s.take(30 * MIB);
        assert_eq!(r as usize, p as usize + 10 * MIB, "the tail serves the next allocation");
        assert!(unsafe { holds(r, 30 * MIB, 7u8.wrapping_add(((10 * MIB) / 4096) as u8)) }, "its pages were kept");
        unsafe { fill(q, 10 * MIB, 1) };
        assert!(unsafe { holds(r, 30 * MIB, 7u8.wrapping_add(((10 * MIB) / 4096) as u8)) }, "head and tail are apart");
        // A remainder too small to recycle is unmapped instead of kept.
        s.give_back(q, 10 * MIB);
        let (t, _) = s.take(8 * MIB);
        assert_eq!(t, q);
        assert_eq!(s.accounts(), (38 * MIB, 0, 40 * MIB));
        s.give_back(t, 8 * MIB);
        s.give_back(r, 30 * MIB);
        s.keep_at_most(0);
        assert_eq!(s.accounts(), (0, 0, 40 * MIB));
    }

    #[test]
    fn kept_and_used_blocks_stay_under_the_high_water_mark_and_the_budget() {
        let mut s = State::new();
        let mut live: Vec<(*mut u8, usize, u8)> = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..400 {
            let r = next();
            if live.len() < 6 && (r % 3 != 0 || live.is_empty()) {
                let size = (4 + (r >> 8) % 13) as usize * MIB + (r >> 20) as usize % 5000;
                let (p, fresh) = s.take(size);
                assert!(!p.is_null());
                assert!(fresh.is_empty() || fresh.end >= size);
                let zero =
                    (fresh.start.div_ceil(4096) * 4096..fresh.end).step_by(4096).all(|i| unsafe { *p.add(i) } == 0);
                assert!(zero, "the fresh part of a block is zero");
                unsafe { fill(p, size, r as u8) };
                live.push((p, size, r as u8));
            } else {
                let (p, size, seed) = live.swap_remove((r >> 8) as usize % live.len());
                assert!(unsafe { holds(p, size, seed) }, "a live block was handed out twice");
                s.give_back(p, size);
            }
            if round % 7 == 0 {
                let budget = (r >> 32) as usize % (40 * MIB);
                s.keep_at_most(budget);
                assert!(s.accounts().1 <= budget);
            }
            let (in_use, kept, high_water) = s.accounts();
            assert!(in_use + kept <= high_water, "{in_use} + {kept} > {high_water}");
        }
        for (p, size, seed) in live {
            assert!(unsafe { holds(p, size, seed) });
            s.give_back(p, size);
        }
        s.keep_at_most(0);
    }

    #[test]
    fn the_budget_keeps_the_largest_blocks_and_shrinks_the_next() {
        let mut s = State::new();
        let blocks: Vec<*mut u8> = [8, 20, 12].iter().map(|&m| s.take(m * MIB).0).collect();
        for (&p, m) in blocks.iter().zip([8, 20, 12]) {
            s.give_back(p, m * MIB);
        }
        assert_eq!(s.accounts(), (0, 40 * MIB, 40 * MIB));
        s.keep_at_most(27 * MIB);
        assert_eq!(s.accounts().1, 27 * MIB, "20 whole, 12 cut to 7, 8 gone");
        s.keep_at_most(3 * MIB);
        assert_eq!(s.accounts().1, 0, "nothing below the threshold is kept");
    }

    #[test]
    fn zeroed_blocks_are_zero_even_after_a_dirty_one_was_freed() {
        let mut s = State::new();
        let (p, _) = s.take(8 * MIB);
        unsafe { std::ptr::write_bytes(p, 0xab, 8 * MIB) };
        s.give_back(p, 8 * MIB);
        let z = s.fresh(8 * MIB);
        assert!(unsafe { std::slice::from_raw_parts(z, 8 * MIB) }.iter().all(|&b| b == 0));
        s.give_back(z, 8 * MIB);
        s.keep_at_most(0);
    }

    #[test]
    fn zero_fresh_writes_the_partial_pages_and_populates_the_whole_ones() {
        // On dirty memory (not what it is for) the split shows: the partial pages at both ends
        // are written, the whole pages between are only populated, so they keep their bytes.
        let mut buffer = vec![std::mem::MaybeUninit::new(0xabu8); 6 * 4096];
        let base = buffer.as_ptr() as usize;
        let skip = base.div_ceil(4096) * 4096 - base + 100; // 100 bytes into a page
        let bytes = &mut buffer[skip..skip + 3 * 4096 + 50];
        zero_fresh(bytes);
        let read = |i: usize| unsafe { bytes[i].assume_init() };
        assert!((0..3996).all(|i| read(i) == 0), "the head's partial page is written");
        let whole_pages = 3996..3996 + 2 * 4096;
        assert!(
            whole_pages.clone().all(|i| read(i) == 0xab) || cfg!(not(target_os = "linux")),
            "the whole pages are only populated"
        );
        assert!((whole_pages.end..bytes.len()).all(|i| read(i) == 0), "the tail's partial page is written");
        // Within one page: nothing to populate, every byte written.
        let small = &mut buffer[skip + 10..skip + 20];
        zero_fresh(small);
        assert!(small.iter().all(|b| unsafe { b.assume_init() } == 0));
    }

    #[test]
    fn the_fresh_record_is_dropped_by_a_copy_across_the_threshold_and_by_a_free() {
        let a = LargePages::new();
        unsafe {
            let small = a.alloc(layout(MIB));
            std::ptr::write_bytes(small, 0xab, MIB);
            let big = a.realloc(small, layout(MIB), 8 * MIB);
            assert!(!big.is_null());
            assert_eq!(take_fresh_range(big, 8 * MIB), 0..0, "the head holds the old bytes");
            a.dealloc(big, layout(8 * MIB));

            let fresh = a.alloc(layout(16 * MIB));
            a.dealloc(fresh, layout(16 * MIB));
            assert_eq!(take_fresh_range(fresh, 16 * MIB), 0..0, "a freed block's record is gone");
        }
    }

    #[test]
    fn a_grown_block_is_fresh_past_its_old_end_only() {
        let mut s = State::new();
        let (p, _) = s.take(8 * MIB);
        unsafe { std::ptr::write_bytes(p, 0xab, 8 * MIB) };
        s.give_back(p, 8 * MIB);
        let (g, fresh) = s.take(20 * MIB);
        assert_eq!(fresh, 8 * MIB..20 * MIB, "the kept block grown: its old pages are not fresh");
        let bytes = unsafe { std::slice::from_raw_parts(g, 20 * MIB) };
        assert!(bytes[..8 * MIB].iter().all(|&b| b == 0xab), "the old pages keep their contents");
        assert!(bytes[8 * MIB..].iter().all(|&b| b == 0), "the fresh part is zero");
        s.give_back(g, 20 * MIB);
        s.keep_at_most(0);
    }

    #[test]
    fn reallocation_keeps_the_contents_across_sizes_and_the_threshold() {
        let a = LargePages::new();
        unsafe {
            let mut size = 1000;
            let mut p = a.alloc(layout(size));
            for i in 0..size {
                *p.add(i) = (i % 251) as u8;
            }
            for new_size in [6 * MIB, 20 * MIB, 5 * MIB, 3 * MIB, 30 * MIB, 500] {
                p = a.realloc(p, layout(size), new_size);
                assert!(!p.is_null());
                let kept = size.min(new_size).min(1000);
                assert!((0..kept).all(|i| *p.add(i) == (i % 251) as u8), "after {size} -> {new_size}");
                size = new_size;
            }
            a.dealloc(p, layout(size));
        }
    }

    #[test]
    fn overaligned_layouts_go_to_the_system_allocator() {
        let a = LargePages::new();
        let big = Layout::from_size_align(8 * MIB, 1 << 21).unwrap();
        unsafe {
            let p = a.alloc(big);
            assert_eq!(p as usize % (1 << 21), 0);
            a.dealloc(p, big);
        }
    }
}
