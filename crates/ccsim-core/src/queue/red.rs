//! RED, Random Early Detection (Floyd & Jacobson 1993), as ns-2's `Queue/RED` (queue/red.cc of
//! ns-2.35) implements it without ECN, adaptive RED or byte-scaled drop probability. See `docs/red.md`.
//!
//! On every arrival, before the admission decision:
//! - idle correction: if the link was idle (queue empty, nothing on the wire) since `t_idle`,
//!   m = floor((now - t_idle) * ptc) with ptc = rate / (8 * mean_pkt_bytes), the number of
//!   mean-sized packets the link could have sent meanwhile; the average decays as if m empty-queue
//!   arrivals had been seen: avg <- (1 - w_q)^m * avg;
//! - average: avg <- (1 - w_q) * avg + w_q * q, q = the queue the packet finds (packets waiting, not
//!   the one on the wire; bytes when the limit is in bytes);
//! - count += 1 (arrivals since the last drop).
//!
//! Then, only when avg >= min_th and q > 1 (ns-2's guard: never drop early into a near-empty queue):
//! - forced drop if avg >= max_th (not gentle) or avg >= 2 max_th (gentle);
//! - else, on the first arrival after avg crossed min_th from below, count <- 1, no drop (ns-2 `old`);
//! - else an early drop with probability p_a, where
//!   p_b = max_p (avg - min_th) / (max_th - min_th) below max_th,
//!   p_b = max_p + (1 - max_p) (avg - max_th) / max_th between max_th and 2 max_th (gentle),
//!   p_a = p_b / (1 - count p_b) (count p_b < 1; else 1) when `wait` is off (the 1993 paper), or
//!   p_a = 0 (count p_b < 1), p_b / (2 - count p_b) (count p_b < 2), else 1 when `wait` is on
//!   (ns-2 `wait_ true`, default): the number of arrivals between early drops is then uniform on
//!   [1/p_b, 2/p_b] instead of [1, 1/p_b], so drops are spaced by at least 1/p_b arrivals.
//!
//! A packet that finds the physical limit reached is dropped (tail drop, forced). Every drop resets
//! count to 0. Outside [min_th, ...) the `old` flag is cleared.
//!
//! ns-2 defaults (`tcl/lib/ns-default.tcl`): classic (ns-2.1b, used by the 2001 binomial paper):
//! thresh_ 5, maxthresh_ 15 (packets), q_weight_ 0.002, linterm_ 10 (max_p = 0.1), wait_ true,
//! mean_pktsize_ 500, bytes_ false, queue_in_bytes_ false, gentle_ false (true since April 2001).
//! ns-2.35 keeps linterm_ 10, wait_ true, mean_pktsize_ 500, gentle_ true, but sets thresh_ 0,
//! maxthresh_ 0 and q_weight_ -1 (automatic configuration) and bytes_/queue_in_bytes_ true.
//! ccsim has no automatic configuration: the front end writes explicit values (defaults: the
//! classic 5/15 packets, 0.002, 0.1, wait on, gentle on, 500 B).

use ccsim_cc::{Rng, Time};

use crate::queue::discipline::{QueueDiscipline, QueueState};

/// RED parameters, in the unit of the queue measure: packets when `limit_pkts` is set, bytes when
/// `limit_bytes` is set (exactly one of them).
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub limit_pkts: Option<u64>,
    pub limit_bytes: Option<u64>,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    /// Size of a "typical" packet for the idle-time correction (ns-2 `mean_pktsize_`).
    pub mean_pkt_bytes: u64,
}

/// Why RED decided what it did at the last arrival (for tests and counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    Admit,
    /// Probabilistic drop between the thresholds.
    Early,
    /// Average above max_th (2 max_th if gentle) or the physical limit reached.
    Forced,
}

#[derive(Clone, Debug)]
pub struct Red {
    pub p: RedParams,
    /// Mean-sized packets per second the link serves (ns-2 `ptc`); 0 until the link attaches.
    ptc: f64,
    avg: f64,
    count: u64,
    old: bool,
    pub early_drops: u64,
    pub forced_drops: u64,
    pub last: RedVerdict,
}

impl Red {
    pub fn new(p: RedParams) -> Red {
        Red { p, ptc: 0.0, avg: 0.0, count: 0, old: false, early_drops: 0, forced_drops: 0, last: RedVerdict::Admit }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    fn in_bytes(&self) -> bool {
        self.p.limit_bytes.is_some()
    }

    /// Updates the average for an arrival that finds `q` (in the queue unit) after `m` idle slots.
    pub fn update_avg(&mut self, q: f64, m: u64) {
        let keep = 1.0 - self.p.w_q;
        // (1 - w_q)^m underflows to 0 for long idle periods, which is the right limit.
        self.avg = self.avg * keep.powf(m as f64) * keep + self.p.w_q * q;
    }

    /// Number of mean-sized packets the link could have sent in an idle period (ns-2's m).
    pub fn idle_slots(&self, now: Time, idle_since: Option<Time>) -> u64 {
        match idle_since {
            Some(t) if self.ptc > 0.0 => ((now - t).as_secs_f64() * self.ptc).floor() as u64,
            _ => 0,
        }
    }

    /// The initial drop probability p_b at average `avg` (0 below min_th; 1 past the forced edge).
    pub fn p_b(&self, avg: f64) -> f64 {
        let RedParams { min_th, max_th, max_p, gentle, .. } = self.p;
        let p = if avg < min_th {
            0.0
        } else if avg < max_th {
            max_p * (avg - min_th) / (max_th - min_th)
        } else if gentle {
            max_p + (1.0 - max_p) * (avg - max_th) / max_th
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// The drop probability p_a after `count` arrivals since the last drop (ns-2 `modify_p`).
    pub fn p_a(&self, p_b: f64, count: u64) -> f64 {
        let cp = count as f64 * p_b;
        let p = if self.p.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// The whole arrival procedure; returns the verdict.
    pub fn arrive(&mut self, now: Time, bytes: u64, q: QueueState, rng: &mut Rng) -> RedVerdict {
        let m = self.idle_slots(now, q.idle_since);
        let qlen = if self.in_bytes() { q.bytes } else { q.pkts };
        self.update_avg(qlen as f64, m);
        self.count += 1;
        let RedParams { min_th, max_th, gentle, .. } = self.p;
        let mut verdict = RedVerdict::Admit;
        if self.avg >= min_th && qlen > 1 {
            if (!gentle && self.avg >= max_th) || (gentle && self.avg >= 2.0 * max_th) {
                verdict = RedVerdict::Forced;
            } else if !self.old {
                self.count = 1;
                self.old = true;
            } else {
                let p_a = self.p_a(self.p_b(self.avg), self.count);
                if rng.bernoulli(p_a) {
                    verdict = RedVerdict::Early;
                }
            }
        } else {
            self.old = false;
        }
        let full = match (self.p.limit_pkts, self.p.limit_bytes) {
            (Some(l), _) => q.pkts >= l,
            (None, Some(l)) => q.bytes + bytes > l,
            (None, None) => false,
        };
        if full {
            verdict = RedVerdict::Forced;
        }
        match verdict {
            RedVerdict::Admit => {}
            RedVerdict::Early => {
                self.early_drops += 1;
                self.count = 0;
            }
            RedVerdict::Forced => {
                self.forced_drops += 1;
                self.count = 0;
            }
        }
        self.last = verdict;
        verdict
    }
}

impl QueueDiscipline for Red {
    fn admit(&mut self, now: Time, bytes: u64, q: QueueState, rng: &mut Rng) -> bool {
        self.arrive(now, bytes, q, rng) == RedVerdict::Admit
    }
    fn name(&self) -> &'static str {
        "red"
    }
    fn limit(&self) -> (Option<u64>, Option<u64>) {
        (self.p.limit_pkts, self.p.limit_bytes)
    }
    fn attach(&mut self, rate_bps: u64) {
        self.ptc = rate_bps as f64 / (8.0 * self.p.mean_pkt_bytes.max(1) as f64);
    }
    fn early_drops(&self) -> u64 {
        self.early_drops
    }
    fn average_queue(&self) -> Option<f64> {
        Some(self.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn params() -> RedParams {
        RedParams {
            limit_pkts: Some(100),
            limit_bytes: None,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: false,
            wait: true,
            mean_pkt_bytes: 500,
        }
    }

    fn busy(pkts: u64) -> QueueState {
        QueueState { pkts, bytes: pkts * 1500, idle_since: None }
    }

    #[test]
    fn average_is_the_ewma_of_the_queue_seen_at_arrivals() {
        let mut red = Red::new(RedParams { w_q: 0.5, limit_pkts: Some(1000), min_th: 500.0, max_th: 900.0, ..params() });
        let mut rng = Rng::new(1, 1);
        // Hand-computed with w_q = 1/2: 0 -> 2 -> 3 -> 5 -> 2.5.
        let mut expect = Vec::new();
        for q in [4u64, 4, 7, 0] {
            red.arrive(Time::ZERO, 1500, busy(q), &mut rng);
            expect.push(red.avg());
        }
        assert_eq!(expect, vec![2.0, 3.0, 5.0, 2.5]);
        // With the ns-2 weight: after n arrivals at a constant queue Q, avg = Q (1 - (1 - w)^n).
        let mut red = Red::new(RedParams { limit_pkts: Some(1000), min_th: 500.0, max_th: 900.0, ..params() });
        for _ in 0..1000 {
            red.arrive(Time::ZERO, 1500, busy(10), &mut rng);
        }
        let want = 10.0 * (1.0 - 0.998f64.powi(1000));
        assert!((red.avg() - want).abs() < 1e-9, "{} vs {want}", red.avg());
    }

    #[test]
    fn queue_in_bytes_averages_bytes() {
        let mut red = Red::new(RedParams { limit_pkts: None, limit_bytes: Some(1_000_000), min_th: 1e5, max_th: 2e5, w_q: 0.5, ..params() });
        let mut rng = Rng::new(1, 1);
        red.arrive(Time::ZERO, 1500, busy(4), &mut rng);
        assert_eq!(red.avg(), 3000.0);
    }

    #[test]
    fn idle_time_decays_the_average() {
        // 8 Mbit/s, 500 B mean packets: ptc = 2000 packets/s, so 10 ms idle = 20 slots.
        let mut red = Red::new(RedParams { w_q: 0.1, limit_pkts: Some(1000), min_th: 500.0, max_th: 900.0, ..params() });
        red.attach(8_000_000);
        let mut rng = Rng::new(1, 1);
        red.arrive(Time::ZERO, 1500, busy(10), &mut rng);
        assert!((red.avg() - 1.0).abs() < 1e-12);
        let t0 = Time(1_000_000_000);
        let now = t0 + Duration::from_millis(10);
        let idle = QueueState { pkts: 0, bytes: 0, idle_since: Some(t0) };
        assert_eq!(red.idle_slots(now, idle.idle_since), 20);
        red.arrive(now, 1500, idle, &mut rng);
        // avg = 1.0 * 0.9^20 * 0.9 + 0.1 * 0.
        assert!((red.avg() - 0.9f64.powi(21)).abs() < 1e-12, "{}", red.avg());
        // Not idle: no decay beyond the single arrival.
        let before = red.avg();
        red.arrive(now + Duration::from_secs(5), 1500, busy(0), &mut rng);
        assert!((red.avg() - before * 0.9).abs() < 1e-15);
        // A partial slot does not count (floor), as in ns-2.
        assert_eq!(red.idle_slots(t0 + Duration::from_micros(499), Some(t0)), 0);
    }

    #[test]
    fn drop_probabilities() {
        let red = Red::new(params());
        assert_eq!(red.p_b(4.9), 0.0);
        assert!((red.p_b(5.0) - 0.0).abs() < 1e-15);
        assert!((red.p_b(10.0) - 0.05).abs() < 1e-15);
        assert!((red.p_b(14.0) - 0.09).abs() < 1e-15);
        assert_eq!(red.p_b(15.0), 1.0); // not gentle: forced region
        // wait on (ns-2 default): 0 until count p_b reaches 1, then p_b / (2 - count p_b).
        assert_eq!(red.p_a(0.05, 19), 0.0);
        assert!((red.p_a(0.05, 20) - 0.05).abs() < 1e-15);
        assert!((red.p_a(0.05, 30) - 0.1).abs() < 1e-15); // 0.05 / (2 - 1.5)
        assert_eq!(red.p_a(0.05, 40), 1.0);
        // wait off (Floyd & Jacobson 1993): p_b / (1 - count p_b).
        let red = Red::new(RedParams { wait: false, ..params() });
        assert!((red.p_a(0.05, 0) - 0.05).abs() < 1e-15);
        assert!((red.p_a(0.05, 10) - 0.1).abs() < 1e-15); // 0.05 / 0.5
        assert_eq!(red.p_a(0.05, 20), 1.0);
    }

    #[test]
    fn gentle_ramps_from_max_p_to_one_between_max_th_and_twice_max_th() {
        let red = Red::new(RedParams { gentle: true, ..params() });
        assert!((red.p_b(15.0) - 0.1).abs() < 1e-15);
        assert!((red.p_b(22.5) - 0.55).abs() < 1e-15);
        assert_eq!(red.p_b(30.0), 1.0);
        assert_eq!(red.p_b(40.0), 1.0);
    }

    /// Drives RED with the average pinned at `avg` (w_q tiny, queue equal to the average) and
    /// returns the number of arrivals between consecutive drops.
    fn gaps(p: RedParams, avg: f64, arrivals: usize, seed: u64) -> (Vec<u64>, Red) {
        let mut red = Red::new(RedParams { w_q: 1e-12, ..p });
        red.avg = avg;
        let mut rng = Rng::new(seed, 7);
        let mut gaps = Vec::new();
        let mut since = 0;
        for _ in 0..arrivals {
            since += 1;
            if red.arrive(Time::ZERO, 1500, busy(avg.round() as u64), &mut rng) != RedVerdict::Admit {
                gaps.push(since);
                since = 0;
            }
        }
        (gaps, red)
    }

    #[test]
    fn count_based_spacing_bounds_the_gaps_between_drops() {
        // p_b = 0.05 at avg 10. With wait on, p_a = p_b / (2 - count p_b) is a hazard of
        // 1 / (40 - count) from count = 20 on and 0 before, so the gap between drops (arrivals, the
        // dropped one included) is uniform on {20, ..., 39}: mean 29.5, never below 1/p_b, never
        // above 2/p_b. This is the property the count mechanism exists for: without it (a fixed
        // p_b), gaps would be geometric with mean 20 and ~62 % of them below 20, many of 1 or 2 in a
        // row (bursts of drops hitting the same flow). Bounds allow +-1 for floating-point edges.
        let (g, red) = gaps(params(), 10.0, 200_000, 3);
        assert_eq!(red.forced_drops, 0);
        assert!(g.len() > 6000, "{}", g.len());
        let g = &g[1..]; // the first gap includes the arming arrival
        let (lo, hi) = g.iter().minmax();
        assert!(lo >= 19 && hi <= 41, "gaps in [{lo}, {hi}]");
        let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
        assert!((mean - 29.5).abs() < 0.3, "mean gap {mean}");
        // wait off (the 1993 paper): hazard p_b / (1 - count p_b) = 1 / (20 - count), gaps uniform on
        // {1, ..., 19}: mean 10, never above 1/p_b, and P(gap = 1) = 1/19 (a geometric gap would have
        // P(1) = 0.05 but a 36 % tail above 20, which spacing forbids).
        let (g, _) = gaps(RedParams { wait: false, ..params() }, 10.0, 200_000, 4);
        let g = &g[1..];
        let (lo, hi) = g.iter().minmax();
        assert!(lo >= 1 && hi <= 20, "gaps in [{lo}, {hi}]");
        let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
        assert!((mean - 10.0).abs() < 0.2, "mean gap {mean}");
        let ones = g.iter().filter(|&&x| x == 1).count() as f64 / g.len() as f64;
        assert!((ones - 1.0 / 19.0).abs() < 0.01, "{ones}");
    }

    trait MinMax {
        fn minmax(self) -> (u64, u64);
    }
    impl<'a, I: Iterator<Item = &'a u64>> MinMax for I {
        fn minmax(self) -> (u64, u64) {
            self.fold((u64::MAX, 0), |(a, b), &x| (a.min(x), b.max(x)))
        }
    }

    #[test]
    fn forced_drops_above_max_th_and_at_the_limit() {
        let mut rng = Rng::new(1, 1);
        // Not gentle: avg >= max_th drops every arrival (when the queue holds more than 1 packet).
        let mut red = Red::new(RedParams { w_q: 1e-12, ..params() });
        red.avg = 15.0;
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(20), &mut rng), RedVerdict::Forced);
        assert_eq!(red.count(), 0);
        // ... but never into a queue of 0 or 1 packet (ns-2's guard).
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(1), &mut rng), RedVerdict::Admit);
        // Gentle: the same average is in the ramp, forced only from 2 max_th.
        let mut red = Red::new(RedParams { w_q: 1e-12, gentle: true, ..params() });
        red.avg = 29.9;
        red.old = true;
        assert_ne!(red.arrive(Time::ZERO, 1500, busy(20), &mut rng), RedVerdict::Forced);
        red.avg = 30.01;
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(20), &mut rng), RedVerdict::Forced);
        // Physical limit: tail drop even with a low average.
        let mut red = Red::new(params());
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(100), &mut rng), RedVerdict::Forced);
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(99), &mut rng), RedVerdict::Admit);
        let mut red = Red::new(RedParams { limit_pkts: None, limit_bytes: Some(15_000), min_th: 7500.0, max_th: 12_000.0, ..params() });
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(9), &mut rng), RedVerdict::Admit);
        assert_eq!(red.arrive(Time::ZERO, 1501, busy(9), &mut rng), RedVerdict::Forced);
        assert_eq!((red.early_drops, red.forced_drops), (0, 1));
    }

    #[test]
    fn first_arrival_above_min_th_only_arms_the_counter() {
        let mut rng = Rng::new(1, 1);
        let mut red = Red::new(RedParams { w_q: 1e-12, wait: false, max_p: 1.0, ..params() });
        red.avg = 14.9; // p_b = 0.99
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(14), &mut rng), RedVerdict::Admit);
        assert_eq!(red.count(), 1);
        // count p_b >= 1 now: certain drop.
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(14), &mut rng), RedVerdict::Early);
        // Dropping below min_th disarms it again.
        red.avg = 0.0;
        red.arrive(Time::ZERO, 1500, busy(0), &mut rng);
        red.avg = 14.9;
        assert_eq!(red.arrive(Time::ZERO, 1500, busy(14), &mut rng), RedVerdict::Admit);
    }

    #[test]
    fn same_seed_same_decisions() {
        let (a, _) = gaps(params(), 12.0, 20_000, 9);
        let (b, _) = gaps(params(), 12.0, 20_000, 9);
        let (c, _) = gaps(params(), 12.0, 20_000, 10);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn scenario_spec_parses_and_validates() {
        use crate::scenario::Scenario;
        let json = |queue: &str| {
            format!(
                r#"{{"ccsim_resolved": 4, "duration_ns": 1000000000, "sample_interval_ns": 100000000, "measure_start_ns": 0,
                "measure_end_ns": 1000000000, "topology": {{"kind": "dumbbell", "bottleneck": {{"rate_bps": 10000000,
                "delay_ns": 20000000, "queue": {queue}, "loss_rate": 0.0, "loss_changes": [], "loss_model": {{"kind": "bernoulli"}}}}, "reverse": {{"rate_bps": 10000000,
                "delay_ns": 20000000, "queue": {{"kind": "droptail", "limit": {{"pkts": 100}}}}, "loss_rate": 0.0, "loss_changes": [], "loss_model": {{"kind": "bernoulli"}}}},
                "access_rate_bps": 1000000000, "access_queue": {{"kind": "droptail", "limit": {{"pkts": 1000}}}},
                "reverse_access_queue": {{"kind": "droptail", "limit": {{"pkts": 1000}}}}}}, "flows": []}}"#
            )
        };
        let good = r#"{"kind": "red", "limit": {"pkts": 33}, "min_th": 6.6, "max_th": 26.4, "max_p": 0.1, "w_q": 0.002,
                       "gentle": true, "wait": true, "mean_pkt_bytes": 500}"#;
        let s = Scenario::from_json(&json(good)).unwrap();
        // No flows: the queue is checked before the flows.
        assert_eq!(s.validate().unwrap_err().to_string(), "flows: at least one flow is needed");
        let field = |q: &str| Scenario::from_json(&json(q)).unwrap().validate().unwrap_err().to_string();
        assert!(!field(good).contains("queue"));
        for (from, to, key) in [
            ("\"min_th\": 6.6", "\"min_th\": 0.0", "min_th"),
            ("\"max_th\": 26.4", "\"max_th\": 6.0", "max_th"),
            ("\"max_th\": 26.4", "\"max_th\": 34.0", "max_th"),
            ("\"max_p\": 0.1", "\"max_p\": 1.5", "max_p"),
            ("\"w_q\": 0.002", "\"w_q\": 0.0", "w_q"),
            ("{\"pkts\": 33}", "{\"pkts\": 0}", "limit"),
            ("\"mean_pkt_bytes\": 500", "\"mean_pkt_bytes\": 0", "mean_pkt_bytes"),
        ] {
            let msg = field(&good.replace(from, to));
            assert!(msg.contains(&format!("topology.bottleneck.queue.{key}")), "{msg}");
        }
    }
}
