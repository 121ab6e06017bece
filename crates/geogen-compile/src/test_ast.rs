//! Terse builders of syntax trees for the unit tests (they do not need the parser). Nodes get
//! an empty span unless `.at(start, end)` gives one.

use geogen_diag::Span;
use geogen_syntax::ast::*;

pub trait At {
    fn at(self, start: u32, end: u32) -> Self;
}

impl At for Expr {
    fn at(mut self, start: u32, end: u32) -> Expr {
        self.span = Span::new(start, end);
        self
    }
}

impl At for Stmt {
    fn at(mut self, start: u32, end: u32) -> Stmt {
        self.span = Span::new(start, end);
        self
    }
}

impl At for Ident {
    fn at(mut self, start: u32, end: u32) -> Ident {
        self.span = Span::new(start, end);
        self
    }
}

impl At for MetaValue {
    fn at(mut self, start: u32, end: u32) -> MetaValue {
        self.span = Span::new(start, end);
        self
    }
}

fn e(kind: ExprKind) -> Expr {
    Expr { kind, span: Span::default() }
}

fn st(kind: StmtKind) -> Stmt {
    Stmt { kind, span: Span::default() }
}

pub fn ident(name: &str) -> Ident {
    Ident { name: name.to_string(), span: Span::default() }
}

pub fn n(v: f64) -> Expr {
    e(ExprKind::Number(v))
}
pub fn s(v: &str) -> Expr {
    e(ExprKind::String(v.to_string()))
}
pub fn b(v: bool) -> Expr {
    e(ExprKind::Bool(v))
}
pub fn id(name: &str) -> Expr {
    e(ExprKind::Ident(name.to_string()))
}
pub fn err() -> Expr {
    e(ExprKind::Error)
}
pub fn bin(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    e(ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) })
}
pub fn un(op: UnaryOp, operand: Expr) -> Expr {
    e(ExprKind::Unary { op, operand: Box::new(operand) })
}
pub fn post(op: PostfixOp, operand: Expr) -> Expr {
    e(ExprKind::Postfix { op, operand: Box::new(operand) })
}
pub fn assign(target: Expr, value: Expr) -> Expr {
    e(ExprKind::Assign { op: AssignOp::Assign, target: Box::new(target), value: Box::new(value) })
}
pub fn compound(op: BinaryOp, target: Expr, value: Expr) -> Expr {
    e(ExprKind::Assign { op: AssignOp::Compound(op), target: Box::new(target), value: Box::new(value) })
}
pub fn call(name: &str, args: Vec<Expr>) -> Expr {
    e(ExprKind::Call { name: ident(name), args })
}
pub fn mcall(object: Expr, name: &str, args: Vec<Expr>) -> Expr {
    e(ExprKind::MethodCall { object: Box::new(object), name: ident(name), args })
}
pub fn member(object: Expr, name: &str) -> Expr {
    e(ExprKind::Member { object: Box::new(object), name: ident(name) })
}
pub fn index(object: Expr, indices: Vec<Expr>) -> Expr {
    e(ExprKind::Index { object: Box::new(object), indices })
}
pub fn cond(c: Expr, a: Expr, b: Expr) -> Expr {
    e(ExprKind::Conditional { cond: Box::new(c), then_value: Box::new(a), else_value: Box::new(b) })
}
pub fn array(items: Vec<(Option<Expr>, Expr)>) -> Expr {
    e(ExprKind::Array(items.into_iter().map(|(key, value)| ArrayItem { key, value }).collect()))
}
pub fn coord(components: Vec<Expr>) -> Expr {
    e(ExprKind::Coordinate(components))
}

pub fn expr(x: Expr) -> Stmt {
    st(StmtKind::Expr(x))
}
pub fn var(name: &str, init: Option<Expr>) -> Stmt {
    st(StmtKind::Var { name: ident(name), init })
}
pub fn global(name: &str, init: Option<Expr>) -> Stmt {
    st(StmtKind::Global { name: ident(name), init })
}
pub fn yield_(value: Expr, name: Option<&str>) -> Stmt {
    st(StmtKind::Yield { value, name: name.map(|n| (n.to_string(), Span::default())) })
}
pub fn ret(value: Option<Expr>) -> Stmt {
    st(StmtKind::Return(value))
}
pub fn brk() -> Stmt {
    st(StmtKind::Break)
}
pub fn cont() -> Stmt {
    st(StmtKind::Continue)
}
pub fn while_(c: Expr, body: Stmt) -> Stmt {
    st(StmtKind::While { cond: c, body: Box::new(body) })
}
pub fn for_(init: Option<ForInit>, c: Option<Expr>, step: Option<Expr>, body: Stmt) -> Stmt {
    st(StmtKind::For { init, cond: c, step, body: Box::new(body) })
}
pub fn if_(c: Expr, then: Stmt, otherwise: Option<Stmt>) -> Stmt {
    st(StmtKind::If { cond: c, then_branch: Box::new(then), else_branch: otherwise.map(Box::new) })
}
pub fn switch(scrutinee: Expr, cases: Vec<(Option<Expr>, Vec<Stmt>)>) -> Stmt {
    st(StmtKind::Switch {
        scrutinee,
        cases: cases.into_iter().map(|(label, body)| SwitchCase { label, body, span: Span::default() }).collect(),
    })
}
pub fn block(stmts: Vec<Stmt>) -> Stmt {
    st(StmtKind::Block(Block { stmts, span: Span::default() }))
}

pub fn function(name: Ident, params: &[&str], stmts: Vec<Stmt>) -> Item {
    Item::Function(FunctionDecl {
        name,
        params: params.iter().map(|p| ident(p)).collect(),
        body: Block { stmts, span: Span::default() },
        span: Span::default(),
    })
}

pub fn enum_(name: Ident, items: Vec<(Ident, Option<(f64, Span)>)>) -> Item {
    Item::Enum(EnumDecl {
        name,
        items: items.into_iter().map(|(name, value)| EnumItem { name, value }).collect(),
        span: Span::default(),
    })
}

pub fn meta(entries: Vec<(&str, MetaValue)>) -> Item {
    Item::Metadata(Metadata { root: kv(entries), span: Span::default() })
}

pub fn kv(entries: Vec<(&str, MetaValue)>) -> MetaValue {
    mv(MetaValueKind::KeyValue(entries.into_iter().map(|(k, v)| (ident(k), v)).collect()))
}
pub fn kv_at(entries: Vec<(Ident, MetaValue)>) -> MetaValue {
    mv(MetaValueKind::KeyValue(entries))
}
pub fn mv(kind: MetaValueKind) -> MetaValue {
    MetaValue { kind, span: Span::default() }
}
pub fn mnum(v: f64) -> MetaValue {
    mv(MetaValueKind::Number(v))
}
pub fn mid(v: &str) -> MetaValue {
    mv(MetaValueKind::Ident(v.to_string()))
}
pub fn mstr(v: &str) -> MetaValue {
    mv(MetaValueKind::String(v.to_string()))
}

pub fn script(items: Vec<Item>) -> Script {
    Script { items }
}

pub fn stmts(stmts: Vec<Stmt>) -> Script {
    Script { items: stmts.into_iter().map(Item::Stmt).collect() }
}
