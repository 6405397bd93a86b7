// SPDX-License-Identifier: GPL-2.0
/*
 * Westwood+ with Faster Recovery: the kernel twin of crates/ccsim-cc/src/algorithms/westwood.rs
 * (Mascolo et al. 2001 section 2; Grieco & Mascolo 2004; Linux net/ipv4/tcp_westwood.c). The Rust
 * file's header lists every rule and reading; this file follows it in fixed point.
 *
 * Bandwidth estimate (WestwoodPlusBw in rate_estimators.rs): once per window longer than
 * max(RTT, min_window_ms), sample = bytes acked in the window / its length, two cascaded 7/8 EWMAs
 * (westwood_filter.h); duplicate ACKs count one MSS (Linux westwood_acked_count). BWE*RTTmin =
 * max(BWE * RTTmin, 2 MSS).
 * Fast retransmit: ssthresh = BWE*RTTmin (variants linux, original) or Reno's half of cwnd
 * (linux_reno_recovery). End of recovery: cwnd = ssthresh = BWE*RTTmin (linux variants), or
 * cwnd = min(cwnd at the loss, ssthresh) (original). Timeout: ssthresh = BWE*RTTmin at every expiry,
 * RTTmin taken afresh from the next sample. Growth: Reno with ABC.
 *
 * Kernel differences: rates in Q16 bytes per second, times in microseconds (32 bits); a duplicate
 * ACK is any ACK the glue hands over that acknowledges no new data (the glue has no separate
 * is_dupack; an ACK that only updates the window counts as one too).
 */
#include "ccsim_cc.h"
#include "reno_increase.h"
#include "westwood_filter.h"
#include "ack_accounting.h"

#define CC_METRIC_NAMES "bw_est_bytes_per_s/65536,bw_ns_est_bytes_per_s/65536,bw_last_sample_bytes_per_s/65536," \
	"bw_samples,bw_window_bytes,rtt_min_ms/1000,bwe_rttmin_bytes,abc_bytes_acked,fast_retransmits,timeouts"

enum faster_recovery { FR_LINUX = 0, FR_LINUX_RENO_RECOVERY = 1, FR_ORIGINAL = 2 }; /* Rust FasterRecovery */

CC_PARAM(__u32, faster_recovery, FR_LINUX);
CC_PARAM(__u64, min_window_ms__us, 50000);
CC_PARAM(__u32, rtt_min_reset_on_rto, 1);

#define F_WIN_STARTED 0x01 /* win_start is set */
#define F_RESET_RTT_MIN 0x02

struct cc_state {
	__u64 bytes_acked_in_ca; /* Rust RenoIncrease */
	struct ww_filter bw;
	__u64 last_sample_q16;
	__u32 accounted;         /* Rust AckAccounting */
	__u32 bk;                /* bytes acked in the current window */
	__u32 win_start;         /* cc_time32_us */
	__u32 rtt_us;            /* last raw sample; 0 none */
	__u32 rtt_min_us;        /* 0 none */
	__u32 samples;
	__u32 cwnd_at_loss;
	__u32 fast_retransmits;
	__u32 timeouts;
	__u8 flags;
};

/* Rust WestwoodPlusBw::on_ack: RTT bookkeeping, window closing (Linux westwood_update_window), then
 * the byte accounting; the ACK that closes a window counts in the next one. */
static __always_inline void observe(struct cc_state *s, const struct cc_ack *ack, __u64 mss)
{
	__u32 now = cc_time32_us(ack->now_ns);
	__u32 r = (__u32)(ack->rtt_ns / CC_NSEC_PER_USEC);

	if (r) {
		s->rtt_us = r;
		s->rtt_min_us = (s->rtt_min_us && !(s->flags & F_RESET_RTT_MIN) && s->rtt_min_us < r) ? s->rtt_min_us : r;
		s->flags &= ~F_RESET_RTT_MIN;
	}
	if (!(s->flags & F_WIN_STARTED)) {
		s->win_start = now;
		s->flags |= F_WIN_STARTED;
	} else if (s->rtt_us) {
		__u64 delta = cc_since32_us(now, s->win_start);

		if (delta > cc_max(s->rtt_us, param_min_window_ms__us)) {
			s->last_sample_q16 = westwood_sample_q16(s->bk, delta);
			westwood_filter_update(&s->bw, s->last_sample_q16);
			s->samples++;
			s->bk = 0;
			s->win_start = now;
		}
	}
	s->bk = (__u32)cc_min((__u64)s->bk + acked_count(&s->accounted, ack->bytes_acked, mss), 0xffffffffULL);
}

static __always_inline __u64 bw_rttmin(const struct cc_state *s, __u64 mss)
{
	return westwood_bw_rttmin_bytes(s->bw.bw_est_q16, s->rtt_min_us, mss);
}

static __always_inline void cc_init(struct cc_state *s, struct cc_window *w)
{
	s->cwnd_at_loss = (__u32)w->cwnd_bytes;
}

static __always_inline void cc_on_ack(struct cc_state *s, struct cc_window *w, const struct cc_ack *ack)
{
	observe(s, ack, w->mss_bytes);
	reno_increase_on_ack(&s->bytes_acked_in_ca, w, ack, false);
}

/* A fast retransmit (and the first expiry of a timeout, corrected in cc_on_timeout). */
static __always_inline __u64 cc_ssthresh_after_loss(struct cc_state *s, const struct cc_window *w,
						    const struct cc_loss *loss)
{
	s->bytes_acked_in_ca = 0;
	s->fast_retransmits++;
	s->cwnd_at_loss = (__u32)cc_min(w->cwnd_bytes, 0xffffffffULL);
	if (param_faster_recovery == FR_LINUX_RENO_RECOVERY)
		return cc_half_window(w->cwnd_bytes, w->mss_bytes); /* Linux tcp_reno_ssthresh */
	return bw_rttmin(s, w->mss_bytes);                          /* Westwood "3 DUPACKs" */
}

#define CC_HAS_RECOVERY_EXIT
static __always_inline void cc_on_recovery_exit(struct cc_state *s, struct cc_window *w, const struct cc_recovery_exit *e)
{
	if (e->after_timeout)
		return;
	s->bytes_acked_in_ca = 0;
	if (param_faster_recovery == FR_ORIGINAL) {
		cc_set_cwnd(w, cc_min(s->cwnd_at_loss, w->ssthresh_bytes)); /* Reno deflation, capped */
	} else {
		__u64 v = bw_rttmin(s, w->mss_bytes); /* Linux CA_EVENT_COMPLETE_CWR */

		w->ssthresh_bytes = v;
		cc_set_cwnd(w, v);
	}
}

#define CC_HAS_TIMEOUT
/* Linux CA_EVENT_LOSS (every expiry): ssthresh = BWE*RTTmin, a fresh RTTmin. */
static __always_inline void cc_on_timeout(struct cc_state *s, struct cc_window *w, __u64 now_ns, bool first_expiry)
{
	if (first_expiry && s->fast_retransmits)
		s->fast_retransmits--; /* the ssthresh call just before served this timeout */
	s->timeouts++;
	s->bytes_acked_in_ca = 0;
	if (param_rtt_min_reset_on_rto)
		s->flags |= F_RESET_RTT_MIN;
	w->ssthresh_bytes = bw_rttmin(s, w->mss_bytes);
}

static __always_inline void cc_report(const struct cc_state *s, __s64 *vals, __u64 mss)
{
	vals[0] = (__s64)s->bw.bw_est_q16;
	vals[1] = (__s64)s->bw.bw_ns_est_q16;
	vals[2] = (__s64)s->last_sample_q16;
	vals[3] = s->samples;
	vals[4] = s->bk;
	vals[5] = s->rtt_min_us;
	/* the Rust metric is BWE * RTTmin without the 2 MSS floor */
	vals[6] = (__s64)(cc_mul_div(s->bw.bw_est_q16, s->rtt_min_us, CC_USEC_PER_SEC) >> 16);
	vals[7] = (__s64)s->bytes_acked_in_ca;
	vals[8] = s->fast_retransmits;
	vals[9] = s->timeouts;
}

#include "ccsim_cc_ops.h"
