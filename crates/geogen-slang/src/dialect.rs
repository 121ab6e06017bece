//! The two meanings a Height-Slang program can have: the documented one (the default) and the
//! behaviour of picogen's final 2008 code, bit for bit where the two differ.

use std::fmt;

/// Which semantics a program is compiled with.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// What the 2008 reference documents: truth is `v >= 0.5`, `>=` is ≥, `or` is OR, CR is
    /// whitespace, noise corners use the true floor for negative coordinates; plus geogen's
    /// additions (the arity digit of `[2 Name ...]` may be left out, `noisemapfilter` is accepted
    /// as the documented name of `filter`, parameter values must be numbers).
    #[default]
    Documented,
    /// picogen's final 2008-12 code: truth is `v > 0.5`, `>=` computes `>`, `or` computes AND, CR
    /// is not whitespace, the noise corner quirk at -1, `trunc` and the `nearest` filter convert
    /// as x86-64 does, parameter values are read as C++ stream extraction reads them.
    Picogen2008,
}

impl Dialect {
    /// The names the CLI and scripts accept, in the order of [`Dialect::ALL`].
    pub const NAMES: &'static [&'static str] = &["documented", "picogen-2008"];
    pub const ALL: [Dialect; 2] = [Dialect::Documented, Dialect::Picogen2008];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Documented => "documented",
            Dialect::Picogen2008 => "picogen-2008",
        }
    }

    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == name)
    }

    pub(crate) fn is_compat(self) -> bool {
        self == Dialect::Picogen2008
    }

    /// Whether the parser skips a carriage return like a space.
    pub(crate) fn cr_is_whitespace(self) -> bool {
        !self.is_compat()
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
