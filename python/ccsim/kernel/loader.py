"""Registering a kernel twin for the length of a run (the ``ccsim_loader`` helper, native/).

A :class:`Registration` starts the loader with the algorithm's parameters and waits until the
kernel has accepted the program; the algorithm is then available to sockets under a name unique to
this run. Closing the registration closes the loader's standard input: it takes a last metrics
sample and closes its BPF link, which unregisters the algorithm. If this process dies instead, the
loader sees end of file (or its parent-death signal) and does the same; if the loader itself is
killed, the kernel closes the link. Close a registration only after the sockets using it are closed.
"""

from __future__ import annotations

import secrets
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim.errors import CcsimError, ScenarioError
from ccsim.kernel.netns import spawn

__all__ = ["Registration", "encode_params", "list_globals", "registration_name", "SHORT_NAMES"]

# Registered names are at most 15 characters: "cs" + 4 random + "_" + at most 8 of these.
SHORT_NAMES = {"delay_aimd": "daimd", "tcp_limit": "tlimit"}


def registration_name(algorithm: str) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    tag = "".join(secrets.choice(alphabet) for _ in range(4))
    return f"cs{tag}_{SHORT_NAMES.get(algorithm, algorithm)[:8]}"


def list_globals(loader: Path, obj: Path) -> dict[str, int]:
    """The object's settable globals (name -> size in bytes)."""
    proc = subprocess.run([str(loader), "--list", str(obj)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise CcsimError(f"kernel testbed: {obj.name}: {proc.stderr.strip()[:300]}")
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "var":
            out[parts[1]] = int(parts[2])
    return out


def _choices(spec: dict[str, Any]) -> list[str]:
    text = str(spec.get("range", ""))
    if not text.startswith("one of "):
        raise CcsimError(f"parameter {spec['name']}: no list of choices in the catalogue")
    return [c.strip() for c in text[len("one of "):].split(",")]


def encode_params(algorithm: str, given: dict[str, Any], catalogue: list[dict[str, Any]],
                  globals_: dict[str, int], where: str) -> tuple[dict[str, Any], list[str]]:
    """Every parameter of ``algorithm`` (the given ones, the others at their defaults) as
    ``VAR=VALUE`` settings of the BPF object, following the naming rule of bpf/ccsim_cc.h.

    Returns (the parameters used, the settings). A Rust parameter without its BPF global is an
    error: the twin would silently run with another value."""
    info = next(a for a in catalogue if a["name"] == algorithm)
    used: dict[str, Any] = {}
    settings = []
    for spec in info["params"]:
        name = spec["name"]
        value = given.get(name, spec["default"])
        used[name] = value
        candidates = [g for g in globals_ if g == f"param_{name}" or g.startswith(f"param_{name}__")]
        if len(candidates) != 1:
            raise CcsimError(f"{algorithm}: the kernel twin declares no parameter {name} (bpf/{algorithm}.bpf.c)")
        var = candidates[0]
        suffix = var[len(f"param_{name}"):]
        if spec["kind"] == "choice":
            encoded = _choices(spec).index(str(value))
        elif spec["kind"] == "bool":
            encoded = int(bool(value))
        elif suffix == "__q32":
            encoded = int(round(float(value) * 2**32))
        elif suffix == "__us":
            scale = {"ms": 1e3, "s": 1e6}.get(str(spec.get("unit")), None)
            if scale is None:
                raise CcsimError(f"{algorithm}.{name}: unit {spec.get('unit')!r} cannot be held in microseconds")
            encoded = int(round(float(value) * scale))
        else:
            if float(value) != int(float(value)):
                raise ScenarioError(f"{where}.params.{name}", f"the kernel twin takes whole numbers only, got {value}")
            encoded = int(float(value))
        if encoded < 0:
            raise ScenarioError(f"{where}.params.{name}", f"the kernel twin takes no negative values, got {value}")
        settings.append(f"{var}={encoded}")
    return used, settings


@dataclass
class Registration:
    """One registered kernel twin. ``samples`` collects the loader's metrics lines."""

    loader: Path
    obj: Path
    algorithm: str
    settings: list[str]
    interval_ms: int
    name: str = field(default_factory=str)
    map_id: int = 0
    metric_names: list[tuple[str, float]] = field(default_factory=list)
    samples: list[list[int]] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    _reader: threading.Thread | None = None

    def open(self) -> "Registration":
        self.name = self.name or registration_name(self.algorithm)
        self.proc = spawn([str(self.loader), str(self.obj), self.name, *self.settings, "-i", str(self.interval_ms)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("registered "):
            self.proc.wait()
            err = self.proc.stderr.read() if self.proc.stderr else ""
            lines = [ln for ln in err.strip().splitlines() if ln.strip()]
            raise CcsimError(f"kernel testbed: registering {self.algorithm} failed: {' | '.join(lines[-4:])[:600]}")
        fields = dict(kv.split("=", 1) for kv in line.split()[2:])
        self.map_id = int(fields.get("map_id", 0))
        names = self.proc.stdout.readline().split(maxsplit=1)
        if len(names) == 2 and names[0] == "metric_names":
            for item in names[1].strip().split(","):
                metric, _, scale = item.partition("/")
                self.metric_names.append((metric, float(scale) if scale else 1.0))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("sample "):
                self.samples.append([int(x) for x in line.split()[1:]])

    def close(self) -> None:
        """Unregisters (the loader takes a last sample, closes the link and exits)."""
        if self.proc is None:
            return
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)

    def __enter__(self) -> "Registration":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
