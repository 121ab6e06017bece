//! The instruction set geogen's kernels run on, chosen once for the whole process.
//!
//! Every vector kernel has an exact scalar twin, and every build of a kernel gives the same bits,
//! so the choice changes only speed. It is made in one place so that it can be seen (`--stats`),
//! forced (`GEOGEN_ISA=scalar|avx2|avx512`, or [`set_active`] from a host), and tested: a test
//! suite run under each value runs each build.
//!
//! The levels are cumulative, each one the features the kernels of that level use:
//!
//! | level | features |
//! |---|---|
//! | [`Isa::Scalar`] | none: plain Rust, on every target |
//! | [`Isa::Avx2`] | AVX2 and BMI2 (x86-64) |
//! | [`Isa::Avx512`] | the above and AVX-512 F, VL, DQ and BW |
//!
//! A kernel asks [`active`] and runs the widest build it has at or below that level.

// This crate has no unsafe code, and keeps it that way.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level; see the crate docs for the features of each.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Isa {
    /// Plain Rust: the definition of every kernel.
    Scalar = 0,
    /// 256-bit AVX2 vectors.
    Avx2 = 1,
    /// 512-bit AVX-512 vectors.
    Avx512 = 2,
}

/// The environment variable that forces the level (`scalar`, `avx2` or `avx512`).
pub const ISA_VARIABLE: &str = "GEOGEN_ISA";

impl Isa {
    /// Every level, narrowest first.
    pub const ALL: [Isa; 3] = [Isa::Scalar, Isa::Avx2, Isa::Avx512];

    /// The name `GEOGEN_ISA` and `--stats` use.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// The level of a name (as [`Isa::name`] spells it, any case).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|isa| isa.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this processor has every feature of the level. The only place geogen asks the
    /// processor.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("bmi2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                Isa::Avx2.is_supported()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => false,
        }
    }

    /// The levels this processor runs, narrowest first.
    pub fn supported() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|isa| isa.is_supported()).collect()
    }

    /// The widest level this processor runs.
    pub fn widest_supported() -> Isa {
        Isa::ALL.into_iter().rev().find(|isa| isa.is_supported()).unwrap_or(Isa::Scalar)
    }
}

impl std::fmt::Display for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a level cannot be the process's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IsaError {
    /// A name that is no level, as the variable held it.
    Unknown {
        /// `GEOGEN_ISA` or `GEOGEN_REQUIRE_ISA`.
        variable: &'static str,
        /// What it held.
        name: String,
    },
    /// A level this processor lacks.
    Unsupported(Isa),
}

impl std::fmt::Display for IsaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let supported: Vec<&str> = Isa::supported().into_iter().map(Isa::name).collect();
        match self {
            IsaError::Unknown { variable, name } => write!(
                f,
                "{variable}={name:?} names no instruction set; use scalar, avx2 or avx512 (this processor runs {})",
                supported.join(", ")
            ),
            IsaError::Unsupported(isa) => {
                write!(f, "this processor cannot run {isa} kernels; it runs {}", supported.join(", "))
            }
        }
    }
}

impl std::error::Error for IsaError {}

/// No choice made yet.
const UNSET: u8 = u8::MAX;

static ACTIVE: AtomicU8 = AtomicU8::new(UNSET);

/// The level the kernels run: the one [`set_active`] set, else `GEOGEN_ISA`'s, else the widest
/// this processor runs. A `GEOGEN_ISA` that cannot be used falls back to the widest here; hosts
/// call [`check_environment`] before any work so that it is refused, not ignored.
#[inline]
pub fn active() -> Isa {
    match ACTIVE.load(Ordering::Relaxed) {
        0 => Isa::Scalar,
        1 => Isa::Avx2,
        2 => Isa::Avx512,
        _ => {
            let chosen = from_environment().ok().flatten().unwrap_or_else(Isa::widest_supported);
            // The first choice wins (a concurrent `set_active` included).
            match ACTIVE.compare_exchange(UNSET, chosen as u8, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => chosen,
                Err(_) => active(),
            }
        }
    }
}

/// Whether kernels of level `isa` run in this process: it is at or below the [`active`] one
/// (which the processor supports).
#[inline]
pub fn enabled(isa: Isa) -> bool {
    active() >= isa
}

/// Makes `isa` the process's level, for every kernel that starts after this call. Refused when
/// the processor lacks it.
pub fn set_active(isa: Isa) -> Result<(), IsaError> {
    if !isa.is_supported() {
        return Err(IsaError::Unsupported(isa));
    }
    ACTIVE.store(isa as u8, Ordering::Relaxed);
    Ok(())
}

/// The level `GEOGEN_ISA` asks for: `None` when it is unset or empty, an error when it names no
/// level or one this processor lacks.
pub fn from_environment() -> Result<Option<Isa>, IsaError> {
    let Some(value) = std::env::var_os(ISA_VARIABLE) else { return Ok(None) };
    let value = value.to_string_lossy();
    if value.trim().is_empty() {
        return Ok(None);
    }
    let isa =
        Isa::from_name(&value).ok_or_else(|| IsaError::Unknown { variable: ISA_VARIABLE, name: value.to_string() })?;
    if !isa.is_supported() {
        return Err(IsaError::Unsupported(isa));
    }
    Ok(Some(isa))
}

/// The variable naming the levels a machine must have (`avx2,avx512`): test runs meant to prove
/// those builds fail where the processor lacks one, instead of passing them over.
pub const REQUIRE_VARIABLE: &str = "GEOGEN_REQUIRE_ISA";

/// The levels `GEOGEN_REQUIRE_ISA` names (none when it is unset), or the first name that is no
/// level.
pub fn required() -> Result<Vec<Isa>, IsaError> {
    let value = std::env::var(REQUIRE_VARIABLE).unwrap_or_default();
    value
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| {
            Isa::from_name(name).ok_or_else(|| IsaError::Unknown { variable: REQUIRE_VARIABLE, name: name.to_string() })
        })
        .collect()
}

/// Whether a test suite runs the builds of `isa` on this machine: true where the processor has
/// it. A build a test cannot run is not silently passed over: it is named on stderr, and where
/// `GEOGEN_REQUIRE_ISA` names the level (a machine meant to prove that build) this panics, so the
/// test fails instead of skipping.
pub fn testable(isa: Isa) -> bool {
    let present = isa.is_supported();
    if !present {
        let required = required().unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !required.contains(&isa),
            "this machine lacks {isa}, whose builds {REQUIRE_VARIABLE} requires the tests to run"
        );
        eprintln!("note: the {isa} builds are not tested here: the processor lacks {isa}");
    }
    present
}

/// What a host checks before any work: `GEOGEN_ISA` is usable (or unset). Returns the level the
/// kernels will run.
pub fn check_environment() -> Result<Isa, IsaError> {
    from_environment()?;
    Ok(active())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for isa in Isa::ALL {
            assert_eq!(Isa::from_name(isa.name()), Some(isa));
            assert_eq!(Isa::from_name(&isa.name().to_uppercase()), Some(isa));
        }
        assert_eq!(Isa::from_name("sse2"), None);
        assert_eq!(Isa::from_name(""), None);
    }

    #[test]
    fn levels_are_cumulative() {
        let supported = Isa::supported();
        assert_eq!(supported[0], Isa::Scalar);
        for pair in supported.windows(2) {
            assert_eq!(pair[1] as u8, pair[0] as u8 + 1, "a level is supported only with every narrower one");
        }
        assert_eq!(Isa::widest_supported(), *supported.last().unwrap());
    }

    #[test]
    fn an_unsupported_level_is_refused_and_the_choice_is_unchanged() {
        let before = active();
        for isa in Isa::ALL.into_iter().filter(|isa| !isa.is_supported()) {
            assert_eq!(set_active(isa), Err(IsaError::Unsupported(isa)));
            assert_eq!(active(), before);
        }
        assert_eq!(set_active(before), Ok(()));
        assert_eq!(active(), before);
    }

    #[test]
    fn errors_name_what_the_processor_runs() {
        let text = IsaError::Unknown { variable: ISA_VARIABLE, name: "sse9".into() }.to_string();
        assert!(text.contains("\"sse9\"") && text.contains("scalar"), "{text}");
        assert!(IsaError::Unsupported(Isa::Avx512).to_string().contains("avx512"));
    }
}
