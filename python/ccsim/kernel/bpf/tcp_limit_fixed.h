/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_limit_fixed.h: the arithmetic of TCP Limit's estimators (crates/ccsim-cc/src/algorithms/
 * rate_estimators.rs: WindowedRate's exact filter, the Tustin filter) in fixed point. Rates in bytes
 * per second times 2^16 (Q16), times in microseconds. No kernel dependency (host-tested).
 *
 *   e^(-dt/tau)  = 2^(-y), y = dt log2(e) / tau in Q16 (rounded down once: relative error of the
 *                  factor below 2^-16 ln 2 = 1.06e-5, plus 2^-25 from the Q30 power table; tau below
 *                  2^30 us, 18 minutes);
 *   a_k          = (2 tau - dt) / (2 tau + dt) in Q32, rounded down (error below 2^-32);
 *   rate         = bytes / dt, rounded down to 2^-16 byte/s.
 */
#ifndef TCP_LIMIT_FIXED_H
#define TCP_LIMIT_FIXED_H

#include "ccsim_fixed.h"
#include "binomial_power.h" /* binomial_exp2_frac_q30 */

/* Rust MAX_VIRTUAL_SAMPLES: most virtual null samples fed in one gap. */
#define TL_MAX_VIRTUAL_SAMPLES 64
#define TL_LOG2E_Q32 6196328019ULL /* log2(e) * 2^32 */

/* a comes after b (32-bit microsecond times, modulo 2^32). */
static __always_inline bool tl_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* bytes / dt_us in Q16 bytes per second. */
static __always_inline __u64 tl_rate_q16(__u64 bytes, __u64 dt_us)
{
	return cc_mul_div(bytes << 16, CC_USEC_PER_SEC, dt_us);
}

/* CWE(x) = x * RTTmin in Q16 bytes, x in Q16 bytes per second. */
static __always_inline __u64 tl_cwe_q16(__u64 rate_q16, __u64 rtt_min_us)
{
	return cc_mul_div(rate_q16, rtt_min_us, CC_USEC_PER_SEC);
}

/* e^(-dt/tau) in Q32 (tau > 0). */
static __always_inline __u64 tl_exp_neg_q32(__u64 dt_us, __u64 tau_us)
{
	__u64 y, ip, r;

	if (dt_us >= 64 * tau_us)
		return 0; /* below 2^-92 */
	y = cc_mul_div(dt_us << 16, TL_LOG2E_Q32, tau_us) >> 32; /* exact while tau < 2^30 us */
	ip = y >> 16;
	if (ip >= 32)
		return 0;
	r = binomial_exp2_frac_q30(y & 0xffff); /* 2^f, f in [0, 1): [2^30, 2^31) */
	return ((1ULL << 62) / r) >> ip;        /* 2^(-f) in Q32, then 2^(-ip) */
}

/* est moved towards w: w + (est - w) f, f in Q32 (the exact filter over one constant piece). */
static __always_inline __u64 tl_decay_towards(__u64 est, __u64 w, __u64 f_q32)
{
	if (est >= w)
		return w + cc_mul_q32(est - w, f_q32);
	return w - cc_mul_q32(w - est, f_q32);
}

/* Tustin's a_k = (2 tau - dt) / (2 tau + dt) in Q32, for dt <= 2 tau. */
static __always_inline __u64 tl_tustin_a_q32(__u64 dt_us, __u64 tau_us)
{
	return cc_mul_div(2 * tau_us - dt_us, CC_Q32_ONE, 2 * tau_us + dt_us);
}

#endif /* TCP_LIMIT_FIXED_H */
