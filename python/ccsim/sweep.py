"""Parameter sweeps: a base scenario, a grid of overrides, repetitions; one Parquet dataset out.

A plan (docs/sweeps.md)::

    [sweep]
    base = "single_flow.toml"       # relative to the plan file; or an inline [base] table
    repetitions = 5
    seed = 1                        # repetition r of every point runs with seed + r

    [grid]
    "topology.loss" = [0.0, 0.001, 0.01]
    "flows[0].algorithm" = ["newreno", "chd"]

``run_sweep(plan, out_dir)`` runs every (point, repetition) on a local process pool or a Dask cluster,
writes one ``parts/<run_id>.parquet`` per finished run (atomically: that is what ``resume`` looks at),
then consolidates ``flows``, ``links``, ``runs`` and ``summary`` Parquet files. Rows are sorted by
run id and hold no wall-clock values, so the files do not depend on execution order or on where the
runs executed.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple

from ccsim.errors import CcsimError, OutputExistsError, ScenarioError
from ccsim.result import json_safe
from ccsim.scenario import Scenario

__all__ = [
    "SweepPlan",
    "SweepPoint",
    "SweepRun",
    "SweepResult",
    "run_sweep",
    "load_sweep",
    "execute_run",
    "SEED_RULE",
]

SEED_RULE = "seed = plan seed + repetition (the same seeds at every point: common random numbers)"
PLAN_FILE = "plan.toml"
SWEEP_FILE = "sweep.json"
PARTS_DIR = "parts"
TABLES = ("flows", "links", "runs", "summary")
_PLAN_KEYS = ("sweep", "base", "grid", "point")
_SWEEP_KEYS = ("base", "repetitions", "seed", "name", "description")
_PARQUET_OPTIONS = {"compression": "zstd", "use_dictionary": True, "write_statistics": True}
_MAX_SEED = 2**64


class SweepPoint(NamedTuple):
    point_id: str
    overrides: dict[str, Any]


class SweepRun(NamedTuple):
    run_id: str
    point_id: str
    repetition: int
    seed: int
    scenario: Scenario


# ---------------------------------------------------------------------------------------------------
# Override paths: "topology.loss", "flows[0].params.p_max"

_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def parse_path(path: str) -> list[str | int]:
    """``"flows[0].params.p_max"`` -> ``["flows", 0, "params", "p_max"]``; ValueError if malformed."""
    if not isinstance(path, str) or not path:
        raise ValueError("an override path must be a non-empty string such as \"topology.loss\"")
    parts: list[str | int] = []
    for segment in path.split("."):
        m = _SEGMENT.match(segment)
        if not m:
            raise ValueError("malformed path (write keys separated by dots, list items as [i], e.g. \"flows[0].algorithm\")")
        parts.append(m.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return parts


def apply_override(data: dict[str, Any], path: str, value: Any) -> None:
    """Sets ``path`` in the scenario dict ``data`` (in place); missing tables are created. A list index
    beyond the base scenario's list, or a path through a non-table, is a ValueError."""
    parts = parse_path(path)
    node: Any = data
    where = ""
    for i, key in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(key, int):
            if not isinstance(node, list):
                raise ValueError(f"{where} is not an array in the base scenario")
            if key >= len(node):
                raise ValueError(f"{where} has {len(node)} entr{'y' if len(node) == 1 else 'ies'} in the base scenario, no [{key}]")
            if last:
                node[key] = copy.deepcopy(value)
            else:
                node = node[key]
            where += f"[{key}]"
        else:
            if not isinstance(node, dict):
                raise ValueError(f"{where} is not a table in the base scenario")
            if last:
                node[key] = copy.deepcopy(value)
            else:
                if key not in node:
                    node[key] = [] if isinstance(parts[i + 1], int) else {}
                node = node[key]
            where += f".{key}" if where else key


# ---------------------------------------------------------------------------------------------------
# The plan


@dataclass
class SweepPlan:
    """A sweep: base scenario (as the dict the user wrote), grid or explicit points, repetitions, seed.

    Build with :meth:`from_toml`, :meth:`from_toml_str` or :meth:`from_dict`; they validate every point
    (and raise a one-line ScenarioError naming the plan field) before anything runs.
    """

    base: dict[str, Any]
    grid: dict[str, list[Any]] | None = None
    explicit_points: list[dict[str, Any]] | None = None
    repetitions: int = 1
    seed: int | None = None
    name: str | None = None
    description: str | None = None
    source: str | None = None  # the plan file, when read from one
    text: str | None = None  # the plan's TOML text, when read from one
    _points: list[SweepPoint] = field(default_factory=list, init=False, repr=False, compare=False)
    _scenarios: dict[str, Scenario] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.base, Scenario):  # a Scenario object: its document, as a file would hold it
            self.base = tomllib.loads(self.base.to_toml())
        self._validate()

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_toml(cls, path: str | Path) -> "SweepPlan":
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ScenarioError(str(path), "no such file") from None
        except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
            raise ScenarioError(str(path), f"cannot read: {e.__class__.__name__}") from None
        return cls.from_toml_str(text, base_dir=path.parent, source=str(path))

    @classmethod
    def from_toml_str(cls, text: str, base_dir: str | Path | None = None, source: str = "<string>") -> "SweepPlan":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(source, f"invalid TOML: {e}") from None
        plan = cls.from_dict(data, base_dir=base_dir, source=source if source != "<string>" else None)
        plan.text = text
        return plan

    @classmethod
    def from_dict(cls, data: dict[str, Any], base_dir: str | Path | None = None, source: str | None = None) -> "SweepPlan":
        """A plan from its parsed TOML document (``[sweep]``, ``[base]``, ``[grid]``, ``[[point]]``)."""
        if not isinstance(data, dict):
            raise ScenarioError("", "a sweep plan must be a table")
        for key in data:
            if key not in _PLAN_KEYS:
                raise ScenarioError(str(key), f"unknown key (known: {', '.join(_PLAN_KEYS)})")
        sweep = data.get("sweep", {})
        if not isinstance(sweep, dict):
            raise ScenarioError("sweep", "must be a table")
        for key in sweep:
            if key not in _SWEEP_KEYS:
                raise ScenarioError(f"sweep.{key}", f"unknown key (known: {', '.join(_SWEEP_KEYS)})")
        base_ref = sweep.get("base")
        inline = data.get("base")
        if (base_ref is None) == (inline is None):
            raise ScenarioError("sweep.base", "give either base = \"file.toml\" in [sweep] or an inline [base] table (exactly one)")
        if inline is not None:
            if not isinstance(inline, dict):
                raise ScenarioError("base", "must be a table holding a whole scenario")
            base = copy.deepcopy(inline)
            base_field = "base"
        else:
            if not isinstance(base_ref, str):
                raise ScenarioError("sweep.base", f"must be a file name (got {base_ref!r})")
            base_path = Path(base_ref)
            if not base_path.is_absolute() and base_dir is not None:
                base_path = Path(base_dir) / base_path
            try:
                base = tomllib.loads(base_path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise ScenarioError("sweep.base", f"{base_path}: no such file") from None
            except (OSError, UnicodeDecodeError) as e:
                raise ScenarioError("sweep.base", f"{base_path}: cannot read: {e.__class__.__name__}") from None
            except tomllib.TOMLDecodeError as e:
                raise ScenarioError("sweep.base", f"{base_path}: invalid TOML: {e}") from None
            base_field = "sweep.base"
        grid = data.get("grid")
        points = data.get("point")
        if grid is not None and points is not None:
            raise ScenarioError("grid", "give either [grid] or [[point]] entries, not both")
        if grid is not None and not isinstance(grid, dict):
            raise ScenarioError("grid", "must be a table mapping override paths to arrays of values")
        if points is not None and (not isinstance(points, list) or not all(isinstance(p, dict) for p in points)):
            raise ScenarioError("point", "must be an array of tables ([[point]] entries)")
        repetitions = sweep.get("repetitions", 1)
        seed = sweep.get("seed")
        for key in ("name", "description"):
            if key in sweep and not isinstance(sweep[key], str):
                raise ScenarioError(f"sweep.{key}", "must be a string")
        try:
            return cls(
                base=base,
                grid=grid,
                explicit_points=points,
                repetitions=repetitions,
                seed=seed,
                name=sweep.get("name"),
                description=sweep.get("description"),
                source=source,
            )
        except ScenarioError as e:
            if e.field == "base" and base_field == "sweep.base":  # the base file itself is invalid
                raise ScenarioError("sweep.base", f"{base_ref}: {e.reason}") from None
            raise

    # -- validation ---------------------------------------------------------------------------------

    def _validate(self) -> None:
        reps = self.repetitions
        if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
            raise ScenarioError("sweep.repetitions", f"must be an integer >= 1 (got {reps!r})")
        try:
            base_model = Scenario.from_dict(copy.deepcopy(self.base))
        except ScenarioError as e:
            raise ScenarioError("base", str(e)) from None
        if self.seed is None:
            self.seed = base_model.run.seed
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed or seed + reps - 1 >= _MAX_SEED:
            raise ScenarioError("sweep.seed", f"must be an integer with 0 <= seed and seed + repetitions - 1 < 2^64 (got {seed!r})")

        if self.grid is None and self.explicit_points is None:
            self.grid = {}
        if self.grid is not None:
            if not isinstance(self.grid, dict):
                raise ScenarioError("grid", "must be a table mapping override paths to arrays of values")
            self.grid = {path: list(v) if isinstance(v, tuple) else v for path, v in self.grid.items()}
            for path, values in self.grid.items():
                label = f'grid."{path}"'
                if not isinstance(values, list) or not values:
                    raise ScenarioError(label, "must be a non-empty array of values")
                self._check_path(path, label)
                for i, value in enumerate(values):  # where the path leads: independent of the other values
                    try:
                        apply_override(copy.deepcopy(self.base), path, value)
                    except ValueError as e:
                        raise ScenarioError(f"{label}[{i}]", str(e)) from None
            keys = list(self.grid)
            combos, labels, blames = [], [], []
            for index, picks in enumerate(itertools.product(*(range(len(self.grid[k])) for k in keys))):
                overrides = {k: self.grid[k][i] for k, i in zip(keys, picks)}
                shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in overrides.items())
                combos.append(overrides)
                labels.append(f"grid point {index} ({shown})" if shown else f"grid point {index}")
                blames.append({k: f'grid."{k}"[{i}]' for k, i in zip(keys, picks)})
        else:
            combos, labels, blames = [], [], []
            for n, point in enumerate(self.explicit_points or []):
                for path in point:
                    self._check_path(path, f'point[{n}]."{path}"')
                combos.append(dict(point))
                labels.append(f"point[{n}]")
                blames.append({path: f'point[{n}]."{path}"' for path in point})
            if not combos:
                raise ScenarioError("point", "needs at least one [[point]] entry")

        width = max(3, len(str(len(combos) - 1)))
        self._points, self._scenarios = [], {}
        seen: dict[str, str] = {}
        for index, (overrides, label, blame) in enumerate(zip(combos, labels, blames)):
            scenario = self._scenario_for(overrides, label, blame)
            digest = _digest(scenario)
            if digest in seen:
                raise ScenarioError(label, f"gives the same scenario as {seen[digest]}")
            seen[digest] = label
            point_id = f"p{index:0{width}d}-{digest}"
            self._points.append(SweepPoint(point_id, overrides))
            self._scenarios[point_id] = scenario

    def _check_path(self, path: Any, label: str) -> None:
        try:
            parts = parse_path(path)
        except ValueError as e:
            raise ScenarioError(label, str(e)) from None
        if parts == ["run", "seed"]:
            raise ScenarioError(label, "the seed is set per repetition (sweep.seed, sweep.repetitions), not in the grid")

    def _scenario_for(self, overrides: dict[str, Any], label: str, blame: dict[str, str]) -> Scenario:
        """The point's validated scenario. An error located at (or under) an overridden key is blamed
        on that plan field (``grid."topology.loss"[2]``, with the point's other overrides for
        context); any other error on the point as a whole (``label``)."""
        data = copy.deepcopy(self.base)
        try:
            for path, value in overrides.items():
                apply_override(data, path, value)
            scenario = Scenario.from_dict(data)
            _engine_check(scenario)
        except ValueError as e:  # ScenarioError is a ValueError too
            where = getattr(e, "field", "") or ""
            for path, plan_field in blame.items():
                if where and (where == path or where.startswith((path + ".", path + "["))):
                    others = [f"{k}={json.dumps(v)}" for k, v in overrides.items() if k != path]
                    context = f" (with {', '.join(others)})" if others else ""
                    raise ScenarioError(plan_field, f"{e}{context}") from None
            raise ScenarioError(label, str(e)) from None
        return scenario

    # -- the plan's points and runs ----------------------------------------------------------------

    @property
    def parameters(self) -> list[str]:
        """The swept override paths, in plan order (the swept columns of every table)."""
        if self.grid is not None:
            return list(self.grid)
        names: list[str] = []
        for point in self.explicit_points or []:
            names.extend(k for k in point if k not in names)
        return names

    @property
    def base_scenario(self) -> Scenario:
        return Scenario.from_dict(copy.deepcopy(self.base))

    def points(self) -> list[SweepPoint]:
        """(point_id, overrides) in grid order (the last grid key varies fastest). A point id is
        ``p<index>-<hash>``: the hash covers the point's whole resolved scenario, so editing the plan
        or the base scenario never lets ``resume`` reuse runs of a different scenario."""
        return list(self._points)

    def scenario(self, point_id: str) -> Scenario:
        return self._scenarios[point_id]

    def seed_for(self, repetition: int) -> int:
        """The seed rule (docs/sweeps.md): plan seed + repetition, whatever the point."""
        assert self.seed is not None
        return self.seed + repetition

    def runs(self) -> list[SweepRun]:
        """(run_id, point_id, repetition, seed, Scenario) for every point and repetition, sorted by run_id."""
        width = max(2, len(str(self.repetitions - 1)))
        return [
            SweepRun(f"{pid}-r{rep:0{width}d}", pid, rep, self.seed_for(rep), self._scenarios[pid])
            for pid, _ in self._points
            for rep in range(self.repetitions)
        ]

    # -- serialisation -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A self-contained plan document (inline [base]), loadable with :meth:`from_dict`."""
        sweep: dict[str, Any] = {"repetitions": self.repetitions, "seed": self.seed}
        if self.name is not None:
            sweep["name"] = self.name
        if self.description is not None:
            sweep["description"] = self.description
        data: dict[str, Any] = {"sweep": sweep, "base": copy.deepcopy(self.base)}
        if self.grid is not None:
            data["grid"] = copy.deepcopy(self.grid)
        else:
            data["point"] = copy.deepcopy(self.explicit_points)
        return data

    def to_toml(self) -> str:
        import tomli_w

        return tomli_w.dumps(self.to_dict())

    def resolved(self) -> dict[str, Any]:
        """What ``sweep.json`` records."""
        from ccsim import __version__

        return {
            "ccsim_version": __version__,
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "base_toml": self.base_scenario.to_toml(),
            "plan": self.to_dict(),
            "parameters": self.parameters,
            "grid": self.grid,
            "points": [{"point_id": pid, "overrides": ov} for pid, ov in self._points],
            "repetitions": self.repetitions,
            "seed": self.seed,
            "seed_rule": SEED_RULE,
            "runs": [
                {"run_id": r.run_id, "point_id": r.point_id, "repetition": r.repetition, "seed": r.seed}
                for r in self.runs()
            ],
        }

    def __repr__(self) -> str:
        return f"<SweepPlan {len(self._points)} points x {self.repetitions} repetitions, parameters {self.parameters}>"


def _engine_check(scenario: Scenario) -> None:
    """Let the engine validate what only it knows (algorithm parameter names and ranges)."""
    from ccsim.scenario import known_algorithms

    if known_algorithms() is None:
        return
    from ccsim.runner import build_simulation

    build_simulation(scenario, scenario.run.seed)


def _digest(scenario: Scenario) -> str:
    text = json.dumps(scenario.resolve(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


# ---------------------------------------------------------------------------------------------------
# One run (executes in a worker process: a local pool or a Dask worker)


def execute_run(run_id: str, scenario_toml: str, seed: int) -> dict[str, Any]:
    """Runs one (scenario, seed) and returns plain data: ``flows`` and ``links`` (Arrow tables of the
    per-flow and per-link summaries) and ``run`` (the run summary dict). No wall-clock values."""
    import pyarrow as pa

    from ccsim.runner import simulate

    scenario = Scenario.from_toml_str(scenario_toml)
    result = simulate(scenario, scenario_toml, seed=seed)
    return {
        "run_id": run_id,
        "seed": seed,
        "flows": pa.Table.from_pandas(result.summary, preserve_index=False).replace_schema_metadata(None),
        "links": pa.Table.from_pandas(result.link_summary, preserve_index=False).replace_schema_metadata(None),
        "run": {k: v for k, v in result.run_summary.items()},
    }


# ---------------------------------------------------------------------------------------------------
# Part files: one per finished run, one row, the tables nested as list<struct>


def _nest(table: Any) -> Any:
    import pyarrow as pa

    columns = [column.combine_chunks() for column in table.columns]
    struct = pa.StructArray.from_arrays(columns, fields=list(table.schema))
    return pa.ListArray.from_arrays(pa.array([0, table.num_rows], type=pa.int32()), struct)


def _write_part(parts: Path, run: SweepRun, output: dict[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    run_table = pa.Table.from_pylist([output["run"]])
    table = pa.table({
        "run_id": [run.run_id],
        "point_id": [run.point_id],
        "repetition": pa.array([run.repetition], type=pa.int64()),
        "seed": pa.array([run.seed], type=pa.uint64()),
        "flows": _nest(output["flows"]),
        "links": _nest(output["links"]),
        "run": _nest(run_table),
    })
    final = parts / f"{run.run_id}.parquet"
    tmp = parts / f".{run.run_id}.{os.getpid()}.tmp"
    pq.write_table(table, tmp, **_PARQUET_OPTIONS)
    os.replace(tmp, final)


def _read_part(path: Path) -> dict[str, Any] | None:
    """The part's tables, or None if it cannot be read (a resume runs it again)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
        row = {name: table.column(name)[0] for name in ("run_id", "point_id", "repetition", "seed")}
        out = {k: v.as_py() for k, v in row.items()}
        for name in ("flows", "links", "run"):
            values = table.column(name).combine_chunks().flatten()
            out[name] = pa.Table.from_struct_array(values) if len(values.type) else pa.table({"_": [None] * len(values)}).drop(["_"])
        return out
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
        for name in TABLES:
            setattr(self, name, tables[name].to_pandas() if hasattr(tables[name], "to_pandas") else tables[name])

    def __repr__(self) -> str:
        return f"<ccsim.SweepResult {len(self.runs)} runs of {len(self.plan.points())} points in {self.directory}>"


def load_sweep(directory: str | Path) -> SweepResult:
    """Reads a sweep directory written by :func:`run_sweep`."""
    import pyarrow.parquet as pq

    directory = Path(directory)
    meta_path = directory / SWEEP_FILE
    if not meta_path.is_file():
        raise CcsimError(f"{directory}: not a sweep directory (no {SWEEP_FILE})")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    plan = SweepPlan.from_dict(meta["plan"], source=meta.get("source"))
    tables = {}
    for name in TABLES:
        path = directory / f"{name}.parquet"
        if not path.is_file():
            raise CcsimError(f"{path}: missing (an unfinished sweep? run it again with --resume)")
        tables[name] = pq.read_table(path)
    return SweepResult(plan, directory, tables)


# ---------------------------------------------------------------------------------------------------
# Running a sweep


def run_sweep(
    plan: SweepPlan | str | Path,
    out_dir: str | Path,
    jobs: int | None = None,
    cluster: Any = None,
    resume: bool = False,
    progress: bool = True,
    force: bool = False,
    on_run: Callable[[str], None] | None = None,
) -> SweepResult:
    """Runs every (point, repetition) of ``plan`` not yet done and consolidates the results in ``out_dir``.

    ``jobs``: local worker processes (default: the CPU count; 1 runs in this process). ``cluster``: a
    Dask scheduler address (``"tcp://host:port"``) or a ``dask.distributed.Client``; then the runs go
    there and ``jobs`` is ignored. ``resume``: continue an existing sweep directory, running only the
    runs without a part file. ``force``: replace an existing sweep directory. ``on_run(run_id)`` is
    called in this process as each run finishes. Returns the :class:`SweepResult`; its ``executed``
    lists the run ids this call ran.
    """
    if not isinstance(plan, SweepPlan):
        plan = SweepPlan.from_toml(plan)
    out = Path(out_dir)
    if resume and force:
        raise CcsimError("give resume or force, not both")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise CcsimError(f"jobs: must be an integer >= 1 (got {jobs!r})")
    client, own_client = _connect(cluster) if cluster is not None else (None, False)
    try:
        return _run_sweep(plan, out, jobs, client, resume, progress, force, on_run)
    finally:
        if own_client:
            client.close()


def _run_sweep(
    plan: SweepPlan,
    out: Path,
    jobs: int | None,
    client: Any,
    resume: bool,
    progress: bool,
    force: bool,
    on_run: Callable[[str], None] | None,
) -> SweepResult:
    _prepare_dir(out, resume=resume, force=force)
    (out / PLAN_FILE).write_text(plan.text if plan.text is not None else plan.to_toml(), encoding="utf-8")
    _atomic_write_text(out / SWEEP_FILE, json.dumps(json_safe(plan.resolved()), indent=2) + "\n")
    parts = out / PARTS_DIR
    parts.mkdir(exist_ok=True)
    for stale in parts.glob(".*.tmp"):
        stale.unlink(missing_ok=True)
    for name in TABLES:  # consolidated files describe a finished sweep; rewritten at the end
        (out / f"{name}.parquet").unlink(missing_ok=True)

    all_runs = plan.runs()
    todo = [r for r in all_runs if not _part_done(parts / f"{r.run_id}.parquet", r)]
    executed: list[str] = []
    failures: list[tuple[str, BaseException]] = []

    def finished(run: SweepRun, output: dict[str, Any] | None, error: BaseException | None) -> None:
        if error is not None:
            failures.append((run.run_id, error))
        else:
            _write_part(parts, run, output)  # type: ignore[arg-type]
            executed.append(run.run_id)
            if on_run is not None:
                on_run(run.run_id)

    with _SweepProgress(progress, total=len(all_runs), done=len(all_runs) - len(todo)) as bar:
        def record(run: SweepRun, output: dict[str, Any] | None, error: BaseException | None) -> None:
            finished(run, output, error)
            bar.advance()

        if todo:
            if client is not None:
                _run_dask(todo, client, record)
            elif (jobs or os.cpu_count() or 1) == 1 or len(todo) == 1:
                _run_inline(todo, record)
            else:
                _run_pool(todo, jobs or os.cpu_count() or 1, record)

    if failures:
        run_id, error = sorted(failures, key=lambda f: f[0])[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise CcsimError(f"run {run_id} failed{more}: {error}; the finished runs are kept, rerun with --resume")
    tables = consolidate(plan, out)
    return SweepResult(plan, out, tables, executed=sorted(executed))


def _prepare_dir(out: Path, resume: bool, force: bool) -> None:
    if out.exists():
        if not out.is_dir():
            raise OutputExistsError(f"{out}: exists and is not a directory")
        is_sweep = (out / SWEEP_FILE).is_file()
        empty = not any(out.iterdir())
        if empty:
            return
        if resume:
            if not is_sweep:
                raise OutputExistsError(f"{out}: exists and is not a sweep directory; cannot resume it")
            return
        if not force:
            raise OutputExistsError(f"{out}: already exists (use --resume to continue it or --force to replace it)")
        if not is_sweep:
            raise OutputExistsError(f"{out}: exists and is not a sweep directory; refusing to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def _part_done(path: Path, run: SweepRun) -> bool:
    if not path.is_file():
        return False
    part = _read_part(path)
    return part is not None and part["run_id"] == run.run_id and part["seed"] == run.seed


def _run_inline(todo: list[SweepRun], record: Callable[..., None]) -> None:
    for run in todo:
        try:
            output = execute_run(run.run_id, run.scenario.to_toml(), run.seed)
        except CcsimError as e:
            record(run, None, e)
        else:
            record(run, output, None)


def _run_pool(todo: list[SweepRun], jobs: int, record: Callable[..., None]) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn, not fork: the parent may hold threads (a progress bar, a Dask client) that fork would copy
    # in a locked state.
    context = multiprocessing.get_context("spawn")
    executor = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=context)
    try:
        futures = {executor.submit(execute_run, r.run_id, r.scenario.to_toml(), r.seed): r for r in todo}
        for future in as_completed(futures):
            run = futures[future]
            error = future.exception()
            if error is not None and not isinstance(error, CcsimError):
                raise error
            record(run, None if error else future.result(), error)
    except BaseException:
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)


DASK_CONNECT_TIMEOUT = "10s"


def _connect(cluster: Any) -> tuple[Any, bool]:
    """(client, whether we own it) for a scheduler address or a dask.distributed.Client."""
    try:
        from distributed import Client
    except ImportError:
        raise CcsimError("running on a Dask cluster needs dask.distributed: pip install 'ccsim[cluster]'") from None
    if isinstance(cluster, Client):
        return cluster, False
    if not isinstance(cluster, str):
        raise CcsimError(f"cluster: must be a scheduler address such as tcp://host:8786 or a dask.distributed.Client (got {cluster!r})")
    try:
        return Client(cluster, timeout=DASK_CONNECT_TIMEOUT), True
    except (OSError, TimeoutError, ValueError) as e:
        raise CcsimError(f"cannot connect to the Dask scheduler at {cluster}: {e}") from None


def _run_dask(todo: list[SweepRun], client: Any, record: Callable[..., None]) -> None:
    from distributed import as_completed

    futures = []
    try:
        by_key = {}
        for r in todo:
            future = client.submit(execute_run, r.run_id, r.scenario.to_toml(), r.seed, pure=False, retries=0)
            by_key[future.key] = r
            futures.append(future)
        for future in as_completed(futures):
            run = by_key[future.key]
            if future.status == "error":
                error = future.exception()
                if not isinstance(error, CcsimError):
                    raise error
                record(run, None, error)
            else:
                record(run, future.result(), None)
    except BaseException:
        for f in futures:
            f.cancel()
        raise


class _SweepProgress:
    """A rich progress bar on stderr counting runs (finished / total, including resumed ones)."""

    def __init__(self, enabled: bool, total: int, done: int) -> None:
        self._bar: Any = None
        from rich.console import Console

        console = Console(stderr=True)
        if enabled and console.is_terminal:  # no bar in logs and pipes
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("runs"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self._task = self._bar.add_task("runs", total=total, completed=done)

    def __enter__(self) -> "_SweepProgress":
        if self._bar is not None:
            self._bar.start()
        return self

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


# ---------------------------------------------------------------------------------------------------
# Consolidation


def consolidate(plan: SweepPlan, out: Path) -> dict[str, Any]:
    """Reads every part of ``plan`` in ``out/parts`` and writes flows/links/runs/summary Parquet."""
    import pyarrow as pa

    parts = out / PARTS_DIR
    runs = plan.runs()
    swept = _swept_columns(plan)
    pieces: dict[str, list[Any]] = {"flows": [], "links": [], "runs": []}
    for run in runs:
        part = _read_part(parts / f"{run.run_id}.parquet")
        if part is None:
            raise CcsimError(f"{parts / (run.run_id + '.parquet')}: missing or unreadable; rerun with --resume")
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
    import pyarrow as pa

    return pa.concat_tables(tables, promote_options="permissive").combine_chunks() if tables else pa.table({})


def _swept_columns(plan: SweepPlan) -> dict[str, dict[str, tuple[Any, Any]]]:
    """Per point: swept column -> (Arrow type, value). One type per column across the plan: the
    values' own type if they agree (ints with floats become floats), else their JSON text."""
    import pyarrow as pa

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
    import pyarrow as pa

    from ccsim.sweep_stats import describe

    swept = _swept_columns(plan)
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
                stats = describe([data[metric][i] for i in idx])
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
    import pyarrow.parquet as pq

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table.replace_schema_metadata(None), tmp, **_PARQUET_OPTIONS)
    os.replace(tmp, path)


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def point_table(plan: SweepPlan) -> Iterable[dict[str, Any]]:
    """One dict per point: point_id and the swept values (for printing)."""
    swept = _swept_columns(plan)
    for pid, _ in plan.points():
        yield {"point_id": pid, **{k: v for k, (_, v) in swept[pid].items()}}


def print_sweep_summary(result: SweepResult, console: Any) -> None:
    """Per point: the swept values, mean total goodput with its 95 % interval, bottleneck utilisation."""
    from rich.table import Table

    plan = result.plan
    summary = result.summary
    run_rows = summary[summary["scope"] == "run"]
    n = int(run_rows["n"].max()) if len(run_rows) else 0
    table = Table(
        title=f"sweep: {len(plan.points())} points x {plan.repetitions} repetitions (seeds {plan.seed}..{plan.seed_for(plan.repetitions - 1)})",
        title_justify="left",
        caption=f"goodput of all flows: mean ± 95 % CI (t, n = {n})",
        caption_justify="left",
    )
    table.add_column("point", no_wrap=True)
    for path in plan.parameters:
        table.add_column(path, justify="right", no_wrap=True)
    table.add_column("goodput Mbit/s", justify="right", no_wrap=True)
    table.add_column("utilisation", justify="right", no_wrap=True)

    def stat(rows: Any, metric: str, column: str) -> float:
        hit = rows[rows["metric"] == metric]
        return float(hit[column].iloc[0]) if len(hit) else math.nan

    for point in point_table(plan):
        rows = run_rows[run_rows["point_id"] == point["point_id"]]
        mean = stat(rows, "total_goodput_bps", "mean")
        half = stat(rows, "total_goodput_bps", "ci95_high") - mean
        utilisation = stat(rows, "bottleneck_utilisation", "mean")
        goodput = "-" if math.isnan(mean) else f"{mean / 1e6:.3f}" + ("" if math.isnan(half) else f" ± {half / 1e6:.3f}")
        table.add_row(
            point["point_id"].split("-")[0],
            *[_show_value(point[p]) for p in plan.parameters],
            goodput,
            "-" if math.isnan(utilisation) else f"{utilisation * 100:.1f} %",
        )
    console.print(table)


def _show_value(value: Any) -> str:
    if value is None:
        return "(base)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
