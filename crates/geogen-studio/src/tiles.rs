//! Tiles of the current script: `/tiles/{map}/{z}/{x}/{y}.png`, and their TileJSON,
//! `/tiles/{map}.json`.
//!
//! Two schemes say which map pixels a tile shows ([`TileScheme`]):
//!
//! - The map's own (the default): tiles are [`TILE_SIZE`] pixels square; zoom `z` renders at scale
//!   `2^(z - 8)`, so zoom 8 is scale 1 (one pixel per map unit), zoom 7 shows twice as much of the
//!   world, zoom 0 is scale 1/256; zoom runs from 0 to [`MAX_ZOOM`] (scale 8). Tile `(x, y)` covers
//!   the physical pixels from `(256 x, 256 y)` to `(256 x + 255, 256 y + 255)` at that scale; the
//!   map's origin (map coordinate 0, 0) is the top-left corner of tile (0, 0) at every zoom, and x
//!   and y may be negative (infinite maps extend both ways).
//! - Georeferenced (`geogen serve --geo-origin LON,LAT --pixel-size M`): Web Mercator tiles as every
//!   web map asks for them, the map's origin at that longitude and latitude, a map unit `M` metres
//!   on the ground there; a zoom's scale is the map unit over the zoom's pixel size, and the zooms
//!   are those whose scale lies from 1/256 to 8.
//!
//! Pixels outside a finite map are transparent; elevation tiles, which have no transparency, repeat
//! the map's nearest edge pixel there.
//!
//! Query parameters: `kind` = `colored` (default; `palette` = one of
//! [`geogen_io::palette::PALETTES`]' names, the first by default), `hillshade`, `gray` (8-bit
//! heights as `png8`), `terrarium` (Mapzen's Terrarium elevation encoding) or `terrain-rgb` (Mapbox's
//! Terrain-RGB), the elevations `h × height_scale` metres (1000 unless set; see
//! [`geogen_io::dem`]); `seed`; `map` = `WxH`, the map size of a finite script (default: its
//! declared default, or 1000 clamped to its range); `p.NAME=VALUE` for each script parameter;
//! `token`. Every tile is exact: it equals the same rectangle of a larger render (the hillshade is
//! computed with a one-pixel margin so its edges are too).

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use geogen::diag::codes;
use geogen::{Dimension, RenderConfig, RunSettings, Script};
use geogen_io::cog::GeoOrigin;
use geogen_io::dem::DemEncoding;
use geogen_io::palette::Palette;

use crate::api::{check_render_size, ApiError};
use crate::Shared;

/// A tile's side in pixels.
pub const TILE_SIZE: u32 = 256;
/// The zoom at which a tile pixel is one map unit (scale 1).
pub const ZOOM_SCALE_1: u32 = 8;
/// The deepest zoom (scale 2^(11-8) = 8, within the largest render scale, 10).
pub const MAX_ZOOM: u32 = 11;
/// The render scales a zoom may have: from a 256th (zoom 0 of the map's own scheme) to 8.
const SCALE_RANGE: std::ops::RangeInclusive<f64> = (1.0 / 256.0)..=8.0;
/// The deepest zoom a georeferenced scheme considers (web maps stop near 22-24).
const MERCATOR_ZOOM_LIMIT: u32 = 24;
/// Web Mercator's sphere.
const EARTH_RADIUS: f64 = 6_378_137.0;
/// Web Mercator metres from the world's west (or north) edge to its centre.
const HALF_WORLD: f64 = std::f64::consts::PI * EARTH_RADIUS;

/// Where tiles lie: which map pixels tile `z/x/y` shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TileScheme {
    /// The map's own scheme: zoom 8 is scale 1, tile (0, 0)'s top-left corner is the map's origin
    /// at every zoom, and x and y may be negative. A web map shows it in the world's top-left
    /// corner (85° N, 180° W).
    Plain,
    /// Web Mercator tiles as web maps ask for them (zoom `z` has `2^z` tiles a side over the
    /// world): the map's origin lies at `origin`, one map unit is `pixel_size` metres on the ground
    /// there (the map is a plane in Web Mercator, true to scale at its origin), so a zoom's render
    /// scale is the map unit over the zoom's pixel size, in general not a power of two.
    Mercator { origin: GeoOrigin, pixel_size: f64 },
}

impl TileScheme {
    /// A georeferenced scheme, or why it cannot be one (a pixel size no zoom from 0 to 24 can show
    /// at a render scale from 1/256 to 8).
    pub fn mercator(origin: GeoOrigin, pixel_size: f64) -> Result<TileScheme, String> {
        if !(pixel_size.is_finite() && pixel_size > 0.0) {
            return Err(format!("the pixel size {pixel_size} is not a positive number of metres"));
        }
        let scheme = TileScheme::Mercator { origin, pixel_size };
        match scheme.zooms() {
            Some(_) => Ok(scheme),
            None => Err(format!(
                "a map unit of {pixel_size} m shows at no zoom from 0 to {MERCATOR_ZOOM_LIMIT} at a render scale from 1/256 to 8"
            )),
        }
    }

    /// Where the map sits in Web Mercator: the metres (x east, y north) of its origin and of one
    /// map unit. The plain scheme puts the origin at the world's top-left corner and makes zoom 8's
    /// pixel one map unit.
    fn placement(&self) -> ((f64, f64), f64) {
        match *self {
            TileScheme::Plain => ((-HALF_WORLD, HALF_WORLD), mercator_pixel(ZOOM_SCALE_1)),
            TileScheme::Mercator { origin, pixel_size } => (origin.mercator(), pixel_size * origin.mercator_scale()),
        }
    }

    /// The zooms with tiles, shallowest and deepest; `None` when there are none.
    pub fn zooms(&self) -> Option<(u32, u32)> {
        match self {
            TileScheme::Plain => Some((0, MAX_ZOOM)),
            TileScheme::Mercator { .. } => {
                let mut zooms = (0..=MERCATOR_ZOOM_LIMIT).filter(|&z| SCALE_RANGE.contains(&self.scale(z)));
                let first = zooms.next()?;
                Some((first, zooms.next_back().unwrap_or(first)))
            }
        }
    }

    /// The render scale of zoom `z`: physical pixels per map unit.
    pub fn scale(&self, z: u32) -> f64 {
        match self {
            // Exactly a power of two, as it always was.
            TileScheme::Plain => f64::powi(2.0, z as i32 - ZOOM_SCALE_1 as i32),
            TileScheme::Mercator { .. } => self.placement().1 / mercator_pixel(z),
        }
    }

    /// The physical pixel (at zoom `z`'s scale) of tile (0, 0)'s top-left corner. A georeferenced
    /// origin rarely falls on a pixel's corner: it is rounded to the nearest, so at each zoom the
    /// map lies within half a pixel of its place, and the tiles of a zoom stay seamless.
    pub fn corner(&self, z: u32) -> (i64, i64) {
        match self {
            TileScheme::Plain => (0, 0),
            TileScheme::Mercator { .. } => {
                let ((x, y), _) = self.placement();
                let pixel = mercator_pixel(z);
                (-((x + HALF_WORLD) / pixel).round() as i64, -((HALF_WORLD - y) / pixel).round() as i64)
            }
        }
    }

    /// How many tiles a side zoom `z` has, for schemes bounded by the world.
    fn tiles_per_side(&self, z: u32) -> Option<i64> {
        match self {
            TileScheme::Plain => None,
            TileScheme::Mercator { .. } => Some(1i64 << z),
        }
    }

    /// Longitude and latitude in degrees of map coordinate (`x`, `y`).
    pub fn lon_lat(&self, x: f64, y: f64) -> (f64, f64) {
        let ((ox, oy), unit) = self.placement();
        let (mx, my) = (ox + x * unit, oy - y * unit);
        let lon = (mx / EARTH_RADIUS).to_degrees();
        let lat = libm::atan(libm::sinh(my / EARTH_RADIUS)).to_degrees();
        (lon.clamp(-180.0, 180.0), lat.clamp(-GeoOrigin::MAX_LATITUDE, GeoOrigin::MAX_LATITUDE))
    }

    /// The zoom whose pixels are nearest to one map unit (scale 1), within the scheme's zooms.
    pub fn native_zoom(&self) -> u32 {
        let (first, last) = self.zooms().unwrap_or((0, 0));
        (first..=last).min_by(|&a, &b| self.scale(a).log2().abs().total_cmp(&self.scale(b).log2().abs())).unwrap_or(0)
    }

    /// The options of the hillshade at zoom `z`: the true slope of a georeferenced map's terrain
    /// (`height_scale` metres per unit of height), the studio's default terrain otherwise.
    fn hillshade(&self, z: u32, height_scale: f64) -> geogen_io::HillshadeOptions {
        match *self {
            TileScheme::Plain => geogen_io::HillshadeOptions::for_render_scale(self.scale(z)),
            TileScheme::Mercator { pixel_size, .. } => {
                geogen_io::HillshadeOptions::for_terrain(pixel_size / self.scale(z), height_scale)
            }
        }
    }
}

/// Web Mercator metres per pixel of a zoom-`z` tile (at the equator, as the projection measures).
fn mercator_pixel(z: u32) -> f64 {
    2.0 * HALF_WORLD / (f64::from(TILE_SIZE) * f64::powi(2.0, z as i32))
}

pub(crate) fn routes(state: Shared) -> Router {
    Router::new()
        .route("/tiles/{map}/{z}/{x}/{y}", get(tile))
        .route("/tiles/{file}", get(tilejson))
        .layer(middleware::from_fn_with_state(state.clone(), crate::api::require_token))
        // Outside the token check: a browser's preflight carries no token.
        .layer(middleware::from_fn_with_state(state.clone(), allow_other_origins))
        .with_state(state)
}

/// `GET /tiles/{map}.json?token=T[&kind=K]...`: the TileJSON 3.0 of a map's tiles with the
/// request's settings (the tile URL template carries the same query, token included), for web
/// maps that take a source by its TileJSON (MapLibre's `url`).
async fn tilejson(
    AxState(state): AxState<Shared>,
    Path(file): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let not_found = |message: String| ApiError::new(StatusCode::NOT_FOUND, codes::GGE4000, message, None);
    let Some(map) = file.strip_suffix(".json") else {
        return Err(not_found("tiles are /tiles/{map}/{z}/{x}/{y}.png, their TileJSON /tiles/{map}.json".into()));
    };
    // The query is a tile's: checked as one.
    let request = TileRequest::parse(map, "8", "0", "0.png", query.as_deref(), &state.options.tile_defaults)?;
    let script = state.current.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|c| Arc::clone(&c.script));
    let Some(script) = script.filter(|s| s.info().maps.iter().any(|m| m == map)) else {
        return Err(not_found(format!("the script yields no map \"{}\"", map.chars().take(64).collect::<String>())));
    };
    let name = state.document.lock().unwrap_or_else(|e| e.into_inner()).name.clone();
    // The Host the client used (checked against the names the server answers to).
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    let query = query.unwrap_or_default();
    let encoding = request.kind.elevation().map(DemEncoding::web_name);
    let scheme = request.scheme;
    let (minzoom, maxzoom) = scheme.zooms().unwrap_or((0, 0));
    let meta = script.info().metadata;
    let size = match request.map_size {
        Some(size) => Some(size),
        None => default_size(&meta.width).zip(default_size(&meta.height)),
    };
    // A finite map's corners, or the whole world an infinite one fills; the centre shows the map
    // (or its origin) at the zoom of one pixel per map unit.
    let (bounds, middle) = match size {
        Some((w, h)) => {
            let (west, north) = scheme.lon_lat(0.0, 0.0);
            let (east, south) = scheme.lon_lat(f64::from(w), f64::from(h));
            ([west, south, east, north], scheme.lon_lat(f64::from(w) / 2.0, f64::from(h) / 2.0))
        }
        None => ([-180.0, -GeoOrigin::MAX_LATITUDE, 180.0, GeoOrigin::MAX_LATITUDE], scheme.lon_lat(0.0, 0.0)),
    };
    let degrees = |v: f64| (v * 1e7).round() / 1e7;
    let mut json = serde_json::json!({
        "tilejson": "3.0.0",
        "name": format!("{name}: {map}"),
        "scheme": "xyz",
        "tiles": [format!("http://{host}/tiles/{map}/{{z}}/{{x}}/{{y}}.png?{query}")],
        "minzoom": minzoom,
        "maxzoom": maxzoom,
        "tileSize": TILE_SIZE,
        "bounds": bounds.map(degrees),
        "center": [degrees(middle.0), degrees(middle.1), scheme.native_zoom()],
    });
    if let Some(encoding) = encoding {
        json["encoding"] = serde_json::json!(encoding);
    }
    Ok(axum::Json(json).into_response())
}

/// Tiles are for web maps on other sites (MapLibre, Leaflet, OpenLayers pages served from
/// elsewhere): every tile answer allows any origin to read it (the token in the URL is what guards
/// them), or only the configured origins, and a preflight `OPTIONS` is answered without the token.
/// The studio's API sends no such header, so no other page can read its answers.
async fn allow_other_origins(
    AxState(state): AxState<Shared>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let allowed = &state.options.tile_origins;
    let origin = request.headers().get(header::ORIGIN).cloned();
    let preflight = request.method() == axum::http::Method::OPTIONS;
    let mut response = if preflight { StatusCode::NO_CONTENT.into_response() } else { next.run(request).await };
    let headers = response.headers_mut();
    if allowed.is_empty() {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, header::HeaderValue::from_static("*"));
    } else {
        // The answer depends on the asking page: caches must keep one per origin.
        headers.insert(header::VARY, header::HeaderValue::from_static("origin"));
        match origin.filter(|o| o.to_str().is_ok_and(|o| allowed.iter().any(|a| a.trim_end_matches('/') == o))) {
            Some(origin) => {
                headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            }
            // No header: the browser keeps the answer from the page.
            None => return response,
        }
    }
    if preflight {
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, header::HeaderValue::from_static("GET, OPTIONS"));
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            header::HeaderValue::from_static("x-geogen-token, if-none-match"),
        );
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, header::HeaderValue::from_static("86400"));
    }
    headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, header::HeaderValue::from_static("etag, x-geogen-cache"));
    response
}

/// How a tile shows the heights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileKind {
    Colored,
    Hillshade,
    Gray,
    Terrarium,
    /// Mapbox's Terrain-RGB.
    TerrainRgb,
}

impl TileKind {
    /// The encoding of an elevation tile.
    fn elevation(self) -> Option<DemEncoding> {
        match self {
            TileKind::Terrarium => Some(DemEncoding::Terrarium),
            TileKind::TerrainRgb => Some(DemEncoding::TerrainRgb),
            _ => None,
        }
    }

    fn parse(text: &str) -> Option<TileKind> {
        Some(match text {
            "colored" => TileKind::Colored,
            "hillshade" => TileKind::Hillshade,
            "gray" => TileKind::Gray,
            "terrarium" => TileKind::Terrarium,
            "terrain-rgb" => TileKind::TerrainRgb,
            _ => return None,
        })
    }
}

/// A tile request, read from the path and query.
#[derive(Clone, Debug)]
pub struct TileRequest {
    pub map: String,
    pub z: u32,
    pub x: i64,
    pub y: i64,
    /// Where the tiles lie (the server's setting).
    pub scheme: TileScheme,
    /// Metres of the height 1.0 (the server's setting).
    pub height_scale: f64,
    pub kind: TileKind,
    /// The colored kind's palette.
    pub palette: &'static Palette,
    pub seed: u32,
    pub map_size: Option<(u32, u32)>,
    pub parameters: Vec<(String, String)>,
}

fn bad(message: impl Into<String>, hint: &str) -> ApiError {
    ApiError::bad_request(codes::GGE4000, message, Some(hint))
}

fn percent_decode(text: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push((hi * 16 + lo) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl TileRequest {
    pub(crate) fn parse(
        map: &str,
        z: &str,
        x: &str,
        y: &str,
        query: Option<&str>,
        defaults: &crate::TileDefaults,
    ) -> Result<TileRequest, ApiError> {
        let (first, last) = defaults.scheme.zooms().unwrap_or((0, 0));
        let coordinates = match defaults.scheme {
            TileScheme::Plain => format!(
                "tile coordinates are integers: /tiles/{{map}}/{{z}}/{{x}}/{{y}}.png, z from {first} to {last} ({ZOOM_SCALE_1} is scale 1)"
            ),
            TileScheme::Mercator { .. } => format!(
                "tiles are Web Mercator's: /tiles/{{map}}/{{z}}/{{x}}/{{y}}.png, z from {first} to {last}, x and y from 0 to 2^z - 1"
            ),
        };
        let z: u32 = z.parse().map_err(|_| bad(format!("bad zoom `{z}`"), &coordinates))?;
        if !(first..=last).contains(&z) {
            return Err(bad(format!("zoom {z} is outside this map's zooms, {first} to {last}"), &coordinates));
        }
        let x: i64 = x.parse().map_err(|_| bad(format!("bad tile x `{x}`"), &coordinates))?;
        let y = y.strip_suffix(".png").ok_or_else(|| bad("a tile's name ends in .png", &coordinates))?;
        let y: i64 = y.parse().map_err(|_| bad(format!("bad tile y `{y}`"), &coordinates))?;
        if let Some(side) = defaults.scheme.tiles_per_side(z) {
            if !(0..side).contains(&x) || !(0..side).contains(&y) {
                return Err(bad(
                    format!("tile {z}/{x}/{y} is outside the world, whose zoom {z} has {side} tiles a side"),
                    &coordinates,
                ));
            }
        }
        let mut request = TileRequest {
            map: map.to_string(),
            z,
            x,
            y,
            scheme: defaults.scheme,
            height_scale: defaults.height_scale,
            kind: TileKind::Colored,
            palette: &geogen_io::palette::PALETTES[0],
            seed: defaults.seed,
            map_size: defaults.map_size,
            // The request's own values come later, so they win.
            parameters: defaults.parameters.clone(),
        };
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (key, value) = (percent_decode(key), percent_decode(value));
            match key.as_str() {
                "token" | "v" => {}
                "kind" => {
                    request.kind = TileKind::parse(&value).ok_or_else(|| {
                        bad(
                            format!("unknown tile kind `{value}`"),
                            "kind is colored, hillshade, gray, terrarium or terrain-rgb",
                        )
                    })?
                }
                "palette" => {
                    request.palette = Palette::named(&value).ok_or_else(|| {
                        bad(
                            format!("unknown palette `{}`", value.chars().take(40).collect::<String>()),
                            &palette_names(),
                        )
                    })?
                }
                "seed" => request.seed = geogen_random::recognize_seed(&value),
                "map" => {
                    let parsed = value
                        .split_once(['x', 'X'])
                        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
                    request.map_size = Some(parsed.ok_or_else(|| {
                        bad(format!("bad map size `{value}`"), "map=WIDTHxHEIGHT, e.g. map=1000x1000")
                    })?);
                }
                other => match other.strip_prefix("p.") {
                    Some(name) => request.parameters.push((name.to_string(), value)),
                    None => {
                        return Err(bad(
                            format!("unknown query parameter `{other}`"),
                            "known: kind, palette, seed, map, p.NAME, token",
                        ))
                    }
                },
            }
        }
        Ok(request)
    }

    /// The render scale of the tile's zoom.
    pub fn scale(&self) -> f64 {
        self.scheme.scale(self.z)
    }

    /// The physical pixel (at the tile's scale) of its top-left corner, if within 64 bits.
    fn first_pixel(&self) -> Option<(i64, i64)> {
        let (cx, cy) = self.scheme.corner(self.z);
        let at = |t: i64, corner: i64| t.checked_mul(i64::from(TILE_SIZE))?.checked_add(corner);
        Some((at(self.x, cx)?, at(self.y, cy)?))
    }
}

/// The hint naming every palette.
pub(crate) fn palette_names() -> String {
    let names: Vec<String> = geogen_io::palette::PALETTES.iter().map(|p| format!("`{}`", p.name)).collect();
    format!("palette is one of {}", names.join(", "))
}

/// The palettes as the page paints with them: `{name, sea, water, land}` or `{name, sea, ramp}`,
/// anchors as `[height, [r, g, b]]`.
pub(crate) fn palettes_json() -> serde_json::Value {
    let anchors = |list: &[(f32, geogen_io::palette::Rgb)]| -> Vec<serde_json::Value> {
        list.iter().map(|(h, rgb)| serde_json::json!([h, rgb])).collect()
    };
    geogen_io::palette::PALETTES
        .iter()
        .map(|p| match p.anchors {
            geogen_io::palette::Anchors::Sea { water, land } => {
                serde_json::json!({ "name": p.name, "sea": true, "water": anchors(water), "land": anchors(land) })
            }
            geogen_io::palette::Anchors::Ramp(ramp) => {
                serde_json::json!({ "name": p.name, "sea": false, "ramp": anchors(ramp) })
            }
        })
        .collect()
}

/// The map size a finite dimension gets without one asked for.
fn default_size(dimension: &Dimension) -> Option<u32> {
    match dimension {
        Dimension::Infinite => None,
        Dimension::Finite { default, min, max } => {
            Some(default.unwrap_or(geogen::RENDER_SIZE_DEFAULT.clamp(*min, *max)))
        }
    }
}

/// Renders one tile as PNG bytes (RGBA colored, gray + alpha for gray and hillshade, RGB for
/// terrarium and terrain-rgb): the pixels of the same rectangle
/// of any larger render.
pub fn render_tile(
    script: &Script,
    request: &TileRequest,
    limits: &geogen::Limits,
    memory_limit: u64,
    solutions: &geogen::SolveCache,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<u8>, ApiError> {
    let size = TILE_SIZE as i64;
    let margin = if request.kind == TileKind::Hillshade { 1 } else { 0 };
    let outside = || ApiError::bad_request(codes::GGE4003, "the tile lies outside the 32-bit coordinate range", None);
    // The tile's first pixel in physical coordinates; the render starts `margin` before it.
    let (tx, ty) = request.first_pixel().ok_or_else(outside)?;
    let (Some(ox), Some(oy)) = (tx.checked_sub(margin), ty.checked_sub(margin)) else {
        return Err(outside());
    };
    let side = TILE_SIZE + 2 * margin as u32;
    check_render_size(side, side)?;
    let meta = script.info().metadata;
    let (map_width, map_height) = match request.map_size {
        Some((w, h)) => (Some(w), Some(h)),
        None => (default_size(&meta.width), default_size(&meta.height)),
    };
    let settings = RunSettings {
        seed: request.seed,
        parameters: request.parameters.clone(),
        map_width,
        map_height,
        render_origin: (ox, oy),
        render_width: Some(side),
        render_height: Some(side),
        render_scale: request.scale(),
        limits: limits.clone(),
        maps: Some(vec![request.map.clone()]),
        ..RunSettings::default()
    };
    let config = RenderConfig { memory_limit, solutions: Some(solutions.clone()), ..RenderConfig::default() };
    let Some(rendered) = script.render_until(&settings, &config, None, stop).map_err(|f| ApiError::failure(&f))? else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            codes::GGE4000,
            "the tile's render was given up: its client went away",
            None,
        ));
    };
    let Some(map) = rendered.maps.get(&request.map) else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            codes::GGE4000,
            format!("the script yielded no map \"{}\" here", request.map),
            None,
        ));
    };
    let rect = map.rect();
    let (w, h) = (rect.width as usize, rect.height as usize);
    let shade = (request.kind == TileKind::Hillshade && w > 0 && h > 0).then(|| {
        let options = request.scheme.hillshade(request.z, request.height_scale);
        geogen_io::hillshade::hillshade(w, h, map.data(), &options)
    });
    let channels = match request.kind {
        TileKind::Colored => 4,
        TileKind::Terrarium | TileKind::TerrainRgb => 3,
        TileKind::Gray | TileKind::Hillshade => 2,
    };
    let n = TILE_SIZE as usize;
    let mut pixels = vec![0u8; n * n * channels];
    if let Some(encoding) = request.kind.elevation() {
        // Elevations have no transparency: beyond a finite map's edge a tile repeats the nearest
        // edge pixel, so 3D terrain ends level instead of falling to the encoding's lowest metres.
        if w > 0 && h > 0 {
            let nearest = |first: i64, at: i64, len: usize| (first + at).clamp(0, len as i64 - 1) as usize;
            for (py, line) in pixels.chunks_exact_mut(n * channels).enumerate() {
                let row = nearest(ty - rect.y, py as i64, h);
                for (px, out) in line.chunks_exact_mut(channels).enumerate() {
                    let height = map.data()[row * w + nearest(tx - rect.x, px as i64, w)];
                    out.copy_from_slice(&encoding.encode_height(height, request.height_scale));
                }
            }
        }
        return encode_png(&pixels, (TILE_SIZE, TILE_SIZE), channels)
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, codes::GGE5000, e, None));
    }
    for row in 0..h {
        let py = rect.y + row as i64 - ty;
        if !(0..size).contains(&py) {
            continue;
        }
        for col in 0..w {
            let px = rect.x + col as i64 - tx;
            if !(0..size).contains(&px) {
                continue;
            }
            let height = map.data()[row * w + col];
            let at = (py as usize * n + px as usize) * channels;
            let out = &mut pixels[at..at + channels];
            match request.kind {
                TileKind::Colored => {
                    let [r, g, b] = request.palette.color(height);
                    out.copy_from_slice(&[r, g, b, 255]);
                }
                TileKind::Gray => {
                    out.copy_from_slice(&[geogen_io::quantize::to_u8(height), 255]);
                }
                TileKind::Hillshade => {
                    out.copy_from_slice(&[shade.as_ref().map_or(0, |s| s[row * w + col]), 255]);
                }
                TileKind::Terrarium | TileKind::TerrainRgb => unreachable!("elevation tiles are made above"),
            }
        }
    }
    encode_png(&pixels, (TILE_SIZE, TILE_SIZE), channels)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, codes::GGE5000, e, None))
}

/// An 8-bit PNG of `width × height` pixels of `channels` (4 RGBA, 3 RGB, 2 gray + alpha).
pub(crate) fn encode_png(pixels: &[u8], (width, height): (u32, u32), channels: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(match channels {
            4 => png::ColorType::Rgba,
            3 => png::ColorType::Rgb,
            _ => png::ColorType::GrayscaleAlpha,
        });
        encoder.set_compression(png::Compression::Default);
        encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(pixels).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

async fn tile(
    AxState(state): AxState<Shared>,
    Path((map, z, x, y)): Path<(String, String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let request = TileRequest::parse(&map, &z, &x, &y, query.as_deref(), &state.options.tile_defaults)?;
    let (script, hash) = {
        let current = state.current.lock().unwrap_or_else(|e| e.into_inner());
        match current.as_ref() {
            Some(c) => (Arc::clone(&c.script), c.hash.clone()),
            None => {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    codes::GGE4000,
                    "the script does not compile, so there is nothing to tile",
                    Some("fix the script's errors first"),
                ))
            }
        }
    };
    // The tile depends on the script and the request only: its ETag says so.
    let without_token: Vec<&str> = query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.starts_with("token=") && !p.starts_with("v="))
        .collect();
    // The server's own settings too: a server started again with others must not have a browser
    // keep the old tiles.
    let settings = format!("{:?}", state.options.tile_defaults);
    let etag = format!(
        "\"{}\"",
        &crate::sha256_hex(format!("{hash}/{map}/{z}/{x}/{y}?{}#{settings}", without_token.join("&")).as_bytes())[..32]
    );
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    let cached = state.tile_cache.lock().unwrap_or_else(|e| e.into_inner()).get(&etag);
    if let Some(png) = cached {
        return Ok(tile_response(etag, "hit", png));
    }
    let _permit = state
        .tile_slots
        .acquire()
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, codes::GGE5000, e.to_string(), None))?;
    let (limits, memory_limit) = (state.options.limits.clone(), state.options.memory_limit);
    let solutions = state.solutions.clone();
    // A client that goes away (its connection closed) drops this handler, and with it `_gone`,
    // which tells the render to stop at its next step: nobody would read the tile.
    let gone = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _gone = SetOnDrop(Arc::clone(&gone));
    let stop = move || gone.load(std::sync::atomic::Ordering::Relaxed);
    let png =
        tokio::task::spawn_blocking(move || render_tile(&script, &request, &limits, memory_limit, &solutions, &stop))
            .await
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, codes::GGE5000, e.to_string(), None))??;
    let png = axum::body::Bytes::from(png);
    state.tile_cache.lock().unwrap_or_else(|e| e.into_inner()).insert(etag.clone(), png.clone());
    Ok(tile_response(etag, "miss", png))
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<std::sync::atomic::AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A tile with its ETag, and whether the server's cache had it (`X-Geogen-Cache: hit` or `miss`).
fn tile_response(etag: String, cache: &'static str, png: axum::body::Bytes) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "image/png".to_string()),
            (header::ETAG, etag),
            (header::CACHE_CONTROL, "no-cache".to_string()),
            (header::HeaderName::from_static("x-geogen-cache"), cache.to_string()),
        ],
        png,
    )
        .into_response()
}
