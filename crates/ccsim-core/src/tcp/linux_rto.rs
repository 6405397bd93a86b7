//! The RTO as Linux computes it (`rto_estimator = "linux"`): Van Jacobson's estimator in the form of
//! `tcp_rtt_estimator` and `tcp_set_rto` / `__tcp_set_rto` (net/ipv4/tcp_input.c, include/net/tcp.h).
//!
//! RFC 6298 section 2 sets RTO = max(min RTO, SRTT + max(G, 4 RTTVAR)). Linux keeps the same SRTT
//! (gain 1/8) and a mean deviation `mdev` (gain 1/4, but only 1/32 when the sample is below SRTT and
//! the error exceeds mdev, "similar to one of Eifel findings"), and then:
//! * `mdev_max` is the largest mdev seen in the current round of data (a round ends when snd_una
//!   passes `rtt_seq`, the snd_nxt recorded at the start of the round); it restarts at the minimum
//!   RTO each round;
//! * `rttvar` follows `mdev_max`: up at once, down by a quarter of the difference once per round;
//! * the first sample sets SRTT = R, mdev = R/2 (as RFC 6298's RTTVAR = R/2) and rttvar =
//!   max(4 mdev, min RTO);
//! * RTO = SRTT + rttvar (`__tcp_set_rto`), bounded above by the maximum RTO (`tcp_bound_rto`).
//!
//! So the 4·RTTVAR term never falls below the minimum RTO: RTO >= SRTT + min RTO, where RFC 6298
//! gives max(min RTO, SRTT + 4·RTTVAR). On a steady path (RTTVAR -> 0) Linux's RTO is SRTT + 200 ms,
//! RFC 6298's is max(200 ms, SRTT).
//!
//! Variables are kept as Linux keeps them, scaled: `srtt8` = 8·SRTT, `mdev4`, `mdev_max4` and
//! `rttvar4` = 4·deviation, in nanoseconds. Linux rounds the RTO up to whole jiffies
//! (`usecs_to_jiffies`, 1 ms at HZ=1000, 4 ms at HZ=250); this keeps the exact value.

use std::time::Duration;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinuxRto {
    srtt8: i64,
    mdev4: i64,
    mdev_max4: i64,
    rttvar4: i64,
    /// snd_nxt at the start of the current round (Linux `rtt_seq`).
    rtt_seq: u64,
}

impl LinuxRto {
    /// Folds in a valid sample `r` (Linux `tcp_rtt_estimator`) and returns the new RTO before backoff
    /// and before the maximum (`__tcp_set_rto`). `snd_una` is the cumulative ACK after this ACK,
    /// `snd_nxt` the highest sequence sent.
    pub fn sample(&mut self, r: Duration, snd_una: u64, snd_nxt: u64, min_rto: Duration) -> Duration {
        let m0 = r.as_nanos().min(i64::MAX as u128) as i64;
        let rto_min = min_rto.as_nanos().min(i64::MAX as u128) as i64;
        if self.srtt8 == 0 {
            // No previous measure: "make sure rto = 3*rtt".
            self.srtt8 = m0 << 3;
            self.mdev4 = m0 << 1;
            self.rttvar4 = self.mdev4.max(rto_min);
            self.mdev_max4 = self.rttvar4;
            self.rtt_seq = snd_nxt;
        } else {
            let mut m = m0 - (self.srtt8 >> 3); // error in the estimate
            self.srtt8 += m; // srtt = 7/8 srtt + 1/8 sample
            if m < 0 {
                m = -m - (self.mdev4 >> 2);
                if m > 0 {
                    m >>= 3; // sample below srtt: finer gain for mdev
                }
            } else {
                m -= self.mdev4 >> 2;
            }
            self.mdev4 += m; // mdev = 3/4 mdev + 1/4 |error|
            if self.mdev4 > self.mdev_max4 {
                self.mdev_max4 = self.mdev4;
                if self.mdev_max4 > self.rttvar4 {
                    self.rttvar4 = self.mdev_max4;
                }
            }
            if snd_una > self.rtt_seq {
                // End of a round: let rttvar decay towards this round's largest deviation.
                if self.mdev_max4 < self.rttvar4 {
                    self.rttvar4 -= (self.rttvar4 - self.mdev_max4) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max4 = rto_min;
            }
        }
        self.srtt8 = self.srtt8.max(1);
        Duration::from_nanos(((self.srtt8 >> 3) + self.rttvar4) as u64)
    }

    pub fn srtt(&self) -> Duration {
        Duration::from_nanos((self.srtt8 >> 3) as u64)
    }

    /// The deviation term in RFC 6298's units (RTTVAR, a quarter of Linux's `rttvar_us`).
    pub fn rttvar(&self) -> Duration {
        Duration::from_nanos((self.rttvar4 / 4) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn steady_path_keeps_min_rto_on_top_of_srtt() {
        // RFC 6298 would give 100 + 4 * 37.5 = 250 ms after the second sample, and drop towards
        // max(200 ms, 100 ms) = 200 ms; Linux stays at SRTT + min RTO = 300 ms.
        let mut e = LinuxRto::default();
        assert_eq!(e.sample(ms(100), 0, 10, ms(200)), ms(300), "first sample: 100 + max(2*100, 200)");
        let mut una = 0;
        for k in 1..20u64 {
            una += 10;
            assert_eq!(e.sample(ms(100), una, una + 10 * k, ms(200)), ms(300), "sample {k}");
        }
        assert_eq!(e.srtt(), ms(100));
    }

    #[test]
    fn spike_raises_rto_at_once_and_it_decays_a_quarter_per_round() {
        let mut e = LinuxRto::default();
        e.sample(ms(100), 0, 100, ms(200)); // srtt 100, mdev4 200, rttvar4 200, round ends at 100
        // A 300 ms sample in the same round: err = 200, srtt = 125, mdev4 = 200 + (200 - 50) = 350,
        // above rttvar4 -> RTO = 125 + 350 = 475 ms (RFC 6298 gives the same here).
        assert_eq!(e.sample(ms(300), 50, 100, ms(200)), ms(475));
        // Back to 100 ms, still the same round: err = -25, srtt = 121.875; |err| < mdev/4 so mdev4
        // drops by (87.5 - 25) to 287.5, but rttvar4 holds 350 until the round ends.
        assert_eq!(e.sample(ms(100), 60, 100, ms(200)), Duration::from_micros(121_875 + 350_000));
        // Next ACK ends the round (snd_una 120 > rtt_seq 100): rttvar4 decays by (350 - 350)/4 = 0
        // since this round's largest mdev4 was 350, then mdev_max4 restarts at 200.
        let srtt = Duration::from_nanos(121_875_000 - 2_734_375); // 121.875 + (100 - 121.875)/8
        let rto = e.sample(ms(100), 120, 200, ms(200));
        assert_eq!(e.srtt(), srtt);
        assert_eq!(rto, srtt + ms(350));
        // The round after: this round's largest mdev4 is the restarted 200 ms (mdev4 is 197.3 ms), so
        // rttvar4 moves a quarter of the way from 350 to 200 ms: 312.5 ms.
        let rto = e.sample(ms(100), 210, 300, ms(200));
        assert_eq!(rto, e.srtt() + Duration::from_micros(312_500));
        assert!(rto < srtt + ms(350), "decayed");
    }
}
