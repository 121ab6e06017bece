//! geogen's C library: `libgeogen.so` and `libgeogen.a`, declared by `include/geogen.h`.
//!
//! A host compiles a script once ([`geogen_script_compile`]), describes each render with
//! settings ([`geogen_settings_new`] and its setters) and renders any rectangle of any map into
//! its own buffer ([`geogen_render_float`], [`geogen_render_u16`]), from as many threads as it
//! likes. The header states the contract; `docs/embedding.md` explains it with an example.
//!
//! Every entry point checks its pointers before use and catches panics: those that report a
//! status run inside [`fault::guard`] (a panic becomes `GEOGEN_ERROR_INTERNAL`, with an error
//! object), the accessors and destructors inside [`fault::quietly`]; no unwind reaches C. The names here are the header's, so the two read alike
//! (`tests/header.rs` checks that they declare the same functions, types and constants).

// The C names of the header, kept as they are in C.
#![allow(non_camel_case_types)]

mod fault;
mod limits;
mod render;
mod script;
mod text;

use std::ffi::c_char;

pub use fault::geogen_error;
pub use script::{geogen_compile_options, geogen_script, geogen_settings};

use fault::{error_text, guard, quietly, Fault};
use limits::Limit;
use render::{copy_rows, quantize_row, Layout, Range, Request};
use script::{axis_info, dialect_from_code, number_text, Language};
use text::{arg_mut, arg_ref, arg_str, free_object, out_object, set_optional};

/// The version of this interface (the header's `GEOGEN_API_VERSION`): raised by every change.
pub const GEOGEN_API_VERSION: u32 = 1;

pub type geogen_status = i32;
pub const GEOGEN_OK: geogen_status = 0;
pub const GEOGEN_ERROR_INVALID_ARGUMENT: geogen_status = 1;
pub const GEOGEN_ERROR_SCRIPT: geogen_status = 2;
pub const GEOGEN_ERROR_RENDER: geogen_status = 3;
pub const GEOGEN_ERROR_LIMIT: geogen_status = 4;
pub const GEOGEN_ERROR_INTERNAL: geogen_status = 5;

pub type geogen_limit = i32;
pub const GEOGEN_LIMIT_INSTRUCTIONS: geogen_limit = 1;
pub const GEOGEN_LIMIT_HEAP_BYTES: geogen_limit = 2;
pub const GEOGEN_LIMIT_MEMORY_BYTES: geogen_limit = 3;
pub const GEOGEN_LIMIT_CALL_DEPTH: geogen_limit = 4;
pub const GEOGEN_LIMIT_BLOCK_DEPTH: geogen_limit = 5;
pub const GEOGEN_LIMIT_OBJECT_STACK: geogen_limit = 6;
pub const GEOGEN_LIMIT_RENDERING_STEPS: geogen_limit = 7;
pub const GEOGEN_LIMIT_ARRAY_LENGTH: geogen_limit = 8;
pub const GEOGEN_LIMIT_STRING_LENGTH: geogen_limit = 9;
pub const GEOGEN_LIMIT_SOLVE_CELLS: geogen_limit = 10;
pub const GEOGEN_LIMIT_SCRIPT_BYTES: geogen_limit = 11;

pub type geogen_language = i32;
pub const GEOGEN_LANGUAGE_AUTO: geogen_language = 0;
pub const GEOGEN_LANGUAGE_GEOGEN_SCRIPT: geogen_language = 1;
pub const GEOGEN_LANGUAGE_HEIGHT_SLANG: geogen_language = 2;

pub type geogen_dialect = i32;
pub const GEOGEN_DIALECT_DOCUMENTED: geogen_dialect = 0;
pub const GEOGEN_DIALECT_PICOGEN_2008: geogen_dialect = 1;

pub type geogen_param_kind = i32;
pub const GEOGEN_PARAM_BOOLEAN: geogen_param_kind = 1;
pub const GEOGEN_PARAM_NUMBER: geogen_param_kind = 2;
pub const GEOGEN_PARAM_ENUM: geogen_param_kind = 3;

pub type geogen_restriction = i32;
pub const GEOGEN_RESTRICTION_NONE: geogen_restriction = 0;
pub const GEOGEN_RESTRICTION_INTEGERS: geogen_restriction = 1;
pub const GEOGEN_RESTRICTION_POWERS_OF_2: geogen_restriction = 2;
pub const GEOGEN_RESTRICTION_POWERS_OF_10: geogen_restriction = 3;

/// What a script declares (the header's `geogen_script_info`); strings belong to the script.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct geogen_script_info {
    pub name: *const c_char,
    pub description: *const c_char,
    pub author: *const c_char,
    pub width_finite: i32,
    pub height_finite: i32,
    pub width_min: u32,
    pub width_max: u32,
    pub width_default: u32,
    pub height_min: u32,
    pub height_max: u32,
    pub height_default: u32,
    pub param_count: u32,
    pub map_count: u32,
}

/// One parameter (the header's `geogen_param_info`); strings belong to the script.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct geogen_param_info {
    pub name: *const c_char,
    pub label: *const c_char,
    pub description: *const c_char,
    pub kind: geogen_param_kind,
    pub restriction: geogen_restriction,
    pub min: f64,
    pub max: f64,
    pub default_value: f64,
    pub default_text: *const c_char,
    pub item_count: u32,
}

/// geogen's version with a NUL, for C.
const VERSION: &std::ffi::CStr =
    match std::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(version) => version,
        Err(_) => c"unknown",
    };

/// A count as C sees it (saturating; no script declares four billion of anything).
fn count_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// An index into a list of `len`, or a bad-argument fault naming what it indexes.
fn index(index: u32, len: usize, what: &str) -> Result<usize, Fault> {
    let i = usize::try_from(index).unwrap_or(usize::MAX);
    if i >= len {
        return Err(Fault::invalid(format!("{what} index {index} is out of range: there are {len}")));
    }
    Ok(i)
}

// ---- Versions ----

/// The ABI version of this library.
#[no_mangle]
pub extern "C" fn geogen_api_version() -> u32 {
    quietly(GEOGEN_API_VERSION, || GEOGEN_API_VERSION)
}

/// geogen's version; a static string.
#[no_mangle]
pub extern "C" fn geogen_version() -> *const c_char {
    quietly(VERSION.as_ptr(), || VERSION.as_ptr())
}

// ---- Errors ----

/// The status of the failed call; 0 for NULL.
///
/// # Safety
///
/// `error` is NULL or an error object this library made and nobody freed.
#[no_mangle]
pub unsafe extern "C" fn geogen_error_status(error: *const geogen_error) -> geogen_status {
    // SAFETY: by the contract, NULL or a live error object.
    quietly(GEOGEN_OK, || unsafe { error.as_ref() }.map_or(GEOGEN_OK, |e| e.status))
}

/// The GGE code of the first problem.
///
/// # Safety
///
/// As [`geogen_error_status`].
#[no_mangle]
pub unsafe extern "C" fn geogen_error_code(error: *const geogen_error) -> *const c_char {
    error_text(error, |e| &e.code)
}

/// The first problem's message.
///
/// # Safety
///
/// As [`geogen_error_status`].
#[no_mangle]
pub unsafe extern "C" fn geogen_error_message(error: *const geogen_error) -> *const c_char {
    error_text(error, |e| &e.message)
}

/// The first problem's hint, or "".
///
/// # Safety
///
/// As [`geogen_error_status`].
#[no_mangle]
pub unsafe extern "C" fn geogen_error_hint(error: *const geogen_error) -> *const c_char {
    error_text(error, |e| &e.hint)
}

/// The first problem's line in the script (1-based), or 0.
///
/// # Safety
///
/// As [`geogen_error_status`].
#[no_mangle]
pub unsafe extern "C" fn geogen_error_line(error: *const geogen_error) -> u32 {
    // SAFETY: by the contract, NULL or a live error object.
    quietly(0, || unsafe { error.as_ref() }.map_or(0, |e| e.line))
}

/// The first problem's column (1-based, in characters), or 0.
///
/// # Safety
///
/// As [`geogen_error_status`].
#[no_mangle]
pub unsafe extern "C" fn geogen_error_column(error: *const geogen_error) -> u32 {
    // SAFETY: by the contract, NULL or a live error object.
    quietly(0, || unsafe { error.as_ref() }.map_or(0, |e| e.column))
}

/// How many problems were reported.
///
/// # Safety
///
/// As [`geogen_error_status`].
#[no_mangle]
pub unsafe extern "C" fn geogen_error_count(error: *const geogen_error) -> u32 {
    // SAFETY: by the contract, NULL or a live error object.
    quietly(0, || unsafe { error.as_ref() }.map_or(0, |e| e.count))
}

/// Every problem as the command line prints it.
///
/// # Safety
///
/// As [`geogen_error_status`].
#[no_mangle]
pub unsafe extern "C" fn geogen_error_text(error: *const geogen_error) -> *const c_char {
    error_text(error, |e| &e.text)
}

/// Frees an error object (NULL is fine).
///
/// # Safety
///
/// `error` is NULL or an error object this library made, not used again.
#[no_mangle]
pub unsafe extern "C" fn geogen_error_free(error: *mut geogen_error) {
    // SAFETY: by the contract, NULL or a live error object handed over for good.
    quietly((), || unsafe { free_object(error) })
}

// ---- Limits ----

/// The library's default of a limit.
///
/// # Safety
///
/// `value` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_limit_default(
    limit: geogen_limit,
    value: *mut u64,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        if value.is_null() {
            return Err(Fault::null("value"));
        }
        let default = Limit::from_code(limit)?.default_value();
        // SAFETY: `value` is not NULL and, by the contract, writable.
        unsafe { set_optional(value, default) };
        Ok(())
    })
}

// ---- Compiling ----

/// New compile options with the defaults.
///
/// # Safety
///
/// `options` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_compile_options_new(
    options: *mut *mut geogen_compile_options,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or writable.
        let out = unsafe { out_object(options, "options") }?;
        out.set(geogen_compile_options::default());
        Ok(())
    })
}

/// Chooses the script's language.
///
/// # Safety
///
/// `options` is NULL or live options nothing else uses meanwhile; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_compile_options_set_language(
    options: *mut geogen_compile_options,
    language: geogen_language,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live options used by this call alone.
        let options = unsafe { arg_mut(options, "options") }?;
        options.language = Language::from_code(language)?;
        Ok(())
    })
}

/// Chooses the Height-Slang dialect.
///
/// # Safety
///
/// As [`geogen_compile_options_set_language`].
#[no_mangle]
pub unsafe extern "C" fn geogen_compile_options_set_dialect(
    options: *mut geogen_compile_options,
    dialect: geogen_dialect,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live options used by this call alone.
        let options = unsafe { arg_mut(options, "options") }?;
        options.dialect = dialect_from_code(dialect)?;
        Ok(())
    })
}

/// Sets a limit of compiling (the script size) or of every render of the script.
///
/// # Safety
///
/// As [`geogen_compile_options_set_language`].
#[no_mangle]
pub unsafe extern "C" fn geogen_compile_options_set_limit(
    options: *mut geogen_compile_options,
    limit: geogen_limit,
    value: u64,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live options used by this call alone.
        let options = unsafe { arg_mut(options, "options") }?;
        options.set_limit(Limit::from_code(limit)?, value)
    })
}

/// Frees compile options (NULL is fine).
///
/// # Safety
///
/// `options` is NULL or options this library made, not used again.
#[no_mangle]
pub unsafe extern "C" fn geogen_compile_options_free(options: *mut geogen_compile_options) {
    // SAFETY: by the contract, NULL or live options handed over for good.
    quietly((), || unsafe { free_object(options) })
}

/// Compiles a script.
///
/// # Safety
///
/// `name` is NULL or a NUL-terminated string; `source` is NULL or `source_length` readable
/// bytes; `options` is NULL or live options; `script` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_script_compile(
    name: *const c_char,
    source: *const c_char,
    source_length: usize,
    options: *const geogen_compile_options,
    script: *mut *mut geogen_script,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or writable.
        let out = unsafe { out_object(script, "script") }?;
        // SAFETY: by the contract, NULL or a NUL-terminated string.
        let name = unsafe { arg_str(name, "name") }?;
        if source.is_null() {
            return Err(Fault::null("source"));
        }
        if source_length > isize::MAX as usize {
            return Err(Fault::invalid(format!("source_length {source_length} is larger than memory can hold")));
        }
        // SAFETY: not NULL, and by the contract `source_length` readable bytes that stay put
        // during the call.
        let bytes = unsafe { std::slice::from_raw_parts(source.cast::<u8>(), source_length) };
        let defaults = geogen_compile_options::default();
        // SAFETY: by the contract, NULL (the defaults) or live options.
        let options = unsafe { options.as_ref() }.unwrap_or(&defaults);
        out.set(script::compile(name, bytes, options)?);
        Ok(())
    })
}

/// Frees a compiled script (NULL is fine).
///
/// # Safety
///
/// `script` is NULL or a script this library made, which no thread uses any more.
#[no_mangle]
pub unsafe extern "C" fn geogen_script_free(script: *mut geogen_script) {
    // SAFETY: by the contract, NULL or a live script handed over for good.
    quietly((), || unsafe { free_object(script) })
}

// ---- What a script declares ----

/// The script's metadata and counts.
///
/// # Safety
///
/// `script` is NULL or a live script; `info` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_script_get_info(
    script: *const geogen_script,
    info: *mut geogen_script_info,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or a live script.
        let script = unsafe { arg_ref(script, "script") }?;
        if info.is_null() {
            return Err(Fault::null("info"));
        }
        let (width_finite, width_min, width_max, width_default) = axis_info(&script.width);
        let (height_finite, height_min, height_max, height_default) = axis_info(&script.height);
        let value = geogen_script_info {
            name: script.name.as_ptr(),
            description: script.description.as_ptr(),
            author: script.author.as_ptr(),
            width_finite,
            height_finite,
            width_min,
            width_max,
            width_default,
            height_min,
            height_max,
            height_default,
            param_count: count_u32(script.params.len()),
            map_count: count_u32(script.maps.len()),
        };
        // SAFETY: not NULL and, by the contract, writable.
        unsafe { set_optional(info, value) };
        Ok(())
    })
}

/// One parameter's declaration.
///
/// # Safety
///
/// `script` is NULL or a live script; `param` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_script_param(
    script: *const geogen_script,
    index: u32,
    param: *mut geogen_param_info,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or a live script.
        let script = unsafe { arg_ref(script, "script") }?;
        if param.is_null() {
            return Err(Fault::null("param"));
        }
        let p = &script.params[self::index(index, script.params.len(), "parameter")?];
        let value = geogen_param_info {
            name: p.name.as_ptr(),
            label: p.label.as_ptr(),
            description: p.description.as_ptr(),
            kind: p.kind,
            restriction: p.restriction,
            min: p.min,
            max: p.max,
            default_value: p.default_value,
            default_text: p.default_text.as_ptr(),
            item_count: count_u32(p.items.len()),
        };
        // SAFETY: not NULL and, by the contract, writable.
        unsafe { set_optional(param, value) };
        Ok(())
    })
}

/// One item of an enum parameter.
///
/// # Safety
///
/// `script` is NULL or a live script; `name`, `value` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_script_param_item(
    script: *const geogen_script,
    index: u32,
    item: u32,
    name: *mut *const c_char,
    value: *mut f64,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or a live script.
        let script = unsafe { arg_ref(script, "script") }?;
        let p = &script.params[self::index(index, script.params.len(), "parameter")?];
        let (item_name, item_value) = &p.items[self::index(item, p.items.len(), "enum item")?];
        // SAFETY: by the contract, each NULL or writable.
        unsafe {
            set_optional(name, item_name.as_ptr());
            set_optional(value, *item_value);
        }
        Ok(())
    })
}

/// The name of one map the script yields.
///
/// # Safety
///
/// `script` is NULL or a live script; `name` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_script_map_name(
    script: *const geogen_script,
    index: u32,
    name: *mut *const c_char,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or a live script.
        let script = unsafe { arg_ref(script, "script") }?;
        if name.is_null() {
            return Err(Fault::null("name"));
        }
        let (_, map) = &script.maps[self::index(index, script.maps.len(), "map")?];
        // SAFETY: not NULL and, by the contract, writable.
        unsafe { set_optional(name, map.as_ptr()) };
        Ok(())
    })
}

/// Checks the settings' parameters against the script.
///
/// # Safety
///
/// `script` and `settings` are NULL or live objects (the settings not changed meanwhile);
/// `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_script_check_settings(
    script: *const geogen_script,
    settings: *const geogen_settings,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live objects.
        let (script, settings) = unsafe { (arg_ref(script, "script")?, arg_ref(settings, "settings")?) };
        let run = geogen::RunSettings { parameters: settings.parameters.clone(), ..geogen::RunSettings::default() };
        script.script.parameter_values(&run).map_err(|failure| Fault::from_failure(&failure))?;
        settings.limits_for(script)?;
        Ok(())
    })
}

// ---- Settings ----

/// New settings with the defaults.
///
/// # Safety
///
/// `settings` and `error` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_new(
    settings: *mut *mut geogen_settings,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or writable.
        let out = unsafe { out_object(settings, "settings") }?;
        out.set(geogen_settings::default());
        Ok(())
    })
}

/// A copy of settings.
///
/// # Safety
///
/// `settings` is NULL or live settings not changed meanwhile; `copy` and `error` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_clone(
    settings: *const geogen_settings,
    copy: *mut *mut geogen_settings,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or writable.
        let out = unsafe { out_object(copy, "copy") }?;
        // SAFETY: by the contract, NULL or live settings.
        let settings = unsafe { arg_ref(settings, "settings") }?;
        out.set(settings.clone());
        Ok(())
    })
}

/// Frees settings (NULL is fine).
///
/// # Safety
///
/// `settings` is NULL or settings this library made, which nothing uses any more.
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_free(settings: *mut geogen_settings) {
    // SAFETY: by the contract, NULL or live settings handed over for good.
    quietly((), || unsafe { free_object(settings) })
}

/// Sets the seed.
///
/// # Safety
///
/// `settings` is NULL or live settings nothing else uses meanwhile; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_set_seed(
    settings: *mut geogen_settings,
    seed: u32,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live settings used by this call alone.
        let settings = unsafe { arg_mut(settings, "settings") }?;
        settings.seed = seed;
        Ok(())
    })
}

/// Sets the seed from text, as `--seed` reads it.
///
/// # Safety
///
/// As [`geogen_settings_set_seed`]; `seed` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_set_seed_text(
    settings: *mut geogen_settings,
    seed: *const c_char,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live settings used by this call alone, and NULL or a
        // NUL-terminated string.
        let (settings, seed) = unsafe { (arg_mut(settings, "settings")?, arg_str(seed, "seed")?) };
        settings.seed = geogen_random::recognize_seed(seed);
        Ok(())
    })
}

/// Sets a parameter from text.
///
/// # Safety
///
/// As [`geogen_settings_set_seed`]; `name` and `value` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_set_param(
    settings: *mut geogen_settings,
    name: *const c_char,
    value: *const c_char,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live settings used by this call alone, and NULL or
        // NUL-terminated strings.
        let (settings, name, value) =
            unsafe { (arg_mut(settings, "settings")?, arg_str(name, "name")?, arg_str(value, "value")?) };
        settings.set_param(name, value.to_string())
    })
}

/// Sets a parameter to a number.
///
/// # Safety
///
/// As [`geogen_settings_set_param`].
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_set_param_number(
    settings: *mut geogen_settings,
    name: *const c_char,
    value: f64,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live settings used by this call alone, and NULL or a
        // NUL-terminated string.
        let (settings, name) = unsafe { (arg_mut(settings, "settings")?, arg_str(name, "name")?) };
        if !value.is_finite() {
            return Err(Fault::host(geogen::diag::Diagnostic::new(
                geogen::diag::codes::GGE4002,
                format!("the parameter `{name}` cannot be {value}: a value must be a finite number"),
            )));
        }
        settings.set_param(name, number_text(value))
    })
}

/// Forgets every parameter value.
///
/// # Safety
///
/// As [`geogen_settings_set_seed`].
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_clear_params(
    settings: *mut geogen_settings,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live settings used by this call alone.
        let settings = unsafe { arg_mut(settings, "settings") }?;
        settings.parameters.clear();
        Ok(())
    })
}

/// Sets (or, with 0, unsets) the map size of each finite axis.
///
/// # Safety
///
/// As [`geogen_settings_set_seed`].
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_set_map_size(
    settings: *mut geogen_settings,
    width: u32,
    height: u32,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live settings used by this call alone.
        let settings = unsafe { arg_mut(settings, "settings") }?;
        settings.map_width = (width != 0).then_some(width);
        settings.map_height = (height != 0).then_some(height);
        Ok(())
    })
}

/// Overrides one of the script's limits.
///
/// # Safety
///
/// As [`geogen_settings_set_seed`].
#[no_mangle]
pub unsafe extern "C" fn geogen_settings_set_limit(
    settings: *mut geogen_settings,
    limit: geogen_limit,
    value: u64,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract, NULL or live settings used by this call alone.
        let settings = unsafe { arg_mut(settings, "settings") }?;
        settings.set_limit(Limit::from_code(limit)?, value)
    })
}

// ---- Rendering ----

/// Reads the arguments every render takes.
///
/// # Safety
///
/// `script`, `settings` and `map` are NULL or live objects and a NUL-terminated string.
unsafe fn render_arguments<'a>(
    script: *const geogen_script,
    settings: *const geogen_settings,
    map: *const c_char,
) -> Result<(&'a geogen_script, &'a geogen_settings, &'a str), Fault> {
    // SAFETY: by this function's contract.
    unsafe { Ok((arg_ref(script, "script")?, arg_ref(settings, "settings")?, arg_str(map, "map")?)) }
}

/// Renders a rectangle of a map into a float buffer.
///
/// # Safety
///
/// `script` and `settings` are NULL or live objects (the settings not changed meanwhile); `map`
/// is NULL or a NUL-terminated string; `out` is NULL or a buffer of at least
/// (height − 1) × row_stride + width floats nothing else uses meanwhile; `min`, `max` and
/// `error` are NULL or writable.
// The C signature: every argument is part of the interface.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn geogen_render_float(
    script: *const geogen_script,
    settings: *const geogen_settings,
    map: *const c_char,
    x: i64,
    y: i64,
    width: u32,
    height: u32,
    scale: f64,
    out: *mut f32,
    row_stride: usize,
    min: *mut f32,
    max: *mut f32,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract.
        let (script, settings, map) = unsafe { render_arguments(script, settings, map) }?;
        if out.is_null() {
            return Err(Fault::null("out"));
        }
        let layout = Layout::check::<f32>(width, height, row_stride)?;
        let heights = render::render(script, settings, &Request { map, x, y, width, height, scale })?;
        let mut range = Range::default();
        // SAFETY: `out` is not NULL and, by the contract, holds the checked layout.
        unsafe {
            copy_rows(&heights, layout, out, |row, target| {
                target.copy_from_slice(row);
                range.add_all(row);
            })
        };
        let (lo, hi) = range.bounds.unwrap_or((f32::NAN, f32::NAN));
        // SAFETY: by the contract, each NULL or writable.
        unsafe {
            set_optional(min, lo);
            set_optional(max, hi);
        }
        Ok(())
    })
}

/// Renders a rectangle of a map into a 16-bit buffer, quantised as `--format r16`.
///
/// # Safety
///
/// As [`geogen_render_float`], with a buffer of `uint16_t`.
// The C signature: every argument is part of the interface.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn geogen_render_u16(
    script: *const geogen_script,
    settings: *const geogen_settings,
    map: *const c_char,
    x: i64,
    y: i64,
    width: u32,
    height: u32,
    scale: f64,
    out: *mut u16,
    row_stride: usize,
    min: *mut u16,
    max: *mut u16,
    error: *mut *mut geogen_error,
) -> geogen_status {
    guard(error, || {
        // SAFETY: by the contract.
        let (script, settings, map) = unsafe { render_arguments(script, settings, map) }?;
        if out.is_null() {
            return Err(Fault::null("out"));
        }
        let layout = Layout::check::<u16>(width, height, row_stride)?;
        let heights = render::render(script, settings, &Request { map, x, y, width, height, scale })?;
        let mut range = Range::default();
        let mut scratch = Vec::new();
        // SAFETY: `out` is not NULL and, by the contract, holds the checked layout.
        unsafe {
            copy_rows(&heights, layout, out, |row, target| {
                quantize_row(row, target, &mut scratch);
                range.add_all(target);
            })
        };
        let (lo, hi) = range.bounds.unwrap_or((0, 0));
        // SAFETY: by the contract, each NULL or writable.
        unsafe {
            set_optional(min, lo);
            set_optional(max, hi);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The island's 257 × 257 pixels at 300,128 through the exported functions (as a C program
    /// calls them) are the bytes of `geogen render examples/island.ggs --seed 7 --map-size
    /// 1024x1024 --origin 300,128 --size 257x257 --format r16`: the command line's settings
    /// (its seed reading, map size, origin and size) rendered by the library and written by the
    /// command line's R16 encoder. (`tests/c_api.rs` checks the C libraries against that encoder.)
    #[test]
    fn the_island_renders_as_the_command_line_renders_it() {
        const SIDE: u32 = 257;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/island.ggs");
        let source = std::fs::read(path).unwrap();

        let settings = geogen::RunSettings {
            seed: geogen_random::recognize_seed("7"),
            map_width: Some(1024),
            map_height: Some(1024),
            render_origin: (300, 128),
            render_width: Some(SIDE),
            render_height: Some(SIDE),
            ..geogen::RunSettings::default()
        };
        let script = geogen::Script::compile_bytes(path, &source, &geogen::CompileOptions::default()).unwrap();
        let rendered = script.render(&settings, &geogen::RenderConfig::default(), None).unwrap();
        let field = geogen_io::HeightField::new(SIDE, SIDE, rendered.maps["main"].data()).unwrap();
        let expected = geogen_io::encode(geogen_io::Format::R16, &field).unwrap();

        let mut samples = vec![0u16; (SIDE * SIDE) as usize];
        let (mut low, mut high) = (0u16, 0u16);
        // SAFETY: every pointer is NULL (where allowed), a live object made here, a NUL-terminated
        // literal, or a buffer of SIDE × SIDE samples with rows SIDE apart.
        unsafe {
            let (mut c_script, mut c_settings) = (std::ptr::null_mut(), std::ptr::null_mut());
            let name = c"examples/island.ggs";
            let text = source.as_ptr().cast();
            let status = geogen_script_compile(
                name.as_ptr(),
                text,
                source.len(),
                std::ptr::null(),
                &mut c_script,
                std::ptr::null_mut(),
            );
            assert_eq!(status, GEOGEN_OK);
            assert_eq!(geogen_settings_new(&mut c_settings, std::ptr::null_mut()), GEOGEN_OK);
            assert_eq!(geogen_settings_set_seed_text(c_settings, c"7".as_ptr(), std::ptr::null_mut()), GEOGEN_OK);
            assert_eq!(geogen_settings_set_map_size(c_settings, 1024, 1024, std::ptr::null_mut()), GEOGEN_OK);
            let status = geogen_render_u16(
                c_script,
                c_settings,
                c"main".as_ptr(),
                300,
                128,
                SIDE,
                SIDE,
                1.0,
                samples.as_mut_ptr(),
                SIDE as usize,
                &mut low,
                &mut high,
                std::ptr::null_mut(),
            );
            assert_eq!(status, GEOGEN_OK);
            geogen_settings_free(c_settings);
            geogen_script_free(c_script);
        }
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        assert!(bytes == expected, "the exported render differs from the command line's r16 bytes");
        assert_eq!((low, high), (*samples.iter().min().unwrap(), *samples.iter().max().unwrap()));
    }
}
