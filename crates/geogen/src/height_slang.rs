//! Height-Slang files (`.hs`) as scripts: a program h(x, y) becomes an infinite map through
//! `HeightMap.FromHeightSlang`, so `.hs` files render, tile, run and describe themselves like
//! GeoGen Scripts (every format, tiling, the tile contract).
//!
//! The program is checked first, on its own text, so its errors point into the `.hs` file; then
//! a wrapper script is compiled:
//!
//! ```text
//! metadata { Name: "terrain.hs", Width: Infinite, Height: Infinite,
//!            Parameters: { UnitSize: { Default: 1000, Min: 0.000001, Max: 1000000000000 } } }
//! yield HeightMap.FromHeightSlang("<program>", Parameters.UnitSize, "<dialect>");
//! ```
//!
//! so the map is `main`, `-p UnitSize=N` sets the map units per Height-Slang unit, and the
//! dialect is part of the script's text (and so of its SHA-256 in a tiles manifest).

use std::sync::Arc;

use geogen_diag::{codes, Diagnostic, SourceFile};

pub use geogen_slang::Dialect;

use crate::{too_large, CompileOptions, Failure, Script};

/// Map units per Height-Slang unit when `UnitSize` is not set: the default 1000-pixel render
/// shows the program's [0, 1) × [0, 1), as mkheightmap's default domain.
pub const HEIGHT_SLANG_UNIT_SIZE: f64 = 1000.0;

/// `text` as a string literal of GeoGen Script (raw new lines are allowed in strings).
fn literal(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The GeoGen Script that renders the Height-Slang program `program` (see the module docs).
pub fn height_slang_wrapper(name: &str, program: &str, dialect: Dialect) -> String {
    format!(
        "// The Height-Slang program {name_literal}, as a map (docs/height-slang.md): x = mapX / UnitSize, y = mapY / UnitSize.\n\
         metadata {{\n    Name: {name_literal},\n    Description: {description},\n    Width: Infinite,\n    Height: Infinite,\n    \
         Parameters: {{\n        UnitSize: {{ Description: \"Map units per Height-Slang unit.\", Default: 1000, Min: 0.000001, Max: 1000000000000 }}\n    }}\n}}\n\
         yield HeightMap.FromHeightSlang({program}, Parameters.UnitSize, {dialect});\n",
        name_literal = literal(name),
        description = literal(&format!("A Height-Slang program ({dialect} dialect).")),
        program = literal(program),
        dialect = literal(dialect.name()),
    )
}

impl Script {
    /// Compiles a Height-Slang file as a script (see the module docs). Larger than
    /// `options.max_script_bytes` is GGE1107, not UTF-8 GGE1106, a bad program its GGE7xxx code
    /// at its position in the file.
    pub fn compile_height_slang(
        name: &str,
        bytes: &[u8],
        options: &CompileOptions,
        dialect: Dialect,
    ) -> Result<Script, Failure> {
        if bytes.len() > options.max_script_bytes {
            return Err(too_large(name, options.max_script_bytes));
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                let at = error.valid_up_to();
                let file = Arc::new(SourceFile::new(name, String::from_utf8_lossy(bytes).into_owned()));
                let offset = u32::try_from(at).unwrap_or(u32::MAX);
                let d = Diagnostic::at(
                    codes::GGE1106,
                    geogen_diag::Span::new(offset, offset.saturating_add(3)),
                    format!("the program is not valid UTF-8: invalid byte 0x{:02X} here", bytes[at]),
                )
                .with_hint("save the program as UTF-8 (or ASCII) text");
                return Err(Failure::new(d, &file));
            }
        };
        let slang_options = geogen_slang::Options { dialect, ..geogen_slang::Options::default() };
        if let Err(d) = geogen_slang::compile(text, &slang_options) {
            return Err(Failure::new(d, &Arc::new(SourceFile::new(name, text))));
        }
        let wrapper = height_slang_wrapper(name, text, dialect);
        // The wrapper adds a few hundred bytes (and doubles backslashes) to an accepted program.
        let wrapper_options = CompileOptions { max_script_bytes: usize::MAX, ..options.clone() };
        Script::compile(name, &wrapper, &wrapper_options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RenderConfig, RunSettings};

    #[test]
    fn a_program_renders_as_an_infinite_main_map() {
        let script =
            Script::compile_height_slang("t.hs", b"(- (* 2 x) 1)", &CompileOptions::default(), Dialect::Documented)
                .unwrap();
        let info = script.info();
        assert_eq!(info.maps, ["main"]);
        assert_eq!(info.metadata.parameters.len(), 1);
        let settings = RunSettings {
            render_width: Some(5),
            render_height: Some(1),
            parameters: vec![("UnitSize".into(), "4".into())],
            ..RunSettings::default()
        };
        let rendered = script.render(&settings, &RenderConfig::default(), None).unwrap();
        let map = &rendered.maps["main"];
        assert_eq!(map.data(), &[-1.0, -0.5, 0.0, 0.5, 1.0]);
    }

    #[test]
    fn program_errors_point_into_the_file() {
        let e = Script::compile_height_slang(
            "t.hs",
            b"(+ 1\n   (sinus x))",
            &CompileOptions::default(),
            Dialect::Documented,
        )
        .unwrap_err();
        assert_eq!(e.first().code, codes::GGE8108);
        assert_eq!(e.first_location().map(|l| l.to_string()), Some("2:8".to_string()));
        assert_eq!(e.source.name(), "t.hs");
        let e = Script::compile_height_slang("t.hs", b"(+ 1 \xff)", &CompileOptions::default(), Dialect::Documented)
            .unwrap_err();
        assert_eq!(e.first().code, codes::GGE1106);
    }

    #[test]
    fn quotes_and_backslashes_survive_the_wrapper() {
        // Trailing text is ignored by Height-Slang, whatever it holds.
        let script = Script::compile_height_slang(
            "a\"b.hs",
            b"0.25 \"quoted\" \\ back",
            &CompileOptions::default(),
            Dialect::Picogen2008,
        );
        let script = script.unwrap();
        assert!(script.source().text().contains("\"picogen-2008\""));
        let rendered = script
            .render(
                &RunSettings { render_width: Some(1), render_height: Some(1), ..RunSettings::default() },
                &RenderConfig::default(),
                None,
            )
            .unwrap();
        assert_eq!(rendered.maps["main"].data(), &[0.25]);
    }
}
