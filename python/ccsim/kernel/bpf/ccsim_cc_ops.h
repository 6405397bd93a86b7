/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ccsim_cc_ops.h: builds the `struct tcp_congestion_ops` of one algorithm from its cc_* functions.
 * Included at the end of an algorithm file, after it has defined:
 *
 *   struct cc_state     the algorithm's per-socket state
 *   CC_METRIC_NAMES     "name[/scale],..." naming the values cc_report writes (scale: the integer
 *                       written is the metric times scale; default 1)
 *   cc_init(s, w)
 *   cc_on_ack(s, w, ack)
 *   cc_ssthresh_after_loss(s, w, loss) -> new ssthresh in bytes
 *   cc_report(s, vals, mss)
 *   optionally (define CC_HAS_<HOOK> before including): cc_on_recovery_exit(s, w, exit),
 *   cc_on_timeout(s, w, now_ns, first_expiry) (every expiry of the retransmission timer; see
 *   set_state below), cc_undo_cwnd(s, w, prior_cwnd_bytes)
 *
 * Hook mapping (Linux net/ipv4/tcp_input.c, tcp_cong.c) to the Rust seam:
 *
 *  pkts_acked   every ACK that acknowledges or SACKs data. Records the RTT sample. In CWR or
 *               Recovery the Rust machine reports the ACK with in_recovery = true: it is handed to
 *               cc_on_ack at once. Otherwise it waits for cong_avoid of the same ACK, which knows
 *               whether the sender was cwnd-limited.
 *  cong_avoid   the same ACK, when Linux allows the window to grow: cc_on_ack with the segments
 *               acknowledged cumulatively (Rust bytes_acked; SACKed bytes do not count).
 *               An ACK whose cong_avoid never comes (Linux skipped growth) is handed over at the
 *               next pkts_acked as not cwnd-limited, so delay-based algorithms see every RTT sample.
 *  ssthresh     a loss (fast retransmit, or a timeout for which Linux reduces; see set_state), with
 *               FlightSize = min(packets_out, cwnd). Then the pending ACK is handed over with
 *               in_recovery = true, the Rust order (loss first, then on_ack).
 *  cwnd_event   CA_EVENT_COMPLETE_CWR is the end of fast recovery: cc_on_recovery_exit (default
 *               RFC 6582 option 1, as the Rust trait) after Linux has set cwnd = ssthresh.
 *               CA_EVENT_LOSS only marks that the ssthresh call just made was a timeout's.
 *  set_state    TCP_CA_Loss is every expiry of the retransmission timer: cc_on_timeout. Linux 6.x
 *               tcp_retransmit_timer (net/ipv4/tcp_timer.c) calls tcp_enter_loss
 *               (net/ipv4/tcp_input.c) at each expiry, which calls ssthresh and then
 *               cwnd_event(CA_EVENT_LOSS) only "if it has not yet been made inside this window"
 *               (ca_state Open or Disorder, or high_seq acknowledged, or Loss before any
 *               retransmission): not on a later expiry of the same segment, not on an expiry
 *               during fast recovery or CWR; then it sets cwnd = packets in flight + 1 and calls
 *               tcp_set_ca_state(sk, TCP_CA_Loss) (net/ipv4/tcp_cong.c), which calls set_state
 *               every time, before it changes icsk_ca_state. So cc_on_timeout runs at every expiry,
 *               with first_expiry = whether ssthresh ran in this same tcp_enter_loss (the
 *               CA_EVENT_LOSS mark). The ssthresh hook cannot tell a timeout from a fast
 *               retransmit and reports a fast retransmit; with first_expiry a twin whose timeout
 *               rule differs corrects its counters, its state and ssthresh (binomial, CHD). Without
 *               it (Linux kept ssthresh), the twin's later-expiry rule applies. The window a twin
 *               sees is the one before the expiry (the glue's byte window); the twin sets ssthresh
 *               only, cwnd stays Linux's packets in flight + 1. (The one other caller of
 *               tcp_set_ca_state(TCP_CA_Loss), tcp_non_congestion_loss_retransmit after a path MTU
 *               drop, cannot happen here: the testbed's MTU is fixed and MTU probing off.)
 *  undo_cwnd    a spurious loss: cc_undo_cwnd, default Linux tcp_reno_undo_cwnd.
 *
 * The window: Linux counts whole segments, the Rust code bytes. The byte window lives in the
 * private area; when snd_cwnd no longer equals it divided by the MSS, the kernel changed cwnd (PRR,
 * timeout, undo, an MSS change) and the byte window restarts from snd_cwnd * MSS.
 */
#ifndef CCSIM_CC_OPS_H
#define CCSIM_CC_OPS_H

const volatile char ccsim_metric_names[] = CC_METRIC_NAMES;

struct cc_glue {
	__u64 cwnd_bytes;     /* byte window; snd_cwnd == cwnd_bytes / mss while nothing else wrote it */
	__u32 pending_acked;  /* segments cumulatively acked by the ACK waiting for cong_avoid */
	__u32 pending_rtt_us; /* its RTT sample (0: none) */
	__u32 timeout_ssthresh; /* 1 from CA_EVENT_LOSS to set_state(TCP_CA_Loss) of one tcp_enter_loss */
	__u32 pending_us;     /* cc_time32_us of the waiting ACK's arrival, | 1 (0: no ACK waiting) */
};

#ifdef CC_STATE_IN_SK_STORAGE
/* The algorithm's state does not fit the private area: it lives in socket storage, created at
 * init and freed with the socket (BPF_MAP_TYPE_SK_STORAGE); the private area keeps the glue. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cc_state);
} ccsim_state SEC(".maps");

struct cc_priv {
	struct cc_glue glue;
};
#else
struct cc_priv {
	struct cc_glue glue;
	struct cc_state alg;
};
#endif

_Static_assert(sizeof(struct cc_priv) <= 104, "icsk_ca_priv holds 104 bytes");

static __always_inline struct cc_priv *cc_priv(const struct sock *sk)
{
	return (struct cc_priv *)cc_inet_csk(sk)->icsk_ca_priv;
}

/* The algorithm's state of this socket; NULL only if socket storage could not be allocated. */
static __always_inline struct cc_state *cc_alg(struct sock *sk, struct cc_priv *p)
{
#ifdef CC_STATE_IN_SK_STORAGE
	return bpf_sk_storage_get(&ccsim_state, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
#else
	return &p->alg;
#endif
}

static __always_inline __u8 cc_ca_state(const struct sock *sk)
{
	const struct inet_connection_sock *icsk = cc_inet_csk(sk);

	return (__u8)BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state);
}

static __always_inline __u64 cc_mss(const struct tcp_sock *tp)
{
	return tp->mss_cache ? tp->mss_cache : 1;
}

static __always_inline void cc_load(const struct sock *sk, struct cc_priv *p, struct cc_window *w)
{
	const struct tcp_sock *tp = cc_tcp_sk(sk);
	__u64 mss = cc_mss(tp);

	if (p->glue.cwnd_bytes / mss != tp->snd_cwnd)
		p->glue.cwnd_bytes = (__u64)tp->snd_cwnd * mss;
	w->mss_bytes = mss;
	w->cwnd_bytes = p->glue.cwnd_bytes;
	w->ssthresh_bytes = tp->snd_ssthresh >= CC_INFINITE_SSTHRESH ? CC_U64_MAX : (__u64)tp->snd_ssthresh * mss;
}

static __always_inline __u32 cc_ssthresh_pkts(__u64 bytes, __u64 mss)
{
	__u64 pkts;

	if (bytes == CC_U64_MAX)
		return CC_INFINITE_SSTHRESH;
	pkts = bytes / mss;
	if (pkts >= CC_INFINITE_SSTHRESH)
		return CC_INFINITE_SSTHRESH;
	return pkts ? (__u32)pkts : 1;
}

/* Writes the window back; snd_cwnd is the byte window in whole segments (at least one, at most the
 * socket's clamp). */
static __always_inline void cc_store(struct sock *sk, struct cc_priv *p, struct cc_window *w, bool ssthresh)
{
	struct tcp_sock *tp = cc_tcp_sk(sk);
	__u64 mss = w->mss_bytes;
	__u64 pkts = w->cwnd_bytes / mss;

	if (pkts < 1)
		pkts = 1;
	if (pkts > tp->snd_cwnd_clamp) {
		pkts = tp->snd_cwnd_clamp;
		w->cwnd_bytes = pkts * mss;
	}
	tp->snd_cwnd = (__u32)pkts;
	p->glue.cwnd_bytes = w->cwnd_bytes;
	if (ssthresh)
		tp->snd_ssthresh = cc_ssthresh_pkts(w->ssthresh_bytes, mss);
}

static __always_inline __u32 cc_port(const struct sock *sk)
{
	return sk->__sk_common.skc_num;
}

static __always_inline void cc_publish(const struct sock *sk, struct cc_priv *p, struct cc_state *a, __u32 rtt_us)
{
	__u32 port = cc_port(sk);
	struct cc_metrics *m = bpf_map_lookup_elem(&ccsim_metrics, &port);

	if (!m)
		return;
	m->acks++;
	if (rtt_us) {
		m->rtt_samples++;
		m->rtt_sum_us += rtt_us;
		m->rtt_last_us = rtt_us;
	}
	m->cwnd_bytes = p->glue.cwnd_bytes;
	cc_report(a, m->vals, cc_mss(cc_tcp_sk(sk)));
}

/* One ACK to cc_on_ack. `arrival_us` (cc_time32_us, 0: now) is when it arrived: an ACK handed over
 * late, at the next ACK, keeps its own time (else two ACKs would reach the algorithm microseconds
 * apart, and a per-ACK rate such as TCP Limit's BE would see a burst that never happened). */
static __always_inline void cc_deliver_ack(struct sock *sk, struct cc_priv *p, __u32 segments, __u32 rtt_us,
					   bool in_recovery, bool cwnd_limited, __u32 arrival_us)
{
	const struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_state *a = cc_alg(sk, p);
	struct cc_window w;
	struct cc_ack ack = {};

	if (!a)
		return;
	cc_load(sk, p, &w);
	ack.now_ns = bpf_ktime_get_ns();
	if (arrival_us)
		ack.now_ns -= (__u64)cc_since32_us(cc_time32_us(ack.now_ns), arrival_us) * CC_NSEC_PER_USEC;
	ack.bytes_acked = (__u64)segments * w.mss_bytes;
	ack.rtt_ns = (__u64)rtt_us * CC_NSEC_PER_USEC;
	ack.min_rtt_ns = (__u64)tp->rtt_min.s[0].v * CC_NSEC_PER_USEC;
	ack.srtt_ns = (__u64)(tp->srtt_us >> 3) * CC_NSEC_PER_USEC;
	ack.bytes_in_flight = (__u64)cc_packets_in_flight(tp) * w.mss_bytes;
	ack.snd_una = tp->snd_una;
	ack.snd_max = tp->snd_nxt;
	ack.in_recovery = in_recovery;
	ack.cwnd_limited = cwnd_limited;
	cc_on_ack(a, &w, &ack);
	cc_store(sk, p, &w, true);
	cc_publish(sk, p, a, rtt_us);
}

/* An ACK still waiting for cong_avoid is handed over now. */
static __always_inline void cc_flush_pending(struct sock *sk, struct cc_priv *p, bool in_recovery)
{
	__u32 arrival_us = p->glue.pending_us;

	if (!arrival_us)
		return;
	p->glue.pending_us = 0;
	cc_deliver_ack(sk, p, p->glue.pending_acked, p->glue.pending_rtt_us, in_recovery, false, arrival_us);
}

/* Zeroes the algorithm's state. clang's BPF target expands memset only for small sizes; a larger
 * state (TCP Limit's ACK ring, in socket storage) is cleared word by word, the empty asm keeping
 * clang from turning the loop back into a memset. */
static __always_inline void cc_zero_state(struct cc_state *a)
{
	if (sizeof(*a) <= 256) {
		__builtin_memset(a, 0, sizeof(*a));
		return;
	}
	for (__u32 i = 0; i < sizeof(*a) / 8; i++) {
		((__u64 *)a)[i] = 0;
		asm volatile("" ::: "memory");
	}
	for (__u32 i = sizeof(*a) / 8 * 8; i < sizeof(*a); i++)
		((__u8 *)a)[i] = 0;
}

SEC("struct_ops")
void BPF_PROG(ccsim_init, struct sock *sk)
{
	struct cc_priv *p = cc_priv(sk);
	struct cc_window w;
	struct cc_metrics zero = {};
	__u32 port = cc_port(sk);

	struct cc_state *a;

	__builtin_memset(p, 0, sizeof(*p));
	a = cc_alg(sk, p);
	if (!a)
		return;
	cc_zero_state(a);
	cc_load(sk, p, &w);
	if (tcp_initial_ssthresh_bytes)
		w.ssthresh_bytes = tcp_initial_ssthresh_bytes;
	cc_init(a, &w);
	cc_store(sk, p, &w, tcp_initial_ssthresh_bytes != 0);
	bpf_map_update_elem(&ccsim_metrics, &port, &zero, BPF_ANY);
}

SEC("struct_ops")
void BPF_PROG(ccsim_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct cc_priv *p = cc_priv(sk);
	__u8 state = cc_ca_state(sk);
	__u32 rtt_us = sample->rtt_us > 0 ? (__u32)sample->rtt_us : 0;

	cc_flush_pending(sk, p, false);
	if (state == TCP_CA_CWR || state == TCP_CA_Recovery) {
		cc_deliver_ack(sk, p, sample->pkts_acked, rtt_us, true, false, 0);
		return;
	}
	p->glue.pending_us = cc_time32_us(bpf_ktime_get_ns()) | 1;
	p->glue.pending_acked = sample->pkts_acked;
	p->glue.pending_rtt_us = rtt_us;
}

SEC("struct_ops")
void BPF_PROG(ccsim_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cc_priv *p = cc_priv(sk);
	__u32 segments = 0, rtt_us = 0;

	if (p->glue.pending_us) {
		segments = p->glue.pending_acked;
		rtt_us = p->glue.pending_rtt_us;
		p->glue.pending_us = 0;
	}
	cc_deliver_ack(sk, p, segments, rtt_us, false, cc_is_cwnd_limited(sk), 0);
}

SEC("struct_ops")
__u32 BPF_PROG(ccsim_ssthresh, struct sock *sk)
{
	struct cc_priv *p = cc_priv(sk);
	const struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_window w;
	struct cc_loss loss = {};
	struct cc_state *a = cc_alg(sk, p);
	__u64 ssthresh;

	if (!a)
		return cc_max(tp->snd_cwnd >> 1U, 2); /* no state: Linux tcp_reno_ssthresh */
	cc_load(sk, p, &w);
	loss.now_ns = bpf_ktime_get_ns();
	loss.kind = CC_LOSS_FAST_RETRANSMIT;
	loss.backoff = 1;
	/* FlightSize as the Rust machine reports it at a loss (docs/choices.md): the outstanding
	 * segments, not less the SACKed and lost ones (Linux's pipe would be several segments smaller
	 * at small windows), and never more than cwnd, which leaves out limited-transmit segments. */
	loss.bytes_in_flight = (__u64)cc_min(tp->packets_out, tp->snd_cwnd) * w.mss_bytes;
	loss.pipe_bytes = (__u64)cc_packets_in_flight(tp) * w.mss_bytes;
	loss.min_rtt_ns = (__u64)tp->rtt_min.s[0].v * CC_NSEC_PER_USEC;
	loss.srtt_ns = (__u64)(tp->srtt_us >> 3) * CC_NSEC_PER_USEC;
	ssthresh = cc_ssthresh_after_loss(a, &w, &loss);
	cc_flush_pending(sk, p, true);
	return cc_ssthresh_pkts(ssthresh, w.mss_bytes);
}

SEC("struct_ops")
void BPF_PROG(ccsim_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct cc_priv *p = cc_priv(sk);
	const struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_state *a = cc_alg(sk, p);
	struct cc_window w;

	if (!a)
		return;
	if (ev == CA_EVENT_COMPLETE_CWR) {
		struct cc_recovery_exit e = {};

		cc_load(sk, p, &w);
		e.now_ns = bpf_ktime_get_ns();
		e.bytes_in_flight = (__u64)cc_packets_in_flight(tp) * w.mss_bytes;
		e.after_timeout = false;
#ifdef CC_HAS_RECOVERY_EXIT
		cc_on_recovery_exit(a, &w, &e);
#else
		cc_default_recovery_exit(&w, &e);
#endif
		cc_store(sk, p, &w, true);
	}
	else if (ev == CA_EVENT_LOSS) {
		p->glue.timeout_ssthresh = 1; /* tcp_enter_loss: the ssthresh call just made was this timeout's */
	}
}

#ifdef CC_HAS_TIMEOUT
/* Every expiry of the retransmission timer (tcp_enter_loss -> tcp_set_ca_state(TCP_CA_Loss)). */
SEC("struct_ops")
void BPF_PROG(ccsim_set_state, struct sock *sk, __u8 new_state)
{
	struct cc_priv *p = cc_priv(sk);
	struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_state *a;
	struct cc_window w;
	bool first;

	/* a SYN's expiry comes before init (tcp_init_transfer), which zeroes the state anyway */
	if (new_state != TCP_CA_Loss || sk->__sk_common.skc_state == TCP_SYN_SENT)
		return;
	first = p->glue.timeout_ssthresh;
	p->glue.timeout_ssthresh = 0;
	a = cc_alg(sk, p);
	if (!a)
		return;
	/* tcp_enter_loss has already set cwnd to the packets in flight + 1: the twin sees the window
	 * before the expiry, the glue's byte window, and sets ssthresh only */
	w.mss_bytes = cc_mss(tp);
	w.cwnd_bytes = p->glue.cwnd_bytes ? p->glue.cwnd_bytes : (__u64)tp->snd_cwnd * w.mss_bytes;
	w.ssthresh_bytes = tp->snd_ssthresh >= CC_INFINITE_SSTHRESH ? CC_U64_MAX : (__u64)tp->snd_ssthresh * w.mss_bytes;
	cc_on_timeout(a, &w, bpf_ktime_get_ns(), first);
	tp->snd_ssthresh = cc_ssthresh_pkts(w.ssthresh_bytes, w.mss_bytes);
	p->glue.cwnd_bytes = (__u64)tp->snd_cwnd * w.mss_bytes;
}
#endif

SEC("struct_ops")
__u32 BPF_PROG(ccsim_undo_cwnd, struct sock *sk)
{
	struct cc_priv *p = cc_priv(sk);
	const struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_window w;
	__u64 prior = (__u64)tp->prior_cwnd;

	cc_load(sk, p, &w);
#ifdef CC_HAS_UNDO
	struct cc_state *a = cc_alg(sk, p);

	if (!a)
		return (__u32)cc_max(w.cwnd_bytes / w.mss_bytes, prior);
	return (__u32)(cc_undo_cwnd(a, &w, prior * w.mss_bytes) / w.mss_bytes);
#else
	/* Linux tcp_reno_undo_cwnd, the Rust trait's default */
	return (__u32)cc_max(w.cwnd_bytes / w.mss_bytes, prior);
#endif
}

SEC(".struct_ops")
struct tcp_congestion_ops ccsim_ops = {
	.init = (void *)ccsim_init,
	.pkts_acked = (void *)ccsim_pkts_acked,
	.cong_avoid = (void *)ccsim_cong_avoid,
	.ssthresh = (void *)ccsim_ssthresh,
	.cwnd_event = (void *)ccsim_cwnd_event,
#ifdef CC_HAS_TIMEOUT
	.set_state = (void *)ccsim_set_state,
#endif
	.undo_cwnd = (void *)ccsim_undo_cwnd,
	.name = CC_NAME_PLACEHOLDER,
};

#endif /* CCSIM_CC_OPS_H */
