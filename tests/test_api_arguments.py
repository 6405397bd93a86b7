"""Every public entry point given an argument of the wrong type or an impossible value raises a named
ccsim exception with one line naming the argument, never a bare TypeError / AttributeError /
ValueError from pathlib, tomllib or os (docs/safety.md, "Bad input")."""

from __future__ import annotations

import functools
import math
import pathlib

import pytest
from click.testing import CliRunner

import ccsim
from ccsim.budget import Budget
from ccsim.cli import cli
from ccsim.errors import ArgumentError, CcsimError
from ccsim.sweep import SweepPlan, load_sweep, run_sweep

SHORT = """\
[run]
duration = "1s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"

[[flows]]
algorithm = "newreno"
"""
PLAN = "[sweep]\nrepetitions = 1\n[base]\n" + SHORT.replace("[run]", "[base.run]").replace("[topology]", "[base.topology]") \
    .replace("[[flows]]", "[[base.flows]]")


@functools.cache
def _result() -> ccsim.Result:
    return ccsim.run_toml(SHORT)


def _scenario() -> ccsim.Scenario:
    return ccsim.Scenario.from_toml_str(SHORT)


# (call as written, the argument its message must name, the call)
CALLS = [
    ("Scenario.from_toml_str(None)", "text", lambda tmp: ccsim.Scenario.from_toml_str(None)),
    ("Scenario.from_toml_str(b'x')", "text", lambda tmp: ccsim.Scenario.from_toml_str(b"x = 1")),
    ("Scenario.from_toml_str(text, source=1)", "source", lambda tmp: ccsim.Scenario.from_toml_str(SHORT, source=1)),
    ("Scenario.from_toml(None)", "path", lambda tmp: ccsim.Scenario.from_toml(None)),
    ("Scenario.from_toml('a\\0b')", "path", lambda tmp: ccsim.Scenario.from_toml("a\0b.toml")),
    ("load_scenario('a\\0b')", "path", lambda tmp: ccsim.load_scenario("a\0b.toml")),
    ("run('a\\0b')", "scenario", lambda tmp: ccsim.run("a\0b.toml")),
    ("scenario.model_copy(update=1)", "update", lambda tmp: _scenario().model_copy(update=1)),
    ("Result.load(123)", "directory", lambda tmp: ccsim.Result.load(123)),
    ("Result.load(b'dir')", "directory", lambda tmp: ccsim.Result.load(b"dir")),
    ("Result.load('a\\0b')", "directory", lambda tmp: ccsim.Result.load("a\0b")),
    ("result.save(None)", "directory", lambda tmp: _result().save(None)),
    ("result.save('a\\0b')", "directory", lambda tmp: _result().save(str(tmp / "a\0b"))),
    ("result.table('nope')", "name", lambda tmp: _result().table("nope")),
    ("result.table([])", "name", lambda tmp: _result().table([])),
    ("Budget(max_events='1e9')", "max_events", lambda tmp: Budget(max_events="1e9")),
    ("Budget(max_events=math.nan)", "max_events", lambda tmp: Budget(max_events=math.nan)),
    ("Budget(max_events=-1)", "max_events", lambda tmp: Budget(max_events=-1)),
    ("Budget(max_memory_bytes=None)", "max_memory_bytes", lambda tmp: Budget(max_memory_bytes=None)),
    ("Budget(max_memory_bytes=math.nan)", "max_memory_bytes", lambda tmp: Budget(max_memory_bytes=math.nan)),
    ("Budget(max_sweep_runs='10')", "max_sweep_runs", lambda tmp: Budget(max_sweep_runs="10")),
    ("Budget(max_sweep_runs=math.nan)", "max_sweep_runs", lambda tmp: Budget(max_sweep_runs=math.nan)),
    ("Budget(refuse_up_front='no')", "refuse_up_front", lambda tmp: Budget(refuse_up_front="no")),
    ("SweepPlan.from_toml(None)", "path", lambda tmp: SweepPlan.from_toml(None)),
    ("SweepPlan.from_toml('a\\0b')", "path", lambda tmp: SweepPlan.from_toml("a\0b.toml")),
    ("SweepPlan.from_toml_str(None)", "text", lambda tmp: SweepPlan.from_toml_str(None)),
    ("SweepPlan.from_toml_str(plan, source=1)", "source", lambda tmp: SweepPlan.from_toml_str(PLAN, source=1)),
    ("SweepPlan.from_toml_str(plan, base_dir=1)", "base_dir", lambda tmp: SweepPlan.from_toml_str(PLAN, base_dir=1)),
    ("SweepPlan.from_toml_str(plan, base_dir='a\\0b')", "base_dir", lambda tmp: SweepPlan.from_toml_str(PLAN, base_dir="a\0b")),
    ("SweepPlan.from_toml_str(plan, budget=1)", "budget", lambda tmp: SweepPlan.from_toml_str(PLAN, budget=1)),
    ("run_sweep(None, out)", "plan", lambda tmp: run_sweep(None, tmp / "out", progress=False)),
    ("run_sweep(plan, None)", "out_dir", lambda tmp: run_sweep(SweepPlan.from_toml_str(PLAN), None, progress=False)),
    ("run_sweep(plan, 'a\\0b')", "out_dir", lambda tmp: run_sweep(SweepPlan.from_toml_str(PLAN), "a\0b", progress=False)),
    ("load_sweep(None)", "directory", lambda tmp: load_sweep(None)),
    ("load_sweep('a\\0b')", "directory", lambda tmp: load_sweep("a\0b")),
]


@pytest.mark.parametrize("call", CALLS, ids=[c[0] for c in CALLS])
def test_wrong_argument_is_a_named_one_line_error(call, tmp_path: pathlib.Path) -> None:
    _, argument, function = call
    with pytest.raises(CcsimError) as info:
        function(tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{argument}: "), message
    assert not list(tmp_path.iterdir())  # nothing written


def test_argument_error_is_both_type_and_value_error() -> None:
    """Code written against the built-ins (``except TypeError`` / ``except ValueError``) still catches it."""
    assert issubclass(ArgumentError, TypeError) and issubclass(ArgumentError, ValueError)


def test_nan_event_budget_is_refused_not_unlimited() -> None:
    """NaN compares False with every estimate: accepted, it would have lifted the limit silently."""
    with pytest.raises(ArgumentError, match="max_events"):
        Budget(max_events=math.nan)
    assert Budget(max_events=math.inf).max_events == math.inf  # inf stays the documented way to lift it


def test_nul_byte_in_plan_base_path_is_one_line_exit_2(tmp_path: pathlib.Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[sweep]\nbase = "a\\u0000b.toml"\n[grid]\n"run.seed" = [1, 2]\n')
    outcome = CliRunner().invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "out")])
    assert outcome.exit_code == 2, outcome.output
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
    assert outcome.output.strip().splitlines() == ["error: sweep.base: not a file name: it contains a NUL byte"]
    assert not (tmp_path / "out").exists()
