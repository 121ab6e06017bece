//! Rendering diagnostics as text: `error[GGE1201]: message`, `--> file:line:col`, the source
//! line, a caret under the span, and the hint.
//!
//! Two things make this safe for hostile input:
//! * Rendering costs the size of the snippet, not of the file. Each diagnostic is rendered from an
//!   *excerpt*: the lines its spans start on, each cut to a window around the spans (a script of
//!   one 10 MB line must not print 10 MB per error), presented to `codespan-reporting` through a
//!   [`Files`] implementation that keeps the real line and column numbers. A span over several
//!   lines is shown on its first line.
//! * Nothing from the script reaches the terminal raw: control characters (terminal escape
//!   sequences among them) and bidirectional-text controls are shown escaped, as `\u{1b}`, in
//!   snippets, messages, labels and hints.

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, termcolor};

use crate::list::MAX_DIAGNOSTICS;
use crate::{Diagnostic, Diagnostics, SourceFile, Span};

#[derive(Copy, Clone, Debug, Default)]
pub struct RenderOptions {
    /// ANSI colors (for terminals).
    pub color: bool,
}

/// Characters of a source line shown before the first span of a long line.
const CONTEXT_BEFORE: usize = 40;
/// Characters of a source line shown at most.
const WINDOW: usize = 120;
/// Shown where a long line was cut.
const ELLIPSIS: &str = "…";

/// Renders one diagnostic.
pub fn render_diagnostic(diagnostic: &Diagnostic, file: &SourceFile, options: RenderOptions) -> String {
    let mut buffer = new_buffer(options);
    render_into(&mut buffer, diagnostic, file);
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}

/// Renders the diagnostics of one file, at most [`MAX_DIAGNOSTICS`] of them, then one line
/// "and N more errors" for those left out (not kept, or beyond the cap).
pub fn render_diagnostics(diagnostics: &Diagnostics, file: &SourceFile, options: RenderOptions) -> String {
    let mut buffer = new_buffer(options);
    let shown = diagnostics.len().min(MAX_DIAGNOSTICS);
    for d in &diagnostics[..shown] {
        render_into(&mut buffer, d, file);
    }
    let more = diagnostics.total().saturating_sub(shown);
    if more > 0 {
        let _ = std::io::Write::write_fmt(
            &mut buffer,
            format_args!("error: and {more} more error{}\n", if more == 1 { "" } else { "s" }),
        );
    }
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}

fn new_buffer(options: RenderOptions) -> termcolor::Buffer {
    if options.color {
        termcolor::Buffer::ansi()
    } else {
        termcolor::Buffer::no_color()
    }
}

fn render_into(buffer: &mut termcolor::Buffer, d: &Diagnostic, file: &SourceFile) {
    let mut spans: Vec<Span> = d.span.into_iter().collect();
    spans.extend(d.labels.iter().map(|(span, _)| *span));
    let excerpt = Excerpt::new(file, &spans);
    let mut cs = CsDiagnostic::error().with_code(d.code.to_string()).with_message(escape_text(&d.message));
    let mut labels = Vec::new();
    let mut ranges = excerpt.label_ranges.iter().cloned();
    if d.span.is_some() {
        if let Some(range) = ranges.next() {
            labels.push(Label::primary((), range));
        }
    }
    for ((_, text), range) in d.labels.iter().zip(ranges) {
        labels.push(Label::secondary((), range).with_message(escape_text(text)));
    }
    cs = cs.with_labels(labels);
    if let Some(hint) = &d.hint {
        cs = cs.with_notes(vec![format!("hint: {}", escape_text(hint))]);
    }
    // Writing into an in-memory buffer cannot fail except on a range outside the excerpt, which
    // `Excerpt` rules out; fall back to the plain message rather than lose the error.
    if term::emit(buffer, &term::Config::default(), &excerpt, &cs).is_err() {
        let _ = std::io::Write::write_fmt(buffer, format_args!("error[{}]: {}\n", d.code, escape_text(&d.message)));
    }
}

/// Whether a character is shown escaped: controls other than tab (which the renderer expands),
/// and the invisible characters that reorder or hide text (the "Trojan Source" ones).
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
    }
}

/// Text with control and bidirectional-control characters escaped (tabs and line breaks too: a
/// message is one line).
pub fn escape_text(text: &str) -> String {
    if !text.chars().any(|c| needs_escape(c) || c == '\t') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\t' {
            out.push_str("\\t");
        } else if needs_escape(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// One line of an excerpt.
struct ExcerptLine {
    /// 0-based line in the real file.
    line_index: usize,
    /// Its range in the excerpt's text (without the line break).
    range: Range<usize>,
}

/// The part of a file one diagnostic shows: a few lines, each windowed and escaped, with the
/// positions of the diagnostic's spans in it and their real line:column.
struct Excerpt {
    name: String,
    text: String,
    /// In real line order.
    lines: Vec<ExcerptLine>,
    /// Per span of the diagnostic (primary first), its range in `text`.
    label_ranges: Vec<Range<usize>>,
    /// Real columns (1-based) of the span starts, by their offset in `text`.
    columns: Vec<(usize, usize)>,
}

impl Excerpt {
    fn new(file: &SourceFile, spans: &[Span]) -> Excerpt {
        let text_len = file.text().len();
        // Each span as a byte range on its first line, on char boundaries.
        let clipped: Vec<(usize, Range<usize>)> = spans
            .iter()
            .map(|span| {
                let start = floor_boundary(file.text(), (span.start as usize).min(text_len));
                let line = file.line_index(start as u32);
                let line_range = file.line_range(line).unwrap_or(start..start);
                let start = start.min(line_range.end);
                let end = floor_boundary(file.text(), (span.end as usize).clamp(start, line_range.end));
                (line, start..end)
            })
            .collect();
        let mut line_indices: Vec<usize> = clipped.iter().map(|(line, _)| *line).collect();
        line_indices.sort_unstable();
        line_indices.dedup();
        // A single line between two shown ones is printed by the renderer rather than elided:
        // include it.
        let gaps: Vec<usize> = line_indices.windows(2).filter(|w| w[1] == w[0] + 2).map(|w| w[0] + 1).collect();
        line_indices.extend(gaps);
        line_indices.sort_unstable();

        let mut excerpt = Excerpt {
            name: escape_text(file.name()),
            text: String::new(),
            lines: Vec::with_capacity(line_indices.len()),
            label_ranges: vec![0..0; clipped.len()],
            columns: Vec::new(),
        };
        for line_index in line_indices {
            let line_range = file.line_range(line_index).unwrap_or(0..0);
            let line_text = &file.text()[line_range.clone()];
            // Spans on this line, relative to it.
            let here: Vec<(usize, Range<usize>)> = clipped
                .iter()
                .enumerate()
                .filter(|(_, (line, _))| *line == line_index)
                .map(|(i, (_, r))| (i, r.start - line_range.start..r.end - line_range.start))
                .collect();
            let window = window(line_text, here.first().map(|(_, r)| r.start));
            let start = excerpt.text.len();
            let mut shown = String::new();
            if window.start > 0 {
                shown.push_str(ELLIPSIS);
            }
            // Offsets in `shown` of each byte offset of the window that starts or ends a span.
            let mut positions: Vec<(usize, usize)> = Vec::new();
            let mut mark = |at: usize, shown: &str| {
                positions.push((at, shown.len()));
            };
            for (i, c) in line_text[window.clone()].char_indices() {
                mark(window.start + i, &shown);
                if needs_escape(c) {
                    push_escaped(&mut shown, c);
                } else {
                    shown.push(c);
                }
            }
            mark(window.end, &shown);
            if window.end < line_text.len() {
                shown.push_str(ELLIPSIS);
            }
            let shown_at = |offset: usize| -> usize {
                let offset = offset.clamp(window.start, window.end);
                positions.iter().find(|(at, _)| *at >= offset).map_or(0, |(_, s)| *s)
            };
            for (i, range) in &here {
                let (s, e) = (shown_at(range.start), shown_at(range.end));
                excerpt.label_ranges[*i] = start + s..start + e.max(s);
                let column = line_text[..range.start].chars().count() + 1;
                excerpt.columns.push((start + s, column));
            }
            excerpt.text.push_str(&shown);
            excerpt.lines.push(ExcerptLine { line_index, range: start..excerpt.text.len() });
            excerpt.text.push('\n');
        }
        excerpt
    }

    fn line_at(&self, offset: usize) -> Option<&ExcerptLine> {
        let i = self.lines.partition_point(|l| l.range.end < offset);
        self.lines.get(i).or(self.lines.last())
    }
}

/// The byte range of a line to show: all of it when short, otherwise [`WINDOW`] characters
/// starting [`CONTEXT_BEFORE`] characters before `focus` (a byte offset in the line).
fn window(line: &str, focus: Option<usize>) -> Range<usize> {
    if line.len() <= WINDOW && line.chars().count() <= WINDOW {
        return 0..line.len();
    }
    let focus = floor_boundary(line, focus.unwrap_or(0).min(line.len()));
    let start = line[..focus].char_indices().rev().nth(CONTEXT_BEFORE - 1).map_or(0, |(i, _)| i);
    let end = line[start..].char_indices().nth(WINDOW).map_or(line.len(), |(i, _)| start + i);
    start..end
}

fn floor_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

impl<'a> Files<'a> for Excerpt {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, FilesError> {
        Ok(&self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, FilesError> {
        Ok(&self.text)
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.line_at(byte_index).map_or(0, |l| l.line_index))
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, FilesError> {
        match self.lines.binary_search_by_key(&line_index, |l| l.line_index) {
            // With its line break, as codespan expects.
            Ok(i) => Ok(self.lines[i].range.start..self.lines[i].range.end + 1),
            Err(_) => Err(FilesError::LineTooLarge { given: line_index, max: self.lines.len() }),
        }
    }

    fn column_number(&'a self, (): (), _line_index: usize, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.columns.iter().find(|(at, _)| *at == byte_index).map_or(1, |(_, column)| *column))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes;

    fn plain(d: &Diagnostic, file: &SourceFile) -> String {
        render_diagnostic(d, file, RenderOptions::default())
    }

    #[test]
    fn renders_code_location_caret_and_hint() {
        let file = SourceFile::new("a.ggs", "var x = ;\n");
        let d = Diagnostic::at(codes::GGE1201, Span::new(8, 9), "expected an expression, found `;`")
            .with_hint("write a value after `=`");
        let text = plain(&d, &file);
        assert!(text.contains("error[GGE1201]: expected an expression"), "{text}");
        assert!(text.contains("a.ggs:1:9"), "{text}");
        assert!(text.contains("var x = ;"), "{text}");
        assert!(text.contains("        ^"), "{text}");
        assert!(text.contains("hint: write a value"), "{text}");
    }

    /// Found by the hardening review: a snippet echoed a terminal escape sequence from the
    /// script to the terminal.
    #[test]
    fn control_characters_are_shown_escaped_everywhere() {
        let file = SourceFile::new("e\u{1b}.ggs", "x = \"\u{1b}[31mred\u{202e}\" `;\n");
        let d = Diagnostic::at(codes::GGE1101, Span::new(18, 19), "found \u{1b}[2J here")
            .with_hint("not \u{7}")
            .with_label(Span::new(5, 6), "the \u{1b} label");
        let text = plain(&d, &file);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'), "{text:?}");
        assert!(text.contains(r#"x = "\u{1b}[31mred\u{202e}" `;"#), "{text}");
        assert!(text.contains(r"found \u{1b}[2J here"), "{text}");
        assert!(text.contains(r"hint: not \u{7}"), "{text}");
        assert!(text.contains(r"the \u{1b} label"), "{text}");
        // Columns count the characters of the source, not of what is shown.
        assert!(text.contains(r"e\u{1b}.ggs:1:17"), "{text}");
        // The caret is under the backtick, past the escapes as they are shown.
        let source_line = text.lines().find(|l| l.contains("red")).unwrap();
        let caret_line = text.lines().find(|l| l.contains('^')).unwrap();
        assert_eq!(caret_line.find('^'), source_line.find('`'), "{text}");
    }

    /// Found by the hardening review: 16 000 errors on one 32 KB line printed the whole line
    /// each time (28 s, 1.5 GB). A long line is cut to a window around the span.
    #[test]
    fn a_long_line_is_cut_to_a_window_around_the_span() {
        let line = format!("{}BAD{}", "a ".repeat(50_000), " b".repeat(50_000));
        let file = SourceFile::new("long.ggs", format!("first\n{line}\n"));
        let start = 6 + 100_000;
        let d = Diagnostic::at(codes::GGE1201, Span::new(start as u32, start as u32 + 3), "here");
        let text = plain(&d, &file);
        assert!(text.len() < 1000, "{} bytes", text.len());
        assert!(text.contains("long.ggs:2:100001"), "{text}");
        let source_line = text.lines().find(|l| l.contains("BAD")).expect("the span is shown");
        assert!(source_line.contains('…'), "{text}");
        let caret_line = text.lines().find(|l| l.contains("^^^")).unwrap();
        assert_eq!(
            source_line.char_indices().position(|(i, _)| source_line[i..].starts_with("BAD")),
            caret_line.char_indices().position(|(i, _)| caret_line[i..].starts_with('^'))
        );
    }

    #[test]
    fn a_span_over_many_lines_is_shown_on_its_first() {
        let body = "x\n".repeat(100_000);
        let file = SourceFile::new("m.ggs", format!("for (;;) {{\n{body}}}\n"));
        let d = Diagnostic::at(codes::GGE5001, Span::new(0, file.text().len() as u32), "whole");
        let text = plain(&d, &file);
        assert!(text.len() < 500, "{text}");
        assert!(text.contains("for (;;) {"), "{text}");
    }

    #[test]
    fn labels_on_lines_far_apart_keep_their_line_numbers() {
        let file = SourceFile::new("f.ggs", format!("function f() {{ return f(); }}\n{}f();\n", "\n".repeat(500)));
        let call = file.text().rfind("f()").unwrap() as u32;
        let d = Diagnostic::at(codes::GGE2501, Span::new(22, 25), "deep").with_label(Span::new(call, call + 3), "here");
        let text = plain(&d, &file);
        assert!(text.contains("f.ggs:1:23"), "{text}");
        assert!(text.contains("502 │ f();"), "{text}");
        assert!(text.contains('·'), "{text}");
    }

    #[test]
    fn spans_past_the_end_or_inside_a_character_are_clamped() {
        let file = SourceFile::new("u.ggs", "é");
        for (s, e) in [(0, 1), (1, 2), (5, 9), (2, 2)] {
            let text = plain(&Diagnostic::at(codes::GGE1201, Span::new(s, e), "m"), &file);
            assert!(text.contains("error[GGE1201]"), "{text}");
        }
        let empty = SourceFile::new("e.ggs", "");
        let text = plain(&Diagnostic::at(codes::GGE1201, Span::new(0, 3), "m"), &empty);
        assert!(text.contains("e.ggs:1:1"), "{text}");
    }

    #[test]
    fn at_most_the_cap_is_rendered_then_one_line_for_the_rest() {
        let file = SourceFile::new("c.ggs", "`\n".repeat(80));
        let list: Diagnostics = (0..80)
            .map(|i| Diagnostic::at(codes::GGE1101, Span::new(2 * i, 2 * i + 1), "bad"))
            .collect::<Vec<_>>()
            .into();
        let text = render_diagnostics(&list, &file, RenderOptions::default());
        assert_eq!(text.matches("error[GGE1101]").count(), MAX_DIAGNOSTICS);
        assert!(text.ends_with("error: and 30 more errors\n"), "{text}");
    }
}
