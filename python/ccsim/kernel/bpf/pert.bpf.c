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
#include "reno_loss.h"

#define CC_METRIC_NAMES "srtt099_ms/1000,qdelay_ms/1000,p_response/4294967296,early_responses,guard_active,abc_bytes_acked"

enum trials { TRIALS_ACK = 0, TRIALS_SEGMENT = 1 };             /* Rust Trials */

CC_PARAM(__u64, t_min_ms__us, 5000);
CC_PARAM(__u64, t_max_ms__us, 20000);
CC_PARAM(__u64, p_max__q32, 214748365);       /* 0.05 */
CC_PARAM(__u32, gentle, 1);
CC_PARAM(__u64, srtt_weight__q32, 4252017623); /* 0.99 */
CC_PARAM(__u64, beta__q32, 1503238554);        /* 0.35 */
CC_PARAM(__u32, trials, TRIALS_ACK);
CC_PARAM(__u32, halve_from, HALVE_FROM_FLIGHT);

struct cc_state {
	__u64 bytes_acked_in_ca; /* Rust RenoIncrease */
	__u64 srtt_us_q16;       /* (P1) srtt_0.99, microseconds times 2^16; 0 = no sample yet */
	__u64 p_q32;             /* (P2) at the last ACK */
	__u32 q_us;              /* queueing delay at the last ACK */
	__u32 guard_until;       /* (P4) snd_max of the last response */
	__u32 responses;
	__u8 guard_armed;
};

#include "pert_core.h"

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
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
		reno_increase_on_ack(&s->bytes_acked_in_ca, w, ack, true); /* (P5) */
	}
}

/* (P6) the Reno loss rule, held on repeated timeouts. */
static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	s->bytes_acked_in_ca = 0;
	return reno_loss_ssthresh(w, loss, param_halve_from, REPEATED_TIMEOUT_HOLD);
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
