//! Every output of a rule set with its exact probability (`geogen names --enumerate`).
//!
//! The executor's machine runs until a rule's weights are read and its choice is due; there the
//! run is copied, and each copy goes on with one of the choices, depth first (the first choice
//! first, as a path through the choices would be listed). So each choice point is reached once,
//! whatever number of paths go through it, and the work is proportional to the choices explored.
//! Every path ends in one output with the product of its choices' probabilities; outputs reached
//! by several paths add up. This covers everything a run can do (computed weights, one-time
//! values, deterministic code) without a second interpreter. Code that draws random numbers
//! cannot be enumerated, nor can infinitely many outputs: a path that does not end within the
//! step limit, more outputs or paths than the limits, or more work in all than
//! [`EnumerationLimits::max_work`] (the steps, the code, the copies and the outputs kept
//! together) are GGE7309.

use std::collections::HashMap;

use geogen_diag::{codes, Diagnostic};

use crate::exec::{
    unknown_start, Budget, CodeEvaluator, Decision, Host, Limits, Machine, Memo, OnStepLimit, Pause, DEFAULT_MAX_WORK,
};
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
    /// Paths through the choices.
    pub max_paths: u64,
    /// Units of work (see [`Limits::max_work`]) all the paths may do together, the copies of a
    /// run made at each choice and the outputs kept included.
    pub max_work: u64,
}

impl Default for EnumerationLimits {
    fn default() -> EnumerationLimits {
        EnumerationLimits { max_outputs: 10_000, max_paths: 1_000_000, max_work: DEFAULT_MAX_WORK }
    }
}

/// A weight as a whole number, if it is one that fits.
fn whole(w: f64) -> Option<u128> {
    (w.fract() == 0.0 && (0.0..9.0e15).contains(&w)).then_some(w as u128)
}

/// A run on its way to an output, with the probability of the choices made so far.
struct Path<'a> {
    machine: Machine<'a>,
    probability: f64,
    fraction: Option<Fraction>,
}

/// The choices of one choice point still to explore.
struct Branches<'a> {
    /// The run waiting for the choice (taken by the last choice).
    machine: Option<Machine<'a>>,
    decision: Decision<'a>,
    /// The weights' sum as a whole number, when they all are whole numbers.
    whole_total: Option<u128>,
    /// The next choice to explore (one of positive weight).
    next: usize,
    /// Whether `next` is the first choice, which goes on with the path that reached the choice
    /// point rather than starting a new one.
    first: bool,
    probability: f64,
    fraction: Option<Fraction>,
}

impl<'a> Branches<'a> {
    /// The path of the next choice; the branches are done when `next` is `None` afterwards.
    fn take(&mut self, budget: &mut Budget) -> Result<(Path<'a>, bool), Diagnostic> {
        let index = self.next;
        let weights = &self.decision.weights;
        let following = (index + 1..weights.len()).find(|&i| weights[i] > 0.0);
        let mut machine = match (following, &self.machine) {
            (Some(next), Some(machine)) => {
                self.next = next;
                // A copy costs about its size.
                let footprint = machine.footprint() as u64;
                if !budget.spend(footprint / 16 + 1) {
                    return Err(Diagnostic::new(codes::GGE7302, "the enumeration used up its budget"));
                }
                machine.clone()
            }
            _ => self
                .machine
                .take()
                .ok_or_else(|| Diagnostic::new(codes::GGE5000, "a Lodestone choice point was explored twice"))?,
        };
        machine.decide(&self.decision, index, budget)?;
        let w = weights.get(index).copied().unwrap_or(0.0);
        let probability = self.probability * (w / self.decision.total);
        let fraction = match (self.fraction, whole(w), self.whole_total) {
            (Some(f), Some(n), Some(d)) if d > 0 => f.times(n, d),
            _ => None,
        };
        Ok((Path { machine, probability, fraction }, following.is_none()))
    }
}

/// Every output of `start` with its probability, most likely first (ties in text order). Each
/// path starts from a fresh memo, as each name of `geogen names` does.
pub fn enumerate(
    rules: &RuleSet,
    start: &str,
    limits: &Limits,
    enumeration: &EnumerationLimits,
    code: &mut dyn CodeEvaluator,
    vars: &[(String, Value)],
) -> Result<Vec<Outcome>, Diagnostic> {
    let limits = Limits { on_step_limit: OnStepLimit::Error, ..limits.clone() };
    let Some(rule) = rules.rule(start) else {
        return Err(unknown_start(rules, start));
    };
    let mut budget = Budget::new(enumeration.max_work);
    let mut outcomes: HashMap<String, (f64, Option<Fraction>)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut pending: Vec<Branches<'_>> = Vec::new();
    let mut paths = 1u64;
    let machine = Machine::new(rules, &limits, vars, Memo::new(), Some(rule));
    let mut current = Some(Path { machine, probability: 1.0, fraction: Some(Fraction::ONE) });
    loop {
        let mut path = match current.take() {
            Some(path) => path,
            None => {
                let Some(branches) = pending.last_mut() else { break };
                if !branches.first {
                    paths += 1;
                    if paths > enumeration.max_paths {
                        return Err(not_enumerable(format!(
                            "the rules have more than {} paths through their choices",
                            enumeration.max_paths
                        )));
                    }
                }
                branches.first = false;
                let (path, done) = branches.take(&mut budget).map_err(|d| failure(d, &budget, enumeration))?;
                if done {
                    pending.pop();
                }
                path
            }
        };
        let mut host = Host { code: &mut *code, generator: None, budget: &mut budget };
        let paused = path.machine.run(&mut host).map_err(|d| failure(d, &budget, enumeration))?;
        match paused {
            Pause::Choice => {
                let decision = path.machine.take_decision()?;
                let whole_total: Option<u128> =
                    decision.weights.iter().try_fold(0u128, |acc, &x| acc.checked_add(whole(x)?));
                let Some(next) = decision.weights.iter().position(|&w| w > 0.0) else {
                    return Err(Diagnostic::new(codes::GGE5000, "a Lodestone choice without a positive weight"));
                };
                pending.push(Branches {
                    machine: Some(path.machine),
                    decision,
                    whole_total,
                    next,
                    first: true,
                    probability: path.probability,
                    fraction: path.fraction,
                });
            }
            Pause::Finished(text) => {
                let text = text.unwrap_or_default();
                match outcomes.get_mut(&text) {
                    Some((p, f)) => {
                        *p += path.probability;
                        *f = match (*f, path.fraction) {
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
                        // Keeping an output costs about its size.
                        if !budget.spend((text.len() as u64 + 128) / 16) {
                            let d = Diagnostic::new(codes::GGE7302, "the enumeration used up its budget");
                            return Err(failure(d, &budget, enumeration));
                        }
                        order.push(text.clone());
                        outcomes.insert(text, (path.probability, path.fraction));
                    }
                }
            }
        }
    }
    let mut list: Vec<Outcome> = order
        .into_iter()
        .map(|text| {
            let (probability, fraction) = outcomes.get(&text).copied().unwrap_or((0.0, None));
            Outcome { text, probability, fraction }
        })
        .collect();
    list.sort_by(|a, b| b.probability.total_cmp(&a.probability).then_with(|| a.text.cmp(&b.text)));
    Ok(list)
}

/// The error of a path: the budget's when it ran out (where it ran out, if that was in the
/// rules), GGE7309 for a path that does not end.
fn failure(d: Diagnostic, budget: &Budget, enumeration: &EnumerationLimits) -> Diagnostic {
    if budget.is_exhausted() {
        let mut exhausted = Diagnostic::new(
            codes::GGE7309,
            format!(
                "listing the outputs took more than {} units of work (steps of the rules, instructions of their code, copies at each choice, outputs kept)",
                enumeration.max_work
            ),
        )
        .with_hint("raise the limit with --max-work N, or sample the rules with -n N instead");
        exhausted.span = d.span;
        return exhausted;
    }
    if d.code == codes::GGE7301 || d.code == codes::GGE7302 || d.code == codes::GGE7303 {
        return not_enumerable(format!(
            "a path through the choices does not end ({}), so the outputs may be infinitely many",
            d.message
        ));
    }
    d
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
