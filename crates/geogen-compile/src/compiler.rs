//! The compiler driver: declaration checks, lowering of `<main>` and every function, metadata.

use std::collections::HashMap;

use geogen_diag::{codes, Diagnostic, Diagnostics, Span};
use geogen_syntax::ast::{EnumDecl, Item, Script};

use crate::ir::{CompiledScript, EnumDef, Name, ScriptFunction};
use crate::lower::Lowerer;
use crate::metadata::ScriptMetadata;
use crate::options::CompileOptions;
use crate::validate_metadata::validate_metadata;

/// The name of the implicit function formed by the top-level statements.
pub const MAIN_FUNCTION: &str = "<main>";

/// The enum name the language reserves (GGE1311).
const RESERVED_TYPE_NAME: &str = "Type";

/// Compiles a script's syntax tree.
///
/// Returns every compile error found (not only the first), sorted by position. Syntax errors
/// are the parser's business: `ExprKind::Error`/`StmtKind::Error` nodes are skipped silently.
pub fn compile(script: &Script, options: &CompileOptions) -> Result<CompiledScript, Diagnostics> {
    let mut diagnostics = Diagnostics::new();

    let enums = check_enums(script, options, &mut diagnostics);
    check_functions(script, options, &mut diagnostics);

    let mut lowerer = Lowerer::new(&mut diagnostics);
    let end = script_end(script);
    let main = lowerer.lower_function_body(script.statements(), false, end);

    let mut functions = indexmap::IndexMap::new();
    for function in script.functions() {
        let body = lowerer.lower_function_body(&function.body.stmts, true, Span::at(function.body.span.end));
        let function_name = Name::from(function.name.name.as_str());
        // A redefinition was reported by `check_functions`; the first definition wins.
        functions.entry(function_name.clone()).or_insert_with(|| ScriptFunction {
            name: function_name,
            params: function.params.iter().map(|p| Name::from(p.name.as_str())).collect(),
            body,
            span: function.span,
        });
    }
    let blocks = std::mem::take(&mut lowerer.blocks);
    let map_names = std::mem::take(&mut lowerer.map_names);

    if options.main_map_mandatory && !map_names.iter().any(|n| &**n == "main") {
        diagnostics.push(
            Diagnostic::at(codes::GGE1312, Span::at(0), "the script never yields the main map")
                .with_hint("add `yield map;` (or `yield map as \"main\";`) for the map to render by default"),
        );
    }

    let metadata = match script.metadata() {
        Some(metadata) => validate_metadata(metadata, &enums, &mut diagnostics),
        None => ScriptMetadata::default(),
    };

    if !diagnostics.is_empty() {
        diagnostics.sort_by_key(|d| (d.span.map_or(0, |s| s.start), d.code));
        return Err(diagnostics);
    }
    Ok(CompiledScript { blocks, main, functions, enums, metadata, map_names })
}

/// Where the implicit `LoadNull` of `<main>` points: the end of the last item.
fn script_end(script: &Script) -> Span {
    let end = script
        .items
        .iter()
        .map(|item| match item {
            Item::Metadata(m) => m.span.end,
            Item::Enum(e) => e.span.end,
            Item::Function(f) => f.span.end,
            Item::Stmt(s) => s.span.end,
        })
        .max()
        .unwrap_or(0);
    Span::at(end)
}

/// GGE1306: a script function named like a native function or another script function.
///
/// Also GGE1306, by our choice: two parameters of one function with the same name. The original
/// declared each parameter as a local on every call, so the script failed with GGE2204 only when
/// the function was called; the mistake is certain at compile time, so we report it then.
fn check_functions(script: &Script, options: &CompileOptions, diagnostics: &mut Diagnostics) {
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for function in script.functions() {
        for (i, param) in function.params.iter().enumerate() {
            if let Some(first) = function.params[..i].iter().find(|p| p.name == param.name) {
                diagnostics.push(
                    Diagnostic::at(
                        codes::GGE1306,
                        param.span,
                        format!("function `{}` has two parameters named `{}`", function.name.name, param.name),
                    )
                    .with_label(first.span, "first defined here")
                    .with_hint("give each parameter its own name"),
                );
            }
        }
        let ident = &function.name;
        if options.native_functions.contains(&ident.name) {
            diagnostics.push(
                Diagnostic::at(
                    codes::GGE1306,
                    ident.span,
                    format!("function `{}` is already defined by the standard library", ident.name),
                )
                .with_hint("choose another name for the script function"),
            );
        } else if let Some(first) = seen.get(ident.name.as_str()) {
            diagnostics.push(
                Diagnostic::at(codes::GGE1306, ident.span, format!("function `{}` is defined twice", ident.name))
                    .with_label(*first, "first defined here")
                    .with_hint("rename or remove one of the definitions"),
            );
        } else {
            seen.insert(&ident.name, ident.span);
        }
    }
}

/// GGE1308 to GGE1311, and the item values (explicit, or the previous one + 1, the first 0).
/// Returns the enums in source order, the valid ones only once per name.
fn check_enums(script: &Script, options: &CompileOptions, diagnostics: &mut Diagnostics) -> Vec<EnumDef> {
    let mut seen: HashMap<&str, Span> = HashMap::new();
    let mut enums = Vec::new();
    for decl in script.enums() {
        let ident = &decl.name;
        if ident.name == RESERVED_TYPE_NAME {
            diagnostics.push(
                Diagnostic::at(codes::GGE1311, ident.span, "`Type` is a reserved name and cannot name an enum")
                    .with_hint("choose another name for the enum"),
            );
        } else if options.native_types.contains(&ident.name) {
            diagnostics.push(
                Diagnostic::at(
                    codes::GGE1308,
                    ident.span,
                    format!("enum `{}` has the name of a built-in type", ident.name),
                )
                .with_hint("choose another name for the enum"),
            );
        } else if let Some(first) = seen.get(ident.name.as_str()) {
            diagnostics.push(
                Diagnostic::at(codes::GGE1308, ident.span, format!("enum `{}` is defined twice", ident.name))
                    .with_label(*first, "first defined here")
                    .with_hint("rename or remove one of the definitions"),
            );
        } else {
            seen.insert(&ident.name, ident.span);
            enums.push(enum_items(decl, diagnostics));
            continue;
        }
        // Still check the items of a misnamed enum.
        enum_items(decl, diagnostics);
    }
    enums
}

fn enum_items(decl: &EnumDecl, diagnostics: &mut Diagnostics) -> EnumDef {
    let mut items: Vec<(Name, f64)> = Vec::new();
    let mut spans: HashMap<&str, Span> = HashMap::new();
    let mut next = 0.0;
    for item in &decl.items {
        let value = match item.value {
            Some((value, span)) => {
                if value.fract() != 0.0 || !value.is_finite() {
                    diagnostics.push(
                        Diagnostic::at(
                            codes::GGE1310,
                            span,
                            format!("the value of enum item `{}` must be an integer, not {value}", item.name.name),
                        )
                        .with_hint("enum values are whole numbers such as 0, 1, 10"),
                    );
                }
                value
            }
            None => next,
        };
        next = value.floor() + 1.0;
        if let Some(first) = spans.get(item.name.name.as_str()) {
            diagnostics.push(
                Diagnostic::at(
                    codes::GGE1309,
                    item.name.span,
                    format!("enum `{}` has two items named `{}`", decl.name.name, item.name.name),
                )
                .with_label(*first, "first defined here"),
            );
            continue;
        }
        spans.insert(&item.name.name, item.name.span);
        items.push((Name::from(item.name.name.as_str()), value));
    }
    EnumDef { name: Name::from(decl.name.name.as_str()), items, span: decl.span }
}
