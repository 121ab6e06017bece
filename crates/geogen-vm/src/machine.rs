//! The interpreter: runs a [`CompiledScript`] one instruction at a time.
//!
//! State (reference §3.3, thesis appendix B): the object stack (expression temporaries and
//! arguments), the call stack (one [`Frame`] per function invocation, each owning its own stack of
//! code-block entries, each entry with its own scope), and the global scope.
//!
//! The interpreter is a loop over these explicit stacks and never recurses in Rust, so a script
//! cannot overflow the Rust stack however deep it recurses; every limit of spec §6 is checked
//! where the corresponding stack grows. A failing instruction faults the VM: the error becomes a
//! [`Diagnostic`] pointing at the instruction, with the call sites of the call stack as labels,
//! and the state is left as it was for inspection.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use geogen_compile::ir::{BlockId, CompiledScript, Op};
use geogen_compile::metadata::{ParameterKind, ParameterValue};
use geogen_diag::{codes, Diagnostic, Span};
use indexmap::IndexMap;

use crate::env::{Env, Limits, MapGeometry};
use crate::error::RuntimeError;
use crate::library::Library;
use crate::native::{Args, Ctx, Native};
use crate::suggest::did_you_mean;
use crate::types::{TypeId, TypeInfo, TypeKind, TypeMethods, TypeRegistry, BUILTIN_TYPE_NAMES};
use crate::value::{EnumValue, Name, Reference, Scope, ScopeRef, ScriptString, Value, Variable};

/// The name of the implicit function holding the top-level statements.
pub const MAIN_FUNCTION: &str = "<main>";

/// The name of the map every script must yield unless told otherwise.
pub const MAIN_MAP: &str = "main";

/// Distinct call sites shown as labels of a runtime error; the others are summarised in the last
/// label.
const MAX_CALL_SITE_LABELS: usize = 8;

/// Everything one run depends on besides the script and the library.
#[derive(Clone, Debug)]
pub struct VmConfig {
    /// The script seed (`Random()` and the seeds natives derive from it).
    pub seed: u32,
    pub geometry: MapGeometry,
    pub limits: Limits,
    /// Values of script parameters; parameters not listed take their metadata default.
    pub parameters: Vec<(Name, ParameterValue)>,
    /// Finishing without a yield of `"main"` is GGE2801.
    pub main_map_mandatory: bool,
    /// Only yields of these names record a rendering step; `None` = all.
    pub enabled_maps: Option<Vec<String>>,
    /// The script text, so rendering steps carry line:column locations.
    pub source: Option<std::sync::Arc<geogen_diag::SourceFile>>,
    /// Height maps the host gives the script by name (`HeightMap.Input(name)`).
    pub inputs: std::collections::BTreeMap<String, std::sync::Arc<geogen_render::InputRaster>>,
    /// Pixels every yield records beyond the render rectangle (see [`crate::Env::yield_margin`]).
    pub yield_margin: u32,
}

impl Default for VmConfig {
    fn default() -> VmConfig {
        VmConfig {
            seed: 0,
            geometry: MapGeometry::default(),
            limits: Limits::default(),
            parameters: Vec::new(),
            main_map_mandatory: true,
            enabled_maps: None,
            source: None,
            inputs: std::collections::BTreeMap::new(),
            yield_margin: 0,
        }
    }
}

/// Where a VM is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VmStatus {
    /// Created; nothing executed yet.
    Ready,
    /// At least one step done, more to do.
    Running,
    /// The call stack is empty and the end-of-run checks passed.
    Finished,
    /// An instruction (or an end-of-run check) failed; see [`Vm::fault`].
    Faulted,
}

/// One entry of a frame's code-block stack.
#[derive(Debug)]
struct BlockEntry {
    block: BlockId,
    /// The next instruction to execute.
    ip: usize,
    /// This block's locals, created by the first declaration (most blocks declare nothing, and
    /// allocating a scope for every `if` branch and loop iteration would dominate simple loops);
    /// dropped on every loop iteration so that each iteration starts fresh.
    scope: Option<ScopeRef>,
    /// A `While` body: when it runs off its end, it starts again.
    looping: bool,
}

/// One function invocation.
#[derive(Debug)]
struct Frame {
    function: Name,
    blocks: Vec<BlockEntry>,
    /// The object stack height when the frame started (arguments already removed); on return the
    /// stack is cut back to it and the return value pushed.
    stack_base: usize,
    /// The span of the call instruction that created the frame (`None` for `<main>`).
    call_site: Option<Span>,
}

/// A function invocation, as a debugger shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameInfo {
    pub function: Name,
    /// Innermost frame: the instruction about to run (or the one that faulted); callers: the call
    /// they are waiting on.
    pub span: Option<Span>,
    /// Where this invocation was called from (`None` for `<main>`).
    pub call_site: Option<Span>,
}

/// One entry of a frame's code-block stack, as a debugger shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockInfo {
    pub block: BlockId,
    /// The next instruction to execute in this block.
    pub ip: usize,
    pub looping: bool,
}

/// The variables of one scope.
#[derive(Clone, Debug)]
pub struct ScopeInfo {
    /// `block 3` (with the frame's depth) or `globals`.
    pub label: String,
    pub block: Option<BlockId>,
    pub variables: Vec<VariableInfo>,
}

#[derive(Clone, Debug)]
pub struct VariableInfo {
    pub name: Name,
    pub value: Value,
    pub read_only: bool,
}

/// The GeoGen Script virtual machine for one run of one script.
///
/// Not `Send`: values are single-threaded (`Rc`). Create one VM per run and per thread; the
/// compiled script and the library are shared.
pub struct Vm {
    script: Arc<CompiledScript>,
    library: Arc<Library>,
    types: TypeRegistry,
    env: Env,
    globals: ScopeRef,
    /// Members of the `Parameters` static object, in declaration order.
    parameters: IndexMap<Name, Value>,
    stack: Vec<Value>,
    frames: Vec<Frame>,
    status: VmStatus,
    yielded: Vec<(Name, Value)>,
    /// The names of `yielded`, so a yield checks for its name in constant time (a script may
    /// yield hundreds of thousands of maps).
    yielded_names: HashSet<Name>,
    instructions: u64,
    main_map_mandatory: bool,
    /// The span of the instruction executed last (the faulting one after a fault).
    last_span: Option<Span>,
    fault: Option<Diagnostic>,
    /// Per block, per instruction: resolved call targets (a block's vector is created on its
    /// first call).
    call_cache: Vec<Vec<CallTarget>>,
}

impl std::fmt::Debug for Vm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vm")
            .field("status", &self.status)
            .field("frames", &self.frames.len())
            .field("stack", &self.stack.len())
            .field("instructions", &self.instructions)
            .finish()
    }
}

/// What the call instruction at one code position resolved to. Names are resolved on the first
/// execution and remembered per instruction, so that hot operator calls skip two hash lookups
/// (script functions, then natives) every time.
#[derive(Copy, Clone, Debug, PartialEq)]
enum CallTarget {
    Unresolved,
    /// An index into `CompiledScript::functions`.
    Script(usize),
    /// An index into `Library::globals`.
    Native(usize),
    /// An index into the static or instance method table of a type; valid while the receiver
    /// has that type.
    Method {
        ty: TypeId,
        is_static: bool,
        index: usize,
    },
}

/// The control-flow effect of one instruction that the step loop must apply.
enum Flow {
    Next,
    EnterBlock { block: BlockId, looping: bool },
    Call { function: Name, body: BlockId, args: usize, params: usize },
}

impl Vm {
    /// Prepares a run: builds the type registry (built-ins, `Direction`, the script's enums,
    /// `Parameters`), declares a read-only global per type and `null`, fills `Parameters`, and
    /// pushes the call of `<main>`. Bad parameter values (which a host should have validated)
    /// are GGE4000.
    pub fn new(script: Arc<CompiledScript>, library: Arc<Library>, config: VmConfig) -> Result<Vm, Diagnostic> {
        let types = build_types(&script, &library);
        let globals: ScopeRef = Rc::new(RefCell::new(Scope::default()));
        {
            let mut g = globals.borrow_mut();
            for (id, info) in types.iter() {
                let value = if id == TypeId::NULL { Value::Null } else { Value::Type(id) };
                g.vars.insert(info.name.clone(), Variable { value, read_only: true });
            }
        }
        let parameters = build_parameters(&script, &types, &config)?;
        let mut env = Env::new(config.seed, config.geometry, config.limits).map_err(|e| {
            let mut d = geogen_diag::Diagnostic::new(e.code, e.message);
            d.hint = e.hint;
            d
        })?;
        env.enabled_maps = config.enabled_maps;
        env.source = config.source;
        env.inputs = config.inputs;
        env.yield_margin = config.yield_margin;
        let main_frame = Frame {
            function: Name::from(MAIN_FUNCTION),
            blocks: vec![BlockEntry { block: script.main, ip: 0, scope: None, looping: false }],
            stack_base: 0,
            call_site: None,
        };
        Ok(Vm {
            script,
            library,
            types,
            env,
            globals,
            parameters,
            stack: Vec::new(),
            frames: vec![main_frame],
            status: VmStatus::Ready,
            yielded: Vec::new(),
            yielded_names: HashSet::new(),
            instructions: 0,
            main_map_mandatory: config.main_map_mandatory,
            last_span: None,
            fault: None,
            call_cache: Vec::new(),
        })
    }

    // ----------------------------------------------------------------------------------------
    // Running

    /// Runs until the script finishes or faults.
    pub fn run(&mut self) -> Result<(), Diagnostic> {
        let script = Arc::clone(&self.script);
        loop {
            match self.status {
                VmStatus::Finished => return Ok(()),
                VmStatus::Faulted => return Err(self.fault_or_internal()),
                VmStatus::Ready | VmStatus::Running => self.step_with(&script),
            }
        }
    }

    /// Runs at most `count` instructions, so a host can stop a long run between two calls;
    /// `Ok(true)` once the script has finished.
    pub fn run_for(&mut self, count: u64) -> Result<bool, Diagnostic> {
        let script = Arc::clone(&self.script);
        for _ in 0..count {
            match self.status {
                VmStatus::Finished => return Ok(true),
                VmStatus::Faulted => return Err(self.fault_or_internal()),
                VmStatus::Ready | VmStatus::Running => self.step_with(&script),
            }
        }
        match self.status {
            VmStatus::Finished => Ok(true),
            VmStatus::Faulted => Err(self.fault_or_internal()),
            VmStatus::Ready | VmStatus::Running => Ok(false),
        }
    }

    /// Executes exactly one instruction (leaving finished blocks and returning from finished
    /// functions is part of the step that ran their last instruction) and returns the new status.
    /// After a fault it returns the same error again.
    pub fn step(&mut self) -> Result<VmStatus, Diagnostic> {
        if self.status == VmStatus::Faulted {
            return Err(self.fault_or_internal());
        }
        let script = Arc::clone(&self.script);
        self.step_with(&script);
        match self.status {
            VmStatus::Faulted => Err(self.fault_or_internal()),
            status => Ok(status),
        }
    }

    fn fault_or_internal(&self) -> Diagnostic {
        self.fault.clone().unwrap_or_else(|| Diagnostic::new(codes::GGE5000, "the VM faulted without an error"))
    }

    fn step_with(&mut self, script: &CompiledScript) {
        if self.status == VmStatus::Finished {
            return;
        }
        // Every step ends settled (see `settle`); only the very first one must settle first, in
        // case `<main>` is empty.
        let first = self.status == VmStatus::Ready;
        self.status = VmStatus::Running;
        let result = if first { self.settle(script) } else { Ok(()) }.and_then(|()| {
            if self.frames.is_empty() {
                return Ok(());
            }
            self.execute_one(script)?;
            self.settle(script)
        });
        if let Err(error) = result {
            self.set_fault(error);
        }
    }

    /// Leaves every block that has run off its end (restarting loops, returning from functions)
    /// until the next instruction to execute is at hand or the call stack is empty.
    fn settle(&mut self, script: &CompiledScript) -> Result<(), RuntimeError> {
        loop {
            let Some(frame) = self.frames.last_mut() else {
                return self.finish();
            };
            let Some(entry) = frame.blocks.last_mut() else {
                self.return_from_frame();
                continue;
            };
            let len = block_len(script, entry.block)?;
            if entry.ip < len {
                return Ok(());
            }
            if entry.looping {
                if len == 0 {
                    // It could never end; the compiler always puts the loop condition first.
                    return Err(intermediate("an empty looping block"));
                }
                entry.ip = 0;
                entry.scope = None;
                return Ok(());
            }
            frame.blocks.pop();
            if frame.blocks.is_empty() {
                self.return_from_frame();
            }
        }
    }

    /// The end-of-run checks, once the call stack is empty.
    fn finish(&mut self) -> Result<(), RuntimeError> {
        if self.status == VmStatus::Finished {
            return Ok(());
        }
        if self.main_map_mandatory && !self.yielded_names.contains(MAIN_MAP) {
            // Not tied to an instruction: the problem is what never ran.
            self.last_span = None;
            return Err(RuntimeError::new(
                codes::GGE2801,
                "the script finished without yielding the map \"main\"".into(),
            )
            .with_hint("add `yield map;` (the map named \"main\") on a path the script always takes"));
        }
        self.status = VmStatus::Finished;
        Ok(())
    }

    /// Pops the innermost frame and hands its return value (the stack top, `null` if the function
    /// left nothing) to the caller.
    fn return_from_frame(&mut self) {
        let Some(frame) = self.frames.pop() else { return };
        let value = if self.stack.len() > frame.stack_base { self.stack.pop() } else { None };
        self.stack.truncate(frame.stack_base);
        if !self.frames.is_empty() {
            // The stack is no higher than when the call's arguments were on it, so this push
            // cannot exceed the object stack limit.
            self.stack.push(value.unwrap_or(Value::Null));
        }
    }

    fn set_fault(&mut self, error: RuntimeError) {
        let mut diagnostic = Diagnostic::new(error.code, error.message);
        diagnostic.span = self.last_span;
        diagnostic.hint = error.hint;
        // One label per call site, innermost first, with how often it is on the stack: deep
        // recursion is a thousand calls from one or two places.
        let mut sites: IndexMap<Span, usize> = IndexMap::new();
        for site in self.frames.iter().rev().filter_map(|f| f.call_site) {
            *sites.entry(site).or_insert(0) += 1;
        }
        let distinct = sites.len();
        for (i, (site, count)) in sites.iter().enumerate() {
            if i + 1 == MAX_CALL_SITE_LABELS && distinct > MAX_CALL_SITE_LABELS {
                let more: usize = sites.values().skip(i).sum::<usize>() - 1;
                diagnostic.labels.push((*site, format!("called from here (and {more} more calls)")));
                break;
            }
            let text = match count {
                1 => "called from here".to_string(),
                n => format!("called from here ({n} times)"),
            };
            diagnostic.labels.push((*site, text));
        }
        self.fault = Some(diagnostic);
        self.status = VmStatus::Faulted;
    }

    // ----------------------------------------------------------------------------------------
    // Instructions

    fn execute_one(&mut self, script: &CompiledScript) -> Result<(), RuntimeError> {
        let frame = self.frames.last_mut().ok_or_else(|| RuntimeError::internal("no call frame to execute"))?;
        let entry = frame.blocks.last_mut().ok_or_else(|| RuntimeError::internal("no code block to execute"))?;
        let instruction = script
            .blocks
            .get(entry.block.0 as usize)
            .and_then(|b| b.instructions.get(entry.ip))
            .ok_or_else(|| intermediate("the instruction pointer left its block"))?;
        let site = (entry.block, entry.ip);
        entry.ip += 1;
        self.last_span = Some(instruction.span);
        self.env.spend(1)?;
        self.instructions += 1;
        let span = instruction.span;
        let flow = self.execute(script, &instruction.op, span, site).inspect_err(|error| {
            // An error about one argument of this call points at that argument's text.
            let argument = error.argument.and_then(|i| instruction.arguments.as_ref()?.get(i).copied());
            if let Some(argument) = argument {
                self.last_span = Some(argument);
            }
        })?;
        match flow {
            Flow::Next => Ok(()),
            Flow::EnterBlock { block, looping } => self.enter_block(script, block, looping),
            Flow::Call { function, body, args, params } => self.call_script(script, function, body, args, params, span),
        }
    }

    fn execute(
        &mut self,
        script: &CompiledScript,
        op: &Op,
        span: Span,
        site: (BlockId, usize),
    ) -> Result<Flow, RuntimeError> {
        match op {
            Op::LoadNumber(n) => self.push(Value::Number(*n))?,
            Op::LoadString(s) => self.push(Value::String(ScriptString::literal(Arc::clone(s))))?,
            Op::LoadBool(b) => self.push(Value::Bool(*b))?,
            Op::LoadNull => self.push(Value::Null)?,
            Op::LoadScope(name) => {
                let value = self.lookup(name)?;
                self.push(value)?;
            }
            Op::LoadScopeRef(name) => {
                let scope = self.find_scope(name)?;
                self.push(Value::Reference(Rc::new(Reference::Variable { scope, name: name.clone() })))?;
            }
            Op::StoreScope(name) => {
                let value = self.peek()?.clone();
                self.assign(name, value)?;
            }
            Op::StoreGlobal(name) => {
                let value = self.peek()?.clone();
                if !self.globals.borrow().vars.contains_key(name) {
                    return Err(
                        RuntimeError::undefined_variable(name).with_hint(format!("declare it with `global {name};`"))
                    );
                }
                store(&self.globals, name, value)?;
            }
            Op::DeclareLocal(name) => {
                let scope = self.innermost_scope()?;
                declare(&scope, name, "in this block")?;
            }
            Op::DeclareGlobal(name) => {
                let globals = Rc::clone(&self.globals);
                declare(&globals, name, "as a global")?;
            }
            Op::LoadMember(name) => {
                let object = self.pop()?;
                let value = self.member(&object, name)?;
                self.push(value)?;
            }
            Op::StoreMember(name) => {
                let _value = self.pop()?;
                let object = self.pop()?;
                // Every member is read-only: an existing one is GGE2108, a missing one GGE2202.
                self.member(&object, name)?;
                let owner = match &object {
                    Value::Type(id) => self.types.get(*id).name().to_string(),
                    other => other.type_name(&self.types).to_string(),
                };
                return Err(RuntimeError::read_only(&format!("{owner}.{name}")));
            }
            Op::CallGlobal { name, argc } => {
                let argc = *argc as usize;
                let target = match self.cached_target(site) {
                    CallTarget::Unresolved => {
                        let target = if let Some(index) = script.functions.get_index_of(name) {
                            CallTarget::Script(index)
                        } else if let Some(index) = self.library.globals.get_index_of(name) {
                            CallTarget::Native(index)
                        } else {
                            return Err(self.undefined_function(script, name));
                        };
                        self.cache_target(script, site, target);
                        target
                    }
                    target => target,
                };
                match target {
                    CallTarget::Script(index) => {
                        let (_, function) = script
                            .functions
                            .get_index(index)
                            .ok_or_else(|| RuntimeError::internal("stale call cache"))?;
                        return Ok(Flow::Call {
                            function: function.name.clone(),
                            body: function.body,
                            args: argc,
                            params: function.params.len(),
                        });
                    }
                    CallTarget::Native(index) => {
                        let native = *self
                            .library
                            .globals
                            .get_index(index)
                            .ok_or_else(|| RuntimeError::internal("stale call cache"))?
                            .1;
                        self.call_native(&native, argc, false, span)?;
                    }
                    _ => return Err(RuntimeError::internal("a method target for a global call")),
                }
            }
            Op::CallMember { name, argc } => {
                let argc = *argc as usize;
                let object = self
                    .stack
                    .len()
                    .checked_sub(argc + 1)
                    .and_then(|i| self.stack.get(i))
                    .ok_or_else(|| intermediate("object stack underflow in a method call"))?;
                let (ty, is_static) = match object {
                    Value::Type(id) => (*id, true),
                    other => (type_of(other).unwrap_or(TypeId::NULL), false),
                };
                let index = match self.cached_target(site) {
                    CallTarget::Method { ty: t, is_static: s, index } if t == ty && s == is_static => index,
                    _ => {
                        let index = self.method_index(object, name)?;
                        self.cache_target(script, site, CallTarget::Method { ty, is_static, index });
                        index
                    }
                };
                let methods = &self.types.get(ty).methods;
                let table = if is_static { &methods.static_methods } else { &methods.instance_methods };
                let native = *table.get_index(index).ok_or_else(|| RuntimeError::internal("stale call cache"))?.1;
                self.call_native(&native, argc, true, span)?;
            }
            Op::CallBlock(block) => return Ok(Flow::EnterBlock { block: *block, looping: false }),
            Op::If { then, otherwise } => {
                let condition = self.pop()?;
                let Value::Bool(b) = condition else {
                    return Err(RuntimeError::new(
                        codes::GGE2104,
                        format!("a condition must be a Boolean, not {}", article(condition.type_name(&self.types))),
                    )
                    .with_hint("compare explicitly, e.g. `x != 0` or `x != null`"));
                };
                match (b, otherwise) {
                    (true, _) => return Ok(Flow::EnterBlock { block: *then, looping: false }),
                    (false, Some(block)) => return Ok(Flow::EnterBlock { block: *block, looping: false }),
                    (false, None) => {}
                }
            }
            Op::While(block) => return Ok(Flow::EnterBlock { block: *block, looping: true }),
            Op::Break(n) => self.break_blocks(*n as usize)?,
            Op::Continue(n) => self.continue_loop(*n as usize)?,
            Op::Pop => {
                self.pop()?;
            }
            Op::Dup => {
                let value = self.peek()?.clone();
                self.push(value)?;
            }
            Op::Yield(name) => {
                let value = self.pop()?;
                if !matches!(value, Value::HeightMap(_)) {
                    return Err(RuntimeError::new(
                        codes::GGE2107,
                        format!("only a HeightMap can be yielded, not {}", article(value.type_name(&self.types))),
                    ));
                }
                if self.yielded_names.contains(name) {
                    return Err(RuntimeError::new(codes::GGE2802, format!("the map \"{name}\" was already yielded"))
                        .with_hint("give each yielded map its own name: `yield map as \"name\";`"));
                }
                if let Value::HeightMap(handle) = &value {
                    if self.env.map_enabled(name) {
                        let rect = self.env.geometry.yield_rect_with_margin(self.env.yield_margin);
                        let location = self.env.location(span);
                        self.env
                            .sequence
                            .push_yield(geogen_render::Slot(handle.slot), name, rect, location)
                            .map_err(RuntimeError::from_render)?;
                    }
                }
                self.yielded_names.insert(name.clone());
                self.yielded.push((name.clone(), value));
            }
        }
        Ok(Flow::Next)
    }

    fn push(&mut self, value: Value) -> Result<(), RuntimeError> {
        if self.stack.len() >= self.env.limits.max_object_stack {
            return Err(RuntimeError::new(
                codes::GGE2503,
                format!("the object stack is full ({} values)", self.env.limits.max_object_stack),
            )
            .with_hint("is an expression or call argument list enormous? raise the limit with --max-object-stack N"));
        }
        self.stack.push(value);
        Ok(())
    }

    fn pop(&mut self) -> Result<Value, RuntimeError> {
        let base = self.frames.last().map_or(0, |f| f.stack_base);
        if self.stack.len() <= base {
            return Err(intermediate("object stack underflow"));
        }
        self.stack.pop().ok_or_else(|| intermediate("object stack underflow"))
    }

    fn peek(&self) -> Result<&Value, RuntimeError> {
        let base = self.frames.last().map_or(0, |f| f.stack_base);
        if self.stack.len() <= base {
            return Err(intermediate("object stack underflow"));
        }
        self.stack.last().ok_or_else(|| intermediate("object stack underflow"))
    }

    fn enter_block(&mut self, script: &CompiledScript, block: BlockId, looping: bool) -> Result<(), RuntimeError> {
        block_len(script, block)?;
        let max = self.env.limits.max_block_depth;
        let frame = self.frames.last_mut().ok_or_else(|| RuntimeError::internal("no call frame"))?;
        if frame.blocks.len() >= max {
            return Err(RuntimeError::new(
                codes::GGE2502,
                format!("too many nested code blocks in `{}` (the limit is {max})", frame.function),
            )
            .with_hint("raise the limit with --max-block-depth N"));
        }
        frame.blocks.push(BlockEntry { block, ip: 0, scope: None, looping });
        Ok(())
    }

    /// `Break(n)`: leave `n` blocks. Leaving the root block returns (in `settle`).
    fn break_blocks(&mut self, n: usize) -> Result<(), RuntimeError> {
        let frame = self.frames.last_mut().ok_or_else(|| RuntimeError::internal("no call frame"))?;
        if n == 0 || n > frame.blocks.len() {
            return Err(intermediate(&format!("`Break {n}` with {} blocks in the frame", frame.blocks.len())));
        }
        let keep = frame.blocks.len() - n;
        frame.blocks.truncate(keep);
        if frame.blocks.is_empty() {
            self.return_from_frame();
        }
        Ok(())
    }

    /// `Continue(n)`: leave `n - 1` blocks and restart the (looping) block then innermost.
    fn continue_loop(&mut self, n: usize) -> Result<(), RuntimeError> {
        let frame = self.frames.last_mut().ok_or_else(|| RuntimeError::internal("no call frame"))?;
        if n == 0 || n > frame.blocks.len() {
            return Err(intermediate(&format!("`Continue {n}` with {} blocks in the frame", frame.blocks.len())));
        }
        let keep = frame.blocks.len() - (n - 1);
        frame.blocks.truncate(keep);
        match frame.blocks.last_mut() {
            Some(entry) if entry.looping => {
                entry.ip = 0;
                entry.scope = None;
                Ok(())
            }
            _ => Err(intermediate(&format!("`Continue {n}` does not reach a looping block"))),
        }
    }

    fn call_script(
        &mut self,
        script: &CompiledScript,
        function: Name,
        body: BlockId,
        argc: usize,
        params: usize,
        span: Span,
    ) -> Result<(), RuntimeError> {
        if argc != params {
            return Err(RuntimeError::new(
                codes::GGE2103,
                format!(
                    "`{function}` takes {params} argument{}, but {argc} {} given",
                    if params == 1 { "" } else { "s" },
                    if argc == 1 { "was" } else { "were" }
                ),
            )
            .with_hint(format!("declared as {}", script_signature(script, &function))));
        }
        if self.frames.len() >= self.env.limits.max_call_depth {
            return Err(RuntimeError::new(
                codes::GGE2501,
                format!("too many nested function calls (the limit is {})", self.env.limits.max_call_depth),
            )
            .with_hint(
                "does a recursive function lack a way to stop? otherwise raise the limit with --max-call-depth N",
            ));
        }
        block_len(script, body)?;
        let start = self.stack.len().checked_sub(argc).ok_or_else(|| intermediate("missing call arguments"))?;
        let names = script.functions.get(&function).map(|f| f.params.as_slice()).unwrap_or_default();
        let mut scope = Scope::default();
        for (name, value) in names.iter().zip(self.stack.drain(start..)) {
            scope.vars.insert(name.clone(), Variable { value, read_only: false });
        }
        self.frames.push(Frame {
            function,
            blocks: vec![BlockEntry { block: body, ip: 0, scope: Some(Rc::new(RefCell::new(scope))), looping: false }],
            stack_base: start,
            call_site: Some(span),
        });
        Ok(())
    }

    /// Calls a native with the top `argc` values as arguments (and the value below them as `this`
    /// for a method), replacing them (and `this`) with the result.
    fn call_native(&mut self, native: &Native, argc: usize, method: bool, span: Span) -> Result<(), RuntimeError> {
        native.check_arity(argc)?;
        let consumed = argc + usize::from(method);
        let base = self.frames.last().map_or(0, |f| f.stack_base);
        let first = self
            .stack
            .len()
            .checked_sub(consumed)
            .filter(|first| *first >= base)
            .ok_or_else(|| intermediate("object stack underflow in a call"))?;
        let start = first + usize::from(method);
        let null = Value::Null;
        let this = if method { &self.stack[first] } else { &null };
        let args = Args { native, this, values: &self.stack[start..], types: &self.types };
        let mut ctx = Ctx { types: &self.types, env: &mut self.env, span };
        let result = (native.f)(&mut ctx, &args)?;
        self.stack.truncate(first);
        self.push(result)
    }

    fn undefined_function(&self, script: &CompiledScript, name: &str) -> RuntimeError {
        let candidates = script
            .functions
            .keys()
            .map(|k| &**k)
            .chain(self.library.globals.keys().map(|k| &**k))
            .filter(|n| n.starts_with(|c: char| c.is_alphabetic() || c == '_'));
        let error = RuntimeError::new(codes::GGE2201, format!("undefined function `{name}`"));
        match did_you_mean(name, candidates) {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }

    fn cached_target(&self, (block, ip): (BlockId, usize)) -> CallTarget {
        self.call_cache.get(block.0 as usize).and_then(|b| b.get(ip)).copied().unwrap_or(CallTarget::Unresolved)
    }

    fn cache_target(&mut self, script: &CompiledScript, (block, ip): (BlockId, usize), target: CallTarget) {
        let b = block.0 as usize;
        if self.call_cache.len() <= b {
            self.call_cache.resize_with(script.blocks.len().max(b + 1), Vec::new);
        }
        let slots = &mut self.call_cache[b];
        if slots.is_empty() {
            let len = script.blocks.get(b).map_or(0, |code| code.instructions.len());
            slots.resize(len, CallTarget::Unresolved);
        }
        if let Some(slot) = slots.get_mut(ip) {
            *slot = target;
        }
    }

    /// The index of method `name` of a value in its type's table: static methods on a type
    /// object, instance methods otherwise.
    fn method_index(&self, object: &Value, name: &Name) -> Result<usize, RuntimeError> {
        let (owner, table) = match object {
            Value::Null => {
                return Err(RuntimeError::new(codes::GGE2106, format!("cannot call `{name}` on null"))
                    .with_hint("the value is null: was it assigned?"))
            }
            Value::Type(id) => {
                let info = self.types.get(*id);
                (info.name().to_string(), &info.methods.static_methods)
            }
            other => match type_of(other) {
                Some(id) => {
                    let info = self.types.get(id);
                    (info.name().to_string(), &info.methods.instance_methods)
                }
                None => return Err(RuntimeError::internal("a method call on an internal reference")),
            },
        };
        if let Some(index) = table.get_index_of(name) {
            return Ok(index);
        }
        let what = if matches!(object, Value::Type(_)) { "has no static method" } else { "has no method" };
        let error = RuntimeError::new(codes::GGE2201, format!("`{owner}` {what} `{name}`"));
        let hint = did_you_mean(name, table.keys().map(|k| &**k)).or_else(|| match object {
            Value::Type(id) if self.types.get(*id).methods.instance_methods.contains_key(name) => {
                Some(format!("`{name}` is called on a `{owner}` value, not on the type"))
            }
            _ => None,
        });
        Err(match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        })
    }

    /// A member variable: enum items of enum types, `Parameters.*`, `point.X`/`.Y`.
    fn member(&self, object: &Value, name: &Name) -> Result<Value, RuntimeError> {
        let missing = |owner: &str, candidates: Vec<&str>| {
            let error = RuntimeError::new(codes::GGE2202, format!("`{owner}` has no member `{name}`"));
            match did_you_mean(name, candidates) {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        };
        match object {
            Value::Null => Err(RuntimeError::new(codes::GGE2106, format!("cannot read `{name}` of null"))
                .with_hint("the value is null: was it assigned?")),
            Value::Point(p) => match &**name {
                "X" => Ok(Value::Coordinate(p.x)),
                "Y" => Ok(Value::Coordinate(p.y)),
                _ => Err(missing("Point", vec!["X", "Y"])),
            },
            Value::Type(TypeId::PARAMETERS) => {
                if let Some(value) = self.parameters.get(name) {
                    return Ok(value.clone());
                }
                let axis = match &**name {
                    "MapWidth" => Some(("width", "Width")),
                    "MapHeight" => Some(("height", "Height")),
                    _ => None,
                };
                if let Some((axis, key)) = axis {
                    return Err(RuntimeError::new(codes::GGE2202, format!("`Parameters.{name}` is not defined"))
                        .with_hint(format!(
                            "the map is infinite in {axis}, so it has no size; declare `{key}: Finite` in the metadata for a finite map"
                        )));
                }
                Err(missing("Parameters", self.parameters.keys().map(|k| &**k).collect()))
            }
            Value::Type(id) => {
                let info = self.types.get(*id);
                if let Some(items) = info.enum_items() {
                    if let Some((_, value)) = items.iter().find(|(item, _)| item == name) {
                        return Ok(Value::Enum(EnumValue { ty: *id, value: *value }));
                    }
                    return Err(missing(info.name(), items.iter().map(|(n, _)| &**n).collect()));
                }
                if info.methods.static_methods.contains_key(name) {
                    return Err(RuntimeError::new(codes::GGE2202, format!("`{}` has no member `{name}`", info.name()))
                        .with_hint(format!("`{name}` is a function: call it as `{}.{name}(...)`", info.name())));
                }
                Err(missing(info.name(), Vec::new()))
            }
            other => Err(missing(other.type_name(&self.types), Vec::new())),
        }
    }

    /// The scopes searched for a name, innermost first: the current frame's blocks (those that
    /// declared something), then the globals.
    fn visible_scopes(&self) -> impl Iterator<Item = &ScopeRef> {
        let blocks = self.frames.last().map(|f| f.blocks.as_slice()).unwrap_or_default();
        blocks.iter().rev().filter_map(|e| e.scope.as_ref()).chain(std::iter::once(&self.globals))
    }

    /// The value of a variable (one search, no scope handle cloned).
    fn lookup(&self, name: &Name) -> Result<Value, RuntimeError> {
        for scope in self.visible_scopes() {
            let scope = scope.borrow();
            if let Some(index) = position(&scope, name) {
                return Ok(scope.vars[index].value.clone());
            }
        }
        Err(self.undefined_variable(name))
    }

    /// Stores into the variable `lookup` would read. Read-only: GGE2108.
    fn assign(&self, name: &Name, value: Value) -> Result<(), RuntimeError> {
        for scope in self.visible_scopes() {
            let mut scope = scope.borrow_mut();
            if let Some(var) = position(&scope, name).map(|index| &mut scope.vars[index]) {
                if var.read_only {
                    return Err(RuntimeError::read_only(name));
                }
                var.value = value;
                return Ok(());
            }
        }
        Err(self.undefined_variable(name))
    }

    /// The scope holding `name`: the current frame's blocks innermost first, then the globals.
    fn find_scope(&self, name: &Name) -> Result<ScopeRef, RuntimeError> {
        if let Some(frame) = self.frames.last() {
            for scope in frame.blocks.iter().rev().filter_map(|e| e.scope.as_ref()) {
                if scope.borrow().vars.contains_key(name) {
                    return Ok(Rc::clone(scope));
                }
            }
        }
        if self.globals.borrow().vars.contains_key(name) {
            return Ok(Rc::clone(&self.globals));
        }
        Err(self.undefined_variable(name))
    }

    fn undefined_variable(&self, name: &Name) -> RuntimeError {
        let mut visible: Vec<Name> = Vec::new();
        if let Some(frame) = self.frames.last() {
            for entry in &frame.blocks {
                if let Some(scope) = &entry.scope {
                    visible.extend(scope.borrow().vars.keys().cloned());
                }
            }
        }
        visible.extend(self.globals.borrow().vars.keys().cloned());
        let mut error = RuntimeError::undefined_variable(name);
        if let Some(hint) = did_you_mean(name, visible.iter().map(|n| &**n)) {
            error.hint = Some(hint);
        } else if self.frames.len() > 1 && self.frames.first().is_some_and(|main| main_declares(main, name)) {
            error.hint = Some(format!(
                "`{name}` is a local of the main script, invisible in functions; declare it with `global`"
            ));
        }
        error
    }

    /// The innermost block's scope, created if the block has none yet.
    fn innermost_scope(&mut self) -> Result<ScopeRef, RuntimeError> {
        let entry = self
            .frames
            .last_mut()
            .and_then(|f| f.blocks.last_mut())
            .ok_or_else(|| RuntimeError::internal("no code block for a declaration"))?;
        Ok(Rc::clone(entry.scope.get_or_insert_with(new_scope)))
    }

    // ----------------------------------------------------------------------------------------
    // Inspection

    pub fn status(&self) -> VmStatus {
        self.status
    }

    /// The error that faulted the VM.
    pub fn fault(&self) -> Option<&Diagnostic> {
        self.fault.as_ref()
    }

    /// The instruction about to run, or the one that faulted; `None` when finished.
    pub fn current_span(&self) -> Option<Span> {
        match self.status {
            VmStatus::Faulted => self.last_span,
            VmStatus::Finished => None,
            VmStatus::Ready | VmStatus::Running => self.next_span(),
        }
    }

    fn next_span(&self) -> Option<Span> {
        let entry = self.frames.last()?.blocks.last()?;
        let block = self.script.blocks.get(entry.block.0 as usize)?;
        // Before the first step the main block may still be empty or need settling.
        block.instructions.get(entry.ip).map(|i| i.span).or(self.last_span)
    }

    /// The call stack, outermost (`<main>`) first.
    pub fn call_stack(&self) -> Vec<FrameInfo> {
        let count = self.frames.len();
        self.frames
            .iter()
            .enumerate()
            .map(|(i, frame)| {
                let span = if i + 1 == count { self.current_span() } else { self.frames[i + 1].call_site };
                FrameInfo { function: frame.function.clone(), span, call_site: frame.call_site }
            })
            .collect()
    }

    /// How many function invocations are active (1 while `<main>` runs, 0 once finished):
    /// the depth a debugger's "step over" and "step out" compare, without building the stack.
    pub fn call_depth(&self) -> usize {
        self.frames.len()
    }

    /// The code-block stack of frame `frame` (0 = `<main>`), outermost first.
    pub fn code_block_stack(&self, frame: usize) -> Vec<BlockInfo> {
        self.frames
            .get(frame)
            .map(|f| f.blocks.iter().map(|e| BlockInfo { block: e.block, ip: e.ip, looping: e.looping }).collect())
            .unwrap_or_default()
    }

    /// The scopes visible to the current instruction: the current frame's blocks innermost first,
    /// then the globals (type objects included).
    pub fn scopes(&self) -> Vec<ScopeInfo> {
        let mut out = Vec::new();
        if let Some(frame) = self.frames.last() {
            for (i, entry) in frame.blocks.iter().enumerate().rev() {
                out.push(ScopeInfo {
                    label: format!("{} block {} (depth {})", frame.function, entry.block.0, i + 1),
                    block: Some(entry.block),
                    variables: entry.scope.as_ref().map(variables).unwrap_or_default(),
                });
            }
        }
        out.push(ScopeInfo { label: "globals".to_string(), block: None, variables: variables(&self.globals) });
        out
    }

    /// The object stack, bottom first.
    pub fn object_stack(&self) -> &[Value] {
        &self.stack
    }

    /// Messages, the random state, the geometry and the limits.
    pub fn env(&self) -> &Env {
        &self.env
    }

    pub fn env_mut(&mut self) -> &mut Env {
        &mut self.env
    }

    /// Maps yielded so far, in order, with their names.
    pub fn yielded(&self) -> &[(Name, Value)] {
        &self.yielded
    }

    pub fn instructions_executed(&self) -> u64 {
        self.instructions
    }

    pub fn types(&self) -> &TypeRegistry {
        &self.types
    }

    pub fn script(&self) -> &Arc<CompiledScript> {
        &self.script
    }

    /// The members of `Parameters` as scripts see them.
    pub fn parameters(&self) -> &IndexMap<Name, Value> {
        &self.parameters
    }

    /// A debugging description of a value (see [`crate::describe_value`]).
    pub fn describe(&self, value: &Value) -> String {
        crate::describe::describe_value(value, &self.types)
    }
}

fn variables(scope: &ScopeRef) -> Vec<VariableInfo> {
    scope
        .borrow()
        .vars
        .iter()
        .map(|(name, v)| VariableInfo { name: name.clone(), value: v.value.clone(), read_only: v.read_only })
        .collect()
}

fn main_declares(main: &Frame, name: &Name) -> bool {
    main.blocks.iter().filter_map(|e| e.scope.as_ref()).any(|s| s.borrow().vars.contains_key(name))
}

/// The index of a variable in a scope. Block scopes hold a handful of variables, for which a
/// linear scan (the compiler shares one `Arc` per name, so usually a pointer comparison) beats
/// hashing the name.
fn position(scope: &Scope, name: &Name) -> Option<usize> {
    const LINEAR_UP_TO: usize = 8;
    if scope.vars.len() <= LINEAR_UP_TO {
        scope.vars.keys().position(|k| Arc::ptr_eq(k, name) || **k == **name)
    } else {
        scope.vars.get_index_of(name)
    }
}

fn new_scope() -> ScopeRef {
    Rc::new(RefCell::new(Scope::default()))
}

fn block_len(script: &CompiledScript, block: BlockId) -> Result<usize, RuntimeError> {
    script
        .blocks
        .get(block.0 as usize)
        .map(|b| b.instructions.len())
        .ok_or_else(|| intermediate(&format!("no code block {}", block.0)))
}

fn intermediate(what: &str) -> RuntimeError {
    RuntimeError::new(codes::GGE5001, format!("inconsistent intermediate code: {what}"))
        .with_hint("this is a bug in geogen's compiler; please report it with the script")
}

fn store(scope: &ScopeRef, name: &Name, value: Value) -> Result<(), RuntimeError> {
    let mut scope = scope.borrow_mut();
    let var = scope.vars.get_mut(name).ok_or_else(|| RuntimeError::undefined_variable(name))?;
    if var.read_only {
        return Err(RuntimeError::read_only(name));
    }
    var.value = value;
    Ok(())
}

fn declare(scope: &ScopeRef, name: &Name, where_: &str) -> Result<(), RuntimeError> {
    let mut scope = scope.borrow_mut();
    if let Some(existing) = scope.vars.get(name) {
        let hint = if existing.read_only {
            format!("`{name}` is a built-in name; choose another")
        } else {
            "assign it without `var`/`global`, or choose another name".to_string()
        };
        return Err(RuntimeError::new(codes::GGE2204, format!("`{name}` is already declared {where_}")).with_hint(hint));
    }
    scope.vars.insert(name.clone(), Variable { value: Value::Null, read_only: false });
    Ok(())
}

/// The type whose instance methods a value has.
fn type_of(value: &Value) -> Option<TypeId> {
    Some(match value {
        Value::Null => TypeId::NULL,
        Value::Bool(_) => TypeId::BOOLEAN,
        Value::Number(_) => TypeId::NUMBER,
        Value::String(_) => TypeId::STRING,
        Value::Coordinate(_) => TypeId::COORDINATE,
        Value::Point(_) => TypeId::POINT,
        Value::Enum(e) => e.ty,
        Value::Type(_) => return None,
        Value::Array(_) => TypeId::ARRAY,
        Value::RandomSequence2D(_) => TypeId::RANDOM_SEQUENCE_2D,
        Value::HeightMap(_) => TypeId::HEIGHT_MAP,
        Value::HeightProfile(_) => TypeId::HEIGHT_PROFILE,
        Value::Reference(_) => return None,
    })
}

fn article(type_name: &str) -> String {
    match type_name.chars().next() {
        _ if type_name == "null" => "null".to_string(),
        Some('A' | 'E' | 'I' | 'O' | 'U') => format!("an {type_name}"),
        _ => format!("a {type_name}"),
    }
}

fn script_signature(script: &CompiledScript, name: &str) -> String {
    match script.functions.get(name) {
        Some(f) => {
            let params: Vec<&str> = f.params.iter().map(|p| &**p).collect();
            format!("`{}({})`", f.name, params.join(", "))
        }
        None => format!("`{name}`"),
    }
}

/// The built-in types with their fixed ids, then the script's enums, in order.
fn build_types(script: &CompiledScript, library: &Library) -> TypeRegistry {
    let mut types = TypeRegistry::new();
    for (i, name) in BUILTIN_TYPE_NAMES.iter().enumerate() {
        let id = TypeId(i as u32);
        let own = library.types.get(*name).cloned().unwrap_or_default();
        let (kind, methods) = if id == TypeId::DIRECTION {
            let items = vec![(Name::from("Horizontal"), 0.0), (Name::from("Vertical"), 1.0)];
            (TypeKind::Enum { items }, merged(&library.enum_methods, &own))
        } else if id == TypeId::PARAMETERS {
            (TypeKind::Parameters, own)
        } else {
            (TypeKind::Builtin, own)
        };
        types.add(TypeInfo { name: Name::from(*name), kind, methods });
    }
    for def in &script.enums {
        types.add(TypeInfo {
            name: def.name.clone(),
            kind: TypeKind::Enum { items: def.items.clone() },
            methods: Arc::clone(&library.enum_methods),
        });
    }
    types
}

/// The methods every enum has, overridden by a type's own.
fn merged(base: &Arc<TypeMethods>, own: &Arc<TypeMethods>) -> Arc<TypeMethods> {
    if own.static_methods.is_empty() && own.instance_methods.is_empty() {
        return Arc::clone(base);
    }
    let mut methods = (**base).clone();
    methods.static_methods.extend(own.static_methods.iter().map(|(k, v)| (k.clone(), *v)));
    methods.instance_methods.extend(own.instance_methods.iter().map(|(k, v)| (k.clone(), *v)));
    Arc::new(methods)
}

/// The members of `Parameters`: the script's parameters (given values or defaults), the map size
/// of finite dimensions, and the render rectangle and scale.
fn build_parameters(
    script: &CompiledScript,
    types: &TypeRegistry,
    config: &VmConfig,
) -> Result<IndexMap<Name, Value>, Diagnostic> {
    let declared = &script.metadata.parameters;
    for (name, _) in &config.parameters {
        if !declared.iter().any(|p| &p.name == name) {
            return Err(Diagnostic::new(codes::GGE4000, format!("the script has no parameter `{name}`")));
        }
    }
    let mut members = IndexMap::new();
    for parameter in declared {
        let given = config.parameters.iter().rev().find(|(n, _)| *n == parameter.name).map(|(_, v)| v);
        let value = match (&parameter.kind, given) {
            (ParameterKind::Boolean { .. }, Some(ParameterValue::Boolean(b))) => Value::Bool(*b),
            (ParameterKind::Boolean { default }, None) => Value::Bool(*default),
            (ParameterKind::Number { .. }, Some(ParameterValue::Number(n))) => Value::Number(*n),
            (ParameterKind::Number { default, .. }, None) => Value::Number(*default),
            (ParameterKind::Enum { type_name, items, default }, given) => {
                let ty = types.by_name(type_name).ok_or_else(|| {
                    Diagnostic::new(
                        codes::GGE5000,
                        format!("the parameter `{}` has an unknown enum type", parameter.name),
                    )
                })?;
                let value = match given {
                    Some(ParameterValue::Enum(_, v)) => *v,
                    None => items.iter().find(|(n, _)| n == default).map(|(_, v)| *v).ok_or_else(|| {
                        Diagnostic::new(
                            codes::GGE5000,
                            format!("the parameter `{}` has no default item", parameter.name),
                        )
                    })?,
                    Some(_) => return Err(mismatch(&parameter.name)),
                };
                Value::Enum(EnumValue { ty, value })
            }
            _ => return Err(mismatch(&parameter.name)),
        };
        members.insert(parameter.name.clone(), value);
    }
    let g = &config.geometry;
    if let Some(w) = g.map_width {
        members.insert(Name::from("MapWidth"), Value::Number(f64::from(w)));
    }
    if let Some(h) = g.map_height {
        members.insert(Name::from("MapHeight"), Value::Number(f64::from(h)));
    }
    members.insert(Name::from("RenderOriginX"), Value::Number(g.render_origin_x as f64));
    members.insert(Name::from("RenderOriginY"), Value::Number(g.render_origin_y as f64));
    members.insert(Name::from("RenderWidth"), Value::Number(f64::from(g.render_width)));
    members.insert(Name::from("RenderHeight"), Value::Number(f64::from(g.render_height)));
    members.insert(Name::from("RenderScale"), Value::Number(g.render_scale));
    Ok(members)
}

fn mismatch(name: &str) -> Diagnostic {
    Diagnostic::new(codes::GGE4000, format!("the value given for the parameter `{name}` has the wrong type"))
}
