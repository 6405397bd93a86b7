"""What this machine lacks for the kernel testbed, each item with how to get it (``ccsim testbed check``),
and what a killed run may have left (``ccsim testbed clean``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ccsim.kernel.netns import stray_processes

__all__ = ["Prerequisite", "prerequisites", "missing_prerequisites", "APT_PACKAGES", "clean", "registered_twins",
           "held_struct_ops", "HeldOps"]

# Debian/Ubuntu packages that provide every tool below
APT_PACKAGES = "clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev gcc iproute2 ethtool util-linux procps"


@dataclass(frozen=True)
class Prerequisite:
    what: str
    ok: bool
    fix: str


def _tool(name: str, package: str) -> Prerequisite:
    return Prerequisite(name, shutil.which(name) is not None, f"apt-get install {package}")


def _libbpf() -> Prerequisite:
    found = any(Path(d, "bpf", "libbpf.h").is_file() for d in ("/usr/include", "/usr/local/include"))
    return Prerequisite("libbpf headers", found, "apt-get install libbpf-dev libelf-dev zlib1g-dev")


def _struct_ops() -> Prerequisite:
    # struct_ops links need Linux 6.4; BPF congestion control needs CONFIG_BPF_JIT and BTF
    release = os.uname().release
    m = re.match(r"(\d+)\.(\d+)", release)
    ok = bool(m) and (int(m.group(1)), int(m.group(2))) >= (6, 4)
    return Prerequisite("BPF struct_ops links (Linux >= 6.4)", ok, f"a newer kernel (this is {release})")


def prerequisites() -> list[Prerequisite]:
    return [
        Prerequisite("root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)", os.geteuid() == 0, "run as root"),
        Prerequisite("kernel BTF (/sys/kernel/btf/vmlinux)", Path("/sys/kernel/btf/vmlinux").exists(),
                     "a kernel built with CONFIG_DEBUG_INFO_BTF"),
        _struct_ops(),
        _tool("clang", "clang llvm"),
        _tool("bpftool", "bpftool"),
        _libbpf(),
        _tool("cc", "gcc"),
        _tool("ip", "iproute2"),
        _tool("tc", "iproute2"),
        _tool("ethtool", "ethtool"),
        _tool("nsenter", "util-linux"),
        _tool("unshare", "util-linux"),
        _tool("sysctl", "procps"),
    ]


def missing_prerequisites() -> list[Prerequisite]:
    return [p for p in prerequisites() if not p.ok]


def registered_twins() -> list[str]:
    """Congestion-control names of ccsim twins currently registered (``cs<tag>_<algorithm>``)."""
    try:
        names = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []
    return [n for n in names if re.fullmatch(r"cs[a-z0-9]{4}_[a-z0-9_]+", n)]


def clean(kill: bool = True) -> list[str]:
    """Ends testbed processes whose harness is gone (each by its pid). Their namespaces, veths, qdiscs
    and BPF links go with them. Returns one line per thing found."""
    report = []
    for pid, cmd in stray_processes():
        report.append(f"process {pid} of a finished testbed: {cmd[:120]}")
        if kill:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return report


@dataclass(frozen=True)
class HeldOps:
    """A twin's struct_ops map that the kernel still holds after its registration ended."""

    map_id: int
    name: str  # the tcp_congestion_ops name it was registered under


def _bpftool_json(*args: str) -> object:
    try:
        out = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return []
    # `struct_ops dump` prints its objects separated by commas, without the brackets of a list
    for text in (out, f"[{out}]"):
        try:
            return json.loads(text) if out else []
        except ValueError:
            continue
    return []


def held_struct_ops() -> list[HeldOps]:
    """ccsim twins' struct_ops maps (named ``ccsim_ops``) whose algorithm is no longer registered.

    When a run is killed, its BPF link closes and the name leaves ``tcp_available_congestion_control``
    at once, but sockets that still use the algorithm keep a reference to the map: those of the killed
    run end only when TCP gives up on them (docs/kernel.md, "Cleaning up"). Nothing can end them from
    here; the map is freed with the last of them."""
    registered = set(registered_twins())
    held = []
    for entry in _bpftool_json("struct_ops", "show"):
        if not isinstance(entry, dict) or entry.get("name") != "ccsim_ops" or "id" not in entry:
            continue
        dump = _bpftool_json("struct_ops", "dump", "id", str(entry["id"]))
        ops = next((item.get("bpf_struct_ops_tcp_congestion_ops") for item in dump if isinstance(item, dict)
                    and "bpf_struct_ops_tcp_congestion_ops" in item), None) if isinstance(dump, list) else None
        name = str((ops or {}).get("data", {}).get("name", "?"))
        if name not in registered:
            held.append(HeldOps(int(entry["id"]), name))
    return held
