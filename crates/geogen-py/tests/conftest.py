"""Fixtures of the geogen package's tests: the repository's examples and the CLI to compare with."""

import json
import os
import pathlib
import subprocess

import pytest

import geogen

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def island_path() -> pathlib.Path:
    return REPO / "examples" / "island.ggs"


@pytest.fixture(scope="session")
def island(island_path) -> geogen.Script:
    return geogen.Script.from_file(island_path)


@pytest.fixture(scope="session")
def geogen_cli() -> pathlib.Path:
    """The `geogen` binary: $GEOGEN_CLI (scripts/python-test.sh builds it and sets it), else the
    debug build, made here with cargo."""
    given = os.environ.get("GEOGEN_CLI")
    if given:
        path = pathlib.Path(given)
        assert path.is_file(), f"GEOGEN_CLI={given} is not a file"
        return path
    subprocess.run(["cargo", "build", "-q", "-p", "geogen-cli"], cwd=REPO, check=True)
    metadata = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    return pathlib.Path(json.loads(metadata.stdout)["target_directory"]) / "debug" / "geogen"
