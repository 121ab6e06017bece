//! `geogen measure FILE...`: how height maps drain (`geogen_drainage::measure`), as text or JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::report::CliError;

/// A file argument: `FILE` or `FILE:WxH` (the size of a raw R16 file).
fn parse_file(arg: &str) -> Result<(PathBuf, Option<(u32, u32)>), CliError> {
    if let Some((path, size)) = arg.rsplit_once(':') {
        if let Some((w, h)) = size.split_once('x') {
            if let (Ok(w), Ok(h)) = (w.parse::<u32>(), h.parse::<u32>()) {
                return Ok((PathBuf::from(path), Some((w, h))));
            }
        }
    }
    Ok((PathBuf::from(arg), None))
}

pub fn measure(files: &[String], sea: f32, as_json: bool) -> Result<ExitCode, CliError> {
    if !sea.is_finite() {
        return Err(CliError::Usage(format!("--sea {sea} is not a height")));
    }
    let mut reports = Vec::new();
    for arg in files {
        let (path, size) = parse_file(arg)?;
        let heights = geogen_io::read_heights(&path, size, &geogen_io::InputLimits::default())
            .map_err(|e| CliError::Usage(format!("{e} (height maps are 16-bit PNG, TIFF, EXR, or R16 as FILE:WxH)")))?;
        let (w, h) = (heights.width as usize, heights.height as usize);
        let m = geogen_drainage::measure(&heights.data, w, h, sea);
        if as_json {
            reports.push(to_json(&path.display().to_string(), &m));
        } else {
            print!("{}", to_text(&path.display().to_string(), &m));
        }
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&Value::Array(reports)).unwrap_or_default());
    }
    Ok(ExitCode::SUCCESS)
}

fn to_json(name: &str, m: &geogen_drainage::Measures) -> Value {
    json!({
        "file": name,
        "width": m.width,
        "height": m.height,
        "sea_level": m.sea_level,
        "land_pixels": m.land,
        "pits": m.pits,
        "pits_per_mpx": m.pits_per_mpx,
        "land_into_pits": m.land_into_pits,
        "largest_catchment": m.largest_catchment,
        "longest_flow_path": m.longest_flow_path,
        "diagonal_bias": m.diagonal_bias,
        "axis_bias": m.axis_bias,
        "worst_pits": m.worst_pits.iter().map(|(x, y, n)| json!({"x": x, "y": y, "land_pixels": n})).collect::<Vec<_>>(),
    })
}

fn to_text(name: &str, m: &geogen_drainage::Measures) -> String {
    let area = (m.width * m.height).max(1) as f64;
    let side = m.width.max(m.height).max(1) as f64;
    let mut out = format!(
        "{name}: {}x{}, land {:.1} % (above {})\n",
        m.width,
        m.height,
        100.0 * m.land as f64 / area,
        m.sea_level
    );
    out.push_str(&format!("  closed pits on land        {} ({:.1} per Mpx)\n", m.pits, m.pits_per_mpx));
    out.push_str(&format!("  land draining into pits    {:.2} %\n", 100.0 * m.land_into_pits));
    out.push_str(&format!("  largest catchment          {:.1} % of the land\n", 100.0 * m.largest_catchment));
    out.push_str(&format!(
        "  longest flow path on land  {:.0} px ({:.2} of the map's side)\n",
        m.longest_flow_path,
        m.longest_flow_path / side
    ));
    out.push_str(&format!(
        "  direction bias             {:.2}x at 45°, {:.2}x at 0° (1 = none)\n",
        m.diagonal_bias, m.axis_bias
    ));
    if !m.worst_pits.is_empty() {
        let list: Vec<String> = m.worst_pits.iter().take(5).map(|(x, y, n)| format!("({x}, {y}) {n} px")).collect();
        out.push_str(&format!("  pits draining most land    {}\n", list.join(", ")));
    }
    out
}
