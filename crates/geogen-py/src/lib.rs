//! geogen for Python: the native module `geogen._geogen`, which the `geogen` package re-exports.
//!
//! A [`Script`] is compiled once and renders any rectangle of its maps into a NumPy array, with the
//! CLI's semantics (`geogen render --origin X,Y --size WxH --scale S --seed N -p NAME=VALUE
//! --map-size WxH`). The render runs with the GIL released, so Python threads render at once;
//! its buffer becomes the array's memory (no copy). Errors are `geogen.GeogenError`s carrying the
//! GGE code and the line and column of the first diagnostic (the classes live in
//! `python/geogen/_errors.py`, so that they are plain Python exceptions on every Python version).

use std::path::PathBuf;

use geogen::diag::{codes, Diagnostic, ErrorCode, RenderOptions};
use geogen::{CompileOptions, Dialect, Failure, Rect, RenderConfig, RunSettings};
use numpy::ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray2, PyArray3, PyReadonlyArray2};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// The language a script's text is read in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Language {
    GeoGen,
    HeightSlang(Dialect),
}

impl Language {
    /// As the CLI chooses: the `dialect` if given (`"ggs"`, `"hs"` or a Height-Slang dialect
    /// name), else Height-Slang for a name ending in `.hs`, else GeoGen Script.
    fn choose(name: &str, dialect: Option<&str>) -> Result<Language, Diagnostic> {
        match dialect {
            None => {
                let is_slang = std::path::Path::new(name).extension().is_some_and(|e| e.eq_ignore_ascii_case("hs"));
                Ok(if is_slang { Language::HeightSlang(Dialect::Documented) } else { Language::GeoGen })
            }
            Some("ggs") => Ok(Language::GeoGen),
            Some("hs" | "height-slang") => Ok(Language::HeightSlang(Dialect::Documented)),
            Some(other) => Dialect::from_name(other).map(Language::HeightSlang).ok_or_else(|| {
                Diagnostic::new(codes::GGE4000, format!("unknown dialect `{other}`")).with_hint(format!(
                    "use \"ggs\" (GeoGen Script), \"hs\" (Height-Slang) or a Height-Slang dialect: {}",
                    Dialect::NAMES.join(", ")
                ))
            }),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Language::GeoGen => "ggs",
            Language::HeightSlang(dialect) => dialect.name(),
        }
    }
}

/// A compiled GeoGen Script (or Height-Slang program), ready to render any rectangle of its maps
/// from any thread.
#[pyclass(frozen, module = "geogen")]
struct Script {
    script: geogen::Script,
    name: String,
    language: Language,
    /// The text it was compiled from, for pickling.
    source: Vec<u8>,
}

/// The render settings of one call, checked and in the library's terms.
struct Request {
    settings: RunSettings,
    config: RenderConfig,
    map: String,
    rect: Rect,
    threads: Option<usize>,
}

#[pymethods]
impl Script {
    /// Compiles `text` (a `str`, or UTF-8 `bytes`). `name` is the file name errors show; a name
    /// ending in `.hs` or a `dialect` of "hs" (or a Height-Slang dialect such as "picogen-2008")
    /// reads the text as Height-Slang, "ggs" as GeoGen Script.
    #[new]
    #[pyo3(signature = (text, *, name = "script.ggs".to_string(), dialect = None))]
    fn new(py: Python<'_>, text: &Bound<'_, PyAny>, name: String, dialect: Option<String>) -> PyResult<Script> {
        let bytes: Vec<u8> = if let Ok(text) = text.cast::<PyString>() {
            text.to_cow()?.as_bytes().to_vec()
        } else if let Ok(bytes) = text.extract::<Vec<u8>>() {
            if text.is_instance_of::<PyList>() || text.is_instance_of::<PyTuple>() {
                return Err(PyTypeError::new_err("Script() takes the script's text as str or bytes"));
            }
            bytes
        } else {
            return Err(PyTypeError::new_err("Script() takes the script's text as str or bytes"));
        };
        compile(py, name, &bytes, dialect.as_deref())
    }

    /// Reads and compiles a script file (Height-Slang for a `.hs` file unless `dialect` says
    /// otherwise). Errors name the file as given.
    #[staticmethod]
    #[pyo3(signature = (path, *, dialect = None))]
    fn from_file(py: Python<'_>, path: PathBuf, dialect: Option<String>) -> PyResult<Script> {
        let name = path.display().to_string();
        let limit = CompileOptions::default().max_script_bytes;
        let bytes = geogen::read_script(&path, limit).map_err(|e| {
            let d = Diagnostic::new(codes::GGE4024, format!("cannot read `{name}`: {e}"));
            diagnostic_error(py, &name, d)
        })?;
        compile(py, name, &bytes, dialect.as_deref())
    }

    /// The name errors show (the file name for `from_file`).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// "ggs" for GeoGen Script, else the Height-Slang dialect ("documented" or "picogen-2008").
    #[getter]
    fn dialect(&self) -> &str {
        self.language.name()
    }

    /// Pickling (to worker processes: multiprocessing, Dask's distributed scheduler) sends the
    /// text, name and language; the copy compiles it again.
    fn __getnewargs_ex__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let args = PyTuple::new(py, [PyBytes::new(py, &self.source)])?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("name", &self.name)?;
        kwargs.set_item("dialect", self.language.name())?;
        Ok((args, kwargs))
    }

    fn __repr__(&self) -> String {
        format!("geogen.Script(name={:?}, dialect={:?})", self.name, self.language.name())
    }

    /// What the script declares, as `geogen info --json` prints it: name, description, author,
    /// width and height (`finite`, and `default`, `min`, `max` for a finite one), parameters (each
    /// with name, label, description, type, kind and the kind's default, min, max, restriction or
    /// items) and maps (the names it yields).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_python(py, &self.script.info().to_json())
    }

    /// Renders the rectangle of `w` × `h` pixels at (`x`, `y`) of map `map` as a float32 array of
    /// shape (h, w), row 0 the top. Same semantics as `geogen render --origin X,Y --size WxH
    /// --scale S --seed N -p NAME=VALUE --map-size WxH`.
    #[pyo3(signature = (x, y, w, h, *, map = "main".to_string(), scale = 1.0, seed = None, params = None, map_size = None, threads = None, memory_limit = None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, each a setting of the render.
    fn render<'py>(
        &self,
        py: Python<'py>,
        x: i64,
        y: i64,
        w: i64,
        h: i64,
        map: String,
        scale: f64,
        seed: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyAny>>,
        map_size: Option<&Bound<'py, PyAny>>,
        threads: Option<i64>,
        memory_limit: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let request = self.request(py, (x, y, w, h), map, scale, seed, params, map_size, threads, memory_limit)?;
        let (rows, columns) = (request.rect.height as usize, request.rect.width as usize);
        let heights = py.detach(|| self.render_heights(&request)).map_err(|e| e.into_py(py, &self.name))?;
        let array = Array2::from_shape_vec((rows, columns), heights)
            .map_err(|e| internal(py, &self.name, format!("the render does not fill its array: {e}")))?;
        Ok(array.into_pyarray(py))
    }

    /// [`render`](Script::render), quantised as `geogen render --format r16` writes it: a uint16
    /// array of `round(h × 32767) + 32767` (h clamped to [-1, 1], NaN read as 0), so -1 → 0,
    /// 0 → 32767, 1 → 65534.
    #[pyo3(signature = (x, y, w, h, *, map = "main".to_string(), scale = 1.0, seed = None, params = None, map_size = None, threads = None, memory_limit = None))]
    #[allow(clippy::too_many_arguments)] // As `render`.
    fn render_r16<'py>(
        &self,
        py: Python<'py>,
        x: i64,
        y: i64,
        w: i64,
        h: i64,
        map: String,
        scale: f64,
        seed: Option<&Bound<'py, PyAny>>,
        params: Option<&Bound<'py, PyAny>>,
        map_size: Option<&Bound<'py, PyAny>>,
        threads: Option<i64>,
        memory_limit: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<u16>>> {
        let request = self.request(py, (x, y, w, h), map, scale, seed, params, map_size, threads, memory_limit)?;
        let (rows, columns) = (request.rect.height as usize, request.rect.width as usize);
        let samples = py
            .detach(|| -> Result<Vec<u16>, RenderError> {
                let heights = self.render_heights(&request)?;
                Ok(quantise_r16(&heights))
            })
            .map_err(|e| e.into_py(py, &self.name))?;
        let array = Array2::from_shape_vec((rows, columns), samples)
            .map_err(|e| internal(py, &self.name, format!("the render does not fill its array: {e}")))?;
        Ok(array.into_pyarray(py))
    }
}

/// Why a render gave no heights: the script's failure, or a problem of the request.
enum RenderError {
    Failure(Box<Failure>),
    Diagnostic(Diagnostic),
}

impl RenderError {
    fn into_py(self, py: Python<'_>, name: &str) -> PyErr {
        match self {
            RenderError::Failure(failure) => failure_error(py, &failure),
            RenderError::Diagnostic(diagnostic) => diagnostic_error(py, name, diagnostic),
        }
    }
}

impl Script {
    /// Checks and converts the arguments of `render` and `render_r16`.
    #[allow(clippy::too_many_arguments)] // The arguments of `render`, passed on.
    fn request(
        &self,
        py: Python<'_>,
        (x, y, w, h): (i64, i64, i64, i64),
        map: String,
        scale: f64,
        seed: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyAny>>,
        map_size: Option<&Bound<'_, PyAny>>,
        threads: Option<i64>,
        memory_limit: Option<i64>,
    ) -> PyResult<Request> {
        let argument = |d: Diagnostic| diagnostic_error(py, &self.name, d);
        let width = pixels("width", w).map_err(argument)?;
        let height = pixels("height", h).map_err(argument)?;
        let (map_width, map_height) = match map_size {
            None => (None, None),
            Some(size) => {
                let (mw, mh) = map_size_of(size)?;
                (Some(pixels("map width", mw).map_err(argument)?), Some(pixels("map height", mh).map_err(argument)?))
            }
        };
        let threads = match threads {
            None => None,
            Some(n) if (1..=1024).contains(&n) => Some(n as usize),
            Some(n) => {
                return Err(argument(
                    Diagnostic::new(codes::GGE4000, format!("threads={n} is not from 1 to 1024"))
                        .with_hint("None renders on every core; 1 renders on one thread"),
                ));
            }
        };
        let memory_limit = match memory_limit {
            None => default_memory_limit(),
            Some(mib) if mib >= 1 => (mib as u64).saturating_mul(1 << 20),
            Some(mib) => {
                return Err(argument(Diagnostic::new(
                    codes::GGE4000,
                    format!("memory_limit={mib} MiB is not a positive number of MiB"),
                )));
            }
        };
        let settings = RunSettings {
            seed: seed_of(seed)?,
            parameters: parameters_of(params)?,
            map_width,
            map_height,
            render_origin: (x, y),
            render_width: Some(width),
            render_height: Some(height),
            render_scale: scale,
            maps: Some(vec![map.clone()]),
            ..RunSettings::default()
        };
        let geometry = self.script.geometry(&settings).map_err(argument)?;
        let rect = Rect { x, y, width: u64::from(width), height: u64::from(height) };
        let inside = geometry.yield_rect();
        if inside != rect {
            let size = |s: Option<u32>| s.map_or("infinite".to_string(), |s| s.to_string());
            let message = format!(
                "the rectangle {w}x{h} at {x},{y} reaches outside the map ({} x {} map units at scale {scale})",
                size(geometry.map_width),
                size(geometry.map_height),
            );
            let hint = if inside.is_empty() {
                "it lies entirely outside the map; pass map_size=(W, H) to make the map larger".to_string()
            } else {
                format!(
                    "the part inside the map is {}x{} at {},{}; pass map_size=(W, H) to make the map larger",
                    inside.width, inside.height, inside.x, inside.y
                )
            };
            return Err(argument(Diagnostic::new(codes::GGE4003, message).with_hint(hint)));
        }
        let config = RenderConfig { memory_limit, ..RenderConfig::default() };
        Ok(Request { settings, config, map, rect, threads })
    }

    /// Renders the request's map (without the GIL) and returns its heights, row-major.
    fn render_heights(&self, request: &Request) -> Result<Vec<f32>, RenderError> {
        let run = || self.script.render(&request.settings, &request.config, None);
        let rendered = match request.threads {
            None => run(),
            Some(threads) => {
                // A pool of this render's own, so that renders on several Python threads each
                // get their threads instead of queueing on the shared pool.
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| {
                    RenderError::Diagnostic(Diagnostic::new(
                        codes::GGE4000,
                        format!("cannot start {threads} render threads: {e}"),
                    ))
                })?;
                pool.install(run)
            }
        };
        let mut rendered = rendered.map_err(|failure| RenderError::Failure(Box::new(failure)))?;
        let Some(map) = rendered.maps.remove(&request.map) else {
            return Err(RenderError::Diagnostic(Diagnostic::new(
                codes::GGE4000,
                format!("the script did not yield the map \"{}\" in this run", request.map),
            )));
        };
        if map.rect() != request.rect {
            return Err(RenderError::Diagnostic(Diagnostic::new(
                codes::GGE4000,
                format!("the map \"{}\" covers {} instead of the rectangle asked for", request.map, map.rect()),
            )));
        }
        Ok(map.into_data())
    }
}

/// Compiles a script's bytes in the language its name and `dialect` choose.
fn compile(py: Python<'_>, name: String, bytes: &[u8], dialect: Option<&str>) -> PyResult<Script> {
    let language = Language::choose(&name, dialect).map_err(|d| diagnostic_error(py, &name, d))?;
    let options = CompileOptions::default();
    let compiled = py.detach(|| match language {
        Language::GeoGen => geogen::Script::compile_bytes(&name, bytes, &options),
        Language::HeightSlang(dialect) => geogen::Script::compile_height_slang(&name, bytes, &options, dialect),
    });
    match compiled {
        Ok(script) => Ok(Script { script, name, language, source: bytes.to_vec() }),
        Err(failure) => Err(failure_error(py, &failure)),
    }
}

/// The 16-bit samples of `geogen render --format r16`, by the function its writer uses.
fn quantise_r16(heights: &[f32]) -> Vec<u16> {
    let mut samples = vec![0u16; heights.len()];
    // SAFETY: the bytes of `samples`, which lives (borrowed mutably, nothing else reading it) for
    // as long as `bytes`; u8 has no alignment and every bit pattern is a valid u16.
    let bytes = unsafe { std::slice::from_raw_parts_mut(samples.as_mut_ptr().cast::<u8>(), samples.len() * 2) };
    geogen_io::quantize::u16_le(heights, bytes);
    // The writer's bytes are little-endian; the array holds native u16s.
    if cfg!(target_endian = "big") {
        for sample in &mut samples {
            *sample = u16::from_le(*sample);
        }
    }
    samples
}

/// A size in pixels: from 1 to u32::MAX, as `--size` reads them (GGE4003 otherwise).
fn pixels(what: &str, n: i64) -> Result<u32, Diagnostic> {
    match u32::try_from(n) {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Diagnostic::new(codes::GGE4003, format!("the {what} {n} is not from 1 to {} pixels", u32::MAX))),
    }
}

/// `map_size`: `(W, H)` or one number for a square, as `--map-size WxH` or `--map-size N`.
fn map_size_of(size: &Bound<'_, PyAny>) -> PyResult<(i64, i64)> {
    if let Ok(n) = size.extract::<i64>() {
        return Ok((n, n));
    }
    size.extract::<(i64, i64)>()
        .map_err(|_| PyTypeError::new_err("map_size takes (width, height) or one whole number for a square map"))
}

/// The seed as `--seed` reads it: a whole number from 0 to 2^32 - 1 is used as is, a string as
/// the CLI reads its text (digits as that number, any other text hashed); None is 0.
fn seed_of(seed: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
    let Some(seed) = seed else { return Ok(0) };
    if seed.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("seed takes a whole number or a string, not a bool"));
    }
    if let Ok(text) = seed.cast::<PyString>() {
        return Ok(geogen_random::recognize_seed(&text.to_cow()?));
    }
    if let Ok(n) = seed.extract::<i128>() {
        return u32::try_from(n).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "seed={n} is not from 0 to {}; pass a string (e.g. seed=\"{n}\") to have it hashed as the CLI does",
                u32::MAX
            ))
        });
    }
    Err(PyTypeError::new_err("seed takes a whole number or a string"))
}

/// `params` (a dict of name to value) as the `-p NAME=VALUE` texts the library reads by each
/// parameter's declared type: booleans as true/false, numbers as their shortest decimal, strings
/// (enum items, or numbers as text) as they are.
fn parameters_of(params: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(params) = params else { return Ok(Vec::new()) };
    let items = if let Ok(dict) = params.cast::<PyDict>() {
        dict.items().into_any()
    } else if params.hasattr("items")? {
        params.call_method0("items")?
    } else {
        return Err(PyTypeError::new_err("params takes a dict of parameter name to value"));
    };
    let mut parameters = Vec::new();
    for item in items.try_iter()? {
        let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let name = name
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("params: every parameter name is a string"))?
            .to_cow()?
            .into_owned();
        parameters.push((name.clone(), parameter_text(&name, &value)?));
    }
    Ok(parameters)
}

fn parameter_text(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_cow()?.into_owned());
    }
    if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
        return Ok(value.str()?.to_cow()?.into_owned());
    }
    // Python's bool and NumPy's.
    if let Ok(flag) = value.extract::<bool>() {
        return Ok(if flag { "true" } else { "false" }.to_string());
    }
    if value.is_instance_of::<PyFloat>() || value.hasattr("__float__")? {
        // Rust prints the shortest decimal that reads back as the same double.
        return Ok(format!("{}", value.extract::<f64>()?));
    }
    if value.hasattr("__index__")? {
        return Ok(value.extract::<i128>()?.to_string());
    }
    Err(PyTypeError::new_err(format!(
        "params[{name:?}] is a {}; a parameter takes a number, a bool or a string",
        value.get_type().name()?
    )))
}

/// A quarter of this machine's memory, as the CLI's default, or the library's default when it
/// cannot be read.
fn default_memory_limit() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        text.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<u64>().ok())
    });
    total_kib.map_or(geogen::DEFAULT_MEMORY_LIMIT, |kib| kib.saturating_mul(1024) / 4)
}

/// The exception class for an error of `code`: a host's bad argument (GGE4000 to GGE4003) is also
/// a `ValueError`, a file that cannot be read (GGE4024) an `OSError`; everything else is a plain
/// `GeogenError`.
fn error_class(code: ErrorCode) -> &'static str {
    if code == codes::GGE4024 {
        "GeogenFileError"
    } else if (codes::GGE4000.0..=codes::GGE4003.0).contains(&code.0) {
        "GeogenArgumentError"
    } else {
        "GeogenError"
    }
}

/// One diagnostic as a dict: code, message, line and column (1-based; None when it points at no
/// text), hint.
fn diagnostic_dict<'py>(
    py: Python<'py>,
    diagnostic: &Diagnostic,
    location: Option<geogen::diag::LineCol>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("code", diagnostic.code.to_string())?;
    dict.set_item("message", &diagnostic.message)?;
    dict.set_item("line", location.map(|l| l.line))?;
    dict.set_item("column", location.map(|l| l.column))?;
    dict.set_item("hint", diagnostic.hint.as_deref())?;
    Ok(dict)
}

/// A `GeogenError` (or subclass) for a failure: the first diagnostic's code, message, line,
/// column and hint, every diagnostic, the report geogen prints, and the messages printed before
/// a runtime error.
fn failure_error(py: Python<'_>, failure: &Failure) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let located: Vec<_> =
            failure.diagnostics.iter().map(|d| (d, d.span.map(|s| failure.source.span_start(s)))).collect();
        let diagnostics = PyList::empty(py);
        for (d, location) in &located {
            diagnostics.append(diagnostic_dict(py, d, *location)?)?;
        }
        let (first, location) = located[0];
        let report = failure.render(RenderOptions { color: false }).trim_end().to_string();
        raise(py, first, location, failure.source.name(), &report, diagnostics, &failure.messages)
    };
    build().unwrap_or_else(|e| e)
}

/// A `GeogenError` (or subclass) for a diagnostic that points at no script text.
fn diagnostic_error(py: Python<'_>, file: &str, diagnostic: Diagnostic) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let diagnostics = PyList::empty(py);
        diagnostics.append(diagnostic_dict(py, &diagnostic, None)?)?;
        let mut report = format!("error[{}]: {}", diagnostic.code, diagnostic.message);
        if let Some(hint) = &diagnostic.hint {
            report.push_str(&format!("\n  = hint: {hint}"));
        }
        raise(py, &diagnostic, None, file, &report, diagnostics, &[])
    };
    build().unwrap_or_else(|e| e)
}

fn internal(py: Python<'_>, file: &str, message: String) -> PyErr {
    diagnostic_error(py, file, Diagnostic::new(codes::GGE4000, message))
}

/// Builds the Python exception (see `python/geogen/_errors.py`).
fn raise(
    py: Python<'_>,
    first: &Diagnostic,
    location: Option<geogen::diag::LineCol>,
    file: &str,
    report: &str,
    diagnostics: Bound<'_, PyList>,
    messages: &[String],
) -> PyResult<PyErr> {
    let errors = format!("{}._errors", PACKAGE.get().map_or("geogen", String::as_str));
    let class = py.import(errors.as_str())?.getattr(error_class(first.code))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("code", first.code.to_string())?;
    kwargs.set_item("line", location.map(|l| l.line))?;
    kwargs.set_item("column", location.map(|l| l.column))?;
    kwargs.set_item("hint", first.hint.as_deref())?;
    kwargs.set_item("file", file)?;
    kwargs.set_item("report", report)?;
    kwargs.set_item("diagnostics", diagnostics)?;
    kwargs.set_item("messages", PyList::new(py, messages)?)?;
    let error = class.call((first.message.as_str(),), Some(&kwargs))?;
    Ok(PyErr::from_value(error))
}

/// JSON as Python values: objects as dicts (in order), arrays as lists, whole numbers as ints.
fn json_to_python<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            (None, None) => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, item) in fields {
                dict.set_item(key, json_to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// The colored preview of `geogen render --format colored` as an RGB array: heights (any 2-D
/// float32 array, shape (h, w)) in, uint8 of shape (h, w, 3) out; water blues below 0, greens,
/// browns and white above.
#[pyfunction]
fn colored<'py>(py: Python<'py>, heights: PyReadonlyArray2<'py, f32>) -> PyResult<Bound<'py, PyArray3<u8>>> {
    let view = heights.as_array();
    let (rows, columns) = view.dim();
    let heights: std::borrow::Cow<'_, [f32]> = match view.as_slice() {
        Some(contiguous) => contiguous.into(),
        None => view.iter().copied().collect::<Vec<f32>>().into(),
    };
    let rgb = py.detach(|| {
        let mut rgb = vec![0u8; heights.len() * 3];
        geogen_io::palette::colors(&heights, &mut rgb);
        rgb
    });
    let array = Array3::from_shape_vec((rows, columns, 3), rgb)
        .map_err(|e| internal(py, "colored", format!("the colors do not fill their array: {e}")))?;
    Ok(array.into_pyarray(py))
}

/// The package this module belongs to (`geogen`, or the package it is vendored into, such as
/// the Blender add-on's `geogen_terrain.geogen`): where its exception classes are.
static PACKAGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The native part of the `geogen` package.
#[pymodule]
#[pyo3(name = "_geogen")]
fn geogen_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let name = module.name()?.to_cow()?.into_owned();
    if let Some((package, _)) = name.rsplit_once('.') {
        let _ = PACKAGE.set(package.to_string());
    }
    module.add_function(wrap_pyfunction!(colored, module)?)?;
    module.add_class::<Script>()?;
    module.add("EXAMPLE_ISLAND", geogen::EXAMPLE_ISLAND)?;
    module.add("RENDER_SCALE_MIN", geogen::RENDER_SCALE_MIN)?;
    module.add("RENDER_SCALE_MAX", geogen::RENDER_SCALE_MAX)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
