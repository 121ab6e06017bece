//! The cost of running rules: enumeration does work in proportion to the choices it explores
//! (each choice point is reached once, not once per path through it), the work it may do in all
//! is limited, and a host's budget stops a generation and its code.

use std::sync::Arc;
use std::time::{Duration, Instant};

use geogen_diag::{codes, Diagnostic, SourceFile};
use geogen_lodestone::{
    enumerate, parse, Budget, CodeEnv, CodeEvaluator, CodeSource, EnumerationLimits, Executor, Limits, Memo, Mode,
    RuleSet, Seeded, Value,
};

fn rules(text: &str) -> RuleSet {
    match parse(Arc::new(SourceFile::new("t.lds", text)), Mode::Extended) {
        Ok(rules) => rules,
        Err(d) => panic!("{text:?} does not parse: {:?}", d.as_slice()),
    }
}

/// Code that is always 1, counting how often it is evaluated.
#[derive(Default)]
struct CountingCode {
    evaluations: u64,
}

impl CodeEvaluator for CountingCode {
    fn evaluate(&mut self, _code: &CodeSource<'_>, _env: CodeEnv<'_>) -> Result<Value, Diagnostic> {
        self.evaluations += 1;
        Ok(Value::Number(1.0))
    }
}

/// How often the code weight of a rule that may refer to itself forever is evaluated before
/// enumeration gives up at the step limit.
fn evaluations_until_the_step_limit(max_steps: usize) -> u64 {
    let set = rules("<a> => x [1] | <a> [`1`];");
    let limits = Limits { max_steps, ..Limits::default() };
    let mut code = CountingCode::default();
    let error = enumerate(&set, "<a>", &limits, &EnumerationLimits::default(), &mut code, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7309, "{error:?}");
    code.evaluations
}

#[test]
fn enumeration_evaluates_each_choice_point_once() {
    let small = evaluations_until_the_step_limit(100);
    let large = evaluations_until_the_step_limit(400);
    // Each level of the recursion is one choice point with one code weight: about one evaluation
    // per step. Replaying every path from the start made it about steps² / 2.
    assert!(small <= 200, "{small} evaluations for 100 steps");
    assert!(large <= 6 * small, "{small} evaluations for 100 steps, {large} for 400");
}

fn one_rule_with_choices(n: usize) -> RuleSet {
    let choices: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
    rules(&format!("<a> => {};", choices.join(" | ")))
}

/// The time to list the `n` outputs of one rule of `n` choices.
fn enumeration_time(set: &RuleSet, n: usize) -> Duration {
    let enumeration = EnumerationLimits { max_outputs: n, ..EnumerationLimits::default() };
    let start = Instant::now();
    let outcomes = enumerate(set, "<a>", &Limits::default(), &enumeration, &mut CountingCode::default(), &[])
        .unwrap_or_else(|d| panic!("{d:?}"));
    let elapsed = start.elapsed();
    assert_eq!(outcomes.len(), n);
    elapsed
}

#[test]
fn enumerating_a_rule_with_many_choices_takes_linear_time() {
    let (small_n, large_n) = (2_000, 16_000);
    let (small_set, large_set) = (one_rule_with_choices(small_n), one_rule_with_choices(large_n));
    // The fastest of a few runs each, taken in turns, so that a busy machine slows both alike.
    let (mut small, mut large) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        small = small.min(enumeration_time(&small_set, small_n));
        large = large.min(enumeration_time(&large_set, large_n));
    }
    // Eight times the choices: about eight times the work when each choice costs the same (a
    // little more for sorting the outputs); 64 times when every path weighs every choice again.
    assert!(large < small * 24, "{small_n} choices: {small:?}, {large_n} choices: {large:?}");
}

#[test]
fn the_output_limit_is_reached_before_the_choices_are_all_weighed_again() {
    let set = one_rule_with_choices(40_000);
    let enumeration = EnumerationLimits { max_outputs: 100, ..EnumerationLimits::default() };
    let error =
        enumerate(&set, "<a>", &Limits::default(), &enumeration, &mut CountingCode::default(), &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7309);
    assert!(error.message.contains("more than 100 outputs"), "{}", error.message);
}

#[test]
fn an_enumeration_has_one_budget_for_all_its_paths() {
    // 100 000 outputs of a few steps each: far more work than the budget, found long before the
    // output or path limits.
    let set = rules("<a> => <d><d><d><d><d>;\n<d> => 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;");
    let enumeration = EnumerationLimits { max_outputs: 1_000_000, max_paths: 1_000_000, max_work: 50_000 };
    let error =
        enumerate(&set, "<a>", &Limits::default(), &enumeration, &mut CountingCode::default(), &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7309);
    assert!(error.message.contains("more than 50000 units of work"), "{}", error.message);
    assert!(error.hint.as_deref().unwrap_or_default().contains("--max-work"), "{error:?}");
    // Within the budget, the same rules list every output.
    let smaller = rules("<a> => <d><d>;\n<d> => 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;");
    let outcomes = enumerate(&smaller, "<a>", &Limits::default(), &enumeration, &mut CountingCode::default(), &[]);
    assert_eq!(outcomes.map(|o| o.len()), Ok(100));
}

#[test]
fn a_generation_stops_when_its_hosts_budget_runs_out() {
    let set = rules("<a> => <b><b><b><b><b><b><b><b><b><b>;\n<b> => x `1`;");
    let limits = Limits::default();
    let run = |budget: &mut Budget, code: &mut CountingCode| {
        let (mut memo, mut random) = (Memo::new(), Seeded::new(1));
        Executor::new(&set, &limits, code, &[], &mut memo, &mut random).with_budget(budget).generate("<a>")
    };
    let mut ample = Budget::new(1_000);
    assert_eq!(run(&mut ample, &mut CountingCode::default()).unwrap(), "x 1x 1x 1x 1x 1x 1x 1x 1x 1x 1");
    let needed = ample.spent();
    assert!(needed >= 20, "{needed} units for 10 rules and 10 pieces of code");
    let mut short = Budget::new(needed - 1);
    let mut code = CountingCode::default();
    assert!(run(&mut short, &mut code).is_err());
    assert!(short.is_exhausted());
    // The code a generation runs is charged too: what it reports stops the run.
    let mut tight = Budget::new(needed + 5);
    let mut costly = CostlyCode { units: 10 };
    let (mut memo, mut random) = (Memo::new(), Seeded::new(1));
    let result =
        Executor::new(&set, &limits, &mut costly, &[], &mut memo, &mut random).with_budget(&mut tight).generate("<a>");
    assert!(result.is_err() && tight.is_exhausted(), "{result:?}");
}

/// Code that reports `units` of work for each evaluation.
struct CostlyCode {
    units: u64,
}

impl CodeEvaluator for CostlyCode {
    fn evaluate(&mut self, _code: &CodeSource<'_>, env: CodeEnv<'_>) -> Result<Value, Diagnostic> {
        *env.used += self.units;
        Ok(Value::Number(1.0))
    }
}
