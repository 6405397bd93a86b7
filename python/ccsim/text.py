"""User strings on the terminal: a flow name or a plan value may hold ESC, BEL or NUL (a shared
scenario file is untrusted), which printed raw would move the cursor, retitle the window or hide
text. Every user string that reaches the terminal goes through :func:`safe_for_terminal`."""

from __future__ import annotations

import unicodedata

__all__ = ["safe_for_terminal", "MAX_SHOWN_CHARS"]

MAX_SHOWN_CHARS = 200


def safe_for_terminal(value: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """``str(value)`` with every control / format / separator character other than a plain space
    shown escaped (``\\x1b``, ``\\u202e``) and cut to ``limit`` characters (``...`` marks the cut)."""
    text = str(value)
    cut = len(text) > limit
    if cut:
        text = text[:limit]
    out = []
    for ch in text:
        if ch == " " or (ch.isprintable() and unicodedata.category(ch) not in ("Cf", "Zl", "Zp")):
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out) + ("..." if cut else "")
