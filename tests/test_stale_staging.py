"""A writer killed while it fills its staging directory (SIGKILL: no handler runs) leaves the hidden
``.<name>.<pid>.<hex>.tmp`` directory behind; the next ccsim writing into the same parent removes it,
and only such directories of writers that no longer run (docs/safety.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ccsim.outdir import write_directory

WRITER = """
import sys, time
from pathlib import Path
from ccsim.outdir import write_directory

def write(staging):
    (staging / "meta.json").write_text("{}")
    print(staging, flush=True)
    time.sleep(600)

write_directory(Path(sys.argv[1]), False, write, "run directory")
"""


def _killed_writer(out: Path) -> Path:
    """The staging directory of a writer SIGKILLed in the middle of writing ``out``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(out)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        staging = Path(writer.stdout.readline().strip())  # printed once the staging holds a file
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
    return staging


def test_the_next_write_removes_a_killed_writers_staging_directory(tmp_path: Path) -> None:
    staging = _killed_writer(tmp_path / "run1")
    assert staging.parent == tmp_path and staging.name.startswith(".run1.") and (staging / "meta.json").is_file()
    assert not (tmp_path / "run1").exists()

    write_directory(tmp_path / "run2", False, lambda d: (d / "meta.json").write_text("{}"), "run directory")
    assert not staging.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run2"]


def test_only_ccsims_stale_staging_directories_are_removed(tmp_path: Path) -> None:
    from ccsim.outdir import STAGING_FILE, remove_stale_staging

    stale = _killed_writer(tmp_path / "run1")
    # a staging directory still being written (this process is its writer)
    live = tmp_path / f".run2.{os.getpid()}.0123abcd.tmp"
    live.mkdir()
    (live / STAGING_FILE).write_text(f"{os.getpid()} {_own_start()}\n")
    # look-alikes a user may have: no stamp, a file, a stamp naming another pid
    unstamped = tmp_path / ".notes.99999999.0123abcd.tmp"
    unstamped.mkdir()
    a_file = tmp_path / ".x.99999999.0123abcd.tmp"
    a_file.write_text("mine")
    other = tmp_path / ".y.99999998.0123abcd.tmp"
    other.mkdir()
    (other / STAGING_FILE).write_text("12345 1\n")
    plain = tmp_path / "results.tmp"
    plain.mkdir()

    assert remove_stale_staging(tmp_path) == [stale]
    assert not stale.exists()
    assert all(p.exists() for p in (live, unstamped, a_file, other, plain))


def _own_start() -> str:
    from ccsim.outdir import _started

    return _started(os.getpid())
