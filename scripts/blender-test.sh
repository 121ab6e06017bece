#!/usr/bin/env bash
# Tests the geogen terrain Blender add-on: installs Debian's Blender (and NumPy for its Python) when
# missing, builds the add-on's zip (scripts/blender-addon.sh) and the CLI, then has Blender, without
# a window, install the add-on from the zip and check its meshes against the CLI's r16 renders
# (crates/geogen-py/blender/test_addon.py).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v blender >/dev/null || missing+=(blender)
dpkg -s python3-numpy >/dev/null 2>&1 || missing+=(python3-numpy)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]} (Debian)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
blender --version | head -1

target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
# The same build of the package as scripts/python-test.sh's (the dev profile), and the CLI that
# `cargo test --workspace` builds for its own tests.
scripts/blender-addon.sh --profile dev
cargo test --workspace --locked --no-run -q

# The add-on is installed into a scripts directory of this run's own, not the user's.
user_scripts="$(mktemp -d)"
trap 'rm -rf "$user_scripts"' EXIT
BLENDER_USER_SCRIPTS="$user_scripts" blender -b --factory-startup --python-exit-code 1 \
    --python crates/geogen-py/blender/test_addon.py -- \
    --zip "$target_dir/blender/geogen_terrain.zip" --cli "$target_dir/debug/geogen" --script examples/island.ggs
