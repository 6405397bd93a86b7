"""The one progress bar of ccsim: a transient rich bar on stderr, for a run and for a sweep.

It appears only on a terminal (never in logs and pipes) and, with ``delay_s``, only once the work
has lasted that long, so short runs print nothing.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["ProgressBar"]


class ProgressBar:
    """``label [bar] completed/total unit elapsed remaining``; use as a context manager.

    ``decimals`` formats the counter (1 for simulated seconds, 0 for counted runs); ``started`` is the
    ``time.perf_counter()`` that ``delay_s`` counts from (default: now).
    """

    def __init__(
        self,
        label: str,
        total: float,
        unit: str,
        *,
        completed: float = 0,
        decimals: int = 0,
        enabled: bool = True,
        delay_s: float = 0.0,
        started: float | None = None,
    ) -> None:
        self._label = label
        self._total = total
        self._unit = unit
        self._completed = completed
        self._decimals = decimals
        self._enabled = enabled
        self._delay_s = delay_s
        self._started = time.perf_counter() if started is None else started
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> "ProgressBar":
        self._show_when_due()
        return self

    def update(self, completed: float) -> None:
        self._completed = completed
        self._show_when_due()
        if self._bar is not None:
            self._bar.update(self._task, completed=completed)

    def advance(self, by: float = 1) -> None:
        self.update(self._completed + by)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def _show_when_due(self) -> None:
        if self._bar is not None or not self._enabled or time.perf_counter() - self._started < self._delay_s:
            return
        from rich.console import Console  # lazy: start-up time (rich is loaded only when a bar may show)

        console = Console(stderr=True)
        if not console.is_terminal:  # no bar in logs and pipes
            self._enabled = False
            return
        # lazy: only on a terminal (5-10 ms)
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        d = self._decimals
        self._bar = Progress(
            TextColumn(self._label),
            BarColumn(),
            TextColumn(f"{{task.completed:.{d}f}}/{{task.total:.{d}f}} {self._unit}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task(self._label, total=self._total, completed=self._completed)
