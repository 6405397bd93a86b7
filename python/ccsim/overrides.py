"""``--set KEY=VALUE`` on the command line: a dotted scenario key (as in a sweep grid:
``topology.loss``, ``flows[0].algorithm``, ``flows[1].params.p_max``) and a value written as in a
scenario file (``1%``, ``"20ms"``, ``0.01``, ``[0, 2]``, ``true``; a bare word is a string, so
``--set flows[0].algorithm=chd`` needs no quotes)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Iterable

import tomli_w

from ccsim.budget import DEFAULT_BUDGET, Budget
from ccsim.errors import ScenarioError
from ccsim.files import read_text_limited
from ccsim.scenario import Scenario
from ccsim.sweep.plan import SweepPlan, apply_override  # the sweep grid's path rules

__all__ = ["parse_override", "apply_overrides", "plan_with_overrides"]


def parse_override(text: str) -> tuple[str, Any]:
    """``"topology.loss=1%"`` -> ``("topology.loss", "1%")``; a TOML value where it parses as one."""
    key, sep, raw = str(text).partition("=")
    key, raw = key.strip(), raw.strip()
    if not sep or not key:
        raise ScenarioError("--set", f"expected KEY=VALUE (e.g. topology.loss=1%), got {text!r}")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw  # 1%, 20ms, chd: unit strings and names as written in a file without quotes
    return key, value


def plan_with_overrides(path: Path, overrides: Iterable[str], allow_outside_paths: bool = False,
                        budget: Budget | None = DEFAULT_BUDGET) -> SweepPlan:
    """The sweep plan in ``path`` with each override set at every point: a grid key with one value,
    so the sweep's tables show it like any swept parameter. A key the plan already sweeps is refused
    (the override would silently replace its values)."""
    text = read_text_limited(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(str(path), f"invalid TOML: {e}") from None
    grid = data.setdefault("grid", {})
    if not isinstance(grid, dict):
        raise ScenarioError("grid", "must be a table")
    applied = []
    for item in overrides:
        key, value = parse_override(item)
        if key in grid:
            raise ScenarioError(f"--set {key}", "the plan's grid sweeps this key; change it in the plan instead")
        grid[key] = [value]
        applied.append(f"# --set {key}={tomli_w.dumps({'v': value})[4:].strip()}")
    plan = SweepPlan.from_dict(data, base_dir=path.parent, source=str(path), allow_outside_paths=allow_outside_paths, budget=budget)
    plan.text = f"# {path} with command-line overrides:\n" + "\n".join(applied) + "\n" + tomli_w.dumps(data)
    return plan


_ALGORITHM = re.compile(r"^flows\[(\d+)\]\.algorithm$")


def apply_overrides(toml_text: str, overrides: Iterable[str], source: str = "<string>") -> tuple[Scenario, str, list[str]]:
    """The scenario of ``toml_text`` with every override applied (validated as a whole), the TOML
    text of the result, headed by the overrides, which reproduces the run from a file, and notes
    for the user.

    A flow whose algorithm an override changes loses the file's ``params``: they belong to the old
    algorithm (``halve_from`` of ``binomial`` is unknown to ``chd``), so they are dropped before any
    override is applied, and a note names them; ``flows[i].params...`` overrides given with the
    algorithm then set the new algorithm's parameters, in any order (docs/scenario-format.md)."""
    try:
        data = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(source, f"invalid TOML: {e}") from None
    parsed = [parse_override(text) for text in overrides]
    applied, notes = [], []
    flows = data.get("flows")
    for key, value in parsed:
        m = _ALGORITHM.match(key)
        flow = flows[int(m.group(1))] if m and isinstance(flows, list) and int(m.group(1)) < len(flows) else None
        if isinstance(flow, dict) and flow.get("params") and flow.get("algorithm") != value:
            dropped = ", ".join(map(str, flow.pop("params")))
            if not any(k == f"flows[{m.group(1)}].params" for k, _ in parsed):  # replaced as a whole: nothing to tell
                notes.append(f"--set {key}: the file's parameters for {flow.get('algorithm')} ({dropped}) are dropped")
    for key, value in parsed:
        try:
            apply_override(data, key, value)
        except ValueError as e:
            raise ScenarioError(f"--set {key}", str(e)) from None
        applied.append(f"# --set {key}={tomli_w.dumps({'v': value})[4:].strip()}")
    model = Scenario.from_dict(data)
    header = f"# {source} with command-line overrides:\n" + "\n".join(applied) + "\n"
    return model, header + tomli_w.dumps(data), notes
