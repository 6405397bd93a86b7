"""Checks that two builds of ccsim write the same results: every Parquet table of a set of runs,
compared by SHA-256. For engine changes that must not change output (docs/performance.md,
"Instructions per packet").

    python benchmarks/same_output.py BEFORE_CCSIM AFTER_CCSIM     # two `ccsim` executables
    python benchmarks/same_output.py BEFORE_CCSIM AFTER_CCSIM --profiles --reproduce

`--profiles` also runs every example under each TCP profile (freebsd9, linux, ns2) with
`--set tcp.profile=P`; `--reproduce` also compares every Parquet table that
`ccsim reproduce --all --quick --jobs 1` writes (a few minutes per build).

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


EXAMPLES = SCENARIOS[:5]
PROFILES = ("freebsd9", "linux", "ns2")


def hashes(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.rglob("*.parquet"))}


def tables(ccsim: str, scenario: Path, out: Path, extra: list[str]) -> dict[str, str]:
    subprocess.run([ccsim, "run", str(scenario), "--out", str(out), "--no-plots", *extra], check=True, capture_output=True)
    return hashes(out)


def reproduced(ccsim: str, out: Path) -> dict[str, str]:
    subprocess.run([ccsim, "reproduce", "--all", "--quick", "--jobs", "1", "--out", str(out)], check=True, capture_output=True)
    return hashes(out)


def compare(label: str, a: dict[str, str], b: dict[str, str]) -> tuple[int, int]:
    """Prints the differing tables of one run; returns (tables, differing)."""
    names = sorted(set(a) | set(b))
    bad = [n for n in names if a.get(n) != b.get(n)]
    for n in bad:
        print(f"{label}: {n} differs")
    print(f"{label}: {len(names)} tables {'same' if not bad else 'DIFFER'}")
    return len(names), len(bad)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    if len(args) != 2 or flags - {"--profiles", "--reproduce"}:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    before, after = args
    runs = [(sc.stem, sc, []) for sc in SCENARIOS]
    if "--profiles" in flags:
        runs += [(f"{sc.stem}[{p}]", sc, ["--set", f"tcp.profile={p}"]) for sc in EXAMPLES for p in PROFILES]
    total = differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, sc, extra) in enumerate(runs):
            a = tables(before, sc, Path(tmp) / "before" / str(i), extra)
            b = tables(after, sc, Path(tmp) / "after" / str(i), extra)
            n, d = compare(label, a, b)
            total, differ = total + n, differ + d
        if "--reproduce" in flags:
            n, d = compare("reproduce --all --quick", reproduced(before, Path(tmp) / "rb"), reproduced(after, Path(tmp) / "ra"))
            total, differ = total + n, differ + d
    print(f"{total} tables compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
