"""Renders: the CLI's rectangle semantics, tile exactness, the r16 quantisation, parameters."""

import subprocess

import numpy as np
import pytest

import geogen


def test_a_render_is_a_float32_array_of_the_rectangle(island):
    heights = island.render(0, 0, 96, 64, seed=7)
    assert heights.dtype == np.float32
    assert heights.shape == (64, 96)
    assert heights.flags.c_contiguous and heights.flags.writeable
    assert np.isfinite(heights).all()
    assert heights.min() < 0 < heights.max(), "the island has sea and land"


def test_two_halves_side_by_side_equal_the_whole(island):
    whole = island.render(0, 0, 512, 512, seed=7)
    # Without map_size a finite map is as large as the render (as the CLI's --size), so the
    # halves name the whole map's size.
    left = island.render(0, 0, 256, 512, seed=7, map_size=(512, 512))
    right = island.render(256, 0, 256, 512, seed=7, map_size=512)
    assert np.array_equal(np.hstack([left, right]), whole)
    assert not np.array_equal(left, right)


def test_r16_is_the_cli_r16_file_byte_for_byte(island, island_path, geogen_cli, tmp_path):
    samples = island.render_r16(0, 0, 512, 512, seed=7)
    assert samples.dtype == np.uint16 and samples.shape == (512, 512)
    subprocess.run(
        [str(geogen_cli), "render", str(island_path), "-o", str(tmp_path), "--size", "512", "--seed", "7",
         "--format", "r16", "-q"],
        check=True,
    )
    cli_bytes = (tmp_path / "main.r16").read_bytes()
    assert len(cli_bytes) == 512 * 512 * 2
    assert samples.astype("<u2").tobytes() == cli_bytes


def test_r16_quantises_the_float_render(island):
    heights = island.render(100, 50, 64, 32, seed=3, map_size=(300, 200))
    samples = island.render_r16(100, 50, 64, 32, seed=3, map_size=(300, 200))
    # round(h × 32767) + 32767 with halves away from zero, h in [-1, 1].
    exact = np.clip(heights.astype(np.float64), -1, 1) * 32767
    expected = (np.sign(exact) * np.floor(np.abs(exact) + 0.5) + 32767).astype(np.uint16)
    assert np.array_equal(samples, expected)


def test_a_rectangle_matches_the_cli_origin_size_and_scale(island, island_path, geogen_cli, tmp_path):
    args = dict(seed="hello", scale=0.5, params={"Size": 0.3, "Roughness": "0.7"}, map_size=(400, 300))
    samples = island.render_r16(30, 20, 120, 90, **args)
    subprocess.run(
        [str(geogen_cli), "render", str(island_path), "-o", str(tmp_path), "--origin", "30,20", "--size", "120x90",
         "--scale", "0.5", "--seed", "hello", "-p", "Size=0.3", "-p", "Roughness=0.7", "--map-size", "400x300",
         "--format", "r16", "-q"],
        check=True,
    )
    assert samples.astype("<u2").tobytes() == (tmp_path / "main.r16").read_bytes()


def test_parameters_and_seeds_change_the_terrain(island):
    base = island.render(0, 0, 128, 128, seed=7)
    assert np.array_equal(base, island.render(0, 0, 128, 128, seed="7")), "digits are the number, as --seed reads them"
    assert np.array_equal(base, island.render(0, 0, 128, 128, seed=7, params={"Size": 0.4})), "the default"
    assert not np.array_equal(base, island.render(0, 0, 128, 128, seed=8))
    assert not np.array_equal(base, island.render(0, 0, 128, 128, seed=7, params={"Size": 0.2}))
    assert np.array_equal(
        island.render(0, 0, 128, 128, seed=7, params={"Size": 0.25}),
        island.render(0, 0, 128, 128, seed=7, params={"Size": "0.25"}),
    )


def test_parameter_kinds_are_read_by_their_declared_type():
    script = geogen.Script(
        "metadata { Width: Finite, Height: Finite, Parameters: {\n"
        "  Count: { Min: 1, Max: 10, Default: 3, Restriction: Integers },\n"
        "  Snow: { Default: false },\n"
        "  Dir: { Type: Direction, Default: Horizontal } } }\n"
        "var h = Parameters.Count / 10;\n"
        "if (Parameters.Snow) { h = h + 0.05; }\n"
        "if (Parameters.Dir == Direction.Vertical) { h = -h; }\n"
        "yield HeightMap.Flat(h);\n",
        name="kinds.ggs",
    )
    at = lambda **params: float(script.render(0, 0, 2, 2, params=params)[0, 0])  # noqa: E731
    assert at() == pytest.approx(0.3)
    assert at(Count=5) == pytest.approx(0.5)
    assert at(Count=np.int64(5), Snow=True) == pytest.approx(0.55)
    assert at(Snow=np.bool_(True), Dir="Vertical") == pytest.approx(-0.35)


def test_maps_are_chosen_by_name():
    script = geogen.Script(
        "metadata { Width: Finite, Height: Finite }\n"
        "yield HeightMap.Flat(0.25);\n"
        "yield HeightMap.Flat(-0.5) as \"water\";\n",
    )
    assert script.info()["maps"] == ["main", "water"]
    assert (script.render(0, 0, 4, 3) == np.float32(0.25)).all()
    assert (script.render(0, 0, 4, 3, map="water") == np.float32(-0.5)).all()
    assert (script.render_r16(0, 0, 4, 3, map="water") == 16383).all()


def test_info_is_the_cli_info_json(island, island_path, geogen_cli):
    import json

    cli = subprocess.run([str(geogen_cli), "info", str(island_path), "--json"], check=True, capture_output=True)
    info = island.info()
    assert info == json.loads(cli.stdout)
    assert info["name"] == "Island"
    assert [p["name"] for p in info["parameters"]] == ["Size", "Roughness"]
    size = info["parameters"][0]
    assert (size["kind"], size["min"], size["max"], size["default"]) == ("number", 0.1, 0.6, 0.4)
    assert info["width"]["finite"] and info["maps"] == ["main"]


def test_height_slang_by_name_or_dialect():
    by_name = geogen.Script("(- (* 2 x) 1)", name="ramp.hs")
    by_dialect = geogen.Script(b"(- (* 2 x) 1)", dialect="hs")
    for script in (by_name, by_dialect):
        assert script.dialect == "documented"
        row = script.render(0, 0, 5, 1, params={"UnitSize": 4})
        assert row.tolist() == [[-1.0, -0.5, 0.0, 0.5, 1.0]]
    assert geogen.Script("(+ 0 0)", name="x.hs", dialect="picogen-2008").dialect == "picogen-2008"
    assert geogen.Script("yield HeightMap.Flat(0);", name="x.hs", dialect="ggs").dialect == "ggs"


def test_an_infinite_map_renders_anywhere():
    script = geogen.Script("metadata { Width: Infinite, Height: Infinite }\nyield HeightMap.Noise();")
    far = script.render(-5000, 7000, 64, 48, seed=1)
    assert far.shape == (48, 64)
    whole = script.render(-5000, 7000, 128, 48, seed=1)
    assert np.array_equal(whole[:, :64], far)


def test_colored_is_the_cli_colored_preview(island, island_path, geogen_cli, tmp_path):
    import zlib

    heights = island.render(0, 0, 64, 48, seed=7)
    rgb = geogen.colored(heights)
    assert rgb.dtype == np.uint8 and rgb.shape == (48, 64, 3)
    assert np.array_equal(geogen.colored(np.asfortranarray(heights)), rgb), "any memory layout"
    assert np.array_equal(geogen.colored(heights.astype(np.float64)), rgb), "any float type"
    assert geogen.colored([[-1.0, 0.0, 1.0]]).tolist() == [[[0, 18, 38], [108, 205, 255], [255, 255, 255]]]
    subprocess.run(
        [str(geogen_cli), "render", str(island_path), "-o", str(tmp_path), "--size", "64x48", "--seed", "7",
         "--format", "colored", "-q"],
        check=True,
    )
    # The PNG's rows: IDAT chunks inflated, a filter byte before each row.
    png = (tmp_path / "main_colored.png").read_bytes()
    at, idat = 8, b""
    while at < len(png):
        length = int.from_bytes(png[at:at + 4], "big")
        kind = png[at + 4:at + 8]
        if kind == b"IDAT":
            idat += png[at + 8:at + 8 + length]
        at += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(48, 1 + 64 * 3)
    # Undo the filters geogen writes: none (0) or up (2), the byte above added.
    assert set(raw[:, 0].tolist()) <= {0, 2}, raw[:, 0]
    rows = np.zeros((48, 64 * 3), dtype=np.uint8)
    above = np.zeros(64 * 3, dtype=np.uint8)
    for i in range(48):
        rows[i] = raw[i, 1:] + (above if raw[i, 0] == 2 else 0)
        above = rows[i]
    assert np.array_equal(rows.reshape(48, 64, 3), rgb)


def test_a_script_pickles_to_the_same_renders(island):
    import pickle

    for script in (island, geogen.Script("(* x y)", name="product.hs", dialect="picogen-2008")):
        copy = pickle.loads(pickle.dumps(script))
        assert (copy.name, copy.dialect) == (script.name, script.dialect)
        assert copy.info() == script.info()
        rectangle = dict(x=10, y=20, w=64, h=32, seed=5, map_size=256)
        assert np.array_equal(copy.render(**rectangle), script.render(**rectangle))
