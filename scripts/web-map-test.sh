#!/usr/bin/env bash
# Browser test of the tile server as web maps use it: `geogen serve` places the island example on
# the Earth (--geo-origin), a plain web server on another port (another origin) serves
# docs/web-map.html with MapLibre GL JS (npm's maplibre-gl, pinned in scripts/web-map), and headless
# Chromium (Debian's chromium, WebGL in software) opens it. The page must frame the map from its
# TileJSON, load colored and Terrarium tiles across origins, drape the 3D terrain (an elevation at
# the centre), and neither the page nor the console may show an error. With --screenshot FILE it also saves a picture of the page.
# Usage: scripts/web-map-test.sh [path/to/geogen] [--screenshot FILE]   (default: a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
geogen="" shot=""
while [ $# -gt 0 ]; do
    case "$1" in
        --screenshot) shot=$2; shift 2 ;;
        *) geogen=$1; shift ;;
    esac
done
if [ -z "$geogen" ]; then
    cargo build -q -p geogen-cli
    geogen=target/debug/geogen
fi
if [ ! -f scripts/web-map/node_modules/maplibre-gl/dist/maplibre-gl.js ]; then
    if ! command -v npm >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
    fi
    npm ci --prefix scripts/web-map --no-audit --no-fund --loglevel=error >/dev/null
fi
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
"$geogen" serve examples/island.ggs --port 0 --geo-origin 7.5,46.0 --pixel-size 30 >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q http "$work/serve.log" && break; sleep 0.1; done
template=$(grep -o 'http://[^ ]*' "$work/serve.log" | head -1)
tiles=${template%%/tiles/*}
token=${template##*token=}
# The page, pointing at the local copy of MapLibre instead of unpkg.
mkdir "$work/site"
cp scripts/web-map/node_modules/maplibre-gl/dist/maplibre-gl.{js,css} "$work/site/"
sed 's#https://unpkg.com/maplibre-gl@[0-9.]*/dist/#./#' docs/web-map.html >"$work/site/web-map.html"
grep -q "https://unpkg.com" "$work/site/web-map.html" && { echo "the page still loads MapLibre from unpkg" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" >"$work/site.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/web-map.html" >/dev/null && break; sleep 0.1; done
page="http://127.0.0.1:$port/web-map.html?tiles=$tiles&token=$token"
echo "page $page"
# In real time, not --virtual-time-budget: MapLibre decodes elevation tiles in web workers, which
# virtual time leaves stalled. WebGL runs in software (SwiftShader).
export CHROMIUM_FLAGS="--use-angle=swiftshader --enable-unsafe-swiftshader --ignore-gpu-blocklist"
node --experimental-websocket scripts/chromium-wait.mjs "$page" web-map-result 90 $shot >"$work/result.json" 2>"$work/chrome.log" || true
[ -n "$shot" ] && [ -s "$shot" ] && echo "screenshot $shot"
python3 - "$work/result.json" "$work/chrome.log" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
if not text.strip():
    print("FAIL the page never finished loading the map: " + open(sys.argv[2]).read()[-1000:]); sys.exit(1)
answer = json.loads(text)
seen = json.loads(answer["result"])
console_errors = [e["text"] for e in answer["console"] if e["level"] == "error"]
checks = [
    ("no error in the page", not seen["errors"], "; ".join(seen["errors"])),
    ("no error in the console (no blocked or failed load)", not console_errors, "; ".join(console_errors)[:500]),
    ("colored raster tiles loaded from the other origin", seen["tiles"].get("colored", 0) > 0 and seen.get("loaded", {}).get("colored"), seen["tiles"]),
    ("Terrarium elevation tiles loaded", seen["tiles"].get("terrain", 0) > 0 and seen.get("loaded", {}).get("terrain"), seen["tiles"]),
    ("3D terrain draped, with an elevation at the centre", bool(seen.get("terrain")) and isinstance(seen.get("elevation"), (int, float)), seen.get("elevation")),
]
for name, ok, detail in checks:
    print(("ok   " if ok else "FAIL ") + name + f"  ({detail})")
sys.exit(0 if all(ok for _, ok, _ in checks) else 1)
PY
