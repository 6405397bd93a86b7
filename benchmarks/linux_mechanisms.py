"""What each Linux mechanism of the ``linux`` profile does to the single-flow example: the table of
docs/linux-tcp.md.

    python benchmarks/linux_mechanisms.py                 # seeds 1-10, 0 / 1 / 2 % loss
    python benchmarks/linux_mechanisms.py --seeds 1-3
    python benchmarks/linux_mechanisms.py --halve-from cwnd   # Linux tcp_reno_ssthresh's quantity

examples/single_flow.toml (10 Mbit/s, 40 ms, 84-packet drop-tail, NewReno, 60 s) with its [tcp] table
replaced by ``profile = "linux"``, then with one of the five stack rules set back to its freebsd9
value, then all five at once, then freebsd9 itself. Each cell is the mean over the seeds of goodput
(Mbit/s), retransmitted segments and retransmission timeouts. Deterministic: no timing.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import ccsim
from ccsim.profiles import PROFILES
from ccsim.scenario import Scenario

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "single_flow.toml"
LOSSES = (0.0, 0.01, 0.02)

FREEBSD9 = PROFILES["freebsd9"]
# The stack rules the linux profile turns on, each as the [tcp] keys that set it back to freebsd9
# (scenario-file keys; the delayed-ACK rule goes back with FreeBSD's 100 ms timer).
RULES = {
    "slow_start_rule": {"slow_start_rule": FREEBSD9["slow_start_rule"]},
    "recovery_window": {"recovery_window": FREEBSD9["recovery_window"]},
    "delayed_ack_rule": {"delayed_ack_rule": FREEBSD9["delayed_ack_rule"],
                         "delayed_ack_timeout": f"{FREEBSD9['delayed_ack_timeout_ns'] // 1_000_000}ms"},
    "loss_detection": {"loss_detection": FREEBSD9["loss_detection"]},
    "rto_estimator": {"rto_estimator": FREEBSD9["rto_estimator"]},
}
ALL_BACK = {k: v for keys in RULES.values() for k, v in keys.items()}
ROWS = (
    [("linux", {"profile": "linux"})]
    + [("linux, " + ", ".join(f"{k} = {v}" for k, v in keys.items()), {"profile": "linux", **keys})
       for keys in RULES.values()]
    + [("linux, all five back", {"profile": "linux", **ALL_BACK}), ("freebsd9", {"profile": "freebsd9"})]
)


def scenario(tcp: dict, loss: float, halve_from: str | None = None) -> Scenario:
    data = tomllib.loads(EXAMPLE.read_text())
    data["tcp"] = tcp
    data["topology"]["loss"] = loss
    if halve_from:
        for flow in data["flows"]:
            flow["params"]["halve_from"] = halve_from
    return Scenario.from_dict(data)


def cells(tcp: dict, seeds: range, halve_from: str | None) -> list[str]:
    out: dict[str, list[str]] = {"goodput": [], "retx": [], "rto": []}
    for loss in LOSSES:
        rows = [ccsim.run(scenario(tcp, loss, halve_from), seed=s).summary.iloc[0] for s in seeds]
        n = len(rows)
        out["goodput"].append(f"{sum(r.goodput_bps for r in rows) / n / 1e6:.2f}")
        out["retx"].append(f"{sum(int(r.retransmits) for r in rows) / n:.0f}")
        out["rto"].append(f"{sum(int(r.timeouts) for r in rows) / n:.1f}")
    return [c for key in ("goodput", "retx", "rto") for c in out[key]]


def seed_range(text: str) -> range:
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=seed_range, default=range(1, 11), help="e.g. 1-10 (default)")
    parser.add_argument("--halve-from", choices=("flight", "cwnd", "pipe"),
                        help="NewReno's halve_from instead of the example's (flight)")
    args = parser.parse_args()
    seeds = args.seeds
    losses = [f"{p:.0%}".replace("%", " %") for p in LOSSES]
    header = ["[tcp]"] + [f"{m} {p}" for m in ("goodput Mbit/s", "retransmits", "timeouts") for p in losses]
    halve_from = args.halve_from or "flight"
    print(f"single_flow.toml (10 Mbit/s, 40 ms, 84-packet drop-tail, NewReno halve_from = {halve_from}, 60 s), "
          f"mean of seeds {seeds.start}-{seeds.stop - 1}")
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, tcp in ROWS:
        print("| " + " | ".join([label] + cells(tcp, seeds, args.halve_from)) + " |", flush=True)


if __name__ == "__main__":
    main()
