//! Encoding a [`Surface`] (a rendered field with its margin) in any format: the derived maps and
//! meshes read the margin, the plain formats write the core alone.

use std::io::Cursor;
use std::path::Path;

use crate::derived::{self, NormalConvention, SplatLayer, Surface, TerrainScale, SPLAT_CHANNELS};
use crate::mesh::{self, MeshOptions, Simplify};
use crate::{check_dimensions, encode, AtomicFile, Format, HeightField, IoError};

/// How derived maps, meshes and GeoTIFFs are made (the plain formats ignore it).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ExportOptions {
    pub scale: TerrainScale,
    /// Where the map's origin lies on the Earth, for the GeoTIFF (`cog`); `None`: the map's own
    /// plane, in metres.
    pub geo: Option<crate::cog::GeoOrigin>,
    pub normal: NormalConvention,
    /// The splat layers; empty means [`derived::default_splat_layers`].
    pub splat: Vec<SplatLayer>,
    pub simplify: Simplify,
}

/// Why a surface cannot be encoded (before any byte is written).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    #[error("the window to write lies outside the rendered field")]
    Window,
    #[error("a splat map holds at most {SPLAT_CHANNELS} layers, {0} were given")]
    TooManyLayers(usize),
    #[error("the pixel size and the height scale must be finite and positive")]
    Scale,
    #[error("{0}")]
    Encode(String),
}

fn check(surface: &Surface<'_>, options: &ExportOptions) -> Result<(), ExportError> {
    surface.field.check().map_err(|e| ExportError::Encode(e.to_string()))?;
    if !surface.is_consistent() {
        return Err(ExportError::Window);
    }
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if !positive(options.scale.pixel_size) || !positive(options.scale.height_scale) {
        return Err(ExportError::Scale);
    }
    if options.splat.len() > SPLAT_CHANNELS {
        return Err(ExportError::TooManyLayers(options.splat.len()));
    }
    Ok(())
}

/// The bytes of a derived map or mesh of `surface` (`name` names a mesh's scene). `masks` are the
/// fields the splat layers of kind [`SplatLayer::Mask`] read, of the surface field's size.
pub(crate) fn encode_derived(
    format: Format,
    surface: &Surface<'_>,
    options: &ExportOptions,
    masks: &[HeightField<'_>],
    name: &str,
) -> Result<Vec<u8>, ExportError> {
    check(surface, options)?;
    let (w, h) = (surface.core.width, surface.core.height);
    let png = |color: png::ColorType, depth: png::BitDepth, bytes: &[u8]| {
        crate::encode::encode_png_samples(w, h, color, depth, bytes, Vec::new())
            .map_err(|e| ExportError::Encode(format!("{e:?}")))
    };
    let scale = &options.scale;
    match format {
        Format::Normal => {
            png(png::ColorType::Rgb, png::BitDepth::Eight, &derived::normal_map(surface, scale, options.normal))
        }
        Format::Slope => {
            let samples: Vec<u8> = derived::slope_map(surface, scale).iter().flat_map(|v| v.to_be_bytes()).collect();
            png(png::ColorType::Grayscale, png::BitDepth::Sixteen, &samples)
        }
        Format::Curvature => {
            png(png::ColorType::Grayscale, png::BitDepth::Eight, &derived::curvature_map(surface, scale))
        }
        Format::Hillshade => {
            // Shaded over the whole field, margin included, then cut to the core: a tile's border
            // pixels see their neighbours as the larger render's do.
            let field = surface.field;
            let options = crate::HillshadeOptions::for_terrain(scale.pixel_size, scale.height_scale);
            let gray = crate::hillshade::hillshade(field.width as usize, field.height as usize, field.data, &options);
            let core = surface.core;
            let mut samples = Vec::with_capacity(w as usize * h as usize);
            for row in core.y..core.y + core.height {
                let start = row as usize * field.width as usize + core.x as usize;
                samples.extend_from_slice(&gray[start..start + core.width as usize]);
            }
            crate::encode::encode_gray8(w, h, &samples, Vec::new()).map_err(|e| ExportError::Encode(format!("{e:?}")))
        }
        Format::Splat => {
            let defaults;
            let layers = if options.splat.is_empty() {
                defaults = derived::default_splat_layers();
                &defaults
            } else {
                &options.splat
            };
            png(png::ColorType::Rgba, png::BitDepth::Eight, &derived::splat_map(surface, scale, layers, masks))
        }
        Format::Glb | Format::Obj => {
            let chunks = mesh::build_chunks(surface, &MeshOptions { scale: *scale, simplify: options.simplify });
            if format == Format::Obj {
                return Ok(crate::gltf::obj(&chunks, name).into_bytes());
            }
            crate::gltf::glb(&chunks, name).ok_or_else(|| {
                ExportError::Encode(
                    "the mesh is larger than a .glb file can hold (4 GiB): thin it with --mesh-triangles or \
                     --mesh-error, or render it in tiles"
                        .into(),
                )
            })
        }
        _ => Err(ExportError::Encode(format!("{format} is not a derived format"))),
    }
}

/// The core of a surface as its own contiguous heights (borrowed when the core is the field).
pub(crate) fn core_heights<'a>(surface: &Surface<'a>) -> std::borrow::Cow<'a, [f32]> {
    let (field, core) = (surface.field, surface.core);
    if core.x == 0 && core.y == 0 && core.width == field.width && core.height == field.height {
        return std::borrow::Cow::Borrowed(field.data);
    }
    let mut out = Vec::with_capacity(core.width as usize * core.height as usize);
    for row in core.y..core.y + core.height {
        let start = row as usize * field.width as usize + core.x as usize;
        out.extend_from_slice(&field.data[start..start + core.width as usize]);
    }
    std::borrow::Cow::Owned(out)
}

/// About how many bytes encoding a `width × height` map in `format` holds at its peak beyond the
/// rendered heights: the mesh formats and derived maps are built whole in memory (their
/// triangles, or their pixels, and the encoded file); every other format is streamed from the
/// heights and needs next to nothing. Measured on this project's noise maps (an OBJ of every
/// pixel 293 bytes a pixel, a glb 142; per triangle of a thinned mesh 127 and 63) and rounded
/// up, so a caller can refuse a file that would not fit its memory limit before rendering it.
/// A mesh thinned by error (`MaxError`) is counted as unthinned: how far it thins depends on the
/// terrain.
pub fn encoding_bytes(format: Format, width: u32, height: u32, options: &ExportOptions) -> u64 {
    let pixels = u64::from(width) * u64::from(height);
    let triangles = match options.simplify {
        Simplify::TriangleBudget(budget) => budget.min(2 * pixels),
        Simplify::Full | Simplify::MaxError(_) => 2 * pixels,
    };
    match format {
        Format::Obj => pixels.saturating_mul(8).saturating_add(triangles.saturating_mul(150)),
        Format::Glb => pixels.saturating_mul(8).saturating_add(triangles.saturating_mul(72)),
        Format::Normal | Format::Splat => pixels.saturating_mul(16),
        Format::Slope | Format::Curvature => pixels.saturating_mul(12),
        // Metres (4 bytes a pixel), the overviews (a third more) and the file (as much again,
        // tiles padded to 512).
        Format::Cog => pixels.saturating_mul(12),
        Format::Hillshade => pixels.saturating_mul(2),
        _ => 0,
    }
}

/// Encodes a surface in any format: derived maps and meshes from the field with its margin, every
/// other format from the core alone (exactly what [`encode`](crate::encode) gives for it).
pub fn encode_surface(
    format: Format,
    surface: &Surface<'_>,
    options: &ExportOptions,
    masks: &[HeightField<'_>],
    name: &str,
) -> Result<Vec<u8>, IoError> {
    let failed = |e: ExportError| IoError::Encode { path: None, format, source: Box::new(e) };
    if !surface.is_consistent() {
        return Err(failed(ExportError::Window));
    }
    check_dimensions(format, surface.core.width, surface.core.height)
        .map_err(|source| IoError::Field { path: None, source })?;
    if format.needs_margin() {
        return encode_derived(format, surface, options, masks, name).map_err(failed);
    }
    if format == Format::Cog {
        check(surface, options).map_err(failed)?;
        return crate::cog::encode(surface, options).map_err(failed);
    }
    let heights = core_heights(surface);
    let core = HeightField::new(surface.core.width, surface.core.height, &heights)
        .map_err(|source| IoError::Field { path: None, source })?;
    let out = encode::encode_into(format, &core, Cursor::new(Vec::new()))
        .map_err(|f| crate::failure_to_error(f, format, None))?;
    Ok(out.into_inner())
}

/// [`encode_surface`] into a file, atomically.
pub fn write_surface(
    format: Format,
    surface: &Surface<'_>,
    options: &ExportOptions,
    masks: &[HeightField<'_>],
    name: &str,
    path: &Path,
) -> Result<(), IoError> {
    let bytes = encode_surface(format, surface, options, masks, name).map_err(|e| match e {
        IoError::Encode { format, source, .. } => IoError::Encode { path: Some(path.to_path_buf()), format, source },
        IoError::Field { source, .. } => IoError::Field { path: Some(path.to_path_buf()), source },
        other => other,
    })?;
    let (guard, mut file) = AtomicFile::create(path)?;
    std::io::Write::write_all(&mut file, &bytes).map_err(|source| IoError::Io {
        path: path.to_path_buf(),
        operation: "write",
        source,
    })?;
    guard.commit(file)
}
