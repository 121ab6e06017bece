//! Lowering: statements and expressions of one function body to code blocks (reference §3.2, with
//! our fixes), together with the checks that need the block structure (GGE1201 for a misplaced
//! `a[]`, GGE1301, GGE1303, GGE1304, GGE1307, GGE1313).
//!
//! # Block depth
//!
//! `Break(n)` and `Continue(n)` count code blocks, so the lowerer keeps `depth`: the number of
//! blocks open in the current function, its root block being depth 1. Leaving every block from the
//! current one up to and including the block at depth `t` is `Break(depth - t + 1)`.
//!
//! # Schemes (the ones that differ from the original)
//!
//! - `var x = e` evaluates `e` *before* declaring `x` (`e; DeclareLocal x; StoreScope x; Pop`), so
//!   `var x = x + 1` in an inner block reads the outer `x`, as in C.
//! - `for (init; cond; step) body` is
//!   `CallBlock[init; While[cond; If(then: [], else: [Break 2]); CallBlock[body]; step; Pop]]`, and
//!   `continue` in `body` is a `Break` that leaves only the body's blocks: the step then runs and
//!   the while block loops (the original's `continue` skipped the step). A looping block left
//!   empty (`for (;;) {}`) gets `LoadNull; Pop`, so every iteration executes an instruction.
//! - `while (cond) body` is `While[cond; If(then: [], else: [Break 2]); CallBlock[body]]`;
//!   `continue` there is a `Continue` to the while block.
//! - `a && b` is `a; If(then: [b; If(then: [true], else: [false])], else: [false])`: `b` runs only
//!   when `a` is true, and both operands must be Booleans (the `If`s report GGE2104). `||` is
//!   symmetric.
//! - `switch` has JavaScript semantics, see [`Lowerer::lower_switch`].
//! - `a[] = e` as an expression uses a hidden local to yield `e`, see [`Lowerer::lower_push_back`].
//!
//! Hidden locals have names containing `<` (`<switch0>`), which no user identifier can contain.
//! Each is declared in the block that evaluates it, and that block instance runs the declaration
//! once: loop bodies, branches and function calls all get fresh scopes.

use geogen_diag::{codes, Diagnostic, Diagnostics, Span};
use geogen_syntax::ast::{
    ArrayItem, AssignOp, BinaryOp, Block, Expr, ExprKind, ForInit, Ident, PostfixOp, Stmt, StmtKind, SwitchCase,
    UnaryOp,
};

use crate::ir::{BlockId, CodeBlock, Instruction, Name, Op};

/// Where `break` and `continue` go.
#[derive(Copy, Clone, Debug)]
enum JumpTarget {
    Loop {
        /// Depth of the looping (`While`) block: `break` leaves it.
        break_depth: u32,
        continue_with: ContinueWith,
    },
    Switch {
        /// Depth of the switch block: `break` leaves it. `continue` passes through to the loop.
        break_depth: u32,
    },
}

#[derive(Copy, Clone, Debug)]
enum ContinueWith {
    /// `Continue` to the looping block at this depth (`while`).
    Continue(u32),
    /// `Break` out of the body block at this depth (`for`: the step follows the body block).
    BreakOut(u32),
}

/// The lowering state shared by all functions of one script.
pub(crate) struct Lowerer<'d> {
    pub(crate) blocks: Vec<CodeBlock>,
    /// Instruction lists of the blocks being built, innermost last.
    open: Vec<Vec<Instruction>>,
    /// Number of open blocks in the current function (its root block is 1).
    depth: u32,
    jumps: Vec<JumpTarget>,
    in_function: bool,
    hidden_counter: u32,
    pub(crate) diagnostics: &'d mut Diagnostics,
    /// `yield` map names in source order without repeats.
    pub(crate) map_names: Vec<Name>,
    /// The names of `map_names`, to find a repeat in constant time.
    map_names_seen: std::collections::HashSet<Name>,
}

fn name(s: &str) -> Name {
    Name::from(s)
}

/// The name the VM knows a binary operator by (`&&`, `||` are lowered to `If`s instead).
fn binary_name(op: BinaryOp) -> &'static str {
    op.symbol()
}

/// A human description of an expression, for "cannot assign to ..." messages.
fn describe(expr: &Expr) -> &'static str {
    match &expr.kind {
        ExprKind::Number(_) | ExprKind::String(_) | ExprKind::Bool(_) => "a literal",
        ExprKind::Call { .. } | ExprKind::MethodCall { .. } => "a function call",
        ExprKind::Binary { .. } => "an operator expression",
        ExprKind::Unary { .. } | ExprKind::Postfix { .. } => "an operator expression",
        ExprKind::Assign { .. } => "an assignment",
        ExprKind::Conditional { .. } => "a conditional expression",
        ExprKind::Array(_) => "an array literal",
        ExprKind::Coordinate(_) => "a coordinate literal",
        ExprKind::Ident(_) | ExprKind::Member { .. } | ExprKind::Index { .. } | ExprKind::Error => "this expression",
    }
}

impl<'d> Lowerer<'d> {
    pub(crate) fn new(diagnostics: &'d mut Diagnostics) -> Lowerer<'d> {
        Lowerer {
            blocks: Vec::new(),
            open: Vec::new(),
            depth: 0,
            jumps: Vec::new(),
            in_function: false,
            hidden_counter: 0,
            diagnostics,
            map_names: Vec::new(),
            map_names_seen: std::collections::HashSet::new(),
        }
    }

    // ----- block plumbing -------------------------------------------------------------------

    fn emit(&mut self, op: Op, span: Span) {
        if let Some(current) = self.open.last_mut() {
            current.push(Instruction { op, span, arguments: None });
        }
    }

    /// Emits a call written in the script, with its arguments' sources.
    fn emit_call(&mut self, op: Op, span: Span, args: &[Expr]) {
        if let Some(current) = self.open.last_mut() {
            let arguments = Some(args.iter().map(|a| a.span).collect());
            current.push(Instruction { op, span, arguments });
        }
    }

    /// Builds a block with `fill`. Ids are reserved before filling so that they read in source
    /// order in the disassembly. With `droppable`, an empty result allocates nothing (`None`).
    fn build_block(&mut self, droppable: bool, fill: impl FnOnce(&mut Self)) -> Option<BlockId> {
        let index = self.blocks.len();
        self.blocks.push(CodeBlock::default());
        self.open.push(Vec::new());
        self.depth += 1;
        fill(self);
        self.depth -= 1;
        let instructions = self.open.pop().unwrap_or_default();
        // Nested blocks of an empty block were all dropped (anything kept would be referenced by
        // an instruction), so an empty block is always the last one allocated.
        if droppable && instructions.is_empty() && index + 1 == self.blocks.len() {
            self.blocks.pop();
            return None;
        }
        self.blocks[index].instructions = instructions;
        Some(BlockId(index as u32))
    }

    /// A block that is always allocated (for `If` branches and loop bodies that must exist).
    fn block(&mut self, fill: impl FnOnce(&mut Self)) -> BlockId {
        // `build_block` only returns `None` for droppable blocks.
        self.build_block(false, fill).unwrap_or(BlockId(0))
    }

    fn hidden_local(&mut self, kind: &str) -> Name {
        let n = self.hidden_counter;
        self.hidden_counter += 1;
        name(&format!("<{kind}{n}>"))
    }

    /// GGE1315: a map name becomes part of file names, so it must be a name, not a path.
    fn check_map_name(&mut self, text: &str, span: Span) {
        if let Err(why) = crate::map_name::check_map_name(text) {
            let shown: String = text.chars().flat_map(char::escape_default).take(80).collect();
            self.error(
                Diagnostic::at(codes::GGE1315, span, format!("\"{shown}\" is not a valid map name: {why}"))
                    .with_hint(format!(
                        "a map name has 1 to {} characters: {}; it may not start with `-` or be a Windows device name such as CON or COM1",
                        crate::map_name::MAP_NAME_MAX_LEN,
                        crate::map_name::MAP_NAME_CHARACTERS
                    )),
            );
        }
    }

    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    // ----- functions ------------------------------------------------------------------------

    /// Lowers a function body (or `<main>` when `in_function` is false) into its root block,
    /// which ends with `LoadNull`, the implicit return value.
    pub(crate) fn lower_function_body<'s>(
        &mut self,
        stmts: impl IntoIterator<Item = &'s Stmt>,
        in_function: bool,
        end: Span,
    ) -> BlockId {
        self.in_function = in_function;
        self.depth = 0;
        self.jumps.clear();
        self.block(|l| {
            for stmt in stmts {
                l.lower_stmt(stmt);
            }
            l.emit(Op::LoadNull, end);
        })
    }

    // ----- statements -----------------------------------------------------------------------

    /// Lowers a statement that is the whole content of a new block (a branch, a loop body): a
    /// `{ ... }` statement contributes its statements directly rather than a nested block.
    fn lower_stmt_contents(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Block(block) => self.lower_stmts(&block.stmts),
            _ => self.lower_stmt(stmt),
        }
    }

    fn lower_stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.lower_stmt(stmt);
        }
    }

    /// A statement as its own droppable block.
    fn stmt_block(&mut self, stmt: &Stmt) -> Option<BlockId> {
        self.build_block(true, |l| l.lower_stmt_contents(stmt))
    }

    fn lower_stmt(&mut self, stmt: &Stmt) {
        let span = stmt.span;
        match &stmt.kind {
            StmtKind::Var { name: var, init } => self.lower_var(var, init.as_ref(), span),
            StmtKind::Global { name: var, init } => {
                let var_name = name(&var.name);
                if let Some(init) = init {
                    self.lower_expr(init);
                }
                self.emit(Op::DeclareGlobal(var_name.clone()), span);
                if init.is_some() {
                    self.emit(Op::StoreGlobal(var_name), span);
                    self.emit(Op::Pop, span);
                }
            }
            StmtKind::Expr(expr) => self.lower_expr_stmt(expr, span),
            StmtKind::Yield { value, name: map } => {
                self.lower_expr(value);
                if let Some((text, name_span)) = map {
                    self.check_map_name(text, *name_span);
                }
                let map_name = name(map.as_ref().map_or("main", |(n, _)| n.as_str()));
                if self.map_names_seen.insert(map_name.clone()) {
                    self.map_names.push(map_name.clone());
                }
                self.emit(Op::Yield(map_name), span);
            }
            StmtKind::Return(value) => {
                if !self.in_function {
                    self.error(
                        Diagnostic::at(codes::GGE1304, span, "`return` outside a function")
                            .with_hint("the top-level statements are not a function; remove the `return`"),
                    );
                    // Lower the value anyway for the errors it may contain.
                    if let Some(value) = value {
                        self.lower_expr(value);
                        self.emit(Op::Pop, span);
                    }
                    return;
                }
                match value {
                    Some(value) => self.lower_expr(value),
                    None => self.emit(Op::LoadNull, span),
                }
                // Leave every block of the function, its root included: the value stays on the
                // object stack as the call's result.
                self.emit(Op::Break(self.depth), span);
            }
            StmtKind::Break => self.lower_break(span),
            StmtKind::Continue => self.lower_continue(span),
            StmtKind::While { cond, body } => self.lower_while(cond, body, span),
            StmtKind::For { init, cond, step, body } => {
                self.lower_for(init.as_ref(), cond.as_ref(), step.as_ref(), body, span)
            }
            StmtKind::If { cond, then_branch, else_branch } => {
                self.lower_expr(cond);
                let then = self.block(|l| l.lower_stmt_contents(then_branch));
                let otherwise = else_branch.as_ref().and_then(|e| self.stmt_block(e));
                // The `If` checks the condition (GGE2104): point at it, as loops do.
                self.emit(Op::If { then, otherwise }, cond.span);
            }
            StmtKind::Switch { scrutinee, cases } => self.lower_switch(scrutinee, cases, span),
            StmtKind::Block(block) => self.lower_block_stmt(block),
            StmtKind::Empty | StmtKind::Error => {}
        }
    }

    fn lower_block_stmt(&mut self, block: &Block) {
        if let Some(id) = self.build_block(true, |l| l.lower_stmts(&block.stmts)) {
            self.emit(Op::CallBlock(id), block.span);
        }
    }

    /// `var x = e` is `e; DeclareLocal x; StoreScope x; Pop`: the initialiser is evaluated before
    /// `x` exists, so it sees an outer `x` (C semantics) rather than the new null one.
    fn lower_var(&mut self, var: &Ident, init: Option<&Expr>, span: Span) {
        let var_name = name(&var.name);
        if let Some(init) = init {
            self.lower_expr(init);
        }
        self.emit(Op::DeclareLocal(var_name.clone()), span);
        if init.is_some() {
            self.emit(Op::StoreScope(var_name), span);
            self.emit(Op::Pop, span);
        }
    }

    fn lower_expr_stmt(&mut self, expr: &Expr, span: Span) {
        match &expr.kind {
            // Nothing to evaluate; its error was reported by the parser.
            ExprKind::Error => {}
            // `a[] = e;`: the value of the assignment is not needed, so PushBack's own result
            // can be discarded directly, without the hidden local.
            ExprKind::Assign { op: AssignOp::Assign, target, value } if matches!(&target.kind, ExprKind::Index { indices, .. } if indices.is_empty()) => {
                if let ExprKind::Index { object, .. } = &target.kind {
                    self.lower_expr(object);
                    self.lower_expr(value);
                    self.emit(Op::CallMember { name: name("PushBack"), argc: 1 }, expr.span);
                    self.emit(Op::Pop, span);
                }
            }
            _ => {
                self.lower_expr(expr);
                self.emit(Op::Pop, span);
            }
        }
    }

    fn lower_break(&mut self, span: Span) {
        let target = self.jumps.last().map(|t| match *t {
            JumpTarget::Loop { break_depth, .. } | JumpTarget::Switch { break_depth } => break_depth,
        });
        match target {
            Some(t) => self.emit(Op::Break(self.depth - t + 1), span),
            None => self.error(
                Diagnostic::at(codes::GGE1301, span, "`break` outside a loop or switch")
                    .with_hint("`break` leaves the innermost `while`, `for` or `switch`"),
            ),
        }
    }

    fn lower_continue(&mut self, span: Span) {
        let target = self.jumps.iter().rev().find_map(|t| match *t {
            JumpTarget::Loop { continue_with, .. } => Some(continue_with),
            JumpTarget::Switch { .. } => None,
        });
        match target {
            Some(ContinueWith::Continue(t)) => self.emit(Op::Continue(self.depth - t + 1), span),
            Some(ContinueWith::BreakOut(t)) => self.emit(Op::Break(self.depth - t + 1), span),
            None => self.error(
                Diagnostic::at(codes::GGE1303, span, "`continue` outside a loop")
                    .with_hint("`continue` starts the next iteration of the innermost `while` or `for`"),
            ),
        }
    }

    /// The loop head: `cond; If(then: [], else: [Break 2])`, which leaves the looping block when
    /// the condition is false (and reports GGE2104 when it is not a Boolean).
    fn lower_loop_condition(&mut self, cond: &Expr) {
        self.lower_expr(cond);
        let then = self.block(|_| {});
        let otherwise = self.block(|l| l.emit(Op::Break(2), cond.span));
        self.emit(Op::If { then, otherwise: Some(otherwise) }, cond.span);
    }

    fn lower_while(&mut self, cond: &Expr, body: &Stmt, span: Span) {
        let body_block = self.block(|l| {
            let loop_depth = l.depth;
            l.lower_loop_condition(cond);
            l.jumps
                .push(JumpTarget::Loop { break_depth: loop_depth, continue_with: ContinueWith::Continue(loop_depth) });
            if let Some(id) = l.stmt_block(body) {
                l.emit(Op::CallBlock(id), body.span);
            }
            l.jumps.pop();
        });
        self.emit(Op::While(body_block), span);
    }

    fn lower_for(&mut self, init: Option<&ForInit>, cond: Option<&Expr>, step: Option<&Expr>, body: &Stmt, span: Span) {
        let outer = self.block(|l| {
            match init {
                Some(ForInit::Var { name: var, init }) => l.lower_var(var, init.as_ref(), span),
                Some(ForInit::Expr(expr)) => l.lower_expr_stmt(expr, expr.span),
                None => {}
            }
            let looping = l.block(|l| {
                let loop_depth = l.depth;
                if let Some(cond) = cond {
                    l.lower_loop_condition(cond);
                }
                l.jumps.push(JumpTarget::Loop {
                    break_depth: loop_depth,
                    // The body block is one deeper than the looping block; leaving it reaches
                    // the step.
                    continue_with: ContinueWith::BreakOut(loop_depth + 1),
                });
                if let Some(id) = l.stmt_block(body) {
                    l.emit(Op::CallBlock(id), body.span);
                }
                l.jumps.pop();
                if let Some(step) = step {
                    l.lower_expr_stmt(step, step.span);
                }
                // `for (;;) {}` has nothing to execute, but each iteration must still execute an
                // instruction: the budget counts instructions, and the VM refuses an empty
                // looping block, which could otherwise spin forever without using any.
                if l.open.last().is_some_and(Vec::is_empty) {
                    l.emit(Op::LoadNull, span);
                    l.emit(Op::Pop, span);
                }
            });
            l.emit(Op::While(looping), span);
        });
        self.emit(Op::CallBlock(outer), span);
    }

    /// `switch` with JavaScript semantics: the scrutinee is evaluated once; the labels are
    /// compared with `==` in source order, each evaluated only if no earlier one matched; the
    /// bodies run from the first matching case (or `default`, wherever it is written) on, falling
    /// through, until a `break`, which leaves the switch.
    ///
    /// ```text
    /// CallBlock[                                   // the switch block
    ///   scrutinee; DeclareLocal <s>; StoreScope <s>; Pop
    ///   LoadNumber n; DeclareLocal <i>; StoreScope <i>; Pop        // n = "no match yet"
    ///   for each case k with a label:
    ///     LoadScope <i>; LoadNumber n; CallGlobal "==" 2
    ///     If[ LoadScope <s>; label; CallGlobal "==" 2; If[LoadNumber k; StoreScope <i>; Pop] ]
    ///   if there is a default d:
    ///     LoadScope <i>; LoadNumber n; CallGlobal "==" 2; If[LoadNumber d; StoreScope <i>; Pop]
    ///   for each case k with a body:
    ///     LoadScope <i>; LoadNumber k; CallGlobal "<=" 2; If[body k]
    /// ]
    /// ```
    ///
    /// Each case body is its own block, so a `var` declared in one case is not visible in the
    /// cases it falls through to.
    fn lower_switch(&mut self, scrutinee: &Expr, cases: &[SwitchCase], span: Span) {
        let mut default: Option<(usize, Span)> = None;
        for (k, case) in cases.iter().enumerate() {
            if case.label.is_none() {
                match default {
                    None => default = Some((k, case.span)),
                    Some((_, first)) => self.error(
                        Diagnostic::at(codes::GGE1313, case.span, "a second `default` in one `switch`")
                            .with_label(first, "first `default` here")
                            .with_hint("a switch can have at most one `default`"),
                    ),
                }
            }
        }
        let scrutinee_var = self.hidden_local("switch");
        let index_var = self.hidden_local("case");
        let none = cases.len() as f64;
        let switch_block = self.block(|l| {
            let switch_depth = l.depth;
            l.lower_expr(scrutinee);
            l.emit(Op::DeclareLocal(scrutinee_var.clone()), span);
            l.emit(Op::StoreScope(scrutinee_var.clone()), span);
            l.emit(Op::Pop, span);
            l.emit(Op::LoadNumber(none), span);
            l.emit(Op::DeclareLocal(index_var.clone()), span);
            l.emit(Op::StoreScope(index_var.clone()), span);
            l.emit(Op::Pop, span);

            let set_index = |l: &mut Self, k: usize, at: Span| {
                l.block(|l| {
                    l.emit(Op::LoadNumber(k as f64), at);
                    l.emit(Op::StoreScope(index_var.clone()), at);
                    l.emit(Op::Pop, at);
                })
            };
            let index_is = |l: &mut Self, value: f64, op: &str, at: Span| {
                l.emit(Op::LoadScope(index_var.clone()), at);
                l.emit(Op::LoadNumber(value), at);
                l.emit(Op::CallGlobal { name: name(op), argc: 2 }, at);
            };

            for (k, case) in cases.iter().enumerate() {
                let Some(label) = &case.label else { continue };
                index_is(l, none, "==", case.span);
                let then = l.block(|l| {
                    l.emit(Op::LoadScope(scrutinee_var.clone()), case.span);
                    l.lower_expr(label);
                    l.emit(Op::CallGlobal { name: name("=="), argc: 2 }, case.span);
                    let matched = set_index(l, k, case.span);
                    l.emit(Op::If { then: matched, otherwise: None }, case.span);
                });
                l.emit(Op::If { then, otherwise: None }, case.span);
            }
            if let Some((d, at)) = default {
                index_is(l, none, "==", at);
                let then = set_index(l, d, at);
                l.emit(Op::If { then, otherwise: None }, at);
            }

            l.jumps.push(JumpTarget::Switch { break_depth: switch_depth });
            for (k, case) in cases.iter().enumerate() {
                let Some(body) = l.build_block(true, |l| l.lower_stmts(&case.body)) else { continue };
                // The body block was built before this condition is emitted, but it only runs
                // through the `If` below, so its depth was computed correctly.
                index_is(l, k as f64, "<=", case.span);
                l.emit(Op::If { then: body, otherwise: None }, case.span);
            }
            l.jumps.pop();
        });
        self.emit(Op::CallBlock(switch_block), span);
    }

    // ----- expressions ----------------------------------------------------------------------

    /// Lowers an expression: the emitted code pushes exactly one value.
    fn lower_expr(&mut self, expr: &Expr) {
        let span = expr.span;
        match &expr.kind {
            ExprKind::Number(n) => self.emit(Op::LoadNumber(*n), span),
            ExprKind::String(s) => self.emit(Op::LoadString(name(s)), span),
            ExprKind::Bool(b) => self.emit(Op::LoadBool(*b), span),
            ExprKind::Ident(id) => self.emit(Op::LoadScope(name(id)), span),
            ExprKind::Member { object, name: member } => {
                self.lower_expr(object);
                self.emit(Op::LoadMember(name(&member.name)), span);
            }
            ExprKind::Call { name: function, args } => {
                self.lower_args(args);
                self.emit_call(Op::CallGlobal { name: name(&function.name), argc: args.len() as u32 }, span, args);
            }
            ExprKind::MethodCall { object, name: method, args } => {
                self.lower_expr(object);
                self.lower_args(args);
                self.emit_call(Op::CallMember { name: name(&method.name), argc: args.len() as u32 }, span, args);
            }
            ExprKind::Index { object, indices } => {
                if indices.is_empty() {
                    self.report_misplaced_push(expr);
                }
                self.lower_expr(object);
                self.lower_args(indices);
                self.emit(Op::CallMember { name: name("[]"), argc: indices.len() as u32 }, span);
            }
            ExprKind::Unary { op, operand } => match op {
                UnaryOp::PreIncrement => self.lower_step(operand, "++pre", span),
                UnaryOp::PreDecrement => self.lower_step(operand, "--pre", span),
                UnaryOp::Plus | UnaryOp::Minus | UnaryOp::Not | UnaryOp::Relative => {
                    let function = match op {
                        UnaryOp::Plus => "+un",
                        UnaryOp::Minus => "-un",
                        UnaryOp::Not => "!",
                        _ => "@",
                    };
                    self.lower_expr(operand);
                    self.emit(Op::CallGlobal { name: name(function), argc: 1 }, span);
                }
            },
            ExprKind::Postfix { op, operand } => {
                let function = match op {
                    PostfixOp::Increment => "++post",
                    PostfixOp::Decrement => "--post",
                };
                self.lower_step(operand, function, span);
            }
            ExprKind::Binary { op: BinaryOp::And, lhs, rhs } => self.lower_short_circuit(lhs, rhs, true, span),
            ExprKind::Binary { op: BinaryOp::Or, lhs, rhs } => self.lower_short_circuit(lhs, rhs, false, span),
            ExprKind::Binary { op, lhs, rhs } => {
                self.lower_expr(lhs);
                self.lower_expr(rhs);
                self.emit(Op::CallGlobal { name: name(binary_name(*op)), argc: 2 }, span);
            }
            ExprKind::Assign { op: AssignOp::Assign, target, value } => self.lower_assign(target, value, span),
            ExprKind::Assign { op, target, value } => self.lower_compound(*op, target, value, span),
            ExprKind::Conditional { cond, then_value, else_value } => {
                self.lower_expr(cond);
                let then = self.block(|l| l.lower_expr(then_value));
                let otherwise = self.block(|l| l.lower_expr(else_value));
                self.emit(Op::If { then, otherwise: Some(otherwise) }, cond.span);
            }
            ExprKind::Array(items) => self.lower_array(items, span),
            ExprKind::Coordinate(components) => {
                // The parser reports counts other than 1 and 2; they are lowered as calls with
                // that many arguments, which would fail at run time with GGE2103.
                let (type_name, method) =
                    if components.len() == 1 { ("Coordinate", "FromNumber") } else { ("Point", "Create") };
                self.emit(Op::LoadScope(name(type_name)), span);
                self.lower_args(components);
                self.emit(Op::CallMember { name: name(method), argc: components.len() as u32 }, span);
            }
            // The parser reported it; push something so that the stack stays balanced.
            ExprKind::Error => self.emit(Op::LoadNull, span),
        }
    }

    fn lower_args(&mut self, args: &[Expr]) {
        for arg in args {
            self.lower_expr(arg);
        }
    }

    fn report_misplaced_push(&mut self, expr: &Expr) {
        self.error(
            Diagnostic::at(codes::GGE1201, expr.span, "an empty index `[]` can only be assigned to")
                .with_hint("`a[] = v` appends v to the array a; to read an item, write its key: `a[k]`"),
        );
    }

    fn report_read_only(&mut self, target: &Expr, operator: &str) {
        self.error(
            Diagnostic::at(codes::GGE1307, target.span, format!("`{operator}` cannot write to {}", describe(target)))
                .with_hint("only a variable, a member (`a.b`) or an array item (`a[k]`) can be assigned"),
        );
    }

    /// `a && b` (`is_and`) or `a || b`, short-circuit. See the module docs.
    fn lower_short_circuit(&mut self, lhs: &Expr, rhs: &Expr, is_and: bool, span: Span) {
        self.lower_expr(lhs);
        // The branch that needs the right operand, which must itself be a Boolean: re-checking
        // it with an `If` gives GGE2104 for a non-Boolean, like the left operand.
        let evaluate_rhs = |l: &mut Self| {
            l.block(|l| {
                l.lower_expr(rhs);
                let yes = l.block(|l| l.emit(Op::LoadBool(true), span));
                let no = l.block(|l| l.emit(Op::LoadBool(false), span));
                // A GGE2104 here is about the right operand: point at it, not at the whole `&&`.
                l.emit(Op::If { then: yes, otherwise: Some(no) }, rhs.span);
            })
        };
        // `false && _` is false; `true || _` is true. (Blocks are built in branch order so that
        // their ids read in order.)
        let decided = |l: &mut Self| l.block(|l| l.emit(Op::LoadBool(!is_and), span));
        let (then, otherwise) = if is_and {
            let then = evaluate_rhs(self);
            (then, decided(self))
        } else {
            let then = decided(self);
            (then, evaluate_rhs(self))
        };
        self.emit(Op::If { then, otherwise: Some(otherwise) }, lhs.span);
    }

    fn lower_array(&mut self, items: &[ArrayItem], span: Span) {
        self.emit(Op::LoadScope(name("Array")), span);
        self.emit(Op::CallMember { name: name("Empty"), argc: 0 }, span);
        for item in items {
            // Keep the array on the stack under each insertion; the insertion's result is
            // discarded.
            self.emit(Op::Dup, item.value.span);
            match &item.key {
                Some(key) => {
                    self.lower_expr(key);
                    self.lower_expr(&item.value);
                    // Span the whole `key: value` item so that a null key (GGE2603) points at
                    // the key, where the mistake is.
                    self.emit(Op::CallMember { name: name("[]="), argc: 2 }, key.span.to(item.value.span));
                }
                None => {
                    self.lower_expr(&item.value);
                    self.emit(Op::CallMember { name: name("PushBack"), argc: 1 }, item.value.span);
                }
            }
            self.emit(Op::Pop, item.value.span);
        }
    }

    /// Plain `=`.
    fn lower_assign(&mut self, target: &Expr, value: &Expr, span: Span) {
        match &target.kind {
            ExprKind::Ident(var) => {
                self.lower_expr(value);
                self.emit(Op::StoreScope(name(var)), span);
            }
            ExprKind::Member { object, name: member } => {
                self.lower_expr(object);
                self.lower_expr(value);
                self.emit(Op::StoreMember(name(&member.name)), span);
            }
            ExprKind::Index { object, indices } if indices.is_empty() => self.lower_push_back(object, value, span),
            ExprKind::Index { object, indices } => {
                self.lower_expr(object);
                self.lower_args(indices);
                self.lower_expr(value);
                self.emit(Op::CallMember { name: name("[]="), argc: indices.len() as u32 + 1 }, span);
            }
            // Already reported by the parser: evaluate the value for its own errors.
            ExprKind::Error => self.lower_expr(value),
            _ => {
                self.report_read_only(target, "=");
                self.lower_expr(value);
            }
        }
    }

    /// `a[] = e` as an expression whose value is needed (the statement form is simpler, see
    /// [`Self::lower_expr_stmt`]). `PushBack` returns null, and the object stack cannot reach
    /// under the top, so the value is parked in a hidden local:
    /// `a; e; DeclareLocal <push>; StoreScope <push>; CallMember "PushBack" 1; Pop; LoadScope <push>`.
    /// `a` is still evaluated before `e`.
    fn lower_push_back(&mut self, object: &Expr, value: &Expr, span: Span) {
        let parked = self.hidden_local("push");
        self.lower_expr(object);
        self.lower_expr(value);
        self.emit(Op::DeclareLocal(parked.clone()), span);
        self.emit(Op::StoreScope(parked.clone()), span);
        self.emit(Op::CallMember { name: name("PushBack"), argc: 1 }, span);
        self.emit(Op::Pop, span);
        self.emit(Op::LoadScope(parked), span);
    }

    /// Pushes a Reference to `target` for `op=`, `++` and `--`. Returns false (after reporting)
    /// when the target is not writable. Members have no references; see [`Self::lower_compound`].
    fn lower_reference(&mut self, target: &Expr, operator: &str) -> bool {
        match &target.kind {
            ExprKind::Ident(var) => {
                self.emit(Op::LoadScopeRef(name(var)), target.span);
                true
            }
            ExprKind::Index { object, indices } if !indices.is_empty() => {
                self.lower_expr(object);
                self.lower_args(indices);
                self.emit(Op::CallMember { name: name("[]ref"), argc: indices.len() as u32 }, target.span);
                true
            }
            ExprKind::Index { .. } => {
                self.report_misplaced_push(target);
                false
            }
            ExprKind::Error => false,
            _ => {
                self.report_read_only(target, operator);
                false
            }
        }
    }

    /// `target op= value`: reference, value, `CallGlobal "op=" 2`.
    fn lower_compound(&mut self, op: AssignOp, target: &Expr, value: &Expr, span: Span) {
        let symbol = op.symbol();
        if let ExprKind::Member { object, name: member } = &target.kind {
            // `o.m op= e` is `o; Dup; LoadMember m; e; CallGlobal "op" 2; StoreMember m`. Every
            // member is read-only today, so StoreMember reports GGE2108 at run time, as in the
            // original; the scheme is nevertheless the right one should writable members appear.
            let binary = symbol.trim_end_matches('=');
            self.lower_expr(object);
            self.emit(Op::Dup, span);
            self.emit(Op::LoadMember(name(&member.name)), target.span);
            self.lower_expr(value);
            self.emit(Op::CallGlobal { name: name(binary), argc: 2 }, span);
            self.emit(Op::StoreMember(name(&member.name)), span);
            return;
        }
        if self.lower_reference(target, symbol) {
            self.lower_expr(value);
            self.emit(Op::CallGlobal { name: name(symbol), argc: 2 }, span);
        } else {
            // Keep the stack balanced and still find errors in the value.
            self.lower_expr(value);
        }
    }

    /// `++x`, `x++`, `--x`, `x--` (`function` is `++pre`, `++post`, `--pre` or `--post`).
    fn lower_step(&mut self, target: &Expr, function: &str, span: Span) {
        if let ExprKind::Member { object, name: member } = &target.kind {
            // As for compound assignment: `o; Dup; LoadMember m; [park old value]; 1; +/-;
            // StoreMember m`, then for the postfix forms drop the new value and load the old.
            let member_name = name(&member.name);
            let postfix = function.ends_with("post");
            let binary = if function.starts_with("++") { "+" } else { "-" };
            self.lower_expr(object);
            self.emit(Op::Dup, span);
            self.emit(Op::LoadMember(member_name.clone()), target.span);
            let parked = postfix.then(|| self.hidden_local("old"));
            if let Some(parked) = &parked {
                self.emit(Op::DeclareLocal(parked.clone()), span);
                self.emit(Op::StoreScope(parked.clone()), span);
            }
            self.emit(Op::LoadNumber(1.0), span);
            self.emit(Op::CallGlobal { name: name(binary), argc: 2 }, span);
            self.emit(Op::StoreMember(member_name), span);
            if let Some(parked) = parked {
                self.emit(Op::Pop, span);
                self.emit(Op::LoadScope(parked), span);
            }
            return;
        }
        let operator = &function[..2];
        if self.lower_reference(target, operator) {
            self.emit(Op::CallGlobal { name: name(function), argc: 1 }, span);
        } else {
            self.emit(Op::LoadNull, span);
        }
    }
}
