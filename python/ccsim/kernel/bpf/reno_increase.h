/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reno_increase.h: the twin of RenoIncrease::on_ack in crates/ccsim-cc (the Reno window growth
 * every loss-based part of these algorithms shares): in slow start, the bytes acked up to
 * tcp_abc_limit segments per ACK (RFC 3465), stopping at ssthresh under Linux's rule
 * (tcp_slow_start, the rest going on to congestion avoidance); in congestion avoidance one MSS per cwnd of bytes acked
 * (ABC, FreeBSD t_bytes_acked), or MSS^2 / cwnd per ACK with tcp_abc_limit = 0.
 */
#ifndef RENO_INCREASE_H
#define RENO_INCREASE_H

#include "ccsim_cc.h"

/* Grows w for one ACK; *acked_in_ca is the caller's congestion-avoidance byte counter. With
 * `strict`, slow start means cwnd < ssthresh (PERT's P5, Linux) instead of the window's own rule.
 * Returns the bytes added. */
static __always_inline __u64 reno_increase_on_ack(__u64 *acked_in_ca, struct cc_window *w, const struct cc_ack *ack,
						  bool strict)
{
	__u64 mss = w->mss_bytes, before = w->cwnd_bytes;
	__u64 limit = tcp_abc_limit ? (__u64)tcp_abc_limit * mss : mss;
	__u64 counted = cc_min(ack->bytes_acked, limit);

	if (ack->bytes_acked == 0 || ack->in_recovery || !ack->cwnd_limited)
		return 0;
	if (strict ? w->cwnd_bytes < w->ssthresh_bytes : cc_in_slow_start(w)) {
		/* under Linux's rule the growth stops at ssthresh and the rest is counted below */
		counted = cc_slow_start_grow(w, counted);
		if (!counted)
			return w->cwnd_bytes - before;
	}
	if (tcp_abc_limit) {
		*acked_in_ca += counted;
		if (*acked_in_ca >= w->cwnd_bytes) {
			*acked_in_ca -= w->cwnd_bytes;
			w->cwnd_bytes += mss;
		}
	} else {
		w->cwnd_bytes += cc_max(mss * mss / cc_max(w->cwnd_bytes, 1), 1);
	}
	return w->cwnd_bytes - before;
}

#endif
