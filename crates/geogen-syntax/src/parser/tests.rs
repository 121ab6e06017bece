//! Unit tests of the parser: shapes of trees (as S-expressions), spans, recovery and limits.

use geogen_diag::{codes, ErrorCode, Span};

use crate::ast::*;
use crate::{dump, parse, MAX_NESTING};

/// The S-expression of a script that must parse without errors.
fn ok(src: &str) -> String {
    let parsed = parse(src);
    assert!(parsed.diagnostics.is_empty(), "unexpected errors for {src:?}: {:#?}", parsed.diagnostics);
    dump::script(&parsed.script).trim_end().to_string()
}

/// The S-expression of one expression (parsed as an expression statement).
fn ex(src: &str) -> String {
    ok(&format!("{src};"))
}

/// The codes and messages of the errors of a script.
fn errors(src: &str) -> Vec<(ErrorCode, String)> {
    parse(src).diagnostics.into_iter().map(|d| (d.code, d.message)).collect()
}

fn error_count(src: &str) -> usize {
    parse(src).diagnostics.len()
}

#[test]
fn each_binary_level_binds_tighter_than_the_one_below() {
    // From lowest to highest: each line mixes one level with the next one.
    assert_eq!(ex("a = b ? c : d"), "(= a (? b c d))");
    assert_eq!(ex("a ? b : c || d"), "(? a b (|| c d))");
    assert_eq!(ex("a || b ? c : d"), "(? (|| a b) c d)");
    assert_eq!(ex("a || b && c"), "(|| a (&& b c))");
    assert_eq!(ex("a && b || c"), "(|| (&& a b) c)");
    assert_eq!(ex("a && b | c"), "(&& a (| b c))");
    assert_eq!(ex("a | b ^ c"), "(| a (^ b c))");
    assert_eq!(ex("a ^ b & c"), "(^ a (& b c))");
    assert_eq!(ex("a & b == c"), "(& a (== b c))");
    assert_eq!(ex("a != b < c"), "(!= a (< b c))");
    assert_eq!(ex("a <= b << c"), "(<= a (<< b c))");
    assert_eq!(ex("a >= b >> c"), "(>= a (>> b c))");
    assert_eq!(ex("a > b + c"), "(> a (+ b c))");
    assert_eq!(ex("a << b - c"), "(<< a (- b c))");
    assert_eq!(ex("a + b * c"), "(+ a (* b c))");
    assert_eq!(ex("a - b / c"), "(- a (/ b c))");
    assert_eq!(ex("a * b % c"), "(% (* a b) c)");
    assert_eq!(ex("-a * b"), "(* (- a) b)");
    assert_eq!(ex("1 + (2 * 3)"), "(+ 1 (* 2 3))");
    assert_eq!(ex("(1 + 2) * 3"), "(* (+ 1 2) 3)");
}

#[test]
fn binary_operators_are_left_associative() {
    assert_eq!(ex("a - b - c"), "(- (- a b) c)");
    assert_eq!(ex("a / b * c % d"), "(% (* (/ a b) c) d)");
    assert_eq!(ex("a << b >> c"), "(>> (<< a b) c)");
    assert_eq!(ex("a < b < c"), "(< (< a b) c)");
    assert_eq!(ex("a == b != c"), "(!= (== a b) c)");
    assert_eq!(ex("a && b && c"), "(&& (&& a b) c)");
    assert_eq!(ex("a || b || c"), "(|| (|| a b) c)");
    assert_eq!(ex("a | b | c"), "(| (| a b) c)");
    assert_eq!(ex("a ^ b ^ c"), "(^ (^ a b) c)");
    assert_eq!(ex("a & b & c"), "(& (& a b) c)");
}

#[test]
fn assignment_is_and_conditional_are_right_associative() {
    assert_eq!(ex("a = b = c"), "(= a (= b c))");
    assert_eq!(ex("a += b -= c"), "(+= a (-= b c))");
    assert_eq!(ex("a *= b /= c %= d"), "(*= a (/= b (%= c d)))");
    assert_eq!(ex("a <<= b >>= c"), "(<<= a (>>= b c))");
    assert_eq!(ex("a &= b |= c ^= d"), "(&= a (|= b (^= c d)))");
    assert_eq!(ex("a is b is c"), "(is a (is b c))");
    assert_eq!(ex("a = b is c"), "(= a (is b c))");
    assert_eq!(ex("x is Number == true"), "(is x (== Number true))");
    assert_eq!(ex("a ? b : c ? d : e"), "(? a b (? c d e))");
    assert_eq!(ex("a ? b ? c : d : e"), "(? a (? b c d) e)");
    // As in JavaScript, both branches are assignment expressions.
    assert_eq!(ex("a ? b = 1 : c = 2"), "(? a (= b 1) (= c 2))");
    // A target is not checked here: `a + b = c` parses (the compiler rejects it).
    assert_eq!(ex("a + b = c"), "(= (+ a b) c)");
}

#[test]
fn prefix_and_postfix_operators() {
    assert_eq!(ex("- - a"), "(- (- a))");
    assert_eq!(ex("!+-@a"), "(! (+ (- (@ a))))");
    assert_eq!(ex("++a"), "(pre++ a)");
    assert_eq!(ex("--a"), "(pre-- a)");
    assert_eq!(ex("a++"), "(post++ a)");
    assert_eq!(ex("a--"), "(post-- a)");
    // Postfix binds tighter than prefix.
    assert_eq!(ex("-a++"), "(- (post++ a))");
    assert_eq!(ex("++a.b"), "(pre++ (. a b))");
    assert_eq!(ex("-a[1]"), "(- ([] a 1))");
    assert_eq!(ex("a++ + b"), "(+ (post++ a) b)");
    assert_eq!(ex("a - -b"), "(- a (- b))");
    // `--` is one token: `a---b` is `(a--) - b`.
    assert_eq!(ex("a---b"), "(- (post-- a) b)");
    assert_eq!(ex("@[0.5, 0.5]"), "(@ (coord 0.5 0.5))");
    assert_eq!(ex("[@0.5, 200]"), "(coord (@ 0.5) 200)");
}

#[test]
fn calls_members_and_indexing() {
    assert_eq!(ex("f()"), "(call f)");
    assert_eq!(ex("f(1, x + 2)"), "(call f 1 (+ x 2))");
    assert_eq!(ex("a.b"), "(. a b)");
    assert_eq!(ex("a.b.c"), "(. (. a b) c)");
    assert_eq!(ex("a.b()"), "(method a b)");
    assert_eq!(ex("HeightMap.Flat(0).Add(1, 2)"), "(method (method HeightMap Flat 0) Add 1 2)");
    assert_eq!(ex("a[1]"), "([] a 1)");
    assert_eq!(ex("a[1, 2][3]"), "([] ([] a 1 2) 3)");
    assert_eq!(ex("a[]"), "([] a)");
    assert_eq!(ex("a[] = 5"), "(= ([] a) 5)");
    assert_eq!(ex("f(x)[0].y"), "(. ([] (call f x) 0) y)");
    assert_eq!(ex("(a).b(1)"), "(method a b 1)");
    assert_eq!(ex("x = {1, 2}.Count()"), "(= x (method (array 1 2) Count))");
    assert_eq!(ex("\"s\".Length"), "(. \"s\" Length)");
    assert_eq!(ex("2.5.Abs()"), "(method 2.5 Abs)");
    assert_eq!(ex("null"), "null");
}

#[test]
fn literals() {
    assert_eq!(ex("1"), "1");
    assert_eq!(ex("0.25"), "0.25");
    assert_eq!(ex("\"a\\n\""), "\"a\\n\"");
    assert_eq!(ex("true"), "true");
    assert_eq!(ex("false"), "false");
    assert_eq!(ex("x = {}"), "(= x (array))");
    assert_eq!(ex("x = {1, \"k\": 2, a + 1: {3}}"), "(= x (array 1 (: \"k\" 2) (: (+ a 1) (array 3))))");
    assert_eq!(ex("x = {a ? 1 : 2}"), "(= x (array (? a 1 2)))");
    assert_eq!(ex("x = [1]"), "(= x (coord 1))");
    assert_eq!(ex("x = [1, 2]"), "(= x (coord 1 2))");
}

#[test]
fn statements() {
    assert_eq!(ok("var x;"), "(var x)");
    assert_eq!(ok("var x = 1;"), "(var x 1)");
    assert_eq!(ok("global g = {};"), "(global g (array))");
    assert_eq!(ok("yield m;"), "(yield m)");
    assert_eq!(ok("yield m as \"hills\";"), "(yield m as \"hills\")");
    assert_eq!(ok("function f() { return; }"), "(function f ()\n  (return))");
    assert_eq!(ok("function f(a) { return a; }"), "(function f (a)\n  (return a))");
    assert_eq!(ok("while (a) break;"), "(while a\n  (break))");
    assert_eq!(ok("while (a) continue;"), "(while a\n  (continue))");
    assert_eq!(ok(";"), "(empty)");
    assert_eq!(ok("{}"), "(block)");
    assert_eq!(ok("{ x; { y; } }"), "(block\n  x\n  (block\n    y))");
    assert_eq!(ok("for (;;) ;"), "(for _ _ _\n  (empty))");
    assert_eq!(ok("for (var i; i; i++) ;"), "(for (var i) i (post++ i)\n  (empty))");
    assert_eq!(ok("for (i = 0; ; ) ;"), "(for (= i 0) _ _\n  (empty))");
}

#[test]
fn a_brace_at_statement_start_is_a_block() {
    assert_eq!(ok("{ 1 ; }"), "(block\n  1)");
    assert_eq!(ok("x = { 1 };"), "(= x (array 1))");
}

#[test]
fn dangling_else_binds_to_the_nearest_if() {
    assert_eq!(ok("if (a) if (b) x; else y;"), "(if a\n  (if b\n    x\n    else y))");
    assert_eq!(ok("if (a) { if (b) x; } else y;"), "(if a\n  (block\n    (if b\n      x))\n  else y)");
}

#[test]
fn switch_cases_collect_the_statements_up_to_the_next_label() {
    let src = "switch (x) { case 1: case \"two\": a; break; default: b; case y.z + 1: }";
    assert_eq!(
        ok(src),
        "(switch x\n  (case 1)\n  (case \"two\"\n    a\n    (break))\n  (default\n    b)\n  (case (+ (. y z) 1)))"
    );
    assert_eq!(ok("switch (x) {}"), "(switch x)");
}

#[test]
fn declarations_and_metadata() {
    assert_eq!(ok("enum E { A, B = 5, C }"), "(enum E A (B 5) C)");
    assert_eq!(
        ok("metadata { A: 1, B: \"s\", C: true, D: Finite, E: {1, 2}, F: {}, G: { H: 2 }, A: 3 }"),
        "(metadata {A: 1, B: \"s\", C: true, D: Finite, E: [1, 2], F: {}, G: {H: 2}, A: 3})"
    );
    assert_eq!(ok("metadata {}"), "(metadata {})");
    // Declarations before and after metadata, statements after it.
    assert_eq!(
        ok("function f() {} enum E { A } metadata { } x; function g() {} y;"),
        "(function f ())\n(enum E A)\n(metadata {})\nx\n(function g ())\ny"
    );
}

#[test]
fn metadata_keeps_keys_and_values_in_the_tree() {
    let src = "metadata { Width: { Min: 1, Max: 2 } }";
    let parsed = parse(src);
    let Some(m) = parsed.script.metadata() else { panic!("no metadata") };
    let MetaValueKind::KeyValue(entries) = &m.root.kind else { panic!("root is {:?}", m.root.kind) };
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].0.name, "Width");
    assert_eq!(entries[0].0.span, Span::new(11, 16));
    assert_eq!(m.span, Span::new(0, src.len() as u32));
}

#[test]
fn spans_cover_the_whole_source_text() {
    let src = "x = (a + b) * c;";
    let parsed = parse(src);
    let stmt = parsed.script.statements().next().cloned();
    let Some(Stmt { kind: StmtKind::Expr(e), span }) = stmt else { panic!() };
    assert_eq!(span, Span::new(0, 16));
    assert_eq!(&src[e.span.range()], "x = (a + b) * c");
    let ExprKind::Assign { value, target, .. } = &e.kind else { panic!() };
    assert_eq!(&src[target.span.range()], "x");
    assert_eq!(&src[value.span.range()], "(a + b) * c");
    let ExprKind::Binary { lhs, .. } = &value.kind else { panic!() };
    // A parenthesised expression's span includes its parentheses.
    assert_eq!(&src[lhs.span.range()], "(a + b)");

    let src = "function f(a, b) { return a.b(1)[2]++; }";
    let parsed = parse(src);
    let f = parsed.script.functions().next().cloned();
    let Some(f) = f else { panic!() };
    assert_eq!(f.span, Span::new(0, src.len() as u32));
    assert_eq!(&src[f.body.span.range()], "{ return a.b(1)[2]++; }");
    assert_eq!(&src[f.params[1].span.range()], "b");
    let Some(StmtKind::Return(Some(e))) = f.body.stmts.first().map(|s| &s.kind) else { panic!() };
    assert_eq!(&src[e.span.range()], "a.b(1)[2]++");

    let src = "if (a) x; else { y; }";
    let parsed = parse(src);
    assert_eq!(parsed.script.statements().next().map(|s| s.span), Some(Span::new(0, 21)));
}

#[test]
fn missing_semicolon_is_one_error_at_the_end_of_the_previous_token() {
    let parsed = parse("var x = 1\nvar y = 2;\nx = 3\ny = 4;");
    let messages: Vec<_> = parsed.diagnostics.iter().map(|d| (d.message.as_str(), d.span)).collect();
    assert_eq!(
        messages,
        vec![
            ("expected `;` after the variable declaration, found `var`", Some(Span::at(9))),
            ("expected `;` after the expression statement, found `y`", Some(Span::at(26))),
        ]
    );
    // The statements after each error are still there.
    assert_eq!(dump::script(&parsed.script), "(var x 1)\n(var y 2)\n(= x 3)\n(= y 4)\n");
}

#[test]
fn every_broken_statement_is_reported() {
    let src = "x = ;\nvar = 1;\nf(1 2);\ny = (1;\nz = 1 2;\nok = 1;";
    let found = errors(src);
    assert_eq!(found.len(), 5, "{found:#?}");
    assert!(found.iter().all(|(code, _)| *code == codes::GGE1201));
    assert!(dump::script(&parse(src).script).ends_with("(= ok 1)\n"));
}

#[test]
fn errors_at_the_end_of_the_file_are_reported_once() {
    assert_eq!(error_count("function f() { if (x) { while (y) { f("), 1);
    assert_eq!(error_count("x = {1, 2"), 1);
    assert_eq!(error_count("x = \"abc; y = 1; {"), 1);
}

#[test]
fn declarations_in_the_wrong_place_are_gge1314() {
    let found = errors("x; metadata { } metadata { }");
    assert_eq!(found.iter().map(|e| e.0).collect::<Vec<_>>(), vec![codes::GGE1314, codes::GGE1314]);
    assert!(found[1].1.contains("only one"));
    assert_eq!(errors("{ enum E { A } }").first().map(|e| e.0), Some(codes::GGE1314));
    assert_eq!(errors("function f() { function g() {} }").first().map(|e| e.0), Some(codes::GGE1314));
    assert_eq!(errors("if (x) { metadata { } }").first().map(|e| e.0), Some(codes::GGE1314));
    assert!(errors("enum E { A } function f() {} metadata { } x;").is_empty());
}

#[test]
fn only_names_and_methods_can_be_called() {
    for src in ["(f)(1);", "a[0](1);", "f(1)(2);", "a.b(1)(2);", "1(2);"] {
        let found = errors(src);
        assert_eq!(found.len(), 1, "{src}: {found:?}");
        assert!(found[0].1.contains("cannot be called"), "{src}: {found:?}");
    }
}

#[test]
fn coordinate_literals_need_one_or_two_items() {
    for (src, n) in [("[];", 0), ("[1, 2, 3];", 3), ("[1, 2, 3, 4];", 4)] {
        let parsed = parse(src);
        assert_eq!(parsed.diagnostics.len(), 1, "{src}");
        let Some(Stmt { kind: StmtKind::Expr(Expr { kind: ExprKind::Coordinate(items), .. }), .. }) =
            parsed.script.statements().next()
        else {
            panic!("{src}")
        };
        assert_eq!(items.len(), n);
    }
}

/// Nested input `depth` levels deep, built from a prefix repeated, a core and a suffix repeated.
fn nested(open: &str, core: &str, close: &str, depth: usize) -> String {
    format!("{}{core}{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn reasonable_nesting_is_fine() {
    let depth = (MAX_NESTING / 2) as usize;
    for src in [
        nested("(", "x", ")", depth),
        nested("{", "x", "}", depth),
        nested("[", "x", "]", depth),
        nested("-", "x", "", depth),
        nested("f(", "x", ")", depth),
        format!("x{}", ".y".repeat(depth)),
        format!("x{}", " + 1".repeat(depth)),
        format!("x{}", " = x".repeat(depth)),
    ] {
        let src = format!("a = {src};");
        assert_eq!(errors(&src), vec![], "{}", &src[..src.len().min(40)]);
    }
    let statements = nested("if (x) { ", "y;", " }", depth / 2);
    assert_eq!(errors(&statements), vec![]);
    let statements = nested("{", "y;", "}", depth);
    assert_eq!(errors(&statements), vec![]);
    let metadata = format!("metadata {{ A: {} }}", nested("{ A: ", "1", " }", depth));
    assert_eq!(errors(&metadata), vec![]);
}

#[test]
fn nesting_at_the_limit_fits_on_a_test_thread_stack() {
    // Test threads have 2 MiB of stack: the deepest accepted input must fit comfortably.
    let depth = MAX_NESTING as usize;
    for src in [
        format!("var a = {};", nested("(", "x", ")", depth)),
        format!("var a = {};", nested("{", "x", "}", depth)),
        format!("var a = {};", nested("f(", "x", ")", depth)),
        format!("var a = {};", nested("a.f(", "x", ")", depth)),
        format!("var a = {};", nested("a[", "x", "]", depth)),
        nested("{", "x;", "}", depth),
        nested("while (x) ", "y;", "", depth),
    ] {
        let parsed = parse(&src);
        assert!(parsed.diagnostics.is_empty(), "{}", &src[..20]);
        assert!(!dump::script(&parsed.script).is_empty());
    }
}

#[test]
fn deep_nesting_gives_one_error_and_no_stack_overflow() {
    let n = 100_000;
    for src in [
        nested("(", "x", ")", n),
        nested("(", "", "", n),
        nested("{", "x", "}", n),
        nested("{", "", "", n),
        nested("[", "x", "]", n),
        nested("-", "x", "", n),
        nested("!", "", "", n),
        nested("f(", "x", ")", n),
        nested("a ? ", "b", " : c", n),
        format!("x{}", ".y".repeat(n)),
        format!("x{}", "[0]".repeat(n)),
        format!("x{}", " + 1".repeat(n)),
        format!("x{}", " = x".repeat(n)),
        format!("x{}", "++".repeat(n)),
    ] {
        let src = format!("a = {src};\nb = 1;");
        let parsed = parse(&src);
        let shown = &src[..src.len().min(30)];
        assert_eq!(parsed.diagnostics.len(), 1, "{shown}: {:#?}", parsed.diagnostics);
        assert!(parsed.diagnostics[0].message.contains("nested too deeply"), "{shown}");
        // The statement after the deep one is parsed normally.
        assert!(dump::script(&parsed.script).ends_with("(= b 1)\n"), "{shown}");
    }
    for src in [
        nested("{", "", "}", n),
        nested("{", "", "", n),
        nested("if (x) ", "y;", "", n),
        nested("while (x) { ", "y;", " }", n),
        nested("function f() { ", "", "}", n),
        format!("metadata {{ A: {} }}", nested("{ A: ", "1", " }", n)),
        format!("metadata {{ A: {} }}", nested("{", "1", "}", n)),
        format!("x = 1; {}", "else if (x) y; ".repeat(n)),
        format!("if (x) y; {}", "else if (x) y; ".repeat(n)),
    ] {
        let parsed = parse(&src);
        let shown = &src[..src.len().min(30)];
        assert!(!parsed.diagnostics.is_empty(), "{shown}");
        assert!(parsed.diagnostics.len() <= 2, "{shown}: {:#?}", parsed.diagnostics);
    }
}

/// Found by the hardening review: 199 nested brackets were reported as "more than 200 levels"
/// (the statement and its expression counted too). Each construct nests exactly 200 deep.
#[test]
fn the_nesting_limit_is_what_the_message_says() {
    type Nested = fn(usize) -> String;
    let cases: Vec<(&str, Nested)> = vec![
        ("parentheses", |k| format!("var x = {};", nested("(", "1", ")", k))),
        ("parentheses in an expression statement", |k| format!("{};", nested("(", "1", ")", k))),
        ("calls", |k| format!("{};", nested("f(", "1", ")", k))),
        ("method calls", |k| format!("{};", nested("a.f(", "1", ")", k))),
        ("indices", |k| format!("{};", nested("a[", "1", "]", k))),
        ("array literals", |k| format!("var x = {};", nested("{", "1", "}", k))),
        ("blocks", |k| nested("{", "x;", "}", k)),
        ("if statements", |k| nested("if (x) ", "y;", "", k)),
        ("parentheses in a function", |k| format!("function f() {{ var x = {}; }}", nested("(", "1", ")", k))),
        ("metadata collections", |k| format!("metadata {{ A: {} }}", nested("{ A: ", "1", " }", k))),
    ];
    let limit = MAX_NESTING as usize;
    for (what, make) in cases {
        for k in [limit - 1, limit] {
            assert_eq!(errors(&make(k)), vec![], "{k} nested {what}");
        }
        let too_deep = errors(&make(limit + 1));
        assert_eq!(too_deep.len(), 1, "{} nested {what}: {too_deep:?}", limit + 1);
        assert!(too_deep[0].1.contains("more than 200 levels"), "{what}: {}", too_deep[0].1);
    }
}
