//! Script values.
//!
//! Immutable values (null, Boolean, Number, String, Coordinate, Point, enum items, type objects) are
//! plain data. Mutable objects (Array, RandomSequence2D) and map handles are shared references:
//! `var b = a;` makes `b` alias `a`, as in the original. Every shared object has an [`ObjectId`],
//! given in creation order, so that ordering objects "by identity" is deterministic.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::rc::Rc;
use std::sync::Arc;

use crate::array::Array;
use crate::heap::{Charge, Heap};
use crate::types::{TypeId, TypeRegistry};

/// Names of variables, members and functions. `Arc` because compiled code is shared across threads.
pub type Name = Arc<str>;

/// An object's identity within one VM run, increasing in creation order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub u64);

#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(ScriptString),
    Coordinate(Coordinate),
    Point(Point),
    /// An item of a built-in (`Direction`) or script enum.
    Enum(EnumValue),
    /// The static object of a type, bound to a global of the type's name (`HeightMap`, `Array`,
    /// `Direction`, `Parameters`, a script enum...). Member calls on it call static methods.
    Type(TypeId),
    Array(ArrayRef),
    RandomSequence2D(Rc<RefCell<RandomSequence2D>>),
    /// A script-side handle to a height map; its pixels live in the renderer (see `MapHandle`).
    HeightMap(Rc<MapHandle>),
    HeightProfile(Rc<MapHandle>),
    /// Internal: a writable place, produced for `++`, `--` and `op=`.
    Reference(Rc<Reference>),
}

/// A String value: immutable and shared. A literal shares the compiled script's text (loading
/// it copies nothing); a string the script builds (a concatenation) is counted on the script heap
/// while it lives.
#[derive(Clone)]
pub struct ScriptString(StringRepr);

#[derive(Clone)]
enum StringRepr {
    Literal(Arc<str>),
    Built(Rc<BuiltString>),
}

struct BuiltString {
    text: Box<str>,
    _charge: Option<Charge>,
}

impl ScriptString {
    /// A literal of the compiled script.
    pub fn literal(text: Arc<str>) -> ScriptString {
        ScriptString(StringRepr::Literal(text))
    }

    /// A string built while running, charged to `heap` (GGE2508 when it does not fit).
    pub fn built(text: String, heap: &Heap) -> Result<ScriptString, crate::RuntimeError> {
        let charge = heap.hold(Self::footprint(text.len()))?;
        Ok(ScriptString(StringRepr::Built(Rc::new(BuiltString { text: text.into_boxed_str(), _charge: Some(charge) }))))
    }

    /// A string from outside a run (a host or a test), not counted anywhere.
    pub fn uncounted(text: &str) -> ScriptString {
        ScriptString(StringRepr::Built(Rc::new(BuiltString { text: Box::from(text), _charge: None })))
    }

    /// The bytes a built string of `len` bytes holds: its text, the shared header and the
    /// allocator's bookkeeping of the two allocations.
    pub fn footprint(len: usize) -> u64 {
        const OVERHEAD: usize = std::mem::size_of::<BuiltString>() + 2 * std::mem::size_of::<usize>() + 32;
        (len + OVERHEAD) as u64
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            StringRepr::Literal(text) => text,
            StringRepr::Built(built) => &built.text,
        }
    }
}

impl std::ops::Deref for ScriptString {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for ScriptString {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for ScriptString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for ScriptString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for ScriptString {
    fn eq(&self, other: &ScriptString) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ScriptString {}

impl PartialOrd for ScriptString {
    fn partial_cmp(&self, other: &ScriptString) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ScriptString {
    fn cmp(&self, other: &ScriptString) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for ScriptString {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for ScriptString {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ScriptString {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A Number that may be relative to the map size (`@0.5`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Coordinate {
    pub value: f64,
    pub relative: bool,
}

impl Coordinate {
    pub fn absolute(value: f64) -> Coordinate {
        Coordinate { value, relative: false }
    }
    pub fn relative(value: f64) -> Coordinate {
        Coordinate { value, relative: true }
    }
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Point {
    pub x: Coordinate,
    pub y: Coordinate,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct EnumValue {
    pub ty: TypeId,
    /// Always an integer.
    pub value: f64,
}

pub type ArrayRef = Rc<ArrayObject>;

/// An array with its identity.
#[derive(Debug)]
pub struct ArrayObject {
    pub id: ObjectId,
    pub items: RefCell<Array>,
}

impl Drop for ArrayObject {
    /// Drops nested arrays from the outside in, with an explicit worklist: a script can nest arrays
    /// a million deep (`a = {a};` in a loop), and the default recursive drop would overflow the
    /// Rust stack.
    fn drop(&mut self) {
        let mut pending: Vec<ArrayRef> = Vec::new();
        collect_arrays(self.items.get_mut(), &mut pending);
        while let Some(array) = pending.pop() {
            // Only arrays this drop owns alone are emptied; shared ones stay intact.
            if let Ok(mut owned) = Rc::try_unwrap(array) {
                collect_arrays(owned.items.get_mut(), &mut pending);
            }
        }
    }
}

fn collect_arrays(array: &mut Array, pending: &mut Vec<ArrayRef>) {
    if array.is_empty() {
        return;
    }
    for (key, value) in array.take_pairs() {
        for v in [key, value] {
            if let Value::Array(a) = v {
                pending.push(a);
            }
        }
    }
}

/// `RandomSequence2D`: a stateless per-point field selected by `current`, advanced by MT19937.
#[derive(Debug)]
pub struct RandomSequence2D {
    pub id: ObjectId,
    pub generator: geogen_random::Mt19937,
    pub current: u32,
    /// Its bytes on the script heap (the generator's state is 2.5 KB); `None` outside a run.
    pub charge: Option<Charge>,
}

impl RandomSequence2D {
    /// The bytes one sequence holds, with its shared header.
    pub const FOOTPRINT: u64 = (std::mem::size_of::<RefCell<RandomSequence2D>>() + 32) as u64;
}

/// A script-side HeightMap or HeightProfile. The handle names a renderer object slot; in-place
/// methods record steps that write the same slot, so aliases see each other's changes.
#[derive(Debug)]
pub struct MapHandle {
    pub id: ObjectId,
    pub slot: u32,
}

/// A variable scope: one code block's locals, or the globals.
pub type ScopeRef = Rc<RefCell<Scope>>;

#[derive(Debug, Default)]
pub struct Scope {
    pub vars: indexmap::IndexMap<Name, Variable>,
}

#[derive(Clone, Debug)]
pub struct Variable {
    pub value: Value,
    pub read_only: bool,
}

/// A writable place.
#[derive(Debug)]
pub enum Reference {
    Variable { scope: ScopeRef, name: Name },
    ArrayItem { array: ArrayRef, key: Value },
}

impl Reference {
    /// The current value of the place. A missing array key is GGE2602.
    pub fn get(&self) -> Result<Value, crate::RuntimeError> {
        match self {
            Reference::Variable { scope, name } => scope
                .borrow()
                .vars
                .get(name)
                .map(|v| v.value.clone())
                .ok_or_else(|| crate::RuntimeError::undefined_variable(name)),
            Reference::ArrayItem { array, key } => array.items.borrow().get(key).cloned().ok_or_else(|| {
                crate::RuntimeError::new(geogen_diag::codes::GGE2602, "the array has no such key".to_string())
            }),
        }
    }

    /// Stores a value into the place. Read-only variables give GGE2108.
    pub fn set(&self, value: Value) -> Result<(), crate::RuntimeError> {
        match self {
            Reference::Variable { scope, name } => {
                let mut scope = scope.borrow_mut();
                let var = scope.vars.get_mut(name).ok_or_else(|| crate::RuntimeError::undefined_variable(name))?;
                if var.read_only {
                    return Err(crate::RuntimeError::read_only(name));
                }
                var.value = value;
                Ok(())
            }
            Reference::ArrayItem { array, key } => array.items.borrow_mut().set(key.clone(), value),
        }
    }
}

impl Value {
    pub fn number(n: f64) -> Value {
        Value::Number(n)
    }

    /// A String value not counted on any script heap (for hosts and tests).
    pub fn string(s: &str) -> Value {
        Value::String(ScriptString::uncounted(s))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type name used in messages and for ordering values of different types.
    pub fn type_name<'a>(&self, types: &'a TypeRegistry) -> &'a str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "Boolean",
            Value::Number(_) => "Number",
            Value::String(_) => "String",
            Value::Coordinate(_) => "Coordinate",
            Value::Point(_) => "Point",
            Value::Enum(e) => types.get(e.ty).name(),
            Value::Type(_) => "Type",
            Value::Array(_) => "Array",
            Value::RandomSequence2D(_) => "RandomSequence2D",
            Value::HeightMap(_) => "HeightMap",
            Value::HeightProfile(_) => "HeightProfile",
            Value::Reference(_) => "<Reference>",
        }
    }

    /// The identity of a shared object, if this is one.
    pub fn object_id(&self) -> Option<ObjectId> {
        match self {
            Value::Array(a) => Some(a.id),
            Value::RandomSequence2D(r) => Some(r.borrow().id),
            Value::HeightMap(m) | Value::HeightProfile(m) => Some(m.id),
            _ => None,
        }
    }

    /// `==` of the language: values of different types are never equal; primitives, coordinates
    /// (value only, the relative flag is ignored), points (both values and both flags) and enum items
    /// (same enum, same value) compare by value; type objects by type; objects by identity.
    pub fn script_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Coordinate(a), Value::Coordinate(b)) => a.value == b.value,
            (Value::Point(a), Value::Point(b)) => a == b,
            (Value::Enum(a), Value::Enum(b)) => a.ty == b.ty && a.value == b.value,
            (Value::Type(a), Value::Type(b)) => a == b,
            (Value::Reference(a), Value::Reference(b)) => Rc::ptr_eq(a, b),
            _ => match (self.object_id(), other.object_id()) {
                (Some(a), Some(b)) => a == b && self.type_rank() == other.type_rank(),
                _ => false,
            },
        }
    }

    /// The total order used by array keys and `SortByValues`: values of different types are ordered
    /// by type name; within a type by value (numbers, strings, booleans false < true, coordinates,
    /// points by x then y, enum items) or by identity (objects, in creation order).
    pub fn total_cmp(&self, other: &Value, types: &TypeRegistry) -> Ordering {
        let (ta, tb) = (self.type_name(types), other.type_name(types));
        if ta != tb {
            return ta.cmp(tb);
        }
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Number(a), Value::Number(b)) => a.total_cmp(b),
            (Value::String(a), Value::String(b)) => a.cmp(b),
            (Value::Coordinate(a), Value::Coordinate(b)) => a.value.total_cmp(&b.value),
            (Value::Point(a), Value::Point(b)) => {
                a.x.value
                    .total_cmp(&b.x.value)
                    .then(a.y.value.total_cmp(&b.y.value))
                    .then(a.x.relative.cmp(&b.x.relative))
                    .then(a.y.relative.cmp(&b.y.relative))
            }
            (Value::Enum(a), Value::Enum(b)) => a.value.total_cmp(&b.value),
            (Value::Type(a), Value::Type(b)) => a.0.cmp(&b.0),
            _ => self.object_id().cmp(&other.object_id()),
        }
    }

    fn type_rank(&self) -> u8 {
        match self {
            Value::HeightMap(_) => 1,
            Value::HeightProfile(_) => 2,
            Value::Array(_) => 3,
            Value::RandomSequence2D(_) => 4,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_strings_count_while_alive_and_literals_not_at_all() {
        let heap = Heap::new(1 << 20);
        let text = ScriptString::built("x".repeat(1000), &heap).unwrap();
        assert_eq!(heap.used(), ScriptString::footprint(1000));
        let shared = text.clone();
        drop(text);
        assert_eq!(heap.used(), ScriptString::footprint(1000), "still alive through the clone");
        assert_eq!(shared.len(), 1000);
        drop(shared);
        assert_eq!(heap.used(), 0);
        let literal = ScriptString::literal(Arc::from("abc"));
        assert_eq!((heap.used(), &*literal), (0, "abc"));
        assert_eq!(literal, ScriptString::uncounted("abc"));
        let error = ScriptString::built("x".repeat(2 << 20), &heap).unwrap_err();
        assert_eq!(error.code, geogen_diag::codes::GGE2508);
    }
}
