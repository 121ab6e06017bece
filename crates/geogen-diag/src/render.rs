use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};

use crate::{Diagnostic, SourceFile};

#[derive(Copy, Clone, Debug, Default)]
pub struct RenderOptions {
    /// ANSI colors (for terminals).
    pub color: bool,
}

/// Renders one diagnostic as text: `error[GGE1201]: message`, `--> file:line:col`, the source line,
/// a caret under the span, and the hint.
pub fn render_diagnostic(diagnostic: &Diagnostic, file: &SourceFile, options: RenderOptions) -> String {
    render_diagnostics(std::slice::from_ref(diagnostic), file, options)
}

pub fn render_diagnostics(diagnostics: &[Diagnostic], file: &SourceFile, options: RenderOptions) -> String {
    let simple = SimpleFile::new(file.name(), file.text());
    let config = term::Config::default();
    let mut buffer = if options.color { termcolor::Buffer::ansi() } else { termcolor::Buffer::no_color() };
    for d in diagnostics {
        let mut cs = CsDiagnostic::error().with_code(d.code.to_string()).with_message(&d.message);
        let mut labels = Vec::new();
        if let Some(span) = d.span {
            labels.push(Label::primary((), clamp(span.range(), file.text().len())));
        }
        for (span, text) in &d.labels {
            labels.push(Label::secondary((), clamp(span.range(), file.text().len())).with_message(text));
        }
        cs = cs.with_labels(labels);
        if let Some(hint) = &d.hint {
            cs = cs.with_notes(vec![format!("hint: {hint}")]);
        }
        // Writing into an in-memory buffer cannot fail except on a span outside the file, which
        // `clamp` rules out; fall back to the plain message rather than lose the error.
        if term::emit(&mut buffer, &config, &simple, &cs).is_err() {
            let _ = std::io::Write::write_fmt(&mut buffer, format_args!("error[{}]: {}\n", d.code, d.message));
        }
    }
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}

fn clamp(range: std::ops::Range<usize>, len: usize) -> std::ops::Range<usize> {
    let end = range.end.min(len);
    range.start.min(end)..end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{codes, Span};

    #[test]
    fn renders_code_location_caret_and_hint() {
        let file = SourceFile::new("a.ggs", "var x = ;\n");
        let d = Diagnostic::at(codes::GGE1201, Span::new(8, 9), "expected an expression, found `;`")
            .with_hint("write a value after `=`");
        let text = render_diagnostic(&d, &file, RenderOptions::default());
        assert!(text.contains("error[GGE1201]: expected an expression"), "{text}");
        assert!(text.contains("a.ggs:1:9"), "{text}");
        assert!(text.contains("var x = ;"), "{text}");
        assert!(text.contains('^'), "{text}");
        assert!(text.contains("hint: write a value"), "{text}");
    }
}
