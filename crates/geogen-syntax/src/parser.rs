//! The parser: tokens to the syntax tree (reference §1.2 to §1.5, metadata §2.1).
//!
//! Hand-written recursive descent for declarations and statements, precedence climbing for
//! expressions. It never gives up: every error is reported and the parser resynchronises, so one
//! run lists every syntax error of the file.
//!
//! Error handling rules, chosen so that one mistake gives one message:
//! * After an error the parser is *panicking*: further errors are suppressed until the next
//!   statement (or declaration) starts.
//! * A missing `;` followed by a line break is treated as if the `;` were there (no tokens are
//!   skipped); otherwise the rest of the statement is skipped up to `;`, `}` or a statement keyword.
//! * A missing `)` or `]` skips to the matching closer, stopping early at `;`, `{`, `}` and
//!   statement keywords.
//! * Errors at the end of the file are reported once.
//! * Nesting deeper than [`crate::MAX_NESTING`] reports one error and skips the nested part, so no
//!   input can overflow the stack, here or in later stages walking the tree.

use geogen_diag::{codes, Diagnostic, Diagnostics, Span};

use crate::ast::*;
use crate::lexer::{lex_for_parser, Token, TokenKind as T};
use crate::{Parsed, MAX_NESTING};

/// The levels every statement enters before its own nesting: the statement and its expression.
const STATEMENT_LEVELS: u32 = 2;

pub(crate) fn parse(source: &str) -> Parsed {
    let lexed = lex_for_parser(source);
    let mut parser = Parser::new(source, lexed.tokens);
    parser.junk = lexed.junk;
    // An unterminated string or comment swallows the rest of the file; whatever the parser would
    // say about the abrupt end is noise after that.
    parser.eof_reported = lexed.unterminated;
    let script = parser.script();
    // Stable: errors at one offset keep the lexer-then-parser order.
    let diagnostics = lexed.diagnostics.merge_sorted(parser.diagnostics);
    Parsed { script, diagnostics }
}

/// How binary-level operators combine, lowest precedence first (reference §1.5, with our fixes:
/// assignment and `is` are right-associative, `?:` is JavaScript-like).
#[derive(Copy, Clone)]
enum Infix {
    Assign(AssignOp),
    Binary(BinaryOp),
    Conditional,
}

/// Binding power of assignment and `is`, the lowest level.
const BP_ASSIGN: u8 = 1;
/// Binding power of `?:`.
const BP_CONDITIONAL: u8 = 2;

fn infix(kind: &T) -> Option<(Infix, u8)> {
    use BinaryOp as B;
    let compound = |op| Some((Infix::Assign(AssignOp::Compound(op)), BP_ASSIGN));
    let binary = |op, bp| Some((Infix::Binary(op), bp));
    match kind {
        T::Eq => Some((Infix::Assign(AssignOp::Assign), BP_ASSIGN)),
        T::PlusEq => compound(B::Add),
        T::MinusEq => compound(B::Sub),
        T::StarEq => compound(B::Mul),
        T::SlashEq => compound(B::Div),
        T::PercentEq => compound(B::Rem),
        T::ShlEq => compound(B::Shl),
        T::ShrEq => compound(B::Shr),
        T::AmpEq => compound(B::BitAnd),
        T::PipeEq => compound(B::BitOr),
        T::CaretEq => compound(B::BitXor),
        T::Is => binary(B::Is, BP_ASSIGN),
        T::Question => Some((Infix::Conditional, BP_CONDITIONAL)),
        T::PipePipe => binary(B::Or, 3),
        T::AmpAmp => binary(B::And, 4),
        T::Pipe => binary(B::BitOr, 5),
        T::Caret => binary(B::BitXor, 6),
        T::Amp => binary(B::BitAnd, 7),
        T::EqEq => binary(B::Eq, 8),
        T::NotEq => binary(B::Ne, 8),
        T::Lt => binary(B::Lt, 9),
        T::Le => binary(B::Le, 9),
        T::Gt => binary(B::Gt, 9),
        T::Ge => binary(B::Ge, 9),
        T::Shl => binary(B::Shl, 10),
        T::Shr => binary(B::Shr, 10),
        T::Plus => binary(B::Add, 11),
        T::Minus => binary(B::Sub, 11),
        T::Star => binary(B::Mul, 12),
        T::Slash => binary(B::Div, 12),
        T::Percent => binary(B::Rem, 12),
        _ => None,
    }
}

fn can_start_expr(kind: &T) -> bool {
    matches!(
        kind,
        T::Ident(_)
            | T::Number(_)
            | T::String(_)
            | T::True
            | T::False
            | T::LParen
            | T::LBracket
            | T::LBrace
            | T::PlusPlus
            | T::MinusMinus
            | T::Bang
            | T::Plus
            | T::Minus
            | T::At
    )
}

/// Keywords that begin a statement or declaration: safe places to resume after an error.
fn starts_statement(kind: &T) -> bool {
    matches!(
        kind,
        T::Var
            | T::Global
            | T::If
            | T::Else
            | T::For
            | T::While
            | T::Switch
            | T::Case
            | T::Default
            | T::Return
            | T::Break
            | T::Continue
            | T::Yield
            | T::Function
            | T::Enum
            | T::Metadata
    )
}

/// Words from other languages that people type instead of `var`.
const FOREIGN_DECLARATIONS: &[&str] = &["let", "const", "int", "float", "double", "number", "string", "bool", "auto"];

/// A comma-separated list between brackets: what its items are called in messages.
struct ListInfo {
    /// e.g. "arguments"
    items: &'static str,
    /// Can this token begin an item? Used to guess that a `,` is missing.
    item_start: fn(&T) -> bool,
}

impl ListInfo {
    fn of_expressions(items: &'static str) -> ListInfo {
        ListInfo { items, item_start: can_start_expr }
    }
}

fn can_start_meta_value(kind: &T) -> bool {
    matches!(kind, T::Ident(_) | T::Number(_) | T::String(_) | T::True | T::False | T::LBrace)
}

/// One entry of a metadata collection while parsing.
enum MetaEntry {
    Keyed(Ident, MetaValue),
    Plain(MetaValue),
    Skip,
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    /// Returned when looking past the end, so `tok()` never fails.
    eof: Token,
    pos: usize,
    /// End of the last consumed token: where "missing" errors point and where node spans end.
    prev_end: u32,
    diagnostics: Diagnostics,
    /// An error was reported in the current statement; suppress the follow-ups.
    panicking: bool,
    /// An error at the end of the file was reported; suppress the others.
    eof_reported: bool,
    /// Current nesting of statements, expressions and operator chains.
    depth: u32,
    too_deep_reported: bool,
    /// Inside an expression (as opposed to a statement or metadata): see `too_deep`.
    in_expression: bool,
    /// Parsing a declaration that is itself in the wrong place (already reported).
    in_misplaced_declaration: bool,
    /// Characters the lexer skipped (GGE1101), in source order.
    junk: Vec<Span>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, tokens: Vec<Token>) -> Parser<'a> {
        let end = u32::try_from(src.len()).unwrap_or(u32::MAX);
        let eof = Token { kind: T::Eof, span: Span::at(end) };
        Parser {
            src,
            tokens,
            eof,
            pos: 0,
            prev_end: 0,
            diagnostics: Diagnostics::new(),
            panicking: false,
            eof_reported: false,
            depth: 0,
            too_deep_reported: false,
            in_expression: false,
            in_misplaced_declaration: false,
            junk: Vec::new(),
        }
    }

    // ----- Token access -----

    fn tok(&self) -> &Token {
        self.tokens.get(self.pos).unwrap_or(&self.eof)
    }

    fn peek(&self) -> &T {
        &self.tok().kind
    }

    fn peek_nth(&self, n: usize) -> &T {
        self.tokens.get(self.pos + n).map_or(&self.eof.kind, |t| &t.kind)
    }

    fn at(&self, kind: &T) -> bool {
        self.peek() == kind
    }

    fn at_eof(&self) -> bool {
        matches!(self.peek(), T::Eof)
    }

    fn bump(&mut self) -> Token {
        let token = self.tok().clone();
        if token.kind != T::Eof {
            self.pos += 1;
            self.prev_end = token.span.end;
        }
        token
    }

    fn eat(&mut self, kind: &T) -> Option<Span> {
        if self.at(kind) {
            Some(self.bump().span)
        } else {
            None
        }
    }

    /// A span from `start` to the end of the last consumed token (empty if nothing was consumed).
    fn span_from(&self, start: u32) -> Span {
        Span::new(start, self.prev_end.max(start))
    }

    /// Is there a line break between the previous token and the current one?
    fn line_break_before_current(&self) -> bool {
        let from = self.prev_end as usize;
        let to = self.tok().span.start as usize;
        self.src.get(from..to).is_some_and(|gap| gap.contains('\n'))
    }

    /// Did the lexer skip a bad character between the previous token and the current one?
    fn junk_before_current(&self) -> bool {
        let (from, to) = (self.prev_end, self.tok().span.start);
        let first = self.junk.partition_point(|s| s.start < from);
        self.junk.get(first).is_some_and(|s| s.end <= to)
    }

    /// Does the current token start right where the previous one ended?
    fn current_is_adjacent(&self) -> bool {
        self.pos > 0 && self.tok().span.start == self.prev_end
    }

    fn describe(&self, token: &Token) -> String {
        match &token.kind {
            T::Ident(name) => format!("`{name}`"),
            T::Number(_) => {
                let text = self.src.get(token.span.range()).unwrap_or("");
                format!("the number `{text}`")
            }
            T::String(_) => "a string".to_string(),
            T::Eof => "the end of the file".to_string(),
            other => format!("`{}`", other.text().unwrap_or("?")),
        }
    }

    fn describe_current(&self) -> String {
        self.describe(self.tok())
    }

    // ----- Reporting -----

    /// Reports a syntax error unless it follows another one in the same statement.
    fn report(&mut self, diagnostic: Diagnostic) {
        let at_eof = self.at_eof();
        if self.panicking || (at_eof && self.eof_reported) {
            return;
        }
        if self.junk_before_current() {
            // `x = 1 # 2;`: the lexer already reported the `#`, which is the real problem.
            self.panicking = true;
            return;
        }
        if at_eof {
            self.eof_reported = true;
        }
        self.panicking = true;
        self.diagnostics.push(diagnostic);
    }

    /// Reports an error the parser fully recovered from (the tree is still what the user meant), so
    /// later errors of the same statement are still worth reporting.
    fn report_recovered(&mut self, diagnostic: Diagnostic) {
        if !self.panicking {
            self.diagnostics.push(diagnostic);
        }
    }

    /// "expected X CONTEXT, found Y", pointing just after the previous token.
    fn expected(&self, what: &str, context: &str) -> Diagnostic {
        let context = if context.is_empty() { String::new() } else { format!(" {context}") };
        Diagnostic::at(
            codes::GGE1201,
            Span::at(self.prev_end),
            format!("expected {what}{context}, found {}", self.describe_current()),
        )
    }

    fn keyword_hint(&self) -> Option<String> {
        match self.peek() {
            kind if kind.is_keyword() => {
                Some(format!("`{}` is a keyword and cannot be used as a name", kind.text().unwrap_or("?")))
            }
            _ => None,
        }
    }

    // ----- Recovery -----

    /// Skips the rest of a broken statement: up to and including `;`, up to (not including) a `}`
    /// or a statement keyword, or past one balanced `{ ... }`.
    fn synchronize(&mut self) {
        let mut braces = 0usize;
        loop {
            match self.peek() {
                T::Eof => return,
                T::Semicolon if braces == 0 => {
                    self.bump();
                    return;
                }
                T::LBrace => braces += 1,
                T::RBrace => {
                    if braces == 0 {
                        return;
                    }
                    braces -= 1;
                    if braces == 0 {
                        self.bump();
                        return;
                    }
                }
                kind if braces == 0 && starts_statement(kind) => return,
                _ => {}
            }
            self.bump();
        }
    }

    /// After a missing closer: skips to the matching `close` and consumes it, or stops before
    /// anything that clearly belongs to what follows (`;` unless `through_semicolons`, braces,
    /// statement keywords, an unmatched other closer).
    fn recover_to(&mut self, close: &T, through_semicolons: bool) {
        let mut nest = 0usize;
        loop {
            let kind = self.peek();
            if nest == 0 && kind == close {
                self.bump();
                return;
            }
            match kind {
                T::Eof | T::LBrace | T::RBrace => return,
                T::Semicolon if !through_semicolons => return,
                T::LParen | T::LBracket => nest += 1,
                T::RParen | T::RBracket => {
                    if nest == 0 {
                        return;
                    }
                    nest -= 1;
                }
                kind if starts_statement(kind) => return,
                _ => {}
            }
            self.bump();
        }
    }

    /// Expects the closer of a bracketed construct; on failure reports it with a label on the
    /// opener and skips to the closer.
    fn close(&mut self, close: &T, open: Span, what: &str) {
        if self.eat(close).is_some() {
            return;
        }
        let text = close.text().unwrap_or("?");
        let found_string = matches!(self.peek(), T::String(_));
        let mut diagnostic = self
            .expected(&format!("`{text}`"), &format!("to close {what}"))
            .with_label(open, format!("this `{}` is not closed", self.src.get(open.range()).unwrap_or("(")))
            .with_hint(if found_string {
                "to join values into a string, use `+`".to_string()
            } else {
                format!("add the missing `{text}`")
            });
        if matches!(self.peek(), T::Eof) {
            diagnostic.labels.truncate(1);
        }
        self.report(diagnostic);
        self.recover_to(close, false);
    }

    // ----- Nesting guard -----

    /// Enters one level of nesting; false (after reporting) if that is too deep.
    fn enter(&mut self) -> bool {
        // The statement and its expression are levels of the parser but not nesting the user
        // wrote: `var x = (((1)));` has three levels.
        if self.depth >= MAX_NESTING + STATEMENT_LEVELS {
            self.too_deep();
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Reports excessive nesting (once per file) and skips the nested part.
    fn too_deep(&mut self) {
        // Expressions cannot contain `;`, so inside one a `;` ends the skipping whatever the
        // bracket nesting (`a = ((((;` must not swallow the next statement). Deep statements
        // (blocks, `else if` chains) are skipped to the end of the enclosing block: stopping at a
        // `;` would resume in the middle of the deep part and cascade.
        let in_expression = self.in_expression;
        if !self.too_deep_reported {
            self.too_deep_reported = true;
            let span = self.tok().span;
            self.diagnostics.push(
                Diagnostic::at(
                    codes::GGE1201,
                    span,
                    format!("the script is nested too deeply here (more than {MAX_NESTING} levels of blocks, brackets or operators)"),
                )
                .with_hint("split the code into smaller parts with variables or functions"),
            );
        }
        self.panicking = true;
        // Skip to the end of the enclosing construct, keeping brackets balanced, so the levels
        // above find their closers.
        let mut nest = 0usize;
        loop {
            match self.peek() {
                T::Eof => return,
                T::LParen | T::LBracket | T::LBrace => nest += 1,
                T::RParen | T::RBracket | T::RBrace => {
                    if nest == 0 {
                        return;
                    }
                    nest -= 1;
                }
                T::Semicolon | T::Comma if in_expression && nest == 0 => return,
                T::Semicolon if in_expression => return,
                _ => {}
            }
            self.bump();
        }
    }

    fn error_expr(&self) -> Expr {
        Expr { kind: ExprKind::Error, span: Span::at(self.prev_end) }
    }

    // ----- Script and declarations -----

    fn script(&mut self) -> Script {
        let mut items = Vec::new();
        let mut metadata_keyword: Option<Span> = None;
        let mut first_statement: Option<Span> = None;
        while !self.at_eof() {
            let before = self.pos;
            self.panicking = false;
            match self.peek() {
                T::Enum => items.push(Item::Enum(self.enum_decl())),
                T::Function => items.push(Item::Function(self.function_decl())),
                T::Metadata => {
                    let keyword = self.tok().span;
                    if let Some(first) = metadata_keyword {
                        self.diagnostics.push(
                            Diagnostic::at(codes::GGE1314, keyword, "a script can have only one `metadata` block")
                                .with_label(first, "the first `metadata` block")
                                .with_hint("merge the two blocks into one"),
                        );
                    } else if let Some(statement) = first_statement {
                        self.diagnostics.push(
                            Diagnostic::at(
                                codes::GGE1314,
                                keyword,
                                "the `metadata` block must come before every statement",
                            )
                            .with_label(statement, "this statement comes first")
                            .with_hint(
                                "move the `metadata` block up: only `enum` and `function` declarations may precede it",
                            ),
                        );
                    }
                    metadata_keyword.get_or_insert(keyword);
                    items.push(Item::Metadata(self.metadata()));
                }
                T::RBrace => {
                    let span = self.tok().span;
                    self.report(
                        Diagnostic::at(codes::GGE1201, span, "unexpected `}`: there is no block to close")
                            .with_hint("remove it, or look for a missing `{` above"),
                    );
                    self.bump();
                }
                _ => {
                    let statement = self.statement();
                    first_statement.get_or_insert(statement.span);
                    items.push(Item::Stmt(statement));
                }
            }
            if self.pos == before {
                self.bump();
            }
        }
        Script { items }
    }

    /// A name after a keyword (`enum`, `function`, `var`...). Reports and returns `None` if absent.
    fn expect_name(&mut self, what: &str, context: &str) -> Option<Ident> {
        if let T::Ident(name) = self.peek() {
            let name = name.clone();
            let span = self.bump().span;
            return Some(Ident { name, span });
        }
        let mut diagnostic = self.expected(what, context);
        let keyword = self.peek().text().filter(|_| self.peek().is_keyword());
        if let Some(hint) = self.keyword_hint() {
            diagnostic = diagnostic.with_hint(hint);
        }
        self.report(diagnostic);
        // `var for = 1;`: take the keyword as the name, so the rest of the line is not read as
        // a `for` statement. (Not across a line break: there the name is more likely missing.)
        match keyword {
            Some(text) if !self.line_break_before_current() => {
                let span = self.bump().span;
                Some(Ident { name: text.to_string(), span })
            }
            _ => None,
        }
    }

    fn missing_name(&self) -> Ident {
        Ident { name: String::new(), span: Span::at(self.prev_end) }
    }

    /// `enum Name { A, B = 5, C }`
    fn enum_decl(&mut self) -> EnumDecl {
        let start = self.bump().span.start;
        let name = self.expect_name("a name for the enum", "after `enum`").unwrap_or_else(|| self.missing_name());
        let Some(open) = self.eat(&T::LBrace) else {
            let diagnostic =
                self.expected("`{`", "to start the items of the enum").with_hint("write `enum Name { A, B, C }`");
            self.report(diagnostic);
            self.synchronize();
            return EnumDecl { name, items: Vec::new(), span: self.span_from(start) };
        };
        let items = self.list(open, &T::RBrace, ListInfo::of_expressions("enum items"), Parser::enum_item);
        let items: Vec<EnumItem> = items.into_iter().flatten().collect();
        if items.is_empty() {
            let span = self.span_from(open.start);
            self.report_recovered(
                Diagnostic::at(codes::GGE1201, span, format!("the enum `{}` has no items", name.name))
                    .with_hint("an enum needs at least one item: `enum Name { A, B, C }`"),
            );
        }
        EnumDecl { name, items, span: self.span_from(start) }
    }

    fn enum_item(&mut self) -> Option<EnumItem> {
        let name = self.expect_name("an item name", "in the enum")?;
        if self.eat(&T::Eq).is_none() {
            return Some(EnumItem { name, value: None });
        }
        match self.peek().clone() {
            T::Number(value) => {
                let span = self.bump().span;
                Some(EnumItem { name, value: Some((value, span)) })
            }
            T::Minus if matches!(self.peek_nth(1), T::Number(_)) => {
                let minus = self.bump().span;
                let number = self.bump().span;
                self.report_recovered(
                    Diagnostic::at(codes::GGE1201, minus.to(number), "enum values cannot be negative")
                        .with_hint("an enum value is a number literal without a sign"),
                );
                Some(EnumItem { name, value: None })
            }
            _ => {
                let diagnostic = self
                    .expected("a number", &format!("after `{} =`", name.name))
                    .with_hint("enum values are number literals");
                self.report(diagnostic);
                if matches!(self.peek(), T::Ident(_) | T::String(_) | T::True | T::False) {
                    self.bump();
                }
                Some(EnumItem { name, value: None })
            }
        }
    }

    /// `function name(a, b) { ... }`
    fn function_decl(&mut self) -> FunctionDecl {
        let start = self.bump().span.start;
        let name =
            self.expect_name("a name for the function", "after `function`").unwrap_or_else(|| self.missing_name());
        let mut params = Vec::new();
        if let Some(open) = self.eat(&T::LParen) {
            params = self.list(open, &T::RParen, ListInfo::of_expressions("parameters"), Parser::parameter);
        } else {
            let diagnostic =
                self.expected("`(`", "after the function name").with_hint("write `function name(parameters) { ... }`");
            self.report(diagnostic);
            // `function f { ... }`: carry on with the body.
            if !self.at(&T::LBrace) {
                self.recover_to(&T::RParen, false);
            }
        }
        let params = params.into_iter().flatten().collect();
        let body = if self.at(&T::LBrace) {
            self.block()
        } else {
            let diagnostic = self.expected("`{`", "to start the body of the function");
            self.report(diagnostic);
            self.synchronize();
            Block { stmts: Vec::new(), span: Span::at(self.prev_end) }
        };
        FunctionDecl { name, params, body, span: self.span_from(start) }
    }

    fn parameter(&mut self) -> Option<Ident> {
        if let Some(var) = self.eat(&T::Var) {
            self.report_recovered(
                Diagnostic::at(codes::GGE1201, var, "parameters are declared without `var`")
                    .with_hint("write `function name(a, b)`"),
            );
        }
        self.expect_name("a parameter name", "")
    }

    /// `metadata { Key: value, ... }`
    fn metadata(&mut self) -> Metadata {
        let start = self.bump().span.start;
        let root = if self.at(&T::LBrace) {
            self.meta_value()
        } else {
            let diagnostic =
                self.expected("`{`", "after `metadata`").with_hint("write `metadata { Name: \"...\", Width: Finite }`");
            self.report(diagnostic);
            self.synchronize();
            MetaValue { kind: MetaValueKind::Error, span: Span::at(self.prev_end) }
        };
        if matches!(root.kind, MetaValueKind::List(_)) {
            self.report_recovered(
                Diagnostic::at(codes::GGE1201, root.span, "the `metadata` block must contain `Key: value` pairs")
                    .with_hint("write `metadata { Name: \"My map\", Width: Finite }`"),
            );
        }
        Metadata { root, span: self.span_from(start) }
    }

    fn meta_value(&mut self) -> MetaValue {
        if !self.enter() {
            return MetaValue { kind: MetaValueKind::Error, span: Span::at(self.prev_end) };
        }
        let token = self.tok().clone();
        let kind = match &token.kind {
            T::Number(v) => Some(MetaValueKind::Number(*v)),
            T::String(s) => Some(MetaValueKind::String(s.clone())),
            T::True => Some(MetaValueKind::Bool(true)),
            T::False => Some(MetaValueKind::Bool(false)),
            T::Ident(name) => Some(MetaValueKind::Ident(name.clone())),
            _ => None,
        };
        let value = if let Some(kind) = kind {
            self.bump();
            MetaValue { kind, span: token.span }
        } else if token.kind == T::LBrace {
            self.meta_collection()
        } else if token.kind == T::Minus && matches!(self.peek_nth(1), T::Number(_)) {
            self.bump();
            self.bump();
            let span = self.span_from(token.span.start);
            self.report_recovered(
                Diagnostic::at(codes::GGE1201, span, "numbers in metadata cannot be negative")
                    .with_hint("metadata values are literals: a number without a sign, a string, `true`/`false`, a name or `{ ... }`"),
            );
            MetaValue { kind: MetaValueKind::Error, span }
        } else {
            let diagnostic = self
                .expected("a metadata value", "")
                .with_hint("a value is a number, a string, `true`/`false`, a name or a `{ ... }` collection");
            self.report(diagnostic);
            MetaValue { kind: MetaValueKind::Error, span: Span::at(self.prev_end) }
        };
        self.leave();
        value
    }

    /// `{}` (empty key-value), `{Key: v, ...}` or `{v, ...}`: the first entry decides which.
    fn meta_collection(&mut self) -> MetaValue {
        let open = self.bump().span;
        let keyed = matches!(self.peek(), T::Ident(_)) && self.peek_nth(1) == &T::Colon
            || matches!(self.peek(), T::Ident(_)) && self.peek_nth(1) == &T::Eq
            || self.at(&T::RBrace);
        let info =
            ListInfo { items: if keyed { "metadata entries" } else { "list items" }, item_start: can_start_meta_value };
        let entries = self.list(open, &T::RBrace, info, |p| p.meta_entry(keyed));
        let span = self.span_from(open.start);
        let kind = if keyed {
            MetaValueKind::KeyValue(
                entries
                    .into_iter()
                    .filter_map(|e| match e {
                        MetaEntry::Keyed(k, v) => Some((k, v)),
                        _ => None,
                    })
                    .collect(),
            )
        } else {
            MetaValueKind::List(
                entries
                    .into_iter()
                    .filter_map(|e| match e {
                        MetaEntry::Plain(v) | MetaEntry::Keyed(_, v) => Some(v),
                        MetaEntry::Skip => None,
                    })
                    .collect(),
            )
        };
        MetaValue { kind, span }
    }

    fn meta_entry(&mut self, keyed: bool) -> MetaEntry {
        // Entries are independent, like statements: each one after a `,` reports its own error.
        let previous = self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)).map(|t| &t.kind);
        if matches!(previous, Some(T::Comma | T::LBrace)) {
            self.panicking = false;
        }
        let key = match (self.peek().clone(), self.peek_nth(1)) {
            (T::Ident(name), T::Colon) => {
                let span = self.bump().span;
                self.bump();
                Some(Ident { name, span })
            }
            (T::Ident(name), T::Eq) if keyed => {
                let span = self.bump().span;
                let eq = self.bump().span;
                self.report_recovered(
                    Diagnostic::at(codes::GGE1201, eq, format!("expected `:` after the key `{name}`, found `=`"))
                        .with_hint("metadata entries are written `Key: value`"),
                );
                Some(Ident { name, span })
            }
            _ => None,
        };
        match (keyed, key) {
            (true, Some(key)) => MetaEntry::Keyed(key, self.meta_value()),
            (false, None) => MetaEntry::Plain(self.meta_value()),
            (true, None) => {
                let diagnostic = self
                    .expected("`Key: value`", "in this collection")
                    .with_hint("a collection that starts with `Key: value` entries must have keys everywhere");
                self.report(diagnostic);
                if can_start_expr(self.peek()) {
                    self.meta_value();
                }
                MetaEntry::Skip
            }
            (false, Some(key)) => {
                self.report_recovered(
                    Diagnostic::at(codes::GGE1201, key.span, format!("unexpected key `{}` in a list", key.name))
                        .with_hint(
                            "this collection started as a list of values without keys; give every entry a key or none",
                        ),
                );
                MetaEntry::Plain(self.meta_value())
            }
        }
    }

    /// Parses `item, item, ...` after an already consumed opener, through the closer. Reports
    /// trailing commas, missing commas (then carries on), and a missing closer.
    fn list<X>(&mut self, open: Span, close: &T, info: ListInfo, mut item: impl FnMut(&mut Self) -> X) -> Vec<X> {
        let close_text = close.text().unwrap_or("?");
        let mut items = Vec::new();
        loop {
            if self.eat(close).is_some() {
                break;
            }
            if self.at_eof() {
                let diagnostic = self.expected(&format!("`{close_text}`"), &format!("to close the {}", info.items));
                let diagnostic = diagnostic.with_label(open, "opened here");
                self.report(diagnostic);
                break;
            }
            let before = self.pos;
            items.push(item(self));
            if let Some(comma) = self.eat(&T::Comma) {
                if self.at(close) {
                    self.report_recovered(
                        Diagnostic::at(codes::GGE1201, comma, format!("unexpected `,` before `{close_text}`"))
                            .with_hint("remove the trailing comma"),
                    );
                }
                continue;
            }
            if self.eat(close).is_some() {
                break;
            }
            let previous_was_string = self.pos > 0
                && matches!(self.tokens.get(self.pos - 1).map(|t| &t.kind), Some(T::String(_)))
                || matches!(self.peek(), T::String(_));
            let hint = if previous_was_string && (info.item_start)(self.peek()) {
                "to join values into a string, use `+`".to_string()
            } else {
                format!("separate the {} with `,` and end them with `{close_text}`", info.items)
            };
            let diagnostic = self
                .expected(&format!("`,` or `{close_text}`"), &format!("between the {}", info.items))
                .with_hint(hint);
            self.report(diagnostic);
            // `f(a b)`: most likely a missing comma, so read on.
            if self.pos != before && (info.item_start)(self.peek()) && !self.line_break_before_current() {
                continue;
            }
            // Otherwise skip this item's rest and go on with the next one, if any.
            if !self.skip_to_next_item(close) {
                break;
            }
        }
        items
    }

    /// Skips a broken list item. Returns true after consuming the `,` that starts the next item;
    /// false when the list is over (its closer consumed, or something that cannot belong to it
    /// reached: `;`, a statement keyword, an unmatched closer, or a `{` outside a brace list).
    fn skip_to_next_item(&mut self, close: &T) -> bool {
        let mut nest = 0usize;
        loop {
            let kind = self.peek();
            if nest == 0 {
                if kind == close {
                    self.bump();
                    return false;
                }
                match kind {
                    T::Comma => {
                        self.bump();
                        return true;
                    }
                    T::LBrace if close != &T::RBrace => return false,
                    T::RParen | T::RBracket | T::RBrace => return false,
                    _ => {}
                }
            }
            match kind {
                T::Eof | T::Semicolon => return false,
                kind if starts_statement(kind) => return false,
                T::LParen | T::LBracket | T::LBrace => nest += 1,
                T::RParen | T::RBracket | T::RBrace => nest = nest.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    // ----- Statements -----

    fn statement(&mut self) -> Stmt {
        self.panicking = false;
        self.in_expression = false;
        if !self.enter() {
            return Stmt { kind: StmtKind::Error, span: Span::at(self.prev_end) };
        }
        let statement = self.statement_inner();
        self.leave();
        statement
    }

    fn statement_inner(&mut self) -> Stmt {
        let start = self.tok().span.start;
        let kind = match self.peek().clone() {
            T::Var => return self.var_statement(false),
            T::Global => return self.var_statement(true),
            T::Yield => self.yield_statement(),
            T::Return => {
                self.bump();
                let value = if can_start_expr(self.peek()) { Some(self.expr()) } else { None };
                self.expect_semicolon("the `return` statement", value.as_ref());
                StmtKind::Return(value)
            }
            T::Break => {
                self.bump();
                self.expect_semicolon("`break`", None);
                StmtKind::Break
            }
            T::Continue => {
                self.bump();
                self.expect_semicolon("`continue`", None);
                StmtKind::Continue
            }
            T::While => {
                self.bump();
                let cond = self.paren_condition("while");
                let body = Box::new(self.statement());
                StmtKind::While { cond, body }
            }
            T::If => {
                self.bump();
                self.if_rest()
            }
            T::For => self.for_statement(),
            T::Switch => self.switch_statement(),
            T::LBrace => StmtKind::Block(self.block()),
            T::Semicolon => {
                self.bump();
                StmtKind::Empty
            }
            T::Enum | T::Function | T::Metadata => return self.misplaced_declaration(),
            T::Else => {
                let span = self.bump().span;
                self.report(Diagnostic::at(codes::GGE1201, span, "`else` without an `if`").with_hint(
                    "`else` must directly follow the statement of an `if`; look for a stray `;` or `}` before it",
                ));
                StmtKind::Error
            }
            T::Case | T::Default => {
                let keyword = self.bump();
                self.report(
                    Diagnostic::at(
                        codes::GGE1201,
                        keyword.span,
                        format!("{} outside a `switch`", self.describe(&keyword)),
                    )
                    .with_hint("case labels can only appear inside `switch (value) { ... }`"),
                );
                if keyword.kind == T::Case && can_start_expr(self.peek()) {
                    self.expr();
                }
                self.eat(&T::Colon);
                StmtKind::Error
            }
            T::RBrace | T::Eof => {
                let diagnostic = self.expected("a statement", "");
                self.report(diagnostic);
                return Stmt { kind: StmtKind::Error, span: Span::at(self.prev_end) };
            }
            T::Ident(name)
                if matches!(name.as_str(), "elif" | "elseif" | "elsif") && self.peek_nth(1) == &T::LParen =>
            {
                let span = self.bump().span;
                self.report(
                    Diagnostic::at(codes::GGE1201, span, format!("`{name}` is not a keyword of GeoGen Script"))
                        .with_hint("write `else if (condition)`"),
                );
                self.if_rest()
            }
            _ => {
                let expr = self.expr();
                self.expect_semicolon("the expression statement", Some(&expr));
                StmtKind::Expr(expr)
            }
        };
        Stmt { kind, span: self.span_from(start) }
    }

    /// Ends a simple statement. A missing `;` before a line break, `}` or the end of the file
    /// skips nothing (the next line is most likely a fine statement); elsewhere the rest of the
    /// statement is skipped.
    fn expect_semicolon(&mut self, after: &str, expr: Option<&Expr>) {
        if self.eat(&T::Semicolon).is_some() {
            return;
        }
        let mut diagnostic = self.expected("`;`", &format!("after {after}"));
        let previous = self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)).map(|t| &t.kind);
        let hint = match (self.peek(), expr.map(|e| &e.kind)) {
            (T::String(_), _) => Some("to join values into a string, use `+`".to_string()),
            (T::Ident(_), Some(ExprKind::Ident(word))) if FOREIGN_DECLARATIONS.contains(&word.as_str()) => {
                Some("declare variables with `var`: `var name = value;`".to_string())
            }
            (T::Ident(word), _)
                if matches!(previous, Some(T::Number(_)))
                    && self.current_is_adjacent()
                    && word.starts_with(['e', 'E']) =>
            {
                Some("numbers have no exponent notation: write the digits out, e.g. `100000`".to_string())
            }
            (T::Comma, _) => Some("there is no comma operator: write one statement or declaration per `;`".to_string()),
            (T::LBrace, Some(ExprKind::Call { .. })) => {
                Some("to declare a function, write `function name(parameters) { ... }`".to_string())
            }
            _ => None,
        };
        if let Some(hint) = hint {
            diagnostic = diagnostic.with_hint(hint);
        }
        self.report(diagnostic);
        if !(self.line_break_before_current() || self.at(&T::RBrace) || self.at_eof()) {
            self.synchronize();
        }
    }

    /// `var x;`, `var x = e;`, and the same with `global`.
    fn var_statement(&mut self, global: bool) -> Stmt {
        let start = self.bump().span.start;
        let keyword = if global { "global" } else { "var" };
        let Some(name) = self.expect_name("a variable name", &format!("after `{keyword}`")) else {
            self.synchronize();
            return Stmt { kind: StmtKind::Error, span: self.span_from(start) };
        };
        let init = self.var_initializer(&name);
        let what = if global { "the global variable declaration" } else { "the variable declaration" };
        self.expect_semicolon(what, None);
        let kind = if global { StmtKind::Global { name, init } } else { StmtKind::Var { name, init } };
        Stmt { kind, span: self.span_from(start) }
    }

    /// The optional `= value` after a declared name; `==` is taken for `=` after an error.
    fn var_initializer(&mut self, name: &Ident) -> Option<Expr> {
        if self.eat(&T::Eq).is_some() {
            return Some(self.expr());
        }
        if self.at(&T::EqEq) {
            let span = self.bump().span;
            self.report_recovered(
                Diagnostic::at(codes::GGE1201, span, format!("expected `=` or `;` after `{}`, found `==`", name.name))
                    .with_hint("use `=` to give the variable its first value (`==` compares two values)"),
            );
            return Some(self.expr());
        }
        None
    }

    /// `yield e;` / `yield e as "name";`
    fn yield_statement(&mut self) -> StmtKind {
        self.bump();
        let value = self.expr();
        let mut name = None;
        if self.eat(&T::As).is_some() {
            match self.peek().clone() {
                T::String(text) => {
                    let span = self.bump().span;
                    name = Some((text, span));
                }
                T::Ident(word) => {
                    let span = self.bump().span;
                    self.report_recovered(
                        Diagnostic::at(codes::GGE1201, span, "the map name after `as` must be a string")
                            .with_hint(format!("write the name in quotes: `as \"{word}\"`")),
                    );
                    name = Some((word, span));
                }
                _ => {
                    let diagnostic = self
                        .expected("the map name (a string)", "after `as`")
                        .with_hint("write `yield map as \"name\";`");
                    self.report(diagnostic);
                }
            }
        }
        self.expect_semicolon("the `yield` statement", None);
        StmtKind::Yield { value, name }
    }

    /// `( condition )` after `if`, `while` or `switch`. A missing `(` is reported and the
    /// condition read anyway, so `if x > 0 { ... }` gives one error.
    fn paren_condition(&mut self, keyword: &str) -> Expr {
        let Some(open) = self.eat(&T::LParen) else {
            let diagnostic = self
                .expected("`(`", &format!("after `{keyword}`"))
                .with_hint(format!("the condition goes between parentheses: `{keyword} (condition)`"));
            self.report(diagnostic);
            return if can_start_expr(self.peek()) && !self.at(&T::LBrace) { self.expr() } else { self.error_expr() };
        };
        let cond = self.expr();
        self.close(&T::RParen, open, &format!("the condition of `{keyword}`"));
        cond
    }

    /// The part of an `if` after the keyword.
    fn if_rest(&mut self) -> StmtKind {
        let cond = self.paren_condition("if");
        let then_branch = Box::new(self.statement());
        // The nearest `if` takes the `else` (the dangling-else rule).
        let else_branch = if self.eat(&T::Else).is_some() { Some(Box::new(self.statement())) } else { None };
        StmtKind::If { cond, then_branch, else_branch }
    }

    /// `for (init?; cond?; step?) body`
    fn for_statement(&mut self) -> StmtKind {
        self.bump();
        let open = self.eat(&T::LParen);
        if open.is_none() {
            let diagnostic =
                self.expected("`(`", "after `for`").with_hint("write `for (var i = 0; i < 10; i++) { ... }`");
            self.report(diagnostic);
        }
        let mut broken = false;
        let init = if self.at(&T::Semicolon) {
            None
        } else if self.at(&T::Var) || self.at(&T::Global) {
            let keyword = self.bump();
            if keyword.kind == T::Global {
                self.report_recovered(
                    Diagnostic::at(codes::GGE1201, keyword.span, "a `for` loop cannot declare a `global` variable")
                        .with_hint("use `var`, or declare the global before the loop"),
                );
            }
            match self.expect_name("a variable name", &format!("after {}", self.describe(&keyword))) {
                Some(name) => {
                    let init = self.var_initializer(&name);
                    Some(ForInit::Var { name, init })
                }
                None => {
                    broken = true;
                    None
                }
            }
        } else {
            Some(ForInit::Expr(self.expr()))
        };
        let mut cond = None;
        let mut step = None;
        if !broken {
            broken = !self.for_separator("the loop's initialisation");
        }
        if !broken {
            if !self.at(&T::Semicolon) {
                cond = Some(self.expr());
            }
            broken = !self.for_separator("the loop condition");
        }
        if !broken {
            if !self.at(&T::RParen) {
                step = Some(self.expr());
            }
            if let Some(open) = open {
                self.close(&T::RParen, open, "the `for` header");
            }
        } else {
            self.recover_to(&T::RParen, true);
        }
        let body = Box::new(self.statement());
        StmtKind::For { init, cond, step, body }
    }

    fn for_separator(&mut self, after: &str) -> bool {
        if self.eat(&T::Semicolon).is_some() {
            return true;
        }
        let mut diagnostic = self.expected("`;`", &format!("after {after}"));
        diagnostic = diagnostic.with_hint(if self.at(&T::Comma) {
            "there is no comma operator: a `for` header has exactly three parts, `for (init; condition; step)`"
        } else {
            "a `for` header has three parts separated by `;`: `for (init; condition; step)`"
        });
        self.report(diagnostic);
        false
    }

    /// `switch (e) { case label: ... default: ... }`
    fn switch_statement(&mut self) -> StmtKind {
        self.bump();
        let scrutinee = self.paren_condition("switch");
        let Some(open) = self.eat(&T::LBrace) else {
            let diagnostic = self.expected("`{`", "to start the body of the `switch`");
            self.report(diagnostic);
            self.synchronize();
            return StmtKind::Switch { scrutinee, cases: Vec::new() };
        };
        let mut cases: Vec<SwitchCase> = Vec::new();
        let mut reported_stray = false;
        loop {
            self.panicking = false;
            let before = self.pos;
            match self.peek() {
                T::RBrace => {
                    self.bump();
                    break;
                }
                T::Eof => {
                    let diagnostic =
                        self.expected("`}`", "to close the `switch`").with_label(open, "this `{` is not closed");
                    self.report(diagnostic);
                    break;
                }
                T::Case | T::Default => {
                    let head = self.bump();
                    let label = if head.kind == T::Case { Some(self.expr()) } else { None };
                    if self.eat(&T::Colon).is_none() {
                        let what = if label.is_some() { "the `case` label" } else { "`default`" };
                        let diagnostic = self
                            .expected("`:`", &format!("after {what}"))
                            .with_hint("write `case value:` or `default:`");
                        self.report(diagnostic);
                        self.eat(&T::Semicolon);
                    }
                    cases.push(SwitchCase { label, body: Vec::new(), span: self.span_from(head.span.start) });
                }
                _ => {
                    let stray = cases.is_empty();
                    if stray && !reported_stray {
                        reported_stray = true;
                        let span = self.tok().span;
                        self.diagnostics.push(
                            Diagnostic::at(
                                codes::GGE1201,
                                span,
                                format!("expected `case` or `default`, found {}", self.describe_current()),
                            )
                            .with_hint("statements in a `switch` must follow a `case value:` or `default:` label"),
                        );
                    }
                    let statement = self.statement();
                    if let Some(case) = cases.last_mut() {
                        case.body.push(statement);
                    }
                }
            }
            if self.pos == before {
                self.bump();
            }
        }
        StmtKind::Switch { scrutinee, cases }
    }

    /// `{ statements }`, at the current `{`.
    fn block(&mut self) -> Block {
        let open = self.bump().span;
        let mut stmts = Vec::new();
        loop {
            match self.peek() {
                T::RBrace => {
                    self.bump();
                    break;
                }
                T::Eof => {
                    let diagnostic = self
                        .expected("`}`", "to close the block")
                        .with_label(open, "this `{` is not closed")
                        .with_hint("add the missing `}`");
                    self.report(diagnostic);
                    break;
                }
                _ => {
                    let before = self.pos;
                    stmts.push(self.statement());
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        Block { stmts, span: self.span_from(open.start) }
    }

    /// `enum`, `function` or `metadata` inside a block: reported (GGE1314) and parsed, so what
    /// follows is not a cascade of errors, then dropped.
    fn misplaced_declaration(&mut self) -> Stmt {
        let keyword = self.tok().clone();
        let (message, hint) = match keyword.kind {
            T::Metadata => (
                "the `metadata` block is only allowed at the top level of the script",
                "move it to the top of the script, before every statement",
            ),
            T::Enum => (
                "an `enum` can only be declared at the top level of the script, not inside a block or function",
                "move the enum out of the enclosing block or function",
            ),
            _ => (
                "a `function` can only be declared at the top level of the script, not inside a block or function",
                "move the function out of the enclosing block or function",
            ),
        };
        // Inside a misplaced declaration, report only the outermost one.
        if !self.in_misplaced_declaration {
            self.diagnostics.push(Diagnostic::at(codes::GGE1314, keyword.span, message).with_hint(hint));
        }
        let outer = std::mem::replace(&mut self.in_misplaced_declaration, true);
        let span = match keyword.kind {
            T::Metadata => self.metadata().span,
            T::Enum => self.enum_decl().span,
            _ => self.function_decl().span,
        };
        self.in_misplaced_declaration = outer;
        Stmt { kind: StmtKind::Error, span }
    }

    // ----- Expressions -----

    fn expr(&mut self) -> Expr {
        let outer = std::mem::replace(&mut self.in_expression, true);
        let expr = self.expr_bp(0);
        self.in_expression = outer;
        expr
    }

    /// An expression inside a bracket that already counted as a level of nesting (a method
    /// call's arguments, an index), so that `a[a[a[0]]]` is three levels like `f(f(f(0)))`.
    fn expr_in_bracket(&mut self) -> Expr {
        let outer = std::mem::replace(&mut self.in_expression, true);
        let expr = self.expr_levels(0);
        self.in_expression = outer;
        expr
    }

    /// Precedence climbing: parses operators binding at least as tightly as `min_bp`.
    fn expr_bp(&mut self, min_bp: u8) -> Expr {
        if !self.enter() {
            return self.error_expr();
        }
        let expr = self.expr_levels(min_bp);
        self.leave();
        expr
    }

    /// [`Parser::expr_bp`] without entering a level for itself.
    fn expr_levels(&mut self, min_bp: u8) -> Expr {
        let mut lhs = self.unary();
        // Each operator applied in this loop makes the tree one level deeper, so a 100 000-term
        // sum would overflow the stack of whoever walks the tree: count them as nesting.
        let mut chain = 0;
        while let Some((op, bp)) = infix(self.peek()) {
            if bp < min_bp {
                break;
            }
            // A left-associative operator deepens the tree without recursing: count it. The
            // right-associative ones recurse into `expr_bp`, which counts itself.
            let left_associative = matches!(op, Infix::Binary(op) if op != BinaryOp::Is);
            if left_associative {
                if !self.enter() {
                    break;
                }
                chain += 1;
            }
            self.bump();
            let start = lhs.span.start;
            let kind = match op {
                // Right-associative: the right side may contain the same operator.
                Infix::Assign(op) => {
                    let value = self.expr_bp(bp);
                    ExprKind::Assign { op, target: Box::new(lhs), value: Box::new(value) }
                }
                Infix::Binary(BinaryOp::Is) => {
                    let rhs = self.expr_bp(bp);
                    ExprKind::Binary { op: BinaryOp::Is, lhs: Box::new(lhs), rhs: Box::new(rhs) }
                }
                Infix::Binary(op) => {
                    let rhs = self.expr_bp(bp + 1);
                    ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }
                }
                // As in JavaScript, both branches are assignment expressions; `a ? b : c ? d : e`
                // nests to the right.
                Infix::Conditional => {
                    let then_value = self.expr_bp(BP_ASSIGN);
                    let else_value = if self.eat(&T::Colon).is_some() {
                        self.expr_bp(BP_ASSIGN)
                    } else {
                        let diagnostic = self
                            .expected("`:`", "in the conditional expression")
                            .with_hint("write `condition ? value_if_true : value_if_false`");
                        self.report(diagnostic);
                        self.error_expr()
                    };
                    ExprKind::Conditional {
                        cond: Box::new(lhs),
                        then_value: Box::new(then_value),
                        else_value: Box::new(else_value),
                    }
                }
            };
            lhs = Expr { kind, span: self.span_from(start) };
        }
        for _ in 0..chain {
            self.leave();
        }
        lhs
    }

    /// Prefix operators, right-recursive: `- -x`, `!@x`, `++a.b`.
    fn unary(&mut self) -> Expr {
        let op = match self.peek() {
            T::PlusPlus => UnaryOp::PreIncrement,
            T::MinusMinus => UnaryOp::PreDecrement,
            T::Bang => UnaryOp::Not,
            T::Plus => UnaryOp::Plus,
            T::Minus => UnaryOp::Minus,
            T::At => UnaryOp::Relative,
            _ => return self.postfix(),
        };
        if !self.enter() {
            return self.error_expr();
        }
        let start = self.bump().span.start;
        let operand = self.unary();
        self.leave();
        Expr { kind: ExprKind::Unary { op, operand: Box::new(operand) }, span: self.span_from(start) }
    }

    /// A primary followed by `.name`, `.name(args)`, `[indices]`, `++` and `--`.
    fn postfix(&mut self) -> Expr {
        let mut expr = self.primary();
        let mut chain = 0;
        loop {
            if !matches!(self.peek(), T::Dot | T::LBracket | T::LParen | T::PlusPlus | T::MinusMinus) {
                break;
            }
            if !self.enter() {
                break;
            }
            chain += 1;
            let start = expr.span.start;
            let token = self.bump();
            let kind = match token.kind {
                T::Dot => {
                    let Some(name) = self.expect_name("a member name", "after `.`") else {
                        expr = Expr { kind: ExprKind::Error, span: self.span_from(start) };
                        break;
                    };
                    if let Some(open) = self.eat(&T::LParen) {
                        let args =
                            self.list(open, &T::RParen, ListInfo::of_expressions("arguments"), Parser::expr_in_bracket);
                        ExprKind::MethodCall { object: Box::new(expr), name, args }
                    } else {
                        ExprKind::Member { object: Box::new(expr), name }
                    }
                }
                T::LBracket => {
                    let indices = self.list(
                        token.span,
                        &T::RBracket,
                        ListInfo::of_expressions("indices"),
                        Parser::expr_in_bracket,
                    );
                    ExprKind::Index { object: Box::new(expr), indices }
                }
                T::LParen => {
                    // Only `name(...)` and `value.name(...)` are calls; there are no function values.
                    let what = match &expr.kind {
                        ExprKind::Ident(name) => format!("`({name})`"),
                        ExprKind::Call { .. } | ExprKind::MethodCall { .. } => "the result of a call".to_string(),
                        ExprKind::Index { .. } => "an array item".to_string(),
                        _ => "this expression".to_string(),
                    };
                    self.report(
                        Diagnostic::at(codes::GGE1201, token.span, format!("{what} cannot be called"))
                            .with_label(expr.span, "this is not a function name")
                            .with_hint("only a function name `f(...)` or a method `value.name(...)` can be called"),
                    );
                    self.list(token.span, &T::RParen, ListInfo::of_expressions("arguments"), Parser::expr);
                    ExprKind::Error
                }
                T::PlusPlus => ExprKind::Postfix { op: PostfixOp::Increment, operand: Box::new(expr) },
                _ => ExprKind::Postfix { op: PostfixOp::Decrement, operand: Box::new(expr) },
            };
            expr = Expr { kind, span: self.span_from(start) };
        }
        for _ in 0..chain {
            self.leave();
        }
        expr
    }

    fn primary(&mut self) -> Expr {
        let token = self.tok().clone();
        let kind = match token.kind {
            T::Number(v) => ExprKind::Number(v),
            T::String(s) => ExprKind::String(s),
            T::True => ExprKind::Bool(true),
            T::False => ExprKind::Bool(false),
            T::Ident(name) => {
                self.bump();
                if let Some(open) = self.eat(&T::LParen) {
                    let args = self.list(open, &T::RParen, ListInfo::of_expressions("arguments"), Parser::expr);
                    let name = Ident { name, span: token.span };
                    return Expr { kind: ExprKind::Call { name, args }, span: self.span_from(token.span.start) };
                }
                return Expr { kind: ExprKind::Ident(name), span: token.span };
            }
            T::LParen => {
                self.bump();
                let mut inner = self.expr();
                self.close(&T::RParen, token.span, "the parenthesised expression");
                // The node's span includes the parentheses: they are part of its source text.
                inner.span = self.span_from(token.span.start);
                return inner;
            }
            T::LBrace => {
                self.bump();
                let items =
                    self.list(token.span, &T::RBrace, ListInfo::of_expressions("array items"), Parser::array_item);
                return Expr { kind: ExprKind::Array(items), span: self.span_from(token.span.start) };
            }
            T::LBracket => return self.coordinate(),
            _ => {
                let diagnostic = self.expected("an expression", "");
                let hint = match self.peek() {
                    T::Dot if matches!(self.peek_nth(1), T::Number(_)) => {
                        Some("a number cannot start with `.`: write `0.5`".to_string())
                    }
                    T::Eq if self.pos > 0 && self.tokens.get(self.pos - 1).map(|t| &t.kind) == Some(&T::EqEq) => {
                        Some("there is no `===`: use `==`".to_string())
                    }
                    T::Var | T::Global => Some("a variable can only be declared by a statement of its own".to_string()),
                    T::Function => Some("functions are declared at the top level and called by name".to_string()),
                    _ => None,
                };
                self.report(match hint {
                    Some(hint) => diagnostic.with_hint(hint),
                    None => diagnostic,
                });
                return self.error_expr();
            }
        };
        self.bump();
        Expr { kind, span: token.span }
    }

    /// `value` or `key: value` in an array literal.
    fn array_item(&mut self) -> ArrayItem {
        let first = self.expr();
        if self.eat(&T::Colon).is_some() {
            let value = self.expr();
            ArrayItem { key: Some(first), value }
        } else {
            ArrayItem { key: None, value: first }
        }
    }

    /// `[x]` (a coordinate) or `[x, y]` (a point).
    fn coordinate(&mut self) -> Expr {
        let open = self.bump().span;
        let items = self.list(open, &T::RBracket, ListInfo::of_expressions("coordinates"), Parser::expr);
        let span = self.span_from(open.start);
        if items.len() != 1 && items.len() != 2 {
            let message = if items.is_empty() {
                "an empty `[]` is neither a coordinate nor a point".to_string()
            } else {
                format!("a point has two coordinates, but this one has {}", items.len())
            };
            self.report_recovered(
                Diagnostic::at(codes::GGE1201, span, message)
                    .with_hint("write `[x]` for a coordinate or `[x, y]` for a point"),
            );
        }
        Expr { kind: ExprKind::Coordinate(items), span }
    }
}

#[cfg(test)]
mod tests;
