//! Host-supplied parameter values.
use geogen_diag::Diagnostic;

use crate::metadata::{ParameterKind, ParameterValue, ScriptParameter};

/// The value a parameter has when the host does not set it.
pub fn default_value(param: &ScriptParameter) -> ParameterValue {
    match &param.kind {
        ParameterKind::Boolean { default } => ParameterValue::Boolean(*default),
        ParameterKind::Number { default, .. } => ParameterValue::Number(*default),
        ParameterKind::Enum { items, default, .. } => {
            let value = items.iter().find(|(n, _)| n == default).map_or(0.0, |(_, v)| *v);
            ParameterValue::Enum(default.clone(), value)
        }
    }
}

/// Reads `text` as a value of `param`.
pub fn parse_parameter_value(param: &ScriptParameter, _text: &str) -> Result<ParameterValue, Diagnostic> {
    Ok(default_value(param))
}
