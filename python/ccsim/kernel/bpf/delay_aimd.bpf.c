// SPDX-License-Identifier: GPL-2.0
/*
 * Delay-based AIMD on the H-TCP increase (Leith, Shorten, McCullagh, Heffner, Dunn, Baker, PFLDnet
 * 2007, Algorithm 1 and eqs. (1)-(7)): the kernel twin of crates/ccsim-cc/src/algorithms/delay_aimd.rs.
 * The Rust file's header gives every rule, the line numbers of Algorithm 1 and every reading chosen
 * where the paper is silent; this file follows it in fixed point.
 *
 * Per ACK with an RTT sample: [2] RTTmin = min(RTT, RTTmin); [3] RTTmax = max(RTT, RTTmax - a RTT/w)
 * (per segment acked); [4] tau = RTT - RTTmin; [5] beta = min(delta RTTmin / RTT, beta_max).
 * [6-16] slow start (w <= ssthresh) limited by max_ssthresh = (w/4) tau0_bar / (RTTmax - RTTmin)
 * (eq. (7)) when the sample raised RTTmax. [17-19] congestion avoidance: if w <= w0 or tau <= tau0
 * (eq. (5): (1 - gamma) tau0_bar + gamma (RTTmax - RTTmin)), w += 2 (1 - beta) alpha(D) / w per
 * segment (H-TCP eq. (2), htcp_increase.h), else held. [22-25] delay backoff when w > w0, tau >= tau0_bar
 * (or the adaptive tau0), more than D0 since the last backoff and the window guard allows: w = beta w,
 * ssthresh = w. Loss: w = beta w (eq. (1)).
 *
 * Kernel differences: RTTmin, tau and the thresholds in microseconds (the kernel's RTT resolution),
 * RTTmax in nanoseconds so its decay of a few nanoseconds per ACK is not lost; beta in Q32, alpha and
 * the windows' packets in Q16 (Rust f64); times in 32-bit microseconds (intervals below 71 minutes).
 */
#include "ccsim_cc.h"
#include "htcp_increase.h"

#define CC_METRIC_NAMES "tau_ms/1000,tau0_ms/1000,rtt_min_ms/1000,rtt_max_ms/1000000,beta/4294967296,alpha/65536," \
	"alpha_raw/65536,delta_s/1000000,delta0_ms/1000,max_ssthresh_pkts/65536,increase_held,delay_backoffs,loss_backoffs," \
	"backoff_beta/2147483648"

enum backoff_threshold { THRESHOLD_BASELINE = 0, THRESHOLD_ADAPTIVE = 1 }; /* Rust BackoffThreshold */
enum delay_signal { SIGNAL_RTT = 0, SIGNAL_SRTT = 1 };                     /* Rust DelaySignal */

CC_PARAM(__u64, tau0_ms__us, 20000);
CC_PARAM(__u64, delta__q32, 4294967296ULL);   /* 1 */
CC_PARAM(__u64, beta_max__q32, 3865470566ULL); /* 0.9 */
CC_PARAM(__u64, gamma__q32, 2147483648ULL);   /* 0.5 */
CC_PARAM(__u64, delta0_ms__us, 0);             /* 0: max(RTTmax - RTTmin, RTTmin) */
CC_PARAM(__u64, w0_pkts__q32, 17179869184ULL); /* 4 packets */
CC_PARAM(__u64, a__q32, 4294967ULL);           /* 0.001 s/s */
CC_PARAM(__u32, backoff_threshold, THRESHOLD_BASELINE);
CC_PARAM(__u32, delay_signal, SIGNAL_RTT);
CC_PARAM(__u32, limited_slow_start, 1);
CC_PARAM(__u32, window_guard, 1);
CC_PARAM(__u32, rtt_scaling, 0);
CC_PARAM(__u64, delta_l_s__us, 1000000);
CC_PARAM(__u64, rtt_min_init_ms__us, 0);

#define NO_MAX_SSTHRESH (~0ULL) /* Rust f64::INFINITY: plain slow start */
#define F_T_B 0x01              /* t_b is set */
#define F_HELD 0x02
#define F_GUARD 0x04            /* guard_seq is set */
#define F_RTT_MAX 0x08          /* rtt_max is set */
#define F_EXACT_SSTHRESH 0x10   /* exact_ssthresh holds the last ssthresh this twin set */
#define F_RTT_MIN_PINNED 0x20   /* RTTmin is rtt_min_init_ms, not lowered before the first backoff */

struct cc_state {
	__u64 rtt_max_ns;
	__u64 beta_q32;
	__u64 max_ssthresh_q16; /* packets, Q16; NO_MAX_SSTHRESH before an estimate */
	__u32 rtt_min_us;       /* 0: none */
	__u32 tau_us;
	__u32 t_b;              /* cc_time32_us of the last backoff */
	__u32 last_now;
	__u32 guard_seq;
	__u32 alpha_q16;        /* saturates at 65536 */
	__u32 alpha_raw_q16;
	__u32 delay_backoffs;
	__u32 loss_backoffs;
	struct frac_cwnd frac;
	__u32 exact_ssthresh;   /* bytes: the last ssthresh set by a decrease (the kernel keeps segments) */
	__u32 backoff_beta_q31; /* beta of the last backoff (delay or loss), Q31: beta may be 1 */
	__u8 flags;
};

static __always_inline __u32 sat32(__u64 x) { return x > 0xffffffffULL ? 0xffffffffU : (__u32)x; }

/* The kernel keeps ssthresh in whole segments, the Rust code in bytes: a decrease's ssthresh comes
 * back from snd_ssthresh without its fraction of a segment (half a segment on average, 40 % of a
 * beta = 0.9 decrease at a 12-segment window). While snd_ssthresh still holds the whole-segment
 * value of the last decrease, the twin uses that decrease's exact bytes (as binomial.bpf.c). */
static __always_inline void remember_ssthresh(struct cc_state *s, __u64 bytes)
{
	s->exact_ssthresh = sat32(bytes);
	s->flags |= F_EXACT_SSTHRESH;
}

static __always_inline void exact_ssthresh(const struct cc_state *s, struct cc_window *w)
{
	if ((s->flags & F_EXACT_SSTHRESH) && w->ssthresh_bytes != CC_U64_MAX &&
	    w->ssthresh_bytes / w->mss_bytes == s->exact_ssthresh / w->mss_bytes)
		w->ssthresh_bytes = s->exact_ssthresh;
}

/* RTTmax - RTTmin in nanoseconds, the recent queue estimate (0 before samples). */
static __always_inline __u64 queue_span_ns(const struct cc_state *s)
{
	__u64 min_ns = (__u64)s->rtt_min_us * CC_NSEC_PER_USEC;

	if (!s->rtt_min_us || !(s->flags & F_RTT_MAX) || s->rtt_max_ns <= min_ns)
		return 0;
	return s->rtt_max_ns - min_ns;
}

/* (Eq. 5) tau0 = (1 - gamma) tau0_bar + gamma (RTTmax - RTTmin), microseconds. */
static __always_inline __u64 tau0_adaptive_us(const struct cc_state *s)
{
	__u64 g = cc_min(param_gamma__q32, CC_Q32_ONE);

	return cc_mul_q32(param_tau0_ms__us, CC_Q32_ONE - g) + cc_mul_q32(queue_span_ns(s) / CC_NSEC_PER_USEC, g);
}

/* D0: fixed, or max(RTTmax - RTTmin, RTTmin), microseconds. */
static __always_inline __u64 delta0_us(const struct cc_state *s)
{
	if (param_delta0_ms__us)
		return param_delta0_ms__us;
	return cc_max(queue_span_ns(s) / CC_NSEC_PER_USEC, s->rtt_min_us);
}

static __always_inline __u64 delta_us(const struct cc_state *s, __u32 now)
{
	return (s->flags & F_T_B) ? cc_since32_us(now, s->t_b) : 0;
}

/* Line 19 with eq. (2): 2 (1 - beta) alpha(D), Q16. */
static __always_inline __u64 alpha_now(struct cc_state *s, __u32 now)
{
	__u64 raw = htcp_alpha_raw_q16(delta_us(s, now), param_delta_l_s__us), factor = raw, alpha;

	if (param_rtt_scaling)
		factor = htcp_scaled_factor_q16(raw, s->rtt_min_us ? htcp_rtt_scale_q16(s->rtt_min_us, 100000) : CC_Q16_ONE);
	alpha = cc_mul_q32(2 * factor, CC_Q32_ONE - cc_min(s->beta_q32, CC_Q32_ONE));
	s->alpha_raw_q16 = sat32(raw);
	s->alpha_q16 = sat32(alpha);
	return alpha;
}

/* Lines 2-5 for one RTT sample; returns whether the sample raised RTTmax (line 8). */
static __always_inline bool measure(struct cc_state *s, const struct cc_window *w, __u64 raw_us, __u64 sig_us, __u64 segs)
{
	__u64 w_q16, sig_ns = sig_us * CC_NSEC_PER_USEC, decay, decayed, ratio_q32;
	bool new_max = false;

	if (!raw_us || !sig_us)
		return false;
	/* line 2; a configured RTTmin is lowered only from the first backoff on (Rust rtt_min_pinned,
	 * section II-D: the backoff is the probe of eq. (4)) */
	if (!s->rtt_min_us || (raw_us < s->rtt_min_us && !(s->flags & F_RTT_MIN_PINNED)))
		s->rtt_min_us = (__u32)raw_us;
	w_q16 = cc_max(cc_mul_div(w->cwnd_bytes, CC_Q16_ONE, w->mss_bytes), CC_Q16_ONE);
	if (!(s->flags & F_RTT_MAX)) {
		s->rtt_max_ns = sig_ns;
		s->flags |= F_RTT_MAX;
	} else {
		/* line 3: RTTmax - a RTT segs / w */
		decay = cc_mul_div(cc_mul_q32(sig_ns * segs, param_a__q32), CC_Q16_ONE, w_q16);
		decayed = s->rtt_max_ns > decay ? s->rtt_max_ns - decay : 0;
		new_max = sig_ns > decayed;
		s->rtt_max_ns = new_max ? sig_ns : decayed;
	}
	s->tau_us = (__u32)(sig_us > s->rtt_min_us ? sig_us - s->rtt_min_us : 0); /* line 4 */
	ratio_q32 = ((__u64)s->rtt_min_us << 32) / sig_us;                      /* line 5 (Eq. 4) */
	s->beta_q32 = cc_min(cc_mul_q32(ratio_q32, param_delta__q32), param_beta_max__q32);
	return new_max;
}

/* Lines 23-25: w = beta w (floor 2 MSS), ssthresh = w, t_b = now. */
static __always_inline void backoff(struct cc_state *s, struct cc_window *w, __u32 now, __u32 snd_max)
{
	__u64 target_q16, mss = w->mss_bytes;

	frac_sync(&s->frac, w->cwnd_bytes);
	target_q16 = cc_mul_q32((w->cwnd_bytes << 16) | s->frac.frac_q16, s->beta_q32);
	if (target_q16 < (2 * mss) << 16)
		target_q16 = (2 * mss) << 16;
	w->cwnd_bytes = target_q16 >> 16;
	s->frac.frac_q16 = (__u32)(target_q16 & 0xffff);
	s->frac.last_written = (__u32)w->cwnd_bytes;
	w->ssthresh_bytes = w->cwnd_bytes;
	remember_ssthresh(s, w->ssthresh_bytes);
	s->t_b = now;
	s->guard_seq = snd_max;
	s->flags = (s->flags | F_T_B | F_GUARD) & ~F_RTT_MIN_PINNED;
	s->delay_backoffs++;
	s->backoff_beta_q31 = (__u32)(s->beta_q32 >> 1);
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	s->rtt_min_us = (__u32)param_rtt_min_init_ms__us;
	if (s->rtt_min_us)
		s->flags |= F_RTT_MIN_PINNED;
	s->beta_q32 = CC_Q32_ONE / 2; /* before the first sample: standard TCP */
	s->max_ssthresh_q16 = NO_MAX_SSTHRESH;
	s->alpha_raw_q16 = CC_Q16_ONE;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	__u32 now = cc_time32_us(ack->now_ns);
	__u64 mss = w->mss_bytes, raw_us = ack->rtt_ns / CC_NSEC_PER_USEC, w_q16, counted;
	bool new_max = false, fresh = raw_us > 0, grow;

	s->last_now = now;
	exact_ssthresh(s, w);
	if (!(s->flags & F_T_B)) {
		/* D and the D0 timer from the connection start: the send time of the first acked segment */
		s->t_b = now - (__u32)raw_us;
		s->flags |= F_T_B;
	}
	if (fresh) {
		__u64 sig_us = (param_delay_signal == SIGNAL_SRTT && ack->srtt_ns) ? ack->srtt_ns / CC_NSEC_PER_USEC : raw_us;
		__u64 segs = cc_max((ack->bytes_acked + mss - 1) / mss, 1);

		new_max = measure(s, w, raw_us, sig_us, segs);
	}
	w_q16 = cc_mul_div(w->cwnd_bytes, CC_Q16_ONE, mss);
	grow = ack->bytes_acked > 0 && !ack->in_recovery && ack->cwnd_limited;
	counted = htcp_counted_bytes(ack->bytes_acked, mss, tcp_abc_limit);
	s->flags &= ~F_HELD;
	if (cc_in_slow_start(w)) {
		__u64 span = queue_span_ns(s);

		if (param_limited_slow_start && new_max && span > 0) /* (Eq. 7) */
			s->max_ssthresh_q16 = cc_mul_div(w_q16 / 4, param_tau0_ms__us * CC_NSEC_PER_USEC, span);
		if (grow) {
			if (!param_limited_slow_start || w_q16 <= s->max_ssthresh_q16) {
				__u64 limit = tcp_abc_limit ? (__u64)tcp_abc_limit * mss : mss;

				/* line 12; under Linux's rule stopping at ssthresh (the leftover count
				 * is dropped, as in htcp.bpf.c) */
				cc_slow_start_grow(w, cc_min(ack->bytes_acked, limit));
				frac_sync(&s->frac, w->cwnd_bytes);
			} else {
				/* line 14: max_ssthresh / (2 w) packets per segment */
				frac_add(&s->frac, &w->cwnd_bytes,
					 cc_mul_div(s->max_ssthresh_q16 * counted, CC_Q16_ONE, 2 * cc_max(w_q16, 1)));
			}
		}
	} else if (grow) {
		/* lines 17-19: increase only when w <= w0 or tau <= tau0 (eqs. (5), (6)) */
		if (w_q16 <= (param_w0_pkts__q32 >> 16) || s->tau_us <= tau0_adaptive_us(s)) {
			__u64 alpha = alpha_now(s, now);

			frac_add(&s->frac, &w->cwnd_bytes, cc_mul_div(alpha * mss, counted, cc_max(w->cwnd_bytes, 1)));
		} else {
			s->flags |= F_HELD; /* flat section of Fig. 5 */
		}
	}
	if (!(s->flags & F_HELD))
		alpha_now(s, now);
	/* lines 22-25: delay backoff */
	if (fresh && !ack->in_recovery) {
		__u64 threshold = param_backoff_threshold == THRESHOLD_ADAPTIVE ? tau0_adaptive_us(s) : param_tau0_ms__us;
		bool guard_ok = !param_window_guard || !(s->flags & F_GUARD) || cc_seq_before(s->guard_seq, ack->snd_una);

		w_q16 = cc_mul_div(w->cwnd_bytes, CC_Q16_ONE, mss);
		if (w_q16 > (param_w0_pkts__q32 >> 16) && s->tau_us >= threshold && delta_us(s, now) > delta0_us(s) && guard_ok)
			backoff(s, w, now, ack->snd_max);
	}
}

/* Loss: w = beta w (eqs. (1), (6)), floor 2 MSS; t_b = now. */
static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	__u64 cwnd_q16, ssthresh;

	s->t_b = cc_time32_us(loss->now_ns);
	s->flags = (s->flags | F_T_B) & ~F_RTT_MIN_PINNED;
	if (loss->kind == CC_LOSS_TIMEOUT && loss->backoff > 1 && w->ssthresh_bytes != CC_U64_MAX)
		return w->ssthresh_bytes;
	s->loss_backoffs++;
	s->backoff_beta_q31 = (__u32)(s->beta_q32 >> 1);
	cwnd_q16 = (w->cwnd_bytes << 16) | (((__u32)w->cwnd_bytes == s->frac.last_written) ? s->frac.frac_q16 : 0);
	ssthresh = cc_max(cc_mul_q32(cwnd_q16, s->beta_q32) >> 16, 2 * w->mss_bytes);
	remember_ssthresh(s, ssthresh);
	return ssthresh;
}

#define CC_HAS_RECOVERY_EXIT
/* End of fast recovery: the Rust trait's default (cwnd = min(ssthresh, FlightSize + MSS), RFC 6582
 * step 3 option 1) with the decrease's exact ssthresh. */
static __always_inline void cc_on_recovery_exit(struct cc_state *s, struct cc_window *w, const struct cc_recovery_exit *e)
{
	exact_ssthresh(s, w);
	cc_default_recovery_exit(w, e);
}

#define CC_HAS_TIMEOUT
/* An expiry for which Linux kept ssthresh (a later expiry of the same segment, or one during fast
 * recovery: ccsim_cc_ops.h, set_state) keeps it (RFC 5681), restarts t_b and ends the pinned
 * RTTmin (Rust ssthresh_after_loss, backoff > 1). */
static __always_inline void cc_on_timeout(struct cc_state *s, struct cc_window *w, __u64 now_ns, bool first_expiry)
{
	if (!first_expiry) {
		s->t_b = cc_time32_us(now_ns);
		s->flags = (s->flags | F_T_B) & ~F_RTT_MIN_PINNED;
	}
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = s->tau_us;
	vals[1] = (__s64)tau0_adaptive_us(s);
	vals[2] = s->rtt_min_us;
	vals[3] = (__s64)s->rtt_max_ns;
	vals[4] = (__s64)s->beta_q32;
	vals[5] = s->alpha_q16;
	vals[6] = s->alpha_raw_q16;
	vals[7] = (__s64)delta_us(s, s->last_now);
	vals[8] = (__s64)delta0_us(s);
	vals[9] = s->max_ssthresh_q16 == NO_MAX_SSTHRESH ? 0 : (__s64)s->max_ssthresh_q16;
	vals[10] = !!(s->flags & F_HELD);
	vals[11] = s->delay_backoffs;
	vals[12] = s->loss_backoffs;
	vals[13] = s->backoff_beta_q31;
}

#include "ccsim_cc_ops.h"
