#!/usr/bin/env bash
# Builds the geogen terrain Blender add-on (crates/geogen-py/blender/geogen_terrain) into zips that
# Blender's installers take, with geogen's Python package compiled for this platform:
#
#   target/blender/geogen_terrain.zip            Blender 3.4 and later: Preferences > Add-ons > Install,
#                                                the compiled `geogen` package unpacked inside the add-on
#   target/blender/geogen_terrain-extension.zip  Blender 4.2 and later: Get Extensions > Install from
#                                                Disk, an extension whose manifest installs geogen's wheel
#
# Usage: scripts/blender-addon.sh [--profile PROFILE]   (cargo's release profile by default; the
# tests use `dev`, quicker to compile)
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile="$2"; shift 2 ;;
        --profile=*) profile="${1#--profile=}"; shift ;;
        *) echo "usage: $0 [--profile PROFILE]" >&2; exit 2 ;;
    esac
done

target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
venv="$target_dir/python-venv"
out="$target_dir/blender"
if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import maturin' 2>/dev/null; then
    "$venv/bin/python" -m pip install -q 'maturin>=1.5,<2'
fi

rm -rf "$out/wheels"
mkdir -p "$out/wheels"
PATH="$venv/bin:$PATH" maturin build --quiet --locked --profile "$profile" \
    --manifest-path crates/geogen-py/Cargo.toml --out "$out/wheels" >/dev/null
wheels=("$out"/wheels/geogen-*.whl)
if [ "${#wheels[@]}" -ne 1 ]; then
    echo "expected one geogen wheel in $out/wheels, found: ${wheels[*]}" >&2
    exit 1
fi

"$venv/bin/python" - "${wheels[0]}" "$out" <<'PY'
"""Writes both zips from the add-on's sources and the wheel."""
import pathlib
import re
import sys
import zipfile

wheel, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
addon = pathlib.Path("crates/geogen-py/blender/geogen_terrain")
sources = sorted(p for p in addon.rglob("*") if p.is_file() and "__pycache__" not in p.parts)

# Blender's platform name for the wheel's platform tag (linux_x86_64, manylinux_2_34_x86_64, ...).
tag = wheel.stem.split("-")[-1]
system = next((name for key, name in [("linux", "linux"), ("macosx", "macos"), ("win", "windows")] if key in tag), None)
machine = next((name for key, name in [("x86_64", "x64"), ("amd64", "x64"), ("aarch64", "arm64"), ("arm64", "arm64")]
                if tag.endswith(key)), None)
if system is None or machine is None:
    sys.exit(f"no Blender platform name for the wheel tag {tag}")
platform = f"{system}-{machine}"
version = re.search(r'"version": \((\d+), (\d+), (\d+)\)', (addon / "__init__.py").read_text()).groups()

legacy = out / "geogen_terrain.zip"
with zipfile.ZipFile(legacy, "w", zipfile.ZIP_DEFLATED) as archive:
    for path in sources:
        archive.write(path, pathlib.Path("geogen_terrain") / path.relative_to(addon))
    with zipfile.ZipFile(wheel) as built:
        for name in built.namelist():
            if name.startswith("geogen/"):
                archive.writestr("geogen_terrain/" + name, built.read(name))
print(f"wrote {legacy} (Blender 3.4+)")

manifest = f'''schema_version = "1.0.0"
id = "geogen_terrain"
version = "{'.'.join(version)}"
name = "geogen terrain"
tagline = "Terrain meshes rendered by geogen from GeoGen Scripts"
maintainer = "geogen"
type = "add-on"
blender_version_min = "4.2.0"
license = ["SPDX:GPL-3.0-or-later"]
platforms = ["{platform}"]
wheels = ["./wheels/{wheel.name}"]

[permissions]
files = "Reads the GeoGen Script files you choose"
'''
extension = out / "geogen_terrain-extension.zip"
with zipfile.ZipFile(extension, "w", zipfile.ZIP_DEFLATED) as archive:
    archive.writestr("blender_manifest.toml", manifest)
    for path in sources:
        archive.write(path, path.relative_to(addon))
    archive.write(wheel, "wheels/" + wheel.name)
print(f"wrote {extension} (Blender 4.2+, untested here)")
PY
