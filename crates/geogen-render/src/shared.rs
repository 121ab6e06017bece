//! Parts computed once for several renders of one script (`geogen tiles`' blocks).
//!
//! A step the support pass narrows and fills (`bounds.rs`) computes only the part of its bounds
//! inside its result's support: for the original's `ouroboros`, the island template (noise, a
//! blurred mask and a blurred cone, steps 1 to 20) is computed over the same rectangle in every
//! block that shows any part of an island. By the tile contract (`ARCHITECTURE.md`, "Why tiles are
//! exact") the pixels a step computes inside its bounds are the same in every render, so a second
//! render of the same steps can take the part from the first instead of computing it, and skip
//! every step that only led to it.
//!
//! What makes two parts the same is the steps that made them, not their indices or slots (the
//! scheduler may order two renders' steps differently): an entry's key is the canonical listing of
//! the step and all the steps it depends on, each operation with every parameter (its `Debug`,
//! which prints floats exactly), and their arguments by position in that listing, plus the scale
//! and the fill height's bits. A render takes an entry whose part contains the one it computes.
//! The rest of its bounds holds the fill height, as when it computes the part itself; pixels
//! outside its bounds (which nobody reads as exact) may differ, as they may between tiles.
//!
//! Hosts share one [`SharedParts`] between renders of one script with the same settings and
//! inputs (an input raster's pixels are not in the key). The first render to need an entry claims
//! it and fills it when it has computed the part; a render that finds an entry claimed waits for
//! it before it starts (it holds nothing then: no claim and no memory of its own), unless it holds a
//! claim itself, and then computes the part itself, so no two renders ever wait on each other.
//! A claim a render gives up (it failed or was dropped) is withdrawn, and a waiting render claims
//! the entry in its turn. Entries are kept up to a number of bytes given when the cache is made;
//! a part with no room left is neither claimed nor waited for, but computed by each render.
//!
//! The wait happens in `Renderer::new`, so a host must not create a second renderer sharing the
//! cache on a thread whose first renderer still holds a claim (it would wait for itself), and a
//! waiting render does not see `stop()` before it starts. `geogen tiles` runs one renderer per
//! thread and drops it when its block ends. The cache's bytes are outside each render's plan: a
//! host counts them itself (`geogen tiles` does, in its memory budget, and calls
//! [`SharedParts::release_finished`] when a render needs their room).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::bounds::Narrowed;
use crate::geometry::Rect;
use crate::raster::HeightMap;
use crate::renderer::RenderMetadata;
use crate::sequence::RenderingSequence;

/// Parts of renders shared between renders of one script (see the module docs). Cloning shares
/// the same cache.
#[derive(Clone)]
pub struct SharedParts {
    inner: Arc<Inner>,
}

struct Inner {
    entries: Mutex<Entries>,
    changed: Condvar,
}

struct Entries {
    list: Vec<Entry>,
    /// Bytes the finished entries may hold together.
    capacity: u64,
    held: u64,
    next_id: u64,
}

struct Entry {
    id: u64,
    key: String,
    part: Rect,
    map: Option<Arc<HeightMap>>,
}

impl std::fmt::Debug for SharedParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.lock();
        write!(f, "SharedParts({} entries, {} of {} bytes)", entries.list.len(), entries.held, entries.capacity)
    }
}

/// Two handles are equal when they share one cache.
impl PartialEq for SharedParts {
    fn eq(&self, other: &SharedParts) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for SharedParts {}

impl SharedParts {
    /// An empty cache keeping finished parts of up to `capacity` bytes in all.
    pub fn new(capacity: u64) -> SharedParts {
        SharedParts {
            inner: Arc::new(Inner {
                entries: Mutex::new(Entries { list: Vec::new(), capacity, held: 0, next_id: 0 }),
                changed: Condvar::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.inner.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Bytes the finished entries hold.
    pub fn held_bytes(&self) -> u64 {
        self.lock().held
    }

    /// Drops finished entries, newest first, until they hold at most `bytes` (for a host whose
    /// next render needs their room: `geogen tiles` counts them in its memory budget). Renders
    /// that took one keep their copy until they end.
    pub fn release_finished(&self, bytes: u64) {
        let mut entries = self.lock();
        while entries.held > bytes {
            let Some(k) = entries.list.iter().rposition(|e| e.map.is_some()) else { break };
            let entry = entries.list.remove(k);
            entries.held -= entry.part.area().saturating_mul(4);
        }
    }

    /// Finished entries (for tests and statistics).
    pub fn finished(&self) -> usize {
        self.lock().list.iter().filter(|e| e.map.is_some()).count()
    }

    /// For a render about to start: which parts it takes from the cache (and the steps it may
    /// skip for them), and which it claims.
    pub(crate) fn plan(&self, seq: &RenderingSequence, meta: &RenderMetadata) -> SharedUse {
        let n = seq.len();
        let mut out =
            SharedUse { cache: self.clone(), hits: vec![None; n], skipped: vec![false; n], claims: vec![None; n] };
        for c in (0..n).rev() {
            if out.skipped[c] {
                continue;
            }
            let Some(Narrowed { part, fill }) = meta.narrowed[c] else { continue };
            // Only a part that is the step's whole region (its support, or where it changes its
            // target): a part the render's bounds cut is another render's part only by chance.
            let region = match fill {
                Some(_) => meta.supports.of_step.get(c).and_then(|f| f.support).map(|s| s.rect),
                None => meta.supports.changed.get(c).copied().flatten(),
            };
            if part.is_empty() || region != Some(part) || (c > 0 && meta.plan.elided_copy(c - 1)) {
                continue;
            }
            let Some(skip) = skippable(seq, meta, c, fill.is_none(), &out.skipped) else { continue };
            let key = key(seq, meta, c, fill);
            let bytes = part.area().saturating_mul(4);
            let mut entries = self.lock();
            loop {
                let found = entries.list.iter().find(|e| e.key == key && e.part.contains_rect(&part));
                // A part the cache has no room for now is computed here, neither claimed nor
                // waited for: a claim of it would only make other renders wait for nothing.
                let room = entries.held.saturating_add(bytes) <= entries.capacity;
                match found {
                    Some(Entry { map: Some(map), .. }) => {
                        out.hits[c] = Some(map.clone());
                        for j in skip {
                            out.skipped[j] = true;
                        }
                        break;
                    }
                    // Claimed by another render: wait unless this one holds a claim (then it
                    // computes the part itself, and neither ever waits for the other).
                    Some(Entry { map: None, .. }) => {
                        if !room || out.claims.iter().any(Option::is_some) {
                            break;
                        }
                        entries = self.inner.changed.wait(entries).unwrap_or_else(std::sync::PoisonError::into_inner);
                    }
                    None if !room => break,
                    None => {
                        let id = entries.next_id;
                        entries.next_id += 1;
                        entries.list.push(Entry { id, key, part, map: None });
                        out.claims[c] = Some(id);
                        break;
                    }
                }
            }
        }
        out
    }
}

/// What one render takes from and gives to a [`SharedParts`].
pub(crate) struct SharedUse {
    cache: SharedParts,
    /// The part step `i` takes from the cache instead of computing it.
    pub hits: Vec<Option<Arc<HeightMap>>>,
    /// Steps not run: they only lead to parts taken from the cache.
    pub skipped: Vec<bool>,
    /// Entries this render fills when it has computed step `i`'s part.
    claims: Vec<Option<u64>>,
}

impl SharedUse {
    /// Fills the entry step `i` claimed with its computed part (cut out of `map`), if it fits in
    /// the cache's capacity; else withdraws the claim.
    pub fn fulfil(&mut self, i: usize, map: &HeightMap, part: Rect) {
        let Some(id) = self.claims.get_mut(i).and_then(Option::take) else { return };
        let bytes = part.area().saturating_mul(4);
        // The room is taken before the copy is made, so a part that does not fit is never copied.
        let fits = {
            let mut entries = self.cache.lock();
            let fits = entries.held.saturating_add(bytes) <= entries.capacity;
            if fits {
                entries.held += bytes;
            } else {
                entries.list.retain(|e| e.id != id);
            }
            fits
        };
        if fits {
            let cut = map.cut_out(part).ok();
            let mut entries = self.cache.lock();
            match cut {
                Some(cut) => {
                    if let Some(entry) = entries.list.iter_mut().find(|e| e.id == id) {
                        entry.map = Some(Arc::new(cut));
                    }
                }
                None => {
                    entries.held -= bytes;
                    entries.list.retain(|e| e.id != id);
                }
            }
        }
        self.cache.inner.changed.notify_all();
    }
}

impl Drop for SharedUse {
    /// Withdraws the claims not filled (a failed or abandoned render), so a waiting render claims
    /// them in its turn.
    fn drop(&mut self) {
        let open: Vec<u64> = self.claims.iter().flatten().copied().collect();
        if open.is_empty() {
            return;
        }
        self.cache.lock().list.retain(|e| !open.contains(&e.id));
        self.cache.inner.changed.notify_all();
    }
}

/// The steps a render may skip when it takes step `c`'s part from the cache: those `c` depends on
/// whose results nobody but `c` and other such steps reads (a yield never), not already skipped
/// for another part, and, when `c` keeps its target's pixels outside the part (`keep_target`),
/// not the target's producer (nor so anything it depends on). `None` if that is nothing, or if it
/// would split a fused pass (its steps run together or not at all).
fn skippable(
    seq: &RenderingSequence,
    meta: &RenderMetadata,
    c: usize,
    keep_target: bool,
    skipped: &[bool],
) -> Option<Vec<usize>> {
    let steps = seq.steps();
    let ancestor = ancestors(meta, c);
    let target = if keep_target { meta.graph.producers(c).first().copied() } else { None };
    let mut skip = vec![false; c + 1];
    for j in (0..c).rev() {
        skip[j] = ancestor[j]
            && Some(j) != target
            && !skipped[j]
            && steps[j].op.as_yield().is_none()
            && meta.graph.consumers(j).iter().all(|&k| k == c || (k < c && skip[k]));
    }
    // A fused pass (and a streamed or taking-over one) runs whole: all its steps or none.
    let mut i = 0;
    while i < c {
        let len = meta.plan.fused_pass(i).max(1);
        let end = (i + len).min(c + 1);
        if (i..end).any(|j| skip[j]) && !(i..end).all(|j| j < c && skip[j]) {
            return None;
        }
        i += len;
    }
    let list: Vec<usize> = (0..c).filter(|&j| skip[j]).collect();
    (!list.is_empty()).then_some(list)
}

/// Which of the steps `0..=c` step `c` depends on (itself included).
fn ancestors(meta: &RenderMetadata, c: usize) -> Vec<bool> {
    let mut ancestor = vec![false; c + 1];
    ancestor[c] = true;
    for j in (0..=c).rev() {
        if ancestor[j] {
            for &p in meta.graph.producers(j) {
                ancestor[p] = true;
            }
        }
    }
    ancestor
}

/// The canonical listing of step `c` and every step it depends on (see the module docs).
fn key(seq: &RenderingSequence, meta: &RenderMetadata, c: usize, fill: Option<f32>) -> String {
    let ancestor = ancestors(meta, c);
    let order: Vec<usize> = (0..=c).filter(|&j| ancestor[j]).collect();
    let position = |j: usize| order.binary_search(&j).unwrap_or(usize::MAX);
    let mut key = format!("scale {:#x} fill {:?}\n", seq.scale().to_bits(), fill.map(f32::to_bits));
    for &j in &order {
        let step = &seq.steps()[j];
        let args: Vec<String> = meta.graph.producers(j).iter().map(|&p| position(p).to_string()).collect();
        key.push_str(&format!("{:?} <- {:?} ({})\n", step.op.effect(), step.op, args.join(" ")));
    }
    key
}
