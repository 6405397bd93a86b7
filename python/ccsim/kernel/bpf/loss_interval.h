/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loss_interval.h: TFRC's average loss interval (RFC 5348 section 5.4), the twin of IntervalEstimator
 * in crates/ccsim-cc/src/algorithms/loss_interval.rs, used by mPERT for its loss and early-response
 * rates. Intervals count whole packets (the glue acknowledges whole segments); the weights
 * 1,1,1,1,0.8,0.6,0.4,0.2 are taken times 5 (5,5,5,5,4,3,2,1), so the weighted sums are exact
 * integers and the only rounding is the final division to Q16 (error below 2^-16 packet).
 */
#ifndef LOSS_INTERVAL_H
#define LOSS_INTERVAL_H

#include "ccsim_fixed.h"

#define LI_N 8

struct loss_intervals {
	__u64 history[LI_N]; /* closed intervals, newest first, packets */
	__u64 open;          /* packets since the last event */
	__u64 events;
	__u32 closed;        /* closed intervals held, at most LI_N */
};

static __always_inline __u64 li_weight5(__u32 i)
{
	return i < 4 ? 5 : 8 - i; /* 5 x (1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2) */
}

static __always_inline void li_add_packets(struct loss_intervals *li, __u64 packets)
{
	li->open += packets;
}

static __always_inline void li_on_event(struct loss_intervals *li)
{
	for (int i = LI_N - 1; i > 0; i--)
		li->history[i] = li->history[i - 1];
	li->history[0] = li->open;
	if (li->closed < LI_N)
		li->closed++;
	li->open = 0;
	li->events++;
}

/* Rust IntervalEstimator::mean_interval in Q16 packets: max of the weighted means with and without
 * the open interval (RFC 5348 section 5.4); false before the first event. */
static __always_inline bool li_mean_q16(const struct loss_intervals *li, __u64 *mean_q16)
{
	__u64 w_tot = 0, tot0 = 0, tot1 = 0;
	__u32 k = li->closed;

	if (!k)
		return false;
	for (__u32 i = 0; i < LI_N; i++) {
		if (i >= k)
			break;
		w_tot += li_weight5(i);
		tot0 += li_weight5(i) * (i == 0 ? li->open : li->history[i - 1]); /* interval(i) */
		tot1 += li_weight5(i) * li->history[i];                          /* interval(i + 1) */
	}
	*mean_q16 = ((tot0 > tot1 ? tot0 : tot1) << 16) / w_tot;
	return true;
}

#endif /* LOSS_INTERVAL_H */
