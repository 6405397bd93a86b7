// SPDX-License-Identifier: GPL-2.0
/*
 * PERT, Probabilistic Early Response TCP: the kernel twin of crates/ccsim-cc/src/algorithms/pert.rs
 * (Bhandarkar et al. 2007; Budzisz et al. 2009 section II, Fig. 1, Table I). The rule numbers
 * (P1)-(P6) are the Rust file's; its header lists every reading chosen.
 *
 * (P1) srtt <- w srtt + (1 - w) sample on every raw RTT sample; q = srtt - RTTmin.
 * (P2) p(q): 0 up to t_min, linear to p_max at t_max, then (gentle) linear to 1 at 2 t_max.
 * (P3) On an ACK of new data, outside recovery, with cwnd > ssthresh: one trial (or one per segment
 *      acked: 1 - (1 - p)^n); on success w <- (1 - beta) w, ssthresh <- w (floor 2 MSS).
 * (P4) Once per RTT: no response until the cumulative ACK reaches snd_max of the last response.
 * (P5) Otherwise the Reno increase, slow start meaning cwnd < ssthresh.
 * (P6) Loss: Reno, half of FlightSize (or cwnd), held on repeated timeouts.
 *
 * Kernel differences: srtt in Q16 microseconds and probabilities in Q32 (the Rust side uses f64);
 * the coin is bpf_get_prandom_u32(); RTTmin is Linux's 300 s windowed minimum; the per-segment trial
 * count is whole segments (at most 64).
 */
#include "ccsim_cc.h"

#define CC_METRIC_NAMES "srtt099_ms/1000,qdelay_ms/1000,p_response/4294967296,early_responses,guard_active,abc_bytes_acked"

enum halve_from { HALVE_FROM_FLIGHT = 0, HALVE_FROM_CWND = 1 }; /* Rust HalveFrom, in its order */
enum trials { TRIALS_ACK = 0, TRIALS_SEGMENT = 1 };             /* Rust Trials */

CC_PARAM(__u64, t_min_ms__us, 5000);
CC_PARAM(__u64, t_max_ms__us, 20000);
CC_PARAM(__u64, p_max__q32, 214748365);       /* 0.05 */
CC_PARAM(__u32, gentle, 1);
CC_PARAM(__u64, srtt_weight__q32, 4252017623); /* 0.99 */
CC_PARAM(__u64, beta__q32, 1503238554);        /* 0.35 */
CC_PARAM(__u32, trials, TRIALS_ACK);
CC_PARAM(__u32, halve_from, HALVE_FROM_FLIGHT);

#define MAX_SEGMENT_TRIALS 64

struct cc_state {
	__u64 bytes_acked_in_ca; /* Rust RenoIncrease */
	__u64 srtt_us_q16;       /* (P1) srtt_0.99, microseconds times 2^16; 0 = no sample yet */
	__u64 p_q32;             /* (P2) at the last ACK */
	__u32 q_us;              /* queueing delay at the last ACK */
	__u32 guard_until;       /* (P4) snd_max of the last response */
	__u32 responses;
	__u8 guard_armed;
};

/* Rust RenoIncrease::on_ack (newreno.bpf.c) with slow start meaning cwnd < ssthresh (P5). */
static __always_inline void reno_increase_strict(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	__u64 mss = w->mss_bytes;
	__u64 limit = tcp_abc_limit ? (__u64)tcp_abc_limit * mss : mss;

	if (ack->bytes_acked == 0 || ack->in_recovery || !ack->cwnd_limited)
		return;
	if (w->cwnd_bytes < w->ssthresh_bytes) {
		w->cwnd_bytes += cc_min(ack->bytes_acked, limit);
	} else if (tcp_abc_limit) {
		s->bytes_acked_in_ca += cc_min(ack->bytes_acked, limit);
		if (s->bytes_acked_in_ca >= w->cwnd_bytes) {
			s->bytes_acked_in_ca -= w->cwnd_bytes;
			w->cwnd_bytes += mss;
		}
	} else {
		w->cwnd_bytes += cc_max(mss * mss / cc_max(w->cwnd_bytes, 1), 1);
	}
}

/* (P2) Rust RedRamp::probability, in Q32. */
static __always_inline __u64 red_ramp_q32(__u64 q_us)
{
	__u64 t_min = param_t_min_ms__us, t_max = param_t_max_ms__us;
	__u64 p_max = cc_min(param_p_max__q32, CC_Q32_ONE);

	if (q_us <= t_min)
		return 0;
	if (q_us <= t_max)
		return t_max > t_min ? p_max * (q_us - t_min) / (t_max - t_min) : p_max;
	if (!param_gentle)
		return CC_Q32_ONE;
	if (q_us < 2 * t_max)
		return p_max + (CC_Q32_ONE - p_max) * (q_us - t_max) / t_max;
	return CC_Q32_ONE;
}

/* Rust trial_probability: p per ACK, or 1 - (1 - p)^n for an ACK of n segments. */
static __always_inline __u64 trial_probability_q32(__u64 p, __u64 segments)
{
	__u64 keep = CC_Q32_ONE - p, stay = CC_Q32_ONE;

	if (param_trials != TRIALS_SEGMENT || segments <= 1)
		return p;
	for (int i = 0; i < MAX_SEGMENT_TRIALS; i++) {
		if (i >= segments)
			break;
		stay = cc_mul_q32(stay, keep);
	}
	return CC_Q32_ONE - stay;
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
}

/* (P1)-(P2): Rust PertCore::observe. */
static __always_inline void observe(struct cc_state *s, const struct cc_ack *ack)
{
	__u64 min_us = ack->min_rtt_ns / CC_NSEC_PER_USEC, srtt_us;

	if (ack->rtt_ns) {
		__u64 sample_q16 = (ack->rtt_ns / CC_NSEC_PER_USEC) << 16;

		s->srtt_us_q16 = s->srtt_us_q16 ? cc_mul_q32(s->srtt_us_q16, param_srtt_weight__q32) +
						      cc_mul_q32(sample_q16, CC_Q32_ONE - param_srtt_weight__q32)
						: sample_q16;
	}
	if (s->srtt_us_q16 && min_us) {
		srtt_us = s->srtt_us_q16 >> 16;
		s->q_us = (__u32)(srtt_us > min_us ? srtt_us - min_us : 0);
		s->p_q32 = red_ramp_q32(s->q_us);
	} else {
		s->q_us = 0;
		s->p_q32 = 0;
	}
	if (s->guard_armed && !cc_seq_before(ack->snd_una, s->guard_until))
		s->guard_armed = 0; /* (P4) the RTT of the last response is over */
}

/* (P3)-(P4): Rust PertCore::decide. */
static __always_inline bool decide(struct cc_state *s, const struct cc_window *w, const struct cc_ack *ack)
{
	if (ack->bytes_acked == 0 || ack->in_recovery || w->cwnd_bytes <= w->ssthresh_bytes || s->p_q32 == 0)
		return false;
	if (s->guard_armed && cc_seq_before(ack->snd_una, s->guard_until))
		return false;
	s->guard_armed = 0;
	if (!cc_chance_q32(trial_probability_q32(s->p_q32, ack->bytes_acked / w->mss_bytes)))
		return false;
	s->guard_armed = 1;
	s->guard_until = ack->snd_max;
	s->responses++;
	return true;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	observe(s, ack);
	if (decide(s, w, ack)) {
		/* (P3) early response: w <- (1 - beta) w (floor 2 MSS, never above w), ssthresh <- w */
		__u64 reduced = cc_mul_q32(w->cwnd_bytes, CC_Q32_ONE - cc_min(param_beta__q32, CC_Q32_ONE));

		reduced = cc_min(cc_max(reduced, 2 * w->mss_bytes), w->cwnd_bytes);
		cc_set_cwnd(w, reduced);
		w->ssthresh_bytes = w->cwnd_bytes;
		s->bytes_acked_in_ca = 0;
	} else {
		reno_increase_strict(s, w, ack); /* (P5) */
	}
}

/* (P6) Rust reno_loss_ssthresh. */
static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	__u64 base = param_halve_from == HALVE_FROM_CWND ? w->cwnd_bytes : loss->bytes_in_flight;

	s->bytes_acked_in_ca = 0;
	if (loss->kind == CC_LOSS_TIMEOUT && loss->backoff > 1 && w->ssthresh_bytes != CC_U64_MAX)
		return w->ssthresh_bytes;
	return cc_half_window(base, w->mss_bytes);
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = (__s64)(s->srtt_us_q16 >> 16);
	vals[1] = s->q_us;
	vals[2] = (__s64)s->p_q32;
	vals[3] = s->responses;
	vals[4] = s->guard_armed;
	vals[5] = (__s64)s->bytes_acked_in_ca;
}

#include "ccsim_cc_ops.h"
