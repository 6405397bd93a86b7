"""Network namespaces that cannot outlive the run, and processes started inside them.

A namespace here is anonymous: a small holder process (``unshare --net sleep``) creates it and keeps
it alive; nothing is bind-mounted under /run/netns. Every process the testbed starts, holders
included, is told by the kernel to die with its parent (``PR_SET_PDEATHSIG``), so when the harness
exits, however it exits (SIGKILL too), the processes die, the namespaces with their veths, qdiscs
and sockets vanish, and the loader's BPF link closes. Names cannot collide between parallel runs
because there are none.

Each process also carries ``CCSIM_TESTBED=<harness pid>`` in its environment, so ``ccsim testbed
clean`` can find one whose harness is gone (should the kernel ever fail to deliver the signal).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence

from ccsim.errors import CcsimError

__all__ = ["Namespace", "spawn", "TAG_VARIABLE", "stray_processes"]

TAG_VARIABLE = "CCSIM_TESTBED"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env[TAG_VARIABLE] = str(os.getpid())
    return env


def spawn(argv: Sequence[str], *, stdin: int | None = None, stdout: int | None = None, stderr: int | None = None,
          text: bool = True) -> subprocess.Popen:
    """Starts ``argv`` so that it dies with this process."""
    try:
        return subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=stderr, text=text,
                                preexec_fn=_die_with_parent, env=_environment(), close_fds=True)
    except FileNotFoundError:
        raise CcsimError(f"kernel testbed: {argv[0]} not found (run `ccsim testbed check`)") from None


class Namespace:
    """One anonymous network namespace, alive while its holder process is."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.holder = spawn(["unshare", "--net", "--", "sleep", "infinity"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
        self.path = Path(f"/proc/{self.holder.pid}/ns/net")
        own = os.readlink("/proc/self/ns/net")
        # wait until unshare has moved the holder into its own namespace
        for _ in range(2000):
            if self.holder.poll() is not None:
                err = self.holder.stderr.read().strip() if self.holder.stderr else ""
                raise CcsimError(f"kernel testbed: cannot create a network namespace ({err or 'unshare failed'})")
            try:
                if os.readlink(self.path) != own and Path(f"/proc/{self.holder.pid}/comm").read_text().strip() == "sleep":
                    break
            except OSError:
                pass
            time.sleep(0.001)
        else:
            raise CcsimError("kernel testbed: the namespace holder did not start")

    @property
    def pid(self) -> int:
        return self.holder.pid

    def argv(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside this namespace."""
        return ["nsenter", f"--net={self.path}", "--", *argv]

    def run(self, argv: Sequence[str], input: str | None = None) -> str:
        """Runs ``argv`` inside the namespace and returns its output; a failure is a CcsimError."""
        try:
            proc = subprocess.run(self.argv(argv), input=input, capture_output=True, text=True,
                                  preexec_fn=_die_with_parent, env=_environment(), timeout=30)
        except FileNotFoundError:
            raise CcsimError("kernel testbed: nsenter not found (util-linux)") from None
        if proc.returncode != 0:
            raise CcsimError(f"kernel testbed: {' '.join(argv[:4])} in the {self.role} namespace failed: "
                             f"{(proc.stderr or proc.stdout).strip()[:300]}")
        return proc.stdout

    def spawn(self, argv: Sequence[str], **kwargs: object) -> subprocess.Popen:
        return spawn(self.argv(argv), **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        if self.holder.poll() is None:
            self.holder.kill()
        self.holder.wait()


def stray_processes() -> list[tuple[int, str]]:
    """Processes started by a testbed whose harness is no longer running: (pid, command)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        for item in env:
            if item.startswith(TAG_VARIABLE.encode() + b"="):
                owner = item.split(b"=", 1)[1]
                if owner.isdigit() and not Path(f"/proc/{int(owner)}").exists():
                    found.append((int(entry.name), cmd))
                break
    return found
