// SPDX-License-Identifier: GPL-2.0
/*
 * CHD, CAIA-Hamilton delay-based congestion control: the kernel twin of
 * crates/ccsim-cc/src/algorithms/chd.rs (Hayes & Armitage, LCN 2010, section IV eqs. (2)-(4), with
 * the backoff probability of Budzisz et al. Fig. 1; FreeBSD cc_chd.c with the h_ertt round). The
 * Rust file's header gives every rule and every reading chosen; this file follows it in fixed point.
 *
 * Round (eq. (2)): at the end of each round (the first segment sent after the previous round ended
 * is acknowledged), h_r = max RTT of the round - RTTmin. Outside loss recovery and the congestion
 * recovery after a delay backoff: h_r <= q_min clears loss_compete; otherwise one draw against
 * p = g(h_r) (delay_probability.h); a success above q_th sets loss_compete (loss_fair), h_r <= q_th
 * clears it. Backoff: shadow window (eq. (3)) s = max(w, s) if loss_compete or h_r > h_b, else 0;
 * h_b = h_r; ssthresh = cwnd = ceil(w/2) segments (>= 2); congestion recovery until snd_max is acked.
 * Increase: NewReno with ABC, mirrored on s. Loss (eq. (4)): if not in congestion recovery and the
 * delay of the partial round > q_th, ssthresh = ceil half of max(w, s) (s when loss_compete) else w
 * (the loss is tolerated); s halves. Timeout: NewReno, floor half, leaves congestion recovery.
 *
 * Kernel differences: times in microseconds (the kernel's RTT resolution); the coin is
 * bpf_get_prandom_u32() against p in Q32 (not the flow's seeded stream); RTTmin is the minimum of
 * Linux's windowed minimum (300 s) and every raw sample; the round ends when snd_una passes snd_nxt
 * as it was at the previous round's end (the Rust machine marks the first segment sent after it:
 * the same segment unless a retransmission goes first). A timeout reaches the ssthresh hook as a fast
 * retransmit; cc_on_timeout undoes that and applies the timeout rule.
 */
#include "ccsim_cc.h"
#include "reno_increase.h"
#include "delay_probability.h"

#define CC_METRIC_NAMES "shadow_bytes,shadow_pkts/65536,loss_compete,h_r_ms/1000,prev_backoff_q_ms/1000,q_max_ms/1000," \
	"p/4294967296,cong_recovery,draws,delay_backoffs,loss_backoffs,tolerated_losses"

enum shadow_init { SHADOW_INIT_CWND = 0, SHADOW_INIT_ZERO = 1 };              /* Rust ShadowInit */
enum loss_delay { LOSS_DELAY_PARTIAL_ROUND = 0, LOSS_DELAY_LAST_ROUND = 1 };  /* Rust LossDelay */
enum restore_shadow { RESTORE_LOSS_COMPETE = 0, RESTORE_REGION_B = 1 };      /* Rust RestoreShadow */
enum tolerated_exit { TOLERATED_EXIT_NEWRENO = 0, TOLERATED_EXIT_KEEP = 1 }; /* Rust ToleratedLossExit */

CC_PARAM(__u64, p_max__q32, 1073741824ULL); /* 0.25 per round */
CC_PARAM(__u64, q_min_ms__us, 5000);
CC_PARAM(__u64, q_th_ms__us, 30000);
CC_PARAM(__u32, use_max, 1);
CC_PARAM(__u32, loss_fair, 1);
CC_PARAM(__u32, shadow_init, SHADOW_INIT_CWND);
CC_PARAM(__u32, loss_delay, LOSS_DELAY_PARTIAL_ROUND);
CC_PARAM(__u32, restore_shadow, RESTORE_LOSS_COMPETE);
CC_PARAM(__u32, tolerated_loss_exit, TOLERATED_EXIT_NEWRENO);
CC_PARAM(__u64, rtt_tick_ms__us, 0);

#define F_LOSS_COMPETE 0x01
#define F_H_R 0x02           /* last_h_r is set */
#define F_CONG_RECOVERY 0x04
#define F_LOSS_RECOVERY 0x08
#define F_TOLERATED 0x10     /* tolerated_in_progress */
#define F_MARKER 0x20        /* round_marker is set */
#define F_LAST_CONGESTION 0x40 /* the last fast-retransmit call took the congestion branch */

struct cc_state {
	__u32 shadow;          /* bytes, 0 = off */
	__u32 prev_backoff_q;  /* h_b, us */
	__u32 partial_max;     /* max RTT of the current partial round (maxrtt_in_rtt), us; 0 none */
	__u32 last_rtt;        /* us; 0 none */
	__u32 min_rtt;         /* us; 0 none */
	__u32 max_rtt;         /* lifetime maximum, us */
	__u32 last_h_r;
	__u32 cong_recover_seq;
	__u32 round_marker;    /* snd_nxt at the end of the previous round */
	__u32 last_q_max;
	__u32 last_p_q32;
	__u32 draws;
	__u32 delay_backoffs;
	__u32 loss_backoffs;
	__u32 tolerated_losses;
	__u32 bytes_acked_in_ca; /* Rust RenoIncrease */
	__u32 prev_shadow;     /* shadow before the last loss call (undone if it was a timeout) */
	__u32 cwnd_at_loss;
	__u8 flags;
};

/* Rust ceil_half_segments (FreeBSD chd_window_decrease): ceil(w/2) whole segments, >= 2. */
static __always_inline __u64 ceil_half_segments(__u64 bytes, __u64 mss)
{
	__u64 win = bytes / mss;

	win -= cc_min(win, cc_max(win / 2, 1));
	return cc_max(win, 2) * mss;
}

/* Rust floor_half_segments: floor(w/2) whole segments, >= 2. */
static __always_inline __u64 floor_half_segments(__u64 bytes, __u64 mss)
{
	return cc_max(bytes / mss / 2, 2) * mss;
}

static __always_inline void note_min(struct cc_state *s, __u64 r)
{
	if (r && (!s->min_rtt || r < s->min_rtt))
		s->min_rtt = (__u32)r;
}

static __always_inline void note_max(struct cc_state *s, __u64 r)
{
	if (r > s->max_rtt)
		s->max_rtt = (__u32)r;
}

/* Rust Chd::delay: quantised rtt - quantised RTTmin; false without RTTmin. */
static __always_inline bool delay_of(const struct cc_state *s, __u64 rtt, __u64 *q)
{
	__u64 a, b;

	if (!s->min_rtt)
		return false;
	a = quantise_to_ticks_us(rtt, param_rtt_tick_ms__us);
	b = quantise_to_ticks_us(s->min_rtt, param_rtt_tick_ms__us);
	*q = a > b ? a - b : 0;
	return true;
}

/* FreeBSD should_backoff for a round delay q > q_min: one draw, loss_compete bookkeeping. */
static __always_inline bool should_backoff(struct cc_state *s, __u64 q)
{
	struct two_region g = { .q_min_us = param_q_min_ms__us, .q_th_us = param_q_th_ms__us,
				.p_max_q32 = param_p_max__q32 };
	__u64 q_max = 0, p;
	bool hit;

	if (s->max_rtt)
		delay_of(s, s->max_rtt, &q_max);
	q_max = cc_max(q_max, q);
	s->last_q_max = (__u32)q_max;
	p = two_region_probability_q32(&g, q, q_max);
	s->last_p_q32 = (__u32)cc_min(p, 0xffffffffULL);
	s->draws++;
	hit = cc_chance_q32(p);
	if (q <= param_q_th_ms__us)
		s->flags &= ~F_LOSS_COMPETE; /* region A and q == q_th */
	else if (param_loss_fair && hit)
		s->flags |= F_LOSS_COMPETE;  /* region B backoff */
	return hit;
}

/* (Eq. 3) then (Eq. 2) first case with FreeBSD rounding. */
static __always_inline void delay_backoff(struct cc_state *s, struct cc_window *w, __u64 q, const struct cc_ack *ack)
{
	__u64 new;

	if ((s->flags & F_LOSS_COMPETE) || q > s->prev_backoff_q)
		s->shadow = (__u32)cc_max(s->shadow, w->cwnd_bytes);
	else
		s->shadow = 0;
	s->prev_backoff_q = (__u32)q;
	new = ceil_half_segments(w->cwnd_bytes, w->mss_bytes);
	w->ssthresh_bytes = new;
	cc_set_cwnd(w, new);
	s->bytes_acked_in_ca = 0;
	s->flags |= F_CONG_RECOVERY;
	s->cong_recover_seq = ack->snd_max;
	s->delay_backoffs++;
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	s->shadow = param_shadow_init == SHADOW_INIT_CWND ? (__u32)w->cwnd_bytes : 0;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	__u64 rtt = ack->rtt_ns / CC_NSEC_PER_USEC, q, rtt_used = 0, added;
	bool round_end, new_measurement = false, was_in_loss_recovery, backoff = false;

	/* the round this ACK ends, if any (Rust RoundSample, handed over before the ACK) */
	if (!(s->flags & F_MARKER))
		round_end = ack->bytes_acked > 0;
	else
		round_end = cc_seq_before(s->round_marker, ack->snd_una);
	if (round_end) {
		/* Rust Chd::on_round: max_in_round = max(round's samples, partial round, this sample) */
		__u64 max_in_round = cc_max(s->partial_max, rtt);

		note_min(s, rtt);
		note_min(s, ack->min_rtt_ns / CC_NSEC_PER_USEC);
		note_max(s, rtt);
		rtt_used = param_use_max ? max_in_round : (rtt ? rtt : s->last_rtt);
		if (rtt_used && delay_of(s, rtt_used, &q)) {
			s->last_h_r = (__u32)q; /* h_r = max_r(q_i), section IV-A */
			s->flags |= F_H_R;
		} else {
			s->flags &= ~F_H_R;
		}
		s->round_marker = ack->snd_max;
		s->flags |= F_MARKER;
		new_measurement = true;
	}
	/* Rust Chd::on_ack */
	if (rtt)
		s->last_rtt = (__u32)rtt;
	if (s->last_rtt && s->last_rtt > s->partial_max)
		s->partial_max = s->last_rtt;
	note_min(s, ack->min_rtt_ns / CC_NSEC_PER_USEC);
	note_min(s, rtt);
	note_max(s, rtt);
	was_in_loss_recovery = s->flags & F_LOSS_RECOVERY;
	s->flags = (s->flags & ~F_LOSS_RECOVERY) | (ack->in_recovery ? F_LOSS_RECOVERY : 0);
	if (new_measurement) {
		bool recovering = was_in_loss_recovery || ack->in_recovery || (s->flags & F_CONG_RECOVERY);

		s->partial_max = 0; /* a new partial round starts */
		if (rtt_used && !recovering && delay_of(s, rtt_used, &q)) {
			if (q > param_q_min_ms__us) {
				backoff = should_backoff(s, q); /* (Eq. 2): one decision per round on h_r */
			} else {
				s->flags &= ~F_LOSS_COMPETE;
				s->last_p_q32 = 0;
			}
		}
	}
	if (backoff) {
		delay_backoff(s, w, q, ack);
	} else if (ack->bytes_acked > 0) {
		/* (Eq. 2) second case: NewReno increase, mirrored on the shadow window */
		if (cc_in_slow_start(w) || tcp_abc_limit) {
			__u64 acked_in_ca = s->bytes_acked_in_ca; /* 32 bits here: below cwnd */

			added = reno_increase_on_ack(&acked_in_ca, w, ack, false);
			s->bytes_acked_in_ca = (__u32)acked_in_ca;
		} else if (new_measurement && !ack->in_recovery && ack->cwnd_limited) {
			w->cwnd_bytes += w->mss_bytes; /* FreeBSD CHD without ABC: one MSS per round */
			added = w->mss_bytes;
		} else {
			added = 0;
		}
		if (s->shadow)
			s->shadow = (__u32)cc_min((__u64)s->shadow + added, 0xffffffffULL);
	}
	/* tcp_input leaves congestion recovery after the hook, once snd_max of the backoff is acked */
	if ((s->flags & F_CONG_RECOVERY) && !cc_seq_before(ack->snd_una, s->cong_recover_seq))
		s->flags &= ~F_CONG_RECOVERY;
}

/* Rust Chd::loss_delay: the queueing delay that decides whether a loss is congestion (eq. 4). */
static __always_inline bool loss_delay(const struct cc_state *s, __u64 *q)
{
	if (param_loss_delay == LOSS_DELAY_LAST_ROUND) {
		*q = s->last_h_r;
		return s->flags & F_H_R;
	}
	if (!s->last_rtt && !s->partial_max)
		return false;
	return delay_of(s, cc_max(s->last_rtt, s->partial_max), q);
}

/* A fast retransmit (and the first expiry of a timeout, corrected in cc_on_timeout). */
static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	__u64 mss = w->mss_bytes, q, ssthresh;

	s->bytes_acked_in_ca = 0;
	s->flags |= F_LOSS_RECOVERY;
	s->prev_shadow = s->shadow;
	s->cwnd_at_loss = (__u32)cc_min(w->cwnd_bytes, 0xffffffffULL);
	note_min(s, loss->min_rtt_ns / CC_NSEC_PER_USEC);
	if (!(s->flags & F_CONG_RECOVERY) && loss_delay(s, &q) && q > param_q_th_ms__us) {
		/* (Eq. 4) first case: max(w, s)/2 when competing with loss-based flows */
		bool restore = (s->flags & F_LOSS_COMPETE) || param_restore_shadow == RESTORE_REGION_B;
		__u64 base = restore ? cc_max(w->cwnd_bytes, s->shadow) : w->cwnd_bytes;

		s->loss_backoffs++;
		s->flags = (s->flags & ~F_TOLERATED) | F_LAST_CONGESTION;
		ssthresh = ceil_half_segments(base, mss);
	} else {
		/* (Eq. 4) second case: a non-congestion loss, w unchanged */
		s->tolerated_losses++;
		s->flags = (s->flags | F_TOLERATED) & ~F_LAST_CONGESTION;
		ssthresh = w->cwnd_bytes;
	}
	if (s->shadow)
		s->shadow = (__u32)floor_half_segments(s->shadow, mss);
	return ssthresh;
}

#define CC_HAS_RECOVERY_EXIT
static __always_inline void cc_on_recovery_exit(struct cc_state *s, struct cc_window *w, const struct cc_recovery_exit *e)
{
	bool tolerated = s->flags & F_TOLERATED;

	s->flags &= ~(F_LOSS_RECOVERY | F_TOLERATED);
	if (e->after_timeout)
		return;
	if (tolerated && param_tolerated_loss_exit == TOLERATED_EXIT_KEEP)
		cc_set_cwnd(w, w->ssthresh_bytes);
	else
		cc_default_recovery_exit(w, e); /* FreeBSD newreno_post_recovery */
}

#define CC_HAS_TIMEOUT
/* NewReno RTO (FreeBSD cc_cong_signal CC_RTO), every expiry: ssthresh = floor half of w, leaves
 * every recovery, the shadow window untouched. */
static __always_inline void cc_on_timeout(struct cc_state *s, struct cc_window *w, __u64 now_ns, bool first_expiry)
{
	__u64 cwnd = w->cwnd_bytes;

	if (first_expiry) {
		/* the ssthresh call just before was this timeout's: undo its fast-retransmit bookkeeping */
		if (!(s->flags & F_LAST_CONGESTION)) {
			if (s->tolerated_losses)
				s->tolerated_losses--;
			s->loss_backoffs++;
		}
		s->shadow = s->prev_shadow;
		cwnd = s->cwnd_at_loss;
	} else {
		s->loss_backoffs++;
	}
	s->bytes_acked_in_ca = 0;
	s->flags = (s->flags | F_LOSS_RECOVERY) & ~(F_CONG_RECOVERY | F_TOLERATED);
	w->ssthresh_bytes = floor_half_segments(cwnd, w->mss_bytes);
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = s->shadow;
	vals[1] = (__s64)cc_mul_div(s->shadow, CC_Q16_ONE, mss);
	vals[2] = !!(s->flags & F_LOSS_COMPETE);
	vals[3] = (s->flags & F_H_R) ? s->last_h_r : 0;
	vals[4] = s->prev_backoff_q;
	vals[5] = s->last_q_max;
	vals[6] = s->last_p_q32;
	vals[7] = !!(s->flags & F_CONG_RECOVERY);
	vals[8] = s->draws;
	vals[9] = s->delay_backoffs;
	vals[10] = s->loss_backoffs;
	vals[11] = s->tolerated_losses;
}

#include "ccsim_cc_ops.h"
