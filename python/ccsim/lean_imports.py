"""Keeping pyarrow from importing numpy and pandas in processes ccsim owns (the CLI, sweep workers).

``import pyarrow`` imports numpy (about 0.1-0.15 s of CPU, a quarter of a small ``ccsim run``) and
its first conversion of a Python value imports pandas (about 0.5 s). Both are optional to pyarrow:
asked while the import fails, it records "not installed" and goes on without them. Only for a
process whose tables never become NumPy arrays or DataFrames (``ccsim run --no-plots`` without web
transfers or ``--json``): there pyarrow then never initialises its NumPy bridge, so ``to_numpy`` and
``to_pandas`` would fail in that process. A library user's process is never changed.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["import_pyarrow_without_numpy", "numpy_bridge_missing", "Refuse"]

_imported_without_numpy = False


class Refuse:
    """An import hook (``sys.meta_path``) under which importing ``names`` or their submodules raises
    ModuleNotFoundError, as if they were not installed."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} (deferred by ccsim)", name=name)
        return None


def import_pyarrow_without_numpy() -> bool:
    """Imports pyarrow as if numpy were not installed; False (and nothing done) if pyarrow or numpy
    has been imported already."""
    if "pyarrow" in sys.modules or "numpy" in sys.modules:
        return False
    global _imported_without_numpy
    blocker = Refuse("numpy")
    sys.meta_path.insert(0, blocker)
    try:
        import pyarrow  # noqa: F401  # lazy: the point of this module
    finally:
        sys.meta_path.remove(blocker)
    _imported_without_numpy = True
    return True


def numpy_bridge_missing() -> bool:
    """True in a process whose pyarrow was imported without numpy (:func:`import_pyarrow_without_numpy`),
    where ``to_numpy`` and ``to_pandas`` must not be called (pyarrow 26 crashes the process)."""
    return _imported_without_numpy
