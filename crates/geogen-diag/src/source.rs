use crate::Span;

/// A 1-based line and column (columns count Unicode scalar values).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for LineCol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A named source text with a line index, for turning spans into line:column and snippets.
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<u32>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile { name: name.into(), text, line_starts }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 0-based line holding a byte offset; offsets past the end clamp to the last line.
    pub fn line_index(&self, offset: u32) -> usize {
        let offset = offset.min(self.text.len() as u32);
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// The number of lines (a final line without a newline counts; an empty file has one line).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The byte range of a 0-based line's text, without its line break (`\n` or `\r\n`).
    pub fn line_range(&self, line_index: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.line_starts.get(line_index)? as usize;
        let next = self.line_starts.get(line_index + 1).map_or(self.text.len(), |&n| n as usize);
        let mut end = next;
        if end > start && self.text.as_bytes()[end - 1] == b'\n' {
            end -= 1;
            if end > start && self.text.as_bytes()[end - 1] == b'\r' {
                end -= 1;
            }
        }
        Some(start..end)
    }

    /// The line and column of a byte offset; offsets past the end clamp to the end.
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = offset.min(self.text.len() as u32);
        let line_index = self.line_index(offset);
        let line_start = self.line_starts[line_index] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[line_start..end].chars().count() as u32 + 1;
        LineCol { line: line_index as u32 + 1, column }
    }

    /// The byte offset of a 1-based line and column (the inverse of [`SourceFile::line_col`]);
    /// positions past a line's end or the file's end clamp to them.
    pub fn offset(&self, line: u32, column: u32) -> u32 {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1) as usize) else {
            return self.text.len() as u32;
        };
        let rest = &self.text[start as usize..];
        let line_text = rest.split('\n').next().unwrap_or("");
        let within: usize = line_text.chars().take(column.saturating_sub(1) as usize).map(char::len_utf8).sum();
        start + within as u32
    }

    pub fn span_start(&self, span: Span) -> LineCol {
        self.line_col(span.start)
    }

    pub fn snippet(&self, span: Span) -> &str {
        let end = (span.end as usize).min(self.text.len());
        let start = (span.start as usize).min(end);
        self.text.get(start..end).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one_and_handles_unicode() {
        let f = SourceFile::new("t", "ab\ncž d\n");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 2, column: 1 });
        // 'ž' is two bytes: the space after it is column 3.
        assert_eq!(f.line_col(6), LineCol { line: 2, column: 3 });
        assert_eq!(f.line_col(1000), LineCol { line: 3, column: 1 });
        for offset in [0, 1, 3, 4, 6, 7] {
            let lc = f.line_col(offset);
            assert_eq!(f.offset(lc.line, lc.column), offset);
        }
    }

    #[test]
    fn line_ranges_leave_out_the_line_break() {
        let f = SourceFile::new("t", "ab\r\ncd\n\nlast");
        assert_eq!(f.line_count(), 4);
        assert_eq!(f.line_range(0), Some(0..2));
        assert_eq!(f.line_range(1), Some(4..6));
        assert_eq!(f.line_range(2), Some(7..7));
        assert_eq!(f.line_range(3), Some(8..12));
        assert_eq!(f.line_range(4), None);
        assert_eq!(f.line_index(5), 1);
        assert_eq!(f.line_index(100), 3);
    }
}
