//! The tree a program parses into. It records what was written (`>=`, `or`); what an operator
//! means in a dialect is decided when the tree is lowered (and by [`crate::ops`]).

use std::sync::Arc;

use geogen_diag::Span;

use crate::noise::Function;

/// One expression with the source text it came from.
#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Number(f64),
    /// `x` = 0, `y` = 1 (`z`, `u`, `v`, `w` = 2..5 exist in the language but no program of
    /// geogen has more than two variables).
    Var(u8),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `(? c a b)` or `(if c a b)`: lazy, only the chosen branch is evaluated.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(lerp a b t)` = `a·(1−t) + b·t`.
    Lerp(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(self a b)`: the whole enclosing program at other coordinates.
    SelfCall(Vec<Expr>),
    /// `([2 Name params] a b)`: a configurable function, its tables already built.
    Configured(Arc<Function>, Box<Expr>, Box<Expr>),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Inv,
    Sin,
    Cos,
    Floor,
    Abs,
    Trunc,
    Frac,
    Neg,
    Not,
    Sqrt,
}

impl UnOp {
    pub const ALL: [UnOp; 10] = [
        UnOp::Inv,
        UnOp::Sin,
        UnOp::Cos,
        UnOp::Floor,
        UnOp::Abs,
        UnOp::Trunc,
        UnOp::Frac,
        UnOp::Neg,
        UnOp::Not,
        UnOp::Sqrt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UnOp::Inv => "inv",
            UnOp::Sin => "sin",
            UnOp::Cos => "cos",
            UnOp::Floor => "floor",
            UnOp::Abs => "abs",
            UnOp::Trunc => "trunc",
            UnOp::Frac => "frac",
            UnOp::Neg => "neg",
            UnOp::Not => "not",
            UnOp::Sqrt => "sqrt",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
    Min,
    Max,
    Delta,
}

impl BinOp {
    pub const ALL: [BinOp; 17] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Pow,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Min,
        BinOp::Max,
        BinOp::Delta,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Pow => "^",
            BinOp::Eq => "=",
            BinOp::Ne => "<>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::Delta => "delta",
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// The expression as canonical Height-Slang text (numbers shortest round-trip, configurable
    /// functions as `[2 Name]`), for listings and tests.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) {
        let form = |name: &str, args: &[&Expr], out: &mut String| {
            out.push('(');
            out.push_str(name);
            for a in args {
                out.push(' ');
                a.write_text(out);
            }
            out.push(')');
        };
        match &self.kind {
            ExprKind::Number(v) => out.push_str(&crate::format::plain_decimal(*v)),
            ExprKind::Var(k) => out.push(VARIABLES[usize::from(*k).min(VARIABLES.len() - 1)]),
            ExprKind::Unary(op, a) => form(op.name(), &[a], out),
            ExprKind::Binary(op, a, b) => form(op.name(), &[a, b], out),
            ExprKind::Cond(c, a, b) => form("?", &[c, a, b], out),
            ExprKind::Lerp(a, b, t) => form("lerp", &[a, b, t], out),
            ExprKind::SelfCall(args) => {
                let args: Vec<&Expr> = args.iter().collect();
                form("self", &args, out)
            }
            ExprKind::Configured(f, a, b) => form(&format!("[2 {}]", f.name()), &[a, b], out),
        }
    }
}

/// The variable letters in parameter order.
pub const VARIABLES: [char; 6] = ['x', 'y', 'z', 'u', 'v', 'w'];
