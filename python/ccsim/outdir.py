"""Output directories ccsim owns: the marker listing what ccsim wrote, ``--force``, the writer lock.

Every directory ccsim creates for output (a run, a sweep, a reproduction) carries the marker file
``.ccsim-files``: a header line, then one path per line (relative to the directory) of each file
ccsim wrote there. It is append-only, so recording a sweep's part files costs one short write each.

``--force`` replaces only a directory that is empty or carries the marker, and removes only the
files the marker lists: anything a user added (notes, a thesis, a ``src/``) stays. A directory
without the marker is refused with :class:`OutputExistsError` and nothing is deleted.

While a run or a sweep writes into a directory it holds an exclusive ``fcntl.flock`` on
``.ccsim-lock`` there; a second writer is refused at once (docs/safety.md).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable, Iterator

from ccsim.errors import CcsimError, OutputExistsError

__all__ = [
    "MARKER_FILE",
    "LOCK_FILE",
    "is_owned",
    "owned_files",
    "record_files",
    "write_marker",
    "check_replaceable",
    "check_output_dir",
    "remove_owned_files",
    "writer_lock",
    "tree_files",
    "write_directory",
    "remove_stale_staging",
    "STAGING_FILE",
]

MARKER_FILE = ".ccsim-files"
LOCK_FILE = ".ccsim-lock"
# In a staging directory while it is written: "<pid> <process start time>" of the writer, so a later
# ccsim can tell a directory left by a killed writer from one still being written (remove_stale_staging).
STAGING_FILE = ".ccsim-staging"
_STAGING_NAME = re.compile(r"\..+\.(\d+)\.[0-9a-f]{8}\.tmp")  # _sibling(out, "tmp")
_HEADER = "# ccsim output directory: the files ccsim wrote here, one per line; --force removes only these\n"
_MAX_MARKER_BYTES = 64 * 1024 * 1024  # a sweep of 10^5 runs lists ~5 MB


def is_owned(directory: Path) -> bool:
    """Whether ``directory`` carries the marker (a regular file, not a link someone planted)."""
    marker = directory / MARKER_FILE
    return marker.is_file() and not marker.is_symlink()


def owned_files(directory: Path) -> list[str]:
    """The relative paths the marker lists, each checked to stay inside ``directory`` (a hostile marker
    naming ``../x`` or ``/etc/passwd`` is ignored line by line, never followed)."""
    marker = directory / MARKER_FILE
    with open(marker, "rb") as f:
        data = f.read(_MAX_MARKER_BYTES + 1)
    if len(data) > _MAX_MARKER_BYTES:
        raise OutputExistsError(f"{marker}: larger than {_MAX_MARKER_BYTES} bytes; refusing to use it")
    seen: dict[str, None] = {}
    for raw in data.decode("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _safe_relative(line) and line not in (MARKER_FILE, LOCK_FILE):
            seen[line] = None
    return list(seen)


def _safe_relative(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and "\\" not in name and "\0" not in name


def write_marker(directory: Path, files: Iterable[str]) -> None:
    """Starts (or restarts) the marker of ``directory`` with ``files``."""
    tmp = directory / f".{MARKER_FILE}.{os.getpid()}.tmp"
    tmp.write_text(_HEADER + "".join(f"{name}\n" for name in files), encoding="utf-8")
    os.replace(tmp, directory / MARKER_FILE)


def record_files(directory: Path, files: Iterable[str], *, skip_known: bool = False) -> None:
    """Adds ``files`` (relative paths) to the marker; starts one if there is none. ``skip_known``
    leaves out names already listed (a report or plot rewritten again and again); a sweep's new part
    files do not need the check, which reads the whole marker."""
    names = [str(name) for name in files]
    if skip_known and is_owned(directory):
        known = set(owned_files(directory))
        names = [name for name in names if name not in known]
        if not names:
            return
    if not is_owned(directory):
        write_marker(directory, names)
        return
    with open(directory / MARKER_FILE, "a", encoding="utf-8") as f:
        f.write("".join(f"{name}\n" for name in names))


def tree_files(directory: Path) -> list[str]:
    """Every file under ``directory`` as a relative path (what a freshly written directory holds)."""
    names = []
    for root, _, files in os.walk(directory):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), directory)
            if rel not in (MARKER_FILE, LOCK_FILE):
                names.append(rel.replace(os.sep, "/"))
    return sorted(names)


def check_replaceable(out: Path, what: str = "ccsim output") -> None:
    """Raises OutputExistsError unless ``out`` is an empty directory or carries the marker."""
    if out.is_symlink() or not out.is_dir():
        raise OutputExistsError(f"{out}: exists and is not a directory")
    if is_owned(out):
        return
    if any(out.iterdir()):
        raise OutputExistsError(f"{out}: exists and is not a {what} directory (no {MARKER_FILE}); refusing to replace it")


def check_output_dir(out: Path, force: bool) -> None:
    """Raises OutputExistsError unless ``out`` is free, or ``force`` and ``out`` is an empty directory or
    one ccsim wrote (it carries the marker, ccsim.outdir): a mistyped ``--out ~ --force`` or a
    directory that merely holds a ``meta.json`` is never touched."""
    if not out.exists() and not out.is_symlink():
        return
    if not force:
        raise OutputExistsError(f"{out}: already exists (use --force to replace it)")
    check_replaceable(out, "ccsim run")


def remove_owned_files(out: Path) -> None:
    """Deletes the files the marker lists (and directories left empty by that), then the marker.
    Files ccsim did not write stay where they are."""
    if not is_owned(out):
        return
    root = out.resolve()
    dirs: set[Path] = set()
    for name in owned_files(out):
        path = out / name
        try:
            parent = path.parent.resolve()
        except OSError:
            continue
        if parent != root and root not in parent.parents:  # a symlinked subdirectory leads elsewhere
            continue
        if path.is_file() or path.is_symlink():
            path.unlink(missing_ok=True)
        rel_parent = path.parent
        while rel_parent != out and out in rel_parent.parents:
            dirs.add(rel_parent)
            rel_parent = rel_parent.parent
    for directory in sorted(dirs, key=lambda d: len(d.parts), reverse=True):
        try:
            directory.rmdir()
        except OSError:  # not empty: it holds a user's file
            pass
    (out / MARKER_FILE).unlink(missing_ok=True)


_held: dict[str, int] = {}  # directory (real path) -> depth of writer_lock calls in this process


@contextmanager
def writer_lock(directory: Path) -> Iterator[None]:
    """Holds an exclusive lock on ``directory`` (``.ccsim-lock``); a second writer gets one line.
    Re-entrant within one process (``reproduce`` holds it around the sweep, which takes it too):
    flock would otherwise refuse the second open file of the same process."""
    key = os.path.realpath(directory)
    if _held.get(key):
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    path = directory / LOCK_FILE
    try:  # O_NOFOLLOW: a planted symlink must not make ccsim create or lock a file elsewhere
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise OutputExistsError(f"{path}: cannot lock the directory: {e.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputExistsError(f"{directory}: another ccsim process is writing into it (locked); wait for it to finish") from None
            raise
        _held[key] = 1
        try:
            yield
        finally:
            del _held[key]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def write_directory(out: Path, force: bool, write: Callable[[Path], None], what: str) -> Path:
    """Has ``write`` fill a hidden staging directory next to ``out``, then moves its files into ``out``
    with the marker: a failure at any point leaves no half-written ``out`` (the staging directory is
    removed) and an existing ``out`` is replaced only with ``force``, and only the files ccsim wrote
    there. ``what`` names the directory in errors ("run directory")."""
    check_output_dir(out, force)
    remove_stale_staging(out.parent)
    staging = _sibling(out, "tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging.mkdir()  # not mkdtemp: that would make the directory private (0700)
        (staging / STAGING_FILE).write_text(f"{os.getpid()} {_started(os.getpid())}\n", encoding="ascii")
    except OSError as e:  # --out /proc/x, a read-only or full file system, a file on the way
        shutil.rmtree(staging, ignore_errors=True)
        reason = "a file is in the way, not a directory" if isinstance(e, FileExistsError) else e.strerror
        raise CcsimError(f"{out}: cannot create the output directory ({reason or e.__class__.__name__})") from None
    try:
        write(staging)
        (staging / STAGING_FILE).unlink()
        _replace_dir(staging, out, force)
    except BaseException as e:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(e, OSError) and not isinstance(e, CcsimError):  # a full disk, permissions: one line, nothing half-written
            raise CcsimError(f"{out}: cannot write the {what} ({e.strerror or e})") from None
        raise
    return out


def _replace_dir(staging: Path, out: Path, force: bool) -> None:
    """Moves the files written in ``staging`` into ``out``. A fresh ``out`` is one rename; an existing
    one (``force``) loses only the files its marker lists, so files a user added survive."""
    write_marker(staging, tree_files(staging))
    if not out.exists() and not out.is_symlink():
        try:
            os.replace(staging, out)
        except OSError:  # another process created it meanwhile
            raise OutputExistsError(f"{out}: already exists (use --force to replace it)") from None
        return
    check_output_dir(out, force)
    with writer_lock(out):
        check_output_dir(out, force)
        new = tree_files(staging)
        previous = set(owned_files(out)) if is_owned(out) else set()
        for name in new:  # never overwrite a file ccsim did not write
            if name not in previous and (out / name).exists():
                raise OutputExistsError(f"{out / name}: exists and was not written by ccsim; refusing to replace it")
        remove_owned_files(out)
        for name in new:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / name, out / name)
        os.replace(staging / MARKER_FILE, out / MARKER_FILE)
    shutil.rmtree(staging, ignore_errors=True)



def _sibling(out: Path, tag: str) -> Path:
    """A hidden, unused name next to ``out`` (same filesystem, so os.replace is a rename)."""
    return out.parent / f".{out.name}.{os.getpid()}.{os.urandom(4).hex()}.{tag}"


def remove_stale_staging(parent: Path) -> list[Path]:
    """Removes the staging directories in ``parent`` that a killed writer left (SIGKILL, a power
    cut: nothing ran to remove them) and returns them. Only ccsim's own are touched: a directory
    (not a link) named as :func:`_sibling` names them, owned by this user, holding the
    :data:`STAGING_FILE` stamp of the process named in its name, and that process no longer runs (its
    pid is gone, or belongs to a process started at another time). A staging directory still being
    written, and anything else, stays."""
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        m = _STAGING_NAME.fullmatch(entry.name)
        if not m:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            stamp = Path(entry.path) / STAGING_FILE
            if stamp.is_symlink() or not stamp.is_file():
                continue
            pid_text, _, started = stamp.read_text(encoding="ascii").strip().partition(" ")
        except (OSError, UnicodeDecodeError):
            continue
        if pid_text != m.group(1) or _writer_runs(int(pid_text), started):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


def _started(pid: int) -> str:
    """The start time of process ``pid`` (Linux: field 22 of ``/proc/<pid>/stat``, clock ticks since
    boot); ``"?"`` where it cannot be read. With the pid it names one process, even after the pid is
    reused."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return "?"


def _writer_runs(pid: int, started: str) -> bool:
    """Whether the process that wrote a staging stamp still runs (when in doubt: yes)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: a process of another user has the pid
        pass
    now = _started(pid)
    return started == "?" or now == "?" or now == started
