#!/usr/bin/env bash
# The studio's latency benchmark, in headless Chromium and real time (not run by CI: it takes a
# minute and its figures depend on the machine; needs chromium and node). Opens the studio on the
# island example and runs the page's #latency walk (web/src/latency.js), then prints:
# - edit -> 512² preview painted: N edits of line 19 in the editor, each timed from the edit to
#   the frame after the 512² preview was painted, the debounce included (median, 95th percentile);
# - the bytes of one 512² preview answer;
# - a 4 s drag of a slider at a 256² preview: previews painted per second.
# Each figure is printed with its goal. The server alone: cargo run --release -p geogen-studio
# --example latency.
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
# figures in #latency.
CHROMIUM_FLAGS="--disable-gpu --window-size=1400,800" \
    node --experimental-websocket scripts/chromium-wait.mjs "$url#latency=$n" latency $((60 + n * 5)) >"$work/result.json"
python3 - "$work/result.json" <<'PY'
import json, sys
r = json.loads(json.load(open(sys.argv[1]))["result"])
if "error" in r:
    print("failed:", r["error"]); sys.exit(1)
def goal(ok):
    return "meets the goal" if ok else "MISSES the goal"
print(f"edit -> {r['preview']}² preview painted, {r['edits']} edits (debounce included): median {r['median_ms']:.0f} ms, "
      f"p95 {r['p95_ms']:.0f} ms (min {r['min_ms']:.0f}, max {r['max_ms']:.0f}; last render request {r['server_render_ms']:.0f} ms); "
      f"goal <= 150 ms: {goal(r['median_ms'] <= 150)}")
print(f"one {r['preview']}² preview answer: {r['preview_bytes']} bytes; goal <= 1 MB: {goal(r['preview_bytes'] <= 1_000_000)}")
d = r["drag"]
print(f"slider drag at a {d['preview']}² preview for {d['seconds']:.1f} s: {d['painted_per_s']:.1f} previews painted/s "
      f"({d['full_size_per_s']:.1f}/s at {d['preview']}², the rest coarse at 128²); goal >= 8/s: {goal(d['painted_per_s'] >= 8)}")
PY
