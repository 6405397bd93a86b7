"""Which key of the scenario file each path of the resolved document comes from.

``Scenario._resolve`` notes, as it writes a path of the resolved document, the key of the file that
produced it (``topology.bottleneck.rate_bps`` from ``topology.bottleneck_rate``,
``flows[3].intervals[0].start_ns`` from ``flows[1].start``); an error the engine reports by its
resolved path is then named by the user's key (:meth:`KeyRecord.user_key`). The flows of one
``[[flows]]`` entry share one table, so the record grows with the entries, not with ``count``.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["KeyRecord", "KeyScope"]

_FLOW = re.compile(r"flows\[(\d+)\](.*)")


def _parent(path: str) -> tuple[str, str]:
    """``a.b[2]`` -> (``a.b``, ``[2]``); ``a.b`` -> (``a``, ``.b``); ``a`` -> ("", ``.a``)."""
    if path.endswith("]"):
        i = path.rfind("[")
        return path[:i], path[i:]
    i = path.rfind(".")
    return (path[:i], path[i:]) if i >= 0 else ("", "." + path)


class KeyScope:
    """Notes under a resolved path: ``note("rate_bps", "topology.bottleneck_rate")`` below
    ``topology.bottleneck``; the user's key is always written whole."""

    def __init__(self, table: dict[str, tuple[str, bool]], prefix: str) -> None:
        self._table = table
        self._prefix = prefix

    def note(self, resolved: str, user_key: str, *, same_below: bool = False) -> None:
        """``resolved`` (relative to this scope) comes from ``user_key``; with ``same_below`` the paths
        under it are the user's own keys under ``user_key`` (an algorithm's ``params``, a queue table)."""
        path = f"{self._prefix}.{resolved}" if self._prefix and not resolved.startswith("[") else self._prefix + resolved
        self._table[path] = (user_key, same_below)

    def below(self, resolved: str) -> "KeyScope":
        """The scope of the resolved path ``resolved`` under this one."""
        path = f"{self._prefix}.{resolved}" if self._prefix and not resolved.startswith("[") else self._prefix + resolved
        return KeyScope(self._table, path)


class KeyRecord:
    """The notes of one resolution: paths outside ``flows`` in one table, and one table per
    ``[[flows]]`` entry for the paths below each of its flows (``flows[j]`` itself excluded)."""

    def __init__(self) -> None:
        self._paths: dict[str, tuple[str, bool]] = {}
        self._first_flow: list[int] = []  # engine index of each entry's first flow
        self._entries: list[dict[str, tuple[str, bool]]] = []

    def scope(self, resolved: str = "") -> KeyScope:
        """Notes outside ``flows`` (``run``'s keys, ``topology``)."""
        return KeyScope(self._paths, resolved)

    def entry(self, first_flow: int) -> KeyScope:
        """Notes for the flows of the next ``[[flows]]`` entry, the first of which is engine flow
        ``first_flow``; paths relative to one of its flows (``traffic.tcp.sack``)."""
        self._first_flow.append(first_flow)
        self._entries.append({})
        return KeyScope(self._entries[-1], "")

    def user_key(self, resolved: str) -> str:
        """The user's key behind ``resolved``: the note of the longest noted path that starts it
        (with the rest appended if that note says the keys below are the user's own); the path
        itself if nothing was noted for it."""
        table, path = self._paths, resolved
        m = _FLOW.fullmatch(resolved)
        if m and self._entries:
            i = max(0, bisect.bisect_right(self._first_flow, int(m.group(1))) - 1)
            table, path = self._entries[i], m.group(2).removeprefix(".")
            if not path:
                return f"flows[{i}]"
        rest = ""
        while path:
            if path in table:
                key, same_below = table[path]
                return key + (rest if same_below else "")
            path, step = _parent(path)
            rest = step + rest
        return resolved
