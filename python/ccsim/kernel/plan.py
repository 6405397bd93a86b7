"""What the testbed will build for a resolved scenario, or the one feature it cannot do.

Every refusal happens here, before anything is set up, as a ScenarioError naming the field of the
resolved document (docs/resolved-scenario.md) and what the testbed lacks.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from ccsim.errors import ScenarioError

__all__ = ["Plan", "FlowPlan", "plan_from_resolved", "LINUX_HEADER_BYTES", "SERIALISED_BY_DEFAULT", "default_serialise",
           "LINUX_OWN_KNOBS", "TCP_RTO_MAX_MS_RANGE", "route_rto_min_ms"]

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


# The TCP machine's knobs the testbed cannot set: Linux does its own (net/ipv4/tcp_input.c,
# tcp_timer.c, tcp_output.c), which the simulator's `linux` profile models. A value other than that
# profile's is refused under the linux profile (the scenario asked for it) and named under another
# profile (it came with the profile). The knobs not listed are set (docs/kernel.md, "Settings").
LINUX_OWN_KNOBS = {
    "delayed_ack_timeout_ns": "Linux's delayed-ACK timer adapts between 40 and 200 ms (TCP_DELACK_MIN, TCP_DELACK_MAX)",
    "initial_rto_ns": "Linux's initial RTO is 1 s (TCP_TIMEOUT_INIT); no setting changes it",
    "rto_estimator": "Linux estimates the RTO its own way (tcp_rtt_estimator, tcp_set_rto)",
    "timer_granularity_ns": "Linux's timers run on its jiffies",
    "max_burst_pkts": "Linux has no burst limit (TSQ and pacing instead)",
    "ssthresh_whole_packets": "the twins keep ssthresh in bytes beside Linux's whole segments",
    "sack_recovery": "Linux recovers with RFC 6675 SACK and RACK",
    "recovery_window": "Linux's recovery window is PRR (RFC 6937)",
    "delayed_ack_rule": "Linux's receiver ACKs by its own rule (tcp_send_delayed_ack, quick ACKs)",
    "loss_detection": "Linux detects losses with RACK-TLP",
    "partial_ack_rto": "Linux restarts the timer on every partial ACK",
    "send_jitter_ns": "the real host's own timing, not a drawn jitter",
}
# FreeBSD's tcp_rexmit_slop (hz/5, tcp_timer.c), added to SRTT + 4 RTTVAR by TCPT_RANGESET.
FREEBSD_REXMIT_SLOP_NS = 200_000_000


def route_rto_min_ms(tcp: dict[str, Any]) -> int:
    """The sender route's ``rto_min`` for the scenario's TCP settings. Linux's timer is SRTT +
    max(4 mdev, rto_min) (tcp_rtt_estimator, __tcp_set_rto); under the ``freebsd`` estimator (SRTT +
    4 RTTVAR + the 200 ms slop, at least ``min_rto``) rto_min is the slop, so Linux fires at most
    min(4 RTTVAR, 200 ms) before FreeBSD would (with ``min_rto`` itself, 30 ms, it fired about 200 ms
    before); otherwise the scenario's minimum RTO."""
    min_rto_ns = tcp["min_rto_ns"]
    if tcp["rto_estimator"] == "freebsd":
        min_rto_ns = max(min_rto_ns, FREEBSD_REXMIT_SLOP_NS)
    return max(1, min_rto_ns // 1_000_000)


# net.ipv4.tcp_rto_max_ms (Linux 6.15+, per namespace) accepts 1000..120000
TCP_RTO_MAX_MS_RANGE = (1000, 120000)
# The access links are not built (the veths carry frames at memory speed): named when the access
# rate is less than this many times the bottleneck's, where its transmission time may matter.
ACCESS_RATE_FACTOR = 100


@functools.lru_cache(maxsize=8)
def _linux_profile(mss_bytes: int) -> dict[str, Any]:
    """The resolved TCP settings of the simulator's `linux` profile (docs/profiles.md)."""
    from ccsim.scenario import load_scenario  # lazy: the scenario model imports the engine

    text = (f'[run]\nduration = "1s"\n[topology]\nkind = "dumbbell"\nbottleneck_rate = "10Mbit"\nbottleneck_delay = "10ms"\nqueue = "10pkt"\n'
            f'[tcp]\nprofile = "linux"\nmss = "{mss_bytes}B"\n[[flows]]\nalgorithm = "newreno"\n')
    return load_scenario(text).resolve()["flows"][0]["traffic"]["tcp"]


def not_reproduced(doc: dict[str, Any], builtin: str | None = None) -> list[str]:
    """What of the resolved scenario ``doc`` the testbed runs otherwise, one line each naming the field
    (refusals are plan_from_resolved's). Called before anything is set up."""
    named: list[str] = []
    tcp = doc["flows"][0]["traffic"]["tcp"]
    where = "flows[*].traffic.tcp"
    if tcp["profile"] != "linux":
        linux = _linux_profile(tcp["mss_bytes"])
        differ = [k for k in LINUX_OWN_KNOBS if tcp[k] != linux[k]]
        if differ:
            named.append(f"{where}.profile: {tcp['profile']}, but the kernel testbed runs Linux's TCP machine; these "
                         f"knobs differ from the linux profile and are Linux's: " + ", ".join(
                             f"{k} ({_show(tcp[k])}, Linux {_show(linux[k])})" for k in differ))
    if builtin is not None:
        for knob, what in (("abc_limit", "no ABC limit (tcp_slow_start counts every segment)"),
                           ("slow_start_rule", "Linux's (tcp_in_slow_start)")):
            named.append(f"{where}.{knob}: {_show(tcp[knob])}; the kernel's {builtin} has {what}")
    topo = doc["topology"]
    access = topo.get("access_rate_bps")
    if access and access < ACCESS_RATE_FACTOR * topo["bottleneck"]["rate_bps"]:
        named.append(f"topology.access_rate_bps: {access} bit/s is not built (the veths carry frames at memory "
                     f"speed), nor the access queues")
    return named


def _show(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


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
        if link.get("loss_model", {"kind": "bernoulli"})["kind"] != "bernoulli":
            _refuse(f"{field}.loss_model", "Gilbert-Elliott loss; the delay line draws independent (Bernoulli) losses")
    if reverse["loss_rate"] > 0:
        _refuse("topology.reverse.loss_rate", "random loss on the ACK path")
    for field, link in (("topology.bottleneck", bottleneck), ("topology.reverse", reverse)):
        if link.get("loss_changes"):
            _refuse(f"{field}.loss_changes", "a loss rate that changes during the run (the delay line draws one rate)")
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
        if f.get("start_spread_ns", 0) > 0:
            _refuse(f"{where}.start_spread_ns", "random start times (the flows start at their intervals' starts)")
        if traffic.get("app_rate", {"kind": "unlimited"})["kind"] != "unlimited":
            _refuse(f"{where}.traffic.app_rate", "a rate-limited application (the sender writes as fast as TCP takes)")
        if builtin is not None and tcp["initial_ssthresh"]["kind"] != "unlimited":
            _refuse(f"{where}.traffic.tcp.initial_ssthresh", f"an initial ssthresh with the kernel's own {builtin} "
                    f"(Linux 6.x starts every connection at an unlimited ssthresh: tcp_init_metrics; the twins set it)")
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
    max_rto_ms = tcp["max_rto_ns"] / 1e6
    if not TCP_RTO_MAX_MS_RANGE[0] <= max_rto_ms <= TCP_RTO_MAX_MS_RANGE[1] or max_rto_ms != int(max_rto_ms):
        _refuse(f"{where}.max_rto_ns", f"a maximum RTO of {max_rto_ms:g} ms; Linux's net.ipv4.tcp_rto_max_ms takes whole "
                f"milliseconds in {TCP_RTO_MAX_MS_RANGE[0]}..{TCP_RTO_MAX_MS_RANGE[1]}")
    if tcp["min_rto_ns"] % 1_000_000 or tcp["min_rto_ns"] == 0:
        _refuse(f"{where}.min_rto_ns", f"a minimum RTO of {tcp['min_rto_ns'] / 1e6:g} ms; the route's rto_min takes whole milliseconds")
    if tcp["profile"] == "linux":
        linux = _linux_profile(tcp["mss_bytes"])
        for knob, what in LINUX_OWN_KNOBS.items():
            if tcp[knob] != linux[knob]:
                _refuse(f"{where}.{knob}", f"{_show(tcp[knob])} where the linux profile has {_show(linux[knob])}: {what}")
    if tcp["mss_bytes"] + tcp["header_bytes"] > 1500 or tcp["mss_bytes"] < 536:
        _refuse(f"{where}.mss_bytes", f"an MSS of {tcp['mss_bytes']} bytes; the testbed's veths carry 536..1448")
