//! Lodestone: a weighted generative grammar for names and labels (spec §9; the language is
//! described in `docs/lodestone.md`).
//!
//! ```text
//! <river> => <adjective> River [3] | River <name>;
//! <adjective> => Red | Silver | Cold;
//! <name> => Aln | Tyne | `randElement({"Esk", "Wear"})`;
//! ```
//!
//! The pipeline: [`lexer`] (rule text to tokens, the original's token classes and precedence),
//! `parser` (tokens to a [`RuleSet`] of merged rules with weighted choices, every error with its
//! line and column), [`exec`] (the stack machine, seeded), [`enumerate`](mod@enumerate) (every
//! output with its exact probability). Embedded code is evaluated by a [`CodeEvaluator`] the host
//! provides; geogen's runs it as a GeoGen Script expression in the script sandbox.
//!
//! Randomness is seeded: the n-th name of a run comes from its own generator, MT19937 seeded with
//! [`name_seed`]`(seed, rules, start, n)`, so it does not change when more names are asked for and is
//! the same on every machine.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]

mod enumerate;
pub mod exec;
mod lexer;
mod parser;
mod rules;
mod value;

use std::sync::Arc;

use geogen_diag::{codes, Diagnostic, Diagnostics, SourceFile, Span};
use geogen_random::{combine_seeds, hash_str};

pub use enumerate::{enumerate, EnumerationLimits, Fraction, Outcome};
pub use exec::{
    pick, Budget, CodeEnv, CodeEvaluator, CodeSegment, CodeSource, Executor, Limits, Memo, NoCode, OnStepLimit,
    Randomness, Seeded, DEFAULT_MAX_WORK,
};
pub use rules::{Choice, Code, Elem, Rule, RuleSet, Weight};
pub use value::{js_number, parse_float, Value};

/// How rule text is read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// geogen's Lodestone: escapes (`Dragon\'s Lair`), raw embedded code, spaces allowed just
    /// inside backquotes and brackets, weights that must be numbers.
    #[default]
    Extended,
    /// The original's reading: no escapes, code and weights re-lexed as rules (so they cannot
    /// hold `;`, `'`, a lone `<`...), weights read by `parseFloat`.
    Strict,
}

/// The default largest rule text: 4 MiB.
pub const DEFAULT_MAX_RULES_BYTES: usize = 4 << 20;

/// Parses rule text. Every lexical and syntax error is reported (at most
/// [`geogen_diag::MAX_DIAGNOSTICS`] kept), each with its span in `file`.
pub fn parse(file: Arc<SourceFile>, mode: Mode) -> Result<RuleSet, Diagnostics> {
    if file.text().len() > DEFAULT_MAX_RULES_BYTES {
        return Err(too_large(DEFAULT_MAX_RULES_BYTES).into());
    }
    parser::parse(file, mode)
}

/// Parses the bytes of a rule file: not UTF-8 is GGE7108, more than `max_bytes` GGE7107.
pub fn parse_bytes(
    name: &str,
    bytes: &[u8],
    mode: Mode,
    max_bytes: usize,
) -> Result<RuleSet, (Diagnostics, SourceFile)> {
    if bytes.len() > max_bytes {
        return Err((too_large(max_bytes).into(), SourceFile::new(name, "")));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let file = Arc::new(SourceFile::new(name, text));
            parser::parse(Arc::clone(&file), mode).map_err(|d| (d, (*file).clone()))
        }
        Err(error) => {
            let at = error.valid_up_to() as u32;
            let shown = String::from_utf8_lossy(bytes).into_owned();
            let d = Diagnostic::at(codes::GGE7108, Span::new(at, at + 3), "the rules are not valid UTF-8 text")
                .with_hint("save the rule file as UTF-8");
            Err((d.into(), SourceFile::new(name, shown)))
        }
    }
}

fn too_large(max_bytes: usize) -> Diagnostic {
    Diagnostic::new(codes::GGE7107, format!("the rules are larger than the limit of {max_bytes} bytes"))
        .with_hint("is this the right file?")
}

/// The seed of the `index`-th name generated from `start`: the seed, the rules (their text's
/// hash) and the start together, so that different rule sets and starts give unrelated names.
pub fn name_seed(seed: u32, rules: &RuleSet, start: &str, index: u32) -> u32 {
    combine_seeds(&[seed, rules.hash(), hash_str(start), index])
}

/// The seed of the `attempt`-th re-roll (from 1) of the `index`-th name (`--distinct`).
pub fn retry_seed(seed: u32, rules: &RuleSet, start: &str, index: u32, attempt: u32) -> u32 {
    if attempt == 0 {
        return name_seed(seed, rules, start, index);
    }
    combine_seeds(&[seed, rules.hash(), hash_str(start), index, attempt])
}

/// The seed of a shared one-time pre-pass (a script's names share their `<$n>` values per rule
/// set): independent of which name is asked for first.
pub fn one_time_seed(seed: u32, rules: &RuleSet) -> u32 {
    /// "ONCE".
    const MARK: u32 = 0x4F4E_4345;
    combine_seeds(&[seed, rules.hash(), MARK])
}

/// The start a user names: `river` and `<river>` both mean `<river>`.
pub fn start_name(start: &str) -> String {
    if start.starts_with('<') {
        start.to_string()
    } else {
        format!("<{start}>")
    }
}

/// One generated text and the warnings on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub text: String,
    pub warnings: Vec<Diagnostic>,
}

/// Generates one text from a fresh memo with the generator seeded by `seed`: the pre-pass, then
/// `start`.
pub fn generate(
    rules: &RuleSet,
    start: &str,
    seed: u32,
    limits: &Limits,
    code: &mut dyn CodeEvaluator,
    vars: &[(String, Value)],
) -> Result<Generated, Diagnostic> {
    let mut memo = Memo::new();
    let mut random = Seeded::new(seed);
    let mut executor = Executor::new(rules, limits, code, vars, &mut memo, &mut random);
    let text = executor.generate(start)?;
    Ok(Generated { text, warnings: executor.into_warnings() })
}

/// What [`names`] makes.
#[derive(Clone, Debug, PartialEq)]
pub struct Names {
    pub names: Vec<String>,
    pub warnings: Vec<Diagnostic>,
}

/// Which names [`names`] makes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    pub seed: u32,
    pub count: u32,
    /// `Some(tries)`: no name twice, a repeat drawn again up to `tries` times.
    pub distinct: Option<u32>,
}

/// `count` names from `start`, the i-th from [`name_seed`]`(seed, rules, start, i)` and a fresh
/// memo. With `distinct = Some(tries)`, a name equal to an earlier one is drawn again, from
/// [`retry_seed`], up to `tries` times (GGE7310 when they run out). Either way the first names do
/// not change when more are asked for.
pub fn names(
    rules: &RuleSet,
    start: &str,
    batch: Batch,
    limits: &Limits,
    code: &mut dyn CodeEvaluator,
    vars: &[(String, Value)],
) -> Result<Names, Diagnostic> {
    let Batch { seed, count, distinct } = batch;
    if rules.rule(start).is_none() {
        return Err(exec::unknown_start(rules, start));
    }
    let mut made = Names { names: Vec::new(), warnings: Vec::new() };
    let mut seen = std::collections::HashSet::new();
    for index in 0..count {
        let tries = distinct.unwrap_or(0);
        let mut found = None;
        for attempt in 0..=tries {
            let seed = retry_seed(seed, rules, start, index, attempt);
            let generated = generate(rules, start, seed, limits, code, vars)?;
            made.warnings.extend(generated.warnings);
            if distinct.is_none() || !seen.contains(&generated.text) {
                found = Some(generated.text);
                break;
            }
        }
        let Some(name) = found else {
            return Err(Diagnostic::new(
                codes::GGE7310,
                format!(
                    "found only {} different names; the next was still a repeat after {tries} tries",
                    made.names.len()
                ),
            )
            .with_hint(
                "ask for fewer names, allow more tries (--max-tries N), or see how many there are with --enumerate",
            ));
        };
        seen.insert(name.clone());
        made.names.push(name);
    }
    Ok(made)
}
