"""Checks that two builds of ccsim write the same results: every Parquet table of a set of runs,
compared by SHA-256. For engine changes that must not change output (docs/performance.md,
"Instructions per packet").

    python benchmarks/same_output.py BEFORE_CCSIM AFTER_CCSIM     # two `ccsim` executables

e.g. the `ccsim` of a virtualenv with an editable install of main and the one of your branch. The
runs: the examples (single flow, VoIP with bulk, parking lot, on/off coexistence, three flows) and
the 20 s mixes in benchmarks/same_output/ (RED in packets and bytes, random loss, RACK-TLP with
PRR, the ns2 and linux profiles, ns2_sack1, NewReno without SACK, web, CBR and VoIP). Prints one
line per table that differs and exits 1 if any does.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = [ROOT / "examples" / f"{n}.toml" for n in ("single_flow", "voip_with_bulk", "parking_lot", "onoff_coexistence", "three_flows")]
SCENARIOS += sorted((ROOT / "benchmarks" / "same_output").glob("*.toml"))


def tables(ccsim: str, scenario: Path, out: Path) -> dict[str, str]:
    subprocess.run([ccsim, "run", str(scenario), "--out", str(out), "--no-plots"], check=True, capture_output=True)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("*.parquet"))}


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    before, after = sys.argv[1:]
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for sc in SCENARIOS:
            a = tables(before, sc, Path(tmp) / "before" / sc.stem)
            b = tables(after, sc, Path(tmp) / "after" / sc.stem)
            for name in sorted(set(a) | set(b)):
                if a.get(name) != b.get(name):
                    print(f"{sc.stem}: {name} differs")
                    differ += 1
            print(f"{sc.stem}: {len(a)} tables {'same' if all(a.get(n) == b.get(n) for n in set(a) | set(b)) else 'DIFFER'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
