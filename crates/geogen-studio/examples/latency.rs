//! The studio's latency, measured over HTTP on a loopback port:
//!
//! - an edit of the built-in island example to its 512² preview: each request carries a new text
//!   (a changed comment, so the script is compiled again, as after a keystroke), renders at
//!   512 × 512 and answers its heights (binary, 16-bit); median and 95th percentile of 30;
//! - tiles of a zoomed-out view of the infinite dunes example (zoom 6, scale 1/4: 4 × 4 tiles of
//!   256²), tiles per second cold (rendered), from the server's cache, and revalidated (304 by ETag).
//!
//! `cargo run --release -p geogen-studio --example latency`

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use geogen_studio::{Studio, StudioOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKEN: &str = "latency";

async fn request(address: SocketAddr, method: &str, path: &str, extra: &str, body: &[u8]) -> (u16, String, usize) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nX-Geogen-Token: {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw[..raw.len().min(2000)]).into_owned();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let etag = text
        .lines()
        .find_map(|l| l.strip_prefix("etag: ").or_else(|| l.strip_prefix("ETag: ")))
        .unwrap_or("")
        .to_string();
    (status, etag, raw.len())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let options = StudioOptions {
        script: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dunes.ggs").into()),
        address: "127.0.0.1:0".parse().unwrap(),
        memory_limit: 1 << 30,
        limits: geogen::Limits::default(),
        token: Some(TOKEN.to_string()),
        mode: geogen_studio::Mode::Studio,
        tile_defaults: geogen_studio::TileDefaults::default(),
        export_dir: std::env::temp_dir().join("geogen-latency-export"),
        cache_bytes: geogen_studio::DEFAULT_CACHE_BYTES,
        allowed_hosts: Vec::new(),
        read_timeout: geogen_studio::DEFAULT_READ_TIMEOUT,
        tile_origins: Vec::new(),
    };
    let studio = runtime.block_on(Studio::bind(options)).unwrap();
    let address = studio.address;
    runtime.spawn(async move { studio.serve().await });
    runtime.block_on(async move {
        // Tiles first, while the current script is the dunes file.
        let tiles: Vec<(i32, i32)> = (-2..2).flat_map(|y| (-2..2).map(move |x| (x, y))).collect();
        let mut etags = Vec::new();
        let started = Instant::now();
        for (x, y) in &tiles {
            let (status, etag, _) = request(address, "GET", &format!("/tiles/main/6/{x}/{y}.png?kind=hillshade"), "", b"").await;
            assert_eq!(status, 200);
            etags.push(etag);
        }
        let cold = started.elapsed();
        let started = Instant::now();
        for ((x, y), etag) in tiles.iter().zip(&etags) {
            let header = format!("If-None-Match: {etag}\r\n");
            let (status, _, _) = request(address, "GET", &format!("/tiles/main/6/{x}/{y}.png?kind=hillshade"), &header, b"").await;
            assert_eq!(status, 304);
        }
        let revalidated = started.elapsed();
        // The same tiles without their ETags: the server's cache answers with the whole PNG.
        let started = Instant::now();
        for (x, y) in &tiles {
            let (status, _, _) = request(address, "GET", &format!("/tiles/main/6/{x}/{y}.png?kind=hillshade"), "", b"").await;
            assert_eq!(status, 200);
        }
        let cached = started.elapsed();
        println!(
            "tiles (dunes, zoom 6 = scale 1/4, 16 hillshade tiles of 256², one at a time): cold {:.1} tiles/s ({:.1} ms each), from the server's cache {:.0} tiles/s, revalidated {:.0} tiles/s",
            16.0 / cold.as_secs_f64(),
            cold.as_secs_f64() * 1e3 / 16.0,
            16.0 / cached.as_secs_f64(),
            16.0 / revalidated.as_secs_f64()
        );

        let mut times = Vec::new();
        for i in 0..31 {
            let source = format!("// edit {i}\n{}", geogen::EXAMPLE_ISLAND);
            let body = serde_json::json!({
                "source": source, "width": 512, "height": 512, "scale": 0.512, "map_width": 1000, "map_height": 1000,
            });
            let started = Instant::now();
            let (status, _, bytes) = request(address, "POST", "/api/render", "", body.to_string().as_bytes()).await;
            let elapsed = started.elapsed();
            assert_eq!(status, 200);
            if i == 0 {
                println!("one answer: {bytes} bytes (the 16-bit heights and a JSON header)");
                continue; // warm-up
            }
            times.push(elapsed);
        }
        times.sort();
        println!(
            "edit -> 512² preview of the island example (compile, simulate, render, encode, answer), {} runs: median {:.1} ms, p95 {:.1} ms",
            times.len(),
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&times, 0.95).as_secs_f64() * 1e3
        );
    });
}
