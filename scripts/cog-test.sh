#!/usr/bin/env bash
# The GeoTIFF (`--format cog`) as GIS tools read it: GDAL's gdalinfo and its COG validator
# (Debian's gdal-bin and python3-gdal, installed when missing). A render placed with
# --geo-origin must be a valid cloud-optimised GeoTIFF in EPSG:3857 with the geotransform the
# origin and pixel size give; its elevations must be the float render's heights × --height-scale;
# the COGs of two neighbouring tiles of `geogen tiles` must meet edge to edge, and `geogen
# finish-tiles --cog` of their float tiles must equal the whole render's file; one without
# --geo-origin must be in the map's own plane.
# Usage: scripts/cog-test.sh [path/to/geogen]   (default: a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v gdalinfo >/dev/null || ! /usr/bin/python3 -c "import osgeo.gdal" 2>/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gdal-bin python3-gdal >/dev/null
fi
geogen=${1:-}
if [ -z "$geogen" ]; then
    cargo build -q -p geogen-cli
    geogen=target/debug/geogen
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(examples/island.ggs --map-size 1200x900 --seed 7 --pixel-size 10 --height-scale 800 -q)
"$geogen" render "${common[@]}" --size 1200x900 --format cog,tiff --geo-origin 7.65,45.97 -o "$work/geo"
"$geogen" render "${common[@]}" --size 1200x900 --format cog -o "$work/plain"
"$geogen" tiles "${common[@]}" --region 0,0,1200,900 --tile 600 --format cog,tiff --geo-origin 7.65,45.97 -o "$work/tiles"
# One GeoTIFF of the whole tiled region, from the tiles' float heights.
"$geogen" finish-tiles "$work/tiles" --cog "$work/finished.tif" --pixel-size 10 --height-scale 800 --geo-origin 7.65,45.97 -q
/usr/bin/python3 - "$work" <<'PY'
import array, math, subprocess, sys
from osgeo import gdal
work = sys.argv[1]
gdal.UseExceptions()
failures = []
def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f"  ({detail})" if detail else ""))
    if not ok: failures.append(name)

validator = "/usr/lib/python3/dist-packages/osgeo_utils/samples/validate_cloud_optimized_geotiff.py"
for name in ["geo/main_cog.tif", "plain/main_cog.tif", "tiles/tile_0_0_main_cog.tif", "finished.tif"]:
    run = subprocess.run(["/usr/bin/python3", validator, f"{work}/{name}"], capture_output=True, text=True)
    check(f"{name} is a valid cloud-optimised GeoTIFF", run.returncode == 0 and "is a valid cloud optimized GeoTIFF" in run.stdout,
          (run.stdout + run.stderr).strip().splitlines()[0] if (run.stdout + run.stderr).strip() else "")

check("finish-tiles --cog of the tiled region is the whole render's GeoTIFF, byte for byte",
      open(f"{work}/finished.tif", "rb").read() == open(f"{work}/geo/main_cog.tif", "rb").read())

geo = gdal.Open(f"{work}/geo/main_cog.tif")
R = 6378137.0
lon, lat = 7.65, 45.97
x0 = R * math.radians(lon)
y0 = R * math.log(math.tan(math.pi / 4 + math.radians(lat) / 2))
pixel = 10.0 / math.cos(math.radians(lat))
gt = geo.GetGeoTransform()
check("geotransform: the origin at 7.65 E 45.97 N, 10 m ground pixels in Web Mercator",
      abs(gt[0] - x0) < 1e-3 and abs(gt[3] - y0) < 1e-3 and abs(gt[1] - pixel) < 1e-9 and abs(gt[5] + pixel) < 1e-9 and gt[2] == 0 and gt[4] == 0,
      f"{gt}")
srs = geo.GetSpatialRef()
check("the CRS is EPSG:3857", srs is not None and srs.GetAuthorityCode(None) == "3857", srs.GetAuthorityCode(None) if srs else None)
band = geo.GetRasterBand(1)
check("512 × 512 float32 tiles with overviews", band.GetBlockSize() == [512, 512] and band.DataType == gdal.GDT_Float32 and band.GetOverviewCount() == 2,
      f"{band.GetBlockSize()} {gdal.GetDataTypeName(band.DataType)} {band.GetOverviewCount()} overviews")
def floats(b, width, height):
    # Read as raw floats (the array module, not numpy: no binary-compatibility worries).
    values = array.array("f")
    values.frombytes(b.ReadRaster(0, 0, width, height, buf_type=gdal.GDT_Float32))
    return values
width, height = band.XSize, band.YSize
metres = floats(band, width, height)
# The dataset must outlive its band (GDAL's Python bindings crash otherwise).
float_render = gdal.Open(f"{work}/geo/main.tif")
heights = floats(float_render.GetRasterBand(1), width, height)
clamp = lambda h: 0.0 if math.isnan(h) else min(1.0, max(-1.0, h))
error = max(abs(m - clamp(h) * 800.0) for m, h in zip(metres, heights))
check("elevations are the float render's heights × 800 m", len(metres) == 1200 * 900 and error <= 1e-4, f"largest difference {error:.2e} m")
overview = floats(band.GetOverview(0), 1, 1)
mean = (metres[0] + metres[1] + metres[width] + metres[width + 1]) / 4
check("an overview pixel is the mean of the four it covers", abs(overview[0] - mean) < 1e-3, f"{overview[0]} vs {mean}")

plain = gdal.Open(f"{work}/plain/main_cog.tif")
check("without --geo-origin: the map's own plane, 10 m pixels, no CRS",
      plain.GetGeoTransform() == (0.0, 10.0, 0.0, 0.0, 0.0, -10.0) and not plain.GetProjection(), f"{plain.GetGeoTransform()}")

a = gdal.Open(f"{work}/tiles/tile_0_0_main_cog.tif").GetGeoTransform()
b = gdal.Open(f"{work}/tiles/tile_600_0_main_cog.tif").GetGeoTransform()
c = gdal.Open(f"{work}/tiles/tile_0_600_main_cog.tif").GetGeoTransform()
check("neighbouring tiles meet edge to edge", abs(b[0] - (a[0] + 600 * a[1])) < 1e-6 and abs(c[3] - (a[3] + 600 * a[5])) < 1e-6 and a == gt,
      f"{a[0]:.3f} + 600 px → {b[0]:.3f}")
sys.exit(1 if failures else 0)
PY
