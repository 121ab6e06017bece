//! Human descriptions of values for debugging output (a debugger's variable view, VM dumps).
//!
//! Unlike `Print` formatting (the standard library's business), a description always says what
//! kind of thing a value is and never fails: arrays are shown to a limited depth and length, and
//! shared objects carry their identity (`Array#3`) so that aliases are visible.

use std::fmt::Write;

use crate::types::TypeRegistry;
use crate::value::{Coordinate, Reference, Value};

/// Nested arrays deeper than this are shown as `Array#n [k items]`.
const MAX_DEPTH: usize = 2;
/// Arrays longer than this show their first items and `...`.
const MAX_ITEMS: usize = 8;

/// A one-line description of a value, e.g. `3`, `"abc"`, `@0.5`, `[1, @0.5]`,
/// `Direction.Vertical`, `type HeightMap`, `Array#2 {0: 1, 1: "a"}`.
pub fn describe_value(value: &Value, types: &TypeRegistry) -> String {
    let mut out = String::new();
    describe_into(&mut out, value, types, 0);
    out
}

fn describe_into(out: &mut String, value: &Value, types: &TypeRegistry, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&describe_number(*n)),
        Value::String(s) => {
            let _ = write!(out, "{:?}", &**s);
        }
        Value::Coordinate(c) => out.push_str(&describe_coordinate(*c)),
        Value::Point(p) => {
            let _ = write!(out, "[{}, {}]", describe_coordinate(p.x), describe_coordinate(p.y));
        }
        Value::Enum(e) => {
            let info = types.get(e.ty);
            let item = info.enum_items().and_then(|items| items.iter().find(|(_, v)| *v == e.value));
            match item {
                Some((name, _)) => {
                    let _ = write!(out, "{}.{}", info.name(), name);
                }
                None => {
                    let _ = write!(out, "{}({})", info.name(), describe_number(e.value));
                }
            }
        }
        Value::Type(id) => {
            let _ = write!(out, "type {}", types.get(*id).name());
        }
        Value::Array(a) => {
            let items = a.items.borrow();
            let _ = write!(out, "Array#{}", a.id.0);
            if depth >= MAX_DEPTH {
                let _ = write!(out, " [{} item{}]", items.len(), if items.len() == 1 { "" } else { "s" });
                return;
            }
            out.push_str(" {");
            for (i, (k, v)) in items.iter().enumerate() {
                if i == MAX_ITEMS {
                    let _ = write!(out, ", ... {} more", items.len() - MAX_ITEMS);
                    break;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                describe_into(out, k, types, depth + 1);
                out.push_str(": ");
                describe_into(out, v, types, depth + 1);
            }
            out.push('}');
        }
        Value::RandomSequence2D(r) => match r.try_borrow() {
            Ok(r) => {
                let _ = write!(out, "RandomSequence2D#{} (current {})", r.id.0, r.current);
            }
            Err(_) => out.push_str("RandomSequence2D (in use)"),
        },
        Value::HeightMap(m) => {
            let _ = write!(out, "HeightMap#{} (slot {})", m.id.0, m.slot);
        }
        Value::HeightProfile(m) => {
            let _ = write!(out, "HeightProfile#{} (slot {})", m.id.0, m.slot);
        }
        Value::Reference(r) => match &**r {
            Reference::Variable { name, .. } => {
                let _ = write!(out, "<reference to `{name}`>");
            }
            Reference::ArrayItem { array, key } => {
                let _ = write!(out, "<reference to Array#{}[", array.id.0);
                describe_into(out, key, types, MAX_DEPTH);
                out.push_str("]>");
            }
        },
    }
}

/// Integers without a fractional part (`3`, not `3.0`); others in Rust's shortest round-trip form.
pub fn describe_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

fn describe_coordinate(c: Coordinate) -> String {
    if c.relative {
        format!("@{}", describe_number(c.value))
    } else {
        describe_number(c.value)
    }
}
