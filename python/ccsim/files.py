"""One bounded reader for every file ccsim reads (scenario TOML, sweep plan, meta.json, sweep.json,
experiment.json): scenario files and plans are shared like code, so they are untrusted input.

A file must be a regular file (not a FIFO, a device such as ``/dev/zero``, or a directory) of at
most :data:`MAX_TEXT_BYTES`; its size is checked before reading and the read stops one byte past
the limit, so neither a huge sparse file nor an endless stream is ever held in memory. Any failure
is one line: a :class:`ScenarioError` naming the file (docs/safety.md).
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from ccsim.errors import CcsimError, ScenarioError

__all__ = ["MAX_TEXT_BYTES", "MAX_RECORD_BYTES", "read_text_limited", "read_toml_text", "read_json", "inside"]

MAX_TEXT_BYTES = 10 * 1024 * 1024  # 10 MiB for files people write: a large scenario or plan is a few kB
# 64 MiB for the JSON records ccsim writes (meta.json, sweep.json): sweep.json grows by ~100 B per run
MAX_RECORD_BYTES = 64 * 1024 * 1024


def read_text_limited(path: str | Path, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (at most ``limit`` bytes)."""
    name = str(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not hang before the type check below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ScenarioError(name, "no such file") from None
    except OSError as e:
        raise ScenarioError(name, f"cannot read: {e.strerror or e.__class__.__name__}") from None
    except ValueError:  # os.open's "embedded null byte"
        raise ScenarioError(name.replace("\0", "\\0"), "not a file name: it contains a NUL byte") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ScenarioError(name, "cannot read: is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise ScenarioError(name, "cannot read: not a regular file (a device, FIFO or socket)")
        if info.st_size > limit:
            raise ScenarioError(name, f"too large ({info.st_size} bytes; the limit is {limit} bytes)")
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:  # the file grew while being read
            raise ScenarioError(name, f"too large (more than the limit of {limit} bytes)")
    except OSError as e:
        raise ScenarioError(name, f"cannot read: {e.strerror or e.__class__.__name__}") from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(name, "cannot read: not UTF-8 text") from None


def read_toml_text(path: str | Path) -> str:
    """:func:`read_text_limited`, and a file nested too deeply for the TOML parser (``a=[[[[...``,
    which makes it recurse until RecursionError) is refused here in one line. Other TOML errors are
    left to the caller, which names the field."""
    text = read_text_limited(path)
    check_toml_depth(text, str(path))
    return text


def check_toml_depth(text: str, source: str) -> None:
    try:
        tomllib.loads(text)
    except RecursionError:
        raise ScenarioError(source, "invalid TOML: nested too deeply") from None
    except tomllib.TOMLDecodeError:
        pass


def read_json(path: str | Path, limit: int = MAX_RECORD_BYTES) -> Any:
    """The parsed JSON file ``path``; invalid JSON is one line."""
    text = read_text_limited(path, limit)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        reason = "nested too deeply" if isinstance(e, RecursionError) else str(e)
        raise CcsimError(f"{path}: not valid JSON ({reason})") from None


def read_record(directory: Path, name: str, table: str, kind: str) -> tuple[Path, dict[str, Any]]:
    """The record ``name`` (``meta.json``, ``sweep.json``) of a ``kind`` directory (``"ccsim run"``,
    ``"sweep"``) and its parsed content, which must be a table holding the table ``table``."""
    path = directory / name
    if not path.is_file():
        raise CcsimError(f"{directory}: not a {kind} directory (no {name})")
    record = read_json(path)
    if not isinstance(record, dict) or not isinstance(record.get(table), dict):
        raise CcsimError(f"{path}: not a {kind} record (no {table} table)")
    return path, record


def inside(path: Path, directory: Path) -> bool:
    """Whether ``path`` resolves (symlinks followed) to a place inside ``directory``."""
    try:
        target, root = path.resolve(), directory.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte in the name
        return False
    return target == root or root in target.parents
