//! A shareable output handle that never loses an I/O error.
//!
//! The `png` crate's streaming writer must own its output, and it writes the end of the image (the
//! last compressed block, the final IDAT chunk, IEND) from destructors that discard errors. Handing it a
//! [`Shared`] clone instead of the real writer lets us (1) take the real writer back once the encoder is
//! dropped and (2) see the first I/O error even if it happened inside such a destructor, so a full disk
//! can never produce a silently truncated "successful" file.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

/// A cloneable handle on a writer; every clone writes to the same place.
pub(crate) struct Shared<W>(Arc<Mutex<State<W>>>);

struct State<W> {
    inner: Option<W>,
    /// The first write error. Later writes fail immediately so nothing is written after a gap.
    error: Option<io::Error>,
}

impl<W: Write> Shared<W> {
    pub(crate) fn new(inner: W) -> Self {
        Shared(Arc::new(Mutex::new(State { inner: Some(inner), error: None })))
    }

    /// The first error any clone saw, by kind and message (the original stays stored).
    pub(crate) fn error(&self) -> Option<io::Error> {
        let state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.error.as_ref().map(|e| io::Error::new(e.kind(), e.to_string()))
    }

    /// Takes the writer back, or the first error any clone saw.
    pub(crate) fn take(&self) -> io::Result<W> {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = state.error.take() {
            return Err(e);
        }
        state.inner.take().ok_or_else(|| io::Error::other("output already taken"))
    }
}

impl<W> Clone for Shared<W> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<W: Write> Shared<W> {
    fn with<T>(&mut self, op: impl FnOnce(&mut W) -> io::Result<T>) -> io::Result<T> {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = &state.error {
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        let Some(inner) = state.inner.as_mut() else {
            return Err(io::Error::other("write after the output was taken"));
        };
        let result = op(inner);
        if let Err(e) = &result {
            state.error = Some(io::Error::new(e.kind(), e.to_string()));
        }
        result
    }
}

impl<W: Write> Write for Shared<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(|w| w.write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.with(|w| w.write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.with(|w| w.flush())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts `room` bytes, then fails.
    struct Limited {
        room: usize,
    }

    impl Write for Limited {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn remembers_the_first_error_even_if_the_writer_ignored_it() {
        let shared = Shared::new(Limited { room: 4 });
        let mut clone = shared.clone();
        let _ = clone.write_all(b"0123456789"); // the error is dropped, as png's destructors do
        assert!(clone.write_all(b"x").is_err(), "later writes must fail too");
        let err = shared.take().err().map(|e| e.kind());
        assert_eq!(err, Some(io::ErrorKind::StorageFull));
    }

    #[test]
    fn hands_the_writer_back() {
        let shared = Shared::new(Vec::new());
        shared.clone().write_all(b"abc").map_err(|e| e.to_string()).unwrap();
        assert_eq!(shared.take().map_err(|e| e.to_string()).unwrap(), b"abc");
    }
}
