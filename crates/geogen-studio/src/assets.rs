//! The page and its bundle, embedded in the binary: `assets/` is built from `web/` by
//! `web/build.sh` (esbuild) and committed, so `cargo build` needs neither npm nor a network.
//!
//! The script and the style sheet are sent gzip-compressed to a browser that accepts it (the
//! bundle is about 400 KB, a fifth of that compressed), compressed once per process. The icon is
//! served without the token, as browsers ask for it on their own.

use std::sync::OnceLock;

use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");
const FAVICON_SVG: &str = include_str!("../assets/favicon.svg");

const SVG: &str = "image/svg+xml";

pub(crate) fn routes() -> Router {
    static APP_JS_GZ: OnceLock<Vec<u8>> = OnceLock::new();
    static APP_CSS_GZ: OnceLock<Vec<u8>> = OnceLock::new();
    Router::new()
        .route(
            "/",
            get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX_HTML).into_response() }),
        )
        .route(
            "/assets/app.js",
            get(|headers: HeaderMap| async move {
                compressible(&headers, "text/javascript; charset=utf-8", APP_JS, &APP_JS_GZ)
            }),
        )
        .route(
            "/assets/app.css",
            get(|headers: HeaderMap| async move { compressible(&headers, "text/css; charset=utf-8", APP_CSS, &APP_CSS_GZ) }),
        )
        .route("/favicon.svg", get(|| async { ([(header::CONTENT_TYPE, SVG)], FAVICON_SVG).into_response() }))
        .route("/favicon.ico", get(|| async { ([(header::CONTENT_TYPE, SVG)], FAVICON_SVG).into_response() }))
}

/// `text` as it is, or gzip-compressed (once, then kept in `cache`) when the request accepts gzip.
fn compressible(
    headers: &HeaderMap,
    content_type: &'static str,
    text: &'static str,
    cache: &OnceLock<Vec<u8>>,
) -> Response {
    let revalidate = (header::CACHE_CONTROL, "no-cache");
    if !accepts_gzip(headers) {
        return ([(header::CONTENT_TYPE, content_type), revalidate, (header::VARY, "accept-encoding")], text)
            .into_response();
    }
    let body = cache.get_or_init(|| gzip(text.as_bytes())).clone();
    (
        [
            (header::CONTENT_TYPE, content_type),
            revalidate,
            (header::VARY, "accept-encoding"),
            (header::CONTENT_ENCODING, "gzip"),
        ],
        body,
    )
        .into_response()
}

/// Whether `Accept-Encoding` lists gzip with a nonzero weight.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()) else { return false };
    value.split(',').any(|item| {
        let mut parts = item.split(';').map(str::trim);
        let coding = parts.next().unwrap_or_default();
        let refused = parts.any(|p| p.strip_prefix("q=").is_some_and(|q| q.parse::<f32>().is_ok_and(|q| q == 0.0)));
        coding.eq_ignore_ascii_case("gzip") && !refused
    })
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_taken_only_when_accepted() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT_ENCODING, value.parse().unwrap());
            accepts_gzip(&headers)
        };
        assert!(with("gzip, deflate, br"));
        assert!(with("br;q=1.0, GZIP;q=0.5"));
        assert!(!with("br, deflate"));
        assert!(!with("gzip;q=0"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn the_compressed_bundle_inflates_to_the_bundle() {
        use std::io::Read;
        let packed = gzip(APP_JS.as_bytes());
        assert!(packed.len() * 3 < APP_JS.len(), "{} of {}", packed.len(), APP_JS.len());
        let mut text = String::new();
        flate2::read::GzDecoder::new(&packed[..]).read_to_string(&mut text).unwrap();
        assert_eq!(text, APP_JS);
    }
}
