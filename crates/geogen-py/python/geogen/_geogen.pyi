"""Types of the native module (re-exported by ``geogen``)."""

from os import PathLike
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

EXAMPLE_ISLAND: str
RENDER_SCALE_MIN: float
RENDER_SCALE_MAX: float
__version__: str

_ParameterValue = Union[bool, int, float, str]
_MapSize = Union[int, Tuple[int, int]]

class Script:
    """A compiled GeoGen Script (or Height-Slang program)."""

    def __init__(self, text: Union[str, bytes], *, name: str = "script.ggs", dialect: Optional[str] = None) -> None:
        """Compiles ``text``. ``name`` is the file name errors show; a name ending in ``.hs``, or
        ``dialect="hs"`` (or a Height-Slang dialect such as ``"picogen-2008"``), reads it as
        Height-Slang; ``dialect="ggs"`` as GeoGen Script. Raises GeogenError."""

    @staticmethod
    def from_file(path: Union[str, "PathLike[str]"], *, dialect: Optional[str] = None) -> "Script":
        """Reads and compiles a script file (Height-Slang for ``.hs`` unless ``dialect`` says
        otherwise). Raises GeogenFileError (GGE4024) when it cannot be read."""

    @property
    def name(self) -> str: ...
    @property
    def dialect(self) -> str:
        """"ggs", or the Height-Slang dialect ("documented", "picogen-2008")."""

    def info(self) -> Dict[str, Any]:
        """What the script declares, as ``geogen info --json``: name, description, author, width,
        height, parameters, maps."""

    def render(
        self,
        x: int,
        y: int,
        w: int,
        h: int,
        *,
        map: str = "main",
        scale: float = 1.0,
        seed: Union[int, str, None] = None,
        params: Optional[Mapping[str, _ParameterValue]] = None,
        map_size: Optional[_MapSize] = None,
        threads: Optional[int] = None,
        memory_limit: Optional[int] = None,
    ) -> npt.NDArray[np.float32]:
        """The heights of the ``w`` x ``h`` pixels at (``x``, ``y``), shape (h, w)."""

    def render_r16(
        self,
        x: int,
        y: int,
        w: int,
        h: int,
        *,
        map: str = "main",
        scale: float = 1.0,
        seed: Union[int, str, None] = None,
        params: Optional[Mapping[str, _ParameterValue]] = None,
        map_size: Optional[_MapSize] = None,
        threads: Optional[int] = None,
        memory_limit: Optional[int] = None,
    ) -> npt.NDArray[np.uint16]:
        """``render`` quantised as ``--format r16``: round(h x 32767) + 32767, shape (h, w)."""

def colored(heights: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """The colored preview of ``--format colored``: RGB of shape (h, w, 3) for heights of shape (h, w)."""
