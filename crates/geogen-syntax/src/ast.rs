//! The syntax tree of GeoGen Script. Every node carries the [`Span`] of its source text.
//!
//! The tree is what the source says, not what it means: `a[i] += 1` stays an [`ExprKind::Assign`]
//! whose target is an [`ExprKind::Index`]; checks such as "is this target writable" belong to the
//! compiler. After a syntax error the parser still returns a tree, with [`ExprKind::Error`] and
//! [`StmtKind::Error`] nodes where it recovered.

use geogen_diag::Span;

/// A name as written, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole script file: its top-level items in source order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Script {
    pub items: Vec<Item>,
}

impl Script {
    pub fn metadata(&self) -> Option<&Metadata> {
        self.items.iter().find_map(|i| match i {
            Item::Metadata(m) => Some(m),
            _ => None,
        })
    }

    pub fn enums(&self) -> impl Iterator<Item = &EnumDecl> {
        self.items.iter().filter_map(|i| match i {
            Item::Enum(e) => Some(e),
            _ => None,
        })
    }

    pub fn functions(&self) -> impl Iterator<Item = &FunctionDecl> {
        self.items.iter().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
    }

    /// The top-level statements, which form the body of the implicit `<main>` function.
    pub fn statements(&self) -> impl Iterator<Item = &Stmt> {
        self.items.iter().filter_map(|i| match i {
            Item::Stmt(s) => Some(s),
            _ => None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Metadata(Metadata),
    Enum(EnumDecl),
    Function(FunctionDecl),
    Stmt(Stmt),
}

/// `metadata { Key: value, ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// The root collection (always a [`MetaValueKind::KeyValue`] or, after errors, whatever parsed).
    pub root: MetaValue,
    /// The span of the whole block including the `metadata` keyword.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MetaValue {
    pub kind: MetaValueKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MetaValueKind {
    /// An unsigned number literal (metadata has no unary minus).
    Number(f64),
    String(String),
    Bool(bool),
    /// A bare name such as `Finite` or an enum item.
    Ident(String),
    /// `{v1, v2, ...}`: non-empty, without keys.
    List(Vec<MetaValue>),
    /// `{Key: v, ...}`; `{}` is an empty key-value collection. Keys are kept in source order,
    /// duplicates included (the compiler reports them).
    KeyValue(Vec<(Ident, MetaValue)>),
    /// A value that failed to parse.
    Error,
}

/// `enum Name { A, B = 5, C }`
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDecl {
    pub name: Ident,
    pub items: Vec<EnumItem>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EnumItem {
    pub name: Ident,
    /// The explicit `= NUMBER`, with the span of the number.
    pub value: Option<(f64, Span)>,
}

/// `function name(p1, p2) { ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDecl {
    pub name: Ident,
    pub params: Vec<Ident>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `var x;` / `var x = e;`
    Var {
        name: Ident,
        init: Option<Expr>,
    },
    /// `global x;` / `global x = e;`
    Global {
        name: Ident,
        init: Option<Expr>,
    },
    /// `e;`
    Expr(Expr),
    /// `yield e;` / `yield e as "name";` (the name's span is the string literal's).
    Yield {
        value: Expr,
        name: Option<(String, Span)>,
    },
    Return(Option<Expr>),
    Break,
    Continue,
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    For {
        init: Option<ForInit>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    If {
        cond: Expr,
        then_branch: Box<Stmt>,
        else_branch: Option<Box<Stmt>>,
    },
    Switch {
        scrutinee: Expr,
        cases: Vec<SwitchCase>,
    },
    Block(Block),
    /// `;`
    Empty,
    /// A statement that failed to parse; its diagnostic has been reported.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ForInit {
    /// `for (var i = 0; ...)` (the initialiser is optional, as in `var i`).
    Var {
        name: Ident,
        init: Option<Expr>,
    },
    Expr(Expr),
}

/// One `case label:` or `default:` with the statements that follow it up to the next label.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCase {
    /// `None` for `default`.
    pub label: Option<Expr>,
    pub body: Vec<Stmt>,
    /// The span of the `case label:` / `default:` head.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Number(f64),
    String(String),
    Bool(bool),
    /// A variable (or a type, or `null`, which are globals).
    Ident(String),
    /// `object.name`
    Member {
        object: Box<Expr>,
        name: Ident,
    },
    /// `name(args)`: a global function (native or script).
    Call {
        name: Ident,
        args: Vec<Expr>,
    },
    /// `object.name(args)`: a method (instance or static, decided at run time).
    MethodCall {
        object: Box<Expr>,
        name: Ident,
        args: Vec<Expr>,
    },
    /// `object[i, ...]`; `object[]` (no index) is only valid as the target of `=` (push back).
    Index {
        object: Box<Expr>,
        indices: Vec<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    /// `x++` / `x--`
    Postfix {
        op: PostfixOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `target op= value`, right-associative (`a = b = c`).
    Assign {
        op: AssignOp,
        target: Box<Expr>,
        value: Box<Expr>,
    },
    /// `cond ? a : b`
    Conditional {
        cond: Box<Expr>,
        then_value: Box<Expr>,
        else_value: Box<Expr>,
    },
    /// `{ v, k: v, ... }`
    Array(Vec<ArrayItem>),
    /// `[x]` (a coordinate) or `[x, y]` (a point). The parser reports other counts and keeps them.
    Coordinate(Vec<Expr>),
    /// An expression that failed to parse; its diagnostic has been reported.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ArrayItem {
    pub key: Option<Expr>,
    pub value: Expr,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `+e`
    Plus,
    /// `-e`
    Minus,
    /// `!e`
    Not,
    /// `@e`: relative coordinate
    Relative,
    /// `++e`
    PreIncrement,
    /// `--e`
    PreDecrement,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PostfixOp {
    Increment,
    Decrement,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    /// `&&`, short-circuit
    And,
    /// `||`, short-circuit
    Or,
    /// `is`: parsed at assignment precedence; not implemented by the original either.
    Is,
}

impl BinaryOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Rem => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            And => "&&",
            Or => "||",
            Is => "is",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`
    Assign,
    /// `+=`, `-=`, ...: the binary operator applied before storing.
    Compound(BinaryOp),
}

impl AssignOp {
    pub fn symbol(self) -> &'static str {
        match self {
            AssignOp::Assign => "=",
            AssignOp::Compound(BinaryOp::Mul) => "*=",
            AssignOp::Compound(BinaryOp::Div) => "/=",
            AssignOp::Compound(BinaryOp::Rem) => "%=",
            AssignOp::Compound(BinaryOp::Add) => "+=",
            AssignOp::Compound(BinaryOp::Sub) => "-=",
            AssignOp::Compound(BinaryOp::Shl) => "<<=",
            AssignOp::Compound(BinaryOp::Shr) => ">>=",
            AssignOp::Compound(BinaryOp::BitAnd) => "&=",
            AssignOp::Compound(BinaryOp::BitXor) => "^=",
            AssignOp::Compound(BinaryOp::BitOr) => "|=",
            AssignOp::Compound(_) => "?=",
        }
    }
}
