"""Checks of the arguments of the public Python API: a wrong type or an impossible value is one
:class:`~ccsim.errors.ArgumentError` naming the argument and the reason (``path: must be a file path
(str or pathlib.Path); got int``), never a bare ``TypeError``/``AttributeError`` from deep inside
pathlib or tomllib (docs/safety.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ccsim.errors import ArgumentError

__all__ = ["path_argument", "text_argument", "table_name", "kind_of"]


def kind_of(value: Any) -> str:
    """The type name shown in a refusal (``int``, ``NoneType``)."""
    return type(value).__name__


def path_argument(value: Any, name: str) -> Path:
    """``value`` as a Path: a ``str`` or an ``os.PathLike`` giving a ``str``, without a NUL byte (no
    file name holds one; the OS call would fail with a bare ValueError)."""
    if not isinstance(value, (str, os.PathLike)):
        raise ArgumentError(f"{name}: must be a file path (str or pathlib.Path); got {kind_of(value)}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise ArgumentError(f"{name}: must be a file path given as text, not {kind_of(text)}")
    if "\0" in text:
        raise ArgumentError(f"{name}: contains a NUL byte, which no file name can hold")
    return Path(text)


def text_argument(value: Any, name: str, what: str = "text") -> str:
    """``value`` if it is a ``str`` (TOML text, a label)."""
    if not isinstance(value, str):
        raise ArgumentError(f"{name}: must be {what} (str); got {kind_of(value)}")
    return value


def table_name(value: Any, tables: Any) -> str:
    """``value`` if it names one of ``tables`` (``Result.table("summary")``)."""
    if not isinstance(value, str) or value not in tables:
        raise ArgumentError(f"name: no table {value!r} (tables: {', '.join(tables)})")
    return value
