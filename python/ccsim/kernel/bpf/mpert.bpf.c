// SPDX-License-Identifier: GPL-2.0
/*
 * mPERT, PERT with adaptive increase and decrease (Kotla & Reddy 2008, as given by Budzisz et al.,
 * IEEE Comm. Letters 2009, section II, Fig. 2, Table I): the kernel twin of
 * crates/ccsim-cc/src/algorithms/mpert.rs. Rule numbers (M1)-(M7) are the Rust file's; its header
 * lists every choice made where the paper is silent.
 *
 * (M1) srtt_0.99 and delta = srtt - RTTmin (PERT, pert_core.h). (M2) delta_max = max(delta_max,
 * maxRTT - minRTT), from 100 ms. (M3) p = PERT's ramp of delta. (M4) early response (once per RTT):
 * w -= beta w, beta = delta / (delta + delta_max) (<= 0.5), ssthresh = w. (M5) otherwise
 * w += alpha / w per ACK. (M6) compete mode iff delta >= 0.5 delta_max; there alpha = min(1 + p'/p,
 * alpha_max) with the TFRC rates of losses and early responses (loss_interval.h), else 1; with
 * p_prime = probability, p' is the current response probability: p'/p = p x mean loss interval.
 * (M7) losses and timeouts: Reno.
 *
 * Kernel differences: srtt in Q16 microseconds, delta_max in nanoseconds, probabilities and beta in
 * Q32, alpha in Q16 (Rust f64); intervals in whole packets (the glue acknowledges whole segments);
 * the coin is bpf_get_prandom_u32(); RTTmin is Linux's 300 s windowed minimum. The state (two
 * interval histories) exceeds the 104-byte private area and lives in socket storage.
 */
#define CC_STATE_IN_SK_STORAGE
#include "ccsim_cc.h"
#include "htcp_increase.h" /* frac_cwnd */
#include "loss_interval.h"
#include "reno_loss.h"

#define CC_METRIC_NAMES "srtt099_ms/1000,qdelay_ms/1000,delta_max_ms/1000000,p_response/4294967296,compete,alpha/65536," \
	"beta/4294967296,loss_rate/4294967296,response_rate/4294967296,loss_events,early_responses"

enum trials { TRIALS_ACK = 0, TRIALS_SEGMENT = 1 };                                  /* Rust Trials */
enum delta_max_from { DELTA_MAX_RAW = 0, DELTA_MAX_SMOOTHED = 1 };                   /* Rust DeltaMaxFrom */

CC_PARAM(__u64, t_min_ms__us, 5000);
CC_PARAM(__u64, t_max_ms__us, 20000);
CC_PARAM(__u64, p_max__q32, 214748365);        /* 0.05 */
CC_PARAM(__u32, gentle, 1);
CC_PARAM(__u64, srtt_weight__q32, 4252017623); /* 0.99 */
CC_PARAM(__u64, alpha_max__q32, 137438953472ULL); /* 32 packets */
CC_PARAM(__u64, delta_max_init_ms__us, 100000);
CC_PARAM(__u64, compete_fraction__q32, 2147483648ULL); /* 0.5 */
CC_PARAM(__u32, delta_max_from, DELTA_MAX_RAW);
CC_PARAM(__u32, trials, TRIALS_ACK);
CC_PARAM(__u32, halve_from, HALVE_FROM_FLIGHT);
enum p_prime { P_PRIME_REALISED = 0, P_PRIME_PROBABILITY = 1 }; /* Rust PPrime, in its order */
CC_PARAM(__u32, p_prime, P_PRIME_REALISED);

struct cc_state {
	__u64 bytes_acked_in_ca; /* Rust RenoIncrease (slow start) */
	__u64 srtt_us_q16;       /* (M1) srtt_0.99, us * 2^16; 0 = no sample yet */
	__u64 p_q32;             /* (M3) */
	__u64 delta_max_ns;      /* (M2) */
	__u64 alpha_q16;         /* (M6) */
	__u64 beta_q32;          /* (M4) */
	struct loss_intervals loss_intervals;     /* (M6) between loss events */
	struct loss_intervals response_intervals; /* (M6) between early responses */
	struct frac_cwnd frac;   /* (M5) fraction of a byte, reset when cwnd changed behind our back */
	__u32 q_us;              /* (M1) delta at the last ACK */
	__u32 guard_until;       /* (P4) snd_max of the last response */
	__u32 responses;
	__u32 max_rtt_us;        /* lifetime maximum of the raw samples (Rust AckSample::max_rtt) */
	__u8 guard_armed;
	__u8 compete;
};

#include "pert_core.h"

/* (M6) alpha for the current mode and rates, Q16 (the Rust compute_alpha, its undefined cases). */
static __always_inline __u64 compute_alpha(const struct cc_state *s)
{
	__u64 il, ir, alpha_max = cc_max(param_alpha_max__q32 >> 16, CC_Q16_ONE);

	if (!s->compete)
		return CC_Q16_ONE;
	if (!li_mean_q16(&s->loss_intervals, &il))
		return CC_Q16_ONE; /* no loss yet: p undefined */
	if (param_p_prime == P_PRIME_PROBABILITY) /* p' = g(delta_current) per packet, p = 1 / I_loss */
		return cc_clamp(CC_Q16_ONE + cc_mul_div(il, s->p_q32, CC_Q32_ONE), CC_Q16_ONE, alpha_max);
	if (!li_mean_q16(&s->response_intervals, &ir))
		return CC_Q16_ONE; /* no early response yet: p' = 0 */
	if (!il)
		return CC_Q16_ONE; /* p unbounded: p'/p = 0 */
	if (!ir)
		return alpha_max;  /* p' unbounded */
	return cc_clamp(CC_Q16_ONE + cc_mul_div(il, CC_Q16_ONE, ir), CC_Q16_ONE, alpha_max); /* 1 + p'/p */
}

/* Rust pert::reduced_window: round(w (1 - f)), at least 2 MSS, never above w. */
static __always_inline __u64 reduced_window(const struct cc_window *w, __u64 f_q32)
{
	__u64 keep = CC_Q32_ONE - cc_min(f_q32, CC_Q32_ONE);
	__u64 new = (cc_mul_q32(2 * w->cwnd_bytes, keep) + 1) / 2;

	return cc_min(cc_max(new, 2 * w->mss_bytes), w->cwnd_bytes);
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	s->delta_max_ns = param_delta_max_init_ms__us * CC_NSEC_PER_USEC;
	s->alpha_q16 = CC_Q16_ONE;
	s->frac.last_written = (__u32)w->cwnd_bytes;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	__u64 mss = w->mss_bytes, rtt_us = ack->rtt_ns / CC_NSEC_PER_USEC, min_us = ack->min_rtt_ns / CC_NSEC_PER_USEC;
	__u64 delta_ns, q_sample_ns = 0, denom;
	bool have_q = false;

	frac_sync(&s->frac, w->cwnd_bytes); /* the machine changed cwnd: drop the stale fraction */
	if (rtt_us > s->max_rtt_us)
		s->max_rtt_us = (__u32)rtt_us;
	observe(s, ack); /* (M1), (M3) */
	/* (M2) running max of the queueing delay */
	if (param_delta_max_from == DELTA_MAX_SMOOTHED) {
		have_q = s->srtt_us_q16 && min_us;
		q_sample_ns = (__u64)s->q_us * CC_NSEC_PER_USEC;
	} else if (s->max_rtt_us && min_us) {
		have_q = true;
		q_sample_ns = (s->max_rtt_us > min_us ? s->max_rtt_us - min_us : 0) * CC_NSEC_PER_USEC;
	}
	if (have_q && q_sample_ns > s->delta_max_ns)
		s->delta_max_ns = q_sample_ns;
	if (ack->bytes_acked > 0) {
		li_add_packets(&s->loss_intervals, ack->bytes_acked / mss);
		li_add_packets(&s->response_intervals, ack->bytes_acked / mss);
	}
	/* (M6) mode, alpha; (M4) beta */
	delta_ns = (__u64)s->q_us * CC_NSEC_PER_USEC;
	s->compete = s->delta_max_ns > 0 && delta_ns >= cc_mul_q32(s->delta_max_ns, param_compete_fraction__q32);
	s->alpha_q16 = compute_alpha(s);
	denom = delta_ns + s->delta_max_ns;
	s->beta_q32 = denom ? cc_min((delta_ns << 32) / denom, CC_Q32_ONE / 2) : 0;
	if (decide(s, w, ack)) {
		/* (M4) w <- w - beta w, ssthresh <- w */
		cc_set_cwnd(w, reduced_window(w, s->beta_q32));
		w->ssthresh_bytes = w->cwnd_bytes;
		li_on_event(&s->response_intervals);
		s->bytes_acked_in_ca = 0;
		s->frac.frac_q16 = 0;
	} else if (w->cwnd_bytes < w->ssthresh_bytes) {
		reno_increase_on_ack(&s->bytes_acked_in_ca, w, ack, true); /* (M7) slow start */
	} else if (ack->bytes_acked && !ack->in_recovery && ack->cwnd_limited) {
		/* (M5) w += alpha MSS counted / w, in bytes with the fraction carried */
		__u64 counted = htcp_counted_bytes(ack->bytes_acked, mss, tcp_abc_limit);

		frac_add(&s->frac, &w->cwnd_bytes, cc_mul_div(s->alpha_q16 * mss, counted, cc_max(w->cwnd_bytes, 1)));
	}
	s->frac.last_written = (__u32)w->cwnd_bytes;
}

/* (M7) the Reno loss rule, held on repeated timeouts, as Rust; every call is a new loss event (Linux calls ssthresh for a
 * fast retransmit and for the first expiry of a timeout only). */
static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	li_on_event(&s->loss_intervals);
	s->bytes_acked_in_ca = 0;
	s->frac.frac_q16 = 0;
	return reno_loss_ssthresh(w, loss, param_halve_from, REPEATED_TIMEOUT_HOLD);
}

static __always_inline __u64 rate_q32(const struct loss_intervals *li)
{
	__u64 m;

	if (!li_mean_q16(li, &m) || !m)
		return 0;
	return (1ULL << 48) / m; /* 1 / mean, Q32 */
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = (__s64)(s->srtt_us_q16 >> 16);
	vals[1] = s->q_us;
	vals[2] = (__s64)s->delta_max_ns;
	vals[3] = (__s64)s->p_q32;
	vals[4] = s->compete;
	vals[5] = (__s64)s->alpha_q16;
	vals[6] = (__s64)s->beta_q32;
	vals[7] = (__s64)rate_q32(&s->loss_intervals);
	vals[8] = (__s64)rate_q32(&s->response_intervals);
	vals[9] = (__s64)s->loss_intervals.events;
	vals[10] = s->responses;
}

#include "ccsim_cc_ops.h"
