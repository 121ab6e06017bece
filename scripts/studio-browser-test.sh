#!/usr/bin/env bash
# Browser test of geogen studio in headless Chromium (Debian's `chromium` package): opens the
# studio on the island example and runs the page's own scripted walk (#selftest: break the script
# and see the marker at the right line with its code, fix it and see the preview change, move a
# slider and see the render follow, drag it and see previews while dragging, see a runtime error
# underlined at its argument, open the help, pan the map and see its tiles load, export through
# the Export pane, create, open and save scripts through the header's file actions, drive the 3D
# view's controls), then checks the layout at 1024×768 and at 3840×2160 by element boxes, then
# opens a studio started on a script that does not exist yet (#new-file: the starter template,
# saved by the first Save), and prints each step.
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
# The smallest screen the studio is laid out for, and a 4K one.
timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=1024,768 \
    --virtual-time-budget=20000 --dump-dom "$url#layout" 2>/dev/null >"$work/layout.html" || true
timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=3840,2160 \
    --virtual-time-budget=20000 --dump-dom "$url#layout" 2>/dev/null >"$work/layout-4k.html" || true
# A studio on a script that does not exist yet: it starts from the template, the first save writes it.
mkdir "$work/fresh"
"$geogen" studio "$work/fresh/new.ggs" --port 0 >"$work/fresh.log" 2>&1 &
fresh=$!
trap 'kill "$server" "$fresh" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q http "$work/fresh.log" && break; sleep 0.1; done
fresh_url=$(grep -o 'http://[^ ]*' "$work/fresh.log")
timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=1400,800 \
    --virtual-time-budget=20000 --dump-dom "$fresh_url#new-file" 2>/dev/null >"$work/new-file.html" || true
python3 - "$work/fresh/new.ggs" "$work/dom.html" "$work/layout.html" "$work/layout-4k.html" "$work/new-file.html" <<'PY'
import html, json, os, re, sys
steps, ok = [], True
for path in sys.argv[2:]:
    dom = open(path).read()
    match = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S)
    if not match:
        print(f"the page never finished its self-test ({path})"); sys.exit(1)
    result = json.loads(html.unescape(match.group(1)))
    steps += result["steps"]
    ok = ok and result["passed"]
created = sys.argv[1]
saved = os.path.exists(created) and open(created).read().startswith("// A new GeoGen Script")
steps.append({"name": "the saved new script is the template, on disk", "ok": saved, "detail": ""})
ok = ok and saved
for step in steps:
    print(("ok   " if step["ok"] else "FAIL ") + step["name"] + (f"  ({step['detail']})" if step["detail"] else ""))
passed = sum(s["ok"] for s in steps); failed = len(steps) - passed
print(f"{passed} passed, {failed} failed")
sys.exit(0 if ok else 1)
PY
