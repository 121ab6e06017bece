//! Cloud-optimised GeoTIFF (`cog`): elevations in metres as 32-bit floats, in 512 × 512 tiles,
//! with overviews, georeferenced, laid out as GDAL's COG validator asks.
//!
//! The layout: the header, then every image file directory (the full image first, then each
//! overview, each half the size of the one before, until one fits a tile), each followed by its
//! arrays and values; then the tiles, the smallest overview's first and the full image's last, each
//! image's tiles row by row. A reader fetches the directories with its first request and then only
//! the tiles it needs; a viewer zoomed out reads only an overview. Tiles are uncompressed (edge
//! tiles padded with zeros), so every file of the same map and settings has the same bytes.
//!
//! Elevations: a height `h` (NaN read as 0, clamped to [-1, 1] as every writer does) is
//! `h × height_scale` metres. An overview pixel is the mean of the (up to four) pixels it covers, in
//! `f64`, summed in a fixed order.
//!
//! Georeferencing: the pixel size is `pixel_size` metres. Without a geographic origin the
//! coordinates are metres in the map's own plane (x east, y north, the map origin at 0, 0), given
//! as a pixel scale and a tie point and no coordinate reference system. With one (`lon, lat` of the
//! map origin), the file is in Web Mercator (EPSG:3857): the origin placed at that point and the
//! pixel size divided by cos(lat), Mercator's scale there, so a pixel is `pixel_size` metres on the
//! ground around the origin. The math uses `libm`, so the bytes are the same on every machine.

use crate::derived::Surface;
use crate::export::{ExportError, ExportOptions};

/// Tile side, in pixels (GDAL's default for COGs).
const TILE: u64 = 512;

/// The WGS 84 semi-major axis, the sphere of Web Mercator, in metres.
const EARTH_RADIUS: f64 = 6_378_137.0;

/// Where a map's origin (map coordinate 0, 0) lies on the Earth, for files and tiles that web maps
/// and GIS place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoOrigin {
    /// Longitude in degrees, east positive.
    pub lon: f64,
    /// Latitude in degrees, north positive; within Web Mercator's ±85.05°.
    pub lat: f64,
}

impl GeoOrigin {
    /// The largest latitude Web Mercator reaches.
    pub const MAX_LATITUDE: f64 = 85.051_128_779_806_6;

    /// The origin, or why it cannot be one.
    pub fn new(lon: f64, lat: f64) -> Result<GeoOrigin, String> {
        if !(-180.0..=180.0).contains(&lon) {
            return Err(format!("longitude {lon} is outside [-180, 180]"));
        }
        if !(-GeoOrigin::MAX_LATITUDE..=GeoOrigin::MAX_LATITUDE).contains(&lat) {
            return Err(format!("latitude {lat} is outside Web Mercator's [-85.05, 85.05]"));
        }
        Ok(GeoOrigin { lon, lat })
    }

    /// The origin in Web Mercator metres (x east, y north).
    pub fn mercator(self) -> (f64, f64) {
        let (lambda, phi) = (self.lon.to_radians(), self.lat.to_radians());
        let y = libm::log(libm::tan(std::f64::consts::FRAC_PI_4 + phi / 2.0));
        (EARTH_RADIUS * lambda, EARTH_RADIUS * y)
    }

    /// Web Mercator metres per ground metre at the origin's latitude.
    pub fn mercator_scale(self) -> f64 {
        1.0 / libm::cos(self.lat.to_radians())
    }
}

/// How the pixels of an image lie in the world: the world coordinates of its top-left corner, the
/// size of a pixel, and the coordinate reference system (EPSG code) if any.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoTransform {
    pub top_left: (f64, f64),
    pub pixel: f64,
    pub epsg: Option<u16>,
}

impl GeoTransform {
    /// The transform of pixels `pixel_size` metres wide whose top-left pixel is the physical pixel
    /// `corner` (the map origin is pixel 0, 0), placed at `geo` or in the map's own plane.
    pub fn of(corner: (i64, i64), pixel_size: f64, geo: Option<GeoOrigin>) -> GeoTransform {
        let (x, y) = (corner.0 as f64, corner.1 as f64);
        match geo {
            None => GeoTransform { top_left: (x * pixel_size, -y * pixel_size), pixel: pixel_size, epsg: None },
            Some(origin) => {
                let pixel = pixel_size * origin.mercator_scale();
                let (ox, oy) = origin.mercator();
                GeoTransform { top_left: (ox + x * pixel, oy - y * pixel), pixel, epsg: Some(3857) }
            }
        }
    }
}

/// The COG of a surface's core: its heights in metres, georeferenced by `options`.
pub(crate) fn encode(surface: &Surface<'_>, options: &ExportOptions) -> Result<Vec<u8>, ExportError> {
    let core = surface.core;
    let scale = options.scale.height_scale;
    let metres = crate::export::core_heights(surface)
        .iter()
        .map(|&h| (f64::from(crate::quantize::sanitize(h)) * scale) as f32)
        .collect();
    let corner = (surface.origin.0 + i64::from(core.x), surface.origin.1 + i64::from(core.y));
    let transform = GeoTransform::of(corner, options.scale.pixel_size, options.geo);
    encode_metres(core.width, core.height, metres, &transform)
}

/// One image of the file: the full one or an overview.
struct Image {
    width: u64,
    height: u64,
    data: Vec<f32>,
}

impl Image {
    fn tiles_across(&self) -> u64 {
        self.width.div_ceil(TILE)
    }
    fn tiles(&self) -> u64 {
        self.tiles_across() * self.height.div_ceil(TILE)
    }

    /// Half the size (rounded up), each pixel the mean of the pixels it covers.
    fn halved(&self) -> Image {
        let (width, height) = (self.width.div_ceil(2), self.height.div_ceil(2));
        let mut data = Vec::with_capacity((width * height) as usize);
        for y in 0..height {
            for x in 0..width {
                let (mut sum, mut n) = (0.0f64, 0.0f64);
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let (sx, sy) = (2 * x + dx, 2 * y + dy);
                    if sx < self.width && sy < self.height {
                        sum += f64::from(self.data[(sy * self.width + sx) as usize]);
                        n += 1.0;
                    }
                }
                data.push((sum / n) as f32);
            }
        }
        Image { width, height, data }
    }

    /// Tile `t` (row-major), padded with zeros, as little-endian bytes.
    fn tile_bytes(&self, t: u64, out: &mut Vec<u8>) {
        let (tx, ty) = (t % self.tiles_across(), t / self.tiles_across());
        for row in 0..TILE {
            let y = ty * TILE + row;
            for col in 0..TILE {
                let x = tx * TILE + col;
                let v = if x < self.width && y < self.height { self.data[(y * self.width + x) as usize] } else { 0.0 };
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// TIFF field types.
const SHORT: u16 = 3;
const LONG: u16 = 4;
const DOUBLE: u16 = 12;

/// One directory entry: tag, type, and its values as little-endian bytes.
struct Entry {
    tag: u16,
    kind: u16,
    count: u32,
    bytes: Vec<u8>,
}

fn shorts(tag: u16, values: &[u16]) -> Entry {
    Entry { tag, kind: SHORT, count: values.len() as u32, bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect() }
}
fn longs(tag: u16, values: &[u32]) -> Entry {
    Entry { tag, kind: LONG, count: values.len() as u32, bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect() }
}
fn doubles(tag: u16, values: &[f64]) -> Entry {
    Entry {
        tag,
        kind: DOUBLE,
        count: values.len() as u32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// The entries of image `index` (0: the full image), with its tiles at `offsets`.
fn entries(image: &Image, index: usize, offsets: &[u32], transform: &GeoTransform) -> Vec<Entry> {
    let tile_bytes = (TILE * TILE * 4) as u32;
    let mut list = vec![
        longs(254, &[u32::from(index > 0)]), // NewSubfileType: 1 for a reduced-resolution image
        longs(256, &[image.width as u32]),
        longs(257, &[image.height as u32]),
        shorts(258, &[32]), // BitsPerSample
        shorts(259, &[1]),  // Compression: none
        shorts(262, &[1]),  // PhotometricInterpretation: BlackIsZero
        shorts(277, &[1]),  // SamplesPerPixel
        shorts(284, &[1]),  // PlanarConfiguration: contiguous
        shorts(322, &[TILE as u16]),
        shorts(323, &[TILE as u16]),
        longs(324, offsets),
        longs(325, &vec![tile_bytes; offsets.len()]),
        shorts(339, &[3]), // SampleFormat: IEEE float
    ];
    if index == 0 {
        let (x, y) = transform.top_left;
        list.push(doubles(33550, &[transform.pixel, transform.pixel, 0.0])); // ModelPixelScale
        list.push(doubles(33922, &[0.0, 0.0, 0.0, x, y, 0.0])); // ModelTiepoint
        if let Some(epsg) = transform.epsg {
            // GeoKeyDirectory: version 1.1.0, three keys: projected, pixel is area, the CRS.
            list.push(shorts(34735, &[1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, epsg]));
        }
    }
    list
}

/// Bytes of a directory with `n` entries: count, entries, next offset.
fn directory_len(n: usize) -> u64 {
    2 + 12 * n as u64 + 4
}

/// The whole file of a `width × height` image of `metres` (row-major), placed by `transform`.
pub fn encode_metres(
    width: u32,
    height: u32,
    metres: Vec<f32>,
    transform: &GeoTransform,
) -> Result<Vec<u8>, ExportError> {
    let mut images = vec![Image { width: u64::from(width), height: u64::from(height), data: metres }];
    while images.last().is_some_and(|i| i.width > TILE || i.height > TILE) {
        let next = images.last().map(Image::halved);
        images.extend(next);
    }
    let tile_bytes = TILE * TILE * 4;
    // The directories and their values, then the tiles: the size of everything before the tiles
    // depends only on the images, so their offsets are known before any byte is written.
    let dummy: Vec<Vec<Entry>> = images
        .iter()
        .enumerate()
        .map(|(i, image)| entries(image, i, &vec![0; image.tiles() as usize], transform))
        .collect();
    let mut header_len = 8u64;
    for list in &dummy {
        header_len += directory_len(list.len());
        header_len +=
            list.iter().filter(|e| e.bytes.len() > 4).map(|e| (e.bytes.len() as u64).next_multiple_of(2)).sum::<u64>();
    }
    let data_start = header_len.next_multiple_of(16);
    let total_tiles: u64 = images.iter().map(Image::tiles).sum();
    let file_len = data_start + total_tiles * tile_bytes;
    if file_len > u64::from(u32::MAX) {
        return Err(ExportError::Encode(format!(
            "a cloud-optimised GeoTIFF of {width} × {height} pixels would pass 4 GiB: render it in tiles (`geogen tiles`)"
        )));
    }
    // Tile offsets: the smallest overview's tiles first, the full image's last.
    let mut offsets: Vec<Vec<u32>> = vec![Vec::new(); images.len()];
    let mut at = data_start;
    for (i, image) in images.iter().enumerate().rev() {
        for _ in 0..image.tiles() {
            offsets[i].push(at as u32);
            at += tile_bytes;
        }
    }
    let mut out = Vec::with_capacity(file_len as usize);
    out.extend_from_slice(b"II");
    out.extend_from_slice(&42u16.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    for (i, image) in images.iter().enumerate() {
        let list = entries(image, i, &offsets[i], transform);
        let start = out.len() as u64;
        let mut values_at = start + directory_len(list.len());
        let mut values = Vec::new();
        out.extend_from_slice(&(list.len() as u16).to_le_bytes());
        for e in &list {
            out.extend_from_slice(&e.tag.to_le_bytes());
            out.extend_from_slice(&e.kind.to_le_bytes());
            out.extend_from_slice(&e.count.to_le_bytes());
            if e.bytes.len() <= 4 {
                let mut inline = [0u8; 4];
                inline[..e.bytes.len()].copy_from_slice(&e.bytes);
                out.extend_from_slice(&inline);
            } else {
                out.extend_from_slice(&(values_at as u32).to_le_bytes());
                values.extend_from_slice(&e.bytes);
                if e.bytes.len() % 2 == 1 {
                    values.push(0);
                }
                values_at += (e.bytes.len() as u64).next_multiple_of(2);
            }
        }
        let next = if i + 1 < images.len() { values_at as u32 } else { 0 };
        out.extend_from_slice(&next.to_le_bytes());
        out.extend_from_slice(&values);
    }
    out.resize(data_start as usize, 0);
    for image in images.iter().rev() {
        for t in 0..image.tiles() {
            image.tile_bytes(t, &mut out);
        }
    }
    debug_assert_eq!(out.len() as u64, file_len);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> (u32, u32, Vec<f32>, usize) {
        use tiff::decoder::{Decoder, DecodingResult};
        let mut decoder = Decoder::new(std::io::Cursor::new(bytes)).unwrap();
        let (w, h) = decoder.dimensions().unwrap();
        let DecodingResult::F32(data) = decoder.read_image().unwrap() else { panic!("not f32") };
        let mut images = 1;
        while decoder.more_images() {
            decoder.next_image().unwrap();
            images += 1;
        }
        (w, h, data, images)
    }

    #[test]
    fn the_full_image_reads_back_and_overviews_halve_down_to_a_tile() {
        let (w, h) = (1300u32, 700u32);
        let metres: Vec<f32> = (0..w * h).map(|i| ((i % w) as f32 * 0.5) - (i / w) as f32).collect();
        let bytes = encode_metres(w, h, metres.clone(), &GeoTransform::of((0, 0), 2.0, None)).unwrap();
        let (rw, rh, data, images) = read(&bytes);
        assert_eq!((rw, rh), (w, h));
        assert_eq!(data, metres);
        // 1300 → 650 → 325: two overviews.
        assert_eq!(images, 3);
    }

    #[test]
    fn overview_pixels_are_means() {
        let full = Image { width: 3, height: 2, data: vec![1.0, 3.0, 5.0, 3.0, 5.0, 7.0] };
        let half = full.halved();
        assert_eq!((half.width, half.height), (2, 1));
        assert_eq!(half.data, vec![3.0, 6.0]);
    }

    #[test]
    fn mercator_places_the_origin() {
        let at = GeoOrigin::new(0.0, 0.0).unwrap();
        let (x0, y0) = at.mercator();
        assert!(x0 == 0.0 && y0.abs() < 1e-6, "{x0} {y0}");
        let paris = GeoOrigin::new(2.3522, 48.8566).unwrap();
        let (x, y) = paris.mercator();
        assert!((x - 261_845.7).abs() < 1.0 && (y - 6_250_564.3).abs() < 1.0, "{x} {y}");
        // A 10 m ground pixel is 10 / cos(48.86°) ≈ 15.2 Mercator metres there.
        let t = GeoTransform::of((100, -50), 10.0, Some(paris));
        assert!((t.pixel - 15.19).abs() < 0.01, "{}", t.pixel);
        assert_eq!(t.epsg, Some(3857));
        assert!((t.top_left.0 - (x + 100.0 * t.pixel)).abs() < 1e-6);
        assert!((t.top_left.1 - (y + 50.0 * t.pixel)).abs() < 1e-6);
        assert!(GeoOrigin::new(0.0, 86.0).is_err() && GeoOrigin::new(181.0, 0.0).is_err());
    }
}
