"""The testbed's traffic: bulk TCP senders and a receiver, run inside the testbed's namespaces.

Run as a script (standard library only, so it starts fast and imports nothing of ccsim)::

    python3 traffic.py receiver PORT
    python3 traffic.py sender SPEC_JSON

The sender opens one connection per flow when the flow's first interval starts, bound to the flow's
own local port (the key of the BPF metrics map), with the algorithm set on that socket alone
(``TCP_CONGESTION``; never a namespace default). While an interval is active it keeps the socket
buffer topped up; between intervals and after the last one it writes nothing. TCP_NOTSENT_LOWAT keeps
at most a few segments of unsent data in the kernel, so a flow stops offering data within about one
write of its interval's end, as the simulator's application does. Every sample interval it prints one
JSON line per open flow with the sending socket's TCP_INFO.

Both exit when their parent dies (PR_SET_PDEATHSIG), on SIGTERM, and the sender at ``end_ns``.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time

TCP_CONGESTION = 13
TCP_INFO = 11
TCP_NOTSENT_LOWAT = 25
PR_SET_PDEATHSIG = 1
NOTSENT_LOWAT_BYTES = 16 * 1024
CHUNK = b"\0" * 65536

# struct tcp_info (include/uapi/linux/tcp.h): (offset, format) of the fields the tables use.
TCP_INFO_FIELDS = {
    "ca_state": (1, "B"),
    "rate_flags": (7, "B"),  # bit 0: tcpi_delivery_rate_app_limited (the application left the window unused)
    "backoff": (4, "B"),
    "rto_us": (8, "I"),
    "snd_mss": (16, "I"),
    "unacked": (24, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "srtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "bytes_acked": (120, "Q"),
    "segs_out": (136, "I"),
    "segs_in": (140, "I"),  # every segment received: on the sender, the ACKs (and the SYN-ACK)
    "min_rtt_us": (148, "I"),
    "data_segs_out": (156, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
    "total_rto": (240, "H"),  # Linux 6.7+
    "total_rto_recoveries": (242, "H"),
}
TCP_INFO_BYTES = 248


def die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def tcp_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_BYTES)
    out = {}
    for name, (offset, fmt) in TCP_INFO_FIELDS.items():
        if offset + struct.calcsize(fmt) <= len(raw):
            out[name] = struct.unpack_from(fmt, raw, offset)[0]
    return out


def receiver(port: int) -> None:
    """Accepts every connection and discards what arrives."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(128)
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    print("ready", flush=True)
    buf = bytearray(1 << 20)
    while True:
        for key, _ in sel.select():
            sock = key.fileobj
            if sock is listener:
                conn, _ = listener.accept()
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ)
                continue
            try:
                n = sock.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            if n == 0:
                sel.unregister(sock)
                sock.close()


class Flow:
    def __init__(self, spec: dict, t0_ns: int) -> None:
        self.index = spec["index"]
        self.port = spec["port"]
        self.cc = spec["cc"]
        self.intervals = [(t0_ns + a, t0_ns + b) for a, b in spec["intervals"]]
        self.limit_bytes = spec.get("bytes")  # finite transfer, else None
        self.written = 0
        self.sock: socket.socket | None = None
        self.connected = False

    def active(self, now: int) -> bool:
        if self.limit_bytes is not None and self.written >= self.limit_bytes:
            return False
        return any(a <= now < b for a, b in self.intervals)

    def open(self, src: str, dst: tuple[str, int]) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, self.cc.encode())
        s.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, NOTSENT_LOWAT_BYTES)
        s.bind((src, self.port))
        s.setblocking(False)
        try:
            s.connect(dst)
        except BlockingIOError:
            pass
        self.sock = s


# Empty-path probes before time zero: each a TCP handshake from its own port (no flow's, so no
# access delay), whose SYN/SYN-ACK RTT the kernel measures (tcpi_rtt of the first sample).
PROBE_FIRST_PORT = 39000
PROBE_COUNT = 5
PROBE_GUARD_NS = 100_000_000  # stop probing this long before time zero


def probe_empty_path(spec: dict) -> list[int]:
    """RTTs in microseconds of up to PROBE_COUNT handshakes finished before time zero (a lost SYN
    makes that probe miss the deadline: it is left out)."""
    deadline = spec["t0_ns"] - PROBE_GUARD_NS
    rtts = []
    for i in range(PROBE_COUNT):
        if time.monotonic_ns() >= deadline:
            break
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((spec["src"], PROBE_FIRST_PORT + i))
            s.settimeout(max(0.001, (deadline - time.monotonic_ns()) / 1e9))
            s.connect((spec["dst"], spec["port"]))
            rtts.append(tcp_info(s)["srtt_us"])  # tcpi_rtt: the handshake's sample, the only one
        except OSError:
            pass
        finally:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset: no TIME_WAIT
            s.close()
    return rtts


def sender(spec: dict) -> None:
    print(json.dumps({"probe_rtts_us": probe_empty_path(spec)}), flush=True)
    t0 = spec["t0_ns"]
    end = t0 + spec["duration_ns"]
    interval = spec["sample_interval_ns"]
    flows = [Flow(f, t0) for f in spec["flows"]]
    dst = (spec["dst"], spec["port"])
    sel = selectors.DefaultSelector()
    next_sample = t0 + interval
    print("ready", flush=True)
    while True:
        now = time.monotonic_ns()
        if now >= end:
            break
        for f in flows:
            if f.sock is None and f.intervals and now >= f.intervals[0][0]:
                f.open(spec["src"], dst)
        if now >= next_sample:
            k = (now - t0) // interval
            for f in flows:
                if f.sock is not None:
                    try:
                        info = tcp_info(f.sock)
                    except OSError:
                        continue
                    print(json.dumps({"t_ns": now - t0, "k": k, "flow": f.index, **info}), flush=False)
            sys.stdout.flush()
            next_sample = t0 + (k + 1) * interval
        # wake for the next sample, the end, and every interval boundary still ahead
        wake = min([next_sample, end] + [t for f in flows for iv in f.intervals for t in iv if t > now])
        # only sockets of flows offering data wait for writability
        for f in flows:
            if f.sock is not None:
                want = f.active(now)
                registered = f.sock in sel.get_map()
                if want and not registered:
                    sel.register(f.sock, selectors.EVENT_WRITE, f)
                elif not want and registered:
                    sel.unregister(f.sock)
        timeout = max(0.0, (wake - now) / 1e9)
        for key, _ in sel.select(timeout):
            f = key.data
            try:
                room = CHUNK if f.limit_bytes is None else CHUNK[: max(0, f.limit_bytes - f.written)]
                if room:
                    f.written += f.sock.send(room)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as e:
                print(json.dumps({"error": f"flow {f.index}: {e}"}), flush=True)
                if f.sock in sel.get_map():
                    sel.unregister(f.sock)
                f.intervals = []
    # Abort rather than close: an orderly close would leave an orphaned socket retransmitting the
    # unsent tail into a namespace that is about to disappear, and holding the twin for minutes.
    for f in flows:
        if f.sock is not None:
            f.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            f.sock.close()


def main() -> None:
    die_with_parent()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if sys.argv[1] == "receiver":
        receiver(int(sys.argv[2]))
    elif sys.argv[1] == "sender":
        sender(json.loads(sys.argv[2]))
    else:
        raise SystemExit(f"usage: {sys.argv[0]} receiver PORT | sender SPEC_JSON")


if __name__ == "__main__":
    main()
