"""One CUBIC flow against its own law (RFC 9438): the figures of docs/algorithms/cubic.md.

    python benchmarks/cubic_law.py            # seed 1, both paths, a few seconds
    python benchmarks/cubic_law.py --seed 2

Path A, 100 Mbit/s, 100 ms RTT, 1-BDP drop-tail queue (833 packets): in every congestion-avoidance
epoch after a loss, the window sampled every 10 ms against W(t) = C (t - K)^3 + W_max, C = 0.4,
K = cbrt((W_max - cwnd_epoch) / C), W_max the algorithm's (after fast convergence), cwnd_epoch its
window when the epoch starts and t the time since then (RFC 9438 eqs. 1-2). Printed: per epoch the
worst relative error |cwnd - W(t)| / W(t).

Path B, 10 Mbit/s, 40 ms RTT, 1- and 0.5-BDP queues (33 and 17 packets), and 1 BDP with 0.2 %
random loss: which of the two estimates
sets the window, the cubic curve or the emulated Reno window W_est (`reno_cwnd_pkts` above
`target_pkts`: Linux then bounds cnt by the Reno estimate), and the window against max(W_cubic(t),
W_est) (RFC 9438 section 4.3).

Both use the `linux` TCP profile (CUBIC is Linux's algorithm) and `sample_interval = 10ms`.
Deterministic: one seed, no timing.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import ccsim
from ccsim.scenario import Scenario

C = 0.4
BETA = 0.7


def scenario(rate: str, one_way: str, queue: str, duration: str, loss: float = 0.0) -> Scenario:
    return Scenario.from_dict({
        "run": {"duration": duration, "sample_interval": "10ms"},
        "topology": {"kind": "dumbbell", "bottleneck_rate": rate, "bottleneck_delay": one_way, "queue": queue, "loss": loss},
        "tcp": {"profile": "linux"},
        "flows": [{"algorithm": "cubic"}],
    })


def epochs(result: ccsim.Result) -> list[pd.DataFrame]:
    """Rows (time_s, cwnd_pkts and the algorithm's metrics) of each epoch that starts after a loss
    and ends at the next loss (the next change of epoch_start)."""
    m = result.cc_metrics.pivot_table(index="time_s", columns="name", values="value")
    f = result.flows.set_index("time_s")[["cwnd_pkts"]]
    d = f.join(m, how="inner")
    out = []
    for start, rows in d[d.epoch_start_s >= 0].groupby("epoch_start_s"):
        rows = rows[rows.w_max_pkts > 0]
        if len(rows) > 10 and rows.index[-1] < d.index[-1] - 0.5:  # a whole epoch, ended by a loss
            out.append(rows.assign(t_s=rows.index - start))
    return out


def cubic_path(seed: int) -> None:
    result = ccsim.run(scenario("100Mbit", "50ms", "833pkt", "120s"), seed=seed)
    print("A: 100 Mbit/s, 100 ms, 833-packet queue, seed", seed)
    print("epoch start s | W_max pkts | cwnd_epoch | K s | worst |cwnd - W(t)|/W(t) | at t s | cubic above Reno")
    for e in epochs(result):
        w_max = e.w_max_pkts.iloc[0]
        cwnd0 = e.cwnd_pkts.iloc[0]
        k = np.cbrt(max(w_max - cwnd0, 0.0) / C)
        law = C * (e.t_s - k) ** 3 + w_max
        err = (e.cwnd_pkts - law).abs() / law
        above = (e.target_pkts >= e.reno_cwnd_pkts).mean()
        print(f"{e.index[0]:13.2f} | {w_max:10.0f} | {cwnd0:10.0f} | {k:4.2f} | {err.max():9.2%} | {e.t_s.iloc[err.argmax()]:6.2f} | {above:.0%}")


def reno_path(seed: int, queue_pkts: int, loss: float) -> None:
    result = ccsim.run(scenario("10Mbit", "20ms", f"{queue_pkts}pkt", "60s", loss), seed=seed)
    m = result.cc_metrics.pivot_table(index="time_s", columns="name", values="value")
    ca = m[m.epoch_start_s >= 0]
    print(f"B: 10 Mbit/s, 40 ms, {queue_pkts}-packet queue, random loss {loss:.1%}, seed {seed}: "
          f"Reno estimate above the cubic target in {(ca.reno_cwnd_pkts > ca.target_pkts).mean():.0%} of the "
          f"congestion-avoidance samples, goodput {result.summary.goodput_bps.sum() / 1e6:.2f} Mbit/s")
    print("epoch start s | W_max pkts | cwnd_epoch | K s | Reno governs | worst error to max(W_cubic(t), W_est)")
    for e in epochs(result):
        w_max = e.w_max_pkts.iloc[0]
        cwnd0 = e.cwnd_pkts.iloc[0]
        k = np.cbrt(max(w_max - cwnd0, 0.0) / C)
        w_cubic = C * (e.t_s - k) ** 3 + w_max
        # W_est: the algorithm's own Reno emulation (RFC 9438 eq. 4, per ACK: Linux's tcp_cwnd).
        law = np.maximum(w_cubic, e.reno_cwnd_pkts)
        reno = (e.reno_cwnd_pkts > e.target_pkts).mean()
        err = ((e.cwnd_pkts - law).abs() / law).max()
        print(f"{e.index[0]:13.2f} | {w_max:10.0f} | {cwnd0:10.0f} | {k:4.2f} | {reno:4.0%} of samples | {err:.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    cubic_path(args.seed)
    for queue_pkts, loss in ((33, 0.0), (17, 0.0), (33, 0.002)):  # 1 BDP, 0.5 BDP, 1 BDP with random loss
        print()
        reno_path(args.seed, queue_pkts, loss)


if __name__ == "__main__":
    main()
