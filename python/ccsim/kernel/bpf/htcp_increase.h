/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htcp_increase.h: H-TCP's additive-increase law in fixed point, shared by htcp and delay_aimd; the
 * twin of crates/ccsim-cc/src/algorithms/htcp_increase.rs (Leith & Shorten 2004,
 * draft-leith-tcp-htcp section 3; Leith et al. 2007 eq. (2) with its printed typo fixed as there).
 *
 *   alpha_raw(D) = 1                             D <= D_L
 *                = 1 + 10 (D - D_L) + ((D - D_L) / 2)^2   (D in seconds)
 *   scale        = clamp(RTTmin / RTT_ref, 0.1, 2)
 *   factor       = max(1, alpha_raw * scale)
 *
 * Results in Q16 (x * 2^16), times in microseconds. The linear term is exact to 2^-16; the square
 * is taken over D - D_L in whole milliseconds (its error is below (D - D_L) / 2000 of one unit of
 * alpha: 0.03 after a minute without loss, where alpha_raw is 1 + 590 + 870).
 */
#ifndef CCSIM_HTCP_INCREASE_H
#define CCSIM_HTCP_INCREASE_H

#include "ccsim_fixed.h"

#define HTCP_SCALE_MIN_Q16 6554ULL   /* 0.1 (Rust RTT_SCALE_MIN), rounded to nearest */
#define HTCP_SCALE_MAX_Q16 131072ULL /* 2 (Rust RTT_SCALE_MAX) */

/* Rust htcp_increase::alpha_raw, D and D_L in microseconds. */
static __always_inline __u64 htcp_alpha_raw_q16(__u64 delta_us, __u64 delta_l_us)
{
	__u64 x_us, x_ms, linear, square;

	if (delta_us <= delta_l_us)
		return CC_Q16_ONE;
	x_us = delta_us - delta_l_us;
	x_ms = x_us / 1000;
	linear = cc_mul_div(10 * x_us, CC_Q16_ONE, CC_USEC_PER_SEC);          /* 10 x */
	square = cc_mul_div(x_ms * x_ms, CC_Q16_ONE, 4 * CC_USEC_PER_SEC);      /* (x / 2)^2, x in ms */
	return CC_Q16_ONE + linear + square;
}

/* Rust htcp_increase::rtt_scale: clamp(RTTmin / RTT_ref, 0.1, 2); 1 without a reference. */
static __always_inline __u64 htcp_rtt_scale_q16(__u64 min_rtt_us, __u64 rtt_ref_us)
{
	if (!rtt_ref_us)
		return CC_Q16_ONE;
	return cc_clamp(cc_mul_div(min_rtt_us, CC_Q16_ONE, rtt_ref_us), HTCP_SCALE_MIN_Q16, HTCP_SCALE_MAX_Q16);
}

/* Rust htcp_increase::scaled_factor: max(1, alpha_raw * scale). */
static __always_inline __u64 htcp_scaled_factor_q16(__u64 alpha_raw_q16, __u64 scale_q16)
{
	return cc_max(cc_mul_div(alpha_raw_q16, scale_q16, CC_Q16_ONE), CC_Q16_ONE);
}

/* Rust htcp_increase::counted_bytes: with ABC (L > 0) min(bytes_acked, L * MSS), else one MSS. */
static __always_inline __u64 htcp_counted_bytes(__u64 bytes_acked, __u64 mss, __u32 abc_limit)
{
	if (!bytes_acked)
		return 0;
	if (!abc_limit)
		return mss;
	return cc_min(bytes_acked, (__u64)abc_limit * mss);
}

/* Rust FracCwnd: the window in bytes with a fraction of a byte in Q16 beside it, so increments
 * smaller than a byte accumulate. When the window changed behind the algorithm's back (loss,
 * recovery, the kernel), the fraction restarts from zero, as FracCwnd::sync. */
struct frac_cwnd {
	__u32 last_written; /* the byte window this accumulator last wrote (low 32 bits) */
	__u32 frac_q16;     /* fraction of a byte, below 2^16 */
};

static __always_inline void frac_sync(struct frac_cwnd *f, __u64 cwnd_bytes)
{
	if ((__u32)cwnd_bytes != f->last_written) {
		f->last_written = (__u32)cwnd_bytes;
		f->frac_q16 = 0;
	}
}

/* Adds inc_q16 (bytes times 2^16) to *cwnd_bytes. */
static __always_inline void frac_add(struct frac_cwnd *f, __u64 *cwnd_bytes, __u64 inc_q16)
{
	__u64 total;

	frac_sync(f, *cwnd_bytes);
	total = f->frac_q16 + inc_q16;
	*cwnd_bytes += total >> 16;
	f->frac_q16 = (__u32)(total & 0xffff);
	f->last_written = (__u32)*cwnd_bytes;
}

#endif /* CCSIM_HTCP_INCREASE_H */
