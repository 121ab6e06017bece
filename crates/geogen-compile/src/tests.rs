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
        Err(e) => e,
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
