//! Height-Slang on the command line: how a script file's language is recognised (`.hs` files, or
//! `--lang`), `geogen slang eval`, and `geogen mkheightmap`, the compatibility command with picogen's
//! flags (parsed here by hand: `-Lhs`, `-Et`, `-Ebmp` and `-h` for the height are not clap's style).

use std::path::Path;
use std::process::ExitCode;

use geogen::diag::{Diagnostic, RenderOptions, SourceFile};
use geogen::{CompileOptions, Dialect, Failure, Script};
use geogen_slang::mkheightmap::{self, Settings};
use geogen_slang::{Limits, Options};

use crate::args::{Lang, ScriptArgs, SlangCommand};
use crate::report::{self, CliError};

/// The language of a script file: `--lang` if given, else Height-Slang for a `.hs` file, else
/// GeoGen Script; with the dialect for Height-Slang (`--compat`, which only Height-Slang has).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Language {
    GeoGen,
    HeightSlang(Dialect),
}

pub fn language(path: Option<&Path>, args: &ScriptArgs) -> Result<Language, CliError> {
    let by_extension = path.and_then(|p| p.extension()).is_some_and(|e| e.eq_ignore_ascii_case("hs"));
    let slang = match args.lang {
        Some(Lang::HeightSlang) => true,
        Some(Lang::Ggs) => false,
        None => by_extension,
    };
    let dialect = parse_dialect(args.compat.as_deref())?;
    match (slang, &args.compat) {
        (true, _) => Ok(Language::HeightSlang(dialect)),
        (false, Some(_)) => {
            Err(CliError::Usage("--compat applies to Height-Slang programs only (.hs files, or --lang hs)".to_string()))
        }
        (false, None) => Ok(Language::GeoGen),
    }
}

/// The language of a file by its extension alone (for `check` and `info`).
pub fn language_of(path: &Path) -> Language {
    language(Some(path), &ScriptArgs::default()).unwrap_or(Language::GeoGen)
}

fn parse_dialect(name: Option<&str>) -> Result<Dialect, CliError> {
    match name {
        None => Ok(Dialect::Documented),
        Some(name) => Dialect::from_name(name).ok_or_else(|| {
            CliError::Usage(format!("unknown dialect `{name}`: the dialects are {}", Dialect::NAMES.join(", ")))
        }),
    }
}

/// Compiles a script file's bytes in its language.
pub fn compile_in(language: Language, name: &str, bytes: &[u8], options: &CompileOptions) -> Result<Script, Failure> {
    match language {
        Language::GeoGen => Script::compile_bytes(name, bytes, options),
        Language::HeightSlang(dialect) => Script::compile_height_slang(name, bytes, options, dialect),
    }
}

pub fn slang(command: &SlangCommand) -> Result<ExitCode, CliError> {
    match command {
        SlangCommand::Eval { program, at, compat, max_call_depth, max_point_ops } => {
            let dialect = parse_dialect(compat.as_deref())?;
            let defaults = Limits::default();
            let limits = Limits {
                max_self_depth: max_call_depth.unwrap_or(defaults.max_self_depth),
                max_point_ops: max_point_ops.unwrap_or(defaults.max_point_ops),
                ..defaults
            };
            let options = Options { dialect, limits };
            let file = SourceFile::new("<program>", program.as_str());
            let compiled = geogen_slang::compile(program, &options).map_err(|d| print_diagnostic(&d, &file))?;
            let value = compiled.eval_point(&[at.0, at.1]).map_err(|e| print_diagnostic(&e.to_diagnostic(), &file))?;
            report::outln(&geogen_slang::format::shortest(value));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_diagnostic(d: &Diagnostic, file: &SourceFile) -> CliError {
    eprint!("{}", geogen::diag::render_diagnostic(d, file, RenderOptions { color: report::color_stderr() }));
    CliError::Reported(report::exit_status(d.code))
}

/// What `geogen mkheightmap` was asked to do.
#[derive(Clone, Debug, PartialEq)]
pub struct MkHeightmap {
    pub program: Option<String>,
    pub settings: Settings,
    pub normalize: bool,
    pub info: bool,
    pub text: bool,
    pub bmp: bool,
    pub name: String,
    pub force: bool,
    pub dialect: Dialect,
    pub max_self_depth: Option<usize>,
    pub max_point_ops: Option<u64>,
    pub help: bool,
}

pub const MKHEIGHTMAP_HELP: &str = "\
geogen mkheightmap: picogen's mkheightmap, with its flags (docs/height-slang.md)

usage: geogen mkheightmap -Lhs PROGRAM [-w W] [-h H] [-a N] [-W S] [-n] [-i] [-Et] [-Ebmp] [-En NAME] [-f]

  -Lhs, --Lheight-slang PROGRAM   the Height-Slang program h(x, y)
  -w, --width W                   image width in pixels (default 512)
  -h, --height H                  image height in pixels (default 512; -h is the height, as in picogen)
  -a, --anti-aliasing N           N x N sub-samples per pixel, averaged (default 1)
  -W, --domain-width S            x runs over [0, S) across the width, y likewise with the same step (default 1)
  -n, --normalize                 map the values onto [0, 1]: (h - min) / (max - min)
  -i, --info                      print info:min..max:<min>..<max> (after -n)
  -Et, --Etext                    write NAME.txt: width, height, then each value (clamped to [0, 1]) as %f
  -Ebmp, --Ebitmap                write NAME.bmp: 24-bit grey, trunc(255 h)
  -En, --ExportName NAME          output base name (default mkheightmap-out)
  -f, --force-overwrite           replace existing files
  --compat picogen-2008           the original's semantics where they differ from the documented ones
  --max-call-depth N              nested self calls allowed at one point (default 1000; GGE8301)
  --max-point-ops N               operations one point may cost (default 100000; GGE8209, GGE8302)
  --help, -?, ?                   this help

Pixel (px, py) samples x = S*px/W, y = S*py/W with py counted from the bottom row (y is up).
";

fn option_value<'a>(args: &'a [String], i: &mut usize, flag: &str) -> Result<&'a str, String> {
    *i += 1;
    args.get(*i).map(String::as_str).ok_or_else(|| format!("{flag} needs a value"))
}

/// `-w`, `-h`, `-a`: digits only, as the original accepts.
fn digits(flag: &str, value: &str) -> Result<u32, String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{flag} takes a whole number (digits only), not `{value}`"));
    }
    value.parse().map_err(|_| format!("{flag} {value} is too large"))
}

/// `-W`: an optional `-`, digits and at most one dot, as the original accepts.
fn real(flag: &str, value: &str) -> Result<f64, String> {
    let body = value.strip_prefix('-').unwrap_or(value);
    let dots = body.bytes().filter(|&b| b == b'.').count();
    if body.is_empty() || dots > 1 || !body.bytes().all(|b| b.is_ascii_digit() || b == b'.') || body == "." {
        return Err(format!("{flag} takes a number such as 2 or -0.5, not `{value}`"));
    }
    value.parse().map_err(|_| format!("{flag} takes a number, not `{value}`"))
}

/// Reads mkheightmap's command line (everything after `mkheightmap`).
pub fn parse_mkheightmap(args: &[String]) -> Result<MkHeightmap, String> {
    let mut m = MkHeightmap {
        program: None,
        settings: Settings::default(),
        normalize: false,
        info: false,
        text: false,
        bmp: false,
        name: "mkheightmap-out".to_string(),
        force: false,
        dialect: Dialect::Documented,
        max_self_depth: None,
        max_point_ops: None,
        help: false,
    };
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        match flag {
            "-Lhs" | "--Lheight-slang" => {
                let program = option_value(args, &mut i, flag)?;
                if m.program.is_some() {
                    return Err("only one formula or program allowed".to_string());
                }
                m.program = Some(program.to_string());
            }
            "-w" | "--width" => m.settings.width = digits(flag, option_value(args, &mut i, flag)?)?,
            "-h" | "--height" => m.settings.height = digits(flag, option_value(args, &mut i, flag)?)?,
            "-a" | "--anti-aliasing" => m.settings.antialias = digits(flag, option_value(args, &mut i, flag)?)?,
            "-W" | "--domain-width" => m.settings.domain = real(flag, option_value(args, &mut i, flag)?)?,
            "-n" | "--normalize" => m.normalize = true,
            "-i" | "--info" => m.info = true,
            "-Et" | "--Etext" => m.text = true,
            "-Ebmp" | "--Ebitmap" => m.bmp = true,
            "-En" | "--ExportName" => m.name = option_value(args, &mut i, flag)?.to_string(),
            "-f" | "--force-overwrite" => m.force = true,
            "--compat" => {
                let name = option_value(args, &mut i, flag)?;
                m.dialect = Dialect::from_name(name).ok_or_else(|| {
                    format!("unknown dialect `{name}`: the dialects are {}", Dialect::NAMES.join(", "))
                })?;
            }
            "--max-call-depth" => {
                m.max_self_depth = Some(digits(flag, option_value(args, &mut i, flag)?)? as usize);
            }
            "--max-point-ops" => {
                let n = digits(flag, option_value(args, &mut i, flag)?)?;
                m.max_point_ops = Some(u64::from(n.max(1)));
            }
            "--help" | "-?" | "?" => m.help = true,
            "-p" | "--preview" | "-l" | "--preview-water-level" | "-s" | "--shader" => {
                return Err(format!(
                    "{flag}: the SDL preview of the original is not part of geogen; export with -Et or -Ebmp"
                ));
            }
            other => {
                let hint = if other.starts_with("-L") { " (the only language is height-slang: -Lhs)" } else { "" };
                return Err(format!("unknown option `{other}`{hint}; see geogen mkheightmap --help"));
            }
        }
        i += 1;
    }
    Ok(m)
}

pub fn mkheightmap_command(args: &[String]) -> Result<ExitCode, CliError> {
    let m = parse_mkheightmap(args).map_err(CliError::Usage)?;
    if m.help {
        report::out(MKHEIGHTMAP_HELP);
        return Ok(ExitCode::SUCCESS);
    }
    let program = match m.program.as_deref() {
        Some(p) if !p.is_empty() => p,
        _ => return Err(CliError::Usage("you gave me no code: pass a program with -Lhs PROGRAM".to_string())),
    };
    mkheightmap::check(&m.settings).map_err(CliError::Usage)?;
    let mut limits = Limits::default();
    if let Some(depth) = m.max_self_depth {
        limits.max_self_depth = depth;
    }
    if let Some(ops) = m.max_point_ops {
        limits.max_point_ops = ops;
    }
    let file = SourceFile::new("-Lhs", program);
    let compiled = geogen_slang::compile(program, &Options { dialect: m.dialect, limits })
        .map_err(|d| print_diagnostic(&d, &file))?;
    let mut image = match mkheightmap::render(&compiled, &m.settings) {
        Ok(image) => image,
        Err(e) => {
            let mut d = e.error.to_diagnostic();
            d.message = format!("{} (at x = {}, y = {})", d.message, e.x, e.y);
            return Err(print_diagnostic(&d, &file));
        }
    };
    if m.normalize {
        mkheightmap::normalize(&mut image);
    }
    if m.info {
        report::outln(&mkheightmap::info_line(&image));
    }
    let mut refused = false;
    if m.text {
        refused |= !export(&format!("{}.txt", m.name), "text", mkheightmap::text_export(&image).as_bytes(), m.force);
    }
    if m.bmp {
        refused |= !export(&format!("{}.bmp", m.name), "bitmap", &mkheightmap::bmp_export(&image), m.force);
    }
    // The original reported a refused export and still exited 0; here it is a usage error.
    if refused {
        return Err(CliError::Reported(report::EXIT_USAGE));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes one export (atomically), as the original reports it on stderr; `false` if refused.
fn export(path: &str, what: &str, bytes: &[u8], force: bool) -> bool {
    let target = Path::new(path);
    if target.exists() && !force {
        report::usage_error(&format!("the file '{path}' exists; add -f to overwrite it"));
        return false;
    }
    eprint!("Exporting as {what} to file '{path}' ...");
    match geogen_io::write_bytes(target, bytes) {
        Ok(()) => {
            eprintln!("okay.");
            true
        }
        Err(e) => {
            eprintln!("failed.");
            report::usage_error(&format!("cannot write '{path}': {e}"));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_original_flags_parse() {
        let m = parse_mkheightmap(&args(&[
            "-Lhs", "(* x y)", "-w", "4", "-h", "2", "-a", "3", "-W", "-2.5", "-n", "-i", "-Et", "-Ebmp", "-En", "out",
            "-f",
        ]))
        .unwrap();
        assert_eq!(m.program.as_deref(), Some("(* x y)"));
        assert_eq!(m.settings, Settings { width: 4, height: 2, antialias: 3, domain: -2.5 });
        assert!(m.normalize && m.info && m.text && m.bmp && m.force);
        assert_eq!(m.name, "out");
        let long = parse_mkheightmap(&args(&["--Lheight-slang", "x", "--height", "7", "--Etext"])).unwrap();
        assert_eq!((long.settings.height, long.text), (7, true));
        assert!(parse_mkheightmap(&args(&["--help"])).unwrap().help);
        assert!(parse_mkheightmap(&args(&["?"])).unwrap().help);
    }

    #[test]
    fn bad_flags_are_refused() {
        assert_eq!(
            parse_mkheightmap(&args(&["-Lhs", "x", "-Lhs", "y"])).unwrap_err(),
            "only one formula or program allowed"
        );
        assert!(parse_mkheightmap(&args(&["-w", "-4"])).is_err());
        assert!(parse_mkheightmap(&args(&["-w", "4.5"])).is_err());
        assert!(parse_mkheightmap(&args(&["-W", "1.2.3"])).is_err());
        assert!(parse_mkheightmap(&args(&["-W", "1e3"])).is_err());
        assert!(parse_mkheightmap(&args(&["-w"])).is_err());
        assert!(parse_mkheightmap(&args(&["-x"])).is_err());
        assert!(parse_mkheightmap(&args(&["-p"])).is_err());
        assert!(parse_mkheightmap(&args(&["--compat", "picogen-1999"])).is_err());
    }
}
