"""The namespace testbed: a single-bottleneck dumbbell in the real Linux TCP stack.

::

    sender ns                  middle ns (no IP)                               receiver ns
    s0 10.0.0.1 ==veth== m0 --[delay line: data delay + access delay, random loss]--> m1 ==veth== r0 10.0.0.2
                         m0 <--[delay line: ACK delay + access delay]------------- m1
                         m0 egress: tbf (reverse rate) + fifo (reverse queue)
                                                        m1 egress: tbf (bottleneck rate) + fifo (queue)

The bottleneck queue sits in the middle namespace, as a router's would: on the sender's own
interface, TCP Small Queues would keep it nearly empty and the algorithm would never meet a full
queue. Propagation delay comes from the delay line (native/ccsim_delayline.c), since sch_netem is
often missing; it also drops data frames at random for the scenario's loss rate. Offloads are off so
that every frame is one MTU-sized segment with a finished checksum. IPv6 is off (no router
solicitations or DAD in the measurements).

Everything is started so that it dies with the harness (ccsim.kernel.netns), and the host's own
namespace is never configured: links are created from inside the sender and receiver namespaces.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim.errors import CcsimError
from ccsim.kernel.build import Build
from ccsim.kernel.loader import Registration, encode_params, list_globals
from ccsim.kernel.netns import Namespace
from ccsim.kernel.plan import Plan, route_rto_min_ms
from ccsim.kernel.qdisc_stats import QdiscReader

__all__ = ["Measurements", "run_testbed", "initial_ssthresh_bytes", "ETHERNET_HEADER_BYTES", "SENDER_ADDR", "RECEIVER_ADDR"]

SENDER_ADDR = "10.0.0.1"
RECEIVER_ADDR = "10.0.0.2"
SERVER_PORT = 5001
FIRST_FLOW_PORT = 40000
ETHERNET_HEADER_BYTES = 14
START_MARGIN_NS = 700_000_000  # between "everything is up" and the scenario's time zero
# The delay line runs SCHED_FIFO: at normal priority, on a busy machine, frames left it milliseconds late
DELAYLINE_RT_PRIORITY = 50
# The sender and the receiver run SCHED_FIFO below it, from their interpreter's start (chrt): at
# nice 10 beside three CPU-bound loops at nice 0 they waited for a CPU 27 % and 37 % of a run, and
# goodput fell 53 % (docs/kernel.md, "Health"). Both block in select() between ACKs, and Linux's RT
# throttling bounds them anyway.
TRAFFIC_RT_PRIORITY = 40
TRAFFIC_PREFIX = ["chrt", "-f", str(TRAFFIC_RT_PRIORITY)]
TRAFFIC_SCRIPT = Path(__file__).resolve().parent / "traffic.py"


@dataclass
class Measurements:
    """Everything a run observed, with times relative to the scenario's time zero (ns)."""

    plan: Plan
    tcp_samples: list[dict[str, Any]] = field(default_factory=list)
    qdisc_samples: list[dict[str, Any]] = field(default_factory=list)  # {"t_ns" (when read), "bottleneck": {...}, "reverse": {...}}
    delayline_ticks: list[dict[str, int]] = field(default_factory=list)
    delayline_totals: dict[str, dict[str, int]] = field(default_factory=dict)
    cc_samples: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # flow index -> samples
    registrations: list[dict[str, Any]] = field(default_factory=list)
    params_used: dict[int, dict[str, Any]] = field(default_factory=dict)
    tbf_rate_bps: int = 0
    sender_errors: list[str] = field(default_factory=list)
    probe_rtts_us: list[int] = field(default_factory=list)  # empty-path handshakes before time zero
    empty_path_rtt_ns: int = 0  # what the delay line adds both ways (the path without access delay)
    host_at_start: dict[str, float] = field(default_factory=dict)  # host_load(): load average, CPU pressure
    host_at_end: dict[str, float] = field(default_factory=dict)


# tbf rounds its bucket to a time at the configured rate; a bucket of exactly one frame may then
# hold a few bytes less than the frame and drop every full-size frame.
SERIALISE_BURST_MARGIN_BYTES = 64


def _tbf_rate_bps(rate_bps: int, mtu: int) -> int:
    """tbf counts the Ethernet header, the simulator's link only the IP packet: scaled so that
    full-size frames leave at the scenario's rate of IP bytes."""
    return -(-rate_bps * (mtu + ETHERNET_HEADER_BYTES) // mtu)


def _fifo(limit: dict[str, int]) -> list[str]:
    if "pkts" in limit:
        return ["pfifo", "limit", str(limit["pkts"])]
    return ["bfifo", "limit", str(limit["bytes"] + ETHERNET_HEADER_BYTES * max(1, limit["bytes"] // 1500))]


def initial_ssthresh_bytes(tcp: dict[str, Any]) -> int:
    """The twins' initial ssthresh (bpf/ccsim_cc.h ``tcp_initial_ssthresh_bytes``; 0: unlimited), as the
    Rust Window: one byte below the initial window for ``below_initial_window``."""
    kind = tcp["initial_ssthresh"]["kind"]
    if kind == "bytes":
        return int(tcp["initial_ssthresh"]["bytes"])
    if kind == "below_initial_window":
        return tcp["initial_window_pkts"] * tcp["mss_bytes"] - 1
    return 0


def _mac(ns: Namespace, dev: str) -> str:
    return json.loads(ns.run(["ip", "-j", "link", "show", "dev", dev]))[0]["address"]


def serialisation_ns(plan: Plan) -> tuple[int, int]:
    """(data, ACK) transmission time of one full-size data frame at the bottleneck rate and of one
    ACK (headers only) at the reverse rate, in IP bytes as the simulator's links count them."""
    mtu = plan.tcp["mss_bytes"] + plan.tcp["header_bytes"]
    return (mtu * 8 * 10**9 // plan.rate_bps, plan.tcp["header_bytes"] * 8 * 10**9 // plan.reverse_rate_bps)


def _set_up(plan: Plan, snd: Namespace, mid: Namespace, rcv: Namespace, serialise: bool = False) -> int:
    mtu = plan.tcp["mss_bytes"] + plan.tcp["header_bytes"]
    snd.run(["ip", "link", "add", "s0", "type", "veth", "peer", "name", "m0", "netns", str(mid.pid)])
    rcv.run(["ip", "link", "add", "r0", "type", "veth", "peer", "name", "m1", "netns", str(mid.pid)])
    sack = "1" if plan.tcp["sack"] else "0"
    common = ["net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]
    tcp = [f"net.ipv4.tcp_sack={sack}", "net.ipv4.tcp_ecn=0", "net.ipv4.tcp_no_metrics_save=1",
           f"net.ipv4.tcp_reordering={plan.tcp['dupack_threshold']}"]
    rwnd = plan.tcp["rwnd_bytes"]
    # the sender's buffer never the limit before the receiver's window (Linux's default 4 MiB held
    # about 1,860 segments); Linux's maximum RTO, the scenario's (Linux 6.15+, per namespace); a
    # killed run's orphaned sockets give up after one retransmission (Linux's default, 8 tries
    # with backoff, kept the twin's struct_ops map for about 155 s; a normal run aborts its sockets
    # and leaves no orphan, so the measurements never meet this)
    snd.run(["sysctl", "-q", "-w", *common, *tcp, f"net.ipv4.tcp_wmem=4096 16384 {2 * rwnd}",
             f"net.ipv4.tcp_rto_max_ms={plan.tcp['max_rto_ns'] // 1_000_000}", "net.ipv4.tcp_orphan_retries=1"])
    rcv.run(["sysctl", "-q", "-w", *common, *tcp, f"net.ipv4.tcp_rmem=4096 131072 {2 * rwnd}"])
    mid.run(["sysctl", "-q", "-w", *common])
    for ns, devs in ((snd, ["s0"]), (mid, ["m0", "m1"]), (rcv, ["r0"])):
        for dev in devs:
            ns.run(["ip", "link", "set", "dev", dev, "mtu", str(mtu), "up"])
            ns.run(["ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off"])
        ns.run(["ip", "link", "set", "dev", "lo", "up"])
    snd.run(["ip", "addr", "add", f"{SENDER_ADDR}/24", "dev", "s0"])
    rcv.run(["ip", "addr", "add", f"{RECEIVER_ADDR}/24", "dev", "r0"])
    # the scenario's initial window and minimum RTO (FreeBSD's slop under its estimator), on the sender's route
    rto_min_ms = route_rto_min_ms(plan.tcp)
    snd.run(["ip", "route", "replace", "10.0.0.0/24", "dev", "s0", "initcwnd", str(plan.tcp["initial_window_pkts"]),
             "rto_min", f"{rto_min_ms}ms"])
    # no ARP exchange in the measurements: each end knows the other's address
    snd.run(["ip", "neigh", "replace", RECEIVER_ADDR, "lladdr", _mac(rcv, "r0"), "dev", "s0", "nud", "permanent"])
    rcv.run(["ip", "neigh", "replace", SENDER_ADDR, "lladdr", _mac(snd, "s0"), "dev", "r0", "nud", "permanent"])
    # Two frames by default. With `serialise`, one frame (and a margin for tbf's rounding of the
    # bucket to time): a frame then leaves at least one transmission time after the previous one,
    # as from the simulator's link, and the delay line adds the transmission time itself.
    burst = (mtu + ETHERNET_HEADER_BYTES + SERIALISE_BURST_MARGIN_BYTES) if serialise else 2 * (mtu + ETHERNET_HEADER_BYTES)
    rate = _tbf_rate_bps(plan.rate_bps, mtu)
    for dev, link_rate, limit in (("m1", rate, plan.queue_limit),
                                  ("m0", _tbf_rate_bps(plan.reverse_rate_bps, mtu), plan.reverse_queue_limit)):
        mid.run(["tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "tbf", "rate", f"{link_rate}bit",
                 "burst", str(burst), "limit", "100000000"])
        mid.run(["tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *_fifo(limit)])
    return rate


def _link_stats(counters: dict[int, dict[str, dict[str, int]]], ifindex: dict[str, int]) -> dict[str, dict[str, int]]:
    """The bottleneck's and the reverse link's counters from one qdisc dump (qdisc_stats)."""
    out = {}
    for link, dev in (("bottleneck", "m1"), ("reverse", "m0")):
        stats = counters.get(ifindex[dev], {})
        tbf = stats.get("tbf", {})
        fifo = stats.get("pfifo") or stats.get("bfifo") or {}
        out[link] = {
            "sent_bytes": tbf.get("bytes", 0), "sent_pkts": tbf.get("packets", 0),
            "backlog_bytes": fifo.get("backlog", 0), "backlog_pkts": fifo.get("qlen", 0),
            "drops": fifo.get("drops", 0),  # tbf's own count repeats its child's
        }
    return out


def host_load(procs: dict[str, subprocess.Popen] | None = None) -> dict[str, float]:
    """The host's 1-minute load average, its CPU count, the total microseconds some runnable task
    waited for a CPU (PSI, /proc/pressure/cpu; absent without CONFIG_PSI), and for each of ``procs``
    (name -> process) the nanoseconds it has waited on a run queue (``<name>_run_delay_ns``, the
    second field of /proc/PID/schedstat)."""
    out: dict[str, float] = {"cpus": float(os.cpu_count() or 1), "time_ns": float(time.monotonic_ns())}
    for name, proc in (procs or {}).items():
        try:
            out[f"{name}_run_delay_ns"] = float(Path(f"/proc/{proc.pid}/schedstat").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    try:
        out["load1"] = float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    try:
        for line in Path("/proc/pressure/cpu").read_text().splitlines():
            if line.startswith("some "):
                out["cpu_some_us"] = float(dict(kv.split("=") for kv in line.split()[1:])["total"])
    except (OSError, ValueError, KeyError):
        pass
    return out


def run_testbed(plan: Plan, built: Build, catalogue: list[dict[str, Any]], seed: int, progress: bool = False,
                builtin: str | None = None, serialise: bool = False) -> Measurements:
    """Builds the testbed, runs the plan's flows and tears everything down; returns what it saw.
    ``builtin`` names a kernel algorithm every flow uses instead of a twin (nothing is registered).
    ``serialise`` gives every frame its own transmission time, as the simulator's links do: tbf's
    bucket holds one frame and the delay line adds one frame's transmission time (docs/kernel.md)."""
    m = Measurements(plan=plan)
    progress = progress and sys.stderr.isatty()
    interval_ns = plan.sample_interval_ns
    registrations: dict[tuple[str, str], Registration] = {}
    namespaces: list[Namespace] = []
    procs: list[subprocess.Popen] = []
    try:
        # 1. register one twin per distinct (algorithm, parameters)
        flow_cc: dict[int, str] = {f.index: builtin for f in plan.flows} if builtin else {}
        if builtin and builtin not in _available_algorithms():
            raise CcsimError(f"kernel testbed: the kernel has no algorithm {builtin} (available: {' '.join(_available_algorithms())})")
        for f in ([] if builtin else plan.flows):
            obj = built.object_for(f.algorithm)
            used, settings = encode_params(f.algorithm, f.params, catalogue, list_globals(built.loader, obj),
                                           f"flows[{f.index}]")
            settings.append(f"tcp_abc_limit={plan.tcp['abc_limit']}")
            settings.append(f"tcp_slow_start_linux={int(plan.tcp['slow_start_rule'] == 'linux')}")
            settings.append(f"tcp_initial_ssthresh_bytes={initial_ssthresh_bytes(plan.tcp)}")
            m.params_used[f.index] = used
            key = (f.algorithm, json.dumps(settings))
            if key not in registrations:
                registrations[key] = Registration(built.loader, obj, f.algorithm, settings,
                                                  max(1, interval_ns // 1_000_000)).open()
            flow_cc[f.index] = registrations[key].name
        # 2. the network
        for role in ("sender", "middle", "receiver"):
            namespaces.append(Namespace(role))  # listed at once: torn down even if the next one fails
        snd, mid, rcv = namespaces
        m.tbf_rate_bps = _set_up(plan, snd, mid, rcv, serialise)
        qdiscs = QdiscReader(mid.path)
        ifindex = {dev: json.loads(mid.run(["ip", "-j", "link", "show", "dev", dev]))[0]["ifindex"] for dev in ("m0", "m1")}
        extra_data_ns, extra_ack_ns = serialisation_ns(plan) if serialise else (0, 0)
        # each flow's access delay, on its data's way out and its ACKs' way back, keyed by its local port
        access = [arg for f in plan.flows if f.access_delay_ns
                  for arg in ("-f", f"{FIRST_FLOW_PORT + f.index}:{f.access_delay_ns}")]
        delayline = mid.spawn([str(built.delayline), "-a", "m0", "-b", "m1", "-d", str(plan.data_delay_ns + extra_data_ns),
                               "-D", str(plan.ack_delay_ns + extra_ack_ns), "-l", repr(plan.loss_rate), "-s", str(seed),
                               "-i", str(interval_ns), "-R", str(DELAYLINE_RT_PRIORITY), *access],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(delayline)
        receiver = rcv.spawn([*TRAFFIC_PREFIX, sys.executable, str(TRAFFIC_SCRIPT), "receiver", str(SERVER_PORT)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(receiver)
        for name, proc in (("delay line", delayline), ("receiver", receiver)):
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                err = proc.stderr.read().strip() if proc.stderr else ""
                raise CcsimError(f"kernel testbed: the {name} did not start: {err[:300]}")
        # 3. the flows, from time zero
        t0 = time.monotonic_ns() + START_MARGIN_NS
        m.empty_path_rtt_ns = plan.data_delay_ns + extra_data_ns + plan.ack_delay_ns + extra_ack_ns
        spec = {
            "t0_ns": t0, "duration_ns": plan.duration_ns, "sample_interval_ns": interval_ns,
            "src": SENDER_ADDR, "dst": RECEIVER_ADDR, "port": SERVER_PORT,
            "flows": [{"index": f.index, "port": FIRST_FLOW_PORT + f.index, "cc": flow_cc[f.index],
                       "intervals": f.intervals, "bytes": f.finite_bytes} for f in plan.flows],
        }
        ticks: list[str] = []
        tick_reader = threading.Thread(target=_collect_lines, args=(delayline, ticks), daemon=True)
        tick_reader.start()
        sender = snd.spawn([*TRAFFIC_PREFIX, sys.executable, str(TRAFFIC_SCRIPT), "sender", json.dumps(spec)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(sender)
        lines: list[str] = []
        reader = threading.Thread(target=_collect_lines, args=(sender, lines), daemon=True)
        reader.start()
        # the links' counters by time: each sample stamped when read; a sample the loop could not take
        # near its time (a loaded machine) is skipped, not taken late under its time's label
        k = 0
        watched = {"sender": sender, "delay_line": delayline, "receiver": receiver}
        m.host_at_start = host_load(watched)
        while sender.poll() is None:
            due = t0 + k * interval_ns
            now = time.monotonic_ns()
            if now < due:
                time.sleep(min((due - now) / 1e9, 0.05))
                continue
            if k * interval_ns <= plan.duration_ns:
                stamp, counters = qdiscs.read()
                m.qdisc_samples.append({"t_ns": stamp - t0, **_link_stats(counters, ifindex)})
                m.host_at_end = host_load(watched)  # the last one taken while the sender still runs
                if progress and k and k % max(1, 1_000_000_000 // interval_ns) == 0:
                    print(f"\rkernel testbed: {k * interval_ns / 1e9:.0f} of {plan.duration_ns / 1e9:.0f} s",
                          end="", file=sys.stderr, flush=True)
            k = max(k + 1, (time.monotonic_ns() - t0 + interval_ns // 2) // interval_ns)
        qdiscs.close()
        if progress:
            print(file=sys.stderr)
        reader.join(timeout=10)
        if sender.returncode != 0:
            err = sender.stderr.read().strip() if sender.stderr else ""
            raise CcsimError(f"kernel testbed: the sender failed: {err[-500:]}")
        for line in lines:
            if not line.startswith("{"):
                continue  # "ready"
            record = json.loads(line)
            if "error" in record:
                m.sender_errors.append(record["error"])
            elif "probe_rtts_us" in record:
                m.probe_rtts_us = list(record["probe_rtts_us"])
            else:
                m.tcp_samples.append(record)
        # 4. teardown in order: sockets are closed (the sender exited), stop the delay line
        delayline.terminate()
        delayline.wait(timeout=10)
        tick_reader.join(timeout=5)
        for line in ticks:
            parts = line.split()
            if parts and parts[0] == "tick":
                m.delayline_ticks.append({"t_ns": int(parts[1]) - t0, **{kv.split("=")[0]: int(kv.split("=")[1]) for kv in parts[2:]}})
            elif parts and parts[0].startswith("dir="):
                kv = dict(p.split("=", 1) for p in parts)
                direction = kv.pop("dir")
                m.delayline_totals[direction] = {k2: int(v) for k2, v in kv.items()}
        ports = {FIRST_FLOW_PORT + f.index: f.index for f in plan.flows}
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for ns in namespaces:
            ns.close()
        # only now, with every socket gone, unregister the twins
        for reg in registrations.values():
            reg.close()
    for reg in registrations.values():
        m.registrations.append({"algorithm": reg.algorithm, "name": reg.name, "map_id": reg.map_id,
                                "settings": reg.settings})
        for sample in reg.samples:
            t_ns, port, acks, rtt_n, rtt_sum, rtt_last, cwnd, *vals = sample
            if port not in ports:
                continue
            m.cc_samples.setdefault(ports[port], []).append({
                "t_ns": t_ns - t0, "acks": acks, "rtt_samples": rtt_n, "rtt_sum_us": rtt_sum,
                "rtt_last_us": rtt_last, "cwnd_bytes": cwnd,
                "metrics": {name: vals[i] / scale for i, (name, scale) in enumerate(reg.metric_names) if i < len(vals)},
            })
    return m


def _available_algorithms() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


def _collect_lines(proc: subprocess.Popen, out: list[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        out.append(line.rstrip("\n"))
