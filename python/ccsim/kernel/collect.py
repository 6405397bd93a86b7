"""The testbed's measurements as the simulator's tables (flows, links, cc_metrics, summary,
link_summary, streams) and run summary, so ``ccsim`` plots and reports read a kernel run unchanged.

Where a column comes from (docs/kernel.md has the full list and the differences):

- flows: the sending socket's TCP_INFO every sample interval (bytes acked, bytes sent, cwnd,
  ssthresh, srtt, retransmissions, RTO count) and the twin's last RTT sample (``rtt_ms``);
- links: the bottleneck's fifo (backlog, drops) and tbf (bytes sent), read by time and stamped
  (qdisc_stats.py): a row at the interval end nearest each sample, rates over the time since the
  previous one, no row where no sample was taken; the delay line's random drops; the queueing delay
  is the backlog divided by the rate at the sample instant (an estimate: the kernel does not time
  packets through the queue);
- cc_metrics: the twin's metrics map, sampled by the loader;
- summary: RTT mean over every per-ACK sample the twin saw (exact); RTT percentiles over the
  per-interval last samples (coarser than the simulator's per-ACK percentiles).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from ccsim.kernel.plan import Plan
from ccsim.kernel.testbed import Measurements

__all__ = ["tables_from_measurements"]

INFINITE_SSTHRESH = 0x7FFFFFFF


def _nearest_before(samples: list[dict[str, Any]], t_ns: int) -> dict[str, Any] | None:
    best = None
    for s in samples:
        if s["t_ns"] <= t_ns + 5_000_000:  # a loader sample taken up to 5 ms after the interval's end
            best = s
        else:
            break
    return best


def tables_from_measurements(m: Measurements) -> tuple[dict[str, pa.Table], dict[str, Any]]:
    plan = m.plan
    dt_ns = plan.sample_interval_ns
    dt_s = dt_ns / 1e9
    n = plan.duration_ns // dt_ns
    mtu = plan.tcp["mss_bytes"] + plan.tcp["header_bytes"]
    by_flow: dict[int, dict[int, dict[str, Any]]] = {f.index: {} for f in plan.flows}
    for s in m.tcp_samples:
        by_flow.setdefault(s["flow"], {})[int(s["k"])] = s

    flows_rows: list[dict[str, Any]] = []
    metric_rows: list[dict[str, Any]] = []
    for f in plan.flows:
        prev: dict[str, Any] = {}
        cc = m.cc_samples.get(f.index, [])
        for k in range(1, n + 1):
            s = by_flow[f.index].get(k)
            if s is None:
                s = dict(prev) if prev else None
            t_s = k * dt_s
            if s is None:
                flows_rows.append(dict(time_s=t_s, flow=f.index, goodput_bps=0.0, send_rate_bps=0.0, cwnd_bytes=0,
                                       cwnd_pkts=0.0, ssthresh_bytes=math.inf, srtt_ms=math.nan, rtt_ms=math.nan,
                                       retransmits=0, timeouts=0))
                continue
            mss = s.get("snd_mss") or plan.tcp["mss_bytes"]
            ccs = _nearest_before(cc, k * dt_ns)
            last_rtt_ms = ccs["rtt_last_us"] / 1e3 if ccs and ccs["rtt_last_us"] else math.nan
            flows_rows.append(dict(
                time_s=t_s, flow=f.index,
                goodput_bps=(s["bytes_acked"] - prev.get("bytes_acked", 0)) * 8 / dt_s,
                send_rate_bps=(s["bytes_sent"] - prev.get("bytes_sent", 0)) * 8 / dt_s,
                cwnd_bytes=int(s["snd_cwnd"] * mss), cwnd_pkts=float(s["snd_cwnd"]),
                ssthresh_bytes=math.inf if s["snd_ssthresh"] >= INFINITE_SSTHRESH else float(s["snd_ssthresh"] * mss),
                srtt_ms=s["srtt_us"] / 1e3, rtt_ms=last_rtt_ms,
                retransmits=int(s["total_retrans"] - prev.get("total_retrans", 0)),
                timeouts=int(s.get("total_rto", 0) - prev.get("total_rto", 0)),
            ))
            if ccs:
                for name, value in ccs["metrics"].items():
                    metric_rows.append(dict(time_s=t_s, flow=f.index, name=name, value=float(value)))
            prev = s

    # links: the bottleneck and the reverse link, from counters stamped when read (testbed.py). A
    # row stands at the interval end nearest its sample; its rates are over the time since the
    # previous sample actually taken; an interval end with no sample near it has no row.
    link_rows: list[dict[str, Any]] = []
    ticks = {int(round(t["t_ns"] / dt_ns)): t for t in m.delayline_ticks}
    nearest: dict[int, dict[str, Any]] = {}
    for q in m.qdisc_samples:
        k = int(round(q["t_ns"] / dt_ns))
        if 0 <= k <= n and (k not in nearest or abs(q["t_ns"] - k * dt_ns) < abs(nearest[k]["t_ns"] - k * dt_ns)):
            nearest[k] = q
    for link, rate in (("bottleneck", plan.rate_bps), ("reverse", plan.reverse_rate_bps)):
        prev: dict[str, Any] | None = nearest.get(0)
        prev_lost = 0
        for k in range(1, n + 1):
            sample = nearest.get(k)
            if sample is None:
                continue
            if prev is None or sample["t_ns"] <= prev["t_ns"]:
                prev = sample  # the first sample: a baseline, no interval before it
                continue
            q, pq = sample[link], prev[link]
            interval_s = (sample["t_ns"] - prev["t_ns"]) / 1e9
            ip_bytes = (q["sent_bytes"] - pq["sent_bytes"]) - 14 * (q["sent_pkts"] - pq["sent_pkts"])
            qdelay_ms = (q["backlog_bytes"] - 14 * q["backlog_pkts"]) * 8 / rate * 1e3
            lost = ticks[k]["lost"] if link == "bottleneck" and k in ticks else prev_lost
            link_rows.append(dict(
                time_s=k * dt_s, link=link, queue_pkts=int(q["backlog_pkts"]),
                queue_bytes=int(q["backlog_bytes"] - 14 * q["backlog_pkts"]),
                qdelay_mean_ms=qdelay_ms, qdelay_max_ms=qdelay_ms,
                drops_queue=int(q["drops"] - pq["drops"]),
                drops_random=int(lost - prev_lost),
                utilisation=ip_bytes * 8 / (rate * interval_s), tx_bytes=int(ip_bytes), drops_early=0, queue_avg=math.nan,
                sample_time_s=sample["t_ns"] / 1e9, interval_s=interval_s,
            ))
            prev, prev_lost = sample, lost

    summary_rows, link_summary_rows, run_summary = _summaries(m, plan, flows_rows, link_rows, mtu)
    tables = {
        "flows": pa.Table.from_pylist(flows_rows),
        "links": pa.Table.from_pylist(link_rows),
        "cc_metrics": pa.Table.from_pylist(metric_rows, schema=pa.schema(
            [("time_s", pa.float64()), ("flow", pa.int64()), ("name", pa.string()), ("value", pa.float64())])),
        "summary": pa.Table.from_pylist(summary_rows),
        "link_summary": pa.Table.from_pylist(link_summary_rows),
        "streams": pa.table({}),
    }
    return tables, run_summary


def _in_window(plan: Plan, time_s: float) -> bool:
    return plan.measure_start_ns / 1e9 < time_s <= plan.measure_end_ns / 1e9 + 1e-9


def _summaries(m: Measurements, plan: Plan, flows_rows: list[dict[str, Any]], link_rows: list[dict[str, Any]],
               mtu: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    window_s = (plan.measure_end_ns - plan.measure_start_ns) / 1e9
    single = len(plan.flows) == 1
    bottleneck = [r for r in link_rows if r["link"] == "bottleneck" and _in_window(plan, r["time_s"])]
    link_drops = sum(r["drops_queue"] for r in bottleneck)
    random_drops = sum(r["drops_random"] for r in bottleneck)
    summary = []
    for f in plan.flows:
        rows = [r for r in flows_rows if r["flow"] == f.index and _in_window(plan, r["time_s"])]
        goodput_bytes = sum(r["goodput_bps"] for r in rows) * (plan.sample_interval_ns / 1e9) / 8
        last = [s for s in m.tcp_samples if s["flow"] == f.index]
        final = last[-1] if last else {}
        cc = m.cc_samples.get(f.index, [])
        start = _nearest_before(cc, plan.measure_start_ns) if plan.measure_start_ns > 0 else None
        end = _nearest_before(cc, plan.measure_end_ns) or (cc[-1] if cc else None)
        rtt_n = (end["rtt_samples"] - (start["rtt_samples"] if start else 0)) if end else 0
        rtt_sum = (end["rtt_sum_us"] - (start["rtt_sum_us"] if start else 0)) if end else 0
        rtts = np.array([r["rtt_ms"] for r in rows if not math.isnan(r["rtt_ms"])])
        sent = int(final.get("data_segs_out", 0))
        # seconds the flow's application was on inside the summary window (the simulator's active_s)
        active_s = sum(max(0, min(b, plan.measure_end_ns) - max(a, plan.measure_start_ns))
                       for a, b in f.intervals) / 1e9
        summary.append(dict(
            flow=f.index, name=f.name, kind="tcp", algorithm=f.algorithm,
            start_s=f.intervals[0][0] / 1e9, stop_s=f.intervals[-1][1] / 1e9,
            access_delay_ms=f.access_delay_ns / 1e6,
            goodput_bps=goodput_bytes * 8 / window_s if window_s > 0 else math.nan,
            active_s=active_s,
            # the kernel run has no completion time: a finite transfer counts its whole interval
            goodput_active_bps=goodput_bytes * 8 / active_s if active_s > 0 else math.nan,
            in_jain=active_s > 0,
            bytes_delivered=int(final.get("bytes_acked", 0)), data_pkts_sent=sent,
            # The simulator's connection starts established: the SYN-ACK is not one of its ACKs.
            acks_received=max(int(final.get("segs_in", 0)) - 1, 0),
            retransmits=sum(r["retransmits"] for r in rows),
            fast_retransmits=None,  # Linux counts recovery episodes only netns-wide
            timeouts=sum(r["timeouts"] for r in rows),
            drops_queue=link_drops if single else None,
            drops_random=random_drops if single else None,
            loss_rate=(link_drops + random_drops) / sent if single and sent else math.nan,
            rtt_mean_ms=rtt_sum / rtt_n / 1e3 if rtt_n else math.nan,
            rtt_p50_ms=float(np.percentile(rtts, 50)) if rtts.size else math.nan,
            rtt_p95_ms=float(np.percentile(rtts, 95)) if rtts.size else math.nan,
            rtt_p99_ms=float(np.percentile(rtts, 99)) if rtts.size else math.nan,
            rtt_min_ms=final.get("min_rtt_us", 0) / 1e3 if final else math.nan,
            rtt_max_ms=float(rtts.max()) if rtts.size else math.nan,
            fct_s=math.nan, completed=bool(f.finite_bytes is not None and final.get("bytes_acked", 0) >= f.finite_bytes),
            owd_mean_ms=math.nan, owd_p50_ms=math.nan, owd_p95_ms=math.nan, owd_p99_ms=math.nan, owd_max_ms=math.nan,
            jitter_ms=math.nan, stream_lost_pkts=math.nan,
            # the whole run's, as the simulator's `retransmits_run`, `timeouts_run`
            retransmits_run=sum(r["retransmits"] for r in flows_rows if r["flow"] == f.index),
            timeouts_run=sum(r["timeouts"] for r in flows_rows if r["flow"] == f.index),
        ))
    link_summary = []
    for link, rate in (("bottleneck", plan.rate_bps), ("reverse", plan.reverse_rate_bps)):
        rows = [r for r in link_rows if r["link"] == link and _in_window(plan, r["time_s"])]
        q = np.array([r["qdelay_mean_ms"] for r in rows]) if rows else np.array([math.nan])
        tx = sum(r["tx_bytes"] for r in rows)
        drops = sum(r["drops_queue"] for r in rows)
        rnd = sum(r["drops_random"] for r in rows)
        departures = int(round(tx / mtu))
        sampled_s = sum(r["interval_s"] for r in rows)  # the time the rows' counters span
        link_summary.append(dict(
            link=link, rate_bps=rate, utilisation=tx * 8 / (rate * sampled_s) if sampled_s > 0 else math.nan,
            qdelay_mean_ms=float(np.mean(q)), qdelay_p50_ms=float(np.percentile(q, 50)),
            qdelay_p95_ms=float(np.percentile(q, 95)), qdelay_p99_ms=float(np.percentile(q, 99)),
            qdelay_max_ms=float(np.max(q)), arrivals=departures + drops, departures=departures,
            drops_queue=drops, drops_random=rnd,
            loss_rate=(drops + rnd) / (departures + drops + rnd) if departures + drops + rnd else 0.0, drops_early=0,
        ))
    goodputs = [s["goodput_bps"] for s in summary if s["in_jain"]]  # as the simulator: flows on in the window
    jain_sum = float(sum(goodputs))
    total = float(sum(s["goodput_bps"] for s in summary))
    squares = float(sum(g * g for g in goodputs))
    b = link_summary[0]
    run_summary = {
        "duration_s": plan.duration_ns / 1e9,
        "measure_start_s": plan.measure_start_ns / 1e9,
        "measure_end_s": plan.measure_end_ns / 1e9,
        "flows": float(len(plan.flows)),
        "jain_index": jain_sum * jain_sum / (len(goodputs) * squares) if squares > 0 else math.nan,
        "total_goodput_bps": total,
        "bottleneck_rate_bps": float(plan.rate_bps),
        "bottleneck_utilisation": b["utilisation"],
        "goodput_share_of_capacity": total / plan.rate_bps,
        "bottleneck_qdelay_mean_ms": b["qdelay_mean_ms"],
        "bottleneck_qdelay_p95_ms": b["qdelay_p95_ms"],
        "bottleneck_drops_queue": float(b["drops_queue"]),
        "bottleneck_drops_random": float(b["drops_random"]),
    }
    return summary, link_summary, run_summary
