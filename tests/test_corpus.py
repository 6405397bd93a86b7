"""The bad-input corpus (tests/corpus/, docs/safety.md): each case is a directory with ``args`` (the
ccsim command line; ``{case}`` is the case directory, ``{tmp}`` a fresh temporary directory), ``why``
(what is wrong) and the input files. Every case must end with exit status 2 and one ``error:`` line on
stderr, never a traceback, quickly, and leave its (copied) input directory as it was."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "corpus"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "args").is_file())


def test_the_corpus_is_there():
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_exit_2(case, tmp_path):
    pytest.importorskip("ccsim._core")
    directory = tmp_path / case  # a copy: a case must not be able to change the corpus
    shutil.copytree(CORPUS / case, directory)
    args = (directory / "args").read_text().strip().format(case=directory, tmp=tmp_path)
    ccsim = Path(sys.executable).parent / "ccsim"
    # no time bound (a loaded machine is slow); the timeout only ends a hang
    done = subprocess.run([str(ccsim), *shlex.split(args)], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (case, done.returncode, done.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), (case, done.stderr[-2000:])
    assert "Traceback" not in done.stderr + done.stdout
    assert _tree(directory) == _tree(CORPUS / case), "a refused command changed its input directory"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
