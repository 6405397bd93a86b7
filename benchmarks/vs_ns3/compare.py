#!/usr/bin/env python3
"""ccsim vs ns-3, side by side, on the single-flow scenario (and optionally the 100-flow speed one).

    pip install ns3 && bash benchmarks/vs_ns3/build.sh && python benchmarks/vs_ns3/compare.py

Runs, for each loss probability (default 0 and 1 %):
  * ns-3:  benchmarks/vs_ns3/build/ns3_single_flow --loss P --duration D --seed S  (one JSON line)
  * ccsim: ccsim run <scenario.toml with loss = P> --out <tmpdir> --force, then reads
           summary.parquet, link_summary.parquet and meta.json from <tmpdir>
and prints one table per rule set (`--rules own,ccsim,pipe`: each simulator its own rules, ns-3
given ccsim's, both halving the SACK pipe; see RULES), then a goodput summary. `--speed` adds the
1 Gbit/s, 100-flow scenario (speed_100flows.toml). `--only ns3` / `--only ccsim` runs one side.
Not part of CI; nothing in tests/ uses this.

All knowledge of ccsim's output column names lives in read_ccsim_outputs() and the CCSIM_COLUMNS
table above it: adjust there if the engine's names change.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NS3_BIN = HERE / "build" / "ns3_single_flow"
SINGLE_TOML = HERE / "single_flow.toml"
SPEED_TOML = HERE / "speed_100flows.toml"


# --------------------------------------------------------------------------------------------------
# ns-3 side


def ns3_args_for(scenario: dict[str, Any], loss: float, seed: int, loss_at: str = "entry") -> list[str]:
    """ns3_single_flow options equivalent to a ccsim scenario (the subset both understand)."""
    topo = scenario["topology"]
    flows = scenario["flows"]
    count = sum(int(f.get("count", 1)) for f in flows)
    queue = str(topo["queue"])
    m = re.fullmatch(r"\s*(\d+)\s*pkts?\s*", queue)
    if not m:
        raise SystemExit(f"compare.py: the ns-3 program needs a queue in packets, got {queue!r}")
    return [
        f"--loss={loss}",
        f"--loss-at={loss_at}",
        f"--duration={_seconds(scenario['run']['duration'])}",
        f"--seed={seed}",
        f"--flows={count}",
        f"--rate={_ns3_rate(topo['bottleneck_rate'])}",
        f"--delay={topo['bottleneck_delay']}",
        f"--queue={m.group(1)}",
        f"--access-rate={_ns3_rate(topo.get('access_rate', '1Gbit'))}",
        f"--access-delay={flows[0].get('access_delay', '0ms')}",
    ]


def run_ns3(binary: Path, args: list[str]) -> dict[str, Any]:
    if not binary.exists():
        raise SystemExit(f"compare.py: {binary} not found; run: bash benchmarks/vs_ns3/build.sh")
    cmd = [str(binary), *args]
    print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"compare.py: ns-3 failed ({proc.returncode}):\n{proc.stderr}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    raw = json.loads(line)
    return {
        "goodput_bps": raw["goodput_bps"],
        "capacity_bps": raw["rate_bps"],
        "utilisation": raw["utilisation"],
        "loss_rate": raw["loss_rate"],
        "drops": raw["drops_queue"] + raw["drops_random"],
        "qdelay_mean_ms": raw["qdelay_mean_ms"],
        "bottleneck_pkts": raw["bottleneck_pkts"],
        "bottleneck_pkts_note": "",
        "retransmits": raw.get("retransmissions"),
        "timeouts": raw.get("timeouts"),
        "fast_recoveries": raw.get("fast_recoveries"),
        "jain_index": raw.get("jain_index"),
        # set-up + Simulator::Run(), the counterpart of ccsim's wall_time_s (build + run + collect)
        "wall_s": raw.get("wall_total_s", raw["wall_s"]),
        "process_s": elapsed,
        "command": shlex.join(cmd),
        "raw": raw,
    }


# --------------------------------------------------------------------------------------------------
# ccsim side

# Candidate column / key names, first match wins. ccsim's documented names come first
# (docs/internals.md); the rest are guesses at spellings the engine might use instead.
CCSIM_COLUMNS: dict[str, list[str]] = {
    # summary.parquet (one row per flow)
    "flow_goodput_bps": ["goodput_bps", "goodput_mean_bps", "goodput"],
    "flow_retransmits": ["retransmits", "retransmissions", "retx"],
    "flow_timeouts": ["timeouts", "rtos", "rto_count"],
    "fast_retransmits": ["fast_retransmits"],  # one per recovery episode (enter_fast_recovery)
    # link_summary.parquet (one row per link)
    "link_name": ["link", "name", "link_name"],
    "utilisation": ["utilisation", "utilization", "utilisation_mean", "util"],
    "qdelay_mean_ms": ["qdelay_mean_ms", "mean_qdelay_ms", "queue_delay_mean_ms", "qdelay_ms"],
    "loss_rate": ["loss_rate", "drop_rate", "drop_fraction"],
    "drops_queue": ["drops_queue", "queue_drops", "drops"],
    "drops_random": ["drops_random", "random_drops"],
    "tx_pkts": ["departures", "tx_pkts", "tx_packets", "packets_tx", "pkts_tx"],
    "arrivals": ["arrivals", "arrival_pkts", "arrived_pkts", "rx_pkts", "offered_pkts"],
    "tx_bytes": ["tx_bytes", "bytes_tx"],
}
# meta.json, searched at any depth: the run's wall-clock seconds (ccsim times building the engine,
# running it and collecting its tables) and the packets the bottleneck delivered (whole run).
CCSIM_WALL_KEYS = ["wall_time_s", "wall_clock_s", "wall_s", "wall_seconds"]
CCSIM_BOTTLENECK_PKTS_KEYS = ["bottleneck_packets", "bottleneck_pkts"]


def _col(df: Any, key: str) -> str | None:
    for name in CCSIM_COLUMNS[key]:
        if name in df.columns:
            return name
    return None


def _find_key(obj: Any, names: list[str]) -> Any:
    """First value under any of `names` in a nested dict (breadth-first), or None."""
    queue = [obj]
    while queue:
        cur = queue.pop(0)
        if isinstance(cur, dict):
            for n in names:
                if n in cur and isinstance(cur[n], (int, float)):
                    return cur[n]
            queue.extend(v for v in cur.values() if isinstance(v, dict))
    return None


def read_ccsim_outputs(out_dir: Path, *, packet_bytes: int, capacity_bps: float) -> dict[str, Any]:
    """The numbers compared with ns-3, from one `ccsim run --out out_dir`. The one place that
    knows ccsim's output layout; missing columns become None (printed as '-')."""
    import pandas as pd  # ccsim depends on pandas and pyarrow

    flows = pd.read_parquet(out_dir / "summary.parquet")
    links = pd.read_parquet(out_dir / "link_summary.parquet")
    meta = json.loads((out_dir / "meta.json").read_text()) if (out_dir / "meta.json").exists() else {}

    def flow_sum(key: str) -> float | None:
        c = _col(flows, key)
        return float(flows[c].sum()) if c else None

    # The bottleneck: the row named "bottleneck" (data direction), else the busiest link.
    name_col = _col(links, "link_name")
    row = None
    if name_col is not None:
        names = links[name_col].astype(str)
        exact = links[names == "bottleneck"]
        row = exact.iloc[0] if len(exact) else None
    if row is None:
        order_col = _col(links, "tx_bytes") or _col(links, "utilisation")
        row = links.loc[links[order_col].idxmax()] if order_col else links.iloc[0]

    def link(key: str) -> float | None:
        c = _col(links, key)
        v = row[c] if c else None
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    drops = sum(v for v in (link("drops_queue"), link("drops_random")) if v is not None)
    tx_pkts, note = _find_key(meta, CCSIM_BOTTLENECK_PKTS_KEYS), ""
    if tx_pkts is None:
        tx_pkts = link("tx_pkts")
    if tx_pkts is None and link("tx_bytes") is not None:
        tx_pkts, note = link("tx_bytes") / packet_bytes, "est. tx_bytes / packet size"
    loss_rate = link("loss_rate")
    if loss_rate is None:
        arrivals = link("arrivals") or (tx_pkts + drops if tx_pkts is not None else None)
        loss_rate = drops / arrivals if arrivals else None

    wall = _find_key(meta, CCSIM_WALL_KEYS)
    goodput = flow_sum("flow_goodput_bps")
    rates = flows[_col(flows, "flow_goodput_bps")] if _col(flows, "flow_goodput_bps") else None
    jain = (
        float(rates.sum() ** 2 / (len(rates) * (rates**2).sum()))
        if rates is not None and len(rates) and (rates**2).sum() > 0
        else None
    )
    return {
        "goodput_bps": goodput,
        "capacity_bps": capacity_bps,
        "utilisation": link("utilisation"),
        "loss_rate": loss_rate,
        "drops": drops,
        "qdelay_mean_ms": link("qdelay_mean_ms"),
        "bottleneck_pkts": tx_pkts,
        "bottleneck_pkts_note": note,
        "retransmits": flow_sum("flow_retransmits"),
        "timeouts": flow_sum("flow_timeouts"),
        "fast_recoveries": flow_sum("fast_retransmits"),  # one per recovery episode (enter_fast_recovery)
        "jain_index": jain,
        "wall_s": float(wall) if wall is not None else None,
        "meta": meta,
    }


def run_ccsim(ccsim: list[str], toml_path: Path, out_dir: Path, seed: int | None, scenario: dict) -> dict:
    cmd = [*ccsim, "run", str(toml_path), "--out", str(out_dir), "--force", "--no-plots"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"compare.py: ccsim failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    tcp = scenario.get("tcp", {})
    packet_bytes = _bytes(tcp.get("mss", "1448B")) + _bytes(tcp.get("header", "52B"))
    res = read_ccsim_outputs(
        out_dir, packet_bytes=packet_bytes, capacity_bps=_bps(scenario["topology"]["bottleneck_rate"])
    )
    res["process_s"] = elapsed
    res["command"] = shlex.join(cmd)
    if res["wall_s"] is None:  # no wall time in meta.json: fall back to the whole process
        res["wall_s"] = elapsed
        res["wall_note"] = "process"
    return res


# --------------------------------------------------------------------------------------------------
# scenario helpers


def with_loss(toml_text: str, loss: float) -> str:
    """The scenario text with [topology] loss = `loss` (a line edit keeps the comments)."""
    new, n = re.subn(r"(?m)^(loss\s*=\s*)[^#\n]*", lambda m: f"{m.group(1)}{loss!r}  ", toml_text, count=1)
    if n != 1 or tomllib.loads(new)["topology"]["loss"] != loss:
        raise SystemExit("compare.py: could not set [topology] loss in the scenario file")
    return new


def with_halve_from(toml_text: str, halve_from: str) -> str:
    """The scenario text with the flows' NewReno `halve_from` parameter set (a line edit)."""
    new, n = re.subn(r'(halve_from\s*=\s*)"[a-z]+"', lambda m: f'{m.group(1)}"{halve_from}"', toml_text)
    if n < 1 or any(f.get("params", {}).get("halve_from") != halve_from for f in tomllib.loads(new)["flows"]):
        raise SystemExit("compare.py: could not set the flows' halve_from in the scenario file")
    return new


# Rule sets (--rules). Each names the ns3_single_flow options and the ccsim `halve_from` that make
# the two simulators follow the same rule where they differ (README.md, "Rules that differ"):
#   own    each simulator its own rules (ns-3: slow start while cwnd < ssthresh, ssthresh from the
#          SACK pipe, leave recovery with cwnd = ssthresh; ccsim: <=, FlightSize, min(ssthresh,
#          FlightSize + MSS))
#   ccsim  ns-3 given ccsim's three rules
#   pipe   both halve the pipe (ccsim `halve_from = "pipe"`); ns-3 given ccsim's other two rules
RULES: dict[str, tuple[list[str], str]] = {
    "own": ([], "flight"),
    "ccsim": (["--ss-boundary=le", "--ssthresh-from=flight", "--recovery-exit=flight"], "flight"),
    "pipe": (["--ss-boundary=le", "--recovery-exit=flight"], "pipe"),
}


_UNIT = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}


def _bps(text: str) -> float:
    m = re.fullmatch(r"\s*([\d.]+)\s*([kKmMgG]?)(bit|bps|b/s)\s*", str(text))
    if not m:
        raise SystemExit(f"compare.py: cannot read rate {text!r}")
    return float(m.group(1)) * _UNIT[m.group(2).lower()]


def _ns3_rate(text: str) -> str:
    return f"{int(_bps(text))}bps"


def _seconds(text: str) -> float:
    m = re.fullmatch(r"\s*([\d.]+)\s*(ns|us|ms|s)\s*", str(text))
    if not m:
        raise SystemExit(f"compare.py: cannot read time {text!r}")
    return float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


def _bytes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*B\s*", str(text))
    if not m:
        raise SystemExit(f"compare.py: cannot read size {text!r} (expected e.g. '1460B')")
    return int(m.group(1))


# --------------------------------------------------------------------------------------------------
# table


def _fmt(v: Any, spec: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


ROWS = [
    # label, function of a result dict, format
    ("goodput (Mbit/s)", lambda r: r["goodput_bps"] / 1e6, ".3f"),
    ("goodput (% of capacity)", lambda r: 100 * r["goodput_bps"] / r["capacity_bps"], ".2f"),
    ("utilisation (%)", lambda r: None if r["utilisation"] is None else 100 * r["utilisation"], ".2f"),
    ("loss rate (%)", lambda r: None if r["loss_rate"] is None else 100 * r["loss_rate"], ".3f"),
    ("drops at bottleneck", lambda r: r["drops"], ".0f"),
    ("mean queueing delay (ms)", lambda r: r["qdelay_mean_ms"], ".2f"),
    ("retransmitted segments", lambda r: r["retransmits"], ".0f"),
    ("RTO timeouts", lambda r: r["timeouts"], ".0f"),
    ("Jain index", lambda r: r["jain_index"], ".4f"),
    ("bottleneck packets", lambda r: r["bottleneck_pkts"], ".0f"),
    ("wall time, build+run (s)", lambda r: r["wall_s"], ".3f"),
    ("wall time, process (s)", lambda r: r.get("process_s"), ".3f"),
    (
        "bottleneck pkts / wall-s",
        lambda r: r["bottleneck_pkts"] / r["wall_s"] if r["bottleneck_pkts"] and r["wall_s"] else None,
        ",.0f",
    ),
]


def _cell(fn, r: dict | None, spec: str) -> tuple[str, float | None]:
    if r is None:
        return "", None
    try:
        v = fn(r)
    except (TypeError, KeyError, ZeroDivisionError):
        v = None
    return _fmt(v, spec), v


def print_table(cases: list[tuple[str, dict | None, dict | None]]) -> None:
    has_ns3 = any(a for _, a, _ in cases)
    has_cc = any(b for _, _, b in cases)
    header = ["metric"]
    for title, _, _ in cases:
        header += [f"ns-3 {title}"] * has_ns3 + [f"ccsim {title}"] * has_cc
        header += ["ccsim/ns-3"] * (has_ns3 and has_cc)
    lines = [header]
    for label, fn, spec in ROWS:
        line = [label]
        for _, ns3, cc in cases:
            a, av = _cell(fn, ns3, spec)
            b, bv = _cell(fn, cc, spec)
            line += [a] * has_ns3 + [b] * has_cc
            if has_ns3 and has_cc:
                line.append(f"{bv / av:.3f}" if av and bv is not None else "")
        lines.append(line)
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    for i, row in enumerate(lines):
        print("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    notes = {r.get("bottleneck_pkts_note") for _, a, b in cases for r in (a, b) if r} - {""}
    for n in sorted(notes):
        print(f"note: some ccsim bottleneck packet counts are {n}")
    if any(r and r.get("wall_note") for _, _, r in cases):
        print("note: meta.json had no wall time; ccsim's 'simulation' wall time is the whole process")


# --------------------------------------------------------------------------------------------------


def _parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        if "-" in part.strip():
            lo, hi = part.split("-")
            seeds += range(int(lo), int(hi) + 1)
        elif part.strip():
            seeds.append(int(part))
    if not seeds:
        raise SystemExit("compare.py: --seeds names no seed")
    return seeds


def _mean(runs: list[dict]) -> dict | None:
    """One result dict whose numbers are the means over `runs` (other values from the first run)."""
    if not runs:
        return None
    out = dict(runs[0])
    for k, v in runs[0].items():
        vals = [r.get(k) for r in runs]
        if isinstance(v, (int, float)) and not isinstance(v, bool) and all(isinstance(x, (int, float)) for x in vals):
            out[k] = sum(vals) / len(vals)
    if len(runs) > 1:
        out["command"] = f"{runs[0]['command']}  (+ {len(runs) - 1} more seeds)"
        out["runs"] = runs
    return out


def print_goodput_summary(summary: list[tuple[str, str, dict | None, dict | None]]) -> None:
    """One line per (rule set, case): mean goodput of each simulator and the ratio, with the
    seed-to-seed standard deviations when several seeds ran."""

    def sd(r: dict | None) -> str:
        runs = (r or {}).get("runs") or []
        if len(runs) < 2:
            return ""
        g = [x["goodput_bps"] / 1e6 for x in runs]
        m = sum(g) / len(g)
        return f" (sd {math.sqrt(sum((x - m) ** 2 for x in g) / (len(g) - 1)):.3f})"

    print("goodput summary (Mbit/s):")
    for rules, title, ns3, cc in summary:
        a = ns3["goodput_bps"] / 1e6 if ns3 else None
        b = cc["goodput_bps"] / 1e6 if cc else None
        ratio = f"  ccsim/ns-3 {b / a:.3f}" if a and b is not None else ""
        left = f"ns-3 {a:.3f}{sd(ns3)}" if a is not None else ""
        right = f"ccsim {b:.3f}{sd(cc)}" if b is not None else ""
        print(f"  rules={rules:6s} {title:10s} {left:24s} {right:26s}{ratio}")


# --------------------------------------------------------------------------------------------------
# --profile ns3: ccsim's `ns3` profile against ns-3's own TCP defaults (docs/validation.md section 2)

PROFILE_TCP = """[tcp]
profile = "ns3"                # ns-3.44's TcpSocket / TcpSocketBase / TcpL4Protocol defaults
mss = "536B"                   # = the profile's (SegmentSize 536), written for compare.py's packet size
header = "54B"                 # the profile's 52 B (timestamps on) + ns-3's 2-byte PPP header
delayed_ack = {delack}
"""


def profile_scenario(base_text: str, loss: float, flows: int, delack: bool) -> str:
    """single_flow.toml with its [tcp] table replaced by the ns3 profile, `flows` NewReno flows
    halving the pipe (TcpNewReno::GetSsThresh gets BytesInFlight) and the given loss."""
    text = with_halve_from(with_loss(base_text, loss), "pipe")
    head, rest = text.split("[tcp]", 1)
    tail = rest[rest.index("[[flows]]"):]
    text = head + PROFILE_TCP.format(delack="true" if delack else "false") + "\n" + tail
    text, n = re.subn(r"(?m)^count = \d+", f"count = {flows}", text, count=1)
    if n != 1 or tomllib.loads(text)["tcp"]["profile"] != "ns3":
        raise SystemExit("compare.py: could not build the ns3-profile scenario")
    return text


def run_profile_grid(opts: Any, ccsim_cmd: list[str], work: Path) -> list[dict]:
    """Every (loss, delayed ACKs, flows) case, both simulators, means over the seeds."""
    seeds = _parse_seeds(opts.seeds or "1-5")
    rows = []
    for flows in (1, 3):
        for delack in (True, False):
            for loss in [float(x) for x in opts.losses.split(",") if x.strip()]:
                text = profile_scenario(opts.scenario.read_text(), loss, flows, delack)
                scenario = tomllib.loads(text)
                case = work / f"ns3prof_f{flows}_d{int(delack)}_l{loss}"
                case.mkdir(parents=True, exist_ok=True)
                (case / "scenario.toml").write_text(text)
                ns3, cc = [], []
                for seed in seeds:
                    args = ns3_args_for(scenario, loss, seed) + ["--tcp=defaults", f"--delack-count={2 if delack else 1}"]
                    ns3.append(run_ns3(opts.ns3_bin, args))
                    cc.append(run_ccsim(ccsim_cmd, case / "scenario.toml", case / f"s{seed}", seed, scenario))
                rows.append({"flows": flows, "delayed_ack": delack, "loss": loss, "ns3": _mean(ns3), "ccsim": _mean(cc)})
    print(f"\nns3 profile vs ns-3.44 defaults (NewReno), means over seeds {seeds[0]}-{seeds[-1]}")
    print("| flows | delayed ACKs | loss | goodput ns-3 | goodput ccsim | ratio | fast rec. ns-3 | ccsim | ratio | timeouts ns-3 | ccsim |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        a, b = r["ns3"], r["ccsim"]

        def ratio(k: str) -> str:
            return f"{b[k] / a[k]:.3f}" if a.get(k) else "-"

        print(f"| {r['flows']} | {'on' if r['delayed_ack'] else 'off'} | {100 * r['loss']:g} % "
              f"| {a['goodput_bps'] / 1e6:.3f} | {b['goodput_bps'] / 1e6:.3f} | {ratio('goodput_bps')} "
              f"| {a['fast_recoveries']:.1f} | {b['fast_recoveries']:.1f} | {ratio('fast_recoveries')} "
              f"| {a['timeouts']:.1f} | {b['timeouts']:.1f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--losses", default="0,0.01", help="comma-separated loss probabilities (default 0,0.01)")
    ap.add_argument("--seed", type=int, default=None, help="seed for both (default: the TOML's, ns-3 run 1)")
    ap.add_argument(
        "--seeds", default=None, help="run every case with these seeds and show the means, e.g. 1-10 or 1,2,3"
    )
    ap.add_argument("--speed", action="store_true", help="also run speed_100flows.toml (0 %% loss)")
    ap.add_argument("--only", choices=["ns3", "ccsim"], help="run one simulator only")
    ap.add_argument("--ns3-bin", type=Path, default=NS3_BIN)
    ap.add_argument(
        "--ns3-loss-at",
        choices=["entry", "exit"],
        default="entry",
        help="where ns-3 drops randomly: before the bottleneck queue (entry, as ccsim) or after the link",
    )
    ap.add_argument(
        "--rules",
        default="own",
        help="comma-separated rule sets to run, each a table: own (each simulator its own rules), "
        "ccsim (ns-3 given ccsim's rules), pipe (both halve the SACK pipe); default own",
    )
    ap.add_argument(
        "--ns3-extra",
        default="",
        help="more ns3_single_flow options, e.g. '--ss-boundary=le --recovery-exit=flight' (ccsim's rules)",
    )
    ap.add_argument("--ccsim", default="ccsim", help="command that runs ccsim (default: ccsim)")
    ap.add_argument("--scenario", type=Path, default=SINGLE_TOML)
    ap.add_argument("--keep", type=Path, help="keep ccsim outputs and ns-3 JSON under this directory")
    ap.add_argument("--json", type=Path, help="also write all results to this JSON file")
    ap.add_argument(
        "--profile",
        choices=["ns3"],
        help="ns3: ccsim's ns3 profile against ns-3's own TCP defaults, 1 and 3 flows, delayed ACKs on "
        "and off, at --losses (seeds --seeds, default 1-5); prints one table",
    )
    opts = ap.parse_args()
    if opts.profile:
        work = opts.keep or Path(tempfile.mkdtemp(prefix="ccsim_vs_ns3_"))
        rows = run_profile_grid(opts, shlex.split(opts.ccsim), work)
        if opts.json:
            opts.json.write_text(json.dumps(rows, indent=1, default=str))
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
        return

    rule_sets = [r.strip() for r in opts.rules.split(",") if r.strip()]
    unknown = [r for r in rule_sets if r not in RULES]
    if unknown or not rule_sets:
        raise SystemExit(f"compare.py: --rules takes {', '.join(RULES)}; got {opts.rules!r}")
    ccsim_cmd = shlex.split(opts.ccsim)
    if opts.only != "ns3" and shutil.which(ccsim_cmd[0]) is None:
        raise SystemExit(f"compare.py: '{ccsim_cmd[0]}' not found (install ccsim, or use --only ns3)")

    jobs: list[tuple[str, Path, float]] = []
    for p in [float(x) for x in opts.losses.split(",") if x.strip()]:
        jobs.append((f"{100 * p:g}% loss", opts.scenario, p))
    if opts.speed:
        jobs.append(("100 flows", SPEED_TOML, 0.0))

    work = opts.keep or Path(tempfile.mkdtemp(prefix="ccsim_vs_ns3_"))
    work.mkdir(parents=True, exist_ok=True)
    tables: list[tuple[str, list]] = []
    summary: list[tuple[str, str, dict | None, dict | None]] = []
    ccsim_done: dict[tuple[int, str], dict | None] = {}  # (job, halve_from) -> mean; rule sets share runs
    for rules in rule_sets:
        ns3_rule_args, halve_from = RULES[rules]
        cases = []
        for i, (title, toml_path, loss) in enumerate(jobs):
            text = with_loss(toml_path.read_text(), loss)
            if halve_from != "flight":
                text = with_halve_from(text, halve_from)
            scenario = tomllib.loads(text)
            toml_seed = int(scenario["run"].get("seed", 1))
            seeds = _parse_seeds(opts.seeds) if opts.seeds else [opts.seed if opts.seed is not None else toml_seed]
            case_dir = work / f"case{i}_{halve_from}"
            case_dir.mkdir(exist_ok=True)
            toml_copy = case_dir / "scenario.toml"
            toml_copy.write_text(text)
            run_cc = opts.only != "ns3" and (i, halve_from) not in ccsim_done
            ns3_runs, cc_runs = [], []
            for seed in seeds:
                if opts.only != "ccsim":
                    # ns-3's run number must be >= 1; ccsim's seed 0 is mapped to ns-3 run 1.
                    args = ns3_args_for(scenario, loss, max(seed, 1), opts.ns3_loss_at)
                    args += ns3_rule_args + shlex.split(opts.ns3_extra)
                    ns3_runs.append(run_ns3(opts.ns3_bin, args))
                if run_cc:
                    cli_seed = None if seed == toml_seed and opts.seeds is None and opts.seed is None else seed
                    cc_runs.append(run_ccsim(ccsim_cmd, toml_copy, case_dir / f"ccsim_seed{seed}", cli_seed, scenario))
            if run_cc:
                ccsim_done[(i, halve_from)] = _mean(cc_runs)
            cc = ccsim_done.get((i, halve_from))
            cases.append((title, _mean(ns3_runs), cc))
            summary.append((rules, title, cases[-1][1], cc))
        tables.append((rules, cases))

    for rules, cases in tables:
        ns3_rule_args, halve_from = RULES[rules]
        print()
        print(f"rules: {rules}  (ns-3: {shlex.join(ns3_rule_args) or 'its own'}; ccsim: halve_from = \"{halve_from}\")")
        print_table(cases)
        if opts.seeds:
            print(f"(each column: the mean over seeds {opts.seeds})")
    print()
    for rules, cases in tables:
        for title, ns3, cc in cases:
            for who, r in (("ns-3", ns3), ("ccsim", cc)):
                if r:
                    print(f"{rules:6s} {who:5s} {title}: {r['command']}")
    print()
    print_goodput_summary(summary)
    if opts.json or opts.keep:
        dump = [{"rules": rules, "case": t, "ns3": a, "ccsim": b} for rules, cases in tables for t, a, b in cases]
        path = opts.json or (work / "results.json")
        path.write_text(json.dumps(dump, indent=1, default=str))
        print(f"results: {path}")
    if not opts.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
