"""The ``ccsim`` command: run, plot, validate, list.

Every user error (a :class:`CcsimError`: bad scenario, existing output, engine validation) is shown as
one line ``error: field: reason`` on stderr with exit status 2, the status click uses for usage
errors; nothing is written before the scenario has been validated, so a failed command leaves no
output directory behind.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import numbers
import re
import shutil
import textwrap
from dataclasses import replace
import tomllib
import sys
from pathlib import Path
from typing import Any, Callable

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ccsim._version import __version__
from ccsim.budget import DEFAULT_BUDGET, Budget, Estimate, check, estimate_simulation, format_bytes
from ccsim.engine import algorithms, build_simulation, known_algorithms
from ccsim.errors import ArgumentError, CcsimError, ResourceError
from ccsim.scenario import Scenario, read_scenario_text
from ccsim.lean_imports import import_pyarrow_without_numpy
from ccsim.outdir import check_output_dir, is_owned, record_files
from ccsim.precision import fmt_percentile
from ccsim import reproduction_pages
from ccsim.text import safe_for_terminal
from ccsim.units import format_time, parse_size

log = logging.getLogger("ccsim.cli")

__all__ = ["cli", "main"]

EXIT_USER_ERROR = 2


def _user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turns a CcsimError into ``error: ...`` on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except CcsimError as e:
            click.echo(f"error: {safe_for_terminal(e, limit=1000)}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except OSError as e:  # the file system refused (--out /proc/x, a full disk): the user's to fix
            click.echo(f"error: {safe_for_terminal(os_error_text(e), limit=1000)}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except MemoryError:  # Python's own allocations (the engine raises ResourceError)
            click.echo(f"error: {ResourceError('out of memory: the machine cannot hold what this command needs')}", err=True)
            sys.exit(EXIT_USER_ERROR)

    return wrapper


def os_error_text(e: OSError) -> str:
    """An OSError as one line: the file(s), then the reason (``permission denied``, ``no space left on
    device``, ``not a directory``), never a traceback."""
    where = [str(f) for f in (e.filename, getattr(e, "filename2", None)) if f]
    reason = e.strerror or str(e) or e.__class__.__name__
    return f"{' -> '.join(where)}: {reason}" if where else reason


def _budget(ignore_budget: bool, max_events: str | None = None, max_memory: str | None = None) -> Budget:
    """The budget the command line asks for: the default, with --max-events / --max-memory in place of
    its limits (``inf`` lifts one), and with --ignore-budget not refusing up front (the engine still
    stops a run at the limits; docs/safety.md)."""
    budget = DEFAULT_BUDGET
    if max_events is not None:
        budget = replace(budget, max_events=_limit("--max-events", max_events, float))
    if max_memory is not None:
        budget = replace(budget, max_memory_bytes=_limit("--max-memory", max_memory, parse_size))
    return replace(budget, refuse_up_front=False) if ignore_budget else budget


def _limit(option: str, text: str, parse: Callable[[str], float]) -> float:
    """``inf`` (no limit), or a positive number parsed by ``parse``; else a one-line ArgumentError."""
    if text.strip().lower() in ("inf", "none", "unlimited"):
        return math.inf
    try:
        value = float(parse(text.strip()))
    except (CcsimError, ValueError):
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        example = "8GB" if option == "--max-memory" else "5e9"
        raise ArgumentError(f"{option}: must be a positive {'size' if option == '--max-memory' else 'number'} "
                            f"(e.g. {example}) or inf; got {text!r}")
    return value


def _budget_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--ignore-budget, --max-events and --max-memory (docs/safety.md)."""
    command = click.option("--max-memory", default=None, metavar="SIZE",
                           help=f"Memory a run may take (e.g. 16GB, or inf) [default: {DEFAULT_BUDGET.max_memory_bytes / 2**30:.0f} GiB, "
                                "and never more than 80 % of the free memory].")(command)
    command = click.option("--max-events", default=None, metavar="N",
                           help=f"Events a run may process (e.g. 5e9, or inf) [default: {DEFAULT_BUDGET.max_events:.0e}].")(command)
    return click.option("--ignore-budget", is_flag=True, help=IGNORE_BUDGET_HELP)(command)


IGNORE_BUDGET_HELP = ("Start even if the estimated cost (or the sweep's size) is over the budget; the run still stops "
                      "if it really reaches --max-events or --max-memory (docs/safety.md).")
# a run estimated to take longer than this (engine CPU) has its estimate printed before it starts
ANNOUNCE_AFTER_S = 10.0


def _announce(budget: Budget, cost: Estimate) -> None:
    over = cost.events > budget.max_events or cost.memory_bytes > budget.max_memory_bytes
    if over:  # --ignore-budget let it start: say where it will stop
        click.echo(f"estimate: {cost.describe()}, over the budget; the run stops if it reaches "
                   f"{cost_limits(budget)}", err=True)
    elif cost.cpu_s > ANNOUNCE_AFTER_S:
        click.echo(f"estimate: {cost.describe()}", err=True)


def cost_limits(budget: Budget) -> str:
    """``1e+09 events or 4.0 GiB of memory``."""
    return f"{budget.max_events:.0e} events or {format_bytes(budget.max_memory_bytes)} of memory"


@click.group(name="ccsim", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ccsim")
@click.option("-v", "--verbose", count=True, help="More detail on stderr (-v: steps, -vv: debug), through Python's logging.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors and the paths written: no summary table, no progress notes.")
@click.pass_context
def cli(ctx: click.Context, verbose: int = 0, quiet: bool = False) -> None:
    """ccsim: a packet-level TCP congestion-control simulator."""
    ctx.obj = {"quiet": quiet}
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr, force=True)


def _quiet() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return bool(root and isinstance(root.obj, dict) and root.obj.get("quiet"))


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None, help="Output directory [default: runs/<scenario name>].")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Random seed; overrides run.seed.")
@click.option("--force", is_flag=True, help="Replace the output directory if it holds a previous run (only the files ccsim wrote there).")
@click.option("--no-plots", is_flag=True, help="Do not write the PNG plots.")
@_budget_options
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a scenario key, e.g. --set topology.loss=1% --set flows[0].algorithm=chd (repeatable; "
                   "dotted keys as in a sweep grid, values as in the file).")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary and the per-flow and per-link summaries as one JSON document instead of the tables.")
@_user_errors
def run(scenario: Path, out: Path | None, seed: int | None, force: bool, no_plots: bool, ignore_budget: bool,
        max_events: str | None, max_memory: str | None, overrides: tuple[str, ...] = (), as_json: bool = False) -> None:
    """Simulate SCENARIO (a TOML file) and write the run directory."""
    budget = _budget(ignore_budget, max_events, max_memory)
    out = out if out is not None else Path("runs") / scenario.stem
    check_output_dir(out, force)  # before simulating: do not make the user wait to hear this
    toml_text = read_scenario_text(scenario)
    model = Scenario.from_toml_str(toml_text, source=str(scenario))
    if overrides:
        from ccsim.overrides import apply_overrides  # lazy: start-up time (tomli_w, the sweep plan's path rules)

        model, toml_text, notes = apply_overrides(toml_text, overrides, source=str(scenario))
        for note in notes:
            click.echo(safe_for_terminal(note), err=True)
    # Only plots, --json and the web transfers' summary read tables as DataFrames (pandas, numpy);
    # without them pyarrow loads without numpy and never imports pandas (ccsim.lean_imports). Only
    # in the ccsim command's own process: a caller may need NumPy from pyarrow afterwards.
    if _owns_process and no_plots and not as_json and not any(flow.kind == "web" for flow in model.flows):
        import_pyarrow_without_numpy()
    # lazy: start-up time (pyarrow, after the choice above)
    from ccsim.result import defer_pandas_in_pyarrow
    from ccsim.runner import simulate

    defer_pandas_in_pyarrow()
    result = simulate(model, toml_text, seed=seed, progress=not _quiet(), budget=budget,
                      announce=functools.partial(_announce, budget))
    log.info("simulated %s; writing %s", scenario, out)
    result.save(out, force=force, plots=not no_plots)
    if as_json:
        click.echo(json.dumps(summary_document(result, out), indent=2, allow_nan=False))
        return
    if _quiet():
        click.echo(safe_for_terminal(out))
        return
    console = Console()
    print_summary(result, console)
    console.print(f"wrote {escape(safe_for_terminal(out))}")


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["png", "pdf", "svg"], case_sensitive=False), default="png",
              show_default=True, help="File format of the figures (pdf and svg are vector graphics).")
@_user_errors
def plot(directory: Path, fmt: str) -> None:
    """(Re)write the plots of a saved run DIRECTORY."""
    # lazy: start-up time (matplotlib, pandas)
    from ccsim.plots import figure_format, write_default_plots
    from ccsim.result import Result

    with figure_format(fmt):
        written = write_default_plots(Result.load(directory), directory)
    if is_owned(directory):
        record_files(directory, [Path(p).name for p in written], skip_known=True)
    for path in written:
        click.echo(safe_for_terminal(path))


@cli.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--resolved", is_flag=True, help="Print the resolved document(s) (JSON Lines) instead of 'ok'.")
@click.option("--estimate", is_flag=True, help="Also print each scenario's estimated cost (events, engine CPU, memory).")
@_budget_options
@_user_errors
def validate(scenarios: tuple[Path, ...], resolved: bool, estimate: bool, ignore_budget: bool, max_events: str | None,
             max_memory: str | None) -> None:
    """Check each SCENARIO (or sweep plan) without running it (the engine checks it too when it is installed).

    With --resolved, print each scenario's resolved document (docs/resolved-scenario.md) as one line
    of JSON; a sweep plan gives one line per point, in point order.
    """
    budget = _budget(ignore_budget, max_events, max_memory)
    for path in scenarios:
        text = read_scenario_text(path)
        if _is_sweep_plan(text):
            _validate_plan(path, resolved, budget)
            continue
        model = Scenario.from_toml_str(text, source=str(path))
        cost = None
        if known_algorithms() is not None:  # the engine checks it too, and estimates its cost
            cost = check(estimate_simulation(build_simulation(model, model.run.seed)), model, budget)
        if resolved:
            click.echo(json.dumps(model.resolve(), separators=(",", ":")))
            continue
        n = model.flow_count
        duration = format_time(model.run.duration_ns)
        click.echo(f"ok: {n} flow{'s' if n != 1 else ''}, duration {duration}")
        if estimate and cost is not None:
            click.echo(f"estimate: {cost.describe()}")


def _is_sweep_plan(text: str) -> bool:
    """A sweep plan has a [sweep] table (docs/sweeps.md); a scenario never has one."""
    try:
        return isinstance(tomllib.loads(text).get("sweep"), dict)
    except tomllib.TOMLDecodeError:
        return False  # the scenario reader reports the syntax error with its position


def _validate_plan(path: Path, resolved: bool, budget: Budget | None) -> None:
    from ccsim.sweep.plan import SweepPlan  # lazy: start-up time (pydantic)

    plan = SweepPlan.from_toml(path, budget=budget)
    points = plan.points()
    if resolved:
        for point_id, _ in points:
            click.echo(json.dumps(plan.scenario(point_id).resolve(), separators=(",", ":")))
        return
    runs = len(points) * plan.repetitions
    click.echo(f"ok: sweep plan, {len(points)} point{'s' if len(points) != 1 else ''} x {plan.repetitions} "
               f"repetition{'s' if plan.repetitions != 1 else ''} = {runs} run{'s' if runs != 1 else ''}")


@cli.command(name="list")
@click.argument("names", nargs=-1)
@_user_errors
def list_algorithms(names: tuple[str, ...] = ()) -> None:
    """List every algorithm (or the NAMES given) and its parameters (name, unit, default, range, doc)."""
    from ccsim.scenario import algorithm_hint  # lazy: start-up time (pydantic)

    width = max(40, min(shutil.get_terminal_size().columns, 100))
    catalog = algorithms()
    known = [a["name"] for a in catalog]
    for name in names:
        if name not in known:
            hint = algorithm_hint(name, known)
            raise CcsimError(f"{safe_for_terminal(name)}: unknown algorithm{'; ' + hint if hint else ' '}(known: {', '.join(known)})")
    shown = [a for a in catalog if not names or a["name"] in names]
    for i, algo in enumerate(shown):
        if i:
            click.echo()
        click.secho(algo["name"], bold=True, nl=False)
        click.echo(f"  {algo.get('summary', '')}")
        if algo.get("reference"):
            click.echo(f"  reference: {algo['reference']}")
        params = algo.get("params", [])
        if not params:
            click.echo("  (no parameters)")
        for p in params:
            unit = f" [{p['unit']}]" if p.get("unit") else ""
            click.echo(f"  {p['name']}{unit} = {_show(p.get('default'))}   {p.get('range', '')}")
            for line in textwrap.wrap(p.get("doc", ""), width=width - 6):
                click.echo(f"      {line}")


# --- sweep (python/ccsim/sweep.py) -------------------------------------------------------------------


@cli.command()
@click.argument("plan", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Set a scenario key at every point, e.g. --set flows[0].algorithm=chd (a one-value grid entry; repeatable).")
@click.option("--dry-run", is_flag=True, help="Check the plan and list its points and runs, the seeds and the estimated cost; run and write nothing.")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None, help="Output directory of the sweep (required unless --dry-run).")
@click.option("--jobs", type=click.IntRange(1), default=None, help="Local worker processes [default: CPU count].")
@click.option("--cluster", default=None, metavar="tcp://HOST:PORT", help="Run on this Dask scheduler instead of locally.")
@click.option("--resume", is_flag=True, help="Continue an existing sweep directory: run only the missing runs.")
@click.option("--force", is_flag=True, help="Replace an existing sweep directory (only the files ccsim wrote there).")
@click.option("--allow-outside-paths", is_flag=True, help="Let the plan's base file lie outside the plan's directory.")
@_budget_options
@_user_errors
def sweep(plan: Path, out: Path | None, jobs: int | None, cluster: str | None, resume: bool, force: bool, allow_outside_paths: bool,
          ignore_budget: bool, max_events: str | None, max_memory: str | None, dry_run: bool = False,
          overrides: tuple[str, ...] = ()) -> None:
    """Run every point and repetition of the sweep PLAN (a TOML file); see docs/sweeps.md."""
    from ccsim.sweep.plan import SweepPlan  # lazy: start-up time (pydantic)

    if out is None and not dry_run:
        raise CcsimError("--out: required (the sweep's output directory), or use --dry-run to only list the runs")
    # every point is validated before anything runs or is written (and before pandas is imported)
    budget = _budget(ignore_budget, max_events, max_memory)
    if overrides:
        from ccsim.overrides import plan_with_overrides  # lazy: start-up time (tomli_w)

        model = plan_with_overrides(plan, overrides, allow_outside_paths=allow_outside_paths, budget=budget)
    else:
        model = SweepPlan.from_toml(plan, allow_outside_paths=allow_outside_paths, budget=budget)
    if dry_run:
        _print_dry_run(model)
        return
    assert out is not None
    # The command prints its summary from Arrow and its statistics need no NumPy (ccsim.sweep_stats),
    # so pyarrow loads without numpy (ccsim.lean_imports), in its own process only; not for a Dask
    # client, which may hand tables to NumPy.
    if _owns_process and cluster is None:
        import_pyarrow_without_numpy()
    from ccsim.result import defer_pandas_in_pyarrow  # lazy: start-up time (pyarrow)
    from ccsim.sweep import print_sweep_summary, run_sweep  # lazy: start-up time (pyarrow)

    defer_pandas_in_pyarrow()  # the command never needs pandas: the summary is printed from Arrow
    try:
        result = run_sweep(model, out, jobs=jobs, cluster=cluster, resume=resume, force=force, progress=True)
    except KeyboardInterrupt:
        click.echo(f"interrupted: finished runs are kept in {safe_for_terminal(out)}/parts; continue with --resume", err=True)
        sys.exit(130)
    console = Console()
    print_sweep_summary(result, console)
    click.echo(f"wrote {safe_for_terminal(out)} ({len(result.executed)} runs executed, {result.table('runs').num_rows} in the dataset)")


def _print_dry_run(model: Any) -> None:
    """Each point's overrides, the seeds, the run count and the estimated cost of the whole sweep."""
    points = model.points()
    for point_id, overrides in points:
        shown = ", ".join(f"{k}={_show(v)}" for k, v in dict(overrides).items()) or "(the base scenario)"
        click.echo(f"{point_id}: {safe_for_terminal(shown)}")
    reps = model.repetitions
    runs = len(points) * reps
    seeds = f"seed {model.seed_for(0)}" if reps == 1 else f"seeds {model.seed_for(0)}-{model.seed_for(reps - 1)}"
    click.echo(f"{len(points)} point{'s' if len(points) != 1 else ''} x {reps} repetition{'s' if reps != 1 else ''} "
               f"= {runs} run{'s' if runs != 1 else ''} ({seeds}); dry run: nothing run or written")
    if known_algorithms() is not None:  # the engine is built in: it estimates each point's cost
        cpu_s = sum(estimate_simulation(build_simulation(model.scenario(p), model.seed_for(0))).cpu_s for p, _ in points) * reps
        click.echo(f"estimated engine CPU: {cpu_s:.2f} s in total (one process; --jobs N divides the wall time)")


# --- end sweep -----------------------------------------------------------------------------------------


# --- report and reproduce (python/ccsim/report.py, python/ccsim/experiments/) ------------------------


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--experiment", default=None, metavar="NAME", help="Add this registered experiment's figures and claims (sweep directories) [default: from experiment.json].")
@_user_errors
def report(directory: Path, experiment: str | None) -> None:
    """Write DIRECTORY/report.html: one self-contained page for a run or a sweep directory.

    The page is derived from the directory's files and is rewritten every time (no --force needed);
    nothing else in the directory changes.
    """
    from ccsim.report import write_report  # lazy: start-up time (pandas, pyarrow)

    click.echo(safe_for_terminal(write_report(directory, experiment=experiment)))


@cli.command()
@click.argument("dir_a", type=click.Path(file_okay=False, path_type=Path))
@click.argument("dir_b", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Where to write compare.csv and the overlaid cwnd and RTT plots [default: runs/compare/<A>-vs-<B>].")
@click.option("--force", is_flag=True, help="Replace the output directory if it holds a previous comparison (only the files ccsim wrote there).")
@click.option("--no-plots", is_flag=True, help="Do not write the PNG plots (compare.csv only).")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON (rows of scope, metric, a, b, diff_pct, window) instead of the console table.")
@_user_errors
def compare(dir_a: Path, dir_b: Path, out: Path | None, force: bool, no_plots: bool, as_json: bool) -> None:
    """Compare two run directories, B against A: per flow goodput, share, mean/p95 RTT, queueing delay,
    retransmits and timeouts, the bottleneck's utilisation and queueing delay, each with B's difference
    in percent; cwnd and RTT of both runs overlaid. Made for `ccsim run FILE` beside `ccsim testbed run
    FILE`; any two runs compare (flows matched by name; differing scenario fields are listed)."""
    from ccsim.compare import compare_runs, run_label, write_comparison  # lazy: start-up time (pandas)
    from ccsim.result import Result, json_safe  # lazy: start-up time (pyarrow)

    out = out if out is not None else Path("runs") / "compare" / f"{dir_a.resolve().name}-vs-{dir_b.resolve().name}"
    check_output_dir(out, force)
    a, b = Result.load(dir_a), Result.load(dir_b)
    comparison = compare_runs(a, b, run_label(a, dir_a), run_label(b, dir_b))
    write_comparison(comparison, a, b, out, force=force, plots=not no_plots)
    if as_json:
        click.echo(json.dumps(json_safe({"a": comparison.label_a, "b": comparison.label_b, "directory": str(out),
                                         "rows": comparison.rows.to_dict("records"), "notes": comparison.notes}),
                              indent=2, allow_nan=False))
        return
    if _quiet():
        click.echo(safe_for_terminal(out))
        return
    console = Console()
    console.print(_comparison_table(comparison))
    if comparison.condensed(MAX_CONSOLE_FLOWS) is not comparison.rows:  # the flows' medians were shown
        console.print(f"(every flow's rows: {escape(safe_for_terminal(out / 'compare.csv'))})")
    for note in comparison.notes:
        console.print(f"note: {escape(safe_for_terminal(note))}")
    console.print(f"wrote {escape(safe_for_terminal(out))}")


def _comparison_table(comparison: Any) -> Table:
    table = Table(title=f"B against A (A = {escape(safe_for_terminal(comparison.label_a))}, "
                        f"B = {escape(safe_for_terminal(comparison.label_b))})", title_justify="left")
    for column in ("", "metric", "A", "B", "B vs A", "window"):
        table.add_column(column, justify="left" if column in ("", "metric", "window") else "right")
    previous = None
    for row in comparison.condensed(MAX_CONSOLE_FLOWS).itertuples(index=False):
        scope = _cell(row.scope) if row.scope != previous else ""
        previous = row.scope
        diff = "" if math.isnan(row.diff_pct) else f"{row.diff_pct:+.1f} %"
        table.add_row(scope, row.metric, _compared_value(row.a), _compared_value(row.b), diff, _cell(row.window))
    return table


# More flows than this and `ccsim compare` prints their medians, not a row block per flow.
MAX_CONSOLE_FLOWS = 16


def _compared_value(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.0f}" if value == int(value) and abs(value) >= 10 else f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"


@cli.command()
@click.argument("name", required=False)
@click.option("--out", "out", type=click.Path(path_type=Path), default=None, help="Output directory [default: runs/reproduce/NAME, NAME-quick with --quick].")
@click.option("--jobs", type=click.IntRange(1), default=None, help="Local worker processes [default: CPU count].")
@click.option("--cluster", default=None, metavar="tcp://HOST:PORT", help="Run on this Dask scheduler instead of locally.")
@click.option("--quick", is_flag=True, help="Fewer points and repetitions, shorter runs: a fast look (and the tests).")
@click.option("--resume", is_flag=True, help="Continue an interrupted reproduction in the same directory.")
@click.option("--force", is_flag=True, help="Replace an existing output directory (a previous sweep).")
@click.option("--list", "list_", is_flag=True, help="List the registered experiments and exit.")
@click.option("--paper", default=None, metavar="KEY", help="Run every experiment of this paper (chd, leith, limit, budzisz, binomial) into --out [default: runs/reproduce/KEY].")
@click.option("--all", "all_", is_flag=True, help="Run every registered experiment of every paper into --out [default: runs/reproduce/all].")
@click.option("--write-pages", is_flag=True, help="With --paper/--all: run the full and the --quick experiments, then write the papers' "
              "pages, figures and records into --pages.")
@click.option("--check-pages", is_flag=True, help="With --paper/--all: run (full, or --quick) and list every claim that differs from "
              "the pages' records; exit 1 if any does.")
@click.option("--render-pages", is_flag=True, help="Re-render the pages in --pages from their records and templates (no runs).")
@click.option("--pages", "pages_dir", type=click.Path(path_type=Path), default=Path("docs/reproductions"), show_default=True,
              help="The reproduction pages' directory.")
@_user_errors
def reproduce(name: str | None, out: Path | None, jobs: int | None, cluster: str | None, quick: bool, resume: bool, force: bool, list_: bool,
              paper: str | None, all_: bool, write_pages: bool, check_pages: bool, render_pages: bool, pages_dir: Path) -> None:
    """Run the registered experiment NAME (a paper's figure as code) and write its report.

    The sweep runs with a progress bar; the experiment's figures and report.html (with the claims
    table: the paper's values next to ours) are written into the output directory. The pages of
    docs/reproductions are written only by --write-pages (docs/reproductions/README.md).
    """
    # lazy: start-up time (pandas, pyarrow, numpy)
    from ccsim import experiments
    from ccsim.reproduce import default_out, reproduce as reproduce_experiment

    if write_pages + check_pages + render_pages > 1:
        raise CcsimError("reproduce: give one of --write-pages, --check-pages, --render-pages")
    if render_pages:
        if name is not None or paper is not None or all_:
            raise CcsimError("--render-pages: renders every recorded page; give no NAME, --paper or --all")
        for page in reproduction_pages.render_pages(pages_dir):
            click.echo(f"rendered {safe_for_terminal(page)}")
        return
    if (write_pages or check_pages) and paper is None and not all_:
        raise CcsimError(f"{'--write-pages' if write_pages else '--check-pages'}: give --paper KEY or --all")
    if write_pages and quick:
        raise CcsimError("--write-pages: pages come from the full runs (the quick verdicts are recorded beside them); drop --quick")
    if paper is not None or all_:
        from ccsim.reproduce import reproduce_many  # lazy: start-up time (pandas, pyarrow, numpy)

        if name is not None:
            raise CcsimError("reproduce: give NAME, or --paper/--all, not both")
        if (write_pages or check_pages) and not pages_dir.is_dir():
            raise CcsimError(f"--pages: {pages_dir} is not a directory (the repository's docs/reproductions)")
        chosen = experiments.of_paper(paper) if paper is not None else [e for e in experiments.all_experiments() if e.paper_key]
        target = out if out is not None else Path("runs") / "reproduce" / ((paper or "all") + ("-quick" if quick else ""))
        written = reproduce_many(chosen, target, jobs=jobs, quick=quick, force=force, resume=resume, progress=True)
        click.echo(f"wrote {safe_for_terminal(written)}")
        click.echo(f"summary: {safe_for_terminal(written / 'summary.md')}")
        papers = [paper] if paper is not None else experiments.papers()
        if write_pages:
            quick_target = target.with_name(target.name + "-quick")
            reproduce_many(chosen, quick_target, jobs=jobs, quick=True, force=force, resume=resume, progress=True)
            for page in reproduction_pages.write_pages(papers, pages_dir, target, quick_target):
                click.echo(f"page: {safe_for_terminal(page)}")
        if check_pages:
            compare = reproduction_pages.quick_problems if quick else reproduction_pages.full_problems
            problems = compare(pages_dir, target, papers) + reproduction_pages.page_problems(pages_dir)
            for line in problems:
                click.echo(f"stale: {safe_for_terminal(line, limit=1000)}", err=True)
            if problems:
                sys.exit(1)
            click.echo(f"the pages of {', '.join(papers)} agree with this run")
        return
    if list_ or name is None:
        if name is None and not list_:
            click.echo("usage: ccsim reproduce NAME [--quick] [--out DIR]; experiments:", err=True)
        for exp in experiments.all_experiments():
            click.secho(exp.name, bold=True, nl=False)
            where = f"  [{exp.paper_key} {exp.figure}]" if exp.paper_key else ""
            click.echo(f"{where}  {exp.title}")
            click.echo(f"  source: {exp.source}")
        if name is None and not list_:
            sys.exit(EXIT_USER_ERROR)
        return
    experiment = experiments.get(name)  # an unknown name fails before anything is written
    out = out if out is not None else default_out(experiment.name, quick)
    try:
        written = reproduce_experiment(experiment, out, jobs=jobs, cluster=cluster, quick=quick, force=force, resume=resume, progress=True)
    except KeyboardInterrupt:
        click.echo(f"interrupted: finished runs are kept in {safe_for_terminal(out)}/parts; continue with --resume", err=True)
        sys.exit(130)
    click.echo(f"wrote {safe_for_terminal(written)}")
    click.echo(f"report: {safe_for_terminal(written / 'report.html')}")


# --- end report and reproduce ----------------------------------------------------------------------


# --- the kernel testbed (docs/kernel.md) ----------------------------------------------------------

@cli.group()
def testbed() -> None:
    """Run scenarios in the real Linux TCP stack: BPF twins of the algorithms on a namespace testbed."""


@testbed.command(name="run")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None, help="Output directory [default: runs/<scenario name>-kernel].")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Seed of the random loss; overrides run.seed.")
@click.option("--force", is_flag=True, help="Replace the output directory if it holds a previous run (only the files ccsim wrote there).")
@click.option("--no-plots", is_flag=True, help="Do not write the PNG plots.")
@click.option("--builtin", default=None, metavar="NAME", help="Run every flow with the kernel's own algorithm NAME (e.g. reno) instead of the twins: the reference to compare a twin with.")
@click.option("--serialise/--no-serialise", default=None, help="Give every frame its transmission time at the bottleneck, as the simulator's link (tbf bucket of one frame, the delay line adds one frame's time; docs/kernel.md) [default: only with a tcp_limit flow].")
@click.option("--wait", "wait", is_flag=True, help="If another testbed run is running, wait for it to end [default: refuse].")
@click.option("--beside-others", is_flag=True, help="If another testbed run is running, run beside it anyway (the run's health verdict says so) [default: refuse].")
@click.option("--strict", is_flag=True, help="A health check outside its bound is an error (exit status 2; the run directory is still written, with the verdict in meta.json) [default: a warning].")
@click.option("--repeat", type=click.IntRange(1, 1000), default=1, metavar="N", help="Run the scenario N times (seeds SEED..SEED+N-1) into OUT/run-01... with OUT/repeats.csv, and print each metric's spread [default: 1].")
@_user_errors
def testbed_run(scenario: Path, out: Path | None, seed: int | None, force: bool, no_plots: bool, builtin: str | None,
                serialise: bool | None, wait: bool, beside_others: bool, strict: bool, repeat: int) -> None:
    """Run SCENARIO on the kernel testbed (as root) and write the same run directory as `ccsim run`.

    One testbed run at a time: a run started while another runs is refused, naming it (--wait,
    --beside-others)."""
    # lazy: start-up time (pandas, pyarrow) and the kernel path only when asked for
    from ccsim.kernel.runner import run_kernel

    if wait and beside_others:
        raise ArgumentError("--wait, --beside-others: give one of them")
    out = out if out is not None else Path("runs") / f"{scenario.stem}-kernel"
    check_output_dir(out, force)

    def one_run(run_seed: int | None, warn: bool) -> Any:
        return run_kernel(scenario, seed=run_seed, progress=not _quiet(), builtin=builtin, serialise=serialise,
                          beside_others="wait" if wait else "run" if beside_others else "refuse",
                          warn=(lambda line: click.echo(f"warning: not reproduced: {safe_for_terminal(line, limit=1000)}",
                                                        err=True)) if warn else None)

    if repeat > 1:
        _testbed_repeat(one_run, repeat, seed, out, force, no_plots, strict)
        return
    result = one_run(seed, True)
    result.save(out, force=force, plots=not no_plots)
    from ccsim.kernel.health import HealthError, health_lines  # lazy: the kernel path only

    health = result.meta["kernel"]["health"]
    if _quiet():
        for line in health_lines(health):
            if not health["ok"]:
                click.echo(safe_for_terminal(line, limit=1000), err=True)
        click.echo(safe_for_terminal(out))
    else:
        console = Console()
        print_summary(result, console)
        for line in health_lines(health):
            console.print(escape(safe_for_terminal(line, limit=1000)), soft_wrap=True)
        console.print(f"kernel {escape(result.meta['kernel']['release'])}, {result.meta['wall_time_s']:.1f} s wall time")
        console.print(f"wrote {escape(safe_for_terminal(out))}")
    if strict and not health["ok"]:
        failed = [c["name"] for c in health["checks"] if not c["ok"]]
        raise HealthError(f"health: {', '.join(failed)} outside the bounds (--strict; the run is in {out}, meta.json kernel.health)")


def _testbed_repeat(one_run: Callable[[int | None, bool], Any], n: int, seed: int | None, out: Path, force: bool,
                    no_plots: bool, strict: bool) -> None:
    """``testbed run --repeat N``: N runs, written together (nothing if one fails), and the spread."""
    import csv  # lazy: only --repeat writes repeats.csv

    from ccsim.kernel.health import HealthError  # lazy: the testbed's modules, for testbed commands only
    from ccsim.kernel.repeat import run_name, spread_rows  # lazy: as above
    from ccsim.outdir import write_directory  # lazy: as above, with the rest of the repeat path

    results = []
    for i in range(n):
        result = one_run(None if seed is None and i == 0 else (seed if seed is not None else results[0].meta["seed"]) + i, i == 0)
        results.append(result)
        if not _quiet():
            click.echo(f"run {i + 1} of {n}: seed {result.meta['seed']}, health {'ok' if result.meta['kernel']['health']['ok'] else 'flagged'}",
                       err=True)
    rows = spread_rows(results)
    names = [run_name(i + 1, n) for i in range(n)]

    def write(directory: Path) -> None:
        for name, result in zip(names, results):
            (directory / name).mkdir()
            result._write(directory / name, plots=not no_plots)
        with open(directory / "repeats.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["scope", "metric", "runs", "mean", "min", "max", "spread_pct", *names])
            for r in rows:
                w.writerow([r["scope"], r["metric"], r["runs"], r["mean"], r["min"], r["max"], r["spread_pct"], *r["values"]])

    write_directory(out, force, write, "repeat directory")
    flagged = [(name, [c["name"] for c in r.meta["kernel"]["health"]["checks"] if not c["ok"]])
               for name, r in zip(names, results) if not r.meta["kernel"]["health"]["ok"]]
    if _quiet():
        click.echo(safe_for_terminal(out))
    else:
        table = Table(title=f"{n} kernel runs (seeds {results[0].meta['seed']}..{results[-1].meta['seed']}): each metric's "
                            f"spread over the runs", title_justify="left")
        for column in ("", "metric", "mean", "min", "max", "max-min\n% of mean"):
            table.add_column(column, justify="left" if column in ("", "metric") else "right")
        previous = None
        for r in rows:
            table.add_row(_cell(r["scope"]) if r["scope"] != previous else "", r["metric"], *(
                _compared_value(r[k]) for k in ("mean", "min", "max")),
                "-" if math.isnan(r["spread_pct"]) else f"{r['spread_pct']:.1f} %")
            previous = r["scope"]
        console = Console()
        console.print(table)
        console.print(f"health: {len(flagged)} of {n} runs flagged" + (": " + "; ".join(
            f"{name} ({', '.join(checks)})" for name, checks in flagged) if flagged else ""))
        console.print(f"wrote {escape(safe_for_terminal(out))} ({names[0]} .. {names[-1]}, repeats.csv)")
    if strict and flagged:
        raise HealthError(f"health: {len(flagged)} of {n} runs outside the bounds (--strict; the runs are in {out})")


@testbed.command(name="check")
def testbed_check() -> None:
    """Say what this machine lacks for the kernel testbed (exit status 1 if anything)."""
    from ccsim.kernel.check import APT_PACKAGES, prerequisites  # lazy: only for this command

    missing = 0
    for item in prerequisites():
        click.echo(f"{'ok' if item.ok else 'missing'}: {item.what}" + ("" if item.ok else f" -> {item.fix}"))
        missing += not item.ok
    if missing:
        click.echo(f"on Debian/Ubuntu, as root: apt-get install {APT_PACKAGES}")
        sys.exit(1)


@testbed.command(name="clean")
def testbed_clean() -> None:
    """End what a killed testbed run left running (its namespaces and BPF registrations go with it)."""
    from ccsim.kernel.check import clean, held_struct_ops, registered_twins  # lazy: only for this command

    for line in clean():
        click.echo(line)
    held = held_struct_ops()
    for ops in held:
        click.echo(f"struct_ops map {ops.map_id} of {ops.name}: unregistered, still held by the kernel until the "
                   f"sockets of its run are gone (after a killed run: up to {HELD_OPS_LINGER_TEXT}; docs/kernel.md)")
    left = registered_twins()
    if left:
        click.echo(f"still registered (held by live sockets or a running testbed): {' '.join(left)}")
        sys.exit(1)
    if not held:
        click.echo("nothing of a finished testbed is left")


# How long a killed run's struct_ops map stays held (docs/kernel.md, "Cleaning up": measured)
HELD_OPS_LINGER_TEXT = "about 2 s"


_owns_process = False  # set by main(): the ccsim command, not a caller's process (CliRunner, a notebook)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    global _owns_process
    _owns_process = True
    cli.main(args=argv, prog_name="ccsim")


# ---------------------------------------------------------------------------------------------------
# The summary printed after a run


def print_summary(result: Any, console: Console) -> None:
    """Per-flow table and run-level figures over the measurement window. Each figure names what it
    measures: the bottleneck is the busiest link (named; a multi-hop topology lists every hop), an
    on/off flow's goodput while on is shown beside its window average, and Jain's index names its
    flows (docs/reports.md)."""
    resolved = result.scenario
    capacity_bps = result.run_summary.get("bottleneck_rate_bps") or float("nan")
    start_s, end_s = resolved["measure_start_ns"] / 1e9, resolved["measure_end_ns"] / 1e9
    window_s = end_s - start_s
    bottleneck = _bottleneck_row(result)
    of = f"{_cell(bottleneck['link'])}'s" if bottleneck is not None and bottleneck["link"] != "bottleneck" else "the bottleneck's"
    table = Table(
        title=f"summary over {start_s:g}-{end_s:g} s (seed {result.meta.get('seed')})",
        title_justify="left",
        caption=f"share: of {of} capacity; retx: retransmissions; p95: \u00b11.6 %",
        caption_justify="left",
    )
    for column in ("flow", "algorithm", "goodput\nMbit/s", "share", "retx", "timeouts", "RTT mean\nms", "RTT p95\nms"):
        # a long flow name wraps rather than losing its end to an ellipsis
        table.add_column(column, justify="left" if column in ("flow", "algorithm") else "right", no_wrap=column != "flow",
                         overflow="fold")
    flows = resolved["flows"]
    summary_records = _records(result, "summary")
    notes = []
    for row in summary_records:
        kind = row.get("kind", "tcp")
        if kind == "web":
            continue  # one aggregated row per generator below
        index = row.get("flow")
        spec = flows[int(index)] if _is_index(index, len(flows)) else {}
        name = _cell(row.get("name", spec.get("name", index)))
        goodput = row.get("goodput_bps")
        table.add_row(  # a stream has no algorithm: its kind goes in that column (the table fits 80 columns)
            name,
            _cell(row.get("algorithm", spec.get("traffic", {}).get("algorithm", ""))) if kind == "tcp" else f"({_cell(kind)})",
            _num(goodput, 1e-6, "{:.3f}"),
            _num(goodput, 100 / capacity_bps, "{:.1f} %"),
            _num(row.get("retransmits"), 1, "{:.0f}"),
            _num(row.get("timeouts"), 1, "{:.0f}"),
            _num(row.get("rtt_mean_ms"), 1, "{:.1f}"),
            fmt_percentile(row.get("rtt_p95_ms")),
        )
        active_s = row.get("active_s")
        sized = not math.isnan(float(row.get("fct_s", math.nan)))  # a finished transfer: its FCT says more
        if isinstance(active_s, float) and 0 < active_s < window_s * 0.999 and not sized:
            on = row.get("goodput_active_bps")
            notes.append(
                f"{name}: on {active_s:g} s of the {window_s:g} s window, {_num(on, 1e-6, '{:.3f} Mbit/s')} "
                f"({_num(on, 100 / capacity_bps, '{:.1f} %')}) while on"
            )
        if kind in ("cbr", "voip"):
            notes.append(
                f"{name} ({_cell(kind)}): one-way delay mean {_num(row.get('owd_mean_ms'), 1, '{:.1f} ms')}, "
                f"p95 {fmt_percentile(row.get('owd_p95_ms'), 'ms')}, max {_num(row.get('owd_max_ms'), 1, '{:.1f} ms')}, "
                f"jitter {_num(row.get('jitter_ms'), 1, '{:.2f} ms')}, lost {_num(row.get('stream_lost_pkts'), 1, '{:.0f}')} packets"
            )
    if any(row.get("kind") == "web" for row in summary_records):  # pandas only when there are web transfers to group
        summary_rows = result.summary
        web = summary_rows[summary_rows["kind"] == "web"]
        for generator, group in web.groupby(web["name"].str.split("#").str[0], sort=False):
            goodput = group["goodput_bps"].sum()
            generator = _cell(generator)
            table.add_row(
                f"{generator} (web, {len(group)} transfers)",
                _cell(group["algorithm"].iloc[0]),
                _num(goodput, 1e-6, "{:.3f}"),
                _num(goodput, 100 / capacity_bps, "{:.1f} %"),
                _num(group["retransmits"].sum(), 1, "{:.0f}"),
                _num(group["timeouts"].sum(), 1, "{:.0f}"),
                _num(group["rtt_mean_ms"].mean(), 1, "{:.1f}"),
                fmt_percentile(group["rtt_p95_ms"].max()),
            )
            done = group[group["completed"]]
            notes.append(
                f"{generator} (web): {len(done)} of {len(group)} transfers completed, completion time median "
                f"{_num(done['fct_s'].median() if len(done) else None, 1, '{:.3f} s')}, "
                f"p95 {_num(done['fct_s'].quantile(0.95) if len(done) else None, 1, '{:.3f} s')}"
            )
    console.print(table)
    for note in notes:
        console.print(note)
    summary = result.run_summary
    if bottleneck is not None:
        name = "bottleneck" if bottleneck["link"] == "bottleneck" else f"bottleneck {_cell(bottleneck['link'])} (busiest)"
        console.print(f"{name}: {_link_figures(bottleneck)}")
        for hop in _hops(result):
            if hop["link"] != bottleneck["link"]:
                console.print(f"  {_cell(hop['link'])}: {_link_figures(hop)}")
    console.print(_jain_line(result))
    stats = result.meta.get("engine_stats", {})
    if "engine_cpu_s" in stats:
        duration_s = summary.get("duration_s")
        console.print(
            f"simulated {_num(duration_s, 1, '{:g} s')} in {stats['engine_cpu_s']:.3f} s of engine CPU "
            f"({_num(stats.get('events'), 1, '{:.0f}')} events)"
        )


def summary_document(result: Any, out: Path) -> dict[str, Any]:
    """What ``ccsim run --json`` prints: the run summary, the per-flow and per-link summary rows
    (NaN as null) and where the run was written."""
    from ccsim.result import bottleneck_name, json_safe, run_summary_shown  # lazy: start-up time (pandas, pyarrow)

    links = result.link_summary.to_dict("records")
    run_summary = run_summary_shown(result.run_summary)
    if "bottleneck_link" in run_summary:  # its row in "links"; the name says which link that is
        run_summary["bottleneck_name"] = bottleneck_name(run_summary, [row.get("link") for row in links])
    return json_safe({
        "directory": str(out),
        "seed": result.meta.get("seed"),
        "git_revision": result.meta.get("git_revision"),
        "run_summary": run_summary,
        "flows": result.summary.to_dict("records"),
        "links": links,
    })


def _bottleneck_row(result: Any) -> dict[str, Any] | None:
    """The link summary row of the run's bottleneck (the busiest link, flagged by the engine; the
    link named "bottleneck" in older results)."""
    table = _arrow_table(result, "link_summary")
    if table is None:  # a Result-like object without Arrow tables
        from ccsim.compare import bottleneck_link  # lazy: pandas

        row = bottleneck_link(result.link_summary)
        return None if row is None else row.to_dict()
    if table.num_rows == 0 or "link" not in table.column_names:
        return None
    records = _records(result, "link_summary")
    if "bottleneck" in table.column_names and table.schema.field("bottleneck").type == "bool" \
            and table.column("bottleneck").null_count == 0:  # pandas: a bool column only without nulls
        rows = [row for row in records if row["bottleneck"]]
    else:
        rows = [row for row in records if row["link"] == "bottleneck"]
    return rows[0] if rows else None


def _link_figures(row: dict[str, Any]) -> str:
    return (f"utilisation {_num(row.get('utilisation'), 100, '{:.1f} %')}, "
            f"mean queueing delay {_num(row.get('qdelay_mean_ms'), 1, '{:.1f} ms')}, "
            f"{_num(row.get('drops_queue'), 1, '{:.0f}')} drops")


def _hops(result: Any) -> list[dict[str, Any]]:
    """A parking lot's forward hops (every one is listed: any of them can be the bottleneck)."""
    records = _records(result, "link_summary")
    if not records or "link" not in records[0]:
        return []
    hops = [row for row in records if re.fullmatch(r"hop\d+", str(row["link"]))]
    return hops if len(hops) > 1 else []


def _jain_line(result: Any) -> str:
    """Jain's index with the flows it covers named: the TCP flows active in the window."""
    value = _num(result.run_summary.get("jain_index"), 1, "{:.3f}")
    summary = _records(result, "summary")
    if not summary or "in_jain" not in summary[0] or "name" not in summary[0]:
        return f"Jain index {value} (TCP flows)"
    counted = [row["name"] for row in summary if bool(row["in_jain"])]
    left_out = [row["name"] for row in summary if not bool(row["in_jain"]) and row.get("kind", "tcp") != "web"]
    names = ", ".join(_cell(n) for n in counted[:6]) + (", ..." if len(counted) > 6 else "")
    n = len(counted)
    if n == 1:
        text = f"Jain index {value} (one TCP flow: {names}, nothing to compare)"
    else:
        text = f"Jain index {value} over {n} TCP flows: {names or 'none active in the window'}"
    if len(left_out):
        text += "; not counted: " + ", ".join(_cell(x) for x in left_out[:6]) + (", ..." if len(left_out) > 6 else "")
    return text


def _arrow_table(result: Any, name: str) -> Any:
    tables = getattr(result, "__dict__", {}).get("_tables")
    return tables.get(name) if isinstance(tables, dict) else None


def _records(result: Any, name: str) -> list[dict[str, Any]]:
    """A result table's rows as dicts, as pandas' ``to_dict("records")`` gives them (a missing number
    is NaN), read from the Arrow table so that printing a summary does not import pandas."""
    table = _arrow_table(result, name)
    if table is None:  # a Result-like object with DataFrames only
        frame = getattr(result, name)
        return frame.to_dict("records")
    numeric = {f.name for f in table.schema if str(f.type).startswith(("int", "uint", "float", "double", "halffloat"))}
    rows = table.to_pylist()
    if numeric and any(table.column(c).null_count for c in numeric):
        for row in rows:
            for column in numeric:
                if row[column] is None:
                    row[column] = math.nan
    return rows


def _cell(value: Any) -> str:
    """A user string (flow name) as table text: control characters escaped, no rich markup."""
    return escape(safe_for_terminal(value, limit=60))


def _is_index(value: Any, n: int) -> bool:
    """The engine identifies flows by position; older tables may carry names instead."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= int(value) < n


def _num(value: Any, scale: float, fmt: str) -> str:
    if value is None or isinstance(value, bool):
        return "-"
    try:
        x = float(value) * scale
    except (TypeError, ValueError):
        return "-"
    return "-" if math.isnan(x) else fmt.format(x)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)


if __name__ == "__main__":
    main()
