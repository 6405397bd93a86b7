"""How the 30-flow fairness of the coexistence paper's 100 Mbit/s case depends on the host's send
jitter and on which partial ACKs restart the retransmission timer (docs/profiles.md).

30 NewReno flows, 100 Mbit/s access links and bottleneck (5 ms one way), access delays U[5, 30] ms,
a 1250-packet drop-tail queue, 100 s, measured over the last 50 s; seeds 1-5. Prints a Markdown table:
mean and minimum Jain index, mean and maximum timeouts per flow.

    python benchmarks/send_jitter_sensitivity.py
"""

from __future__ import annotations

import statistics

import ccsim
from ccsim.scenario import Scenario

SEEDS = (1, 2, 3, 4, 5)
CASES = [
    ("SACK", {"sack": True}),
    ("no SACK, partial_ack_rto = every", {"sack": False, "partial_ack_rto": "every"}),
    ("no SACK, partial_ack_rto = first", {"sack": False, "partial_ack_rto": "first"}),
]
JITTERS = ("0s", "10us", "50us", "125us", "250us")


def scenario(tcp: dict) -> Scenario:
    return Scenario.from_dict({
        "run": {"duration": "100s", "measure": ["50s", "100s"]},
        "topology": {"bottleneck_rate": "100Mbit", "bottleneck_delay": "5ms", "queue": "1250pkt", "access_rate": "100Mbit"},
        "tcp": tcp,
        "flows": [{"algorithm": "newreno", "count": 30, "access_delay": {"uniform": ["5ms", "30ms"]}}],
    })


def main() -> None:
    print("| case | send_jitter | Jain mean | Jain min | timeouts/flow mean | timeouts/flow max |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, tcp in CASES:
        for jitter in JITTERS:
            jains, means, maxes = [], [], []
            for seed in SEEDS:
                result = ccsim.run(scenario({**tcp, "send_jitter": jitter}), seed=seed)
                jains.append(result.run_summary["jain_index"])
                means.append(result.summary.timeouts.mean())
                maxes.append(int(result.summary.timeouts.max()))
            print(f"| {label} | {jitter} | {statistics.mean(jains):.3f} | {min(jains):.3f} | "
                  f"{statistics.mean(means):.2f} | {max(maxes)} |", flush=True)


if __name__ == "__main__":
    main()
