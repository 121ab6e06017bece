#!/usr/bin/env bash
# Peak memory (RSS) of hostile or careless inputs, each of which once exhausted memory or time:
#   1. Array.Repeat(i, 10000000) kept in a loop    (was 10.4 GB; now stops with GGE2508 at the heap limit)
#   2. Print of 33 MB                                (was 1.96 GB held; now streamed)
#   3. check on 16 000 repeated bad tokens (32 KB)  (was 28 s and 1.5 GB; now 50 errors shown)
#   4. check /dev/urandom                            (read without bound; now refused after 4 MiB)
#   5. check of the costliest script of the maximum size (4 MiB of `a;`)
#   6. Noise 20 000 000 x 1 under --memory-limit 1024 (was 5.3 GB: the noise tables per column)
#   7. the island 20 000 000 x 1 under --memory-limit 1024
#   8. an OBJ of 4096² under --memory-limit 512        (was 5.1 GB; now refused before rendering)
#   9. the same thinned to 10^6 triangles               (fits)
#  10. tiles of 512² as OBJ over 2048² under 512 MiB  (was 0.9 GB: a block's meshes outside the plan)
#  11. a 600 KB PNG input of 16384² under 256 MiB     (was 1.6 GB; now refused before decoding)
#  12. the same input under 3000 MiB                   (read: 1.1 GiB of heights, 4 bytes a pixel kept)
# Usage: scripts/memory-cases.sh [path/to/geogen]   (default: builds and uses the release binary)
# Each case prints its exit code, wall time and peak RSS, and whether the peak stayed under its
# bound: the script heap limit (1 GiB by default) for the script cases, 64 MiB for the others.
set -euo pipefail
cd "$(dirname "$0")/.."

GEOGEN="${1:-}"
if [[ -z "$GEOGEN" ]]; then
    cargo build --release -q -p geogen-cli
    GEOGEN=target/release/geogen
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/arrays.ggs" <<'GGS'
var kept = {};
for (var i = 0; i < 1000; i++) { kept.PushBack(Array.Repeat(i, 10000000)); }
yield HeightMap.Flat(0);
GGS
cat > "$WORK/print.ggs" <<'GGS'
var line = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789";
for (var i = 0; i < 330000; i++) { Print(line); }
yield HeightMap.Flat(0);
GGS
python3 -c 'import sys; sys.stdout.write("` " * 16000)' > "$WORK/junk.ggs"
# Just under the 4 MiB script size limit, in the statement that costs the compiler most per byte.
python3 -c 'import sys; sys.stdout.write("a;" * (2 * 1024 * 1024 - 8) + "\n")' > "$WORK/worst.ggs"
echo 'yield HeightMap.Noise();' > "$WORK/noise.ggs"
echo 'yield HeightMap.Flat(0.25);' > "$WORK/flat.ggs"
echo 'yield HeightMap.Input("big");' > "$WORK/input.ggs"
"$GEOGEN" render "$WORK/flat.ggs" --size 16384 -q -o "$WORK/big"

MIB=$((1024 * 1024))
HEAP_LIMIT=$((1024 * MIB))
SMALL=$((64 * MIB))

# Runs a command; prints its exit code, seconds and peak RSS in bytes. GNU time (Debian package
# `time`) measures the command alone; the Python fallback's figure also includes the Python
# process the command was forked from (about 10 MiB).
measure() {
    if [[ -x /usr/bin/time ]]; then
        local start ms code=0
        start=$(date +%s%N)
        /usr/bin/time -f '%M' -o "$WORK/rss" "$@" > /dev/null 2>&1 || code=$?
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        printf '%s %d.%02d %d\n' "$code" $((ms / 1000)) $((ms % 1000 / 10)) $(( $(tail -1 "$WORK/rss") * 1024 ))
    else
        python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
with open("/dev/null", "wb") as null:
    code = subprocess.call(sys.argv[1:], stdout=null, stderr=null)
seconds = time.monotonic() - start
print(code, f"{seconds:.2f}", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
PY
    fi
}

failures=0
report() {
    local name="$1" bound="$2" expected_exit="$3"; shift 3
    read -r code seconds peak < <(measure "$@")
    local verdict="ok"
    if (( peak >= bound )) || [[ "$code" != "$expected_exit" ]]; then
        verdict="FAIL"
        failures=$((failures + 1))
    fi
    printf '%-44s exit %s (want %s)  %7s s  peak RSS %6d MiB  (bound %5d MiB)  %s\n' \
        "$name" "$code" "$expected_exit" "$seconds" $((peak / MIB)) $((bound / MIB)) "$verdict"
}

report "1. Array.Repeat(i, 10^7) kept in a loop" "$HEAP_LIMIT" 1 "$GEOGEN" run "$WORK/arrays.ggs"
report "2. Print 33 MB (run, streamed)" "$SMALL" 0 "$GEOGEN" run "$WORK/print.ggs"
report "3. check 16 000 bad tokens" "$SMALL" 1 "$GEOGEN" check "$WORK/junk.ggs"
report "4. check /dev/urandom" "$SMALL" 1 "$GEOGEN" check /dev/urandom
report "5. check the worst 4 MiB script" "$HEAP_LIMIT" 1 "$GEOGEN" check "$WORK/worst.ggs"
# The renders: the bound is the memory limit given (the heights, the plan and the writers within it).
report "6. Noise 20000000x1, limit 1024 MiB" $((1024 * MIB)) 0 \
    "$GEOGEN" render "$WORK/noise.ggs" --size 20000000x1 --memory-limit 1024 -q -o "$WORK/out6"
report "7. island 20000000x1, limit 1024 MiB" $((1024 * MIB)) 0 \
    "$GEOGEN" render examples/island.ggs --size 20000000x1 --memory-limit 1024 -q -o "$WORK/out7"
report "8. OBJ of 4096², limit 512 MiB (refused)" "$SMALL" 2 \
    "$GEOGEN" render "$WORK/noise.ggs" --size 4096 --format obj --memory-limit 512 -q -o "$WORK/out8"
report "9. the same, 10^6 triangles" $((512 * MIB)) 0 \
    "$GEOGEN" render "$WORK/noise.ggs" --size 4096 --format obj --mesh-triangles 1000000 --memory-limit 512 -q -o "$WORK/out9"
report "10. tiles 512² as OBJ over 2048², 512 MiB" $((512 * MIB)) 0 \
    "$GEOGEN" tiles "$WORK/noise.ggs" --region 0,0,2048,2048 --tile 512 --format obj --memory-limit 512 -q -o "$WORK/out10"
report "11. PNG input of 16384², limit 256 MiB" "$SMALL" 2 \
    "$GEOGEN" render "$WORK/input.ggs" --input "big=$WORK/big/main.png" --size 64 --memory-limit 256 -q -o "$WORK/out11"
report "12. the same input, limit 3000 MiB" $((3000 * MIB)) 0 \
    "$GEOGEN" render "$WORK/input.ggs" --input "big=$WORK/big/main.png" --size 64 --memory-limit 3000 -q -o "$WORK/out12"
exit "$failures"
