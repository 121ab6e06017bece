#!/usr/bin/env bash
# Renders the pictures of the engine pages (docs/pictures/engine_*.png): the derived maps of the
# confluence example at 200 x 200 pixels (map size 1000, scale 0.2, so 5 m pixels).
# Usage: scripts/engine-pictures.sh [path/to/geogen]   (default: builds and uses the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."

GEOGEN="${1:-}"
if [[ -z "$GEOGEN" ]]; then
    cargo build --release -q -p geogen-cli
    GEOGEN=target/release/geogen
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
common=(examples/confluence.ggs --map-size 1000 --scale 0.2 --pixel-size 5 --height-scale 60 -q)
"$GEOGEN" render "${common[@]}" -o "$WORK/gl" --format normal,slope,curvature
"$GEOGEN" render "${common[@]}" -o "$WORK/dx" --format normal --normal directx
cp "$WORK/gl/main_normal.png" docs/pictures/engine_normal.png
cp "$WORK/gl/main_slope.png" docs/pictures/engine_slope.png
cp "$WORK/gl/main_curvature.png" docs/pictures/engine_curvature.png
cp "$WORK/dx/main_normal.png" docs/pictures/engine_normal_directx.png
# The glb drawn as an importer reads it (read back with the gltf crate, rasterised in software).
"$GEOGEN" render "${common[@]}" -o "$WORK/mesh" --format glb
cargo run -q -p geogen-io --example mesh_picture -- "$WORK/mesh/main.glb" docs/pictures/engine_mesh.png 480 300
# The same mesh thinned out to within 4 m of every sample (crack-free: no background shows through).
"$GEOGEN" render "${common[@]}" -o "$WORK/thin" --format glb --mesh-error 4
cargo run -q -p geogen-io --example mesh_picture -- "$WORK/thin/main.glb" docs/pictures/engine_mesh_simplified.png 480 300
