#!/usr/bin/env bash
# Elevation tile sets as files, read back by a real reader: `geogen finish-tiles --format terrarium`
# (and terrain-rgb) packs the heights of a tiled run into PMTiles archives, which the `pmtiles`
# PyPI package (with pypng and tifffile, in a venv under target/) opens. The archive must say its
# `encoding`; its deepest zoom's tiles, stitched, must decode to the float render's heights ×
# --height-scale within half a step (1/512 m Terrarium, 0.05 m Terrain-RGB), with the tiles meeting
# edge to edge and the region's edge repeated beyond it; every shallower zoom must be there.
# Usage: scripts/terrain-tiles-test.sh [path/to/geogen]   (default: a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
geogen=${1:-}
if [ -z "$geogen" ]; then
    cargo build -q -p geogen-cli
    geogen=target/debug/geogen
fi
target_dir=$(cargo metadata --format-version 1 --no-deps 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
venv="$target_dir/terrain-tiles-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pmtiles, png, tifffile" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q 'pmtiles>=3.4,<4' 'pypng>=0.20220715' 'tifffile>=2023' numpy
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(examples/island.ggs --map-size 1000x700 --seed 3 -q)
"$geogen" tiles "${common[@]}" --region 0,0,1000,700 --tile 300 --format tiff -o "$work/world"
"$geogen" render "${common[@]}" --size 1000x700 --format tiff -o "$work/full"
"$geogen" finish-tiles "$work/world" --pmtiles "$work/terrarium.pmtiles" --format terrarium --height-scale 800 -q
"$geogen" finish-tiles "$work/world" --pmtiles "$work/terrain-rgb.pmtiles" --format terrain-rgb --height-scale 800 -q
"$venv/bin/python" - "$work" <<'PY'
import io, json, sys
import numpy as np, png, tifffile
from pmtiles.reader import Reader, MmapSource, all_tiles
work = sys.argv[1]
failures = []
def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f"  ({detail})" if detail != "" else ""))
    if not ok: failures.append(name)

expected = np.clip(tifffile.imread(f"{work}/full/main.tif").astype(np.float64), -1, 1) * 800.0
height, width = expected.shape
decoders = {
    "terrarium": (lambda r, g, b: r * 256.0 + g + b / 256.0 - 32768.0, 1 / 512),
    "terrain-rgb": (lambda r, g, b: -10000.0 + (r * 65536.0 + g * 256.0 + b) * 0.1, 0.05),
}
for name, (decode, tolerance) in decoders.items():
    with open(f"{work}/{name}.pmtiles", "rb") as f:
        reader = Reader(MmapSource(f))
        header, metadata = reader.header(), reader.metadata()
        tiles = {(z, x, y): data for (z, x, y), data in all_tiles(reader.get_bytes)}
    encoding = {"terrarium": "terrarium", "terrain-rgb": "mapbox"}[name]
    check(f"{name}: the archive's metadata says encoding {encoding}", metadata.get("encoding") == encoding, metadata.get("encoding"))
    deepest = header["max_zoom"]
    across, down = -(-width // 256), -(-height // 256)
    check(f"{name}: zoom 0 to {deepest}, {across} × {down} tiles at the deepest",
          header["min_zoom"] == 0 and all((z, 0, 0) in tiles for z in range(deepest + 1))
          and all((deepest, x, y) in tiles for x in range(across) for y in range(down)))
    mosaic = np.zeros((down * 256, across * 256))
    for x in range(across):
        for y in range(down):
            w, h, rows, info = png.Reader(bytes=tiles[(deepest, x, y)]).read()
            rgb = np.array([list(r) for r in rows], dtype=np.float64).reshape(h, w, info["planes"])
            mosaic[y * 256:(y + 1) * 256, x * 256:(x + 1) * 256] = decode(rgb[..., 0], rgb[..., 1], rgb[..., 2])
    worst = float(np.abs(mosaic[:height, :width] - expected).max())
    check(f"{name}: the stitched deepest zoom is the float render × 800 m within {tolerance:g} m", worst <= tolerance + 1e-9, f"worst {worst:.5f} m")
    beyond_right = mosaic[:height, width:]
    beyond_below = mosaic[height:, :width]
    check(f"{name}: beyond the region the tiles repeat its edge",
          np.array_equal(beyond_right, np.repeat(mosaic[:height, width - 1:width], beyond_right.shape[1], axis=1))
          and np.array_equal(beyond_below, np.repeat(mosaic[height - 1:height, :width], beyond_below.shape[0], axis=0)))
    w, h, rows, info = png.Reader(bytes=tiles[(0, 0, 0)]).read()
    top = np.array([list(r) for r in rows], dtype=np.float64).reshape(h, w, info["planes"])
    overview = decode(top[..., 0], top[..., 1], top[..., 2])
    scale = 2 ** deepest
    coarse = expected[: height // scale * scale, : width // scale * scale].reshape(height // scale, scale, width // scale, scale).mean(axis=(1, 3))
    near = float(np.abs(overview[: height // scale, : width // scale] - coarse).max())
    check(f"{name}: zoom 0 is the mean of the heights below it", near <= 2 * tolerance * deepest + 1e-6, f"worst {near:.5f} m")
sys.exit(1 if failures else 0)
PY
