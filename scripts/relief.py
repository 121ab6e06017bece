#!/usr/bin/env python3
"""Shaded relief pictures for the docs: a float TIFF height map (as `geogen render --format tiff`
writes it) coloured by height, lit from the north-west, with the sea below height 0 in blues and,
when given, the rivers and lakes of `Drainage` drawn as water. Saved as JPEG (or PNG by the
extension). Needs Pillow and NumPy (`pip install pillow numpy`).

    scripts/relief.py HEIGHTS.tif OUT.jpg [--water MASK.tif ...] [--exaggeration Z] [--palette land|desert]
"""
import argparse

import numpy as np
from PIL import Image


def shade(h, exaggeration):
    """Lambertian shading under a light from the north-west at 45 degrees (x east, y south)."""
    gy, gx = np.gradient(h * exaggeration)
    azimuth, altitude = np.radians(315.0), np.radians(45.0)
    light = np.array([np.cos(altitude) * np.sin(azimuth), -np.cos(altitude) * np.cos(azimuth), np.sin(altitude)])
    norm = np.sqrt(gx * gx + gy * gy + 1.0)
    return np.clip((-gx * light[0] - gy * light[1] + light[2]) / norm, 0.0, 1.0)


PALETTES = {
    # (height, RGB) stops; below 0 is sea.
    "land": [(-1.0, (16, 36, 84)), (-0.3, (28, 66, 126)), (-0.03, (66, 124, 168)), (0.0, (196, 188, 148)),
             (0.03, (116, 148, 80)), (0.25, (86, 118, 58)), (0.5, (138, 118, 88)), (0.75, (170, 160, 150)),
             (1.0, (250, 250, 250))],
    "desert": [(-1.0, (120, 90, 60)), (-0.1, (190, 150, 100)), (0.2, (214, 176, 122)), (0.6, (232, 200, 150)),
               (1.0, (246, 226, 190))],
}


def colour(h, palette):
    stops = PALETTES[palette]
    xs = [s[0] for s in stops]
    out = np.zeros(h.shape + (3,))
    for c in range(3):
        out[..., c] = np.interp(h, xs, [s[1][c] for s in stops])
    return out / 255.0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("heights")
    p.add_argument("out")
    p.add_argument("--water", action="append", default=[], help="a mask in [0, 1] drawn as water (repeatable)")
    p.add_argument("--exaggeration", type=float, default=250.0, help="vertical exaggeration, pixels per height unit")
    p.add_argument("--palette", choices=sorted(PALETTES), default="land")
    p.add_argument("--quality", type=int, default=86)
    a = p.parse_args()
    h = np.array(Image.open(a.heights), dtype=np.float64)
    s = shade(h, a.exaggeration)
    rgb = colour(h, a.palette) * (0.35 + 0.75 * s[..., None])
    if a.palette == "land":
        water = np.zeros_like(h)
        for path in a.water:
            water = np.maximum(water, np.clip(np.array(Image.open(path), dtype=np.float64), 0.0, 1.0))
        # Rivers and lakes on land and where their beds reach down to the sea (estuaries), not
        # across the open sea, which has colours of its own.
        water = (water * (h > -0.004))[..., None]
        rgb = rgb * (1.0 - water) + np.array([60, 110, 170]) / 255.0 * (0.6 + 0.4 * s[..., None]) * water
    image = Image.fromarray((np.clip(rgb, 0.0, 1.0) * 255.0).astype(np.uint8))
    if a.out.lower().endswith((".jpg", ".jpeg")):
        image.save(a.out, quality=a.quality, optimize=True, progressive=True)
    else:
        image.save(a.out, optimize=True)


if __name__ == "__main__":
    main()
