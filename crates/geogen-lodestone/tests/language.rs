//! The rules of the language (spec §2), each shown by the exact support and probabilities that
//! enumeration finds, the errors with their positions, golden outputs under fixed seeds, and a
//! statistical check that sampling agrees with enumeration.

use std::sync::Arc;

use geogen_diag::{codes, ErrorCode, SourceFile};
use geogen_lodestone::{
    enumerate, generate, name_seed, names, parse, pick, Batch, EnumerationLimits, Limits, Mode, NoCode, OnStepLimit,
    Outcome, RuleSet,
};

fn rules_in(text: &str, mode: Mode) -> RuleSet {
    match parse(Arc::new(SourceFile::new("t.lds", text)), mode) {
        Ok(rules) => rules,
        Err(d) => panic!("{text:?} does not parse: {:?}", d.as_slice()),
    }
}

fn rules(text: &str) -> RuleSet {
    rules_in(text, Mode::Extended)
}

fn outcomes_of(rules: &RuleSet, start: &str) -> Vec<Outcome> {
    enumerate(rules, start, &Limits::default(), &EnumerationLimits::default(), &mut NoCode, &[])
        .unwrap_or_else(|d| panic!("{d:?}"))
}

/// `(text, fraction)` for every output, most likely first.
fn support_in(text: &str, start: &str, mode: Mode) -> Vec<(String, String)> {
    outcomes_of(&rules_in(text, mode), start)
        .into_iter()
        .map(|o| (o.text, o.fraction.map(|f| f.to_string()).unwrap_or_else(|| format!("~{}", o.probability))))
        .collect()
}

fn support(text: &str, start: &str) -> Vec<(String, String)> {
    support_in(text, start, Mode::Extended)
}

fn expect(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(t, p)| (t.to_string(), p.to_string())).collect()
}

/// The first error: its code and line:column.
fn error_in(text: &str, mode: Mode) -> (ErrorCode, String) {
    let file = Arc::new(SourceFile::new("t.lds", text));
    match parse(Arc::clone(&file), mode) {
        Ok(_) => panic!("{text:?} parsed"),
        Err(d) => (d[0].code, d[0].span.map(|s| file.line_col(s.start).to_string()).unwrap_or_default()),
    }
}

fn error(text: &str) -> (ErrorCode, String) {
    error_in(text, Mode::Extended)
}

#[test]
fn choices_are_equally_likely_by_default_and_weights_scale_them() {
    assert_eq!(support("<a> => x | y | z;", "<a>"), expect(&[("x", "1/3"), ("y", "1/3"), ("z", "1/3")]));
    assert_eq!(support("<a> => x [3] | y;", "<a>"), expect(&[("x", "3/4"), ("y", "1/4")]));
    // The last weight of a choice wins.
    assert_eq!(support("<a> => x [5] [1] | y [3];", "<a>"), expect(&[("y", "3/4"), ("x", "1/4")]));
    // A weight may stand anywhere in its choice.
    assert_eq!(support("<a> => [3] x | y;", "<a>"), expect(&[("x", "3/4"), ("y", "1/4")]));
    // Weight 0 is never picked; fractional weights work.
    assert_eq!(support("<a> => x [0] | y [0.5] | z [1.5];", "<a>"), expect(&[("z", "~0.75"), ("y", "~0.25")]));
    // Weights from nonterminals are expanded each time, and their own choices branch.
    assert_eq!(support("<a> => x [<w>] | y;\n<w> => 1 | 3;", "<a>"), expect(&[("x", "5/8"), ("y", "3/8")]));
    // Weights only matter by their ratios, but their sum must be a Number.
    let huge = rules("<a> => x [1e308] | y [1e308];");
    let error = generate(&huge, "<a>", 0, &Limits::default(), &mut NoCode, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7304);
    // Nested choices multiply.
    assert_eq!(
        support("<a> => <b> <b>;\n<b> => p [2] | q;", "<a>"),
        expect(&[("p p", "4/9"), ("p q", "2/9"), ("q p", "2/9"), ("q q", "1/9")])
    );
}

#[test]
fn rules_of_one_name_merge_their_choices_in_file_order() {
    assert_eq!(
        support("<a> => x;\n<b> => b;\n<a> => y | z [2];", "<a>"),
        expect(&[("z", "1/2"), ("x", "1/4"), ("y", "1/4")])
    );
    // Names are case-sensitive; `<a>` and `<$a>` are different rules.
    assert_eq!(support("<a> => x;\n<A> => y;", "<a>"), expect(&[("x", "1/1")]));
    let set = rules("<a> => <$a>;\n<$a> => one;\n<a> => two;");
    assert_eq!(set.rule("<a>").unwrap().choices.len(), 2);
    assert_eq!(set.rule("<$a>").unwrap().choices.len(), 1);
}

#[test]
fn whitespace_collapses_inside_and_is_dropped_at_both_ends() {
    assert_eq!(support("<a> =>   x    y\t z   ;", "<a>"), expect(&[("x y z", "1/1")]));
    // A right-hand side may run over lines: the line ends are whitespace too.
    assert_eq!(support("<a> => one\n   two\r\n   | three;", "<a>"), expect(&[("one two", "1/2"), ("three", "1/2")]));
    // `|` without whitespace on both sides is text.
    assert_eq!(support("<a> => x|y a |b;", "<a>"), expect(&[("x|y a |b", "1/1")]));
    // Quoting keeps spaces and special characters.
    assert_eq!(support("<a> => '  [x];  '|'<b>';", "<a>"), expect(&[("  [x];  |<b>", "1/1")]));
    // Extended mode drops the space between a weight and its choice; strict keeps it (`x [3]` is "x ").
    assert_eq!(support("<a> => x [3] | y;", "<a>")[0].0, "x");
    assert_eq!(support_in("<a> => x [3] | y;", "<a>", Mode::Strict)[0].0, "x ");
    assert_eq!(support_in("<a> => x[3] | y;", "<a>", Mode::Strict)[0].0, "x");
    assert_eq!(support("<a> => x [3] y;", "<a>")[0].0, "x y");
}

#[test]
fn empty_alternatives_and_empty_texts() {
    assert_eq!(support("<a> => a | ;", "<a>"), expect(&[("", "1/2"), ("a", "1/2")]));
    assert_eq!(support("<a> => '';", "<a>"), expect(&[("", "1/1")]));
    assert_eq!(error("<a> => ;"), (codes::GGE7202, "1:1".into()));
}

#[test]
fn line_ends_of_either_kind_and_a_last_rule_without_one() {
    for text in
        ["<a> => x;\r\n<b> => y;\r\n", "<a> => x;\n<b> => y;\n", "<a> => x;\n<b> => y;", "<a> => x;\n<b> => y;\n\n  \n"]
    {
        assert_eq!(support(text, "<b>"), expect(&[("y", "1/1")]), "{text:?}");
        assert_eq!(support_in(text, "<b>", Mode::Strict), expect(&[("y", "1/1")]), "{text:?}");
    }
}

#[test]
fn comments_are_whole_lines() {
    assert_eq!(
        support("# names\n<a> => x # not a comment;\n  # indented comment\n<b> => y;", "<a>")[0].0,
        "x # not a comment"
    );
    // A comment after a rule's `;` is an error, as is a comment line inside a rule.
    assert_eq!(error("<a> => x; # no\n"), (codes::GGE7106, "1:9".into()));
    assert_eq!(error("<a> => x\n# no\n y;\n"), (codes::GGE7201, "2:1".into()));
}

#[test]
fn undefined_names_are_written_as_they_are() {
    assert_eq!(support("<a> => x <nope> y <$none>;", "<a>"), expect(&[("x <nope> y <$none>", "1/1")]));
    assert_eq!(support("<a> => <@none>;", "<a>"), expect(&[("<@none>", "1/1")]));
}

#[test]
fn one_time_values_are_drawn_once_per_run() {
    // Never "red blue".
    assert_eq!(
        support("<a> => <$c> and <$c>;\n<$c> => red | blue;", "<a>"),
        expect(&[("blue and blue", "1/2"), ("red and red", "1/2")])
    );
    // `<@c>` writes the value without expanding anything.
    assert_eq!(
        support("<a> => <$c>/<@c>;\n<$c> => <x>;\n<x> => p | q;", "<a>"),
        expect(&[("p/p", "1/2"), ("q/q", "1/2")])
    );
    // One-time rules may use each other, in either order.
    assert_eq!(
        support("<a> => <$x><$y>;\n<$x> => <$y>1;\n<$y> => p | q;", "<a>"),
        expect(&[("p1p", "1/2"), ("q1q", "1/2")])
    );
    // An empty value is a value (the original expanded it again at each use).
    assert_eq!(support("<a> => [<$e>]<$e>|<$e>;\n<$e> => '' | z;", "<a>").len(), 2, "each run has one value of <$e>");
}

#[test]
fn one_time_values_are_drawn_before_the_start_in_file_order() {
    // The pre-pass draws <$b> (one draw of two equal choices) before <a>'s choice: with a fixed
    // seed the value of <$b> is the first draw of the generator.
    let set = rules("<a> => <x>;\n<$b> => B1 | B2;\n<x> => X1 | X2;\n<c> => <$b>;");
    let seed = name_seed(5, &set, "<c>", 0);
    let mut mt = geogen_random::Mt19937::new(seed);
    let first = pick(&[1.0, 1.0], 2.0, geogen_lodestone::exec::unit(&mut mt));
    let generated = generate(&set, "<c>", seed, &Limits::default(), &mut NoCode, &[]).unwrap();
    assert_eq!(generated.text, ["B1", "B2"][first]);
}

#[test]
fn a_one_time_value_needed_while_it_is_expanded_is_an_error() {
    let set = rules("<a> => <$x>;\n<$x> => x<$y>;\n<$y> => <$x>;");
    let error = generate(&set, "<a>", 0, &Limits::default(), &mut NoCode, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7306);
}

#[test]
fn escapes_write_what_the_original_could_not() {
    assert_eq!(support(r"<a> => Dragon\'s Lair;", "<a>")[0].0, "Dragon's Lair");
    assert_eq!(support(r"<a> => 1 \< 2\; a\[b\] \`c\` \\ \| \#;", "<a>")[0].0, r"1 < 2; a[b] `c` \ | #");
    assert_eq!(support(r"<a> => 'it\'s';", "<a>")[0].0, "it's");
    // Strict mode has no escapes: an apostrophe cannot be written, a pair of them quotes.
    assert_eq!(error_in(r"<a> => Dragon's Lair;", Mode::Strict), (codes::GGE7102, "1:14".into()));
    assert_eq!(support_in("<a> => Wolf's and Bear's;", "<a>", Mode::Strict)[0].0, "Wolfs and Bears");
    assert_eq!(support_in(r"<a> => C:\dir;", "<a>", Mode::Strict)[0].0, r"C:\dir");
}

#[test]
fn the_step_limit_is_an_error_or_an_announced_truncation() {
    let set = rules("<a> => x <a>;");
    let error = generate(&set, "<a>", 0, &Limits::default(), &mut NoCode, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7301);
    let limits = Limits { on_step_limit: OnStepLimit::Truncate, ..Limits::default() };
    let truncated = generate(&set, "<a>", 0, &limits, &mut NoCode, &[]).unwrap();
    // The original's output: "x " 500 times (1000 pops, half of them texts).
    assert_eq!(truncated.text, "x ".repeat(500));
    assert_eq!(truncated.warnings.len(), 1);
    assert_eq!(truncated.warnings[0].code, codes::GGE7301);
    let limits = Limits { max_steps: 10, ..Limits::default() };
    assert_eq!(generate(&set, "<a>", 0, &limits, &mut NoCode, &[]).unwrap_err().code, codes::GGE7301);
}

#[test]
fn every_rejected_text_has_a_code_and_a_position() {
    let cases: &[(&str, ErrorCode, &str)] = &[
        ("<a> => x ]y;", codes::GGE7101, "1:10"),
        ("<a> => 'open;\n", codes::GGE7102, "1:8"),
        ("<a> => `open;\n", codes::GGE7103, "1:8"),
        ("<a> => ``;", codes::GGE7103, "1:8"),
        ("<a> => x [1;\n", codes::GGE7104, "1:10"),
        ("<a> => x [];", codes::GGE7104, "1:10"),
        ("<a> => x [[1]];", codes::GGE7104, "1:11"),
        ("<a> => a < b;", codes::GGE7105, "1:10"),
        ("<a> => x; y\n", codes::GGE7106, "1:9"),
        ("x => y;", codes::GGE7201, "1:1"),
        ("<a> x;", codes::GGE7201, "1:5"),
        ("<a> => x => y;", codes::GGE7201, "1:10"),
        ("<@a> => x;", codes::GGE7201, "1:1"),
        ("<a> => ;", codes::GGE7202, "1:1"),
        ("<a> => x", codes::GGE7203, "1:1"),
        ("\n\n<a> =>", codes::GGE7203, "3:1"),
        ("", codes::GGE7204, "1:1"),
        ("# only a comment\n", codes::GGE7204, "1:1"),
        ("<a> => x [abc] | y;", codes::GGE7205, "1:10"),
        ("<a> => x [1+2] | y;", codes::GGE7205, "1:10"),
        ("<a> => x [-1] | y;", codes::GGE7205, "1:10"),
        ("<a> => x [NaN] | y;", codes::GGE7205, "1:10"),
        ("<a> => x [inf] | y;", codes::GGE7205, "1:10"),
        ("<a> => x [0] | y [0];", codes::GGE7206, "1:1"),
        ("<a> => x;\n<b> => y [0] | z [0.0];", codes::GGE7206, "2:1"),
    ];
    for (text, code, at) in cases {
        assert_eq!(error(text), (*code, at.to_string()), "{text:?}");
    }
    // Strict mode rejects what the original rejected.
    let strict: &[(&str, ErrorCode, &str)] = &[
        ("<a> => [ 3 ] x | y;", codes::GGE7201, "1:8"),
        ("<a> => ` 1` x;", codes::GGE7201, "1:8"),
        ("<a> => `1 < 2`;", codes::GGE7105, "1:11"),
        ("<a> => `a;b`;", codes::GGE7101, "1:10"),
        ("<a> => x [foo] | y;", codes::GGE7205, "1:10"),
    ];
    for (text, code, at) in strict {
        assert_eq!(error_in(text, Mode::Strict), (*code, at.to_string()), "strict {text:?}");
    }
    // ...and reads weights as the original's parseFloat did: `3abc` is 3, `1+2` is 1.
    assert_eq!(support_in("<a> => x[3abc] | y[1+2];", "<a>", Mode::Strict), expect(&[("x", "3/4"), ("y", "1/4")]));
}

#[test]
fn every_error_of_a_file_is_reported() {
    let file = Arc::new(SourceFile::new("t.lds", "<a> => x [abc] | y;\n<b> => ;\nnot a rule;\n<c> => ok;\n"));
    let errors = parse(file, Mode::Extended).unwrap_err();
    let codes_found: Vec<ErrorCode> = errors.iter().map(|d| d.code).collect();
    assert_eq!(codes_found, vec![codes::GGE7202, codes::GGE7201], "syntax errors first, then weights");
    for d in errors.iter() {
        assert!(d.hint.is_some(), "{d:?}");
    }
}

#[test]
fn the_nth_name_does_not_change_when_more_are_asked_for() {
    let set = rules("<a> => <b><b><b>;\n<b> => ka | lo | mi | nu | po | ri;");
    let limits = Limits::default();
    let few =
        names(&set, "<a>", Batch { seed: 42, count: 3, distinct: None }, &limits, &mut NoCode, &[]).unwrap().names;
    let many =
        names(&set, "<a>", Batch { seed: 42, count: 20, distinct: None }, &limits, &mut NoCode, &[]).unwrap().names;
    assert_eq!(few, many[..3]);
    let distinct = names(&set, "<a>", Batch { seed: 42, count: 20, distinct: Some(100) }, &limits, &mut NoCode, &[])
        .unwrap()
        .names;
    let unique: std::collections::HashSet<&String> = distinct.iter().collect();
    assert_eq!(unique.len(), 20);
    let first =
        names(&set, "<a>", Batch { seed: 42, count: 5, distinct: Some(100) }, &limits, &mut NoCode, &[]).unwrap().names;
    assert_eq!(first, distinct[..5]);
    // Two outputs cannot make three distinct names.
    let two = rules("<a> => x | y;");
    let error =
        names(&two, "<a>", Batch { seed: 1, count: 3, distinct: Some(50) }, &limits, &mut NoCode, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7310);
    // An unknown start is refused.
    assert_eq!(
        names(&two, "<b>", Batch { seed: 1, count: 1, distinct: None }, &limits, &mut NoCode, &[]).unwrap_err().code,
        codes::GGE7312
    );
}

#[test]
fn golden_names_under_fixed_seeds() {
    // These pin the draw order and the seed derivation: a change here changes every user's names.
    let set = rules(
        "<river> => <adjective> River [3] | River <stem><end> [2] | <stem>water;\n\
         <adjective> => Red | Silver | Cold | Black;\n\
         <stem> => Ald | Bry | Cal | Dun | Esk;\n\
         <end> => a | en | wyn | ith;\n",
    );
    let made =
        names(&set, "<river>", Batch { seed: 7, count: 6, distinct: None }, &Limits::default(), &mut NoCode, &[])
            .unwrap()
            .names;
    assert_eq!(made, GOLDEN_SEED_7);
    let made =
        names(&set, "<river>", Batch { seed: 8, count: 3, distinct: None }, &Limits::default(), &mut NoCode, &[])
            .unwrap()
            .names;
    assert_eq!(made, GOLDEN_SEED_8);
}

const GOLDEN_SEED_7: [&str; 6] =
    ["River Aldith", "River Eskith", "Cold River", "Silver River", "Cold River", "Cold River"];
const GOLDEN_SEED_8: [&str; 3] = ["River Esken", "Black River", "River Dunith"];

/// Pearson's chi-squared statistic of observed counts against expected probabilities.
fn chi_squared(observed: &[u64], expected: &[f64], samples: u64) -> f64 {
    observed
        .iter()
        .zip(expected)
        .map(|(&o, &p)| {
            let e = p * samples as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum()
}

/// Samples names and compares their frequencies with the enumerated probabilities. The bound is
/// the 0.999 quantile of chi-squared for up to 12 degrees of freedom (32.9): a fair picker passes
/// with these fixed seeds, and a picker biased by a few percent fails (see the test below).
fn sampling_agrees_with_enumeration(text: &str, start: &str, samples: u32, picker_bias: f64) -> f64 {
    let set = rules(text);
    let outcomes = outcomes_of(&set, start);
    let mut counts = vec![0u64; outcomes.len()];
    for i in 0..samples {
        let seed = name_seed(2026, &set, start, i);
        let text = if picker_bias == 0.0 {
            generate(&set, start, seed, &Limits::default(), &mut NoCode, &[]).unwrap().text
        } else {
            biased::generate(&set, start, seed, picker_bias)
        };
        let index = outcomes.iter().position(|o| o.text == text).unwrap_or_else(|| panic!("{text:?} not enumerated"));
        counts[index] += 1;
    }
    let probabilities: Vec<f64> = outcomes.iter().map(|o| o.probability).collect();
    chi_squared(&counts, &probabilities, u64::from(samples))
}

const GRAMMARS: &[(&str, &str)] = &[
    ("<a> => x | y | z;", "<a>"),
    ("<a> => x [3] | y [1] | z [0.5];", "<a>"),
    ("<a> => <b> <b>;\n<b> => p [2] | q;", "<a>"),
    ("<a> => <$c>-<$c> <d> [<w>] | none;\n<$c> => r | s | t;\n<d> => u | v [3];\n<w> => 1 | 4;", "<a>"),
];

#[test]
fn sampling_agrees_with_enumeration_on_several_grammars() {
    for (text, start) in GRAMMARS {
        let chi2 = sampling_agrees_with_enumeration(text, start, 20_000, 0.0);
        assert!(chi2 < 32.9, "{text:?}: chi-squared {chi2}");
    }
}

#[test]
fn the_chi_squared_bound_catches_a_biased_picker() {
    // The same test with a picker that favours the first choice by 5% of the total fails.
    for (text, start) in &GRAMMARS[..3] {
        let chi2 = sampling_agrees_with_enumeration(text, start, 20_000, 0.05);
        assert!(chi2 > 32.9, "{text:?}: a biased picker went unnoticed (chi-squared {chi2})");
    }
}

/// A deliberately wrong executor for the test above: the seeded one with every draw shifted
/// towards the first choice.
mod biased {
    use geogen_diag::Diagnostic;
    use geogen_lodestone::{Executor, Limits, Memo, NoCode, Randomness, RuleSet, Seeded};
    use geogen_random::Mt19937;

    struct Biased {
        inner: Seeded,
        mt: Mt19937,
        bias: f64,
    }

    impl Randomness for Biased {
        fn choose(&mut self, weights: &[f64], total: f64) -> Result<usize, Diagnostic> {
            let u = geogen_lodestone::exec::unit(&mut self.mt);
            Ok(geogen_lodestone::pick(weights, total, (u - self.bias).max(0.0)))
        }

        fn generator(&mut self) -> Option<&mut Mt19937> {
            self.inner.generator()
        }
    }

    pub fn generate(rules: &RuleSet, start: &str, seed: u32, bias: f64) -> String {
        let mut memo = Memo::new();
        let mut random = Biased { inner: Seeded::new(seed), mt: Mt19937::new(seed), bias };
        let limits = Limits::default();
        Executor::new(rules, &limits, &mut NoCode, &[], &mut memo, &mut random).generate(start).unwrap()
    }
}

#[test]
fn enumeration_refuses_infinite_or_too_large_rule_sets() {
    let infinite = rules("<a> => x | <a> x;");
    let error =
        enumerate(&infinite, "<a>", &Limits::default(), &EnumerationLimits::default(), &mut NoCode, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7309);
    let big = rules("<a> => <d><d><d><d>;\n<d> => 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;");
    let small = EnumerationLimits { max_outputs: 100, ..EnumerationLimits::default() };
    let error = enumerate(&big, "<a>", &Limits::default(), &small, &mut NoCode, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7309);
    // Code cannot run without an evaluator.
    let code = rules("<a> => `1`;");
    let error =
        enumerate(&code, "<a>", &Limits::default(), &EnumerationLimits::default(), &mut NoCode, &[]).unwrap_err();
    assert_eq!(error.code, codes::GGE7307);
}

#[test]
fn probabilities_add_up_to_one() {
    for (text, start) in GRAMMARS {
        let total: f64 = outcomes_of(&rules(text), start).iter().map(|o| o.probability).sum();
        assert!((total - 1.0).abs() < 1e-12, "{text:?}: {total}");
    }
}
