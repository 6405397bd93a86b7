"""The bad-input corpus (tests/corpus/, docs/safety.md): each case is a directory with ``args`` (the
ccsim command line; ``{case}`` is the case directory, ``{tmp}`` a fresh temporary directory), ``why``
(what is wrong) and the input files. Every case must end with exit status 2 and one ``error:`` line on
stderr, never a traceback, quickly."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "corpus"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "args").is_file())


def test_the_corpus_is_there():
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_exit_2(case, tmp_path):
    pytest.importorskip("ccsim._core")
    directory = CORPUS / case
    args = (directory / "args").read_text().strip().format(case=directory, tmp=tmp_path)
    ccsim = Path(sys.executable).parent / "ccsim"
    start = time.monotonic()
    done = subprocess.run([str(ccsim), *shlex.split(args)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    seconds = time.monotonic() - start
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (case, done.returncode, done.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), (case, done.stderr[-2000:])
    assert "Traceback" not in done.stderr + done.stdout
    assert seconds < 20, (case, seconds)
