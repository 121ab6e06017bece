//! Golden render tests: every `tests/golden/<case>.ggs` is rendered and each yielded map, encoded
//! as a 16-bit PNG by `geogen_io`, must equal the checked-in `tests/golden/<case>.png` (map
//! "main") or `tests/golden/<case>_<map>.png` (any other map) byte for byte.
//!
//! # Re-blessing
//!
//! After an intended change of the pixels, rewrite the golden files with
//!
//! ```text
//! GEOGEN_BLESS=1 cargo test -p geogen --test golden_renders
//! ```
//!
//! and *look at the changed PNGs* before committing them: a golden file is only as good as the
//! image in it. A missing golden file fails its case: a new case is blessed on purpose, never by
//! accident.
//!
//! # Case headers
//!
//! Comment lines at the very top of a `.ggs` file set the render (see `tests/golden/README.md`):
//!
//! ```text
//! // size: 32x32          render width x height in physical pixels (default 32x32)
//! // origin: -16,-16      render origin in physical pixels (default 0,0)
//! // scale: 0.5           render scale (default 1)
//! // seed: 3              script seed (default 0)
//! // map-size: 64x64      map width x height of a finite map (default: from the render size)
//! // param: Name=Value    a script parameter (repeatable)
//! ```
//!
//! Any other comment line is a description and ignored.

use std::path::{Path, PathBuf};

use geogen::{CompileOptions, RenderConfig, RunSettings, Script};
use libtest_mimic::{Arguments, Failed, Trial};

/// Fewer cases than this means the directory walk is broken.
const MIN_CASES: usize = 30;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn bless() -> bool {
    std::env::var("GEOGEN_BLESS").is_ok_and(|v| v == "1")
}

#[derive(Debug)]
struct Case {
    name: String,
    source: String,
    settings: RunSettings,
}

fn pair<T: std::str::FromStr>(text: &str, separator: char) -> Result<(T, T), String> {
    let (a, b) = text.split_once(separator).ok_or_else(|| format!("expected `a{separator}b`, got `{text}`"))?;
    let parse = |s: &str| s.trim().parse::<T>().map_err(|_| format!("bad number `{s}` in `{text}`"));
    Ok((parse(a)?, parse(b)?))
}

fn parse_case(name: String, source: String) -> Result<Case, String> {
    let mut settings = RunSettings {
        render_width: Some(32),
        render_height: Some(32),
        inputs: geogen_stdlib::generators::example_inputs(),
        ..RunSettings::default()
    };
    for line in source.lines() {
        let Some(comment) = line.trim().strip_prefix("//") else { break };
        let Some((key, value)) = comment.split_once(':') else { continue };
        let value = value.trim();
        match key.trim() {
            "size" => {
                let (w, h) = pair::<u32>(value, 'x')?;
                settings.render_width = Some(w);
                settings.render_height = Some(h);
            }
            "origin" => settings.render_origin = pair::<i64>(value, ',')?,
            "scale" => settings.render_scale = value.parse().map_err(|_| format!("bad scale `{value}`"))?,
            "seed" => settings.seed = value.parse().map_err(|_| format!("bad seed `{value}`"))?,
            "map-size" => {
                let (w, h) = pair::<u32>(value, 'x')?;
                settings.map_width = Some(w);
                settings.map_height = Some(h);
            }
            "param" => {
                let (k, v) = value.split_once('=').ok_or_else(|| format!("bad param `{value}`"))?;
                settings.parameters.push((k.trim().to_string(), v.trim().to_string()));
            }
            _ => {}
        }
    }
    Ok(Case { name, source, settings })
}

fn golden_file(case: &str, map: &str) -> PathBuf {
    let file = if map == "main" { format!("{case}.png") } else { format!("{case}_{map}.png") };
    golden_dir().join(file)
}

/// 16-bit samples of a grayscale 16-bit PNG, with its size.
fn decode(bytes: &[u8]) -> Result<(u32, u32, Vec<u16>), String> {
    let decoder = png::Decoder::new(bytes);
    let mut reader = decoder.read_info().map_err(|e| format!("cannot decode: {e}"))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| format!("cannot decode: {e}"))?;
    if info.color_type != png::ColorType::Grayscale || info.bit_depth != png::BitDepth::Sixteen {
        return Err(format!("not a 16-bit grayscale PNG ({:?}, {:?})", info.color_type, info.bit_depth));
    }
    let samples = buf[..info.buffer_size()].chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    Ok((info.width, info.height, samples))
}

/// Why two PNGs differ: size, or the first differing pixel and the largest difference.
fn describe_difference(expected: &[u8], actual: &[u8]) -> String {
    let (ew, eh, e) = match decode(expected) {
        Ok(d) => d,
        Err(err) => return format!("the golden file is unreadable: {err}"),
    };
    let (aw, ah, a) = match decode(actual) {
        Ok(d) => d,
        Err(err) => return format!("the rendered PNG is unreadable: {err}"),
    };
    if (ew, eh) != (aw, ah) {
        return format!("size {aw}x{ah}, golden {ew}x{eh}");
    }
    let mut first = None;
    let mut max = 0u16;
    let mut count = 0usize;
    for (i, (x, y)) in e.iter().zip(&a).enumerate() {
        if x != y {
            count += 1;
            max = max.max(x.abs_diff(*y));
            first.get_or_insert((i as u32 % ew, i as u32 / ew, *x, *y));
        }
    }
    match first {
        Some((x, y, want, got)) => format!(
            "{count} of {} pixels differ; first at ({x}, {y}): golden {want}, rendered {got}; max difference {max} \
             (of 65534)",
            e.len()
        ),
        None => "same pixels, different encoding (PNG bytes differ)".to_string(),
    }
}

fn run_case(case: &Case) -> Result<(), Failed> {
    let script = Script::compile(&format!("{}.ggs", case.name), &case.source, &CompileOptions::default())
        .map_err(|f| format!("compile failed:\n{f}"))?;
    let rendered =
        script.render(&case.settings, &RenderConfig::default(), None).map_err(|f| format!("render failed:\n{f}"))?;
    if rendered.maps.is_empty() {
        return Err("the script rendered no map".into());
    }
    let mut problems = Vec::new();
    for (map, heights) in &rendered.maps {
        let rect = heights.rect();
        let (w, h) = (rect.width as u32, rect.height as u32);
        let field = geogen_io::HeightField::new(w, h, heights.data()).map_err(|e| format!("map \"{map}\": {e}"))?;
        let png = geogen_io::encode(geogen_io::Format::Png16, &field).map_err(|e| format!("map \"{map}\": {e}"))?;
        let path = golden_file(&case.name, map);
        let shown = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if bless() {
            std::fs::write(&path, &png).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            continue;
        }
        match std::fs::read(&path) {
            Ok(expected) if expected == png => {}
            Ok(expected) => problems.push(format!(
                "case `{}`, map \"{map}\" ({shown}): {}",
                case.name,
                describe_difference(&expected, &png)
            )),
            Err(e) => problems.push(format!(
                "case `{}`, map \"{map}\": cannot read the golden file {} ({e}); bless it with GEOGEN_BLESS=1",
                case.name,
                path.display()
            )),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n(if the change is intended: GEOGEN_BLESS=1 cargo test -p geogen --test golden_renders, then look at \
             the PNGs)",
            problems.join("\n")
        )
        .into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let dir = golden_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            if path.extension()? != "ggs" {
                return None;
            }
            Some(path.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();

    let mut trials = Vec::new();
    // Run under `GEOGEN_ISA=...` once per instruction set (as CI does), the cases prove that level
    // gives the golden bytes; this trial proves the level asked for is the one that ran.
    trials.push(Trial::test("instruction_set_is_the_one_asked_for", || {
        let active = geogen::instruction_set().map_err(|d| d.message)?;
        eprintln!("golden renders on the {active} kernels");
        match geogen::simd::from_environment() {
            Ok(Some(asked)) if asked != active => Err(format!("GEOGEN_ISA asked for {asked}, {active} ran").into()),
            Ok(_) => Ok(()),
            Err(e) => Err(e.to_string().into()),
        }
    }));
    for name in &names {
        let path = dir.join(format!("{name}.ggs"));
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))
            .and_then(|source| parse_case(name.clone(), source).map_err(|e| format!("{}: {e}", path.display())));
        trials.push(Trial::test(name.clone(), move || match parsed {
            Ok(case) => run_case(&case),
            Err(message) => Err(message.into()),
        }));
    }

    let count = names.len();
    let cases = names.clone();
    trials.push(Trial::test("meta/case_count_and_no_stale_pngs", move || {
        if count < MIN_CASES {
            return Err(format!(
                "only {count} golden cases found under {} (expected at least {MIN_CASES})",
                dir.display()
            )
            .into());
        }
        // Every PNG must belong to a case: `<case>.png` or `<case>_<map>.png`.
        let mut stale = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|e| e == "png") {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let owned = cases
                    .iter()
                    .any(|c| stem == *c || stem.strip_prefix(c.as_str()).is_some_and(|r| r.starts_with('_')));
                if !owned {
                    stale.push(stem);
                }
            }
        }
        if stale.is_empty() {
            Ok(())
        } else {
            Err(format!("golden PNGs without a case (delete them): {}", stale.join(", ")).into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
