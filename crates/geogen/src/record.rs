//! The record of a run that files carry so the world can be made again: the settings, the
//! script's and the inputs' SHA-256, and the command that ran it. The sidecars of engine presets
//! hold it (`geogen render --preset`, the studio's export with a preset).

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::{Failure, ParameterValue, RunSettings, Script};

/// The lowercase hexadecimal SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// A parameter's effective value as manifests and sidecars record it.
pub fn parameter_value_json(value: &ParameterValue) -> Value {
    match value {
        ParameterValue::Boolean(b) => Value::from(*b),
        ParameterValue::Number(n) => Value::from(*n),
        ParameterValue::Enum(name, _) => Value::from(name.to_string()),
    }
}

impl Script {
    /// The settings that made a run's files: version, script name and SHA-256 of `source` (the
    /// script's bytes as read), seed, every parameter's effective value, scale, map size, the
    /// inputs' sizes and SHA-256, and `command`, the command line that runs it again.
    pub fn run_record(&self, source: &[u8], settings: &RunSettings, command: &[String]) -> Result<Value, Failure> {
        let parameters: serde_json::Map<String, Value> =
            self.parameter_values(settings)?.iter().map(|(n, v)| (n.clone(), parameter_value_json(v))).collect();
        let inputs: Vec<Value> = settings
            .inputs
            .iter()
            .map(|(name, raster)| {
                let bytes: Vec<u8> = raster.data().iter().flat_map(|h| h.to_le_bytes()).collect();
                json!({ "name": name, "width": raster.width(), "height": raster.height(), "heights_sha256": sha256_hex(&bytes) })
            })
            .collect();
        let geometry = self.geometry(settings).map_err(|d| self.failure(d))?;
        Ok(json!({
            "geogen_version": env!("CARGO_PKG_VERSION"),
            "script": self.source().name(),
            "script_sha256": sha256_hex(source),
            "seed": settings.seed,
            "parameters": parameters,
            "scale": settings.render_scale,
            "map_size": [geometry.map_width, geometry.map_height],
            "inputs": inputs,
            "command": command,
        }))
    }
}
