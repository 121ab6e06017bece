//! Command-line syntax (clap). Parsing of values that clap cannot check alone (sizes, points,
//! seeds) lives here too, so every command reads them the same way.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "geogen", version, about = "Programmable terrain generator: GeoGen Script to height maps")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile a script and report every error, without running it.
    Check {
        /// The .ggs script.
        script: PathBuf,
    },
    /// Simulate a script: print its messages (no pixels are rendered).
    Run {
        script: PathBuf,
        #[command(flatten)]
        settings: RunArgs,
    },
    /// Describe a script: name, parameters, map size, the maps it yields.
    Info {
        script: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run test scripts with the test library (AssertEquals); the main map is not required.
    Test {
        /// Test scripts.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print one JSON array with an object per file.
        #[arg(long)]
        json: bool,
    },
}

/// Settings shared by `run`, `render` and `tiles`.
#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// A script parameter, `NAME=VALUE` (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// The seed: a number is used as is, any other text is hashed (as the original does).
    #[arg(long, default_value = "0")]
    pub seed: String,
    /// Render size in pixels, `WxH` (or one number for a square).
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub size: Option<(u32, u32)>,
    /// Map size of a finite map, `WxH` (default: the render size divided by the scale).
    #[arg(long = "map-size", value_name = "WxH", value_parser = parse_size)]
    pub map_size: Option<(u32, u32)>,
}

pub fn parse_param(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.to_string())),
        _ => Err(format!("`{text}` is not NAME=VALUE")),
    }
}

/// `800x600`, `800X600` or `512` (square).
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parse = |s: &str| -> Result<u32, String> {
        let n: u32 = s.trim().parse().map_err(|_| format!("`{s}` is not a whole number of pixels"))?;
        if n == 0 {
            return Err("a size must be at least 1".to_string());
        }
        Ok(n)
    };
    match text.split_once(['x', 'X']) {
        Some((w, h)) => Ok((parse(w)?, parse(h)?)),
        None => {
            let n = parse(text)?;
            Ok((n, n))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_params_parse() {
        assert_eq!(parse_size("800x600"), Ok((800, 600)));
        assert_eq!(parse_size("512"), Ok((512, 512)));
        assert!(parse_size("0x5").is_err());
        assert!(parse_size("axb").is_err());
        assert_eq!(parse_param("A=b=c"), Ok(("A".to_string(), "b=c".to_string())));
        assert!(parse_param("=1").is_err());
        assert!(parse_param("nope").is_err());
    }
}
