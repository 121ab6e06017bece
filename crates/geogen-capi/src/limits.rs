//! The limits a C caller can set: the script's run limits, the renderer's memory and solve-grid
//! limits, and the script size.

use crate::fault::Fault;
use crate::*;

/// One limit, as `geogen_limit` names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    Instructions,
    HeapBytes,
    MemoryBytes,
    CallDepth,
    BlockDepth,
    ObjectStack,
    RenderingSteps,
    ArrayLength,
    StringLength,
    SolveCells,
    ScriptBytes,
}

impl Limit {
    /// The limit a caller's code names; an unknown code is a bad argument.
    pub fn from_code(code: geogen_limit) -> Result<Limit, Fault> {
        Ok(match code {
            GEOGEN_LIMIT_INSTRUCTIONS => Limit::Instructions,
            GEOGEN_LIMIT_HEAP_BYTES => Limit::HeapBytes,
            GEOGEN_LIMIT_MEMORY_BYTES => Limit::MemoryBytes,
            GEOGEN_LIMIT_CALL_DEPTH => Limit::CallDepth,
            GEOGEN_LIMIT_BLOCK_DEPTH => Limit::BlockDepth,
            GEOGEN_LIMIT_OBJECT_STACK => Limit::ObjectStack,
            GEOGEN_LIMIT_RENDERING_STEPS => Limit::RenderingSteps,
            GEOGEN_LIMIT_ARRAY_LENGTH => Limit::ArrayLength,
            GEOGEN_LIMIT_STRING_LENGTH => Limit::StringLength,
            GEOGEN_LIMIT_SOLVE_CELLS => Limit::SolveCells,
            GEOGEN_LIMIT_SCRIPT_BYTES => Limit::ScriptBytes,
            other => {
                return Err(Fault::invalid(format!(
                    "{other} is not a geogen_limit (GEOGEN_LIMIT_INSTRUCTIONS .. GEOGEN_LIMIT_SCRIPT_BYTES)"
                )))
            }
        })
    }

    /// The library's default.
    pub fn default_value(self) -> u64 {
        if self == Limit::ScriptBytes {
            return geogen::DEFAULT_MAX_SCRIPT_BYTES as u64;
        }
        RunLimits::default().get(self).unwrap_or(0)
    }
}

/// What a render is limited by.
#[derive(Clone, Debug)]
pub(crate) struct RunLimits {
    pub script: geogen::Limits,
    pub memory_bytes: u64,
    pub solve_cells: u64,
}

impl Default for RunLimits {
    fn default() -> RunLimits {
        RunLimits {
            script: geogen::Limits::default(),
            memory_bytes: geogen::DEFAULT_MEMORY_LIMIT,
            solve_cells: geogen::DEFAULT_MAX_SOLVE_CELLS,
        }
    }
}

/// A count as the VM keeps it (saturating: a larger limit than memory can hold is no limit).
fn count(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

impl RunLimits {
    /// The value of a run limit; `None` for the script size, which is not one.
    pub fn get(&self, limit: Limit) -> Option<u64> {
        let s = &self.script;
        let wide = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        Some(match limit {
            Limit::Instructions => s.instruction_budget,
            Limit::HeapBytes => s.max_heap_bytes,
            Limit::MemoryBytes => self.memory_bytes,
            Limit::CallDepth => wide(s.max_call_depth),
            Limit::BlockDepth => wide(s.max_block_depth),
            Limit::ObjectStack => wide(s.max_object_stack),
            Limit::RenderingSteps => wide(s.max_rendering_steps),
            Limit::ArrayLength => wide(s.max_array_len),
            Limit::StringLength => wide(s.max_string_len),
            Limit::SolveCells => self.solve_cells,
            Limit::ScriptBytes => return None,
        })
    }

    /// Sets a run limit (at least 1).
    pub fn set(&mut self, limit: Limit, value: u64) -> Result<(), Fault> {
        check_value(value)?;
        let s = &mut self.script;
        match limit {
            Limit::Instructions => s.instruction_budget = value,
            Limit::HeapBytes => s.max_heap_bytes = value,
            Limit::MemoryBytes => self.memory_bytes = value,
            Limit::CallDepth => s.max_call_depth = count(value),
            Limit::BlockDepth => s.max_block_depth = count(value),
            Limit::ObjectStack => s.max_object_stack = count(value),
            Limit::RenderingSteps => s.max_rendering_steps = count(value),
            Limit::ArrayLength => s.max_array_len = count(value),
            Limit::StringLength => s.max_string_len = count(value),
            Limit::SolveCells => self.solve_cells = value,
            Limit::ScriptBytes => {
                return Err(Fault::invalid(
                    "GEOGEN_LIMIT_SCRIPT_BYTES limits compiling: set it in the compile options, not the settings",
                ))
            }
        }
        Ok(())
    }
}

/// Every limit is at least 1 (a limit of 0 would refuse everything).
pub(crate) fn check_value(value: u64) -> Result<(), Fault> {
    if value == 0 {
        return Err(Fault::invalid("a limit must be at least 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_reads_back_what_was_set() {
        for code in GEOGEN_LIMIT_INSTRUCTIONS..=GEOGEN_LIMIT_SOLVE_CELLS {
            let limit = Limit::from_code(code).unwrap();
            let mut limits = RunLimits::default();
            assert_eq!(limits.get(limit), Some(limit.default_value()));
            limits.set(limit, 12345).unwrap();
            assert_eq!(limits.get(limit), Some(12345), "{limit:?}");
            assert!(limits.set(limit, 0).is_err());
        }
        assert!(Limit::from_code(0).is_err());
        assert!(Limit::from_code(GEOGEN_LIMIT_SCRIPT_BYTES + 1).is_err());
        assert_eq!(Limit::ScriptBytes.default_value(), 4 << 20);
        assert!(RunLimits::default().set(Limit::ScriptBytes, 10).is_err());
        assert_eq!(Limit::Instructions.default_value(), 100_000_000);
        assert_eq!(Limit::MemoryBytes.default_value(), 1 << 30);
    }
}
