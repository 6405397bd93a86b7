"""Builds the kernel twins and the testbed's helpers from source for the running kernel.

What is built (into a cache directory keyed by the kernel release and a hash of the sources):

- ``vmlinux.h`` from the running kernel's BTF (``bpftool btf dump file /sys/kernel/btf/vmlinux``),
  so the BPF programs are compiled CO-RE against this kernel and no header is checked in;
- one ``<algorithm>.bpf.o`` per ``bpf/<algorithm>.bpf.c`` (clang ``-target bpf``);
- ``ccsim_loader`` (libbpf) and ``ccsim_delayline`` from ``native/`` (the C compiler).

A build is shared by concurrent runs: it happens under an exclusive lock and lands by rename, so a
second run waits for the first and then reuses its output.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ccsim.errors import CcsimError

__all__ = ["Build", "build", "SOURCE_DIR", "BPF_DIR", "NATIVE_DIR", "ported_algorithms", "cache_root"]

SOURCE_DIR = Path(__file__).resolve().parent
BPF_DIR = SOURCE_DIR / "bpf"
NATIVE_DIR = SOURCE_DIR / "native"
VMLINUX_BTF = Path("/sys/kernel/btf/vmlinux")
BPF_CFLAGS = ["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"]
NATIVE_CFLAGS = ["-O2", "-Wall", "-Werror"]


@dataclass(frozen=True)
class Build:
    directory: Path
    loader: Path
    delayline: Path
    objects: dict[str, Path]  # algorithm name -> .bpf.o

    def object_for(self, algorithm: str) -> Path:
        try:
            return self.objects[algorithm]
        except KeyError:
            raise CcsimError(f"{algorithm}: no kernel twin yet (ported: {', '.join(sorted(self.objects))})") from None


def ported_algorithms() -> list[str]:
    """Algorithms with a BPF twin: one ``bpf/<name>.bpf.c`` each."""
    return sorted(p.name[: -len(".bpf.c")] for p in BPF_DIR.glob("*.bpf.c"))


def _sources() -> list[Path]:
    return sorted([*BPF_DIR.glob("*.h"), *BPF_DIR.glob("*.bpf.c"), *NATIVE_DIR.glob("*.c")])


def _source_hash() -> str:
    h = hashlib.sha256()
    for path in _sources():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_root() -> Path:
    base = os.environ.get("CCSIM_KERNEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ccsim", "kernel"
    )
    return Path(base)


def _arch_define() -> str:
    machine = platform.machine()
    arch = {"x86_64": "x86", "aarch64": "arm64", "arm64": "arm64", "s390x": "s390", "ppc64le": "powerpc"}.get(machine)
    if arch is None:
        raise CcsimError(f"kernel testbed: unsupported CPU architecture {machine}")
    return f"-D__TARGET_ARCH_{arch}"


def _run(cmd: list[str], what: str, stdout: object = None) -> None:
    try:
        proc = subprocess.run(cmd, stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise CcsimError(f"kernel testbed: {cmd[0]} not found (run `ccsim testbed check`)") from None
    if proc.returncode != 0:
        detail = (proc.stderr or "").strip().splitlines()
        raise CcsimError(f"kernel testbed: building {what} failed: {' | '.join(detail[-6:]) or 'exit status ' + str(proc.returncode)}")


def build() -> Build:
    """Builds (or reuses) every program for the running kernel and returns their paths."""
    if not VMLINUX_BTF.exists():
        raise CcsimError(f"kernel testbed: {VMLINUX_BTF} missing (the kernel lacks CONFIG_DEBUG_INFO_BTF)")
    root = cache_root()
    target = root / f"{platform.release()}-{_source_hash()}"
    result = Build(
        directory=target,
        loader=target / "ccsim_loader",
        delayline=target / "ccsim_delayline",
        objects={name: target / f"{name}.bpf.o" for name in ported_algorithms()},
    )
    if target.is_dir():
        return result
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".build-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_dir():
            return result
        staging = root / f".{target.name}.{os.getpid()}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        try:
            _build_into(staging)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return result


def _build_into(out: Path) -> None:
    with open(out / "vmlinux.h", "w") as header:
        _run(["bpftool", "btf", "dump", "file", str(VMLINUX_BTF), "format", "c"], "vmlinux.h", stdout=header)
    cc = os.environ.get("CC", "cc")
    arch = _arch_define()
    for name in ported_algorithms():
        _run(["clang", *BPF_CFLAGS, arch, f"-I{out}", f"-I{BPF_DIR}", "-c", str(BPF_DIR / f"{name}.bpf.c"),
              "-o", str(out / f"{name}.bpf.o")], f"bpf/{name}.bpf.c")
    _run([cc, *NATIVE_CFLAGS, "-o", str(out / "ccsim_loader"), str(NATIVE_DIR / "ccsim_loader.c"), "-lbpf", "-lelf", "-lz"],
         "native/ccsim_loader.c")
    _run([cc, *NATIVE_CFLAGS, "-o", str(out / "ccsim_delayline"), str(NATIVE_DIR / "ccsim_delayline.c")],
         "native/ccsim_delayline.c")


def program_hashes(b: Build, algorithms: list[str]) -> dict[str, str]:
    """sha256 of each object a run loads (recorded in meta.json)."""
    return {name: hashlib.sha256(b.object_for(name).read_bytes()).hexdigest() for name in sorted(set(algorithms))}
