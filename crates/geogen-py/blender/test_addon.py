"""Tests the geogen terrain add-on inside Blender, installed from its zip as a user would.

    blender -b --factory-startup --python-exit-code 1 --python crates/geogen-py/blender/test_addon.py -- \
        --zip target/blender/geogen_terrain.zip --cli target/debug/geogen --script examples/island.ggs

(scripts/blender-test.sh builds the zip and the CLI and runs this.) Every vertex's z is compared with
the r16 file the CLI writes for the same render, normalised as the add-on documents:
z = (v - 32767) / 32767 × height scale. Any failure exits with status 1.
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile
import traceback

import bpy
import numpy as np

SIZE = 129
SEED = 7
PIXEL_SIZE = 0.5
HEIGHT_SCALE = 3.0


def cli_r16(cli, script, out_dir, *params):
    """The CLI's r16 samples of the SIZE × SIZE render, as a (SIZE, SIZE) uint16 array."""
    command = [cli, "render", script, "-o", out_dir, "--size", str(SIZE), "--seed", str(SEED), "--format", "r16", "-q"]
    for param in params:
        command += ["-p", param]
    subprocess.run(command, check=True)
    data = (pathlib.Path(out_dir) / "main.r16").read_bytes()
    return np.frombuffer(data, dtype="<u2").reshape(SIZE, SIZE)


def vertex_positions(obj):
    mesh = obj.data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def check_heights(obj, samples, what):
    z = vertex_positions(obj)[:, 2].astype(np.float64).reshape(SIZE, SIZE)
    expected = (samples.astype(np.float64) - 32767.0) / 32767.0 * HEIGHT_SCALE
    worst = float(np.abs(z - expected).max())
    print(f"{what}: largest |z - r16 height x scale| = {worst:.2e}")
    assert worst <= 1e-4, f"{what}: a vertex is {worst} from the CLI's r16 height"


def run(args):
    bpy.ops.preferences.addon_install(filepath=str(args.zip), overwrite=True)
    bpy.ops.preferences.addon_enable(module="geogen_terrain")
    import geogen_terrain

    assert hasattr(bpy.types.Object, "geogen_terrain"), "the add-on registered its settings"
    assert "mesh.geogen_terrain_add" in dir(bpy.ops.mesh) or hasattr(bpy.ops.mesh, "geogen_terrain_add")
    print("add-on installed from", args.zip, "into", pathlib.Path(geogen_terrain.__file__).parent)

    result = bpy.ops.mesh.geogen_terrain_add(
        script_path=str(args.script), seed=SEED, size=SIZE, pixel_size=PIXEL_SIZE, height_scale=HEIGHT_SCALE
    )
    assert result == {"FINISHED"}, result
    obj = bpy.context.view_layer.objects.active
    settings = obj.geogen_terrain
    assert settings.is_terrain and settings.error == "", settings.error
    mesh = obj.data
    assert len(mesh.vertices) == SIZE * SIZE, len(mesh.vertices)
    assert len(mesh.polygons) == (SIZE - 1) ** 2, len(mesh.polygons)
    assert mesh.uv_layers.active is not None, "the mesh has UVs"
    assert [p.name for p in settings.parameters] == ["Size", "Roughness"]
    assert abs(settings.parameters["Size"].number - 0.4) < 1e-6, "the script's default"

    # The grid: centred, PIXEL_SIZE apart, row 0 (north) at +y.
    positions = vertex_positions(obj).reshape(SIZE, SIZE, 3)
    half = (SIZE - 1) / 2 * PIXEL_SIZE
    assert np.allclose(positions[0, 0, :2], [-half, half]) and np.allclose(positions[-1, -1, :2], [half, -half])
    assert np.allclose(np.diff(positions[0, :, 0]), PIXEL_SIZE)

    # The material shows the colored preview of the same heights.
    material = obj.data.materials[0]
    image = material.node_tree.nodes["geogen preview"].image
    assert tuple(image.size) == (SIZE, SIZE)
    pixels = np.empty(SIZE * SIZE * 4, dtype=np.float32)
    image.pixels.foreach_get(pixels)
    assert pixels.reshape(SIZE, SIZE, 4)[..., :3].std() > 0.05, "the preview is not blank"

    with tempfile.TemporaryDirectory() as out:
        default = cli_r16(args.cli, args.script, out)
        check_heights(obj, default, "defaults")
        before = vertex_positions(obj)[:, 2].copy()

        # Changing a parameter makes the mesh again, with the heights of the new setting.
        settings.parameters["Size"].number = 0.25
        assert settings.error == "", settings.error
        after = vertex_positions(obj)[:, 2]
        changed = int(np.count_nonzero(after != before))
        print(f"Size=0.25: {changed} of {after.size} vertices moved")
        assert changed > after.size // 10, "changing a parameter regenerated the mesh"
        check_heights(obj, cli_r16(args.cli, args.script, out, "Size=0.25"), "Size=0.25")

        # So do the seed and the size.
        settings.seed = SEED + 1
        assert np.count_nonzero(vertex_positions(obj)[:, 2] != after) > after.size // 10, "a new seed"
        settings.seed = SEED
        settings.size = 65
        assert len(obj.data.vertices) == 65 * 65 and tuple(image.size) == (65, 65)

    # A script that fails keeps the mesh and says why.
    with tempfile.NamedTemporaryFile("w", suffix=".ggs", delete=False) as broken:
        broken.write("var a = 1;\n  yield nothing;\n")
    settings.script_path = broken.name
    assert settings.error.startswith("error[GGE"), settings.error
    assert len(obj.data.vertices) == 65 * 65
    print("a broken script reports:", settings.error.splitlines()[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zip", type=pathlib.Path, required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--script", type=pathlib.Path, required=True)
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else [])
    try:
        run(args)
    except BaseException:
        traceback.print_exc()
        print("geogen terrain add-on test: FAILED")
        sys.exit(1)
    print("geogen terrain add-on test: passed")


main()
