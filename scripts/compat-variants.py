#!/usr/bin/env python3
"""The original GeoGen's example scripts (../shared/compat/examples, when present) beyond the one
setting the compatibility kit compares with the original (512x512, seed 0, default parameters): at a
non-square size, another seed, non-default parameters and scale 0.5 with a map size, each render must
succeed and equal, byte for byte, the same script rendered as tiles (`geogen tiles`). Agreement with
the original itself can only be measured at the kit's setting (its renders are the only ones there).

usage: scripts/compat-variants.py path/to/geogen
"""
import os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "shared", "compat", "examples")
PARAMS = {"conflux": ["-p", "NumberOfRivers=9", "-p", "LakeSize=Large"], "ouroboros": ["-p", "NumberOfIslands=4"]}
VARIANTS = [
    ("640x384 seed 3", ["--seed", "3", "--map-size", "640x384"], (640, 384)),
    ("scale 0.5, map 700x500, seed 11", ["--seed", "11", "--scale", "0.5", "--map-size", "700x500"], (350, 250)),
]


def r16(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    geogen = sys.argv[1]
    if not os.path.isdir(EXAMPLES):
        print("no compat kit beside the project; nothing to do")
        return 0
    failures = 0
    for script in sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".ggs")):
        name = script[:-4]
        path = os.path.join(EXAMPLES, script)
        for label, args, (w, h) in VARIANTS:
            args = args + PARAMS.get(name, [])
            with tempfile.TemporaryDirectory() as tmp:
                full = subprocess.run([geogen, "render", path, "-o", f"{tmp}/full", "--format", "r16", "-q",
                                       "--size", f"{w}x{h}"] + args, capture_output=True, text=True)
                tiles = subprocess.run([geogen, "tiles", path, "-o", f"{tmp}/tiles", "--format", "r16", "-q",
                                        "--region", f"0,0,{w},{h}", "--tile", "100"] + args, capture_output=True, text=True)
                if full.returncode or tiles.returncode:
                    print(f"{name} [{label}]: FAILED to render: {full.stderr.strip()} {tiles.stderr.strip()}")
                    failures += 1
                    continue
                whole = r16(f"{tmp}/full/main.r16")
                same = True
                for ty in range(0, h, 100):
                    for tx in range(0, w, 100):
                        tw, th = min(100, w - tx), min(100, h - ty)
                        tile = r16(f"{tmp}/tiles/tile_{tx}_{ty}_main.r16")
                        for row in range(th):
                            a = whole[((ty + row) * w + tx) * 2:((ty + row) * w + tx + tw) * 2]
                            b = tile[row * tw * 2:(row + 1) * tw * 2]
                            same &= a == b
                print(f"{name} [{label}]: renders, tiles {'equal' if same else 'DIFFER from'} the full render")
                failures += 0 if same else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
