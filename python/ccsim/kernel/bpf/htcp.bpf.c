// SPDX-License-Identifier: GPL-2.0
/*
 * H-TCP (Leith & Shorten), the kernel twin of crates/ccsim-cc/src/algorithms/htcp.rs: the
 * real-valued law of the paper (Leith & Shorten 2004; draft-leith-tcp-htcp; Leith et al. 2007
 * eq. (2)) with Linux tcp_htcp.c's RTTmax spike filter, bandwidth switch and adaptive backoff. The
 * Rust file's header gives every rule and every reading chosen; this file follows it in fixed point.
 *
 * Increase (congestion avoidance), per ACK: cwnd += alpha * MSS * counted / cwnd, with
 *   alpha = 2 (1 - beta) * max(1, alpha_raw(D) * clamp(RTTmin / RTT_ref, 0.1, 2))  (htcp_increase.h).
 * Slow start: Reno's with ABC. Backoff at a loss: beta recomputed (bandwidth switch, then
 * clamp(RTTmin / RTTmax, beta_min, beta_max) once the mode switch is set), RTTmax fades towards
 * RTTmin, D restarts, ssthresh = max(floor(beta * cwnd), 2 MSS).
 *
 * Kernel differences: times in microseconds kept in 32 bits (intervals below 71 minutes); alpha,
 * alpha_raw, the RTT scale and beta in Q16; throughput in whole bytes per second;
 * `linux_fixed_point = true` (Linux's integer law) has no twin and is refused before a run. A timeout
 * restarts D at every expiry (cwnd_event(CA_EVENT_LOSS)) but leaves the undo state of the congestion
 * event alone; Linux calls ssthresh on the first expiry only, as the Rust "held on repeated timeouts".
 */
#include "ccsim_cc.h"
#include "htcp_increase.h"

#define CC_METRIC_NAMES "alpha/65536,alpha_raw/65536,rtt_scale/65536,beta/65536,delta_s/1000000,min_rtt_ms/1000," \
	"max_rtt_ms/1000,modeswitch,throughput,max_throughput,old_max_throughput,congestion_events"

enum delta_from { DELTA_FROM_RECOVERY_EXIT = 0, DELTA_FROM_LOSS = 1 }; /* Rust DeltaFrom, in its order */

CC_PARAM(__u32, rtt_scaling, 1);
CC_PARAM(__u32, bandwidth_switch, 1);
CC_PARAM(__u32, adaptive_backoff, 1);
CC_PARAM(__u64, beta_min__q32, 2147483648ULL);     /* 0.5 */
CC_PARAM(__u64, beta_max__q32, 3435973837ULL);     /* 0.8 */
CC_PARAM(__u64, delta_l_s__us, 1000000);
CC_PARAM(__u64, rtt_ref_ms__us, 100000);
CC_PARAM(__u64, max_rtt_spike_ms__us, 20000);
CC_PARAM(__u64, max_rtt_fade__q32, 4080218931ULL); /* 0.95 */
CC_PARAM(__u64, min_rtt_for_beta_ms__us, 10000);
CC_PARAM(__u64, bw_switch_tolerance__q32, 858993459ULL); /* 0.2 */
CC_PARAM(__u32, delta_from, DELTA_FROM_RECOVERY_EXIT);
CC_PARAM(__u32, linux_fixed_point, 0);              /* true is refused by the front end */

#define F_LAST_CONG 0x01      /* last_cong is set (Rust Option) */
#define F_COUNT_SINCE 0x02    /* count_since is set */
#define F_MODESWITCH 0x04
#define F_UNDO 0x08           /* undo_* hold what a spurious loss restores */
#define F_UNDO_LAST_CONG 0x10 /* the saved last_cong was set */

struct cc_state {
	__u32 min_rtt_us;     /* 0: none yet */
	__u32 max_rtt_us;     /* 0: none yet */
	__u32 beta_q16;
	__u32 alpha_q16;      /* at the last ACK (saturates at 65536 segments per RTT) */
	__u32 alpha_raw_q16;  /* saturates likewise */
	__u32 scale_q16;
	__u32 last_cong;      /* cc_time32_us */
	__u32 last_now;
	__u32 undo_last_cong; /* Rust HtcpUndo */
	__u32 undo_max_rtt_us;
	__u32 undo_old_max_b;
	__u32 count_bytes;    /* throughput estimate (Linux measure_achieved_throughput) */
	__u32 count_since;
	__u32 bi;             /* bytes per second */
	__u32 max_b;
	__u32 old_max_b;
	struct frac_cwnd frac;
	__u32 congestion_events;
	__u8 flags;
};

static __always_inline __u32 sat32(__u64 x) { return x > 0xffffffffULL ? 0xffffffffU : (__u32)x; }

/* D: time since the last congestion event (or since the first ACK), in microseconds. */
static __always_inline __u64 delta_us(const struct cc_state *s, __u32 now)
{
	return (s->flags & F_LAST_CONG) ? cc_since32_us(now, s->last_cong) : 0;
}

/* Rust Htcp::alpha_real: (Eq. 2), RTT scaling, 2 (1 - beta) fairness. */
static __always_inline __u64 alpha_real(struct cc_state *s, __u32 now)
{
	__u64 raw = htcp_alpha_raw_q16(delta_us(s, now), param_delta_l_s__us);
	__u64 scale = (param_rtt_scaling && s->min_rtt_us) ? htcp_rtt_scale_q16(s->min_rtt_us, param_rtt_ref_ms__us)
							     : CC_Q16_ONE;
	__u64 factor = htcp_scaled_factor_q16(raw, scale);
	__u64 alpha = cc_mul_div(2 * (CC_Q16_ONE - cc_min(s->beta_q16, CC_Q16_ONE)), factor, CC_Q16_ONE);

	s->alpha_raw_q16 = sat32(raw);
	s->scale_q16 = (__u32)scale;
	s->alpha_q16 = sat32(alpha);
	return alpha;
}

/* Rust Htcp::measure_rtt (Linux measure_rtt): RTTmin always, RTTmax only in the open state and
 * only by samples at most max_rtt_spike_ms above it. */
static __always_inline void measure_rtt(struct cc_state *s, __u32 sample_us, bool open)
{
	__u32 min, max;

	if (!sample_us)
		return;
	min = s->min_rtt_us && s->min_rtt_us < sample_us ? s->min_rtt_us : sample_us;
	s->min_rtt_us = min;
	if (open) {
		max = s->max_rtt_us ? s->max_rtt_us : min;
		if (max < min)
			max = min;
		if (sample_us > max && (!param_max_rtt_spike_ms__us || sample_us <= max + param_max_rtt_spike_ms__us))
			max = sample_us;
		s->max_rtt_us = max;
	}
}

/* Rust Htcp::measure_throughput (Linux measure_achieved_throughput after measure_rtt). */
static __always_inline void measure_throughput(struct cc_state *s, const struct cc_window *w, const struct cc_ack *ack,
					       __u32 now)
{
	__u64 alpha_pkts, need, elapsed, cur;

	if (ack->in_recovery) {
		s->count_bytes = 0;
		s->count_since = now;
		s->flags |= F_COUNT_SINCE;
		return;
	}
	if (!(s->flags & F_COUNT_SINCE)) {
		s->count_since = now;
		s->flags |= F_COUNT_SINCE;
	}
	s->count_bytes = sat32((__u64)s->count_bytes + ack->bytes_acked);
	if (!s->min_rtt_us)
		return;
	alpha_pkts = cc_max(s->alpha_q16 >> 16, 1);
	need = w->cwnd_bytes > alpha_pkts * w->mss_bytes ? w->cwnd_bytes - alpha_pkts * w->mss_bytes : 0;
	elapsed = cc_since32_us(now, s->count_since);
	if (s->count_bytes < need || elapsed < s->min_rtt_us || !elapsed)
		return;
	cur = sat32(cc_mul_div(s->count_bytes, CC_USEC_PER_SEC, elapsed));
	if (delta_us(s, now) / s->min_rtt_us <= 3) {
		/* just after a backoff: restart the estimate (Linux htcp_ccount <= 3) */
		s->bi = (__u32)cur;
		s->max_b = (__u32)cur;
	} else {
		s->bi = (__u32)((3 * (__u64)s->bi + cur) / 4); /* B = 3/4 B + 1/4 sample */
		if (s->bi > s->max_b)
			s->max_b = s->bi;
	}
	s->count_bytes = 0;
	s->count_since = now;
}

static __always_inline void set_beta_min(struct cc_state *s)
{
	s->beta_q16 = (__u32)(param_beta_min__q32 >> 16);
}

/* Rust Htcp::beta_update (Linux htcp_beta_update). */
static __always_inline void beta_update(struct cc_state *s)
{
	if (param_bandwidth_switch) {
		__u64 max_b = s->max_b, old = s->old_max_b, t = param_bw_switch_tolerance__q32;
		__u64 lo = t >= CC_Q32_ONE ? 0 : cc_mul_q32(old, CC_Q32_ONE - t);
		__u64 hi = cc_mul_q32(old, CC_Q32_ONE + t);

		s->old_max_b = s->max_b;
		/* max_b >= (1 - t) old exactly: the product rounds down, so compare with both sides */
		if (!(max_b >= lo && max_b <= hi)) {
			set_beta_min(s);
			s->flags &= ~F_MODESWITCH;
			return;
		}
	}
	if (param_adaptive_backoff && (s->flags & F_MODESWITCH) && s->min_rtt_us &&
	    s->min_rtt_us > param_min_rtt_for_beta_ms__us && s->max_rtt_us) {
		__u64 b = ((__u64)s->min_rtt_us << 16) / s->max_rtt_us;

		s->beta_q16 = (__u32)cc_clamp(b, param_beta_min__q32 >> 16,
					      cc_max(param_beta_max__q32 >> 16, param_beta_min__q32 >> 16));
	} else {
		set_beta_min(s);
		s->flags |= F_MODESWITCH;
	}
}

/* Rust Htcp::param_update: beta, then the RTTmax fade. */
static __always_inline void param_update(struct cc_state *s)
{
	beta_update(s);
	if (s->min_rtt_us && s->max_rtt_us > s->min_rtt_us)
		s->max_rtt_us = s->min_rtt_us + (__u32)cc_mul_q32(s->max_rtt_us - s->min_rtt_us, param_max_rtt_fade__q32);
}

/* Rust Htcp::reset (Linux htcp_reset): saves what undo restores and restarts D. */
static __always_inline void reset(struct cc_state *s, __u32 now)
{
	s->flags = (s->flags & ~F_UNDO_LAST_CONG) | F_UNDO | ((s->flags & F_LAST_CONG) ? F_UNDO_LAST_CONG : 0);
	s->undo_last_cong = s->last_cong;
	s->undo_max_rtt_us = s->max_rtt_us;
	s->undo_old_max_b = s->old_max_b;
	s->last_cong = now;
	s->flags |= F_LAST_CONG;
}

/* Rust RenoIncrease::on_ack, slow start only (H-TCP's slow start is Reno's). Under Linux's rule the
 * growth stops at ssthresh; the count left over (the Rust side's Reno increase counts it towards one
 * more MSS) is dropped: at most L - 1 segments of count once per slow start. */
static __always_inline void reno_slow_start(struct cc_window *w, const struct cc_ack *ack)
{
	__u64 limit = tcp_abc_limit ? (__u64)tcp_abc_limit * w->mss_bytes : w->mss_bytes;

	cc_slow_start_grow(w, cc_min(ack->bytes_acked, limit));
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	set_beta_min(s);
	s->alpha_q16 = CC_Q16_ONE;
	s->alpha_raw_q16 = CC_Q16_ONE;
	s->scale_q16 = CC_Q16_ONE;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	__u32 now = cc_time32_us(ack->now_ns);
	__u32 rtt_us = (__u32)(ack->rtt_ns / CC_NSEC_PER_USEC);

	s->last_now = now;
	if (!(s->flags & F_LAST_CONG)) {
		/* Linux htcp_init: D from the connection's start; the send time of the first acked segment */
		s->last_cong = now - rtt_us;
		s->flags |= F_LAST_CONG;
	}
	/* Linux measures RTTmax in TCP_CA_Open only; an ACK of no new data is a duplicate */
	measure_rtt(s, rtt_us, !ack->in_recovery && ack->bytes_acked > 0);
	if (param_bandwidth_switch)
		measure_throughput(s, w, ack, now);
	alpha_real(s, now);
	if (ack->bytes_acked == 0 || ack->in_recovery || !ack->cwnd_limited)
		return;
	if (cc_in_slow_start(w)) {
		reno_slow_start(w, ack);
		frac_sync(&s->frac, w->cwnd_bytes);
	} else {
		/* cwnd += alpha * MSS * counted / cwnd, the fraction of a byte carried over */
		__u64 counted = htcp_counted_bytes(ack->bytes_acked, w->mss_bytes, tcp_abc_limit);
		__u64 inc_q16 = cc_mul_div(s->alpha_q16 * w->mss_bytes, counted, cc_max(w->cwnd_bytes, 1));

		frac_add(&s->frac, &w->cwnd_bytes, inc_q16);
	}
}

static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	__u32 now = cc_time32_us(loss->now_ns);

	s->count_bytes = 0;
	s->count_since = now;
	s->flags |= F_COUNT_SINCE;
	if (loss->kind == CC_LOSS_TIMEOUT && loss->backoff > 1 && w->ssthresh_bytes != CC_U64_MAX) {
		reset(s, now);
		return w->ssthresh_bytes;
	}
	s->congestion_events++;
	param_update(s); /* the D of the epoch that ends (Linux order) */
	reset(s, now);
	return cc_max(cc_mul_div(w->cwnd_bytes, s->beta_q16, CC_Q16_ONE), 2 * w->mss_bytes);
}

#define CC_HAS_RECOVERY_EXIT
static __always_inline void cc_on_recovery_exit(struct cc_state *s, struct cc_window *w, const struct cc_recovery_exit *e)
{
	cc_default_recovery_exit(w, e);
	if (param_delta_from == DELTA_FROM_RECOVERY_EXIT) {
		s->last_cong = cc_time32_us(e->now_ns); /* Linux htcp_state(TCP_CA_Open) */
		s->flags |= F_LAST_CONG;
	}
}

#define CC_HAS_TIMEOUT
static __always_inline void cc_on_timeout(struct cc_state *s, struct cc_window *w, __u64 now_ns, bool first_expiry)
{
	/* every expiry restarts D and the throughput count (Rust: the repeated-RTO branch) */
	s->last_cong = cc_time32_us(now_ns);
	s->flags |= F_LAST_CONG | F_COUNT_SINCE;
	s->count_bytes = 0;
	s->count_since = s->last_cong;
}

#define CC_HAS_UNDO
/* Rust Htcp::undo_cwnd (Linux htcp_cwnd_undo). */
static __always_inline __u64 cc_undo_cwnd(struct cc_state *s, const struct cc_window *w, __u64 prior_cwnd_bytes)
{
	if (s->flags & F_UNDO) {
		s->last_cong = s->undo_last_cong;
		s->flags = (s->flags & ~(F_LAST_CONG | F_UNDO)) | ((s->flags & F_UNDO_LAST_CONG) ? F_LAST_CONG : 0);
		s->max_rtt_us = s->undo_max_rtt_us;
		s->old_max_b = s->undo_old_max_b;
	}
	return cc_max(w->cwnd_bytes, prior_cwnd_bytes);
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = s->alpha_q16;
	vals[1] = s->alpha_raw_q16;
	vals[2] = s->scale_q16;
	vals[3] = s->beta_q16;
	vals[4] = (s->flags & F_LAST_CONG) ? cc_since32_us(s->last_now, s->last_cong) : 0;
	vals[5] = s->min_rtt_us;
	vals[6] = s->max_rtt_us;
	vals[7] = !!(s->flags & F_MODESWITCH);
	vals[8] = s->bi;
	vals[9] = s->max_b;
	vals[10] = s->old_max_b;
	vals[11] = s->congestion_events;
}

#include "ccsim_cc_ops.h"
