"""Errors: GGE codes with their line and column, and Python's exception types for bad arguments."""

import pickle

import pytest

import geogen


def test_a_runtime_error_carries_its_code_line_and_column():
    script = geogen.Script(
        'metadata { Width: Finite, Height: Finite }\nvar a = 1;\nPrint("before");\n'
        "  var c = b + 1;\nyield HeightMap.Flat(0);\n",
        name="bad.ggs",
    )
    with pytest.raises(geogen.GeogenError) as caught:
        script.render(0, 0, 8, 8)
    error = caught.value
    assert (error.code, error.line, error.column) == ("GGE2202", 4, 11)
    assert error.message == "undefined variable `b`"
    assert error.hint == "did you mean `a`?"
    assert error.file == "bad.ggs"
    assert error.messages == ["before"]
    assert "bad.ggs:4:11" in str(error) and "var c = b + 1;" in str(error)
    assert not isinstance(error, ValueError)


def test_every_syntax_error_of_a_file_is_reported():
    with pytest.raises(geogen.GeogenError) as caught:
        geogen.Script("yield HeightMap.Flat(0)\nvar = ;\n", name="syntax.ggs")
    error = caught.value
    assert (error.code, error.line, error.column) == ("GGE1201", 1, 24)
    assert [(d["code"], d["line"], d["column"]) for d in error.diagnostics] == [("GGE1201", 1, 24), ("GGE1201", 2, 4)]


def test_a_height_slang_error_points_into_the_program():
    with pytest.raises(geogen.GeogenError) as caught:
        geogen.Script("(+ 1\n   (sinus x))", name="t.hs")
    assert (caught.value.code, caught.value.line, caught.value.column) == ("GGE8108", 2, 8)


def test_errors_survive_pickling():
    with pytest.raises(geogen.GeogenError) as caught:
        geogen.Script("var = ;")
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is type(caught.value)
    assert (again.code, again.line, again.column, str(again)) == (
        caught.value.code,
        caught.value.line,
        caught.value.column,
        str(caught.value),
    )


def test_bad_settings_are_value_errors_with_their_code(island):
    cases = [
        (dict(params={"Nope": 1}), "GGE4001"),
        (dict(params={"Size": "big"}), "GGE4002"),
        (dict(map="nope"), "GGE4000"),
        (dict(scale=0), "GGE4003"),
        (dict(scale=float("nan")), "GGE4003"),
        (dict(map_size=(0, 5)), "GGE4003"),
        (dict(threads=0), "GGE4000"),
    ]
    for kwargs, code in cases:
        with pytest.raises(ValueError) as caught:
            island.render(0, 0, 16, 16, **kwargs)
        assert isinstance(caught.value, geogen.GeogenArgumentError), kwargs
        assert caught.value.code == code, (kwargs, str(caught.value))
        assert caught.value.line is None and caught.value.column is None


def test_bad_rectangles_are_value_errors(island):
    for rect in [(0, 0, 0, 16), (0, 0, 16, -1), (0, 0, 2**32, 1)]:
        with pytest.raises(geogen.GeogenArgumentError) as caught:
            island.render(*rect)
        assert caught.value.code == "GGE4003"
    # A finite map is as large as the render unless map_size says otherwise: a rectangle reaching
    # past it is refused, not clipped, so the array always has the shape asked for.
    with pytest.raises(geogen.GeogenArgumentError) as caught:
        island.render(100, 0, 64, 64, map_size=(128, 128))
    assert caught.value.code == "GGE4003"
    assert "100,0" in caught.value.message and "28x64" in caught.value.hint


def test_wrong_types_are_type_errors(island):
    with pytest.raises(TypeError):
        geogen.Script(42)
    with pytest.raises(TypeError):
        island.render(0, 0, "16", 16)
    with pytest.raises(TypeError):
        island.render(0, 0, 16, 16, params={"Size": [1]})
    with pytest.raises(TypeError):
        island.render(0, 0, 16, 16, params=[("Size", 0.3)])
    with pytest.raises(TypeError):
        island.render(0, 0, 16, 16, seed=1.5)
    with pytest.raises(TypeError):
        island.render(0, 0, 16, 16, map_size="big")
    with pytest.raises(ValueError):
        island.render(0, 0, 16, 16, seed=-1)


def test_unreadable_files_and_unknown_dialects(tmp_path):
    with pytest.raises(OSError) as caught:
        geogen.Script.from_file(tmp_path / "missing.ggs")
    assert isinstance(caught.value, geogen.GeogenFileError) and caught.value.code == "GGE4024"
    with pytest.raises(geogen.GeogenArgumentError) as caught:
        geogen.Script("yield HeightMap.Flat(0);", dialect="klingon")
    assert caught.value.code == "GGE4000" and "picogen-2008" in caught.value.hint


def test_text_that_is_not_utf8_is_reported_where_it_breaks():
    with pytest.raises(geogen.GeogenError) as caught:
        geogen.Script(b"yield HeightMap.Flat(0);\n// \xff\n")
    assert (caught.value.code, caught.value.line) == ("GGE1106", 2)


def test_a_render_over_the_memory_limit_is_refused_before_it_starts(island):
    with pytest.raises(geogen.GeogenError) as caught:
        island.render(0, 0, 8192, 8192, memory_limit=1)
    assert caught.value.code == "GGE3001"
