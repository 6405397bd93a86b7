/* SPDX-License-Identifier: GPL-2.0 */
/*
 * westwood_filter.h: the arithmetic of the Westwood+ bandwidth estimator (Linux tcp_westwood.c
 * westwood_filter, tcp_westwood_bw_rttmin), the twin of WestwoodPlusBw in
 * crates/ccsim-cc/src/algorithms/rate_estimators.rs. Rates in bytes per second times 2^16 (Q16; the
 * Rust side keeps f64 bytes per second, Linux whole bytes per jiffy), times in microseconds.
 */
#ifndef WESTWOOD_FILTER_H
#define WESTWOOD_FILTER_H

#include "ccsim_fixed.h"

struct ww_filter {
	__u64 bw_ns_est_q16; /* first, lightly smoothed estimate (Linux bw_ns_est) */
	__u64 bw_est_q16;    /* BWE (Linux bw_est) */
};

/* One window's sample: bk bytes acked over delta_us, in Q16 bytes per second (rounded down). */
static __always_inline __u64 westwood_sample_q16(__u64 bk, __u64 delta_us)
{
	return cc_mul_div(bk << 16, CC_USEC_PER_SEC, delta_us);
}

/* Linux westwood_filter: the first sample initialises both estimates, later ones go through two
 * cascaded 7/8 EWMAs (each rounds down by less than 2^-16 byte/s). */
static __always_inline void westwood_filter_update(struct ww_filter *f, __u64 sample_q16)
{
	if (!f->bw_ns_est_q16 && !f->bw_est_q16) {
		f->bw_ns_est_q16 = sample_q16;
		f->bw_est_q16 = sample_q16;
	} else {
		f->bw_ns_est_q16 = (7 * f->bw_ns_est_q16 + sample_q16) / 8;
		f->bw_est_q16 = (7 * f->bw_est_q16 + f->bw_ns_est_q16) / 8;
	}
}

/* Linux tcp_westwood_bw_rttmin in bytes, as the Rust bw_rttmin_bytes: max(floor(BWE * RTTmin), 2 MSS)
 * (no rounding to whole segments). */
static __always_inline __u64 westwood_bw_rttmin_bytes(__u64 bw_est_q16, __u64 rtt_min_us, __u64 mss)
{
	__u64 bytes = cc_mul_div(bw_est_q16, rtt_min_us, CC_USEC_PER_SEC) >> 16;

	return bytes > 2 * mss ? bytes : 2 * mss;
}

#endif /* WESTWOOD_FILTER_H */
