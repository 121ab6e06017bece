//! The diagnostics of one file, capped: a file of garbage must cost neither unbounded memory nor
//! a screen per token, so only the first [`MAX_DIAGNOSTICS`] are kept and later ones are counted.

use crate::Diagnostic;

/// Diagnostics kept per file; the rest are counted and shown as "and N more errors".
pub const MAX_DIAGNOSTICS: usize = 50;

/// Up to [`MAX_DIAGNOSTICS`] diagnostics in the order they were reported (or sorted by
/// [`Diagnostics::merge_sorted`]) and the number of those left out. It reads as a slice of the
/// kept ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnostics {
    kept: Vec<Diagnostic>,
    omitted: usize,
}

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    /// Keeps the diagnostic if there is room, counts it otherwise.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        if self.kept.len() < MAX_DIAGNOSTICS {
            self.kept.push(diagnostic);
        } else {
            self.omitted = self.omitted.saturating_add(1);
        }
    }

    /// Diagnostics reported but not kept.
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// Kept plus omitted.
    pub fn total(&self) -> usize {
        self.kept.len().saturating_add(self.omitted)
    }

    /// Whether nothing at all was reported (kept or omitted).
    pub fn is_clean(&self) -> bool {
        self.total() == 0
    }

    /// Reorders the kept diagnostics (stable).
    pub fn sort_by_key<K: Ord>(&mut self, key: impl FnMut(&Diagnostic) -> K) {
        self.kept.sort_by_key(key);
    }

    pub fn as_slice(&self) -> &[Diagnostic] {
        &self.kept
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.kept
    }

    /// The diagnostics of both lists by source position (stable: at one position `self`'s come
    /// first), the first [`MAX_DIAGNOSTICS`] kept. Each list must be in source order itself, so
    /// the first ones of the merge are among the kept ones of the two lists.
    pub fn merge_sorted(self, other: Diagnostics) -> Diagnostics {
        let mut kept = self.kept;
        kept.extend(other.kept);
        kept.sort_by_key(|d| d.span.map_or(0, |s| s.start));
        let dropped = kept.len().saturating_sub(MAX_DIAGNOSTICS);
        kept.truncate(MAX_DIAGNOSTICS);
        Diagnostics { kept, omitted: self.omitted.saturating_add(other.omitted).saturating_add(dropped) }
    }
}

impl std::ops::Deref for Diagnostics {
    type Target = [Diagnostic];

    fn deref(&self) -> &[Diagnostic] {
        &self.kept
    }
}

impl From<Vec<Diagnostic>> for Diagnostics {
    fn from(list: Vec<Diagnostic>) -> Diagnostics {
        let mut diagnostics = Diagnostics::new();
        diagnostics.extend(list);
        diagnostics
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(diagnostic: Diagnostic) -> Diagnostics {
        Diagnostics { kept: vec![diagnostic], omitted: 0 }
    }
}

impl Extend<Diagnostic> for Diagnostics {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, list: I) {
        for diagnostic in list {
            self.push(diagnostic);
        }
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.into_iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{codes, Span};

    fn at(offset: u32) -> Diagnostic {
        Diagnostic::at(codes::GGE1201, Span::at(offset), format!("at {offset}"))
    }

    #[test]
    fn keeps_the_first_ones_and_counts_the_rest() {
        let mut list = Diagnostics::new();
        for i in 0..(MAX_DIAGNOSTICS as u32 + 7) {
            list.push(at(i));
        }
        assert_eq!(list.len(), MAX_DIAGNOSTICS);
        assert_eq!(list.omitted(), 7);
        assert_eq!(list.total(), MAX_DIAGNOSTICS + 7);
        assert_eq!(list[0].message, "at 0");
    }

    #[test]
    fn merging_keeps_the_first_by_position() {
        let lexer: Diagnostics = (0..40).map(|i| at(2 * i)).collect::<Vec<_>>().into();
        let mut parser: Diagnostics = (0..60).map(|i| at(2 * i + 1)).collect::<Vec<_>>().into();
        parser.push(at(1000));
        assert_eq!(parser.omitted(), 11);
        let merged = lexer.merge_sorted(parser);
        assert_eq!(merged.len(), MAX_DIAGNOSTICS);
        let starts: Vec<u32> = merged.iter().map(|d| d.span.unwrap().start).collect();
        assert_eq!(starts, (0..MAX_DIAGNOSTICS as u32).collect::<Vec<_>>());
        assert_eq!(merged.total(), 40 + 61);
    }
}
