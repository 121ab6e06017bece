//! The cost of running rules: a host's budget stops a generation and its code.

use std::sync::Arc;

use geogen_diag::{Diagnostic, SourceFile};
use geogen_lodestone::{
    parse, Budget, CodeEnv, CodeEvaluator, CodeSource, Executor, Limits, Memo, Mode, RuleSet, Seeded, Value,
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
