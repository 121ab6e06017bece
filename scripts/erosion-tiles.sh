#!/bin/sh
# The erosion tile check: `geogen tiles` of an eroded island at 4 tile sizes equals the full render byte for
# byte (R16), every tile rendered alone (--block 1), with the time of each run next to the full render's. Usage: scripts/erosion-tiles.sh [GEOGEN]
set -eu
G=${1:-target/release/geogen}
S=docs/pictures/erosion.ggs
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
start=$(date +%s.%N)
"$G" render "$S" --size 256 --map-size 256x256 -p Mode=1 --format r16 -o "$OUT/full" -q
echo "full 256²: $(echo "$(date +%s.%N) - $start" | bc) s"
for t in 32 50 64 100; do
    start=$(date +%s.%N)
    "$G" tiles "$S" --region 0,0,256,256 --tile "$t" --block 1 --map-size 256x256 -p Mode=1 --format r16 -o "$OUT/t_$t" -q
    echo "tiles of $t: $(echo "$(date +%s.%N) - $start" | bc) s"
done
python3 - "$OUT" <<'PY'
import os, re, sys
out = sys.argv[1]
full = open(os.path.join(out, "full", "main.r16"), "rb").read()
W = 256
for t in (32, 50, 64, 100):
    d = os.path.join(out, f"t_{t}")
    tiles = bad = 0
    for f in os.listdir(d):
        m = re.match(r"tile_(-?\d+)_(-?\d+)_main\.r16$", f)
        if not m:
            continue
        x0, y0 = int(m.group(1)), int(m.group(2))
        tw, th = min(t, W - x0), min(t, W - y0)
        data = open(os.path.join(d, f), "rb").read()
        assert len(data) == tw * th * 2, f
        for r in range(th):
            a = ((y0 + r) * W + x0) * 2
            if data[r * tw * 2:(r + 1) * tw * 2] != full[a:a + tw * 2]:
                bad += 1
        tiles += 1
    print(f"tile {t}: {tiles} tiles, {bad} rows differ from the full render")
    if bad:
        sys.exit(1)
PY
