//! The studio's export writes what `geogen render` writes: `geogen studio` is started, its Export
//! endpoint asked for an engine preset with its sidecar, thinned meshes and splat layers reading a
//! mask the script yields, and the files compared byte for byte with those of `geogen render`
//! run with the command line the studio's sidecar records.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A `geogen studio` process, ended when dropped.
struct Studio {
    child: Child,
    address: String,
    token: String,
}

impl Drop for Studio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_studio(dir: &Path, script: &str, export_dir: &str) -> Studio {
    let mut child = Command::new(env!("CARGO_BIN_EXE_geogen"))
        .args(["studio", script, "--port", "0", "--export-dir", export_dir])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    // "geogen studio is running; open http://127.0.0.1:PORT/?token=TOKEN"
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("{line}"));
    let (address, query) = rest.split_once('/').unwrap();
    let token = query.split_once("token=").unwrap().1.to_string();
    Studio { child, address: address.to_string(), token }
}

impl Studio {
    fn post(&self, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
        let body = body.to_string();
        let mut stream = TcpStream::connect(&self.address).unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Geogen-Token: {}\r\nContent-Length: {}\r\n\r\n{body}",
            self.address,
            self.token,
            body.len()
        )
        .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8(raw).unwrap();
        let status: u16 = text[9..12].parse().unwrap();
        let (_, content) = text.split_once("\r\n\r\n").unwrap();
        (status, serde_json::from_str(content).unwrap_or_else(|e| panic!("{e}: {content}")))
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// The sidecar's text before and after its `"command": [...]` (which names the program run).
fn around_command(text: &str) -> (&str, &str) {
    let at = text.find("\"command\": [").unwrap_or_else(|| panic!("{text}"));
    let end = at + text[at..].find(']').unwrap();
    (&text[..at], &text[end..])
}

#[test]
fn the_studio_writes_the_labels_geogen_render_writes() {
    let root = tempfile::tempdir().unwrap();
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/named-island.ggs")).unwrap();
    std::fs::write(root.path().join("named.ggs"), &script).unwrap();
    let studio = start_studio(root.path(), "named.ggs", "studio-out");
    let request = serde_json::json!({
        "source": script, "seed": 3, "width": 200, "height": 160, "map_width": 200, "map_height": 160,
        "origin": [20, 10], "formats": ["png16"],
    });
    let (status, answer) = studio.post("/api/export", &request);
    assert_eq!(status, 200, "{answer}");
    let names: Vec<&str> = answer["files"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["main.png", "labels.geojson"]);
    assert!(answer["files"][1]["labels"].as_u64().unwrap() > 0, "{answer}");
    let args = [
        "render",
        "named.ggs",
        "--seed",
        "3",
        "--size",
        "200x160",
        "--map-size",
        "200x160",
        "--origin=20,10",
        "--format",
        "png16",
        "-o",
        "cli-out",
        "-q",
    ];
    let run = Command::new(env!("CARGO_BIN_EXE_geogen")).args(args).current_dir(root.path()).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    for name in names {
        let studio_file = std::fs::read(root.path().join("studio-out").join(name)).unwrap();
        assert!(studio_file == std::fs::read(root.path().join("cli-out").join(name)).unwrap(), "{name} differs");
    }
    // Again: the labels file is among those the export would replace, so it asks first.
    let (status, answer) = studio.post("/api/export", &request);
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["existing"], serde_json::json!(["main.png", "labels.geojson"]));
}

#[test]
fn the_studio_exports_what_geogen_render_writes_with_presets_thinned_meshes_and_splat_masks() {
    let root = tempfile::tempdir().unwrap();
    let dunes = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dunes.ggs")).unwrap();
    std::fs::write(root.path().join("dunes.ggs"), dunes).unwrap();
    let studio = start_studio(root.path(), "dunes.ggs", "studio-out");
    let cases = [
        // Unreal: 16-bit PNG at a landscape size, DirectX normals, a thinned mesh, a mask layer.
        serde_json::json!({
            "width": 127, "height": 127, "origin": [-40, 9], "preset": "unreal",
            "formats": ["png16", "normal", "obj", "splat"], "maps": ["main"],
            "mesh_triangles": 900, "splat": "-1..-0.2; @dry; 0..1/0..20", "pixel_size": 2, "height_scale": 250,
        }),
        // Unity: its RAW height format and a mesh thinned by error, at scale 0.5.
        serde_json::json!({
            "width": 65, "height": 65, "preset": "unity", "formats": ["r16", "glb"], "mesh_error": 0.5,
            "scale": 0.5,
        }),
        // Godot with no format: its EXR height format, for both maps.
        serde_json::json!({ "width": 70, "height": 50, "preset": "godot", "formats": [] }),
    ];
    for (i, case) in cases.iter().enumerate() {
        let mut request = case.clone();
        request["source"] = serde_json::Value::from(std::fs::read_to_string(root.path().join("dunes.ggs")).unwrap());
        request["seed"] = serde_json::json!(11);
        request["parameters"] = serde_json::json!({ "Wavelength": 64 });
        request["replace"] = serde_json::json!(true);
        let (status, answer) = studio.post("/api/export", &request);
        assert_eq!(status, 200, "case {i}: {answer}");
        let studio_dir = root.path().join("studio-out");
        let written: Vec<String> =
            answer["files"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap().to_string()).collect();
        let sidecar_name = written.iter().find(|n| n.ends_with(".json")).unwrap_or_else(|| panic!("{answer}"));
        let sidecar: serde_json::Value =
            serde_json::from_slice(&std::fs::read(studio_dir.join(sidecar_name)).unwrap()).unwrap();
        // The command the sidecar records, run as it says (into another directory).
        let command: Vec<String> = sidecar["generator"]["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        assert_eq!(command[..3], ["geogen", "render", "dunes.ggs"], "{command:?}");
        let out = format!("cli-out-{i}");
        let mut args = command[1..].to_vec();
        let o = args.iter().position(|a| a == "-o").unwrap();
        args[o + 1] = out.clone();
        args.push("-q".into());
        let run = Command::new(env!("CARGO_BIN_EXE_geogen")).args(&args).current_dir(root.path()).output().unwrap();
        assert!(run.status.success(), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
        let cli_dir = root.path().join(&out);
        let mut studio_files = written.clone();
        studio_files.sort();
        assert_eq!(files(&cli_dir), studio_files, "case {i}: the same files");
        for name in &written {
            let (a, b) = (std::fs::read(studio_dir.join(name)).unwrap(), std::fs::read(cli_dir.join(name)).unwrap());
            if name.ends_with(".json") {
                let (a, b) = (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
                assert_eq!(around_command(&a), around_command(&b), "case {i}: {name} apart from the program's path");
            } else {
                assert!(a == b, "case {i}: {name} differs ({} and {} bytes)", a.len(), b.len());
            }
        }
        std::fs::remove_dir_all(&studio_dir).unwrap();
    }
}
