pub(crate) fn parse(_s: &str) -> crate::Parsed {
    crate::Parsed { script: Default::default(), diagnostics: vec![] }
}
