"""The results fingerprint: a hash of what a fixed set of runs writes, recorded with the version that
wrote it (tests/results_fingerprint.json), so that the version moves whenever results change.

    python scripts/results_fingerprint.py            # prints whether the record still holds
    python scripts/results_fingerprint.py --write    # records the current results and version

``--write`` refuses to record different results under the recorded version: bump the version
(pyproject.toml, Cargo.toml, CITATION.cff) and add its CHANGELOG.md section first. The test suite
(tests/test_release_files.py) fails when the record no longer holds.

The runs: every example under each TCP profile, as the example is written (a few seconds in all). The hash covers each run's four tables as
CSV text (every value at full precision), not the Parquet bytes, which carry the writer's version.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "results_fingerprint.json"
EXAMPLES = ["single_flow", "three_flows", "voip_with_bulk", "parking_lot", "onoff_coexistence"]
PROFILES = ["freebsd9", "linux", "ns2"]
TABLES = ["summary", "link_summary", "flows", "links"]


def package_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def fingerprint() -> dict[str, str]:
    """``example@profile`` -> SHA-256 of its tables, for every example and profile."""
    import ccsim  # lazy: the script's --help needs no engine
    from ccsim.overrides import apply_overrides

    prints = {}
    for name in EXAMPLES:
        text = (ROOT / "examples" / f"{name}.toml").read_text(encoding="utf-8")
        for profile in PROFILES:
            scenario = apply_overrides(text, [f"tcp.profile={profile}"], source=f"{name}.toml")[0]
            result = ccsim.run(scenario, seed=1)
            digest = hashlib.sha256()
            for table in TABLES:
                digest.update(table.encode())
                digest.update(getattr(result, table).to_csv(index=False, float_format="%.17g").encode())
            prints[f"{name}@{profile}"] = digest.hexdigest()
    return prints


def main(argv: list[str]) -> int:
    current = fingerprint()
    version = package_version()
    record = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.is_file() else {"version": None, "runs": {}}
    changed = sorted(k for k in set(current) | set(record["runs"]) if current.get(k) != record["runs"].get(k))
    if "--write" in argv:
        if changed and record["version"] == version:
            print(f"results changed ({', '.join(changed)}) but the version is still {version}: bump it (pyproject.toml, "
                  "Cargo.toml, CITATION.cff) and add its CHANGELOG.md section, then --write again", file=sys.stderr)
            return 1
        RECORD.write_text(json.dumps({"version": version, "runs": current}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(current)} runs under version {version}")
        return 0
    if changed or record["version"] != version:
        print(f"the record ({record['version']}) no longer holds at version {version}: {', '.join(changed) or 'version only'}")
        return 1
    print(f"the results of version {version} are unchanged ({len(current)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
