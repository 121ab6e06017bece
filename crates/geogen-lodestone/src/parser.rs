//! Tokens to a [`RuleSet`] (spec §2.2 and §2.3):
//!
//! ```text
//! ruleset := (rule | comment)+
//! rule    := ws? (nterm | otnterm) ws? "=>" ws? rhs ws? eor
//! rhs     := element (ws? element)*      ; a ws between elements is kept as one space
//! element := nterm | otnterm | otntermref | string | qstring | code | weight | or
//! ```
//!
//! Then the right-hand sides become choices: split at `or`, the last weight of a choice is its
//! weight (whitespace beside it stays), adjacent texts are merged, and rules of one name are
//! merged in file order. Every error is reported (the parser goes on at the next rule).

use std::collections::HashMap;
use std::sync::Arc;

use geogen_diag::{codes, Diagnostic, Diagnostics, SourceFile, Span};

use crate::lexer::{lex, Tok, Token};
use crate::rules::{merge_texts, Choice, Code, Elem, Rule, RuleSet, Weight};
use crate::value::parse_float;
use crate::Mode;

/// The hint of every error about the shape of a rule.
const RULE_SHAPE: &str = "a rule is written `<name> => first choice | second choice;`";

pub(crate) fn parse(file: Arc<SourceFile>, mode: Mode) -> Result<RuleSet, Diagnostics> {
    let lexed = lex(file.text(), mode);
    let mut parser = Parser { src: file.text(), mode, diagnostics: Diagnostics::new() };
    let rules = parser.rules(&lexed.tokens);
    // After a lexical error the tokens around it are guesses, and what the parser says about them
    // would mostly repeat it: the lexical errors alone are reported.
    let mut diagnostics = if lexed.diagnostics.is_clean() { parser.diagnostics } else { lexed.diagnostics };
    if diagnostics.is_clean() && rules.is_empty() {
        diagnostics
            .push(Diagnostic::at(codes::GGE7204, Span::at(0), "these rules define nothing").with_hint(RULE_SHAPE));
    }
    let hash = geogen_random::hash_str(file.text());
    let mut set = RuleSet { file, mode, rules: Vec::new(), by_name: HashMap::new(), hash };
    if diagnostics.is_clean() {
        merge_rules(&mut set, rules);
        check_weights(&set, &mut diagnostics);
    }
    if diagnostics.is_clean() {
        Ok(set)
    } else {
        Err(diagnostics)
    }
}

/// One rule as written, before merging.
struct Written {
    name: String,
    span: Span,
    choices: Vec<Choice>,
}

/// A piece of a right-hand side before it is split into choices.
enum Piece {
    Elem(Elem),
    /// Whitespace between elements: one space.
    Space,
    Weight(Weight),
    Or,
}

/// What a run of tokens is the content of.
#[derive(Copy, Clone, PartialEq)]
enum Within {
    Rule,
    Weight,
    Code,
}

struct Parser<'a> {
    src: &'a str,
    mode: Mode,
    diagnostics: Diagnostics,
}

fn syntax(span: Span, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
    Diagnostic::at(codes::GGE7201, span, message).with_hint(hint)
}

impl Parser<'_> {
    fn rules(&mut self, tokens: &[Token]) -> Vec<Written> {
        let mut rules = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            match tokens[i].kind {
                Tok::Comment => {
                    i += 1;
                    continue;
                }
                // Whitespace at the end of the text.
                Tok::Ws if i + 1 == tokens.len() => break,
                _ => {}
            }
            let end = tokens[i..].iter().position(|t| t.kind == Tok::EndOfRule).map(|p| i + p);
            let rule_tokens = &tokens[i..end.unwrap_or(tokens.len())];
            match self.rule(rule_tokens, end.map(|e| tokens[e].span)) {
                Ok(rule) => rules.push(rule),
                Err(d) => self.diagnostics.push(d),
            }
            i = end.map_or(tokens.len(), |e| e + 1);
        }
        rules
    }

    /// One rule: its tokens up to (without) its end of rule, which is missing at the end of the
    /// text.
    fn rule(&mut self, tokens: &[Token], end: Option<Span>) -> Result<Written, Diagnostic> {
        let mut i = 0;
        let skip_ws = |i: &mut usize| {
            if tokens.get(*i).is_some_and(|t| t.kind == Tok::Ws) {
                *i += 1;
            }
        };
        skip_ws(&mut i);
        let first_span = tokens.get(i).map_or(end.unwrap_or_default(), |t| t.span);
        let (name, name_span) = match tokens.get(i) {
            Some(Token { kind: Tok::NonTerminal(n) | Tok::OneTime(n), span }) => (n.clone(), *span),
            Some(Token { kind: Tok::OneTimeRef(key), span }) => {
                return Err(syntax(
                    *span,
                    "a `<@…>` reference cannot be defined",
                    format!("define the one-time nonterminal instead: `{key} => …;`"),
                ))
            }
            Some(Token { kind: Tok::Comment, span }) => {
                return Err(syntax(*span, "a comment inside a rule", "comments take whole lines between rules"))
            }
            Some(t) => {
                return Err(syntax(
                    t.span,
                    format!("expected the name of a rule, found {}", describe(&t.kind)),
                    RULE_SHAPE,
                ))
            }
            None => return Err(syntax(first_span, "a `;` without a rule", RULE_SHAPE)),
        };
        i += 1;
        skip_ws(&mut i);
        match tokens.get(i) {
            Some(Token { kind: Tok::Arrow, .. }) => i += 1,
            Some(t) => {
                return Err(syntax(
                    t.span,
                    format!("expected `=>` after `{name}`, found {}", describe(&t.kind)),
                    RULE_SHAPE,
                ))
            }
            None => {
                return Err(Diagnostic::at(
                    codes::GGE7203,
                    name_span,
                    format!("the rules end inside the rule `{name}`"),
                )
                .with_hint("finish it: `<name> => choices;`"))
            }
        }
        skip_ws(&mut i);
        let mut rhs = &tokens[i..];
        if rhs.last().is_some_and(|t| t.kind == Tok::Ws) {
            rhs = &rhs[..rhs.len() - 1];
        }
        let Some(end) = end else {
            return Err(Diagnostic::at(codes::GGE7203, name_span, format!("the rule `{name}` has no `;` at its end"))
                .with_hint("end every rule with `;` at the end of its line"));
        };
        if rhs.is_empty() {
            return Err(Diagnostic::at(codes::GGE7202, name_span.to(end), format!("the rule `{name}` is empty"))
                .with_hint("write '' for an empty text: `<name> => '';`"));
        }
        let pieces = self.pieces(rhs, Within::Rule)?;
        Ok(Written { name, span: name_span, choices: choices(pieces, self.mode) })
    }

    fn pieces(&mut self, tokens: &[Token], within: Within) -> Result<Vec<Piece>, Diagnostic> {
        let mut pieces = Vec::with_capacity(tokens.len());
        for token in tokens {
            let literal = || Piece::Elem(Elem::Text(self.src[token.span.range()].to_string()));
            let piece = match &token.kind {
                Tok::Ws if within == Within::Rule => Piece::Space,
                Tok::Ws => Piece::Elem(Elem::Text(" ".to_string())),
                Tok::Text(text) | Tok::Quoted(text) => Piece::Elem(Elem::Text(text.clone())),
                Tok::NonTerminal(name) => Piece::Elem(Elem::NonTerminal(name.clone(), token.span)),
                Tok::OneTime(name) => Piece::Elem(Elem::OneTime(name.clone(), token.span)),
                Tok::OneTimeRef(key) if within == Within::Code => {
                    Piece::Elem(Elem::CodeVariable(key.clone(), token.span))
                }
                Tok::OneTimeRef(key) => Piece::Elem(Elem::OneTimeValue(key.clone(), token.span)),
                // Inside code and weights, `|` and weights are text again, as written.
                Tok::Or | Tok::Weight(_) if within != Within::Rule => literal(),
                Tok::Or => Piece::Or,
                Tok::Weight(inner) => Piece::Weight(self.weight(inner, token.span)?),
                Tok::Code(inner) => Piece::Elem(Elem::Code(self.code(inner, token.span)?)),
                Tok::Comment => {
                    return Err(syntax(
                        token.span,
                        "a comment inside a rule",
                        "comments take whole lines between rules",
                    ))
                }
                Tok::Arrow => {
                    let hint = match within {
                        Within::Rule => "quote it as '=>' to write it",
                        _ => "embedded code and weights cannot hold a standalone `=>`; quote it as '=>'",
                    };
                    return Err(syntax(token.span, "a `=>` inside a rule's choices", hint));
                }
                Tok::EndOfRule => {
                    return Err(syntax(token.span, "a `;` inside embedded code or a weight", "write `\\;`"))
                }
            };
            pieces.push(piece);
        }
        Ok(pieces)
    }

    /// Strict mode keeps the original's rule that code and weights start and end with something
    /// other than whitespace; the extended mode drops that whitespace.
    fn trim<'t>(&self, tokens: &'t [Token], what: &str, whole: Span) -> Result<&'t [Token], Diagnostic> {
        let leading = tokens.first().is_some_and(|t| t.kind == Tok::Ws);
        let trailing = tokens.len() > 1 && tokens.last().is_some_and(|t| t.kind == Tok::Ws);
        if self.mode == Mode::Strict && (leading || trailing) {
            return Err(syntax(
                whole,
                format!("whitespace just inside {what}"),
                "the original does not allow it (strict mode); remove it",
            ));
        }
        let start = usize::from(leading);
        let end = tokens.len() - usize::from(trailing);
        Ok(&tokens[start..end.max(start)])
    }

    fn weight(&mut self, inner: &[Token], span: Span) -> Result<Weight, Diagnostic> {
        let inner = self.trim(inner, "the brackets of a weight", span)?;
        let elems = self.elems(inner, Within::Weight)?;
        Ok(match elems.as_slice() {
            [Elem::Text(text)] => Weight::Fixed(read_weight(text, self.mode), span),
            [] => Weight::Fixed(f64::NAN, span),
            _ => Weight::Computed(elems, span),
        })
    }

    fn code(&mut self, inner: &[Token], span: Span) -> Result<Code, Diagnostic> {
        let inner = self.trim(inner, "the backquotes of embedded code", span)?;
        let parts = self.elems(inner, Within::Code)?;
        if parts.is_empty() {
            return Err(Diagnostic::at(codes::GGE7103, span, "empty embedded code")
                .with_hint("write an expression between the backquotes"));
        }
        Ok(Code { parts, span })
    }

    fn elems(&mut self, tokens: &[Token], within: Within) -> Result<Vec<Elem>, Diagnostic> {
        let elems = self
            .pieces(tokens, within)?
            .into_iter()
            .filter_map(|p| match p {
                Piece::Elem(e) => Some(e),
                Piece::Space => Some(Elem::Text(" ".to_string())),
                _ => None,
            })
            .collect();
        Ok(merge_texts(elems))
    }
}

/// A plain weight's number. Extended: the whole text must be a number. Strict: JavaScript's
/// `parseFloat`, as the original (`3abc` is 3, `1+2` is 1).
pub(crate) fn read_weight(text: &str, mode: Mode) -> f64 {
    match mode {
        Mode::Strict => parse_float(text),
        Mode::Extended => text.trim().parse::<f64>().unwrap_or(f64::NAN),
    }
}

fn describe(kind: &Tok) -> String {
    match kind {
        Tok::Comment => "a comment".into(),
        Tok::Or => "` | `".into(),
        Tok::Ws => "whitespace".into(),
        Tok::Arrow => "`=>`".into(),
        Tok::EndOfRule => "`;`".into(),
        Tok::OneTime(n) | Tok::NonTerminal(n) => format!("`{n}`"),
        Tok::OneTimeRef(key) => format!("`<@{}`", &key[2..]),
        Tok::Quoted(t) => format!("'{t}'"),
        Tok::Text(t) => format!("`{t}`"),
        Tok::Code(_) => "embedded code".into(),
        Tok::Weight(_) => "a weight".into(),
    }
}

/// Splits at `or`; the last weight of a choice wins. Strict mode keeps the whitespace beside a
/// weight (`x [3]` is "x "), as the original; the extended mode drops the space that separates a
/// weight from its choice (`x [3]` is "x").
fn choices(pieces: Vec<Piece>, mode: Mode) -> Vec<Choice> {
    let mut choices = Vec::new();
    let mut weight = Weight::One;
    let mut elems: Vec<Piece> = Vec::new();
    let mut after_weight = false;
    let finish = |elems: Vec<Piece>| -> Vec<Elem> {
        let elems = elems
            .into_iter()
            .filter_map(|p| match p {
                Piece::Elem(e) => Some(e),
                Piece::Space => Some(Elem::Text(" ".to_string())),
                _ => None,
            })
            .collect();
        merge_texts(elems)
    };
    for piece in pieces {
        let extended = mode == Mode::Extended;
        match piece {
            Piece::Weight(w) => {
                weight = w;
                if extended && matches!(elems.last(), Some(Piece::Space)) {
                    elems.pop();
                    after_weight = false;
                } else {
                    after_weight = extended;
                }
                continue;
            }
            Piece::Space if after_weight => {}
            Piece::Or => {
                choices.push(Choice { weight: std::mem::replace(&mut weight, Weight::One), elems: finish(elems) });
                elems = Vec::new();
            }
            other => elems.push(other),
        }
        after_weight = false;
    }
    choices.push(Choice { weight, elems: finish(elems) });
    choices
}

fn merge_rules(set: &mut RuleSet, written: Vec<Written>) {
    for rule in written {
        match set.by_name.get(&rule.name) {
            Some(&i) => set.rules[i].choices.extend(rule.choices),
            None => {
                set.by_name.insert(rule.name.clone(), set.rules.len());
                set.rules.push(Rule { name: rule.name, span: rule.span, choices: rule.choices });
            }
        }
    }
}

/// Plain weights of rules with several choices must be numbers, not negative, finite, and not
/// all 0 (a rule with one choice never reads its weight).
fn check_weights(set: &RuleSet, diagnostics: &mut Diagnostics) {
    for rule in &set.rules {
        if rule.choices.len() < 2 {
            continue;
        }
        let mut all_known = true;
        let mut total = 0.0;
        for choice in &rule.choices {
            match &choice.weight {
                Weight::One => total += 1.0,
                Weight::Fixed(w, span) => {
                    if let Some(problem) = weight_problem(*w) {
                        let text = set.file.snippet(*span).to_string();
                        diagnostics.push(
                            Diagnostic::at(codes::GGE7205, *span, format!("the weight {text} {problem}"))
                                .with_hint(weight_hint(&text)),
                        );
                    } else {
                        total += w;
                    }
                }
                Weight::Computed(..) => all_known = false,
            }
        }
        if all_known && total == 0.0 && diagnostics.is_clean() {
            diagnostics.push(
                Diagnostic::at(codes::GGE7206, rule.span, format!("every choice of `{}` has weight 0", rule.name))
                    .with_hint("give at least one choice a positive weight"),
            );
        }
    }
}

/// Why a weight cannot be used, if it cannot.
pub(crate) fn weight_problem(w: f64) -> Option<&'static str> {
    if w.is_nan() {
        Some("is not a number")
    } else if w.is_infinite() {
        Some("is infinite")
    } else if w < 0.0 {
        Some("is negative")
    } else {
        None
    }
}

pub(crate) fn weight_hint(text: &str) -> String {
    if text.contains(['+', '-', '*', '/']) && !text.contains('`') {
        "a weight is a number, 0 or more; compute one in backquotes: [`1+2`]".to_string()
    } else {
        "a weight is a number, 0 or more, as in [3] or [0.5]".to_string()
    }
}
