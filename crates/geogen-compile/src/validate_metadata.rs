//! Metadata validation (reference §2.1, §2.2): the `metadata { ... }` block to [`ScriptMetadata`],
//! with the original's error codes and these fixes:
//! - a reserved parameter name (GGE1405) says that it is reserved (the original printed the
//!   "type cannot be inferred" text);
//! - a Number parameter whose Min, Max and Default are inconsistent (Min > Max, Default outside
//!   [Min, Max], or a value the Restriction would change) is a compile error, GGE1414, instead of
//!   the original's GGE4000 when the host built the parameters.
//!
//! Unknown keys are ignored (but their collections are still checked for duplicate keys).

use geogen_diag::{codes, Diagnostic, Diagnostics, ErrorCode, Span};
use geogen_syntax::ast::{Ident, MetaValue, MetaValueKind, Metadata};

use crate::ir::{EnumDef, Name};
use crate::metadata::{
    Dimension, ParameterKind, Restriction, ScriptMetadata, ScriptParameter, DIRECTION_ITEMS, MAP_SIZE_MAX,
    MAP_SIZE_MIN, RESERVED_PARAMETER_NAMES,
};

/// The defaults of a Number parameter's range.
const NUMBER_DEFAULT: f64 = 0.0;
const NUMBER_MIN: f64 = 0.0;
const NUMBER_MAX: f64 = 100.0;

pub(crate) fn validate_metadata(
    metadata: &Metadata,
    enums: &[EnumDef],
    diagnostics: &mut Diagnostics,
) -> ScriptMetadata {
    let mut v = Validator { enums, diagnostics };
    v.check_duplicate_keys(&metadata.root);
    let entries = match &metadata.root.kind {
        MetaValueKind::KeyValue(entries) => entries,
        MetaValueKind::Error => return ScriptMetadata::default(),
        _ => {
            v.error(
                Diagnostic::at(
                    codes::GGE1201,
                    metadata.root.span,
                    "metadata must be a collection of `Key: value` pairs",
                )
                .with_hint("write `metadata { Name: \"My map\", Width: Finite }`"),
            );
            return ScriptMetadata::default();
        }
    };
    let root = Collection(entries);
    ScriptMetadata {
        name: v.string(root.get("Name"), "Name"),
        description: v.string(root.get("Description"), "Description"),
        author: v.string(root.get("Author"), "Author"),
        width: v.dimension(root.get("Width"), "Width", codes::GGE1408),
        height: v.dimension(root.get("Height"), "Height", codes::GGE1409),
        parameters: v.parameters(root.get("Parameters")),
    }
}

/// A key-value collection; with duplicate keys (reported separately) the first one counts.
#[derive(Copy, Clone)]
struct Collection<'a>(&'a [(Ident, MetaValue)]);

impl<'a> Collection<'a> {
    fn get(self, key: &str) -> Option<&'a MetaValue> {
        self.0.iter().find(|(k, _)| k.name == key).map(|(_, v)| v)
    }
}

fn node_type(value: &MetaValue) -> &'static str {
    match value.kind {
        MetaValueKind::Number(_) => "a number",
        MetaValueKind::String(_) => "a string",
        MetaValueKind::Bool(_) => "a Boolean",
        MetaValueKind::Ident(_) => "an identifier",
        MetaValueKind::List(_) => "a list",
        MetaValueKind::KeyValue(_) => "a key-value collection",
        MetaValueKind::Error => "invalid",
    }
}

/// Formats a metadata number the way it was most likely written.
fn number(n: f64) -> String {
    format!("{n}")
}

struct Validator<'a> {
    enums: &'a [EnumDef],
    diagnostics: &'a mut Diagnostics,
}

/// One attribute of a parameter that was read (or its default), with where it was written.
#[derive(Copy, Clone)]
struct Bound {
    value: f64,
    /// `None` when the attribute was absent and the default applies.
    span: Option<Span>,
}

impl Bound {
    fn describe(self, attribute: &str) -> String {
        match self.span {
            Some(_) => format!("{attribute} {}", number(self.value)),
            None => format!("{attribute} {} (the default)", number(self.value)),
        }
    }
}

impl Validator<'_> {
    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// GGE1401 in every key-value collection of the tree.
    fn check_duplicate_keys(&mut self, value: &MetaValue) {
        match &value.kind {
            MetaValueKind::KeyValue(entries) => {
                for (i, (key, child)) in entries.iter().enumerate() {
                    if let Some((first, _)) = entries[..i].iter().find(|(k, _)| k.name == key.name) {
                        self.error(
                            Diagnostic::at(codes::GGE1401, key.span, format!("the key `{}` appears twice", key.name))
                                .with_label(first.span, "first defined here")
                                .with_hint("remove or rename one of them"),
                        );
                    }
                    self.check_duplicate_keys(child);
                }
            }
            MetaValueKind::List(items) => items.iter().for_each(|item| self.check_duplicate_keys(item)),
            _ => {}
        }
    }

    fn wrong_type(&mut self, value: &MetaValue, what: &str, expected: &str) {
        if matches!(value.kind, MetaValueKind::Error) {
            return;
        }
        self.error(Diagnostic::at(
            codes::GGE1406,
            value.span,
            format!("{what} must be {expected}, not {}", node_type(value)),
        ));
    }

    fn string(&mut self, value: Option<&MetaValue>, key: &str) -> Option<String> {
        let value = value?;
        match &value.kind {
            MetaValueKind::String(s) => Some(s.clone()),
            _ => {
                self.wrong_type(value, &format!("`{key}`"), "a string");
                None
            }
        }
    }

    // ----- Width / Height -------------------------------------------------------------------

    fn dimension(&mut self, value: Option<&MetaValue>, key: &str, wrong_node: ErrorCode) -> Dimension {
        let Some(value) = value else { return Dimension::Infinite };
        match &value.kind {
            MetaValueKind::Ident(id) if id == "Infinite" => Dimension::Infinite,
            MetaValueKind::Ident(id) if id == "Finite" => {
                Dimension::Finite { default: None, min: MAP_SIZE_MIN, max: MAP_SIZE_MAX }
            }
            MetaValueKind::Ident(id) => {
                self.error(
                    Diagnostic::at(codes::GGE1410, value.span, format!("`{key}: {id}` names nothing")).with_hint(
                        format!("write `{key}: Finite`, `{key}: Infinite` or `{key}: {{ Min: 100, Max: 5000 }}`"),
                    ),
                );
                Dimension::Infinite
            }
            MetaValueKind::KeyValue(entries) => {
                let sizes = Collection(entries);
                let default = self.map_size(sizes.get("Default"), key, "Default");
                let min = self.map_size(sizes.get("Min"), key, "Min");
                let max = self.map_size(sizes.get("Max"), key, "Max");
                if let (Some((lo, lo_span)), Some((hi, hi_span))) = (min, max) {
                    if lo > hi {
                        self.error(
                            Diagnostic::at(
                                codes::GGE1412,
                                lo_span,
                                format!("`{key}` has Min {lo} greater than its Max {hi}"),
                            )
                            .with_label(hi_span, "Max is here"),
                        );
                    }
                }
                Dimension::Finite {
                    default: default.map(|(d, _)| d),
                    min: min.map_or(MAP_SIZE_MIN, |(m, _)| m),
                    max: max.map_or(MAP_SIZE_MAX, |(m, _)| m),
                }
            }
            MetaValueKind::Error => Dimension::Infinite,
            _ => {
                self.error(
                    Diagnostic::at(
                        wrong_node,
                        value.span,
                        format!("`{key}` must be Finite, Infinite or a key-value collection, not {}", node_type(value)),
                    )
                    .with_hint(format!("write `{key}: Finite` or `{key}: {{ Default: 1000, Min: 100, Max: 5000 }}`")),
                );
                Dimension::Infinite
            }
        }
    }

    /// A `Width`/`Height` `Default`, `Min` or `Max`: an integer in [1, 2^32 − 3].
    fn map_size(&mut self, value: Option<&MetaValue>, key: &str, attribute: &str) -> Option<(u32, Span)> {
        let value = value?;
        let MetaValueKind::Number(n) = value.kind else {
            self.wrong_type(value, &format!("`{key}` {attribute}"), "a number");
            return None;
        };
        if n.fract() != 0.0 || n < MAP_SIZE_MIN as f64 || n > MAP_SIZE_MAX as f64 {
            self.error(
                Diagnostic::at(
                    codes::GGE1411,
                    value.span,
                    format!("`{key}` {attribute} {} is not a valid map size", number(n)),
                )
                .with_hint(format!("map sizes are whole numbers from {MAP_SIZE_MIN} to {MAP_SIZE_MAX}")),
            );
            return None;
        }
        Some((n as u32, value.span))
    }

    // ----- Parameters -----------------------------------------------------------------------

    fn parameters(&mut self, value: Option<&MetaValue>) -> Vec<ScriptParameter> {
        let Some(value) = value else { return Vec::new() };
        let entries = match &value.kind {
            MetaValueKind::KeyValue(entries) => entries,
            MetaValueKind::Error => return Vec::new(),
            _ => {
                self.error(
                    Diagnostic::at(
                        codes::GGE1402,
                        value.span,
                        format!("`Parameters` must be a key-value collection, not {}", node_type(value)),
                    )
                    .with_hint("write `Parameters: { Size: { Type: Number, Default: 10 } }`"),
                );
                return Vec::new();
            }
        };
        let mut parameters: Vec<ScriptParameter> = Vec::new();
        for (key, definition) in entries {
            if parameters.iter().any(|p| *p.name == key.name) {
                continue; // GGE1401 already
            }
            if let Some(parameter) = self.parameter(key, definition) {
                parameters.push(parameter);
            }
        }
        parameters
    }

    fn parameter(&mut self, key: &Ident, definition: &MetaValue) -> Option<ScriptParameter> {
        let name = key.name.as_str();
        let attributes = match &definition.kind {
            MetaValueKind::KeyValue(entries) => Collection(entries),
            MetaValueKind::Error => return None,
            _ => {
                self.error(
                    Diagnostic::at(
                        codes::GGE1403,
                        definition.span,
                        format!(
                            "parameter `{name}` must be defined by a key-value collection, not {}",
                            node_type(definition)
                        ),
                    )
                    .with_hint(format!("write `{name}: {{ Type: Number, Default: 10 }}`")),
                );
                return None;
            }
        };
        if RESERVED_PARAMETER_NAMES.contains(&name) {
            self.error(
                Diagnostic::at(codes::GGE1405, key.span, format!("`{name}` is a reserved parameter name")).with_hint(
                    format!("`Parameters.{name}` already describes the map or render; rename the parameter"),
                ),
            );
            return None;
        }

        let mut ok = true;
        let label = match attributes.get("Label") {
            Some(value) => self.string(Some(value), &format!("the Label of `{name}`")),
            None => Some(name.to_string()),
        };
        let description = match attributes.get("Description") {
            Some(value) => self.string(Some(value), &format!("the Description of `{name}`")),
            None => Some(String::new()),
        };
        ok &= label.is_some() && description.is_some();

        let type_value = attributes.get("Type");
        let type_name = match type_value.map(|v| &v.kind) {
            None => None,
            Some(MetaValueKind::Ident(t)) => Some(t.as_str()),
            Some(_) => {
                if let Some(v) = type_value {
                    self.wrong_type(v, &format!("the Type of `{name}`"), "an identifier (Boolean, Number or an enum)");
                }
                return None;
            }
        };
        let default = attributes.get("Default");
        if let Some(d) = default {
            if !matches!(
                d.kind,
                MetaValueKind::Bool(_) | MetaValueKind::Number(_) | MetaValueKind::Ident(_) | MetaValueKind::Error
            ) {
                self.wrong_type(d, &format!("the Default of `{name}`"), "a Boolean, a number or an enum item");
                ok = false;
            }
        }
        let min = self.number_attribute(attributes.get("Min"), name, "Min", &mut ok);
        let max = self.number_attribute(attributes.get("Max"), name, "Max", &mut ok);
        let restriction = match attributes.get("Restriction") {
            None => None,
            Some(value) => match &value.kind {
                MetaValueKind::Ident(r) => match Restriction::from_name(r) {
                    Some(restriction) => Some((restriction, value.span)),
                    None => {
                        self.error(
                            Diagnostic::at(codes::GGE1407, value.span, format!("unknown restriction `{r}`"))
                                .with_hint("use Unrestricted, Integers, PowersOf2 or PowersOf10"),
                        );
                        ok = false;
                        None
                    }
                },
                _ => {
                    self.wrong_type(value, &format!("the Restriction of `{name}`"), "an identifier");
                    ok = false;
                    None
                }
            },
        };

        if !ok {
            return None;
        }
        // The type: written, or inferred from the Default, or Number when a range is given.
        let inferred = match (type_name, default.map(|d| &d.kind)) {
            (Some(t), _) => t,
            (None, Some(MetaValueKind::Bool(_))) => "Boolean",
            (None, Some(MetaValueKind::Number(_))) => "Number",
            (None, _) if min.is_some() || max.is_some() || attributes.get("Restriction").is_some() => "Number",
            (None, _) => {
                self.error(
                    Diagnostic::at(
                        codes::GGE1405,
                        key.span,
                        format!("the type of parameter `{name}` cannot be inferred"),
                    )
                    .with_hint(
                        "add `Type: Number`, `Type: Boolean` or `Type: <an enum>`, or a Boolean or number Default",
                    ),
                );
                return None;
            }
        };

        let kind = match inferred {
            "Boolean" => {
                let value = match default.map(|d| &d.kind) {
                    None | Some(MetaValueKind::Error) => false,
                    Some(MetaValueKind::Bool(b)) => *b,
                    Some(_) => {
                        if let Some(d) = default {
                            self.wrong_type(d, &format!("the Default of Boolean parameter `{name}`"), "true or false");
                        }
                        return None;
                    }
                };
                ParameterKind::Boolean { default: value }
            }
            "Number" => {
                let value = match default.map(|d| (&d.kind, d.span)) {
                    None | Some((MetaValueKind::Error, _)) => Bound { value: NUMBER_DEFAULT, span: None },
                    Some((MetaValueKind::Number(n), span)) => Bound { value: *n, span: Some(span) },
                    Some(_) => {
                        if let Some(d) = default {
                            self.wrong_type(d, &format!("the Default of Number parameter `{name}`"), "a number");
                        }
                        return None;
                    }
                };
                let min = min.unwrap_or(Bound { value: NUMBER_MIN, span: None });
                let max = max.unwrap_or(Bound { value: NUMBER_MAX, span: None });
                let restriction = restriction.map(|(r, _)| r).unwrap_or(Restriction::Unrestricted);
                if !ok {
                    return None;
                }
                if !self.check_range(key, value, min, max, restriction, attributes) {
                    return None;
                }
                ParameterKind::Number { default: value.value, min: min.value, max: max.value, restriction }
            }
            enum_name => self.enum_kind(name, enum_name, type_value, default)?,
        };
        if !ok {
            return None;
        }
        Some(ScriptParameter {
            name: Name::from(name),
            label: label.unwrap_or_default(),
            description: description.unwrap_or_default(),
            kind,
            span: key.span.to(definition.span),
        })
    }

    fn number_attribute(
        &mut self,
        value: Option<&MetaValue>,
        name: &str,
        attribute: &str,
        ok: &mut bool,
    ) -> Option<Bound> {
        let value = value?;
        match value.kind {
            MetaValueKind::Number(n) => Some(Bound { value: n, span: Some(value.span) }),
            _ => {
                self.wrong_type(value, &format!("the {attribute} of `{name}`"), "a number");
                *ok = false;
                None
            }
        }
    }

    /// GGE1414: Min ≤ Max, Default in [Min, Max], and all three allowed by the restriction.
    fn check_range(
        &mut self,
        key: &Ident,
        default: Bound,
        min: Bound,
        max: Bound,
        restriction: Restriction,
        attributes: Collection,
    ) -> bool {
        let name = &key.name;
        let at = |b: Bound| b.span.unwrap_or(key.span);
        if min.value > max.value {
            self.error(
                Diagnostic::at(
                    codes::GGE1414,
                    at(min),
                    format!("parameter `{name}` has {} greater than {}", min.describe("Min"), max.describe("Max")),
                )
                .with_label(at(max), "Max")
                .with_hint("Min must not be greater than Max"),
            );
            return false;
        }
        if default.value < min.value || default.value > max.value {
            self.error(
                Diagnostic::at(
                    codes::GGE1414,
                    at(default),
                    format!(
                        "parameter `{name}` has {} outside its range [{}, {}]",
                        default.describe("Default"),
                        number(min.value),
                        number(max.value)
                    ),
                )
                .with_hint(if min.span.is_none() || max.span.is_none() {
                    "set Default, Min and Max so that Min <= Default <= Max (Min defaults to 0, Max to 100)"
                } else {
                    "set Default, Min and Max so that Min <= Default <= Max"
                }),
            );
            return false;
        }
        let refused: Vec<String> = [("Min", min), ("Max", max), ("Default", default)]
            .into_iter()
            .filter(|(_, b)| !restriction.allows(b.value))
            .map(|(attribute, b)| b.describe(attribute))
            .collect();
        if !refused.is_empty() {
            let span = attributes.get("Restriction").map_or(key.span, |r| r.span);
            self.error(
                Diagnostic::at(
                    codes::GGE1414,
                    span,
                    format!(
                        "parameter `{name}` has Restriction {}, but {} {} not allowed by it",
                        restriction.name(),
                        refused.join(", "),
                        if refused.len() == 1 { "is" } else { "are" }
                    ),
                )
                .with_hint(format!("make Min, Max and Default each {}", restriction.describe())),
            );
            return false;
        }
        true
    }

    fn enum_kind(
        &mut self,
        name: &str,
        enum_name: &str,
        type_value: Option<&MetaValue>,
        default: Option<&MetaValue>,
    ) -> Option<ParameterKind> {
        let items: Vec<(Name, f64)> = if enum_name == "Direction" {
            DIRECTION_ITEMS.iter().map(|(n, v)| (Name::from(*n), *v)).collect()
        } else if let Some(def) = self.enums.iter().find(|e| &*e.name == enum_name) {
            def.items.clone()
        } else {
            let span = type_value.map_or(Span::default(), |t| t.span);
            self.error(
                Diagnostic::at(codes::GGE1413, span, format!("the Type of `{name}`, `{enum_name}`, is not an enum"))
                    .with_hint("use Boolean, Number, Direction or the name of an enum of this script"),
            );
            return None;
        };
        let default_item = match default.map(|d| &d.kind) {
            None | Some(MetaValueKind::Error) => {
                // The item whose value is closest to zero (the first one on a tie).
                let best = items.iter().fold(None, |best: Option<&(Name, f64)>, item| match best {
                    Some(b) if b.1.abs() <= item.1.abs() => Some(b),
                    _ => Some(item),
                });
                best.map(|(n, _)| n.clone()).unwrap_or_else(|| Name::from(""))
            }
            Some(MetaValueKind::Ident(item)) => match items.iter().find(|(n, _)| **n == **item) {
                Some((n, _)) => n.clone(),
                None => {
                    let span = default.map_or(Span::default(), |d| d.span);
                    let names: Vec<&str> = items.iter().map(|(n, _)| &**n).collect();
                    self.error(
                        Diagnostic::at(codes::GGE1410, span, format!("`{enum_name}` has no item `{item}`"))
                            .with_hint(format!("the items are: {}", names.join(", "))),
                    );
                    return None;
                }
            },
            Some(_) => {
                if let Some(d) = default {
                    self.wrong_type(d, &format!("the Default of enum parameter `{name}`"), "an item name of the enum");
                }
                return None;
            }
        };
        Some(ParameterKind::Enum { type_name: Name::from(enum_name), items, default: default_item })
    }
}
