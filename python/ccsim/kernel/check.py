"""What this machine lacks for the kernel testbed, each item with how to get it (``ccsim testbed check``),
and what a killed run may have left (``ccsim testbed clean``)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ccsim.kernel.netns import stray_processes

__all__ = ["Prerequisite", "prerequisites", "missing_prerequisites", "APT_PACKAGES", "clean", "registered_twins"]

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


def struct_ops_ids() -> list[int]:
    """ids of struct_ops maps named ccsim_ops (bpftool), for diagnostics."""
    try:
        out = subprocess.run(["bpftool", "struct_ops", "list"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [int(line.split(":")[0]) for line in out.splitlines() if "ccsim_ops" in line and line.split(":")[0].isdigit()]
