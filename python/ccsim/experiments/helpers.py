"""Helpers for experiment modules: a scenario with overrides applied, rows of a sweep table."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from ccsim.errors import CcsimError
from ccsim.scenario import Scenario
from ccsim.text import sanitise_figure

__all__ = ["scenario_with", "rows_at", "pyplot", "save_figure"]

_STEP = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def scenario_with(base: Scenario, overrides: dict[str, Any]) -> Scenario:
    """``base`` with each override applied: keys are dotted paths as in a sweep grid
    (``topology.loss``, ``flows[0].algorithm``, ``topology.queue``), values as written in TOML."""
    data = tomllib.loads(base.to_toml())
    for path, value in overrides.items():
        _set_path(data, path, value)
    return Scenario.from_dict(data)


def _set_path(data: dict[str, Any], path: str, value: Any) -> None:
    steps: list[str | int] = []
    for part in path.split("."):
        m = _STEP.match(part)
        if not m:
            raise CcsimError(f"{path}: not an override path (expected e.g. topology.loss or flows[0].algorithm)")
        steps.append(m.group(1))
        steps.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    node: Any = data
    for step in steps[:-1]:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise CcsimError(f"{path}: index {step} is out of range")
            node = node[step]
        else:
            node = node.setdefault(step, {})
    last = steps[-1]
    if isinstance(last, int) and (not isinstance(node, list) or last >= len(node)):
        raise CcsimError(f"{path}: index {last} is out of range")
    node[last] = value


def rows_at(frame: Any, column: str, value: Any) -> Any:
    """Rows of ``frame`` whose ``column`` equals ``value`` (floats compared with a tolerance)."""
    if column not in frame:
        raise KeyError(f"column {column!r} not in the sweep results")
    if isinstance(value, float):
        return frame[np.isclose(frame[column].astype(float), value, rtol=1e-9, atol=1e-12)]
    return frame[frame[column] == value]


def pyplot() -> Any:
    """matplotlib's pyplot on the non-interactive Agg backend, for an experiment's figures."""
    import matplotlib  # lazy: start-up time (matplotlib), only when figures are drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above

    return plt


def save_figure(fig: Any, out_dir: Path, filename: str, dpi: float | None = None) -> Path:
    """Lays out ``fig``, writes it to ``out_dir / filename`` (at ``dpi``, matplotlib's default when
    None), closes it, and returns the path."""
    sanitise_figure(fig)  # user strings (flow names) as every figure shows them (ccsim.text)
    fig.tight_layout()
    path = out_dir / filename
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path
