#!/usr/bin/env bash
# Renders the small pictures of our example scripts shown in the README (docs/pictures/): each
# example as a colored and a hillshaded preview of the same terrain as its 1000x1000 render (map
# size 1000, scale 0.2, so 200 pixels across), a few tens of KB each.
# Usage: scripts/example-pictures.sh [path/to/geogen]   (default: builds and uses the release binary)
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

picture() { # name, extra render arguments...
    local name="$1"
    shift
    "$GEOGEN" render "examples/$name.ggs" -o "$WORK/$name" --format colored,hillshade -q "$@"
    cp "$WORK/$name/main_colored.png" "$OUT/${name}_colored.png"
    cp "$WORK/$name/main_hillshade.png" "$OUT/${name}_hillshade.png"
}

for name in confluence ring_of_isles mesa; do
    picture "$name" --map-size 1000 --scale 0.2
done
# Infinite from east to west: a strip twice as wide as high.
picture river_valley --map-size 1000x1000 --size 300x150 --origin=-150,0 --scale 0.15
ls -l "$OUT"
