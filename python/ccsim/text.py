"""User strings in everything ccsim shows or writes for people: a flow name, a run label or a plan
value may hold ESC, BEL, NUL or a bidi control (a shared scenario file is untrusted). Printed raw
they move the cursor or retitle the window; in a figure, an HTML page or an SVG a right-to-left
override makes ``good\\u202egnp.exe`` read ``goodexe.png``; in a CSV cell a leading ``=`` is a
spreadsheet formula.

One rule (docs/safety.md, "User strings in output"): every control, format (bidi, zero-width) and
line/paragraph separator character other than a plain space is shown escaped (``\\x1b``,
``\\u202e``) by :func:`safe_text`, on the terminal, in figures (:func:`sanitise_figure`, before a
figure is drawn, so matplotlib's own warnings never print the raw character either), in HTML
reports (:func:`safe_html`) and in CSV files, where a text cell that still starts with ``=``,
``+``, ``-`` or ``@`` also gets a leading ``'`` (:func:`safe_csv_cell`, OWASP's rule for CSV
injection)."""

from __future__ import annotations

import html
import unicodedata
from typing import Any

__all__ = ["safe_text", "safe_for_terminal", "safe_html", "safe_csv_cell", "sanitise_figure", "MAX_SHOWN_CHARS"]

MAX_SHOWN_CHARS = 200
_FORMULA_STARTS = ("=", "+", "-", "@")


def _shown(ch: str) -> str:
    if ch == " " or (ch.isprintable() and unicodedata.category(ch) not in ("Cf", "Zl", "Zp")):
        return ch
    if ord(ch) < 0x100:
        return f"\\x{ord(ch):02x}"
    if ord(ch) < 0x10000:
        return f"\\u{ord(ch):04x}"
    return f"\\U{ord(ch):08x}"


def safe_text(value: object, limit: int | None = MAX_SHOWN_CHARS, keep: str = "") -> str:
    """``str(value)`` with every control / format / separator character other than a plain space
    (and the characters in ``keep``: ``"\\n"`` for multi-line text) shown escaped, cut to ``limit``
    characters (``...`` marks the cut; None: no cut)."""
    text = str(value)
    cut = limit is not None and len(text) > limit
    if cut:
        text = text[:limit]
    if text.isascii() and text.isprintable():  # the common case, quickly
        return text + ("..." if cut else "")
    return "".join(ch if ch in keep else _shown(ch) for ch in text) + ("..." if cut else "")


def safe_for_terminal(value: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """:func:`safe_text` for a line on the terminal."""
    return safe_text(value, limit)


def safe_html(value: object, quote: bool = True, keep: str = "") -> str:
    """:func:`safe_text` (uncut), then HTML-escaped."""
    return html.escape(safe_text(value, None, keep), quote=quote)


def safe_csv_cell(value: Any) -> Any:
    """A CSV cell: text by :func:`safe_text` (uncut) and a leading ``'`` if it would start a formula;
    numbers and missing values as they are."""
    if not isinstance(value, str):
        return value
    text = safe_text(value, None)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def sanitise_figure(fig: Any) -> None:
    """Every text of ``fig`` (titles, labels, legend entries, tick labels, annotations) by
    :func:`safe_text` (uncut; line breaks kept), before it is drawn."""
    from matplotlib.text import Text  # lazy: only a caller that has a figure has matplotlib loaded
    from matplotlib.ticker import FixedFormatter, FuncFormatter  # lazy: as above

    for ax in fig.axes:  # tick labels are made at draw time, from the formatter's labels (set_xticks)
        for axis in (ax.xaxis, ax.yaxis):
            for formatter in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if isinstance(formatter, FixedFormatter):
                    formatter.seq = [safe_text(label, None, keep="\n") for label in formatter.seq]
                elif isinstance(formatter, FuncFormatter) and not getattr(formatter.func, "_ccsim_safe", False):
                    formatter.func = _safe_labels(formatter.func)
    for artist in fig.findobj(Text):
        text = artist.get_text()
        if text and not (text.isascii() and text.isprintable()):
            shown = safe_text(text, None, keep="\n")
            if shown != text:
                artist.set_text(shown)


def _safe_labels(func: Any) -> Any:
    def labels(x: float, pos: int | None = None) -> str:
        return safe_text(func(x, pos), None, keep="\n")

    labels._ccsim_safe = True  # type: ignore[attr-defined]
    return labels
