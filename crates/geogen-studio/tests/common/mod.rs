//! What the studio's HTTP test files share: a server on a loopback port, and one HTTP/1.1
//! request per connection, written by hand so the tests see the exact status, headers and body.

#![allow(dead_code)] // each test file uses its own part

use std::net::SocketAddr;
use std::path::PathBuf;

use geogen_studio::{Studio, StudioOptions};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const TOKEN: &str = "test-token-0123456789";

pub struct Server {
    pub address: SocketAddr,
    pub runtime: tokio::runtime::Runtime,
}

/// Studio options on a free loopback port with the test token; `tag` keeps the export
/// directories of the test files apart.
pub fn options(script: Option<PathBuf>, instruction_budget: u64, tag: &str) -> StudioOptions {
    StudioOptions {
        script,
        address: "127.0.0.1:0".parse().unwrap(),
        memory_limit: 1 << 30,
        limits: geogen::Limits { instruction_budget, ..geogen::Limits::default() },
        token: Some(TOKEN.to_string()),
        mode: geogen_studio::Mode::Studio,
        tile_defaults: geogen_studio::TileDefaults::default(),
        export_dir: std::env::temp_dir().join(format!("geogen-{tag}-test-export-{}", std::process::id())),
        cache_bytes: geogen_studio::DEFAULT_CACHE_BYTES,
        allowed_hosts: Vec::new(),
        read_timeout: geogen_studio::DEFAULT_READ_TIMEOUT,
        tile_origins: Vec::new(),
    }
}

pub fn start(options: StudioOptions) -> Server {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let studio = runtime.block_on(Studio::bind(options)).unwrap();
    let address = studio.address;
    assert!(studio.url().starts_with(&format!("http://{address}/?token={TOKEN}")));
    runtime.spawn(async move { studio.serve().await });
    Server { address, runtime }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The first diagnostic's code.
    pub fn code(&self) -> String {
        self.json()["diagnostics"][0]["code"].as_str().unwrap_or_default().to_string()
    }
}

/// One HTTP/1.1 request on its own connection.
pub async fn send(address: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    // The address as the Host, unless the test names one.
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {address}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))).collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked")) {
        body = dechunk(&body);
    }
    Response { status, headers, body }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 2 + size + 2..];
    }
}

impl Server {
    /// A request with the token and a JSON content type.
    pub fn request(&self, method: &str, path: &str, body: &[u8]) -> Response {
        let headers = [("X-Geogen-Token", TOKEN), ("Content-Type", "application/json")];
        self.runtime.block_on(send(self.address, method, path, &headers, body))
    }

    pub fn get(&self, path: &str) -> Response {
        self.runtime.block_on(send(self.address, "GET", path, &[("X-Geogen-Token", TOKEN)], b""))
    }

    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        self.runtime.block_on(send(self.address, "GET", path, headers, b""))
    }

    pub fn post(&self, path: &str, body: &Value) -> Response {
        self.post_raw(path, body.to_string().as_bytes())
    }

    pub fn post_raw(&self, path: &str, body: &[u8]) -> Response {
        self.request("POST", path, body)
    }
}
