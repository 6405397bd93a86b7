"""``ccsim.__version__``, in a module of its own so that any module can import it without importing
the package ``ccsim`` (whose ``__init__`` imports modules back), and :func:`installed_version`.

Versions are read from the installed distributions' ``<name>-<version>.dist-info`` directory names
along ``sys.path`` (the first one found, as ``importlib.metadata.version`` picks it), without
importing ``importlib.metadata``: that import (the e-mail parser, zipfile, csv) and its scan of the
distributions cost about 0.1 s of CPU, a fifth of a small ``ccsim run`` (docs/performance.md).
Anything unusual (an egg, a zipped path entry, no directory found) asks ``importlib.metadata``.
"""

from __future__ import annotations

import functools
import os
import re
import sys

__all__ = ["__version__", "installed_version"]

_SEPARATORS = re.compile(r"[-_.]+")


def _normalise(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


@functools.cache
def _dist_infos(entry: str) -> dict[str, str]:
    """Normalised distribution name -> version, from the ``*.dist-info`` directories in ``entry``."""
    found: dict[str, str] = {}
    try:
        names = os.listdir(entry or ".")
    except OSError:  # a zip file, a missing directory
        return found
    for name in names:
        if name.endswith(".dist-info") and "-" in name:
            dist, _, version = name[: -len(".dist-info")].partition("-")
            found.setdefault(_normalise(dist), version)
    return found


def installed_version(name: str) -> str | None:
    """The version of the installed distribution ``name`` (None if it is not installed)."""
    key = _normalise(name)
    for entry in sys.path:
        version = _dist_infos(entry).get(key)
        if version:
            return version
    from importlib import metadata  # lazy: see the module docstring

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


__version__ = installed_version("ccsim") or "0+unknown"  # "0+unknown": a source tree that was not installed
