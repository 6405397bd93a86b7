"""The single-flow example under each TCP profile, at 0 % and 1 % random loss: the table of
docs/profiles.md (goodput, retransmitted segments, timeouts, mean RTT).

    python benchmarks/profiles_table.py              # seed 1, a few seconds
    python benchmarks/profiles_table.py --seed 3
    python benchmarks/profiles_table.py --attribution ns2    # ns2 vs freebsd9 at 1 %, one knob at a time
    python benchmarks/profiles_table.py --attribution linux  # linux vs freebsd9 at 1 %, one knob at a time

The example's [tcp] table writes every key out, which would override any profile; it is replaced by
``[tcp] profile = NAME`` alone. Extra rows set keys on top of a profile where that one key
explain most of a difference (ns-2's 20-packet window_, then its 1000 B packets). Deterministic: one seed, no timing.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import ccsim
from ccsim.profiles import PROFILE_NAMES
from ccsim.scenario import Scenario

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "single_flow.toml"
LOSSES = (0.0, 0.01)
# (label, [tcp] table): every profile as it is, then single-key variations.
ROWS = [(name, {"profile": name}) for name in PROFILE_NAMES] + [
    ("ns2, rwnd 64 MiB", {"profile": "ns2", "rwnd": "64MiB"}),
    ("ns2, rwnd 64 MiB, 1448 + 52 B", {"profile": "ns2", "rwnd": "64MiB", "mss": "1448B", "header": "52B"}),
]


def scenario(tcp: dict, loss: float) -> Scenario:
    data = tomllib.loads(EXAMPLE.read_text())
    data["tcp"] = tcp
    data["topology"]["loss"] = loss
    return Scenario.from_dict(data)


def row(tcp: dict, seed: int) -> list[str]:
    cells: dict[str, list[str]] = {"goodput": [], "retx": [], "rto": [], "rtt": []}
    for loss in LOSSES:
        s = ccsim.run(scenario(tcp, loss), seed=seed).summary.iloc[0]
        cells["goodput"].append(f"{s.goodput_bps / 1e6:.2f}")
        cells["retx"].append(f"{int(s.retransmits)}")
        cells["rto"].append(f"{int(s.timeouts)}")
        cells["rtt"].append(f"{s.rtt_mean_ms:.1f}")
    return [c for key in ("goodput", "retx", "rto", "rtt") for c in cells[key]]


# ns2 with FreeBSD's window and packet size, then one ns2 knob at a time set back to freebsd9's.
SAME_PATH = {"profile": "ns2", "rwnd": "64MiB", "mss": "1448B", "header": "52B"}
NS2_ATTRIBUTION = [
    ("freebsd9", {"profile": "freebsd9"}),
    ("ns2, rwnd 64 MiB, 1448 + 52 B", SAME_PATH),
    ("... sack_recovery = rfc6675", {**SAME_PATH, "sack_recovery": "rfc6675"}),
    ("... freebsd timer, 1 ms, 30 ms floor, max 64 s", {**SAME_PATH, "rto_estimator": "freebsd",
                                                        "timer_granularity": "1ms", "min_rto": "30ms",
                                                        "max_rto": "64s"}),
    ("... ssthresh_whole_packets = false", {**SAME_PATH, "ssthresh_whole_packets": False}),
    ("... initial_window = 3", {**SAME_PATH, "initial_window": 3}),
    ("... abc = 2", {**SAME_PATH, "abc": 2}),
    ("... abc = 2, delayed_ack = true", {**SAME_PATH, "abc": 2, "delayed_ack": True}),
]


# linux, then one Linux knob at a time set back to freebsd9's.
LINUX = {"profile": "linux"}
LINUX_ATTRIBUTION = [
    ("freebsd9", {"profile": "freebsd9"}),
    ("linux", LINUX),
    ("... loss_detection = dupack", {**LINUX, "loss_detection": "dupack"}),
    ("... recovery_window = rfc6675", {**LINUX, "recovery_window": "rfc6675"}),
    ("... freebsd timer, 30 ms floor, 3 s, 64 s", {**LINUX, "rto_estimator": "freebsd", "min_rto": "30ms",
                                                   "initial_rto": "3s", "max_rto": "64s"}),
    ("... slow_start_rule = freebsd", {**LINUX, "slow_start_rule": "freebsd"}),
    ("... delayed_ack_rule = rfc5681, 100 ms", {**LINUX, "delayed_ack_rule": "rfc5681", "delayed_ack_timeout": "100ms"}),
    ("... initial_window = 3", {**LINUX, "initial_window": 3}),
    ("... dupack, rfc6675 window", {**LINUX, "loss_detection": "dupack", "recovery_window": "rfc6675"}),
]
ATTRIBUTIONS = {"ns2": NS2_ATTRIBUTION, "linux": LINUX_ATTRIBUTION}


def attribution(profile: str, seeds: range) -> None:
    print(f"single_flow.toml at 1 % loss, mean of seeds {seeds.start}-{seeds.stop - 1}")
    print()
    print("| [tcp] | goodput Mbit/s | retransmits | timeouts |")
    print("|---|---|---|---|")
    for label, tcp in ATTRIBUTIONS[profile]:
        rows = [ccsim.run(scenario(tcp, 0.01), seed=s).summary.iloc[0] for s in seeds]
        goodput = sum(r.goodput_bps for r in rows) / len(rows) / 1e6
        retx = sum(int(r.retransmits) for r in rows) / len(rows)
        rto = sum(int(r.timeouts) for r in rows) / len(rows)
        print(f"| {label} | {goodput:.3f} | {retx:.0f} | {rto:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--attribution", choices=sorted(ATTRIBUTIONS),
                        help="PROFILE vs freebsd9 at 1 %% loss, one knob at a time, seeds 1-10")
    args = parser.parse_args()
    if args.attribution:
        attribution(args.attribution, range(1, 11))
        return
    header = ["profile"] + [f"{m} {p}" for m in ("goodput Mbit/s", "retransmits", "timeouts", "mean RTT ms")
                            for p in ("0 %", "1 %")]
    print(f"single_flow.toml (10 Mbit/s, 40 ms, 84-packet drop-tail, NewReno, 60 s), seed {args.seed}")
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, tcp in ROWS:
        print("| " + " | ".join([label] + row(tcp, args.seed)) + " |")


if __name__ == "__main__":
    main()
