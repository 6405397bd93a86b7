"""RED vs drop-tail: two NewReno flows through the same bottleneck, queueing delay and sharing.

The RED set-up is the one of Bansal & Balakrishnan, "Binomial congestion control algorithms", IEEE
INFOCOM 2001 ([Bansal01] in ``docs/bibliography.md``), Section 3: queue limit
Q = b x RTT (the bandwidth-delay product), min_th = 0.2 Q, max_th = 0.8 Q, other RED constants
ns-2's defaults; start times spread over [0, 2] s and throughput measured after a warm-up. Their
Sections 1 and 4 argue that RED keeps the average queue small by early drops and equalises the flows'
drop rates, while a drop-tail queue sits close to full.

Here: 10 Mbit/s, 20 ms each way (40 ms base RTT), so Q = 10 Mbit/s x 40 ms = 50 kB = 33 packets of
1500 B; drop-tail with a 33-packet limit vs RED with limit 33 packets, min_th 20 % and max_th 80 % of
it (6.6 and 26.4 packets), other constants ccsim's RED defaults (ns-2's; docs/red.md). Two
NewReno flows start at 0 s and 1 s, with per-flow access delays drawn uniformly in [0, 2] ms from the
seed so repetitions differ; 60 s, summary over 10-60 s; 5 repetitions. ``--quick``: 15 s (summary
5-15 s), 2 repetitions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim.errors import CcsimError, ScenarioError
import ccsim
from ccsim.experiments.helpers import scenario_with
from ccsim.experiments.registry import Claim, Experiment, Verdict, register
from ccsim.scenario import Scenario
from ccsim.sweep import SweepPlan

NAME = "red_vs_droptail"
Q_PKTS = 33  # 10 Mbit/s x 40 ms / 1500 B
DROPTAIL = f"{Q_PKTS}pkt"
RED = {"kind": "red", "limit": f"{Q_PKTS}pkt", "min_th": "20%", "max_th": "80%"}  # 6.6 and 26.4 packets
QUEUE_PATH = "topology.queue"
REPETITIONS = 5
QUICK_REPETITIONS = 2
SEED = 2001


def base_document(quick: bool = False, queue: Any = DROPTAIL) -> dict[str, Any]:
    """The scenario document: two NewReno flows, the given bottleneck queue."""
    duration, measure = (15, ["5s", "15s"]) if quick else (60, ["10s", "60s"])
    flow = {"algorithm": "newreno", "count": 1, "access_delay": {"uniform": ["0ms", "2ms"]}}
    return {
        "run": {"duration": f"{duration}s", "measure": measure, "sample_interval": "100ms", "seed": SEED},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": queue},
        "flows": [dict(flow, name="reno0", start="0s"), dict(flow, name="reno1", start="1s")],
    }


def base_scenario(quick: bool = False, queue: Any = DROPTAIL):
    return Scenario.from_dict(base_document(quick, queue))


def red_available() -> bool:
    try:
        base_scenario(queue=RED)
    except ScenarioError:
        return False
    return True


def build_plan(quick: bool = False):
    try:
        base_scenario(quick, queue=RED)  # the RED point must be a valid scenario before anything runs
    except ScenarioError as e:
        raise CcsimError(
            f"{NAME} needs the RED queue discipline ([topology] queue = {{ kind = \"red\", ... }}), which this "
            f"build of ccsim does not accept yet: {e}"
        ) from None
    return SweepPlan(
        name=NAME,
        base=base_document(quick),
        grid={QUEUE_PATH: [DROPTAIL, dict(RED)]},
        repetitions=QUICK_REPETITIONS if quick else REPETITIONS,
        seed=SEED,
    )


def queue_label(value: Any) -> str:
    """"RED" or "drop-tail" for a swept queue value (a string, a table, or its JSON text)."""
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(value)
        except ValueError:
            pass
        if isinstance(value, str):
            return "RED" if "red" in text.lower() else "drop-tail"
    if isinstance(value, dict):
        return "RED" if str(value.get("kind", "")).lower() == "red" else "drop-tail"
    return str(value)


def _labelled(frame: pd.DataFrame, sweep: Any) -> pd.DataFrame:
    """``frame`` with a ``queue`` column ("drop-tail" / "RED"), joined through run_id if needed."""
    if QUEUE_PATH in frame:
        return frame.assign(queue=frame[QUEUE_PATH].map(queue_label))
    flows = sweep.flows
    if "run_id" in frame and "run_id" in flows and QUEUE_PATH in flows:
        labels = flows[["run_id"]].assign(queue=flows[QUEUE_PATH].map(queue_label)).drop_duplicates("run_id")
        return frame.merge(labels, on="run_id", how="left")
    raise KeyError(f"cannot tell the queue of each run: no {QUEUE_PATH} column")


def _runs(sweep: Any) -> pd.DataFrame:
    return _labelled(sweep.runs, sweep)


def queue_delay_samples(sweep: Any) -> dict[str, np.ndarray]:
    """Per-interval mean bottleneck queueing delay (ms) within the summary window, per queue kind.

    From the sweep's per-interval link table when it has one; otherwise from one run per queue kind
    of the sweep's base scenario with the sweep's seed (runs take milliseconds).
    """
    links = getattr(sweep, "links", pd.DataFrame())
    if {"time_s", "qdelay_mean_ms", "link"} <= set(links.columns):
        rows = _labelled(links[links["link"] == "bottleneck"], sweep)
        return {k: g["qdelay_mean_ms"].to_numpy(dtype=float) for k, g in rows.groupby("queue", sort=False)}
    plan = getattr(sweep, "plan", None)
    base = getattr(plan, "base_scenario", None) or base_scenario()
    seed = getattr(plan, "seed", None)
    seed = SEED if seed is None else seed
    samples = {}
    for value in (DROPTAIL, RED):
        result = ccsim.run(scenario_with(base, {QUEUE_PATH: value}), seed=seed)
        resolved = result.scenario
        start, end = resolved["measure_start_ns"] / 1e9, resolved["measure_end_ns"] / 1e9
        rows = result.links[(result.links["link"] == "bottleneck") & (result.links["time_s"] > start) & (result.links["time_s"] <= end)]
        samples[queue_label(value)] = rows["qdelay_mean_ms"].to_numpy(dtype=float)
    return samples


def draw_figures(sweep: Any, out_dir: Path) -> list[Path]:
    from ccsim import plots  # lazy: start-up time (matplotlib)

    flows = _labelled(sweep.flows, sweep)
    runs = _runs(sweep)
    paths = [
        plots.plot_queue_delay_cdf_compare(queue_delay_samples(sweep), out_dir, means=qdelay_means(sweep).to_dict(),
                                           title="Bottleneck queueing delay CDF, two NewReno flows (summary window)",
                                           filename="queue_delay_cdf_red_vs_droptail.png"),
        plots.plot_sweep_goodput(flows, "queue", out_dir, group="name", bars="ci", capacity_bps=10e6,
                                 xlabel="bottleneck queue discipline", title="Goodput per flow (mean, 95 % CI over repetitions)",
                                 filename="goodput_by_queue.png"),
    ]
    if "jain_index" in runs:
        paths.append(plots.plot_sweep_jain(runs, "queue", out_dir, xlabel="bottleneck queue discipline", filename="jain_by_queue.png"))
    scatter = flows.groupby(["queue", "name"], sort=False).agg(goodput_bps=("goodput_bps", "mean"), rtt_p95_ms=("rtt_p95_ms", "mean")).reset_index()
    paths.append(plots.plot_throughput_delay(scatter.rename(columns={"queue": "label"}), out_dir, label="label", annotate="name",
                                             title="Goodput vs 95th-percentile RTT per flow and queue", filename="throughput_delay.png"))
    return paths


def _per_queue(sweep: Any, column: str, scale: float, fmt: str) -> str:
    runs = _runs(sweep)
    if column not in runs:
        raise LookupError(f"the runs table has no {column}")
    means = runs.groupby("queue")[column].mean() * scale
    return ", ".join(f"{k} {fmt.format(means[k])}" for k in ("drop-tail", "RED") if k in means)


def qdelay_means(sweep: Any) -> pd.Series:
    """Mean bottleneck queueing delay per queue kind, per packet over the summary window and averaged
    over repetitions: the one figure both the claims table and the CDF's legend show."""
    runs = _runs(sweep)
    column = "bottleneck_qdelay_mean_ms"
    if column in runs:
        return runs.groupby("queue")[column].mean()
    return pd.Series({k: float(np.mean(v)) for k, v in queue_delay_samples(sweep).items()})


# Verdict tolerances, fixed in advance (docs/reports.md): "similar" utilisation is within 5 points;
# Jain's index "close to 1" is at least 0.95 with RED.
UTILISATION_TOLERANCE_PT = 5.0
JAIN_CLOSE_TO_ONE = 0.95


def _qdelay_verdict(sweep: Any) -> Verdict:
    means = qdelay_means(sweep)
    if not {"drop-tail", "RED"} <= set(means.index):
        return Verdict(None, "needs drop-tail and RED runs")
    return Verdict(bool(means["RED"] < means["drop-tail"]), "RED's mean is lower" if means["RED"] < means["drop-tail"] else "RED's mean is not lower")


def _utilisation_verdict(sweep: Any) -> Verdict:
    runs = _runs(sweep)
    means = runs.groupby("queue")["bottleneck_utilisation"].mean() * 100
    if not {"drop-tail", "RED"} <= set(means.index):
        return Verdict(None, "needs drop-tail and RED runs")
    diff = means["RED"] - means["drop-tail"]
    return Verdict(abs(diff) <= UTILISATION_TOLERANCE_PT, f"RED {diff:+.1f} pt (tolerance \u00b1{UTILISATION_TOLERANCE_PT:g} pt)")


def _jain_verdict(sweep: Any) -> Verdict:
    runs = _runs(sweep)
    means = runs.groupby("queue")["jain_index"].mean()
    if "RED" not in means.index:
        return Verdict(None, "needs RED runs")
    return Verdict(bool(means["RED"] >= JAIN_CLOSE_TO_ONE), f"RED {means['RED']:.3f} (close to 1: at least {JAIN_CLOSE_TO_ONE})")


def _qdelay(sweep: Any) -> str:
    means = qdelay_means(sweep)
    text = ", ".join(f"{k} {means[k]:.1f} ms" for k in ("drop-tail", "RED") if k in means)
    if {"drop-tail", "RED"} <= set(means.index) and means["drop-tail"] > 0:
        text += f" (RED {(1 - means['RED'] / means['drop-tail']) * 100:.0f} % lower)"
    return text


EXPERIMENT = register(Experiment(
    name=NAME,
    title="RED vs drop-tail: two NewReno flows (RED set-up of Bansal & Balakrishnan 2001)",
    source="D. Bansal, H. Balakrishnan, \"Binomial congestion control algorithms\", IEEE INFOCOM 2001; RED set-up "
           "in Section 3 (Q = b x RTT, min_th = 0.2 Q, max_th = 0.8 Q), RED vs drop-tail in Sections 1 and 4",
    description="Two NewReno flows share a 10 Mbit/s bottleneck with 40 ms base RTT. Drop-tail with a "
                f"{Q_PKTS}-packet (one BDP) limit against RED with the same limit and min_th/max_th = 0.2/0.8 of it "
                "(6.6/26.4 packets). Figures: the bottleneck's queueing-delay CDF for both, "
                "goodput per flow, Jain's index, throughput vs 95th-percentile RTT.",
    build_plan=build_plan,
    draw_figures=draw_figures,
    claims=(
        Claim("Mean bottleneck queueing delay", "lower with RED: RED \"maintains small average queue sizes by "
              "providing early congestion indications\"; drop-tail's steady state is \"close to full\"", _qdelay,
              "Sections 4 (and 1)", _qdelay_verdict),
        Claim("Bottleneck utilisation", "similar (RED keeps the link busy while the queue stays short)",
              lambda sweep: _per_queue(sweep, "bottleneck_utilisation", 100, "{:.1f} %"), "Section 4", _utilisation_verdict),
        Claim("Jain's index of the two flows' goodput", "close to 1: RED equalises the flows' drop rates",
              lambda sweep: _per_queue(sweep, "jain_index", 1, "{:.3f}"), "Sections 1 and 4", _jain_verdict),
    ),
))
