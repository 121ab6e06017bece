#!/usr/bin/env bash
# Tests the Python package (crates/geogen-py): builds it and installs it into a virtual environment
# under target/ (made here, with maturin, numpy, pytest and dask installed from PyPI when missing),
# builds the CLI the tests compare with, and runs the package's pytest tests.
#
# The package is built in cargo's dev profile (quick to compile; a user's `pip install
# ./crates/geogen-py` builds the release profile from the same sources). Its dependencies are
# compiled again even after `cargo test --workspace`: built alone, the package unifies fewer
# features of shared crates (memchr, serde, smallvec, ...) than the whole workspace with its
# dev-dependencies does.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
venv="$target_dir/python-venv"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
export PATH="$venv/bin:$PATH"
if ! python -c 'import maturin, numpy, pytest, dask.array' 2>/dev/null; then
    echo "installing maturin, numpy, pytest and dask into $venv"
    python -m pip install -q 'maturin>=1.5,<2' numpy pytest 'dask[array]'
fi

# The CLI the tests compare with: the binary `cargo test --workspace` builds for its own tests (a
# `cargo build -p geogen-cli` would unify features differently and compile the workspace again).
cargo test --workspace --locked --no-run -q
export GEOGEN_CLI="$target_dir/debug/geogen"

started=$SECONDS
MATURIN_PEP517_ARGS="--profile dev --locked" \
    python -m pip install -q --no-build-isolation --no-deps --force-reinstall ./crates/geogen-py
echo "built and installed the geogen package in $((SECONDS - started)) s"

# From outside the source tree, so the installed package is the one imported.
cd crates/geogen-py/tests
python -m pytest -q -p no:cacheprovider "$@" .
