"""A testbed run's health verdict: was the machine able to run the scenario as stated?

A kernel run's figures are only the scenario's if the testbed kept its timing. Each check compares
one measurement with a stated bound (docs/kernel.md, "Health"); a check outside its bound is a
one-line warning in the summary, and ``ccsim testbed run --strict`` makes it an error. The verdict
is kept in meta.json (``kernel.health``).

- the empty path: the handshake RTTs measured before time zero (the minimum) against what the delay
  line adds both ways (the scenario's base RTT without access delay);
- the delay line: how late it sent frames (mean, p99, max, both directions) and that it relayed
  every frame it received (no ring overflow, no send error);
- the traffic: the share of the run the sender and the receiver waited on a run queue
  (/proc/PID/schedstat), and the share of the flows' samples Linux marked application-limited;
- the host: the load average per CPU at the end (and, as a figure only, the share of the run some
  runnable task waited for a CPU, PSI);
- other testbed runs alive at the start or the end, or the machine's testbed lock held by another.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ccsim.errors import CcsimError

__all__ = ["Check", "verdict", "BOUNDS", "HealthError", "health_lines"]


class HealthError(CcsimError):
    """``--strict``: a check of the run's health verdict was outside its bound."""

# The bounds, each with its unit in its name.
BOUNDS = {
    "empty_rtt_above_ms": 1.0,   # the handshake may take this much longer than the delay line's two ways
    "empty_rtt_below_ms": 0.2,   # ... and this much less (the delays are wrong)
    "late_mean_ms": 0.2,         # the delay line's mean lateness, each direction
    "late_p99_ms": 1.0,          # its 99th percentile
    "late_max_ms": 5.0,          # its worst frame (a stall delivers a burst into the queue)
    "traffic_cpu_wait_share": 0.05,  # share of the run the sender, or the receiver, waited on a run queue
    "app_limited_share": 0.05,   # share of the flows' samples whose delivery rate was application-limited
    "load_per_cpu": 4.0,         # 1-minute load average per CPU at the end (the bad runs: 7.5-12.5)
}


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    text: str  # one line: the measurement, and the bound if it failed


def verdict(m: Any, concurrency: dict[str, Any]) -> dict[str, Any]:
    """The checks of Measurements ``m`` (ccsim.kernel.testbed) and the run's ``concurrency`` record
    (runner: lock holder, other testbeds): ``{"ok", "checks": [...], "bounds", "figures"}``."""
    checks: list[Check] = []
    figures: dict[str, Any] = {}
    b = BOUNDS
    # the empty path
    expected_ms = m.empty_path_rtt_ns / 1e6
    if m.probe_rtts_us:
        got_ms = min(m.probe_rtts_us) / 1e3
        figures.update(empty_rtt_ms=got_ms, empty_rtt_expected_ms=expected_ms, empty_rtt_probes=len(m.probe_rtts_us))
        ok = expected_ms - b["empty_rtt_below_ms"] <= got_ms <= expected_ms + b["empty_rtt_above_ms"]
        checks.append(Check("empty_rtt", ok, f"empty-path RTT {got_ms:.2f} ms against the scenario's {expected_ms:.2f} ms"
                            + ("" if ok else f" (bound -{b['empty_rtt_below_ms']:g}/+{b['empty_rtt_above_ms']:g} ms)")))
    else:
        checks.append(Check("empty_rtt", False, "empty-path RTT not measured: every handshake before time zero was lost or late"))
    # the delay line
    for direction, totals in sorted(m.delayline_totals.items()):
        name = {"ab": "data", "ba": "ACK"}.get(direction, direction)
        mean, p99, worst = (totals.get(k, 0) / 1e6 for k in ("late_mean_ns", "late_p99_ns", "late_max_ns"))
        figures[f"delay_line_{name.lower()}"] = dict(late_mean_ms=mean, late_p99_ms=p99, late_max_ms=worst,
                                                     relayed=totals.get("tx", 0), received=totals.get("rx", 0))
        late_ok = mean <= b["late_mean_ms"] and p99 <= b["late_p99_ms"] and worst <= b["late_max_ms"]
        checks.append(Check(f"delay_line_{name.lower()}_late", late_ok,
                            f"delay line ({name}): frames late by {mean:.3f} ms mean, {p99:.3f} ms p99, {worst:.3f} ms max"
                            + ("" if late_ok else f" (bounds {b['late_mean_ms']:g}/{b['late_p99_ms']:g}/{b['late_max_ms']:g} ms)")))
        lost_here = totals.get("ring_full", 0) + totals.get("errors", 0)
        checks.append(Check(f"delay_line_{name.lower()}_relayed", lost_here == 0,
                            f"delay line ({name}): {totals.get('tx', 0)} frames relayed"
                            + ("" if lost_here == 0 else f", {lost_here} lost in the relay (ring full or send errors; bound 0)")))
    if not m.delayline_totals:
        checks.append(Check("delay_line", False, "the delay line reported nothing"))
    # the host
    start, end = m.host_at_start, m.host_at_end
    if "cpu_some_us" in start and "cpu_some_us" in end and end["time_ns"] > start["time_ns"]:
        # a figure, not a check: CPU-bound processes at nice 19 make it near 100 % and harm nothing
        # (the testbed's own processes run SCHED_FIFO; their waits are checked above)
        figures["cpu_wait_share"] = (end["cpu_some_us"] - start["cpu_some_us"]) * 1e3 / (end["time_ns"] - start["time_ns"])
    # the testbed's own processes: a sender or receiver that waits for a CPU leaves the window unused
    # or the receive buffer full (measured: three CPU hogs at nice 0 beside a nice 10 harness, chd at
    # 10 Mbit/s: sender 27 %, receiver 37 % of the run waiting, goodput -53 %)
    for name in ("sender", "delay_line", "receiver"):
        key = f"{name}_run_delay_ns"
        if key in start and key in end and end["time_ns"] > start["time_ns"]:
            share = (end[key] - start[key]) / (end["time_ns"] - start["time_ns"])
            figures[f"{name}_cpu_wait_share"] = share
            if name != "delay_line":  # its lateness is measured directly above
                ok = share <= b["traffic_cpu_wait_share"]
                checks.append(Check(f"{name}_cpu_wait", ok, f"{name}: waited for a CPU {share:.1%} of the run"
                                    + ("" if ok else f" (bound {b['traffic_cpu_wait_share']:.0%})")))
    app = [s for s in m.tcp_samples if "rate_flags" in s and s.get("t_ns", 0) > 0]
    if app:
        share = sum(s["rate_flags"] & 1 for s in app) / len(app)
        figures["app_limited_share"] = share
        ok = share <= b["app_limited_share"]
        checks.append(Check("app_limited", ok, f"flows application-limited in {share:.1%} of the samples"
                            + ("" if ok else f" (bound {b['app_limited_share']:.0%}; tcpi_delivery_rate_app_limited)")))
    if "load1" in end:
        per_cpu = end["load1"] / end["cpus"]
        figures.update(load1=end["load1"], cpus=end["cpus"])
        ok = per_cpu <= b["load_per_cpu"]
        checks.append(Check("load", ok, f"host: load average {end['load1']:.1f} on {end['cpus']:.0f} CPUs"
                            + ("" if ok else f" (bound {b['load_per_cpu']:g} per CPU)")))
    # other testbeds
    others = sorted(set(concurrency.get("other_testbeds_at_start", [])) | set(concurrency.get("other_testbeds_at_end", [])))
    holder = concurrency.get("lock_held_by_another_run")
    alone = not others and not holder
    checks.append(Check("alone", alone, "no other testbed run" if alone else
                        "other testbed runs alive beside this one: " + ", ".join(
                            [f"harness pid {p}" for p in others] + ([f"lock held by {holder}"] if holder else []))))
    return {"ok": all(c.ok for c in checks), "checks": [asdict(c) for c in checks], "bounds": dict(BOUNDS),
            "figures": figures}


def health_lines(health: dict[str, Any]) -> list[str]:
    """The verdict for the summary: ``health: ok (...)`` on one line, or one ``warning: health: ...``
    line per check outside its bound."""
    failed = [c["text"] for c in health["checks"] if not c["ok"]]
    if not failed:
        return ["health: ok (" + "; ".join(c["text"] for c in health["checks"]) + ")"]
    return [f"warning: health: {text}" for text in failed]
