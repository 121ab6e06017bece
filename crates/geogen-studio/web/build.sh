#!/bin/sh
# Rebuilds the studio's embedded front end, ../assets/, from src/ with esbuild (pinned in
# package-lock.json). Run `npm ci` once first (it needs the npm registry); the output is
# deterministic, and the committed assets must equal a fresh build (`sh build.sh --check`).
set -eu
cd "$(dirname "$0")"
out=../assets
if [ "${1:-}" = "--check" ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
./node_modules/.bin/esbuild src/main.js --bundle --minify --format=iife --target=es2020 \
    --legal-comments=none --charset=utf8 --log-level=warning --outfile="$out/app.js"
./node_modules/.bin/esbuild src/style.css --minify --log-level=warning --outfile="$out/app.css"
cp src/index.html "$out/index.html"
cp src/favicon.svg "$out/favicon.svg"
if [ "${1:-}" = "--check" ]; then
    for f in app.js app.css index.html favicon.svg; do
        cmp -s "$out/$f" "../assets/$f" || { echo "assets/$f differs from a fresh build: run web/build.sh" >&2; exit 1; }
    done
    echo "assets match a fresh build"
else
    ls -l ../assets
fi
