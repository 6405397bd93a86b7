// SPDX-License-Identifier: GPL-2.0
/*
 * NewReno, the kernel twin of crates/ccsim-cc/src/algorithms/newreno.rs (RFC 5681 sections 3.1,
 * RFC 3465 appropriate byte counting, RFC 6582 section 3.2 recovery exit). The window policy only:
 * fast retransmit, recovery and the RTO are the Linux TCP machine's, as in the Rust design.
 *
 * Rust RenoIncrease::on_ack (crates/ccsim-cc/src/reno.rs) in bytes:
 *   slow start (cwnd <= ssthresh): cwnd += min(bytes_acked, L * MSS), L = 0 meaning one MSS;
 *   congestion avoidance with ABC: count min(bytes_acked, L * MSS); a full cwnd counted adds one MSS;
 *   without ABC: cwnd += max(MSS * MSS / cwnd, 1) per ACK.
 * Loss: the Reno loss rule (reno_loss.h), ssthresh held on repeated timeouts (RFC 5681).
 */
#include "ccsim_cc.h"
#include "reno_increase.h"
#include "reno_loss.h"

#define CC_METRIC_NAMES "abc_bytes_acked"

CC_PARAM(__u32, halve_from, HALVE_FROM_FLIGHT);

struct cc_state {
	__u64 bytes_acked_in_ca; /* Rust RenoIncrease::bytes_acked_in_ca (FreeBSD t_bytes_acked) */
};

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	s->bytes_acked_in_ca = 0;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	reno_increase_on_ack(&s->bytes_acked_in_ca, w, ack, false);
}

static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	s->bytes_acked_in_ca = 0; /* Rust RenoIncrease::reset */
	return reno_loss_ssthresh(w, loss, param_halve_from, REPEATED_TIMEOUT_HOLD);
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = (__s64)s->bytes_acked_in_ca;
}

#include "ccsim_cc_ops.h"
