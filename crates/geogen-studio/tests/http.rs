//! The studio's endpoints over real HTTP on a loopback port: the session, checking, rendering,
//! cancelling, saving, tiles (exact: stitched tiles equal a larger render) and the refusals of
//! hostile requests, each with its code, after which the server still serves.

mod common;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use common::{send, start, Server, TOKEN};
use geogen::{CompileOptions, RenderConfig, RunSettings, Script};
use geogen_studio::{Studio, StudioOptions};
use serde_json::{json, Value};

fn options(script: Option<PathBuf>) -> StudioOptions {
    common::options(script, 2_000_000_000, "studio")
}

/// The server on the built-in example, shared by the tests that do not save.
fn example() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| start(options(None)))
}

/// The shared server, for a test that renders on it. A studio serves one editor, so a render
/// request supersedes the one still running (409): tests that render on the shared server take
/// turns, or one test's render would stop another's.
fn example_to_render() -> (MutexGuard<'static, ()>, &'static Server) {
    static TURN: Mutex<()> = Mutex::new(());
    (TURN.lock().unwrap_or_else(|e| e.into_inner()), example())
}

impl Server {
    /// The server still answers a good request.
    fn assert_alive(&self) {
        let response = self.post("/api/check", &json!({ "source": "yield HeightMap.Flat(0);" }));
        assert_eq!(response.status, 200);
        assert_eq!(response.json()["ok"], true);
    }
}

fn island() -> &'static str {
    geogen::EXAMPLE_ISLAND
}

fn decode_png(bytes: &[u8]) -> (u32, u32, png::ColorType, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    buffer.truncate(info.buffer_size());
    (info.width, info.height, info.color_type, buffer)
}

/// A binary preview answer: its JSON header and each map's heights, read back from the 16-bit
/// samples as the page reads them.
struct Preview {
    header: Value,
    heights: Vec<Vec<f32>>,
}

impl Preview {
    fn parse(response: &common::Response) -> Preview {
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        assert_eq!(response.header("content-type"), Some(geogen_studio::PREVIEW_MEDIA_TYPE));
        let body = &response.body;
        assert_eq!(&body[..8], geogen_studio::PREVIEW_MAGIC);
        let header_len = u32::from_le_bytes(body[8..12].try_into().unwrap()) as usize;
        let header: Value = serde_json::from_slice(&body[12..12 + header_len]).unwrap();
        let heights = header["maps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let (offset, n) = (
                    m["offset"].as_u64().unwrap() as usize,
                    (m["width"].as_u64().unwrap() * m["height"].as_u64().unwrap()) as usize,
                );
                assert_eq!(offset % 2, 0, "samples are aligned for a Uint16Array");
                let (min, max) = (m["min"].as_f64().unwrap(), m["max"].as_f64().unwrap());
                body[offset..offset + 2 * n]
                    .chunks_exact(2)
                    .map(|q| (min + f64::from(u16::from_le_bytes([q[0], q[1]])) * (max - min) / 65535.0) as f32)
                    .collect()
            })
            .collect();
        Preview { header, heights }
    }
}

#[test]
fn every_api_request_needs_the_token() {
    let server = example();
    for (path, headers) in [
        ("/api/session", vec![]),
        ("/api/session", vec![("X-Geogen-Token", "wrong")]),
        ("/api/session?token=wrong", vec![]),
        ("/tiles/main/8/0/0.png", vec![]),
    ] {
        let response = server.get_with(path, &headers);
        assert_eq!(response.status, 401, "{path}");
        assert_eq!(response.code(), "GGE4000");
    }
    assert_eq!(server.get_with(&format!("/api/session?token={TOKEN}"), &[]).status, 200);
    server.assert_alive();
}

#[test]
fn the_session_gives_the_script_and_the_library_for_completion() {
    let session = example().get("/api/session").json();
    assert_eq!(session["source"], island());
    assert_eq!(session["savable"], false);
    let library = session["library"].as_array().unwrap();
    let noise = library.iter().find(|e| e["owner"] == "HeightMap" && e["label"] == "Noise").expect("HeightMap.Noise");
    assert!(noise["info"].as_str().unwrap().len() > 10, "the registry's summary: {noise}");
    assert!(library.iter().any(|e| e["owner"] == "." && e["label"] == "Blur"), "methods complete after a dot");
    assert!(library.iter().any(|e| e["kind"] == "keyword" && e["label"] == "yield"));
    assert!(library.iter().any(|e| e["owner"].is_null() && e["label"] == "CreateNoiseLayers"));
}

#[test]
fn check_gives_the_compilers_diagnostics_at_their_spans() {
    let server = example();
    // "é" is two bytes and one UTF-16 unit: the span must be counted as the editor counts.
    let source = "// é\nvar x = ;\nyield HeightMap.Flat(0);\n";
    let answer = server.post("/api/check", &json!({ "source": source }));
    assert_eq!(answer.status, 200);
    let answer = answer.json();
    assert_eq!(answer["ok"], false);
    let d = &answer["diagnostics"][0];
    assert!(d["code"].as_str().unwrap().starts_with("GGE1"), "{d}");
    assert_eq!(d["line"], 2);
    // The editor's offset of the compiler's line and column: line 1 is 5 UTF-16 units long
    // with its newline (6 bytes).
    let column = d["column"].as_u64().unwrap();
    assert_eq!(d["from"].as_u64(), Some(5 + column - 1), "{d}");
    assert!(d["to"].as_u64() >= d["from"].as_u64());
    let good = server.post("/api/check", &json!({ "source": island() })).json();
    assert_eq!(good["ok"], true);
    let parameters = good["info"]["parameters"].as_array().unwrap();
    let size = parameters.iter().find(|p| p["name"] == "Size").unwrap();
    assert_eq!((size["kind"].as_str(), size["min"].is_number(), size["max"].is_number()), (Some("number"), true, true));
    assert_eq!(good["info"]["maps"], json!(["main"]));
    assert_eq!(good["info"]["width"]["finite"], true);
}

#[test]
fn render_answers_previews_heights_and_messages_for_every_map() {
    let source = "Print(\"hello {0}\", 7);\nyield HeightMap.Flat(0.5);\nyield HeightMap.Flat(-0.25) as \"sea\";";
    let (_turn, server) = example_to_render();
    let answer = server.post(
        "/api/render",
        &json!({ "source": source, "width": 40, "height": 30, "seed": "7", "map_width": 40, "map_height": 30 }),
    );
    let Preview { header: answer, heights } = Preview::parse(&answer);
    let names: Vec<&str> = answer["maps"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["main", "sea"], "the script's order");
    assert_eq!(answer["messages"], json!(["hello 7"]));
    let main = &answer["maps"][0];
    assert_eq!((main["width"].as_u64(), main["height"].as_u64()), (Some(40), Some(30)));
    assert_eq!((main["min"].as_f64(), main["max"].as_f64()), (Some(0.5), Some(0.5)));
    assert_eq!(heights[0].len(), 40 * 30);
    assert!(heights[0].iter().all(|&h| h == 0.5), "a flat map is sent exactly");
    assert!(heights[1].iter().all(|&h| h == -0.25));
    assert!(answer["render_ms"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_512_preview_is_at_most_a_megabyte_and_its_heights_within_a_sample() {
    let request = json!({ "source": island(), "width": 512, "height": 512, "scale": 0.512, "map_width": 1000, "map_height": 1000 });
    let (_turn, server) = example_to_render();
    let response = server.post("/api/render", &request);
    assert!(response.body.len() <= 1_000_000, "a 512² preview answer is {} bytes", response.body.len());
    let preview = Preview::parse(&response);
    let settings = RunSettings {
        map_width: Some(1000),
        map_height: Some(1000),
        render_width: Some(512),
        render_height: Some(512),
        render_scale: 0.512,
        ..RunSettings::default()
    };
    let script = Script::compile("island.ggs", island(), &CompileOptions::default()).unwrap();
    let expected = script.render(&settings, &RenderConfig::default(), None).unwrap();
    let expected = expected.maps["main"].data();
    let (min, max) = expected.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    let main = &preview.header["maps"][0];
    assert_eq!((main["min"].as_f64().unwrap() as f32, main["max"].as_f64().unwrap() as f32), (min, max));
    let step = (max - min) / 65535.0;
    for (got, want) in preview.heights[0].iter().zip(expected) {
        assert!((got - want).abs() <= step * 0.5 + 1e-6, "{got} is not {want} within half a sample");
    }
}

#[test]
fn render_uses_parameters_and_seed_like_the_cli() {
    let request = json!({ "source": island(), "width": 64, "height": 64, "scale": 0.064, "map_width": 1000, "map_height": 1000,
                          "seed": "3", "parameters": { "Size": 0.2, "Roughness": "0.6" } });
    let (_turn, server) = example_to_render();
    let preview = Preview::parse(&server.post("/api/render", &request));
    let settings = RunSettings {
        seed: 3,
        parameters: vec![("Size".into(), "0.2".into()), ("Roughness".into(), "0.6".into())],
        map_width: Some(1000),
        map_height: Some(1000),
        render_width: Some(64),
        render_height: Some(64),
        render_scale: 0.064,
        ..RunSettings::default()
    };
    let script = Script::compile("island.ggs", island(), &CompileOptions::default()).unwrap();
    let expected = script.render(&settings, &RenderConfig::default(), None).unwrap();
    let expected = expected.maps["main"].data();
    let main = &preview.header["maps"][0];
    let step = (main["max"].as_f64().unwrap() - main["min"].as_f64().unwrap()) as f32 / 65535.0;
    assert_eq!(preview.heights[0].len(), expected.len());
    let worst = preview.heights[0].iter().zip(expected).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(worst <= step * 0.5 + 1e-6, "the same pixels as the library renders, within half a sample: {worst}");
}

#[test]
fn hostile_render_requests_get_coded_refusals_and_the_server_goes_on() {
    let (_turn, server) = example_to_render();
    let huge = server.post("/api/render", &json!({ "source": island(), "width": 100_000, "height": 100_000 }));
    assert_eq!((huge.status, huge.code().as_str()), (400, "GGE4003"));
    assert!(huge.json()["diagnostics"][0]["hint"].as_str().unwrap().contains("geogen render"));
    let wide = server.post("/api/render", &json!({ "source": island(), "width": 4096, "height": 4096 }));
    assert_eq!((wide.status, wide.code().as_str()), (400, "GGE4003"), "more pixels in all than allowed");
    let empty = server.post("/api/render", &json!({ "source": island(), "width": 0, "height": 10 }));
    assert_eq!((empty.status, empty.code().as_str()), (400, "GGE4003"));
    let scale = server.post("/api/render", &json!({ "source": island(), "width": 10, "height": 10, "scale": 1e9 }));
    assert_eq!((scale.status, scale.code().as_str()), (400, "GGE4003"));
    // A zoomed preview's window: an origin past the 32-bit map coordinates, or not whole pixels.
    let far = server.post(
        "/api/render",
        &json!({ "source": island(), "width": 10, "height": 10, "scale": 10, "origin": [i64::MAX, 0], "map_width": 1000, "map_height": 1000 }),
    );
    assert_eq!((far.status, far.code().as_str()), (400, "GGE4003"));
    assert!(far.json()["diagnostics"][0]["hint"].as_str().unwrap().contains("scale"));
    let fractional =
        server.post("/api/render", &json!({ "source": island(), "width": 10, "height": 10, "origin": [0.5, 0] }));
    assert_eq!((fractional.status, fractional.code().as_str()), (400, "GGE4000"));
    let zoomed = server.post(
        "/api/render",
        &json!({ "source": island(), "width": 16, "height": 16, "scale": 8, "origin": [4000, 4000], "map_width": 1000, "map_height": 1000 }),
    );
    let zoomed = Preview::parse(&zoomed);
    assert_eq!(
        (zoomed.header["maps"][0]["x"].as_i64(), zoomed.header["geometry"]["origin"][0].as_i64()),
        (Some(4000), Some(4000))
    );
    let malformed = server.post_raw("/api/render", b"{\"source\": 3");
    assert_eq!((malformed.status, malformed.code().as_str()), (400, "GGE4000"));
    let missing = server.post("/api/render", &json!({ "width": 10 }));
    assert_eq!(missing.status, 400);
    assert_eq!(missing.code(), "GGE4000");
    let bad_script =
        server.post("/api/render", &json!({ "source": "yield HeightMap.Flat(;", "width": 8, "height": 8 }));
    assert_eq!(bad_script.status, 422);
    assert!(bad_script.code().starts_with("GGE1"));
    let runtime = server.post(
        "/api/render",
        &json!({ "source": "var a = [1]; Print(\"before\"); yield HeightMap.Flat(a[5]);", "width": 8, "height": 8 }),
    );
    assert_eq!(runtime.status, 422);
    assert!(runtime.code().starts_with("GGE2"), "{}", runtime.code());
    assert_eq!(runtime.json()["messages"], json!(["before"]), "messages printed before the error are kept");
    let unknown = server
        .post("/api/render", &json!({ "source": island(), "width": 8, "height": 8, "parameters": { "Nope": 1 } }));
    assert_eq!((unknown.status, unknown.code().as_str()), (400, "GGE4001"));
    let bad_value = server
        .post("/api/render", &json!({ "source": island(), "width": 8, "height": 8, "parameters": { "Size": "big" } }));
    assert_eq!((bad_value.status, bad_value.code().as_str()), (400, "GGE4002"));
    let not_utf8_path = server.post("/api/nothing", &json!({}));
    assert_eq!(not_utf8_path.status, 404);
    let too_large = server.post_raw("/api/check", &vec![b' '; geogen_studio::MAX_BODY_BYTES + 10]);
    assert_eq!(too_large.status, 413);
    server.assert_alive();
}

#[test]
fn a_newer_render_stops_the_older_one() {
    let (_turn, server) = example_to_render();
    let endless =
        json!({ "source": "var i = 0; while (true) { i = i + 1; } yield HeightMap.Flat(0);", "width": 8, "height": 8 });
    let quick = json!({ "source": "yield HeightMap.Flat(0.1);", "width": 8, "height": 8 });
    let address = server.address;
    let started = Instant::now();
    let (slow, fast) = server.runtime.block_on(async move {
        let headers = [("X-Geogen-Token", TOKEN), ("Content-Type", "application/json")];
        let body = endless.to_string();
        let slow = tokio::spawn(async move { send(address, "POST", "/api/render", &headers, body.as_bytes()).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let fast = send(address, "POST", "/api/render", &headers, quick.to_string().as_bytes()).await;
        (slow.await.unwrap(), fast)
    });
    assert_eq!(slow.status, 409, "{}", String::from_utf8_lossy(&slow.body));
    assert!(slow.json()["diagnostics"][0]["message"].as_str().unwrap().contains("superseded"));
    assert_eq!(fast.status, 200);
    assert!(started.elapsed() < Duration::from_secs(20), "the endless script was stopped, not run to its budget");
}

/// The physical pixels `x0..x0+w, y0..y0+h` of `map` at `scale`, rendered in one piece.
fn full_render(script: &Script, map: &str, origin: (i64, i64), size: u32, scale: f64) -> Vec<f32> {
    let settings = RunSettings {
        render_origin: origin,
        render_width: Some(size),
        render_height: Some(size),
        render_scale: scale,
        maps: Some(vec![map.to_string()]),
        ..RunSettings::default()
    };
    let rendered = script.render(&settings, &RenderConfig::default(), None).unwrap();
    rendered.maps[map].data().to_vec()
}

#[test]
fn stitched_tiles_equal_a_larger_render_pixel_for_pixel() {
    // A server of its own: the tiles render the server's current script, which checks change.
    let server = start(options(Some(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dunes.ggs")))));
    let dunes = include_str!("../../../examples/dunes.ggs");
    let script = Script::compile("dunes.ggs", dunes, &CompileOptions::default()).unwrap();
    // Zoom 7 is scale 1/2; tiles (-1, -1) to (0, 0) cover physical pixels -256..256.
    let (z, scale) = (7, 0.5);
    // One pixel more on every side, for the hillshade's neighbours.
    let full = full_render(&script, "dry", (-257, -257), 514, scale);
    // Shaded for the zoom's scale, as the tiles are.
    let shade = geogen_io::hillshade::hillshade(514, 514, &full, &geogen_io::HillshadeOptions::for_render_scale(scale));
    for ty in -1..=0i64 {
        for tx in -1..=0i64 {
            for kind in ["colored", "gray", "hillshade"] {
                let response = server.get(&format!("/tiles/dry/{z}/{tx}/{ty}.png?kind={kind}"));
                assert_eq!(response.status, 200, "{kind} {tx},{ty}: {}", String::from_utf8_lossy(&response.body));
                assert_eq!(response.header("content-type"), Some("image/png"));
                let (w, h, color, pixels) = decode_png(&response.body);
                let channels = if kind == "colored" { 4 } else { 2 };
                let expected_color =
                    if kind == "colored" { png::ColorType::Rgba } else { png::ColorType::GrayscaleAlpha };
                assert_eq!((w, h, color), (256, 256, expected_color));
                for y in 0..256usize {
                    for x in 0..256usize {
                        let fx = (tx * 256 + 257) as usize + x;
                        let fy = (ty * 256 + 257) as usize + y;
                        let height = full[fy * 514 + fx];
                        let expected = match kind {
                            "colored" => {
                                let [r, g, b] = geogen_io::palette::color(height);
                                [r, g, b, 255]
                            }
                            "gray" => [geogen_io::quantize::to_u8(height), 255, 0, 0],
                            _ => [shade[fy * 514 + fx], 255, 0, 0],
                        };
                        let at = (y * 256 + x) * channels;
                        assert_eq!(
                            pixels[at..at + channels],
                            expected[..channels],
                            "{kind} tile {tx},{ty} pixel {x},{y}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn tiles_of_a_finite_map_are_transparent_outside_it_and_carry_etags() {
    let server = start(options(None));
    // Zoom 8 is scale 1; the 1000-unit map ends inside tile 3 (pixels 768..1024).
    let response = server.get("/tiles/main/8/3/0.png?map=1000x1000&seed=5&p.Size=0.3");
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    let (_, _, _, pixels) = decode_png(&response.body);
    assert_eq!(pixels[(231) * 4 + 3], 255, "inside the map");
    assert_eq!(pixels[(232) * 4 + 3], 0, "outside the map");
    let outside = server.get("/tiles/main/8/-1/0.png?map=1000x1000");
    assert_eq!(outside.status, 200);
    assert!(decode_png(&outside.body).3.chunks(4).all(|p| p[3] == 0), "a tile wholly outside is transparent");
    let etag = response.header("etag").expect("an ETag").to_string();
    let again = server.get_with(
        &format!("/tiles/main/8/3/0.png?map=1000x1000&seed=5&p.Size=0.3&token={TOKEN}"),
        &[("If-None-Match", &etag)],
    );
    assert_eq!(again.status, 304);
    assert_eq!(response.header("x-geogen-cache"), Some("miss"), "the first request renders");
    let cached = server.get("/tiles/main/8/3/0.png?map=1000x1000&seed=5&p.Size=0.3");
    assert_eq!(cached.header("x-geogen-cache"), Some("hit"), "the same tile again comes from the cache");
    assert_eq!(cached.body, response.body, "a cached tile is the rendered one");
    assert_eq!(cached.header("etag"), Some(etag.as_str()));
    let other = server.get("/tiles/main/8/3/0.png?map=1000x1000&seed=6&p.Size=0.3");
    assert_ne!(other.header("etag"), Some(etag.as_str()), "another seed is another tile");
    assert_eq!(other.header("x-geogen-cache"), Some("miss"), "another seed is rendered, not served from the cache");
    let terrarium = server.get("/tiles/main/8/0/0.png?kind=terrarium");
    assert_eq!(decode_png(&terrarium.body).2, png::ColorType::Rgb);
}

#[test]
fn bad_tile_requests_get_coded_refusals() {
    let server = start(options(None));
    for (path, status, code) in [
        ("/tiles/main/12/0/0.png", 400, "GGE4000"),
        ("/tiles/main/x/0/0.png", 400, "GGE4000"),
        ("/tiles/main/8/zero/0.png", 400, "GGE4000"),
        ("/tiles/main/8/0/0.jpg", 400, "GGE4000"),
        ("/tiles/main/8/0/0.png?kind=rainbow", 400, "GGE4000"),
        ("/tiles/main/8/0/0.png?map=big", 400, "GGE4000"),
        ("/tiles/main/8/0/0.png?map=0x10", 400, "GGE4003"),
        ("/tiles/main/8/0/0.png?path=/etc/passwd", 400, "GGE4000"),
        ("/tiles/main/8/0/0.png?p.Nope=1", 400, "GGE4001"),
        ("/tiles/nowhere/8/0/0.png", 400, "GGE4000"),
        ("/tiles/main/8/99999999999/0.png", 400, "GGE4003"),
        ("/tiles/main/8/9223372036854775807/0.png", 400, "GGE4003"),
    ] {
        let response = server.get(path);
        assert_eq!(response.status, status, "{path}");
        assert_eq!(response.code(), code, "{path}");
        assert!(!response.json()["diagnostics"][0]["message"].as_str().unwrap().is_empty());
    }
    server.assert_alive();
}

#[test]
fn the_page_and_its_bundle_are_embedded_and_nothing_else_is_served() {
    let server = example();
    let page = server.get_with("/", &[]);
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.body).contains("/assets/app.js"));
    let js = server.get_with("/assets/app.js", &[]);
    assert_eq!(js.status, 200);
    assert!(js.header("content-type").unwrap().contains("javascript"));
    assert!(js.body.len() > 10_000);
    // Compressed for a browser that accepts gzip: the same bundle, a fraction of the bytes.
    let packed = server.get_with("/assets/app.js", &[("accept-encoding", "gzip, deflate, br")]);
    assert_eq!(packed.header("content-encoding"), Some("gzip"));
    assert!(packed.body.len() * 3 < js.body.len(), "{} of {}", packed.body.len(), js.body.len());
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&packed.body[..]), &mut inflated).unwrap();
    assert_eq!(inflated, js.body);
    // The icon browsers ask for on their own, without the token.
    for icon in ["/favicon.ico", "/favicon.svg"] {
        let response = server.get_with(icon, &[]);
        assert_eq!(response.status, 200, "{icon}");
        assert_eq!(response.header("content-type"), Some("image/svg+xml"), "{icon}");
    }
    for path in ["/assets/../Cargo.toml", "/Cargo.toml", "/assets/app.js.map", "/%2e%2e/Cargo.toml"] {
        assert_eq!(server.get(path).status, 404, "{path}");
    }
}

#[test]
fn save_writes_the_one_file_atomically_and_refuses_when_it_changed_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my.ggs");
    std::fs::write(&path, "yield HeightMap.Flat(0);\n").unwrap();
    let server = start(options(Some(path.clone())));
    let session = server.get("/api/session").json();
    assert_eq!(session["savable"], true);
    assert_eq!(session["source"], "yield HeightMap.Flat(0);\n");
    let version = session["version"].as_str().unwrap().to_string();
    let saved = server.post("/api/save", &json!({ "source": "yield HeightMap.Flat(0.5);\n", "version": version }));
    assert_eq!(saved.status, 200, "{}", String::from_utf8_lossy(&saved.body));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "yield HeightMap.Flat(0.5);\n");
    let new_version = saved.json()["version"].as_str().unwrap().to_string();
    // A stale version (the editor's copy is older than the last save) is refused.
    let stale = server.post("/api/save", &json!({ "source": "x", "version": version }));
    assert_eq!(stale.status, 409);
    // The file changed on disk behind the studio's back: refused, and the file is left alone.
    std::fs::write(&path, "// edited elsewhere\nyield HeightMap.Flat(1);\n").unwrap();
    let changed = server.post("/api/save", &json!({ "source": "mine", "version": new_version }));
    assert_eq!((changed.status, changed.code().as_str()), (409, "GGE4000"));
    assert!(changed.json()["diagnostics"][0]["message"].as_str().unwrap().contains("changed on disk"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "// edited elsewhere\nyield HeightMap.Flat(1);\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left: {leftovers:?}");
    let malformed = server.post("/api/save", &json!({ "source": "x" }));
    assert_eq!((malformed.status / 100, malformed.code().as_str()), (4, "GGE4000"));
}

/// The file changed on disk under an edited page: the refusal carries the file's text and
/// version, the user can keep theirs (saved over that version) or take the file's, and a
/// reloaded page reads the file as it is now; the studio can always save again.
#[test]
fn after_the_file_changes_on_disk_the_page_can_keep_its_text_or_take_the_file_s() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my.ggs");
    std::fs::write(&path, "yield HeightMap.Flat(0);\n").unwrap();
    let server = start(options(Some(path.clone())));
    let version = server.get("/api/session").json()["version"].as_str().unwrap().to_string();
    std::fs::write(&path, "// theirs\nyield HeightMap.Flat(1);\n").unwrap();
    let refused = server.post("/api/save", &json!({ "source": "// mine\n", "version": version }));
    assert_eq!(refused.status, 409);
    let disk = &refused.json()["disk"];
    assert_eq!(disk["source"], "// theirs\nyield HeightMap.Flat(1);\n");
    // Keep mine: saved over the version the refusal showed.
    let kept = server.post("/api/save", &json!({ "source": "// mine\n", "version": disk["version"] }));
    assert_eq!(kept.status, 200, "{}", String::from_utf8_lossy(&kept.body));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "// mine\n");
    // Changed again; a reloaded page reads the file as it is now and saves over it.
    std::fs::write(&path, "// theirs again\n").unwrap();
    let session = server.get("/api/session").json();
    assert_eq!(session["source"], "// theirs again\n");
    let saved = server.post("/api/save", &json!({ "source": "// merged\n", "version": session["version"] }));
    assert_eq!(saved.status, 200);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "// merged\n");
}

/// The starter template a new script opens with (the server's own copy, for comparison).
const TEMPLATE: &str = include_str!("../templates/new.ggs");

#[test]
fn a_new_file_starts_from_the_template_and_is_created_on_the_first_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.ggs");
    let server = start(options(Some(path.clone())));
    let session = server.get("/api/session").json();
    assert_eq!((session["source"].as_str(), session["version"].as_str()), (Some(TEMPLATE), Some("absent")));
    assert_eq!((session["new"].as_bool(), session["savable"].as_bool()), (Some(true), Some(true)));
    assert!(!path.exists(), "nothing is written before the first save");
    // The template is real terrain: it compiles, has parameters, and renders land and sea.
    let checked = server.post("/api/check", &json!({ "source": TEMPLATE })).json();
    assert_eq!(checked["ok"], true, "{checked}");
    assert!(checked["info"]["parameters"].as_array().unwrap().len() >= 2);
    let rendered = server.post("/api/render", &json!({ "source": TEMPLATE, "width": 64, "height": 64, "scale": 0.064, "map_width": 1000, "map_height": 1000 }));
    let heights = &Preview::parse(&rendered).heights[0];
    let land = heights.iter().filter(|h| **h > 0.0).count();
    assert!(land > heights.len() / 10 && land < heights.len() * 9 / 10, "land and sea: {land} of {}", heights.len());
    let saved = server.post("/api/save", &json!({ "source": "yield HeightMap.Flat(0);", "version": "absent" }));
    assert_eq!(saved.status, 200);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "yield HeightMap.Flat(0);");
    assert_eq!(server.get("/api/session").json()["new"], false);
    let example = example().post("/api/save", &json!({ "source": "x", "version": "whatever" }));
    assert_eq!((example.status, example.code().as_str()), (400, "GGE4000"));
}

#[test]
fn a_new_file_that_appeared_meanwhile_is_never_replaced_by_the_first_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.ggs");
    let server = start(options(Some(path.clone())));
    assert_eq!(server.get("/api/session").json()["version"], "absent");
    std::fs::write(&path, "// someone else's\n").unwrap();
    let refused = server.post("/api/save", &json!({ "source": "// mine\n", "version": "absent" }));
    assert_eq!((refused.status, refused.code().as_str()), (409, "GGE4000"));
    assert_eq!(refused.json()["disk"]["source"], "// someone else's\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "// someone else's\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left: {leftovers:?}");
}

/// A directory of scripts and other things: `start.ggs` (the studio's), `b.ggs`, a link to
/// `b.ggs`, a link out of the directory, a text file, a hidden script, a script in a subdirectory.
fn script_directory() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let start_path = dir.path().join("start.ggs");
    std::fs::write(&start_path, "yield HeightMap.Flat(0);\n").unwrap();
    std::fs::write(dir.path().join("b.ggs"), "yield HeightMap.Flat(0.25);\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a script").unwrap();
    std::fs::write(dir.path().join(".hidden.ggs"), "yield HeightMap.Flat(0);\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/c.ggs"), "yield HeightMap.Flat(0);\n").unwrap();
    std::fs::write(outside.path().join("secret.ggs"), "// secret\n").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("b.ggs"), dir.path().join("link-to-b.ggs")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.ggs"), dir.path().join("out.ggs")).unwrap();
    }
    (dir, outside, start_path)
}

#[test]
fn the_directory_s_scripts_are_listed_and_opened_and_nothing_outside_it() {
    let (dir, _outside, start_path) = script_directory();
    let server = start(options(Some(start_path)));
    let listed = server.get("/api/files").json();
    assert_eq!(listed["current"], "start.ggs");
    let expected: &[&str] = if cfg!(unix) { &["b.ggs", "link-to-b.ggs", "start.ggs"] } else { &["b.ggs", "start.ggs"] };
    assert_eq!(listed["files"], json!(expected), "{listed}");
    let opened = server.post("/api/open", &json!({ "name": "b.ggs" }));
    assert_eq!(opened.status, 200);
    let opened = opened.json();
    assert_eq!(
        (opened["name"].as_str(), opened["source"].as_str()),
        (Some("b.ggs"), Some("yield HeightMap.Flat(0.25);\n"))
    );
    // The opened script is the document: the session gives it and a save writes it.
    assert_eq!(server.get("/api/session").json()["name"], "b.ggs");
    let saved =
        server.post("/api/save", &json!({ "source": "yield HeightMap.Flat(0.5);\n", "version": opened["version"] }));
    assert_eq!(saved.status, 200);
    assert_eq!(std::fs::read_to_string(dir.path().join("b.ggs")).unwrap(), "yield HeightMap.Flat(0.5);\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("start.ggs")).unwrap(), "yield HeightMap.Flat(0);\n");
    for (name, status, code) in [
        ("../start.ggs", 400, "GGE4026"),
        ("sub/c.ggs", 400, "GGE4026"),
        ("/etc/hostname.ggs", 400, "GGE4026"),
        (".hidden.ggs", 400, "GGE4026"),
        ("notes.txt", 400, "GGE4026"),
        ("..", 400, "GGE4026"),
        ("missing.ggs", 404, "GGE4024"),
        ("sub", 400, "GGE4026"),
    ] {
        let refused = server.post("/api/open", &json!({ "name": name }));
        assert_eq!((refused.status, refused.code().as_str()), (status, code), "{name}");
        assert!(refused.json()["diagnostics"][0]["hint"].is_string(), "{name}: a hint");
    }
    if cfg!(unix) {
        let out = server.post("/api/open", &json!({ "name": "out.ggs" }));
        assert_eq!((out.status, out.code().as_str()), (400, "GGE4026"));
        assert!(!String::from_utf8_lossy(&out.body).contains("secret"));
    }
    if cfg!(unix) {
        // A link inside the directory opens the file it leads to, and a save writes that file.
        let linked = server.post("/api/open", &json!({ "name": "link-to-b.ggs" })).json();
        assert_eq!(linked["name"], "link-to-b.ggs");
        let saved =
            server.post("/api/save", &json!({ "source": "// through the link\n", "version": linked["version"] }));
        assert_eq!(saved.status, 200);
        assert_eq!(std::fs::read_to_string(dir.path().join("b.ggs")).unwrap(), "// through the link\n");
        assert!(std::fs::symlink_metadata(dir.path().join("link-to-b.ggs")).unwrap().file_type().is_symlink());
        assert_eq!(server.get("/api/session").json()["name"], "link-to-b.ggs");
        server.post("/api/open", &json!({ "name": "b.ggs" }));
    }
    let malformed = server.post_raw("/api/open", b"{\"file\": 1}");
    assert_eq!((malformed.status, malformed.code().as_str()), (400, "GGE4000"));
    // None of that changed the document.
    assert_eq!(server.get("/api/session").json()["name"], "b.ggs");
    server.assert_alive();
}

#[test]
fn a_new_script_is_created_from_the_template_under_a_plain_name_only() {
    let (dir, outside, start_path) = script_directory();
    let server = start(options(Some(start_path)));
    let created = server.post("/api/new", &json!({ "name": "hills" }));
    assert_eq!(created.status, 200, "{}", String::from_utf8_lossy(&created.body));
    let created = created.json();
    assert_eq!((created["name"].as_str(), created["new"].as_bool()), (Some("hills.ggs"), Some(false)));
    assert_eq!(std::fs::read_to_string(dir.path().join("hills.ggs")).unwrap(), TEMPLATE);
    assert_eq!(server.get("/api/session").json()["name"], "hills.ggs");
    // An example saved under a name: its own text.
    let example = server.post("/api/new", &json!({ "name": "dunes.ggs", "source": "// dunes\n" }));
    assert_eq!(example.status, 200);
    assert_eq!(std::fs::read_to_string(dir.path().join("dunes.ggs")).unwrap(), "// dunes\n");
    // Taken names are refused, the file left alone: a script, a link out, another file.
    for name in ["hills", "b.ggs", "link-to-b", "out.ggs"] {
        let taken = server.post("/api/new", &json!({ "name": name, "source": "// replaced?\n" }));
        assert_eq!((taken.status, taken.code().as_str()), (409, "GGE4027"), "{name}");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("hills.ggs")).unwrap(), TEMPLATE);
    assert_eq!(std::fs::read_to_string(outside.path().join("secret.ggs")).unwrap(), "// secret\n");
    for name in
        ["../escape", "/tmp/escape", "sub/escape", ".escape", "", "a\\b", "c:escape", "x\u{0}y", &"x".repeat(300)]
    {
        let refused = server.post("/api/new", &json!({ "name": name }));
        assert_eq!((refused.status, refused.code().as_str()), (400, "GGE4026"), "{name:?}");
    }
    assert!(!dir.path().parent().unwrap().join("escape.ggs").exists());
    assert!(!dir.path().join("sub/escape.ggs").exists());
    let mut names: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let mut expected = vec![".hidden.ggs", "b.ggs", "dunes.ggs", "hills.ggs", "notes.txt", "start.ggs", "sub"];
    if cfg!(unix) {
        expected.extend(["link-to-b.ggs", "out.ggs"]);
        expected.sort();
    }
    assert_eq!(names, expected, "nothing else written, no temporary file left");
    server.assert_alive();
}

#[test]
fn the_built_in_example_has_examples_but_no_directory() {
    let server = example();
    assert_eq!(server.get("/api/session").json()["directory"], false);
    assert_eq!(server.get("/api/files").json()["files"], json!([]));
    let refused = server.post("/api/new", &json!({ "name": "x" }));
    assert_eq!((refused.status, refused.code().as_str()), (400, "GGE4000"));
    let examples = server.get("/api/examples").json();
    let examples = examples.as_array().unwrap();
    assert!(examples.len() >= 4);
    for example in examples {
        let checked = server.post("/api/check", &json!({ "source": example["source"] })).json();
        assert_eq!(checked["ok"], true, "{} compiles", example["name"]);
        assert!(example["title"].as_str().is_some_and(|t| !t.is_empty()));
    }
    assert_eq!(examples[0]["source"], island());
}

#[test]
fn the_tile_server_serves_tiles_with_its_defaults_and_nothing_else() {
    let dunes = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dunes.ggs"));
    let mut tile_options = options(Some(dunes.clone()));
    tile_options.mode = geogen_studio::Mode::TileServer;
    tile_options.tile_defaults = geogen_studio::TileDefaults {
        seed: 9,
        parameters: vec![("Wavelength".into(), "64".into())],
        map_size: None,
        ..Default::default()
    };
    let server = start(tile_options);
    let with_defaults = server.get("/tiles/main/8/0/0.png?kind=gray");
    assert_eq!(with_defaults.status, 200);
    let explicit = start(options(Some(dunes))).get("/tiles/main/8/0/0.png?kind=gray&seed=9&p.Wavelength=64");
    assert_eq!(decode_png(&with_defaults.body).3, decode_png(&explicit.body).3, "the defaults are the query's");
    let overridden = server.get("/tiles/main/8/0/0.png?kind=gray&seed=10");
    assert_ne!(decode_png(&with_defaults.body).3, decode_png(&overridden.body).3, "a request's seed wins");
    for path in ["/", "/api/session", "/assets/app.js"] {
        assert_eq!(server.get(path).status, 404, "{path}");
    }
    assert_eq!(server.post("/api/save", &json!({ "source": "x", "version": "absent" })).status, 404);
}

#[test]
fn the_tile_server_refuses_a_script_that_does_not_compile() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ggs");
    std::fs::write(&path, "yield HeightMap.Flat(;").unwrap();
    let mut tile_options = options(Some(path));
    tile_options.mode = geogen_studio::Mode::TileServer;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let error = runtime.block_on(Studio::bind(tile_options)).err().expect("refused");
    assert!(error.contains("GGE1"), "{error}");
}

/// A studio whose exports go into a fresh directory (inside `root`, so the test can see that
/// nothing lands anywhere else).
fn export_server(root: &std::path::Path) -> Server {
    let mut export_options = options(None);
    export_options.export_dir = root.join("exports");
    start(export_options)
}

fn small_export(formats: &[&str]) -> Value {
    json!({
        "source": island(), "seed": 7, "parameters": { "Size": 0.3 },
        "width": 96, "height": 80, "map_width": 96, "map_height": 80,
        "formats": formats,
    })
}

#[test]
fn export_writes_the_files_of_geogen_render_and_never_replaces_one_silently() {
    let root = tempfile::tempdir().unwrap();
    let server = export_server(root.path());
    let dir = root.path().join("exports");
    let request = small_export(&["png16", "colored", "r16", "normal", "obj"]);
    let response = server.post("/api/export", &request);
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    let answer = response.json();
    let names: Vec<&str> = answer["files"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["main.png", "main_colored.png", "main.r16", "main_normal.png", "main.obj"]);
    for file in answer["files"].as_array().unwrap() {
        let on_disk = std::fs::metadata(dir.join(file["name"].as_str().unwrap())).unwrap().len();
        assert_eq!(file["bytes"].as_u64(), Some(on_disk), "{file}");
        assert_eq!(file["replaced"], false);
    }
    // The same bytes as the library's render through the writers of `geogen render`.
    let script = Script::compile("island.ggs", island(), &CompileOptions::default()).unwrap();
    let settings = RunSettings {
        seed: 7,
        parameters: vec![("Size".into(), "0.3".into())],
        map_width: Some(96),
        map_height: Some(80),
        render_width: Some(96),
        render_height: Some(80),
        ..RunSettings::default()
    };
    let rendered = script.render(&settings, &RenderConfig::default(), None).unwrap();
    let field = geogen_io::HeightField::new(96, 80, rendered.maps["main"].data()).unwrap();
    for (format, name) in [(geogen_io::Format::Png16, "main.png"), (geogen_io::Format::Colored, "main_colored.png")] {
        assert_eq!(std::fs::read(dir.join(name)).unwrap(), geogen_io::encode(format, &field).unwrap(), "{name}");
    }
    let (w, h, color, _) = decode_png(&std::fs::read(dir.join("main_normal.png")).unwrap());
    assert_eq!((w, h, color), (96, 80, png::ColorType::Rgb), "the normal map of the core, not of its margin");
    // Again: refused before rendering, naming the files, which stay as they were.
    let before = std::fs::read(dir.join("main.png")).unwrap();
    let mut changed = request.clone();
    changed["seed"] = json!(8);
    let again = server.post("/api/export", &changed);
    assert_eq!(again.status, 409, "{}", String::from_utf8_lossy(&again.body));
    assert_eq!(again.json()["existing"].as_array().unwrap().len(), 5);
    assert!(again.json()["diagnostics"][0]["message"].as_str().unwrap().contains("main.png"));
    assert_eq!(std::fs::read(dir.join("main.png")).unwrap(), before);
    // With replace, replaced and said so.
    changed["replace"] = json!(true);
    let replaced = server.post("/api/export", &changed);
    assert_eq!(replaced.status, 200);
    assert!(replaced.json()["files"].as_array().unwrap().iter().all(|f| f["replaced"] == true));
    assert_ne!(std::fs::read(dir.join("main.png")).unwrap(), before, "another seed, other heights");
    // Nothing but the exports and no lock or temporary file left behind.
    let mut entries: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    entries.sort();
    assert_eq!(entries, ["main.obj", "main.png", "main.r16", "main_colored.png", "main_normal.png"]);
    let top: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(top, ["exports"]);
}

#[test]
fn a_preset_export_writes_its_height_format_and_the_sidecar_of_geogen_render() {
    let root = tempfile::tempdir().unwrap();
    let server = export_server(root.path());
    let mut request = small_export(&[]);
    request["width"] = json!(65);
    request["height"] = json!(65);
    request["map_width"] = json!(65);
    request["map_height"] = json!(65);
    request["preset"] = json!("unity");
    let response = server.post("/api/export", &request);
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    let names: Vec<String> =
        response.json()["files"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap().into()).collect();
    assert_eq!(names, ["main.r16", "main.unity.json"]);
    let dir = root.path().join("exports");
    assert_eq!(std::fs::read(dir.join("main.r16")).unwrap().len(), 65 * 65 * 2);
    let sidecar: Value = serde_json::from_slice(&std::fs::read(dir.join("main.unity.json")).unwrap()).unwrap();
    assert_eq!(sidecar["files"], json!(["main.r16"]));
    assert_eq!(sidecar["engine"]["resolution"], 65);
    assert_eq!(sidecar["generator"]["seed"], 7);
    assert_eq!(sidecar["generator"]["parameters"]["Size"], 0.3);
    let command: Vec<&str> =
        sidecar["generator"]["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(command[..2], ["geogen", "render"]);
    for flag in ["--preset", "unity", "--size", "65x65", "--map-size", "-p", "Size=0.3", "--format", "r16"] {
        assert!(command.contains(&flag), "{flag} in {command:?}");
    }
    // Exporting again names the sidecar among the files it would replace.
    let again = server.post("/api/export", &request);
    assert_eq!(again.status, 409);
    assert_eq!(again.json()["existing"], json!(["main.r16", "main.unity.json"]));
}

#[test]
fn bad_export_requests_get_coded_refusals_and_write_nothing() {
    let root = tempfile::tempdir().unwrap();
    let server = export_server(root.path());
    let with = |key: &str, value: Value| {
        let mut request = small_export(&["png16"]);
        request[key] = value;
        server.post("/api/export", &request)
    };
    let cases = [
        ("unknown format", with("formats", json!(["png16", "jpeg"])), 400, "GGE4000"),
        ("no format", with("formats", json!([])), 400, "GGE4000"),
        ("huge size", with("width", json!(100_000)), 400, "GGE4003"),
        ("too many pixels", with("height", json!(5000)), 400, "GGE4003"),
        ("empty size", with("width", json!(0)), 400, "GGE4003"),
        ("a path as map name", with("maps", json!(["../../etc/passwd"])), 400, "GGE4000"),
        ("an absolute map name", with("maps", json!(["/tmp/x"])), 400, "GGE4000"),
        ("a map not yielded", with("maps", json!(["other"])), 400, "GGE4000"),
        ("a negative pixel size", with("pixel_size", json!(-1)), 400, "GGE4021"),
        ("an unknown normal", with("normal", json!("sideways")), 400, "GGE4021"),
        ("an unknown preset", with("preset", json!("cryengine")), 400, "GGE4021"),
        ("a size unity cannot import", with("preset", json!("unity")), 400, "GGE4021"),
        ("no triangles", with("mesh_triangles", json!(0)), 400, "GGE4021"),
        ("a negative mesh error", with("mesh_error", json!(-1)), 400, "GGE4021"),
        ("a reversed splat range", with("splat", json!("1..0")), 400, "GGE4021"),
        ("five splat layers", with("splat", json!("0..1;0..1;0..1;0..1;0..1")), 400, "GGE4021"),
        ("a path as splat mask", with("splat", json!("@../x")), 400, "GGE4021"),
        ("a broken script", with("source", json!("yield HeightMap.Flat(;")), 422, "GGE1"),
        ("an unknown parameter", with("parameters", json!({ "Nope": 1 })), 400, "GGE4001"),
    ];
    for (what, response, status, code) in cases {
        assert_eq!(response.status, status, "{what}: {}", String::from_utf8_lossy(&response.body));
        assert!(response.code().starts_with(code), "{what}: {}", response.code());
    }
    let mut both = small_export(&["obj"]);
    both["mesh_triangles"] = json!(100);
    both["mesh_error"] = json!(1.0);
    let mut unknown_mask = small_export(&["splat"]);
    unknown_mask["splat"] = json!("@rock");
    for (what, request, code) in
        [("both mesh settings", both, "GGE4021"), ("a mask not yielded", unknown_mask, "GGE4000")]
    {
        let response = server.post("/api/export", &request);
        assert_eq!((response.status, response.code().as_str()), (400, code), "{what}");
    }
    let malformed = server.post_raw("/api/export", b"{\"formats\": 3}");
    assert_eq!((malformed.status, malformed.code().as_str()), (400, "GGE4000"));
    let no_token = server.get_with("/api/export/progress", &[]);
    assert_eq!(no_token.status, 401);
    let progress = server.get("/api/export/progress");
    assert_eq!((progress.status, progress.json()["running"].clone()), (200, json!(false)));
    server.assert_alive();
    assert!(std::fs::read_dir(root.path()).unwrap().all(|e| {
        let e = e.unwrap();
        e.file_name() == "exports" && std::fs::read_dir(e.path()).unwrap().next().is_none()
    }));
}

#[test]
fn terrain_rgb_tiles_decode_to_the_heights_of_a_render_within_a_tenth_of_a_metre() {
    let dunes = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dunes.ggs"));
    let server = start(options(Some(dunes.clone())));
    let script =
        Script::compile("dunes.ggs", &std::fs::read_to_string(&dunes).unwrap(), &CompileOptions::default()).unwrap();
    let response = server.get("/tiles/main/7/-1/0.png?kind=terrain-rgb");
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    let (w, h, color, rgb) = decode_png(&response.body);
    assert_eq!((w, h, color), (256, 256, png::ColorType::Rgb));
    let heights = full_render(&script, "main", (-256, 0), 256, 0.5);
    let mut worst = 0.0f64;
    for (i, &height) in heights.iter().enumerate() {
        let (r, g, b) = (f64::from(rgb[3 * i]), f64::from(rgb[3 * i + 1]), f64::from(rgb[3 * i + 2]));
        // Mapbox's decoding, as MapLibre's raster-dem source with encoding "mapbox" applies it.
        let metres = -10000.0 + (r * 65536.0 + g * 256.0 + b) * 0.1;
        let expected = f64::from(height.clamp(-1.0, 1.0)) * 1000.0;
        worst = worst.max((metres - expected).abs());
    }
    assert!(worst <= 0.05 + 1e-9, "off by {worst} m, more than half the 0.1 m step");
    assert!(heights.iter().any(|&h| h != heights[0]), "a tile with relief");
}

#[test]
fn a_cache_budget_of_zero_keeps_no_tile_and_a_budget_keeps_them() {
    let mut none = options(None);
    none.cache_bytes = 0;
    let server = start(none);
    for _ in 0..2 {
        let tile = server.get("/tiles/main/6/0/0.png");
        assert_eq!((tile.status, tile.header("x-geogen-cache")), (200, Some("miss")));
    }
    let cached = start(options(None));
    let first = cached.get("/tiles/main/6/0/0.png");
    let second = cached.get("/tiles/main/6/0/0.png");
    assert_eq!((first.header("x-geogen-cache"), second.header("x-geogen-cache")), (Some("miss"), Some("hit")));
    assert_eq!(first.body, second.body);
}

#[test]
fn an_export_runs_beside_other_requests_and_a_second_one_waits_its_turn() {
    let root = tempfile::tempdir().unwrap();
    let server = export_server(root.path());
    // A script that simulates for a while before it yields.
    let slow = json!({
        "source": "var i = 0; while (i < 1000000) { i = i + 1; } yield HeightMap.Flat(0.25);",
        "width": 32, "height": 32, "formats": ["png16"],
    });
    let address = server.address;
    let (first, during, progress, second) = server.runtime.block_on(async move {
        let headers = [("X-Geogen-Token", TOKEN), ("Content-Type", "application/json")];
        let body = slow.to_string();
        let first = tokio::spawn(async move { send(address, "POST", "/api/export", &headers, body.as_bytes()).await });
        // Wait until it runs, then ask for other things while it does.
        let started = Instant::now();
        let progress = loop {
            let p = send(address, "GET", "/api/export/progress", &headers, b"").await;
            if p.json()["running"] == true || started.elapsed() > Duration::from_secs(20) {
                break p;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let check = json!({ "source": "yield HeightMap.Flat(0);" }).to_string();
        let during = send(address, "POST", "/api/check", &headers, check.as_bytes()).await;
        let again = json!({ "source": "yield HeightMap.Flat(0);", "width": 8, "height": 8, "formats": ["png8"] });
        let second = send(address, "POST", "/api/export", &headers, again.to_string().as_bytes()).await;
        (first.await.unwrap(), during, progress, second)
    });
    assert_eq!(progress.json()["running"], true, "the export was seen running");
    assert_eq!(during.status, 200, "a check is answered while the export renders");
    assert_eq!(second.status, 409, "{}", String::from_utf8_lossy(&second.body));
    assert!(second.json()["diagnostics"][0]["message"].as_str().unwrap().contains("another export"));
    assert_eq!(first.status, 200, "{}", String::from_utf8_lossy(&first.body));
    assert_eq!(first.json()["files"][0]["name"], "main.png");
    assert_eq!(server.get("/api/export/progress").json()["running"], false);
}

#[test]
fn requests_naming_a_host_the_server_was_not_given_are_refused() {
    // DNS rebinding: another site's page reaching the server under the site's own name.
    let server = example();
    let port = server.address.port();
    for path in ["/api/session", "/", "/tiles/main/8/0/0.png"] {
        let refused = server.get_with(path, &[("X-Geogen-Token", TOKEN), ("Host", "evil.example")]);
        assert_eq!(refused.status, 421, "{path}");
        assert_eq!(refused.code(), "GGE4000", "{path}");
        assert!(refused.json()["diagnostics"][0]["message"].as_str().unwrap().contains("evil.example"));
    }
    let with_port = format!("localhost:{port}");
    for host in ["localhost", with_port.as_str(), "127.0.0.1", "127.0.0.1:9", "[::1]:9", "LOCALHOST"] {
        let answered = server.get_with("/api/session", &[("X-Geogen-Token", TOKEN), ("Host", host)]);
        assert_eq!(answered.status, 200, "{host}");
    }
    for host in ["evil.example:80", "localhost.evil.example", "[evil]:80", "127.0.0.1.evil.example"] {
        let refused = server.get_with("/api/session", &[("X-Geogen-Token", TOKEN), ("Host", host)]);
        assert_eq!(refused.status, 421, "{host}");
    }
    // A name the server was started with is answered, in any case.
    let mut named = options(None);
    named.allowed_hosts = vec!["terrain.lan".to_string()];
    let named = start(named);
    let answered = named.get_with("/api/session", &[("X-Geogen-Token", TOKEN), ("Host", "Terrain.LAN:8470")]);
    assert_eq!(answered.status, 200);
    let refused = named.get_with("/api/session", &[("X-Geogen-Token", TOKEN), ("Host", "other.lan")]);
    assert_eq!(refused.status, 421);
}

/// Connections held open on purpose (idle, trickling a request head, or a body) are closed
/// within the read timeout, and requests of other clients are answered meanwhile.
#[test]
fn idle_and_slow_connections_are_closed_while_good_requests_are_answered() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let timeout = Duration::from_secs(2);
    let mut held = options(None);
    held.read_timeout = timeout;
    let server = start(held);
    let address = server.address;
    let started = Instant::now();
    let connections = server.runtime.block_on(async move {
        let mut connections = Vec::new();
        for i in 0..400 {
            let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
            match i % 4 {
                // Idle: nothing sent.
                0 | 1 => {}
                // Half a request head.
                2 => stream.write_all(format!("GET /api/session HTTP/1.1\r\nHost: {address}\r\n").as_bytes()).await.unwrap(),
                // A head announcing a body, and a tenth of the body.
                _ => {
                    let head = format!(
                        "POST /api/check HTTP/1.1\r\nHost: {address}\r\nX-Geogen-Token: {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"source\":"
                    );
                    stream.write_all(head.as_bytes()).await.unwrap();
                }
            }
            connections.push(stream);
        }
        connections
    });
    // Good requests are answered while the 400 connections are held.
    for _ in 0..5 {
        let response = server.post("/api/check", &json!({ "source": "yield HeightMap.Flat(0);" }));
        assert_eq!(response.status, 200);
    }
    assert!(started.elapsed() < timeout, "the good requests waited for the held connections");
    // Every held connection is closed by the server (end of stream, or a 408 and then the end)
    // within the timeout and a margin.
    let closed_within = server.runtime.block_on(async move {
        let mut slowest = Duration::ZERO;
        for mut stream in connections {
            let mut buffer = Vec::new();
            let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buffer)).await;
            assert!(read.is_ok(), "a held connection was still open after 10 s");
            slowest = slowest.max(started.elapsed());
        }
        slowest
    });
    assert!(closed_within < timeout * 4, "the last held connection closed after {closed_within:?}");
    let response = server.post("/api/check", &json!({ "source": "yield HeightMap.Flat(0);" }));
    assert_eq!(response.status, 200);
}

/// A mesh that would not fit the memory limit is refused before anything is rendered (an OBJ of a
/// 4096² map once took 5 GB under a limit of 512 MB); thinned to fit, the same export works.
#[test]
fn an_export_whose_mesh_would_not_fit_the_memory_limit_is_refused_first() {
    let root = tempfile::tempdir().unwrap();
    let mut limited = options(None);
    limited.export_dir = root.path().join("exports");
    limited.memory_limit = 64 << 20;
    let server = start(limited);
    let mut request = small_export(&["png16", "obj"]);
    request["width"] = json!(1024);
    request["height"] = json!(1024);
    request["map_width"] = json!(1024);
    request["map_height"] = json!(1024);
    let refused = server.post("/api/export", &request);
    assert_eq!(
        (refused.status, refused.code().as_str()),
        (400, "GGE3001"),
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    assert!(!root.path().join("exports").join("main.png").exists(), "nothing is written");
    request["formats"] = json!(["png16"]);
    assert_eq!(server.post("/api/export", &request).status, 200);
}

/// A tile whose client has gone stops rendering at its next step: abandoned renders of a slow
/// map do not hold the tile slots, so the next client's tile comes at once (it waited for every
/// abandoned render to finish).
#[test]
fn the_renders_of_tiles_whose_clients_went_away_stop() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.ggs");
    // "main" takes minutes (a thousand blurs, each over a larger margin), "light" nothing.
    std::fs::write(
        &path,
        "var h = HeightMap.Noise(); for (var i = 0; i < 1000; i++) { h.Blur(1); } yield h; \
         yield HeightMap.Flat(0.5) as \"light\";",
    )
    .unwrap();
    let server = start(options(Some(path)));
    let address = server.address;
    server.runtime.block_on(async move {
        let mut clients = Vec::new();
        for x in 0..6 {
            let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
            let request = format!(
                "GET /tiles/main/8/{x}/0.png?token={TOKEN} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).await.unwrap();
            clients.push(stream);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        drop(clients);
    });
    let started = Instant::now();
    let light = server.get("/tiles/light/8/0/0.png");
    assert_eq!(light.status, 200);
    assert!(started.elapsed() < Duration::from_secs(8), "the light tile waited {:?}", started.elapsed());
}

/// A newer preview gives up the one still rendering, also in the middle of a long step: a
/// Height-Slang program over the whole preview (one step of about ten seconds here) stops within a
/// few rows, and the newer preview comes at once instead of after it.
#[test]
fn a_newer_preview_stops_a_long_step_of_the_older() {
    let server = start(options(None));
    let terms = 20;
    let program = format!("{}0{}", "(+ ([LayeredNoise layercount(40)] x y) ".repeat(terms), ")".repeat(terms));
    let slow =
        json!({ "source": format!("yield HeightMap.FromHeightSlang(\"{program}\");"), "width": 1024, "height": 1024 });
    let fast = json!({ "source": "yield HeightMap.Flat(0.5);", "width": 64, "height": 64 });
    let address = server.address;
    let headers = [("X-Geogen-Token", TOKEN), ("Content-Type", "application/json")];
    let older = server
        .runtime
        .spawn(async move { send(address, "POST", "/api/render", &headers, slow.to_string().as_bytes()).await.status });
    std::thread::sleep(Duration::from_millis(700));
    let started = Instant::now();
    let newer = server.post("/api/render", &fast);
    let waited = started.elapsed();
    assert_eq!(newer.status, 200);
    assert_eq!(server.runtime.block_on(older).unwrap(), 409, "the older render is given up");
    assert!(waited < Duration::from_secs(4), "the newer preview waited {waited:?} for the older's step");
}

/// Web maps on other sites read the tiles: every tile answer allows any origin, a preflight is
/// answered without the token; the studio's API allows no other origin.
#[test]
fn tiles_are_readable_from_other_origins_and_the_api_is_not() {
    let server = example();
    let origin = ("Origin", "http://maps.example");
    let preflight = server.runtime.block_on(send(
        server.address,
        "OPTIONS",
        "/tiles/main/8/0/0.png",
        &[origin, ("Access-Control-Request-Method", "GET")],
        b"",
    ));
    assert_eq!(preflight.status, 204);
    assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
    assert!(preflight.header("access-control-allow-methods").unwrap().contains("GET"));
    let tile = server.get_with(&format!("/tiles/main/8/0/0.png?token={TOKEN}"), &[origin]);
    assert_eq!(tile.status, 200);
    assert_eq!(tile.header("access-control-allow-origin"), Some("*"));
    let refused = server.get_with("/tiles/main/8/0/0.png", &[origin]);
    assert_eq!(refused.status, 401, "the token still guards the tiles");
    let session = server.get_with("/api/session", &[("X-Geogen-Token", TOKEN), origin]);
    assert_eq!(session.status, 200);
    assert_eq!(session.header("access-control-allow-origin"), None);
}

/// With `--allow-origin`, only the named sites' pages may read the tiles: their origin is echoed
/// (with `Vary: Origin`), any other gets no permission, preflight or not.
#[test]
fn tiles_are_readable_only_from_the_allowed_origins_when_some_are_named() {
    let mut settings = options(None);
    settings.tile_origins = vec!["https://maps.example.org".into()];
    let server = start(settings);
    let path = format!("/tiles/main/8/0/0.png?token={TOKEN}");
    let allowed = server.get_with(&path, &[("Origin", "https://maps.example.org")]);
    assert_eq!(allowed.status, 200);
    assert_eq!(allowed.header("access-control-allow-origin"), Some("https://maps.example.org"));
    assert_eq!(allowed.header("vary"), Some("origin"));
    let other = server.get_with(&path, &[("Origin", "https://elsewhere.example")]);
    assert_eq!(other.header("access-control-allow-origin"), None);
    let preflight = server.runtime.block_on(send(
        server.address,
        "OPTIONS",
        "/tiles/main/8/0/0.png",
        &[("Origin", "https://elsewhere.example"), ("Access-Control-Request-Method", "GET")],
        b"",
    ));
    assert_eq!(preflight.header("access-control-allow-origin"), None);
}

/// A map's TileJSON names its tiles with the request's settings, for web maps that take a source
/// by URL; maps the script does not yield and bad settings are refused.
#[test]
fn a_map_s_tilejson_describes_its_tiles() {
    let server = example();
    let answer = server
        .get_with(&format!("/tiles/main.json?token={TOKEN}&kind=terrarium"), &[("Origin", "http://maps.example")]);
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
    let json = answer.json();
    assert_eq!(json["tilejson"], "3.0.0");
    assert_eq!(json["encoding"], "terrarium");
    assert_eq!(json["maxzoom"], 11);
    let template = json["tiles"][0].as_str().unwrap();
    let expected = format!("http://{}/tiles/main/{{z}}/{{x}}/{{y}}.png?token={TOKEN}&kind=terrarium", server.address);
    assert_eq!(template, expected);
    // The template's tile is the tile.
    let tile = server.get_with(
        &template.replace("{z}", "8").replace("{x}", "0").replace("{y}", "0").replacen(
            &format!("http://{}", server.address),
            "",
            1,
        ),
        &[],
    );
    assert_eq!(tile.status, 200);
    assert_eq!(server.get(&format!("/tiles/nothing.json?token={TOKEN}")).status, 404);
    assert_eq!(server.get(&format!("/tiles/main.json?token={TOKEN}&kind=sepia")).status, 400);
    assert_eq!(server.get_with("/tiles/main.json", &[]).status, 401);
}

/// On the Earth (`geogen serve --geo-origin`), tiles are Web Mercator's: the TileJSON gives the
/// zooms that follow from the pixel size, the bounds and the centre; a tile equals the rectangle of
/// a render at its zoom's scale placed by the origin's pixel; tiles outside the zooms or the world
/// are refused; elevation tiles repeat a finite map's edge beyond it.
#[test]
fn georeferenced_tiles_lie_where_the_origin_puts_them() {
    use geogen_studio::tiles::TileScheme;
    let origin = geogen_io::cog::GeoOrigin::new(7.5, 46.0).unwrap();
    let scheme = TileScheme::mercator(origin, 30.0).unwrap();
    // A map unit of 30 m at 46° N is 43.19 Web Mercator metres: scale 1/256 to 8 is zooms 4 to 14.
    assert_eq!(scheme.zooms(), Some((4, 14)));
    assert_eq!(scheme.native_zoom(), 12, "scale 1.13 at zoom 12, 0.56 at 11");
    assert!(TileScheme::mercator(origin, 1e-9).is_err(), "no zoom shows a nanometre");
    let dunes = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dunes.ggs"));
    let mut settings = options(Some(dunes.clone()));
    settings.tile_defaults.scheme = scheme;
    let server = start(settings);

    let json = server.get(&format!("/tiles/main.json?token={TOKEN}&kind=terrarium")).json();
    assert_eq!((json["minzoom"].clone(), json["maxzoom"].clone()), (json!(4), json!(14)));
    assert_eq!(json["bounds"], json!([-180.0, -85.0511288, 180.0, 85.0511288]), "an infinite map");
    assert_eq!(json["center"], json!([7.5, 46.0, 12]), "an infinite map's origin");

    // The tile holding the origin at zoom 12, against a render placed where the scheme says.
    let z = 12;
    let (cx, cy) = scheme.corner(z);
    let (x, y) = ((-cx).div_euclid(256), (-cy).div_euclid(256));
    let tile = server.get(&format!("/tiles/main/{z}/{x}/{y}.png?token={TOKEN}&kind=terrarium"));
    assert_eq!(tile.status, 200, "{}", String::from_utf8_lossy(&tile.body));
    let (_, _, _, rgb) = decode_png(&tile.body);
    let script =
        Script::compile("dunes.ggs", &std::fs::read_to_string(&dunes).unwrap(), &CompileOptions::default()).unwrap();
    let heights = full_render(&script, "main", (x * 256 + cx, y * 256 + cy), 256, scheme.scale(z));
    for (i, &h) in heights.iter().enumerate() {
        let metres =
            f64::from(rgb[3 * i]) * 256.0 + f64::from(rgb[3 * i + 1]) + f64::from(rgb[3 * i + 2]) / 256.0 - 32768.0;
        assert!((metres - f64::from(h.clamp(-1.0, 1.0)) * 1000.0).abs() <= 1.0 / 512.0, "pixel {i}");
    }
    assert!(heights.iter().any(|&h| h != heights[0]), "a tile with relief");

    for (path, why) in [("3/4/2", "zoom 3 is outside this map's zooms, 4 to 14"), ("12/4096/0", "outside the world")] {
        let refused = server.get(&format!("/tiles/main/{path}.png?token={TOKEN}"));
        assert_eq!(refused.status, 400);
        assert!(String::from_utf8_lossy(&refused.body).contains(why), "{}", String::from_utf8_lossy(&refused.body));
    }

    // A finite map: its corners are its bounds, and beyond its edge elevations repeat the edge.
    let mut settings = options(None);
    settings.tile_defaults.scheme = scheme;
    let island = start(settings);
    let json = island.get(&format!("/tiles/main.json?token={TOKEN}")).json();
    let bounds: Vec<f64> = json["bounds"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    // 1000 map units of 43.19 Mercator metres east of 7.5° E.
    assert_eq!((bounds[0], bounds[3]), (7.5, 46.0));
    assert!((bounds[2] - 7.887_952_7).abs() < 1e-6 && bounds[1] < 46.0, "{bounds:?}");
    let tile = island.get(&format!("/tiles/main/{z}/{x}/{y}.png?token={TOKEN}&kind=terrarium"));
    let (_, _, _, rgb) = decode_png(&tile.body);
    let (ox, oy) = ((-cx - x * 256) as usize, (-cy - y * 256) as usize);
    let pixel = |px: usize, py: usize| &rgb[3 * (py * 256 + px)..][..3];
    assert!(ox > 0 && oy > 0, "the origin lies inside the tile, not on its edge");
    assert_eq!(pixel(0, 0), pixel(ox, oy), "above and left of the map: its corner");
    assert_eq!(pixel(ox + 5, 0), pixel(ox + 5, oy), "above the map: its top row");
}

/// The palettes are the server's: the session lists them (the page paints the preview with them)
/// and a colored tile or step picture takes one by name; an unknown name is refused with the list.
#[test]
fn tiles_are_drawn_in_the_palette_asked_for() {
    // Its own server: the shared one's script changes with the other tests' checks.
    let server = &start(options(None));
    let session = server.get("/api/session").json();
    let names: Vec<&str> =
        session["palettes"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["land and water", "grayscale", "arid", "alpine", "viridis"]);
    assert_eq!(session["palettes"][0]["water"][0], json!([-1.0, [0, 18, 38]]));
    let tile = |query: &str| server.get(&format!("/tiles/main/7/0/0.png?token={TOKEN}{query}"));
    let (default, arid) = (tile(""), tile("&palette=arid"));
    assert_eq!((default.status, arid.status), (200, 200));
    let (_, _, _, default_rgba) = decode_png(&default.body);
    let (_, _, _, arid_rgba) = decode_png(&arid.body);
    assert_ne!(default_rgba, arid_rgba);
    // The tile's pixels are the palette's colours of the render's heights.
    let script = Script::compile("island.ggs", geogen::EXAMPLE_ISLAND, &CompileOptions::default()).unwrap();
    let settings = RunSettings {
        map_width: Some(1000),
        map_height: Some(1000),
        render_width: Some(256),
        render_height: Some(256),
        render_scale: 0.5,
        ..RunSettings::default()
    };
    let heights = script.render(&settings, &RenderConfig::default(), None).unwrap().maps["main"].data().to_vec();
    let arid_palette = geogen_io::palette::Palette::named("arid").unwrap();
    for (i, &h) in heights.iter().enumerate().step_by(97) {
        if arid_rgba[4 * i + 3] == 255 {
            assert_eq!(arid_rgba[4 * i..4 * i + 3], arid_palette.color(h), "pixel {i}");
        }
    }
    let refused = tile("&palette=sepia");
    assert_eq!(refused.status, 400);
    assert!(String::from_utf8_lossy(&refused.body).contains("`viridis`"), "{}", String::from_utf8_lossy(&refused.body));
}
