//! The script heap: the bytes held by what a script builds (arrays, strings, random sequences and
//! the messages kept for the caller), counted while they are alive.
//!
//! Objects charge the [`Heap`] as they grow and release on drop, so the count is of *live* bytes: a
//! loop that builds and drops big arrays runs, a script that keeps them fails with GGE2508 once
//! the limit ([`crate::Limits::max_heap_bytes`]) would be passed, before the memory is taken. The
//! figures are estimates of the allocations (entries, hash index, headers), close enough to bound
//! the process's memory by the limit.

use std::cell::Cell;
use std::rc::Rc;

use geogen_diag::codes;

use crate::RuntimeError;

/// A shared counter of live script bytes with a limit. Cloning shares the counter.
#[derive(Clone, Debug)]
pub struct Heap(Rc<Meter>);

#[derive(Debug)]
struct Meter {
    used: Cell<u64>,
    peak: Cell<u64>,
    limit: u64,
}

impl Heap {
    pub fn new(limit: u64) -> Heap {
        Heap(Rc::new(Meter { used: Cell::new(0), peak: Cell::new(0), limit }))
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        self.0.used.get()
    }

    /// The most bytes held at any time.
    pub fn peak(&self) -> u64 {
        self.0.peak.get()
    }

    pub fn limit(&self) -> u64 {
        self.0.limit
    }

    /// Counts `bytes` more, or GGE2508 (counting nothing) if that would pass the limit.
    pub fn charge(&self, bytes: u64) -> Result<(), RuntimeError> {
        let used = self.used().saturating_add(bytes);
        if used > self.limit() {
            return Err(self.exhausted(bytes));
        }
        self.set_used(used);
        Ok(())
    }

    /// Counts `bytes` more even past the limit: for memory already taken, so the count stays true
    /// and the next charge fails.
    pub fn charge_anyway(&self, bytes: u64) {
        self.set_used(self.used().saturating_add(bytes));
    }

    pub fn release(&self, bytes: u64) {
        self.0.used.set(self.used().saturating_sub(bytes));
    }

    /// Charges `bytes` and returns a guard that releases them when dropped.
    pub fn hold(&self, bytes: u64) -> Result<Charge, RuntimeError> {
        self.charge(bytes)?;
        Ok(Charge { heap: self.clone(), bytes })
    }

    fn set_used(&self, used: u64) {
        self.0.used.set(used);
        if used > self.peak() {
            self.0.peak.set(used);
        }
    }

    fn exhausted(&self, bytes: u64) -> RuntimeError {
        let human = geogen_render::error::human_bytes;
        RuntimeError::new(
            codes::GGE2508,
            format!(
                "the script's data would pass its heap limit of {}: {} held, {} more asked for",
                human(self.limit()),
                human(self.used()),
                human(bytes)
            ),
        )
        .with_hint("arrays, strings and kept messages count while alive; drop what is not needed, or raise the limit with --max-heap MIB")
    }
}

/// Bytes held on a [`Heap`] by one object, released when the guard drops.
#[derive(Debug)]
pub struct Charge {
    heap: Heap,
    bytes: u64,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.heap.release(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_live_bytes_and_refuses_past_the_limit() {
        let heap = Heap::new(100);
        let a = heap.hold(60).unwrap();
        let error = heap.hold(50).unwrap_err();
        assert_eq!(error.code, codes::GGE2508);
        assert!(error.message.contains("100 bytes"), "{}", error.message);
        assert_eq!(heap.used(), 60, "a refused charge counts nothing");
        drop(a);
        assert_eq!(heap.used(), 0);
        let _b = heap.hold(100).unwrap();
        assert_eq!(heap.peak(), 100);
        heap.charge_anyway(5);
        assert_eq!(heap.used(), 105);
        assert!(heap.charge(1).is_err());
    }
}
