#!/usr/bin/env bash
# Renders the pictures of the README and docs/erosion.md: every example at 1024 x 1024 as a shaded
# relief (heights coloured, lit from the north-west, Drainage's rivers and lakes as water), the
# erosion comparison, Drainage's parameters side by side (JPEG, a few hundred KB at most each)
# and the stencil erosions' small pictures (PNG).
# Needs Python 3 with Pillow and NumPy (`pip install pillow numpy`) for scripts/relief.py.
# Usage: scripts/landform-pictures.sh [path/to/geogen]   (default: builds and uses the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."

GEOGEN="${1:-}"
if [[ -z "$GEOGEN" ]]; then
    cargo build --release -q -p geogen-cli
    GEOGEN=target/release/geogen
fi
python3 -c "import PIL, numpy" 2>/dev/null || { echo "needs Pillow and NumPy: pip install pillow numpy" >&2; exit 2; }
OUT=docs/pictures
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

render() { # name, script, render arguments...
    local name="$1" script="$2"
    shift 2
    "$GEOGEN" render "$script" -o "$WORK/$name" --format tiff -q "$@"
}
relief() { # name, output file, relief.py arguments...
    local name="$1" out="$2"
    shift 2
    local water=()
    for mask in rivers lakes; do
        [[ -f "$WORK/$name/$mask.tif" ]] && water+=(--water "$WORK/$name/$mask.tif")
    done
    python3 scripts/relief.py "$WORK/$name/main.tif" "$out" "${water[@]}" "$@"
}

# The examples, each at 1024 x 1024 (finite maps: a 1024-unit map; infinite ones: a 1024 square).
render drainage examples/drainage.ggs --size 1024
relief drainage "$OUT/drainage.jpg" --quality 82
for name in island confluence ring_of_isles; do
    render "$name" "examples/$name.ggs" --size 1024
    relief "$name" "$OUT/$name.jpg" --quality 82
done
render mesa examples/mesa.ggs --size 1024
relief mesa "$OUT/mesa.jpg" --palette desert --exaggeration 300 --quality 82
render dunes examples/dunes.ggs --size 1024 --origin=-512,-512
relief dunes "$OUT/dunes.jpg" --palette desert --exaggeration 300 --quality 82
render river_valley examples/river_valley.ggs --size 1024x512 --origin=-512,0 --map-size 1024x512
relief river_valley "$OUT/river_valley.jpg" --quality 82

# The erosion comparison: one input, as generated, after HydraulicErosion(100), after Drainage;
# the middle 512 x 512 of a 1024 x 1024 render each.
for mode in 0 1 2; do
    render "compare$mode" docs/pictures/drainage_compare.ggs --map-size 1024 --size 512 --origin 256,256 -p "Mode=$mode"
done
relief compare0 "$OUT/erosion_input.jpg" --quality 80
relief compare1 "$OUT/erosion_hydraulic_100.jpg" --quality 80
relief compare2 "$OUT/erosion_drainage.jpg" --quality 80

# Drainage's parameters: the flagship's middle 512 x 512 at other settings.
for setting in "Maturity=0.25" "Maturity=4" "Resolution=128" "Range=0.2"; do
    name="param_${setting/=/_}"
    render "$name" examples/drainage.ggs --map-size 1024 --size 512 --origin 256,256 -p "$setting"
    relief "$name" "$OUT/drainage_${setting/=/_}.jpg" --quality 80
done
render param_default examples/drainage.ggs --map-size 1024 --size 512 --origin 256,256
relief param_default "$OUT/drainage_default.jpg" --quality 80
# The stencil erosions of docs/erosion.md at 256 x 256: hillshades, left half as generated, right
# half eroded, and the masks as grey levels.
stencil() { # output name, script, mode, format
    "$GEOGEN" render "$2" --size 256 -p "Mode=$3" --format "$4" -o "$WORK/$1" -q
    local file=main.png
    [[ "$4" == hillshade ]] && file=main_hillshade.png
    [[ "$4" == png8 ]] && file=main_8bit.png
    cp "$WORK/$1/$file" "$OUT/$1.png"
}
stencil erosion_thermal docs/pictures/erosion.ggs 0 hillshade
stencil erosion_hydraulic docs/pictures/erosion.ggs 1 hillshade
stencil erosion_flow docs/pictures/erosion.ggs 2 png8
stencil erosion_gullies docs/pictures/erosion.ggs 3 hillshade
stencil erosion_gullies_cone docs/pictures/erosion.ggs 4 hillshade
stencil erosion_fans docs/pictures/erosion_fans.ggs 0 hillshade
stencil erosion_fans_deposition docs/pictures/erosion_fans.ggs 2 png8
ls -l "$OUT"/*.jpg "$OUT"/erosion_*.png
