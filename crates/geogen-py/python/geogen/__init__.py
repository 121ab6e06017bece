"""geogen for Python: compile a GeoGen Script once, render any rectangle of its terrain into a
NumPy array.

    >>> import geogen
    >>> script = geogen.Script.from_file("examples/island.ggs")
    >>> heights = script.render(0, 0, 512, 512, seed=7)        # float32, shape (512, 512)
    >>> samples = script.render_r16(0, 0, 512, 512, seed=7)    # uint16, as `--format r16`

A render is the CLI's ``geogen render --origin X,Y --size WxH --scale S --seed N -p NAME=VALUE
--map-size WxH``, bit for bit: any rectangle equals the same pixels of a larger render, on every
machine and thread count. Renders release the GIL, so threads (or Dask's threaded scheduler)
render at once. Errors are :class:`GeogenError` with the GGE code, line and column.
"""

import numpy as _numpy

from . import _geogen
from ._errors import GeogenArgumentError, GeogenError, GeogenFileError
from ._geogen import EXAMPLE_ISLAND, RENDER_SCALE_MAX, RENDER_SCALE_MIN, Script, __version__


def colored(heights: "_numpy.typing.ArrayLike") -> "_numpy.ndarray":
    """The colored preview of ``geogen render --format colored``: water blues below 0, greens,
    browns and white above. Takes heights of shape (h, w) (any float array, or anything NumPy
    reads as one) and returns uint8 RGB of shape (h, w, 3)."""
    return _geogen.colored(_numpy.asarray(heights, dtype=_numpy.float32))


__all__ = [
    "EXAMPLE_ISLAND",
    "RENDER_SCALE_MAX",
    "RENDER_SCALE_MIN",
    "GeogenArgumentError",
    "GeogenError",
    "GeogenFileError",
    "Script",
    "__version__",
    "colored",
]
