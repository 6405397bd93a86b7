"""The one progress bar (ccsim.progress): shown only on a terminal and only once its delay has passed."""

from __future__ import annotations

import time

from ccsim.progress import ProgressBar


def test_no_bar_off_a_terminal(capsys):
    with ProgressBar("sweep", 3, "runs") as bar:
        bar.advance()
        assert bar._bar is None
    assert capsys.readouterr().err == ""


def test_bar_on_a_terminal_counts_from_the_resumed_runs(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich treats stderr as a terminal
    monkeypatch.delenv("NO_COLOR", raising=False)
    with ProgressBar("sweep", 5, "runs", completed=2) as bar:
        assert bar._bar is not None  # shown at once: no delay
        bar.advance()
        bar.advance()
        assert bar._bar.tasks[0].completed == 4
        assert bar._bar.tasks[0].total == 5


def test_bar_waits_for_its_delay(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    with ProgressBar("simulating", 10.0, "s simulated", decimals=1, delay_s=60.0) as bar:
        bar.update(5.0)
        assert bar._bar is None  # a short run shows nothing
    started = time.perf_counter() - 2.0  # the run began two seconds ago
    with ProgressBar("simulating", 10.0, "s simulated", decimals=1, delay_s=1.0, started=started) as bar:
        bar.update(5.0)
        assert bar._bar is not None
        assert bar._bar.tasks[0].completed == 5.0
