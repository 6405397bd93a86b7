"""Prints every whole-run figure quoted in docs/validation.md, with the scenario that produced it.

    python benchmarks/validation_figures.py            # all sections, about a minute
    python benchmarks/validation_figures.py theory     # one section: theory, delay, aimd, limit, binomial, baselines
"""

from __future__ import annotations

import math
import sys

import numpy as np

import ccsim
from ccsim.scenario import Scenario

MSS_BITS = 1448 * 8


def dumbbell(rate, one_way, queue, flows, duration="60s", loss=0.0, measure=None, tcp=None) -> Scenario:
    run = {"duration": duration}
    if measure:
        run["measure"] = measure
    return Scenario.from_dict({"run": run, "tcp": tcp or {},
                               "topology": {"kind": "dumbbell", "bottleneck_rate": rate, "bottleneck_delay": one_way,
                                            "queue": queue, "loss": loss},
                               "flows": flows})


def seeds_mean(scenario, column="goodput_bps", seeds=range(1, 6)):
    rows = [ccsim.run(scenario, seed=s).summary for s in seeds]
    return float(np.mean([r[column].sum() for r in rows])), float(np.mean([r.rtt_mean_ms.mean() for r in rows]))


def padhye_bps(rtt, p, b, t0=0.2):
    """Padhye, Firoiu, Towsley, Kurose (SIGCOMM 1998) eq. (31), no receiver-window cap."""
    return MSS_BITS / (rtt * math.sqrt(2 * b * p / 3) + t0 * min(1, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p))


def theory():
    print("## NewReno vs Mathis / Padhye (10 Mbit/s, 40 ms, 84 pkt, 60 s, seeds 1-5)")
    print("p: configured packet loss; p_ind: loss indications (fast retransmits + timeouts) per data packet sent")
    print("| config | p | goodput Mbit/s | Mathis | Padhye | goodput/Mathis | goodput/Padhye "
          "| timeouts | timeouts/indications | p_ind | goodput/Mathis(p_ind) | goodput/Padhye(p_ind) |")
    configs = {"ACK per segment": ({"delayed_ack": False}, math.sqrt(1.5), 1),
               "delayed ACK, abc=0": ({"abc": 0}, math.sqrt(0.75), 2),
               "delayed ACK, abc=2 (default)": ({}, math.sqrt(1.5), 1)}
    for name, (tcp, c, b) in configs.items():
        for p in (0.005, 0.01, 0.02, 0.05):
            sc = dumbbell("10Mbit", "20ms", "84pkt", [{"algorithm": "newreno"}], loss=p, tcp=tcp)
            rows = [ccsim.run(sc, seed=s).summary for s in range(1, 6)]
            g = float(np.mean([r.goodput_bps.iloc[0] for r in rows]))
            rtt = float(np.mean([r.rtt_mean_ms.iloc[0] for r in rows])) / 1e3
            timeouts = float(np.mean([r.timeouts.iloc[0] for r in rows]))
            indications = sum(int(r.fast_retransmits.iloc[0] + r.timeouts.iloc[0]) for r in rows)
            p_ind = indications / sum(int(r.data_pkts_sent.iloc[0]) for r in rows)
            mathis = MSS_BITS / rtt * c / math.sqrt(p)
            padhye = padhye_bps(rtt, p, b)
            mathis_i = MSS_BITS / rtt * c / math.sqrt(p_ind)
            padhye_i = padhye_bps(rtt, p_ind, b)
            print(f"| {name} | {p:.3f} | {g / 1e6:.3f} | {mathis / 1e6:.3f} | {padhye / 1e6:.3f} | {g / mathis:.2f} "
                  f"| {g / padhye:.2f} | {timeouts:.1f} | {5 * timeouts / indications:.3f} | {p_ind:.4f} "
                  f"| {g / mathis_i:.2f} | {g / padhye_i:.2f} |")


def delay():
    print("## HD and CHD alone (10 Mbit/s, 40 ms, 84 pkt, 60 s, seed 1)")
    print("| algorithm | utilisation | mean RTT ms | p95 RTT ms | queue drops after 10 s | mean qdelay ms |")
    for alg in ("newreno", "hd", "chd"):
        r = ccsim.run(dumbbell("10Mbit", "20ms", "84pkt", [{"algorithm": alg}]), seed=1)
        s = r.summary.iloc[0]
        l = r.links[(r.links.link == "bottleneck") & (r.links.time_s > 10)]
        print(f"| {alg} | {r.run_summary['bottleneck_utilisation']:.3f} | {s.rtt_mean_ms:.1f} | {s.rtt_p95_ms:.1f} | "
              f"{int(l.drops_queue.sum())} | {r.run_summary['bottleneck_qdelay_mean_ms']:.1f} |")
    print("\n## Goodput at 1 % random loss (same path, seeds 1-5)")
    print("| algorithm | goodput Mbit/s | share of capacity |")
    for alg in ("newreno", "chd", "hd", "westwood"):
        g, _ = seeds_mean(dumbbell("10Mbit", "20ms", "84pkt", [{"algorithm": alg}], loss=0.01))
        print(f"| {alg} | {g / 1e6:.2f} | {g / 10e6:.0%} |")


def aimd():
    print("## delay_aimd (50 Mbit/s, 120 ms, 400 pkt, tau0 20 ms, 60 s, window 20-60 s, seed 1)")
    print("| flows | delta | utilisation | mean qdelay ms | queue drops after 20 s |")
    for delta in (1.0, 0.75):
        for n in (1, 8, 32):
            r = ccsim.run(dumbbell("50Mbit", "60ms", "400pkt", [{"algorithm": "delay_aimd", "count": n,
                                                                 "params": {"tau0_ms": 20, "delta": delta}}],
                                   measure=["20s", "60s"]), seed=1)
            l = r.links[(r.links.link == "bottleneck") & (r.links.time_s > 20)]
            print(f"| {n} | {delta} | {r.run_summary['bottleneck_utilisation']:.3f} | "
                  f"{r.run_summary['bottleneck_qdelay_mean_ms']:.1f} | {int(l.drops_queue.sum())} |")


def limit():
    print("## tcp_limit (10 Mbit/s, 100 ms, 83-pkt = BDP queue, 120 s, seed 1; (alpha-1)*BDP = 8.3 pkt)")
    print("| flows | utilisation after 60 s | mean queue pkts after 60 s | max queue pkts |")
    for n in (1, 4):
        r = ccsim.run(dumbbell("10Mbit", "50ms", "83pkt", [{"algorithm": "tcp_limit", "count": n}], duration="120s"), seed=1)
        l = r.links[(r.links.link == "bottleneck") & (r.links.time_s > 60)]
        print(f"| {n} | {l.utilisation.mean():.3f} | {l.queue_pkts.mean():.1f} | {int(l.queue_pkts.max())} |")


def binomial():
    print("## binomial goodput vs random loss (100 Mbit/s, 40 ms, 1000 pkt, 400 s, window 150-400 s, seeds 1-3)")
    losses = [0.001, 0.002, 0.004, 0.008]
    print("| preset | " + " | ".join(f"p={p}" for p in losses) + " | fitted exponent |")
    for preset in ("iiad", "sqrt", "aimd"):
        gs = [seeds_mean(dumbbell("100Mbit", "20ms", "1000pkt", [{"algorithm": "binomial", "params": {"preset": preset}}],
                                  duration="400s", loss=p, measure=["150s", "400s"]), seeds=range(1, 4))[0] for p in losses]
        slope = np.polyfit(np.log(losses), np.log(gs), 1)[0]
        print(f"| {preset} | " + " | ".join(f"{g / 1e6:.2f}" for g in gs) + f" | {slope:.3f} |")


def baselines():
    print("## H-TCP vs NewReno (500 Mbit/s, 250 ms, 2000-pkt = 0.2 BDP buffer, 120 s, window 20-120 s, seed 1)")
    print("| algorithm | utilisation |")
    for alg in ("newreno", "htcp"):
        r = ccsim.run(dumbbell("500Mbit", "125ms", "2000pkt", [{"algorithm": alg}], duration="120s", measure=["20s", "120s"]), seed=1)
        print(f"| {alg} | {r.run_summary['bottleneck_utilisation']:.3f} |")


SECTIONS = {"theory": theory, "delay": delay, "aimd": aimd, "limit": limit, "binomial": binomial, "baselines": baselines}

if __name__ == "__main__":
    for name in sys.argv[1:] or SECTIONS:
        SECTIONS[name]()
        print()
