//! The labels of a render: `DIR/labels.geojson` and the labels drawn on colored previews, as
//! `geogen render` and the studio's export write them.
//!
//! A label is placed in logical map units; in a render at scale s whose image starts at the
//! physical pixel (ox, oy), it is at pixel (x·s − ox, y·s − oy) of the image. Only labels inside
//! the image are written, so the labels files of tiles are the parts of the whole render's.

use crate::info_json::json_number;
use crate::{Label, RunOutput};

/// A label inside the render, with its pixel position.
pub struct Placed<'a> {
    /// The label's position in image pixels (left to right).
    pub px: f64,
    /// The label's position in image pixels (top to bottom).
    pub py: f64,
    /// The label as the script placed it.
    pub label: &'a Label,
}

/// The labels of a run inside its image, in the order they were placed.
pub fn placed(output: &RunOutput) -> Vec<Placed<'_>> {
    let rect = output.geometry.yield_rect();
    let scale = output.geometry.render_scale;
    output
        .labels
        .iter()
        .filter_map(|label| {
            let px = label.x * scale - rect.x as f64;
            let py = label.y * scale - rect.y as f64;
            let inside = px >= 0.0 && py >= 0.0 && px < rect.width as f64 && py < rect.height as f64;
            inside.then_some(Placed { px, py, label })
        })
        .collect()
}

/// The GeoJSON FeatureCollection of the labels inside a render: one Point feature per label in
/// the image's pixel coordinates, its text as `name`, its kind, and where it is on the map.
pub fn geojson(output: &RunOutput) -> String {
    let geometry = &output.geometry;
    let rect = geometry.yield_rect();
    let features: Vec<serde_json::Value> = placed(output)
        .iter()
        .map(|p| {
            serde_json::json!({
                "type": "Feature",
                "geometry": { "type": "Point", "coordinates": [json_number(p.px), json_number(p.py)] },
                "properties": {
                    "name": p.label.text,
                    "kind": p.label.kind,
                    "map_x": json_number(p.label.x),
                    "map_y": json_number(p.label.y),
                },
            })
        })
        .collect();
    let collection = serde_json::json!({
        "type": "FeatureCollection",
        "render": {
            "origin": [rect.x, rect.y],
            "width": rect.width,
            "height": rect.height,
            "scale": json_number(geometry.render_scale),
        },
        "features": features,
    });
    let mut text = serde_json::to_string_pretty(&collection).unwrap_or_default();
    text.push('\n');
    text
}
