//! Every output of a rule set with its exact probability (`geogen names --enumerate`).
//!
//! The executor is run again and again with a chooser that walks the tree of random choices depth
//! first: each run follows a recorded path of choices and records the choices met beyond it, then
//! the path moves to the next untried choice. Every run ends in one output with the product of its
//! choices' probabilities; outputs reached by several paths add up. This covers everything a run
//! can do (computed weights, one-time values, deterministic code) without a second interpreter.
//! Code that draws random numbers cannot be enumerated, nor can infinitely many outputs: a path
//! that does not end within the step limit, more outputs or runs than the limits, are GGE7309.

use std::collections::HashMap;

use geogen_diag::{codes, Diagnostic};
use geogen_random::Mt19937;

use crate::exec::{CodeEvaluator, Executor, Limits, Memo, OnStepLimit, Randomness};
use crate::rules::RuleSet;
use crate::value::Value;

/// One possible output.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub text: String,
    pub probability: f64,
    /// The probability as a reduced fraction, when every weight on every path to this output is
    /// a whole number (and the arithmetic fits in 128 bits).
    pub fraction: Option<Fraction>,
}

/// `numerator / denominator`, reduced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fraction {
    pub numerator: u128,
    pub denominator: u128,
}

impl Fraction {
    pub const ONE: Fraction = Fraction { numerator: 1, denominator: 1 };

    fn new(numerator: u128, denominator: u128) -> Fraction {
        let g = gcd(numerator, denominator).max(1);
        Fraction { numerator: numerator / g, denominator: denominator / g }
    }

    fn times(self, numerator: u128, denominator: u128) -> Option<Fraction> {
        // Cross-reduce first so that the products stay small.
        let g1 = gcd(self.numerator, denominator).max(1);
        let g2 = gcd(numerator, self.denominator).max(1);
        let n = (self.numerator / g1).checked_mul(numerator / g2)?;
        let d = (self.denominator / g2).checked_mul(denominator / g1)?;
        Some(Fraction::new(n, d))
    }

    fn plus(self, other: Fraction) -> Option<Fraction> {
        let g = gcd(self.denominator, other.denominator).max(1);
        let d = (self.denominator / g).checked_mul(other.denominator)?;
        let a = self.numerator.checked_mul(other.denominator / g)?;
        let b = other.numerator.checked_mul(self.denominator / g)?;
        Some(Fraction::new(a.checked_add(b)?, d))
    }
}

impl std::fmt::Display for Fraction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.numerator, self.denominator)
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// How far enumeration may go.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumerationLimits {
    /// Different outputs.
    pub max_outputs: usize,
    /// Paths through the choices (runs of the executor).
    pub max_paths: u64,
}

impl Default for EnumerationLimits {
    fn default() -> EnumerationLimits {
        EnumerationLimits { max_outputs: 10_000, max_paths: 1_000_000 }
    }
}

struct Branch {
    chosen: usize,
    weights: Vec<f64>,
}

/// The chooser of one run: follows `path`, extends it with the first positive choice.
struct Replay<'p> {
    path: &'p mut Vec<Branch>,
    at: usize,
    probability: f64,
    fraction: Option<Fraction>,
}

/// A weight as a whole number, if it is one that fits.
fn whole(w: f64) -> Option<u128> {
    (w.fract() == 0.0 && (0.0..9.0e15).contains(&w)).then_some(w as u128)
}

impl Randomness for Replay<'_> {
    fn choose(&mut self, weights: &[f64], total: f64) -> Result<usize, Diagnostic> {
        let index = if self.at < self.path.len() {
            self.path[self.at].chosen
        } else {
            let first = weights.iter().position(|&w| w > 0.0).unwrap_or(0);
            self.path.push(Branch { chosen: first, weights: weights.to_vec() });
            first
        };
        self.at += 1;
        let w = weights.get(index).copied().unwrap_or(0.0);
        self.probability *= w / total;
        let sum: Option<u128> = weights.iter().try_fold(0u128, |acc, &x| acc.checked_add(whole(x)?));
        self.fraction = match (self.fraction, whole(w), sum) {
            (Some(f), Some(n), Some(d)) if d > 0 => f.times(n, d),
            _ => None,
        };
        Ok(index)
    }

    fn generator(&mut self) -> Option<&mut Mt19937> {
        None
    }
}

/// Moves the path to the next untried choice; false when every path has been run.
fn advance(path: &mut Vec<Branch>) -> bool {
    while let Some(last) = path.last_mut() {
        if let Some(next) = (last.chosen + 1..last.weights.len()).find(|&i| last.weights[i] > 0.0) {
            last.chosen = next;
            return true;
        }
        path.pop();
    }
    false
}

/// Every output of `start` with its probability, most likely first (ties in text order). Each
/// run has a fresh memo, as each name of `geogen names` does.
pub fn enumerate(
    rules: &RuleSet,
    start: &str,
    limits: &Limits,
    enumeration: &EnumerationLimits,
    code: &mut dyn CodeEvaluator,
    vars: &[(String, Value)],
) -> Result<Vec<Outcome>, Diagnostic> {
    let limits = Limits { on_step_limit: OnStepLimit::Error, ..limits.clone() };
    let mut outcomes: HashMap<String, (f64, Option<Fraction>)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut path: Vec<Branch> = Vec::new();
    let mut paths = 0u64;
    loop {
        paths += 1;
        if paths > enumeration.max_paths {
            return Err(not_enumerable(format!(
                "the rules have more than {} paths through their choices",
                enumeration.max_paths
            )));
        }
        let mut memo = Memo::new();
        let mut replay = Replay { path: &mut path, at: 0, probability: 1.0, fraction: Some(Fraction::ONE) };
        let result = Executor::new(rules, &limits, code, vars, &mut memo, &mut replay).generate(start);
        let (probability, fraction) = (replay.probability, replay.fraction);
        let text = match result {
            Ok(text) => text,
            Err(d) if d.code == codes::GGE7301 || d.code == codes::GGE7302 || d.code == codes::GGE7303 => {
                return Err(not_enumerable(format!(
                    "a path through the choices does not end ({}), so the outputs may be infinitely many",
                    d.message
                )))
            }
            Err(d) => return Err(d),
        };
        match outcomes.get_mut(&text) {
            Some((p, f)) => {
                *p += probability;
                *f = match (*f, fraction) {
                    (Some(a), Some(b)) => a.plus(b),
                    _ => None,
                };
            }
            None => {
                if outcomes.len() == enumeration.max_outputs {
                    return Err(not_enumerable(format!(
                        "the rules have more than {} outputs",
                        enumeration.max_outputs
                    )));
                }
                order.push(text.clone());
                outcomes.insert(text, (probability, fraction));
            }
        }
        if !advance(&mut path) {
            break;
        }
    }
    let mut list: Vec<Outcome> = order
        .into_iter()
        .map(|text| {
            let (probability, fraction) = outcomes[&text];
            Outcome { text, probability, fraction }
        })
        .collect();
    list.sort_by(|a, b| b.probability.total_cmp(&a.probability).then_with(|| a.text.cmp(&b.text)));
    Ok(list)
}

fn not_enumerable(message: String) -> Diagnostic {
    Diagnostic::new(codes::GGE7309, message)
        .with_hint("--enumerate lists finite rule sets; sample them with -n N instead (or raise --max-outputs)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_reduce_and_add() {
        let third = Fraction::ONE.times(1, 3).unwrap();
        assert_eq!(third, Fraction { numerator: 1, denominator: 3 });
        let sixth = third.times(3, 6).unwrap();
        assert_eq!(sixth.to_string(), "1/6");
        assert_eq!(third.plus(sixth).unwrap().to_string(), "1/2");
        assert_eq!(Fraction { numerator: u128::MAX, denominator: 1 }.times(2, 1), None);
    }
}
