"""What handing a run's tables from the engine to Python costs, for a run with many flows.

    python benchmarks/result_handover.py [--flows 1000] [--seconds 5] [--repeat 5]

Runs an N-flow NewReno dumbbell (10 Mbit/s per 10 flows, 100 ms samples) to its end, then times,
per repeat (a fresh simulation each time), median printed:
- ``finish``: the whole ``Simulation.finish()`` call (the engine collects its tables, then hands
  them to Python);
- ``tables``: turning what ``finish`` returned into the Arrow tables a Result keeps (what
  ``Result.from_engine`` does with them; before: ``pa.table`` on one Python list per column, after:
  ``pa.Table.from_batches`` on the record batches the engine exported);
- ``collect`` = finish + tables: from the end of the simulation to the tables in Python. The
  engine's own part (collecting its tables in Rust) is the same before and after a change of the
  hand-over, so the difference between two builds is the difference in hand-over cost.
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
    import pyarrow as pa

    from ccsim.result import TABLE_FILES, defer_pandas_in_pyarrow

    def to_table(value):  # as Result.from_engine
        return pa.Table.from_batches([value]) if isinstance(value, pa.RecordBatch) else pa.table(dict(value))

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
        tables = {name: to_table(raw[key]) for name, key in TABLE_FILES.items() if key in raw}
        tables_s = time.perf_counter() - started
        cells = sum(t.num_rows * t.num_columns for t in tables.values())
        rows.append({"finish": finish_s, "tables": tables_s, "collect": finish_s + tables_s, "cells": cells})
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"load average {os.getloadavg()[0]:.1f}; {args.flows} flows, {args.seconds} s, {med['cells']:.0f} table cells; "
          f"median of {args.repeat}")
    print(f"finish() {med['finish'] * 1e3:.1f} ms, tables {med['tables'] * 1e3:.1f} ms; "
          f"collect {med['collect'] * 1e3:.1f} ms (min {min(r['collect'] for r in rows) * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
