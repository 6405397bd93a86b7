"""Hostile and extreme input (docs/safety.md): --force, the writer lock, orphaned workers, terminal
escapes, unbounded reads, one-line errors."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim.cli import cli
from ccsim.files import MAX_TEXT_BYTES, read_text_limited
from ccsim.errors import OutputExistsError
from ccsim.outdir import LOCK_FILE, MARKER_FILE, owned_files, writer_lock
from ccsim.text import safe_for_terminal

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SHORT = """\
[run]
duration = "2s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"

[[flows]]
algorithm = "newreno"
"""

PLAN = """\
[sweep]
base = "base.toml"
repetitions = 2
seed = 1

[grid]
"topology.loss" = [0.0, 0.01]
"""


def _one_line_exit_2(result) -> str:
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def _scenario(tmp_path: Path, text: str = SHORT, name: str = "short.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- 1. --force replaces only what ccsim wrote ------------------------------------------------------


def test_force_refuses_a_directory_that_merely_holds_a_meta_json(tmp_path):
    thesis = tmp_path / "thesis"
    (thesis / "src").mkdir(parents=True)
    (thesis / "meta.json").write_text("{}")
    (thesis / "thesis.tex").write_text("\\chapter{one}")
    (thesis / "src" / "main.c").write_text("int main;")
    result = CliRunner().invoke(cli, ["run", str(_scenario(tmp_path)), "--out", str(thesis), "--force", "--no-plots"])
    line = _one_line_exit_2(result)
    assert "not a ccsim run directory" in line and MARKER_FILE in line
    assert sorted(str(p.relative_to(thesis)) for p in thesis.rglob("*")) == ["meta.json", "src", "src/main.c", "thesis.tex"]


def test_force_keeps_files_the_user_added_to_a_run_directory(tmp_path):
    pytest.importorskip("ccsim._core")
    scenario = _scenario(tmp_path)
    out = tmp_path / "run"
    first = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out), "--no-plots", "--seed", "1"])
    assert first.exit_code == 0, first.output
    assert "meta.json" in owned_files(out) and "flows.parquet" in owned_files(out)
    (out / "notes.md").write_text("my analysis")
    (out / "extra").mkdir()
    (out / "extra" / "fig.svg").write_text("<svg/>")
    forced = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out), "--force", "--seed", "2"])
    assert forced.exit_code == 0, forced.output
    assert (out / "notes.md").read_text() == "my analysis"
    assert (out / "extra" / "fig.svg").read_text() == "<svg/>"
    assert '"seed": 2' in (out / "meta.json").read_text()
    assert "cwnd.png" in owned_files(out) and "notes.md" not in owned_files(out)


def test_force_on_the_current_directory_is_one_line(tmp_path, monkeypatch):
    scenario = _scenario(tmp_path)
    (tmp_path / "keep.txt").write_text("x")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["run", str(scenario), "--out", ".", "--force", "--no-plots"])
    _one_line_exit_2(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "short.toml"]


def test_a_hostile_marker_cannot_name_files_outside_the_directory(tmp_path):
    pytest.importorskip("ccsim._core")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "run"
    out.mkdir()
    (out / MARKER_FILE).write_text(f"# ccsim\n../victim.txt\n{victim}\nmeta.json\n")
    (out / "meta.json").write_text("{}")
    result = CliRunner().invoke(cli, ["run", str(_scenario(tmp_path)), "--out", str(out), "--force", "--no-plots"])
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "precious"


def test_sweep_force_keeps_user_files(tmp_path):
    pytest.importorskip("ccsim._core")
    _scenario(tmp_path, name="base.toml")
    plan = _scenario(tmp_path, PLAN, "plan.toml")
    out = tmp_path / "sweep"
    runner = CliRunner()
    assert runner.invoke(cli, ["sweep", str(plan), "--out", str(out), "--jobs", "1"]).exit_code == 0
    assert sum(name.startswith("parts/") for name in owned_files(out)) == 4
    (out / "parts" / "mine.txt").write_text("user")
    (out / "analysis.ipynb").write_text("{}")
    forced = runner.invoke(cli, ["sweep", str(plan), "--out", str(out), "--jobs", "1", "--force"])
    assert forced.exit_code == 0, forced.output
    assert "4 runs executed" in forced.output
    assert (out / "parts" / "mine.txt").read_text() == "user" and (out / "analysis.ipynb").exists()


# --- 2. one writer per directory ---------------------------------------------------------------------


@contextmanager
def _locked_elsewhere(directory: Path):
    """The lock as another ccsim process holds it (a flock on its own open file of .ccsim-lock)."""
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        os.close(fd)


def test_writer_lock_is_reentrant_in_one_process_only(tmp_path):
    with writer_lock(tmp_path):
        with writer_lock(tmp_path):  # reproduce holds it around the sweep, which takes it again
            pass
        with pytest.raises(BlockingIOError):  # another process cannot take it meanwhile
            with _locked_elsewhere(tmp_path):
                pass
    with _locked_elsewhere(tmp_path):
        with pytest.raises(OutputExistsError, match="another ccsim process"):
            with writer_lock(tmp_path):
                pass


def test_reproduce_into_a_locked_directory_is_refused(tmp_path):
    pytest.importorskip("ccsim._core")
    out = tmp_path / "chd"
    out.mkdir()
    with _locked_elsewhere(out):
        result = CliRunner().invoke(cli, ["reproduce", "chd_loss_sweep", "--quick", "--out", str(out), "--jobs", "1"])
        assert "another ccsim process is writing" in _one_line_exit_2(result)
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]


def test_a_second_writer_is_refused(tmp_path):
    pytest.importorskip("ccsim._core")
    _scenario(tmp_path, name="base.toml")
    plan = _scenario(tmp_path, PLAN, "plan.toml")
    out = tmp_path / "sweep"
    out.mkdir()
    with _locked_elsewhere(out):
        result = CliRunner().invoke(cli, ["sweep", str(plan), "--out", str(out), "--resume", "--jobs", "1"])
        assert "another ccsim process is writing" in _one_line_exit_2(result)
    assert not (out / "parts").exists()


def test_resume_with_a_different_plan_is_refused(tmp_path):
    pytest.importorskip("ccsim._core")
    _scenario(tmp_path, name="base.toml")
    plan = _scenario(tmp_path, PLAN, "plan.toml")
    other = _scenario(tmp_path, PLAN.replace("seed = 1", "seed = 2"), "other.toml")
    out = tmp_path / "sweep"
    runner = CliRunner()
    assert runner.invoke(cli, ["sweep", str(plan), "--out", str(out), "--jobs", "1"]).exit_code == 0
    before = {p.name: p.read_bytes() for p in (out / "parts").iterdir()}
    result = runner.invoke(cli, ["sweep", str(other), "--out", str(out), "--resume", "--jobs", "1"])
    assert "different sweep plan" in _one_line_exit_2(result)
    assert {p.name: p.read_bytes() for p in (out / "parts").iterdir()} == before
    again = runner.invoke(cli, ["sweep", str(plan), "--out", str(out), "--resume", "--jobs", "1"])
    assert again.exit_code == 0 and "0 runs executed" in again.output


# --- 3. workers die with the sweep -----------------------------------------------------------------


def _session_processes(sid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == sid:  # state, ppid, pgrp, session
            pids.append(int(entry))
    return pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
@pytest.mark.parametrize("jobs", [2, 3])
def test_sigkill_of_a_sweep_leaves_no_worker_behind(tmp_path, jobs):
    pytest.importorskip("ccsim._core")
    _scenario(tmp_path, SHORT.replace('"2s"', '"600s"'), "base.toml")
    plan = _scenario(tmp_path, PLAN, "plan.toml")
    ccsim = Path(sys.executable).parent / "ccsim"
    proc = subprocess.Popen(
        [str(ccsim), "sweep", str(plan), "--out", str(tmp_path / "out"), "--jobs", str(jobs)],
        start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600  # a hang guard: the loop ends when the condition holds
        # the sweep process (it takes runs too) and jobs - 1 forked workers
        while len(_session_processes(proc.pid)) < jobs:
            assert proc.poll() is None and time.monotonic() < deadline, _session_processes(proc.pid)
            time.sleep(0.1)
        time.sleep(0.5)  # the workers are past their initializer and simulating
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 300  # a hang guard, not a bound: the loop ends when they are gone
        while _session_processes(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session_processes(proc.pid) == []
    finally:
        for pid in _session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)


# --- 4. terminal escapes -----------------------------------------------------------------------------


def test_safe_for_terminal_escapes_control_characters_and_limits_length():
    assert safe_for_terminal("a\x1b]0;pwned\x07b\x00c") == "a\\x1b]0;pwned\\x07b\\x00c"
    assert safe_for_terminal("x\u202ey\nz\t") == "x\\u202ey\\x0az\\x09"
    assert safe_for_terminal("plain name é") == "plain name é"
    assert safe_for_terminal("x" * 500, limit=10) == "x" * 10 + "..."


def test_run_summary_shows_hostile_flow_names_escaped(tmp_path):
    pytest.importorskip("ccsim._core")
    scenario = _scenario(tmp_path, SHORT + 'name = "evil\\u001b[2J\\u0007[bold]x"\n')
    result = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(tmp_path / "o"), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "evil\\x1b[2J\\x07[bol" in result.stdout  # the table cuts the rest at 80 columns


def test_error_messages_escape_echoed_values(tmp_path):
    scenario = _scenario(tmp_path, SHORT.replace('"newreno"', '"reno\\u001b[31m"'))
    result = CliRunner().invoke(cli, ["validate", str(scenario)])
    line = _one_line_exit_2(result)
    assert "\x1b" not in result.stderr and "\\x1b[31m" in line


# --- 5. bounded reads and plan paths --------------------------------------------------------------


def _counted_invoke(args, monkeypatch):
    """The command's result and the bytes it read with ``os.read`` (what ccsim's bounded reader uses):
    work counted, not timed, so a loaded machine cannot fail the check."""
    real, read = os.read, [0]

    def counting(fd, n):
        data = real(fd, n)
        read[0] += len(data)
        return data

    monkeypatch.setattr(os, "read", counting)
    try:
        result = CliRunner().invoke(cli, args)
    finally:
        monkeypatch.setattr(os, "read", real)
    return result, read[0]


@pytest.mark.parametrize("kind", ["dev_zero", "sparse", "fifo", "directory"])
def test_validate_refuses_what_is_not_a_small_regular_file(tmp_path, kind, monkeypatch):
    if kind == "dev_zero":
        path = Path("/dev/zero")
    elif kind == "sparse":
        path = tmp_path / "huge.toml"
        with open(path, "wb") as f:
            f.truncate(1 << 30)
    elif kind == "fifo":
        path = tmp_path / "pipe.toml"
        os.mkfifo(path)
    else:
        path = tmp_path / "dir.toml"
        path.mkdir()
        with pytest.raises(Exception, match="is a directory"):  # click refuses it before ccsim reads
            read_text_limited(path)
        path = tmp_path / "plan.toml"  # ... but a plan may name a directory as its base
        path.write_text(PLAN.replace('"base.toml"', '"dir.toml"'))
    result, bytes_read = _counted_invoke(["validate" if kind != "directory" else "sweep", str(path),
                                          *(["--out", str(tmp_path / "o")] if kind == "directory" else [])], monkeypatch)
    line = _one_line_exit_2(result)
    assert (str(path) if kind != "directory" else "dir.toml: cannot read: is a directory") in line
    assert bytes_read < 64 * 1024, bytes_read  # refused by its type or size, never read (a plan is a few hundred bytes)
    assert ("too large" in line) == (kind == "sparse")


def test_read_text_limited_stops_at_the_limit(tmp_path):
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * (MAX_TEXT_BYTES + 1))
    with pytest.raises(Exception, match="too large"):
        read_text_limited(path)
    path.write_bytes(b"a = 1\n")
    assert read_text_limited(path) == "a = 1\n"


@pytest.mark.parametrize("base", ["/etc/passwd", "../../x.toml"])
def test_plan_base_outside_the_plan_directory_is_refused(tmp_path, base, monkeypatch):
    plans = tmp_path / "a" / "b"
    plans.mkdir(parents=True)
    (tmp_path / "x.toml").write_text(SHORT)
    plan = _scenario(plans, PLAN.replace('"base.toml"', f'"{base}"'), "plan.toml")
    result, bytes_read = _counted_invoke(["sweep", str(plan), "--out", str(tmp_path / "out")], monkeypatch)
    line = _one_line_exit_2(result)
    assert "sweep.base" in line and "outside the plan's directory" in line and "--allow-outside-paths" in line
    assert bytes_read == len(plan.read_bytes()) and not (tmp_path / "out").exists()  # the plan only, not the base


def test_allow_outside_paths_permits_a_base_elsewhere(tmp_path):
    pytest.importorskip("ccsim._core")
    plans = tmp_path / "plans"
    plans.mkdir()
    (tmp_path / "x.toml").write_text(SHORT)
    plan = _scenario(plans, PLAN.replace('"base.toml"', '"../x.toml"').replace("[0.0, 0.01]", "[0.0]").replace("repetitions = 2", "repetitions = 1"), "plan.toml")
    result = CliRunner().invoke(cli, ["sweep", str(plan), "--out", str(tmp_path / "out"), "--allow-outside-paths", "--jobs", "1"])
    assert result.exit_code == 0, result.output


def test_part_files_of_plans_differing_only_in_seed_do_not_collide(tmp_path):
    from ccsim.sweep import SweepPlan
    from ccsim.sweep.store import part_path

    _scenario(tmp_path, name="base.toml")
    a = SweepPlan.from_toml(_scenario(tmp_path, PLAN, "a.toml"))
    b = SweepPlan.from_toml(_scenario(tmp_path, PLAN.replace("seed = 1", "seed = 2"), "b.toml"))
    assert [r.run_id for r in a.runs()] == [r.run_id for r in b.runs()]  # the run ids name point and repetition
    names_a = {part_path(tmp_path, r).name for r in a.runs()}
    names_b = {part_path(tmp_path, r).name for r in b.runs()}
    assert len(names_a) == 4 and not names_a & names_b


def test_run_force_into_a_directory_being_written_is_refused(tmp_path):
    pytest.importorskip("ccsim._core")
    scenario = _scenario(tmp_path)
    out = tmp_path / "run"
    assert CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out), "--no-plots"]).exit_code == 0
    before = (out / "meta.json").read_bytes()
    with _locked_elsewhere(out):
        result = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out), "--no-plots", "--force", "--seed", "9"])
        assert "locked" in _one_line_exit_2(result)
    assert (out / "meta.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "short.toml"]  # no staging left


def test_report_and_plot_are_recorded_once_in_the_marker(tmp_path):
    pytest.importorskip("ccsim._core")
    out = tmp_path / "run"
    assert CliRunner().invoke(cli, ["run", str(_scenario(tmp_path)), "--out", str(out), "--no-plots"]).exit_code == 0
    for _ in range(2):
        assert CliRunner().invoke(cli, ["report", str(out)]).exit_code == 0
        assert CliRunner().invoke(cli, ["plot", str(out)]).exit_code == 0
    listed = [line for line in (out / MARKER_FILE).read_text().splitlines() if not line.startswith("#")]
    assert listed.count("report.html") == 1 and listed.count("cwnd.png") == 1
    assert sorted(listed) == sorted(p.name for p in out.iterdir() if not p.name.startswith("."))


# --- the must-show: refused reads stay small ----------------------------------------------


def _child_peak_kb(args: list[str], cwd: Path) -> tuple[int, str, int]:
    """(exit status, stderr, peak RSS in kB) of ``ccsim ARGS`` run by a fresh parent (so the peak is
    this command's, not the largest child this test process ever had)."""
    ccsim = Path(sys.executable).parent / "ccsim"
    code = (
        "import resource, subprocess, sys; "
        f"done = subprocess.run({[str(ccsim), *args]!r}, capture_output=True, text=True, cwd={str(cwd)!r}); "
        "sys.stderr.write(done.stderr); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    status, peak = done.stdout.split()
    return int(status), done.stderr, int(peak)


@pytest.mark.parametrize("what", ["dev_zero", "1gb_file", "base_etc_passwd", "base_parent"])
def test_refused_reads_are_one_line_under_200_mb(tmp_path, what):
    plans = tmp_path / "a" / "b"
    plans.mkdir(parents=True)
    if what == "dev_zero":
        args = ["validate", "/dev/zero"]
    elif what == "1gb_file":
        with open(tmp_path / "big.toml", "wb") as f:
            f.truncate(1 << 30)
        args = ["validate", str(tmp_path / "big.toml")]
    else:
        base = "/etc/passwd" if what == "base_etc_passwd" else "../../x.toml"
        (tmp_path / "x.toml").write_text(SHORT)
        (plans / "plan.toml").write_text(PLAN.replace('"base.toml"', f'"{base}"'))
        args = ["sweep", str(plans / "plan.toml"), "--out", str(tmp_path / "o")]
    status, stderr, peak_kb = _child_peak_kb(args, tmp_path)
    lines = stderr.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert peak_kb < 200 * 1024, peak_kb


# --- two sweeps resuming one directory at once ------------------------------------------------------


def test_two_concurrent_resumes_of_one_directory_the_second_is_refused(tmp_path):
    pytest.importorskip("ccsim._core")
    _scenario(tmp_path, SHORT.replace('"2s"', '"120s"').replace('"10Mbit"', '"1Gbit"'), "base.toml")  # seconds a run
    # Many runs, so that the first sweep is still writing while three more ccsim processes start on a
    # loaded machine (it is killed at the end; with 4 runs it once finished first and the test raced).
    long_plan = PLAN.replace("repetitions = 2", "repetitions = 100")
    plan = _scenario(tmp_path, long_plan, "plan.toml")
    other = _scenario(tmp_path, long_plan.replace("seed = 1", "seed = 7"), "other.toml")
    out = tmp_path / "out"
    ccsim = Path(sys.executable).parent / "ccsim"
    first_log = open(tmp_path / "first.stderr", "w+")  # what the first sweep said, should it end early
    first = subprocess.Popen([str(ccsim), "sweep", str(plan), "--out", str(out), "--jobs", "1"],
                             stdout=subprocess.DEVNULL, stderr=first_log, start_new_session=True)
    try:
        deadline = time.monotonic() + 600  # a hang guard: the loop ends when the condition holds
        while not (out / "sweep.json").exists():  # written under the lock, before the first run
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        locked = f"error: {out}: another ccsim process is writing into it (locked); wait for it to finish"
        for args in ([str(other), "--resume"], [str(plan), "--resume"], [str(plan), "--force"]):
            second = subprocess.run([str(ccsim), "sweep", *args, "--out", str(out), "--jobs", "1"],
                                    capture_output=True, text=True, timeout=60)
            lines = second.stderr.strip().splitlines()
            assert second.returncode == 2 and len(lines) == 1, (second.stderr, first.poll(), (tmp_path / "first.stderr").read_text())
            # the other plan may be refused for being another plan before the lock is even tried
            assert lines[0] == locked or (args[0] == str(other) and "different sweep plan" in lines[0]), lines
        assert first.poll() is None  # the first sweep goes on undisturbed
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        first_log.close()
