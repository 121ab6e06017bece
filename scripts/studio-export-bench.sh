#!/usr/bin/env bash
# The studio's export next to `geogen render`, measured in pairs (not run by CI): the island at
# SIDE² (default 2048) in png16, through POST /api/export and through the command line, N times
# each (default 7) alternating; prints the medians in ms and ns per pixel, their ratio, and whether
# the two files are the same bytes (they must be: one writer, one code path).
# Usage: scripts/studio-export-bench.sh [SIDE] [N] [path/to/geogen]   (default: a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
side=${1:-2048}
n=${2:-7}
geogen=${3:-}
if [ -z "$geogen" ]; then
    cargo build -q --release -p geogen-cli
    geogen=target/release/geogen
fi
geogen=$(realpath "$geogen")
work=$(mktemp -d)
cp examples/island.ggs "$work/island.ggs"
cd "$work"
"$geogen" studio island.ggs --port 0 >log 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q http log && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' log)
python3 - "$url" "$geogen" "$side" "$n" <<'PY'
import json, statistics, subprocess, sys, time, urllib.parse, urllib.request
url, geogen, side, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
parts = urllib.parse.urlparse(url)
token = urllib.parse.parse_qs(parts.query)["token"][0]
source = open("island.ggs").read()
size = f"{side}x{side}"
studio, cli = [], []
for _ in range(n):
    body = json.dumps({"source": source, "width": side, "height": side, "map_width": side, "map_height": side,
                       "formats": ["png16"], "replace": True}).encode()
    request = urllib.request.Request(f"http://{parts.netloc}/api/export", data=body,
                                     headers={"X-Geogen-Token": token, "Content-Type": "application/json"})
    started = time.perf_counter()
    json.load(urllib.request.urlopen(request))
    studio.append(time.perf_counter() - started)
    started = time.perf_counter()
    subprocess.run([geogen, "render", "island.ggs", "-o", "cli-out", "--size", size, "--map-size", size,
                    "--format", "png16", "-q"], check=True)
    cli.append(time.perf_counter() - started)
same = open("island-export/main.png", "rb").read() == open("cli-out/main.png", "rb").read()
px = side * side
s, c = statistics.median(studio), statistics.median(cli)
print(f"island {side}² png16, {n} pairs: studio export {s * 1e3:.0f} ms ({s * 1e9 / px:.1f} ns/px), "
      f"geogen render {c * 1e3:.0f} ms ({c * 1e9 / px:.1f} ns/px, process start included), ratio {s / c:.2f}; "
      f"same bytes: {same}")
sys.exit(0 if same else 1)
PY
