/* SPDX-License-Identifier: GPL-2.0 */
/*
 * binomial_power.h: w^x for a real exponent x >= 0 and a window w >= 1 packet, in fixed point, for
 * the binomial twin (Bansal & Balakrishnan 2001 eq. (2): w += alpha / w^k, w -= beta w^l), where the
 * Rust code (crates/ccsim-cc/src/algorithms/binomial.rs) calls f64::powf. Computed as 2^(x log2 w):
 *
 *   log2 w   Q16: the integer part from the highest set bit, 16 fraction bits by repeated squaring
 *            of the mantissa (Q30), each rounding down: error below 2^-16;
 *   2^f      Q30 for the fraction f, the product of 2^(2^-j) over f's set bits (a 16-entry table
 *            rounded to nearest): relative error below 16 * 2^-30;
 *
 * and x log2 w rounded down to Q16 once more, so w^x carries a relative error below
 * (x + 1) * 2^-16 * ln 2 + 2^-25 (3.2e-5 for x = 2), w^-x the same.
 * The exponent x is Q32 (the loader's __q32 parameters); negative exponents are not ported.
 */
#ifndef BINOMIAL_POWER_H
#define BINOMIAL_POWER_H

#include "ccsim_fixed.h"

/* Index of the highest set bit plus one (0 for 0), without a loop. */
static __always_inline __u32 cc_fls64(__u64 x)
{
	__u32 n = 0;

	if (!x)
		return 0;
	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) { n += 1; x >>= 1; }
	return n + 1;
}

/* log2 of w (Q16, w >= 1) in Q16; 0 below 1. */
static __always_inline __u64 binomial_log2_q16(__u64 w_q16)
{
	__u32 e;
	__u64 m, frac = 0;

	if (w_q16 <= CC_Q16_ONE)
		return 0;
	e = cc_fls64(w_q16) - 1; /* w_q16 in [2^e, 2^(e+1)), e >= 16 */
	m = e > 30 ? w_q16 >> (e - 30) : w_q16 << (30 - e);
#define BINOMIAL_LOG2_BIT(b)                        \
	m = (m * m) >> 30;                          \
	if (m >= (1ULL << 31)) {                    \
		m >>= 1;                            \
		frac |= 1ULL << (b);                \
	}
	BINOMIAL_LOG2_BIT(15) BINOMIAL_LOG2_BIT(14) BINOMIAL_LOG2_BIT(13) BINOMIAL_LOG2_BIT(12)
	BINOMIAL_LOG2_BIT(11) BINOMIAL_LOG2_BIT(10) BINOMIAL_LOG2_BIT(9) BINOMIAL_LOG2_BIT(8)
	BINOMIAL_LOG2_BIT(7) BINOMIAL_LOG2_BIT(6) BINOMIAL_LOG2_BIT(5) BINOMIAL_LOG2_BIT(4)
	BINOMIAL_LOG2_BIT(3) BINOMIAL_LOG2_BIT(2) BINOMIAL_LOG2_BIT(1) BINOMIAL_LOG2_BIT(0)
#undef BINOMIAL_LOG2_BIT
	return ((__u64)(e - 16) << 16) | frac;
}

/* 2^(f / 2^16) for a 16-bit fraction f, in Q30. */
static __always_inline __u64 binomial_exp2_frac_q30(__u64 f)
{
	__u64 r = 1ULL << 30;
#define BINOMIAL_EXP2_BIT(b, c)                     \
	if (f & (1ULL << (b)))                      \
		r = (r * (c)) >> 30;
	BINOMIAL_EXP2_BIT(15, 1518500250ULL) /* 2^(2^-1) in Q30 */
	BINOMIAL_EXP2_BIT(14, 1276901417ULL) /* 2^(2^-2) */
	BINOMIAL_EXP2_BIT(13, 1170923762ULL)
	BINOMIAL_EXP2_BIT(12, 1121280436ULL)
	BINOMIAL_EXP2_BIT(11, 1097253708ULL)
	BINOMIAL_EXP2_BIT(10, 1085434106ULL)
	BINOMIAL_EXP2_BIT(9, 1079572136ULL)
	BINOMIAL_EXP2_BIT(8, 1076653033ULL)
	BINOMIAL_EXP2_BIT(7, 1075196443ULL)
	BINOMIAL_EXP2_BIT(6, 1074468888ULL)
	BINOMIAL_EXP2_BIT(5, 1074105294ULL)
	BINOMIAL_EXP2_BIT(4, 1073923544ULL)
	BINOMIAL_EXP2_BIT(3, 1073832680ULL)
	BINOMIAL_EXP2_BIT(2, 1073787251ULL)
	BINOMIAL_EXP2_BIT(1, 1073764537ULL)
	BINOMIAL_EXP2_BIT(0, 1073753181ULL) /* 2^(2^-16) */
#undef BINOMIAL_EXP2_BIT
	return r;
}

/* x log2 w in Q16 (x Q32, w Q16). */
static __always_inline __u64 binomial_exponent_q16(__u64 w_q16, __u64 x_q32)
{
	return cc_mul_q32(binomial_log2_q16(w_q16), x_q32);
}

/* w^x in Q16 (saturates at 2^64 - 1). */
static __always_inline __u64 binomial_pow_q16(__u64 w_q16, __u64 x_q32)
{
	__u64 y = binomial_exponent_q16(w_q16, x_q32), ip = y >> 16;
	__u64 r = binomial_exp2_frac_q30(y & 0xffff); /* < 2^31 */

	if (ip > 47)
		return ~0ULL;
	return ip >= 14 ? r << (ip - 14) : r >> (14 - ip);
}

/* w^-x in Q32 (at most one). */
static __always_inline __u64 binomial_inv_pow_q32(__u64 w_q16, __u64 x_q32)
{
	__u64 y = binomial_exponent_q16(w_q16, x_q32), ip = y >> 16;
	__u64 r = binomial_exp2_frac_q30(y & 0xffff);

	if (ip >= 64)
		return 0;
	return ((1ULL << 62) / r) >> ip;
}

#endif /* BINOMIAL_POWER_H */
