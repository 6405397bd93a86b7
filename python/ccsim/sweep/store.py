"""A sweep directory on disk: the plan files, one part file per finished run, the Parquet dataset.

::

    plan.toml      the plan as given
    sweep.json     the plan resolved: points, runs, seeds, ccsim version
    parts/         <run_id>-s<seed>.parquet, one row per finished run (atomically: what ``resume`` looks at)
    flows.parquet  links.parquet  runs.parquet  summary.parquet   (consolidated at the end)

Rows are sorted by run id and hold no wall-clock values, so the files do not depend on execution
order or on where the runs executed.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from ccsim.budget import DEFAULT_BUDGET
from ccsim.arguments import path_argument, table_name
from ccsim.errors import CcsimError, OutputExistsError
from ccsim.files import read_json, read_record
from ccsim.outdir import LOCK_FILE, check_replaceable, record_files, remove_owned_files
from ccsim.result import json_safe, read_parquet
from ccsim.sweep.plan import SweepPlan, SweepRun
from ccsim.sweep_stats import describe, metric_range

__all__ = [
    "SweepResult",
    "load_sweep",
    "open_sweep_dir",
    "part_done",
    "part_path",
    "write_part",
    "part_table",
    "record_parts",
    "unpack_part",
    "consolidate",
    "summarize",
    "swept_columns",
    "PLAN_FILE",
    "SWEEP_FILE",
    "PARTS_DIR",
    "TABLES",
]

class PartKey(Protocol):
    """What names a run's part file: a SweepRun, or the task a worker gets (execution.RunTask)."""

    run_id: str
    point_id: str
    repetition: int
    seed: int


PLAN_FILE = "plan.toml"
SWEEP_FILE = "sweep.json"
PARTS_DIR = "parts"
TABLES = ("flows", "links", "runs", "summary")
_PARQUET_OPTIONS = {"compression": "zstd", "use_dictionary": True, "write_statistics": True}


# ---------------------------------------------------------------------------------------------------
# The directory


def open_sweep_dir(plan: SweepPlan, out: Path, resume: bool, force: bool) -> Path:
    """Makes ``out`` ready to run ``plan`` (fresh, resumed or replaced; see :func:`_prepare_dir`),
    writes ``plan.toml`` and ``sweep.json`` and returns the parts directory. The caller holds the
    directory's writer lock (:func:`ccsim.outdir.writer_lock`)."""
    _prepare_dir(plan, out, resume=resume, force=force)
    (out / PLAN_FILE).write_text(plan.text if plan.text is not None else plan.to_toml(), encoding="utf-8")
    _atomic_write_text(out / SWEEP_FILE, json.dumps(json_safe(plan.resolved()), indent=2) + "\n")
    parts = out / PARTS_DIR
    parts.mkdir(exist_ok=True)
    for stale in parts.glob(".*.tmp"):
        stale.unlink(missing_ok=True)
    for name in TABLES:  # consolidated files describe a finished sweep; rewritten at the end
        (out / f"{name}.parquet").unlink(missing_ok=True)
    record_files(out, [PLAN_FILE, SWEEP_FILE, *(f"{name}.parquet" for name in TABLES)], skip_known=True)
    return parts


def check_sweep_dir(out: Path, resume: bool, force: bool, plan: SweepPlan | None = None) -> None:
    """Raises OutputExistsError unless ``out`` may be written: free, empty, resumable (with ``plan``,
    when given) or replaceable."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise OutputExistsError(f"{out}: exists and is not a directory")
    if not any(p.name != LOCK_FILE for p in out.iterdir()):
        return
    if resume:
        if not (out / SWEEP_FILE).is_file():
            raise OutputExistsError(f"{out}: exists and is not a sweep directory; cannot resume it")
        if plan is not None:
            _check_same_plan(plan, out)
        return
    if not force:
        raise OutputExistsError(f"{out}: already exists (use --resume to continue it or --force to replace it)")
    if not (out / SWEEP_FILE).is_file():
        raise OutputExistsError(f"{out}: exists and is not a sweep directory; refusing to replace it")
    check_replaceable(out, "ccsim sweep")


def _prepare_dir(plan: SweepPlan, out: Path, resume: bool, force: bool) -> None:
    check_sweep_dir(out, resume, force, plan)  # again, now under the lock
    if out.exists() and force and not resume:
        remove_owned_files(out)
    out.mkdir(parents=True, exist_ok=True)


def _check_same_plan(plan: SweepPlan, out: Path) -> None:
    if _recorded_plan(out) != json.loads(json.dumps(json_safe(plan.to_dict()))):
        raise OutputExistsError(f"{out}: holds a different sweep plan; resume it with the plan it was started with (its plan.toml) or use --force")


def _recorded_plan(out: Path) -> Any:
    """The plan document ``sweep.json`` records (every sweep.json ccsim writes has one)."""
    meta = read_json(out / SWEEP_FILE)
    if not isinstance(meta, dict) or not isinstance(meta.get("plan"), dict):
        raise OutputExistsError(f"{out / SWEEP_FILE}: not a sweep record (no plan table); cannot resume this directory")
    return meta["plan"]


def part_path(parts: Path, run: PartKey) -> Path:
    """The part file of ``run``. Its name holds everything that makes the run distinct: the run id
    (point index, hash of the point's resolved scenario, repetition) and the seed, so two plans that
    differ only in their seed never share a part file."""
    return parts / f"{run.run_id}-s{run.seed}.parquet"


def part_done(path: Path, run: SweepRun) -> bool:
    if not path.is_file():
        return False
    part = _read_part(path)
    return part is not None and part["run_id"] == run.run_id and part["seed"] == run.seed


# ---------------------------------------------------------------------------------------------------
# Part files: one per finished run, one row, the tables nested as list<struct>


def _nest(table: Any) -> Any:
    columns = [column.combine_chunks() for column in table.columns]
    struct = pa.StructArray.from_arrays(columns, fields=list(table.schema))
    return pa.ListArray.from_arrays(pa.array([0, table.num_rows], type=pa.int32()), struct)


def part_table(run: PartKey, output: dict[str, Any]) -> pa.Table:
    """The one-row part table of a finished run: its ids and its flows/links/run tables nested."""
    run_table = pa.Table.from_pylist([output["run"]])
    return pa.table({
        "run_id": [run.run_id],
        "point_id": [run.point_id],
        "repetition": pa.array([run.repetition], type=pa.int64()),
        "seed": pa.array([run.seed], type=pa.uint64()),
        "flows": _nest(output["flows"]),
        "links": _nest(output["links"]),
        "run": _nest(run_table),
    })


def write_part(parts: Path, run: PartKey, output: dict[str, Any]) -> pa.Table:
    """Writes the part file of a finished run (atomically: a killed writer leaves at most a hidden
    ``.tmp`` file, which the next sweep on the directory removes) and returns its table. It runs
    where the run ran (a local worker) or in the sweep process (inline, Dask); the sweep process
    has listed the file in the directory's marker before the run started (:func:`record_parts`)."""
    table = part_table(run, output)
    _write_table(table, part_path(parts, run))
    return table


def record_parts(out: Path, runs: list[Any], resume: bool) -> None:
    """Lists the part files of ``runs`` in the marker of ``out`` before they are written, so that a
    part a worker has written is always one ``--force`` may replace, even if the sweep is killed
    before it hears of it. A name listed for a run that then failed names no file, which
    ``--force`` skips. One write for the whole sweep instead of one per run."""
    names = [f"{PARTS_DIR}/{part_path(out / PARTS_DIR, run).name}" for run in runs]
    record_files(out, names, skip_known=resume)


def unpack_part(table: pa.Table) -> dict[str, Any]:
    """A part table's ids (Python values) and its flows/links/run tables (Arrow)."""
    row = {name: table.column(name)[0] for name in ("run_id", "point_id", "repetition", "seed")}
    out: dict[str, Any] = {k: v.as_py() for k, v in row.items()}
    for name in ("flows", "links", "run"):
        out[name] = _unnest(table.column(name))
    return out


def _unnest(column: Any) -> pa.Table:
    """The table nested in a part's one-row list<struct> column. The list's child array as it is
    when the one list covers all of it (as :func:`_nest` makes it), which needs no pyarrow.compute
    (``flatten`` imports it: about 0.05 s of CPU for the sweep process)."""
    array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    offsets = array.offsets
    if len(array) == 1 and array.offset == 0 and offsets[0].as_py() == 0 and offsets[1].as_py() == len(array.values):
        values = array.values
    else:
        values = array.flatten()
    return pa.Table.from_struct_array(values) if len(values.type) else pa.table({"_": [None] * len(values)}).drop(["_"])


def _read_part(path: Path) -> dict[str, Any] | None:
    """The part's tables, or None if it cannot be read (a resume runs it again)."""
    try:
        with pq.ParquetFile(path) as part:  # one file: read_table's dataset layer costs ~10x (and imports pyarrow.dataset)
            table = part.read()
        return unpack_part(table)
    except Exception:  # noqa: BLE001 - a truncated or foreign file: run it again
        return None


# ---------------------------------------------------------------------------------------------------
# Results


class SweepResult:
    """A finished (or loaded) sweep: DataFrames ``flows``, ``links``, ``runs``, ``summary``; ``plan``;
    ``directory``; ``executed`` (run ids executed by the call that produced it; empty when loaded)."""

    def __init__(self, plan: SweepPlan, directory: Path, tables: dict[str, Any], executed: list[str] | None = None) -> None:
        self.plan = plan
        self.directory = Path(directory)
        self.executed = list(executed or [])
        # Arrow tables become DataFrames on first access (__getattr__): `ccsim sweep` prints its
        # summary from Arrow and never imports pandas (about 0.5 s of CPU).
        self._tables = {name: tables[name] for name in TABLES}
        for name, table in self._tables.items():
            if not isinstance(table, pa.Table):  # given as DataFrames already
                setattr(self, name, table)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: a table not converted yet (as ccsim.Result does).
        tables = self.__dict__.get("_tables")
        if tables is not None and name in tables:
            frame = tables[name].to_pandas()
            setattr(self, name, frame)
            return frame
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def table(self, name: str) -> Any:
        """A consolidated table as written to its Parquet file (Arrow, unless given as a DataFrame)."""
        return self._tables[table_name(name, self._tables)]

    def _repr_html_(self) -> str:
        """Jupyter: mean goodput with 95 % CIs per point, and goodput against the first swept parameter."""
        from ccsim.notebook import sweep_html  # lazy: matplotlib

        return sweep_html(self)

    def __repr__(self) -> str:
        runs = self._tables["runs"]
        n = runs.num_rows if isinstance(runs, pa.Table) else len(runs)
        return f"<ccsim.SweepResult {n} runs of {len(self.plan.points())} points in {self.directory}>"


def load_sweep(directory: str | Path) -> SweepResult:
    """Reads a sweep directory written by :func:`run_sweep`."""
    directory = path_argument(directory, "directory")
    meta_path, meta = read_record(directory, SWEEP_FILE, "plan", "sweep")
    # The runs are done, so their cost is not checked again; the plan's size is (a sweep.json is shared
    # like a plan, so its grid may not expand to more runs than it records, bounded by the file's size).
    runs = meta.get("runs")
    budget = replace(DEFAULT_BUDGET, max_events=math.inf, max_memory_bytes=math.inf,
                     max_sweep_runs=max(DEFAULT_BUDGET.max_sweep_runs, len(runs) if isinstance(runs, list) else 0))
    try:  # a sweep.json is shared like a plan: its base may not name a file outside the directory
        plan = SweepPlan.from_dict(meta["plan"], base_dir=directory, source=meta.get("source"), allow_outside_paths=False,
                                   budget=budget)
    except RecursionError:
        raise CcsimError(f"{meta_path}: plan: nested too deeply") from None
    tables = {}
    for name in TABLES:
        path = directory / f"{name}.parquet"
        if not path.is_file():
            raise CcsimError(f"{path}: missing (an unfinished sweep? run it again with --resume)")
        tables[name] = read_parquet(path)
    return SweepResult(plan, directory, tables)


# ---------------------------------------------------------------------------------------------------
# Consolidation


def consolidate(plan: SweepPlan, out: Path, finished: dict[str, pa.Table] | None = None) -> dict[str, Any]:
    """Writes flows/links/runs/summary Parquet from every run of ``plan``: the part tables of
    ``finished`` (run id -> the table its part file holds: the runs this sweep call ran, kept in
    memory) and, for the others (done by an earlier, resumed call), the part files in ``out/parts``."""
    parts = out / PARTS_DIR
    runs = plan.runs()
    swept = swept_columns(plan)
    finished = finished or {}
    pieces: dict[str, list[Any]] = {"flows": [], "links": [], "runs": []}
    for run in runs:
        kept = finished.get(run.run_id)
        part = unpack_part(kept) if kept is not None else _read_part(part_path(parts, run))
        if part is None:
            raise CcsimError(f"{part_path(parts, run)}: missing or unreadable; rerun with --resume")
        values = swept[run.point_id]
        for name, key in (("flows", "flows"), ("links", "links"), ("runs", "run")):
            table = part[key]
            n = table.num_rows
            ids = pa.table({
                "run_id": pa.array([run.run_id] * n, type=pa.string()),
                "point_id": pa.array([run.point_id] * n, type=pa.string()),
                "repetition": pa.array([run.repetition] * n, type=pa.int64()),
                "seed": pa.array([run.seed] * n, type=pa.uint64()),
            })
            for column, (typ, value) in values.items():
                ids = ids.append_column(column, pa.array([value] * n, type=typ))
            for i, column in enumerate(table.column_names):
                ids = ids.append_column(table.schema.field(i), table.column(i))
            pieces[name].append(ids)
    tables = {name: _concat(tabs) for name, tabs in pieces.items()}
    tables["summary"] = summarize(plan, tables)
    for name in TABLES:
        _write_table(tables[name], out / f"{name}.parquet")
    return tables


def _concat(tables: list[Any]) -> Any:
    return pa.concat_tables(tables, promote_options="permissive").combine_chunks() if tables else pa.table({})


def swept_columns(plan: SweepPlan) -> dict[str, dict[str, tuple[Any, Any]]]:
    """Per point: swept column -> (Arrow type, value). One type per column across the plan: the
    values' own type if they agree (ints with floats become floats), else their JSON text."""
    points = plan.points()
    columns: dict[str, tuple[Any, Callable[[Any], Any]]] = {}
    for path in plan.parameters:
        values = [ov[path] for _, ov in points if path in ov]
        kinds = {type(v) for v in values}
        if kinds <= {bool}:
            columns[path] = (pa.bool_(), lambda v: v)
        elif kinds <= {int}:
            columns[path] = (pa.int64(), lambda v: v)
        elif kinds <= {int, float}:
            columns[path] = (pa.float64(), lambda v: None if v is None else float(v))
        elif kinds <= {str}:
            columns[path] = (pa.string(), lambda v: v)
        else:
            columns[path] = (pa.string(), lambda v: None if v is None else (v if isinstance(v, str) else json.dumps(v, sort_keys=True)))
    return {
        pid: {path: (typ, conv(ov.get(path))) for path, (typ, conv) in columns.items()}
        for pid, ov in points
    }


def summarize(plan: SweepPlan, tables: dict[str, Any]) -> Any:
    """Long form: one row per (point, scope, name, metric) with n, mean, std, ci95_low, ci95_high,
    p20, p50, p80 over the repetitions. ``scope`` is ``flow`` (``name`` = flow name), ``link``
    (``name`` = link name) or ``run`` (``name`` empty)."""
    swept = swept_columns(plan)
    id_columns = {"run_id", "point_id", "repetition", "seed", *plan.parameters}
    rows: list[dict[str, Any]] = []
    for scope, table, name_col, skip in (
        ("flow", tables["flows"], "name", {"flow"}),
        ("link", tables["links"], "link", set()),
        ("run", tables["runs"], None, set()),
    ):
        if table.num_rows == 0:
            continue
        metrics = [
            f.name for f in table.schema
            if f.name not in id_columns and f.name not in skip and f.name != name_col
            and (pa.types.is_integer(f.type) or pa.types.is_floating(f.type))
        ]
        data = table.to_pydict()
        groups: dict[tuple[str, str], list[int]] = {}
        for i, pid in enumerate(data["point_id"]):
            key = (pid, "" if name_col is None else str(data[name_col][i]))
            groups.setdefault(key, []).append(i)
        order = {pid: k for k, (pid, _) in enumerate(plan.points())}
        for (pid, name), idx in sorted(groups.items(), key=lambda g: (order[g[0][0]], g[1][0])):
            for metric in metrics:
                stats = describe([data[metric][i] for i in idx], metric_range(metric))
                if stats["n"] == 0:
                    continue  # e.g. one-way delay columns of a TCP flow
                row = {"point_id": pid}
                row.update({col: value for col, (_, value) in swept[pid].items()})
                row.update(scope=scope, name=name, metric=metric)
                row.update(stats)
                rows.append(row)
    schema = pa.schema(
        [("point_id", pa.string())]
        + [(col, typ) for col, (typ, _) in (next(iter(swept.values())) if swept else {}).items()]
        + [("scope", pa.string()), ("name", pa.string()), ("metric", pa.string()), ("n", pa.int64())]
        + [(c, pa.float64()) for c in ("mean", "std", "ci95_low", "ci95_high", "p20", "p50", "p80")]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def _write_table(table: Any, path: Path) -> None:
    _atomic_write(path, lambda tmp: pq.write_table(table.replace_schema_metadata(None), tmp, **_PARQUET_OPTIONS))


def _atomic_write_text(path: Path, text: str) -> None:
    _atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _atomic_write(path: Path, write: Callable[[Path], Any]) -> None:
    """``write`` into a hidden temporary file next to ``path``, then rename it into place; a failure
    (a full disk) removes the temporary file and is one line naming ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise CcsimError(f"{path}: cannot write ({e.strerror or e}); the finished runs are kept, rerun with --resume") from None
