/* SPDX-License-Identifier: GPL-2.0 */
/*
 * delay_probability.h: the two-region backoff probability shared by HD, CHD and PERT, the twin of
 * crates/ccsim-cc/src/algorithms/delay_probability.rs (Budzisz et al. 2009 Fig. 6, Hayes & Armitage
 * 2010 Fig. 1). Times in microseconds, probabilities in Q32 (p * 2^32).
 */
#ifndef CCSIM_DELAY_PROBABILITY_H
#define CCSIM_DELAY_PROBABILITY_H

#include "ccsim_fixed.h"

struct two_region {
	__u64 q_min_us;
	__u64 q_th_us;
	__u64 p_max_q32; /* probability at q == q_th */
};

/* Rust TwoRegion::probability: 0 up to q_min, rising linearly to p_max at q_th, falling linearly to
 * 0 at q_max; 0 above q_max. Rounds down (the Rust side computes in f64). */
static __always_inline __u64 two_region_probability_q32(const struct two_region *g, __u64 q_us, __u64 q_max_us)
{
	__u64 p_max = g->p_max_q32 > CC_Q32_ONE ? CC_Q32_ONE : g->p_max_q32;

	if (q_us <= g->q_min_us)
		return 0;
	if (q_us < g->q_th_us)
		return p_max * (q_us - g->q_min_us) / (g->q_th_us - g->q_min_us);
	if (q_us == g->q_th_us)
		return p_max;
	if (q_us > q_max_us)
		return 0;
	if (q_max_us <= g->q_th_us)
		return 0;
	return p_max * (q_max_us - q_us) / (q_max_us - g->q_th_us);
}

/* Rust quantise_to_ticks: floor(d / tick) + 1 ticks, as FreeBSD h_ertt; tick 0 leaves d alone. */
static __always_inline __u64 quantise_to_ticks_us(__u64 d_us, __u64 tick_us)
{
	if (!tick_us)
		return d_us;
	return (d_us / tick_us + 1) * tick_us;
}

#endif /* CCSIM_DELAY_PROBABILITY_H */
