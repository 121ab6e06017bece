//! The one JSON form of a script's info, read by `geogen info --json` and by the studio's
//! parameters panel: name, description, author, size per dimension, parameters and maps.

use geogen_compile::metadata::{Dimension, ParameterKind, ScriptParameter};
use serde_json::{json, Value};

use crate::ScriptInfo;

/// A number as JSON: whole numbers (below 2^53) as integers, so `3` does not print as `3.0`.
pub fn json_number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

fn dimension_json(d: &Dimension) -> Value {
    match d {
        Dimension::Infinite => json!({ "finite": false }),
        Dimension::Finite { default, min, max } => {
            json!({ "finite": true, "default": default, "min": min, "max": max })
        }
    }
}

/// Name, label, description, type, then `kind` ("boolean", "number" or "enum") and what that
/// kind declares.
fn parameter_json(p: &ScriptParameter) -> Value {
    let mut object = json!({
        "name": &*p.name,
        "label": p.label,
        "description": p.description,
        "type": p.kind.type_name(),
    });
    let extra = match &p.kind {
        ParameterKind::Boolean { default } => json!({ "kind": "boolean", "default": default }),
        ParameterKind::Number { default, min, max, restriction } => json!({
            "kind": "number", "default": json_number(*default), "min": json_number(*min), "max": json_number(*max),
            "restriction": restriction.name(),
        }),
        ParameterKind::Enum { items, default, .. } => json!({
            "kind": "enum", "default": &**default,
            "items": items.iter().map(|(name, value)| json!({ "name": &**name, "value": json_number(*value) })).collect::<Vec<_>>(),
        }),
    };
    if let (Value::Object(target), Value::Object(source)) = (&mut object, extra) {
        target.extend(source);
    }
    object
}

impl ScriptInfo {
    /// What `geogen info --json` prints: name, description, dimensions, parameters and maps.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.metadata.name,
            "description": self.metadata.description,
            "author": self.metadata.author,
            "width": dimension_json(&self.metadata.width),
            "height": dimension_json(&self.metadata.height),
            "parameters": self.metadata.parameters.iter().map(parameter_json).collect::<Vec<_>>(),
            "maps": self.maps,
        })
    }
}
