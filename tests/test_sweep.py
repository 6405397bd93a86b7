"""Sweeps: plan parsing and errors, seeds, local pool vs a real Dask LocalCluster, resume, CLI.

Runs are 5 s of simulated time (a few ms each), so the 5-point x 5-repetition plans run in well under a
second of engine time; most of this file's time is starting worker processes.
"""

from __future__ import annotations

import math
import os
import signal
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ccsim.outdir import LOCK_FILE, MARKER_FILE
from ccsim.sweep.store import part_path
from ccsim.cli import cli
from ccsim.errors import CcsimError, OutputExistsError, ScenarioError
from ccsim.sweep import SweepPlan, load_sweep, run_sweep
from ccsim.sweep_stats import describe, t_quantile

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TABLES = ("flows", "links", "runs", "summary")

PLAN = """\
[sweep]
repetitions = 5
seed = 7

[base.run]
duration = "5s"

[base.topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"

[[base.flows]]
algorithm = "newreno"

[grid]
"topology.loss" = [0.0, 0.001, 0.005, 0.01, 0.02]
"""

BASE_FILE = """\
[run]
duration = "5s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"

[[flows]]
algorithm = "chd"
"""


def _plan_file(tmp_path: Path, text: str = PLAN, name: str = "plan.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _same_tables(a: Path, b: Path) -> None:
    for name in TABLES:
        ta, tb = pq.read_table(a / f"{name}.parquet"), pq.read_table(b / f"{name}.parquet")
        assert ta.schema == tb.schema, name
        assert ta.equals(tb), name
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes(), name


# ---------------------------------------------------------------------------------------------------
# The plan


def test_plan_points_runs_and_seeds(tmp_path: Path) -> None:
    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    points = plan.points()
    assert len(points) == 5 and plan.parameters == ["topology.loss"]
    assert [ov["topology.loss"] for _, ov in points] == [0.0, 0.001, 0.005, 0.01, 0.02]
    assert [pid.split("-")[0] for pid, _ in points] == ["p000", "p001", "p002", "p003", "p004"]
    runs = plan.runs()
    assert len(runs) == 25
    assert [r.run_id for r in runs] == sorted(r.run_id for r in runs)
    assert len({r.run_id for r in runs}) == 25
    # The seed rule: plan seed + repetition, the same at every point (common random numbers).
    for r in runs:
        assert r.seed == 7 + r.repetition
    assert len({r.seed for r in runs if r.point_id == points[0].point_id}) == 5
    # The overrides reached the scenario.
    assert [plan.scenario(pid).topology.loss_rate for pid, _ in points] == [0.0, 0.001, 0.005, 0.01, 0.02]
    # Deterministic: parsing again gives the same ids and seeds.
    again = SweepPlan.from_toml(_plan_file(tmp_path))
    assert [(r.run_id, r.seed) for r in again.runs()] == [(r.run_id, r.seed) for r in runs]


def test_point_ids_follow_the_scenario(tmp_path: Path) -> None:
    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    edited = SweepPlan.from_toml(_plan_file(tmp_path, PLAN.replace('duration = "5s"', 'duration = "6s"'), "b.toml"))
    assert all(a.point_id != b.point_id for a, b in zip(plan.points(), edited.points()))
    # The same point written differently ("1%" vs 0.01) is the same scenario: same hash.
    pct = SweepPlan.from_toml(_plan_file(tmp_path, PLAN.replace("0.01,", '"1%",'), "c.toml"))
    assert pct.points()[3].point_id == plan.points()[3].point_id


def _access_rates_colliding_in_32_bits() -> tuple[int, int]:
    """Two access rates (bit/s) whose points' canonical scenarios share the first 8 hex digits of
    their SHA-256: a birthday search over the canonical text with the rate spliced in (about 80,000
    hashes, 0.1 s)."""
    import hashlib

    from ccsim.sweep.plan import canonical_text

    plan = SweepPlan.from_toml_str(PLAN.split("[grid]")[0])
    text = canonical_text(plan.scenario(plan.points()[0].point_id))
    key = '"access_rate_bps":1000000000'
    assert text.count(key) == 1
    head, tail = text.split(key)
    head_bytes, tail_bytes = (head + key[:-len("1000000000")]).encode(), tail.encode()
    seen: dict[bytes, int] = {}
    rate = 10**9 + 1
    while True:
        short = hashlib.sha256(head_bytes + str(rate).encode() + tail_bytes).digest()[:4]
        if short in seen:
            return seen[short], rate
        seen[short] = rate
        rate += 1


def test_different_points_whose_ids_share_32_bits_are_both_run(tmp_path: Path) -> None:
    """The duplicate check compared the 8 hex digits of the point id: different scenarios colliding
    in those 32 bits were refused as "the same scenario" (1 % of 10,000-point plans)."""
    import hashlib

    from ccsim.sweep.plan import canonical_text

    a, b = _access_rates_colliding_in_32_bits()
    plan = SweepPlan.from_toml_str(PLAN.split("[grid]")[0] + f'[grid]\n"topology.access_rate" = ["{a}bit", "{b}bit"]\n')
    (pa_, _), (pb, _) = plan.points()
    texts = [canonical_text(plan.scenario(pid)) for pid in (pa_, pb)]
    assert texts[0] != texts[1]
    digests = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    assert digests[0][:8] == digests[1][:8]  # the ids' hashes collide ...
    assert pa_ != pb and pa_.split("-")[1] == pb.split("-")[1]  # ... and the index tells the ids apart
    assert [plan.scenario(p).topology.access_rate_bps for p in (pa_, pb)] == [a, b]


def test_an_oversized_grid_is_refused_before_any_value_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key of 10^6 values took 25 s of CPU (a copy of the base scenario per value) before the sweep
    budget refused it; now the size is checked first, and no value is looked at."""
    from ccsim.sweep import plan as plan_module

    applied = []
    real = plan_module.apply_override
    monkeypatch.setattr(plan_module, "apply_override", lambda *a: applied.append(a) or real(*a))
    values = ", ".join(str(i) for i in range(200_001))
    with pytest.raises(ScenarioError, match=r"^grid: over the sweep budget: 200001 points x 1 repetitions.*limit of 100000 runs"):
        SweepPlan.from_toml_str(PLAN.split("[grid]")[0].replace("repetitions = 5", "repetitions = 1")
                                + f'[grid]\n"flows[0].params.x" = [{values}]\n')
    assert applied == []


def test_base_file_grid_product_and_params(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "base.toml").write_text(BASE_FILE)
    plan = SweepPlan.from_toml(_plan_file(tmp_path, """\
[sweep]
base = "scenarios/base.toml"
repetitions = 2

[grid]
"flows[0].params.p_max" = [0.1, 0.25]
"run.duration" = ["3s", "4s", "5s"]
"""))
    assert len(plan.points()) == 6 and plan.seed == 1  # default: the base scenario's run.seed
    assert plan.points()[1].overrides == {"flows[0].params.p_max": 0.1, "run.duration": "4s"}
    scenario = plan.scenario(plan.points()[5].point_id)
    assert scenario.flows[0].params == {"p_max": 0.25} and scenario.run.duration_ns == 5_000_000_000


def test_values_valid_only_together(tmp_path: Path) -> None:
    # flows[0].stop = "8s" is invalid against the base's 5 s but valid with run.duration = "10s".
    plan = SweepPlan.from_toml(_plan_file(tmp_path, PLAN.split("[grid]")[0] + """\
[grid]
"run.duration" = ["10s"]
"flows[0].stop" = ["8s"]
"""))
    assert len(plan.points()) == 1


def test_explicit_points(tmp_path: Path) -> None:
    plan = SweepPlan.from_toml(_plan_file(tmp_path, PLAN.split("[grid]")[0] + """\
[[point]]
"flows[0].algorithm" = "newreno"

[[point]]
"flows[0].algorithm" = "chd"
"topology.loss" = 0.01
"""))
    assert plan.parameters == ["flows[0].algorithm", "topology.loss"]
    assert len(plan.runs()) == 10


def test_example_plan() -> None:
    plan = SweepPlan.from_toml(EXAMPLES / "sweep_loss.toml")
    assert len(plan.points()) == 5 and plan.repetitions == 5


BAD_PLANS = [
    # (id, plan text, the error line starts with)
    ("unknown path", PLAN.replace('"topology.loss"', '"topology.bandwidth"'), 'grid."topology.bandwidth"[0]: topology.bandwidth: unknown key'),
    ("rejected value", PLAN.replace("0.005,", "1.5,"), 'grid."topology.loss"[2]: topology.loss'),
    ("no such flow", PLAN + '"flows[3].algorithm" = ["chd"]\n', 'grid."flows[3].algorithm"[0]: flows has 1 entry'),
    ("unknown algorithm", PLAN + '"flows[0].algorithm" = ["newreno", "cubicc"]\n', 'grid."flows[0].algorithm"[1]: flows[0].algorithm'),
    ("engine range", PLAN + '"flows[0].algorithm" = ["chd"]\n"flows[0].params.p_max" = [0.25, 1.5]\n',
     'grid."flows[0].params.p_max"'),
    ("malformed path", PLAN.replace('"topology.loss"', '"topology..loss"'), 'grid."topology..loss": malformed path'),
    ("seed in grid", PLAN + '"run.seed" = [1, 2]\n', 'grid."run.seed": the seed is set per repetition'),
    ("empty values", PLAN + '"topology.queue" = []\n', 'grid."topology.queue": must be a non-empty array'),
    ("repetitions", PLAN.replace("repetitions = 5", "repetitions = 0"), "sweep.repetitions: must be an integer >= 1"),
    ("unknown sweep key", PLAN.replace("repetitions = 5", "repetition = 5"), "sweep.repetition: unknown key"),
    ("negative seed", PLAN.replace("seed = 7", "seed = -1"), "sweep.seed"),
    ("two bases", PLAN.replace("seed = 7", 'seed = 7\nbase = "x.toml"'), "sweep.base: give either"),
    ("missing base file", PLAN.split("[base.run]")[0].replace("seed = 7", 'seed = 7\nbase = "nope.toml"')
     + '[grid]\n"topology.loss" = [0.0]\n', "sweep.base: "),
    ("bad base", PLAN.replace('queue = "84pkt"', 'queue = "0pkt"'), "base: topology.queue"),
    ("bad TOML", PLAN.replace("repetitions = 5", "repetitions = "), "{plan}: invalid TOML"),
    ("combination", PLAN.replace('[grid]', '[grid]\n"run.duration" = ["5s", "1s"]\n"flows[0].start" = ["0s", "2s"]'),
     'grid."flows[0].start"[1]: flows[0].start: 2s is at or after the end of the run (1s) (with run.duration="1s", topology.loss=0.0)'),
    ("combination, no key", PLAN.replace('[grid]', '[grid]\n"run.duration" = ["5s", "1s"]').replace(
        'algorithm = "newreno"', 'algorithm = "newreno"\nstart = "2s"'),
     'grid point 5 (run.duration="1s", topology.loss=0.0): flows[0].start: 2s is at or after the end of the run (1s)'),
]


@pytest.mark.parametrize("text, starts", [pytest.param(t, s, id=i) for i, t, s in BAD_PLANS])
def test_plan_errors_name_the_plan_field(tmp_path: Path, text: str, starts: str) -> None:
    with pytest.raises(ScenarioError) as info:
        path = _plan_file(tmp_path, text)
        SweepPlan.from_toml(path)
    starts = starts.replace("{plan}", str(path))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(starts), message


def test_cli_plan_error_exit_2_and_nothing_written(tmp_path: Path) -> None:
    plan = _plan_file(tmp_path, PLAN.replace("0.005,", "1.5,"))
    result = CliRunner().invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('error: grid."topology.loss"[2]: '), result.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------
# Running: local pool vs Dask, resume, output directory rules


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_local_pool_and_dask_cluster_give_identical_parquet(tmp_path: Path, dask_client) -> None:
    plan = _plan_file(tmp_path)
    runner = CliRunner()
    local = runner.invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "local"), "--jobs", "2"])
    assert local.exit_code == 0, local.output + str(local.exception)
    address = dask_client.scheduler.address
    dask = runner.invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "dask"), "--cluster", address])
    assert dask.exit_code == 0, dask.output + str(dask.exception)
    assert "25 runs executed" in local.output and "25 runs executed" in dask.output
    _same_tables(tmp_path / "local", tmp_path / "dask")
    # The Python API with a Client object gives the same, and so does one process (jobs=1).
    via_client = run_sweep(SweepPlan.from_toml(plan), tmp_path / "client", cluster=dask_client, progress=False)
    assert len(via_client.executed) == 25
    _same_tables(tmp_path / "local", tmp_path / "client")
    run_sweep(SweepPlan.from_toml(plan), tmp_path / "inline", jobs=1, progress=False)
    _same_tables(tmp_path / "local", tmp_path / "inline")

    result = load_sweep(tmp_path / "dask")
    assert len(result.flows) == 25 and len(result.runs) == 25
    assert list(result.runs.columns[:5]) == ["run_id", "point_id", "repetition", "seed", "topology.loss"]
    assert list(result.flows["run_id"]) == sorted(result.flows["run_id"])
    assert {"goodput_bps", "rtt_p95_ms", "name"} <= set(result.flows.columns)
    assert set(result.links["link"]) >= {"bottleneck"}
    # Loss lowers goodput, and repetitions differ where there is randomness.
    g = result.runs.groupby("topology.loss")["total_goodput_bps"]
    assert list(g.mean().sort_index()) == sorted(g.mean(), reverse=True)
    assert g.nunique().loc[0.02] == 5


def test_summary_statistics(tmp_path: Path) -> None:
    result = run_sweep(SweepPlan.from_toml(_plan_file(tmp_path)), tmp_path / "out", jobs=1, progress=False)
    s = result.summary
    assert {"point_id", "topology.loss", "scope", "name", "metric", "n", "mean", "ci95_low", "ci95_high", "p20", "p50", "p80"} <= set(s.columns)
    point = result.plan.points()[4].point_id
    values = result.runs.loc[result.runs["point_id"] == point, "total_goodput_bps"].to_numpy()
    row = s[(s.point_id == point) & (s.scope == "run") & (s.metric == "total_goodput_bps")].iloc[0]
    half = 2.7764451 * values.std(ddof=1) / math.sqrt(5)
    assert row["n"] == 5 and row["mean"] == pytest.approx(values.mean())
    assert row["ci95_low"] == pytest.approx(values.mean() - half) and row["ci95_high"] == pytest.approx(values.mean() + half)
    assert [row.p20, row.p50, row.p80] == pytest.approx(list(np.percentile(values, [20, 50, 80])))
    flow_rows = s[(s.scope == "flow") & (s.metric == "goodput_bps")]
    assert len(flow_rows) == 5 and set(flow_rows["name"]) == {"flow0"}
    assert set(s[s.scope == "link"]["name"]) >= {"bottleneck"}


def test_resume_after_interruption_runs_only_the_missing_runs(tmp_path: Path) -> None:
    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    out = tmp_path / "out"
    reference = run_sweep(plan, tmp_path / "reference", jobs=1, progress=False)

    # Interrupt a sweep after 7 runs (Ctrl-C arrives while the 8th would start).
    done: list[str] = []

    def stop_after_seven(run_id: str) -> None:
        done.append(run_id)
        if len(done) == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan, out, jobs=1, progress=False, on_run=stop_after_seven)
    parts = sorted(p.stem for p in (out / "parts").glob("*.parquet"))
    assert parts == [f"{run_id}-s{plan.seed_for(int(run_id[-2:]))}" for run_id in done] and not (out / "flows.parquet").exists()

    with pytest.raises(OutputExistsError):
        run_sweep(plan, out, jobs=1, progress=False)  # neither resume nor force
    resumed = run_sweep(plan, out, jobs=2, progress=False, resume=True)
    assert resumed.executed == sorted(set(r.run_id for r in plan.runs()) - set(done))
    _same_tables(tmp_path / "reference", out)
    assert reference.summary.equals(resumed.summary)

    # Lose three parts (and the consolidated files): the CLI's --resume reruns exactly those.
    lost = [plan.runs()[i] for i in (0, 12, 24)]
    for run in lost:
        part_path(out / "parts", run).unlink()
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "parts").glob("*.parquet")}
    result = CliRunner().invoke(cli, ["sweep", str(tmp_path / "plan.toml"), "--out", str(out), "--resume", "--jobs", "2"])
    assert result.exit_code == 0, result.output + str(result.exception)
    assert "3 runs executed" in result.output
    assert {p.name: p.stat().st_mtime_ns for p in (out / "parts").glob("*.parquet") if p.name in kept} == kept
    assert sorted(p.name for p in (out / "parts").glob("*.parquet")) == sorted(part_path(out / "parts", r).name for r in plan.runs())
    _same_tables(tmp_path / "reference", out)

    # Nothing missing: a resume runs nothing.
    assert run_sweep(plan, out, jobs=1, progress=False, resume=True).executed == []


def test_output_directory_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan_path = _plan_file(tmp_path, PLAN.replace("repetitions = 5", "repetitions = 1"))
    plan = SweepPlan.from_toml(plan_path)
    out = tmp_path / "out"
    run_sweep(plan, out, jobs=1, progress=False)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [MARKER_FILE, LOCK_FILE, "plan.toml", "sweep.json", "parts", "flows.parquet", "links.parquet", "runs.parquet", "summary.parquet"])
    assert (out / "plan.toml").read_text() == plan_path.read_text()
    runner = CliRunner()
    exists = runner.invoke(cli, ["sweep", str(plan_path), "--out", str(out)])
    assert exists.exit_code == 2 and "--resume" in exists.stderr and "--force" in exists.stderr
    forced = runner.invoke(cli, ["sweep", str(plan_path), "--out", str(out), "--force", "--jobs", "1"])
    assert forced.exit_code == 0 and "5 runs executed" in forced.output
    with pytest.raises(CcsimError):
        run_sweep(plan, out, resume=True, force=True, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    refused = runner.invoke(cli, ["sweep", str(plan_path), "--out", str(other), "--force"])
    assert refused.exit_code == 2 and (other / "precious.txt").exists()
    monkeypatch.setattr("ccsim.sweep.execution.DASK_CONNECT_TIMEOUT", "1s")
    bad_cluster = runner.invoke(cli, ["sweep", str(plan_path), "--out", str(tmp_path / "c"), "--cluster", "tcp://127.0.0.1:1"])
    assert bad_cluster.exit_code == 2 and bad_cluster.stderr.startswith("error: cannot connect"), bad_cluster.stderr
    assert not (tmp_path / "c").exists()


def test_t_quantiles_and_describe() -> None:
    for df, expected in [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (29, 2.0452)]:
        assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)
    one = describe([3.0])
    assert one["n"] == 1 and one["mean"] == 3.0 and math.isnan(one["ci95_low"])
    assert describe([float("nan"), 1.0, 3.0])["n"] == 2


@pytest.mark.parametrize("jobs", [2, 3])
def test_workers_write_the_parts_and_the_consolidation_reads_none_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """With --jobs 2 (3) the sweep process and one forked worker (two, each sending on a pipe of its
    own) take runs from one shared list, and each writes the part files of its runs; the sweep
    process consolidates from the part tables (its own, and those the workers sent back:
    docs/performance.md) and lists every part in the marker."""
    from ccsim.outdir import owned_files
    from ccsim.sweep import execution, store

    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    reference = tmp_path / "reference"
    run_sweep(plan, reference, jobs=1, progress=False)

    def no_reading(path: Path) -> None:
        raise AssertionError(f"{path} was read back")

    monkeypatch.setattr(store, "_read_part", no_reading)
    writers = tmp_path / "writers"
    original = store.write_part

    def noted(parts: Path, run, output):  # a forked worker inherits this
        with writers.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return original(parts, run, output)

    monkeypatch.setattr(execution, "write_part", noted)
    # the pool forks (as from the ccsim command) even if the test runner has other threads
    monkeypatch.setattr(execution, "_start_method", lambda: "fork")
    result = run_sweep(plan, tmp_path / "out", jobs=jobs, progress=False)
    assert len(result.executed) == 25
    _same_tables(reference, tmp_path / "out")
    assert len(list((tmp_path / "out" / "parts").glob("*.parquet"))) == 25
    listed = {name for name in owned_files(tmp_path / "out") if name.startswith("parts/")}
    assert listed == {f"parts/{part_path(tmp_path / 'out' / 'parts', r).name}" for r in plan.runs()}
    pids = writers.read_text().split()
    assert len(pids) == 25 and str(os.getpid()) in pids and len(set(pids)) == jobs  # every process took runs


def test_a_forked_worker_that_dies_is_one_line_naming_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed (by the OOM killer, a signal) while the sweep process takes runs too: the sweep
    stops with one line naming a run it lost, and the finished runs are kept for --resume."""
    from ccsim.sweep import execution

    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    sweep_process = os.getpid()
    original = execution.execute_run

    def dies_in_worker(run_id, *args, **kwargs):
        if os.getpid() != sweep_process:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(run_id, *args, **kwargs)

    monkeypatch.setattr(execution, "execute_run", dies_in_worker)
    monkeypatch.setattr(execution, "_start_method", lambda: "fork")
    with pytest.raises(CcsimError, match=r"^a worker process died while running p\d{3}-[0-9a-f]{8}-r\d\d .*rerun with --resume"):
        run_sweep(plan, tmp_path / "out", jobs=2, progress=False)
    assert list((tmp_path / "out" / "parts").glob("*.parquet"))  # the sweep process's runs are kept
    monkeypatch.setattr(execution, "execute_run", original)
    resumed = run_sweep(plan, tmp_path / "out", jobs=2, progress=False, resume=True)
    assert 0 < len(resumed.executed) < 25


def test_a_run_that_fails_in_a_forked_worker_stops_no_other_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine error in a worker's run travels back on its pipe as that run's failure: every other
    run finishes, the sweep then ends with one line naming the failed run, and its parts are kept."""
    from ccsim.sweep import execution

    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    sweep_process = os.getpid()
    original = execution.execute_run
    failed = tmp_path / "failed"

    def fails_in_worker(run_id, *args, **kwargs):
        if os.getpid() != sweep_process and not failed.exists():
            failed.write_text(run_id)
            raise CcsimError("the engine refused it")
        return original(run_id, *args, **kwargs)

    monkeypatch.setattr(execution, "execute_run", fails_in_worker)
    monkeypatch.setattr(execution, "_start_method", lambda: "fork")
    with pytest.raises(CcsimError, match=r"^run (p\d{3}-[0-9a-f]{8}-r\d\d) failed: the engine refused it; the finished runs are kept") as info:
        run_sweep(plan, tmp_path / "out", jobs=2, progress=False)
    assert failed.read_text() in str(info.value)
    assert len(list((tmp_path / "out" / "parts").glob("*.parquet"))) == 24


def test_a_worker_that_cannot_be_started_is_one_line_and_ends_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs 3 where the second fork fails (a limit on processes): one line naming the field and
    the reason, the worker already forked is ended and reaped, no pipe is left open."""
    import errno

    from ccsim.sweep import execution

    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    monkeypatch.setattr(execution, "_start_method", lambda: "fork")
    real_fork, forked = os.fork, []

    def fork_once() -> int:
        if forked:
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(execution.os, "fork", fork_once)
    open_before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(CcsimError, match=r"^jobs: cannot start worker process 2 of 2 \(Resource temporarily unavailable\); run the sweep with fewer jobs$"):
        run_sweep(plan, tmp_path / "out", jobs=3, progress=False)
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):  # reaped
        os.waitpid(forked[0], os.WNOHANG)
    assert set(os.listdir("/proc/self/fd")) <= open_before


def test_a_bug_in_a_forked_worker_reaches_the_sweep_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ccsim.sweep import execution

    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    sweep_process = os.getpid()
    original = execution.execute_run

    def bug_in_worker(run_id, *args, **kwargs):
        if os.getpid() != sweep_process:
            raise ZeroDivisionError("a bug")
        return original(run_id, *args, **kwargs)

    monkeypatch.setattr(execution, "execute_run", bug_in_worker)
    monkeypatch.setattr(execution, "_start_method", lambda: "fork")
    with pytest.raises(ZeroDivisionError, match="a bug"):
        run_sweep(plan, tmp_path / "out", jobs=2, progress=False)


def test_a_worker_goes_on_while_its_pipe_is_full_and_every_message_arrives_whole() -> None:
    """A worker's results wait in its outbox while the sweep process is busy with a run of its own
    (a send never blocks), and the sweep process's inbox gives each message back whole, in order,
    also when the pipe hands it over in pieces."""
    import fcntl

    from ccsim.sweep.execution import _F_SETPIPE_SZ, _Inbox, _Outbox

    def blocked(*_: object) -> None:
        raise AssertionError("a send blocked on the full pipe")

    read, write = os.pipe()
    fcntl.fcntl(write, _F_SETPIPE_SZ, 4096)  # the smallest pipe, one page
    outbox, inbox = _Outbox(write), _Inbox(read)
    sent = [(f"run{k}", bytes([k]) * (3000 + 500 * k), None) for k in range(12)]  # far more than the pipe holds
    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(10)  # a send that blocked would wait for ever: fail instead
    try:
        for message in sent:
            outbox.send(message)  # does not block
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert outbox.pending  # what the pipe could not take waits
    got = []
    while outbox.pending:
        got += list(inbox.messages())
        outbox._write()
    got += list(inbox.messages())
    os.close(write)
    assert got == sent
    assert list(inbox.messages()) == [] and not inbox.open  # the writer has gone: end of the pipe
    inbox.close()


def test_chunks_are_small_for_small_sweeps_and_amortise_large_ones() -> None:
    from ccsim.sweep.execution import chunk_size

    assert chunk_size(25, 2) == 1  # every run its own task: the workers finish together
    assert chunk_size(10_000, 2) == 625  # eight tasks per worker
    assert chunk_size(3, 8) == 1


def test_an_interrupted_two_job_sweep_stops_its_worker_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the sweep process and its forked worker share the runs: the worker is ended and
    reaped before run_sweep returns (no process left, not even a zombie), no unfinished part file is
    left; --resume runs only what is missing, with the same tables."""
    from ccsim.sweep import execution

    monkeypatch.setattr(execution, "_start_method", lambda: "fork")
    plan = SweepPlan.from_toml(_plan_file(tmp_path))
    run_sweep(plan, tmp_path / "reference", jobs=1, progress=False)
    runners = tmp_path / "runners"
    original = execution.execute_run

    def noted(*args, **kwargs):  # a forked worker inherits this
        with runners.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return original(*args, **kwargs)

    monkeypatch.setattr(execution, "execute_run", noted)
    seen: list[str] = []

    def stop_after_five(run_id: str) -> None:
        seen.append(run_id)
        if len(seen) == 5:
            raise KeyboardInterrupt

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan, out, jobs=2, progress=False, on_run=stop_after_five)
    workers = {int(pid) for pid in runners.read_text().split()} - {os.getpid()}
    assert len(workers) == 1
    for pid in workers:
        with pytest.raises(ChildProcessError):  # reaped: no longer a child of this process
            os.waitpid(pid, os.WNOHANG)
        assert not Path(f"/proc/{pid}").exists()
    parts = list((out / "parts").glob("*.parquet"))
    assert 5 <= len(parts) < 25 and not (out / "flows.parquet").exists()
    assert not list((out / "parts").glob(".*.tmp"))
    monkeypatch.setattr(execution, "execute_run", original)
    resumed = run_sweep(plan, out, jobs=2, progress=False, resume=True)
    assert len(resumed.executed) == 25 - len(parts)
    _same_tables(tmp_path / "reference", out)


def test_on_a_terminal_the_workers_are_forked_before_the_progress_bar_starts(tmp_path: Path) -> None:
    """On a terminal the progress bar runs a refresh thread, and a process with another thread must
    not fork (it would spawn its workers, each importing everything again: twice the CPU of --jobs
    1 for this sweep). The workers are forked before the bar starts, so the shared pool is used."""
    import subprocess
    import sys
    import threading

    code = (
        "import sys\n"
        "import ccsim.sweep.execution as ex\n"
        "made = []\n"
        "class Counted(ex._shared_pool):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        made.append(1)\n"
        "        super().__init__(*args, **kwargs)\n"
        "ex._shared_pool = Counted\n"
        "from ccsim.cli import main\n"
        "try:\n"
        "    main(['sweep', sys.argv[1], '--out', sys.argv[2], '--jobs', '2'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "open(sys.argv[3], 'w').write(f'SHARED {len(made)}')\n"
    )
    master, terminal = os.openpty()
    shown = bytearray()

    def drain() -> None:  # the terminal's buffer is small: read it while the sweep writes
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    report = tmp_path / "report.txt"
    try:
        proc = subprocess.run([sys.executable, "-c", code, str(EXAMPLES / "sweep_loss.toml"), str(tmp_path / "out"),
                               str(report)], stdin=terminal, stdout=terminal, stderr=terminal, timeout=300)
    finally:
        os.close(terminal)
    reader.join(timeout=5)
    os.close(master)
    assert proc.returncode == 0, shown.decode(errors="replace")[-2000:]
    assert b"/25 runs" in shown  # the progress bar was shown: its thread ran
    assert report.read_text() == "SHARED 1"
