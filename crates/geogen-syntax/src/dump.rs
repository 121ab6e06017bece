//! A compact S-expression rendering of the syntax tree, e.g. `(= x (+ 1 (* 2 3)))`.
//!
//! It shows the tree's shape exactly (every operator node gets its own parentheses, so
//! precedence and associativity are visible) and is what the parser's golden tests compare.
//! Statements go one per line, nested ones indented by two spaces.

use std::fmt::Write;

use crate::ast::*;

/// The whole script, one top-level item per line.
pub fn script(script: &Script) -> String {
    let mut out = String::new();
    for item in &script.items {
        match item {
            Item::Metadata(m) => {
                out.push_str("(metadata ");
                meta(&mut out, &m.root);
                out.push(')');
            }
            Item::Enum(e) => {
                let _ = write!(out, "(enum {}", name(&e.name));
                for item in &e.items {
                    match item.value {
                        Some((v, _)) => {
                            let _ = write!(out, " ({} {v})", name(&item.name));
                        }
                        None => {
                            let _ = write!(out, " {}", name(&item.name));
                        }
                    }
                }
                out.push(')');
            }
            Item::Function(f) => {
                let params: Vec<&str> = f.params.iter().map(name).collect();
                let _ = write!(out, "(function {} ({})", name(&f.name), params.join(" "));
                for s in &f.body.stmts {
                    out.push('\n');
                    stmt_into(&mut out, s, 1, "");
                }
                out.push(')');
            }
            Item::Stmt(s) => stmt_into(&mut out, s, 0, ""),
        }
        out.push('\n');
    }
    out
}

/// One statement (and its nested statements, indented).
pub fn stmt(s: &Stmt) -> String {
    let mut out = String::new();
    stmt_into(&mut out, s, 0, "");
    out
}

/// One expression on one line.
pub fn expr(e: &Expr) -> String {
    let mut out = String::new();
    expr_into(&mut out, e);
    out
}

fn name(ident: &Ident) -> &str {
    if ident.name.is_empty() {
        "<missing>"
    } else {
        &ident.name
    }
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Writes `s` at `level`, its first line starting with `prefix` (used for `else`).
fn stmt_into(out: &mut String, s: &Stmt, level: usize, prefix: &str) {
    indent(out, level);
    out.push_str(prefix);
    let children = |out: &mut String, stmts: &[Stmt]| {
        for child in stmts {
            out.push('\n');
            stmt_into(out, child, level + 1, "");
        }
    };
    match &s.kind {
        StmtKind::Var { name: n, init } | StmtKind::Global { name: n, init } => {
            let keyword = if matches!(s.kind, StmtKind::Var { .. }) { "var" } else { "global" };
            let _ = write!(out, "({keyword} {}", name(n));
            if let Some(init) = init {
                out.push(' ');
                expr_into(out, init);
            }
            out.push(')');
        }
        StmtKind::Expr(e) => expr_into(out, e),
        StmtKind::Yield { value, name } => {
            out.push_str("(yield ");
            expr_into(out, value);
            if let Some((n, _)) = name {
                let _ = write!(out, " as {n:?}");
            }
            out.push(')');
        }
        StmtKind::Return(value) => {
            out.push_str("(return");
            if let Some(v) = value {
                out.push(' ');
                expr_into(out, v);
            }
            out.push(')');
        }
        StmtKind::Break => out.push_str("(break)"),
        StmtKind::Continue => out.push_str("(continue)"),
        StmtKind::While { cond, body } => {
            out.push_str("(while ");
            expr_into(out, cond);
            children(out, std::slice::from_ref(body));
            out.push(')');
        }
        StmtKind::For { init, cond, step, body } => {
            out.push_str("(for ");
            match init {
                None => out.push('_'),
                Some(ForInit::Var { name: n, init }) => {
                    let _ = write!(out, "(var {}", name(n));
                    if let Some(init) = init {
                        out.push(' ');
                        expr_into(out, init);
                    }
                    out.push(')');
                }
                Some(ForInit::Expr(e)) => expr_into(out, e),
            }
            for part in [cond, step] {
                out.push(' ');
                match part {
                    Some(e) => expr_into(out, e),
                    None => out.push('_'),
                }
            }
            children(out, std::slice::from_ref(body));
            out.push(')');
        }
        StmtKind::If { cond, then_branch, else_branch } => {
            out.push_str("(if ");
            expr_into(out, cond);
            children(out, std::slice::from_ref(then_branch));
            if let Some(else_branch) = else_branch {
                out.push('\n');
                stmt_into(out, else_branch, level + 1, "else ");
            }
            out.push(')');
        }
        StmtKind::Switch { scrutinee, cases } => {
            out.push_str("(switch ");
            expr_into(out, scrutinee);
            for case in cases {
                out.push('\n');
                indent(out, level + 1);
                match &case.label {
                    Some(label) => {
                        out.push_str("(case ");
                        expr_into(out, label);
                    }
                    None => out.push_str("(default"),
                }
                for child in &case.body {
                    out.push('\n');
                    stmt_into(out, child, level + 2, "");
                }
                out.push(')');
            }
            out.push(')');
        }
        StmtKind::Block(block) => {
            out.push_str("(block");
            children(out, &block.stmts);
            out.push(')');
        }
        StmtKind::Empty => out.push_str("(empty)"),
        StmtKind::Error => out.push_str("<error>"),
    }
}

fn list_into(out: &mut String, items: &[Expr]) {
    for item in items {
        out.push(' ');
        expr_into(out, item);
    }
}

fn expr_into(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Number(v) => {
            let _ = write!(out, "{v}");
        }
        ExprKind::String(s) => {
            let _ = write!(out, "{s:?}");
        }
        ExprKind::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        ExprKind::Ident(n) => out.push_str(n),
        ExprKind::Member { object, name: n } => {
            out.push_str("(. ");
            expr_into(out, object);
            let _ = write!(out, " {})", name(n));
        }
        ExprKind::Call { name: n, args } => {
            let _ = write!(out, "(call {}", name(n));
            list_into(out, args);
            out.push(')');
        }
        ExprKind::MethodCall { object, name: n, args } => {
            out.push_str("(method ");
            expr_into(out, object);
            let _ = write!(out, " {}", name(n));
            list_into(out, args);
            out.push(')');
        }
        ExprKind::Index { object, indices } => {
            out.push_str("([] ");
            expr_into(out, object);
            list_into(out, indices);
            out.push(')');
        }
        ExprKind::Unary { op, operand } => {
            let symbol = match op {
                UnaryOp::Plus => "+",
                UnaryOp::Minus => "-",
                UnaryOp::Not => "!",
                UnaryOp::Relative => "@",
                UnaryOp::PreIncrement => "pre++",
                UnaryOp::PreDecrement => "pre--",
            };
            let _ = write!(out, "({symbol} ");
            expr_into(out, operand);
            out.push(')');
        }
        ExprKind::Postfix { op, operand } => {
            let symbol = match op {
                PostfixOp::Increment => "post++",
                PostfixOp::Decrement => "post--",
            };
            let _ = write!(out, "({symbol} ");
            expr_into(out, operand);
            out.push(')');
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let _ = write!(out, "({} ", op.symbol());
            expr_into(out, lhs);
            out.push(' ');
            expr_into(out, rhs);
            out.push(')');
        }
        ExprKind::Assign { op, target, value } => {
            let _ = write!(out, "({} ", op.symbol());
            expr_into(out, target);
            out.push(' ');
            expr_into(out, value);
            out.push(')');
        }
        ExprKind::Conditional { cond, then_value, else_value } => {
            out.push_str("(? ");
            expr_into(out, cond);
            out.push(' ');
            expr_into(out, then_value);
            out.push(' ');
            expr_into(out, else_value);
            out.push(')');
        }
        ExprKind::Array(items) => {
            out.push_str("(array");
            for item in items {
                out.push(' ');
                match &item.key {
                    Some(key) => {
                        out.push_str("(: ");
                        expr_into(out, key);
                        out.push(' ');
                        expr_into(out, &item.value);
                        out.push(')');
                    }
                    None => expr_into(out, &item.value),
                }
            }
            out.push(')');
        }
        ExprKind::Coordinate(items) => {
            out.push_str("(coord");
            list_into(out, items);
            out.push(')');
        }
        ExprKind::Error => out.push_str("<error>"),
    }
}

/// Metadata values in their own brace syntax: `{Key: v, ...}` for key-value collections,
/// `[v, ...]` for lists.
fn meta(out: &mut String, value: &MetaValue) {
    match &value.kind {
        MetaValueKind::Number(v) => {
            let _ = write!(out, "{v}");
        }
        MetaValueKind::String(s) => {
            let _ = write!(out, "{s:?}");
        }
        MetaValueKind::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        MetaValueKind::Ident(n) => out.push_str(n),
        MetaValueKind::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                meta(out, item);
            }
            out.push(']');
        }
        MetaValueKind::KeyValue(entries) => {
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}: ", name(key));
                meta(out, item);
            }
            out.push('}');
        }
        MetaValueKind::Error => out.push_str("<error>"),
    }
}
