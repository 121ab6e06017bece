//! The hand-written parser, character by character as the original reads (spec height-slang
//! §1.2): before every character of an operator name, an operand or a bracket, whitespace (space,
//! tab, LF, and CR in the documented dialect) is skipped, so `( m a x 1 2)` is `max` and
//! `(sinx)` is `sin(x)`; numbers, names and parameter values are read as consecutive characters.
//! The first error stops the parse, with a code, a span and a hint.

use std::cell::Cell;
use std::ops::Range;
use std::sync::Arc;

use geogen_diag::{codes, Diagnostic, Span};

use crate::ast::{BinOp, Expr, ExprKind, UnOp, VARIABLES};
use crate::dialect::Dialect;
use crate::eval::{Options, Program};
use crate::noise::{self, ParamContext, RawParam};

/// What a form's head names.
#[derive(Copy, Clone, Debug)]
enum Head {
    Unary(UnOp),
    Binary(BinOp),
    Cond,
    Lerp,
    SelfCall,
}

impl Head {
    fn operands(self, arity: usize) -> usize {
        match self {
            Head::Unary(_) => 1,
            Head::Binary(_) => 2,
            Head::Cond | Head::Lerp => 3,
            Head::SelfCall => arity,
        }
    }
}

/// Named operators by their first two letters (the original dispatches on them), with the rest
/// of the name.
const NAMED: &[(&str, &str, Head)] = &[
    ("an", "d", Head::Binary(BinOp::And)),
    ("ab", "s", Head::Unary(UnOp::Abs)),
    ("or", "", Head::Binary(BinOp::Or)),
    ("xo", "r", Head::Binary(BinOp::Xor)),
    ("mi", "n", Head::Binary(BinOp::Min)),
    ("ma", "x", Head::Binary(BinOp::Max)),
    ("de", "lta", Head::Binary(BinOp::Delta)),
    ("in", "v", Head::Unary(UnOp::Inv)),
    ("if", "", Head::Cond),
    ("si", "n", Head::Unary(UnOp::Sin)),
    ("sq", "rt", Head::Unary(UnOp::Sqrt)),
    ("se", "lf", Head::SelfCall),
    ("co", "s", Head::Unary(UnOp::Cos)),
    ("fl", "oor", Head::Unary(UnOp::Floor)),
    ("fr", "ac", Head::Unary(UnOp::Frac)),
    ("tr", "unc", Head::Unary(UnOp::Trunc)),
    ("ne", "g", Head::Unary(UnOp::Neg)),
    ("no", "t", Head::Unary(UnOp::Not)),
    ("le", "rp", Head::Lerp),
];

const OPERATOR_LIST: &str = "+ - * / ^ = <> < <= > >= and or xor min max delta inv sin cos floor abs trunc frac neg \
                             not sqrt ? if lerp self";

struct Parser<'s> {
    text: &'s str,
    pos: usize,
    end: usize,
    arity: usize,
    options: &'s Options,
    depth: usize,
    /// Configurable functions built so far in the whole program (parameter programs included).
    functions: &'s Cell<u64>,
}

/// Each configurable function costs at least this many operations per point (one noise sample),
/// so a program may hold at most `max_point_ops / MIN_FUNCTION_COST` of them: checked while
/// parsing, before their tables take memory.
pub(crate) const MIN_FUNCTION_COST: u64 = 12;

/// Parses and lowers the program in `text[range]` with `arity` variables; `depth` is the nesting
/// already used by enclosing programs.
pub(crate) fn compile_range(
    text: &str,
    range: Range<usize>,
    arity: usize,
    options: &Options,
    depth: usize,
    functions: &Cell<u64>,
) -> Result<Program, Diagnostic> {
    let mut parser =
        Parser { text, pos: range.start, end: range.end.min(text.len()), arity, options, depth, functions };
    parser.skip_ws();
    if parser.pos >= parser.end {
        let span = Span::new(range.start as u32, parser.end as u32);
        return Err(Diagnostic::at(codes::GGE8104, span, "the program is empty").with_hint(if depth == 0 {
            "write an expression, e.g. (* 0.5 x)"
        } else {
            "write an expression between the parentheses, e.g. persistence(0.5)"
        }));
    }
    // Anything after the first complete expression is ignored, as in the original.
    let ast = parser.expr()?;
    Program::from_ast(ast, arity, options)
}

impl<'s> Parser<'s> {
    fn dialect(&self) -> Dialect {
        self.options.dialect
    }

    fn is_ws(&self, b: u8) -> bool {
        matches!(b, b' ' | b'\t' | b'\n') || (b == b'\r' && self.dialect().cr_is_whitespace())
    }

    fn skip_ws(&mut self) {
        while self.pos < self.end && self.is_ws(self.text.as_bytes()[self.pos]) {
            self.pos += 1;
        }
    }

    fn byte(&self) -> Option<u8> {
        (self.pos < self.end).then(|| self.text.as_bytes()[self.pos])
    }

    /// The character at the position (for messages) and its span.
    fn char_here(&self) -> (char, Span) {
        let c = self.text.get(self.pos..self.end).and_then(|s| s.chars().next()).unwrap_or('?');
        (c, Span::new(self.pos as u32, (self.pos + c.len_utf8()) as u32))
    }

    fn span(&self, start: usize) -> Span {
        Span::new(start as u32, self.pos as u32)
    }

    fn at_end(&self) -> Span {
        Span::at(self.end as u32)
    }

    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.skip_ws();
        let start = self.pos;
        let Some(b) = self.byte() else {
            return Err(Diagnostic::at(codes::GGE8105, self.at_end(), "the program ends where an operand should be")
                .with_hint("every operator takes a fixed number of operands: (+ a b), (sin a), (? c a b)"));
        };
        match b {
            b'0'..=b'9' => self.number(start, false),
            b'-' => {
                self.pos += 1;
                self.skip_ws();
                self.number(start, true)
            }
            b'(' => self.form(start),
            b')' => Err(Diagnostic::at(codes::GGE8105, self.char_here().1, "an operand is missing before this `)`")
                .with_hint("every operator takes a fixed number of operands: (+ a b), (sin a), (? c a b)")),
            b'x' | b'y' | b'z' | b'u' | b'v' | b'w' => {
                self.pos += 1;
                let index = VARIABLES.iter().position(|&v| v as u8 == b).unwrap_or(0);
                if index >= self.arity {
                    let has =
                        if self.arity == 1 { "only x (it is a persistence or level function)" } else { "only x and y" };
                    return Err(Diagnostic::at(
                        codes::GGE8108,
                        self.span(start),
                        format!("'{}' is not a variable of this program: it has {has}", b as char),
                    )
                    .with_hint(
                        "mkheightmap programs have two variables, x and y; persistence and level functions one, x",
                    ));
                }
                Ok(Expr::new(ExprKind::Var(index as u8), self.span(start)))
            }
            _ => {
                let (c, span) = self.char_here();
                let hint = self.unknown_token_hint(c);
                let shown =
                    if c.is_control() || c.is_whitespace() { c.escape_debug().to_string() } else { c.to_string() };
                Err(Diagnostic::at(codes::GGE8101, span, format!("token unknown: '{shown}'")).with_hint(hint))
            }
        }
    }

    fn unknown_token_hint(&self, c: char) -> String {
        let previous = self.text[..self.pos].bytes().last();
        match c {
            'e' | 'E' if previous.is_some_and(|b| b.is_ascii_digit() || b == b'.') => {
                "Height-Slang numbers have no exponent: write 1000, not 1e3".into()
            }
            '.' => "a number starts with a digit: write 0.5, not .5".into(),
            '+' => "a number has no `+` sign: write 1, not +1".into(),
            '\r' => "a carriage return is not whitespace in the picogen-2008 dialect: save the program with LF \
                     line endings"
                .into(),
            '[' => "a configurable function is called in a form: ([2 LayeredNoise] x y)".into(),
            c if c.is_ascii_alphabetic() => format!(
                "an operand is a number, a variable ({}) or a form in parentheses: write ({c}... x) to apply an \
                 operation",
                if self.arity == 1 { "x" } else { "x, y" }
            ),
            _ => "an operand is a number, a variable (x, y) or a form in parentheses".into(),
        }
    }

    /// A number: digits and at most one `.` (read as C++ stream extraction reads them), after an
    /// optional `-` sign and whitespace.
    fn number(&mut self, start: usize, negative: bool) -> Result<Expr, Diagnostic> {
        let digits_start = self.pos;
        let bytes = self.text.as_bytes();
        while self.pos < self.end && (bytes[self.pos].is_ascii_digit() || bytes[self.pos] == b'.') {
            self.pos += 1;
        }
        let digits = &self.text[digits_start..self.pos];
        if digits.is_empty() || digits == "." {
            return Err(Diagnostic::at(
                codes::GGE8102,
                if self.pos < self.end { self.span(start).to(self.char_here().1) } else { self.span(start) },
                "invalid number: the `-` sign is not followed by digits",
            )
            .with_hint("`-` in operand position is a sign: write -5 or -.5; to negate an expression write (neg x)"));
        }
        if digits.bytes().filter(|&b| b == b'.').count() > 1 {
            return Err(Diagnostic::at(
                codes::GGE8103,
                self.span(start),
                format!("too many dots in float-number: {digits}"),
            )
            .with_hint("a number has at most one `.`"));
        }
        let magnitude = match digits.parse::<f64>() {
            // An overflow is the largest double, as C++ stream extraction stores it.
            Ok(v) if v.is_infinite() => f64::MAX,
            Ok(v) => v,
            Err(_) => {
                return Err(Diagnostic::at(codes::GGE8102, self.span(start), format!("invalid number: {digits}"))
                    .with_hint("a number is digits with at most one `.`, e.g. 0.25"))
            }
        };
        Ok(Expr::new(ExprKind::Number(if negative { -magnitude } else { magnitude }), self.span(start)))
    }

    fn enter(&mut self, start: usize) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > self.options.limits.max_nesting {
            return Err(Diagnostic::at(
                codes::GGE8110,
                Span::new(start as u32, (start + 1) as u32),
                format!("forms are nested deeper than the limit of {} levels", self.options.limits.max_nesting),
            )
            .with_hint("split the program, or simplify it"));
        }
        Ok(())
    }

    /// `( head operands... )`.
    fn form(&mut self, start: usize) -> Result<Expr, Diagnostic> {
        self.enter(start)?;
        self.pos += 1;
        self.skip_ws();
        let head_start = self.pos;
        let Some(b) = self.byte() else {
            return Err(Diagnostic::at(
                codes::GGE8107,
                self.at_end(),
                "the program ends after `(`: an operation is missing",
            )
            .with_hint(format!("the operations are {OPERATOR_LIST}")));
        };
        let head = match b {
            b'+' | b'-' | b'*' | b'/' | b'^' | b'=' | b'?' => {
                self.pos += 1;
                match b {
                    b'+' => Head::Binary(BinOp::Add),
                    b'-' => Head::Binary(BinOp::Sub),
                    b'*' => Head::Binary(BinOp::Mul),
                    b'/' => Head::Binary(BinOp::Div),
                    b'^' => Head::Binary(BinOp::Pow),
                    b'=' => Head::Binary(BinOp::Eq),
                    _ => Head::Cond,
                }
            }
            b'<' => {
                self.pos += 1;
                self.skip_ws();
                match self.byte() {
                    Some(b'>') => {
                        self.pos += 1;
                        Head::Binary(BinOp::Ne)
                    }
                    Some(b'=') => {
                        self.pos += 1;
                        Head::Binary(BinOp::Le)
                    }
                    _ => Head::Binary(BinOp::Lt),
                }
            }
            b'>' => {
                self.pos += 1;
                self.skip_ws();
                if self.byte() == Some(b'=') {
                    self.pos += 1;
                    Head::Binary(BinOp::Ge)
                } else {
                    Head::Binary(BinOp::Gt)
                }
            }
            b'[' => return self.configured(start),
            b'a'..=b'z' => self.named(head_start)?,
            _ => {
                let (c, span) = self.char_here();
                let shown =
                    if c.is_control() || c.is_whitespace() { c.escape_debug().to_string() } else { c.to_string() };
                return Err(Diagnostic::at(codes::GGE8107, span, format!("unknown operation: {shown}"))
                    .with_hint(format!("the operations are {OPERATOR_LIST}")));
            }
        };
        let count = head.operands(self.arity);
        let mut operands = Vec::with_capacity(count);
        for k in 0..count {
            self.skip_ws();
            if matches!(self.byte(), None | Some(b')')) {
                let span = if self.byte().is_some() { self.char_here().1 } else { self.at_end() };
                return Err(match head {
                    Head::SelfCall => self_arity_error(span, self.arity, k),
                    _ => Diagnostic::at(
                        codes::GGE8105,
                        span,
                        format!(
                            "`{}` takes {count} operand{}, but only {k} {} given",
                            head_name(head),
                            plural(count),
                            were(k)
                        ),
                    )
                    .with_hint("operators are never variadic: write (+ a (+ b c)) for a + b + c"),
                });
            }
            operands.push(self.expr()?);
        }
        self.close(start, head)?;
        self.depth -= 1;
        let span = self.span(start);
        let mut it = operands.into_iter();
        let mut next = || Box::new(it.next().unwrap_or_else(|| Expr::new(ExprKind::Number(0.0), span)));
        let kind = match head {
            Head::Unary(op) => ExprKind::Unary(op, next()),
            Head::Binary(op) => ExprKind::Binary(op, next(), next()),
            Head::Cond => ExprKind::Cond(next(), next(), next()),
            Head::Lerp => ExprKind::Lerp(next(), next(), next()),
            Head::SelfCall => ExprKind::SelfCall((0..count).map(|_| *next()).collect()),
        };
        Ok(Expr::new(kind, span))
    }

    /// The closing `)` of a form whose operands are all read.
    fn close(&mut self, start: usize, head: Head) -> Result<(), Diagnostic> {
        self.skip_ws();
        match self.byte() {
            Some(b')') => {
                self.pos += 1;
                Ok(())
            }
            None => {
                Err(Diagnostic::at(codes::GGE8106, self.at_end(), "missing ')': the program ends inside this form")
                    .with_label(Span::new(start as u32, start as u32 + 1), "this `(` is not closed")
                    .with_hint("close every `(` with `)`"))
            }
            Some(_) => {
                let span = self.char_here().1;
                Err(match head {
                    Head::SelfCall => Diagnostic::at(
                        codes::GGE8109,
                        span,
                        format!("missing ')': `self` takes exactly {} argument{} here", self.arity, plural(self.arity)),
                    )
                    .with_hint("`self` calls the whole program, with one value per variable"),
                    _ => {
                        let count = head.operands(self.arity);
                        Diagnostic::at(
                            codes::GGE8106,
                            span,
                            format!("missing ')': `{}` takes {count} operand{}", head_name(head), plural(count)),
                        )
                        .with_label(Span::new(start as u32, start as u32 + 1), "the form starts here")
                        .with_hint("operators are never variadic: write (+ a (+ b c)) for a + b + c")
                    }
                })
            }
        }
    }

    /// A named operator, read letter by letter (whitespace between letters skipped).
    fn named(&mut self, head_start: usize) -> Result<Head, Diagnostic> {
        let bytes = self.text.as_bytes();
        let first = bytes[self.pos];
        self.pos += 1;
        self.skip_ws();
        let second = self.byte().filter(u8::is_ascii_lowercase);
        let unknown = |seen: &str, span: Span, guess: Option<&str>| {
            Diagnostic::at(codes::GGE8107, span, format!("unknown operation: {seen}")).with_hint(match guess {
                Some(name) => format!("did you mean `{name}`? the operations are {OPERATOR_LIST}"),
                None => format!("the operations are {OPERATOR_LIST}"),
            })
        };
        let Some(second) = second else {
            return Err(unknown(&(first as char).to_string(), self.span(head_start), None));
        };
        self.pos += 1;
        let prefix: String = [first as char, second as char].iter().collect();
        let Some(&(_, rest, head)) = NAMED.iter().find(|(p, _, _)| *p == prefix) else {
            return Err(unknown(&prefix, self.span(head_start), None));
        };
        let mut seen = prefix.clone();
        for expected in rest.bytes() {
            self.skip_ws();
            match self.byte() {
                Some(b) if b == expected => {
                    self.pos += 1;
                    seen.push(b as char);
                }
                other => {
                    if let Some(b) = other.filter(|b| b.is_ascii_graphic()) {
                        seen.push(b as char);
                        self.pos += 1;
                    }
                    return Err(unknown(&seen, self.span(head_start), Some(&format!("{prefix}{rest}"))));
                }
            }
        }
        Ok(head)
    }

    /// `([2 Name p(v)...] a b)`, the `[` at the position.
    fn configured(&mut self, start: usize) -> Result<Expr, Diagnostic> {
        let bracket = self.pos;
        self.pos += 1;
        self.skip_ws();
        let bytes = self.text.as_bytes();
        let arity_start = self.pos;
        while self.pos < self.end && bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let arity_text = &self.text[arity_start..self.pos];
        let arity_ok = match arity_text {
            "2" => true,
            "" => self.dialect() == Dialect::Documented,
            _ => false,
        };
        if !arity_ok {
            let span = if arity_text.is_empty() {
                Span::new(bracket as u32, bracket as u32 + 1)
            } else {
                self.span(arity_start)
            };
            return Err(Diagnostic::at(
                codes::GGE8201,
                span,
                "configurable functions are currently only supported with 2 parameters",
            )
            .with_hint("write the arity 2 after the bracket: ([2 LayeredNoise frequency(4)] x y)"));
        }
        self.skip_ws();
        let name_start = self.pos;
        while self.pos < self.end && bytes[self.pos].is_ascii_alphanumeric() {
            self.pos += 1;
        }
        let name = self.text[name_start..self.pos].to_string();
        let name_span = self.span(name_start);
        if name.is_empty() {
            let span = if self.byte().is_some() { self.char_here().1 } else { self.at_end() };
            return Err(Diagnostic::at(codes::GGE8206, span, "expected the name of a configurable function")
                .with_hint("the configurable functions are LayeredNoise, Noise and Layers"));
        }
        let mut params = Vec::new();
        loop {
            self.skip_ws();
            let Some(b) = self.byte() else {
                return Err(Diagnostic::at(codes::GGE8202, self.at_end(), "missing ']'")
                    .with_label(Span::new(bracket as u32, bracket as u32 + 1), "this `[` is not closed")
                    .with_hint("end the parameters with `]`: ([2 Noise frequency(4)] x y)"));
            };
            if b == b']' {
                self.pos += 1;
                break;
            }
            if !b.is_ascii_alphanumeric() {
                let (c, span) = self.char_here();
                return Err(Diagnostic::at(
                    codes::GGE8203,
                    span,
                    format!("expected alphanumeric parameter name, found '{}'", c.escape_debug()),
                )
                .with_hint("parameters are written name(value), names of letters and digits, then `]`"));
            }
            let pname_start = self.pos;
            while self.pos < self.end && bytes[self.pos].is_ascii_alphanumeric() {
                self.pos += 1;
            }
            let pname = self.text[pname_start..self.pos].to_string();
            let name_span_p = self.span(pname_start);
            self.skip_ws();
            if self.byte() != Some(b'(') {
                return Err(Diagnostic::at(
                    codes::GGE8204,
                    name_span_p,
                    format!("missing value for parameter {pname}"),
                )
                .with_hint(format!("write {pname}(value)")));
            }
            let open = self.pos;
            self.pos += 1;
            let value_start = self.pos;
            let mut depth = 1usize;
            while self.pos < self.end {
                match bytes[self.pos] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                self.pos += 1;
            }
            if self.pos >= self.end {
                return Err(Diagnostic::at(
                    codes::GGE8205,
                    Span::new(open as u32, open as u32 + 1),
                    format!("missing ')' for parameter {pname}"),
                )
                .with_hint("balance the parentheses of the value"));
            }
            params.push(RawParam { name: pname, name_span: name_span_p, value: value_start..self.pos });
            self.pos += 1;
        }
        let built = self.functions.get() + 1;
        let most = self.options.limits.max_point_ops / MIN_FUNCTION_COST;
        if built > most {
            return Err(Diagnostic::at(
                codes::GGE8209,
                name_span,
                format!(
                    "the program has more than {most} configurable functions, more than one point's budget of {} operations allows",
                    self.options.limits.max_point_ops
                ),
            )
            .with_hint("use fewer configurable functions"));
        }
        self.functions.set(built);
        let function = {
            let mut ctx =
                Nested { text: self.text, options: self.options, depth: self.depth, functions: self.functions };
            noise::build(&name, name_span, &params, &mut ctx)?
        };
        let mut operands = Vec::with_capacity(2);
        for k in 0..2 {
            self.skip_ws();
            if matches!(self.byte(), None | Some(b')')) {
                let span = if self.byte().is_some() { self.char_here().1 } else { self.at_end() };
                return Err(Diagnostic::at(
                    codes::GGE8105,
                    span,
                    format!("`[2 {name}]` takes 2 operands, but only {k} {} given", were(k)),
                )
                .with_hint(format!("write ([2 {name} ...] x y)")));
            }
            operands.push(self.expr()?);
        }
        self.skip_ws();
        match self.byte() {
            Some(b')') => self.pos += 1,
            None => {
                return Err(Diagnostic::at(
                    codes::GGE8106,
                    self.at_end(),
                    "missing ')': the program ends inside this form",
                )
                .with_label(Span::new(start as u32, start as u32 + 1), "this `(` is not closed")
                .with_hint("close every `(` with `)`"))
            }
            Some(_) => {
                return Err(Diagnostic::at(
                    codes::GGE8106,
                    self.char_here().1,
                    format!("missing ')': `[2 {name}]` takes 2 operands"),
                )
                .with_hint(format!("write ([2 {name} ...] x y)")))
            }
        }
        self.depth -= 1;
        let b = operands.pop();
        let a = operands.pop();
        let span = self.span(start);
        let (Some(a), Some(b)) = (a, b) else {
            return Err(Diagnostic::at(codes::GGE5000, span, "internal: configurable function without operands"));
        };
        Ok(Expr::new(ExprKind::Configured(Arc::new(function), Box::new(a), Box::new(b)), span))
    }
}

/// Compiles parameter programs for [`noise::build`], inside the same text (so their errors point
/// into it) and counting their nesting with the enclosing program's.
struct Nested<'s> {
    text: &'s str,
    options: &'s Options,
    depth: usize,
    functions: &'s Cell<u64>,
}

impl ParamContext for Nested<'_> {
    fn text(&self) -> &str {
        self.text
    }

    fn dialect(&self) -> Dialect {
        self.options.dialect
    }

    fn program(&mut self, param: &RawParam, arity: usize) -> Result<Arc<Program>, Diagnostic> {
        compile_range(self.text, param.value.clone(), arity, self.options, self.depth + 1, self.functions).map(Arc::new)
    }

    fn default_program(&mut self, text: &str, arity: usize) -> Result<Arc<Program>, Diagnostic> {
        compile_range(text, 0..text.len(), arity, self.options, self.depth + 1, self.functions).map(Arc::new)
    }
}

fn head_name(head: Head) -> &'static str {
    match head {
        Head::Unary(op) => op.name(),
        Head::Binary(op) => op.name(),
        Head::Cond => "?",
        Head::Lerp => "lerp",
        Head::SelfCall => "self",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn were(n: usize) -> &'static str {
    if n == 1 {
        "was"
    } else {
        "were"
    }
}

fn self_arity_error(span: Span, arity: usize, given: usize) -> Diagnostic {
    Diagnostic::at(
        codes::GGE8109,
        span,
        format!("`self` takes exactly {arity} argument{} here, but only {given} {} given", plural(arity), were(given)),
    )
    .with_hint("`self` calls the whole program, with one value per variable: (self x y) in a height map")
}
