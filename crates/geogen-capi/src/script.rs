//! The compile options, the compiled script with its declarations as C strings, and the
//! settings of a render.

use std::ffi::CString;

use geogen::{Dialect, Dimension, ParameterKind, Restriction, Script};

use crate::fault::Fault;
use crate::limits::{Limit, RunLimits};
use crate::text::c_text;
use crate::*;

/// The language of a script's text, as the compile options choose it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Language {
    /// By the script's name, as the command line chooses by the file's extension.
    ByName,
    GeoGen,
    HeightSlang,
}

impl Language {
    pub fn from_code(code: geogen_language) -> Result<Language, Fault> {
        match code {
            GEOGEN_LANGUAGE_AUTO => Ok(Language::ByName),
            GEOGEN_LANGUAGE_GEOGEN_SCRIPT => Ok(Language::GeoGen),
            GEOGEN_LANGUAGE_HEIGHT_SLANG => Ok(Language::HeightSlang),
            other => Err(Fault::invalid(format!(
                "{other} is not a geogen_language (GEOGEN_LANGUAGE_AUTO, _GEOGEN_SCRIPT or _HEIGHT_SLANG)"
            ))),
        }
    }
}

pub(crate) fn dialect_from_code(code: geogen_dialect) -> Result<Dialect, Fault> {
    match code {
        GEOGEN_DIALECT_DOCUMENTED => Ok(Dialect::Documented),
        GEOGEN_DIALECT_PICOGEN_2008 => Ok(Dialect::Picogen2008),
        other => Err(Fault::invalid(format!(
            "{other} is not a geogen_dialect (GEOGEN_DIALECT_DOCUMENTED or GEOGEN_DIALECT_PICOGEN_2008)"
        ))),
    }
}

/// How to compile.
#[derive(Clone, Debug)]
pub struct geogen_compile_options {
    pub(crate) language: Language,
    pub(crate) dialect: Dialect,
    pub(crate) max_script_bytes: usize,
    /// The compiled script's limits for every render (settings may override them).
    pub(crate) limits: RunLimits,
}

impl Default for geogen_compile_options {
    fn default() -> geogen_compile_options {
        geogen_compile_options {
            language: Language::ByName,
            dialect: Dialect::Documented,
            max_script_bytes: geogen::DEFAULT_MAX_SCRIPT_BYTES,
            limits: RunLimits::default(),
        }
    }
}

impl geogen_compile_options {
    pub(crate) fn set_limit(&mut self, limit: Limit, value: u64) -> Result<(), Fault> {
        if limit == Limit::ScriptBytes {
            crate::limits::check_value(value)?;
            self.max_script_bytes = usize::try_from(value).unwrap_or(usize::MAX);
            return Ok(());
        }
        self.limits.set(limit, value)
    }
}

/// One parameter's declaration, with its texts made once for C.
pub(crate) struct ParamTexts {
    pub name: CString,
    pub label: CString,
    pub description: CString,
    pub default_text: CString,
    pub kind: geogen_param_kind,
    pub restriction: geogen_restriction,
    pub min: f64,
    pub max: f64,
    pub default_value: f64,
    pub items: Vec<(CString, f64)>,
}

/// A compiled script: immutable, shared by any number of threads.
pub struct geogen_script {
    pub(crate) script: Script,
    pub(crate) limits: RunLimits,
    pub(crate) name: CString,
    pub(crate) description: CString,
    pub(crate) author: CString,
    pub(crate) width: Dimension,
    pub(crate) height: Dimension,
    pub(crate) params: Vec<ParamTexts>,
    /// Each yielded map's name, as text and as a C string.
    pub(crate) maps: Vec<(String, CString)>,
}

impl std::fmt::Debug for geogen_script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("geogen_script").field("script", &self.script).finish_non_exhaustive()
    }
}

/// A number as the parameter reader reads it back exactly: whole numbers without a fraction
/// (`3`, which a boolean also accepts), others in the shortest form that round-trips.
pub(crate) fn number_text(value: f64) -> String {
    geogen::host::json_number(value).to_string()
}

fn restriction_code(restriction: Restriction) -> geogen_restriction {
    match restriction {
        Restriction::Unrestricted => GEOGEN_RESTRICTION_NONE,
        Restriction::Integers => GEOGEN_RESTRICTION_INTEGERS,
        Restriction::PowersOf2 => GEOGEN_RESTRICTION_POWERS_OF_2,
        Restriction::PowersOf10 => GEOGEN_RESTRICTION_POWERS_OF_10,
    }
}

fn param_texts(parameter: &geogen::ScriptParameter) -> ParamTexts {
    let (kind, restriction, min, max, default_value, default_text, items) = match &parameter.kind {
        ParameterKind::Boolean { default } => (
            GEOGEN_PARAM_BOOLEAN,
            GEOGEN_RESTRICTION_NONE,
            0.0,
            1.0,
            f64::from(u8::from(*default)),
            default.to_string(),
            Vec::new(),
        ),
        ParameterKind::Number { default, min, max, restriction } => (
            GEOGEN_PARAM_NUMBER,
            restriction_code(*restriction),
            *min,
            *max,
            *default,
            number_text(*default),
            Vec::new(),
        ),
        ParameterKind::Enum { items, default, .. } => {
            let values = items.iter().map(|(_, v)| *v);
            let min = values.clone().fold(f64::INFINITY, f64::min);
            let max = values.fold(f64::NEG_INFINITY, f64::max);
            let value = items.iter().find(|(n, _)| n == default).map_or(0.0, |(_, v)| *v);
            let items = items.iter().map(|(n, v)| (c_text(n), *v)).collect();
            (GEOGEN_PARAM_ENUM, GEOGEN_RESTRICTION_NONE, min, max, value, default.to_string(), items)
        }
    };
    ParamTexts {
        name: c_text(&parameter.name),
        label: c_text(&parameter.label),
        description: c_text(&parameter.description),
        default_text: c_text(&default_text),
        kind,
        restriction,
        min,
        max,
        default_value,
        items,
    }
}

/// Compiles as the command line does: by language, with the size limit, `main` required.
pub(crate) fn compile(name: &str, bytes: &[u8], options: &geogen_compile_options) -> Result<geogen_script, Fault> {
    let by_extension =
        std::path::Path::new(name).extension().is_some_and(|extension| extension.eq_ignore_ascii_case("hs"));
    let height_slang = match options.language {
        Language::ByName => by_extension,
        Language::GeoGen => false,
        Language::HeightSlang => true,
    };
    if !height_slang && options.dialect != Dialect::Documented {
        return Err(Fault::invalid(format!(
            "the dialect {} applies to Height-Slang programs only (GEOGEN_LANGUAGE_HEIGHT_SLANG, or a name ending in .hs)",
            options.dialect.name()
        )));
    }
    let compile_options = geogen::CompileOptions { max_script_bytes: options.max_script_bytes, ..Default::default() };
    let compiled = if height_slang {
        Script::compile_height_slang(name, bytes, &compile_options, options.dialect)
    } else {
        Script::compile_bytes(name, bytes, &compile_options)
    };
    let script = compiled.map_err(|failure| Fault::from_failure(&failure))?;
    let info = script.info();
    let metadata = &info.metadata;
    let text = |t: &Option<String>| c_text(t.as_deref().unwrap_or(""));
    Ok(geogen_script {
        limits: options.limits.clone(),
        name: text(&metadata.name),
        description: text(&metadata.description),
        author: text(&metadata.author),
        width: metadata.width.clone(),
        height: metadata.height.clone(),
        params: metadata.parameters.iter().map(param_texts).collect(),
        maps: info.maps.iter().map(|m| (m.clone(), c_text(m))).collect(),
        script,
    })
}

/// (finite, min, max, default) of an axis, as `geogen_script_info` holds them.
pub(crate) fn axis_info(dimension: &Dimension) -> (i32, u32, u32, u32) {
    match dimension {
        Dimension::Infinite => (0, 0, 0, 0),
        Dimension::Finite { default, min, max } => (1, *min, *max, default.unwrap_or(0)),
    }
}

/// What a render depends on besides the script and the rectangle.
#[derive(Clone, Debug, Default)]
pub struct geogen_settings {
    pub(crate) seed: u32,
    /// By name, as typed; one entry per name (a later value replaces an earlier one).
    pub(crate) parameters: Vec<(String, String)>,
    pub(crate) map_width: Option<u32>,
    pub(crate) map_height: Option<u32>,
    /// Overrides of the script's limits, in the order set.
    pub(crate) limits: Vec<(Limit, u64)>,
}

impl geogen_settings {
    pub(crate) fn set_param(&mut self, name: &str, value: String) -> Result<(), Fault> {
        // As `-p NAME=VALUE` reads it: spaces around the name are not part of it.
        let name = name.trim();
        if name.is_empty() {
            return Err(Fault::invalid("a parameter name must not be empty"));
        }
        match self.parameters.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = value,
            None => self.parameters.push((name.to_string(), value)),
        }
        Ok(())
    }

    pub(crate) fn set_limit(&mut self, limit: Limit, value: u64) -> Result<(), Fault> {
        // Checked now, so a bad limit is reported where it is set rather than at each render.
        RunLimits::default().set(limit, value)?;
        self.limits.retain(|(l, _)| *l != limit);
        self.limits.push((limit, value));
        Ok(())
    }

    /// The script's limits with these settings' overrides.
    pub(crate) fn limits_for(&self, script: &geogen_script) -> Result<RunLimits, Fault> {
        let mut limits = script.limits.clone();
        for (limit, value) in &self.limits {
            limits.set(*limit, *value)?;
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_and_settings_may_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<geogen_script>();
        shared::<geogen_settings>();
        shared::<geogen_compile_options>();
    }

    #[test]
    fn numbers_read_back_exactly() {
        assert_eq!(number_text(4.0), "4");
        assert_eq!(number_text(-2.5), "-2.5");
        assert_eq!(number_text(0.1), "0.1");
        for value in [0.1, 1e300, -7e-12, 123456789.125, 2f64.powi(60)] {
            assert_eq!(number_text(value).parse::<f64>().unwrap(), value);
        }
    }

    #[test]
    fn declarations_become_c_texts() {
        let source = "metadata { Name: \"T\", Width: Finite, Height: Infinite, Parameters: { \
                      Count: { Min: 1, Max: 10, Default: 3, Restriction: Integers }, Snow: { Default: true }, \
                      Dir: { Type: Direction, Default: Vertical } } }\n\
                      yield HeightMap.Flat(0);\nyield HeightMap.Flat(0.5) as \"flat\";";
        let script = compile("t.ggs", source.as_bytes(), &geogen_compile_options::default()).unwrap();
        assert_eq!(script.name.to_str(), Ok("T"));
        assert_eq!(axis_info(&script.width).0, 1);
        assert_eq!(axis_info(&script.height), (0, 0, 0, 0));
        let names: Vec<&str> = script.maps.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["main", "flat"]);
        let count = &script.params[0];
        assert_eq!((count.kind, count.restriction), (GEOGEN_PARAM_NUMBER, GEOGEN_RESTRICTION_INTEGERS));
        assert_eq!((count.min, count.max, count.default_value), (1.0, 10.0, 3.0));
        assert_eq!(count.default_text.to_str(), Ok("3"));
        let snow = &script.params[1];
        assert_eq!(
            (snow.kind, snow.default_value, snow.default_text.to_str()),
            (GEOGEN_PARAM_BOOLEAN, 1.0, Ok("true"))
        );
        let dir = &script.params[2];
        assert_eq!((dir.kind, dir.min, dir.max, dir.default_value), (GEOGEN_PARAM_ENUM, 0.0, 1.0, 1.0));
        assert_eq!(dir.default_text.to_str(), Ok("Vertical"));
        assert_eq!(dir.items.len(), 2);
        assert_eq!(dir.items[0].0.to_str(), Ok("Horizontal"));
    }

    #[test]
    fn the_language_follows_the_name_unless_chosen() {
        let options = geogen_compile_options::default();
        let program = b"(- (* 2 x) 1)";
        assert!(compile("terrain.HS", program, &options).is_ok());
        let as_script = compile("terrain.txt", program, &options).unwrap_err();
        assert_eq!(as_script.status, GEOGEN_ERROR_SCRIPT);
        let chosen = geogen_compile_options { language: Language::HeightSlang, ..options.clone() };
        assert!(compile("terrain.txt", program, &chosen).is_ok());
        // The dialect is Height-Slang's only.
        let dialect = geogen_compile_options { dialect: Dialect::Picogen2008, ..options };
        assert_eq!(
            compile("island.ggs", b"yield HeightMap.Flat(0);", &dialect).unwrap_err().code.to_string(),
            "GGE4000"
        );
    }
}
