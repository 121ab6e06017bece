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
//!
//! **Work** is counted in units: one per element popped, one per 16 bytes of text written, per 16
//! elements pushed and per 16 choices weighed, and whatever the code evaluator reports for a piece
//! of code (geogen's: one per instruction, plus the cost of compiling and starting it). A
//! generation may do [`Limits::max_work`] units (GGE7302); a host may also hand the executor a
//! [`Budget`] shared by everything it runs (a script's instruction budget, the whole of an
//! enumeration), which code is given as its allowance.
//!
//! The machine keeps its whole state in plain data (a stack of frames, not Rust recursion), so a
//! run can stop at a choice and be copied: enumeration continues each copy with a different
//! choice instead of replaying the path from the start.

use std::collections::HashMap;

use geogen_diag::{codes, Diagnostic, Span};
use geogen_random::Mt19937;

use crate::parser::{read_weight, weight_problem};
use crate::rules::{Code, Elem, Rule, RuleSet, Weight};
use crate::value::Value;

/// How much work one generation may do.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Elements one expansion may pop: the original's iteration guard (1000). Each nested
    /// expansion (code, a computed weight, a one-time rule) has its own count.
    pub max_steps: usize,
    pub on_step_limit: OnStepLimit,
    /// Units of work (see the module documentation) one generation may do in all, its code
    /// included: GGE7302.
    pub max_work: u64,
    /// Expansions nested in each other (code in a weight in a one-time rule...).
    pub max_depth: usize,
    /// Bytes of one generated text (and of the code text handed to the evaluator).
    pub max_text_len: usize,
}

/// The default of [`Limits::max_work`] and of the work of a whole enumeration.
pub const DEFAULT_MAX_WORK: u64 = 10_000_000;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_steps: 1000,
            on_step_limit: OnStepLimit::Error,
            max_work: DEFAULT_MAX_WORK,
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

/// Work a host allows everything it runs together, in the units of [`Limits::max_work`]: a
/// script's remaining instruction budget, or the whole of an enumeration. When a run asks for
/// more, it stops with an error and the budget [is exhausted](Budget::is_exhausted): the host
/// reports that its own way (a script's GGE2505, enumeration's GGE7309).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    limit: u64,
    spent: u64,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget { limit, spent: 0 }
    }

    /// No limit but [`Limits::max_work`] per generation.
    pub fn unlimited() -> Budget {
        Budget::new(u64::MAX)
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Units spent so far (more than the limit once exhausted).
    pub fn spent(&self) -> u64 {
        self.spent
    }

    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.spent)
    }

    pub fn is_exhausted(&self) -> bool {
        self.spent > self.limit
    }

    /// Spends `units`; false once more than the limit has been spent.
    pub fn spend(&mut self, units: u64) -> bool {
        self.spent = self.spent.saturating_add(units);
        !self.is_exhausted()
    }

    fn exceeded(&self, at: Span) -> Diagnostic {
        Diagnostic::at(codes::GGE7302, at, format!("the rules used up the budget of {} units of work", self.limit))
            .with_hint("do the rules or their code do more work than they need?")
    }
}

/// Units of work of `n` bytes written, elements pushed or choices weighed.
fn bulk(n: usize) -> u64 {
    n as u64 / 16
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

    /// About the bytes a copy holds.
    fn footprint(&self) -> usize {
        self.slots
            .iter()
            .map(|(key, slot)| {
                let value = match slot {
                    Slot::Value(Value::Text(t)) => t.len(),
                    _ => 0,
                };
                key.len() + value + 64
            })
            .sum()
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
    /// Units of work the code may do (what is left of the generation's and the host's).
    pub allowance: u64,
    /// The evaluator adds the units the code did: at most `allowance` unless it stopped because
    /// the allowance ran out (then the run stops with the error of the limit that ran out).
    pub used: &'a mut u64,
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
#[derive(Clone, Debug)]
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

    fn footprint(&self) -> usize {
        self.text.len() + self.segments.iter().map(|s| 32 + segment_len(s)).sum::<usize>()
    }
}

fn segment_len(segment: &CodeSegment) -> usize {
    match segment {
        CodeSegment::Text(t) | CodeSegment::Variable(t) => t.len(),
    }
}

/// What an expansion pops.
#[derive(Copy, Clone, Debug)]
enum Item<'a> {
    Elem(&'a Elem),
    /// `<@n>` outside code: the value of `<$n>`, popped as an element of its own.
    Value(&'a str, Span),
    /// The start: a nonterminal with its rule.
    Start(&'a str, Span),
}

/// What becomes of an expansion's result.
#[derive(Copy, Clone, Debug)]
enum Then<'a> {
    /// The generated text.
    Result,
    /// The value of a one-time rule: kept, and written where it was needed (`None`: the
    /// pre-pass).
    OneTime(&'a Rule, Option<Span>),
    /// A computed weight, read by the selection below.
    Weight,
    /// Embedded code, evaluated and its value written by the expansion below.
    Code(&'a Code),
}

/// What becomes of a selected choice.
#[derive(Copy, Clone, Debug)]
enum Chosen {
    /// Its elements are pushed on the expansion below.
    Expand,
    /// It is expanded as the value of the one-time rule (written where the span says).
    OneTime(Option<Span>),
}

#[derive(Clone, Debug)]
struct Expansion<'a> {
    stack: Vec<Item<'a>>,
    out: Output,
    steps: usize,
    depth: usize,
    /// What is being expanded, for diagnostics.
    origin: Span,
    then: Then<'a>,
}

/// A selection reading its weights, left to right.
#[derive(Clone, Debug)]
struct Selection<'a> {
    rule: &'a Rule,
    depth: usize,
    weights: Vec<f64>,
    then: Chosen,
}

#[derive(Clone, Debug)]
enum Frame<'a> {
    Expand(Expansion<'a>),
    Select(Selection<'a>),
}

/// A selection whose weights are all read, waiting for its choice.
#[derive(Clone, Debug)]
pub(crate) struct Decision<'a> {
    rule: &'a Rule,
    depth: usize,
    then: Chosen,
    pub(crate) weights: Vec<f64>,
    pub(crate) total: f64,
}

/// What a machine needs from its host while it runs.
pub(crate) struct Host<'h> {
    pub(crate) code: &'h mut dyn CodeEvaluator,
    pub(crate) generator: Option<&'h mut Mt19937>,
    pub(crate) budget: &'h mut Budget,
}

/// Why [`Machine::run`] returned.
pub(crate) enum Pause {
    /// A selection waits for its choice ([`Machine::take_decision`]).
    Choice,
    /// Nothing is left to do: the text of the start, if there was one.
    Finished(Option<String>),
}

/// The state of a run, in plain data: it can be copied at a choice and each copy continued.
#[derive(Clone, Debug)]
pub(crate) struct Machine<'a> {
    rules: &'a RuleSet,
    limits: &'a Limits,
    vars: &'a [(String, Value)],
    pub(crate) memo: Memo,
    frames: Vec<Frame<'a>>,
    /// The next rule the pre-pass looks at.
    prepass: usize,
    /// The start, expanded after the pre-pass.
    start: Option<&'a Rule>,
    result: Option<String>,
    /// Elements popped.
    pub(crate) steps: u64,
    /// Units of work done.
    pub(crate) work: u64,
    pub(crate) warnings: Vec<Diagnostic>,
}

impl<'a> Machine<'a> {
    /// A machine that runs the pre-pass, then expands `start` if there is one.
    pub(crate) fn new(
        rules: &'a RuleSet,
        limits: &'a Limits,
        vars: &'a [(String, Value)],
        memo: Memo,
        start: Option<&'a Rule>,
    ) -> Machine<'a> {
        Machine {
            rules,
            limits,
            vars,
            memo,
            frames: Vec::new(),
            prepass: 0,
            start,
            result: None,
            steps: 0,
            work: 0,
            warnings: Vec::new(),
        }
    }

    /// About the bytes a copy holds.
    pub(crate) fn footprint(&self) -> usize {
        let frames: usize = self
            .frames
            .iter()
            .map(|frame| {
                std::mem::size_of::<Frame<'_>>()
                    + match frame {
                        Frame::Expand(e) => e.stack.len() * std::mem::size_of::<Item<'_>>() + e.out.footprint(),
                        Frame::Select(s) => s.weights.len() * std::mem::size_of::<f64>(),
                    }
            })
            .sum();
        let warnings: usize = self.warnings.iter().map(|w| 128 + w.message.len()).sum();
        frames + self.memo.footprint() + warnings + self.result.as_ref().map_or(0, String::len)
    }

    /// Runs until a selection waits for its choice or nothing is left to do.
    pub(crate) fn run(&mut self, host: &mut Host<'_>) -> Result<Pause, Diagnostic> {
        loop {
            match self.frames.last_mut() {
                None => {
                    if !self.next_task(host.budget)? {
                        return Ok(Pause::Finished(self.result.take()));
                    }
                }
                Some(Frame::Select(selection)) => {
                    let rule = selection.rule;
                    let index = selection.weights.len();
                    let Some(choice) = rule.choices.get(index) else {
                        self.weigh(host.budget)?;
                        return Ok(Pause::Choice);
                    };
                    match &choice.weight {
                        Weight::One => selection.weights.push(1.0),
                        Weight::Fixed(w, _) => selection.weights.push(*w),
                        Weight::Computed(elems, span) => {
                            let depth = selection.depth + 1;
                            self.begin(elems, depth, *span, Then::Weight, false)?;
                        }
                    }
                }
                Some(Frame::Expand(expansion)) => match expansion.stack.pop() {
                    Some(item) => self.step(item, host)?,
                    None => self.finish(host)?,
                },
            }
        }
    }

    /// The waiting selection, taken off the machine; [`Machine::decide`] applies its choice.
    pub(crate) fn take_decision(&mut self) -> Result<Decision<'a>, Diagnostic> {
        match self.frames.pop() {
            Some(Frame::Select(s)) => {
                let total = s.weights.iter().sum();
                Ok(Decision { rule: s.rule, depth: s.depth, then: s.then, weights: s.weights, total })
            }
            _ => Err(Diagnostic::new(codes::GGE5000, "no Lodestone selection waits for a choice")),
        }
    }

    /// Continues with choice `index` of `decision`.
    pub(crate) fn decide(
        &mut self,
        decision: &Decision<'a>,
        index: usize,
        budget: &mut Budget,
    ) -> Result<(), Diagnostic> {
        self.apply(decision.rule, decision.depth, decision.then, index, budget)
    }

    /// Starts the next one-time rule of the pre-pass, or the start; false when all are done.
    fn next_task(&mut self, budget: &mut Budget) -> Result<bool, Diagnostic> {
        let rules = self.rules.rules();
        while let Some(rule) = rules.get(self.prepass) {
            self.prepass += 1;
            if rule.is_one_time() && !self.memo.is_known(&rule.name) {
                self.one_time(rule, 0, None, budget)?;
                return Ok(true);
            }
        }
        match self.start.take() {
            Some(rule) => {
                self.check_depth(0, rule.span)?;
                self.frames.push(Frame::Expand(Expansion {
                    stack: vec![Item::Start(&rule.name, rule.span)],
                    out: Output { text: String::new(), segments: Vec::new(), code: false },
                    steps: 0,
                    depth: 0,
                    origin: rule.span,
                    then: Then::Result,
                }));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn check_depth(&self, depth: usize, origin: Span) -> Result<(), Diagnostic> {
        if depth > self.limits.max_depth {
            return Err(Diagnostic::at(
                codes::GGE7302,
                origin,
                format!("code, weights and one-time rules nested more than {} deep", self.limits.max_depth),
            )
            .with_hint("does a rule's code or weight refer back to the rule?"));
        }
        Ok(())
    }

    /// Starts a nested expansion of `elems`.
    fn begin(
        &mut self,
        elems: &'a [Elem],
        depth: usize,
        origin: Span,
        then: Then<'a>,
        code: bool,
    ) -> Result<(), Diagnostic> {
        self.check_depth(depth, origin)?;
        self.frames.push(Frame::Expand(Expansion {
            stack: elems.iter().rev().map(Item::Elem).collect(),
            out: Output { text: String::new(), segments: Vec::new(), code },
            steps: 0,
            depth,
            origin,
            then,
        }));
        Ok(())
    }

    /// Charges `units` of work, to the generation and to the host's budget.
    fn charge(&mut self, units: u64, budget: &mut Budget, at: Span) -> Result<(), Diagnostic> {
        self.work = self.work.saturating_add(units);
        if !budget.spend(units) {
            return Err(budget.exceeded(at));
        }
        if self.work > self.limits.max_work {
            return Err(Diagnostic::at(
                codes::GGE7302,
                at,
                format!(
                    "the generation took more than {} units of work in all (steps of the rules and instructions of their code)",
                    self.limits.max_work
                ),
            )
            .with_hint("do the rules refer to themselves through code or weights? (--max-work N raises the limit)"));
        }
        Ok(())
    }

    fn top(&mut self) -> Result<&mut Expansion<'a>, Diagnostic> {
        match self.frames.last_mut() {
            Some(Frame::Expand(e)) => Ok(e),
            _ => Err(Diagnostic::new(codes::GGE5000, "no Lodestone expansion to write to")),
        }
    }

    /// Writes text to the expansion on top.
    fn write(&mut self, text: &str, span: Span, budget: &mut Budget) -> Result<(), Diagnostic> {
        let limits = self.limits;
        self.top()?.out.push(text, limits, span)?;
        self.charge(bulk(text.len()), budget, span)
    }

    /// Pops one item of the expansion on top.
    fn step(&mut self, item: Item<'a>, host: &mut Host<'_>) -> Result<(), Diagnostic> {
        let limits = self.limits;
        let rules = self.rules;
        let expansion = self.top()?;
        expansion.steps += 1;
        let (origin, depth, code) = (expansion.origin, expansion.depth, expansion.out.code);
        if expansion.steps > limits.max_steps {
            let diagnostic = Diagnostic::at(
                codes::GGE7301,
                origin,
                format!(
                    "the expansion of `{}` did not end within {} steps",
                    rules.source().snippet(origin),
                    limits.max_steps
                ),
            )
            .with_hint("a rule that always refers to itself never ends; otherwise raise the limit (--max-steps N)");
            match limits.on_step_limit {
                OnStepLimit::Error => return Err(diagnostic),
                OnStepLimit::Truncate => {
                    expansion.stack.clear();
                    self.warnings.push(diagnostic);
                    return Ok(());
                }
            }
        }
        self.steps += 1;
        self.charge(1, host.budget, origin)?;
        let (name, span) = match item {
            Item::Start(name, span) => (name, span),
            Item::Elem(Elem::NonTerminal(name, span)) => (name.as_str(), *span),
            Item::Value(key, span) => return self.one_time_value(key, span, host.budget),
            Item::Elem(Elem::Text(text)) => return self.write(text, origin, host.budget),
            Item::Elem(Elem::OneTime(name, span)) => return self.one_time_elem(name, *span, depth, host.budget),
            Item::Elem(Elem::OneTimeValue(key, span)) => return self.one_time_value(key, *span, host.budget),
            Item::Elem(Elem::CodeVariable(key, span)) => {
                let expansion = self.top()?;
                if code {
                    if !expansion.out.text.is_empty() {
                        let text = std::mem::take(&mut expansion.out.text);
                        expansion.out.segments.push(CodeSegment::Text(text));
                    }
                    expansion.out.segments.push(CodeSegment::Variable(key.clone()));
                } else {
                    expansion.stack.push(Item::Value(key, *span));
                }
                return Ok(());
            }
            Item::Elem(Elem::Code(code_elem)) => {
                return self.begin(&code_elem.parts, depth + 1, code_elem.span, Then::Code(code_elem), true)
            }
        };
        match rules.rule(name) {
            Some(rule) => self.select(rule, depth, Chosen::Expand, host.budget),
            None => self.write(name, span, host.budget),
        }
    }

    /// `<$n>` in an expansion: its value, expanded first if it has none yet.
    fn one_time_elem(&mut self, name: &str, span: Span, depth: usize, budget: &mut Budget) -> Result<(), Diagnostic> {
        if let Some(value) = self.memo.get(name) {
            let text = value.to_text();
            return self.write(&text, span, budget);
        }
        if self.memo.in_progress(name) {
            return Err(Diagnostic::at(codes::GGE7306, span, format!("`{name}` is needed while it is being expanded"))
                .with_hint("a one-time nonterminal cannot contain itself, directly or through others"));
        }
        let rules = self.rules;
        match rules.rule(name) {
            Some(rule) => self.one_time(rule, depth, Some(span), budget),
            None => self.write(name, span, budget),
        }
    }

    /// `<@n>` outside code: the value of `<$n>`, or `<@n>` as it is when it has none.
    fn one_time_value(&mut self, key: &str, span: Span, budget: &mut Budget) -> Result<(), Diagnostic> {
        let text = match self.memo.get(key) {
            Some(value) => value.to_text(),
            None => format!("<@{}", key.get(2..).unwrap_or_default()),
        };
        self.write(&text, span, budget)
    }

    /// Starts the expansion of a one-time rule (selection first).
    fn one_time(
        &mut self,
        rule: &'a Rule,
        depth: usize,
        at: Option<Span>,
        budget: &mut Budget,
    ) -> Result<(), Diagnostic> {
        self.memo.slots.insert(rule.name.clone(), Slot::InProgress);
        self.select(rule, depth + 1, Chosen::OneTime(at), budget)
    }

    /// Selects one choice of a rule: a single choice at once (its weight unread, nothing drawn);
    /// otherwise a selection that reads every weight left to right, then waits for the choice.
    fn select(&mut self, rule: &'a Rule, depth: usize, then: Chosen, budget: &mut Budget) -> Result<(), Diagnostic> {
        if rule.choices.len() == 1 {
            return self.apply(rule, depth, then, 0, budget);
        }
        self.frames.push(Frame::Select(Selection {
            rule,
            depth,
            weights: Vec::with_capacity(rule.choices.len()),
            then,
        }));
        Ok(())
    }

    /// Checks the weights of the selection on top once they are all read.
    fn weigh(&mut self, budget: &mut Budget) -> Result<(), Diagnostic> {
        let Some(Frame::Select(selection)) = self.frames.last() else {
            return Err(Diagnostic::new(codes::GGE5000, "no Lodestone selection to weigh"));
        };
        let rule = selection.rule;
        let total: f64 = selection.weights.iter().sum();
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
        self.charge(bulk(rule.choices.len()), budget, rule.span)
    }

    /// Goes on with choice `index` of `rule`.
    fn apply(
        &mut self,
        rule: &'a Rule,
        depth: usize,
        then: Chosen,
        index: usize,
        budget: &mut Budget,
    ) -> Result<(), Diagnostic> {
        let Some(choice) = rule.choices.get(index).or(rule.choices.last()) else {
            return Err(Diagnostic::at(codes::GGE5000, rule.span, format!("`{}` has no choices", rule.name)));
        };
        match then {
            Chosen::Expand => {
                self.top()?.stack.extend(choice.elems.iter().rev().map(Item::Elem));
                self.charge(bulk(choice.elems.len()), budget, rule.span)
            }
            Chosen::OneTime(at) => self.begin(&choice.elems, depth, rule.span, Then::OneTime(rule, at), false),
        }
    }

    /// Ends the expansion on top and hands its result on.
    fn finish(&mut self, host: &mut Host<'_>) -> Result<(), Diagnostic> {
        let Some(Frame::Expand(expansion)) = self.frames.pop() else {
            return Err(Diagnostic::new(codes::GGE5000, "no Lodestone expansion to finish"));
        };
        let (text, segments) = expansion.out.finish();
        match expansion.then {
            Then::Result => {
                self.result = Some(text);
                Ok(())
            }
            Then::OneTime(rule, at) => {
                self.memo.set(&rule.name, Value::Text(text.clone()));
                match at {
                    Some(span) => self.write(&text, span, host.budget),
                    None => Ok(()),
                }
            }
            Then::Weight => self.take_weight(&text),
            Then::Code(code) => {
                let allowance = self.limits.max_work.saturating_sub(self.work).min(host.budget.remaining());
                let mut used = 0;
                let env = CodeEnv {
                    generator: host.generator.as_deref_mut(),
                    memo: &mut self.memo,
                    vars: self.vars,
                    allowance,
                    used: &mut used,
                };
                let result = host.code.evaluate(&CodeSource { segments: &segments, span: code.span }, env);
                self.charge(used, host.budget, code.span)?;
                let text = result?.to_text();
                self.write(&text, code.span, host.budget)
            }
        }
    }

    /// A computed weight for the selection on top.
    fn take_weight(&mut self, text: &str) -> Result<(), Diagnostic> {
        let rules = self.rules;
        let Some(Frame::Select(selection)) = self.frames.last_mut() else {
            return Err(Diagnostic::new(codes::GGE5000, "no Lodestone selection for a weight"));
        };
        let rule = selection.rule;
        let span = match rule.choices.get(selection.weights.len()).map(|c| &c.weight) {
            Some(Weight::Computed(_, span)) => *span,
            _ => rule.span,
        };
        let w = read_weight(text, rules.mode());
        if let Some(problem) = weight_problem(w) {
            return Err(Diagnostic::at(
                codes::GGE7304,
                span,
                format!(
                    "the weight {} of `{}` came to \"{}\", which {problem}",
                    rules.source().snippet(span),
                    rule.name,
                    text.escape_debug()
                ),
            )
            .with_hint("a weight must come to a number, 0 or more"));
        }
        selection.weights.push(w);
        Ok(())
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
    budget: Option<&'a mut Budget>,
    steps: u64,
    work: u64,
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
        Executor { rules, limits, code, vars, memo, random, budget: None, steps: 0, work: 0, warnings: Vec::new() }
    }

    /// Charges the work of this executor to `budget` as well (see [`Budget`]).
    pub fn with_budget(mut self, budget: &'a mut Budget) -> Executor<'a> {
        self.budget = Some(budget);
        self
    }

    /// Warnings so far (step limits reached with [`OnStepLimit::Truncate`]).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// Elements popped so far by every expansion.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Units of work done so far, code included (see [`Limits::max_work`]).
    pub fn work(&self) -> u64 {
        self.work
    }

    pub fn into_warnings(self) -> Vec<Diagnostic> {
        self.warnings
    }

    /// The one-time pre-pass: every `<$n>` rule without a value yet, in file order.
    pub fn prepass(&mut self) -> Result<(), Diagnostic> {
        self.drive(None).map(|_| ())
    }

    /// The pre-pass, then the expansion of `start` (a nonterminal with a rule: GGE7312 otherwise).
    pub fn generate(&mut self, start: &str) -> Result<String, Diagnostic> {
        let rules = self.rules;
        let Some(rule) = rules.rule(start) else {
            return Err(unknown_start(rules, start));
        };
        Ok(self.drive(Some(rule))?.unwrap_or_default())
    }

    /// Runs a machine to the end, drawing each choice from the generator.
    fn drive(&mut self, start: Option<&'a Rule>) -> Result<Option<String>, Diagnostic> {
        let mut machine = Machine::new(self.rules, self.limits, self.vars, std::mem::take(self.memo), start);
        machine.steps = self.steps;
        machine.work = self.work;
        let mut unlimited = Budget::unlimited();
        let budget: &mut Budget = match self.budget.as_deref_mut() {
            Some(budget) => budget,
            None => &mut unlimited,
        };
        let result = loop {
            let mut host = Host { code: &mut *self.code, generator: self.random.generator(), budget: &mut *budget };
            match machine.run(&mut host) {
                Err(d) => break Err(d),
                Ok(Pause::Finished(text)) => break Ok(text),
                Ok(Pause::Choice) => {}
            }
            let decided = machine.take_decision().and_then(|decision| {
                let index = self.random.choose(&decision.weights, decision.total)?;
                machine.decide(&decision, index, budget)
            });
            if let Err(d) = decided {
                break Err(d);
            }
        };
        *self.memo = machine.memo;
        self.steps = machine.steps;
        self.work = machine.work;
        self.warnings.append(&mut machine.warnings);
        result
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
