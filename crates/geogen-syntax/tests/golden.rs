//! Golden tests of the parser: every `parser/valid/*.ggs` and `parser/invalid/*.ggs` file is
//! parsed and its syntax tree (as S-expressions) and rendered diagnostics are compared with the
//! snapshot in `snapshots/`. The snapshots are the specification: review them by eye.
//!
//! Re-bless after an intended change:
//!     INSTA_UPDATE=always cargo test -p geogen-syntax
//! (Under `CI=true` a missing snapshot fails the test.)

use std::path::Path;

use geogen_diag::{render_diagnostics, RenderOptions, SourceFile, Span};
use geogen_syntax::ast::*;
use geogen_syntax::{dump, parse, Parsed};

fn read(path: &Path) -> (String, String) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    (name, source)
}

#[test]
fn valid_scripts_parse_without_errors() {
    insta::glob!("parser/valid/*.ggs", |path| {
        let (name, source) = read(path);
        let parsed = parse(&source);
        let rendered =
            render_diagnostics(&parsed.diagnostics, &SourceFile::new(&name, &source), RenderOptions::default());
        assert!(parsed.diagnostics.is_empty(), "{name} should be valid but has errors:\n{rendered}");
        check_spans(&parsed, &source, &name);
        insta::assert_snapshot!(dump::script(&parsed.script));
    });
}

#[test]
fn invalid_scripts_report_their_errors() {
    insta::glob!("parser/invalid/*.ggs", |path| {
        let (name, source) = read(path);
        let parsed = parse(&source);
        assert!(!parsed.diagnostics.is_empty(), "{name} should have errors");
        check_spans(&parsed, &source, &name);
        let rendered =
            render_diagnostics(&parsed.diagnostics, &SourceFile::new(&name, &source), RenderOptions::default());
        insta::assert_snapshot!(format!("{}\n{rendered}", dump::script(&parsed.script)));
    });
}

/// Every span lies within the source, on character boundaries, and inside its parent's span.
fn check_spans(parsed: &Parsed, source: &str, name: &str) {
    let whole = Span::new(0, source.len() as u32);
    let mut checker = SpanChecker { source, name };
    for item in &parsed.script.items {
        match item {
            Item::Metadata(m) => {
                checker.inside(m.span, whole, "metadata");
                checker.meta(&m.root, m.span);
            }
            Item::Enum(e) => {
                checker.inside(e.span, whole, "enum");
                checker.inside(e.name.span, e.span, "enum name");
                for item in &e.items {
                    checker.inside(item.name.span, e.span, "enum item");
                    if let Some((_, span)) = item.value {
                        checker.inside(span, e.span, "enum value");
                    }
                }
            }
            Item::Function(f) => {
                checker.inside(f.span, whole, "function");
                checker.inside(f.name.span, f.span, "function name");
                for p in &f.params {
                    checker.inside(p.span, f.span, "parameter");
                }
                checker.inside(f.body.span, f.span, "function body");
                for s in &f.body.stmts {
                    checker.stmt(s, f.body.span);
                }
            }
            Item::Stmt(s) => checker.stmt(s, whole),
        }
    }
}

struct SpanChecker<'a> {
    source: &'a str,
    name: &'a str,
}

impl SpanChecker<'_> {
    fn inside(&self, span: Span, parent: Span, what: &str) {
        assert!(span.start <= span.end, "{}: {what} span {span:?} is reversed", self.name);
        assert!(
            parent.start <= span.start && span.end <= parent.end,
            "{}: {what} span {span:?} is outside its parent {parent:?}",
            self.name
        );
        assert!(
            self.source.is_char_boundary(span.start as usize) && self.source.is_char_boundary(span.end as usize),
            "{}: {what} span {span:?} splits a character",
            self.name
        );
    }

    fn stmt(&mut self, s: &Stmt, parent: Span) {
        self.inside(s.span, parent, "statement");
        let p = s.span;
        match &s.kind {
            StmtKind::Var { name, init } | StmtKind::Global { name, init } => {
                self.inside(name.span, p, "variable name");
                if let Some(e) = init {
                    self.expr(e, p);
                }
            }
            StmtKind::Expr(e) => self.expr(e, p),
            StmtKind::Yield { value, name } => {
                self.expr(value, p);
                if let Some((_, span)) = name {
                    self.inside(*span, p, "map name");
                }
            }
            StmtKind::Return(value) => {
                if let Some(e) = value {
                    self.expr(e, p);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond, p);
                self.stmt(body, p);
            }
            StmtKind::For { init, cond, step, body } => {
                match init {
                    Some(ForInit::Var { name, init }) => {
                        self.inside(name.span, p, "loop variable");
                        if let Some(e) = init {
                            self.expr(e, p);
                        }
                    }
                    Some(ForInit::Expr(e)) => self.expr(e, p),
                    None => {}
                }
                for e in [cond, step].into_iter().flatten() {
                    self.expr(e, p);
                }
                self.stmt(body, p);
            }
            StmtKind::If { cond, then_branch, else_branch } => {
                self.expr(cond, p);
                self.stmt(then_branch, p);
                if let Some(e) = else_branch {
                    self.stmt(e, p);
                }
            }
            StmtKind::Switch { scrutinee, cases } => {
                self.expr(scrutinee, p);
                for case in cases {
                    self.inside(case.span, p, "case label");
                    if let Some(label) = &case.label {
                        self.expr(label, case.span);
                    }
                    for s in &case.body {
                        self.stmt(s, p);
                    }
                }
            }
            StmtKind::Block(block) => {
                self.inside(block.span, p, "block");
                for s in &block.stmts {
                    self.stmt(s, block.span);
                }
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Empty | StmtKind::Error => {}
        }
    }

    fn expr(&mut self, e: &Expr, parent: Span) {
        self.inside(e.span, parent, "expression");
        let p = e.span;
        match &e.kind {
            ExprKind::Member { object, name } => {
                self.expr(object, p);
                self.inside(name.span, p, "member name");
            }
            ExprKind::Call { name, args } => {
                self.inside(name.span, p, "function name");
                for a in args {
                    self.expr(a, p);
                }
            }
            ExprKind::MethodCall { object, name, args } => {
                self.expr(object, p);
                self.inside(name.span, p, "method name");
                for a in args {
                    self.expr(a, p);
                }
            }
            ExprKind::Index { object, indices } => {
                self.expr(object, p);
                for i in indices {
                    self.expr(i, p);
                }
            }
            ExprKind::Unary { operand, .. } | ExprKind::Postfix { operand, .. } => self.expr(operand, p),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs, p);
                self.expr(rhs, p);
            }
            ExprKind::Assign { target, value, .. } => {
                self.expr(target, p);
                self.expr(value, p);
            }
            ExprKind::Conditional { cond, then_value, else_value } => {
                self.expr(cond, p);
                self.expr(then_value, p);
                self.expr(else_value, p);
            }
            ExprKind::Array(items) => {
                for item in items {
                    if let Some(k) = &item.key {
                        self.expr(k, p);
                    }
                    self.expr(&item.value, p);
                }
            }
            ExprKind::Coordinate(items) => {
                for i in items {
                    self.expr(i, p);
                }
            }
            ExprKind::Number(_) | ExprKind::String(_) | ExprKind::Bool(_) | ExprKind::Ident(_) | ExprKind::Error => {}
        }
    }

    fn meta(&mut self, v: &MetaValue, parent: Span) {
        self.inside(v.span, parent, "metadata value");
        match &v.kind {
            MetaValueKind::List(items) => {
                for i in items {
                    self.meta(i, v.span);
                }
            }
            MetaValueKind::KeyValue(entries) => {
                for (k, i) in entries {
                    self.inside(k.span, v.span, "metadata key");
                    self.meta(i, v.span);
                }
            }
            _ => {}
        }
    }
}
