/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ack_accounting.h: the twin of AckAccounting::count in crates/ccsim-cc (rate_estimators.rs), the
 * bytes an ACK delivered as Westwood+ counts them (Linux westwood_acked_count): a duplicate ACK
 * counts one MSS and is remembered, a cumulative ACK first pays back what the duplicates counted.
 * Shared by the westwood and tcp_limit twins (their bandwidth and rate estimators).
 */
#ifndef ACK_ACCOUNTING_H
#define ACK_ACCOUNTING_H

#include "ccsim_cc.h"

/* Bytes delivered by one ACK; *accounted is the caller's count of bytes already credited to
 * duplicate ACKs. */
static __always_inline __u64 acked_count(__u32 *accounted, __u64 bytes_acked, __u64 mss)
{
	__u64 cumul = bytes_acked;

	if (cumul == 0) {
		*accounted = (__u32)cc_min((__u64)*accounted + mss, 0xffffffffULL);
		cumul = mss;
	}
	if (cumul > mss) {
		if (*accounted >= cumul) {
			*accounted -= (__u32)cumul;
			cumul = mss;
		} else {
			cumul -= *accounted;
			*accounted = 0;
		}
	}
	return cumul;
}

#endif /* ACK_ACCOUNTING_H */
