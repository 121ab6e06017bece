//! A harness for unit tests: the built-in types, an environment, and calls of natives by name,
//! with the arity check the VM does before each call.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use geogen_diag::{ErrorCode, Span};
use geogen_vm::types::BUILTIN_TYPE_NAMES;
use geogen_vm::value::{Reference, Value};
use geogen_vm::value::{Scope, ScopeRef, Variable};
use geogen_vm::{
    Args, Coordinate, Ctx, Env, Library, Limits, MapGeometry, Name, Native, Point, RuntimeError, TypeId, TypeInfo,
    TypeKind, TypeMethods, TypeRegistry,
};

pub struct Harness {
    pub types: TypeRegistry,
    pub env: Env,
    pub lib: Library,
}

/// The built-in types with their fixed ids; `Direction` is an enum (Horizontal 0, Vertical 1).
pub fn builtin_types() -> TypeRegistry {
    let mut types = TypeRegistry::new();
    for (i, name) in BUILTIN_TYPE_NAMES.iter().enumerate() {
        let kind = if i as u32 == TypeId::DIRECTION.0 {
            TypeKind::Enum { items: vec![(Name::from("Horizontal"), 0.0), (Name::from("Vertical"), 1.0)] }
        } else if i as u32 == TypeId::PARAMETERS.0 {
            TypeKind::Parameters
        } else {
            TypeKind::Builtin
        };
        let id = types.add(TypeInfo { name: Name::from(*name), kind, methods: Arc::new(TypeMethods::default()) });
        assert_eq!(id.0, i as u32);
    }
    types
}

impl Harness {
    /// Seed 0, an infinite map.
    pub fn new() -> Harness {
        Harness::with(0, MapGeometry::default())
    }

    pub fn with(seed: u32, geometry: MapGeometry) -> Harness {
        let mut lib = crate::core_library();
        lib.extend(&crate::test_library());
        Harness {
            types: builtin_types(),
            env: Env::new(seed, geometry, Limits::default()).expect("scale 1 is valid"),
            lib,
        }
    }

    /// A finite map of `w` × `h`.
    pub fn finite(w: u32, h: u32) -> Harness {
        Harness::with(0, MapGeometry { map_width: Some(w), map_height: Some(h), ..MapGeometry::default() })
    }

    /// Adds a script enum and returns its id.
    pub fn add_enum(&mut self, name: &str, items: &[(&str, f64)]) -> TypeId {
        let items = items.iter().map(|(n, v)| (Name::from(*n), *v)).collect();
        self.types.add(TypeInfo {
            name: Name::from(name),
            kind: TypeKind::Enum { items },
            methods: Arc::new(TypeMethods::default()),
        })
    }

    fn run(&mut self, native: Native, this: &Value, values: &[Value]) -> Result<Value, RuntimeError> {
        native.check_arity(values.len())?;
        let args = Args { native: &native, this, values, types: &self.types };
        let mut ctx = Ctx { types: &self.types, env: &mut self.env, span: Span::new(3, 7) };
        (native.f)(&mut ctx, &args)
    }

    /// A global function or operator.
    pub fn call(&mut self, name: &str, values: &[Value]) -> Result<Value, RuntimeError> {
        let native = *self.lib.globals.get(name).unwrap_or_else(|| panic!("no global `{name}`"));
        self.run(native, &Value::Null, values)
    }

    /// A static method, `Type.name(values)`.
    pub fn call_static(&mut self, ty: &str, name: &str, values: &[Value]) -> Result<Value, RuntimeError> {
        let methods = self.lib.types.get(ty).unwrap_or_else(|| panic!("no type `{ty}`")).clone();
        let native = *methods.static_methods.get(name).unwrap_or_else(|| panic!("no static `{ty}.{name}`"));
        let this = Value::Type(self.types.by_name(ty).unwrap_or(TypeId::NULL));
        self.run(native, &this, values)
    }

    /// The static method every enum has, on the enum `ty`.
    pub fn call_enum_static(&mut self, ty: TypeId, name: &str, values: &[Value]) -> Result<Value, RuntimeError> {
        let native = *self.lib.enum_methods.static_methods.get(name).unwrap_or_else(|| panic!("no enum `{name}`"));
        self.run(native, &Value::Type(ty), values)
    }

    /// An instance method of `this` (looked up by its type name).
    pub fn call_method(&mut self, this: &Value, name: &str, values: &[Value]) -> Result<Value, RuntimeError> {
        let ty = this.type_name(&self.types).to_string();
        let methods = self.lib.types.get(ty.as_str()).unwrap_or_else(|| panic!("no type `{ty}`")).clone();
        let native = *methods.instance_methods.get(name).unwrap_or_else(|| panic!("no method `{ty}.{name}`"));
        self.run(native, this, values)
    }

    /// The code of a call's error (panics if the call succeeded).
    pub fn err(&mut self, name: &str, values: &[Value]) -> ErrorCode {
        match self.call(name, values) {
            Ok(v) => panic!("`{name}` succeeded with {v:?}"),
            Err(e) => e.code,
        }
    }

    /// A new array from (key, value) pairs (through `Array.Empty` and `[]=`).
    pub fn array(&mut self, pairs: &[(Value, Value)]) -> Value {
        let a = self.call_static("Array", "Empty", &[]).unwrap();
        for (k, v) in pairs {
            self.call_method(&a, "[]=", &[k.clone(), v.clone()]).unwrap();
        }
        a
    }

    /// A new array of pushed-back values.
    pub fn list(&mut self, values: &[Value]) -> Value {
        let a = self.call_static("Array", "Empty", &[]).unwrap();
        for v in values {
            self.call_method(&a, "PushBack", &[v.clone()]).unwrap();
        }
        a
    }
}

pub fn num(x: f64) -> Value {
    Value::Number(x)
}

pub fn s(text: &str) -> Value {
    Value::string(text)
}

pub fn abs_c(x: f64) -> Coordinate {
    Coordinate::absolute(x)
}

pub fn rel_c(x: f64) -> Coordinate {
    Coordinate::relative(x)
}

pub fn point(x: Coordinate, y: Coordinate) -> Value {
    Value::Point(Point { x, y })
}

/// A variable `name` holding `value` in a fresh scope, and a reference to it.
pub fn variable(value: Value) -> (ScopeRef, Value) {
    variable_with(value, false)
}

pub fn variable_with(value: Value, read_only: bool) -> (ScopeRef, Value) {
    let scope: ScopeRef = Rc::new(RefCell::new(Scope::default()));
    scope.borrow_mut().vars.insert(Name::from("v"), Variable { value, read_only });
    let r = Value::Reference(Rc::new(Reference::Variable { scope: scope.clone(), name: Name::from("v") }));
    (scope, r)
}

pub fn read(scope: &ScopeRef) -> Value {
    scope.borrow().vars.get("v").unwrap().value.clone()
}

/// The Number in a value (panics otherwise).
pub fn as_num(v: &Value) -> f64 {
    match v {
        Value::Number(x) => *x,
        other => panic!("expected a Number, got {other:?}"),
    }
}

/// `(key, value)` pairs of an array, formatted, in insertion order.
pub fn pairs(v: &Value) -> Vec<(String, String)> {
    match v {
        Value::Array(a) => {
            a.items.borrow().iter().map(|(k, v)| (crate::format_value(k), crate::format_value(v))).collect()
        }
        other => panic!("expected an Array, got {other:?}"),
    }
}

/// Asserts that `actual` rounds to `expected` at 6 significant digits (as the reference prints).
pub fn assert_6(actual: f64, expected: &str) {
    assert_eq!(crate::format_number(actual), expected, "{actual}");
}
