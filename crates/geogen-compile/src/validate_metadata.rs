//! Metadata validation (reference §2.1, §2.2): the `metadata { ... }` block to [`ScriptMetadata`].

use geogen_diag::Diagnostic;
use geogen_syntax::ast::Metadata;

use crate::ir::EnumDef;
use crate::metadata::ScriptMetadata;

pub(crate) fn validate_metadata(
    _metadata: &Metadata,
    _enums: &[EnumDef],
    _diagnostics: &mut Vec<Diagnostic>,
) -> ScriptMetadata {
    ScriptMetadata::default()
}
