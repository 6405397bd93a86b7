/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reno_loss.h: the twin of loss_ssthresh in crates/ccsim-cc/src/reno.rs (the Reno loss rule NewReno,
 * HD, PERT and mPERT share): ssthresh = max(base / 2, 2 * MSS) with base = FlightSize
 * (halve_from = flight, RFC 5681 eq. (4)) or Linux's pipe (pipe); halve_from = cwnd halves cwnd in
 * whole segments with a floor of two (Rust half_cwnd_segments: Linux tcp_reno_ssthresh, FreeBSD
 * newreno_cong_signal). A repeated timeout holds ssthresh (RFC 5681 section 3.1) or recomputes it
 * (FreeBSD) as the caller says; Linux calls ssthresh at the first expiry only (ccsim_cc_ops.h passes
 * backoff = 1), so in the kernel the hold never applies: it is here so the rule reads as the Rust one.
 *
 * The rule on plain numbers has no kernel dependency (tests/kernel/fixed_check.c runs it on the host
 * with -DCCSIM_HOST); reno_loss_ssthresh applies it to the seam's window and loss event.
 */
#ifndef RENO_LOSS_H
#define RENO_LOSS_H

#include "ccsim_fixed.h"

enum halve_from { HALVE_FROM_FLIGHT = 0, HALVE_FROM_CWND = 1, HALVE_FROM_PIPE = 2 }; /* Rust HalveFrom, in its order */
enum repeated_timeout { REPEATED_TIMEOUT_HOLD, REPEATED_TIMEOUT_RECOMPUTE };          /* Rust RepeatedTimeout */

/* timeout_backoff: 0 for a fast retransmit, else the expiry's count (1 at the first). ssthresh
 * ~0ULL is "arbitrarily high", never held. */
static __always_inline __u64 reno_loss_ssthresh_bytes(__u32 halve_from, enum repeated_timeout repeated, __u64 cwnd,
						      __u64 ssthresh, __u64 mss, __u32 timeout_backoff,
						      __u64 flight, __u64 pipe)
{
	if (repeated == REPEATED_TIMEOUT_HOLD && timeout_backoff > 1 && ssthresh != ~0ULL)
		return ssthresh;
	if (halve_from == HALVE_FROM_CWND)
		return cc_max(cwnd / mss / 2, 2) * mss; /* Rust half_cwnd_segments */
	return cc_half_window(halve_from == HALVE_FROM_PIPE ? pipe : flight, mss);
}

#ifndef CCSIM_HOST
#include "ccsim_cc.h"

static __always_inline __u64 reno_loss_ssthresh(const struct cc_window *w, const struct cc_loss *loss,
						__u32 halve_from, enum repeated_timeout repeated)
{
	return reno_loss_ssthresh_bytes(halve_from, repeated, w->cwnd_bytes, w->ssthresh_bytes, w->mss_bytes,
					loss->kind == CC_LOSS_TIMEOUT ? loss->backoff : 0, loss->bytes_in_flight,
					loss->pipe_bytes);
}
#endif

#endif
