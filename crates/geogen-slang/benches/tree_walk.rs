//! A plain recursive tree-walk evaluator of Height-Slang: per point, it walks the parsed tree,
//! as the original mkheightmap did. It is the baseline the benchmark compares the compiled
//! evaluator with, and the tests use it as an independent reference (it shares only the scalar
//! operator functions and the point noise sampler with the crate, so the two must agree bit for
//! bit).

#![allow(dead_code)]

use geogen_slang::ast::{BinOp, Expr, ExprKind, UnOp};
use geogen_slang::noise::{Function, Octaves};
use geogen_slang::{ops, Dialect, Program};

/// Why a walk stopped: the recursion went deeper than `max_depth`.
#[derive(Debug, PartialEq)]
pub struct TooDeep;

pub struct Walker {
    pub dialect: Dialect,
    pub max_depth: usize,
}

impl Walker {
    pub fn new(dialect: Dialect) -> Walker {
        Walker { dialect, max_depth: 1000 }
    }

    /// The value of `program` at `args`.
    pub fn eval(&self, program: &Program, args: &[f64]) -> Result<f64, TooDeep> {
        self.walk(program.ast(), program.ast(), args, 0)
    }

    fn truth(&self, v: f64) -> bool {
        match self.dialect {
            Dialect::Documented => v >= 0.5,
            Dialect::Picogen2008 => v > 0.5,
        }
    }

    fn walk(&self, root: &Expr, e: &Expr, args: &[f64], depth: usize) -> Result<f64, TooDeep> {
        let walk = |e: &Expr| self.walk(root, e, args, depth);
        let compat = self.dialect == Dialect::Picogen2008;
        Ok(match &e.kind {
            ExprKind::Number(v) => *v,
            ExprKind::Var(k) => args.get(usize::from(*k)).copied().unwrap_or(0.0),
            ExprKind::Unary(op, a) => {
                let a = walk(a)?;
                match op {
                    UnOp::Inv => 1.0 / a,
                    UnOp::Sin => libm::sin(a),
                    UnOp::Cos => libm::cos(a),
                    UnOp::Floor => libm::floor(a),
                    UnOp::Abs => libm::fabs(a),
                    UnOp::Trunc if compat => ops::trunc_picogen(a),
                    UnOp::Trunc => ops::trunc_documented(a),
                    UnOp::Frac => a - libm::floor(a),
                    UnOp::Neg => -a,
                    UnOp::Not => ops::bool01(!self.truth(a)),
                    UnOp::Sqrt => libm::sqrt(a),
                }
            }
            ExprKind::Binary(op, a, b) => match op {
                BinOp::And => ops::bool01(self.truth(walk(a)?) && self.truth(walk(b)?)),
                BinOp::Or if compat => ops::bool01(self.truth(walk(a)?) && self.truth(walk(b)?)),
                BinOp::Or => ops::bool01(self.truth(walk(a)?) || self.truth(walk(b)?)),
                BinOp::Xor => ops::bool01(self.truth(walk(a)?) != self.truth(walk(b)?)),
                op => {
                    let (a, b) = (walk(a)?, walk(b)?);
                    match op {
                        BinOp::Add => a + b,
                        BinOp::Sub => a - b,
                        BinOp::Mul => a * b,
                        BinOp::Div => a / b,
                        BinOp::Pow => libm::pow(a, b),
                        BinOp::Eq => ops::bool01(a == b),
                        BinOp::Ne => ops::bool01(a != b),
                        BinOp::Lt => ops::bool01(a < b),
                        BinOp::Le => ops::bool01(a <= b),
                        BinOp::Gt => ops::bool01(a > b),
                        BinOp::Ge if compat => ops::bool01(a > b),
                        BinOp::Ge => ops::bool01(a >= b),
                        BinOp::Min => ops::min(a, b),
                        BinOp::Max => ops::max(a, b),
                        _ => ops::delta(a, b),
                    }
                }
            },
            ExprKind::Cond(c, a, b) => {
                if self.truth(walk(c)?) {
                    walk(a)?
                } else {
                    walk(b)?
                }
            }
            ExprKind::Lerp(a, b, t) => {
                let (a, b, t) = (walk(a)?, walk(b)?, walk(t)?);
                a * (1.0 - t) + b * t
            }
            ExprKind::SelfCall(call_args) => {
                if depth >= self.max_depth {
                    return Err(TooDeep);
                }
                let values = call_args.iter().map(walk).collect::<Result<Vec<f64>, TooDeep>>()?;
                self.walk(root, root, &values, depth + 1)?
            }
            ExprKind::Configured(function, a, b) => {
                let (a, b) = (walk(a)?, walk(b)?);
                self.function(function, a, b)?
            }
        })
    }

    fn function(&self, function: &Function, a: f64, b: f64) -> Result<f64, TooDeep> {
        match function {
            Function::Noise { lattice, frequency } => Ok(lattice.sample(a * frequency, b * frequency)),
            Function::LayeredNoise { lattice, octaves } => self.octaves(octaves, a, b, |s, t| Ok(lattice.sample(s, t))),
            Function::Layers { octaves, base } => self.octaves(octaves, a, b, |s, t| self.eval(base, &[s, t])),
        }
    }

    fn octaves(
        &self,
        octaves: &Octaves,
        a: f64,
        b: f64,
        noise: impl Fn(f64, f64) -> Result<f64, TooDeep>,
    ) -> Result<f64, TooDeep> {
        let (mut f, mut amp, mut sum) = (octaves.frequency, 1.0, 0.0);
        for _ in 0..octaves.layer_count {
            let z = noise(a * f, b * f)?;
            let h = amp * self.eval(&octaves.level, &[z])?;
            amp *= self.eval(&octaves.persistence, &[h])?;
            f *= 2.0;
            sum += h;
        }
        Ok(sum)
    }
}
