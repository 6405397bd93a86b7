"""A sweep plan: a base scenario, a grid (or a list) of overrides, repetitions and the seed rule.

A plan (docs/sweeps.md)::

    [sweep]
    base = "single_flow.toml"       # relative to the plan file; or an inline [base] table
    repetitions = 5
    seed = 1                        # repetition r of every point runs with seed + r

    [grid]
    "topology.loss" = [0.0, 0.001, 0.01]
    "flows[0].algorithm" = ["newreno", "chd"]

:class:`SweepPlan` validates every point before anything runs and names each point and run
(``p000-<hash>``, ``p000-<hash>-r00``); running it is ``ccsim.sweep.execution``'s job.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import tomli_w

from ccsim._version import __version__
from ccsim.budget import DEFAULT_BUDGET, Budget, check, check_sweep_size, estimate_simulation
from ccsim.arguments import kind_of, path_argument, text_argument
from ccsim.engine import build_simulation, known_algorithms
from ccsim.errors import ArgumentError, ScenarioError
from ccsim.files import inside, read_text_limited
from ccsim.scenario import Scenario

__all__ = ["SweepPlan", "SweepPoint", "SweepRun", "SEED_RULE", "parse_path", "apply_override"]

SEED_RULE = "seed = plan seed + repetition (the same seeds at every point: common random numbers)"
_PLAN_KEYS = ("sweep", "base", "grid", "point")
_SWEEP_KEYS = ("base", "repetitions", "seed", "name", "description")
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
    # limits of the plan's size and of each run's cost (docs/safety.md); None lifts them
    budget: Budget | None = field(default=DEFAULT_BUDGET, repr=False, compare=False)
    _points: list[SweepPoint] = field(default_factory=list, init=False, repr=False, compare=False)
    _scenarios: dict[str, Scenario] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.base, Scenario):  # a Scenario object: its document, as a file would hold it
            self.base = tomllib.loads(self.base.to_toml())
        self._validate()

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_toml(cls, path: str | Path, allow_outside_paths: bool = False, budget: Budget | None = DEFAULT_BUDGET) -> "SweepPlan":
        """The plan in file ``path``; its ``base`` must lie inside the plan's directory unless
        ``allow_outside_paths`` (a shared plan must not read ``/etc/passwd`` or ``../../x``). A plan
        of more runs than ``budget`` allows, or with a run over it, is refused (``None`` lifts it)."""
        path = path_argument(path, "path")
        text = read_text_limited(path)
        return cls.from_toml_str(text, base_dir=path.parent, source=str(path), allow_outside_paths=allow_outside_paths, budget=budget)

    @classmethod
    def from_toml_str(cls, text: str, base_dir: str | Path | None = None, source: str = "<string>", allow_outside_paths: bool = False,
                      budget: Budget | None = DEFAULT_BUDGET) -> "SweepPlan":
        text_argument(text, "text", "TOML text")
        text_argument(source, "source", "a name for the text")
        if base_dir is not None:
            base_dir = path_argument(base_dir, "base_dir")
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(source, f"invalid TOML: {e}") from None
        except RecursionError:
            raise ScenarioError(source, "invalid TOML: nested too deeply") from None
        plan = cls.from_dict(data, base_dir=base_dir, source=source if source != "<string>" else None, allow_outside_paths=allow_outside_paths,
                             budget=budget)
        plan.text = text
        return plan

    @classmethod
    def from_dict(cls, data: dict[str, Any], base_dir: str | Path | None = None, source: str | None = None, allow_outside_paths: bool = True,
                  budget: Budget | None = DEFAULT_BUDGET) -> "SweepPlan":
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
            if "\0" in base_ref:
                raise ScenarioError("sweep.base", "not a file name: it contains a NUL byte")
            base_path = Path(base_ref)
            if not base_path.is_absolute() and base_dir is not None:
                base_path = Path(base_dir) / base_path
            if not allow_outside_paths and not inside(base_path, Path(base_dir if base_dir is not None else ".")):
                raise ScenarioError("sweep.base", f"{base_ref}: outside the plan's directory (pass --allow-outside-paths to permit it)")
            try:
                base = tomllib.loads(read_text_limited(base_path))
            except ScenarioError as e:
                raise ScenarioError("sweep.base", f"{base_path}: {e.reason}") from None
            except tomllib.TOMLDecodeError as e:
                raise ScenarioError("sweep.base", f"{base_path}: invalid TOML: {e}") from None
            except RecursionError:
                raise ScenarioError("sweep.base", f"{base_path}: invalid TOML: nested too deeply") from None
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
                budget=budget,
            )
        except ScenarioError as e:
            if e.field == "base" and base_field == "sweep.base":  # the base file itself is invalid
                raise ScenarioError("sweep.base", f"{base_ref}: {e.reason}") from None
            raise

    # -- validation ---------------------------------------------------------------------------------

    def _validate(self) -> None:
        if self.budget is not None and not isinstance(self.budget, Budget):
            raise ArgumentError(f"budget: must be a ccsim.Budget or None; got {kind_of(self.budget)}")
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
                if not isinstance(values, list) or not values:
                    raise ScenarioError(f'grid."{path}"', "must be a non-empty array of values")
            # before any value is checked (a deep copy of the base each) or the product expanded:
            # a key of 10^6 values, or 8 keys of 10 values, is refused in microseconds
            check_sweep_size(math.prod(len(v) for v in self.grid.values()), reps, self.budget, "grid")
            for path, values in self.grid.items():
                label = f'grid."{path}"'
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
            check_sweep_size(len(self.explicit_points or []), reps, self.budget, "point")
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
        seen: dict[bytes, str] = {}
        for index, (overrides, label, blame) in enumerate(zip(combos, labels, blames)):
            scenario = self._scenario_for(overrides, label, blame)
            digest = hashlib.sha256(canonical_text(scenario).encode()).digest()
            # Two points are the same scenario when their whole canonical documents are: the full
            # SHA-256 stands for the text (a collision is 2^-128 likely at 2^64 points), never the
            # 32 bits of the point id, which collide at 1 % of 10,000 points.
            if digest in seen:
                raise ScenarioError(label, f"gives the same scenario as {seen[digest]}")
            seen[digest] = label
            point_id = f"p{index:0{width}d}-{digest.hex()[:POINT_HASH_DIGITS]}"
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
            _engine_check(scenario, self.budget)
        except ValueError as e:  # ScenarioError is a ValueError too
            where = getattr(e, "field", "") or ""
            kind = type(e) if isinstance(e, ScenarioError) else ScenarioError  # a BudgetError stays one
            for path, plan_field in blame.items():
                if where and (where == path or where.startswith((path + ".", path + "["))):
                    others = [f"{k}={json.dumps(v)}" for k, v in overrides.items() if k != path]
                    context = f" (with {', '.join(others)})" if others else ""
                    raise kind(plan_field, f"{e}{context}") from None
            raise kind(label, str(e)) from None
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
        return tomli_w.dumps(self.to_dict())

    def resolved(self) -> dict[str, Any]:
        """What ``sweep.json`` records."""
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


def _engine_check(scenario: Scenario, budget: Budget | None) -> None:
    """Let the engine validate what only it knows (algorithm parameter names and ranges), and check
    the run's estimated cost against ``budget``."""
    if known_algorithms() is None:
        return
    check(estimate_simulation(build_simulation(scenario, scenario.run.seed)), scenario, budget)


# Hex digits of the scenario's SHA-256 in a point id (``p003-1a2b3c4d``): a name for people and part
# files, unique with the index before it; equality of points compares the whole hash, not these.
POINT_HASH_DIGITS = 8


def canonical_text(scenario: Scenario) -> str:
    """The point's resolved scenario as canonical JSON (sorted keys, no spaces): two points are the
    same scenario exactly when their texts are equal."""
    return json.dumps(scenario.resolve(), sort_keys=True, separators=(",", ":"))
