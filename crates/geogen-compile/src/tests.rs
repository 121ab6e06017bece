//! Unit tests of lowering, checks and metadata, on hand-built syntax trees.

use geogen_diag::{codes, Diagnostic, ErrorCode, Span};
use geogen_syntax::ast::{BinaryOp::*, ForInit, Item, MetaValueKind, PostfixOp, Script, Stmt, StmtKind, UnaryOp};

use crate::test_ast::*;
use crate::*;

fn options() -> CompileOptions {
    CompileOptions::default().with_main_map_mandatory(false).with_functions(["Sin", "Print"])
}

fn compiled(script: &Script) -> CompiledScript {
    match compile(script, &options()) {
        Ok(c) => c,
        Err(e) => panic!("unexpected errors: {e:#?}"),
    }
}

/// The disassembly of `<main>` only, without its header.
fn main_code(body: Vec<Stmt>) -> String {
    let c = compiled(&stmts(body));
    let text = c.disassemble(None);
    let text = text.split("\n\n").next().unwrap_or("").to_string();
    text.lines().skip(1).map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l))).collect()
}

fn errors(script: &Script) -> Vec<Diagnostic> {
    match compile(script, &options()) {
        Ok(_) => panic!("expected errors"),
        Err(e) => e.into_vec(),
    }
}

fn codes_and_spans(script: &Script) -> Vec<(ErrorCode, Span)> {
    errors(script).into_iter().map(|d| (d.code, d.span.unwrap_or_default())).collect()
}

fn expect(body: Vec<Stmt>, expected: &str) {
    let actual = main_code(body);
    let expected: String = expected.lines().map(|l| format!("{}\n", l.trim())).filter(|l| l != "\n").collect();
    let actual_trimmed: String = actual.lines().map(|l| format!("{}\n", l.trim())).collect();
    assert_eq!(actual_trimmed, expected, "\nfull listing:\n{actual}");
}

// ----- lowering ---------------------------------------------------------------------------

#[test]
fn literals_and_operators() {
    expect(
        vec![expr(bin(Add, n(1.0), bin(Mul, n(2.5), id("x")))), expr(un(UnaryOp::Minus, s("a\"b")))],
        r#"LoadNumber 1
           LoadNumber 2.5
           LoadScope x
           CallGlobal * 2
           CallGlobal + 2
           Pop
           LoadString "a\"b"
           CallGlobal -un 1
           Pop
           LoadNull"#,
    );
}

#[test]
fn every_binary_and_unary_operator_has_its_vm_name() {
    let ops = [
        (Mul, "*"),
        (Div, "/"),
        (Rem, "%"),
        (Add, "+"),
        (Sub, "-"),
        (Shl, "<<"),
        (Shr, ">>"),
        (Lt, "<"),
        (Le, "<="),
        (Gt, ">"),
        (Ge, ">="),
        (Eq, "=="),
        (Ne, "!="),
        (BitAnd, "&"),
        (BitXor, "^"),
        (BitOr, "|"),
        (Is, "is"),
    ];
    for (op, name) in ops {
        expect(
            vec![expr(bin(op, id("a"), id("b")))],
            &format!("LoadScope a\nLoadScope b\nCallGlobal {name} 2\nPop\nLoadNull"),
        );
    }
    for (op, name) in [(UnaryOp::Plus, "+un"), (UnaryOp::Minus, "-un"), (UnaryOp::Not, "!"), (UnaryOp::Relative, "@")] {
        expect(vec![expr(un(op, id("a")))], &format!("LoadScope a\nCallGlobal {name} 1\nPop\nLoadNull"));
    }
}

#[test]
fn increments_and_decrements_take_references() {
    expect(
        vec![
            expr(un(UnaryOp::PreIncrement, id("x"))),
            expr(post(PostfixOp::Decrement, index(id("a"), vec![n(1.0)]))),
            expr(un(UnaryOp::PreDecrement, id("x"))),
            expr(post(PostfixOp::Increment, id("x"))),
        ],
        "LoadScopeRef x
         CallGlobal ++pre 1
         Pop
         LoadScope a
         LoadNumber 1
         CallMember []ref 1
         CallGlobal --post 1
         Pop
         LoadScopeRef x
         CallGlobal --pre 1
         Pop
         LoadScopeRef x
         CallGlobal ++post 1
         Pop
         LoadNull",
    );
}

#[test]
fn compound_assignment_is_reference_value_and_op_equals() {
    for (op, name) in [
        (Add, "+="),
        (Sub, "-="),
        (Mul, "*="),
        (Div, "/="),
        (Rem, "%="),
        (Shl, "<<="),
        (Shr, ">>="),
        (BitAnd, "&="),
        (BitOr, "|="),
        (BitXor, "^="),
    ] {
        expect(
            vec![expr(compound(op, id("x"), n(2.0)))],
            &format!("LoadScopeRef x\nLoadNumber 2\nCallGlobal {name} 2\nPop\nLoadNull"),
        );
    }
    // The reference is evaluated before the value (`a[++i] += ++i`).
    expect(
        vec![expr(compound(
            Add,
            index(id("a"), vec![un(UnaryOp::PreIncrement, id("i"))]),
            un(UnaryOp::PreIncrement, id("i")),
        ))],
        "LoadScope a
         LoadScopeRef i
         CallGlobal ++pre 1
         CallMember []ref 1
         LoadScopeRef i
         CallGlobal ++pre 1
         CallGlobal += 2
         Pop
         LoadNull",
    );
}

#[test]
fn plain_assignments() {
    expect(
        vec![
            expr(assign(id("x"), n(1.0))),
            expr(assign(member(id("o"), "m"), n(2.0))),
            expr(assign(index(id("a"), vec![s("k"), n(3.0)]), n(4.0))),
        ],
        r#"LoadNumber 1
           StoreScope x
           Pop
           LoadScope o
           LoadNumber 2
           StoreMember m
           Pop
           LoadScope a
           LoadString "k"
           LoadNumber 3
           LoadNumber 4
           CallMember []= 3
           Pop
           LoadNull"#,
    );
}

#[test]
fn chained_assignment_is_right_associative() {
    expect(
        vec![expr(assign(id("a"), assign(id("b"), assign(index(id("c"), vec![n(0.0)]), n(5.0)))))],
        "LoadScope c
         LoadNumber 0
         LoadNumber 5
         CallMember []= 2
         StoreScope b
         StoreScope a
         Pop
         LoadNull",
    );
}

#[test]
fn push_back_as_a_statement_and_as_a_value() {
    expect(
        vec![expr(assign(index(id("a"), vec![]), n(1.0)))],
        "LoadScope a
         LoadNumber 1
         CallMember PushBack 1
         Pop
         LoadNull",
    );
    // As a value, `e` is parked in a hidden local because PushBack returns null.
    expect(
        vec![expr(assign(id("x"), assign(index(id("a"), vec![]), n(1.0))))],
        "LoadScope a
         LoadNumber 1
         DeclareLocal <push0>
         StoreScope <push0>
         CallMember PushBack 1
         Pop
         LoadScope <push0>
         StoreScope x
         Pop
         LoadNull",
    );
}

#[test]
fn member_compound_and_increment_go_through_store_member() {
    expect(
        vec![expr(compound(Mul, member(id("o"), "m"), n(2.0))), expr(post(PostfixOp::Increment, member(id("o"), "m")))],
        "LoadScope o
         Dup
         LoadMember m
         LoadNumber 2
         CallGlobal * 2
         StoreMember m
         Pop
         LoadScope o
         Dup
         LoadMember m
         DeclareLocal <old0>
         StoreScope <old0>
         LoadNumber 1
         CallGlobal + 2
         StoreMember m
         Pop
         LoadScope <old0>
         Pop
         LoadNull",
    );
}

#[test]
fn calls_members_and_indexing() {
    expect(
        vec![expr(mcall(
            member(id("p"), "X"),
            "F",
            vec![call("Sin", vec![n(1.0)]), index(id("a"), vec![n(1.0), n(2.0)])],
        ))],
        "LoadScope p
         LoadMember X
         LoadNumber 1
         CallGlobal Sin 1
         LoadScope a
         LoadNumber 1
         LoadNumber 2
         CallMember [] 2
         CallMember F 2
         Pop
         LoadNull",
    );
}

#[test]
fn coordinate_point_and_array_literals() {
    expect(
        vec![
            expr(coord(vec![n(1.0)])),
            expr(coord(vec![un(UnaryOp::Relative, n(0.5)), n(2.0)])),
            expr(array(vec![(None, n(1.0)), (Some(s("k")), b(true))])),
        ],
        r#"LoadScope Coordinate
           LoadNumber 1
           CallMember FromNumber 1
           Pop
           LoadScope Point
           LoadNumber 0.5
           CallGlobal @ 1
           LoadNumber 2
           CallMember Create 2
           Pop
           LoadScope Array
           CallMember Empty 0
           Dup
           LoadNumber 1
           CallMember PushBack 1
           Pop
           Dup
           LoadString "k"
           LoadBool true
           CallMember []= 2
           Pop
           Pop
           LoadNull"#,
    );
}

#[test]
fn conditional_evaluates_one_branch() {
    expect(
        vec![expr(cond(id("c"), n(1.0), n(2.0)))],
        "LoadScope c
         If #1 {
           LoadNumber 1
         } else #2 {
           LoadNumber 2
         }
         Pop
         LoadNull",
    );
}

#[test]
fn and_or_short_circuit() {
    expect(
        vec![expr(bin(And, id("a"), id("b"))), expr(bin(Or, id("a"), id("b")))],
        "LoadScope a
         If #1 {
           LoadScope b
           If #2 {
             LoadBool true
           } else #3 {
             LoadBool false
           }
         } else #4 {
           LoadBool false
         }
         Pop
         LoadScope a
         If #5 {
           LoadBool true
         } else #6 {
           LoadScope b
           If #7 {
             LoadBool true
           } else #8 {
             LoadBool false
           }
         }
         Pop
         LoadNull",
    );
}

#[test]
fn var_evaluates_its_initialiser_before_declaring() {
    expect(
        vec![var("x", Some(bin(Add, id("x"), n(1.0)))), var("y", None), global("g", Some(n(2.0))), global("h", None)],
        "LoadScope x
         LoadNumber 1
         CallGlobal + 2
         DeclareLocal x
         StoreScope x
         Pop
         DeclareLocal y
         LoadNumber 2
         DeclareGlobal g
         StoreGlobal g
         Pop
         DeclareGlobal h
         LoadNull",
    );
}

#[test]
fn if_else_blocks_and_empty_blocks() {
    expect(
        vec![
            if_(id("c"), block(vec![expr(n(1.0))]), Some(if_(id("d"), expr(n(2.0)), None))),
            block(vec![]),
            block(vec![var("z", None)]),
            if_(id("c"), block(vec![]), Some(block(vec![]))),
        ],
        "LoadScope c
         If #1 {
           LoadNumber 1
           Pop
         } else #2 {
           LoadScope d
           If #3 {
             LoadNumber 2
             Pop
           }
         }
         CallBlock #4 {
           DeclareLocal z
         }
         LoadScope c
         If #5 {
         }
         LoadNull",
    );
}

#[test]
fn while_with_break_and_continue() {
    expect(
        vec![while_(id("c"), block(vec![if_(id("x"), brk(), Some(cont()))]))],
        "While #1 {
           LoadScope c
           If #2 {
           } else #3 {
             Break 2
           }
           CallBlock #4 {
             LoadScope x
             If #5 {
               Break 3
             } else #6 {
               Continue 3
             }
           }
         }
         LoadNull",
    );
}

#[test]
fn for_continue_runs_the_step() {
    expect(
        vec![for_(
            Some(ForInit::Var { name: ident("i"), init: Some(n(0.0)) }),
            Some(bin(Lt, id("i"), n(5.0))),
            Some(post(PostfixOp::Increment, id("i"))),
            block(vec![if_(bin(Eq, id("i"), n(2.0)), cont(), None), if_(id("done"), brk(), None)]),
        )],
        "CallBlock #1 {
           LoadNumber 0
           DeclareLocal i
           StoreScope i
           Pop
           While #2 {
             LoadScope i
             LoadNumber 5
             CallGlobal < 2
             If #3 {
             } else #4 {
               Break 2
             }
             CallBlock #5 {
               LoadScope i
               LoadNumber 2
               CallGlobal == 2
               If #6 {
                 Break 2
               }
               LoadScope done
               If #7 {
                 Break 3
               }
             }
             LoadScopeRef i
             CallGlobal ++post 1
             Pop
           }
         }
         LoadNull",
    );
}

#[test]
fn for_without_clauses_loops_forever_and_expression_init_is_popped() {
    expect(
        vec![for_(Some(ForInit::Expr(assign(id("i"), n(0.0)))), None, None, brk())],
        "CallBlock #1 {
           LoadNumber 0
           StoreScope i
           Pop
           While #2 {
             CallBlock #3 {
               Break 2
             }
           }
         }
         LoadNull",
    );
}

/// Found by the hardening review: `for (;;) {}` compiled to an empty looping block, which the VM
/// refuses (GGE5001) because an iteration that executes nothing would never use up the budget.
#[test]
fn loops_with_empty_bodies_still_execute_an_instruction_per_iteration() {
    let sources = [
        "for (;;) {}",
        "for (;;) ;",
        "for (;;) { {} }",
        "for (;;) { ; ; }",
        "for (var i = 0;;) {}",
        "var i = 0; for (i = 0;;) ;",
        "while (true) {}",
        "while (true) ;",
        "while (true) { {} }",
    ];
    for source in sources {
        let parsed = geogen_syntax::parse(source);
        assert!(parsed.diagnostics.is_empty(), "{source}: {:?}", parsed.diagnostics);
        let compiled = compile(&parsed.script, &options()).unwrap_or_else(|e| panic!("{source}: {e:?}"));
        let looping: Vec<BlockId> = compiled
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter_map(|i| match i.op {
                Op::While(block) => Some(block),
                _ => None,
            })
            .collect();
        assert!(!looping.is_empty(), "{source}: no looping block");
        for block in looping {
            assert!(
                !compiled.blocks[block.0 as usize].instructions.is_empty(),
                "{source}: empty looping block\n{}",
                compiled.disassemble(None)
            );
        }
    }
}

#[test]
fn switch_with_fall_through_default_and_break() {
    expect(
        vec![switch(
            id("x"),
            vec![(Some(n(1.0)), vec![expr(n(10.0))]), (None, vec![expr(n(20.0)), brk()]), (Some(s("two")), vec![])],
        )],
        r#"CallBlock #1 {
             LoadScope x
             DeclareLocal <switch0>
             StoreScope <switch0>
             Pop
             LoadNumber 3
             DeclareLocal <case1>
             StoreScope <case1>
             Pop
             LoadScope <case1>
             LoadNumber 3
             CallGlobal == 2
             If #2 {
               LoadScope <switch0>
               LoadNumber 1
               CallGlobal == 2
               If #3 {
                 LoadNumber 0
                 StoreScope <case1>
                 Pop
               }
             }
             LoadScope <case1>
             LoadNumber 3
             CallGlobal == 2
             If #4 {
               LoadScope <switch0>
               LoadString "two"
               CallGlobal == 2
               If #5 {
                 LoadNumber 2
                 StoreScope <case1>
                 Pop
               }
             }
             LoadScope <case1>
             LoadNumber 3
             CallGlobal == 2
             If #6 {
               LoadNumber 1
               StoreScope <case1>
               Pop
             }
             LoadScope <case1>
             LoadNumber 0
             CallGlobal <= 2
             If #7 {
               LoadNumber 10
               Pop
             }
             LoadScope <case1>
             LoadNumber 1
             CallGlobal <= 2
             If #8 {
               LoadNumber 20
               Pop
               Break 2
             }
           }
           LoadNull"#,
    );
}

#[test]
fn continue_inside_a_switch_continues_the_loop_and_break_leaves_the_switch() {
    expect(
        vec![while_(id("c"), switch(id("x"), vec![(None, vec![cont(), brk()])]))],
        "While #1 {
           LoadScope c
           If #2 {
           } else #3 {
             Break 2
           }
           CallBlock #4 {
             CallBlock #5 {
               LoadScope x
               DeclareLocal <switch0>
               StoreScope <switch0>
               Pop
               LoadNumber 1
               DeclareLocal <case1>
               StoreScope <case1>
               Pop
               LoadScope <case1>
               LoadNumber 1
               CallGlobal == 2
               If #6 {
                 LoadNumber 0
                 StoreScope <case1>
                 Pop
               }
               LoadScope <case1>
               LoadNumber 0
               CallGlobal <= 2
               If #7 {
                 Continue 4
                 Break 2
               }
             }
           }
         }
         LoadNull",
    );
}

#[test]
fn functions_return_through_every_block() {
    let c = compiled(&script(vec![
        function(ident("f"), &["a", "b"], vec![while_(b(true), block(vec![ret(Some(id("a")))])), ret(None)]),
        Item::Stmt(expr(call("f", vec![n(1.0), n(2.0)]))),
    ]));
    let text = c.to_string();
    let expected = "function <main>() #0
  LoadNumber 1
  LoadNumber 2
  CallGlobal f 2
  Pop
  LoadNull

function f(a, b) #1
  While #2 {
    LoadBool true
    If #3 {
    } else #4 {
      Break 2
    }
    CallBlock #5 {
      LoadScope a
      Break 3
    }
  }
  LoadNull
  Break 1
  LoadNull
";
    assert_eq!(text, expected);
    assert_eq!(&*c.functions["f"].params[1], "b");
}

#[test]
fn yields_record_map_names() {
    let c = compiled(&stmts(vec![
        yield_(id("m"), None),
        yield_(id("m"), Some("main")),
        yield_(id("n"), Some("other")),
        yield_(id("n"), Some("other")),
    ]));
    let names: Vec<&str> = c.map_names.iter().map(|n| &**n).collect();
    assert_eq!(names, ["main", "other"]);
    let ops: Vec<String> = c.block(c.main).instructions.iter().map(|i| i.op.to_string()).collect();
    assert_eq!(ops[1], "Yield \"main\"");
    assert_eq!(ops[3], "Yield \"main\"");
    assert_eq!(ops[5], "Yield \"other\"");
}

#[test]
fn a_map_name_that_is_not_a_name_is_gge1315_at_the_name() {
    let name_span = Span::new(20, 36);
    let yield_stmt = StmtKind::Yield { value: id("m"), name: Some(("../victim/f".to_string(), name_span)) };
    let bad = stmts(vec![Stmt { kind: yield_stmt, span: Span::default() }]);
    let found = errors(&bad);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].code, codes::GGE1315);
    assert_eq!(found[0].span, Some(name_span));
    assert!(found[0].message.contains("`.`"), "{}", found[0].message);
    assert!(found[0].hint.as_deref().is_some_and(|h| h.contains("A-Z")), "{:?}", found[0].hint);
    // A newline in the name is shown escaped, not printed raw.
    let newline = stmts(vec![yield_(id("m"), Some("a\nb"))]);
    let message = &errors(&newline)[0].message;
    assert!(message.contains("a\\nb") && !message.contains('\n'), "{message}");
    assert!(compile(&stmts(vec![yield_(id("m"), Some("Hills-2_b"))]), &options()).is_ok());
}

#[test]
fn error_nodes_are_skipped_with_a_balanced_stack() {
    let c = compiled(&stmts(vec![
        expr(err()),
        Stmt { kind: StmtKind::Error, span: Span::default() },
        expr(bin(Add, err(), n(1.0))),
        expr(assign(err(), n(2.0))),
        expr(compound(Add, err(), n(2.0))),
        expr(post(PostfixOp::Increment, err())),
        expr(coord(vec![])),
        expr(coord(vec![n(1.0), n(2.0), n(3.0)])),
    ]));
    // Every expression statement still pushes one value and pops it.
    let text = c.to_string();
    assert_eq!(text.matches("Pop").count(), 6, "{text}");
}

#[test]
fn instructions_carry_their_source_spans() {
    let c = compiled(&stmts(vec![expr(bin(Add, n(1.0).at(0, 1), n(2.0).at(4, 5)).at(0, 5)).at(0, 6)]));
    let spans: Vec<(u32, u32)> = c.block(c.main).instructions.iter().map(|i| (i.span.start, i.span.end)).collect();
    assert_eq!(spans[..4], [(0, 1), (4, 5), (0, 5), (0, 6)]);
    let source = geogen_diag::SourceFile::new("t.ggs", "1 + 2;");
    let listing = c.disassemble(Some(&source));
    assert!(listing.lines().any(|l| l.starts_with("1:5 ") && l.ends_with(" LoadNumber 2")), "{listing}");
}

// ----- checks -----------------------------------------------------------------------------

fn sp(start: u32, end: u32) -> Span {
    Span::new(start, end)
}

#[test]
fn break_continue_and_return_outside_their_constructs() {
    let found = codes_and_spans(&stmts(vec![brk().at(0, 6), cont().at(10, 19), ret(Some(n(1.0))).at(20, 29)]));
    assert_eq!(found, [(codes::GGE1301, sp(0, 6)), (codes::GGE1303, sp(10, 19)), (codes::GGE1304, sp(20, 29))]);
    // In a function, outside a loop.
    let found = codes_and_spans(&script(vec![function(ident("f"), &[], vec![brk().at(3, 9), cont().at(11, 20)])]));
    assert_eq!(found, [(codes::GGE1301, sp(3, 9)), (codes::GGE1303, sp(11, 20))]);
    // A switch takes `break` but not `continue`.
    let found = codes_and_spans(&stmts(vec![switch(id("x"), vec![(None, vec![brk(), cont().at(5, 14)])])]));
    assert_eq!(found, [(codes::GGE1303, sp(5, 14))]);
}

#[test]
fn break_and_continue_in_loops_compile() {
    compiled(&stmts(vec![while_(b(true), block(vec![brk(), cont()]))]));
    compiled(&script(vec![function(ident("f"), &[], vec![ret(None), for_(None, None, None, cont())])]));
}

#[test]
fn function_redefinitions() {
    let found = errors(&script(vec![
        function(ident("Sin").at(9, 12), &[], vec![]),
        function(ident("f").at(20, 21), &[], vec![]),
        function(ident("f").at(40, 41), &["x"], vec![]),
    ]));
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].code, found[0].span), (codes::GGE1306, Some(sp(9, 12))));
    assert!(found[0].message.contains("standard library"), "{}", found[0].message);
    assert_eq!((found[1].code, found[1].span), (codes::GGE1306, Some(sp(40, 41))));
    assert_eq!(found[1].labels, [(sp(20, 21), "first defined here".to_string())]);
}

#[test]
fn enum_checks() {
    let found = errors(&script(vec![
        enum_(ident("Type").at(5, 9), vec![(ident("A"), None)]),
        enum_(ident("HeightMap").at(20, 29), vec![(ident("A"), None)]),
        enum_(ident("E").at(40, 41), vec![(ident("A"), None)]),
        enum_(ident("E").at(50, 51), vec![(ident("B"), None)]),
        enum_(
            ident("F"),
            vec![(ident("A").at(60, 61), None), (ident("B"), Some((1.5, sp(66, 69)))), (ident("A").at(70, 71), None)],
        ),
    ]));
    let got: Vec<(ErrorCode, Option<Span>)> = found.iter().map(|d| (d.code, d.span)).collect();
    assert_eq!(
        got,
        [
            (codes::GGE1311, Some(sp(5, 9))),
            (codes::GGE1308, Some(sp(20, 29))),
            (codes::GGE1308, Some(sp(50, 51))),
            (codes::GGE1310, Some(sp(66, 69))),
            (codes::GGE1309, Some(sp(70, 71))),
        ]
    );
    assert_eq!(found[2].labels, [(sp(40, 41), "first defined here".to_string())]);
    assert_eq!(found[4].labels, [(sp(60, 61), "first defined here".to_string())]);
}

#[test]
fn enum_values_are_explicit_or_previous_plus_one() {
    let c = compiled(&script(vec![enum_(
        ident("E"),
        vec![
            (ident("A"), None),
            (ident("B"), Some((5.0, Span::default()))),
            (ident("C"), None),
            (ident("D"), Some((2.0, Span::default()))),
            (ident("F"), None),
        ],
    )]));
    let items: Vec<(&str, f64)> = c.enums[0].items.iter().map(|(n, v)| (&**n, *v)).collect();
    assert_eq!(items, [("A", 0.0), ("B", 5.0), ("C", 6.0), ("D", 2.0), ("F", 3.0)]);
    assert!(c.to_string().starts_with("enum E { A = 0, B = 5, C = 6, D = 2, F = 3 }\n"));
}

#[test]
fn assignment_to_non_writable_targets_is_gge1307() {
    let targets = [
        call("Sin", vec![n(1.0)]).at(0, 6),
        bin(Add, id("a"), id("b")).at(0, 5),
        n(1.0).at(0, 1),
        mcall(id("a"), "F", vec![]).at(0, 5),
        cond(id("a"), id("b"), id("c")).at(0, 9),
        assign(id("a"), id("b")).at(0, 5),
    ];
    for target in targets {
        let span = target.span;
        for stmt in [
            expr(assign(target.clone(), n(1.0))),
            expr(compound(Add, target.clone(), n(1.0))),
            expr(un(UnaryOp::PreIncrement, target.clone())),
            expr(post(PostfixOp::Decrement, target.clone())),
        ] {
            assert_eq!(codes_and_spans(&stmts(vec![stmt])), [(codes::GGE1307, span)]);
        }
    }
}

#[test]
fn empty_index_outside_plain_assignment_is_gge1201() {
    let push = || index(id("a"), vec![]).at(3, 6);
    for stmt in [
        expr(push()),
        expr(compound(Add, push(), n(1.0))),
        expr(post(PostfixOp::Increment, push())),
        expr(call("Print", vec![push()])),
        expr(assign(id("x"), push())),
    ] {
        let found = errors(&stmts(vec![stmt]));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].code, found[0].span), (codes::GGE1201, Some(sp(3, 6))));
        assert!(found[0].hint.as_deref().unwrap_or("").contains("a[] = v"));
    }
}

#[test]
fn duplicate_default_is_gge1313() {
    let mut sw = switch(id("x"), vec![(None, vec![]), (Some(n(1.0)), vec![]), (None, vec![])]);
    if let StmtKind::Switch { cases, .. } = &mut sw.kind {
        cases[0].span = sp(10, 18);
        cases[2].span = sp(30, 38);
    }
    let found = errors(&stmts(vec![sw]));
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].code, found[0].span), (codes::GGE1313, Some(sp(30, 38))));
    assert_eq!(found[0].labels[0].0, sp(10, 18));
}

#[test]
fn main_map_is_checked_only_when_mandatory() {
    let mandatory = options().with_main_map_mandatory(true);
    let no_main = stmts(vec![yield_(id("m"), Some("other"))]);
    let found = compile(&no_main, &mandatory).unwrap_err();
    assert_eq!(found.iter().map(|d| d.code).collect::<Vec<_>>(), [codes::GGE1312]);
    assert!(compile(&no_main, &options()).is_ok());
    // Unnamed, `as "main"`, or inside a function: all count.
    assert!(compile(&stmts(vec![yield_(id("m"), None)]), &mandatory).is_ok());
    assert!(compile(&stmts(vec![yield_(id("m"), Some("main"))]), &mandatory).is_ok());
    let in_function = script(vec![function(ident("f"), &[], vec![yield_(id("m"), None)])]);
    assert!(compile(&in_function, &mandatory).is_ok());
}

#[test]
fn all_errors_are_reported_sorted_by_position() {
    let found = codes_and_spans(&script(vec![
        Item::Stmt(cont().at(50, 59)),
        function(ident("Print").at(30, 35), &[], vec![]),
        Item::Stmt(brk().at(10, 16)),
        enum_(ident("Type").at(70, 74), vec![(ident("A"), None)]),
    ]));
    assert_eq!(
        found,
        [
            (codes::GGE1301, sp(10, 16)),
            (codes::GGE1306, sp(30, 35)),
            (codes::GGE1303, sp(50, 59)),
            (codes::GGE1311, sp(70, 74))
        ]
    );
}

// ----- metadata ---------------------------------------------------------------------------

fn metadata_of(items: Vec<Item>) -> ScriptMetadata {
    compiled(&script(items)).metadata
}

fn metadata_errors(items: Vec<Item>) -> Vec<(ErrorCode, Span)> {
    codes_and_spans(&script(items))
}

fn params(entries: Vec<(&str, MetaValue)>) -> Item {
    meta(vec![("Parameters", kv(entries))])
}

use geogen_syntax::ast::{MetaValue, Metadata};

#[test]
fn metadata_strings_and_dimensions() {
    let m = metadata_of(vec![meta(vec![
        ("Name", mstr("Island")),
        ("Description", mstr("d")),
        ("Author", mstr("a")),
        ("Width", mid("Finite")),
        ("Height", kv(vec![("Min", mnum(10.0)), ("Max", mnum(20.0)), ("Default", mnum(15.0))])),
        ("Unknown", mv(MetaValueKind::List(vec![mnum(1.0), mstr("x")]))),
    ])]);
    assert_eq!(m.name.as_deref(), Some("Island"));
    assert_eq!(m.description.as_deref(), Some("d"));
    assert_eq!(m.author.as_deref(), Some("a"));
    assert_eq!(m.width, Dimension::Finite { default: None, min: 1, max: metadata::MAP_SIZE_MAX });
    assert_eq!(m.height, Dimension::Finite { default: Some(15), min: 10, max: 20 });

    let m = metadata_of(vec![meta(vec![("Width", mid("Infinite"))])]);
    assert_eq!((m.width, m.height), (Dimension::Infinite, Dimension::Infinite));
    let m = metadata_of(vec![meta(vec![("Width", kv(vec![]))])]);
    assert_eq!(m.width, Dimension::Finite { default: None, min: 1, max: metadata::MAP_SIZE_MAX });
    assert_eq!(compiled(&stmts(vec![])).metadata, ScriptMetadata::default());
}

#[test]
fn metadata_dimension_errors() {
    let found = metadata_errors(vec![meta(vec![
        ("Name", mnum(1.0).at(1, 2)),
        ("Width", mid("Big").at(3, 6)),
        ("Height", mstr("x").at(7, 10)),
    ])]);
    assert_eq!(found, [(codes::GGE1406, sp(1, 2)), (codes::GGE1410, sp(3, 6)), (codes::GGE1409, sp(7, 10))]);
    let found = metadata_errors(vec![meta(vec![("Width", mnum(5.0).at(3, 4))])]);
    assert_eq!(found, [(codes::GGE1408, sp(3, 4))]);

    let found = metadata_errors(vec![meta(vec![
        (
            "Width",
            kv(vec![
                ("Default", mnum(0.0).at(1, 2)),
                ("Min", mnum(1.5).at(3, 6)),
                ("Max", mnum(4294967294.0).at(7, 17)),
            ]),
        ),
        (
            "Height",
            kv(vec![("Min", mnum(20.0).at(20, 22)), ("Max", mnum(10.0).at(23, 25)), ("Default", mstr("a").at(26, 29))]),
        ),
    ])]);
    assert_eq!(
        found,
        [
            (codes::GGE1411, sp(1, 2)),
            (codes::GGE1411, sp(3, 6)),
            (codes::GGE1411, sp(7, 17)),
            (codes::GGE1412, sp(20, 22)),
            (codes::GGE1406, sp(26, 29))
        ]
    );
    // The largest size is allowed.
    let m = metadata_of(vec![meta(vec![("Width", kv(vec![("Max", mnum(4294967293.0))]))])]);
    assert_eq!(m.width, Dimension::Finite { default: None, min: 1, max: 4294967293 });
}

#[test]
fn metadata_root_and_duplicate_keys() {
    let found = metadata_errors(vec![meta(vec![
        ("Name", mstr("a")),
        ("Width", kv_at(vec![(ident("Min").at(5, 8), mnum(1.0)), (ident("Min").at(10, 13), mnum(2.0))])),
    ])]);
    assert_eq!(found, [(codes::GGE1401, sp(10, 13))]);
    let root = kv_at(vec![(ident("Name").at(1, 5), mstr("a")), (ident("Name").at(9, 13), mstr("b"))]);
    let found = errors(&script(vec![Item::Metadata(Metadata { root, span: Span::default() })]));
    assert_eq!((found[0].code, found[0].span), (codes::GGE1401, Some(sp(9, 13))));
    assert_eq!(found[0].labels[0].0, sp(1, 5));
    // Nested in an unknown key too.
    let found = metadata_errors(vec![meta(vec![(
        "X",
        mv(MetaValueKind::List(vec![kv_at(vec![(ident("A"), mnum(1.0)), (ident("A").at(4, 5), mnum(2.0))])])),
    )])]);
    assert_eq!(found, [(codes::GGE1401, sp(4, 5))]);
    // A root that is not a key-value collection.
    let root = mv(MetaValueKind::List(vec![mnum(1.0)])).at(0, 9);
    let found = codes_and_spans(&script(vec![Item::Metadata(Metadata { root, span: Span::default() })]));
    assert_eq!(found, [(codes::GGE1201, sp(0, 9))]);
}

#[test]
fn parameter_kinds_and_defaults() {
    let m = metadata_of(vec![
        enum_(
            ident("Color"),
            vec![
                (ident("Red"), Some((3.0, Span::default()))),
                (ident("Green"), Some((1.0, Span::default()))),
                (ident("Blue"), Some((1.0, Span::default()))),
            ],
        ),
        params(vec![
            ("Flag", kv(vec![("Type", mid("Boolean"))])),
            (
                "On",
                kv(vec![
                    ("Default", mv(MetaValueKind::Bool(true))),
                    ("Label", mstr("Switch")),
                    ("Description", mstr("d")),
                ]),
            ),
            ("Size", kv(vec![("Type", mid("Number"))])),
            (
                "Count",
                kv(vec![
                    ("Default", mnum(4.0)),
                    ("Min", mnum(2.0)),
                    ("Max", mnum(8.0)),
                    ("Restriction", mid("PowersOf2")),
                ]),
            ),
            ("Height", kv(vec![("Max", mnum(5.0))])),
            ("Tint", kv(vec![("Type", mid("Color"))])),
            ("Tint2", kv(vec![("Type", mid("Color")), ("Default", mid("Red"))])),
            ("Dir", kv(vec![("Type", mid("Direction"))])),
        ]),
    ]);
    let kinds: Vec<(&str, &ParameterKind)> = m.parameters.iter().map(|p| (&*p.name, &p.kind)).collect();
    let num = |default, min, max, restriction| ParameterKind::Number { default, min, max, restriction };
    let color = |default: &str| ParameterKind::Enum {
        type_name: Name::from("Color"),
        items: vec![(Name::from("Red"), 3.0), (Name::from("Green"), 1.0), (Name::from("Blue"), 1.0)],
        default: Name::from(default),
    };
    assert_eq!(kinds[0], ("Flag", &ParameterKind::Boolean { default: false }));
    assert_eq!(kinds[1], ("On", &ParameterKind::Boolean { default: true }));
    assert_eq!(kinds[2], ("Size", &num(0.0, 0.0, 100.0, Restriction::Unrestricted)));
    assert_eq!(kinds[3], ("Count", &num(4.0, 2.0, 8.0, Restriction::PowersOf2)));
    assert_eq!(kinds[4], ("Height", &num(0.0, 0.0, 5.0, Restriction::Unrestricted)));
    // The item closest to zero, the first on a tie.
    assert_eq!(kinds[5], ("Tint", &color("Green")));
    assert_eq!(kinds[6], ("Tint2", &color("Red")));
    assert_eq!(
        kinds[7],
        (
            "Dir",
            &ParameterKind::Enum {
                type_name: Name::from("Direction"),
                items: vec![(Name::from("Horizontal"), 0.0), (Name::from("Vertical"), 1.0)],
                default: Name::from("Horizontal"),
            }
        )
    );
    assert_eq!((m.parameters[0].label.as_str(), m.parameters[0].description.as_str()), ("Flag", ""));
    assert_eq!((m.parameters[1].label.as_str(), m.parameters[1].description.as_str()), ("Switch", "d"));
    assert_eq!(m.parameter("Tint2").map(default_value), Some(ParameterValue::Enum(Name::from("Red"), 3.0)));
}

#[test]
fn parameter_structure_errors() {
    let found = metadata_errors(vec![meta(vec![("Parameters", mstr("x").at(2, 5))])]);
    assert_eq!(found, [(codes::GGE1402, sp(2, 5))]);
    let entries = vec![(ident("P"), mnum(1.0).at(2, 3)), (ident("Q").at(5, 6), kv(vec![]))];
    let found = metadata_errors(vec![meta(vec![("Parameters", kv_at(entries))])]);
    // Q has nothing to infer its type from.
    assert_eq!(found, [(codes::GGE1403, sp(2, 3)), (codes::GGE1405, sp(5, 6))]);
}

#[test]
fn reserved_parameter_names_say_reserved() {
    for reserved in metadata::RESERVED_PARAMETER_NAMES {
        let entries = vec![(ident(reserved).at(4, 9), kv(vec![("Type", mid("Number"))]))];
        let found = errors(&script(vec![meta(vec![("Parameters", kv_at(entries))])]));
        assert_eq!((found[0].code, found[0].span), (codes::GGE1405, Some(sp(4, 9))));
        assert!(found[0].message.contains("reserved"), "{}", found[0].message);
    }
    let found = errors(&script(vec![params(vec![("P", kv(vec![("Label", mstr("x"))]))])]));
    assert!(found[0].message.contains("cannot be inferred"), "{}", found[0].message);
}

#[test]
fn parameter_attribute_errors() {
    let cases: Vec<(MetaValue, ErrorCode, Span)> = vec![
        (kv(vec![("Type", mid("Number")), ("Label", mnum(1.0).at(1, 2))]), codes::GGE1406, sp(1, 2)),
        (kv(vec![("Type", mid("Number")), ("Description", mid("x").at(1, 2))]), codes::GGE1406, sp(1, 2)),
        (kv(vec![("Type", mstr("Number").at(1, 9))]), codes::GGE1406, sp(1, 9)),
        (kv(vec![("Type", mid("Number")), ("Min", mstr("1").at(3, 6))]), codes::GGE1406, sp(3, 6)),
        (kv(vec![("Type", mid("Number")), ("Max", mv(MetaValueKind::Bool(true)).at(3, 7))]), codes::GGE1406, sp(3, 7)),
        (
            kv(vec![("Type", mid("Number")), ("Default", mv(MetaValueKind::Bool(true)).at(3, 7))]),
            codes::GGE1406,
            sp(3, 7),
        ),
        (kv(vec![("Type", mid("Boolean")), ("Default", mnum(1.0).at(3, 4))]), codes::GGE1406, sp(3, 4)),
        (kv(vec![("Default", mstr("x").at(3, 6))]), codes::GGE1406, sp(3, 6)),
        (kv(vec![("Restriction", mid("Odd").at(3, 6))]), codes::GGE1407, sp(3, 6)),
        (kv(vec![("Restriction", mnum(2.0).at(3, 4))]), codes::GGE1406, sp(3, 4)),
        (kv(vec![("Type", mid("HeightMap").at(3, 12))]), codes::GGE1413, sp(3, 12)),
        (kv(vec![("Type", mid("Direction")), ("Default", mid("Up").at(3, 5))]), codes::GGE1410, sp(3, 5)),
        (kv(vec![("Type", mid("Direction")), ("Default", mnum(1.0).at(3, 4))]), codes::GGE1406, sp(3, 4)),
    ];
    for (definition, code, span) in cases {
        let found = metadata_errors(vec![params(vec![("P", definition.clone())])]);
        assert_eq!(found, [(code, span)], "{definition:?}");
    }
}

#[test]
fn number_parameter_ranges_are_gge1414() {
    type Case<'a> = (Vec<(&'a str, MetaValue)>, Span, &'a str);
    let cases: Vec<Case> = vec![
        (vec![("Min", mnum(10.0).at(1, 3)), ("Max", mnum(5.0).at(4, 5))], sp(1, 3), "Min 10 greater than Max 5"),
        (vec![("Default", mnum(500.0).at(1, 4))], sp(1, 4), "Default 500 outside its range [0, 100]"),
        (vec![("Min", mnum(5.0)), ("Default", mnum(1.0).at(2, 3))], sp(2, 3), "outside its range [5, 100]"),
        (vec![("Max", mnum(10.5)), ("Restriction", mid("Integers").at(7, 15))], sp(7, 15), "Max 10.5 is not allowed"),
        (
            vec![("Restriction", mid("PowersOf2").at(7, 15))],
            sp(7, 15),
            "Min 0 (the default), Max 100 (the default), Default 0 (the default) are not allowed",
        ),
        (
            vec![
                ("Min", mnum(1.0)),
                ("Max", mnum(1000.0)),
                ("Default", mnum(20.0)),
                ("Restriction", mid("PowersOf10").at(7, 15)),
            ],
            sp(7, 15),
            "Default 20 is not allowed",
        ),
    ];
    for (attributes, span, message) in cases {
        let found = errors(&script(vec![params(vec![("P", kv(attributes))])]));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].code, found[0].span), (codes::GGE1414, Some(span)));
        assert!(found[0].message.contains(message), "{}", found[0].message);
    }
    let m = metadata_of(vec![params(vec![(
        "P",
        kv(vec![
            ("Min", mnum(1.0)),
            ("Max", mnum(1000.0)),
            ("Default", mnum(100.0)),
            ("Restriction", mid("PowersOf10")),
        ]),
    )])]);
    assert_eq!(
        m.parameters[0].kind,
        ParameterKind::Number { default: 100.0, min: 1.0, max: 1000.0, restriction: Restriction::PowersOf10 }
    );
}

#[test]
fn parameter_types_may_name_script_enums_declared_anywhere() {
    let m = metadata_of(vec![
        params(vec![("P", kv(vec![("Type", mid("Late"))]))]),
        enum_(ident("Late"), vec![(ident("X"), Some((2.0, Span::default())))]),
    ]);
    assert_eq!(m.parameters[0].kind.type_name(), "Late");
}

#[test]
fn duplicate_function_parameters_are_gge1306() {
    let f = Item::Function(geogen_syntax::ast::FunctionDecl {
        name: ident("f"),
        params: vec![ident("a").at(11, 12), ident("b"), ident("a").at(17, 18)],
        body: geogen_syntax::ast::Block { stmts: vec![], span: Span::default() },
        span: Span::default(),
    });
    let found = errors(&script(vec![f]));
    assert_eq!((found[0].code, found[0].span), (codes::GGE1306, Some(sp(17, 18))));
    assert!(found[0].message.contains("two parameters named `a`"), "{}", found[0].message);
    assert_eq!(found[0].labels[0].0, sp(11, 12));
}
