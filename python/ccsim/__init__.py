"""ccsim: a packet-level TCP congestion-control simulator (Rust engine, Python front end).

    >>> import ccsim
    >>> result = ccsim.run("examples/single_flow.toml", seed=1)
    >>> result.summary            # one row per flow
    >>> result.save("runs/single_flow")

``run`` takes a file path or a Scenario, ``run_toml`` TOML text; both refuse a run whose estimated cost
is over the budget (``budget=None`` lifts it; docs/safety.md).

``run``, ``Result``, ``Scenario`` and ``algorithms`` are imported on first use (``run`` lives in ``ccsim.runner``:
a submodule named ``run`` would shadow the function), so ``import ccsim`` (and the
extension's own ``import ccsim.errors``) stays cheap: pydantic (the scenario models), pandas, pyarrow
and matplotlib load only when a scenario is read, a simulation is run or a result is read.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ccsim._version import __version__
from ccsim.errors import (
    ArgumentError,
    BudgetError,
    CcsimError,
    ConservationError,
    EngineError,
    OutputExistsError,
    ResourceError,
    ScenarioError,
    UnitError,
)

if TYPE_CHECKING:
    from ccsim.budget import Budget
    from ccsim.engine import algorithms
    from ccsim.result import Result
    from ccsim.runner import run, run_toml
    from ccsim.scenario import Scenario, load_scenario

__all__ = [
    "run",
    "run_toml",
    "Budget",
    "Scenario",
    "load_scenario",
    "Result",
    "algorithms",
    "CcsimError",
    "ScenarioError",
    "UnitError",
    "ConservationError",
    "OutputExistsError",
    "BudgetError",
    "ResourceError",
    "EngineError",
    "ArgumentError",
    "__version__",
]

_LAZY = {"run": "ccsim.runner", "run_toml": "ccsim.runner", "algorithms": "ccsim.engine", "Result": "ccsim.result",
         "Budget": "ccsim.budget", "Scenario": "ccsim.scenario", "load_scenario": "ccsim.scenario"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ccsim' has no attribute {name!r}")
