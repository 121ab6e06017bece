//! What the editor completes and shows on hover: the core library's natives, with the summaries
//! of the operation registry (the same source as docs/library.md), and what the parameters panel
//! needs from a script.

use std::sync::OnceLock;

use geogen::Script;
use geogen_stdlib::operation::Receiver;
use serde_json::{json, Value};

/// `[{label, kind, owner, detail, info}]`: keywords, global functions, types, their static
/// methods (`owner` the type) and instance methods (`owner` "." : completed after any dot).
pub(crate) fn completions() -> &'static Value {
    static LIST: OnceLock<Value> = OnceLock::new();
    LIST.get_or_init(build)
}

fn summary(owner: &str, name: &str, method: bool) -> Option<&'static str> {
    geogen_stdlib::operation::all()
        .find(|e| {
            let s = e.signature;
            s.owner.type_name() == owner && s.name == name && (s.receiver == Receiver::Method) == method
        })
        .map(|e| e.signature.summary)
}

fn build() -> Value {
    let library = geogen_stdlib::core_library();
    let mut out = Vec::new();
    for keyword in geogen_syntax::lexer::TokenKind::keywords() {
        out.push(json!({ "label": keyword, "kind": "keyword", "owner": null, "detail": null, "info": null }));
    }
    for (name, native) in &library.globals {
        if !name.starts_with(|c: char| c.is_alphabetic()) {
            continue; // operators
        }
        out.push(
            json!({ "label": &**name, "kind": "function", "owner": null, "detail": native.signature(), "info": null }),
        );
    }
    for (type_name, methods) in &library.types {
        out.push(json!({ "label": &**type_name, "kind": "type", "owner": null, "detail": null, "info": null }));
        for (name, native) in &methods.static_methods {
            out.push(json!({
                "label": &**name, "kind": "function", "owner": &**type_name,
                "detail": native.signature(), "info": summary(type_name, name, false),
            }));
        }
        for (name, native) in &methods.instance_methods {
            if !name.starts_with(|c: char| c.is_alphabetic()) {
                continue;
            }
            out.push(json!({
                "label": &**name, "kind": "method", "owner": ".",
                "detail": native.signature(), "info": summary(type_name, name, true),
            }));
        }
    }
    Value::Array(out)
}

/// Name, size per dimension, parameters and maps, as `geogen info --json` gives them.
pub(crate) fn info_json(script: &Script) -> Value {
    script.info().to_json()
}
