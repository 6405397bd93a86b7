"""Testbed runs that see each other: one lock for the machine, and the other testbeds alive.

Two testbed runs at once share the CPUs, and the delay line's timing is what a run's RTTs are made
of (docs/kernel.md, "Health"). A run therefore takes an exclusive ``flock`` on one file for the
machine (``/run/lock/ccsim-testbed.lock``; ``CCSIM_TESTBED_LOCK`` moves it) for its whole length. A
second run is refused, naming the first one's pid, scenario and age, unless it was told to wait for
the lock or to run beside it anyway (then the run's health verdict says so). The kernel drops the
lock with the process however it ends (SIGKILL too), so a killed run never leaves it held.

Runs of older ccsim versions take no lock; :func:`other_testbeds` finds them (and any run beside this
one) by the ``CCSIM_TESTBED=<harness pid>`` tag every testbed process carries (ccsim.kernel.netns).
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
import time
from pathlib import Path

from ccsim.errors import CcsimError
from ccsim.kernel.netns import TAG_VARIABLE

__all__ = ["TestbedBusyError", "TestbedLock", "lock_path", "other_testbeds", "LOCK_VARIABLE"]

LOCK_VARIABLE = "CCSIM_TESTBED_LOCK"


class TestbedBusyError(CcsimError):
    """Another testbed run holds the machine's testbed lock."""


def lock_path() -> Path:
    """The machine's testbed lock file: ``$CCSIM_TESTBED_LOCK``, else in /run/lock (a tmpfs, gone at
    reboot), else in the temporary directory."""
    given = os.environ.get(LOCK_VARIABLE)
    if given:
        return Path(given)
    base = Path("/run/lock")
    return (base if base.is_dir() and os.access(base, os.W_OK) else Path(tempfile.gettempdir())) / "ccsim-testbed.lock"


class TestbedLock:
    """The machine's testbed lock, held from :meth:`acquire` until :meth:`release` or process exit."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or lock_path()
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def holder(self) -> str:
        """What the holding run wrote into the lock file (``pid=N since=T scenario=S``), or ``""``."""
        try:
            return self.path.read_text().strip()
        except OSError:
            return ""

    def acquire(self, what: str, wait: bool = False) -> None:
        """Takes the lock for a run of ``what`` (a scenario's name). Without ``wait``, a held lock is a
        :class:`TestbedBusyError` naming the holder; with it, blocks until the holder ends."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            raise TestbedBusyError(f"kernel testbed: another testbed run is running ({_describe(self.holder())}): two runs "
                                   f"share the CPUs and the delay line's timing; wait for it (--wait), or run beside it "
                                   f"with --beside-others (its health verdict then says so)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid={os.getpid()} since={time.time():.0f} scenario={' '.join(what.split())[:200]}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None

    def __enter__(self) -> "TestbedLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _describe(holder: str) -> str:
    fields = dict(item.split("=", 1) for item in holder.split(" ", 2) if "=" in item)
    parts = [f"pid {fields['pid']}"] if "pid" in fields else []
    if "scenario" in fields:
        parts.append(f"scenario {fields['scenario']}")
    if fields.get("since", "").isdigit():
        parts.append(f"for {time.time() - int(fields['since']):.0f} s")
    return ", ".join(parts) or "holder unknown"


def other_testbeds() -> list[int]:
    """Harness pids of the testbed runs alive on this machine other than this process's own: every
    process tagged ``CCSIM_TESTBED=<pid>`` whose harness still runs."""
    own = os.getpid()
    harnesses: set[int] = set()
    needle = TAG_VARIABLE.encode() + b"="
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for item in env:
            if item.startswith(needle):
                owner = item[len(needle):]
                if owner.isdigit() and int(owner) != own and Path(f"/proc/{int(owner)}").exists():
                    harnesses.add(int(owner))
                break
    return sorted(harnesses)
