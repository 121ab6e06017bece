//! The compiled evaluator.
//!
//! A program is lowered once into flat register code. Programs without `self` (the usual case)
//! run in **row mode**: every instruction is applied to a block of up to [`BLOCK`] points at
//! once (a register is a block of lanes), in a tight loop per instruction that the compiler
//! vectorises; constants live in registers filled once per workspace; `?`, `and` and `or` are
//! evaluated eagerly and selected, which gives the same values because the language is pure.
//!
//! Programs that can recurse (a `self` call, or a parameter program of a configurable function
//! that recurses) run in **scalar mode**: per point, on an explicit stack of frames (no Rust
//! recursion, so the depth limit is the only bound), with `?`, `if`, `and` and `or` lazy, as the
//! original evaluates them. Each point's evaluation is bounded by the self-depth limit (GGE8301)
//! and by an operation budget (GGE8302), and both are properties of the point alone, so a tile
//! fails exactly where a larger render fails.
//!
//! Both modes call the same scalar functions ([`crate::ops`]) and the same noise kernels, so a
//! point gets the same bits in either mode, at any position in a block, in any tile.

use std::sync::Arc;

use geogen_diag::{codes, Diagnostic, ErrorCode, Span};

use crate::ast::{BinOp, Expr, ExprKind, UnOp};
use crate::dialect::Dialect;
use crate::noise::{Function, FunctionWorkspace};
use crate::ops;

/// Points per block in row mode.
pub const BLOCK: usize = 256;

/// Constants kept in registers filled once per workspace; further distinct constants of a huge
/// program are written by instructions instead (so a workspace stays small).
const MAX_HOISTED_CONSTANTS: usize = 64;

/// The bounds on one program's compilation and evaluation (spec §6: every limit configurable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Nested `self` calls at one point (GGE8301). The original had none and crashed.
    pub max_self_depth: usize,
    /// Operations one point may cost (GGE8209 when known statically, GGE8302 for recursion).
    pub max_point_ops: u64,
    /// Nesting of forms and parameter programs (GGE8110).
    pub max_nesting: usize,
}

pub const DEFAULT_MAX_SELF_DEPTH: usize = 1000;
pub const DEFAULT_MAX_POINT_OPS: u64 = 100_000;
pub const DEFAULT_MAX_NESTING: usize = 200;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_self_depth: DEFAULT_MAX_SELF_DEPTH,
            max_point_ops: DEFAULT_MAX_POINT_OPS,
            max_nesting: DEFAULT_MAX_NESTING,
        }
    }
}

/// How to compile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub dialect: Dialect,
    pub limits: Limits,
}

/// An error while evaluating (the recursion limits), or a broken internal invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub code: ErrorCode,
    pub message: String,
    /// Where in the program text (the `self` call).
    pub span: Option<Span>,
    pub hint: Option<String>,
}

impl EvalError {
    pub fn internal(message: impl Into<String>) -> EvalError {
        EvalError { code: codes::GGE5000, message: message.into(), span: None, hint: None }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::new(self.code, self.message.clone());
        d.span = self.span;
        d.hint = self.hint.clone();
        d
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for EvalError {}

type Reg = u32;

#[derive(Copy, Clone, Debug, PartialEq)]
enum Un {
    Inv,
    Sin,
    Cos,
    Floor,
    Abs,
    TruncDocumented,
    TruncPicogen,
    Frac,
    Neg,
    Sqrt,
    TruthDocumented,
    TruthPicogen,
    /// `not` of a truth value (0 or 1).
    Not01,
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Bin {
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
    Min,
    Max,
    Delta,
}

#[inline(always)]
fn un(op: Un, a: f64) -> f64 {
    match op {
        Un::Inv => 1.0 / a,
        Un::Sin => libm::sin(a),
        Un::Cos => libm::cos(a),
        Un::Floor => ops::floor(a),
        Un::Abs => libm::fabs(a),
        Un::TruncDocumented => ops::trunc_documented(a),
        Un::TruncPicogen => ops::trunc_picogen(a),
        Un::Frac => ops::frac(a),
        Un::Neg => -a,
        Un::Sqrt => libm::sqrt(a),
        Un::TruthDocumented => ops::truth_documented(a),
        Un::TruthPicogen => ops::truth_picogen(a),
        Un::Not01 => ops::bool01(a == 0.0),
    }
}

#[inline(always)]
fn bin(op: Bin, a: f64, b: f64) -> f64 {
    match op {
        Bin::Add => a + b,
        Bin::Sub => a - b,
        Bin::Mul => a * b,
        Bin::Div => a / b,
        Bin::Pow => ops::pow(a, b),
        Bin::Eq => ops::bool01(a == b),
        Bin::Ne => ops::bool01(a != b),
        Bin::Lt => ops::bool01(a < b),
        Bin::Le => ops::bool01(a <= b),
        Bin::Gt => ops::bool01(a > b),
        Bin::Ge => ops::bool01(a >= b),
        Bin::Min => ops::min(a, b),
        Bin::Max => ops::max(a, b),
        Bin::Delta => ops::delta(a, b),
    }
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Instr {
    Const {
        dst: Reg,
        value: f64,
    },
    Un {
        op: Un,
        dst: Reg,
        a: Reg,
    },
    Bin {
        op: Bin,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `dst = c != 0 ? a : b`, `c` a truth value.
    Select {
        dst: Reg,
        c: Reg,
        a: Reg,
        b: Reg,
    },
    Lerp {
        dst: Reg,
        a: Reg,
        b: Reg,
        t: Reg,
    },
    Call {
        function: u32,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    // Scalar mode only.
    JumpUnless {
        c: Reg,
        target: u32,
    },
    Jump {
        target: u32,
    },
    Move {
        dst: Reg,
        src: Reg,
    },
    SelfCall {
        dst: Reg,
        args: [Reg; 2],
        site: u32,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mode {
    Row,
    Scalar,
}

/// A compiled Height-Slang program: immutable, `Send + Sync`, shared by every thread (its noise
/// tables included); each thread evaluates it with its own [`Workspace`].
#[derive(Clone, Debug)]
pub struct Program {
    arity: usize,
    dialect: Dialect,
    limits: Limits,
    ast: Expr,
    mode: Mode,
    prologue: Vec<Instr>,
    body: Vec<Instr>,
    nregs: usize,
    result: Reg,
    functions: Vec<Arc<Function>>,
    self_sites: Vec<Span>,
    /// The whole program folds to this value.
    constant: Option<f64>,
    /// The program is one of its variables.
    passthrough: Option<usize>,
    cost: u64,
    may_fail: bool,
    /// Functions in the program, its parameter programs' included.
    function_count: usize,
    /// Whether its functions keep row caches (few enough of them, see `noise`).
    caching: bool,
}

/// One stack frame of the scalar machine.
#[derive(Copy, Clone, Debug)]
struct Frame {
    base: usize,
    dst: Reg,
    ret: usize,
    site: u32,
}

/// A thread's scratch space for one program (and, inside, for its functions and their
/// parameter programs).
#[derive(Debug)]
pub struct Workspace {
    /// The cache slot of this workspace's first block (nested programs inherit their caller's).
    pub(crate) slot_base: usize,
    regs: Vec<f64>,
    ready: bool,
    row_y: Vec<f64>,
    stack: Vec<f64>,
    frames: Vec<Frame>,
    functions: Vec<FunctionWorkspace>,
}

impl Program {
    /// Lowers a parsed program (see [`crate::compile`]).
    pub(crate) fn from_ast(ast: Expr, arity: usize, options: &Options) -> Result<Program, Diagnostic> {
        let has_self = contains_self(&ast);
        if has_self {
            if let Some(span) = unguarded_self(&ast) {
                return Err(Diagnostic::at(
                    codes::GGE8111,
                    span,
                    "this `self` call is reached by every evaluation, so the recursion never ends",
                )
                .with_hint("guard the recursion with a condition, e.g. (? (< x 1) 0 (self (- x 1) y))"));
            }
        }
        let may_fail = has_self || any_function(&ast, &|f| f.may_fail());
        let mode = if may_fail { Mode::Scalar } else { Mode::Row };
        let mut lowerer = Lowerer {
            mode,
            dialect: options.dialect,
            code: Vec::new(),
            prologue: Vec::new(),
            nregs: arity as Reg,
            free: Vec::new(),
            hoisted: Vec::new(),
            functions: Vec::new(),
            self_sites: Vec::new(),
        };
        let root = lowerer.lower(&ast);
        let (constant, passthrough, result) = match root {
            Val::Const(c) => (Some(c), None, 0),
            Val::Reg(r, false) if (r as usize) < arity => (None, Some(r as usize), r),
            Val::Reg(r, _) => (None, None, r),
        };
        let function_count: usize = lowerer.functions.iter().map(|f| f.function_count()).sum();
        Ok(Program {
            function_count,
            caching: function_count <= crate::noise::MAX_CACHING_FUNCTIONS,
            arity,
            dialect: options.dialect,
            limits: options.limits.clone(),
            cost: cost(&ast),
            ast,
            mode,
            prologue: lowerer.prologue,
            body: lowerer.code,
            nregs: (lowerer.nregs as usize).max(1),
            result,
            functions: lowerer.functions,
            self_sites: lowerer.self_sites,
            constant,
            passthrough,
            may_fail,
        })
    }

    /// Variables: 2 for a height map (x, y), 1 for persistence and level functions.
    pub fn arity(&self) -> usize {
        self.arity
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The tree as parsed.
    pub fn ast(&self) -> &Expr {
        &self.ast
    }

    /// Operations one point costs, statically (a `self` call counts once).
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// Whether evaluation can fail (recursion limits): the program recurses, or a parameter
    /// program of one of its functions does.
    pub fn may_fail(&self) -> bool {
        self.may_fail
    }

    /// Whether it is evaluated per point (recursive programs) rather than per block.
    pub fn is_scalar(&self) -> bool {
        self.mode == Mode::Scalar
    }

    /// The value of a program that does not depend on its variables.
    pub fn constant(&self) -> Option<f64> {
        self.constant
    }

    /// Configurable functions in the program (its parameter programs' included).
    pub fn function_count(&self) -> usize {
        self.function_count
    }

    /// Whether the program is `x`.
    pub fn is_identity(&self) -> bool {
        self.passthrough == Some(0)
    }

    /// Instructions of the lowered code (for tests and listings).
    pub fn instruction_count(&self) -> usize {
        self.prologue.len() + self.body.len()
    }

    pub fn workspace(&self) -> Workspace {
        Workspace {
            slot_base: 0,
            regs: Vec::new(),
            ready: false,
            row_y: Vec::new(),
            stack: Vec::new(),
            frames: Vec::new(),
            functions: self.functions.iter().map(|f| f.workspace(self.caching)).collect(),
        }
    }

    /// The value at one point (`args.len()` = arity; missing ones are 0).
    pub fn eval_point(&self, args: &[f64]) -> Result<f64, EvalError> {
        let mut ws = self.workspace();
        let columns: Vec<[f64; 1]> = (0..self.arity).map(|k| [args.get(k).copied().unwrap_or(0.0)]).collect();
        let inputs: Vec<&[f64]> = columns.iter().map(|c| &c[..]).collect();
        let mut out = [0.0];
        self.eval_lanes(&inputs, &mut out, &mut ws)?;
        Ok(out[0])
    }

    /// `out[i] = h(xs[i], y)` for a two-variable program (a row of a map).
    pub fn eval_row(&self, xs: &[f64], y: f64, out: &mut [f64], ws: &mut Workspace) -> Result<(), EvalError> {
        let mut row_y = std::mem::take(&mut ws.row_y);
        row_y.clear();
        row_y.resize(xs.len().min(out.len()), y);
        let result = match self.arity {
            1 => self.eval_lanes(&[xs], out, ws),
            _ => self.eval_lanes(&[xs, &row_y], out, ws),
        };
        ws.row_y = row_y;
        result
    }

    /// `out[i] = h(inputs[0][i], inputs[1][i], ...)`, for `inputs.len()` = arity.
    pub fn eval_lanes(&self, inputs: &[&[f64]], out: &mut [f64], ws: &mut Workspace) -> Result<(), EvalError> {
        if inputs.len() != self.arity || inputs.iter().any(|i| i.len() < out.len()) {
            return Err(EvalError::internal("a program was evaluated with the wrong number of inputs"));
        }
        if let Some(c) = self.constant {
            out.fill(c);
            return Ok(());
        }
        if let Some(k) = self.passthrough {
            out.copy_from_slice(&inputs[k][..out.len()]);
            return Ok(());
        }
        match self.mode {
            Mode::Row => {
                let n = out.len();
                let mut start = 0;
                let mut block = 0;
                while start < n {
                    let end = (start + BLOCK).min(n);
                    let mut block_inputs: [&[f64]; 2] = [&[], &[]];
                    for (k, input) in inputs.iter().enumerate().take(2) {
                        block_inputs[k] = &input[start..end];
                    }
                    self.run_block(&block_inputs[..self.arity.min(2)], &mut out[start..end], ws, block)?;
                    start = end;
                    block += 1;
                }
                Ok(())
            }
            Mode::Scalar => {
                for (l, o) in out.iter_mut().enumerate() {
                    let args = [inputs[0][l], inputs.get(1).map_or(0.0, |i| i[l])];
                    *o = self.run_scalar(&args[..self.arity.min(2)], ws)?;
                }
                Ok(())
            }
        }
    }

    fn run_block(&self, inputs: &[&[f64]], out: &mut [f64], ws: &mut Workspace, block: usize) -> Result<(), EvalError> {
        let n = out.len();
        let slot = ws.slot_base.saturating_add(block);
        let Workspace { regs, ready, functions, .. } = ws;
        if !*ready {
            regs.clear();
            regs.resize(self.nregs * BLOCK, 0.0);
            for instr in &self.prologue {
                if let Instr::Const { dst, value } = *instr {
                    lane(regs, dst, BLOCK).fill(value);
                }
            }
            *ready = true;
        }
        for (k, input) in inputs.iter().enumerate() {
            lane(regs, k as Reg, n).copy_from_slice(&input[..n]);
        }
        for instr in &self.body {
            match *instr {
                Instr::Const { dst, value } => lane(regs, dst, n).fill(value),
                Instr::Un { op, dst, a } => {
                    let (d, [a]) = lanes(regs, dst, [a], n);
                    un_loop(op, d, a);
                }
                Instr::Bin { op, dst, a, b } => {
                    let (d, [a, b]) = lanes(regs, dst, [a, b], n);
                    bin_loop(op, d, a, b);
                }
                Instr::Select { dst, c, a, b } => {
                    let (d, [c, a, b]) = lanes(regs, dst, [c, a, b], n);
                    for (((d, &c), &a), &b) in d.iter_mut().zip(c).zip(a).zip(b) {
                        *d = if c != 0.0 { a } else { b };
                    }
                }
                Instr::Lerp { dst, a, b, t } => {
                    let (d, [a, b, t]) = lanes(regs, dst, [a, b, t], n);
                    for (((d, &a), &b), &t) in d.iter_mut().zip(a).zip(b).zip(t) {
                        *d = ops::lerp(a, b, t);
                    }
                }
                Instr::Call { function, dst, a, b } => {
                    let (d, [a, b]) = lanes(regs, dst, [a, b], n);
                    let (Some(f), Some(fws)) =
                        (self.functions.get(function as usize), functions.get_mut(function as usize))
                    else {
                        return Err(EvalError::internal("call of an unknown function"));
                    };
                    fws.slot = slot;
                    f.eval(a, b, d, fws)?;
                }
                Instr::JumpUnless { .. } | Instr::Jump { .. } | Instr::Move { .. } | Instr::SelfCall { .. } => {
                    return Err(EvalError::internal("control flow in row code"));
                }
            }
        }
        out.copy_from_slice(&lane(regs, self.result, n)[..n]);
        Ok(())
    }

    fn run_scalar(&self, args: &[f64], ws: &mut Workspace) -> Result<f64, EvalError> {
        let nregs = self.nregs;
        let Workspace { stack, frames, functions, .. } = ws;
        stack.clear();
        frames.clear();
        stack.resize(nregs, 0.0);
        stack[..args.len()].copy_from_slice(args);
        let mut base = 0usize;
        let mut ip = 0usize;
        let mut ops: u64 = 0;
        let budget = self.limits.max_point_ops;
        loop {
            let Some(&instr) = self.body.get(ip) else {
                let value = stack[base + self.result as usize];
                match frames.pop() {
                    None => return Ok(value),
                    Some(frame) => {
                        stack.truncate(base);
                        base = frame.base;
                        stack[base + frame.dst as usize] = value;
                        ip = frame.ret;
                        continue;
                    }
                }
            };
            ops += 1;
            if ops > budget {
                let site = frames.last().map(|f| f.site).unwrap_or(0);
                return Err(EvalError {
                    code: codes::GGE8302,
                    message: format!("this recursion took more than {budget} operations at one point"),
                    span: self.self_sites.get(site as usize).copied(),
                    hint: Some("the recursion branches too much or runs too deep; make it terminate sooner".into()),
                });
            }
            let r = |reg: Reg| base + reg as usize;
            match instr {
                Instr::Const { dst, value } => stack[r(dst)] = value,
                Instr::Un { op, dst, a } => stack[r(dst)] = un(op, stack[r(a)]),
                Instr::Bin { op, dst, a, b } => stack[r(dst)] = bin(op, stack[r(a)], stack[r(b)]),
                Instr::Select { dst, c, a, b } => {
                    stack[r(dst)] = if stack[r(c)] != 0.0 { stack[r(a)] } else { stack[r(b)] };
                }
                Instr::Lerp { dst, a, b, t } => stack[r(dst)] = ops::lerp(stack[r(a)], stack[r(b)], stack[r(t)]),
                Instr::Call { function, dst, a, b } => {
                    let (Some(f), Some(fws)) =
                        (self.functions.get(function as usize), functions.get_mut(function as usize))
                    else {
                        return Err(EvalError::internal("call of an unknown function"));
                    };
                    ops = ops.saturating_add(f.cost());
                    fws.slot = usize::MAX;
                    let mut out = [0.0];
                    f.eval(&[stack[r(a)]], &[stack[r(b)]], &mut out, fws)?;
                    stack[r(dst)] = out[0];
                }
                Instr::JumpUnless { c, target } => {
                    if stack[r(c)] == 0.0 {
                        ip = target as usize;
                        continue;
                    }
                }
                Instr::Jump { target } => {
                    ip = target as usize;
                    continue;
                }
                Instr::Move { dst, src } => stack[r(dst)] = stack[r(src)],
                Instr::SelfCall { dst, args, site } => {
                    if frames.len() >= self.limits.max_self_depth {
                        return Err(EvalError {
                            code: codes::GGE8301,
                            message: format!(
                                "`self` recursion deeper than the limit of {} nested calls",
                                self.limits.max_self_depth
                            ),
                            span: self.self_sites.get(site as usize).copied(),
                            hint: Some(
                                "the recursion does not end soon enough here; raise the limit with --max-call-depth if it is meant to"
                                    .into(),
                            ),
                        });
                    }
                    let new_base = stack.len();
                    stack.resize(new_base + nregs, 0.0);
                    for (k, &arg) in args.iter().enumerate().take(self.arity) {
                        stack[new_base + k] = stack[r(arg)];
                    }
                    frames.push(Frame { base, dst, ret: ip + 1, site });
                    base = new_base;
                    ip = 0;
                    continue;
                }
            }
            ip += 1;
        }
    }
}

#[inline(always)]
fn un_loop(op: Un, d: &mut [f64], a: &[f64]) {
    // One loop per operator, so each is a straight vectorisable loop.
    macro_rules! each {
        ($f:expr) => {
            for (d, &a) in d.iter_mut().zip(a) {
                *d = $f(a);
            }
        };
    }
    match op {
        Un::Inv => each!(|a: f64| 1.0 / a),
        Un::Sin => each!(libm::sin),
        Un::Cos => each!(libm::cos),
        Un::Floor => each!(ops::floor),
        Un::Abs => each!(libm::fabs),
        Un::TruncDocumented => each!(ops::trunc_documented),
        Un::TruncPicogen => each!(ops::trunc_picogen),
        Un::Frac => each!(ops::frac),
        Un::Neg => each!(|a: f64| -a),
        Un::Sqrt => each!(f64::sqrt), // IEEE squareRoot, as libm::sqrt; it vectorises
        Un::TruthDocumented => each!(ops::truth_documented),
        Un::TruthPicogen => each!(ops::truth_picogen),
        Un::Not01 => each!(|a: f64| ops::bool01(a == 0.0)),
    }
}

#[inline(always)]
fn bin_loop(op: Bin, d: &mut [f64], a: &[f64], b: &[f64]) {
    // One loop per operator, so each is a straight vectorisable loop.
    macro_rules! each {
        ($f:expr) => {
            for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
                *d = $f(a, b);
            }
        };
    }
    match op {
        Bin::Add => each!(|a: f64, b: f64| a + b),
        Bin::Sub => each!(|a: f64, b: f64| a - b),
        Bin::Mul => each!(|a: f64, b: f64| a * b),
        Bin::Div => each!(|a: f64, b: f64| a / b),
        Bin::Pow => each!(ops::pow),
        Bin::Eq => each!(|a: f64, b: f64| ops::bool01(a == b)),
        Bin::Ne => each!(|a: f64, b: f64| ops::bool01(a != b)),
        Bin::Lt => each!(|a: f64, b: f64| ops::bool01(a < b)),
        Bin::Le => each!(|a: f64, b: f64| ops::bool01(a <= b)),
        Bin::Gt => each!(|a: f64, b: f64| ops::bool01(a > b)),
        Bin::Ge => each!(|a: f64, b: f64| ops::bool01(a >= b)),
        Bin::Min => each!(ops::min),
        Bin::Max => each!(ops::max),
        Bin::Delta => each!(ops::delta),
    }
}

/// The first `n` lanes of register `r`.
fn lane(regs: &mut [f64], r: Reg, n: usize) -> &mut [f64] {
    let start = r as usize * BLOCK;
    &mut regs[start..start + n]
}

/// The destination register (mutable) and `K` source registers (shared, any of them may be the
/// same), all distinct from the destination: the lowering never writes a register it reads.
fn lanes<const K: usize>(regs: &mut [f64], dst: Reg, srcs: [Reg; K], n: usize) -> (&mut [f64], [&[f64]; K]) {
    let d = dst as usize;
    let (before, rest) = regs.split_at_mut(d * BLOCK);
    let (target, after) = rest.split_at_mut(BLOCK);
    let (before, after): (&[f64], &[f64]) = (before, after);
    let source = |r: Reg| -> &[f64] {
        let r = r as usize;
        if r < d {
            &before[r * BLOCK..r * BLOCK + n]
        } else {
            let k = r - d - 1;
            &after[k * BLOCK..k * BLOCK + n]
        }
    };
    (&mut target[..n], srcs.map(source))
}

/// A lowered value: a constant (folded at compile time with the same functions as at run time)
/// or a register (`true`: a temporary the consumer frees).
#[derive(Copy, Clone, Debug)]
enum Val {
    Const(f64),
    Reg(Reg, bool),
}

struct Lowerer {
    mode: Mode,
    dialect: Dialect,
    code: Vec<Instr>,
    prologue: Vec<Instr>,
    nregs: Reg,
    free: Vec<Reg>,
    hoisted: Vec<(u64, Reg)>,
    functions: Vec<Arc<Function>>,
    self_sites: Vec<Span>,
}

impl Lowerer {
    fn fresh(&mut self) -> Reg {
        let r = self.nregs;
        self.nregs += 1;
        r
    }

    fn alloc(&mut self) -> Reg {
        match self.free.pop() {
            Some(r) => r,
            None => self.fresh(),
        }
    }

    fn release(&mut self, v: Val) {
        if let Val::Reg(r, true) = v {
            self.free.push(r);
        }
    }

    /// The value in a register (constants materialised).
    fn reg(&mut self, v: Val) -> Val {
        match v {
            Val::Reg(..) => v,
            Val::Const(c) => {
                if self.mode == Mode::Row {
                    if let Some(&(_, r)) = self.hoisted.iter().find(|(bits, _)| *bits == c.to_bits()) {
                        return Val::Reg(r, false);
                    }
                    if self.hoisted.len() < MAX_HOISTED_CONSTANTS {
                        // A fresh register: one from the free list may be written by earlier code.
                        let r = self.fresh();
                        self.hoisted.push((c.to_bits(), r));
                        self.prologue.push(Instr::Const { dst: r, value: c });
                        return Val::Reg(r, false);
                    }
                }
                let r = self.alloc();
                self.code.push(Instr::Const { dst: r, value: c });
                Val::Reg(r, true)
            }
        }
    }

    fn id(v: Val) -> Reg {
        match v {
            Val::Reg(r, _) => r,
            Val::Const(_) => 0,
        }
    }

    fn truth(&mut self, v: Val) -> Val {
        let op = match self.dialect {
            Dialect::Documented => Un::TruthDocumented,
            Dialect::Picogen2008 => Un::TruthPicogen,
        };
        self.unary(op, v)
    }

    fn unary(&mut self, op: Un, v: Val) -> Val {
        if let Val::Const(c) = v {
            return Val::Const(un(op, c));
        }
        let dst = self.alloc();
        self.code.push(Instr::Un { op, dst, a: Self::id(v) });
        self.release(v);
        Val::Reg(dst, true)
    }

    fn binary(&mut self, op: Bin, a: Val, b: Val) -> Val {
        if let (Val::Const(x), Val::Const(y)) = (a, b) {
            return Val::Const(bin(op, x, y));
        }
        let (a, b) = (self.reg(a), self.reg(b));
        let dst = self.alloc();
        self.code.push(Instr::Bin { op, dst, a: Self::id(a), b: Self::id(b) });
        self.release(a);
        self.release(b);
        Val::Reg(dst, true)
    }

    fn emit_jump_unless(&mut self, c: Val) -> usize {
        let at = self.code.len();
        self.code.push(Instr::JumpUnless { c: Self::id(c), target: 0 });
        self.release(c);
        at
    }

    fn emit_jump(&mut self) -> usize {
        let at = self.code.len();
        self.code.push(Instr::Jump { target: 0 });
        at
    }

    fn patch(&mut self, at: usize) {
        let here = self.code.len() as u32;
        match &mut self.code[at] {
            Instr::JumpUnless { target, .. } | Instr::Jump { target } => *target = here,
            _ => {}
        }
    }

    fn move_into(&mut self, dst: Reg, v: Val) {
        match v {
            Val::Const(c) => self.code.push(Instr::Const { dst, value: c }),
            Val::Reg(r, _) => {
                self.code.push(Instr::Move { dst, src: r });
                self.release(v);
            }
        }
    }

    /// `a and b` (`short_value` 0) or `a or b` (1), lazily: `b` only when `a` does not decide.
    fn lazy_logic(&mut self, a: &Expr, b: &Expr, short_value: f64) -> Val {
        let ta = self.lower(a);
        let ta = self.truth(ta);
        if let Val::Const(c) = ta {
            if c == short_value {
                return Val::Const(short_value);
            }
            let tb = self.lower(b);
            return self.truth(tb);
        }
        let dst = self.alloc();
        // Jump to `evaluate b` when a is false (and), or to `result 1` when a is false (or).
        let decide = self.emit_jump_unless(ta);
        if short_value == 0.0 {
            let tb = self.lower(b);
            let tb = self.truth(tb);
            self.move_into(dst, tb);
            let end = self.emit_jump();
            self.patch(decide);
            self.code.push(Instr::Const { dst, value: 0.0 });
            self.patch(end);
        } else {
            self.code.push(Instr::Const { dst, value: 1.0 });
            let end = self.emit_jump();
            self.patch(decide);
            let tb = self.lower(b);
            let tb = self.truth(tb);
            self.move_into(dst, tb);
            self.patch(end);
        }
        Val::Reg(dst, true)
    }

    fn lower(&mut self, e: &Expr) -> Val {
        match &e.kind {
            ExprKind::Number(v) => Val::Const(*v),
            ExprKind::Var(k) => Val::Reg(Reg::from(*k), false),
            ExprKind::Unary(op, a) => {
                let va = self.lower(a);
                let op = match op {
                    UnOp::Inv => Un::Inv,
                    UnOp::Sin => Un::Sin,
                    UnOp::Cos => Un::Cos,
                    UnOp::Floor => Un::Floor,
                    UnOp::Abs => Un::Abs,
                    UnOp::Trunc => match self.dialect {
                        Dialect::Documented => Un::TruncDocumented,
                        Dialect::Picogen2008 => Un::TruncPicogen,
                    },
                    UnOp::Frac => Un::Frac,
                    UnOp::Neg => Un::Neg,
                    UnOp::Sqrt => Un::Sqrt,
                    UnOp::Not => {
                        let t = self.truth(va);
                        return self.unary(Un::Not01, t);
                    }
                };
                self.unary(op, va)
            }
            ExprKind::Binary(op, a, b) => {
                let compat = self.dialect == Dialect::Picogen2008;
                let op = match op {
                    // The original's parser builds an AND node for `or`.
                    BinOp::Or if compat => BinOp::And,
                    op => *op,
                };
                if self.mode == Mode::Scalar && matches!(op, BinOp::And | BinOp::Or) {
                    return self.lazy_logic(a, b, if op == BinOp::And { 0.0 } else { 1.0 });
                }
                let va = self.lower(a);
                if matches!(op, BinOp::And | BinOp::Or | BinOp::Xor) {
                    let ta = self.truth(va);
                    let vb = self.lower(b);
                    let tb = self.truth(vb);
                    let combine = match op {
                        BinOp::And => Bin::Min,
                        BinOp::Or => Bin::Max,
                        _ => Bin::Ne,
                    };
                    return self.binary(combine, ta, tb);
                }
                let vb = self.lower(b);
                let op = match op {
                    BinOp::Add => Bin::Add,
                    BinOp::Sub => Bin::Sub,
                    BinOp::Mul => Bin::Mul,
                    BinOp::Div => Bin::Div,
                    BinOp::Pow => Bin::Pow,
                    BinOp::Eq => Bin::Eq,
                    BinOp::Ne => Bin::Ne,
                    BinOp::Lt => Bin::Lt,
                    BinOp::Le => Bin::Le,
                    BinOp::Gt => Bin::Gt,
                    // The original computes `a > b` for `>=`.
                    BinOp::Ge if compat => Bin::Gt,
                    BinOp::Ge => Bin::Ge,
                    BinOp::Min => Bin::Min,
                    BinOp::Max => Bin::Max,
                    BinOp::Delta | BinOp::And | BinOp::Or | BinOp::Xor => Bin::Delta,
                };
                self.binary(op, va, vb)
            }
            ExprKind::Cond(c, a, b) => {
                let vc = self.lower(c);
                let tc = self.truth(vc);
                if let Val::Const(t) = tc {
                    return self.lower(if t != 0.0 { a } else { b });
                }
                match self.mode {
                    Mode::Row => {
                        let va = self.lower(a);
                        let vb = self.lower(b);
                        let (va, vb) = (self.reg(va), self.reg(vb));
                        let dst = self.alloc();
                        self.code.push(Instr::Select { dst, c: Self::id(tc), a: Self::id(va), b: Self::id(vb) });
                        self.release(tc);
                        self.release(va);
                        self.release(vb);
                        Val::Reg(dst, true)
                    }
                    Mode::Scalar => {
                        let dst = self.alloc();
                        let otherwise = self.emit_jump_unless(tc);
                        let va = self.lower(a);
                        self.move_into(dst, va);
                        let end = self.emit_jump();
                        self.patch(otherwise);
                        let vb = self.lower(b);
                        self.move_into(dst, vb);
                        self.patch(end);
                        Val::Reg(dst, true)
                    }
                }
            }
            ExprKind::Lerp(a, b, t) => {
                let (va, vb, vt) = (self.lower(a), self.lower(b), self.lower(t));
                if let (Val::Const(x), Val::Const(y), Val::Const(z)) = (va, vb, vt) {
                    return Val::Const(ops::lerp(x, y, z));
                }
                let (va, vb, vt) = (self.reg(va), self.reg(vb), self.reg(vt));
                let dst = self.alloc();
                self.code.push(Instr::Lerp { dst, a: Self::id(va), b: Self::id(vb), t: Self::id(vt) });
                for v in [va, vb, vt] {
                    self.release(v);
                }
                Val::Reg(dst, true)
            }
            ExprKind::SelfCall(args) => {
                let mut regs = [0 as Reg; 2];
                let mut vals = Vec::with_capacity(args.len());
                for (k, arg) in args.iter().enumerate() {
                    let v = self.lower(arg);
                    let v = self.reg(v);
                    if k < 2 {
                        regs[k] = Self::id(v);
                    }
                    vals.push(v);
                }
                let dst = self.alloc();
                let site = self.self_sites.len() as u32;
                self.self_sites.push(e.span);
                self.code.push(Instr::SelfCall { dst, args: regs, site });
                for v in vals {
                    self.release(v);
                }
                Val::Reg(dst, true)
            }
            ExprKind::Configured(function, a, b) => {
                let va = self.lower(a);
                let vb = self.lower(b);
                let (va, vb) = (self.reg(va), self.reg(vb));
                let index = match self.functions.iter().position(|f| Arc::ptr_eq(f, function)) {
                    Some(i) => i,
                    None => {
                        self.functions.push(Arc::clone(function));
                        self.functions.len() - 1
                    }
                };
                let dst = self.alloc();
                self.code.push(Instr::Call { function: index as u32, dst, a: Self::id(va), b: Self::id(vb) });
                self.release(va);
                self.release(vb);
                Val::Reg(dst, true)
            }
        }
    }
}

/// Whether the program (not its parameter programs) calls `self`.
pub(crate) fn contains_self(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Number(_) | ExprKind::Var(_) => false,
        ExprKind::Unary(_, a) => contains_self(a),
        ExprKind::Binary(_, a, b) | ExprKind::Configured(_, a, b) => contains_self(a) || contains_self(b),
        ExprKind::Cond(a, b, c) | ExprKind::Lerp(a, b, c) => contains_self(a) || contains_self(b) || contains_self(c),
        ExprKind::SelfCall(_) => true,
    }
}

fn any_function(e: &Expr, test: &dyn Fn(&Function) -> bool) -> bool {
    match &e.kind {
        ExprKind::Number(_) | ExprKind::Var(_) => false,
        ExprKind::Unary(_, a) => any_function(a, test),
        ExprKind::Binary(_, a, b) => any_function(a, test) || any_function(b, test),
        ExprKind::Configured(f, a, b) => test(f) || any_function(a, test) || any_function(b, test),
        ExprKind::Cond(a, b, c) | ExprKind::Lerp(a, b, c) => {
            any_function(a, test) || any_function(b, test) || any_function(c, test)
        }
        ExprKind::SelfCall(args) => args.iter().any(|a| any_function(a, test)),
    }
}

/// A `self` call that every evaluation of `e` reaches (the recursion cannot end), if any: only
/// the branches of `?`/`if` and the second operand of `and`/`or` are evaluated conditionally.
pub(crate) fn unguarded_self(e: &Expr) -> Option<Span> {
    match &e.kind {
        ExprKind::Number(_) | ExprKind::Var(_) => None,
        ExprKind::Unary(_, a) => unguarded_self(a),
        ExprKind::Binary(BinOp::And | BinOp::Or, a, _) => unguarded_self(a),
        ExprKind::Binary(_, a, b) | ExprKind::Configured(_, a, b) => unguarded_self(a).or_else(|| unguarded_self(b)),
        ExprKind::Lerp(a, b, c) => unguarded_self(a).or_else(|| unguarded_self(b)).or_else(|| unguarded_self(c)),
        ExprKind::Cond(c, a, b) => unguarded_self(c).or_else(|| match (unguarded_self(a), unguarded_self(b)) {
            (Some(span), Some(_)) => Some(span),
            _ => None,
        }),
        ExprKind::SelfCall(args) => args.iter().find_map(unguarded_self).or(Some(e.span)),
    }
}

/// Operations one point costs (saturating).
pub(crate) fn cost(e: &Expr) -> u64 {
    let children: u64 = match &e.kind {
        ExprKind::Number(_) | ExprKind::Var(_) => 0,
        ExprKind::Unary(_, a) => cost(a),
        ExprKind::Binary(_, a, b) => cost(a).saturating_add(cost(b)),
        ExprKind::Configured(f, a, b) => f.cost().saturating_add(cost(a)).saturating_add(cost(b)),
        ExprKind::Cond(a, b, c) | ExprKind::Lerp(a, b, c) => cost(a).saturating_add(cost(b)).saturating_add(cost(c)),
        ExprKind::SelfCall(args) => args.iter().fold(0u64, |s, a| s.saturating_add(cost(a))),
    };
    children.saturating_add(1)
}

/// The innermost expression whose cost exceeds `limit` (where to point the error), if any.
pub(crate) fn costliest(e: &Expr, limit: u64) -> Option<Span> {
    if cost(e) <= limit {
        return None;
    }
    let inner = match &e.kind {
        ExprKind::Number(_) | ExprKind::Var(_) => None,
        ExprKind::Unary(_, a) => costliest(a, limit),
        ExprKind::Binary(_, a, b) | ExprKind::Configured(_, a, b) => {
            costliest(a, limit).or_else(|| costliest(b, limit))
        }
        ExprKind::Cond(a, b, c) | ExprKind::Lerp(a, b, c) => {
            costliest(a, limit).or_else(|| costliest(b, limit)).or_else(|| costliest(c, limit))
        }
        ExprKind::SelfCall(args) => args.iter().find_map(|a| costliest(a, limit)),
    };
    inner.or(Some(e.span))
}
