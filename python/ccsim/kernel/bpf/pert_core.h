/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pert_core.h: PERT's delay estimate, response probability and once-per-RTT early response, the
 * twin of PertCore in crates/ccsim-cc/src/algorithms/pert.rs, shared by pert.bpf.c and mpert.bpf.c.
 * Included after the algorithm file has declared enum trials (Rust Trials), PERT's parameters (param_t_min_ms__us,
 * param_t_max_ms__us, param_p_max__q32, param_gentle, param_srtt_weight__q32, param_trials) and a
 * struct cc_state with the fields bytes_acked_in_ca, srtt_us_q16, p_q32, q_us, guard_until,
 * guard_armed and responses. Fixed point: srtt in Q16 microseconds, probabilities in Q32.
 */
#ifndef PERT_CORE_H
#define PERT_CORE_H

#include "ccsim_cc.h"
#include "reno_increase.h"

#define MAX_SEGMENT_TRIALS 64

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

#endif /* PERT_CORE_H */
