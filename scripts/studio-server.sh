# Sourced by the studio's browser scripts: starts `$geogen studio` on a copy of the island example
# in a fresh temporary directory, and sets `work` (that directory, removed on exit), `server` (the
# server's pid, killed on exit) and `url` (the page's address with its token).
work=$(mktemp -d)
cp examples/island.ggs "$work/island.ggs"
"$geogen" studio "$work/island.ggs" --port 0 >"$work/log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q http "$work/log" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$work/log")
