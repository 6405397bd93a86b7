"""What handing a run's tables from the engine to Python costs, for a run with many flows.

    python benchmarks/result_handover.py [--flows 1000] [--seconds 5] [--repeat 5]

Runs an N-flow NewReno dumbbell (10 Mbit/s per 10 flows, 100 ms samples) to its end, then times,
per repeat (a fresh simulation each time), median printed:
- ``finish``: the whole ``Simulation.finish()`` call (the engine collects its tables, then hands
  them to Python);
- ``from_engine``: ``Result.from_engine``, which turns what ``finish`` returned into Arrow tables;
- ``collect`` = finish + from_engine: from the end of the simulation to a Result. The engine's part
  is the same before and after a change of the hand-over, so the difference between two builds is
  the difference in hand-over cost (one Python list per column and ``pa.table`` on them, before;
  Arrow record batches through the C data interface, after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

SCENARIO = """
[run]
duration = "{seconds}s"
sample_interval = "100ms"
seed = 1

[topology]
kind = "dumbbell"
bottleneck_rate = "{rate}Mbit"
bottleneck_delay = "20ms"
queue = "{queue}pkt"

[[flows]]
name = "bulk"
algorithm = "newreno"
count = {flows}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import ccsim
    from ccsim._core import Simulation
    from ccsim.result import Result, defer_pandas_in_pyarrow

    defer_pandas_in_pyarrow()  # as the CLI does
    rate = max(10, args.flows)  # 1 Mbit/s per flow
    text = SCENARIO.format(seconds=args.seconds, flows=args.flows, rate=rate, queue=max(84, args.flows))
    scenario = ccsim.Scenario.from_toml_str(text)
    document = json.dumps(scenario.resolve())
    rows = []
    for _ in range(args.repeat):
        sim = Simulation(document, 1)
        sim.run_until(sim.duration_ns)
        started = time.perf_counter()
        raw = sim.finish()
        finish_s = time.perf_counter() - started
        started = time.perf_counter()
        result = Result.from_engine(raw, scenario, toml_text=text, seed=1, wall_time_s=0.0)
        from_engine_s = time.perf_counter() - started
        cells = sum(result.table(name).num_rows * result.table(name).num_columns for name in ("flows", "links", "cc_metrics"))
        rows.append({"finish": finish_s, "from_engine": from_engine_s,
                     "collect": finish_s + from_engine_s, "cells": cells})
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"load average {os.getloadavg()[0]:.1f}; {args.flows} flows, {args.seconds} s, {med['cells']:.0f} series cells; "
          f"median of {args.repeat}")
    print(f"finish() {med['finish'] * 1e3:.1f} ms, from_engine {med['from_engine'] * 1e3:.1f} ms; "
          f"collect {med['collect'] * 1e3:.1f} ms (min {min(r['collect'] for r in rows) * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
