//! Lodestone's embedded code, evaluated as a GeoGen Script expression in the script sandbox.
//!
//! The code (its references already expanded) is wrapped into a tiny script:
//!
//! ```text
//! var PI = 3.141592653589793; var E = 2.718281828459045;
//! var height = __Var(0);            // each read-only variable passed in
//! var __once0 = __OneTime(0);       // each `<@n>` of the code, in order of appearance
//! __Result(
//! <the code, with `<@n>` replaced by __once0 and `Math.floor` by floor>
//! );
//! __Store(0, __once0);              // assignments to `<@n>` go back to the one-time values
//! ```
//!
//! which must parse as exactly these statements with one argument to `__Result` (so the code is
//! one expression and cannot smuggle in statements), and runs in its own VM with its own limits
//! (instructions, heap, depth), its instructions also counted as work of the rules (so a script's
//! names are charged to its instruction budget), with a library of math, arrays and the Lodestone helpers (`rand`,
//! `randRange`, `randInt`, `randIntRange`, `randElement`, `hide`), and nothing else: no maps, no
//! names, no messages, no files, no clock. The helpers draw from the Lodestone generator, moved
//! into the VM for the run (so their draws are part of the documented draw order).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use geogen_compile::CompiledScript;
use geogen_diag::{codes, Diagnostic};
use geogen_lodestone::{CodeEnv, CodeEvaluator, CodeSegment, CodeSource, Value as LValue};
use geogen_random::Mt19937;
use geogen_syntax::ast::{ExprKind, Item, StmtKind};
use geogen_syntax::lexer::TokenKind;
use geogen_vm::{Args, Ctx, Library, Limits, Native, RuntimeError, Value, Vm, VmConfig};

use crate::util::finite;

/// Names the wrapper declares; a variable passed in may not take them.
pub const RESERVED_NAMES: &[&str] = &["PI", "E"];

/// The limits of one piece of code: far more than any name needs, far less than a script.
pub fn default_code_limits() -> Limits {
    Limits {
        max_call_depth: 64,
        max_block_depth: 64,
        max_object_stack: 10_000,
        instruction_budget: 1_000_000,
        max_rendering_steps: 1,
        max_array_len: 100_000,
        max_string_len: 1 << 20,
        max_heap_bytes: 64 << 20,
    }
}

/// The state the helpers see during one evaluation (kept in the VM's extensions).
#[derive(Default)]
struct CodeContext {
    vars: Vec<LValue>,
    once: Vec<Option<LValue>>,
    stored: Vec<(usize, LValue)>,
    result: Option<LValue>,
    /// False while enumerating: the helpers that draw refuse (GGE7309).
    random: bool,
}

/// Evaluates Lodestone code as GeoGen Script. Each distinct piece of code (its text once its
/// references are expanded, with the names of the variables passed in) is compiled once and
/// kept; geogen uses one evaluator per rule set, so code without references is compiled once
/// per rule set however often it runs.
pub struct ScriptCode {
    limits: Limits,
    /// By the names of the variables passed in, then by the code.
    cache: HashMap<String, HashMap<Vec<CodeSegment>, Arc<Prepared>>>,
    cached: usize,
    cached_bytes: usize,
    compilations: u64,
}

/// Code compiled into its wrapper.
struct Prepared {
    compiled: Arc<CompiledScript>,
    /// The `<$n>` of each `<@n>` of the code, in order.
    keys: Vec<String>,
    /// The code as written, for messages.
    shown: String,
}

/// Compiled pieces of code kept per evaluator, and the bytes of their text; beyond either the
/// cache starts over.
const CACHE_SIZE: usize = 512;
const CACHE_BYTES: usize = 16 << 20;

/// Units of work charged for each evaluation besides its instructions: building its VM takes
/// about as long as a hundred instructions.
pub const EVALUATION_COST: u64 = 100;

impl Default for ScriptCode {
    fn default() -> ScriptCode {
        ScriptCode::new(default_code_limits())
    }
}

impl ScriptCode {
    pub fn new(limits: Limits) -> ScriptCode {
        ScriptCode { limits, cache: HashMap::new(), cached: 0, cached_bytes: 0, compilations: 0 }
    }

    /// How many pieces of code this evaluator has compiled.
    pub fn compilations(&self) -> u64 {
        self.compilations
    }

    /// The compiled wrapper of a piece of code, from the cache or compiled now (one unit of work
    /// per byte of the wrapper added to `cost`). The error is a message about the code.
    fn prepare(
        &mut self,
        segments: &[CodeSegment],
        vars: &[(String, LValue)],
        cost: &mut u64,
    ) -> Result<Arc<Prepared>, String> {
        let mut names = String::new();
        for (name, _) in vars {
            names.push_str(&format!("{}:{name}", name.len()));
        }
        if let Some(prepared) = self.cache.get(&names).and_then(|by_code| by_code.get(segments)) {
            return Ok(Arc::clone(prepared));
        }
        // The code's text, each `<@n>` a variable of its own.
        let mut keys: Vec<String> = Vec::new();
        let mut code_text = String::new();
        for segment in segments {
            match segment {
                CodeSegment::Text(text) => code_text.push_str(text),
                CodeSegment::Variable(key) => {
                    let index = keys.iter().position(|k| k == key).unwrap_or_else(|| {
                        keys.push(key.clone());
                        keys.len() - 1
                    });
                    code_text.push_str(&format!("__once{index}"));
                }
            }
        }
        let code_text = rename_math(&code_text);
        let mut source = String::from("var PI = 3.141592653589793; var E = 2.718281828459045;\n");
        for (i, (name, _)) in vars.iter().enumerate() {
            source.push_str(&format!("var {name} = __Var({i});\n"));
        }
        for i in 0..keys.len() {
            source.push_str(&format!("var __once{i} = __OneTime({i});\n"));
        }
        let prefix = 2 + vars.len() + keys.len();
        source.push_str("__Result(\n");
        source.push_str(&code_text);
        source.push_str("\n);\n");
        for i in 0..keys.len() {
            source.push_str(&format!("__Store({i}, __once{i});\n"));
        }
        *cost = cost.saturating_add(source.len() as u64);
        self.compilations += 1;
        let shown = code_text.trim().to_string();
        let compiled = compile(&source, prefix, keys.len(), &code_text)
            .map_err(|why| format!("the code `{}` is not a GeoGen Script expression: {why}", shown.escape_debug()))?;
        let prepared = Arc::new(Prepared { compiled, keys, shown });
        let bytes = source.len() + names.len();
        if self.cached >= CACHE_SIZE || self.cached_bytes + bytes > CACHE_BYTES {
            self.cache.clear();
            self.cached = 0;
            self.cached_bytes = 0;
        }
        self.cached += 1;
        self.cached_bytes += bytes;
        self.cache.entry(names).or_default().insert(segments.to_vec(), Arc::clone(&prepared));
        Ok(prepared)
    }
}

/// Compiles the wrapper `source` of `code_text`, which must be exactly `prefix` statements,
/// `__Result(…)` with one argument, and `suffix` statements.
fn compile(source: &str, prefix: usize, suffix: usize, code_text: &str) -> Result<Arc<CompiledScript>, String> {
    let parsed = geogen_syntax::parse(source);
    if let Some(d) = parsed.diagnostics.first() {
        return Err(inner_message(d, source, code_text));
    }
    let items = &parsed.script.items;
    let one_expression = items.len() == prefix + 1 + suffix
        && items.iter().all(|i| matches!(i, Item::Stmt(_)))
        && matches!(&items[prefix], Item::Stmt(s) if matches!(&s.kind,
            StmtKind::Expr(e) if matches!(&e.kind, ExprKind::Call { name, args } if name.name == "__Result" && args.len() == 1)));
    if !one_expression {
        return Err("it is not one expression".to_string());
    }
    let options = geogen_compile::CompileOptions::default().with_main_map_mandatory(false);
    let compiled = geogen_compile::compile(&parsed.script, &options).map_err(|errors| {
        errors.first().map_or_else(|| "it does not compile".to_string(), |d| inner_message(d, source, code_text))
    })?;
    Ok(Arc::new(compiled))
}

/// A diagnostic of the wrapper as a message about the code.
fn inner_message(d: &Diagnostic, source: &str, code_text: &str) -> String {
    let at = d.span.map(|s| {
        let file = geogen_diag::SourceFile::new("code", source);
        let near = file.snippet(s).to_string();
        near
    });
    let mut message = format!("{} ({})", d.message, d.code);
    if let Some(near) = at.filter(|n| !n.is_empty() && code_text.contains(n.as_str())) {
        message.push_str(&format!(" at `{}`", near.escape_debug()));
    }
    message
}

impl CodeEvaluator for ScriptCode {
    /// Runs the code in a VM of its own, with at most the smaller of its own instruction limit
    /// and the allowance; reports the instructions, the compilation and [`EVALUATION_COST`] as
    /// the work used.
    fn evaluate(&mut self, code: &CodeSource<'_>, env: CodeEnv<'_>) -> Result<LValue, Diagnostic> {
        let fail = |message: String| {
            Diagnostic::at(codes::GGE7307, code.span, message)
                .with_hint("embedded code is one GeoGen Script expression, such as `randIntRange(2, 5) * 10`")
        };
        let mut cost = EVALUATION_COST;
        let prepared = self.prepare(code.segments, env.vars, &mut cost);
        *env.used = cost;
        if cost > env.allowance {
            return Err(fail("the code could not start within the work left to the rules".to_string()));
        }
        let prepared = prepared.map_err(fail)?;
        let own = self.limits.instruction_budget;
        let left = env.allowance - cost;
        let limited_by_allowance = left < own;
        let limits = Limits { instruction_budget: own.min(left), ..self.limits.clone() };
        let config = VmConfig { limits, main_map_mandatory: false, ..VmConfig::default() };
        let mut vm = Vm::new(Arc::clone(&prepared.compiled), code_library(), config).map_err(|d| fail(d.message))?;
        let context = CodeContext {
            vars: env.vars.iter().map(|(_, v)| v.clone()).collect(),
            once: prepared.keys.iter().map(|k| env.memo.get(k).cloned()).collect(),
            stored: Vec::new(),
            result: None,
            random: env.generator.is_some(),
        };
        vm.env_mut().extensions.insert(context);
        let mut generator: Option<&mut Mt19937> = env.generator;
        if let Some(mt) = generator.as_deref_mut() {
            std::mem::swap(&mut vm.env_mut().random, mt);
        }
        let outcome = vm.run();
        if let Some(mt) = generator {
            std::mem::swap(&mut vm.env_mut().random, mt);
        }
        // What the code did; past its own limit only when the allowance was the smaller (then
        // the run stops with the error of the limit that ran out).
        let spent = vm.env().spent();
        *env.used = cost.saturating_add(if limited_by_allowance { spent } else { spent.min(own) });
        let context = vm.env_mut().extensions.remove::<CodeContext>().unwrap_or_default();
        let shown = &prepared.shown;
        if let Err(d) = outcome {
            if [codes::GGE7309, codes::GGE7308].contains(&d.code) {
                let mut passed = Diagnostic::at(d.code, code.span, d.message);
                passed.hint = d.hint;
                return Err(passed);
            }
            let mut error = fail(format!("the code `{}` failed: {} ({})", shown.escape_debug(), d.message, d.code));
            if d.code == codes::GGE2505 {
                error.hint = Some(format!(
                    "is there an endless loop? one piece of code may execute {own} instructions \
                     (`geogen names --max-code-instructions N`)"
                ));
            } else if d.hint.is_some() {
                error.hint = d.hint;
            }
            return Err(error);
        }
        for (index, value) in context.stored {
            if let Some(key) = prepared.keys.get(index) {
                env.memo.set(key, value);
            }
        }
        Ok(context.result.unwrap_or(LValue::Null))
    }
}

/// `Math.floor` → `floor`, `Math.PI` → `PI`, `Math.random` → `rand`, `Utils.rand` → `rand`: the
/// names rule files written for the original call, on tokens (not inside strings).
fn rename_math(code: &str) -> String {
    let (tokens, _) = geogen_syntax::lexer::lex(code);
    let mut out = String::with_capacity(code.len());
    let mut copied = 0usize;
    for window in tokens.windows(3) {
        let (TokenKind::Ident(owner), TokenKind::Dot, TokenKind::Ident(member)) =
            (&window[0].kind, &window[1].kind, &window[2].kind)
        else {
            continue;
        };
        if owner != "Math" && owner != "Utils" {
            continue;
        }
        let start = window[0].span.start as usize;
        let end = window[2].span.end as usize;
        if start < copied {
            continue;
        }
        out.push_str(&code[copied..start]);
        out.push_str(if member == "random" { "rand" } else { member });
        copied = end;
    }
    out.push_str(&code[copied..]);
    out
}

/// The natives embedded code may call: the core library's functions and types but those that
/// print, record maps or draw from the script's own sequence, plus the Lodestone helpers.
pub fn code_library() -> Arc<Library> {
    static LIBRARY: OnceLock<Arc<Library>> = OnceLock::new();
    Arc::clone(LIBRARY.get_or_init(|| {
        let core = crate::core_library();
        let mut lib = Library::new();
        for (name, native) in &core.globals {
            if !matches!(&**name, "Print" | "Random" | "TriggerError" | "CreateNoiseLayers") {
                lib.globals.insert(name.clone(), *native);
            }
        }
        for (name, methods) in &core.types {
            if !matches!(&**name, "HeightMap" | "HeightProfile" | "RandomSequence2D" | "Names") {
                lib.types.insert(name.clone(), Arc::clone(methods));
            }
        }
        lib.enum_methods = Arc::clone(&core.enum_methods);
        for native in HELPERS {
            lib.add_global(*native);
        }
        Arc::new(lib)
    }))
}

fn context<'c>(ctx: &'c mut Ctx<'_>) -> Result<&'c mut CodeContext, RuntimeError> {
    ctx.env
        .extensions
        .get_mut::<CodeContext>()
        .ok_or_else(|| RuntimeError::internal("Lodestone helper called outside embedded code"))
}

pub(crate) fn to_script(value: &LValue, ctx: &Ctx<'_>) -> Result<Value, RuntimeError> {
    Ok(match value {
        LValue::Null => Value::Null,
        LValue::Bool(b) => Value::Bool(*b),
        LValue::Number(n) => Value::Number(*n),
        LValue::Text(t) => ctx.new_string(t.clone())?,
    })
}

pub(crate) fn from_script(value: &Value, ctx: &Ctx<'_>, what: &str) -> Result<LValue, RuntimeError> {
    Ok(match value {
        Value::Null => LValue::Null,
        Value::Bool(b) => LValue::Bool(*b),
        Value::Number(n) => LValue::Number(*n),
        Value::String(s) => LValue::Text(s.to_string()),
        other => {
            return Err(RuntimeError::new(
                codes::GGE7308,
                format!("{what} must be text, a Number, a Boolean or null, not {}", ctx.type_name(other)),
            )
            .with_hint("turn it into text first"))
        }
    })
}

const HELPERS: &[Native] = &[
    Native::function("__Var", "__Var(Number i)", 1, Some(1), var),
    Native::function("__OneTime", "__OneTime(Number i)", 1, Some(1), once),
    Native::function("__Store", "__Store(Number i, value)", 2, Some(2), store),
    Native::function("__Result", "__Result(value)", 1, Some(1), result),
    Native::function("rand", "rand(), rand(Number max) or rand(Number min, Number max)", 0, Some(2), rand),
    Native::function("randRange", "randRange(Number min, Number max) or randRange({min, max})", 1, Some(2), rand_range),
    Native::function("randInt", "randInt(Number n)", 1, Some(1), rand_int),
    Native::function("randIntRange", "randIntRange(Number min, Number max)", 2, Some(2), rand_int_range),
    Native::function("randElement", "randElement(Array items)", 1, Some(1), rand_element),
    Native::function("hide", "hide(value)", 1, Some(1), hide),
    Native::function("floor", "floor(Number x)", 1, Some(1), floor),
    Native::function("ceil", "ceil(Number x)", 1, Some(1), ceil),
    Native::function("round", "round(Number x)", 1, Some(1), round),
    Native::function("trunc", "trunc(Number x)", 1, Some(1), trunc),
    Native::function("abs", "abs(Number x)", 1, Some(1), abs),
    Native::function("sign", "sign(Number x)", 1, Some(1), sign),
    Native::function("sqrt", "sqrt(Number x)", 1, Some(1), sqrt),
    Native::function("exp", "exp(Number x)", 1, Some(1), exp),
    Native::function("log", "log(Number x)", 1, Some(1), log),
    Native::function("sin", "sin(Number x)", 1, Some(1), sin),
    Native::function("cos", "cos(Number x)", 1, Some(1), cos),
    Native::function("tan", "tan(Number x)", 1, Some(1), tan),
    Native::function("atan", "atan(Number x)", 1, Some(1), atan),
    Native::function("atan2", "atan2(Number y, Number x)", 2, Some(2), atan2),
    Native::function("pow", "pow(Number x, Number y)", 2, Some(2), pow),
    Native::function("hypot", "hypot(Number x, Number y)", 2, Some(2), hypot),
    Native::function("min", "min(Number a, ...)", 1, None, min),
    Native::function("max", "max(Number a, ...)", 1, None, max),
];

fn index(args: &Args<'_>, i: usize) -> Result<usize, RuntimeError> {
    let n = args.number(i)?;
    if n < 0.0 || n.fract() != 0.0 {
        return Err(RuntimeError::internal("bad helper index"));
    }
    Ok(n as usize)
}

fn var(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let i = index(args, 0)?;
    let value = context(ctx)?.vars.get(i).cloned().unwrap_or(LValue::Null);
    to_script(&value, ctx)
}

fn once(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let i = index(args, 0)?;
    let value = context(ctx)?.once.get(i).cloned().flatten().unwrap_or(LValue::Null);
    // A one-time value expanded from rules is text; text that is a number is read as one, so
    // `<$n> => 7;` then `` `<@n> * 2` `` is 14, as in the original.
    if let LValue::Text(text) = &value {
        if let Some(number) = numeric_text(text) {
            return Ok(Value::Number(number));
        }
    }
    to_script(&value, ctx)
}

/// The number `text` writes, if it is one written plainly: digits with an optional sign, point
/// and exponent (`7`, `-2.5`, `1e3`), nothing around them; not `inf`, `NaN` or `0x10`.
fn numeric_text(text: &str) -> Option<f64> {
    let plain = text.bytes().any(|b| b.is_ascii_digit())
        && text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && !text.starts_with('+');
    plain.then(|| text.parse::<f64>().ok()).flatten().filter(|n| n.is_finite())
}

fn store(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let i = index(args, 0)?;
    let value = from_script(args.value(1)?, ctx, "a one-time value")?;
    let context = context(ctx)?;
    if context.once.get(i).cloned().flatten().as_ref() != Some(&value) {
        context.stored.push((i, value));
    }
    Ok(Value::Null)
}

fn result(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let value = from_script(args.value(0)?, ctx, "the value of embedded code")?;
    context(ctx)?.result = Some(value);
    Ok(Value::Null)
}

fn hide(_ctx: &mut Ctx<'_>, _args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Null)
}

/// A uniform number in [0, 1) from the Lodestone generator (one 32-bit draw).
fn draw(ctx: &mut Ctx<'_>, name: &str) -> Result<f64, RuntimeError> {
    if !context(ctx)?.random {
        return Err(RuntimeError::new(
            codes::GGE7309,
            format!("the code calls `{name}`, so its outputs cannot be listed in advance"),
        )
        .with_hint("--enumerate lists rules whose code draws no random numbers; sample them with -n N"));
    }
    Ok(geogen_lodestone::exec::unit(&mut ctx.env.random))
}

fn range_check(name: &str, lo: f64, hi: f64) -> Result<(), RuntimeError> {
    if lo > hi {
        return Err(RuntimeError::new(
            codes::GGE2705,
            format!("`{name}` with the minimum {lo} greater than the maximum {hi}"),
        )
        .with_hint("swap the bounds"));
    }
    Ok(())
}

fn rand(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (lo, hi) = match args.len() {
        0 => (0.0, 1.0),
        1 => (0.0, args.number(0)?),
        _ => (args.number(0)?, args.number(1)?),
    };
    uniform(ctx, "rand", lo, hi)
}

fn uniform(ctx: &mut Ctx<'_>, name: &str, lo: f64, hi: f64) -> Result<Value, RuntimeError> {
    range_check(name, lo, hi)?;
    let u = draw(ctx, name)?;
    finite(lo + u * (hi - lo), || format!("{name}({lo}, {hi})")).map(Value::Number)
}

fn rand_range(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (lo, hi) = if args.len() == 1 {
        let array = args.array(0)?;
        let items = array.items.borrow();
        let bound = |i: usize| match items.get_index(i) {
            Some((_, Value::Number(n))) => Ok(*n),
            _ => Err(RuntimeError::new(codes::GGE2101, "randRange({min, max}) needs two Numbers".to_string())),
        };
        (bound(0)?, bound(1)?)
    } else {
        (args.number(0)?, args.number(1)?)
    };
    uniform(ctx, "randRange", lo, hi)
}

fn whole(args: &Args<'_>, i: usize, name: &str) -> Result<f64, RuntimeError> {
    let n = args.number(i)?;
    if n.fract() != 0.0 || n.abs() > 9.0e15 {
        return Err(RuntimeError::new(codes::GGE2101, format!("`{name}` takes whole numbers, not {n}")));
    }
    Ok(n)
}

fn rand_int(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let n = whole(args, 0, "randInt")?;
    if n < 1.0 {
        return Err(RuntimeError::new(codes::GGE2309, format!("randInt({n}) has no number to pick"))
            .with_hint("randInt(n) picks one of 0 to n - 1, so n must be at least 1"));
    }
    let u = draw(ctx, "randInt")?;
    Ok(Value::Number(libm::floor(u * n)))
}

fn rand_int_range(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let lo = whole(args, 0, "randIntRange")?;
    let hi = whole(args, 1, "randIntRange")?;
    range_check("randIntRange", lo, hi)?;
    let u = draw(ctx, "randIntRange")?;
    Ok(Value::Number(lo + libm::floor(u * (hi - lo + 1.0))))
}

fn rand_element(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let array = args.array(0)?;
    let count = array.items.borrow().len();
    if count == 0 {
        return Err(RuntimeError::new(codes::GGE2601, "randElement of an empty array".to_string()));
    }
    let u = draw(ctx, "randElement")?;
    let i = ((u * count as f64) as usize).min(count - 1);
    let items = array.items.borrow();
    Ok(items.get_index(i).map(|(_, v)| v.clone()).unwrap_or(Value::Null))
}

macro_rules! math1 {
    ($($fname:ident => |$x:ident| $body:expr;)*) => {
        $(
            fn $fname(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
                let $x = args.number(0)?;
                finite($body, || format!("{}({})", stringify!($fname), $x)).map(Value::Number)
            }
        )*
    };
}

math1! {
    floor => |x| libm::floor(x);
    ceil => |x| libm::ceil(x);
    // JavaScript's Math.round: halves up.
    round => |x| libm::floor(x + 0.5);
    trunc => |x| libm::trunc(x);
    abs => |x| libm::fabs(x);
    sign => |x| if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 };
    sqrt => |x| libm::sqrt(x);
    exp => |x| libm::exp(x);
    log => |x| libm::log(x);
    sin => |x| libm::sin(x);
    cos => |x| libm::cos(x);
    tan => |x| libm::tan(x);
    atan => |x| libm::atan(x);
}

fn atan2(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(libm::atan2(args.number(0)?, args.number(1)?)))
}

fn pow(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (x, y) = (args.number(0)?, args.number(1)?);
    finite(libm::pow(x, y), || format!("pow({x}, {y})")).map(Value::Number)
}

fn hypot(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let (x, y) = (args.number(0)?, args.number(1)?);
    finite(libm::hypot(x, y), || format!("hypot({x}, {y})")).map(Value::Number)
}

fn min(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let mut m = args.number(0)?;
    for i in 1..args.len() {
        m = m.min(args.number(i)?);
    }
    Ok(Value::Number(m))
}

fn max(_ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let mut m = args.number(0)?;
    for i in 1..args.len() {
        m = m.max(args.number(i)?);
    }
    Ok(Value::Number(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_and_utils_names_become_the_helpers() {
        assert_eq!(rename_math("Math.floor(Math.random() * Math.PI)"), "floor(rand() * PI)");
        assert_eq!(rename_math("Utils.randIntRange(1, 3)"), "randIntRange(1, 3)");
        assert_eq!(rename_math("\"Math.floor\" + x.Math"), "\"Math.floor\" + x.Math");
    }
}
