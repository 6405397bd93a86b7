/* Host build of the kernel twins' fixed-point helpers (python/ccsim/kernel/bpf/, compiled with
 * -DCCSIM_HOST): reads "function arg..." lines on stdin and prints each result, one line each, so
 * tests/test_kernel_fixed.py can compare them with the Rust functions' values. */
#include <stdio.h>
#include <string.h>

#include "ccsim_fixed.h"
#include "delay_probability.h"
#include "htcp_increase.h"
#include "reno_loss.h"
#if __has_include("westwood_filter.h")
#include "westwood_filter.h"
#endif
#if __has_include("loss_interval.h")
#include "loss_interval.h"
#endif
#if __has_include("binomial_power.h")
#include "binomial_power.h"
#endif
#if __has_include("tcp_limit_fixed.h")
#include "tcp_limit_fixed.h"
#endif

int main(void)
{
	char fn[64];
	unsigned long long a[8];
	char line[512];

	while (fgets(line, sizeof line, stdin)) {
		int n = sscanf(line, "%63s %llu %llu %llu %llu %llu %llu %llu %llu", fn, &a[0], &a[1], &a[2], &a[3],
			       &a[4], &a[5], &a[6], &a[7]);
		unsigned long long r = 0;

		if (n < 1)
			continue;
		if (!strcmp(fn, "mul_q32"))
			r = cc_mul_q32(a[0], a[1]);
		else if (!strcmp(fn, "mul_div"))
			r = cc_mul_div(a[0], a[1], a[2]);
		else if (!strcmp(fn, "since32"))
			r = cc_since32_us(cc_time32_us(a[0]), cc_time32_us(a[1]));
		else if (!strcmp(fn, "alpha_raw"))
			r = htcp_alpha_raw_q16(a[0], a[1]);
		else if (!strcmp(fn, "rtt_scale"))
			r = htcp_rtt_scale_q16(a[0], a[1]);
		else if (!strcmp(fn, "scaled_factor"))
			r = htcp_scaled_factor_q16(a[0], a[1]);
		else if (!strcmp(fn, "two_region")) {
			struct two_region g = { .q_min_us = a[0], .q_th_us = a[1], .p_max_q32 = a[2] };
			r = two_region_probability_q32(&g, a[3] >> 32, a[3] & 0xffffffffULL);
		} else if (!strcmp(fn, "quantise"))
			r = quantise_to_ticks_us(a[0], a[1]);
		else if (!strcmp(fn, "slow_start_cwnd") || !strcmp(fn, "slow_start_left")) {
			/* a[0] cwnd, a[1] ssthresh, a[2] counted bytes, a[3] 1 = Linux's rule */
			__u64 cwnd = a[0], left = cc_slow_start_step(&cwnd, a[1], a[2], a[3]);
			r = !strcmp(fn, "slow_start_cwnd") ? cwnd : left;
		} else if (!strcmp(fn, "reno_loss")) {
			/* halve_from, repeated timeout rule, cwnd, ssthresh, mss, timeout backoff (0 = fast
			 * retransmit), FlightSize, pipe */
			r = reno_loss_ssthresh_bytes(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
		} else if (!strcmp(fn, "frac_add")) {
			/* a[0] cwnd, then two increments a[1], a[2] in Q16 */
			struct frac_cwnd f = {};
			__u64 cwnd = a[0];
			frac_add(&f, &cwnd, a[1]);
			frac_add(&f, &cwnd, a[2]);
			r = cwnd;
		}
#ifdef WESTWOOD_FILTER_H
		else if (!strcmp(fn, "ww_sample"))
			r = westwood_sample_q16(a[0], a[1]);
		else if (!strcmp(fn, "ww_filter")) {
			/* three samples (Q16) from a fresh estimator: BWE after them */
			struct ww_filter f = {};
			for (int i = 0; i < 3; i++)
				westwood_filter_update(&f, a[i]);
			r = f.bw_est_q16;
		} else if (!strcmp(fn, "ww_bwrtt"))
			r = westwood_bw_rttmin_bytes(a[0], a[1], a[2]);
#endif
#ifdef BINOMIAL_POWER_H
		else if (!strcmp(fn, "pow_q16"))
			r = binomial_pow_q16(a[0], a[1]);
		else if (!strcmp(fn, "inv_pow_q32"))
			r = binomial_inv_pow_q32(a[0], a[1]);
		else if (!strcmp(fn, "log2_q16"))
			r = binomial_log2_q16(a[0]);
#endif
#ifdef TCP_LIMIT_FIXED_H
		else if (!strcmp(fn, "tl_exp_neg"))
			r = tl_exp_neg_q32(a[0], a[1]);
		else if (!strcmp(fn, "tl_decay"))
			r = tl_decay_towards(a[0], a[1], a[2]);
		else if (!strcmp(fn, "tl_tustin_a"))
			r = tl_tustin_a_q32(a[0], a[1]);
		else if (!strcmp(fn, "tl_rate"))
			r = tl_rate_q16(a[0], a[1]);
		else if (!strcmp(fn, "tl_cwe"))
			r = tl_cwe_q16(a[0], a[1]);
#endif
#ifdef LOSS_INTERVAL_H
		else if (!strcmp(fn, "li_mean")) {
			/* a[0] packets per interval seed, a[1] events: intervals a[0], a[0]+1, ... then a[2] open */
			struct loss_intervals li = {};
			__u64 m = 0;
			for (__u64 e = 0; e < a[1]; e++) {
				li_add_packets(&li, a[0] + e);
				li_on_event(&li);
			}
			li_add_packets(&li, a[2]);
			r = li_mean_q16(&li, &m) ? m : ~0ULL;
		}
#endif
		else {
			fprintf(stderr, "unknown function %s\n", fn);
			return 2;
		}
		printf("%llu\n", r);
	}
	return 0;
}
