"""The outcome of one run: tables, summaries and provenance, and its on-disk form.

A saved run is a directory::

    meta.json              scenario as resolved + its TOML, seed, versions, algorithm parameters,
                           run summary, engine stats, wall time
    flows.parquet          per flow per sample interval
    links.parquet          per link per sample interval
    cc_metrics.parquet     algorithm-internal state, long form (time_s, flow, name, value)
    summary.parquet        one row per flow over the measurement window
    link_summary.parquet   one row per link
    delay_hist.parquet     per-packet queueing delay (per link) and RTT (per TCP flow) distributions
                           over the summary window: one row per histogram bucket (value_ms, count)
    *.png                  default plots (ccsim.plots)
    .ccsim-files           the files above: what ``--force`` may replace (ccsim.outdir)

Parquet files depend only on the engine's output, so the same scenario and seed give byte-identical
files; anything that varies between identical runs (wall time) lives in meta.json only. A directory
is written under a temporary name and renamed into place, so a failure never leaves half a run.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import platform
import re
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq

from ccsim._version import __version__, installed_version
from ccsim.arguments import path_argument, table_name
from ccsim.engine import algorithms, built_revision, validate_resolved_json
from ccsim.errors import CcsimError, ScenarioError
from ccsim.files import read_record
from ccsim.lean_imports import Refuse
from ccsim.outdir import write_directory

if TYPE_CHECKING:
    import pandas as pd

    from ccsim.scenario import Scenario

__all__ = ["Result", "TABLE_FILES", "META_FILE"]

META_FILE = "meta.json"
# attribute / file stem -> key of the dict returned by _core.Simulation.finish()
TABLE_FILES: dict[str, str] = {
    "flows": "flows",
    "streams": "streams",
    "links": "links",
    "cc_metrics": "cc_metrics",
    "summary": "flow_summary",
    "link_summary": "link_summary",
    "delay_hist": "delay_hist",
}
# Tables a directory written by an older ccsim may lack: they load as empty tables.
OPTIONAL_TABLES = frozenset({"delay_hist"})
_PARQUET_OPTIONS = {"compression": "zstd", "use_dictionary": True, "write_statistics": True}


class Result:
    """Tables as pandas DataFrames (``flows``, ``streams``, ``links``, ``cc_metrics``, ``summary``, ``link_summary``, ``delay_hist``),
    ``run_summary`` (dict of scalars) and ``meta`` (dict: provenance)."""

    flows: pd.DataFrame
    streams: pd.DataFrame  # CBR / VoIP flows: received rate, one-way delay, jitter, loss per interval
    links: pd.DataFrame
    cc_metrics: pd.DataFrame
    summary: pd.DataFrame
    link_summary: pd.DataFrame
    delay_hist: pd.DataFrame  # what ("qdelay" / "rtt"), name (link / flow), value_ms, count: per-packet CDFs

    def __init__(self, tables: dict[str, pa.Table], run_summary: dict[str, Any], meta: dict[str, Any]) -> None:
        tables = {name: pa.table({}) for name in OPTIONAL_TABLES} | dict(tables)  # from an older ccsim or the testbed
        missing = set(TABLE_FILES) - set(tables)
        if missing:
            raise ValueError(f"missing tables: {sorted(missing)}")
        self._tables = dict(tables)
        # The DataFrames are made on first access (__getattr__): `ccsim run` and sweep workers never
        # import pandas (about 0.5 s of CPU) unless something reads a table as a DataFrame.
        self.run_summary = dict(run_summary)
        self.meta = dict(meta)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: a table not converted yet. Reads __dict__ directly so
        # that an instance without _tables (mid-unpickling) raises AttributeError, not recursion.
        tables = self.__dict__.get("_tables")
        if tables is not None and name in tables:
            frame = tables[name].to_pandas()
            setattr(self, name, frame)  # converted once; an assignment by the user replaces it as before
            return frame
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def table(self, name: str) -> pa.Table:
        """A table as written to its Parquet file (Arrow), without converting it to pandas."""
        return self._tables[table_name(name, self._tables)]

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_engine(
        cls,
        raw: dict[str, Any],
        scenario: "Scenario",
        *,
        toml_text: str,
        seed: int,
        wall_time_s: float,
        provenance: bool = True,
    ) -> "Result":
        """Wraps the dict returned by ``_core.Simulation.finish()`` (docs/internals.md).
        ``provenance=False``: ``git_revision`` and ``environment`` are None (not looked up)."""
        tables = {name: _engine_table(raw.get(key)) for name, key in TABLE_FILES.items()}
        meta = {
            "ccsim_version": __version__,
            "git_revision": git_revision() if provenance else None,
            "seed": seed,
            "scenario": json.loads(scenario.resolved_json),  # a fresh copy: the caller may change it
            "scenario_toml": toml_text,
            "algorithm_params": _algorithm_params(raw.get("params_used", [])),
            "engine_stats": raw.get("stats", {}),
            "wall_time_s": wall_time_s,
            "environment": environment() if provenance else None,
        }
        return cls(tables, raw.get("run_summary", {}), meta)

    @classmethod
    def load(cls, directory: str | Path) -> "Result":
        """Reads a directory written by :meth:`save`."""
        directory = path_argument(directory, "directory")
        meta_path, meta = read_record(directory, META_FILE, "scenario", "ccsim run")
        _check_meta_types(meta_path, meta)
        _check_recorded_scenario(meta_path, meta["scenario"])
        run_summary = meta.pop("run_summary", {})
        tables = {}
        for name in TABLE_FILES:
            path = directory / f"{name}.parquet"
            if name in OPTIONAL_TABLES and not path.exists():
                tables[name] = pa.table({})
                continue
            if not path.is_file():
                raise CcsimError(f"{path}: missing from the run directory")
            tables[name] = read_parquet(path)
        return cls(tables, run_summary, meta)

    # -- output -------------------------------------------------------------------------------------

    def save(self, directory: str | Path, force: bool = False, plots: bool = True) -> Path:
        """Writes the run directory atomically; an existing one is replaced only with ``force=True``."""
        return write_directory(path_argument(directory, "directory"), force, lambda staging: self._write(staging, plots), "run directory")

    def _write(self, directory: Path, plots: bool) -> None:
        meta = dict(self.meta, run_summary=self.run_summary)
        (directory / META_FILE).write_text(meta_json(meta) + "\n", encoding="utf-8")
        for name, table in self._tables.items():
            pq.write_table(table, directory / f"{name}.parquet", **_PARQUET_OPTIONS)
        if plots:
            from ccsim.plots import write_default_plots  # lazy: start-up time (matplotlib)

            write_default_plots(self, directory)

    # -- conveniences -------------------------------------------------------------------------------

    @property
    def scenario(self) -> dict[str, Any]:
        """The scenario as resolved (the JSON the engine read)."""
        return self.meta["scenario"]

    def _repr_html_(self) -> str:
        """Jupyter: the summary table, the bottleneck, Jain's index with its flows, goodput per flow."""
        from ccsim.notebook import result_html  # lazy: matplotlib

        return result_html(self)

    def __repr__(self) -> str:
        flows = self.scenario.get("flows", [])
        duration_s = self.scenario.get("duration_ns", 0) / 1e9
        return f"<ccsim.Result {len(flows)} flows, {duration_s:g} s, seed {self.meta.get('seed')}>"


# The type of each field of meta.json the front end reads (a field may be missing: an older ccsim
# or the testbed wrote the record).
_META_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "ccsim_version": ((str,), "a string"),
    "git_revision": ((str, type(None)), "a string or null"),
    "seed": ((int,), "an integer"),
    "scenario_toml": ((str,), "a string"),
    "algorithm_params": ((dict,), "a table"),
    "engine_stats": ((dict,), "a table"),
    "wall_time_s": ((int, float, type(None)), "a number or null"),
    "environment": ((dict, type(None)), "a table or null"),
    "run_summary": ((dict,), "a table"),
}


def _check_meta_types(meta_path: Path, meta: dict[str, Any]) -> None:
    for key, (types, what) in _META_TYPES.items():
        if key in meta and (isinstance(meta[key], bool) or not isinstance(meta[key], types)):
            raise CcsimError(f"{meta_path}: {key}: must be {what} (got {type(meta[key]).__name__})")
    for key, value in meta.get("run_summary", {}).items():  # every figure of the run: a number (NaN: null)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise CcsimError(f"{meta_path}: run_summary.{key}: must be a number or null (got {type(value).__name__})")


def _check_recorded_scenario(meta_path: Path, scenario: dict[str, Any]) -> None:
    """The resolved scenario of a ``meta.json`` (a file that may have been edited or shared), checked
    before anything reads it: a field of the wrong type is one CcsimError naming it, not a
    TypeError in a plot. The engine checks a document of its own format; one of another format (an
    older ccsim) has the keys the front end reads checked by type."""
    from ccsim.scenario import RESOLVED_FORMAT  # lazy: pydantic, for reading a record only

    if scenario.get("ccsim_resolved") == RESOLVED_FORMAT:
        try:
            validate_resolved_json(json.dumps(scenario))  # nothing to check with when there is no engine
        except ScenarioError as e:
            reason = re.sub(r" at line \d+ column \d+$", "", e.reason)
            raise CcsimError(f"{meta_path}: scenario.{e.field}: {reason}") from None
        return
    for key in ("duration_ns", "sample_interval_ns", "measure_start_ns", "measure_end_ns"):
        value = scenario.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int):
            raise CcsimError(f"{meta_path}: scenario.{key}: must be an integer (got {type(value).__name__})")
    flows = scenario.get("flows", [])
    if not isinstance(flows, list):
        raise CcsimError(f"{meta_path}: scenario.flows: must be an array")
    for i, flow in enumerate(flows):
        if not isinstance(flow, dict) or not isinstance(flow.get("name", ""), str):
            raise CcsimError(f"{meta_path}: scenario.flows[{i}]: must be a table with a string name")


def _engine_table(value: Any) -> pa.Table:
    """One table of ``finish()``: a ``pyarrow.RecordBatch`` (the engine hands its tables over through
    the Arrow C data interface, crates/ccsim-py), or a dict column -> list (a hand-made result);
    None (a table the engine did not produce: no stream flows, an older engine) is empty."""
    if value is None:
        return pa.table({})
    if isinstance(value, pa.RecordBatch):
        return pa.Table.from_batches([value])
    return pa.table(dict(value))


def defer_pandas_in_pyarrow() -> None:
    """Stops pyarrow importing pandas (about 0.5 s of CPU) to build or write a table.

    pyarrow asks "is pandas installed?" the first time it converts any Python value (``pa.table``,
    ``pa.array``) so as to recognise DataFrames, and answers it by importing pandas. Asked while
    ``import pandas`` fails, it records "no pandas" for those checks, and imports pandas for real
    the first time something needs it (``to_pandas``). Only for processes that ccsim owns (the CLI,
    sweep workers): there no code passes a DataFrame to pyarrow before converting a table to one; a
    library user's process is never changed. A no-op once pandas has been imported.
    """
    if "pandas" in sys.modules:
        return
    blocker = Refuse("pandas", "dateutil")  # dateutil: probed alongside (10 ms), pandas imports it itself
    sys.meta_path.insert(0, blocker)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(blocker)


def read_parquet(path: Path) -> pa.Table:
    """A Parquet table; a truncated or foreign file is one line, not an Arrow traceback."""
    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError, ValueError) as e:
        reason = str(e).splitlines()[0] if str(e) else e.__class__.__name__
        raise CcsimError(f"{path}: not a readable Parquet file ({reason})") from None


def meta_json(meta: dict[str, Any]) -> str:
    """``meta.json``'s text: indented by two, except that each flow of the resolved scenario and
    each flow's entry of ``algorithm_params`` is one line. A 100,000-flow run is millions of values,
    which Python's indenting encoder (pure Python) took over ten seconds to write; one line per flow
    is its C encoder's, and as easy to read. The resolved document has no NaN or infinity (the
    engine read it as JSON), so it needs no :func:`json_safe`; an algorithm's entry goes through it
    only when the C encoder refuses it (a parameter that is not finite)."""
    encode = json.JSONEncoder(allow_nan=False).encode  # one encoder: the C one, made once
    marker = f"one-line-{uuid.uuid4().hex}"  # stands in for a long container while the rest is indented
    lines: dict[str, str] = {}
    scenario = meta.get("scenario")
    flows = scenario.get("flows") if isinstance(scenario, dict) else None
    if isinstance(flows, list) and flows:
        meta = dict(meta, scenario=dict(scenario, flows=f"{marker}-flows"))
        lines[f"{marker}-flows"] = "[\n" + ",\n".join("      " + encode(flow) for flow in flows) + "\n    ]"
    params = meta.get("algorithm_params")
    if isinstance(params, dict) and params and all(isinstance(k, str) for k in params):
        meta = dict(meta, algorithm_params=f"{marker}-params")
        lines[f"{marker}-params"] = "{\n" + ",\n".join(f"    {encode(k)}: {_one_line(v, encode)}" for k, v in params.items()) + "\n  }"
    text = json.dumps(json_safe(meta), indent=2)
    for key, replacement in lines.items():
        text = text.replace(f'"{key}"', replacement, 1)
    return text


def _one_line(value: Any, encode: Callable[[Any], str]) -> str:
    try:
        return encode(value)
    except ValueError:  # NaN or infinity: null, as json_safe writes them
        return encode(json_safe(value))


# The run summary's counts: the engine hands every value over as a float (1.0 flows, 6538.0 events);
# shown to people and in `ccsim run --json` they are integers.
RUN_SUMMARY_COUNTS = frozenset({"flows", "jain_flows", "bottleneck_link", "bottleneck_drops_queue", "bottleneck_drops_random",
                                "events", "bottleneck_packets"})


def run_summary_shown(run_summary: dict[str, Any]) -> dict[str, Any]:
    """``run_summary`` with its counts as integers (where they are whole numbers; NaN stays)."""
    return {key: int(value) if key in RUN_SUMMARY_COUNTS and isinstance(value, float) and value.is_integer() else value
            for key, value in run_summary.items()}


def bottleneck_name(run_summary: dict[str, Any], link_names: list[str]) -> str | None:
    """The name of the link ``run_summary["bottleneck_link"]`` designates (its row in the link
    summary), or None."""
    row = run_summary.get("bottleneck_link")
    if isinstance(row, (int, float)) and not isinstance(row, bool) and math.isfinite(row) and 0 <= int(row) < len(link_names):
        return str(link_names[int(row)])
    return None


def json_safe(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null rather than as invalid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


_DEPENDENCIES = ("numpy", "pandas", "pyarrow", "matplotlib", "pydantic", "click", "rich", "tomli-w")


def environment() -> dict[str, Any]:
    """Where the run was made: host, OS, machine, Python and the versions of the packages ccsim
    depends on (provenance: a figure redrawn a year later can say what produced its numbers).
    Looked up once per process (each package's version scans the installed distributions: about
    20 ms, which was a quarter of a small sweep run); a fresh copy each call."""
    return copy.deepcopy(_environment())


@functools.cache
def _environment() -> dict[str, Any]:
    packages = {name: installed_version(name) for name in _DEPENDENCIES}
    return {
        "host": socket.gethostname(),
        "os": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "packages": packages,
    }


def git_revision() -> str | None:
    """The commit of the ccsim source tree this code runs from (``-dirty`` if modified); for an
    installed wheel (no source tree), the commit built into the extension; else None."""
    return _source_tree_revision() or built_revision()


@functools.cache
def _source_tree_revision() -> str | None:
    # Once per process: the code this process imported is what runs, whatever happens to the
    # tree later. One git command (the commit and whether tracked files changed), the top of the
    # tree found by looking for its .git here, not by asking git: each git process is CPU that a
    # small run pays.
    top = _source_tree_top(Path(__file__).resolve().parent)
    if top is None:
        return None
    try:
        status = subprocess.run(
            ["git", "-C", str(top), "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if status.returncode != 0:
        return None
    lines = status.stdout.splitlines()
    commit = next((line.split()[2] for line in lines if line.startswith("# branch.oid ") and len(line.split()) == 3), None)
    if commit is None or commit == "(initial)":  # no commit yet
        return None
    dirty = any(line and not line.startswith("#") for line in lines)
    return commit + ("-dirty" if dirty else "")


def _source_tree_top(here: Path) -> Path | None:
    """The work tree holding ``here`` (the nearest directory with a ``.git``: a directory, or a
    file in a linked work tree), if it is ccsim's own: an installed wheel may sit inside another
    repository, whose commit says nothing about ccsim."""
    for directory in (here, *here.parents):
        if (directory / ".git").exists():
            return directory if (directory / "crates" / "ccsim-core").is_dir() else None
    return None


def _algorithm_params(params_used: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per flow: the algorithm and every parameter it ran with, typed, as the engine reports them."""
    return {p["flow"]: {"algorithm": p["algorithm"], "params": dict(p["params"])} for p in params_used}
