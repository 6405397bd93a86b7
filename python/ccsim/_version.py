"""``ccsim.__version__``, in a module of its own so that any module can import it without importing
the package ``ccsim`` (whose ``__init__`` imports modules back)."""

from __future__ import annotations

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("ccsim")
except _metadata.PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"
