//! The debugger's endpoints over real HTTP: start a session, step it by instruction, line, over,
//! out and to a line, stop at breakpoints, continue to the end, then step the renderer and fetch
//! each step's picture; and the refusals (bad ids, wrong token, malformed bodies, a script that
//! does not compile or faults, stepping a finished session), each a clear 4xx, never a 500.

mod common;

use std::sync::OnceLock;

use common::{send, Server};
use serde_json::{json, Value};

/// One server for all the tests; a small instruction budget, so an endless loop faults quickly.
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(new_server)
}

fn new_server() -> Server {
    server_with_memory(1 << 30)
}

fn server_with_memory(memory_limit: u64) -> Server {
    let mut options = common::options(None, 2_000_000, "debugger");
    options.memory_limit = memory_limit;
    common::start(options)
}

/// A function call, a message, a map created and changed, a yield; line numbers matter below.
const SCRIPT: &str = "\
function Twice(x) {
    var y = x * 2;
    return y;
}
var a = 1;
a = Twice(a);
Print(\"a is \" + a);
var m = HeightMap.Flat(0.25);
m.Add(0.1);
yield m;
";

fn start(source: &str) -> (String, Value) {
    start_on(server(), source)
}

fn start_on(server: &Server, source: &str) -> (String, Value) {
    let response = server.post("/api/debug/start", &json!({ "source": source, "width": 64, "height": 48 }));
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    let state = response.json();
    (state["id"].as_str().unwrap().to_string(), state)
}

fn step(id: &str, body: Value) -> Value {
    let response = server().post(&format!("/api/debug/{id}/step"), &body);
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    response.json()
}

fn line(state: &Value) -> u64 {
    state["at"]["line"].as_u64().unwrap_or_else(|| panic!("no line in {state}"))
}

/// The variable `name` in the innermost scope that has it: (kind, value).
fn variable(state: &Value, name: &str) -> Option<(String, String)> {
    state["scopes"].as_array()?.iter().find_map(|scope| {
        scope["variables"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == name)
            .map(|v| (v["kind"].as_str().unwrap().to_string(), v["value"].as_str().unwrap().to_string()))
    })
}

#[test]
fn stepping_shows_lines_frames_variables_and_the_sequence_so_far() {
    let (id, state) = start(SCRIPT);
    assert_eq!(state["status"], "ready");
    assert_eq!(line(&state), 5, "the first instruction: `var a = 1;`");
    assert_eq!(state["instructions"], 0);
    assert_eq!(state["call_stack"][0]["function"], "<main>");
    // The span is in the editor's UTF-16 offsets: line 5 starts after four lines.
    let line5 = SCRIPT.lines().take(4).map(|l| l.len() + 1).sum::<usize>() as u64;
    assert!(state["at"]["from"].as_u64().unwrap() >= line5, "{}", state["at"]);

    let one = step(&id, json!({ "kind": "instruction" }));
    assert_eq!(one["instructions"], 1);
    assert_eq!(one["status"], "running");

    // Line by line to the call; `a` is 1 there.
    let mut state = one;
    while line(&state) != 6 {
        state = step(&id, json!({ "kind": "line" }));
    }
    assert_eq!(variable(&state, "a"), Some(("Number".to_string(), "1".to_string())));

    // Stepping a line from the call enters the function: two frames, innermost first.
    let inside = step(&id, json!({ "kind": "line" }));
    assert_eq!(line(&inside), 2);
    let frames: Vec<&str> =
        inside["call_stack"].as_array().unwrap().iter().map(|f| f["function"].as_str().unwrap()).collect();
    assert_eq!(frames, ["Twice", "<main>"]);
    assert_eq!(inside["call_stack"][1]["at"]["line"], 6, "main waits on its call");
    assert_eq!(variable(&inside, "x"), Some(("Number".to_string(), "1".to_string())));

    // Out of it: back in main, on the call's line; over the rest of it: `a` became 2.
    let out = step(&id, json!({ "kind": "out" }));
    assert_eq!(out["call_stack"].as_array().unwrap().len(), 1);
    let over = step(&id, json!({ "kind": "over" }));
    assert_eq!(line(&over), 7);
    assert_eq!(variable(&over, "a"), Some(("Number".to_string(), "2".to_string())));
    assert_eq!(over["sequence"].as_array().unwrap().len(), 0, "nothing recorded before line 8");

    // To line 9: the map exists (shown as a handle) and its creation is the first recorded step.
    let at9 = step(&id, json!({ "kind": "to_line", "line": 9 }));
    assert_eq!(line(&at9), 9);
    let (kind, value) = variable(&at9, "m").expect("m in scope");
    assert_eq!(kind, "HeightMap");
    assert!(value.starts_with("HeightMap#"), "{value}");
    assert_eq!(at9["messages"][0]["text"], "a is 2");
    assert_eq!(at9["messages"][0]["line"], 7);
    let sequence = at9["sequence"].as_array().unwrap();
    assert_eq!(sequence.len(), 1);
    assert_eq!(sequence[0]["operation"], "HeightMap.Flat");
    assert_eq!(sequence[0]["line"], 8);
    assert!(sequence[0]["text"].as_str().unwrap().contains("0.25"), "{}", sequence[0]);

    // Continue to the end: three steps (Flat, Add, Yield); the VM can no longer step.
    let end = server().post(&format!("/api/debug/{id}/continue"), &json!({}));
    assert_eq!(end.status, 200);
    let end = end.json();
    assert_eq!(end["status"], "finished");
    assert!(end["at"].is_null());
    let ops: Vec<&str> = end["sequence"].as_array().unwrap().iter().map(|s| s["operation"].as_str().unwrap()).collect();
    assert_eq!(ops.len(), 3, "{ops:?}");
    assert_eq!(ops[2], "Yield");
    assert_eq!(end["render"]["total"], 3);
    let again = server().post(&format!("/api/debug/{id}/step"), &json!({ "kind": "instruction" }));
    assert_eq!(again.status, 409, "stepping a finished script");
    assert_eq!(again.code(), "GGE4000");
    server().request("DELETE", &format!("/api/debug/{id}"), b"");
}

#[test]
fn breakpoints_stop_continue_and_the_renderer_steps_with_pictures() {
    let (id, _) = start(SCRIPT);
    // Rendering before the script has finished is refused.
    let early = server().post(&format!("/api/debug/{id}/render-step"), &json!({}));
    assert_eq!(early.status, 409);
    // A breakpoint inside the function stops there; a second continue goes to the next one.
    let at3 = server().post(&format!("/api/debug/{id}/continue"), &json!({ "breakpoints": [3, 9] })).json();
    assert_eq!(line(&at3), 3);
    assert_eq!(variable(&at3, "y"), Some(("Number".to_string(), "2".to_string())));
    let at9 = server().post(&format!("/api/debug/{id}/continue"), &json!({ "breakpoints": [3, 9] })).json();
    assert_eq!(line(&at9), 9);
    let end = server().post(&format!("/api/debug/{id}/continue"), &json!({ "breakpoints": [3, 9] })).json();
    assert_eq!(end["status"], "finished");

    // The flat map is never made: the support pass sees that the sum is 0.35 everywhere, so the
    // Add fills its map with it and needs nothing of the Flat (its step says so, without a picture).
    let first = server().post(&format!("/api/debug/{id}/render-step"), &json!({}));
    assert_eq!(first.status, 200, "{}", String::from_utf8_lossy(&first.body));
    let first = first.json();
    assert_eq!(first["last_step"]["index"], 0);
    assert_eq!(first["last_step"]["note"], "nothing needed from this step: its bounds are empty", "{first}");
    assert!(first["last_step"]["image"].is_null());
    let expected = [(1, 0.35f32), (2, 0.35)];
    for (index, height) in expected {
        let response = server().post(&format!("/api/debug/{id}/render-step"), &json!({}));
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        let state = response.json();
        let last = &state["last_step"];
        assert_eq!(last["index"], index);
        assert_eq!(state["render"]["done"], index + 1);
        assert!(last["bounds"].as_str().unwrap().contains("64"), "the step's bounds: {last}");
        let url = last["image"].as_str().unwrap_or_else(|| panic!("a picture for step {index}: {last}"));
        assert_eq!(url, format!("/api/debug/{id}/image/{index}.png"));
        let png = server().get(&format!("{url}?kind=gray"));
        assert_eq!(png.status, 200);
        assert!(png.headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "image/png"));
        let decoder = png::Decoder::new(std::io::Cursor::new(&png.body));
        let mut reader = decoder.read_info().unwrap();
        let mut buffer = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buffer).unwrap();
        assert_eq!((info.width, info.height), (64, 48));
        // The 8-bit picture of a flat map: every pixel the same, (h + 1) / 2 of white.
        let expected = ((height + 1.0) / 2.0 * 255.0).round() as i32;
        assert!(buffer[..info.buffer_size()].iter().all(|&b| (i32::from(b) - expected).abs() <= 1), "step {index}");
        assert_eq!(server().get(url).status, 200, "hillshade by default");
    }
    let done = server().post(&format!("/api/debug/{id}/render-step"), &json!({}));
    assert_eq!(done.status, 409, "every step has run");
    assert_eq!(server().get(&format!("/api/debug/{id}/image/7.png")).status, 404);
    assert_eq!(server().get(&format!("/api/debug/{id}/image/0.png?kind=sepia")).status, 400);
    assert_eq!(server().get(&format!("/api/debug/{id}/image/zero.png")).status, 404);
    // Stop ends the session.
    assert_eq!(server().request("DELETE", &format!("/api/debug/{id}"), b"").status, 200);
    assert_eq!(server().get(&format!("/api/debug/{id}")).status, 404);
    assert_eq!(server().request("DELETE", &format!("/api/debug/{id}"), b"").status, 404);
}

#[test]
fn a_copy_the_next_step_reads_in_its_place_says_so_and_the_rotation_shows() {
    // A cone wider than the map: not constant anywhere the rotation reads, so nothing is narrowed.
    let source =
        "var t = HeightMap.RadialGradient([32, 24], 200, 1, 0);\nvar r = HeightMap.Clone(t).Rotate(0.3);\nyield r;";
    let (id, _) = start(source);
    server().post(&format!("/api/debug/{id}/continue"), &json!({}));
    let mut steps = Vec::new();
    loop {
        let response = server().post(&format!("/api/debug/{id}/render-step"), &json!({}));
        if response.status == 409 {
            break;
        }
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        steps.push(response.json()["last_step"].clone());
    }
    let clone = steps.iter().find(|s| s["operation"] == "HeightMap.Clone").expect("a Clone step");
    assert_eq!(clone["note"], "not copied: the next step reads the original instead", "{clone}");
    assert!(clone["image"].is_null());
    let rotate = steps.iter().find(|s| s["operation"] == "HeightMap.Rotate").expect("a Rotate step");
    assert!(rotate["image"].is_string(), "{rotate}");
    server().request("DELETE", &format!("/api/debug/{id}"), b"");
}

#[test]
fn a_large_map_is_pictured_at_most_512_pixels_a_side() {
    let response = server()
        .post("/api/debug/start", &json!({ "source": "yield HeightMap.Flat(0.5);", "width": 1500, "height": 700 }));
    let id = response.json()["id"].as_str().unwrap().to_string();
    server().post(&format!("/api/debug/{id}/continue"), &json!({}));
    let state = server().post(&format!("/api/debug/{id}/render-step"), &json!({})).json();
    let png = server().get(state["last_step"]["image"].as_str().unwrap());
    let reader = png::Decoder::new(std::io::Cursor::new(&png.body)).read_info().unwrap();
    let (w, h) = (reader.info().width, reader.info().height);
    // Every third pixel: 1500 / 3 = 500, 700 / 3 rounded up = 234.
    assert_eq!((w, h), (500, 234));
    server().request("DELETE", &format!("/api/debug/{id}"), b"");
}

#[test]
fn script_errors_and_faults_are_the_editors_diagnostics() {
    // A syntax error: 422 with the compiler's code and line, no session.
    let bad = server()
        .post("/api/debug/start", &json!({ "source": "var x = ;\nyield HeightMap.Flat(0);", "width": 8, "height": 8 }));
    assert_eq!(bad.status, 422);
    let d = &bad.json()["diagnostics"][0];
    assert!(d["code"].as_str().unwrap().starts_with("GGE1"), "{d}");
    assert_eq!(d["line"], 1);
    // A parameter the script does not declare: the request's fault.
    let param = server().post(
        "/api/debug/start",
        &json!({ "source": "yield HeightMap.Flat(0);", "width": 8, "height": 8, "parameters": { "Nope": 1 } }),
    );
    assert_eq!(param.status, 400);
    assert_eq!(param.code(), "GGE4001");
    // An endless loop: the instruction budget faults it, with its place; the session stays
    // readable but cannot step on.
    let (id, _) = start("var i = 0;\nwhile (true) {\n  i = i + 1;\n}\nyield HeightMap.Flat(0);");
    let faulted = server().post(&format!("/api/debug/{id}/continue"), &json!({}));
    assert_eq!(faulted.status, 200);
    let faulted = faulted.json();
    assert_eq!(faulted["status"], "faulted");
    let d = &faulted["diagnostics"][0];
    assert!(d["code"].as_str().unwrap().starts_with("GGE2"), "{d}");
    assert!(d["line"].as_u64().is_some_and(|l| (2..=3).contains(&l)), "{d}");
    assert!(variable(&faulted, "i").is_some());
    assert_eq!(server().post(&format!("/api/debug/{id}/step"), &json!({ "kind": "line" })).status, 409);
    assert_eq!(server().post(&format!("/api/debug/{id}/render-step"), &json!({})).status, 409);
    assert_eq!(server().get(&format!("/api/debug/{id}")).status, 200);
    server().request("DELETE", &format!("/api/debug/{id}"), b"");
}

#[test]
fn a_render_over_the_memory_limit_is_the_renderers_diagnostic() {
    let server = server_with_memory(4096);
    let (id, _) = start_on(&server, "var m = HeightMap.Flat(0);\nyield m;");
    let end = server.post(&format!("/api/debug/{id}/continue"), &json!({})).json();
    assert_eq!(end["status"], "finished");
    for _ in 0..2 {
        let refused = server.post(&format!("/api/debug/{id}/render-step"), &json!({}));
        assert_eq!(refused.status, 422);
        assert_eq!(refused.code(), "GGE3001");
    }
    let state = server.get(&format!("/api/debug/{id}")).json();
    assert_eq!(state["render"]["failed"], true);
    assert_eq!(state["render"]["diagnostics"][0]["code"], "GGE3001");
}

#[test]
fn bad_debug_requests_get_coded_refusals() {
    let s = server();
    let (id, _) = start(SCRIPT);
    // A wrong or missing token.
    for token in ["wrong", ""] {
        let r =
            s.runtime.block_on(send(s.address, "GET", &format!("/api/debug/{id}"), &[("X-Geogen-Token", token)], b""));
        assert_eq!(r.status, 401);
        assert_eq!(r.code(), "GGE4000");
    }
    // Unknown ids.
    for path in ["/api/debug/nope", "/api/debug/nope/step", "/api/debug/nope/continue", "/api/debug/nope/render-step"] {
        let r = if path.ends_with("nope") { s.get(path) } else { s.post(path, &json!({ "kind": "line" })) };
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.code(), "GGE4000");
    }
    // Malformed bodies.
    let r = s.request("POST", &format!("/api/debug/{id}/step"), b"{not json");
    assert_eq!(r.status, 400);
    assert_eq!(s.post(&format!("/api/debug/{id}/step"), &json!({ "kind": "sideways" })).status, 400);
    let r = s.post(&format!("/api/debug/{id}/step"), &json!({ "kind": "to_line" }));
    assert_eq!(r.status, 400);
    assert!(r.json()["diagnostics"][0]["message"].as_str().unwrap().contains("line"));
    let many: Vec<u32> = (0..20_000).collect();
    assert_eq!(s.post(&format!("/api/debug/{id}/continue"), &json!({ "breakpoints": many })).status, 400);
    assert_eq!(s.post("/api/debug/start", &json!({ "source": SCRIPT })).status, 400, "no size");
    let huge = s.post("/api/debug/start", &json!({ "source": SCRIPT, "width": 100000, "height": 100000 }));
    assert_eq!(huge.status, 400);
    assert_eq!(huge.code(), "GGE4003");
    // After all that the session still steps.
    assert_eq!(step(&id, json!({ "kind": "instruction" }))["instructions"], 1);
    s.request("DELETE", &format!("/api/debug/{id}"), b"");
}

#[test]
fn at_most_a_few_sessions_live_and_a_new_one_ends_the_least_recently_used() {
    // A server of its own, so that the other tests' sessions do not count.
    let server = new_server();
    let ids: Vec<String> = (0..4).map(|_| start_on(&server, "yield HeightMap.Flat(0);").0).collect();
    // Using the first makes the second the least recently used: a fifth start ends it.
    assert_eq!(server.get(&format!("/api/debug/{}", ids[0])).status, 200);
    let fifth = start_on(&server, "yield HeightMap.Flat(0);").0;
    let alive: Vec<u16> = ids.iter().map(|id| server.get(&format!("/api/debug/{id}")).status).collect();
    assert_eq!(alive, [200, 404, 200, 200]);
    assert_eq!(server.get(&format!("/api/debug/{fifth}")).status, 200);
}

/// What stepping costs: a loop of about a million instructions run by `continue` (which checks the
/// line, depth and breakpoints after every instruction) against the plain VM run of
/// `geogen run`, medians of 5 each. `cargo test --release -p geogen-studio --test debugger --
/// --ignored --nocapture continue_speed`
#[test]
#[ignore]
fn continue_speed() {
    let source = "var s = 0;\nfor (var i = 0; i < 50000; i++) {\n  s = s + i;\n}\nyield HeightMap.Flat(0);\n";
    let script = geogen::Script::compile("speed", source, &geogen::CompileOptions::default()).unwrap();
    let settings = geogen::RunSettings { render_width: Some(8), render_height: Some(8), ..Default::default() };
    let mut runs = Vec::new();
    let mut debugs = Vec::new();
    let mut instructions = 0;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        instructions = script.run(&settings).unwrap().instructions;
        runs.push(t.elapsed().as_secs_f64());
        let (id, _) = start(source);
        let t = std::time::Instant::now();
        let end = server().post(&format!("/api/debug/{id}/continue"), &json!({ "breakpoints": [6] })).json();
        debugs.push(t.elapsed().as_secs_f64());
        assert_eq!(end["status"], "finished");
        server().request("DELETE", &format!("/api/debug/{id}"), b"");
    }
    runs.sort_by(f64::total_cmp);
    debugs.sort_by(f64::total_cmp);
    let (run, debug) = (runs[2], debugs[2]);
    println!(
        "{instructions} instructions: run {:.1} ms ({:.1} ns/instruction), debugger continue {:.1} ms ({:.1} ns/instruction), ratio {:.2}",
        run * 1e3,
        run * 1e9 / instructions as f64,
        debug * 1e3,
        debug * 1e9 / instructions as f64,
        debug / run
    );
}
