//! The interface between the VM and native (Rust) functions: operators, the core library, and
//! (later) the map operations.
//!
//! A native declares its name, a human signature, its arity and a function. The VM checks the
//! arity (GGE2103) before calling; the function checks types with the [`Args`] accessors, which
//! report GGE2101 (functions) or GGE2102 (operators) with the signature in the hint.

use std::cell::RefCell;
use std::rc::Rc;

use geogen_diag::{codes, Span};

use crate::array::Array;
use crate::env::Env;
use crate::types::{TypeId, TypeRegistry};
use crate::value::{ArrayObject, ArrayRef, Coordinate, EnumValue, Point, Value};
use crate::RuntimeError;

pub type NativeFn = fn(&mut Ctx<'_>, &Args<'_>) -> Result<Value, RuntimeError>;

/// The human signature of a native, for messages: written out, or generated from a declaration
/// (the map operations declare their parameters once and derive the text from them).
#[derive(Copy, Clone)]
pub enum SignatureText {
    Written(&'static str),
    Generated(fn() -> String),
}

#[derive(Copy, Clone)]
pub struct Native {
    /// The name scripts call (`Sin`, `PushBack`, `+`, `[]=`).
    pub name: &'static str,
    /// For messages: `Min(Number a, Number b, ...)`; see [`Native::signature`].
    pub signature_text: SignatureText,
    pub min_args: usize,
    /// `None` for variadic functions.
    pub max_args: Option<usize>,
    /// Operators report wrong operand types as GGE2102 instead of GGE2101.
    pub operator: bool,
    pub f: NativeFn,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Native({})", self.signature())
    }
}

impl Native {
    pub const fn function(
        name: &'static str,
        signature: &'static str,
        min_args: usize,
        max_args: Option<usize>,
        f: NativeFn,
    ) -> Native {
        Native { name, signature_text: SignatureText::Written(signature), min_args, max_args, operator: false, f }
    }

    /// A function whose signature text is generated (by a declared operation).
    pub const fn declared(
        name: &'static str,
        signature: fn() -> String,
        min_args: usize,
        max_args: Option<usize>,
        f: NativeFn,
    ) -> Native {
        Native { name, signature_text: SignatureText::Generated(signature), min_args, max_args, operator: false, f }
    }

    pub const fn operator(name: &'static str, signature: &'static str, arity: usize, f: NativeFn) -> Native {
        Native {
            name,
            signature_text: SignatureText::Written(signature),
            min_args: arity,
            max_args: Some(arity),
            operator: true,
            f,
        }
    }

    /// The human signature, e.g. `Min(Number a, Number b, ...)`.
    pub fn signature(&self) -> std::borrow::Cow<'static, str> {
        match self.signature_text {
            SignatureText::Written(text) => std::borrow::Cow::Borrowed(text),
            SignatureText::Generated(make) => std::borrow::Cow::Owned(make()),
        }
    }

    /// GGE2103 if `count` arguments do not fit this native.
    pub fn check_arity(&self, count: usize) -> Result<(), RuntimeError> {
        let too_many = self.max_args.is_some_and(|max| count > max);
        if count < self.min_args || too_many {
            let expected = match self.max_args {
                Some(max) if max == self.min_args => format!("{max}"),
                Some(max) => format!("{} to {}", self.min_args, max),
                None => format!("at least {}", self.min_args),
            };
            return Err(RuntimeError::new(
                codes::GGE2103,
                format!(
                    "`{}` takes {} argument{}, but {} {} given",
                    self.name,
                    expected,
                    plural(&expected),
                    count,
                    if count == 1 { "was" } else { "were" }
                ),
            )
            .with_hint(format!("call it as {}", self.signature())));
        }
        Ok(())
    }
}

/// "argument" or "arguments" after `expected` ("1", "2", "at least 1", "1 to 3"): the last number decides.
fn plural(expected: &str) -> &'static str {
    if expected == "1" || expected.ends_with(" 1") {
        ""
    } else {
        "s"
    }
}

/// What a native sees of the VM while it runs.
pub struct Ctx<'a> {
    pub types: &'a TypeRegistry,
    pub env: &'a mut Env,
    /// The source location of the call, for messages and recorded steps.
    pub span: Span,
}

impl Ctx<'_> {
    /// An empty array counted on the script heap, to fill and then share with [`Ctx::new_array`].
    pub fn array(&self) -> Result<Array, RuntimeError> {
        Array::counted(&self.env.heap)
    }

    /// Shares an array as a new object, counting it on the script heap if it is not yet.
    pub fn new_array(&mut self, mut array: Array) -> Result<ArrayRef, RuntimeError> {
        array.count_on(&self.env.heap)?;
        Ok(Rc::new(ArrayObject { id: self.env.new_object_id(), items: RefCell::new(array) }))
    }

    /// A String value built by the script, counted on the script heap.
    pub fn new_string(&self, text: String) -> Result<Value, RuntimeError> {
        Ok(Value::String(crate::value::ScriptString::built(text, &self.env.heap)?))
    }

    pub fn type_name(&self, value: &Value) -> String {
        value.type_name(self.types).to_string()
    }
}

/// The arguments of one call: `this` (the instance or type object for methods, `Null` for global
/// functions) and the values in source order.
pub struct Args<'a> {
    pub native: &'a Native,
    pub this: &'a Value,
    pub values: &'a [Value],
    pub types: &'a TypeRegistry,
}

impl<'a> Args<'a> {
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&'a Value> {
        self.values.get(i)
    }

    /// The argument, which the arity check guarantees exists.
    pub fn value(&self, i: usize) -> Result<&'a Value, RuntimeError> {
        self.values
            .get(i)
            .ok_or_else(|| RuntimeError::internal(format!("`{}` read a missing argument {}", self.native.name, i + 1)))
    }

    /// GGE2101/GGE2102: argument `i` should have been `expected`.
    pub fn type_error(&self, i: usize, expected: &str) -> RuntimeError {
        let actual = self.values.get(i).map(|v| v.type_name(self.types)).unwrap_or("nothing");
        let (code, what) = if self.native.operator {
            (codes::GGE2102, format!("operand {} of `{}`", i + 1, self.native.name))
        } else {
            (codes::GGE2101, format!("argument {} of `{}`", i + 1, self.native.name))
        };
        RuntimeError::new(code, format!("{what} must be {}, not {}", article(expected), article(actual)))
            .with_hint(format!("expected {}", self.native.signature()))
            .at_argument(i)
    }

    pub fn number(&self, i: usize) -> Result<f64, RuntimeError> {
        match self.value(i)? {
            Value::Number(n) => Ok(*n),
            _ => Err(self.type_error(i, "Number")),
        }
    }

    pub fn opt_number(&self, i: usize, default: f64) -> Result<f64, RuntimeError> {
        if i < self.values.len() {
            self.number(i)
        } else {
            Ok(default)
        }
    }

    pub fn boolean(&self, i: usize) -> Result<bool, RuntimeError> {
        match self.value(i)? {
            Value::Bool(b) => Ok(*b),
            _ => Err(self.type_error(i, "Boolean")),
        }
    }

    pub fn string(&self, i: usize) -> Result<&'a str, RuntimeError> {
        match self.value(i)? {
            Value::String(s) => Ok(s),
            _ => Err(self.type_error(i, "String")),
        }
    }

    /// A Coordinate, or a Number converted implicitly to an absolute Coordinate.
    pub fn coordinate(&self, i: usize) -> Result<Coordinate, RuntimeError> {
        match self.value(i)? {
            Value::Coordinate(c) => Ok(*c),
            Value::Number(n) => Ok(Coordinate::absolute(*n)),
            _ => Err(self.type_error(i, "Coordinate")),
        }
    }

    pub fn point(&self, i: usize) -> Result<Point, RuntimeError> {
        match self.value(i)? {
            Value::Point(p) => Ok(*p),
            _ => Err(self.type_error(i, "Point")),
        }
    }

    pub fn array(&self, i: usize) -> Result<&'a ArrayRef, RuntimeError> {
        match self.value(i)? {
            Value::Array(a) => Ok(a),
            _ => Err(self.type_error(i, "Array")),
        }
    }

    /// An item of the enum `ty` (for example `TypeId::DIRECTION`).
    pub fn enum_of(&self, i: usize, ty: TypeId) -> Result<EnumValue, RuntimeError> {
        match self.value(i)? {
            Value::Enum(e) if e.ty == ty => Ok(*e),
            _ => Err(self.type_error(i, self.types.get(ty).name())),
        }
    }

    /// An item of any enum.
    pub fn any_enum(&self, i: usize) -> Result<EnumValue, RuntimeError> {
        match self.value(i)? {
            Value::Enum(e) => Ok(*e),
            _ => Err(self.type_error(i, "enum")),
        }
    }
}

fn article(type_name: &str) -> String {
    match type_name.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U' | 'a' | 'e' | 'i' | 'o' | 'u') => format!("an {type_name}"),
        Some(_) if type_name == "null" || type_name == "nothing" => type_name.to_string(),
        _ => format!("a {type_name}"),
    }
}
