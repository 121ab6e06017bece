#!/usr/bin/env bash
# Latency to screen in geogen studio, in headless Chromium and real time (not run by CI: it takes
# a minute and its figures depend on the machine; needs chromium and node). Opens the studio on the island example and
# runs the page's #latency walk: N edits of line 19 in the editor, each timed from the edit to the
# frame after the 512² preview was decoded and painted; prints the median and 95th percentile.
# Usage: scripts/studio-latency.sh [N] [path/to/geogen]   (default: 30 edits, a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
command -v node >/dev/null || { echo "needs node (20 or later) to drive chromium" >&2; exit 2; }
n=${1:-30}
geogen=${2:-}
if [ -z "$geogen" ]; then
    cargo build -q --release -p geogen-cli
    geogen=target/release/geogen
fi
. scripts/studio-server.sh
# Real time (not --virtual-time-budget, which would fast-forward the timers being measured):
# Chromium is driven over its DevTools protocol by a small Node script that waits for the page's
# figures.
node --experimental-websocket scripts/studio-latency.mjs "$url#latency=$n" $((60 + n * 5)) >"$work/result.json"
python3 - "$work/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if "error" in r:
    print("failed:", r["error"]); sys.exit(1)
print(f"edit -> {r['preview']}² preview painted, {r['edits']} edits: median {r['median_ms']:.0f} ms, "
      f"p95 {r['p95_ms']:.0f} ms (min {r['min_ms']:.0f}, max {r['max_ms']:.0f}; includes the 200 ms debounce; "
      f"last full-size render request {r['server_render_ms']:.0f} ms)")
PY
