//! The scripts of the studio's directory and the built-in examples: listing the directory's
//! scripts, switching the document to one of them, creating one (from the starter template or an
//! example's text), and the template a script that does not exist yet starts from.
//!
//! Requests name files here, so each name is hostile input: only a plain `.ggs` file name is
//! taken (no directory part, no `..`, nothing hidden), it is looked up in the studio's directory
//! only, and a symbolic link is followed only when it stays in that directory.

use std::path::{Path, PathBuf};

use axum::extract::rejection::JsonRejection;
use axum::extract::State as AxState;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use geogen::diag::codes;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::{cannot_write, internal, ApiError};
use crate::{Document, Shared};

/// What a script that does not exist yet starts as: small, but real terrain, with parameters,
/// noise and a yield to show the language.
pub(crate) const TEMPLATE: &str = include_str!("../templates/new.ggs");

/// The examples the page offers (file name, title, text): those of the repository's `examples/`
/// that show the most of the language and render quickly.
pub(crate) const EXAMPLES: &[(&str, &str, &str)] = &[
    ("island.ggs", "Island", geogen::EXAMPLE_ISLAND),
    ("dunes.ggs", "Dunes (infinite)", include_str!("../../../examples/dunes.ggs")),
    ("mesa.ggs", "Mesa and buttes", include_str!("../../../examples/mesa.ggs")),
    ("river_valley.ggs", "River valley (infinite east-west)", include_str!("../../../examples/river_valley.ggs")),
    ("ring_of_isles.ggs", "Ring of isles", include_str!("../../../examples/ring_of_isles.ggs")),
];

/// The longest file name taken, in bytes (well under every file system's limit).
const MAX_NAME_BYTES: usize = 100;
/// The most scripts listed: a directory of thousands is not what the menu is for.
const MAX_LISTED: usize = 500;

pub(crate) fn routes() -> Router<Shared> {
    Router::new()
        .route("/api/files", get(list))
        .route("/api/examples", get(examples))
        .route("/api/open", post(open))
        .route("/api/new", post(create))
}

/// The directory whose scripts the studio lists, opens and creates: the one of the script it was
/// started with (`None` for the built-in example, which has none).
pub(crate) fn directory(state: &Shared) -> Option<PathBuf> {
    let script = state.options.script.as_ref()?;
    Some(script.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf))
}

/// The document as the page takes it: `new` when its text is the template of a file not written
/// yet (the page marks it unsaved).
pub(crate) fn document_json(document: &Document) -> Value {
    json!({
        "name": document.name,
        "savable": document.path.is_some(),
        "source": document.source,
        "version": document.version,
        "new": document.path.is_some() && document.version == crate::ABSENT,
    })
}

/// Makes `document` the studio's, answering with it as the page takes it.
fn make_current(state: &Shared, document: Document) -> Json<Value> {
    let answer = document_json(&document);
    *state.document.lock().unwrap_or_else(|e| e.into_inner()) = document;
    Json(answer)
}

fn invalid_name(message: String) -> ApiError {
    ApiError::bad_request(
        codes::GGE4026,
        message,
        Some("give a plain file name such as `hills.ggs`: no directory, no leading dot, no \\ / : * ? \" < > |"),
    )
}

/// A plain script file name, `.ggs` added if missing (`add_extension`) or required.
pub(crate) fn script_name(name: &str, add_extension: bool) -> Result<String, ApiError> {
    let shown: String = name.chars().take(60).collect();
    let mut name = name.to_string();
    if add_extension && !name.ends_with(".ggs") {
        name.push_str(".ggs");
    }
    let refused_char = |c: char| c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|');
    if name.len() > MAX_NAME_BYTES {
        return Err(invalid_name(format!("the file name `{shown}…` is longer than {MAX_NAME_BYTES} bytes")));
    }
    if name.starts_with('.') || name.chars().any(refused_char) {
        return Err(invalid_name(format!("`{shown}` is not a plain file name")));
    }
    let stem = name.strip_suffix(".ggs").unwrap_or_default();
    if stem.is_empty() || stem.trim() != stem || stem.ends_with('.') {
        return Err(invalid_name(format!("`{shown}` is not a GeoGen Script file name (NAME.ggs)")));
    }
    Ok(name)
}

/// The file `path` (in `dir`) stands for: itself when it is a regular file, the file a link leads
/// to when that is a file in `dir` itself (so a save writes that file, and the link stays);
/// `None` for nothing there or no file. A link leading anywhere else is refused.
fn inside(dir: &Path, path: &Path) -> Result<Option<PathBuf>, ApiError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(None) };
    if meta.file_type().is_file() {
        return Ok(Some(path.to_path_buf()));
    }
    if !meta.file_type().is_symlink() {
        return Ok(None);
    }
    let (Ok(target), Ok(home)) = (std::fs::canonicalize(path), std::fs::canonicalize(dir)) else {
        return Ok(None);
    };
    if target.parent() != Some(home.as_path()) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Err(invalid_name(format!("`{name}` is a link leading out of the studio's directory")));
    }
    Ok(target.is_file().then_some(target))
}

fn no_directory() -> ApiError {
    ApiError::bad_request(
        codes::GGE4000,
        "the built-in example has no directory of scripts",
        Some("start the studio with a script file: geogen studio my.ggs (a new name starts from a template)"),
    )
}

/// `{dir, current, files}`: the `.ggs` files of the studio's directory (links leading out of it
/// left out), sorted.
async fn list(AxState(state): AxState<Shared>) -> Result<Json<Value>, ApiError> {
    let Some(dir) = directory(&state) else {
        return Ok(Json(json!({ "dir": null, "current": null, "files": [] })));
    };
    let current = state.document.lock().unwrap_or_else(|e| e.into_inner()).name.clone();
    let listing = tokio::task::spawn_blocking(move || {
        let mut files = Vec::new();
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                codes::GGE4024,
                format!("cannot list `{}`: {e}", dir.display()),
                None,
            )
        })?;
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
            if script_name(&name, false).is_ok() && matches!(inside(&dir, &entry.path()), Ok(Some(_))) {
                files.push(name);
            }
        }
        files.sort();
        files.truncate(MAX_LISTED);
        Ok::<_, ApiError>((dir, files))
    })
    .await
    .map_err(|e| internal(&e.to_string()))?;
    let (dir, files) = listing?;
    Ok(Json(json!({ "dir": dir.display().to_string(), "current": current, "files": files })))
}

/// `[{name, title, source}]`: the built-in examples.
async fn examples() -> Json<Value> {
    Json(Value::Array(
        EXAMPLES
            .iter()
            .map(|(name, title, source)| json!({ "name": name, "title": title, "source": source }))
            .collect(),
    ))
}

#[derive(Deserialize)]
struct OpenRequest {
    name: String,
}

/// Makes a script of the directory the document (its text and version as on disk).
async fn open(
    AxState(state): AxState<Shared>,
    body: Result<Json<OpenRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(request) = body.map_err(ApiError::rejected)?;
    let dir = directory(&state).ok_or_else(no_directory)?;
    let name = script_name(&request.name, false)?;
    tokio::task::spawn_blocking(move || {
        let Some(path) = inside(&dir, &dir.join(&name))? else {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                codes::GGE4024,
                format!("there is no script `{name}` in the studio's directory"),
                Some("choose one the Open menu lists"),
            ));
        };
        let mut document = crate::read_document(Some(&path))
            .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, codes::GGE4024, e, None))?;
        // Shown by the name the user chose, a link's included.
        document.name = name;
        Ok(make_current(&state, document))
    })
    .await
    .map_err(|e| internal(&e.to_string()))?
}

#[derive(Deserialize)]
struct NewRequest {
    name: String,
    /// The text of the new file (an example being saved); the starter template by default.
    #[serde(default)]
    source: Option<String>,
}

/// Creates a script in the directory (`.ggs` added to the name if missing), never over an
/// existing file (409, GGE4027), and makes it the document.
async fn create(
    AxState(state): AxState<Shared>,
    body: Result<Json<NewRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(request) = body.map_err(ApiError::rejected)?;
    let dir = directory(&state).ok_or_else(no_directory)?;
    let name = script_name(&request.name, true)?;
    let source = request.source.unwrap_or_else(|| TEMPLATE.to_string());
    if source.len() > geogen::DEFAULT_MAX_SCRIPT_BYTES {
        return Err(ApiError::bad_request(codes::GGE1107, "the script is larger than a script may be", None));
    }
    tokio::task::spawn_blocking(move || {
        let path = dir.join(&name);
        let taken = || {
            ApiError::new(
                StatusCode::CONFLICT,
                codes::GGE4027,
                format!("`{name}` already exists in the studio's directory; nothing was written"),
                Some("choose another name, or open that script from the Open menu"),
            )
        };
        // A dangling link counts as taken: creating through it would write wherever it points.
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(taken());
        }
        match geogen_io::create_new_bytes(&path, source.as_bytes()) {
            Ok(()) => {}
            Err(geogen_io::IoError::Io { source: e, .. }) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(taken())
            }
            Err(e) => return Err(cannot_write("create the script", &e)),
        }
        let version = crate::sha256_hex(source.as_bytes());
        Ok(make_current(&state, Document { name, path: Some(path), version, source }))
    })
    .await
    .map_err(|e| internal(&e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::script_name;

    #[test]
    fn only_plain_script_names_are_taken() {
        assert_eq!(script_name("hills", true).unwrap(), "hills.ggs");
        assert_eq!(script_name("hills.ggs", true).unwrap(), "hills.ggs");
        assert_eq!(script_name("my hills.v2.ggs", false).unwrap(), "my hills.v2.ggs");
        for bad in [
            "",
            ".ggs",
            "..",
            "../x",
            "..ggs",
            "a/b",
            "a\\b",
            "/etc/passwd",
            ".hidden",
            "c:x",
            "x\0y",
            "x\ny",
            " x",
            "x ",
            "x.",
            "a|b",
        ] {
            assert!(script_name(bad, true).is_err(), "{bad:?}");
        }
        assert!(script_name("hills.txt", false).is_err());
        assert!(script_name(&"x".repeat(200), true).is_err());
    }
}
