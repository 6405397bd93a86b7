"""ccsim: a packet-level TCP congestion-control simulator (Rust engine, Python front end).

    >>> import ccsim
    >>> result = ccsim.run("examples/single_flow.toml", seed=1)
    >>> result.summary            # one row per flow
    >>> result.save("runs/single_flow")

``run``, ``Result`` and ``algorithms`` are imported on first use (``run`` lives in ``ccsim.runner``:
a submodule named ``run`` would shadow the function), so ``import ccsim`` (and the
extension's own ``import ccsim.errors``) stays cheap: pandas, pyarrow and matplotlib load only when a
simulation is run or a result is read.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from ccsim.errors import CcsimError, ConservationError, OutputExistsError, ScenarioError, UnitError
from ccsim.scenario import Scenario, load_scenario

if TYPE_CHECKING:
    from ccsim.result import Result
    from ccsim.runner import algorithms, run

try:
    __version__ = _metadata.version("ccsim")
except _metadata.PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"

__all__ = [
    "run",
    "Scenario",
    "load_scenario",
    "Result",
    "algorithms",
    "CcsimError",
    "ScenarioError",
    "UnitError",
    "ConservationError",
    "OutputExistsError",
    "__version__",
]

_LAZY = {"run": "ccsim.runner", "algorithms": "ccsim.runner", "Result": "ccsim.result"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ccsim' has no attribute {name!r}")
