//! Rule text to tokens.
//!
//! The token classes and their precedence are the original's (spec §2.1): at each position the
//! rules below are tried in this order and the first that matches wins.
//!
//! | # | token | matches |
//! |---|---|---|
//! | 1 | comment | at a line start: whitespace, `#`, the rest of the line and its line end |
//! | 2 | or | whitespace, `\|`, whitespace (the whitespace may hold line ends) |
//! | 3 | ws | whitespace |
//! | 4 | one-time | `<$` … `>` |
//! | 5 | one-time reference | `<@` … `>` |
//! | 6 | nonterminal | `<`, a character other than `$`, … `>` |
//! | 7 | code | `` ` `` … `` ` `` |
//! | 8 | weight | `[` … `]` |
//! | 9 | arrow | `=>` |
//! | 10 | end of rule | `;`, spaces or tabs, a line end |
//! | 11 | quoted text | `'` … `'` (the shortest) |
//! | 12 | text | characters other than `` ` `` `'` `<` `[` `]` `;` space, tab, CR, LF |
//!
//! Both modes accept LF and CRLF line ends and a last rule without one (the original wanted CRLF
//! everywhere; no file it read depends on that). The extended mode (the default) adds escapes
//! (`\'`, `\<`, `\>`, `\[`, `\]`, `\;`, `` \` ``, `\\`, `\|`, `\#`, `\=`, and `\ ` for a space that stays), takes embedded code raw
//! (only `<name>`, `<$name>` and `<@name>` references are picked out of it, so code may hold `<`,
//! `'`, `;`, `[` and `|`), lexes weights structurally (code inside a weight may hold `]`), keeps a
//! nonterminal on one line, and allows spaces just inside backquotes and brackets. The strict mode
//! reads the original's files as the original did: code and weights are re-lexed as rules.

use geogen_diag::{codes, Diagnostic, Diagnostics, Span};

use crate::Mode;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Comment,
    Or,
    Ws,
    Arrow,
    EndOfRule,
    /// `<$n>`, the whole text.
    OneTime(String),
    /// `<@n>`: the key of the one-time value it names, `<$n>`.
    OneTimeRef(String),
    /// `<n>`, the whole text.
    NonTerminal(String),
    /// `'…'`: the text between the quotes.
    Quoted(String),
    Text(String),
    /// Embedded code. Strict: its text lexed again as rules. Extended: the raw code split into
    /// `Text` pieces and references (`NonTerminal`, `OneTime`, `OneTimeRef`).
    Code(Vec<Token>),
    /// A weight: its content lexed as rules.
    Weight(Vec<Token>),
}

/// The characters an extended-mode backslash makes literal.
pub(crate) const ESCAPABLE: &[u8] = b"'<>[];`\\|#= ";

/// What ends the tokens being lexed.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Context {
    /// A whole rule file.
    Top,
    /// Inside an extended-mode weight: a `]` ends it.
    Weight,
    /// A range of the file lexed again (strict code or weight content): its end ends it.
    Inner,
}

pub(crate) struct Lexed {
    pub tokens: Vec<Token>,
    pub diagnostics: Diagnostics,
}

/// Lexes a whole rule file.
pub(crate) fn lex(src: &str, mode: Mode) -> Lexed {
    let mut lexer = Lexer { src, bytes: src.as_bytes(), pos: 0, end: src.len(), mode, diagnostics: Diagnostics::new() };
    let tokens = lexer.tokens(Context::Top);
    Lexed { tokens, diagnostics: lexer.diagnostics }
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    mode: Mode,
    diagnostics: Diagnostics,
}

/// Whitespace as JavaScript's `\s` sees it (close enough: Unicode White_Space).
fn is_ws(c: char) -> bool {
    c.is_whitespace()
}

fn span(start: usize, end: usize) -> Span {
    Span::new(start as u32, end as u32)
}

/// Why a token could not be read; the lexer reports it and decides how to go on.
enum Stop {
    /// Skip `len` bytes and go on.
    Skip(Diagnostic, usize),
    /// Nothing after this can be read (an unclosed construct swallows the rest).
    Fatal(Diagnostic),
}

impl<'a> Lexer<'a> {
    fn tokens(&mut self, context: Context) -> Vec<Token> {
        let mut tokens = Vec::new();
        while self.pos < self.end {
            if context == Context::Weight && self.bytes[self.pos] == b']' {
                break;
            }
            let start = self.pos;
            match self.token(context) {
                Ok(kind) => tokens.push(Token { kind, span: span(start, self.pos) }),
                Err(Stop::Skip(diagnostic, len)) => {
                    self.diagnostics.push(diagnostic);
                    self.pos = (start + len.max(1)).min(self.end);
                    while !self.src.is_char_boundary(self.pos) {
                        self.pos += 1;
                    }
                }
                Err(Stop::Fatal(diagnostic)) => {
                    self.diagnostics.push(diagnostic);
                    self.pos = self.end;
                }
            }
        }
        tokens
    }

    fn char_at(&self, pos: usize) -> Option<char> {
        if pos >= self.end {
            return None;
        }
        self.src[pos..self.end].chars().next()
    }

    fn at_line_start(&self) -> bool {
        self.pos == 0 || self.bytes[self.pos - 1] == b'\n'
    }

    /// The end of a run of whitespace starting at `pos`.
    fn ws_end(&self, mut pos: usize) -> usize {
        while let Some(c) = self.char_at(pos) {
            if !is_ws(c) {
                break;
            }
            pos += c.len_utf8();
        }
        pos
    }

    /// The position after a line end (`\n` or `\r\n`) at `pos`, if there is one.
    fn line_end(&self, pos: usize) -> Option<usize> {
        match self.bytes.get(pos) {
            _ if pos >= self.end => None,
            Some(b'\n') => Some(pos + 1),
            Some(b'\r') if pos + 1 < self.end && self.bytes[pos + 1] == b'\n' => Some(pos + 2),
            _ => None,
        }
    }

    fn token(&mut self, context: Context) -> Result<Tok, Stop> {
        let start = self.pos;
        // 1. A comment line.
        if self.at_line_start() {
            let hash = self.ws_end(start);
            if self.bytes.get(hash) == Some(&b'#') && hash < self.end {
                let mut pos = hash;
                while pos < self.end && self.bytes[pos] != b'\n' {
                    pos += 1;
                }
                self.pos = (pos + 1).min(self.end);
                return Ok(Tok::Comment);
            }
        }
        let ws = self.ws_end(start);
        if ws > start {
            // 2. A choice separator: whitespace on both sides of `|`.
            if self.bytes.get(ws) == Some(&b'|') && ws < self.end {
                let after = self.ws_end(ws + 1);
                if after > ws + 1 {
                    self.pos = after;
                    return Ok(Tok::Or);
                }
            }
            // 3. Whitespace.
            self.pos = ws;
            return Ok(Tok::Ws);
        }
        match self.bytes[start] {
            b'<' => self.angle(start),
            b'`' => self.code(start),
            b'[' => self.weight(start, context),
            b'=' if self.bytes.get(start + 1) == Some(&b'>') && start + 1 < self.end => {
                self.pos = start + 2;
                Ok(Tok::Arrow)
            }
            b';' => self.end_of_rule(start, context),
            b'\'' => self.quoted(start),
            b']' => {
                let hint = match self.mode {
                    Mode::Extended => "a weight is written `[3]`; write `\\]` for a literal `]`",
                    Mode::Strict => "a weight is written `[3]`; quote a literal `]` as ']'",
                };
                Err(Stop::Skip(
                    Diagnostic::at(codes::GGE7101, span(start, start + 1), "a `]` that closes no weight")
                        .with_hint(hint),
                    1,
                ))
            }
            _ => Ok(self.text(start)),
        }
    }

    /// Tokens 4 to 6: `<$n>`, `<@n>`, `<n>`.
    fn angle(&mut self, start: usize) -> Result<Tok, Stop> {
        let unclosed = |lexer: &Lexer<'_>| {
            let hint = match lexer.mode {
                Mode::Extended => "a nonterminal is written `<name>` on one line; write `\\<` for a literal `<`",
                Mode::Strict => "a nonterminal is written `<name>`; quote a literal `<` as '<'",
            };
            Stop::Skip(
                Diagnostic::at(codes::GGE7105, span(start, start + 1), "a `<` without a closing `>`").with_hint(hint),
                1,
            )
        };
        let Some(second) = self.char_at(start + 1) else { return Err(unclosed(self)) };
        // The name runs to the first `>` after the character following `<` (which may itself be `>`).
        let search_from = if second == '$' || second == '@' { start + 2 } else { start + 1 + second.len_utf8() };
        let mut pos = search_from;
        loop {
            match self.bytes.get(pos) {
                _ if pos >= self.end => return Err(unclosed(self)),
                Some(b'>') => break,
                Some(b'\n') if self.mode == Mode::Extended => return Err(unclosed(self)),
                _ => pos += 1,
            }
        }
        if self.mode == Mode::Extended && second == '\n' {
            return Err(unclosed(self));
        }
        self.pos = pos + 1;
        let text = self.src[start..self.pos].to_string();
        Ok(match second {
            '$' => Tok::OneTime(text),
            '@' => Tok::OneTimeRef(format!("<${}", &text[2..])),
            _ => Tok::NonTerminal(text),
        })
    }

    /// Token 7: embedded code.
    fn code(&mut self, start: usize) -> Result<Tok, Stop> {
        let unclosed = || {
            Stop::Fatal(
                Diagnostic::at(codes::GGE7103, span(start, start + 1), "embedded code whose backquote is never closed")
                    .with_hint("embedded code is written between two backquotes: `Random() > 0.5`"),
            )
        };
        match self.mode {
            Mode::Strict => {
                let Some(close) = self.bytes[start + 1..self.end].iter().position(|&b| b == b'`') else {
                    return Err(unclosed());
                };
                let close = start + 1 + close;
                if close == start + 1 {
                    return Err(empty_code(start));
                }
                self.pos = close + 1;
                let tokens = self.inner(start + 1, close);
                Ok(Tok::Code(tokens))
            }
            Mode::Extended => {
                let mut pos = start + 1;
                loop {
                    match self.bytes.get(pos) {
                        _ if pos >= self.end => return Err(unclosed()),
                        Some(b'`') => break,
                        Some(b'\\') if self.bytes.get(pos + 1) == Some(&b'`') && pos + 1 < self.end => pos += 2,
                        _ => pos += 1,
                    }
                }
                self.pos = pos + 1;
                let parts = split_code(self.src, start + 1, pos);
                if parts.is_empty() {
                    return Err(empty_code(start));
                }
                Ok(Tok::Code(parts))
            }
        }
    }

    /// Token 8: a weight.
    fn weight(&mut self, start: usize, context: Context) -> Result<Tok, Stop> {
        let unclosed = |what: &str| {
            Stop::Fatal(
                Diagnostic::at(codes::GGE7104, span(start, start + 1), format!("a weight whose `[` is {what}"))
                    .with_hint("a weight is written after its choice, as in `Red River [3]`"),
            )
        };
        if context == Context::Weight {
            return Err(Stop::Skip(
                Diagnostic::at(codes::GGE7104, span(start, start + 1), "a weight inside a weight")
                    .with_hint("weights do not nest; write `\\[` for a literal `[`"),
                1,
            ));
        }
        match self.mode {
            Mode::Strict => {
                let Some(close) = self.bytes[start + 1..self.end].iter().position(|&b| b == b']') else {
                    return Err(unclosed("never closed"));
                };
                let close = start + 1 + close;
                if close == start + 1 {
                    return Err(Stop::Skip(empty_weight(start, close + 1), 2));
                }
                self.pos = close + 1;
                Ok(Tok::Weight(self.inner(start + 1, close)))
            }
            Mode::Extended => {
                self.pos = start + 1;
                let tokens = self.tokens(Context::Weight);
                if self.pos >= self.end {
                    return Err(unclosed("never closed"));
                }
                // At the closing `]`.
                self.pos += 1;
                if tokens.iter().all(|t| t.kind == Tok::Ws) {
                    return Err(Stop::Skip(empty_weight(start, self.pos), self.pos - start));
                }
                Ok(Tok::Weight(tokens))
            }
        }
    }

    /// Lexes `[from, to)` again as rules (strict code and weights).
    fn inner(&mut self, from: usize, to: usize) -> Vec<Token> {
        let (saved_pos, saved_end) = (self.pos, self.end);
        self.pos = from;
        self.end = to;
        let tokens = self.tokens(Context::Inner);
        self.pos = saved_pos;
        self.end = saved_end;
        tokens
    }

    /// Token 10: `;`, spaces or tabs, and a line end (or the end of the text).
    fn end_of_rule(&mut self, start: usize, context: Context) -> Result<Tok, Stop> {
        let mut pos = start + 1;
        while pos < self.end && matches!(self.bytes[pos], b' ' | b'\t') {
            pos += 1;
        }
        if pos >= self.end {
            self.pos = pos;
            return Ok(Tok::EndOfRule);
        }
        if let Some(after) = self.line_end(pos) {
            self.pos = after;
            return Ok(Tok::EndOfRule);
        }
        let escape = match self.mode {
            Mode::Extended => "write `\\;` for a literal `;`",
            Mode::Strict => "quote a literal `;` as ';'",
        };
        Err(if context == Context::Top {
            Stop::Skip(
                Diagnostic::at(codes::GGE7106, span(start, pos), "text after the `;` that ends a rule")
                    .with_hint(format!("a rule ends its line and a comment takes a line of its own; {escape}")),
                pos - start,
            )
        } else {
            Stop::Skip(
                Diagnostic::at(codes::GGE7101, span(start, start + 1), "a `;` inside embedded code or a weight")
                    .with_hint(escape.to_string()),
                1,
            )
        })
    }

    /// Token 11: `'…'`.
    fn quoted(&mut self, start: usize) -> Result<Tok, Stop> {
        let mut text = String::new();
        let mut pos = start + 1;
        loop {
            if pos >= self.end {
                let hint = match self.mode {
                    Mode::Extended => "a `'` starts a quoted text; write `\\'` for an apostrophe, as in Dragon\\'s Lair",
                    Mode::Strict => {
                        "a `'` starts a quoted text, and the original cannot write an apostrophe; leave strict mode to write `\\'`"
                    }
                };
                return Err(Stop::Fatal(
                    Diagnostic::at(codes::GGE7102, span(start, start + 1), "a quoted text whose `'` is never closed")
                        .with_hint(hint),
                ));
            }
            let b = self.bytes[pos];
            if b == b'\'' {
                break;
            }
            if self.mode == Mode::Extended
                && b == b'\\'
                && pos + 1 < self.end
                && matches!(self.bytes[pos + 1], b'\'' | b'\\')
            {
                text.push(self.bytes[pos + 1] as char);
                pos += 2;
                continue;
            }
            let Some(c) = self.char_at(pos) else { break };
            text.push(c);
            pos += c.len_utf8();
        }
        self.pos = pos + 1;
        Ok(Tok::Quoted(text))
    }

    /// Token 12: plain text (extended mode: with escapes).
    fn text(&mut self, start: usize) -> Tok {
        let mut text = String::new();
        let mut pos = start;
        while let Some(c) = self.char_at(pos) {
            if matches!(c, '`' | '\'' | '<' | '[' | ']' | ';' | ' ' | '\t' | '\r' | '\n') {
                break;
            }
            if self.mode == Mode::Extended
                && c == '\\'
                && pos + 1 < self.end
                && ESCAPABLE.contains(&self.bytes[pos + 1])
            {
                text.push(self.bytes[pos + 1] as char);
                pos += 2;
                continue;
            }
            text.push(c);
            pos += c.len_utf8();
        }
        self.pos = pos;
        Tok::Text(text)
    }
}

fn empty_code(start: usize) -> Stop {
    Stop::Skip(
        Diagnostic::at(codes::GGE7103, span(start, start + 2), "empty embedded code")
            .with_hint("write an expression between the backquotes, or `''` for an empty text"),
        2,
    )
}

fn empty_weight(start: usize, end: usize) -> Diagnostic {
    Diagnostic::at(codes::GGE7104, span(start, end), "an empty weight").with_hint("write a number, as in `[3]`")
}

/// Extended mode: the raw code of `src[from..to]` (`` \` `` is a backquote; whitespace at both
/// ends dropped), split into text and the references `<name>`, `<$name>`, `<@name>` whose name is
/// a letter or `_` followed by letters, digits, `_`, `-` or spaces. Anything else, `a < b` among
/// it, is code.
fn split_code(src: &str, from: usize, to: usize) -> Vec<Token> {
    let bytes = src.as_bytes();
    let mut from = from;
    let mut to = to;
    while from < to && bytes[from].is_ascii_whitespace() {
        from += 1;
    }
    while to > from && bytes[to - 1].is_ascii_whitespace() {
        to -= 1;
    }
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut text_start = from;
    let mut pos = from;
    let flush = |text: &mut String, text_start: usize, end: usize, parts: &mut Vec<Token>| {
        if !text.is_empty() {
            parts.push(Token { kind: Tok::Text(std::mem::take(text)), span: span(text_start, end) });
        }
    };
    while pos < to {
        let b = bytes[pos];
        if b == b'\\' && pos + 1 < to && bytes[pos + 1] == b'`' {
            text.push('`');
            pos += 2;
            continue;
        }
        if b == b'<' {
            if let Some(end) = reference_end(bytes, pos, to) {
                flush(&mut text, text_start, pos, &mut parts);
                let whole = &src[pos..end];
                let kind = match bytes[pos + 1] {
                    b'$' => Tok::OneTime(whole.to_string()),
                    b'@' => Tok::OneTimeRef(format!("<${}", &whole[2..])),
                    _ => Tok::NonTerminal(whole.to_string()),
                };
                parts.push(Token { kind, span: span(pos, end) });
                pos = end;
                text_start = pos;
                continue;
            }
        }
        let c = src[pos..].chars().next().unwrap_or('\u{fffd}');
        text.push(c);
        pos += c.len_utf8().max(1);
    }
    flush(&mut text, text_start, to, &mut parts);
    parts
}

/// The end (after `>`) of a reference starting at the `<` at `pos`, if one starts there.
fn reference_end(bytes: &[u8], pos: usize, to: usize) -> Option<usize> {
    let mut i = pos + 1;
    if i < to && matches!(bytes[i], b'$' | b'@') {
        i += 1;
    }
    let first = *bytes.get(i).filter(|_| i < to)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    while i < to {
        match bytes[i] {
            b'>' => return Some(i + 1),
            b if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b' ') => i += 1,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str, mode: Mode) -> Vec<Tok> {
        let lexed = lex(src, mode);
        assert!(lexed.diagnostics.is_clean(), "{src:?}: {:?}", lexed.diagnostics.as_slice());
        lexed.tokens.into_iter().map(|t| t.kind).collect()
    }

    fn first_error(src: &str, mode: Mode) -> (geogen_diag::ErrorCode, Span) {
        let lexed = lex(src, mode);
        let d = lexed.diagnostics.first().unwrap_or_else(|| panic!("{src:?} lexed without error"));
        (d.code, d.span.unwrap_or_default())
    }

    fn text(s: &str) -> Tok {
        Tok::Text(s.to_string())
    }

    #[test]
    fn the_token_classes_in_their_order() {
        use Tok::*;
        assert_eq!(
            kinds("<a> => x | y [2];\r\n", Mode::Strict),
            vec![
                NonTerminal("<a>".into()),
                Ws,
                Arrow,
                Ws,
                text("x"),
                Or,
                text("y"),
                Ws,
                Weight(vec![Token { kind: text("2"), span: Span::new(14, 15) }]),
                EndOfRule
            ]
        );
        // `|` without whitespace on both sides is text; `=>` inside a word is text.
        assert_eq!(kinds("x|y a=>b", Mode::Strict), vec![text("x|y"), Ws, text("a=>b")]);
        assert_eq!(kinds("a |b", Mode::Strict), vec![text("a"), Ws, text("|b")]);
        // The or token takes line ends on both sides.
        assert_eq!(kinds("a\r\n  |\r\n  b", Mode::Strict), vec![text("a"), Or, text("b")]);
        assert_eq!(
            kinds("<$c> <@c> <a b>", Mode::Strict),
            vec![OneTime("<$c>".into()), Ws, OneTimeRef("<$c>".into()), Ws, NonTerminal("<a b>".into())]
        );
        assert_eq!(kinds("'a  b'", Mode::Strict), vec![Quoted("a  b".into())]);
        assert_eq!(kinds("''", Mode::Strict), vec![Quoted(String::new())]);
    }

    #[test]
    fn comments_take_whole_lines_only() {
        assert_eq!(kinds("# hi\r\n", Mode::Strict), vec![Tok::Comment]);
        assert_eq!(kinds("  # hi\n", Mode::Extended), vec![Tok::Comment]);
        assert_eq!(kinds("# last line", Mode::Extended), vec![Tok::Comment]);
        // Not at a line start, `#` is text.
        assert_eq!(kinds("a #b", Mode::Strict), vec![text("a"), Tok::Ws, text("#b")]);
    }

    #[test]
    fn rules_end_at_a_line_end_of_either_kind_or_the_end_of_the_text() {
        assert_eq!(kinds(";\r\n", Mode::Strict), vec![Tok::EndOfRule]);
        assert_eq!(kinds("; \t\n", Mode::Strict), vec![Tok::EndOfRule]);
        assert_eq!(kinds(";", Mode::Extended), vec![Tok::EndOfRule]);
        let (code, at) = first_error("; # comment\n", Mode::Extended);
        assert_eq!((code, at.start), (codes::GGE7106, 0));
    }

    #[test]
    fn strict_code_and_weights_are_lexed_again_as_rules() {
        let Tok::Code(inner) = &kinds("`a | b [1] <x>`", Mode::Strict)[0] else { panic!() };
        let inner: Vec<Tok> = inner.iter().map(|t| t.kind.clone()).collect();
        assert_eq!(
            inner,
            vec![
                text("a"),
                Tok::Or,
                text("b"),
                Tok::Ws,
                Tok::Weight(vec![Token { kind: text("1"), span: Span::new(8, 9) }]),
                Tok::Ws,
                Tok::NonTerminal("<x>".into())
            ]
        );
        // `<` with no later `>` inside code is an error in strict mode...
        assert_eq!(first_error("`1 < 2`", Mode::Strict).0, codes::GGE7105);
        // ...and `[[1]]` nests.
        assert!(!lex("[[1]]", Mode::Strict).diagnostics.is_clean());
    }

    #[test]
    fn extended_code_is_raw_with_references_picked_out() {
        let Tok::Code(parts) = &kinds("` 1 < 2 && <n> > 0 ? 'a;b' : <@c> `", Mode::Extended)[0] else { panic!() };
        let parts: Vec<Tok> = parts.iter().map(|t| t.kind.clone()).collect();
        assert_eq!(
            parts,
            vec![
                text("1 < 2 && "),
                Tok::NonTerminal("<n>".into()),
                text(" > 0 ? 'a;b' : "),
                Tok::OneTimeRef("<$c>".into())
            ]
        );
        let Tok::Code(parts) = &kinds(r"`a\`b`", Mode::Extended)[0] else { panic!() };
        assert_eq!(parts[0].kind, text("a`b"));
        assert_eq!(first_error("``", Mode::Extended).0, codes::GGE7103);
        assert_eq!(first_error("` `", Mode::Extended).0, codes::GGE7103);
        assert_eq!(first_error("`abc", Mode::Extended).0, codes::GGE7103);
    }

    #[test]
    fn extended_escapes_and_weights() {
        assert_eq!(kinds(r"Dragon\'s\ Lair", Mode::Extended), vec![text("Dragon's Lair")]);
        assert_eq!(kinds(r"a\<b\;c\`d\\e\[f\]", Mode::Extended), vec![text(r"a<b;c`d\e[f]")]);
        // Other backslashes are literal.
        assert_eq!(kinds(r"C:\x", Mode::Extended), vec![text(r"C:\x")]);
        assert_eq!(kinds(r"'it\'s'", Mode::Extended), vec![Tok::Quoted("it's".into())]);
        // Strict mode has no escapes.
        assert_eq!(kinds(r"a\<b>", Mode::Strict), vec![text(r"a\"), Tok::NonTerminal("<b>".into())]);
        // A weight may hold code with `]` in it.
        let Tok::Weight(inner) = &kinds("[`a[0]`]", Mode::Extended)[0] else { panic!() };
        assert!(matches!(inner[0].kind, Tok::Code(_)));
        assert_eq!(first_error("[[1]]", Mode::Extended).0, codes::GGE7104);
        assert_eq!(first_error("[ ]", Mode::Extended).0, codes::GGE7104);
        assert_eq!(first_error("[1", Mode::Extended).0, codes::GGE7104);
    }

    #[test]
    fn errors_point_at_the_offending_character() {
        assert_eq!(first_error("ab ]", Mode::Strict), (codes::GGE7101, Span::new(3, 4)));
        assert_eq!(first_error("Dragon's Lair", Mode::Strict), (codes::GGE7102, Span::new(6, 7)));
        assert_eq!(first_error("a < b", Mode::Extended), (codes::GGE7105, Span::new(2, 3)));
        assert_eq!(first_error("a <b\nc>", Mode::Extended).0, codes::GGE7105);
        // Strict: a name may run over lines, as in the original.
        assert_eq!(kinds("<b\nc>", Mode::Strict), vec![Tok::NonTerminal("<b\nc>".into())]);
    }
}
