//! A parsed rule set: rules with their weighted choices, ready to execute.

use std::collections::HashMap;
use std::sync::Arc;

use geogen_diag::{SourceFile, Span};

use crate::Mode;

/// The rules of one text, merged by name (spec §2.3): what the executor runs.
#[derive(Clone, Debug)]
pub struct RuleSet {
    pub(crate) file: Arc<SourceFile>,
    pub(crate) mode: Mode,
    pub(crate) rules: Vec<Rule>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) hash: u32,
}

/// One nonterminal's rule: every choice of every rule of that name, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// With its brackets: `<river>` or `<$realm>`.
    pub name: String,
    /// Where the name is first defined.
    pub span: Span,
    pub choices: Vec<Choice>,
}

impl Rule {
    /// A one-time rule (`<$n>`), expanded once per run before anything else.
    pub fn is_one_time(&self) -> bool {
        self.name.starts_with("<$")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub weight: Weight,
    pub elems: Vec<Elem>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Weight {
    /// No weight written: 1.
    One,
    /// A weight of plain text, read as a number when the rule is parsed (NaN when it is none:
    /// an error if the rule has several choices).
    Fixed(f64, Span),
    /// A weight with nonterminals or code, expanded to text and read as a number each time the
    /// rule is expanded.
    Computed(Vec<Elem>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Elem {
    Text(String),
    /// `<n>`: expanded by its rule, or written as it is when there is none.
    NonTerminal(String, Span),
    /// `<$n>`: its one value.
    OneTime(String, Span),
    /// `<@n>` outside code: the value of `<$n>` as it is (written as `<@n>` when it has none).
    /// The string is the key, `<$n>`.
    OneTimeValue(String, Span),
    Code(Code),
    /// `<@n>` inside code: the variable holding the value of `<$n>`, readable and assignable.
    CodeVariable(String, Span),
}

/// Embedded code: text to expand (its references) and then evaluate.
#[derive(Clone, Debug, PartialEq)]
pub struct Code {
    pub parts: Vec<Elem>,
    /// The whole `` `…` ``.
    pub span: Span,
}

impl RuleSet {
    /// The text the rules were read from, for line:column and snippets of diagnostics.
    pub fn source(&self) -> &Arc<SourceFile> {
        &self.file
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The rules in file order (a merged rule at the place of its first definition).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.by_name.get(name).map(|&i| &self.rules[i])
    }

    /// The default start: the first rule that is not one-time (or the first rule, if all are).
    pub fn first_rule(&self) -> Option<&str> {
        self.rules.iter().find(|r| !r.is_one_time()).or(self.rules.first()).map(|r| r.name.as_str())
    }

    /// djb2 of the text: the part of every seed that says which rules these are.
    pub fn hash(&self) -> u32 {
        self.hash
    }
}

/// Merges adjacent texts (spec §2.3 step 3).
pub(crate) fn merge_texts(elems: Vec<Elem>) -> Vec<Elem> {
    let mut merged: Vec<Elem> = Vec::with_capacity(elems.len());
    for elem in elems {
        match (merged.last_mut(), elem) {
            (Some(Elem::Text(last)), Elem::Text(next)) => last.push_str(&next),
            (_, elem) => merged.push(elem),
        }
    }
    merged
}
