"""Claims whose measure reports its own outcome in one line: ``"<value> | tolerance: <T> | HOLDS"`` (or
``FAILS``, or ``PARTLY`` when the claim's declared partial rule holds), or ``"<value> | SHOWN (<why>)"`` for a sensitivity point with no paper value. :func:`text_claim`
splits that line into the claims table's columns (ours, and a :class:`Verdict`), so these rows carry
the project's verdict labels like every other experiment's."""

from __future__ import annotations

from typing import Any, Callable

from ccsim.experiments.registry import Claim, Verdict

__all__ = ["text_claim", "split_outcome"]


def split_outcome(text: str) -> tuple[str, bool | None | str, str]:
    """(value, holds, reason) of a measure's line: holds True for HOLDS, False for FAILS, "partly" for
    PARTLY, None for SHOWN."""
    parts = [p.strip() for p in str(text).split(" | ")]
    value, last = parts[0], parts[-1]
    tolerance = next((p[len("tolerance:"):].strip() for p in parts[1:] if p.startswith("tolerance:")), "")
    if last.startswith("HOLDS") or last.startswith("FAILS"):
        holds = last.startswith("HOLDS")
        return value, holds, f"{'within' if holds else 'outside'} the tolerance ({tolerance})" if tolerance else ""
    if last.startswith("PARTLY"):
        return value, "partly", f"{last[len('PARTLY'):].strip(' ()') or 'only the partial rule holds'} (tolerance: {tolerance})"
    if last.startswith("SHOWN"):
        why = last[len("SHOWN"):].strip(" ()")
        return value, None, f"sensitivity or prediction, not judged against the paper ({why})" if why else "sensitivity point, no paper value"
    return str(text), None, "the measure gave no outcome"


def text_claim(description: str, paper: str, measure: Callable[[Any], str], where: str, tolerance: str, **fields: Any) -> Claim:
    """A :class:`Claim` from a measure that returns one outcome line (see the module docstring);
    ``tolerance`` is the same rule stated up front for the table's tolerance column; ``fields`` are the
    other :class:`Claim` fields (``id``, ``kind``, ``reason``)."""

    def ours(sweep: Any) -> str:
        return split_outcome(measure(sweep))[0]

    def verdict(sweep: Any) -> Verdict:
        _, holds, reason = split_outcome(measure(sweep))
        if holds == "partly":
            return Verdict(False, reason, partly=True)
        return Verdict(holds, reason)  # type: ignore[arg-type]

    return Claim(description, paper, ours, where, verdict=verdict, tolerance=tolerance, **fields)
