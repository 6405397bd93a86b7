"""Running a sweep: every (point, repetition) not yet done, on a local process pool or a Dask
cluster; each finished run becomes a part file, then the dataset is consolidated (``store``).

``execute_run`` is what a worker runs: it takes and returns plain data only, so a Dask worker needs
nothing but the same ccsim version (docs/sweeps.md). Locally, the sweep process and its forked
workers take runs one at a time from one shared list (``SharedRuns``; spawned workers get chunks
of runs instead), and each process writes the part files of its runs itself; the sweep process
keeps the part tables (its own, and those the workers send back) for the consolidation, so nothing
is written or read twice (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

import pyarrow as pa

from ccsim.budget import Budget, free_memory_bytes
from ccsim.errors import CcsimError
from ccsim.lean_imports import numpy_bridge_missing
from ccsim.progress import ProgressBar
from ccsim.result import defer_pandas_in_pyarrow
from ccsim.runner import simulate
from ccsim.scenario import Scenario
from ccsim.sweep.plan import SweepPlan, SweepRun
from ccsim.outdir import writer_lock
from ccsim.sweep.store import (SweepResult, check_sweep_dir, consolidate, open_sweep_dir, part_done, part_path, record_parts,
                               write_part)

__all__ = ["run_sweep", "execute_run", "execute_chunk", "RunTask", "SharedRuns", "die_with_parent", "DASK_CONNECT_TIMEOUT"]


# ---------------------------------------------------------------------------------------------------
# One run (executes in a worker process: a local pool or a Dask worker)


def execute_run(run_id: str, scenario_toml: str, seed: int, budget: Budget | None = None,
                memory_share: float = 1.0) -> dict[str, Any]:
    """Runs one (scenario, seed) and returns plain data: ``flows`` and ``links`` (Arrow tables of the
    per-flow and per-link summaries) and ``run`` (the run summary dict). No wall-clock values.

    The plan checked every run's estimate against ``budget`` (or was told not to) before any ran;
    here the engine meters the run against it as it goes, with ``memory_share`` of the machine's
    free memory (``1/jobs`` in a local pool: the workers share one machine)."""
    scenario = _scenario(scenario_toml)
    # provenance=False: the sweep keeps the summaries only, not meta.json's git revision and
    # package versions (three git commands and a scan of the installed packages per worker)
    result = simulate(scenario, scenario_toml, seed=seed, budget=budget, memory_share=memory_share, provenance=False)
    return {
        "run_id": run_id,
        "seed": seed,
        "flows": _as_through_pandas(result, "summary"),
        "links": _as_through_pandas(result, "link_summary"),
        "run": {k: v for k, v in result.run_summary.items()},
    }


_parsed = threading.local()  # per thread: a Dask worker may run several runs at once in threads


def _scenario(scenario_toml: str) -> Scenario:
    """The Scenario of ``scenario_toml``, parsed once for consecutive runs of one point (a chunk
    holds the repetitions of a point one after another). A Scenario is not changed by a run."""
    last = getattr(_parsed, "last", None)
    if last is None or last[0] != scenario_toml:
        last = _parsed.last = (scenario_toml, Scenario.from_toml_str(scenario_toml))
    return last[1]


class RunTask(NamedTuple):
    """One run as a local worker gets it: what names its part file (store.PartKey) and the scenario."""

    run_id: str
    point_id: str
    repetition: int
    seed: int
    scenario_toml: str


def execute_chunk(tasks: list[RunTask], parts_dir: str, budget: Budget | None = None,
                  memory_share: float = 1.0) -> list[tuple[str, pa.Table | None, CcsimError | None]]:
    """Runs each task in turn and writes its part file into ``parts_dir`` (atomically), in the
    worker. Returns, per task, (run id, the part table, None) or (run id, None, the CcsimError that
    stopped it); any other exception (a bug) ends the chunk and reaches the sweep process."""
    parts = Path(parts_dir)
    done: list[tuple[str, pa.Table | None, CcsimError | None]] = []
    for task in tasks:
        try:
            output = execute_run(task.run_id, task.scenario_toml, task.seed, budget, memory_share)
            done.append((task.run_id, write_part(parts, task, output), None))
        except CcsimError as e:
            done.append((task.run_id, None, e))
    return done


def _as_through_pandas(result: Any, name: str) -> pa.Table:
    """A summary table as the sweep stores it: what a trip through pandas made of it (floats: NaN as
    null; strings: large_string, as pandas 3 gives them back), built in Arrow so that a worker never
    imports pandas (about 0.5 s of CPU per worker). A column that would change in other ways
    (integers or booleans with nulls, other types) takes the real trip through pandas."""
    table = result.table(name)
    columns = []
    for field, column in zip(table.schema, table.columns):
        # Through Python values, not to_numpy()/cast(): those import pyarrow.compute and numpy.ma,
        # about 0.05 s of CPU that every worker would pay on its first run (the tables are one row
        # per flow or link: small).
        if pa.types.is_floating(field.type):
            columns.append(pa.array(column.to_pylist(), type=field.type, from_pandas=True))  # NaN -> null, as from_pandas
        elif pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            columns.append(pa.array(column.to_pylist(), type=pa.large_string()))
        elif (pa.types.is_integer(field.type) or pa.types.is_boolean(field.type)) and column.null_count == 0:
            columns.append(column)
        elif pa.types.is_null(field.type):  # an empty column: pandas gives it back unchanged
            columns.append(column)
        else:
            return _through_pandas(result, name, f"column {field.name!r} of type {field.type}")
    return pa.Table.from_arrays(columns, names=table.column_names) if columns else _through_pandas(result, name, "no columns")


def _through_pandas(result: Any, name: str, why: str) -> pa.Table:
    """The real trip through pandas, for a table the engine has never made (a safety net). Not in a
    process whose pyarrow was imported without numpy (``ccsim sweep``): to_pandas would crash it."""
    if numpy_bridge_missing():
        raise CcsimError(f"{name}: {why}: the sweep cannot store it without pandas; run the sweep from Python "
                         f"(ccsim.sweep.run_sweep) instead of the ccsim command")
    return pa.Table.from_pandas(getattr(result, name), preserve_index=False).replace_schema_metadata(None)


def warm_worker(parent_pid: int) -> None:
    """Pool worker initializer: dies with the sweep (:func:`die_with_parent`) and keeps pyarrow from
    importing pandas, which a worker never needs (ccsim.result.defer_pandas_in_pyarrow). The worker
    process then serves every run it is given with its imports done once."""
    die_with_parent(parent_pid)
    defer_pandas_in_pyarrow()


# ---------------------------------------------------------------------------------------------------
# Running a sweep


def run_sweep(
    plan: SweepPlan | str | Path,
    out_dir: str | Path,
    jobs: int | None = None,
    cluster: Any = None,
    resume: bool = False,
    progress: bool = True,
    force: bool = False,
    on_run: Callable[[str], None] | None = None,
) -> SweepResult:
    """Runs every (point, repetition) of ``plan`` not yet done and consolidates the results in ``out_dir``.

    ``jobs``: local worker processes (default: the CPU count; 1 runs in this process). ``cluster``: a
    Dask scheduler address (``"tcp://host:port"``) or a ``dask.distributed.Client``; then the runs go
    there and ``jobs`` is ignored. ``resume``: continue an existing sweep directory, running only the
    runs without a part file. ``force``: replace an existing sweep directory. ``on_run(run_id)`` is
    called in this process as each run finishes. Returns the :class:`SweepResult`; its ``executed``
    lists the run ids this call ran.
    """
    if not isinstance(plan, SweepPlan):
        plan = SweepPlan.from_toml(plan)
    out = Path(out_dir)
    if resume and force:
        raise CcsimError("give resume or force, not both")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise CcsimError(f"jobs: must be an integer >= 1 (got {jobs!r})")
    client, own_client = _connect(cluster) if cluster is not None else (None, False)
    try:
        return _run_sweep(plan, out, jobs, client, resume, progress, force, on_run)
    finally:
        if own_client:
            client.close()


@contextlib.contextmanager
def _locked_sweep_dir(out: Path, plan: SweepPlan, resume: bool, force: bool) -> Iterator[None]:
    """The sweep directory, checked before anything is created, then held with the writer lock: a
    second sweep on the same directory is refused, not interleaved."""
    check_sweep_dir(out, resume=resume, force=force, plan=plan)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # --out /proc/x, a read-only or full file system
        raise CcsimError(f"{out}: cannot create the sweep directory ({e.strerror or e.__class__.__name__})") from None
    with writer_lock(out):
        yield


def _run_sweep(
    plan: SweepPlan,
    out: Path,
    jobs: int | None,
    client: Any,
    resume: bool,
    progress: bool,
    force: bool,
    on_run: Callable[[str], None] | None,
) -> SweepResult:
    with _locked_sweep_dir(out, plan, resume, force):
        parts = open_sweep_dir(plan, out, resume=resume, force=force)
        all_runs = plan.runs()
        todo = [r for r in all_runs if not part_done(part_path(parts, r), r)]
        record_parts(out, todo, resume)  # before any is written: a killed sweep leaves only listed parts
        kept: dict[str, pa.Table] = {}  # run id -> part table of the runs this call ran
        failures: list[tuple[str, BaseException]] = []
        tasks = _tasks(todo)
        local_jobs = min(jobs or os.cpu_count() or 1, len(todo))
        pooled = client is None and local_jobs > 1
        # The workers are forked here, before the progress bar starts its refresh thread (on a
        # terminal): a process with another thread cannot fork safely, and would spawn its workers.
        shared = _shared_pool(tasks, local_jobs, plan.budget, parts) if pooled and _start_method() == "fork" else None

        with shared or contextlib.nullcontext(), \
                ProgressBar("sweep", len(all_runs), "runs", completed=len(all_runs) - len(todo), enabled=progress) as bar:
            def record(run_id: str, table: pa.Table | None, error: BaseException | None) -> None:
                if error is not None:
                    failures.append((run_id, error))
                else:
                    kept[run_id] = table  # type: ignore[assignment]
                    if on_run is not None:
                        on_run(run_id)
                bar.advance()

            if not todo:
                pass
            elif client is not None:
                _run_dask(todo, client, record, plan.budget, parts)
            elif shared is not None:
                shared.run(record)
            elif not pooled:
                for run_id, table, error in _chunk_results(tasks, parts, plan.budget, 1.0):
                    record(run_id, table, error)
            else:
                _run_spawned(tasks, local_jobs, record, plan.budget, parts)

        if failures:
            run_id, error = sorted(failures, key=lambda f: f[0])[0]
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            raise CcsimError(f"run {run_id} failed{more}: {error}; the finished runs are kept, rerun with --resume")
        tables = consolidate(plan, out, kept)
        return SweepResult(plan, out, tables, executed=sorted(kept))


def _tasks(runs: list[SweepRun]) -> list[RunTask]:
    """The runs as workers get them: each point's scenario dumped to TOML once, not once per run."""
    toml: dict[str, str] = {}
    return [RunTask(r.run_id, r.point_id, r.repetition, r.seed, toml.get(r.point_id) or toml.setdefault(r.point_id, r.scenario.to_toml()))
            for r in runs]


def _chunk_results(tasks: list[RunTask], parts: Path, budget: Budget | None,
                   memory_share: float) -> Iterator[tuple[str, pa.Table | None, CcsimError | None]]:
    """The runs in this process, one at a time (--jobs 1)."""
    for task in tasks:
        yield from execute_chunk([task], str(parts), budget, memory_share)


def chunk_size(runs: int, workers: int) -> int:
    """Runs per task sent to a worker: about eight tasks per worker, so that the last ones even out
    the workers' finishing times, and fewer round trips through the pool for a large sweep (a task
    costs a pickle each way and a wake-up of the sweep process)."""
    return max(1, runs // (8 * workers))


def _run_spawned(tasks: list[RunTask], workers: int, record: Callable[..., None], budget: Budget | None, parts: Path) -> None:
    """The runs on ``workers`` spawned processes, in chunks: for a sweep process that runs other
    threads (a notebook, a Dask client), where forking is not safe (:func:`_start_method`)."""
    context = multiprocessing.get_context("spawn")
    size = chunk_size(len(tasks), workers)
    executor = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=warm_worker, initargs=(os.getpid(),)
    )
    try:
        chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
        # each worker may count on its share of the free memory: they run at once on this machine
        futures = {executor.submit(execute_chunk, chunk, str(parts), budget, 1.0 / workers): chunk for chunk in chunks}
        for future in as_completed(futures):
            chunk = futures[future]
            error = future.exception()
            if isinstance(error, BrokenProcessPool):  # a worker was killed (the OOM killer, a signal)
                raise _worker_died(chunk[0].run_id) from None
            if error is not None:
                raise error
            for run_id, table, run_error in future.result():
                record(run_id, table, run_error)
    except BaseException:
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)


def _worker_died(run_id: str) -> CcsimError:
    return CcsimError(f"a worker process died while running {run_id} (killed by a signal, e.g. out of memory); the finished "
                      f"runs are kept, rerun with --resume")


class SharedRuns(NamedTuple):
    """The runs of a sweep as the sweep process and its forked workers share them: each process takes
    the next run not yet taken (``next``, in shared memory) until none is left, so both cores stay
    busy to the last run whatever each run costs; a worker sends each finished run on ``results``.
    Forked workers inherit it (:data:`_shared`): no run is pickled to them."""

    tasks: list[RunTask]
    next: Any  # multiprocessing.Value("q"): the index of the next run nobody has taken
    results: Any  # multiprocessing.Queue: each run a worker finished, (run id, part table as Arrow IPC, CcsimError) pickled
    parts_dir: str
    budget: Budget | None
    memory_share: float

    def take(self, check: Callable[[], None] | None = None) -> int | None:
        """The index of the next run, now this process's; None when every run is taken. ``check``
        runs while the lock is held elsewhere for a second (a worker killed while it held it)."""
        lock = self.next.get_lock()
        while not lock.acquire(timeout=1.0):
            if check is not None:
                check()
        try:
            index = self.next.value
            if index >= len(self.tasks):
                return None
            self.next.value = index + 1
            return index
        finally:
            lock.release()

    def taken(self) -> int:
        return min(self.next.value, len(self.tasks))

    def stop(self) -> None:
        """No process takes another run (each finishes the one it is running). Not if the lock stays
        held (by a worker killed while holding it): then the pool is broken and its workers ended."""
        lock = self.next.get_lock()
        if lock.acquire(timeout=1.0):
            try:
                self.next.value = len(self.tasks)
            finally:
                lock.release()


_shared: SharedRuns | None = None  # set in the sweep process just before it forks its workers


def run_shared_in_worker() -> int:
    """A forked worker's whole share of the sweep: takes runs until none is left, sends each result
    as it finishes (so the progress bar moves and the sweep process keeps the table), and returns the
    number of runs it ran. A bug (not a CcsimError) ends it and reaches the sweep process."""
    shared = _shared
    assert shared is not None, "run_shared_in_worker runs in a worker forked by _shared_pool"
    # The sweep process has every result before it lets a worker end (it counts them), so the
    # worker need not wait at exit until the queue's pipe takes the last one: after an error or
    # Ctrl-C nobody reads it, and a large part table would keep the worker (and the sweep) alive.
    shared.results.cancel_join_thread()
    ran = 0
    while (index := shared.take()) is not None:
        for run_id, table, error in execute_chunk([shared.tasks[index]], shared.parts_dir, shared.budget, shared.memory_share):
            # The table as an Arrow IPC stream (0.04 ms each way; pickling it took 0.7 + 0.45 ms), all
            # pickled here, not in the queue's feeder thread, which would print a failure and drop the
            # result (and the sweep process would wait for it forever): here it ends the worker's call.
            shared.results.put(bytes(ForkingPickler.dumps((run_id, None if table is None else _to_ipc(table), error))))
        ran += 1
    return ran


def _to_ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _warm_up_before_fork() -> None:
    """What a process's first run would load on its own, done once here and inherited by the forked
    workers: pyarrow's first conversion of a Python dict looks for dateutil (the run's summary row),
    and the memory meter reads /proc/meminfo (the ascii codec) and the address-space limit
    (``resource``). About 5 ms each process would otherwise pay in its first run."""
    pa.Table.from_pylist([{"x": 0.5}])
    free_memory_bytes()


class _shared_pool:
    """``jobs`` processes on one shared list of runs: this one and ``jobs - 1`` workers, forked when
    it is made (as soon as the runs are known, while this process runs one thread). As a context
    manager it ends the workers: after every run (waiting for them), or at once after an error or
    Ctrl-C (no process starts another run). ``run`` takes runs in this process too (it would
    otherwise only wait) and, between its runs, records what the workers sent; the last run ends
    at most one run after the other processes' last."""

    def __init__(self, tasks: list[RunTask], jobs: int, budget: Budget | None, parts: Path) -> None:
        global _shared
        context = multiprocessing.get_context("fork")
        self.tasks, self.budget, self.parts = tasks, budget, str(parts)
        # each process may count on its share of the free memory: they run at once on this machine
        self.shared = SharedRuns(tasks, context.Value("q", 0), context.Queue(), self.parts, budget, 1.0 / jobs)
        self.received: set[str] = set()
        self.ran_here: set[str] = set()
        _warm_up_before_fork()
        self.executor = ProcessPoolExecutor(max_workers=jobs - 1, mp_context=context, initializer=warm_worker,
                                            initargs=(os.getpid(),))
        _shared = self.shared
        try:
            # The first submit forks every worker; with the objects that exist then frozen, a
            # worker's garbage collector does not touch (and so copy) the pages it shares with this
            # process.
            gc.freeze()
            try:
                self.workers = [self.executor.submit(run_shared_in_worker)]
            finally:
                gc.unfreeze()
            self.workers += [self.executor.submit(run_shared_in_worker) for _ in range(jobs - 2)]
        except BaseException:
            self.executor.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            _shared = None  # the workers have their copy

    def __enter__(self) -> "_shared_pool":
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if kind is None:
            self.executor.shutdown(wait=True)
        else:
            self.shared.stop()
            self.executor.shutdown(wait=False, cancel_futures=True)

    def run(self, record: Callable[..., None]) -> None:
        shared = self.shared
        while (index := shared.take(self._check)) is not None:
            for done in execute_chunk([self.tasks[index]], self.parts, self.budget, shared.memory_share):
                self.ran_here.add(done[0])
                record(*done)
            self._receive(record, block=False)
            self._check()
        # every run is taken: wait for the workers' last ones
        while len(self.received) + len(self.ran_here) < shared.taken():
            self._receive(record, block=True)
            self._check()

    def _receive(self, record: Callable[..., None] | None, block: bool) -> None:
        while True:
            try:
                message = self.shared.results.get(block=block, timeout=0.05 if block else None)
            except queue.Empty:
                return
            run_id, payload, error = pickle.loads(message)
            self.received.add(run_id)
            if record is not None:
                record(run_id, None if payload is None else pa.ipc.open_stream(payload).read_all(), error)
            block = False

    def _check(self) -> None:
        """Raises what ended a worker early: a bug, or its death (the OOM killer, a signal)."""
        for worker in self.workers:
            if not worker.done() or worker.exception() is None:
                continue
            if isinstance(worker.exception(), BrokenProcessPool):
                self._receive(None, block=False)  # what the workers sent before: not lost
                done = self.received | self.ran_here
                lost = [t.run_id for t in self.tasks[:self.shared.taken()] if t.run_id not in done]
                raise _worker_died(lost[0] if lost else self.tasks[-1].run_id) from None
            raise worker.exception()  # type: ignore[misc]


def _start_method() -> str:
    """fork when this process runs one thread only (the CLI, a script): a forked worker starts with
    ccsim, pyarrow and pydantic already imported, where a spawned one spends about 0.3-0.4 s of CPU
    importing them again, which is most of a small run's cost. spawn otherwise (a notebook, a Dask
    client, any thread): fork would copy another thread's locks in whatever state they are in.
    ProcessPoolExecutor starts its own manager thread only after forking every worker."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent_pid: int) -> None:
    """Worker initializer: the kernel sends this worker SIGKILL when the sweep process dies, even by
    SIGKILL (which runs no cleanup), so no orphaned worker keeps simulating (prctl(2),
    PR_SET_PDEATHSIG). Linux only; elsewhere a no-op. Once the workers are gone the multiprocessing
    resource tracker sees its pipe close and exits too (tests/test_safety.py checks both)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before prctl took effect: no signal will come
        os._exit(1)


DASK_CONNECT_TIMEOUT = "10s"


def _connect(cluster: Any) -> tuple[Any, bool]:
    """(client, whether we own it) for a scheduler address or a dask.distributed.Client."""
    try:
        from distributed import Client  # lazy: optional dependency (ccsim[cluster])
    except ImportError:
        raise CcsimError("running on a Dask cluster needs dask.distributed: pip install 'ccsim[cluster]'") from None
    if isinstance(cluster, Client):
        return cluster, False
    if not isinstance(cluster, str):
        raise CcsimError(f"cluster: must be a scheduler address such as tcp://host:8786 or a dask.distributed.Client (got {cluster!r})")
    try:
        return Client(cluster, timeout=DASK_CONNECT_TIMEOUT), True
    except (OSError, TimeoutError, ValueError) as e:
        raise CcsimError(f"cannot connect to the Dask scheduler at {cluster}: {e}") from None


def _run_dask(todo: list[SweepRun], client: Any, record: Callable[..., None], budget: Budget | None, parts: Path) -> None:
    """The runs on a Dask cluster; its workers may not see this file system, so this process writes
    the part files."""
    from distributed import as_completed as dask_completed  # lazy: optional dependency (ccsim[cluster])

    futures = []
    try:
        by_key = {}
        for r in todo:
            future = client.submit(execute_run, r.run_id, r.scenario.to_toml(), r.seed, budget, pure=False, retries=0)
            by_key[future.key] = r
            futures.append(future)
        for future in dask_completed(futures):
            run = by_key[future.key]
            if future.status == "error":
                error = future.exception()
                if not isinstance(error, CcsimError):
                    raise error
                record(run.run_id, None, error)
            else:
                record(run.run_id, write_part(parts, run, future.result()), None)
    except BaseException:
        for f in futures:
            f.cancel()
        raise
