//! The editor's API: the session, checking, rendering and saving the script.
//!
//! Every answer is JSON but a preview's, which is binary ([`PREVIEW_MEDIA_TYPE`]: a JSON header
//! and each map's heights as 16-bit samples, so that a 512² preview is half a megabyte; the page
//! colours and shades them itself). A refused request is `{"diagnostics": [...]}` with a 4xx status: 400 for a
//! bad request (malformed JSON, a render too large: GGE4000, GGE4003), 401 for a missing or wrong
//! token, 409 for a save over a changed file or a render superseded by a newer one, 422 for a
//! script that does not compile or run (the compiler's own diagnostics).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Request, State as AxState};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use geogen::diag::{codes, ErrorCode};
use geogen::{Failure, HeightMap, RenderConfig, RunSettings, Script};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{Current, Shared, MAX_RENDER_PIXELS, MAX_RENDER_SIDE};

/// The media type of a preview answer (docs/studio.md): [`PREVIEW_MAGIC`], the header's length
/// (u32, little-endian), the header (JSON), zero bytes up to a multiple of 4, then each map's
/// heights at the byte offset its header entry gives: `width × height` u16 samples, little-endian,
/// row by row, `min + q × (max − min) / 65535`.
pub const PREVIEW_MEDIA_TYPE: &str = "application/vnd.geogen.preview";
/// The first bytes of a preview answer.
pub const PREVIEW_MAGIC: &[u8; 8] = b"GGPREV1\0";

pub(crate) fn routes(state: Shared) -> Router {
    Router::new()
        .route("/api/session", get(session))
        .route("/api/check", post(check))
        .route("/api/render", post(render))
        .route("/api/save", post(save))
        .route("/api/export", post(crate::export::export))
        .route("/api/export/progress", get(crate::export::progress))
        .merge(crate::files::routes())
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
        .with_state(state)
}

/// A refused request: a status and diagnostics (code, message, hint; a span when it is about
/// the script).
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: Value,
}

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>, hint: Option<&str>) -> ApiError {
        let diagnostic = json!({
            "code": code.to_string(), "message": message.into(), "hint": hint,
            "line": null, "column": null, "from": null, "to": null,
        });
        ApiError { status, body: json!({ "diagnostics": [diagnostic], "messages": [] }) }
    }

    pub fn bad_request(code: ErrorCode, message: impl Into<String>, hint: Option<&str>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message, hint)
    }

    /// A script that failed: its diagnostics with their places, and the messages printed first.
    pub fn failure(failure: &Failure) -> ApiError {
        // A failure about the request (GGE4xxx: parameters, sizes) is the request's fault.
        let status = if failure.first().code.to_string().starts_with("GGE4") {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::UNPROCESSABLE_ENTITY
        };
        ApiError { status, body: json!({ "diagnostics": diagnostics_json(failure), "messages": failure.messages }) }
    }

    pub(crate) fn rejected(rejection: JsonRejection) -> ApiError {
        // A body of the wrong shape is as bad a request as one that is not JSON.
        let status = match rejection.status() {
            StatusCode::UNPROCESSABLE_ENTITY => StatusCode::BAD_REQUEST,
            other => other,
        };
        ApiError::new(
            status,
            codes::GGE4000,
            format!("malformed request: {}", rejection.body_text()),
            Some("the body must be JSON of the documented shape (docs/studio.md)"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// Every diagnostic of a failure, with 1-based line and column and the span as UTF-16 offsets
/// (`from`, `to`: what the editor counts in).
pub(crate) fn diagnostics_json(failure: &Failure) -> Vec<Value> {
    let text = failure.source.text();
    failure
        .diagnostics
        .iter()
        .map(|d| {
            let position = d.span.map(|s| failure.source.span_start(s));
            let (from, to) = match d.span {
                Some(span) => {
                    let from = utf16_offset(text, span.start as usize);
                    (Some(from), Some(utf16_offset(text, span.end as usize).max(from)))
                }
                None => (None, None),
            };
            json!({
                "code": d.code.to_string(),
                "message": d.message,
                "hint": d.hint,
                "line": position.map(|p| p.line),
                "column": position.map(|p| p.column),
                "from": from,
                "to": to,
            })
        })
        .collect()
}

/// The UTF-16 offset of a byte offset (clamped to the text and moved back to a character
/// boundary).
pub(crate) fn utf16_offset(text: &str, byte: usize) -> usize {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    text[..byte].encode_utf16().count()
}

/// The token from the `token` query parameter or the `X-Geogen-Token` header.
pub(crate) fn request_token(request: &Request) -> Option<String> {
    if let Some(value) = request.headers().get("x-geogen-token").and_then(|v| v.to_str().ok()) {
        return Some(value.to_string());
    }
    let query = request.uri().query()?;
    query.split('&').find_map(|pair| pair.strip_prefix("token=").map(str::to_string))
}

pub(crate) async fn require_token(AxState(state): AxState<Shared>, request: Request, next: Next) -> Response {
    match request_token(&request) {
        Some(token) if constant_time_eq(token.as_bytes(), state.token.as_bytes()) => next.run(request).await,
        _ => ApiError::new(
            StatusCode::UNAUTHORIZED,
            codes::GGE4000,
            "missing or wrong token",
            Some("open the URL the studio printed: it carries the token"),
        )
        .into_response(),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn session(AxState(state): AxState<Shared>) -> Json<Value> {
    let mut document = state.document.lock().unwrap_or_else(|e| e.into_inner());
    // The file as it is now (another editor may have changed it since the studio started): a
    // reloaded page edits, and saves over, what is on disk. An unreadable file keeps the text
    // read before.
    if let Some(Ok(mut fresh)) = document.path.clone().map(|path| crate::read_document(Some(&path))) {
        // The name the document was opened by (a link's, when it was opened through one).
        fresh.name = std::mem::take(&mut document.name);
        *document = fresh;
    }
    let mut answer = crate::files::document_json(&document);
    let fields = json!({
        "directory": crate::files::directory(&state).is_some(),
        "library": crate::library::completions(),
        "limits": { "max_side": MAX_RENDER_SIDE, "max_pixels": MAX_RENDER_PIXELS, "max_export_pixels": crate::MAX_EXPORT_PIXELS },
        "export": { "dir": state.options.export_dir.display().to_string(), "formats": crate::export::format_names() },
        "tiles": { "size": crate::tiles::TILE_SIZE, "zoom_scale_1": crate::tiles::ZOOM_SCALE_1, "max_zoom": crate::tiles::MAX_ZOOM },
        "palettes": crate::tiles::palettes_json(),
    });
    if let (Some(answer), Value::Object(fields)) = (answer.as_object_mut(), fields) {
        answer.extend(fields);
    }
    Json(answer)
}

#[derive(Deserialize)]
struct CheckRequest {
    source: String,
}

/// Compiles the text: its diagnostics, or what the parameters panel needs (metadata, maps).
async fn check(
    AxState(state): AxState<Shared>,
    body: Result<Json<CheckRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(request) = body.map_err(ApiError::rejected)?;
    let name = state.document.lock().unwrap_or_else(|e| e.into_inner()).name.clone();
    let source = request.source;
    let result = tokio::task::spawn_blocking(move || compile_and_remember(&state, &name, &source))
        .await
        .map_err(|e| internal(&e.to_string()))?;
    match result {
        Ok(script) => Ok(Json(json!({ "ok": true, "diagnostics": [], "info": crate::library::info_json(&script) }))),
        Err(failure) => Ok(Json(json!({ "ok": false, "diagnostics": diagnostics_json(&failure) }))),
    }
}

/// Compiles, and makes the script the one tiles render when it compiles.
pub(crate) fn compile_and_remember(state: &Shared, name: &str, source: &str) -> Result<Arc<Script>, Failure> {
    let hash = crate::sha256_hex(source.as_bytes());
    {
        let current = state.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = current.as_ref().filter(|c| c.hash == hash) {
            return Ok(Arc::clone(&current.script));
        }
    }
    let script = Arc::new(crate::compile(name, source)?);
    *state.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(Current { script: Arc::clone(&script), hash });
    Ok(script)
}

pub(crate) fn internal(message: &str) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, codes::GGE5000, message.to_string(), None)
}

/// A file the server could not write (not a bug: a full disk, a permission): 507 when the disk is
/// full, 500 otherwise, GGE4023 either way.
pub(crate) fn cannot_write(what: &str, error: &geogen_io::IoError) -> ApiError {
    let full =
        matches!(error, geogen_io::IoError::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull);
    let (status, hint) = if full {
        (StatusCode::INSUFFICIENT_STORAGE, "the disk is full: free some space and try again")
    } else {
        (StatusCode::INTERNAL_SERVER_ERROR, "check the permissions of the file and its directory")
    };
    ApiError::new(status, codes::GGE4023, format!("cannot {what}: {error}"), Some(hint))
}

/// A render the page asks for.
#[derive(Deserialize)]
pub(crate) struct RenderRequest {
    pub(crate) source: String,
    /// As on the command line: a number is used as is, other text is hashed.
    #[serde(default)]
    seed: Option<Value>,
    pub(crate) width: u32,
    pub(crate) height: u32,
    #[serde(default = "one")]
    scale: f64,
    #[serde(default)]
    origin: (i64, i64),
    #[serde(default)]
    map_width: Option<u32>,
    #[serde(default)]
    map_height: Option<u32>,
    /// Script parameters by name: numbers, booleans, or text read by the parameter's type.
    #[serde(default)]
    parameters: BTreeMap<String, Value>,
    /// Only these maps (all by default).
    #[serde(default)]
    pub(crate) maps: Option<Vec<String>>,
}

fn one() -> f64 {
    1.0
}

/// A JSON value as the text `-p NAME=VALUE` would give.
pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(crate) fn seed_of(value: Option<&Value>) -> u32 {
    value.map_or(0, |v| geogen_random::recognize_seed(&value_text(v)))
}

/// Refuses a render larger than the studio's limits, before anything runs.
pub(crate) fn check_render_size(width: u32, height: u32) -> Result<(), ApiError> {
    let hint = format!("the studio renders at most {MAX_RENDER_SIDE} pixels a side and {MAX_RENDER_PIXELS} pixels in all; use `geogen render` for larger maps");
    if width == 0 || height == 0 {
        return Err(ApiError::bad_request(codes::GGE4003, "the render size must be at least 1x1", None));
    }
    if width > MAX_RENDER_SIDE || height > MAX_RENDER_SIDE || u64::from(width) * u64::from(height) > MAX_RENDER_PIXELS {
        return Err(ApiError::bad_request(
            codes::GGE4003,
            format!("a render of {width}x{height} pixels is larger than the studio allows"),
            Some(&hint),
        ));
    }
    Ok(())
}

/// Renders every yielded map (or those asked for) and answers a binary preview: the heights of
/// each map as 16-bit samples with their range, and the script's messages and timings in a JSON
/// header. A newer render request stops this one (409).
async fn render(
    AxState(state): AxState<Shared>,
    body: Result<Json<RenderRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(request) = body.map_err(ApiError::rejected)?;
    check_render_size(request.width, request.height)?;
    let generation = state.latest_render.fetch_add(1, Ordering::SeqCst) + 1;
    let _permit = state.render_slot.acquire().await.map_err(|e| internal(&e.to_string()))?;
    if state.latest_render.load(Ordering::SeqCst) != generation {
        return Err(superseded());
    }
    let worker = Arc::clone(&state);
    let answer = tokio::task::spawn_blocking(move || render_blocking(&worker, &request, generation))
        .await
        .map_err(|e| internal(&e.to_string()))??;
    Ok(([(axum::http::header::CONTENT_TYPE, PREVIEW_MEDIA_TYPE)], answer).into_response())
}

fn superseded() -> ApiError {
    ApiError::new(StatusCode::CONFLICT, codes::GGE4000, "superseded by a newer render request", None)
}

impl RenderRequest {
    /// The run settings of this request, as `geogen render` would make them of its flags.
    /// The parameters as `-p NAME=VALUE` gives them.
    pub(crate) fn parameter_texts(&self) -> Vec<(String, String)> {
        self.parameters.iter().map(|(k, v)| (k.clone(), value_text(v))).collect()
    }

    pub(crate) fn map_size(&self) -> Option<(u32, u32)> {
        self.map_width.zip(self.map_height)
    }

    pub(crate) fn scale(&self) -> f64 {
        self.scale
    }

    pub(crate) fn origin(&self) -> (i64, i64) {
        self.origin
    }

    pub(crate) fn settings(&self, limits: &geogen::Limits) -> RunSettings {
        RunSettings {
            seed: seed_of(self.seed.as_ref()),
            parameters: self.parameters.iter().map(|(k, v)| (k.clone(), value_text(v))).collect(),
            map_width: self.map_width,
            map_height: self.map_height,
            render_origin: self.origin,
            render_width: Some(self.width),
            render_height: Some(self.height),
            render_scale: self.scale,
            limits: limits.clone(),
            maps: self.maps.clone(),
            ..RunSettings::default()
        }
    }
}

fn render_blocking(state: &Shared, request: &RenderRequest, generation: u64) -> Result<Vec<u8>, ApiError> {
    let started = Instant::now();
    let name = state.document.lock().unwrap_or_else(|e| e.into_inner()).name.clone();
    let script = compile_and_remember(state, &name, &request.source).map_err(|f| ApiError::failure(&f))?;
    let settings = request.settings(&state.options.limits);
    // A newer request gives this render up: between steps, and inside the steps that can take
    // long on their own (a Height-Slang program over the whole preview).
    let superseded_by_newer = {
        let state = Arc::clone(state);
        move || state.latest_render.load(Ordering::SeqCst) != generation
    };
    let config = RenderConfig {
        memory_limit: state.options.memory_limit,
        solutions: Some(state.solutions.clone()),
        stop: geogen::StopSignal::new(superseded_by_newer),
        ..RenderConfig::default()
    };
    let stop = || state.latest_render.load(Ordering::SeqCst) != generation;
    let rendered = match script.render_until(&settings, &config, None, &stop) {
        Ok(Some(rendered)) => rendered,
        Ok(None) => return Err(superseded()),
        Err(failure) => return Err(ApiError::failure(&failure)),
    };
    let render_ms = started.elapsed().as_secs_f64() * 1e3;
    // The script's order, not the map's alphabetical one.
    let order = &rendered.output.yielded;
    let mut named: Vec<(&String, &HeightMap)> = rendered.maps.iter().collect();
    named.sort_by_key(|(name, _)| order.iter().position(|n| n == *name).unwrap_or(usize::MAX));
    let samples: Vec<Samples> = named.iter().map(|(_, map)| Samples::of(map.data())).collect();
    let geometry = &rendered.output.geometry;
    let header = |offsets: &[usize]| {
        let maps: Vec<Value> = named
            .iter()
            .zip(&samples)
            .zip(offsets)
            .map(|(((name, map), samples), offset)| {
                let rect = map.rect();
                json!({
                    "name": name, "x": rect.x, "y": rect.y, "width": rect.width, "height": rect.height,
                    "min": samples.min, "max": samples.max, "offset": offset,
                })
            })
            .collect();
        json!({
            "maps": maps,
            "messages": rendered.output.messages,
            "instructions": rendered.output.instructions,
            "geometry": {
                "map_width": geometry.map_width, "map_height": geometry.map_height,
                "render_width": geometry.render_width, "render_height": geometry.render_height,
                "origin": [geometry.render_origin_x, geometry.render_origin_y],
                "scale": geometry.render_scale,
            },
            "render_ms": render_ms,
            "total_ms": started.elapsed().as_secs_f64() * 1e3,
        })
        .to_string()
    };
    // The offsets depend on the header's length, which depends on the offsets' digits: lay the
    // header out with provisional offsets, then again with the real ones until it no longer grows
    // (twice at most in practice).
    let mut header_len = header(&vec![0; samples.len()]).len();
    loop {
        let offsets = sample_offsets(header_len, &samples);
        let text = header(&offsets);
        if text.len() <= header_len {
            return Ok(preview_bytes(text, header_len, &offsets, &samples));
        }
        header_len = text.len();
    }
}

/// A map's heights as 16-bit samples over their range.
struct Samples {
    min: f32,
    max: f32,
    data: Vec<u16>,
}

impl Samples {
    /// NaN is sent as 0 and an infinity as the finite extreme of its sign (the writers read NaN as
    /// 0 too); the range is that of the values sent, so the readout shows heights outside [-1, 1]
    /// as the script made them.
    fn of(heights: &[f32]) -> Samples {
        let sent = |h: f32| if h.is_nan() { 0.0 } else { h.clamp(f32::MIN, f32::MAX) };
        let (min, max) =
            heights.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| (lo.min(sent(h)), hi.max(sent(h))));
        let (min, max) = if heights.is_empty() { (0.0, 0.0) } else { (min, max) };
        // In f64: the range of two extreme f32s overflows f32.
        let span = f64::from(max) - f64::from(min);
        let data =
            heights
                .iter()
                .map(|&h| {
                    if span > 0.0 {
                        ((f64::from(sent(h)) - f64::from(min)) / span * 65535.0).round() as u16
                    } else {
                        0
                    }
                })
                .collect();
        Samples { min, max, data }
    }
}

/// Where each map's samples start, after a header of `header_len` bytes padded to 4.
fn sample_offsets(header_len: usize, samples: &[Samples]) -> Vec<usize> {
    let mut at = (PREVIEW_MAGIC.len() + 4 + header_len).next_multiple_of(4);
    samples
        .iter()
        .map(|s| {
            let offset = at;
            at = (at + s.data.len() * 2).next_multiple_of(4);
            offset
        })
        .collect()
}

fn preview_bytes(header: String, header_len: usize, offsets: &[usize], samples: &[Samples]) -> Vec<u8> {
    // The header is padded with spaces to the length the offsets were laid out for.
    let header = format!("{header:header_len$}");
    let total =
        offsets.last().zip(samples.last()).map_or(PREVIEW_MAGIC.len() + 4 + header_len, |(o, s)| o + s.data.len() * 2);
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(PREVIEW_MAGIC);
    out.extend_from_slice(&(header_len as u32).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for (offset, samples) in offsets.iter().zip(samples) {
        out.resize(*offset, 0);
        out.extend(samples.data.iter().flat_map(|q| q.to_le_bytes()));
    }
    out
}

#[derive(Deserialize)]
struct SaveRequest {
    source: String,
    /// The version the editor opened (or last saved): the save is refused if the file changed.
    version: String,
}

/// Writes the text to the script file, atomically, unless the file changed on disk since the
/// editor read it (409). The file is the document's (the one the studio was started with, or one
/// of its directory the page opened or created); no save request names one.
async fn save(
    AxState(state): AxState<Shared>,
    body: Result<Json<SaveRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(request) = body.map_err(ApiError::rejected)?;
    tokio::task::spawn_blocking(move || save_blocking(&state, &request))
        .await
        .map_err(|e| internal(&e.to_string()))?
        .map(Json)
}

fn save_blocking(state: &Shared, request: &SaveRequest) -> Result<Value, ApiError> {
    let mut document = state.document.lock().unwrap_or_else(|e| e.into_inner());
    let Some(path) = document.path.clone() else {
        return Err(ApiError::bad_request(
            codes::GGE4000,
            "the built-in example has no file to save to",
            Some("start the studio with a script file: geogen studio my.ggs"),
        ));
    };
    if request.source.len() > geogen::DEFAULT_MAX_SCRIPT_BYTES {
        return Err(ApiError::bad_request(codes::GGE1107, "the script is larger than a script may be", None));
    }
    let on_disk =
        crate::disk_version(&path).map_err(|e| ApiError::new(StatusCode::CONFLICT, codes::GGE4000, e, None))?;
    let (disk_text, disk_version) = match on_disk {
        None => (String::new(), crate::ABSENT.to_string()),
        Some((bytes, version)) => (String::from_utf8_lossy(&bytes).into_owned(), version),
    };
    // The page saves over the version it last read or saved; anything else on disk now is
    // another program's change, which is never overwritten unseen: the refusal carries the
    // file's text and version, and the page offers to keep either (saving the page's text over
    // that version, or taking the file's).
    if disk_version != request.version {
        let mut refusal = ApiError::new(
            StatusCode::CONFLICT,
            codes::GGE4000,
            format!("`{}` changed on disk since the page read it; not saved", document.name),
            Some("keep your text (saving it over the file) or take the file's"),
        );
        refusal.body["disk"] = json!({ "source": disk_text, "version": disk_version });
        return Err(refusal);
    }
    if disk_version == crate::ABSENT {
        // The first save of a new script creates the file, and never over one that appeared
        // since the check above: that is a changed file like any other.
        match geogen_io::create_new_bytes(&path, request.source.as_bytes()) {
            Err(geogen_io::IoError::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
                let mut refusal = ApiError::new(
                    StatusCode::CONFLICT,
                    codes::GGE4000,
                    format!("`{}` appeared on disk while saving; not saved", document.name),
                    Some("keep your text (saving it over the file) or take the file's"),
                );
                if let Ok(Some((bytes, version))) = crate::disk_version(&path) {
                    refusal.body["disk"] = json!({ "source": String::from_utf8_lossy(&bytes), "version": version });
                }
                return Err(refusal);
            }
            written => written.map_err(|e| cannot_write("save", &e))?,
        }
    } else {
        geogen_io::write_bytes(&path, request.source.as_bytes()).map_err(|e| cannot_write("save", &e))?;
    }
    document.source = request.source.clone();
    document.version = crate::sha256_hex(request.source.as_bytes());
    Ok(json!({ "version": document.version }))
}
