"""Type information for the Rust extension ``ccsim._core`` (crates/ccsim-py). Errors are raised as
the named exceptions of :mod:`ccsim.errors` (``ScenarioError``, ``ConservationError``)."""

from typing import Any, TypedDict

import pyarrow as pa

__version__: str
#: The git commit the extension was built from (``-dirty`` if modified), None outside a checkout.
GIT_REVISION: str | None
#: The version of the resolved scenario document this engine reads (``ccsim_resolved``).
RESOLVED_FORMAT: int

ParamValue = bool | float | str

class ParamInfo(TypedDict):
    name: str
    unit: str
    default: ParamValue
    range: str
    kind: str  # "number" | "integer" | "bool" | "choice"
    doc: str

class AlgorithmInfo(TypedDict):
    name: str
    summary: str
    reference: str
    params: list[ParamInfo]

class ParamsUsed(TypedDict):
    flow: str
    algorithm: str
    params: dict[str, ParamValue]

class RunStats(TypedDict):
    events: int
    bottleneck_packets: int
    finish_wall_s: float

class FinishResult(TypedDict):
    # Each table a record batch handed over through the Arrow C data interface (numbers not copied).
    flows: pa.RecordBatch
    streams: pa.RecordBatch
    cc_metrics: pa.RecordBatch
    links: pa.RecordBatch
    flow_summary: pa.RecordBatch
    link_summary: pa.RecordBatch
    delay_hist: pa.RecordBatch
    run_summary: dict[str, float]
    stats: RunStats
    params_used: list[ParamsUsed]

class Simulation:
    """A simulation built from a resolved scenario document (JSON, docs/resolved-scenario.md) and a seed."""

    def __init__(self, scenario_json: str, seed: int) -> None: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def duration_ns(self) -> int: ...
    def estimate_cost(self) -> dict[str, Any]: ...
    def set_memory_limit(self, limit_bytes: float | None, front_end_bytes_per_cell: float) -> None: ...
    def set_event_limit(self, events: int | None, field: str) -> None: ...
    def run_until(self, t_ns: int) -> None: ...
    def finish(self) -> FinishResult: ...

class ArrowExport:
    """A table on its way to pyarrow (the Arrow PyCapsule interface); ``finish`` imports it."""

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]: ...

def algorithms() -> list[AlgorithmInfo]: ...
def validate_resolved(scenario_json: str) -> None: ...
def resolved_schema() -> str: ...
