/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ccsim_fixed.h: the integer arithmetic the kernel twins use in place of the Rust side's f64.
 *
 * No floating point exists in BPF programs, and neither do 128-bit products or signed 64-bit
 * division (with the clang of Debian 12), so every real number of a Rust twin becomes an unsigned
 * integer with a stated scale:
 *
 *   Q32  x * 2^32 in a u64 (probabilities, fractions, weights: the loader's `__q32` parameters);
 *   Q16  x * 2^16 (factors that may exceed one, such as H-TCP's alpha);
 *   us   times in microseconds, the kernel's RTT resolution.
 *
 * This header has no kernel dependency: with CCSIM_HOST defined it compiles with the host's C
 * compiler, so the helpers are tested against the Rust functions' values (tests/test_kernel_fixed.py).
 */
#ifndef CCSIM_FIXED_H
#define CCSIM_FIXED_H

#ifdef CCSIM_HOST
#include <stdbool.h>
#include <linux/types.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif

static __always_inline __u64 cc_min(__u64 a, __u64 b) { return a < b ? a : b; }
static __always_inline __u64 cc_max(__u64 a, __u64 b) { return a > b ? a : b; }
static __always_inline __u64 cc_clamp(__u64 x, __u64 lo, __u64 hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* Rust `half_window`: max(bytes / 2, 2 * MSS). */
static __always_inline __u64 cc_half_window(__u64 bytes, __u64 mss)
{
	return cc_max(bytes / 2, 2 * mss);
}

/* One ACK's slow-start growth by `counted` bytes (Rust RenoIncrease::on_ack, slow-start branch).
 * FreeBSD's rule (newreno_ack_received): cwnd += counted, not capped. Linux's (tcp_slow_start):
 * cwnd = min(cwnd + counted, ssthresh). Returns the count left for congestion avoidance (Linux
 * only; 0 under FreeBSD's rule). */
static __always_inline __u64 cc_slow_start_step(__u64 *cwnd, __u64 ssthresh, __u64 counted, bool linux_rule)
{
	__u64 before = *cwnd, grown = *cwnd + counted;

	if (!linux_rule) {
		*cwnd = grown;
		return 0;
	}
	*cwnd = cc_min(grown, ssthresh);
	return counted - (*cwnd - before);
}

#define CC_Q32_ONE (1ULL << 32)
#define CC_Q16_ONE (1ULL << 16)
#define CC_USEC_PER_SEC 1000000ULL

/* a * f where f is Q32, for a * f / 2^32 < 2^64: splits a to keep 64 bits. Rounds down. */
static __always_inline __u64 cc_mul_q32(__u64 a, __u64 f_q32)
{
	__u64 hi = a >> 32, lo = a & 0xffffffffULL;
	return hi * f_q32 + ((lo * (f_q32 & 0xffffffffULL)) >> 32) + lo * (f_q32 >> 32);
}

/* a * b / c rounded down, computed as (a / c) * b + (a % c) * b / c: exact while both products
 * stay below 2^64 (a * b itself may exceed it). c == 0 gives 0, as BPF's division does. */
static __always_inline __u64 cc_mul_div(__u64 a, __u64 b, __u64 c)
{
	if (!c)
		return 0;
	return a / c * b + a % c * b / c;
}

/* Microsecond timestamps in 32 bits: differences are taken modulo 2^32, so any interval shorter
 * than 71 minutes is exact. Keeps per-socket state within the kernel's 104 bytes. */
static __always_inline __u32 cc_time32_us(__u64 now_ns)
{
	return (__u32)(now_ns / 1000);
}

static __always_inline __u32 cc_since32_us(__u32 now, __u32 then)
{
	return now - then;
}

#endif /* CCSIM_FIXED_H */
