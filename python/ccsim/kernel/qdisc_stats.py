"""The bottleneck's qdisc counters read by netlink inside the middle namespace, stamped when read.

The harness reads them every sample interval. A ``tc -s qdisc`` subprocess per link and sample took
tens of milliseconds on a loaded machine, and the k-th sample was labelled k intervals whenever it
came (docs/kernel.md, "Link statistics"). Here one ``RTM_GETQDISC`` dump on a netlink socket that
lives in the middle namespace (created by a thread that entered it: namespaces are per thread, and a
socket stays in the namespace it was created in) returns every qdisc's ``TCA_STATS`` (struct
tc_stats, include/uapi/linux/pkt_sched.h) in well under a millisecond, and each sample carries the
CLOCK_MONOTONIC time it was read at.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading
import time
from pathlib import Path

from ccsim.errors import CcsimError

__all__ = ["QdiscReader"]

_CLONE_NEWNET = 0x40000000
_RTM_NEWQDISC, _RTM_GETQDISC = 36, 38
_NLM_F_REQUEST, _NLM_F_DUMP = 0x1, 0x300
_NLMSG_DONE, _NLMSG_ERROR = 3, 2
_TCA_KIND, _TCA_STATS = 1, 3
_TCMSG = struct.Struct("=BxxxiIII")  # family, ifindex, handle, parent, info
_TC_STATS = struct.Struct("=QIIIIIII")  # bytes, packets, drops, overlimits, bps, pps, qlen, backlog


def _socket_in(netns: Path) -> socket.socket:
    """A NETLINK_ROUTE socket of the namespace ``netns`` (/proc/PID/ns/net)."""
    made: dict[str, object] = {}

    def enter_and_open() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(netns, os.O_RDONLY)
        try:
            if libc.setns(fd, _CLONE_NEWNET) != 0:
                made["error"] = os.strerror(ctypes.get_errno())
                return
            made["sock"] = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        finally:
            os.close(fd)

    worker = threading.Thread(target=enter_and_open)  # it ends in the namespace; this thread stays out
    worker.start()
    worker.join()
    if "sock" not in made:
        raise CcsimError(f"kernel testbed: cannot read the qdiscs of {netns}: {made.get('error', 'unknown error')}")
    return made["sock"]  # type: ignore[return-value]


class QdiscReader:
    """Reads the counters of every qdisc in one namespace: {ifindex: {kind: tc_stats fields}}."""

    def __init__(self, netns: Path) -> None:
        self.sock = _socket_in(netns)
        self.sock.bind((0, 0))
        self._seq = 0

    def read(self) -> tuple[int, dict[int, dict[str, dict[str, int]]]]:
        """(CLOCK_MONOTONIC ns at the middle of the read, the counters)."""
        self._seq += 1
        body = _TCMSG.pack(socket.AF_UNSPEC, 0, 0, 0, 0)
        header = struct.pack("=IHHII", 16 + len(body), _RTM_GETQDISC, _NLM_F_REQUEST | _NLM_F_DUMP, self._seq, 0)
        before = time.monotonic_ns()
        self.sock.send(header + body)
        out: dict[int, dict[str, dict[str, int]]] = {}
        done = False
        while not done:
            data = self.sock.recv(65536)
            offset = 0
            while offset + 16 <= len(data):
                length, kind, _flags, _seq, _pid = struct.unpack_from("=IHHII", data, offset)
                if length < 16:
                    break
                if kind == _NLMSG_DONE:
                    done = True
                elif kind == _NLMSG_ERROR:
                    raise CcsimError("kernel testbed: the qdisc dump failed (netlink error)")
                elif kind == _RTM_NEWQDISC:
                    ifindex, name, stats = self._parse(data[offset + 16: offset + length])
                    if name and stats is not None:
                        out.setdefault(ifindex, {})[name] = stats
                offset += (length + 3) & ~3
        after = time.monotonic_ns()
        return (before + after) // 2, out

    @staticmethod
    def _parse(msg: bytes) -> tuple[int, str, dict[str, int] | None]:
        _family, ifindex, _handle, _parent, _info = _TCMSG.unpack_from(msg, 0)
        offset, name, stats = _TCMSG.size, "", None
        while offset + 4 <= len(msg):
            alen, atype = struct.unpack_from("=HH", msg, offset)
            if alen < 4:
                break
            payload = msg[offset + 4: offset + alen]
            if atype == _TCA_KIND:
                name = payload.rstrip(b"\0").decode()
            elif atype == _TCA_STATS and len(payload) >= _TC_STATS.size:
                nbytes, packets, drops, _over, _bps, _pps, qlen, backlog = _TC_STATS.unpack_from(payload, 0)
                stats = {"bytes": nbytes, "packets": packets, "drops": drops, "qlen": qlen, "backlog": backlog}
            offset += (alen + 3) & ~3
        return ifindex, name, stats

    def close(self) -> None:
        self.sock.close()
