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
import fcntl
import gc
import mmap
import multiprocessing
import os
import pickle
import select
import signal
import sys
import threading
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, NoReturn

import pyarrow as pa

from ccsim.budget import Budget, free_memory_bytes
from ccsim.arguments import kind_of, path_argument
from ccsim.errors import ArgumentError, CcsimError
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
    """What a worker does first, spawned (the pool's initializer) or forked (:func:`_worker_main`):
    dies with the sweep (:func:`die_with_parent`) and keeps pyarrow from importing pandas, which a
    worker never needs (ccsim.result.defer_pandas_in_pyarrow). The worker process then serves every
    run it is given with its imports done once."""
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
        if not isinstance(plan, (str, os.PathLike)):
            raise ArgumentError(f"plan: must be a SweepPlan or a plan file path (str or pathlib.Path); got {kind_of(plan)}")
        plan = SweepPlan.from_toml(path_argument(plan, "plan"))
    out = path_argument(out_dir, "out_dir")
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


class SharedRuns:
    """The runs of a sweep as the sweep process and its forked workers share them: each process takes
    the next run not yet taken until none is left, so every core stays busy to the last run whatever
    each run costs. The runs are inherited through fork (none is pickled to a worker); the index of
    the next one is eight bytes of shared memory, changed under a POSIX record lock on an anonymous
    in-memory file (``memfd_create``, ``lockf``): the kernel releases it when its holder dies, so a
    worker killed while taking a run cannot leave the others waiting. Linux only, as the forked pool
    is (:func:`_start_method`)."""

    def __init__(self, tasks: list[RunTask], parts_dir: str, budget: Budget | None, memory_share: float) -> None:
        self.tasks, self.parts_dir, self.budget, self.memory_share = tasks, parts_dir, budget, memory_share
        self._next = mmap.mmap(-1, 8)  # anonymous and shared: one counter for every forked process
        self._lock = os.memfd_create("ccsim-sweep-runs", os.MFD_CLOEXEC)

    def _index(self) -> int:
        return int.from_bytes(self._next[:8], "little")

    def take(self) -> int | None:
        """The index of the next run, now this process's; None when every run is taken."""
        fcntl.lockf(self._lock, fcntl.LOCK_EX)
        try:
            index = self._index()
            if index >= len(self.tasks):
                return None
            self._next[:8] = (index + 1).to_bytes(8, "little")
            return index
        finally:
            fcntl.lockf(self._lock, fcntl.LOCK_UN)

    def taken(self) -> int:
        return min(self._index(), len(self.tasks))

    def stop(self) -> None:
        """No process takes another run (each finishes the one it is running)."""
        fcntl.lockf(self._lock, fcntl.LOCK_EX)
        try:
            self._next[:8] = len(self.tasks).to_bytes(8, "little")
        finally:
            fcntl.lockf(self._lock, fcntl.LOCK_UN)

    def close(self) -> None:
        self._next.close()
        os.close(self._lock)


_LENGTH = 8  # bytes of a message's length on a worker's pipe (little-endian)
_F_SETPIPE_SZ = 1031  # linux/fcntl.h


class _Outbox:
    """A worker's end of its own pipe to the sweep process: each message its pickle after its
    length. A message waits here while the pipe is full (the sweep process reads it between its own
    runs, which can be long), so the worker goes on with its next run instead of waiting; it
    waits only at its end, for the sweep process to take the rest."""

    def __init__(self, fd: int) -> None:
        self.fd, self.pending = fd, bytearray()
        os.set_blocking(fd, False)

    def send(self, message: object) -> None:
        data = pickle.dumps(message)
        self.pending += len(data).to_bytes(_LENGTH, "little") + data
        self._write()

    def flush(self) -> None:
        writable = select.poll()
        writable.register(self.fd, select.POLLOUT)
        while self.pending:
            writable.poll()
            self._write()

    def _write(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while self.pending:
                del self.pending[:os.write(self.fd, self.pending)]


class _Inbox:
    """The sweep process's end of one worker's pipe: complete messages as they have arrived."""

    def __init__(self, fd: int) -> None:
        self.fd, self.pending, self.open = fd, bytearray(), True
        os.set_blocking(fd, False)

    def messages(self) -> Iterator[tuple[str, bytes | None, BaseException | None]]:
        """What has arrived, without waiting; ``open`` turns False at the worker's end (EOF)."""
        while self.open:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                break
            if not chunk:
                self.open = False
            self.pending += chunk
        pending, start = self.pending, 0
        try:
            while len(pending) - start >= _LENGTH:
                size = int.from_bytes(pending[start:start + _LENGTH], "little")
                if len(pending) - start - _LENGTH < size:
                    break
                message = pickle.loads(pending[start + _LENGTH:start + _LENGTH + size])
                start += _LENGTH + size
                yield message
        finally:
            del pending[:start]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _worker_main(shared: SharedRuns, outbox: _Outbox, parent_pid: int) -> NoReturn:
    """A forked worker's whole life: takes runs until none is left and sends each finished one as
    (run id, part table as an Arrow IPC stream or None, CcsimError or None); anything else that
    ends it early (a bug, Ctrl-C) is sent as ("", None, the exception). Never returns: os._exit
    skips the sweep process's atexit handlers and buffered output, which are not this process's."""
    status = 1
    try:
        warm_worker(parent_pid)
        while (index := shared.take()) is not None:
            for run_id, table, error in execute_chunk([shared.tasks[index]], shared.parts_dir, shared.budget, shared.memory_share):
                # An Arrow IPC stream: 0.04 ms each way, where pickling the table took 0.7 + 0.45 ms
                outbox.send((run_id, None if table is None else _to_ipc(table), error))
        outbox.flush()
        status = 0
    except BaseException as e:  # noqa: BLE001 - whatever it is, the sweep process raises it
        with contextlib.suppress(BaseException):
            try:
                outbox.send(("", None, e))
            except (pickle.PicklingError, TypeError, AttributeError):  # an exception pickle cannot carry
                outbox.send(("", None, RuntimeError("".join(traceback.format_exception(e)))))
            outbox.flush()
    finally:
        os._exit(status)


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
    """``jobs`` processes on one shared list of runs: this one and ``jobs - 1`` workers, forked with
    ``os.fork`` when it is made (as soon as the runs are known, while this process runs one thread).
    No pool threads and no queues' feeder threads: a worker takes its runs from :class:`SharedRuns`
    and sends each result on a pipe of its own, which this process reads between its own runs
    (``run``). As a context manager it ends the workers: after every run (reaping them), or at once
    after an error or Ctrl-C (no process starts another run; the workers are killed and their
    unfinished part files removed, the finished ones kept for --resume)."""

    def __init__(self, tasks: list[RunTask], jobs: int, budget: Budget | None, parts: Path) -> None:
        self.tasks, self.budget, self.parts = tasks, budget, str(parts)
        # each process may count on its share of the free memory: they run at once on this machine
        self.shared = SharedRuns(tasks, self.parts, budget, 1.0 / jobs)
        self.received: set[str] = set()
        self.ran_here: set[str] = set()
        self.workers: dict[int, _Inbox] = {}
        self.ended: dict[int, int] = {}  # pid -> wait status, once reaped
        _warm_up_before_fork()
        parent = os.getpid()
        try:
            # With the objects that exist now frozen, a worker's garbage collector does not touch
            # (and so copy) the pages it shares with this process.
            gc.freeze()
            try:
                for _ in range(jobs - 1):
                    read, write = os.pipe()
                    with contextlib.suppress(OSError):  # room for a few part tables
                        fcntl.fcntl(write, _F_SETPIPE_SZ, 1 << 20)
                    try:
                        pid = os.fork()
                    except OSError as e:  # no process for it (a limit on processes, memory)
                        os.close(read)
                        os.close(write)
                        raise CcsimError(f"jobs: cannot start worker process {len(self.workers) + 1} of {jobs - 1} "
                                         f"({e.strerror or e}); run the sweep with fewer jobs") from None
                    if pid == 0:
                        for fd in [read, *(inbox.fd for inbox in self.workers.values())]:
                            os.close(fd)
                        _worker_main(self.shared, _Outbox(write), parent)
                    os.close(write)  # the worker holds it: EOF once the worker has ended
                    self.workers[pid] = _Inbox(read)
            finally:
                gc.unfreeze()
        except BaseException:
            self._end_workers()
            raise

    def __enter__(self) -> "_shared_pool":
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if kind is None:
            for pid in self.workers:
                if pid not in self.ended:
                    self.ended[pid] = os.waitpid(pid, 0)[1]
            self._close()
        else:
            self._end_workers()

    def _end_workers(self) -> None:
        """After an error or Ctrl-C: no process starts another run, the workers end now (a run they
        were in is lost, as this process's is), and the part files they were writing go."""
        self.shared.stop()
        for pid in self.workers:
            if pid not in self.ended:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                self.ended[pid] = os.waitpid(pid, 0)[1]
            for unfinished in Path(self.parts).glob(f".*.{pid}.tmp"):  # store._atomic_write's name
                unfinished.unlink(missing_ok=True)
        self._close()

    def _close(self) -> None:
        for inbox in self.workers.values():
            inbox.close()
        self.shared.close()

    def run(self, record: Callable[..., None]) -> None:
        shared = self.shared
        while (index := shared.take()) is not None:
            for done in execute_chunk([self.tasks[index]], self.parts, self.budget, shared.memory_share):
                self.ran_here.add(done[0])
                record(*done)
            self._receive(record)
            self._check()
        # every run is taken: wait for the workers' last ones
        while len(self.received) + len(self.ran_here) < shared.taken():
            arrived = select.poll()
            for inbox in self.workers.values():
                if inbox.open:
                    arrived.register(inbox.fd, select.POLLIN)
            arrived.poll(50)  # ms: a worker's death is seen by waitpid, not on its pipe
            self._receive(record)
            self._check()

    def _receive(self, record: Callable[..., None] | None) -> None:
        """Records what the workers have sent, without waiting for more; raises a worker's bug."""
        for inbox in self.workers.values():
            for run_id, payload, error in inbox.messages():
                if not run_id:  # a worker's bug or Ctrl-C: raised here
                    raise error  # type: ignore[misc]
                self.received.add(run_id)
                if record is not None:
                    record(run_id, None if payload is None else pa.ipc.open_stream(payload).read_all(), error)

    def _check(self) -> None:
        """Raises if a worker ended before its runs did: its death (the OOM killer, a signal)."""
        for pid in self.workers:
            if pid in self.ended:
                continue
            ended, status = os.waitpid(pid, os.WNOHANG)
            if not ended:
                continue
            self.ended[pid] = status
            if os.waitstatus_to_exitcode(status) != 0:  # (what a worker sent before it ended normally is read by run)
                self._receive(None)  # what it sent before it ended: not lost (a bug it sent is raised)
                done = self.received | self.ran_here
                lost = [t.run_id for t in self.tasks[:self.shared.taken()] if t.run_id not in done]
                raise _worker_died(lost[0] if lost else self.tasks[-1].run_id)


def _start_method() -> str:
    """fork when this process runs one thread only (the CLI, a script): a forked worker starts with
    ccsim, pyarrow and pydantic already imported, where a spawned one spends about 0.3-0.4 s of CPU
    importing them again, which is most of a small run's cost. spawn otherwise (a notebook, a Dask
    client, any thread): fork would copy another thread's locks in whatever state they are in.
    The forked pool (:class:`_shared_pool`) starts no thread of its own."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent_pid: int) -> None:
    """Run first in a worker: the kernel sends this worker SIGKILL when the sweep process dies, even
    by SIGKILL (which runs no cleanup), so no orphaned worker keeps simulating (prctl(2),
    PR_SET_PDEATHSIG). Linux only; elsewhere a no-op. Once spawned workers are gone the
    multiprocessing resource tracker sees its pipe close and exits too (tests/test_safety.py checks
    both)."""
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
