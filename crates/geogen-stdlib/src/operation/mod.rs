//! Map and profile operations as declared units.
//!
//! An operation is one file (in `generators/`, `combiners/`, `filters/`, `transforms/` or
//! `profiles/`) holding all of it:
//! * its **script side**: a [`Signature`] (name, parameters with kinds and defaults, cross checks,
//!   family, summary, worked examples) and a `record` function that turns checked arguments
//!   ([`Call`]) into rendering steps through a [`Recorder`] (most record one step; `Noise` or
//!   `Warp` record several; `Add` chooses its step by the type of its first argument);
//! * its **pixel side**: a struct of constants implementing [`geogen_render::Operation`] (bounds
//!   rule, result extent, memory need, kernel).
//!
//! The two halves meet only in that file: the VM never sees pixels and the kernel never sees
//! script values. Each family module lists its operations once with [`operations!`]; the union of
//! those lists ([`all`]) drives everything else: registration in the library, the generated
//! signature texts and argument checks (every kind of parameter is checked by one function, with
//! its error code), the reference table in `docs/library.md`, and the derived tests (examples,
//! argument errors, tile contract, no-panic) and benchmarks.

mod call;
pub mod pointwise;
mod recorder;
mod signature;

use geogen_diag::codes;
use geogen_vm::{Args, Ctx, Library, Native, NativeFn, RuntimeError, Value};

pub use call::{check, Arg, Call};
pub use recorder::Recorder;
pub use signature::{range_code, Along, Check, Default, Example, Family, Kind, Owner, Param, Receiver, Signature};

/// An operation's script side.
pub trait Declared {
    const SIGNATURE: Signature;

    /// Records the rendering steps of one call whose arguments have been checked against
    /// [`Declared::SIGNATURE`]; returns the script value of the call (a new object for statics,
    /// the receiver for methods).
    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError>;
}

/// The native function of a declared operation: check, then record.
pub fn bind<T: Declared>(ctx: &mut Ctx<'_>, args: &Args<'_>) -> Result<Value, RuntimeError> {
    let call = check(&T::SIGNATURE, ctx, args)?;
    let mut rec = Recorder::new(ctx, args.this);
    T::record(&call, &mut rec)
}

/// The signature text of a declared operation (for messages).
pub fn signature_text<T: Declared>() -> String {
    T::SIGNATURE.text()
}

/// One entry of an operation list.
#[derive(Copy, Clone)]
pub struct Entry {
    pub signature: &'static Signature,
    pub bind: NativeFn,
    pub text: fn() -> String,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Entry({})", self.signature.qualified_name())
    }
}

impl Entry {
    /// The native the VM calls.
    pub fn native(&self) -> Native {
        let sig = self.signature;
        Native::declared(sig.name, self.text, sig.min_args(), Some(sig.max_args()), self.bind)
    }
}

/// Declares a family's operations: `operations![abs::Abs, blur::Blur]` is the list of their
/// entries, the one place an operation is added besides its own file.
#[macro_export]
macro_rules! operations {
    ($($op:path),* $(,)?) => {
        &[$($crate::operation::Entry {
            signature: &<$op as $crate::operation::Declared>::SIGNATURE,
            bind: $crate::operation::bind::<$op>,
            text: $crate::operation::signature_text::<$op>,
        }),*]
    };
}

/// Every declared operation, family by family.
pub fn all() -> impl Iterator<Item = &'static Entry> {
    crate::generators::OPERATIONS
        .iter()
        .chain(crate::combiners::OPERATIONS)
        .chain(crate::filters::OPERATIONS)
        .chain(crate::transforms::OPERATIONS)
        .chain(crate::profiles::OPERATIONS)
}

/// The declared operation scripts call as `owner.name`, if any.
pub fn find(owner: Owner, name: &str) -> Option<&'static Entry> {
    all().find(|e| e.signature.owner == owner && e.signature.name == name)
}

/// Adds every declared operation to the library.
pub fn register(lib: &mut Library) {
    for entry in all() {
        let owner = entry.signature.owner.type_name();
        match entry.signature.receiver {
            Receiver::Static => lib.add_static(owner, entry.native()),
            Receiver::Method => lib.add_method(owner, entry.native()),
        }
    }
}

/// The reference tables of `docs/library.md`: per owner and family, each operation's signature and
/// summary. A test keeps the document current.
pub fn reference_markdown() -> String {
    let mut out = String::new();
    for owner in [Owner::HeightMap, Owner::HeightProfile] {
        for family in Family::ALL {
            let entries: Vec<&Entry> =
                all().filter(|e| e.signature.owner == owner && e.signature.family == family).collect();
            if entries.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "#### {} {}\n\n| Call | What it does | Errors |\n|---|---|---|\n",
                owner.type_name(),
                family.title().to_lowercase()
            ));
            for e in entries {
                // GGE2101 (a wrong type) and GGE2103 (a wrong count) apply to every call.
                let codes: Vec<String> = e
                    .signature
                    .error_codes()
                    .iter()
                    .filter(|c| ![codes::GGE2101, codes::GGE2103].contains(c))
                    .map(|c| c.to_string())
                    .collect();
                out.push_str(&format!(
                    "| `{}` | {} | {} |\n",
                    e.signature.text(),
                    e.signature.summary.replace('|', "\\|").replace('\n', " "),
                    if codes.is_empty() { "—".to_string() } else { codes.join(", ") }
                ));
            }
            out.push('\n');
        }
    }
    out
}
