//! The output formats, their names and their file-name suffixes.

use std::fmt;
use std::str::FromStr;

/// An output file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// 16-bit grayscale PNG of the quantised heights (the default).
    Png16,
    /// 8-bit grayscale PNG of the quantised heights.
    Png8,
    /// Raw 16-bit little-endian samples, row-major, no header (Unity/Unreal terrain import).
    R16,
    /// Single-channel 32-bit IEEE float TIFF of the raw heights.
    Tiff32,
    /// OpenEXR with one 32-bit float channel `Y` holding the raw heights.
    Exr,
    /// Cloud-optimised GeoTIFF: elevations in metres as 32-bit floats, tiled, with overviews,
    /// georeferenced (see [`crate::cog`]).
    Cog,
    /// 8-bit RGB PNG preview in a water/land palette.
    Colored,
    /// 8-bit grayscale PNG preview, hillshaded.
    Hillshade,
    /// 8-bit RGB PNG tangent-space normal map (see [`crate::derived`]).
    Normal,
    /// 16-bit grayscale PNG of the slope in degrees.
    Slope,
    /// 8-bit grayscale PNG of the curvature (128 flat, brighter convex).
    Curvature,
    /// 8-bit RGBA PNG of up to four texture weights.
    Splat,
    /// Binary glTF 2.0 triangle mesh (see [`crate::mesh`]).
    Glb,
    /// Wavefront OBJ triangle mesh.
    Obj,
}

impl Format {
    /// Every format, in the order they are listed to users.
    pub const ALL: [Format; 14] = [
        Format::Png16,
        Format::Png8,
        Format::R16,
        Format::Tiff32,
        Format::Exr,
        Format::Cog,
        Format::Colored,
        Format::Hillshade,
        Format::Normal,
        Format::Slope,
        Format::Curvature,
        Format::Splat,
        Format::Glb,
        Format::Obj,
    ];

    /// The name used on the command line and in [`FromStr`].
    pub const fn name(self) -> &'static str {
        match self {
            Format::Png16 => "png16",
            Format::Png8 => "png8",
            Format::R16 => "r16",
            Format::Tiff32 => "tiff",
            Format::Exr => "exr",
            Format::Cog => "cog",
            Format::Colored => "colored",
            Format::Hillshade => "hillshade",
            Format::Normal => "normal",
            Format::Slope => "slope",
            Format::Curvature => "curvature",
            Format::Splat => "splat",
            Format::Glb => "glb",
            Format::Obj => "obj",
        }
    }

    /// The file extension, without the dot.
    pub const fn extension(self) -> &'static str {
        match self {
            Format::Png16
            | Format::Png8
            | Format::Colored
            | Format::Hillshade
            | Format::Normal
            | Format::Slope
            | Format::Curvature
            | Format::Splat => "png",
            Format::R16 => "r16",
            Format::Tiff32 | Format::Cog => "tif",
            Format::Exr => "exr",
            Format::Glb => "glb",
            Format::Obj => "obj",
        }
    }

    /// What follows the map name in the output file name. The four PNG flavours differ before the
    /// extension, so writing every format of one map into one directory never collides.
    pub const fn suffix(self) -> &'static str {
        match self {
            Format::Png16 => ".png",
            Format::Png8 => "_8bit.png",
            Format::R16 => ".r16",
            Format::Tiff32 => ".tif",
            Format::Exr => ".exr",
            Format::Cog => "_cog.tif",
            Format::Colored => "_colored.png",
            Format::Hillshade => "_hillshade.png",
            Format::Normal => "_normal.png",
            Format::Slope => "_slope.png",
            Format::Curvature => "_curvature.png",
            Format::Splat => "_splat.png",
            Format::Glb => ".glb",
            Format::Obj => ".obj",
        }
    }

    /// The output file name of the map `map` in this format, e.g. `island_colored.png`.
    pub fn file_name(self, map: &str) -> String {
        format!("{map}{}", self.suffix())
    }

    /// A one-line description for help texts.
    pub const fn description(self) -> &'static str {
        match self {
            Format::Png16 => "16-bit grayscale PNG (default)",
            Format::Png8 => "8-bit grayscale PNG",
            Format::R16 => "raw 16-bit little-endian heights (Unity/Unreal)",
            Format::Tiff32 => "32-bit float TIFF",
            Format::Exr => "OpenEXR, one float channel Y",
            Format::Cog => "cloud-optimised GeoTIFF, float32 metres, georeferenced",
            Format::Colored => "colored preview PNG",
            Format::Hillshade => "hillshaded preview PNG",
            Format::Normal => "normal map PNG (RGB)",
            Format::Slope => "slope map PNG (16-bit degrees)",
            Format::Curvature => "curvature map PNG (8-bit, 128 flat)",
            Format::Splat => "splat map PNG (RGBA weights)",
            Format::Glb => "binary glTF mesh",
            Format::Obj => "OBJ mesh",
        }
    }

    /// Whether a pixel of this format depends on its neighbours (hillshade, derived maps, meshes):
    /// then the renderer must give the map a one-pixel margin for tiles to match a larger render.
    pub const fn needs_margin(self) -> bool {
        matches!(
            self,
            Format::Hillshade
                | Format::Normal
                | Format::Slope
                | Format::Curvature
                | Format::Splat
                | Format::Glb
                | Format::Obj
        )
    }

    /// Whether this format is made with the [`ExportOptions`](crate::ExportOptions) (pixel size,
    /// height scale, geographic origin, ...) and its surface's place: the derived ones and the
    /// GeoTIFF.
    pub const fn reads_export_options(self) -> bool {
        self.needs_margin() || matches!(self, Format::Cog)
    }

    /// Whether this format is a mesh rather than an image.
    pub const fn is_mesh(self) -> bool {
        matches!(self, Format::Glb | Format::Obj)
    }

    /// Whether [`StreamWriter`](crate::StreamWriter) can write this format strip by strip.
    pub const fn is_streamable(self) -> bool {
        matches!(self, Format::Png16 | Format::Png8 | Format::R16 | Format::Colored | Format::Tiff32)
    }

    /// The names of the streamable formats, comma-separated (for messages).
    pub fn streamable_names() -> String {
        Format::ALL.iter().filter(|f| f.is_streamable()).map(|f| f.name()).collect::<Vec<_>>().join(", ")
    }

    /// Parses a comma-separated list such as `"png16,r16"`. Whitespace around names is ignored and a
    /// repeated name is kept once (first position); an empty list or item is an error.
    pub fn parse_list(list: &str) -> Result<Vec<Format>, FormatError> {
        let mut formats = Vec::new();
        for item in list.split(',') {
            let format: Format = item.parse()?;
            if !formats.contains(&format) {
                formats.push(format);
            }
        }
        Ok(formats)
    }

    /// The valid names, comma-separated, for messages.
    pub fn valid_names() -> String {
        Format::ALL.map(Format::name).join(", ")
    }
}

/// See [`Format::parse_list`]; a free function for callers that prefer it.
pub fn parse_list(list: &str) -> Result<Vec<Format>, FormatError> {
    Format::parse_list(list)
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = FormatError;

    /// Accepts the [`name`](Format::name)s, case-insensitively, ignoring surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        if wanted.is_empty() {
            return Err(FormatError::Empty);
        }
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| FormatError::Unknown(wanted.to_owned()))
    }
}

/// A format name that could not be parsed. The message lists the valid names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A name that is not a format.
    #[error("unknown output format `{0}`; valid formats are: {names}", names = Format::valid_names())]
    Unknown(String),
    /// An empty name (an empty list, or two commas in a row).
    #[error("empty output format name; valid formats are: {}", Format::valid_names())]
    Empty,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(f.name().to_uppercase().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
    }

    #[test]
    fn file_names_never_collide() {
        let names: std::collections::HashSet<String> = Format::ALL.iter().map(|f| f.file_name("m")).collect();
        assert_eq!(names.len(), Format::ALL.len());
        assert_eq!(Format::Png16.file_name("island"), "island.png");
        assert_eq!(Format::Png8.file_name("island"), "island_8bit.png");
        assert_eq!(Format::Colored.file_name("island"), "island_colored.png");
        assert_eq!(Format::Hillshade.file_name("island"), "island_hillshade.png");
        assert_eq!(Format::R16.file_name("island"), "island.r16");
        assert_eq!(Format::Tiff32.file_name("island"), "island.tif");
        assert_eq!(Format::Exr.file_name("island"), "island.exr");
        for f in Format::ALL {
            assert!(f.suffix().ends_with(&format!(".{}", f.extension())));
        }
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list("png16,r16"), Ok(vec![Format::Png16, Format::R16]));
        assert_eq!(parse_list(" exr , tiff,exr"), Ok(vec![Format::Exr, Format::Tiff32]));
        assert_eq!(parse_list("png16,,r16"), Err(FormatError::Empty));
        assert_eq!(parse_list(""), Err(FormatError::Empty));
        assert_eq!(parse_list("png16,jpeg"), Err(FormatError::Unknown("jpeg".into())));
    }

    #[test]
    fn errors_list_every_valid_name() {
        for err in [parse_list("jpeg").unwrap_err(), parse_list("").unwrap_err()] {
            let msg = err.to_string();
            for f in Format::ALL {
                assert!(msg.contains(f.name()), "`{msg}` lacks {}", f.name());
            }
        }
        assert!(parse_list("jpeg").unwrap_err().to_string().contains("`jpeg`"));
    }
}
