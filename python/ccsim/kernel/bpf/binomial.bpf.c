// SPDX-License-Identifier: GPL-2.0
/*
 * Binomial congestion control (Bansal & Balakrishnan, INFOCOM 2001): the kernel twin of
 * crates/ccsim-cc/src/algorithms/binomial.rs (ns-2 tcp.cc opencwnd() case 6, slowdown()). The Rust
 * file's header lists every rule and reading; this file follows it in fixed point.
 *
 * (Eq. 2, I) per ACK in congestion avoidance: w += n alpha / w^(k+1), n = segments acked (ABC-capped)
 *            or 1 (increase_per = ack); slow start (cwnd < ssthresh) is Reno's with ABC.
 * (Eq. 2, D) at a fast retransmit: w -= beta w^l (floor 2 packets); the connection's first decrease
 *            and decreases in slow start halve w instead (ns-2 slowdown(), first_decrease_halves).
 * Timeouts are standard TCP: ssthresh = max(FlightSize / 2, 2 MSS), held on repeated expiries.
 * End of fast recovery: cwnd = ssthresh (ns-2's SACK sender), back to the exact decreased window.
 *
 * Kernel differences: the window in packets is Q32 (the Rust f64), w^x through binomial_power.h
 * (relative error below 3.2e-5 for exponents up to 2); the exponents k and l must not be negative
 * (the loader takes no negative values); the preset-dependent defaults (k and l given means
 * custom, aimd's beta 0.5) are made explicit by the front end (plan.py), so the twin sees values.
 * A timeout reaches the ssthresh hook as a fast retransmit: cc_on_timeout undoes that decrease's
 * bookkeeping and sets the timeout's ssthresh.
 */
#include "ccsim_cc.h"
#include "binomial_power.h"

#define CC_METRIC_NAMES "w_pkts/4294967296,k/4294967296,l/4294967296,alpha/4294967296,beta/4294967296,decreases," \
	"halvings,first_decrease_pending"

enum preset { PRESET_IIAD = 0, PRESET_SQRT = 1, PRESET_AIMD = 2, PRESET_CUSTOM = 3 }; /* Rust Preset */
enum increase_per { INCREASE_PER_SEGMENT = 0, INCREASE_PER_ACK = 1 };             /* Rust IncreasePer */

CC_PARAM(__u32, preset, PRESET_IIAD);
CC_PARAM(__u64, k__q32, 4294967296ULL); /* 1 */
CC_PARAM(__u64, l__q32, 0);
CC_PARAM(__u64, alpha__q32, 4294967296ULL); /* 1 packet */
CC_PARAM(__u64, beta__q32, 2576980378ULL);  /* 0.6 */
CC_PARAM(__u32, first_decrease_halves, 1);
CC_PARAM(__u32, increase_per, INCREASE_PER_SEGMENT);
CC_PARAM(__u32, allow_unstable_l, 0); /* checked by the front end, as the Rust constructor */

#define F_FIRST_DECREASE 0x01 /* no decrease yet (ns-2 first_decrease_) */
#define F_PENDING 0x02        /* pending_* hold the last decrease */
#define F_LAST_HALVED 0x04    /* the last fast-retransmit decrease halved */

struct cc_state {
	__u64 w_q32;          /* the real-valued window in packets */
	__u64 pending_w_q32;  /* the exact window the last decrease produced ... */
	__u64 k_q32, l_q32;   /* the exponents in use (from the preset or given) */
	__u32 pending_bytes;  /* ... and the ssthresh in bytes that encodes it */
	__u32 synced_cwnd;    /* the byte window w corresponds to */
	__u32 last_flight;    /* FlightSize at the last ssthresh call */
	__u32 decreases;
	__u32 halvings;
	__u8 flags;
};

/* Packets (Q32) -> bytes, rounded to nearest, at least one MSS (Rust to_bytes). */
static __always_inline __u64 to_bytes(__u64 w_q32, __u64 mss)
{
	return cc_max((cc_mul_q32(2 * mss, w_q32) + 1) / 2, mss);
}

static __always_inline __u64 pkts_q32(__u64 bytes, __u64 mss)
{
	return cc_mul_div(bytes, CC_Q32_ONE, mss);
}

/* The kernel keeps ssthresh in whole segments: the last decrease's ssthresh comes back from it as
 * floor(pending_bytes / MSS) segments. */
static __always_inline bool is_pending(const struct cc_state *s, __u64 bytes, __u64 mss)
{
	return (s->flags & F_PENDING) && bytes / mss == s->pending_bytes / mss;
}

/* Rust Binomial::sync: follow cwnd when anything but us changed it; a cwnd back at the last
 * decrease's value (in whole segments, as the kernel holds it) takes that decrease's exact window. */
static __always_inline void sync(struct cc_state *s, __u64 cwnd_bytes, __u64 mss)
{
	if ((__u32)cwnd_bytes != s->synced_cwnd) {
		s->w_q32 = is_pending(s, cwnd_bytes, mss) ? s->pending_w_q32 : pkts_q32(cwnd_bytes, mss);
		s->synced_cwnd = (__u32)cwnd_bytes;
	}
}

/* (Eq. 2, D) the window after a fast-retransmit loss event, in packets (Q32, floor 2). */
static __always_inline __u64 decreased_window(struct cc_state *s, __u64 w_q32, bool in_slow_start)
{
	__u64 floor = 2 * CC_Q32_ONE, dec_q16;

	s->flags &= ~F_LAST_HALVED;
	if (param_first_decrease_halves && ((s->flags & F_FIRST_DECREASE) || in_slow_start)) {
		s->halvings++;
		s->flags |= F_LAST_HALVED;
		return cc_max(w_q32 / 2, floor); /* ns-2 slowdown(): halfwin */
	}
	/* beta w^l, Q16 */
	dec_q16 = cc_mul_q32(binomial_pow_q16(w_q32 >> 16, s->l_q32), param_beta__q32);
	if (dec_q16 >= (w_q32 >> 16))
		return floor;
	return cc_max(w_q32 - (dec_q16 << 16), floor);
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	switch (param_preset) {
	case PRESET_IIAD: s->k_q32 = CC_Q32_ONE; s->l_q32 = 0; break;
	case PRESET_SQRT: s->k_q32 = CC_Q32_ONE / 2; s->l_q32 = CC_Q32_ONE / 2; break;
	case PRESET_AIMD: s->k_q32 = 0; s->l_q32 = CC_Q32_ONE; break;
	default: s->k_q32 = param_k__q32; s->l_q32 = param_l__q32; break;
	}
	s->w_q32 = pkts_q32(w->cwnd_bytes, w->mss_bytes);
	s->synced_cwnd = (__u32)w->cwnd_bytes;
	s->flags = F_FIRST_DECREASE;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	__u64 mss = w->mss_bytes, n_q32, inc_q32;

	sync(s, w->cwnd_bytes, mss);
	if (ack->bytes_acked == 0 || ack->in_recovery || !ack->cwnd_limited)
		return;
	if (w->cwnd_bytes < w->ssthresh_bytes) {
		/* slow start, unchanged (section 3): RFC 5681 with RFC 3465, stopping at ssthresh under
		 * Linux's rule (the leftover count is dropped, as in htcp.bpf.c) */
		__u64 limit = tcp_abc_limit ? (__u64)tcp_abc_limit * mss : mss;

		cc_slow_start_grow(w, cc_min(ack->bytes_acked, limit));
		s->w_q32 = pkts_q32(w->cwnd_bytes, mss);
		s->synced_cwnd = (__u32)w->cwnd_bytes;
		return;
	}
	/* (Eq. 2, I) per ACK: w += n alpha / w^(k+1) */
	if (param_increase_per == INCREASE_PER_SEGMENT) {
		n_q32 = pkts_q32(ack->bytes_acked, mss);
		if (tcp_abc_limit)
			n_q32 = cc_min(n_q32, (__u64)tcp_abc_limit << 32);
	} else {
		n_q32 = CC_Q32_ONE;
	}
	inc_q32 = cc_mul_q32(cc_mul_q32(n_q32, param_alpha__q32),
			     binomial_inv_pow_q32(cc_max(s->w_q32 >> 16, CC_Q16_ONE), s->k_q32 + CC_Q32_ONE));
	s->w_q32 += inc_q32;
	cc_set_cwnd(w, to_bytes(s->w_q32, mss));
	s->synced_cwnd = (__u32)w->cwnd_bytes;
}

static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	__u64 mss = w->mss_bytes, new_q32, bytes;

	sync(s, w->cwnd_bytes, mss);
	s->decreases++;
	s->last_flight = (__u32)cc_min(loss->bytes_in_flight, 0xffffffffULL);
	new_q32 = decreased_window(s, s->w_q32, w->cwnd_bytes < w->ssthresh_bytes);
	s->flags &= ~F_FIRST_DECREASE;
	bytes = cc_max(to_bytes(new_q32, mss), 2 * mss);
	/* the glue sets cwnd = ssthresh now; keep the exact value for when cwnd returns to it */
	s->pending_bytes = (__u32)bytes;
	s->pending_w_q32 = new_q32;
	s->flags |= F_PENDING;
	s->w_q32 = new_q32;
	s->synced_cwnd = (__u32)bytes;
	return bytes;
}

#define CC_HAS_RECOVERY_EXIT
/* End of fast recovery: cwnd = ssthresh (RFC 6582 step 3 option 2, ns-2's SACK sender). */
static __always_inline void cc_on_recovery_exit(struct cc_state *s, struct cc_window *w, const struct cc_recovery_exit *e)
{
	if (e->after_timeout)
		return;
	/* ssthresh as the decrease left it in bytes (the kernel's snd_ssthresh lost the fraction of a
	 * segment, up to 0.6 packets: as large as IIAD's whole decrease) */
	cc_set_cwnd(w, is_pending(s, w->ssthresh_bytes, w->mss_bytes) ? s->pending_bytes : w->ssthresh_bytes);
	sync(s, w->cwnd_bytes, w->mss_bytes);
}

#define CC_HAS_TIMEOUT
/* A standard timeout (section 3): ssthresh = max(FlightSize / 2, 2 MSS), held on repeated expiries
 * (Rust reno_loss_ssthresh with halve_from = flight). */
static __always_inline void cc_on_timeout(struct cc_state *s, struct cc_window *w, __u64 now_ns, bool first_expiry)
{
	if (first_expiry) {
		/* the ssthresh call just before was this timeout's, not a fast retransmit's */
		if (s->flags & F_LAST_HALVED)
			s->halvings--;
		w->ssthresh_bytes = cc_half_window(s->last_flight, w->mss_bytes);
	} else {
		s->decreases++;
	}
	s->flags &= ~(F_PENDING | F_FIRST_DECREASE | F_LAST_HALVED);
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = (__s64)s->w_q32;
	vals[1] = (__s64)s->k_q32;
	vals[2] = (__s64)s->l_q32;
	vals[3] = (__s64)param_alpha__q32;
	vals[4] = (__s64)param_beta__q32;
	vals[5] = s->decreases;
	vals[6] = s->halvings;
	vals[7] = !!(s->flags & F_FIRST_DECREASE);
}

#include "ccsim_cc_ops.h"
