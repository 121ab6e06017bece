//! The lexer: source text to [`Token`]s (reference §1.1).
//!
//! It is hand-written, works on bytes (every token boundary the grammar cares about is ASCII), and
//! never stops at an error: a bad character is reported and skipped, a bad escape is reported and
//! kept, an unterminated string or comment runs to the end of the file. The token list always ends
//! with exactly one [`TokenKind::Eof`], so the parser never runs off the end.

use geogen_diag::{codes, Diagnostic, Diagnostics, Span};

/// What a token is. Keywords and punctuation carry no data; literals carry their value.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    // Keywords (reference §1.1). `null` is deliberately not one: it is a global variable.
    Metadata,
    Enum,
    Function,
    Var,
    Global,
    Return,
    Yield,
    As,
    Switch,
    Default,
    Case,
    If,
    Else,
    For,
    While,
    Break,
    Continue,
    True,
    False,
    Is,

    /// `[A-Za-z_][A-Za-z0-9_]*`
    Ident(String),
    /// `[0-9]+('.'[0-9]+)?`, already converted.
    Number(f64),
    /// A string literal with its escapes resolved.
    String(String),

    // Punctuation and operators.
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `;`
    Semicolon,
    /// `:`
    Colon,
    /// `.`
    Dot,
    /// `?`
    Question,
    /// `@`
    At,
    /// `++`
    PlusPlus,
    /// `--`
    MinusMinus,
    /// `!`
    Bang,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `&`
    Amp,
    /// `^`
    Caret,
    /// `|`
    Pipe,
    /// `&&`
    AmpAmp,
    /// `||`
    PipePipe,
    /// `=`
    Eq,
    /// `+=`
    PlusEq,
    /// `-=`
    MinusEq,
    /// `*=`
    StarEq,
    /// `/=`
    SlashEq,
    /// `%=`
    PercentEq,
    /// `<<=`
    ShlEq,
    /// `>>=`
    ShrEq,
    /// `&=`
    AmpEq,
    /// `^=`
    CaretEq,
    /// `|=`
    PipeEq,

    /// The end of the input; always the last token.
    Eof,
}

/// Keywords and their token kinds.
const KEYWORDS: &[(&str, TokenKind)] = &[
    ("metadata", TokenKind::Metadata),
    ("enum", TokenKind::Enum),
    ("function", TokenKind::Function),
    ("var", TokenKind::Var),
    ("global", TokenKind::Global),
    ("return", TokenKind::Return),
    ("yield", TokenKind::Yield),
    ("as", TokenKind::As),
    ("switch", TokenKind::Switch),
    ("default", TokenKind::Default),
    ("case", TokenKind::Case),
    ("if", TokenKind::If),
    ("else", TokenKind::Else),
    ("for", TokenKind::For),
    ("while", TokenKind::While),
    ("break", TokenKind::Break),
    ("continue", TokenKind::Continue),
    ("true", TokenKind::True),
    ("false", TokenKind::False),
    ("is", TokenKind::Is),
];

/// Operators and punctuation, longest first so that the first match is the longest one.
const PUNCTUATION: &[(&str, TokenKind)] = &[
    ("<<=", TokenKind::ShlEq),
    (">>=", TokenKind::ShrEq),
    ("++", TokenKind::PlusPlus),
    ("--", TokenKind::MinusMinus),
    ("<<", TokenKind::Shl),
    (">>", TokenKind::Shr),
    ("<=", TokenKind::Le),
    (">=", TokenKind::Ge),
    ("==", TokenKind::EqEq),
    ("!=", TokenKind::NotEq),
    ("&&", TokenKind::AmpAmp),
    ("||", TokenKind::PipePipe),
    ("+=", TokenKind::PlusEq),
    ("-=", TokenKind::MinusEq),
    ("*=", TokenKind::StarEq),
    ("/=", TokenKind::SlashEq),
    ("%=", TokenKind::PercentEq),
    ("&=", TokenKind::AmpEq),
    ("^=", TokenKind::CaretEq),
    ("|=", TokenKind::PipeEq),
    ("(", TokenKind::LParen),
    (")", TokenKind::RParen),
    ("[", TokenKind::LBracket),
    ("]", TokenKind::RBracket),
    ("{", TokenKind::LBrace),
    ("}", TokenKind::RBrace),
    (",", TokenKind::Comma),
    (";", TokenKind::Semicolon),
    (":", TokenKind::Colon),
    (".", TokenKind::Dot),
    ("?", TokenKind::Question),
    ("@", TokenKind::At),
    ("!", TokenKind::Bang),
    ("*", TokenKind::Star),
    ("/", TokenKind::Slash),
    ("%", TokenKind::Percent),
    ("+", TokenKind::Plus),
    ("-", TokenKind::Minus),
    ("<", TokenKind::Lt),
    (">", TokenKind::Gt),
    ("&", TokenKind::Amp),
    ("^", TokenKind::Caret),
    ("|", TokenKind::Pipe),
    ("=", TokenKind::Eq),
];

impl TokenKind {
    /// The keyword spelled `text`, if it is one.
    pub fn keyword(text: &str) -> Option<TokenKind> {
        KEYWORDS.iter().find(|(k, _)| *k == text).map(|(_, kind)| kind.clone())
    }

    /// Every keyword as written, in the order of reference §1.1.
    pub fn keywords() -> impl Iterator<Item = &'static str> {
        KEYWORDS.iter().map(|(k, _)| *k)
    }

    /// Every operator and punctuation token as written.
    pub fn punctuation() -> impl Iterator<Item = &'static str> {
        PUNCTUATION.iter().map(|(p, _)| *p)
    }

    /// The fixed spelling of a keyword or punctuation token; `None` for identifiers, literals and EOF.
    pub fn text(&self) -> Option<&'static str> {
        KEYWORDS.iter().chain(PUNCTUATION.iter()).find(|(_, kind)| kind == self).map(|(text, _)| *text)
    }

    pub fn is_keyword(&self) -> bool {
        KEYWORDS.iter().any(|(_, kind)| kind == self)
    }
}

/// One token and the bytes of source it covers.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// Splits `source` into tokens. The list always ends with one [`TokenKind::Eof`] token (whose span
/// is empty, at the end of the source); the diagnostics are GGE1101 to GGE1105, in source order.
/// At most [`geogen_diag::MAX_DIAGNOSTICS`] diagnostics are kept; the rest are counted.
pub fn lex(source: &str) -> (Vec<Token>, Diagnostics) {
    let lexed = lex_for_parser(source);
    (lexed.tokens, lexed.diagnostics)
}

/// What the parser needs from the lexer besides the tokens, whatever the diagnostics cap kept.
pub(crate) struct Lexed {
    pub tokens: Vec<Token>,
    pub diagnostics: Diagnostics,
    /// The characters skipped as junk (GGE1101), in source order.
    pub junk: Vec<Span>,
    /// A string or block comment runs to the end of the file (GGE1103, GGE1104).
    pub unterminated: bool,
}

pub(crate) fn lex_for_parser(source: &str) -> Lexed {
    let mut lexer = Lexer {
        src: source,
        pos: 0,
        tokens: Vec::new(),
        diagnostics: Diagnostics::new(),
        junk: Vec::new(),
        unterminated: false,
    };
    lexer.run();
    Lexed { tokens: lexer.tokens, diagnostics: lexer.diagnostics, junk: lexer.junk, unterminated: lexer.unterminated }
}

/// Byte offsets are `u32` in spans; a source longer than 4 GiB saturates rather than wrapping.
fn offset(pos: usize) -> u32 {
    u32::try_from(pos).unwrap_or(u32::MAX)
}

/// How a character is shown in a message: between single quotes as a C character literal (so a
/// backtick reads '`', not ```), plus its code point when it is not plain printable ASCII (an
/// invisible or look-alike character is otherwise impossible to spot).
pub(crate) fn show_char(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("'{}'", c.escape_debug())
    } else {
        format!("'{}' (U+{:04X})", c.escape_debug(), u32::from(c))
    }
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    diagnostics: Diagnostics,
    junk: Vec<Span>,
    unterminated: bool,
}

impl Lexer<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(at).copied()
    }

    /// The character starting at `at` (always a char boundary: the lexer only moves by whole chars).
    fn char_at(&self, at: usize) -> Option<char> {
        self.src.get(at..).and_then(|rest| rest.chars().next())
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(offset(start), offset(end))
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        let span = self.span(start, self.pos);
        self.tokens.push(Token { kind, span });
    }

    fn run(&mut self) {
        // A UTF-8 byte order mark (as some Windows editors write) is not part of the script.
        if self.src.starts_with('\u{feff}') {
            self.pos = '\u{feff}'.len_utf8();
        }
        while let Some(b) = self.byte(self.pos) {
            let start = self.pos;
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => self.pos += 1,
                b'/' if self.byte(start + 1) == Some(b'/') => self.line_comment(),
                b'/' if self.byte(start + 1) == Some(b'*') => self.block_comment(),
                b'"' => self.string(),
                b'0'..=b'9' => self.number(),
                b'A'..=b'Z' | b'a'..=b'z' | b'_' => self.identifier(),
                _ if b >= 0x80 && self.char_at(start).is_some_and(char::is_alphabetic) => self.identifier(),
                _ => {
                    if !self.punctuation() {
                        self.unexpected_characters();
                    }
                }
            }
        }
        let end = self.src.len();
        self.tokens.push(Token { kind: TokenKind::Eof, span: self.span(end, end) });
    }

    /// `// ...` up to the end of the line, or of the file: unlike the original, a comment on the
    /// last line without a newline is fine.
    fn line_comment(&mut self) {
        let rest = self.src.get(self.pos..).unwrap_or("");
        self.pos += rest.find('\n').unwrap_or(rest.len());
    }

    /// `/* ... */`, not nesting: the first `*/` ends it, whatever is inside (`/* // */` is closed).
    fn block_comment(&mut self) {
        let start = self.pos;
        let body = self.src.get(start + 2..).unwrap_or("");
        match body.find("*/") {
            Some(i) => self.pos = start + 2 + i + 2,
            None => {
                self.pos = self.src.len();
                self.unterminated = true;
                self.diagnostics.push(
                    Diagnostic::at(codes::GGE1104, self.span(start, start + 2), "this block comment is never closed")
                        .with_hint("end the comment with `*/`"),
                );
            }
        }
    }

    fn string(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(c) = self.char_at(self.pos) else {
                self.unterminated = true;
                self.diagnostics.push(
                    Diagnostic::at(codes::GGE1103, self.span(start, start + 1), "this string is never closed")
                        .with_hint("end the string with `\"`"),
                );
                break;
            };
            let here = self.pos;
            self.pos += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let Some(escaped) = self.char_at(self.pos) else {
                        // A backslash at the very end: the string is unterminated, reported above
                        // on the next iteration.
                        continue;
                    };
                    self.pos += escaped.len_utf8();
                    match escaped {
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        'n' => value.push('\n'),
                        't' => value.push('\t'),
                        other => {
                            let text = format!("\\{}", other.escape_debug());
                            self.diagnostics.push(
                                Diagnostic::at(
                                    codes::GGE1102,
                                    self.span(here, self.pos),
                                    format!("invalid escape sequence `{text}` in a string"),
                                )
                                .with_hint(
                                    "the only escapes are `\\\\` (backslash), `\\\"` (quote), `\\n` (new line) and `\\t` (tab)",
                                ),
                            );
                            // Keep the text as written so the value is still recognisable.
                            value.push('\\');
                            value.push(other);
                        }
                    }
                }
                // Raw new lines are allowed in strings (the original's TestMultilineString).
                other => value.push(other),
            }
        }
        self.push(TokenKind::String(value), start);
    }

    /// `[0-9]+('.'[0-9]+)?`: `1.` is the number 1 followed by `.`, `1.5.2` is `1.5` `.` `2`.
    fn number(&mut self) {
        let start = self.pos;
        self.skip_digits();
        if self.byte(self.pos) == Some(b'.') && self.byte(self.pos + 1).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
            self.skip_digits();
        }
        let text = self.src.get(start..self.pos).unwrap_or("0");
        // The text is digits with at most one inner dot, which `f64` always accepts; a literal past
        // the largest double parses to infinity.
        let value: f64 = text.parse().unwrap_or(f64::INFINITY);
        if value.is_infinite() {
            let shown = if text.len() > 24 { format!("{}...", &text[..20]) } else { text.to_string() };
            self.diagnostics.push(
                Diagnostic::at(
                    codes::GGE1105,
                    self.span(start, self.pos),
                    format!("the number `{shown}` is too large ({} digits)", text.len()),
                )
                .with_hint("numbers must be below about 1.8 × 10^308"),
            );
        }
        self.push(TokenKind::Number(value), start);
    }

    fn skip_digits(&mut self) {
        while self.byte(self.pos).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    /// An identifier or keyword. Non-ASCII letters and digits are swallowed into the identifier
    /// (with one GGE1101 for the first of them) so that `café = 1;` gives one error, not a cascade
    /// of syntax errors about `caf` and `=`.
    fn identifier(&mut self) {
        let start = self.pos;
        let mut first_foreign: Option<(usize, char)> = None;
        while let Some(c) = self.char_at(self.pos) {
            if c.is_ascii_alphanumeric() || c == '_' {
                self.pos += 1;
            } else if !c.is_ascii() && c.is_alphanumeric() {
                first_foreign.get_or_insert((self.pos, c));
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        let text = self.src.get(start..self.pos).unwrap_or("");
        if let Some((at, c)) = first_foreign {
            self.diagnostics.push(
                Diagnostic::at(
                    codes::GGE1101,
                    self.span(at, at + c.len_utf8()),
                    format!("unexpected character {} in the name `{text}`", show_char(c)),
                )
                .with_hint("names may only contain ASCII letters, digits and `_`"),
            );
        }
        let kind = TokenKind::keyword(text).unwrap_or_else(|| TokenKind::Ident(text.to_string()));
        self.push(kind, start);
    }

    /// Tries every operator, longest first. Returns false if none matches here.
    fn punctuation(&mut self) -> bool {
        let rest = self.src.get(self.pos..).unwrap_or("");
        let Some((text, kind)) = PUNCTUATION.iter().find(|(p, _)| rest.starts_with(p)) else {
            return false;
        };
        let start = self.pos;
        self.pos += text.len();
        self.push(kind.clone(), start);
        true
    }

    /// Could `c` begin a token or whitespace? Used to find the end of a run of junk.
    fn starts_something(&self, at: usize, c: char) -> bool {
        match c {
            ' ' | '\t' | '\r' | '\n' | '"' | '0'..='9' | 'A'..='Z' | 'a'..='z' | '_' => true,
            _ if !c.is_ascii() => c.is_alphabetic(),
            _ => {
                let rest = self.src.get(at..).unwrap_or("");
                PUNCTUATION.iter().any(|(p, _)| rest.starts_with(p))
            }
        }
    }

    /// Skips a run of characters that cannot start any token and reports it once.
    fn unexpected_characters(&mut self) {
        let start = self.pos;
        let mut chars = Vec::new();
        while let Some(c) = self.char_at(self.pos) {
            if !chars.is_empty() && self.starts_something(self.pos, c) {
                break;
            }
            chars.push(c);
            self.pos += c.len_utf8();
        }
        let Some(&first) = chars.first() else { return };
        let message = if chars.len() == 1 {
            format!("unexpected character {}", show_char(first))
        } else {
            let mut shown: String = chars.iter().take(16).flat_map(|c| c.escape_debug()).collect();
            if chars.len() > 16 {
                shown.push_str("...");
            }
            format!("unexpected characters \"{shown}\" (starting with {})", show_char(first))
        };
        let hint = match first {
            '\'' => Some("strings are written between double quotes: \"text\""),
            '\u{201c}' | '\u{201d}' => Some("use the plain double quote `\"` for strings"),
            '#' => Some("comments start with `//` or are written between `/*` and `*/`"),
            c if c.is_whitespace() => Some("only spaces, tabs and line breaks may separate tokens"),
            _ => None,
        };
        self.junk.push(self.span(start, self.pos));
        let mut diagnostic = Diagnostic::at(codes::GGE1101, self.span(start, self.pos), message);
        if let Some(hint) = hint {
            diagnostic = diagnostic.with_hint(hint);
        }
        self.diagnostics.push(diagnostic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind as T;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let (tokens, diags) = lex(src);
        assert!(diags.is_empty(), "unexpected diagnostics for {src:?}: {diags:?}");
        tokens.into_iter().map(|t| t.kind).collect()
    }

    fn errors(src: &str) -> Vec<(geogen_diag::ErrorCode, Span, String)> {
        let (_, diags) = lex(src);
        diags.into_iter().map(|d| (d.code, d.span.unwrap_or_default(), d.message)).collect()
    }

    fn ident(s: &str) -> TokenKind {
        T::Ident(s.to_string())
    }

    #[test]
    fn every_keyword_lexes_to_its_token() {
        let all = [
            T::Metadata,
            T::Enum,
            T::Function,
            T::Var,
            T::Global,
            T::Return,
            T::Yield,
            T::As,
            T::Switch,
            T::Default,
            T::Case,
            T::If,
            T::Else,
            T::For,
            T::While,
            T::Break,
            T::Continue,
            T::True,
            T::False,
            T::Is,
        ];
        let src: Vec<&str> = TokenKind::keywords().collect();
        assert_eq!(src.len(), all.len());
        let mut expected = all.to_vec();
        expected.push(T::Eof);
        assert_eq!(kinds(&src.join(" ")), expected);
        for k in &all {
            assert!(k.is_keyword());
        }
    }

    #[test]
    fn null_and_near_keywords_are_identifiers() {
        assert_eq!(
            kinds("null Var iff _if if_ elif"),
            vec![ident("null"), ident("Var"), ident("iff"), ident("_if"), ident("if_"), ident("elif"), T::Eof]
        );
    }

    #[test]
    fn every_operator_lexes_to_its_token() {
        let src = "( ) [ ] { } , ; : . ++ -- ! * / % + - << >> < > <= >= == != & ^ | && || ? = += -= *= /= %= <<= >>= &= ^= |= @";
        let expected = vec![
            T::LParen,
            T::RParen,
            T::LBracket,
            T::RBracket,
            T::LBrace,
            T::RBrace,
            T::Comma,
            T::Semicolon,
            T::Colon,
            T::Dot,
            T::PlusPlus,
            T::MinusMinus,
            T::Bang,
            T::Star,
            T::Slash,
            T::Percent,
            T::Plus,
            T::Minus,
            T::Shl,
            T::Shr,
            T::Lt,
            T::Gt,
            T::Le,
            T::Ge,
            T::EqEq,
            T::NotEq,
            T::Amp,
            T::Caret,
            T::Pipe,
            T::AmpAmp,
            T::PipePipe,
            T::Question,
            T::Eq,
            T::PlusEq,
            T::MinusEq,
            T::StarEq,
            T::SlashEq,
            T::PercentEq,
            T::ShlEq,
            T::ShrEq,
            T::AmpEq,
            T::CaretEq,
            T::PipeEq,
            T::At,
            T::Eof,
        ];
        assert_eq!(kinds(src), expected);
        // Every listed spelling round-trips through `text()`.
        for p in TokenKind::punctuation() {
            let k = kinds(p);
            assert_eq!(k.len(), 2, "{p}");
            assert_eq!(k.first().and_then(TokenKind::text), Some(p));
        }
    }

    #[test]
    fn operators_take_the_longest_match() {
        assert_eq!(kinds("a<<=b"), vec![ident("a"), T::ShlEq, ident("b"), T::Eof]);
        assert_eq!(kinds("+++"), vec![T::PlusPlus, T::Plus, T::Eof]);
        assert_eq!(kinds("a===b"), vec![ident("a"), T::EqEq, T::Eq, ident("b"), T::Eof]);
        assert_eq!(kinds("x--y"), vec![ident("x"), T::MinusMinus, ident("y"), T::Eof]);
        assert_eq!(kinds(">>>"), vec![T::Shr, T::Gt, T::Eof]);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("0 42 3.25 007"),
            vec![T::Number(0.0), T::Number(42.0), T::Number(3.25), T::Number(7.0), T::Eof]
        );
        // No trailing dot, no leading dot, no sign, no exponent, no hex.
        assert_eq!(kinds("1."), vec![T::Number(1.0), T::Dot, T::Eof]);
        assert_eq!(kinds(".5"), vec![T::Dot, T::Number(5.0), T::Eof]);
        assert_eq!(kinds("-1"), vec![T::Minus, T::Number(1.0), T::Eof]);
        assert_eq!(kinds("1e5"), vec![T::Number(1.0), ident("e5"), T::Eof]);
        assert_eq!(kinds("0x1F"), vec![T::Number(0.0), ident("x1F"), T::Eof]);
        assert_eq!(kinds("1.5.2"), vec![T::Number(1.5), T::Dot, T::Number(2.0), T::Eof]);
        assert_eq!(kinds("2.Abs"), vec![T::Number(2.0), T::Dot, ident("Abs"), T::Eof]);
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(kinds(r#""""#), vec![T::String(String::new()), T::Eof]);
        assert_eq!(kinds(r#""a\\b\"c\nd\te""#), vec![T::String("a\\b\"c\nd\te".into()), T::Eof]);
        assert_eq!(kinds("\"two\nlines\""), vec![T::String("two\nlines".into()), T::Eof]);
        assert_eq!(kinds("\"žluť // not a comment\""), vec![T::String("žluť // not a comment".into()), T::Eof]);
    }

    #[test]
    fn comments_and_whitespace() {
        assert_eq!(kinds("a // comment\nb"), vec![ident("a"), ident("b"), T::Eof]);
        // The original rejects a line comment without a final newline; we accept it.
        assert_eq!(kinds("a // last line"), vec![ident("a"), T::Eof]);
        assert_eq!(kinds("a /* x \n y */ b"), vec![ident("a"), ident("b"), T::Eof]);
        // Block comments do not nest, and `//` inside one does not hide its end.
        assert_eq!(kinds("/* // */ a"), vec![ident("a"), T::Eof]);
        assert_eq!(kinds("/* /* */ a */"), vec![ident("a"), T::Star, T::Slash, T::Eof]);
        assert_eq!(kinds("/**/x"), vec![ident("x"), T::Eof]);
        assert_eq!(kinds(" \t\r\n"), vec![T::Eof]);
        assert_eq!(kinds("\u{feff}x"), vec![ident("x"), T::Eof]);
    }

    #[test]
    fn spans_are_byte_ranges() {
        let (tokens, _) = lex("var x = \"é\";");
        let spans: Vec<(u32, u32)> = tokens.iter().map(|t| (t.span.start, t.span.end)).collect();
        assert_eq!(spans, vec![(0, 3), (4, 5), (6, 7), (8, 12), (12, 13), (13, 13)]);
    }

    #[test]
    fn unexpected_characters_are_gge1101_and_skipped() {
        let (tokens, diags) = lex("a # b");
        assert_eq!(tokens.iter().map(|t| t.kind.clone()).collect::<Vec<_>>(), vec![ident("a"), ident("b"), T::Eof]);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, codes::GGE1101);
        assert_eq!(diags[0].span, Some(Span::new(2, 3)));
        assert!(diags[0].message.contains("'#'"), "{}", diags[0].message);

        // A run of junk is one error.
        let e = errors("x $~` y");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].1, Span::new(2, 5));

        // Single quotes get a hint.
        let (_, diags) = lex("'a'");
        assert!(diags.iter().all(|d| d.code == codes::GGE1101));
        assert!(diags[0].hint.as_deref().unwrap_or("").contains("double quotes"));

        // A non-breaking space names its code point.
        let e = errors("a\u{a0}b");
        assert_eq!(e.len(), 1);
        assert!(e[0].2.contains("U+00A0"), "{}", e[0].2);
    }

    /// Found by the hardening review: a backtick between backticks read "unexpected character ```".
    #[test]
    fn characters_are_quoted_readably() {
        assert_eq!(errors("`")[0].2, "unexpected character '`'");
        assert_eq!(errors("'")[0].2, "unexpected character '\\''");
        assert_eq!(errors("~~~")[0].2, "unexpected characters \"~~~\" (starting with '~')");
        assert_eq!(errors("\u{1b}")[0].2, "unexpected character '\\u{1b}' (U+001B)");
    }

    #[test]
    fn non_ascii_letters_stay_in_one_identifier() {
        let (tokens, diags) = lex("café = 1");
        assert_eq!(tokens.first().map(|t| t.kind.clone()), Some(ident("café")));
        assert_eq!(tokens.len(), 4);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, codes::GGE1101);
        assert_eq!(diags[0].span, Some(Span::new(3, 5)));
        assert!(diags[0].message.contains("'é' (U+00E9)"), "{}", diags[0].message);
        // Even at the start of a name.
        assert_eq!(errors("Ωmega").len(), 1);
    }

    #[test]
    fn invalid_escape_is_gge1102_on_the_escape() {
        let (tokens, diags) = lex(r#""a\qb""#);
        assert_eq!(tokens.first().map(|t| t.kind.clone()), Some(T::String("a\\qb".into())));
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, codes::GGE1102);
        assert_eq!(diags[0].span, Some(Span::new(2, 4)));
        assert!(diags[0].hint.as_deref().unwrap_or("").contains("\\n"));
        // Several bad escapes: all reported, the string still ends where it should.
        let e = errors(r#""\r\0" x"#);
        assert_eq!(e.iter().filter(|d| d.0 == codes::GGE1102).count(), 2);
        assert_eq!(e.len(), 2);
    }

    #[test]
    fn unterminated_string_is_gge1103() {
        let (tokens, diags) = lex("x = \"abc\n def");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, codes::GGE1103);
        assert_eq!(diags[0].span, Some(Span::new(4, 5)));
        assert_eq!(tokens.get(2).map(|t| t.kind.clone()), Some(T::String("abc\n def".into())));
        assert_eq!(tokens.last().map(|t| t.kind.clone()), Some(T::Eof));
        // A backslash right before the end.
        assert_eq!(errors("\"abc\\").first().map(|e| e.0), Some(codes::GGE1103));
        // An escaped quote does not close the string.
        assert_eq!(errors(r#""abc\""#).first().map(|e| e.0), Some(codes::GGE1103));
    }

    #[test]
    fn unterminated_block_comment_is_gge1104() {
        let e = errors("a /* never\n closed");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].0, codes::GGE1104);
        assert_eq!(e[0].1, Span::new(2, 4));
        assert_eq!(errors("/*/").first().map(|e| e.0), Some(codes::GGE1104));
    }

    #[test]
    fn huge_number_is_gge1105() {
        let big = "9".repeat(400);
        let (tokens, diags) = lex(&big);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, codes::GGE1105);
        assert_eq!(diags[0].span, Some(Span::new(0, 400)));
        assert!(matches!(tokens.first().map(|t| &t.kind), Some(T::Number(v)) if v.is_infinite()));
        // The largest finite double is fine; one digit more rounds to infinity.
        assert!(errors(&format!("17976931348623157{}", "0".repeat(292))).is_empty());
        assert_eq!(errors(&format!("1797693134862316{}", "0".repeat(293))).len(), 1);
    }

    #[test]
    fn lexing_continues_after_errors() {
        let e = errors("# \"\\q\" 99 $ /*");
        let found: Vec<_> = e.iter().map(|d| d.0).collect();
        assert_eq!(found, vec![codes::GGE1101, codes::GGE1102, codes::GGE1101, codes::GGE1104]);
    }
}
