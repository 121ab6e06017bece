//! The debugger's API: a script run held on the server, stepped instruction by instruction or line
//! by line, inspected (current line, call stack, variables, `Print` messages, the rendering
//! sequence so far), then rendered one step at a time with a picture of each step's map.
//!
//! The VM is single-threaded (its values are `Rc`), so each session lives on a thread of its own
//! and the handlers talk to it through a channel. At most [`MAX_SESSIONS`] live at once (starting
//! one more ends the least recently used); a session unused for [`IDLE`] ends by itself. A
//! session's VM has the same limits as a render (instructions, heap, call depth), and its renderer
//! the same memory limit, so no request can run longer or grow larger than a render could.
//!
//! Endpoints (all JSON but the pictures; all need the token):
//! `POST /api/debug/start`, `GET /api/debug/{id}`, `POST /api/debug/{id}/step`,
//! `POST /api/debug/{id}/continue`, `POST /api/debug/{id}/render-step`,
//! `GET /api/debug/{id}/image/{step}.png`, `DELETE /api/debug/{id}` (docs/studio.md).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State as AxState};
use axum::http::{header, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use geogen::diag::{codes, Span};
use geogen::{RenderConfig, RunSettings, Script};
use geogen_io::{Format, HeightField};
use geogen_render::{Object, RenderError, Renderer, RenderingSequence};
use geogen_vm::{Value as VmValue, Vm, VmStatus};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::api::{self, ApiError};
use crate::Shared;

/// Live sessions at most; starting another ends the least recently used.
pub const MAX_SESSIONS: usize = 4;
/// A session nobody asked anything for this long ends.
pub const IDLE: Duration = Duration::from_secs(15 * 60);
/// Step pictures are downscaled to at most this many pixels a side.
pub const IMAGE_SIDE: usize = 512;
/// The height of a profile's picture, in pixels.
const STRIP_ROWS: usize = 32;
/// Step pictures kept per session (the most recent ones).
const KEPT_IMAGES: usize = 16;
/// Steps of the rendering sequence a state shows at most (the first ones).
pub const MAX_LISTED_STEPS: usize = 2000;
/// `Print` messages a state shows at most (the last ones).
const MAX_LISTED_MESSAGES: usize = 500;
/// Variables shown per scope at most.
const MAX_LISTED_VARIABLES: usize = 200;
/// A variable's value is cut to this many characters.
const MAX_VALUE_CHARS: usize = 200;
/// Breakpoints a request may set at most (a script has at most this many lines worth stopping
/// at; a longer list is a hostile one, looked up after every instruction).
pub const MAX_BREAKPOINTS: usize = 10_000;
/// Instructions run between two looks at the stop flag.
const CANCEL_CHECK: u64 = 1 << 16;

/// The live sessions by id.
#[derive(Default)]
pub(crate) struct Sessions {
    live: HashMap<String, Handle>,
}

struct Handle {
    jobs: mpsc::Sender<Job>,
    /// Set to end a run in progress (Stop, eviction).
    cancel: Arc<AtomicBool>,
    last_used: Instant,
}

impl Sessions {
    /// Forgets expired sessions and, when full, ends the least recently used one.
    fn make_room(&mut self, now: Instant) {
        self.live.retain(|_, h| {
            let keep = now.duration_since(h.last_used) < IDLE;
            if !keep {
                h.cancel.store(true, Ordering::SeqCst);
            }
            keep
        });
        while self.live.len() >= MAX_SESSIONS {
            let Some(oldest) = self.live.iter().min_by_key(|(_, h)| h.last_used).map(|(id, _)| id.clone()) else {
                break;
            };
            if let Some(handle) = self.live.remove(&oldest) {
                handle.cancel.store(true, Ordering::SeqCst);
            }
        }
    }
}

type Job = (Command, oneshot::Sender<Result<Reply, ApiError>>);

enum Command {
    State,
    Step(StepRequest),
    Continue(ContinueRequest),
    RenderStep,
    Image { step: usize, kind: Format, palette: &'static geogen_io::palette::Palette },
}

enum Reply {
    Json(Value),
    Png(Vec<u8>),
}

pub(crate) fn routes(state: Shared) -> Router {
    Router::new()
        .route("/api/debug/start", post(start))
        .route("/api/debug/{id}", get(get_state).delete(stop))
        .route("/api/debug/{id}/step", post(step))
        .route("/api/debug/{id}/continue", post(continue_))
        .route("/api/debug/{id}/render-step", post(render_step))
        .route("/api/debug/{id}/image/{file}", get(image))
        .layer(middleware::from_fn_with_state(state.clone(), api::require_token))
        .with_state(state)
}

#[derive(Clone, Copy, Deserialize, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum StepKind {
    /// One instruction.
    Instruction,
    /// Until another line is reached (entering calls).
    Line,
    /// Until another line of this function or a caller is reached (over calls).
    Over,
    /// Until this function returns.
    Out,
    /// Until `line` is reached.
    ToLine,
}

#[derive(Deserialize)]
struct StepRequest {
    kind: StepKind,
    #[serde(default)]
    line: Option<u32>,
    /// Lines to stop at on the way (all but `instruction`).
    #[serde(default)]
    breakpoints: Vec<u32>,
}

#[derive(Deserialize, Default)]
struct ContinueRequest {
    #[serde(default)]
    breakpoints: Vec<u32>,
}

fn breakpoint_set(lines: Vec<u32>) -> Result<BTreeSet<u32>, ApiError> {
    if lines.len() > MAX_BREAKPOINTS {
        return Err(ApiError::bad_request(
            codes::GGE4000,
            format!("{} breakpoints are more than the {MAX_BREAKPOINTS} a request may set", lines.len()),
            None,
        ));
    }
    Ok(lines.into_iter().collect())
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        codes::GGE4000,
        format!("no debug session `{}`", id.chars().take(40).collect::<String>()),
        Some("it ended (stopped, idle too long, or replaced by newer sessions): start a new one"),
    )
}

fn conflict(message: &str, hint: &str) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, codes::GGE4000, message, Some(hint))
}

/// Starts a session: compiles the text (its errors are the editor's diagnostics, 422) and
/// prepares the VM with the settings (bad parameters or sizes: 400); answers the id and the state
/// before the first instruction.
async fn start(AxState(state): AxState<Shared>, body: Result<Json<api::RenderRequest>, JsonRejection>) -> Response {
    match start_inner(state, body).await {
        Ok(value) => Json(value).into_response(),
        Err(error) => error.into_response(),
    }
}

async fn start_inner(state: Shared, body: Result<Json<api::RenderRequest>, JsonRejection>) -> Result<Value, ApiError> {
    let Json(request) = body.map_err(ApiError::rejected)?;
    api::check_render_size(request.width, request.height)?;
    let name = state.document.lock().unwrap_or_else(|e| e.into_inner()).name.clone();
    let source = request.source.clone();
    let script = tokio::task::spawn_blocking(move || crate::compile(&name, &source))
        .await
        .map_err(|e| api::internal(&e.to_string()))?
        .map_err(|f| ApiError::failure(&f))?;
    // What to debug: the script text and the same settings as a render.
    let settings = request.settings(&state.options.limits);
    let config = RenderConfig {
        memory_limit: state.options.memory_limit,
        solutions: Some(state.solutions.clone()),
        ..RenderConfig::default()
    };
    let id = crate::random_token();
    let cancel = Arc::new(AtomicBool::new(false));
    let (jobs, inbox) = mpsc::channel::<Job>();
    let (ready_tx, ready_rx) = oneshot::channel();
    let thread_cancel = Arc::clone(&cancel);
    let thread_id = id.clone();
    std::thread::Builder::new()
        .name("geogen-debug".to_string())
        .spawn(move || session_thread(thread_id, script, settings, config, thread_cancel, inbox, ready_tx))
        .map_err(|e| api::internal(&format!("cannot start a debug session: {e}")))?;
    let first = ready_rx.await.map_err(|_| api::internal("the debug session ended at once"))??;
    let mut sessions = state.debug.lock().unwrap_or_else(|e| e.into_inner());
    sessions.make_room(Instant::now());
    sessions.live.insert(id, Handle { jobs, cancel, last_used: Instant::now() });
    Ok(first)
}

/// Sends a command to a session and waits for its answer.
async fn call(state: &Shared, id: &str, command: Command) -> Result<Reply, ApiError> {
    let jobs = {
        let mut sessions = state.debug.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        match sessions.live.get_mut(id) {
            Some(handle) if now.duration_since(handle.last_used) < IDLE => {
                handle.last_used = now;
                handle.jobs.clone()
            }
            Some(_) => {
                sessions.make_room(now);
                return Err(not_found(id));
            }
            None => return Err(not_found(id)),
        }
    };
    let (reply_tx, reply_rx) = oneshot::channel();
    if jobs.send((command, reply_tx)).is_err() {
        state.debug.lock().unwrap_or_else(|e| e.into_inner()).live.remove(id);
        return Err(not_found(id));
    }
    reply_rx.await.map_err(|_| not_found(id))?
}

fn json_reply(reply: Result<Reply, ApiError>) -> Response {
    match reply {
        Ok(Reply::Json(value)) => Json(value).into_response(),
        Ok(Reply::Png(bytes)) => ([(header::CONTENT_TYPE, "image/png")], bytes).into_response(),
        Err(error) => error.into_response(),
    }
}

async fn get_state(AxState(state): AxState<Shared>, Path(id): Path<String>) -> Response {
    json_reply(call(&state, &id, Command::State).await)
}

async fn step(
    AxState(state): AxState<Shared>,
    Path(id): Path<String>,
    body: Result<Json<StepRequest>, JsonRejection>,
) -> Response {
    let request = match body {
        Ok(Json(request)) => request,
        Err(rejection) => return ApiError::rejected(rejection).into_response(),
    };
    if request.kind == StepKind::ToLine && request.line.is_none() {
        return ApiError::bad_request(
            codes::GGE4000,
            "`to_line` needs a `line`",
            Some("{\"kind\": \"to_line\", \"line\": 12}"),
        )
        .into_response();
    }
    json_reply(call(&state, &id, Command::Step(request)).await)
}

async fn continue_(
    AxState(state): AxState<Shared>,
    Path(id): Path<String>,
    body: Result<Json<ContinueRequest>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(request)) => json_reply(call(&state, &id, Command::Continue(request)).await),
        Err(rejection) => ApiError::rejected(rejection).into_response(),
    }
}

async fn render_step(AxState(state): AxState<Shared>, Path(id): Path<String>) -> Response {
    json_reply(call(&state, &id, Command::RenderStep).await)
}

#[derive(Deserialize)]
struct ImageQuery {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    palette: Option<String>,
}

async fn image(
    AxState(state): AxState<Shared>,
    Path((id, file)): Path<(String, String)>,
    query: Result<Query<ImageQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let query = query.ok().map(|q| q.0);
    let palette = match query.as_ref().and_then(|q| q.palette.as_deref()) {
        None => &geogen_io::palette::PALETTES[0],
        Some(name) => match geogen_io::palette::Palette::named(name) {
            Some(palette) => palette,
            None => {
                return ApiError::bad_request(
                    codes::GGE4000,
                    format!("unknown palette `{}`", name.chars().take(40).collect::<String>()),
                    Some(&crate::tiles::palette_names()),
                )
                .into_response()
            }
        },
    };
    let kind = match query.and_then(|q| q.kind).as_deref() {
        None | Some("hillshade") => Format::Hillshade,
        Some("gray") => Format::Png8,
        Some("colored") => Format::Colored,
        Some(other) => {
            return ApiError::bad_request(
                codes::GGE4000,
                format!("unknown picture kind `{}`", other.chars().take(20).collect::<String>()),
                Some("kind is hillshade (the default), gray or colored"),
            )
            .into_response()
        }
    };
    let Some(step) = file.strip_suffix(".png").and_then(|n| n.parse::<usize>().ok()) else {
        return ApiError::new(StatusCode::NOT_FOUND, codes::GGE4000, "a step picture is /image/{step}.png", None)
            .into_response();
    };
    json_reply(call(&state, &id, Command::Image { step, kind, palette }).await)
}

async fn stop(AxState(state): AxState<Shared>, Path(id): Path<String>) -> Response {
    let removed = state.debug.lock().unwrap_or_else(|e| e.into_inner()).live.remove(&id);
    match removed {
        Some(handle) => {
            handle.cancel.store(true, Ordering::SeqCst);
            Json(json!({ "stopped": true })).into_response()
        }
        None => not_found(&id).into_response(),
    }
}

// ------------------------------------------------------------------------------------------------
// The session thread

fn session_thread(
    id: String,
    script: Script,
    settings: RunSettings,
    config: RenderConfig,
    cancel: Arc<AtomicBool>,
    inbox: mpsc::Receiver<Job>,
    ready: oneshot::Sender<Result<Value, ApiError>>,
) {
    let vm = match script.vm(&settings) {
        Ok(vm) => vm,
        Err(failure) => {
            let _ = ready.send(Err(ApiError::failure(&failure)));
            return;
        }
    };
    let mut session = Session { id, script, vm, config, cancel, sequence: None, render: None, images: VecDeque::new() };
    if ready.send(Ok(session.state())).is_err() {
        return;
    }
    while let Ok((command, reply)) = inbox.recv_timeout(IDLE) {
        if session.cancel.load(Ordering::SeqCst) {
            let _ = reply.send(Err(not_found(&session.id)));
            return;
        }
        let answer = session.handle(command);
        let _ = reply.send(answer);
    }
}

struct Session {
    id: String,
    script: Script,
    vm: Vm,
    config: RenderConfig,
    cancel: Arc<AtomicBool>,
    /// The rendering sequence, once the script has finished.
    sequence: Option<RenderingSequence>,
    render: Option<RenderPhase>,
    /// Pictures of the most recent steps: (step, width, height, heights).
    images: VecDeque<StepImage>,
}

enum RenderPhase {
    Running(Box<Renderer>),
    /// The renderer stopped with these diagnostics (memory limit, a kernel's error).
    Failed(Value),
}

/// What the last rendering step did, for the state.
struct StepReport {
    index: usize,
    image: bool,
    note: Option<String>,
}

impl Session {
    fn handle(&mut self, command: Command) -> Result<Reply, ApiError> {
        match command {
            Command::State => Ok(Reply::Json(self.state())),
            Command::Step(request) => {
                self.require_running()?;
                let breakpoints = breakpoint_set(request.breakpoints)?;
                self.run(Some(request.kind), request.line, &breakpoints);
                Ok(Reply::Json(self.state()))
            }
            Command::Continue(request) => {
                self.require_running()?;
                let breakpoints = breakpoint_set(request.breakpoints)?;
                self.run(None, None, &breakpoints);
                Ok(Reply::Json(self.state()))
            }
            Command::RenderStep => {
                let report = self.render_step()?;
                let mut state = self.state();
                state["last_step"] = self.step_json(&report);
                Ok(Reply::Json(state))
            }
            Command::Image { step, kind, palette } => self.image(step, kind, palette).map(Reply::Png),
        }
    }

    fn require_running(&self) -> Result<(), ApiError> {
        match self.vm.status() {
            VmStatus::Ready | VmStatus::Running => Ok(()),
            VmStatus::Finished => {
                Err(conflict("the script has finished", "step the renderer (render-step), or start a new session"))
            }
            VmStatus::Faulted => Err(conflict("the script stopped with an error", "fix it and start a new session")),
        }
    }

    /// The 1-based line of a span's start (a binary search: this runs after every instruction).
    fn line_of(&self, span: Option<Span>) -> Option<u32> {
        span.map(|s| self.script.source().line_index(s.start) as u32 + 1)
    }

    /// Where the VM is: (line of the next instruction, call depth).
    fn position(&self) -> (Option<u32>, usize) {
        (self.line_of(self.vm.current_span()), self.vm.call_depth())
    }

    /// Runs until the step's condition (`None`: continue, no condition), a breakpoint, the end, a
    /// fault, the instruction limit or a stop.
    fn run(&mut self, kind: Option<StepKind>, target: Option<u32>, breakpoints: &BTreeSet<u32>) {
        let (start_line, start_depth) = self.position();
        let mut previous = (start_line, start_depth);
        let mut count: u64 = 0;
        // Ends by itself when the script finishes or faults (the instruction budget included).
        while let Ok(VmStatus::Ready | VmStatus::Running) = self.vm.step() {
            if kind == Some(StepKind::Instruction) {
                break;
            }
            let now = self.position();
            // A line is "reached" when the next instruction is on another line than the last one,
            // and not by returning to a caller (which resumes its line where it left it).
            let reached = now != previous && now.1 >= previous.1;
            previous = now;
            let line = now.0;
            if reached && line.is_some_and(|l| breakpoints.contains(&l)) {
                break;
            }
            let done = match kind {
                None => false,
                Some(StepKind::Instruction) => true,
                Some(StepKind::Line) => reached,
                Some(StepKind::Over) => (now.1 <= start_depth && line != start_line) || now.1 < start_depth,
                Some(StepKind::Out) => now.1 < start_depth,
                Some(StepKind::ToLine) => reached && line == target,
            };
            if done {
                break;
            }
            count += 1;
            if count.is_multiple_of(CANCEL_CHECK) && self.cancel.load(Ordering::SeqCst) {
                break;
            }
        }
        if self.vm.status() == VmStatus::Finished && self.sequence.is_none() {
            let scale = self.vm.env().geometry.render_scale;
            if let Ok(empty) = RenderingSequence::new(scale) {
                self.sequence = Some(std::mem::replace(&mut self.vm.env_mut().sequence, empty));
            }
        }
    }

    fn sequence(&self) -> &RenderingSequence {
        self.sequence.as_ref().unwrap_or(&self.vm.env().sequence)
    }

    fn render_step(&mut self) -> Result<StepReport, ApiError> {
        let Some(sequence) = &self.sequence else {
            return Err(conflict(
                "the script has not finished: the rendering sequence is not complete yet",
                "continue the script to its end first",
            ));
        };
        if self.render.is_none() {
            self.render = Some(match Renderer::new(sequence.clone(), &self.config) {
                Ok(renderer) => RenderPhase::Running(Box::new(renderer)),
                Err(error) => RenderPhase::Failed(self.render_diagnostics(&error)),
            });
        }
        let renderer = match self.render.as_mut() {
            Some(RenderPhase::Running(renderer)) => renderer,
            Some(RenderPhase::Failed(diagnostics)) => {
                return Err(ApiError {
                    status: StatusCode::UNPROCESSABLE_ENTITY,
                    body: json!({ "diagnostics": diagnostics, "messages": [] }),
                })
            }
            None => return Err(api::internal("no renderer")),
        };
        if renderer.is_finished() {
            return Err(conflict("every rendering step has run", "start a new session to debug again"));
        }
        let index = renderer.progress().done;
        if let Err(error) = renderer.step() {
            let diagnostics = self.render_diagnostics(&error);
            self.render = Some(RenderPhase::Failed(diagnostics.clone()));
            return Err(ApiError {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                body: json!({ "diagnostics": diagnostics, "messages": [] }),
            });
        }
        let step = &renderer.sequence().steps()[index];
        let written = match step.op.as_yield() {
            Some(y) => renderer.outputs().get(&y.name).map(|m| (m.rect().width, m.rect().height, m.data(), false)),
            None => match renderer.slot(step.ret) {
                Some(Object::Map(m)) => Some((m.rect().width, m.rect().height, m.data(), false)),
                // A profile is drawn as a strip: its heights along x, repeated down.
                Some(Object::Profile(p)) => Some((p.interval().length, 1, p.data(), true)),
                None => None,
            },
        };
        let note = match written {
            None if renderer.metadata().plan.elided_copy(index) => {
                Some("not copied: the next step reads the original instead".to_string())
            }
            None => Some("the map was freed at once: no later step reads it".to_string()),
            Some((w, h, ..)) if w == 0 || h == 0 => {
                Some("nothing needed from this step: its bounds are empty".to_string())
            }
            Some(_) => None,
        };
        let picture = match written {
            Some((w, h, data, strip)) if w > 0 && h > 0 => Some(downscale(w as usize, h as usize, data, strip)),
            _ => None,
        };
        let image = picture.is_some();
        if let Some((w, h, data, factor)) = picture {
            if self.images.len() == KEPT_IMAGES {
                self.images.pop_front();
            }
            // A picture pixel spans `factor` rendered pixels: its hillshade is shaded for that.
            let scale = self.vm.env().geometry.render_scale / factor as f64;
            self.images.push_back(StepImage { step: index, width: w, height: h, data, scale });
        }
        Ok(StepReport { index, image, note })
    }

    fn render_diagnostics(&self, error: &RenderError) -> Value {
        let mut diagnostic = error.to_diagnostic();
        let location = match error {
            RenderError::MemoryLimit { location, .. }
            | RenderError::SolveGridTooLarge { location, .. }
            | RenderError::SolveNesting { location, .. }
            | RenderError::InvalidStep { location, .. }
            | RenderError::Kernel { location, .. } => *location,
            _ => None,
        };
        if let Some((line, column)) = location {
            diagnostic.span = Some(Span::at(self.script.source().offset(line, column)));
        }
        json!(api::diagnostics_json(&self.script.failure(diagnostic)))
    }

    fn image(&self, step: usize, kind: Format, palette: &geogen_io::palette::Palette) -> Result<Vec<u8>, ApiError> {
        let Some(picture) = self.images.iter().find(|p| p.step == step) else {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                codes::GGE4000,
                format!("no picture of step {step}"),
                Some("pictures exist for the most recent rendering steps that wrote a map"),
            ));
        };
        let field = HeightField::new(picture.width as u32, picture.height as u32, &picture.data)
            .map_err(|e| api::internal(&e.to_string()))?;
        let encoded = match kind {
            Format::Hillshade => {
                geogen_io::encode_hillshade(&field, &geogen_io::HillshadeOptions::for_render_scale(picture.scale))
                    .map_err(|e| e.to_string())
            }
            Format::Colored => {
                let rgb: Vec<u8> = picture.data.iter().flat_map(|&h| palette.color(h)).collect();
                crate::tiles::encode_png(&rgb, (picture.width as u32, picture.height as u32), 3)
            }
            _ => geogen_io::encode(kind, &field).map_err(|e| e.to_string()),
        };
        encoded.map_err(|e| api::internal(&e))
    }

    fn step_json(&self, report: &StepReport) -> Value {
        let bounds = match &self.render {
            Some(RenderPhase::Running(r)) => r.metadata().bounds.get(report.index).map(|b| b.to_string()),
            _ => None,
        };
        let step = self.sequence().steps().get(report.index);
        json!({
            "index": report.index,
            "operation": step.map(|s| s.op.name().to_string()),
            "bounds": bounds,
            "image": report.image.then(|| format!("/api/debug/{}/image/{}.png", self.id, report.index)),
            "note": report.note,
        })
    }

    /// Everything the debugger pane shows.
    fn state(&self) -> Value {
        let status = match self.vm.status() {
            VmStatus::Ready => "ready",
            VmStatus::Running => "running",
            VmStatus::Finished => "finished",
            VmStatus::Faulted => "faulted",
        };
        let source = self.script.source();
        let place = |span: Option<Span>| -> Value {
            match span {
                Some(span) => {
                    let at = source.span_start(span);
                    let text = source.text();
                    let from = api::utf16_offset(text, span.start as usize);
                    let to = api::utf16_offset(text, span.end as usize).max(from);
                    json!({ "line": at.line, "column": at.column, "from": from, "to": to })
                }
                None => Value::Null,
            }
        };
        let call_stack: Vec<Value> = self
            .vm
            .call_stack()
            .iter()
            .rev()
            .map(|frame| json!({ "function": &*frame.function, "at": place(frame.span) }))
            .collect();
        let mut scopes: Vec<Value> = Vec::new();
        for scope in self.vm.scopes() {
            // The globals are the type objects and `null`: shown only if the script added any.
            let variables: Vec<Value> = scope
                .variables
                .iter()
                .filter(|v| {
                    !(scope.block.is_none() && v.read_only && matches!(v.value, VmValue::Type(_) | VmValue::Null))
                })
                .take(MAX_LISTED_VARIABLES)
                .map(|v| self.variable_json(&v.name, &v.value, v.read_only))
                .collect();
            if scope.block.is_none() && variables.is_empty() {
                continue;
            }
            scopes.push(json!({ "label": scope.label, "variables": variables, "total": scope.variables.len() }));
        }
        let parameters: Vec<Value> =
            self.vm.parameters().iter().map(|(name, value)| self.variable_json(name, value, true)).collect();
        if !parameters.is_empty() {
            scopes.push(json!({ "label": "Parameters", "variables": parameters, "total": parameters.len() }));
        }
        let messages = &self.vm.env().messages;
        let skipped = messages.len().saturating_sub(MAX_LISTED_MESSAGES);
        let messages: Vec<Value> = messages[skipped..]
            .iter()
            .map(|m| json!({ "text": m.text, "line": source.span_start(m.span).line }))
            .collect();
        let sequence = self.sequence();
        let steps: Vec<Value> = sequence
            .steps()
            .iter()
            .take(MAX_LISTED_STEPS)
            .enumerate()
            .map(|(index, step)| {
                json!({
                    "index": index,
                    "operation": step.op.name(),
                    "text": step.to_string(),
                    "line": step.location.map(|(line, _)| line),
                    "column": step.location.map(|(_, column)| column),
                })
            })
            .collect();
        let diagnostics = match self.vm.fault() {
            Some(fault) => api::diagnostics_json(&self.script.failure(fault.clone())),
            None => Vec::new(),
        };
        let render = match &self.render {
            None => json!({ "started": false, "done": 0, "total": sequence.len(), "diagnostics": [] }),
            Some(RenderPhase::Running(r)) => {
                let p = r.progress();
                json!({ "started": true, "done": p.done, "total": p.total, "diagnostics": [] })
            }
            Some(RenderPhase::Failed(d)) => json!({ "started": true, "failed": true, "diagnostics": d }),
        };
        json!({
            "id": self.id,
            "status": status,
            "at": place(self.vm.current_span()),
            "instructions": self.vm.instructions_executed(),
            "call_stack": call_stack,
            "scopes": scopes,
            "messages": messages,
            "messages_skipped": skipped,
            "sequence": steps,
            "sequence_length": sequence.len(),
            "diagnostics": diagnostics,
            "render": render,
        })
    }

    fn variable_json(&self, name: &str, value: &VmValue, read_only: bool) -> Value {
        let mut text = self.vm.describe(value);
        if text.chars().count() > MAX_VALUE_CHARS {
            text = text.chars().take(MAX_VALUE_CHARS).collect::<String>() + "…";
        }
        json!({
            "name": name,
            "kind": value.type_name(self.vm.types()),
            "value": text,
            "read_only": read_only,
        })
    }
}

/// The picture of a step's map: its heights reduced, and the scale of the picture's pixels.
struct StepImage {
    step: usize,
    width: usize,
    height: usize,
    data: Vec<f32>,
    /// Picture pixels per map unit (the render scale over the reduction factor).
    scale: f64,
}

/// A map's heights reduced to at most [`IMAGE_SIDE`] pixels a side (nearest pixel: the picture
/// shows the step's own values, not a blur of them), and the factor they were reduced by. A
/// `strip` (a profile: one row) is repeated down to a band [`STRIP_ROWS`] pixels high.
fn downscale(width: usize, height: usize, data: &[f32], strip: bool) -> (usize, usize, Vec<f32>, usize) {
    let factor = width.max(if strip { 1 } else { height }).div_ceil(IMAGE_SIDE).max(1);
    let (w, h) = (width.div_ceil(factor), if strip { STRIP_ROWS } else { height.div_ceil(factor) });
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        let row = if strip { 0 } else { y * factor };
        for x in 0..w {
            out.push(data[row * width + x * factor]);
        }
    }
    (w, h, out, factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(last_used: Instant) -> (Handle, Arc<AtomicBool>, mpsc::Receiver<Job>) {
        let (jobs, inbox) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        (Handle { jobs, cancel: Arc::clone(&cancel), last_used }, cancel, inbox)
    }

    #[test]
    fn idle_sessions_expire_and_a_full_table_ends_the_least_recently_used() {
        let now = Instant::now() + IDLE * 2;
        let mut sessions = Sessions::default();
        let (idle, idle_cancel, _a) = handle(now - IDLE - Duration::from_secs(1));
        let (old, old_cancel, _b) = handle(now - Duration::from_secs(60));
        sessions.live.insert("idle".into(), idle);
        sessions.live.insert("old".into(), old);
        sessions.make_room(now);
        assert!(!sessions.live.contains_key("idle"), "expired");
        assert!(idle_cancel.load(Ordering::SeqCst), "its run is told to stop");
        assert!(sessions.live.contains_key("old"));
        for i in 0..MAX_SESSIONS - 1 {
            let (h, _, _) = handle(now - Duration::from_secs(i as u64));
            sessions.live.insert(format!("new{i}"), h);
        }
        assert_eq!(sessions.live.len(), MAX_SESSIONS);
        sessions.make_room(now);
        assert_eq!(sessions.live.len(), MAX_SESSIONS - 1, "room for one more");
        assert!(!sessions.live.contains_key("old"), "the least recently used went");
        assert!(old_cancel.load(Ordering::SeqCst));
    }

    #[test]
    fn pictures_keep_the_step_values_and_profiles_become_strips() {
        let data: Vec<f32> = (0..1030 * 3).map(|i| i as f32).collect();
        let (w, h, out, _) = downscale(1030, 3, &data, false);
        assert_eq!((w, h), (344, 1));
        assert_eq!(&out[..3], &[0.0, 3.0, 6.0]);
        let (w, h, out, _) = downscale(4, 1, &[1.0, 2.0, 3.0, 4.0], true);
        assert_eq!((w, h), (4, STRIP_ROWS));
        assert_eq!(&out[4..8], &[1.0, 2.0, 3.0, 4.0]);
    }
}
