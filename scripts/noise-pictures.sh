#!/usr/bin/env bash
# Renders the pictures of the modern noise families shown in docs/library.md ("Modern noise"):
# 256x256 8-bit grayscale, a few tens of KB each.
# Usage: scripts/noise-pictures.sh [path/to/geogen]   (default: builds and uses the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."

GEOGEN="${1:-}"
if [[ -z "$GEOGEN" ]]; then
    cargo build --release -q -p geogen-cli
    GEOGEN=target/release/geogen
fi
OUT=docs/pictures
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

picture() { # name, script text
    printf '%s\n' "$2" > "$WORK/$1.ggs"
    "$GEOGEN" render "$WORK/$1.ggs" -o "$WORK/$1" --size 256 --format png8 -q
    cp "$WORK/$1/main_8bit.png" "$OUT/noise_$1.png"
}

picture perlin 'yield HeightMap.PerlinNoise(128, 6);'
picture simplex 'yield HeightMap.SimplexNoise(128, 6, 0.5, 2, "ridged", 0.6);'
# Left half F1, right half F2 - F1.
picture cellular 'var f1 = HeightMap.CellularNoise(40, "F1");
var borders = HeightMap.CellularNoise(40, "F2-F1");
yield f1.Combine(borders, HeightMap.Gradient([127, 0], [128, 0], 1, -1));'
picture warp 'yield HeightMap.Gradient([0, 0], [256, 0], -1, 1).Terrace(6).Warp(30, 80, 3);'
ls -l "$OUT"/noise_*.png
