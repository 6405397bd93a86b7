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


# --- Mixed populations: delay-based flows beside loss-based flows -----------------------------------
#
# Section IV analyses delay-based flows alone. With loss-based flows present the drop-tail queue has
# no equilibrium below its limit (the loss-based windows grow until packets are dropped), so the
# queue stands at delta_B = buffer / C and the drop rate p does the balancing. We extend the paper's
# window equation (1) to a flow that adds a packets per RTT and, per packet, halves with the loss
# probability p and multiplies its window by (1 - b) with its early-response rate q:
#
#     dW/dt = (a - W^2 (p/2 + b q)) / (RTT + delta)    =>    W* = sqrt(a / (p/2 + b q))
#
# which is the paper's W = sqrt(2/p) for a loss-based flow (a = 1, q = 0) and its p* when q = g. PERT
# and mPERT respond at most once per RTT (the guard, docs/algorithms/pert.md (P4)), so their
# per-packet response rate is q = (1 - (1 - g)^W) / W, not g, where g(delta) is near 1; HD runs one
# trial per ACK without a guard (q = g). mPERT adds a = min(1 + p'/p, alpha_max) in compete mode
# (delta >= compete_fraction x delta_max) and backs off by b = delta / (delta + delta_max); p' is
# either the probability g(delta) (``p_prime = "probability"``) or the realised rate q (``"realised"``).


@dataclass(frozen=True)
class PertProbability:
    """g(delta) of PERT and mPERT (seconds in, probability out): 0 below t_min, rising to p_max at
    t_max, then (``gentle``) to 1 at 2 t_max, 1 above; without ``gentle`` 1 above t_max."""

    p_max: float
    t_min: float
    t_max: float
    gentle: bool = True

    @classmethod
    def from_params(cls, algorithm: str = "pert", params: dict[str, Any] | None = None) -> "PertProbability":
        """From ``pert``'s or ``mpert``'s parameters as a scenario gives them, the rest the engine's defaults."""
        values = _catalogue(algorithm)
        values.update(params or {})
        g = cls(float(values["p_max"]), float(values["t_min_ms"]) / 1e3, float(values["t_max_ms"]) / 1e3, bool(values["gentle"]))
        if not (0 <= g.t_min < g.t_max):
            raise CcsimError(f"fluid model: needs t_min < t_max (got {g.t_min}, {g.t_max} s)")
        return g

    def __call__(self, delta: Any) -> np.ndarray:
        d = np.asarray(delta, dtype=float)
        ramp = self.p_max * (d - self.t_min) / (self.t_max - self.t_min)
        above = (np.clip(self.p_max + (1 - self.p_max) * (d - self.t_max) / self.t_max, 0.0, 1.0) if self.gentle
                 else np.ones_like(d))
        return np.where(d <= self.t_min, 0.0, np.where(d <= self.t_max, ramp, above))


def _catalogue(algorithm: str) -> dict[str, Any]:
    spec = next((a for a in algorithms() if a["name"] == algorithm), None)
    if spec is None:
        raise CcsimError(f"this build of ccsim has no {algorithm} algorithm")
    return {p["name"]: p["default"] for p in spec["params"]}


@dataclass(frozen=True)
class DelayPopulation:
    """The delay-based flows of a mix: their kind (``hd``, ``pert``, ``mpert``), base RTTs and the
    parameters the scenario gives them (the rest from the engine's catalogue)."""

    algorithm: str
    base_rtts_s: Sequence[float]
    params: dict[str, Any] | None = None

    def probability(self) -> "HdProbability | PertProbability":
        if self.algorithm == "hd":
            return HdProbability.from_params(self.params)
        if self.algorithm in ("pert", "mpert"):
            return PertProbability.from_params(self.algorithm, self.params)
        raise CcsimError(f"fluid model: algorithm {self.algorithm!r} is not hd, pert or mpert")

    def values(self) -> dict[str, Any]:
        v = _catalogue(self.algorithm)
        v.update(self.params or {})
        return v


@dataclass(frozen=True)
class MixedEquilibrium:
    delta_s: float  # the queueing delay the mix is evaluated at
    loss_rate: float  # p, the drop rate that balances the windows against C
    g: float  # the delay-based flows' response probability g(delta)
    response_rate: float  # q, their per-packet early-response rate (guarded for PERT/mPERT)
    alpha: float  # their increase per RTT (mPERT's alpha; 1 otherwise)
    window_loss_pkts: float  # a loss-based flow's window, sqrt(2/p)
    window_delay_pkts: float  # a delay-based flow's window
    loss_over_delay: float  # per-flow throughput of a loss-based over a delay-based flow
    loss_only_rate: float  # p*(delta): the drop rate if every flow were loss-based


def _window(a: float, p: float, b: float, g: float, guarded: bool) -> tuple[float, float]:
    """(W*, q): the window where a = W^2 (p/2 + b q) with q = g, or q = (1 - (1 - g)^W)/W when guarded."""
    if not guarded or g <= 0 or b <= 0:
        q = g
        return float(np.sqrt(a / (p / 2 + b * q))) if p / 2 + b * q > 0 else np.inf, q
    lo, hi = 1e-9, float(np.sqrt(2 * a / p)) if p > 0 else 1e9
    for _ in range(60):  # W^2 p/2 + b W (1 - (1 - g)^W) - a rises with W: bisection
        mid = 0.5 * (lo + hi)
        if mid * mid * p / 2 + b * mid * (1 - (1 - g) ** mid) - a > 0:
            hi = mid
        else:
            lo = mid
    w = 0.5 * (lo + hi)
    return w, (1 - (1 - g) ** w) / w


def mixed_equilibrium(capacity_pps: float, delta_s: float, loss_rtts_s: Sequence[float], delay: DelayPopulation) -> MixedEquilibrium:
    """The equilibrium of a mix of loss-based (NewReno) flows and delay-based flows at queueing delay
    ``delta_s`` (the drop-tail buffer's delay when the loss-based flows keep it full): the drop rate
    p with sum_i W_i / (RTT_i + delta) = C, found by bisection on ln p (the left side falls with p)."""
    loss_rtts = np.asarray(loss_rtts_s, dtype=float)
    delay_rtts = np.asarray(delay.base_rtts_s, dtype=float)
    if loss_rtts.size == 0:
        raise CcsimError("fluid model: a mix needs at least one loss-based flow (use equilibria() for delay-based flows alone)")
    g_fn = delay.probability()
    v = delay.values()
    g = float(g_fn(delta_s))
    guarded = delay.algorithm in ("pert", "mpert")
    if delay.algorithm == "hd":
        b = 0.5
    elif delay.algorithm == "pert":
        b = float(v["beta"])
    else:
        delta_max = max(float(v["delta_max_init_ms"]) / 1e3, delta_s)
        b = min(0.5, delta_s / (delta_s + delta_max)) if delta_s + delta_max > 0 else 0.0
    compete = delay.algorithm == "mpert" and delta_s >= float(v["compete_fraction"]) * max(float(v["delta_max_init_ms"]) / 1e3, delta_s)

    def delay_window(p: float) -> tuple[float, float, float]:
        if not compete:
            return (*_window(1.0, p, b, g, guarded), 1.0)
        alpha = 1.0
        for _ in range(60):  # realised p' = q depends on W, which depends on alpha: damped fixed point
            w, q = _window(alpha, p, b, g, guarded)
            p_prime = g if v["p_prime"] == "probability" else q
            new = min(1.0 + p_prime / p, float(v["alpha_max"]))
            if abs(new - alpha) < 1e-6:
                break
            alpha = 0.5 * (alpha + new)
        return w, q, alpha

    def excess(log_p: float) -> float:
        p = float(np.exp(log_p))
        w_d = delay_window(p)[0]
        return float(np.sum(np.sqrt(2 / p) / (loss_rtts + delta_s)) + np.sum(w_d / (delay_rtts + delta_s))) - capacity_pps

    lo, hi = np.log(1e-9), np.log(0.999)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    p = float(np.exp(0.5 * (lo + hi)))
    w_d, q, alpha = delay_window(p)
    w_l = float(np.sqrt(2 / p))
    thr_l = float(np.mean(w_l / (loss_rtts + delta_s)))
    thr_d = float(np.mean(w_d / (delay_rtts + delta_s))) if delay_rtts.size else np.nan
    all_rtts = np.concatenate([loss_rtts, delay_rtts])
    return MixedEquilibrium(delta_s, p, g, float(q), float(alpha), w_l, float(w_d), thr_l / thr_d if thr_d > 0 else np.inf,
                            float(p_star(delta_s, capacity_pps, all_rtts)))
