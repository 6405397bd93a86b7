/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ccsim_cc.h: the kernel glue every ccsim BPF congestion-control program includes.
 *
 * Each algorithm file (newreno.bpf.c, ...) is written against the same seam as its Rust twin in
 * crates/ccsim-cc (the `CongestionControl` trait): a byte-exact window (`struct cc_window`), one
 * call per ACK (`cc_on_ack`), the new ssthresh after a loss (`cc_ssthresh_after_loss`), the end of
 * recovery (`cc_on_recovery_exit`) and its metrics. This header owns everything kernel-specific:
 *
 *  - the mapping from Linux `struct tcp_congestion_ops` hooks (include/net/tcp.h) to those calls;
 *  - the translation between Linux's window in segments (`tp->snd_cwnd`) and the byte window the
 *    Rust code reasons in, keeping the fraction of a segment in the socket's private area;
 *  - read-only parameters (`const volatile` globals in .rodata) that the loader sets before load;
 *  - the metrics map the loader samples (the run's `cc_metrics` table), keyed by local port.
 *
 * Kernel constraints this follows (checked by the verifier on Linux 6.x): no floating point (all
 * arithmetic is fixed point in u64), no signed 64-bit division, no `tcp_enter_cwr` (a delay-based
 * backoff writes snd_ssthresh and snd_cwnd itself), a private area of 104 bytes per socket, names of
 * at most 15 characters, and only snd_cwnd, snd_cwnd_cnt, snd_cwnd_stamp, snd_ssthresh and the
 * private area writable.
 *
 * An algorithm file defines `struct cc_state`, the cc_* functions below, CC_METRIC_NAMES, and then
 * includes "ccsim_cc_ops.h", which builds the struct_ops map from them.
 */
#ifndef CCSIM_CC_H
#define CCSIM_CC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "ccsim_fixed.h"

char _license[] SEC("license") = "GPL";

#define CC_INFINITE_SSTHRESH 0x7fffffffU /* Linux TCP_INFINITE_SSTHRESH */
#define CC_U64_MAX (~0ULL)
#define CC_NSEC_PER_USEC 1000ULL

/* The loader replaces these 16 bytes (15 characters and the NUL) with the registration's own name,
 * so one compiled object can be registered under a unique name per run. */
#define CC_NAME_PLACEHOLDER "@ccsim@name@@@@"

/* ---- parameters ------------------------------------------------------------------------------
 * A Rust parameter `p_max` is the global `param_p_max`, with a suffix giving its encoding:
 *   no suffix  an integer, a bool (0/1) or a choice (index in the Rust choice list);
 *   __q32      a number scaled by 2^32 (probabilities, fractions);
 *   __us       a duration given in the Rust parameter's unit (ms or s), held in microseconds.
 * The loader refuses a parameter the object does not declare, and the front end refuses a Rust
 * parameter the object lacks, so the two lists cannot drift apart silently.
 * Settings of the TCP machine that the Rust side passes in `CcInit` are `tcp_*` globals. */
#define CC_PARAM(type, name, value) const volatile type param_##name = (value)
const volatile __u32 tcp_abc_limit = 2; /* RFC 3465 L in segments; 0 = per-ACK counting */
/* The TCP stack's slow-start rule (Rust Window::slow_start, `tcp.slow_start_rule`): 0 FreeBSD
 * (newreno_ack_received: slow start while cwnd <= ssthresh, an ACK's increase not capped), 1 Linux
 * (tcp_in_slow_start: while cwnd < ssthresh; tcp_slow_start stops at ssthresh). */
const volatile __u32 tcp_slow_start_linux = 0;
/* The scenario's `tcp.initial_ssthresh` in bytes (Rust CcInit), 0: unlimited. Linux 6.x starts every
 * connection unlimited (tcp_init_metrics; a route's ssthresh metric is not used), and calls the
 * algorithm's init after that (tcp_init_transfer), so the glue's init sets it. */
const volatile __u64 tcp_initial_ssthresh_bytes = 0;

/* ---- the seam (crates/ccsim-cc/src/lib.rs) -------------------------------------------------- */

/* Window, ssthresh and MSS in bytes; ssthresh_bytes == CC_U64_MAX is "arbitrarily high". */
struct cc_window {
	__u64 cwnd_bytes;
	__u64 ssthresh_bytes;
	__u64 mss_bytes;
};

/* What one ACK tells the algorithm (Rust AckSample). Times in ns; 0 means "no sample". */
struct cc_ack {
	__u64 now_ns;
	__u64 bytes_acked;
	__u64 rtt_ns;
	__u64 min_rtt_ns;
	__u64 srtt_ns;
	__u64 bytes_in_flight;
	__u32 snd_una;  /* sequence numbers (wrap around: compare with cc_seq_before) */
	__u32 snd_max;  /* Linux snd_nxt: highest sent + 1 (Linux does not rewind it after a timeout) */
	bool in_recovery;
	bool cwnd_limited;
};

/* Linux before(): seq1 comes before seq2 in sequence space. */
static __always_inline bool cc_seq_before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}

enum cc_loss_kind { CC_LOSS_FAST_RETRANSMIT, CC_LOSS_TIMEOUT };

/* Rust LossEvent. */
struct cc_loss {
	__u64 now_ns;
	enum cc_loss_kind kind;
	__u32 backoff;
	__u64 bytes_in_flight;
	__u64 pipe_bytes; /* Linux's pipe, tcp_packets_in_flight() (Rust LossEvent::pipe_bytes) */
	__u64 min_rtt_ns;
	__u64 srtt_ns;
};

/* Rust RecoveryExit. */
struct cc_recovery_exit {
	__u64 now_ns;
	__u64 bytes_in_flight;
	bool after_timeout;
};

/* Rust Window::in_slow_start: "<=" under FreeBSD's rule, "<" under Linux's. */
static __always_inline bool cc_in_slow_start(const struct cc_window *w)
{
	return tcp_slow_start_linux ? w->cwnd_bytes < w->ssthresh_bytes : w->cwnd_bytes <= w->ssthresh_bytes;
}

/* One ACK's slow-start growth under the stack's rule (cc_slow_start_step in ccsim_fixed.h); returns
 * the count left for congestion avoidance. */
static __always_inline __u64 cc_slow_start_grow(struct cc_window *w, __u64 counted)
{
	return cc_slow_start_step(&w->cwnd_bytes, w->ssthresh_bytes, counted, tcp_slow_start_linux);
}

static __always_inline void cc_set_cwnd(struct cc_window *w, __u64 bytes)
{
	w->cwnd_bytes = bytes > w->mss_bytes ? bytes : w->mss_bytes;
}

/* RFC 6582 section 3.2 step 3 option (1), the Rust trait's default `on_recovery_exit`. */
static __always_inline void cc_default_recovery_exit(struct cc_window *w, const struct cc_recovery_exit *e)
{
	if (!e->after_timeout) {
		__u64 flight = cc_max(e->bytes_in_flight, w->mss_bytes);
		cc_set_cwnd(w, cc_min(w->ssthresh_bytes, flight + w->mss_bytes));
	}
}

/* True with probability p (Q32): the per-trial coin of HD, CHD and PERT. */
static __always_inline bool cc_chance_q32(__u64 p_q32)
{
	if (p_q32 >= CC_Q32_ONE)
		return true;
	return (__u64)bpf_get_prandom_u32() < p_q32;
}

/* ---- kernel accessors ------------------------------------------------------------------------ */

static __always_inline struct tcp_sock *cc_tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *cc_inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* Linux tcp_packets_in_flight(): segments in the network (RFC 6675 pipe with SACK). */
static __always_inline __u32 cc_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* Linux tcp_is_cwnd_limited() (include/net/tcp.h). */
static __always_inline bool cc_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = cc_tcp_sk(sk);

	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return !!BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

/* ---- metrics ----------------------------------------------------------------------------------
 * One entry per socket, keyed by its local port (the sender binds each flow to a known port). The
 * RTT fields are the glue's own (every RTT sample the kernel hands pkts_acked); `vals` are the
 * algorithm's metrics in the order of CC_METRIC_NAMES, each an integer times its declared scale. */
#define CC_MAX_METRICS 16

struct cc_metrics {
	__u64 acks;
	__u64 rtt_samples;
	__u64 rtt_sum_us;
	__u64 rtt_last_us;
	__u64 cwnd_bytes;
	__s64 vals[CC_MAX_METRICS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct cc_metrics);
} ccsim_metrics SEC(".maps");

#endif /* CCSIM_CC_H */
