"""The fluid model of the coexistence paper: equilibria of N delay-based AIMD flows and their stability.

Budzisz, Stanojevic, Schlote, Shorten, Baker, "On the fair coexistence of loss- and delay-based TCP"
(2009; [Budzisz09] in ``docs/bibliography.md``), Section IV, Eqs (1)-(2), Theorem 1 and Fig. 6. N flows
with base round-trip times RTT_i share a bottleneck of C packets/s; with queueing delay delta every
flow has the same window W = C / sum_i 1/(RTT_i + delta), and the windows stand still where the
per-packet back-off rate equals

    p*(delta) = (2 / C^2) (sum_i 1 / (RTT_i + delta))^2            (the locus of equilibria)

The flows back off with the per-packet probability p = g(delta) (the two-region function of HD,
``ccsim-cc`` ``delay_probability.rs``), so the equilibria are the crossings of g and p*. Below p* the
windows grow (delta rises), above it they shrink (Section IV, proof of Theorem 1); hence a crossing
where g - p* goes from negative to positive is stable (the low-delay delta_1*), one where it goes from
positive to negative unstable (delta_2*). Theorem 1: two equilibria if p*(delta_th) < p_max, none if
p*(delta_th) > p_max.

HD's thresholds default to the engine's catalogue values (``ccsim.algorithms()``), overridden by the
caller's params, so the model and the simulator read one set of numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ccsim.engine import algorithms
from ccsim.errors import CcsimError

__all__ = ["HdProbability", "p_star", "Equilibrium", "equilibria", "plot_equilibria"]


@dataclass(frozen=True)
class HdProbability:
    """g(delta) of HD (seconds in, probability out): 0 below q_min, rising to p_max at q_th (region A),
    falling to 0 at q_max (region B), 0 above. ``q_max`` is the flows' delta_max (paper: 100 ms)."""

    p_max: float
    q_min: float
    q_th: float
    q_max: float

    @classmethod
    def from_params(cls, params: dict[str, Any] | None = None, q_max_s: float | None = None) -> "HdProbability":
        """From HD's parameters as a scenario gives them (``p_max``, ``q_min_ms``, ``q_th_ms``,
        ``q_max_floor_ms``), the rest the engine's defaults; ``q_max_s`` overrides delta_max."""
        spec = next((a for a in algorithms() if a["name"] == "hd"), None)
        if spec is None:
            raise CcsimError("this build of ccsim has no hd algorithm")
        values = {p["name"]: p["default"] for p in spec["params"]}
        values.update(params or {})
        q_max = q_max_s if q_max_s is not None else float(values["q_max_floor_ms"]) / 1e3
        g = cls(float(values["p_max"]), float(values["q_min_ms"]) / 1e3, float(values["q_th_ms"]) / 1e3, q_max)
        if not (0 <= g.q_min < g.q_th < g.q_max):
            raise CcsimError(f"fluid model: needs q_min < q_th < q_max (got {g.q_min}, {g.q_th}, {g.q_max} s)")
        return g

    def __call__(self, delta: Any) -> np.ndarray:
        d = np.asarray(delta, dtype=float)
        rising = self.p_max * (d - self.q_min) / (self.q_th - self.q_min)
        falling = self.p_max * (self.q_max - d) / (self.q_max - self.q_th)
        return np.where(d <= self.q_min, 0.0, np.where(d <= self.q_th, rising, np.where(d <= self.q_max, falling, 0.0)))


def p_star(delta: Any, capacity_pps: float, base_rtts_s: Sequence[float]) -> np.ndarray:
    """The locus of equilibria, p*(delta) = (2 / C^2) (sum_i 1 / (RTT_i + delta))^2 (Section IV)."""
    rtts = np.asarray(base_rtts_s, dtype=float)
    if capacity_pps <= 0 or rtts.size == 0 or np.any(rtts < 0):
        raise CcsimError("fluid model: needs a positive capacity and at least one non-negative RTT")
    d = np.asarray(delta, dtype=float)
    s = np.sum(1.0 / (rtts[None, :] + d.reshape(-1, 1)), axis=1).reshape(d.shape)
    return 2.0 / capacity_pps**2 * s**2


@dataclass(frozen=True)
class Equilibrium:
    delta_s: float
    p: float
    stable: bool
    window_pkts: float  # every flow's window there, C / sum 1/(RTT_i + delta)


def equilibria(g: HdProbability, capacity_pps: float, base_rtts_s: Sequence[float], points: int = 20001) -> list[Equilibrium]:
    """The crossings of g and p* on (q_min, q_max), left to right, found on a fine grid and refined by
    bisection; ``stable`` when g - p* rises through zero (Theorem 1)."""
    rtts = np.asarray(base_rtts_s, dtype=float)

    def f(d: Any) -> np.ndarray:
        return g(d) - p_star(d, capacity_pps, rtts)

    grid = np.linspace(g.q_min, g.q_max, points)
    values = f(grid)
    found = []
    for i in np.nonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)[0]:
        lo, hi = grid[i], grid[i + 1]
        flo = values[i]
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            fm = float(f(mid))
            if np.sign(fm) == np.sign(flo):
                lo, flo = mid, fm
            else:
                hi = mid
        d = 0.5 * (lo + hi)
        window = capacity_pps / float(np.sum(1.0 / (rtts + d)))
        found.append(Equilibrium(float(d), float(g(d)), stable=bool(values[i] < 0), window_pkts=window))
    return found


def plot_equilibria(g: HdProbability, capacity_pps: float, base_rtts_s: Sequence[float], path: str | Path, title: str = "") -> Path:
    """The paper's Fig. 6 for these numbers: g(delta), p*(delta) and the equilibria marked."""
    import matplotlib  # lazy: start-up time (matplotlib)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: start-up time (matplotlib)

    d = np.linspace(0, g.q_max * 1.1, 1000)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(d * 1e3, g(d), label="g(delta), HD")
    ax.plot(d * 1e3, p_star(d, capacity_pps, base_rtts_s), label="p*(delta), locus of equilibria")
    for e in equilibria(g, capacity_pps, base_rtts_s):
        ax.plot(e.delta_s * 1e3, e.p, "o" if e.stable else "x", color="k", markersize=8,
                label=f"{'stable' if e.stable else 'unstable'} {e.delta_s * 1e3:.1f} ms")
    ax.set_ylim(0, g.p_max * 1.3)
    ax.set_xlabel("queueing delay delta (ms)")
    ax.set_ylabel("per-packet back-off probability")
    ax.set_title(title or "Fluid-model equilibria (Section IV, Fig. 6)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
