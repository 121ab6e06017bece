//! VM tests with hand-built intermediate code (independent of the parser and compiler).

use std::rc::Rc;
use std::sync::Arc;

use geogen_compile::ir::{BlockId, CodeBlock, CompiledScript, EnumDef, Instruction, Op, ScriptFunction};
use geogen_compile::metadata::{
    Dimension, ParameterKind, ParameterValue, Restriction, ScriptMetadata, ScriptParameter,
};
use geogen_diag::{codes, Diagnostic, ErrorCode, Span};
use geogen_vm::array::Array;
use geogen_vm::value::MapHandle;
use geogen_vm::{
    Args, Ctx, Library, Limits, MapGeometry, Message, Name, Native, RuntimeError, Value, Vm, VmConfig, VmStatus,
};

// ---------------------------------------------------------------------------------------------
// A tiny library for the tests.

fn add(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(a.number(0)? + a.number(1)?))
}
fn sub(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(a.number(0)? - a.number(1)?))
}
fn lt(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Bool(a.number(0)? < a.number(1)?))
}
fn eq(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Bool(a.value(0)?.script_eq(a.value(1)?)))
}
fn rem(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Number(a.number(0)? % a.number(1)?))
}
/// Records a description of its argument as a message.
fn record(ctx: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    let text = geogen_vm::describe_value(a.value(0)?, ctx.types);
    ctx.env.messages.push(Message { text, span: ctx.span });
    Ok(Value::Null)
}
/// A map of zeros: the smallest real creating step (the standard library's operations live in
/// another crate).
#[derive(Debug)]
struct Zeros;

impl geogen_render::Operation for Zeros {
    fn name(&self) -> &str {
        "Test.Zeros"
    }
    fn arg_kinds(&self) -> &[geogen_render::ObjectKind] {
        &[]
    }
    fn effect(&self) -> geogen_render::Effect {
        geogen_render::Effect::Create(geogen_render::ObjectKind::Map)
    }
    fn render(
        &self,
        _: &geogen_render::KernelContext,
        _: &mut geogen_render::Object,
        _: &[&geogen_render::Object],
    ) -> Result<(), geogen_render::RenderError> {
        Ok(())
    }
}

/// `MakeMap()`: records a real creating step, as the standard library's constructors do, so that a
/// yield of the handle is a valid rendering step.
fn make_map(ctx: &mut Ctx<'_>, _: &Args<'_>) -> Result<Value, RuntimeError> {
    let slot = ctx.env.sequence.push_create(Zeros, &[], None).map_err(RuntimeError::from_render)?;
    Ok(Value::HeightMap(Rc::new(MapHandle { id: ctx.env.new_object_id(), slot: slot.0 })))
}
fn make_point(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Point(geogen_vm::Point { x: a.coordinate(0)?, y: a.coordinate(1)? }))
}
/// `Wrap(x)`: a new array holding x.
fn wrap(ctx: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    let mut array = Array::new();
    array.push_back(a.value(0)?.clone())?;
    Ok(Value::Array(ctx.new_array(array)?))
}
fn count(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    match a.this {
        Value::Array(arr) => Ok(Value::Number(arr.items.borrow().len() as f64)),
        _ => Err(RuntimeError::internal("not an array")),
    }
}
fn from_number(_: &mut Ctx<'_>, a: &Args<'_>) -> Result<Value, RuntimeError> {
    let Value::Type(ty) = a.this else { return Err(RuntimeError::internal("no type")) };
    Ok(Value::Enum(geogen_vm::EnumValue { ty: *ty, value: a.number(0)? }))
}
fn create_array(ctx: &mut Ctx<'_>, _: &Args<'_>) -> Result<Value, RuntimeError> {
    Ok(Value::Array(ctx.new_array(Array::new())?))
}

fn library() -> Arc<Library> {
    let mut lib = Library::new();
    lib.add_global(Native::operator("+", "Number + Number", 2, add));
    lib.add_global(Native::operator("-", "Number - Number", 2, sub));
    lib.add_global(Native::operator("<", "Number < Number", 2, lt));
    lib.add_global(Native::operator("==", "any == any", 2, eq));
    lib.add_global(Native::operator("%", "Number % Number", 2, rem));
    lib.add_global(Native::function("Record", "Record(any value)", 1, Some(1), record));
    lib.add_global(Native::function("MakeMap", "MakeMap()", 0, Some(0), make_map));
    lib.add_global(Native::function("MakePoint", "MakePoint(Coordinate x, Coordinate y)", 2, Some(2), make_point));
    lib.add_global(Native::function("Wrap", "Wrap(any value)", 1, Some(1), wrap));
    lib.add_method("Array", Native::function("Count", "array.Count()", 0, Some(0), count));
    lib.add_static("Array", Native::function("Create", "Array.Create()", 0, Some(0), create_array));
    lib.add_enum_static(Native::function("FromNumber", "Enum.FromNumber(Number n)", 1, Some(1), from_number));
    Arc::new(lib)
}

// ---------------------------------------------------------------------------------------------
// Building intermediate code by hand.

#[derive(Default)]
struct Builder {
    blocks: Vec<CodeBlock>,
    functions: indexmap::IndexMap<Name, ScriptFunction>,
    enums: Vec<EnumDef>,
    metadata: ScriptMetadata,
    next_offset: u32,
}

impl Builder {
    /// A block; instruction k of the whole script gets the span [10k, 10k + 5).
    fn block(&mut self, ops: Vec<Op>) -> BlockId {
        let instructions = ops
            .into_iter()
            .map(|op| {
                let start = self.next_offset;
                self.next_offset += 10;
                Instruction { op, span: Span::new(start, start + 5), arguments: None }
            })
            .collect();
        self.blocks.push(CodeBlock { instructions });
        BlockId(self.blocks.len() as u32 - 1)
    }

    fn function(&mut self, name: &str, params: &[&str], body: BlockId) {
        let f = ScriptFunction {
            name: name.into(),
            params: params.iter().map(|p| Name::from(*p)).collect(),
            body,
            span: Span::default(),
        };
        self.functions.insert(name.into(), f);
    }

    fn build(self, main: BlockId) -> Arc<CompiledScript> {
        Arc::new(CompiledScript {
            blocks: self.blocks,
            main,
            functions: self.functions,
            enums: self.enums,
            metadata: self.metadata,
            map_names: vec![],
        })
    }
}

fn n(x: f64) -> Op {
    Op::LoadNumber(x)
}
fn load(name: &str) -> Op {
    Op::LoadScope(name.into())
}
fn store(name: &str) -> Op {
    Op::StoreScope(name.into())
}
fn local(name: &str) -> Op {
    Op::DeclareLocal(name.into())
}
fn call(name: &str, argc: u32) -> Op {
    Op::CallGlobal { name: name.into(), argc }
}
fn method(name: &str, argc: u32) -> Op {
    Op::CallMember { name: name.into(), argc }
}
fn member(name: &str) -> Op {
    Op::LoadMember(name.into())
}
/// `Record(<value on the stack>);`
fn rec() -> [Op; 2] {
    [call("Record", 1), Op::Pop]
}
/// `var name = x;`
fn var(name: &str, x: f64) -> [Op; 4] {
    [local(name), n(x), store(name), Op::Pop]
}

fn config() -> VmConfig {
    VmConfig { main_map_mandatory: false, ..VmConfig::default() }
}

fn run_with(script: &Arc<CompiledScript>, config: VmConfig) -> (Vm, Result<(), Diagnostic>) {
    let mut vm = Vm::new(script.clone(), library(), config).expect("vm");
    let result = vm.run();
    (vm, result)
}

fn messages(vm: &Vm) -> Vec<String> {
    vm.env().messages.iter().map(|m| m.text.clone()).collect()
}

fn run_ok(script: &Arc<CompiledScript>) -> Vec<String> {
    let (vm, result) = run_with(script, config());
    if let Err(e) = result {
        panic!("unexpected error {}: {}", e.code, e.message);
    }
    assert_eq!(vm.status(), VmStatus::Finished);
    assert!(vm.object_stack().is_empty(), "statements must leave the stack empty");
    messages(&vm)
}

fn run_err(script: &Arc<CompiledScript>, config: VmConfig) -> (Vm, Diagnostic) {
    let (vm, result) = run_with(script, config);
    let error = result.expect_err("expected an error");
    assert_eq!(vm.status(), VmStatus::Faulted);
    (vm, error)
}

fn code(e: &Diagnostic) -> ErrorCode {
    e.code
}

fn cat(parts: Vec<Vec<Op>>) -> Vec<Op> {
    parts.into_iter().flatten().collect()
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn arithmetic_and_native_calls() {
    let mut b = Builder::default();
    let main = b.block(cat(vec![vec![n(1.0), n(2.0), call("+", 2)], rec().to_vec()]));
    assert_eq!(run_ok(&b.build(main)), ["3"]);
}

#[test]
fn empty_script_finishes() {
    let mut b = Builder::default();
    let main = b.block(vec![]);
    let script = b.build(main);
    let mut vm = Vm::new(script, library(), config()).unwrap();
    assert_eq!(vm.status(), VmStatus::Ready);
    assert_eq!(vm.step().unwrap(), VmStatus::Finished);
    assert_eq!(vm.instructions_executed(), 0);
}

/// `while(cond) body` as the compiler emits it: `While[cond; If(then: {}, else: {Break 2}); body]`.
fn while_loop(b: &mut Builder, cond: Vec<Op>, body: Vec<Op>) -> Op {
    let empty = b.block(vec![]);
    let exit = b.block(vec![Op::Break(2)]);
    let mut ops = cond;
    ops.push(Op::If { then: empty, otherwise: Some(exit) });
    ops.extend(body);
    Op::While(b.block(ops))
}

#[test]
fn while_loop_with_break() {
    // var i = 0; while (true) { if (i == 5) break; i = i + 1; } Record(i);
    let mut b = Builder::default();
    let brk = b.block(vec![Op::Break(2)]);
    let body = vec![
        load("i"),
        n(5.0),
        call("==", 2),
        Op::If { then: brk, otherwise: None },
        load("i"),
        n(1.0),
        call("+", 2),
        store("i"),
        Op::Pop,
    ];
    let w = while_loop(&mut b, vec![Op::LoadBool(true)], body);
    let main = b.block(cat(vec![var("i", 0.0).to_vec(), vec![w, load("i")], rec().to_vec()]));
    assert_eq!(run_ok(&b.build(main)), ["5"]);
}

#[test]
fn continue_restarts_the_loop_with_a_fresh_scope() {
    // var i = 0; var sum = 0;
    // while (i < 10) { i = i + 1; var t = i; if (i % 2 == 0) { continue; } sum = sum + t; }
    // Record(sum);  // 1 + 3 + 5 + 7 + 9 = 25; `var t` in every iteration needs a fresh scope
    let mut b = Builder::default();
    let cont = b.block(vec![Op::Continue(2)]);
    let body = cat(vec![
        vec![load("i"), n(1.0), call("+", 2), store("i"), Op::Pop],
        vec![local("t"), load("i"), store("t"), Op::Pop],
        vec![load("i"), n(2.0), call("%", 2), n(0.0), call("==", 2), Op::If { then: cont, otherwise: None }],
        vec![load("sum"), load("t"), call("+", 2), store("sum"), Op::Pop],
    ]);
    let w = while_loop(&mut b, vec![load("i"), n(10.0), call("<", 2)], body);
    let main =
        b.block(cat(vec![var("i", 0.0).to_vec(), var("sum", 0.0).to_vec(), vec![w, load("sum")], rec().to_vec()]));
    assert_eq!(run_ok(&b.build(main)), ["25"]);
}

#[test]
fn break_and_continue_counts_cross_nested_blocks() {
    // Outer loop i in 0..3, inner loop j in 0..3; `continue 3` from an if-block nested in a plain
    // block inside the inner loop goes back to the inner loop; `break 3` out of the inner loop
    // when j == 2. Records 10 + i + j for the pairs that reach the end of the inner body (only
    // j == 1 does, once per outer iteration).
    let mut b = Builder::default();
    let brk = b.block(vec![Op::Break(3)]); // if-block, plain block, inner loop
    let cont = b.block(vec![Op::Continue(3)]); // if-block, plain block -> inner loop restarts
    let plain = b.block(vec![
        load("j"),
        n(2.0),
        call("==", 2),
        Op::If { then: brk, otherwise: None },
        load("j"),
        n(0.0),
        call("==", 2),
        Op::If { then: cont, otherwise: None },
    ]);
    // inner: j = j + 1 happens first so that continue does not loop forever.
    let inner_body = vec![
        load("j"),
        n(1.0),
        call("+", 2),
        store("j"),
        Op::Pop,
        // j was incremented: test j-1 semantics by comparing the new value.
        Op::CallBlock(plain),
        load("i"),
        n(10.0),
        call("+", 2),
        load("j"),
        call("+", 2),
        call("Record", 1),
        Op::Pop,
    ];
    // Start j at -1 so the first iteration has j == 0 (continue), then j == 1 (recorded), j == 2 (break).
    let inner = while_loop(&mut b, vec![Op::LoadBool(true)], inner_body);
    let outer_body = cat(vec![
        vec![local("j"), n(-1.0), store("j"), Op::Pop, inner],
        vec![load("i"), n(1.0), call("+", 2), store("i"), Op::Pop],
    ]);
    let outer = while_loop(&mut b, vec![load("i"), n(3.0), call("<", 2)], outer_body);
    let main = b.block(cat(vec![var("i", 0.0).to_vec(), vec![outer]]));
    assert_eq!(run_ok(&b.build(main)), ["11", "12", "13"]);
}

#[test]
fn script_functions_return_values_and_null() {
    // function add3(a, b, c) { return a + b + c; }  function nothing() { }
    let mut b = Builder::default();
    let body = b.block(vec![load("a"), load("b"), call("+", 2), load("c"), call("+", 2), Op::Break(1), Op::LoadNull]);
    b.function("add3", &["a", "b", "c"], body);
    let nothing = b.block(vec![Op::LoadNull]);
    b.function("nothing", &[], nothing);
    let main = b.block(cat(vec![
        vec![n(1.0), n(2.0), n(3.0), call("add3", 3)],
        rec().to_vec(),
        vec![call("nothing", 0)],
        rec().to_vec(),
    ]));
    assert_eq!(run_ok(&b.build(main)), ["6", "null"]);
}

#[test]
fn return_from_nested_blocks_cleans_the_stack() {
    // function f() { var x = 1; while (true) { if (true) { Record(x); return 7; } } }
    // The call is made with a value already on the stack below it (Record(0 + f())).
    let mut b = Builder::default();
    let ret = b.block(cat(vec![vec![load("x")], rec().to_vec(), vec![n(7.0), Op::Break(3)]]));
    let w = b.block(vec![Op::LoadBool(true), Op::If { then: ret, otherwise: None }]);
    let body = b.block(cat(vec![var("x", 1.0).to_vec(), vec![Op::While(w), Op::LoadNull]]));
    b.function("f", &[], body);
    let main = b.block(cat(vec![vec![n(0.0), call("f", 0), call("+", 2)], rec().to_vec()]));
    assert_eq!(run_ok(&b.build(main)), ["1", "7"]);
}

#[test]
fn shadowing_in_nested_blocks() {
    // var x = 1; { var x = 2; Record(x); } Record(x);
    let mut b = Builder::default();
    let inner = b.block(cat(vec![var("x", 2.0).to_vec(), vec![load("x")], rec().to_vec()]));
    let main = b.block(cat(vec![var("x", 1.0).to_vec(), vec![Op::CallBlock(inner), load("x")], rec().to_vec()]));
    assert_eq!(run_ok(&b.build(main)), ["2", "1"]);
}

#[test]
fn main_locals_are_invisible_in_functions() {
    // var y = 1; function g() { return y; } g();
    let mut b = Builder::default();
    let body = b.block(vec![load("y"), Op::Break(1), Op::LoadNull]);
    b.function("g", &[], body);
    let main = b.block(cat(vec![var("y", 1.0).to_vec(), vec![call("g", 0), Op::Pop]]));
    let script = b.build(main);
    let (vm, e) = run_err(&script, config());
    assert_eq!(code(&e), codes::GGE2202);
    assert!(e.hint.as_deref().unwrap_or("").contains("global"), "{:?}", e.hint);
    // The error points at `LoadScope y` and is labelled with the call site.
    assert_eq!(e.span, Some(script.block(body).instructions[0].span));
    assert_eq!(e.labels, vec![(script.block(main).instructions[4].span, "called from here".to_string())]);
    // The state is kept for inspection.
    let stack = vm.call_stack();
    assert_eq!(stack.len(), 2);
    assert_eq!(&*stack[1].function, "g");
    assert_eq!(stack[1].span, e.span);
}

#[test]
fn globals_are_visible_in_functions_and_locals_shadow_them() {
    // global z = 5; function h() { return z; } function k() { var z = 9; return z; }
    // Record(h()); Record(k()); Record(z);
    let mut b = Builder::default();
    let h = b.block(vec![load("z"), Op::Break(1), Op::LoadNull]);
    b.function("h", &[], h);
    let k = b.block(cat(vec![var("z", 9.0).to_vec(), vec![load("z"), Op::Break(1), Op::LoadNull]]));
    b.function("k", &[], k);
    let main = b.block(cat(vec![
        vec![Op::DeclareGlobal("z".into()), n(5.0), Op::StoreGlobal("z".into()), Op::Pop],
        vec![call("h", 0)],
        rec().to_vec(),
        vec![call("k", 0)],
        rec().to_vec(),
        vec![load("z")],
        rec().to_vec(),
    ]));
    assert_eq!(run_ok(&b.build(main)), ["5", "9", "5"]);
}

#[test]
fn function_arguments_are_locals() {
    // function f(a) { a = a + 1; return a; } var a = 1; Record(f(10)); Record(a);
    let mut b = Builder::default();
    let body =
        b.block(vec![load("a"), n(1.0), call("+", 2), store("a"), Op::Pop, load("a"), Op::Break(1), Op::LoadNull]);
    b.function("f", &["a"], body);
    let main = b.block(cat(vec![
        var("a", 1.0).to_vec(),
        vec![n(10.0), call("f", 1)],
        rec().to_vec(),
        vec![load("a")],
        rec().to_vec(),
    ]));
    assert_eq!(run_ok(&b.build(main)), ["11", "1"]);
}

#[test]
fn wrong_argument_count_of_a_script_function() {
    let mut b = Builder::default();
    let body = b.block(vec![Op::LoadNull]);
    b.function("f", &["a", "b"], body);
    let main = b.block(vec![n(1.0), call("f", 1), Op::Pop]);
    let (_, e) = run_err(&b.build(main), config());
    assert_eq!(code(&e), codes::GGE2103);
    assert!(e.message.contains("takes 2 arguments"), "{}", e.message);
}

#[test]
fn read_only_and_redeclaration_errors() {
    let cases: Vec<(Vec<Op>, ErrorCode)> = vec![
        (vec![n(1.0), store("Number"), Op::Pop], codes::GGE2108),
        (vec![n(1.0), store("null"), Op::Pop], codes::GGE2108),
        (vec![n(1.0), Op::StoreGlobal("HeightMap".into()), Op::Pop], codes::GGE2108),
        (vec![Op::DeclareGlobal("Array".into())], codes::GGE2204),
        (vec![Op::DeclareGlobal("null".into())], codes::GGE2204),
        (vec![local("a"), local("a")], codes::GGE2204),
        (vec![Op::DeclareGlobal("g".into()), Op::DeclareGlobal("g".into())], codes::GGE2204),
        (vec![n(1.0), store("undefined"), Op::Pop], codes::GGE2202),
        (vec![n(1.0), Op::StoreGlobal("undefined".into()), Op::Pop], codes::GGE2202),
        (vec![load("Direction"), n(1.0), Op::StoreMember("Vertical".into())], codes::GGE2108),
        (vec![load("Parameters"), n(1.0), Op::StoreMember("RenderScale".into())], codes::GGE2108),
        (vec![n(1.0), n(2.0), call("MakePoint", 2), n(1.0), Op::StoreMember("X".into())], codes::GGE2108),
        (vec![Op::LoadNull, n(1.0), Op::StoreMember("X".into())], codes::GGE2106),
        (vec![Op::LoadNull, member("X")], codes::GGE2106),
        (vec![Op::LoadNull, method("Count", 0)], codes::GGE2106),
        (vec![load("Direction"), member("Diagonal")], codes::GGE2202),
        (vec![n(1.0), call("Undefined", 0)], codes::GGE2201),
        (vec![n(1.0), Op::If { then: BlockId(0), otherwise: None }], codes::GGE2104),
        (vec![n(1.0), Op::Yield("main".into())], codes::GGE2107),
        (vec![Op::Pop], codes::GGE5001),
        (vec![Op::Break(2)], codes::GGE5001),
        (vec![Op::Continue(1)], codes::GGE5001),
        (vec![Op::CallBlock(BlockId(99))], codes::GGE5001),
        (vec![n(1.0), call("Record", 2)], codes::GGE2103),
        (vec![call("Record", 0)], codes::GGE2103),
        (vec![Op::LoadBool(true), n(1.0), call("+", 2)], codes::GGE2102),
    ];
    for (ops, expected) in cases {
        let mut b = Builder::default();
        let main = b.block(ops.clone());
        let (_, e) = run_err(&b.build(main), config());
        assert_eq!(code(&e), expected, "{ops:?}: {}", e.message);
    }
}

#[test]
fn hints_suggest_close_names() {
    let mut b = Builder::default();
    let main = b.block(vec![n(1.0), call("Recrd", 1)]);
    let (_, e) = run_err(&b.build(main), config());
    assert_eq!(e.hint.as_deref(), Some("did you mean `Record`?"));

    let mut b = Builder::default();
    let main = b.block(vec![call("MakeMap", 0), method("Cout", 0)]);
    let (_, e) = run_err(&b.build(main), config());
    assert_eq!(code(&e), codes::GGE2201);
    assert!(e.message.contains("HeightMap"), "{}", e.message);

    let mut b = Builder::default();
    let main = b.block(vec![load("Array"), method("Create", 0), method("Cont", 0)]);
    let (_, e) = run_err(&b.build(main), config());
    assert_eq!(e.hint.as_deref(), Some("did you mean `Count`?"));
}

#[test]
fn methods_static_and_instance() {
    // Record(Array.Create().Count()); Record(Direction.FromNumber(1)); Record(Direction.Vertical);
    let mut b = Builder::default();
    let main = b.block(cat(vec![
        vec![load("Array"), method("Create", 0), method("Count", 0)],
        rec().to_vec(),
        vec![load("Direction"), n(1.0), method("FromNumber", 1)],
        rec().to_vec(),
        vec![load("Direction"), member("Vertical")],
        rec().to_vec(),
        vec![load("Direction"), member("Vertical"), load("Direction"), n(1.0), method("FromNumber", 1), call("==", 2)],
        rec().to_vec(),
    ]));
    assert_eq!(run_ok(&b.build(main)), ["0", "Direction.Vertical", "Direction.Vertical", "true"]);
}

#[test]
fn script_enums_and_points() {
    // enum Color { Red, Green = 5 }  Record(Color.Green); Record(Color.FromNumber(0)); Record(MakePoint(1, 2).Y);
    let mut b = Builder::default();
    b.enums.push(EnumDef {
        name: "Color".into(),
        items: vec![("Red".into(), 0.0), ("Green".into(), 5.0)],
        span: Span::default(),
    });
    let main = b.block(cat(vec![
        vec![load("Color"), member("Green")],
        rec().to_vec(),
        vec![load("Color"), n(0.0), method("FromNumber", 1)],
        rec().to_vec(),
        vec![n(1.0), n(2.0), call("MakePoint", 2), member("Y")],
        rec().to_vec(),
        vec![load("Color")],
        rec().to_vec(),
    ]));
    assert_eq!(run_ok(&b.build(main)), ["Color.Green", "Color.Red", "2", "type Color"]);
}

fn parameter(name: &str, kind: ParameterKind) -> ScriptParameter {
    ScriptParameter { name: name.into(), label: name.into(), description: String::new(), kind, span: Span::default() }
}

#[test]
fn parameters_object() {
    let mut b = Builder::default();
    b.metadata.width = Dimension::Finite { default: None, min: 1, max: 5000 };
    b.metadata.parameters = vec![
        parameter("Flat", ParameterKind::Boolean { default: true }),
        parameter(
            "Size",
            ParameterKind::Number { default: 3.0, min: 0.0, max: 10.0, restriction: Restriction::Integers },
        ),
        parameter(
            "Dir",
            ParameterKind::Enum {
                type_name: "Direction".into(),
                items: vec![("Horizontal".into(), 0.0), ("Vertical".into(), 1.0)],
                default: "Vertical".into(),
            },
        ),
    ];
    let main = b.block(cat(vec![
        vec![load("Parameters"), member("Flat")],
        rec().to_vec(),
        vec![load("Parameters"), member("Size")],
        rec().to_vec(),
        vec![load("Parameters"), member("Dir")],
        rec().to_vec(),
        vec![load("Parameters"), member("MapWidth")],
        rec().to_vec(),
        vec![load("Parameters"), member("RenderWidth")],
        rec().to_vec(),
        vec![load("Parameters"), member("RenderScale")],
        rec().to_vec(),
        vec![load("Parameters"), member("MapHeight")],
        rec().to_vec(),
    ]));
    let script = b.build(main);
    let geometry = MapGeometry { map_width: Some(640), render_width: 320, render_scale: 0.5, ..MapGeometry::default() };
    let config = VmConfig {
        geometry,
        parameters: vec![("Size".into(), ParameterValue::Number(7.0))],
        main_map_mandatory: false,
        ..VmConfig::default()
    };
    let (vm, result) = run_with(&script, config);
    let e = result.expect_err("MapHeight is infinite");
    assert_eq!(messages(&vm), ["true", "7", "Direction.Vertical", "640", "320", "0.5"]);
    assert_eq!(code(&e), codes::GGE2202);
    assert!(e.hint.as_deref().unwrap_or("").contains("infinite"), "{:?}", e.hint);

    // Unknown and mistyped parameters are API misuse.
    let bad = VmConfig { parameters: vec![("Nope".into(), ParameterValue::Number(1.0))], ..config_clone() };
    assert_eq!(Vm::new(script.clone(), library(), bad).unwrap_err().code, codes::GGE4000);
    let bad = VmConfig { parameters: vec![("Flat".into(), ParameterValue::Number(1.0))], ..config_clone() };
    assert_eq!(Vm::new(script, library(), bad).unwrap_err().code, codes::GGE4000);
}

fn config_clone() -> VmConfig {
    config()
}

#[test]
fn yields() {
    let mut b = Builder::default();
    let main =
        b.block(vec![call("MakeMap", 0), Op::Yield("main".into()), call("MakeMap", 0), Op::Yield("other".into())]);
    let script = b.build(main);
    let (vm, result) = run_with(&script, VmConfig::default());
    result.expect("yields");
    let names: Vec<&str> = vm.yielded().iter().map(|(n, _)| &**n).collect();
    assert_eq!(names, ["main", "other"]);
    // Each yield of a map records a yield step over the render rectangle.
    let yields: Vec<_> = vm.env().sequence.steps().iter().filter_map(|s| s.op.as_yield().cloned()).collect();
    assert_eq!(yields.len(), 2);
    assert_eq!(yields[0].name, "main");
    assert_eq!((yields[0].rect.width, yields[0].rect.height), (1000, 1000));

    // With enabled maps, other yields count as yielded but record no step.
    let only_other = VmConfig { enabled_maps: Some(vec!["other".to_string()]), ..VmConfig::default() };
    let (vm, result) = run_with(&script, only_other);
    result.expect("yields");
    assert_eq!(vm.yielded().len(), 2);
    let recorded: Vec<_> =
        vm.env().sequence.steps().iter().filter_map(|s| s.op.as_yield().map(|y| y.name.clone())).collect();
    assert_eq!(recorded, ["other"]);

    // The same name twice.
    let mut b = Builder::default();
    let main = b.block(vec![call("MakeMap", 0), Op::Dup, Op::Yield("main".into()), Op::Yield("main".into())]);
    let (_, e) = run_err(&b.build(main), VmConfig::default());
    assert_eq!(code(&e), codes::GGE2802);

    // "main" missing at the end, only when mandatory.
    let mut b = Builder::default();
    let main = b.block(vec![call("MakeMap", 0), Op::Yield("other".into())]);
    let script = b.build(main);
    let (_, e) = run_err(&script, VmConfig::default());
    assert_eq!(code(&e), codes::GGE2801);
    assert_eq!(e.span, None);
    let (_, result) = run_with(&script, config());
    result.expect("main not mandatory");
}

#[test]
fn endless_loop_stops_at_the_instruction_budget() {
    // while (true) {}
    let mut b = Builder::default();
    let w = while_loop(&mut b, vec![Op::LoadBool(true)], vec![]);
    let main = b.block(vec![w]);
    let limits = Limits { instruction_budget: 10_000, ..Limits::default() };
    let started = std::time::Instant::now();
    let (vm, e) = run_err(&b.build(main), VmConfig { limits, ..config() });
    assert_eq!(code(&e), codes::GGE2505);
    assert_eq!(vm.instructions_executed(), 10_000);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

/// `function f(n) { return f(n + 1); } f(0);`
fn runaway_recursion() -> Arc<CompiledScript> {
    let mut b = Builder::default();
    let body = b.block(vec![load("n"), n(1.0), call("+", 2), call("f", 1), Op::Break(1), Op::LoadNull]);
    b.function("f", &["n"], body);
    let main = b.block(vec![n(0.0), call("f", 1), Op::Pop]);
    b.build(main)
}

#[test]
fn runaway_recursion_stops_at_the_call_depth() {
    let script = runaway_recursion();
    let (vm, e) = run_err(&script, config());
    assert_eq!(code(&e), codes::GGE2501);
    assert_eq!(vm.call_stack().len(), 1000);
    // Found by the hardening review: the recursive call site was labelled "called from here"
    // eight times over. One label per call site, with how often it is on the stack.
    let labels: Vec<&str> = e.labels.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(labels, ["called from here (998 times)", "called from here"]);
    assert_ne!(e.labels[0].0, e.labels[1].0);
    assert!(e.hint.as_deref().unwrap_or("").contains("--max-call-depth"), "{:?}", e.hint);
    drop(vm);
}

/// `function down(n) { if (n == 0) { return 0; } return down(n - 1) + 1; } Record(down(100000));`
#[test]
fn deep_recursion_does_not_use_the_rust_stack() {
    let mut b = Builder::default();
    let base = b.block(vec![n(0.0), Op::Break(2)]);
    let body = b.block(vec![
        load("n"),
        n(0.0),
        call("==", 2),
        Op::If { then: base, otherwise: None },
        load("n"),
        n(1.0),
        call("-", 2),
        call("down", 1),
        n(1.0),
        call("+", 2),
        Op::Break(1),
        Op::LoadNull,
    ]);
    b.function("down", &["n"], body);
    let main = b.block(cat(vec![vec![n(100_000.0), call("down", 1)], rec().to_vec()]));
    let script = b.build(main);
    // A small thread stack proves that the depth lives on the heap.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let limits = Limits { max_call_depth: 200_000, ..Limits::default() };
            let (vm, result) = run_with(&script, VmConfig { limits, ..config() });
            result.map(|()| messages(&vm)).map_err(|e| e.message)
        })
        .unwrap();
    assert_eq!(handle.join().unwrap(), Ok(vec!["100000".to_string()]));
}

#[test]
fn deeply_nested_arrays_drop_without_recursion() {
    // var a = null; var i = 0; while (i < 1000000) { a = Wrap(a); i = i + 1; }
    let mut b = Builder::default();
    let body =
        vec![load("a"), call("Wrap", 1), store("a"), Op::Pop, load("i"), n(1.0), call("+", 2), store("i"), Op::Pop];
    let w = while_loop(&mut b, vec![load("i"), n(1_000_000.0), call("<", 2)], body);
    let main = b.block(cat(vec![vec![local("a")], var("i", 0.0).to_vec(), vec![w]]));
    let script = b.build(main);
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let (vm, result) = run_with(&script, config());
            drop(vm);
            result.is_ok()
        })
        .unwrap();
    assert!(handle.join().unwrap());
}

#[test]
fn block_depth_and_object_stack_limits() {
    // A block that enters itself: the block stack grows until GGE2502.
    let mut b = Builder::default();
    b.block(vec![Op::CallBlock(BlockId(0))]);
    let main = b.block(vec![Op::CallBlock(BlockId(0))]);
    let (vm, e) = run_err(&b.build(main), config());
    assert_eq!(code(&e), codes::GGE2502);
    assert_eq!(vm.code_block_stack(0).len(), 1000);

    let mut b = Builder::default();
    let main = b.block(vec![n(1.0); 10]);
    let limits = Limits { max_object_stack: 5, ..Limits::default() };
    let (vm, e) = run_err(&b.build(main), VmConfig { limits, ..config() });
    assert_eq!(code(&e), codes::GGE2503);
    assert_eq!(vm.object_stack().len(), 5);
}

#[test]
fn stepping_and_inspection() {
    // function f(a) { var b = a; return b; } var x = f(4);
    let mut b = Builder::default();
    let body =
        b.block(cat(vec![vec![local("b"), load("a"), store("b"), Op::Pop, load("b"), Op::Break(1), Op::LoadNull]]));
    b.function("f", &["a"], body);
    let main = b.block(vec![local("x"), n(4.0), call("f", 1), store("x"), Op::Pop]);
    let script = b.build(main);
    let mut vm = Vm::new(script.clone(), library(), config()).unwrap();
    assert_eq!(vm.status(), VmStatus::Ready);
    assert_eq!(vm.current_span(), Some(script.block(main).instructions[0].span));
    // local x, 4, call f: now inside f.
    for _ in 0..3 {
        assert_eq!(vm.step().unwrap(), VmStatus::Running);
    }
    let stack = vm.call_stack();
    assert_eq!(stack.iter().map(|f| &*f.function).collect::<Vec<_>>(), ["<main>", "f"]);
    assert_eq!(stack[0].span, Some(script.block(main).instructions[2].span));
    assert_eq!(stack[1].span, Some(script.block(body).instructions[0].span));
    assert_eq!(vm.code_block_stack(1).len(), 1);
    // Inside f, main's `x` is not visible: the scopes are f's block, then the globals.
    let scopes = vm.scopes();
    assert_eq!(scopes.len(), 2);
    assert_eq!(scopes[0].variables.iter().map(|v| &*v.name).collect::<Vec<_>>(), ["a"]);
    assert_eq!(scopes[1].label, "globals");
    assert!(scopes[1].variables.iter().any(|v| &*v.name == "HeightMap" && v.read_only));
    assert!(vm.object_stack().is_empty());
    let mut steps = 3;
    while vm.step().unwrap() == VmStatus::Running {
        steps += 1;
    }
    assert_eq!(steps + 1, vm.instructions_executed());
    assert_eq!(vm.status(), VmStatus::Finished);
    assert_eq!(vm.current_span(), None);
    assert_eq!(vm.scopes().len(), 1);
    // Stepping a finished VM does nothing.
    assert_eq!(vm.step().unwrap(), VmStatus::Finished);
}

#[test]
fn a_faulted_vm_keeps_its_state_and_error() {
    let mut b = Builder::default();
    let main = b.block(vec![n(1.0), n(2.0), load("nope")]);
    let script = b.build(main);
    let mut vm = Vm::new(script.clone(), library(), config()).unwrap();
    let e = vm.run().unwrap_err();
    assert_eq!(code(&e), codes::GGE2202);
    assert_eq!(e.span, Some(script.block(main).instructions[2].span));
    assert_eq!(vm.object_stack().len(), 2);
    assert_eq!(vm.current_span(), e.span);
    assert_eq!(vm.fault(), Some(&e));
    assert_eq!(vm.step().unwrap_err(), e);
}

#[test]
fn describe_values() {
    let mut b = Builder::default();
    let main = b.block(cat(vec![
        vec![Op::LoadString("a\"b".into())],
        rec().to_vec(),
        vec![n(1.5)],
        rec().to_vec(),
        vec![Op::LoadNull, call("Wrap", 1), call("Wrap", 1), call("Wrap", 1)],
        rec().to_vec(),
    ]));
    let out = run_ok(&b.build(main));
    assert_eq!(out[0], "\"a\\\"b\"");
    assert_eq!(out[1], "1.5");
    assert!(out[2].starts_with("Array#3 {0: Array#2 {0: Array#1 [1 item]}}"), "{}", out[2]);
}

#[test]
fn call_sites_resolve_again_for_receivers_of_another_type() {
    // function g(x) { return x.FromNumber(1); }  Record(g(Direction)); Record(g(Color));
    // function c(x) { return x.Count(); }  Record(c(Array.Create())); c(1);
    let mut b = Builder::default();
    b.enums.push(EnumDef { name: "Color".into(), items: vec![("Red".into(), 1.0)], span: Span::default() });
    let g = b.block(vec![load("x"), n(1.0), method("FromNumber", 1), Op::Break(1), Op::LoadNull]);
    b.function("g", &["x"], g);
    let c = b.block(vec![load("x"), method("Count", 0), Op::Break(1), Op::LoadNull]);
    b.function("c", &["x"], c);
    let main = b.block(cat(vec![
        vec![load("Direction"), call("g", 1)],
        rec().to_vec(),
        vec![load("Color"), call("g", 1)],
        rec().to_vec(),
        vec![load("Array"), method("Create", 0), call("c", 1)],
        rec().to_vec(),
        vec![n(1.0), call("c", 1), Op::Pop],
    ]));
    let (vm, e) = run_err(&b.build(main), config());
    assert_eq!(messages(&vm), ["Direction.Vertical", "Color.Red", "0"]);
    assert_eq!(code(&e), codes::GGE2201);
    assert!(e.message.contains("Number"), "{}", e.message);
}
