#!/usr/bin/env bash
# Browser test of geogen studio in headless Chromium (Debian's `chromium` package): opens the
# studio on the island example and runs the page's own scripted walk (#selftest: break the script
# and see the marker at the right line with its code, fix it and see the preview change, move a
# slider and see the render follow, pan the map and see its tiles load, export through the Export
# pane), then prints each step.
# Usage: scripts/studio-browser-test.sh [path/to/geogen]   (default: a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
geogen=${1:-}
if [ -z "$geogen" ]; then
    cargo build -q -p geogen-cli
    geogen=target/debug/geogen
fi
. scripts/studio-server.sh
timeout 90 chromium --headless --no-sandbox --disable-gpu --window-size=1400,800 \
    --virtual-time-budget=60000 --dump-dom "$url#selftest" 2>/dev/null >"$work/dom.html" || true
python3 - "$work/dom.html" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1]).read()
match = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S)
if not match:
    print("the page never finished its self-test"); sys.exit(1)
result = json.loads(html.unescape(match.group(1)))
for step in result["steps"]:
    print(("ok   " if step["ok"] else "FAIL ") + step["name"] + (f"  ({step['detail']})" if step["detail"] else ""))
passed = sum(s["ok"] for s in result["steps"]); failed = len(result["steps"]) - passed
print(f"{passed} passed, {failed} failed")
sys.exit(0 if result["passed"] else 1)
PY
