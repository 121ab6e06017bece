//! The executor (spec §2.4): a stack machine over the elements of the rules.
//!
//! One *expansion* pops elements left to right: a text is appended; a nonterminal with a rule has
//! one choice selected and its elements pushed; one without a rule is written as it is; a `<$n>`
//! writes its one value; code has its references expanded (a nested expansion), is evaluated, and
//! its value appended. Weights with nonterminals or code are nested expansions too.
//!
//! **Draw order** (what makes a seed give the same names everywhere): first the one-time pre-pass,
//! every `<$n>` rule in file order (a `<$m>` it needs that is not yet known is expanded on the
//! spot); then the start symbol, left to right. Each selection among several choices evaluates the
//! weights left to right (their own draws first) and then draws one number; a rule with one choice
//! draws nothing. Random numbers drawn by embedded code come from the same generator, in the order
//! the code runs.
//!
//! Fixed from the original: the iteration guard is an error by default (or a warning with
//! [`OnStepLimit::Truncate`]); an empty one-time value is a value, not a reason to expand again; a
//! one-time nonterminal needed while it is being expanded is an error; NaN, negative, infinite and
//! all-zero weights are errors; `<@n>` outside code writes the value of `<$n>`.

use std::collections::HashMap;

use geogen_diag::{codes, Diagnostic, Span};
use geogen_random::Mt19937;

use crate::parser::{read_weight, weight_problem};
use crate::rules::{Choice, Code, Elem, Rule, RuleSet, Weight};
use crate::value::Value;

/// How much work one generation may do.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Elements one expansion may pop: the original's iteration guard (1000). Each nested
    /// expansion (code, a computed weight, a one-time rule) has its own count.
    pub max_steps: usize,
    pub on_step_limit: OnStepLimit,
    /// Elements all the expansions of one generation may pop together.
    pub max_total_steps: u64,
    /// Expansions nested in each other (code in a weight in a one-time rule...).
    pub max_depth: usize,
    /// Bytes of one generated text (and of the code text handed to the evaluator).
    pub max_text_len: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_steps: 1000,
            on_step_limit: OnStepLimit::Error,
            max_total_steps: 1_000_000,
            max_depth: 64,
            max_text_len: 1 << 20,
        }
    }
}

/// What happens when an expansion reaches [`Limits::max_steps`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OnStepLimit {
    /// GGE7301.
    Error,
    /// The original's behaviour, announced: the rest of the expansion is dropped, the partial
    /// text kept, and a warning (GGE7301) reported.
    Truncate,
}

/// The one-time values of a run: `<$n>` → its value. Code may set values of names without rules.
#[derive(Clone, Debug, Default)]
pub struct Memo {
    slots: HashMap<String, Slot>,
}

#[derive(Clone, Debug)]
enum Slot {
    InProgress,
    Value(Value),
}

impl Memo {
    pub fn new() -> Memo {
        Memo::default()
    }

    /// The value of `key` (`<$n>`), if it has one.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self.slots.get(key) {
            Some(Slot::Value(v)) => Some(v),
            _ => None,
        }
    }

    pub fn set(&mut self, key: &str, value: Value) {
        self.slots.insert(key.to_string(), Slot::Value(value));
    }

    fn is_known(&self, key: &str) -> bool {
        self.slots.contains_key(key)
    }

    fn in_progress(&self, key: &str) -> bool {
        matches!(self.slots.get(key), Some(Slot::InProgress))
    }
}

/// Where the executor's random choices come from.
pub trait Randomness {
    /// Picks one of the choices with these weights (finite, not negative, summing to `total` > 0).
    fn choose(&mut self, weights: &[f64], total: f64) -> Result<usize, Diagnostic>;
    /// The generator embedded code draws from; `None` when code may not draw.
    fn generator(&mut self) -> Option<&mut Mt19937>;
}

/// The seeded generator: MT19937, one 32-bit draw per selection.
#[derive(Clone, Debug)]
pub struct Seeded {
    mt: Mt19937,
}

impl Seeded {
    pub fn new(seed: u32) -> Seeded {
        Seeded { mt: Mt19937::new(seed) }
    }
}

impl Randomness for Seeded {
    fn choose(&mut self, weights: &[f64], total: f64) -> Result<usize, Diagnostic> {
        Ok(pick(weights, total, unit(&mut self.mt)))
    }

    fn generator(&mut self) -> Option<&mut Mt19937> {
        Some(&mut self.mt)
    }
}

/// A uniform number in [0, 1) from one 32-bit draw.
pub fn unit(mt: &mut Mt19937) -> f64 {
    f64::from(mt.next_u32()) / 4_294_967_296.0
}

/// The choice a uniform `unit` in [0, 1) selects: the first whose running total exceeds
/// `unit × total`. A choice of weight 0 is never selected.
pub fn pick(weights: &[f64], total: f64, unit: f64) -> usize {
    let r = unit * total;
    let mut running = 0.0;
    let mut last_positive = 0;
    for (i, &w) in weights.iter().enumerate() {
        if w > 0.0 {
            running += w;
            last_positive = i;
            if r < running {
                return i;
            }
        }
    }
    last_positive
}

/// A piece of embedded code after its references are expanded.
#[derive(Clone, Debug, PartialEq)]
pub enum CodeSegment {
    Text(String),
    /// `<@n>` written in the code: the variable holding `<$n>` (the key).
    Variable(String),
}

/// Code ready to evaluate.
#[derive(Clone, Debug)]
pub struct CodeSource<'a> {
    pub segments: &'a [CodeSegment],
    /// The `` `…` `` in the rules, for diagnostics.
    pub span: Span,
}

/// What code may see and change.
pub struct CodeEnv<'a> {
    /// The generator `rand()` and its kin draw from (`None`: code may not draw).
    pub generator: Option<&'a mut Mt19937>,
    /// One-time values, readable and assignable through `<@n>`.
    pub memo: &'a mut Memo,
    /// Read-only variables from outside (the command line or the script).
    pub vars: &'a [(String, Value)],
}

/// Evaluates embedded code; geogen's evaluator runs it as a GeoGen Script expression.
pub trait CodeEvaluator {
    fn evaluate(&mut self, code: &CodeSource<'_>, env: CodeEnv<'_>) -> Result<Value, Diagnostic>;
}

/// An evaluator for hosts that run no code: every piece of code is an error.
#[derive(Copy, Clone, Debug, Default)]
pub struct NoCode;

impl CodeEvaluator for NoCode {
    fn evaluate(&mut self, code: &CodeSource<'_>, _env: CodeEnv<'_>) -> Result<Value, Diagnostic> {
        Err(Diagnostic::at(codes::GGE7307, code.span, "embedded code cannot run here")
            .with_hint("this host evaluates no code"))
    }
}

/// What one expansion builds: text, or (inside code) text and variables.
struct Output {
    text: String,
    segments: Vec<CodeSegment>,
    code: bool,
}

impl Output {
    fn push(&mut self, text: &str, limits: &Limits, span: Span) -> Result<(), Diagnostic> {
        if self.text.len() + text.len() > limits.max_text_len {
            return Err(Diagnostic::at(
                codes::GGE7303,
                span,
                format!("the generated text grew past the limit of {} bytes", limits.max_text_len),
            )
            .with_hint("do the rules refer to themselves without end?"));
        }
        self.text.push_str(text);
        Ok(())
    }

    fn finish(mut self) -> (String, Vec<CodeSegment>) {
        if self.code && !self.text.is_empty() {
            self.segments.push(CodeSegment::Text(std::mem::take(&mut self.text)));
        }
        (self.text, self.segments)
    }
}

/// Runs rules. One executor serves one generation (or several sharing one memo, as a script's
/// names do).
pub struct Executor<'a> {
    rules: &'a RuleSet,
    limits: &'a Limits,
    code: &'a mut dyn CodeEvaluator,
    vars: &'a [(String, Value)],
    memo: &'a mut Memo,
    random: &'a mut dyn Randomness,
    total_steps: u64,
    warnings: Vec<Diagnostic>,
}

impl<'a> Executor<'a> {
    pub fn new(
        rules: &'a RuleSet,
        limits: &'a Limits,
        code: &'a mut dyn CodeEvaluator,
        vars: &'a [(String, Value)],
        memo: &'a mut Memo,
        random: &'a mut dyn Randomness,
    ) -> Executor<'a> {
        Executor { rules, limits, code, vars, memo, random, total_steps: 0, warnings: Vec::new() }
    }

    /// Warnings so far (step limits reached with [`OnStepLimit::Truncate`]).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// Elements popped so far by every expansion (for hosts that charge work).
    pub fn steps(&self) -> u64 {
        self.total_steps
    }

    pub fn into_warnings(self) -> Vec<Diagnostic> {
        self.warnings
    }

    /// The one-time pre-pass: every `<$n>` rule without a value yet, in file order.
    pub fn prepass(&mut self) -> Result<(), Diagnostic> {
        let rules = self.rules;
        for rule in rules.rules() {
            if rule.is_one_time() && !self.memo.is_known(&rule.name) {
                self.one_time(rule, 0)?;
            }
        }
        Ok(())
    }

    /// The pre-pass, then the expansion of `start` (a nonterminal with a rule: GGE7312 otherwise).
    pub fn generate(&mut self, start: &str) -> Result<String, Diagnostic> {
        let rules = self.rules;
        let Some(rule) = rules.rule(start) else {
            return Err(unknown_start(rules, start));
        };
        self.prepass()?;
        let (text, _) = self.expand(vec![Elem::NonTerminal(rule.name.clone(), rule.span)], 0, false, rule.span)?;
        Ok(text)
    }

    fn one_time(&mut self, rule: &'a Rule, depth: usize) -> Result<Value, Diagnostic> {
        self.memo.slots.insert(rule.name.clone(), Slot::InProgress);
        let choice = self.select(rule, depth + 1)?;
        let (text, _) = self.expand(choice.elems.clone(), depth + 1, false, rule.span)?;
        let value = Value::Text(text);
        self.memo.set(&rule.name, value.clone());
        Ok(value)
    }

    /// Expands `elems` to text (or, for code, to code segments). `origin` is what is being
    /// expanded, for diagnostics.
    fn expand(
        &mut self,
        elems: Vec<Elem>,
        depth: usize,
        code: bool,
        origin: Span,
    ) -> Result<(String, Vec<CodeSegment>), Diagnostic> {
        if depth > self.limits.max_depth {
            return Err(Diagnostic::at(
                codes::GGE7302,
                origin,
                format!("code, weights and one-time rules nested more than {} deep", self.limits.max_depth),
            )
            .with_hint("does a rule's code or weight refer back to the rule?"));
        }
        let rules = self.rules;
        let mut stack: Vec<Elem> = elems.into_iter().rev().collect();
        let mut out = Output { text: String::new(), segments: Vec::new(), code };
        let mut steps = 0usize;
        while let Some(elem) = stack.pop() {
            steps += 1;
            self.total_steps += 1;
            if steps > self.limits.max_steps {
                let diagnostic = Diagnostic::at(
                    codes::GGE7301,
                    origin,
                    format!(
                        "the expansion of `{}` did not end within {} steps",
                        rules.source().snippet(origin),
                        self.limits.max_steps
                    ),
                )
                .with_hint("a rule that always refers to itself never ends; otherwise raise the limit (--max-steps N)");
                match self.limits.on_step_limit {
                    OnStepLimit::Error => return Err(diagnostic),
                    OnStepLimit::Truncate => {
                        self.warnings.push(diagnostic);
                        break;
                    }
                }
            }
            if self.total_steps > self.limits.max_total_steps {
                return Err(Diagnostic::at(
                    codes::GGE7302,
                    origin,
                    format!("the generation took more than {} steps in all", self.limits.max_total_steps),
                )
                .with_hint("do the rules refer to themselves through code or weights?"));
            }
            match elem {
                Elem::Text(text) => out.push(&text, self.limits, origin)?,
                Elem::NonTerminal(name, span) => match rules.rule(&name) {
                    Some(rule) => {
                        let choice = self.select(rule, depth)?;
                        stack.extend(choice.elems.iter().rev().cloned());
                    }
                    None => out.push(&name, self.limits, span)?,
                },
                Elem::OneTime(name, span) => {
                    if let Some(value) = self.memo.get(&name) {
                        let text = value.to_text();
                        out.push(&text, self.limits, span)?;
                    } else if self.memo.in_progress(&name) {
                        return Err(Diagnostic::at(
                            codes::GGE7306,
                            span,
                            format!("`{name}` is needed while it is being expanded"),
                        )
                        .with_hint("a one-time nonterminal cannot contain itself, directly or through others"));
                    } else if let Some(rule) = rules.rule(&name) {
                        let text = self.one_time(rule, depth)?.to_text();
                        out.push(&text, self.limits, span)?;
                    } else {
                        out.push(&name, self.limits, span)?;
                    }
                }
                Elem::OneTimeValue(key, span) => match self.memo.get(&key) {
                    Some(value) => {
                        let text = value.to_text();
                        out.push(&text, self.limits, span)?;
                    }
                    None => out.push(&format!("<@{}", &key[2..]), self.limits, span)?,
                },
                Elem::CodeVariable(key, span) => {
                    if code {
                        if !out.text.is_empty() {
                            out.segments.push(CodeSegment::Text(std::mem::take(&mut out.text)));
                        }
                        out.segments.push(CodeSegment::Variable(key));
                    } else {
                        stack.push(Elem::OneTimeValue(key, span));
                    }
                }
                Elem::Code(code_elem) => {
                    let value = self.run_code(&code_elem, depth)?;
                    out.push(&value.to_text(), self.limits, code_elem.span)?;
                }
            }
        }
        Ok(out.finish())
    }

    /// Selects one choice of a rule: a single choice at once (its weight unread, nothing drawn);
    /// otherwise every weight left to right, then one draw.
    fn select(&mut self, rule: &'a Rule, depth: usize) -> Result<&'a Choice, Diagnostic> {
        if rule.choices.len() == 1 {
            return Ok(&rule.choices[0]);
        }
        let mut weights = Vec::with_capacity(rule.choices.len());
        for choice in &rule.choices {
            let w = match &choice.weight {
                Weight::One => 1.0,
                Weight::Fixed(w, _) => *w,
                Weight::Computed(elems, span) => {
                    let (text, _) = self.expand(elems.clone(), depth + 1, false, *span)?;
                    let w = read_weight(&text, self.rules.mode());
                    if let Some(problem) = weight_problem(w) {
                        return Err(Diagnostic::at(
                            codes::GGE7304,
                            *span,
                            format!(
                                "the weight {} of `{}` came to \"{}\", which {problem}",
                                self.rules.source().snippet(*span),
                                rule.name,
                                text.escape_debug()
                            ),
                        )
                        .with_hint("a weight must come to a number, 0 or more"));
                    }
                    w
                }
            };
            weights.push(w);
        }
        let total: f64 = weights.iter().sum();
        if !total.is_finite() {
            return Err(Diagnostic::at(
                codes::GGE7304,
                rule.span,
                format!("the weights of `{}` add up to more than a Number can hold", rule.name),
            )
            .with_hint("use smaller weights: only their ratios matter"));
        }
        if total <= 0.0 {
            return Err(Diagnostic::at(
                codes::GGE7305,
                rule.span,
                format!("every choice of `{}` came to weight 0", rule.name),
            )
            .with_hint("at least one weight must be positive each time the rule is expanded"));
        }
        let index = self.random.choose(&weights, total)?;
        Ok(&rule.choices[index.min(rule.choices.len() - 1)])
    }

    fn run_code(&mut self, code: &Code, depth: usize) -> Result<Value, Diagnostic> {
        let (_, segments) = self.expand(code.parts.clone(), depth + 1, true, code.span)?;
        let env = CodeEnv { generator: self.random.generator(), memo: self.memo, vars: self.vars };
        self.code.evaluate(&CodeSource { segments: &segments, span: code.span }, env)
    }
}

pub(crate) fn unknown_start(rules: &RuleSet, start: &str) -> Diagnostic {
    let names: Vec<&str> = rules.rules().iter().map(|r| r.name.as_str()).filter(|n| !n.starts_with("<$")).collect();
    let shown: Vec<&str> = names.iter().take(12).copied().collect();
    Diagnostic::new(codes::GGE7312, format!("the rules have no rule `{start}` to start from")).with_hint(format!(
        "start from one of {}{}",
        shown.join(", "),
        if names.len() > shown.len() { ", ..." } else { "" }
    ))
}
