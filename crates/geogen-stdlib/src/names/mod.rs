//! `Names`: Lodestone names and map labels in scripts (docs/lodestone.md).
//!
//! ```text
//! var rivers = Names.Load("rivers");                 // a rule file given with --rules rivers=FILE
//! var realm = Names.FromText("<realm> => Arvland | Kest;\n<river> => River of <$realm>;");
//! var name = Names.Generate(rivers, "<river>", {"length": 12});
//! Names.PlaceLabel(@[0.3, 0.4], name, "river");
//! ```
//!
//! A rule set is a String of rules: `FromText` checks one and gives it back, `Load` gives the text
//! of a rule file the host named (scripts cannot open files). `Generate` is seeded from the script
//! seed: its n-th call with the same rules and start uses the generator
//! `name_seed(script seed, rules, start, n)`, so names do not depend on other names asked for
//! in between. The one-time values (`<$n>`) of a rule set are shared by all its names in one run,
//! so a realm name stays the same across labels; they are expanded on the first `Generate`,
//! from `one_time_seed(script seed, rules)`.
//!
//! All the work of `Generate` is charged to the script's instruction budget (GGE2505 when it runs
//! out): every step of the rules and every instruction of their embedded code, which is compiled
//! once per rule set.

pub mod code;

use std::collections::HashMap;
use std::sync::Arc;

use geogen_diag::{codes, Diagnostic, SourceFile};
use geogen_lodestone::{Budget, Executor, Limits as NameLimits, Memo, Mode, RuleSet, Seeded, Value as LValue};
use geogen_vm::value::ScriptString;
use geogen_vm::{Args, Ctx, Label, Library, Native, RuntimeError, Value};

use crate::coordinates::resolve_point;

pub(crate) fn register(lib: &mut Library) {
    for native in [FROM_TEXT, LOAD, GENERATE, PLACE_LABEL] {
        lib.add_static("Names", native);
    }
}

const FROM_TEXT: Native = Native::function("FromText", "Names.FromText(String rules)", 1, Some(1), from_text);
const LOAD: Native = Native::function("Load", "Names.Load(String name)", 1, Some(1), load);
const GENERATE: Native = Native::function(
    "Generate",
    "Names.Generate(String rules, String start = first rule, Array variables = {})",
    1,
    Some(3),
    generate,
);
const PLACE_LABEL: Native = Native::function(
    "PlaceLabel",
    "Names.PlaceLabel(Point at, String text, String kind = \"label\")",
    2,
    Some(3),
    place_label,
);

/// The rule sets a run has used, by text.
#[derive(Default)]
struct NamesState {
    sets: HashMap<Arc<str>, RuleSetState>,
}

struct RuleSetState {
    rules: Arc<RuleSet>,
    /// Its embedded code, each piece compiled once.
    code: code::ScriptCode,
    memo: Memo,
    prepassed: bool,
    /// Names generated so far per start.
    counts: HashMap<String, u32>,
}

/// A rule set of this run, parsed on first use.
fn rule_set<'s>(state: &'s mut NamesState, text: &str) -> Result<&'s mut RuleSetState, RuntimeError> {
    if !state.sets.contains_key(text) {
        let file = Arc::new(SourceFile::new("rules", text));
        let rules = geogen_lodestone::parse(Arc::clone(&file), Mode::Extended).map_err(|diagnostics| {
            let more = diagnostics.total().saturating_sub(1);
            let mut error = rules_error(&diagnostics[0], &file);
            if more > 0 {
                error.message.push_str(&format!(" (and {more} more error{})", if more == 1 { "" } else { "s" }));
            }
            error
        })?;
        let key: Arc<str> = Arc::from(text);
        state.sets.insert(
            Arc::clone(&key),
            RuleSetState {
                rules: Arc::new(rules),
                code: code::ScriptCode::default(),
                memo: Memo::new(),
                prepassed: false,
                counts: HashMap::new(),
            },
        );
    }
    state.sets.get_mut(text).ok_or_else(|| RuntimeError::internal("rule set vanished"))
}

/// A Lodestone diagnostic as a script error: its code, and its line and column in the rules.
fn rules_error(d: &Diagnostic, file: &SourceFile) -> RuntimeError {
    let at = d.span.map(|s| file.line_col(s.start));
    let message = match at {
        Some(lc) => format!("in the rules, line {}, column {}: {}", lc.line, lc.column, d.message),
        None => format!("in the rules: {}", d.message),
    };
    let error = RuntimeError::new(d.code, message);
    match &d.hint {
        Some(hint) => error.with_hint(hint.clone()),
        None => error,
    }
}

fn from_text(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let text = args.string(0)?;
    ctx.env.spend(text.len() as u64 / 16 + 1)?;
    rule_set(ctx.env.extensions.get_or_default::<NamesState>(), text)?;
    Ok(args.value(0)?.clone())
}

fn load(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let name = args.string(0)?;
    let found = ctx.env.named_texts.iter().find(|(n, _)| n == name).map(|(_, text)| Arc::clone(text));
    match found {
        Some(text) => Ok(Value::String(ScriptString::literal(text))),
        None => {
            let known: Vec<&str> = ctx.env.named_texts.iter().map(|(n, _)| n.as_str()).collect();
            let hint = if known.is_empty() {
                format!("give the rule file on the command line: --rules {name}=FILE")
            } else {
                format!("the rule sets given are {}; add --rules {name}=FILE", known.join(", "))
            };
            Err(RuntimeError::new(codes::GGE7311, format!("no rule set named \"{name}\" was given")).with_hint(hint))
        }
    }
}

/// The variables of a `Generate` call: an array of name → Number, Boolean, String or null.
fn variables(ctx: &Ctx<'_>, args: &Args<'_>) -> Result<Vec<(String, LValue)>, RuntimeError> {
    let Some(value) = args.get(2) else { return Ok(Vec::new()) };
    if value.is_null() {
        return Ok(Vec::new());
    }
    let array = args.array(2)?;
    let items = array.items.borrow();
    let mut vars: Vec<(String, LValue)> = Vec::new();
    for (key, value) in items.iter() {
        let Value::String(name) = key else {
            return Err(RuntimeError::new(
                codes::GGE7313,
                format!("a variable for the rules is named by {}, not a String", ctx.type_name(key)),
            )
            .with_hint("pass variables as {\"height\": 0.8, \"kind\": \"river\"}"));
        };
        check_variable_name(name).map_err(|why| RuntimeError::new(codes::GGE7313, why))?;
        let value = code::from_script(value, ctx, &format!("the variable `{name}`"))
            .map_err(|e| RuntimeError::new(codes::GGE7313, e.message))?;
        vars.push((name.to_string(), value));
    }
    Ok(vars)
}

/// A variable passed to embedded code must be a GeoGen Script identifier that is not taken by
/// the code's own names (`PI`, `E`, the helpers) or a keyword.
pub fn check_variable_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let identifier = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Err(format!("`{name}` cannot name a variable: use letters, digits and `_`, not starting with a digit"));
    }
    let (tokens, _) = geogen_syntax::lexer::lex(name);
    let keyword = !matches!(tokens.first().map(|t| &t.kind), Some(geogen_syntax::lexer::TokenKind::Ident(_)));
    let library = code::code_library();
    let taken = code::RESERVED_NAMES.contains(&name)
        || name.starts_with("__")
        || library.globals.contains_key(name)
        || geogen_compile::CORE_TYPE_NAMES.contains(&name);
    if keyword || taken {
        return Err(format!("`{name}` is taken by the code's own names; choose another"));
    }
    Ok(())
}

fn generate(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let text = args.string(0)?;
    let start = match args.get(1) {
        Some(Value::Null) | None => None,
        Some(_) => Some(geogen_lodestone::start_name(args.string(1)?)),
    };
    let vars = variables(ctx, args)?;
    let seed = ctx.env.script_seed;
    let limits = NameLimits::default();
    // The rules may do what is left of the script's budget; it is charged below.
    let mut budget = Budget::new(ctx.env.limits.instruction_budget.saturating_sub(ctx.env.spent()));
    let state = ctx.env.extensions.get_or_default::<NamesState>();
    let set = rule_set(state, text)?;
    let rules = Arc::clone(&set.rules);
    let start = match start {
        Some(start) => start,
        None => rules.first_rule().unwrap_or_default().to_string(),
    };
    let file = Arc::clone(rules.source());
    let generated = generate_name(set, &rules, &start, seed, &limits, &vars, &mut budget);
    ctx.env.spend(budget.spent())?;
    let name = generated.map_err(|d| rules_error(&d, &file))?;
    ctx.new_string(name)
}

/// The next name of `start`, after the shared pre-pass on the first call.
fn generate_name(
    set: &mut RuleSetState,
    rules: &RuleSet,
    start: &str,
    seed: u32,
    limits: &NameLimits,
    vars: &[(String, LValue)],
    budget: &mut Budget,
) -> Result<String, Diagnostic> {
    if !set.prepassed {
        let mut random = Seeded::new(geogen_lodestone::one_time_seed(seed, rules));
        Executor::new(rules, limits, &mut set.code, vars, &mut set.memo, &mut random).with_budget(budget).prepass()?;
        set.prepassed = true;
    }
    let count = set.counts.entry(start.to_string()).or_insert(0);
    let index = *count;
    *count = count.saturating_add(1);
    let mut random = Seeded::new(geogen_lodestone::name_seed(seed, rules, start, index));
    Executor::new(rules, limits, &mut set.code, vars, &mut set.memo, &mut random).with_budget(budget).generate(start)
}

fn place_label(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let point = args.point(0)?;
    let text = args.string(1)?.to_string();
    let kind = match args.get(2) {
        Some(_) => args.string(2)?.to_string(),
        None => "label".to_string(),
    };
    let (x, y) = resolve_point(point, &ctx.env.geometry)?;
    let label = Label { x: f64::from(x), y: f64::from(y), text, kind, location: ctx.env.location(ctx.span) };
    ctx.env.heap.charge(label.footprint())?;
    ctx.env.labels.push(label);
    Ok(Value::Null)
}
