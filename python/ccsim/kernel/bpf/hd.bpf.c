// SPDX-License-Identifier: GPL-2.0
/*
 * HD, Hamilton delay-based congestion control: the kernel twin of
 * crates/ccsim-cc/src/algorithms/hd.rs (Budzisz et al. 2009 section III, Figs. 6-7; Hayes & Armitage
 * 2010 section III eq. (1); FreeBSD cc_hd.c). The Rust file's header gives the rules and every
 * reading chosen; this file follows it step by step in fixed point.
 *
 * On every ACK of new data: q = RTT - RTTmin from the latest raw sample (or srtt_0.99); if q > q_min
 * and not in recovery, one trial with p = g(q) (two regions, delay_probability.h); on success and
 * cwnd >= w0: ssthresh = cwnd = max(floor(cwnd / MSS / 2), 2) * MSS and no increase on this ACK.
 * Otherwise NewReno's increase with ABC. Loss: FreeBSD NewReno (halve cwnd), or FlightSize / 2.
 *
 * Kernel differences: the coin is bpf_get_prandom_u32() (not the flow's seeded stream); RTTmin is
 * Linux's windowed minimum (tcp_min_rtt_wlen, 300 s: the lifetime minimum for shorter runs); times
 * are in microseconds (the kernel's RTT resolution); Linux calls ssthresh only on the first timeout
 * of a segment, so halve_from = cwnd does not recompute it on repeated timeouts as FreeBSD does.
 */
#include "ccsim_cc.h"
#include "reno_increase.h"
#include "delay_probability.h"
#include "reno_loss.h"

#define CC_METRIC_NAMES "q_ms/1000,q_max_ms/1000,p/4294967296,srtt99_ms/1000,draws,delay_backoffs,loss_backoffs,abc_bytes_acked"

enum delay_signal { DELAY_SIGNAL_SAMPLE = 0, DELAY_SIGNAL_SRTT99 = 1 }; /* Rust DelaySignal */

CC_PARAM(__u64, p_max__q32, 85899346);          /* 0.02 */
CC_PARAM(__u64, q_min_ms__us, 5000);
CC_PARAM(__u64, q_th_ms__us, 30000);
CC_PARAM(__u64, q_max_floor_ms__us, 0);
CC_PARAM(__u64, w0_pkts, 0);
CC_PARAM(__u32, delay_signal, DELAY_SIGNAL_SAMPLE);
CC_PARAM(__u64, rtt_tick_ms__us, 0);
CC_PARAM(__u32, halve_from, HALVE_FROM_CWND);

struct cc_state {
	__u64 bytes_acked_in_ca; /* Rust RenoIncrease */
	__u64 srtt99_us_q8;      /* srtt_0.99 in microseconds times 256; 0 = none yet */
	__u32 last_rtt_us;       /* latest raw sample, re-used on ACKs without one (h_ertt) */
	__u32 max_rtt_us;        /* lifetime maximum of the raw samples (Rust AckSample::max_rtt) */
	__u32 last_q_us;
	__u32 last_q_max_us;
	__u32 last_p_q32;
	__u32 draws;
	__u32 delay_backoffs;
	__u32 loss_backoffs;
};

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
}

/* Rust Hd::queueing_delay: (q, q_max) in microseconds, false while no sample or minimum is known. */
static __always_inline bool queueing_delay(const struct cc_state *s, const struct cc_ack *ack, __u64 *q, __u64 *q_max)
{
	__u64 min_us = ack->min_rtt_ns / CC_NSEC_PER_USEC, rtt_us, max_us, min_q;

	if (!min_us || !s->last_rtt_us)
		return false;
	if (param_delay_signal == DELAY_SIGNAL_SRTT99)
		rtt_us = s->srtt99_us_q8 >> 8;
	else
		rtt_us = s->last_rtt_us;
	max_us = cc_max(s->max_rtt_us, s->last_rtt_us);
	min_q = quantise_to_ticks_us(min_us, param_rtt_tick_ms__us);
	*q = quantise_to_ticks_us(rtt_us, param_rtt_tick_ms__us);
	*q = *q > min_q ? *q - min_q : 0;
	*q_max = quantise_to_ticks_us(max_us, param_rtt_tick_ms__us);
	*q_max = *q_max > min_q ? *q_max - min_q : 0;
	*q_max = cc_max(*q_max, param_q_max_floor_ms__us);
	return true;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	struct two_region g = { .q_min_us = param_q_min_ms__us, .q_th_us = param_q_th_ms__us,
				.p_max_q32 = param_p_max__q32 };
	__u64 q, q_max;

	if (ack->rtt_ns) {
		__u64 r = ack->rtt_ns / CC_NSEC_PER_USEC;

		s->last_rtt_us = (__u32)r;
		if (r > s->max_rtt_us)
			s->max_rtt_us = (__u32)r;
		/* srtt <- 0.99 srtt + 0.01 sample, in Q8 microseconds */
		s->srtt99_us_q8 = s->srtt99_us_q8 ? (99 * s->srtt99_us_q8 + (r << 8)) / 100 : r << 8;
	}
	/* FreeBSD cc_hd.c: the delay test runs on ACKs of new data only */
	if (ack->bytes_acked > 0 && queueing_delay(s, ack, &q, &q_max)) {
		s->last_q_us = (__u32)q;
		s->last_q_max_us = (__u32)q_max;
		if (q > g.q_min_us && !ack->in_recovery) {
			/* (Eq. 1) / Fig. 7: one Bernoulli trial per ACK with p = g(q) (Fig. 6) */
			__u64 p = two_region_probability_q32(&g, q, q_max);

			s->last_p_q32 = (__u32)cc_min(p, 0xffffffffULL);
			s->draws++;
			if (cc_chance_q32(p) && w->cwnd_bytes >= param_w0_pkts * w->mss_bytes) {
				/* (Eq. 1) first case, FreeBSD NewReno's ECN response, no increase on this ACK */
				__u64 halved = cc_max(w->cwnd_bytes / w->mss_bytes / 2, 2) * w->mss_bytes;

				w->ssthresh_bytes = halved;
				cc_set_cwnd(w, halved);
				s->bytes_acked_in_ca = 0;
				s->delay_backoffs++;
				return;
			}
		} else {
			s->last_p_q32 = 0;
		}
	}
	/* (Eq. 1) second case: NewReno increase */
	reno_increase_on_ack(&s->bytes_acked_in_ca, w, ack, false);
}

static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	s->bytes_acked_in_ca = 0;
	s->loss_backoffs++;
	/* FreeBSD NewReno recomputes at every expiry with halve_from = cwnd, the RFC holds otherwise
	 * (Rust Hd::repeated_timeout) */
	return reno_loss_ssthresh(w, loss, param_halve_from,
				  param_halve_from == HALVE_FROM_CWND ? REPEATED_TIMEOUT_RECOMPUTE : REPEATED_TIMEOUT_HOLD);
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = s->last_q_us;
	vals[1] = s->last_q_max_us;
	vals[2] = s->last_p_q32;
	vals[3] = (__s64)(s->srtt99_us_q8 >> 8);
	vals[4] = s->draws;
	vals[5] = s->delay_backoffs;
	vals[6] = s->loss_backoffs;
	vals[7] = (__s64)s->bytes_acked_in_ca;
}

#include "ccsim_cc_ops.h"
