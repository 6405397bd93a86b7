"""TCP profiles: named bundles of the TCP machine's knobs (docs/profiles.md).

A profile says which platform a flow's TCP behaves like:

* ``freebsd9``: FreeBSD 9, the CHD paper's testbed, and ccsim's default (minimum RTO aside, which
  follows Linux and ns-2: docs/choices.md);
* ``linux``: Linux 6.x, what the kernel twins run on;
* ``ns2``: ns-2.35's ``Agent/TCP/Sack1`` with ``Agent/TCPSink/Sack1`` (``sack = false`` gives
  ``Agent/TCP/Newreno`` with ``Agent/TCPSink``), what the Leith, Budzisz and Bansal papers ran.

Each bundle sets every knob, by the field names and canonical units of the resolved document (bytes,
ns, packets). This table is the one place the values live: ``Tcp``'s defaults are the ``freebsd9``
bundle, and docs/profiles.md gives each value's source. Precedence (``Scenario.tcp_for``): a flow's
``[flows.tcp] profile`` replaces the base bundle of ``[tcp] profile``; the keys ``[tcp]`` sets
explicitly apply on top, then the keys ``[flows.tcp]`` sets.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["DEFAULT_PROFILE", "PROFILES", "PROFILE_NAMES", "bundle"]

DEFAULT_PROFILE = "freebsd9"

_MS = 1_000_000
_S = 1_000_000_000

FREEBSD9: dict[str, Any] = {
    "mss_bytes": 1448,  # 1500 B MTU less 20 IP, 20 TCP and 12 timestamp bytes
    "header_bytes": 52,
    "initial_window_pkts": 3,  # RFC 3390 for MSS 1448 (tcp_input.c, V_tcp_do_rfc3390)
    "sack": True,
    "delayed_ack": True,
    "delayed_ack_timeout_ns": 100 * _MS,  # net.inet.tcp.delacktime
    "abc_limit": 2,  # net.inet.tcp.abc_l_var
    "min_rto_ns": 200 * _MS,  # Linux and ns-2's 200 ms (FreeBSD: 30 ms; docs/choices.md)
    "initial_rto_ns": 1 * _S,
    "max_rto_ns": 60 * _S,
    "rwnd_bytes": 64 * 2**20,  # large enough never to limit
    "dupack_threshold": 3,
    "limited_transmit": True,
    "rto_estimator": "rfc6298",
    "timer_granularity_ns": 1 * _MS,  # hz = 1000
    "max_burst_pkts": 0,
    "ssthresh_whole_packets": False,
    "sack_recovery": "rfc6675",
    # The stack rules of docs/linux-tcp.md, FreeBSD-9-like values.
    "slow_start_rule": "freebsd",  # newreno_ack_received: slow start while cwnd <= ssthresh
    "recovery_window": "rfc6675",  # cwnd = ssthresh at the fast retransmit (tcp_sack.c, RFC 6675)
    "delayed_ack_rule": "rfc5681",  # an ACK every second segment or on delacktime
    "loss_detection": "dupack",  # tcprexmtthresh duplicate ACKs / RFC 6675 IsLost
    # tcp_do_segment re-arms TT_REXMT on every ACK of new data, partial ACKs of NewReno recovery included.
    "partial_ack_rto": "every",
    "send_jitter_ns": 125_000,  # em(4) interrupt moderation interval (docs/profiles.md, "host send jitter")
}

# Linux 6.x (net/ipv4/tcp_input.c, tcp_output.c, tcp_recovery.c, tcp_timer.c; include/net/tcp.h).
LINUX: dict[str, Any] = {
    **FREEBSD9,
    "mss_bytes": 1448,  # timestamps on (net.ipv4.tcp_timestamps = 1): 12 B of options per segment
    "header_bytes": 52,
    "initial_window_pkts": 10,  # TCP_INIT_CWND (include/net/tcp.h), RFC 6928
    "sack": True,  # net.ipv4.tcp_sack = 1
    "delayed_ack": True,
    "delayed_ack_timeout_ns": 40 * _MS,  # TCP_DELACK_MIN
    "delayed_ack_rule": "linux",  # quick-ack at start (tcp_incr_quickack), __tcp_ack_snd_check
    "abc_limit": 2,  # tcp_slow_start adds the segments an ACK covers (two with delayed ACKs)
    "slow_start_rule": "linux",  # tcp_in_slow_start: cwnd < ssthresh
    "rto_estimator": "linux",  # tcp_rtt_estimator / __tcp_set_rto: srtt + max(4 mdev, rto_min)
    "min_rto_ns": 200 * _MS,  # TCP_RTO_MIN
    "initial_rto_ns": 1 * _S,  # TCP_TIMEOUT_INIT
    "max_rto_ns": 120 * _S,  # TCP_RTO_MAX
    "dupack_threshold": 3,  # net.ipv4.tcp_reordering
    "loss_detection": "rack_tlp",  # net.ipv4.tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP)
    "recovery_window": "prr",  # tcp_cwnd_reduction (RFC 6937)
    "limited_transmit": True,
}

# ns-2.35 (tcl/lib/ns-default.tcl, tcp/tcp.cc, tcp/tcp-sack1.cc, tcp/tcp-sink.cc): the defaults of a
# script that sets nothing. Papers set some of them (window_ and packetSize_ above all): override
# those keys, e.g. rwnd = "1MB".
NS2: dict[str, Any] = {
    "mss_bytes": 1000,  # Agent/TCP packetSize_ (data bytes of a one-way TCP packet)
    "header_bytes": 40,  # tcpip_base_hdr_size_ (timestamps_ false: no ts_option_size_)
    "initial_window_pkts": 2,  # windowInit_
    "sack": True,  # Agent/TCP/Sack1; false = Agent/TCP/Newreno
    "delayed_ack": False,  # Agent/TCPSink ACKs every packet; true = TCPSink/DelAck
    "delayed_ack_timeout_ns": 100 * _MS,  # DelAck interval_
    "abc_limit": 0,  # opencwnd(): +1 per ACK in slow start, +1/cwnd in congestion avoidance
    "min_rto_ns": 200 * _MS,  # minrto_
    "initial_rto_ns": 3 * _S,  # rtxcur_init_
    "max_rto_ns": 60 * _S,  # maxrto_
    "rwnd_bytes": 20 * 1000,  # window_ 20 packets of packetSize_
    "dupack_threshold": 3,  # numdupacks_
    "limited_transmit": True,  # singledup_ 1 (send_one)
    "rto_estimator": "ns2",
    "timer_granularity_ns": 10 * _MS,  # tcpTick_
    "max_burst_pkts": 0,  # maxburst_
    "ssthresh_whole_packets": True,  # int ssthresh_ (slowdown)
    "sack_recovery": "ns2_sack1",  # Agent/TCP/Sack1 (tcp-sack1.cc)
    "slow_start_rule": "freebsd",
    "recovery_window": "rfc6675",
    "delayed_ack_rule": "rfc5681",  # DelAckSink: every second packet or interval_
    "loss_detection": "dupack",  # numdupacks_
    "partial_ack_rto": "first",  # newreno_changes1_ 1: only the first partial ACK resets the timer
    "send_jitter_ns": 0,  # ns-2 sends at the event's instant (overhead_ 0)
}

PROFILES: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {"freebsd9": MappingProxyType(FREEBSD9), "linux": MappingProxyType(LINUX), "ns2": MappingProxyType(NS2)}
)
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)


def bundle(name: str) -> dict[str, Any]:
    """The knobs of profile ``name`` (a copy), by resolved field name."""
    return dict(PROFILES[name])
