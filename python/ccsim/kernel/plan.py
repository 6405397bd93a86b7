"""What the testbed will build for a resolved scenario, or the one feature it cannot do.

Every refusal happens here, before anything is set up, as a ScenarioError naming the field of the
resolved document (docs/resolved-scenario.md) and what the testbed lacks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ccsim.errors import ScenarioError

__all__ = ["Plan", "FlowPlan", "plan_from_resolved", "LINUX_HEADER_BYTES", "SERIALISED_BY_DEFAULT", "default_serialise"]

# IPv4 (20) + TCP (20) + the timestamp option (12): what Linux puts in front of each segment's MSS
LINUX_HEADER_BYTES = 52
# distinct per-flow access delays: the delay line keeps a FIFO per delay (native/ccsim_delayline.c
# MAX_CLASSES, less the class of frames without extra delay)
MAX_ACCESS_DELAYS = 15


@dataclass(frozen=True)
class FlowPlan:
    index: int
    name: str
    algorithm: str
    params: dict[str, Any]
    intervals: list[tuple[int, int]]
    finite_bytes: int | None
    access_delay_ns: int = 0  # one way, on the data's way out and the ACKs' way back


@dataclass(frozen=True)
class Plan:
    duration_ns: int
    sample_interval_ns: int
    measure_start_ns: int
    measure_end_ns: int
    rate_bps: int
    queue_limit: dict[str, int]  # {"pkts": n} or {"bytes": n}
    reverse_rate_bps: int
    reverse_queue_limit: dict[str, int]
    data_delay_ns: int  # one way, sender to receiver, at the bottleneck (each flow adds its access delay)
    ack_delay_ns: int  # one way, receiver to sender, on the reverse link (likewise)
    loss_rate: float
    tcp: dict[str, Any]
    flows: list[FlowPlan]


# Parameter values whose behaviour a twin does not port (docs/kernel.md, "The twins"): refused rather
# than run as something else.
UNPORTED_VALUES: dict[tuple[str, str], Any] = {
    ("htcp", "linux_fixed_point"): True,  # Linux's integer H-TCP law; the twin ports the real-valued one
    ("tcp_limit", "base"): "westwood",  # the twin ports the NewReno base only
    ("tcp_limit", "re_filter"): "tustin",  # the twin ports the exact RE filter only
}
# Parameters a twin ports at one value only (its default): any other is refused.
ONLY_DEFAULT: dict[tuple[str, str], Any] = {
    ("tcp_limit", "nl_window_s"): 0.0,  # NL over the connection lifetime; a windowed maximum is not ported
}


# Twins the testbed serialises by default (``ccsim testbed run --serialise``; ``--no-serialise`` turns
# it off), with the reason: what tbf's two-frame bucket does to them (docs/kernel.md, "The testbed").
SERIALISED_BY_DEFAULT = {
    "tcp_limit": "TCP Limit's NL is a lifetime maximum of per-ACK rates: two segments through tbf's two-frame "
                 "bucket at once make two ACKs microseconds apart, NL 30-50 times the link rate, and no "
                 "forced decrease ever happens (mean RTT +55 % without)",
}


def default_serialise(plan: "Plan") -> str | None:
    """Why this plan's run is serialised by default (a twin of SERIALISED_BY_DEFAULT), or None."""
    for f in plan.flows:
        if f.algorithm in SERIALISED_BY_DEFAULT:
            return f"{f.algorithm}: {SERIALISED_BY_DEFAULT[f.algorithm]}"
    return None


def twin_params(algorithm: str, params: dict[str, Any], where: str) -> dict[str, Any]:
    """The scenario's parameters as the twin takes them: defaults that the Rust constructor derives
    from which parameters were given are made explicit, since the twin receives every parameter as a
    value (the front end fills in the others at their defaults) and cannot tell a default from a
    value given. The Rust constructor's checks that depend on the same distinction come along."""
    out = dict(params)
    if algorithm == "binomial":  # crates/ccsim-cc/src/algorithms/binomial.rs Binomial::new
        exponents = [k for k in ("k", "l") if k in params]
        if exponents:
            if params.get("preset", "custom") != "custom":
                raise ScenarioError(f"{where}.params.preset", f"{exponents[0]} is given with preset {params['preset']!r}: set preset = \"custom\"")
            missing = [k for k in ("k", "l") if k not in params]
            if missing:
                raise ScenarioError(f"{where}.params.{missing[0]}", "a custom binomial needs both k and l")
            out["preset"] = "custom"
        elif params.get("preset") == "custom":
            raise ScenarioError(f"{where}.params.k", "a custom binomial needs both k and l")
        if out.get("preset") == "aimd" and "beta" not in params:
            out["beta"] = 0.5
        if float(out.get("l", 0.0)) > 1.0 and not params.get("allow_unstable_l", False):
            raise ScenarioError(f"{where}.params.l", f"{out['l']} > 1 is unstable (Bansal & Balakrishnan section 2.1); set allow_unstable_l = true to accept it")
        if float(out.get("beta", 0.6)) >= 1.0:
            raise ScenarioError(f"{where}.params.beta", f"{out['beta']} must be below 1 (Eq. 2: 0 < beta < 1)")
    return out


def _refuse(field: str, reason: str) -> None:
    raise ScenarioError(field, f"{reason} (the kernel testbed cannot do this yet; docs/kernel.md)")


def plan_from_resolved(doc: dict[str, Any], ported: list[str], builtin: str | None = None) -> Plan:
    """The testbed's plan for ``doc`` (a resolved scenario), or a ScenarioError for the first feature
    it cannot reproduce. With ``builtin`` every flow runs that kernel algorithm instead."""
    topo = doc["topology"]
    if topo["kind"] != "dumbbell":
        _refuse("topology.kind", f"{topo['kind']} topology; only a single-bottleneck dumbbell")
    bottleneck, reverse = topo["bottleneck"], topo["reverse"]
    for field, link in (("topology.bottleneck", bottleneck), ("topology.reverse", reverse)):
        if link["queue"]["kind"] != "droptail":
            _refuse(f"{field}.queue.kind", f"{link['queue']['kind']} queue; only drop-tail")
    if reverse["loss_rate"] > 0:
        _refuse("topology.reverse.loss_rate", "random loss on the ACK path")
    flows = doc["flows"]
    if not flows:
        _refuse("flows", "a scenario without flows")
    tcp0 = None
    access: set[int] = set()
    plans = []
    for i, f in enumerate(flows):
        where = f"flows[{i}]"
        traffic = f["traffic"]
        if traffic["kind"] != "tcp":
            _refuse(f"{where}.traffic.kind", f"{traffic['kind']} traffic; only bulk TCP")
        if f["route"]["direction"] != "forward":
            _refuse(f"{where}.route.direction", "reverse-direction flows")
        delay = f["access_delay"]
        if delay["kind"] != "fixed":
            _refuse(f"{where}.access_delay", "access delays drawn at random; give a fixed one")
        access.add(delay["delay_ns"])
        if len(access - {0}) > MAX_ACCESS_DELAYS:
            _refuse(f"{where}.access_delay", f"more than {MAX_ACCESS_DELAYS} different access delays (the delay line's classes)")
        tcp = traffic["tcp"]
        if tcp0 is None:
            tcp0 = tcp
            _check_tcp(tcp, f"{where}.traffic.tcp")
        elif tcp != tcp0:
            _refuse(f"{where}.traffic.tcp", "TCP settings that differ between flows (they are per namespace)")
        if builtin is None and traffic["algorithm"] not in ported:
            _refuse(f"{where}.traffic.algorithm", f"{traffic['algorithm']} has no kernel twin yet (ported: {', '.join(ported)})")
        for (algorithm, name), value in UNPORTED_VALUES.items():
            if builtin is None and traffic["algorithm"] == algorithm and traffic["params"].get(name) == value:
                _refuse(f"{where}.traffic.params.{name}", f"{algorithm} with {name} = {json.dumps(value)}: the twin does not port it")
        for (algorithm, name), value in ONLY_DEFAULT.items():
            given = traffic["params"].get(name, value)
            if builtin is None and traffic["algorithm"] == algorithm and given != value:
                _refuse(f"{where}.traffic.params.{name}", f"{algorithm} with {name} = {json.dumps(given)}: the twin ports only {json.dumps(value)}")
        transfer = traffic["transfer"]
        plans.append(FlowPlan(
            index=i,
            name=f["name"],
            algorithm=f"{builtin} (kernel)" if builtin else traffic["algorithm"],
            params=twin_params(traffic["algorithm"], traffic["params"], f"{where}.traffic") if builtin is None
            else dict(traffic["params"]),
            intervals=[(iv["start_ns"], iv["stop_ns"]) for iv in f["intervals"]],
            finite_bytes=transfer["bytes"] if transfer["kind"] == "finite" else None,
            access_delay_ns=delay["delay_ns"],
        ))
    assert tcp0 is not None
    return Plan(
        duration_ns=doc["duration_ns"],
        sample_interval_ns=doc["sample_interval_ns"],
        measure_start_ns=doc["measure_start_ns"],
        measure_end_ns=doc["measure_end_ns"],
        rate_bps=bottleneck["rate_bps"],
        queue_limit=dict(bottleneck["queue"]["limit"]),
        reverse_rate_bps=reverse["rate_bps"],
        reverse_queue_limit=dict(reverse["queue"]["limit"]),
        data_delay_ns=bottleneck["delay_ns"],
        ack_delay_ns=reverse["delay_ns"],
        loss_rate=bottleneck["loss_rate"],
        tcp=dict(tcp0),
        flows=plans,
    )


def _check_tcp(tcp: dict[str, Any], where: str) -> None:
    if tcp["header_bytes"] != LINUX_HEADER_BYTES:
        _refuse(f"{where}.header_bytes", f"{tcp['header_bytes']} header bytes; Linux with timestamps sends {LINUX_HEADER_BYTES}")
    if not tcp["delayed_ack"]:
        _refuse(f"{where}.delayed_ack", "turning delayed ACKs off (Linux has no switch for it)")
    if not tcp["limited_transmit"]:
        _refuse(f"{where}.limited_transmit", "turning limited transmit off (Linux always uses it)")
    if tcp["mss_bytes"] + tcp["header_bytes"] > 1500 or tcp["mss_bytes"] < 536:
        _refuse(f"{where}.mss_bytes", f"an MSS of {tcp['mss_bytes']} bytes; the testbed's veths carry 536..1448")
