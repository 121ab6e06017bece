"""The exceptions geogen raises.

Every error geogen reports has a code (``GGE2202``), listed in geogen's docs/error-codes.md. The
native module raises these classes; they are plain Python exceptions, so they pickle, compare
and subclass like any other.
"""

from typing import Any, Dict, List, Optional


class GeogenError(Exception):
    """An error geogen reports: a script that does not compile or fails while it runs, a render
    refused (memory, size), or a bad setting.

    Attributes:
        code: the error code, e.g. ``"GGE2202"``.
        message: what went wrong, one line.
        line, column: where in the script (1-based), or None when the error points at no text
            (a bad argument, a file that cannot be read).
        hint: what to do about it, or None.
        file: the script's name (the ``name`` given to ``Script``, or the file's path).
        report: the error as geogen prints it: code, location, the source line with a caret,
            the hint; ``str(error)`` is this text.
        diagnostics: every error of the file (a syntax error rarely comes alone), as dicts with
            ``code``, ``message``, ``line``, ``column`` and ``hint``; the first is the one above.
        messages: what the script printed (``Print``) before a runtime error.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "GGE4000",
        line: Optional[int] = None,
        column: Optional[int] = None,
        hint: Optional[str] = None,
        file: Optional[str] = None,
        report: Optional[str] = None,
        diagnostics: Optional[List[Dict[str, Any]]] = None,
        messages: Optional[List[str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.line = line
        self.column = column
        self.hint = hint
        self.file = file
        self.report = report if report is not None else f"error[{code}]: {message}"
        if diagnostics is None:
            diagnostics = [{"code": code, "message": message, "line": line, "column": column, "hint": hint}]
        self.diagnostics = diagnostics
        self.messages = list(messages or [])

    def __str__(self) -> str:
        return self.report

    def __reduce__(self):  # type: ignore[override]
        # Keyword-only attributes survive pickling (to and from worker processes, e.g. Dask's).
        return (_rebuild, (type(self), self.message, self._fields()))

    def _fields(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
            "file": self.file,
            "report": self.report,
            "diagnostics": self.diagnostics,
            "messages": self.messages,
        }


def _rebuild(cls: type, message: str, fields: Dict[str, Any]) -> GeogenError:
    return cls(message, **fields)


class GeogenArgumentError(GeogenError, ValueError):
    """A bad setting of a render or a script (codes GGE4000 to GGE4003: an unknown map or
    parameter, a parameter value of the wrong type, a size, origin or scale outside what the
    script or geogen allows). Also a ``ValueError``."""


class GeogenFileError(GeogenError, OSError):
    """A script file that cannot be read (GGE4024). Also an ``OSError``."""
