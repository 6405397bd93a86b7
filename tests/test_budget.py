"""Budgets up front (docs/safety.md): the engine's cost estimate against real runs, the refusal of
legal values that would exhaust the machine (the allocation bombs of issue 13), the limit lifted
(a named error, never SIGABRT), engine panics as EngineError, and the Python API's argument rules."""

from __future__ import annotations

import errno
import math
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import ccsim
from ccsim.budget import DEFAULT_BUDGET, Budget, estimate, format_bytes
from ccsim.cli import cli, os_error_text
from ccsim.errors import ArgumentError, BudgetError, CcsimError, EngineError, ResourceError, ScenarioError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

BASE = """\
[run]
duration = "10s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"

[[flows]]
algorithm = "newreno"
"""

CBR = '\n[[flows]]\nkind = "cbr"\nrate = "1000Gbit"\n'
WEB = '\n[[flows]]\nname = "web"\nkind = "web"\nalgorithm = "newreno"\narrival_rate = 1e9\nsize_mean = "50kB"\n'

# The bombs of issue 13 and what each refusal names: the key that drives the cost.
BOMBS = {
    "sample_interval_1ns": (BASE.replace('"10s"', '"10s"\nsample_interval = "1ns"'), "run.sample_interval"),
    "cbr_1000gbit": (BASE + CBR, "flows[1].rate"),
    "web_arrivals_1e9": (BASE + WEB, "flows[1].arrival_rate"),
    "1e7s_with_1ms_samples": (BASE.replace('"10s"', '"10000000s"\nsample_interval = "1ms"'), "run.duration"),
    "duration_1e9s": (BASE.replace('"10s"', '"1000000000s"'), "run.duration"),
    "10000_flows_3600s": (BASE.replace('"10s"', '"3600s"') + "count = 10000\n", "run.sample_interval"),
}


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _one_line_exit_2(result) -> str:
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# --- the estimate against real runs ------------------------------------------------------------------


@pytest.mark.parametrize("example", ["single_flow", "three_flows", "voip_with_bulk", "parking_lot", "onoff_coexistence"])
def test_the_estimate_is_within_a_factor_of_two_of_the_events_a_run_processes(example):
    pytest.importorskip("ccsim._core")
    scenario = ccsim.load_scenario(EXAMPLES / f"{example}.toml")
    cost = estimate(scenario)
    result = ccsim.run(scenario, seed=1)
    events = result.meta["engine_stats"]["events"]
    assert 0.7 < cost.events / events < 2.0, (cost.events, events)


def test_the_estimate_counts_the_table_values_a_run_records_exactly(tmp_path):
    """Series and summary cells follow from samples x rows x columns: the column counts of cost.rs
    must be the recorder's and the summary's (a new column there must be counted here)."""
    core = pytest.importorskip("ccsim._core")
    text = (EXAMPLES / "voip_with_bulk.toml").read_text().replace('algorithm = "newreno"', 'algorithm = "chd"')
    scenario = ccsim.Scenario.from_toml_str(text)
    sim = core.Simulation(__import__("json").dumps(scenario.resolve()), 1)
    raw_cost = sim.estimate_cost()
    raw = sim.finish()

    def cells(table):
        return raw[table].num_rows * raw[table].num_columns

    assert raw_cost["samples"] == scenario.run.duration_ns // scenario.run.sample_interval_ns
    assert cells("cc_metrics") > 0  # chd reports metrics: the test covers that table too
    assert raw_cost["series_cells"] == sum(cells(t) for t in ("flows", "streams", "links", "cc_metrics"))
    assert raw_cost["summary_cells"] == cells("flow_summary")


def test_web_transfers_are_estimated_from_the_arrival_rate():
    pytest.importorskip("ccsim._core")
    text = BASE.replace('"10s"', '"20s"') + WEB.replace("1e9", "5.0").replace('"50kB"', '"20kB"')
    scenario = ccsim.Scenario.from_toml_str(text)
    cost = estimate(scenario)
    result = ccsim.run(scenario, seed=1)
    transfers = int((result.summary["kind"] == "web").sum())
    assert cost.web_transfers == pytest.approx(100.0)
    assert 60 <= transfers <= 140  # Poisson, mean 100
    assert 0.5 < cost.events / result.meta["engine_stats"]["events"] < 2.0


# --- the bombs: refused before running, with the estimate -------------------------------------------


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_each_bomb_is_refused_before_it_runs(tmp_path, bomb, monkeypatch):
    pytest.importorskip("ccsim._core")
    from ccsim import runner

    text, field = BOMBS[bomb]
    path = _write(tmp_path, text)
    out = tmp_path / "out"
    started = []  # the meter's limits are set only once the estimate has passed: then the run starts
    monkeypatch.setattr(runner, "memory_limit", lambda *a, **k: started.append(a))
    result = CliRunner().invoke(cli, ["run", str(path), "--out", str(out), "--no-plots"])
    line = _one_line_exit_2(result)
    assert line.startswith(f"error: {field}: over the run budget: estimated ")
    assert "events (~" in line and "of memory" in line and "--ignore-budget" in line
    assert not out.exists() and started == []  # refused up front, not stopped after running
    assert _one_line_exit_2(CliRunner().invoke(cli, ["validate", str(path)])) == line
    with pytest.raises(BudgetError) as refused:
        ccsim.run(path)
    assert refused.value.field == field and isinstance(refused.value, ScenarioError)


def test_a_run_within_the_budget_passes_and_validate_prints_its_estimate(tmp_path):
    pytest.importorskip("ccsim._core")
    path = _write(tmp_path, BASE)
    result = CliRunner().invoke(cli, ["validate", str(path), "--estimate"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith("estimate: ") and "events" in result.stdout


def test_a_smaller_budget_refuses_what_the_default_allows(tmp_path):
    pytest.importorskip("ccsim._core")
    path = _write(tmp_path, BASE)
    with pytest.raises(BudgetError, match=r"^run.duration: .*limit of 1000 events"):
        ccsim.run(path, budget=Budget(max_events=1000))
    assert ccsim.run(path, budget=None).summary.shape[0] == 1


def test_too_many_flows_in_all_is_one_line_before_anything_is_built(tmp_path):
    entries = '[[flows]]\nalgorithm = "newreno"\ncount = 10000\n' * 300  # 3 million flows in 12 kB
    path = _write(tmp_path, BASE.split("[[flows]]")[0] + entries)
    events = 0

    def count(frame, event, arg):
        nonlocal events
        events += 1

    sys.setprofile(count)  # work counted, not timed: building 3 million flows is millions of calls
    try:
        line = _one_line_exit_2(CliRunner().invoke(cli, ["validate", str(path)]))
    finally:
        sys.setprofile(None)
    assert line == "error: flows: 3000000 flows in all (counts included); the limit is 100000"
    assert events < 1_000_000, events


# --- sweeps: the plan's size before expansion, each run's cost -----------------------------------


def _grid_plan(keys: int, values: int = 10) -> str:
    paths = ["topology.loss", "topology.bottleneck_delay", "topology.bottleneck_rate", "topology.queue",
             "run.duration", "flows[0].start", "topology.access_rate", "topology.reverse_delay"][:keys]
    samples = {
        "topology.loss": [f"{i / 1000}" for i in range(values)],
        "topology.bottleneck_delay": [f'"{i + 1}ms"' for i in range(values)],
        "topology.bottleneck_rate": [f'"{i + 1}Mbit"' for i in range(values)],
        "topology.queue": [f'"{10 * (i + 1)}pkt"' for i in range(values)],
        "run.duration": [f'"{i + 2}s"' for i in range(values)],
        "flows[0].start": [f'"{i}ms"' for i in range(values)],
        "topology.access_rate": [f'"{i + 1}Gbit"' for i in range(values)],
        "topology.reverse_delay": [f'"{i + 1}ms"' for i in range(values)],
    }
    grid = "\n".join(f'"{p}" = [{", ".join(samples[p])}]' for p in paths)
    return f'[sweep]\nbase = "base.toml"\n\n[grid]\n{grid}\n'


def test_a_grid_of_8_keys_is_refused_before_it_is_expanded(tmp_path, monkeypatch):
    pytest.importorskip("ccsim._core")
    _write(tmp_path, BASE, "base.toml")
    plan = _write(tmp_path, _grid_plan(8), "plan.toml")
    from ccsim.sweep import plan as plan_module

    checked = []  # each grid value is checked by applying it to a copy of the base
    real = plan_module.apply_override
    monkeypatch.setattr(plan_module, "apply_override", lambda *a: checked.append(a) or real(*a))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = CliRunner().invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "o")])
    line = _one_line_exit_2(result)
    assert line.startswith("error: grid: over the sweep budget: 1e+08 points x 1 repetitions = 1e+08 runs")
    assert checked == [] and not (tmp_path / "o").exists()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # kB: nothing expanded


def test_a_billion_repetitions_are_refused_naming_the_repetitions(tmp_path):
    pytest.importorskip("ccsim._core")
    _write(tmp_path, BASE, "base.toml")
    plan = _write(tmp_path, _grid_plan(1).replace('base = "base.toml"', 'base = "base.toml"\nrepetitions = 1000000000'), "p.toml")
    line = _one_line_exit_2(CliRunner().invoke(cli, ["validate", str(plan)]))
    assert line.startswith("error: sweep.repetitions: over the sweep budget: 10 points x 1000000000 repetitions")


def test_a_sweep_point_over_the_run_budget_is_blamed_on_its_grid_value(tmp_path):
    pytest.importorskip("ccsim._core")
    _write(tmp_path, BASE, "base.toml")
    plan = _write(tmp_path, '[sweep]\nbase = "base.toml"\n\n[grid]\n"run.sample_interval" = ["100ms", "1ns"]\n', "p.toml")
    line = _one_line_exit_2(CliRunner().invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "o")]))
    assert line.startswith('error: grid."run.sample_interval"[1]: run.sample_interval: over the run budget')
    assert not (tmp_path / "o").exists()
    ok = CliRunner().invoke(cli, ["validate", str(plan), "--ignore-budget"])
    assert ok.exit_code == 0 and "2 points" in ok.output


# --- the limit lifted: a named error, never SIGABRT ------------------------------------------------


@pytest.mark.parametrize("bomb", ["sample_interval_1ns", "1e7s_with_1ms_samples", "web_arrivals_1e9"])
def test_a_bomb_with_the_limit_lifted_ends_with_a_named_error_not_an_abort(tmp_path, bomb):
    """Under an address-space limit (ulimit -v) a failed allocation used to abort the interpreter;
    now the engine meters its growth against the room left and stops with ResourceError."""
    pytest.importorskip("ccsim._core")
    path = _write(tmp_path, BOMBS[bomb][0])
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (1400 * 2**20, resource.RLIM_INFINITY)); "
        f"import ccsim.cli; ccsim.cli.main(['run', {str(path)!r}, '--out', {str(tmp_path / 'o')!r}, '--no-plots', '--ignore-budget'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert lines[0].startswith("estimate: ") and len(lines) == 2, done.stderr
    assert lines[1].startswith("error: out of memory: "), done.stderr
    assert not (tmp_path / "o").exists()


def test_the_cbr_bomb_with_the_limit_lifted_stops_at_the_event_ceiling_naming_its_rate(tmp_path):
    """The CBR bomb costs CPU, not memory: with --ignore-budget it starts, says where it will stop, and
    the engine stops it when it has processed --max-events events (a smaller ceiling than the
    default 1e9 keeps this test short; the default is the same code path)."""
    pytest.importorskip("ccsim._core")
    path = _write(tmp_path, BOMBS["cbr_1000gbit"][0])
    out = tmp_path / "o"
    result = CliRunner().invoke(cli, ["run", str(path), "--out", str(out), "--no-plots", "--ignore-budget",
                                      "--max-events", "2e6"])
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("estimate: 1.2e+09 events") and "over the budget; the run stops if it reaches 2e+06 events" in lines[0]
    assert lines[1].startswith("error: flows[1].rate: the run reached its limit of 2000000 events at "), lines[1]
    assert "--max-events" in lines[1]
    assert not out.exists()


def test_a_budget_that_does_not_refuse_up_front_still_meters_the_run_in_python(tmp_path):
    pytest.importorskip("ccsim._core")
    path = _write(tmp_path, BOMBS["cbr_1000gbit"][0])
    with pytest.raises(BudgetError) as refused:  # the default refuses on the estimate
        ccsim.run(path, budget=Budget(max_events=1e5))
    assert "over the run budget" in str(refused.value)
    with pytest.raises(BudgetError) as stopped:  # started anyway, stopped by the engine
        ccsim.run(path, budget=Budget(max_events=1e5, refuse_up_front=False))
    assert stopped.value.field == "flows[1].rate"
    assert "reached its limit of 100000 events" in stopped.value.reason
    # a run within its ceiling is untouched by it
    assert ccsim.run(_write(tmp_path, BASE, "ok.toml"), budget=Budget(max_events=1e6, refuse_up_front=False)).summary.shape[0] == 1


def test_a_run_stopped_at_its_memory_budget_says_how_to_raise_it(tmp_path):
    pytest.importorskip("ccsim._core")
    path = _write(tmp_path, BASE.replace('"10s"', '"10s"\nsample_interval = "1ms"'))
    with pytest.raises(ResourceError) as stopped:
        ccsim.run(path, budget=Budget(max_memory_bytes=2e6, refuse_up_front=False))
    assert "more than the 2 MB it may use" in str(stopped.value) and "--max-memory" in str(stopped.value)


@pytest.mark.parametrize("args,message", [
    (["--max-events", "lots"], "error: --max-events: must be a positive number (e.g. 5e9) or inf; got 'lots'"),
    (["--max-events", "-1"], "error: --max-events: must be a positive number"),
    (["--max-memory", "8 parsecs"], "error: --max-memory: must be a positive size (e.g. 8GB) or inf"),
    (["--max-memory", "0B"], "error: --max-memory: must be a positive size"),
])
def test_bad_limits_are_one_line(tmp_path, args, message):
    path = _write(tmp_path, BASE)
    line = _one_line_exit_2(CliRunner().invoke(cli, ["run", str(path), "--out", str(tmp_path / "o"), *args]))
    assert line.startswith(message), line
    assert not (tmp_path / "o").exists()


def test_raised_limits_let_validate_pass_what_the_default_refuses(tmp_path):
    pytest.importorskip("ccsim._core")
    path = _write(tmp_path, BOMBS["cbr_1000gbit"][0])
    _one_line_exit_2(CliRunner().invoke(cli, ["validate", str(path)]))
    assert CliRunner().invoke(cli, ["validate", str(path), "--max-events", "2e9"]).exit_code == 0
    assert CliRunner().invoke(cli, ["validate", str(path), "--max-events", "inf"]).exit_code == 0
    line = _one_line_exit_2(CliRunner().invoke(cli, ["validate", str(_write(tmp_path, BOMBS["web_arrivals_1e9"][0], "w.toml")),
                                                     "--max-events", "inf", "--max-memory", "1GB"]))
    assert "above the limit of 1.0 GiB of memory" in line or "above the limit of 954 MiB of memory" in line, line


def test_each_sweep_worker_meters_its_share_of_the_free_memory(monkeypatch):
    """With --jobs N the workers run at once on one machine: each may count on 1/N of the free memory
    (its budget is the smaller limit when the machine has plenty)."""
    from ccsim import budget as budget_module
    from ccsim.sweep import execution

    monkeypatch.setattr(budget_module, "free_memory_bytes", lambda: 10e9)
    assert budget_module.memory_limit(None) == 8e9
    assert budget_module.memory_limit(None, share=0.25) == 2e9
    assert budget_module.memory_limit(Budget(max_memory_bytes=1e9), share=0.25) == 1e9
    assert budget_module.memory_limit(Budget(max_memory_bytes=math.inf)) == 8e9
    seen = {}

    def fake_simulate(scenario, text, seed, budget, memory_share, **others):  # others: provenance
        seen.update(budget=budget, memory_share=memory_share)
        raise ResourceError("out of memory: stop here")

    monkeypatch.setattr(execution, "simulate", fake_simulate)
    with pytest.raises(ResourceError):
        execution.execute_run("p0", BASE, 1, Budget(max_events=5.0), 0.5)
    assert seen == {"budget": Budget(max_events=5.0), "memory_share": 0.5}


def test_a_sweep_worker_is_stopped_at_the_plans_event_ceiling(tmp_path):
    pytest.importorskip("ccsim._core")
    base = _write(tmp_path, BOMBS["cbr_1000gbit"][0], "base.toml")
    plan = _write(tmp_path, f'[sweep]\nbase = "{base.name}"\nrepetitions = 2\n', "p.toml")
    result = CliRunner().invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "sw"), "--jobs", "2",
                                      "--ignore-budget", "--max-events", "1e6"])
    line = _one_line_exit_2(result)
    assert "failed" in line and "flows[1].rate: the run reached its limit of 1000000 events" in line, line


def test_the_engine_meters_memory_against_the_limit_it_is_given():
    core = pytest.importorskip("ccsim._core")
    scenario = ccsim.Scenario.from_toml_str(BASE.replace('"10s"', '"10s"\nsample_interval = "1ms"'))
    sim = core.Simulation(__import__("json").dumps(scenario.resolve()), 1)
    sim.set_memory_limit(1e6, 48.0)  # 1 MB: a few hundred samples
    with pytest.raises(ResourceError, match="more than the 1 MB it may use") as stopped:
        sim.run_until(scenario.run.duration_ns)
    assert isinstance(stopped.value, MemoryError) and isinstance(stopped.value, CcsimError)
    assert 0 < sim.now_ns < scenario.run.duration_ns
    with pytest.raises(ResourceError):  # the run stays ended
        sim.run_until(scenario.run.duration_ns)


def test_no_memory_limit_is_no_meter():
    core = pytest.importorskip("ccsim._core")
    scenario = ccsim.Scenario.from_toml_str(BASE.replace('"10s"', '"1s"'))
    sim = core.Simulation(__import__("json").dumps(scenario.resolve()), 1)
    sim.set_memory_limit(None, 48.0)
    assert sim.finish()["stats"]["events"] > 0


# --- panics, threads, argument types ---------------------------------------------------------------


def test_an_engine_panic_is_an_engine_error_with_nothing_on_stderr(capfd):
    core = pytest.importorskip("ccsim._core")
    with pytest.raises(EngineError, match=r"internal error in the engine .*: boom \(at crates/ccsim-py/src/lib.rs:\d+\)"):
        core._panic_for_tests("boom")
    assert capfd.readouterr().err == ""
    assert issubclass(EngineError, CcsimError)


def test_a_simulation_may_run_in_another_thread_but_not_in_two_at_once():
    core = pytest.importorskip("ccsim._core")
    scenario = ccsim.Scenario.from_toml_str(BASE.replace('"10s"', '"100s"').replace('"10Mbit"', '"1Gbit"'))
    sim = core.Simulation(__import__("json").dumps(scenario.resolve()), 1)
    errors: list[BaseException] = []
    entered = threading.Event()

    def run() -> None:
        entered.set()
        try:
            sim.run_until(scenario.run.duration_ns)
        except BaseException as e:  # noqa: BLE001 - the test reports whatever happened
            errors.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    entered.wait()
    busy = None
    while worker.is_alive() and busy is None:
        try:
            sim.now_ns
        except CcsimError as e:
            busy = e
        time.sleep(0.001)
    worker.join()
    assert errors == []
    assert sim.now_ns == scenario.run.duration_ns  # the run in the other thread completed
    if busy is not None:  # the run may finish before the main thread gets a look in
        assert "being run by another thread" in str(busy)


def test_run_takes_paths_and_scenarios_and_run_toml_takes_text(tmp_path, monkeypatch):
    pytest.importorskip("ccsim._core")
    monkeypatch.chdir(tmp_path)
    text = BASE.replace('"10s"', '"1s"')
    Path("loss=0.01.toml").write_text(text)
    assert ccsim.run("loss=0.01.toml").meta["seed"] == 1  # a file whose name holds "=" is a file
    assert ccsim.run_toml(text).summary.shape[0] == 1
    with pytest.raises(ScenarioError, match="no such file"):
        ccsim.run("duration=1")
    for bad in (123, None, b"x.toml"):
        with pytest.raises(ArgumentError) as wrong:
            ccsim.run(bad)
        assert isinstance(wrong.value, TypeError)
    with pytest.raises(ArgumentError):
        ccsim.run_toml(Path("loss=0.01.toml"))
    with pytest.raises(ArgumentError):
        ccsim.run("loss=0.01.toml", budget="lots")


def test_deeply_nested_toml_text_is_a_scenario_error():
    deep = "a = " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(ScenarioError, match="nested too deeply"):
        ccsim.Scenario.from_toml_str(deep)
    with pytest.raises(ScenarioError, match="nested too deeply"):
        ccsim.load_scenario(deep)
    with pytest.raises(ScenarioError, match="nested too deeply"):
        ccsim.run_toml(deep)


# --- operating-system errors: one line, exit 2 ----------------------------------------------------


def test_a_full_disk_while_saving_a_run_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    pytest.importorskip("ccsim._core")
    from ccsim.result import Result

    def full(self, directory, plots):
        (directory / "meta.json").write_text("{")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Result, "_write", full)
    path = _write(tmp_path, BASE.replace('"10s"', '"1s"'))
    line = _one_line_exit_2(CliRunner().invoke(cli, ["run", str(path), "--out", str(tmp_path / "o"), "--no-plots"]))
    assert line == f"error: {tmp_path / 'o'}: cannot write the run directory (No space left on device)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]  # no staging directory left


def test_an_output_path_through_a_file_is_one_line(tmp_path):
    pytest.importorskip("ccsim._core")
    (tmp_path / "afile").write_text("x")
    path = _write(tmp_path, BASE.replace('"10s"', '"1s"'))
    line = _one_line_exit_2(CliRunner().invoke(cli, ["run", str(path), "--out", str(tmp_path / "afile" / "o")]))
    assert "cannot create the output directory (a file is in the way, not a directory)" in line


def test_os_errors_are_one_line_with_the_file_and_the_reason():
    assert os_error_text(PermissionError(errno.EACCES, "Permission denied", "/srv/x")) == "/srv/x: Permission denied"
    assert os_error_text(OSError(errno.ENOSPC, "No space left on device")) == "No space left on device"
    assert os_error_text(OSError(errno.EXDEV, "Invalid cross-device link", "a", None, "b")) == "a -> b: Invalid cross-device link"


def test_format_bytes():
    assert format_bytes(DEFAULT_BUDGET.max_memory_bytes) == "4.0 GiB"
    assert format_bytes(812) == "812 B" and format_bytes(3 * 2**40) == "3.0 TiB" and format_bytes(float("inf")) == "unbounded"


def _room_under_address_space_limit(limit_bytes: int) -> float:
    """``free_memory_bytes()`` in a fresh interpreter under ``ulimit -v`` (RLIMIT_AS) of ``limit_bytes``,
    after the engine is loaded (its allocator reserves its arena then)."""
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (%d, resource.RLIM_INFINITY)); "
            "import ccsim._core, ccsim.budget as b; print(b.free_memory_bytes())" % limit_bytes)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout)


def test_the_room_under_ulimit_v_grows_with_the_limit():
    """The room under an address-space limit was the limit minus the address space in use, which
    includes the 1 GiB the engine's allocator reserves (when the limit allows it) and its runs then
    fill: 2 GiB left 587 MB, 1 GiB 506 MB, so ordinary runs were refused. It is the limit minus the
    resident memory now."""
    pytest.importorskip("ccsim._core")
    from ccsim import budget as budget_module

    if (budget_module.free_memory_bytes() or 0) < 4 * 2**30:
        pytest.skip("the machine's free memory, not the address-space limit, would set the room")
    one, two, three = (_room_under_address_space_limit(n * 2**30) for n in (1, 2, 3))
    assert one < two < three
    assert two > 1.5 * 2**30 and three - two > 0.9 * 2**30, (one, two, three)
