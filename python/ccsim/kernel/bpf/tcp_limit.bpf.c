// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Limit (Nemeth, Molnar, Tarjan, Szabo, section III): the kernel twin of
 * crates/ccsim-cc/src/algorithms/tcp_limit.rs on its NewReno base. The Rust file's header lists
 * every rule and every reading of the paper; this file follows it in fixed point.
 *
 * Per ACK: RE, the rate of the bytes delivered in the last T = re_window_rtts * RTTmin (a sliding
 * window over ACK arrivals, a ring here), low-pass filtered exactly with tau = re_tau_rtts * RTTmin
 * (Rust WindowedRate, RateFilter::Exact); BE, per-ACK samples through Westwood's Tustin filter with
 * virtual null samples every tau/m of silence (PerAckBandwidth); NL = lifetime maximum of BE;
 * CWE(x) = x * RTTmin; NRI = MSS^2 / cwnd per ACK (or per byte with ABC, nri_per = bytes).
 * Congestion avoidance (section III, lines 1-11):
 *   v_cwnd += NRI; v_target = min(v_target, 2 CWE(NL) - CWE(RE));
 *   if cwnd > alpha CWE(RE) (and the last RTT above alpha RTTmin, hold_needs_queue):
 *       if v_cwnd > v_target: cwnd = v_cwnd = CWE(RE), v_target = +inf | CWE(RE)   (forced decrease)
 *       else hold
 *   else cwnd += NRI.
 * Slow start, loss and recovery: NewReno (halve FlightSize, RFC 6582 exit).
 *
 * Kernel differences: rates in Q16 bytes per second, windows in Q16 bytes, times in 32-bit
 * microseconds (Rust f64 and nanoseconds); exp(-dt/tau) as 2^(-dt log2(e) / tau) with the exponent
 * in Q16 (relative error below 1.1e-5, tcp_limit_fixed.h); the RE window holds at most
 * TL_RE_RING ACKs (beyond, the oldest are dropped and RE reads low, as the Rust cap of 2^20);
 * ACKs that deliver no byte are not entered in the window (their entry would change nothing);
 * a duplicate ACK is any ACK the glue hands over without new data (as the westwood twin).
 * Not ported, refused by the front end: base = westwood, re_filter = tustin, nl_window_s > 0.
 * The state (the RE ring) lives in socket storage.
 */
#define CC_STATE_IN_SK_STORAGE
#include "ccsim_cc.h"
#include "reno_increase.h"
#include "tcp_limit_fixed.h"
#include "ack_accounting.h"

#define CC_METRIC_NAMES "re_bytes_per_s/65536,re_sample_bytes_per_s/65536,re_valid,be_bytes_per_s/65536," \
	"nl_bytes_per_s/65536,rtt_min_ms/1000,cwe_re_bytes/65536,limit_bytes/65536,v_cwnd_bytes/65536,"       \
	"v_target_bytes/65536,holding,forced_decreases"

enum base_choice { BASE_NEWRENO = 0, BASE_WESTWOOD = 1 };   /* Rust BaseChoice */
enum v_target_reset { VT_RESET_INF = 0, VT_RESET_CWE_RE = 1 }; /* Rust VTargetReset */
enum nri_per { NRI_PER_ACK = 0, NRI_PER_BYTES = 1 };         /* Rust NriPer */
enum re_filter { RE_FILTER_EXACT = 0, RE_FILTER_TUSTIN = 1 }; /* Rust RateFilter */

CC_PARAM(__u32, base, BASE_NEWRENO);                    /* only newreno is ported */
CC_PARAM(__u64, alpha__q32, 4724464026ULL);             /* 1.1 */
CC_PARAM(__u32, v_target_reset, VT_RESET_INF);
CC_PARAM(__u64, re_window_rtts__q32, 4294967296ULL);    /* 1 RTTmin */
CC_PARAM(__u64, re_window_ms__us, 0);                   /* 0: re_window_rtts */
CC_PARAM(__u64, re_tau_rtts__q32, 4294967296ULL);       /* 1 RTTmin */
CC_PARAM(__u32, re_filter, RE_FILTER_EXACT);            /* only exact is ported */
CC_PARAM(__u64, be_tau_ms__us, 500000);
CC_PARAM(__u32, filter_m, 2);
CC_PARAM(__u64, nl_window_s__us, 0);                    /* only 0 (lifetime) is ported */
CC_PARAM(__u32, nri_per, NRI_PER_ACK);
CC_PARAM(__u32, forced_decrease, 1);
CC_PARAM(__u32, hold_needs_queue, 1);
CC_PARAM(__u32, compare_whole_segments, 1);
CC_PARAM(__u32, westwood_faster_recovery, 0);           /* base = westwood only */

#define TL_RE_RING 512 /* power of two */
#define TL_INF (~0ULL)

#define F_CA_FRESH 0x01   /* the next CA ACK (re)enters CA: v_cwnd = cwnd, v_target = +inf */
#define F_HOLDING 0x02
#define F_RE_FIRST 0x04   /* re_first is set */
#define F_RE_STARTED 0x08 /* exact filter started (Rust est_started) */
#define F_BE_CLOCK 0x10   /* be_last_ack is set */
#define F_BE_INIT 0x20    /* Tustin filter initialised (Rust last_step is Some) */
#define F_NL 0x40         /* NL has a value */

struct re_entry {
	__u32 at_us;
	__u32 bytes;
};

struct cc_state {
	__u64 bytes_acked_in_ca; /* Rust RenoIncrease (slow start) */
	/* RE: Rust WindowedRate (exact filter) */
	__u64 re_est_q16;
	__u64 re_sum;
	__u64 re_last_sample_q16;
	__u32 re_est_at, re_first, re_last_now, re_last_interval_us;
	__u32 re_head, re_count;
	/* BE: Rust PerAckBandwidth and its TustinFilter */
	__u64 be_est_q16, be_prev_q16, be_last_sample_q16, be_pending;
	__u32 be_last_ack, be_last_step;
	__u64 nl_q16;            /* Rust MaxFilter, lifetime */
	__u32 rtt_min_us;        /* 0: none */
	__u32 last_rtt_us;       /* 0: none */
	__u32 accounted;         /* Rust AckAccounting */
	__u32 forced_decreases;
	__u64 cwnd_q16;          /* Rust cwnd_f */
	__u64 last_cwnd;         /* Rust last_cwnd (bytes written to the window) */
	__u64 v_cwnd_q16;
	__u64 v_target_q16;      /* TL_INF: +inf */
	__u8 flags;
	struct re_entry ring[TL_RE_RING];
};

/* ---- RE: Rust WindowedRate, exact filter -------------------------------------------------- */

static __always_inline void re_pop(struct cc_state *s)
{
	struct re_entry *e = &s->ring[s->re_head & (TL_RE_RING - 1)];

	s->re_sum -= e->bytes;
	s->re_head++;
	s->re_count--;
}

/* est <- w + (est - w) e^(-dt/tau) over one constant piece of the window signal w. */
static __always_inline void re_piece(struct cc_state *s, __u32 dt_us, __u32 tau_us, __u32 interval_us)
{
	__u64 w = tl_rate_q16(s->re_sum, interval_us);

	if (!(s->flags & F_RE_STARTED))
		return;
	s->re_est_q16 = tau_us ? tl_decay_towards(s->re_est_q16, w, tl_exp_neg_q32(dt_us, tau_us)) : w;
}

struct re_integrate_ctx {
	struct cc_state *s;
	__u32 to, tau_us, interval_us;
};

/* One piece of Rust WindowedRate::integrate: up to the next expiry of the window (then drops the
 * expired entry and goes on, returning 0) or up to `to` (returning 1, the end). */
static int re_integrate_piece(__u32 i, void *data)
{
	struct re_integrate_ctx *c = data;
	struct cc_state *s = c->s;
	__u32 expiry = 0, piece_end;
	bool expires = false;

	if (s->re_count) {
		expiry = s->ring[s->re_head & (TL_RE_RING - 1)].at_us + c->interval_us;
		expires = !tl_after(expiry, c->to); /* expiry <= to */
	}
	if (expires)
		piece_end = tl_after(expiry, s->re_est_at) ? expiry : s->re_est_at;
	else
		piece_end = c->to;
	re_piece(s, piece_end - s->re_est_at, c->tau_us, c->interval_us);
	if (tl_after(piece_end, s->re_est_at))
		s->re_est_at = piece_end;
	if (!expires)
		return 1;
	re_pop(s);
	return 0;
}

/* Rust WindowedRate::integrate: piece by piece between the window's expiries, up to `to`
 * (bpf_loop: the verifier checks one piece, not the ring's worth of them). */
static __always_inline void re_integrate(struct cc_state *s, __u32 to, __u32 tau_us, __u32 interval_us)
{
	struct re_integrate_ctx c = { .s = s, .to = to, .tau_us = tau_us, .interval_us = interval_us };

	bpf_loop(TL_RE_RING + 1, re_integrate_piece, &c, 0);
}

static __always_inline bool re_valid(const struct cc_state *s)
{
	return (s->flags & F_RE_FIRST) && s->re_last_interval_us &&
	       cc_since32_us(s->re_last_now, s->re_first) >= s->re_last_interval_us;
}

/* Rust WindowedRate::on_delivery (exact). */
static __always_inline void re_on_delivery(struct cc_state *s, __u32 now, __u64 bytes, __u32 interval_us, __u32 tau_us)
{
	if (!(s->flags & F_RE_FIRST)) {
		s->re_first = now;
		s->re_est_at = now;
		s->flags |= F_RE_FIRST;
	}
	re_integrate(s, now, tau_us, interval_us);
	if (bytes) {
		struct re_entry *e;

		if (s->re_count >= TL_RE_RING)
			re_pop(s); /* the cap: the oldest leaves early */
		e = &s->ring[(s->re_head + s->re_count) & (TL_RE_RING - 1)];
		e->at_us = now;
		e->bytes = (__u32)cc_min(bytes, 0xffffffffULL);
		s->re_count++;
		s->re_sum += bytes;
	}
	s->re_last_sample_q16 = tl_rate_q16(s->re_sum, interval_us);
	s->re_last_now = now;
	s->re_last_interval_us = interval_us;
	if (!(s->flags & F_RE_STARTED) && re_valid(s)) {
		s->re_est_q16 = s->re_last_sample_q16; /* the window has been full once */
		s->flags |= F_RE_STARTED;
	}
	if (!tau_us)
		s->re_est_q16 = s->re_last_sample_q16;
}

/* ---- BE: Rust PerAckBandwidth / TustinFilter ----------------------------------------------- */

static __always_inline void be_step(struct cc_state *s, __u32 now, __u64 sample_q16)
{
	__u64 tau = param_be_tau_ms__us;

	if ((s->flags & F_BE_INIT) && tau) {
		__u64 dt = cc_min(cc_since32_us(now, s->be_last_step), 2 * tau);
		__u64 a = tl_tustin_a_q32(dt, tau);

		s->be_est_q16 = cc_mul_q32(s->be_est_q16, a) + cc_mul_q32((sample_q16 + s->be_prev_q16) / 2, CC_Q32_ONE - a);
	} else {
		s->be_est_q16 = sample_q16;
	}
	s->be_prev_q16 = sample_q16;
	s->be_last_step = now;
	s->flags |= F_BE_INIT;
}

/* Rust TustinFilter::fill_silence with zero samples: one every tau/m of silence, at most 64. */
static __always_inline void be_fill_silence(struct cc_state *s, __u32 now)
{
	__u32 step, last;

	if (!(s->flags & F_BE_INIT) || !param_be_tau_ms__us)
		return;
	step = (__u32)cc_max(param_be_tau_ms__us / cc_max(param_filter_m, 2), 1);
	last = s->be_last_step;
	for (int n = 0; n <= TL_MAX_VIRTUAL_SAMPLES; n++) {
		if (cc_since32_us(now, last) <= step)
			break;
		if (n == TL_MAX_VIRTUAL_SAMPLES) { /* decayed to nothing: restart from zero */
			__u32 gaps = cc_since32_us(now, last) / step;

			s->be_est_q16 = 0;
			s->be_prev_q16 = 0;
			s->be_last_step = last + (gaps - 1) * step;
			break;
		}
		last += step;
		be_step(s, last, 0);
	}
}

static __always_inline void be_on_delivery(struct cc_state *s, __u32 now, __u64 bytes)
{
	__u32 dt;

	if (!(s->flags & F_BE_CLOCK)) {
		s->be_last_ack = now;
		s->flags |= F_BE_CLOCK;
		return;
	}
	dt = cc_since32_us(now, s->be_last_ack);
	if (!dt) {
		s->be_pending += bytes;
		return;
	}
	s->be_last_sample_q16 = tl_rate_q16(bytes + s->be_pending, dt);
	s->be_pending = 0;
	s->be_last_ack = now;
	be_fill_silence(s, now);
	be_step(s, now, s->be_last_sample_q16);
}

/* ---- the algorithm (Rust TcpLimit) ---------------------------------------------------------- */

/* CWE(RE) in Q16 bytes; false while RE or RTTmin is unknown. */
static __always_inline bool cwe_re(const struct cc_state *s, __u64 *out)
{
	if (!re_valid(s) || !s->rtt_min_us)
		return false;
	*out = tl_cwe_q16(s->re_est_q16, s->rtt_min_us);
	return true;
}

/* CWE(NL), never below CWE(RE). */
static __always_inline __u64 cwe_nl(const struct cc_state *s, __u64 cwe_re_q16)
{
	return cc_max(tl_cwe_q16(s->nl_q16, s->rtt_min_us), cwe_re_q16);
}

/* The premise of line 3 (Rust backlogged): the last RTT sample above alpha * RTTmin. */
static __always_inline bool backlogged(const struct cc_state *s)
{
	if (!param_hold_needs_queue || !s->last_rtt_us || !s->rtt_min_us)
		return true;
	return s->last_rtt_us > cc_mul_q32(s->rtt_min_us, param_alpha__q32);
}

/* Rust observe: RE, BE, NL with one ACK. */
static __always_inline void observe(struct cc_state *s, const struct cc_ack *ack, __u64 mss)
{
	__u32 now = cc_time32_us(ack->now_ns);
	__u32 rtt = (__u32)(ack->rtt_ns / CC_NSEC_PER_USEC), min_rtt = (__u32)(ack->min_rtt_ns / CC_NSEC_PER_USEC);
	__u64 delivered;

	if (rtt)
		s->last_rtt_us = rtt;
	if (rtt && (!s->rtt_min_us || rtt < s->rtt_min_us))
		s->rtt_min_us = rtt;
	if (min_rtt && (!s->rtt_min_us || min_rtt < s->rtt_min_us))
		s->rtt_min_us = min_rtt;
	delivered = acked_count(&s->accounted, ack->bytes_acked, mss);
	if (s->rtt_min_us) {
		__u32 t = param_re_window_ms__us ? (__u32)param_re_window_ms__us
						 : (__u32)cc_mul_q32(s->rtt_min_us, param_re_window_rtts__q32);
		__u32 tau = (__u32)cc_mul_q32(s->rtt_min_us, param_re_tau_rtts__q32);

		re_on_delivery(s, now, delivered, t ? t : 1, tau);
	}
	be_on_delivery(s, now, delivered);
	if (s->flags & F_BE_INIT) {
		s->nl_q16 = (s->flags & F_NL) ? cc_max(s->nl_q16, s->be_est_q16) : s->be_est_q16;
		s->flags |= F_NL;
	}
}

/* NRI in Q16 bytes: MSS^2 / cwnd per ACK, or MSS min(acked, L MSS) / cwnd (nri_per = bytes). */
static __always_inline __u64 nri_q16(const struct cc_state *s, const struct cc_ack *ack, __u64 mss)
{
	__u64 counted = mss;

	if (param_nri_per == NRI_PER_BYTES)
		counted = cc_min(ack->bytes_acked, tcp_abc_limit ? (__u64)tcp_abc_limit * mss : mss);
	return cc_mul_div((mss * counted) << 16, CC_Q16_ONE, cc_max(s->cwnd_q16, 1));
}

static __always_inline void write_cwnd(struct cc_state *s, struct cc_window *w)
{
	if (s->cwnd_q16 < (w->mss_bytes << 16))
		s->cwnd_q16 = w->mss_bytes << 16;
	cc_set_cwnd(w, s->cwnd_q16 >> 16);
	s->last_cwnd = w->cwnd_bytes;
}

/* Section III, lines 1-11 (Rust congestion_avoidance). */
static __always_inline void congestion_avoidance(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	__u64 mss = w->mss_bytes, nri, re;

	if (w->cwnd_bytes != s->last_cwnd)
		s->cwnd_q16 = w->cwnd_bytes << 16;
	if (s->flags & F_CA_FRESH) {
		s->v_cwnd_q16 = s->cwnd_q16;
		s->v_target_q16 = TL_INF;
		s->flags &= ~F_CA_FRESH;
	}
	nri = nri_q16(s, ack, mss);
	s->v_cwnd_q16 += nri; /* line 1 */
	s->flags &= ~F_HOLDING;
	if (cwe_re(s, &re)) {
		__u64 nl = cwe_nl(s, re);
		__u64 sent = param_compare_whole_segments ? ((s->cwnd_q16 >> 16) / mss * mss) << 16 : s->cwnd_q16;

		s->v_target_q16 = cc_min(s->v_target_q16, 2 * nl - re); /* line 2 */
		if (sent > cc_mul_q32(re, param_alpha__q32) && backlogged(s)) { /* line 3 */
			if (param_forced_decrease && s->v_cwnd_q16 > s->v_target_q16) {
				/* lines 4-7: forced decrease */
				s->cwnd_q16 = cc_max(re, (2 * mss) << 16);
				s->v_cwnd_q16 = s->cwnd_q16;
				s->v_target_q16 = param_v_target_reset == VT_RESET_CWE_RE ? re : TL_INF;
				s->forced_decreases++;
				write_cwnd(s, w);
				if (w->cwnd_bytes <= w->ssthresh_bytes)
					w->ssthresh_bytes = w->cwnd_bytes - 1; /* stay in congestion avoidance */
				return;
			}
			s->flags |= F_HOLDING; /* hold */
		} else {
			s->cwnd_q16 += nri; /* line 10 */
		}
	} else {
		s->cwnd_q16 += nri; /* no rate estimate yet: NewReno */
	}
	write_cwnd(s, w);
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	s->cwnd_q16 = w->cwnd_bytes << 16;
	s->last_cwnd = w->cwnd_bytes;
	s->v_cwnd_q16 = s->cwnd_q16;
	s->v_target_q16 = TL_INF;
	s->flags = F_CA_FRESH;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	observe(s, ack, w->mss_bytes);
	if (ack->bytes_acked == 0 || ack->in_recovery || !ack->cwnd_limited) {
		s->flags &= ~F_HOLDING;
		return;
	}
	if (cc_in_slow_start(w)) {
		reno_increase_on_ack(&s->bytes_acked_in_ca, w, ack, false);
		s->flags = (s->flags | F_CA_FRESH) & ~F_HOLDING;
		s->cwnd_q16 = w->cwnd_bytes << 16;
		s->last_cwnd = w->cwnd_bytes;
		return;
	}
	congestion_avoidance(s, w, ack);
}

/* The NewReno base (newreno.bpf.c with halve_from = flight). */
static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	s->flags = (s->flags | F_CA_FRESH) & ~F_HOLDING;
	s->bytes_acked_in_ca = 0;
	return cc_half_window(loss->bytes_in_flight, w->mss_bytes);
}

#define CC_HAS_RECOVERY_EXIT
static __always_inline void cc_on_recovery_exit(struct cc_state *s, struct cc_window *w, const struct cc_recovery_exit *e)
{
	s->flags |= F_CA_FRESH;
	cc_default_recovery_exit(w, e);
	s->cwnd_q16 = w->cwnd_bytes << 16;
	s->last_cwnd = w->cwnd_bytes;
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	__u64 re = 0;
	bool valid = cwe_re(s, &re);

	vals[0] = re_valid(s) ? (__s64)s->re_est_q16 : 0;
	vals[1] = (__s64)s->re_last_sample_q16;
	vals[2] = re_valid(s);
	vals[3] = (__s64)s->be_est_q16;
	vals[4] = (__s64)s->nl_q16;
	vals[5] = s->rtt_min_us;
	vals[6] = valid ? (__s64)re : 0;
	vals[7] = valid ? (__s64)cc_mul_q32(re, param_alpha__q32) : 0;
	vals[8] = (__s64)s->v_cwnd_q16;
	vals[9] = s->v_target_q16 == TL_INF ? -65536 : (__s64)s->v_target_q16; /* -1: +inf, as the Rust metric */
	vals[10] = !!(s->flags & F_HOLDING);
	vals[11] = s->forced_decreases;
}

#include "ccsim_cc_ops.h"
