//! # CUBIC with HyStart, as Linux `net/ipv4/tcp_cubic.c` (6.x) runs it (RFC 9438)
//!
//! No BPF twin: the kernel testbed runs the kernel's own `cubic` (`ccsim testbed run --builtin cubic`,
//! `docs/kernel.md`), the ground truth this module is checked against.
//!
//! Papers and reference: S. Ha, I. Rhee, L. Xu, "CUBIC: a new TCP-friendly high-speed TCP variant",
//! SIGOPS OSR 2008; S. Ha, I. Rhee, "Taming the elephants: new TCP slow start" (HyStart), Computer
//! Networks 2011; RFC 9438 (CUBIC for fast and long-distance networks); Linux `tcp_cubic.c` of the
//! 6.x series (HyStart in microseconds, `hystart_update` called from `cubictcp_acked`) with its module
//! defaults. Keys [Ha08], [Ha11], [RFC9438], [Linux-cubic] in `docs/bibliography.md`.
//!
//! Rules implemented (windows in whole segments, as Linux counts them; time in jiffies of HZ = 1000):
//! * **Window law** (`bictcp_update`): at the first congestion-avoidance ACK of an epoch, the epoch
//!   starts: `K = cbrt((W_max − cwnd)/C)` (0 and origin = cwnd if cwnd ≥ W_max), origin = W_max. On
//!   each later ACK (at most once per jiffy, and not at all while cwnd is unchanged for HZ/32) the
//!   target is `origin + C (t + RTT_min − K)³` (the window one minimum RTT ahead, RFC 9438 section
//!   4.2) in units of 1/1024 s, and `cnt = cwnd / (target − cwnd)` ACKed segments per increment
//!   (`100·cwnd` when the target is not above cwnd); at most 20 before the first loss; C = bic_scale
//!   · 10 / 1024 = 0.4004.
//! * **Reno-friendly region** (RFC 9438 section 4.3, `tcp_friendliness`): an emulated Reno window
//!   `tcp_cwnd` grows by one segment per `cwnd · beta_scale / 8` segments acked (beta_scale =
//!   8 (1024 + β)/3/(1024 − β) = 15 for β = 717: the AIMD slope 3(1 − β)/(1 + β)); when it is above cwnd,
//!   `cnt ≤ cwnd / (tcp_cwnd − cwnd)`. Then `cnt ≥ 2` (at most 1.5x per RTT).
//! * **Increase** (`cubictcp_cong_avoid`): only when cwnd-limited; slow start (`tcp_slow_start`, every
//!   delivered segment counts, up to ssthresh), the rest through `tcp_cong_avoid_ai(cnt)`
//!   ([`super::linux_cong`]).
//! * **Loss** (`cubictcp_recalc_ssthresh`): the epoch ends; fast convergence: `W_max = cwnd (1024 +
//!   β)/2048` when cwnd < the previous W_max, else `W_max = cwnd`; ssthresh = max(cwnd · β/1024, 2)
//!   segments. Repeated timeouts of one segment keep ssthresh (`tcp_enter_loss` recomputes it once).
//! * **Timeout** (`cubictcp_state(TCP_CA_Loss)`): all CUBIC state is reset, W_max included, and
//!   HyStart's round restarts.
//! * **End of fast recovery**: cwnd = ssthresh (`tcp_end_cwnd_reduction`).
//! * **Idle** (`cubictcp_cwnd_event(CA_EVENT_TX_START)`): the epoch start moves forward by the time
//!   since the last send, so growth resumes on the curve where it paused.
//! * **HyStart** (`cubictcp_acked`, `hystart_update`), in slow start at cwnd ≥ `hystart_low_window`,
//!   until it fires once: rounds end when snd_una passes the snd_nxt of the round's start. ACK train:
//!   while ACKs come at most `hystart_ack_delta_us` apart, the train is long enough when it spans
//!   more than (delay_min + ack_delay)/2 from the round start. Delay: the minimum RTT of the round's
//!   first 8 samples against delay_min + clamp(delay_min/8, 4 ms, 16 ms). Either sets ssthresh =
//!   cwnd. RTT samples within 1 s of an epoch start are ignored (right after a recovery).
//! * **Undo**: Linux `tcp_reno_undo_cwnd` (the trait default); CUBIC keeps its W_max.
//!
//! Parameters: the module parameters under their Linux names ([`params`]); the on/off ones
//! (`fast_convergence`, `tcp_friendliness`, `hystart`) are booleans here, integers in Linux.
//!
//! Differences from Linux (and why):
//! * **Cube root exact.** Linux's `cubic_root` is a table lookup and one Newton step (average error
//!   0.195 %); K here is the exact integer cube root in the same 1/1024 s units.
//! * **Segments counted from `delivered_bytes`.** Linux passes `acked_sacked` (segments newly
//!   delivered, cumulatively or by SACK); the seam gives bytes, counted here in segments rounded up.
//! * **RTT samples** are the machine's Karn-safe raw samples, one per ACK, and the machine holds back
//!   the sample of an ACK it suspects was delayed (FreeBSD h_ertt); Linux samples every ACK from the
//!   most recently sent segment it covers. HyStart's delay test takes the minimum of 8 samples, so a
//!   missing delayed-ACK sample changes which 8.
//! * **Last send time.** Linux shifts the epoch by `now − tp->lsndtime`; the seam does not report
//!   sends, so the last send is taken as the time of the ACK that left nothing in flight less its
//!   RTT sample (or the smoothed RTT).
//! * **ack_delay** of the ACK-train test is Linux's `hystart_ack_delay`, min(1 ms, 4 · 64 KiB /
//!   pacing rate) with Linux's unpaced pacing rate (`tcp_update_pacing_rate`: 2 · cwnd · MSS /
//!   srtt in slow start); no `fq`, so the threshold is halved as Linux does without pacing.
//! * **Slow start is Linux's `cwnd < ssthresh`** ([`super::linux_cong::in_slow_start`]) under every
//!   profile: the module's rules are written against it; the `freebsd9` profile's `cwnd <= ssthresh`
//!   is not applied to this algorithm.
//! * **HZ** is 1000 (jiffies of 1 ms); kernels built with HZ = 250 round the epoch clock to 4 ms.
//! * **Disorder**: Linux calls `cong_avoid` only for ACKs that advance snd_una outside a window
//!   reduction; so does this module (`bytes_acked > 0`, not in recovery).

use std::time::Duration;

use super::linux_cong::{cwnd_segments, in_slow_start, left_after_slow_start, CongAvoidCount, Delivered};
use crate::params::{ParamReader, ParamSpec};
use crate::time::Time;
use crate::{AckSample, CcError, CcInit, CongestionControl, CwndEvent, LossEvent, LossKind, Metric, ParamMap, RecoveryExit, Window};

pub const NAME: &str = "cubic";

/// Linux `BICTCP_BETA_SCALE`: β is in 1/1024.
const BETA_SCALE: u64 = 1024;
/// Jiffies per second (CONFIG_HZ = 1000).
const HZ: u64 = 1000;
/// Linux `BICTCP_HZ`: the curve's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// Linux `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Linux `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX` (µs): clamp of the delay threshold.
const HYSTART_DELAY_MIN_US: u64 = 4_000;
const HYSTART_DELAY_MAX_US: u64 = 16_000;
/// `sk_gso_max_size` of Linux's `hystart_ack_delay` (GSO_LEGACY_MAX_SIZE, 64 KiB).
const GSO_MAX_SIZE_BYTES: u64 = 65_536;

pub fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::boolean("fast_convergence", true, "lower W_max to cwnd (1 + beta)/2 when a loss comes below the previous W_max (Linux fast_convergence=1)"),
        ParamSpec::integer("beta", "1/1024", 717, 1, 1023, "multiplicative decrease: ssthresh = cwnd * beta/1024 (Linux beta=717, 0.7 of RFC 9438)"),
        ParamSpec::integer("initial_ssthresh", "pkts", 0, 0, 1 << 30, "initial ssthresh when hystart is off; 0 leaves it unlimited (Linux initial_ssthresh=0)"),
        ParamSpec::integer("bic_scale", "1/1024", 41, 1, 1024, "C = bic_scale * 10/1024 (Linux bic_scale=41: C = 0.4)"),
        ParamSpec::boolean("tcp_friendliness", true, "never grow slower than the emulated Reno window (RFC 9438 4.3; Linux tcp_friendliness=1)"),
        ParamSpec::boolean("hystart", true, "hybrid slow start: leave slow start on an ACK train or a delay increase (Linux hystart=1)"),
        ParamSpec::integer("hystart_detect", "", 3, 0, 3, "HyStart detectors: 1 ACK train, 2 delay, 3 both (Linux hystart_detect=3)"),
        ParamSpec::integer("hystart_low_window", "pkts", 16, 0, 1 << 30, "HyStart runs only at cwnd >= this (Linux hystart_low_window=16)"),
        ParamSpec::integer("hystart_ack_delta_us", "us", 2000, 0, 1_000_000, "largest ACK spacing still counted as one train (Linux hystart_ack_delta_us=2000)"),
    ]
}

/// CUBIC congestion control (Linux `struct bictcp` and the socket fields it uses).
#[derive(Clone, Debug)]
pub struct Cubic {
    // module parameters
    fast_convergence: bool,
    beta: u64,
    initial_ssthresh: u64,
    tcp_friendliness: bool,
    hystart: bool,
    detect_train: bool,
    detect_delay: bool,
    hystart_low_window: u64,
    hystart_ack_delta_us: u64,
    // precomputed at module registration (Linux cubictcp_register)
    beta_scale: u64,
    cube_rtt_scale: u64,
    cube_factor: u64,
    mss: u64,
    // struct bictcp
    /// Segments to ack per one-segment increase.
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin_point: u64,
    /// K in 2^-10 s.
    bic_k: u64,
    /// Minimum RTT (µs), 0 before the first sample.
    delay_min_us: u64,
    /// Jiffy the epoch started; `None` is Linux's 0 (no epoch).
    epoch_start: Option<u64>,
    ack_cnt: u64,
    /// The emulated Reno window (segments).
    tcp_cwnd: u64,
    sample_cnt: u32,
    found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt_us: u64,
    // socket fields Linux keeps in tcp_sock
    cwnd_cnt: CongAvoidCount,
    delivered: Delivered,
    snd_nxt: u64,
    last_send: Option<Time>,
    // for metrics
    target: u64,
}

/// Jiffies at HZ = 1000.
fn jiffies(t: Time) -> u64 {
    t.as_nanos() / 1_000_000
}

fn micros(t: Time) -> u64 {
    t.as_nanos() / 1_000
}

/// Linux `usecs_to_jiffies`: rounded up.
fn usecs_to_jiffies(us: u64) -> u64 {
    us.div_ceil(1_000_000 / HZ)
}

/// Exact integer cube root (floor).
fn cube_root(a: u128) -> u64 {
    let mut x = (a as f64).cbrt() as u128;
    while x * x * x > a {
        x -= 1;
    }
    while (x + 1) * (x + 1) * (x + 1) <= a {
        x += 1;
    }
    x as u64
}

impl Cubic {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<Cubic, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        let beta = p.f64("beta") as u64;
        let bic_scale = p.f64("bic_scale") as u64;
        let detect = p.f64("hystart_detect") as u64;
        let mut c = Cubic {
            fast_convergence: p.bool("fast_convergence"),
            beta,
            initial_ssthresh: p.f64("initial_ssthresh") as u64,
            tcp_friendliness: p.bool("tcp_friendliness"),
            hystart: p.bool("hystart"),
            detect_train: detect & 1 != 0,
            detect_delay: detect & 2 != 0,
            hystart_low_window: p.f64("hystart_low_window") as u64,
            hystart_ack_delta_us: p.f64("hystart_ack_delta_us") as u64,
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (bic_scale * 10),
            mss: init.mss_bytes,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            bic_k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt_us: u64::MAX,
            cwnd_cnt: CongAvoidCount::default(),
            delivered: Delivered::default(),
            snd_nxt: 0,
            last_send: None,
            target: 0,
        };
        c.reset();
        Ok(c)
    }

    /// Linux `bictcp_reset`: every field of `struct bictcp` up to `unused`, and `found`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin_point = 0;
        self.bic_k = 0;
        self.delay_min_us = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// Linux `bictcp_hystart_reset`: a HyStart round starts now and ends when snd_una passes snd_nxt.
    fn hystart_reset(&mut self, now_us: u64) {
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = self.snd_nxt;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// Linux `bictcp_update`: the epoch, the cubic target one minimum RTT ahead and `cnt`, then the
    /// Reno-friendly bound.
    fn update(&mut self, cwnd: u64, acked: u64, now_j: u64) {
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // At most once per jiffy; every reduction clears epoch_start, forcing a new computation.
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            let epoch_start = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now_j);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.origin_point = cwnd;
                    } else {
                        // K = cbrt((W_max - cwnd) / C) in 2^-10 s.
                        self.bic_k = cube_root(self.cube_factor as u128 * (self.last_max_cwnd - cwnd) as u128);
                        self.origin_point = self.last_max_cwnd;
                    }
                    now_j
                }
            };
            let t_j = now_j - epoch_start + usecs_to_jiffies(self.delay_min_us);
            let t = (t_j << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.bic_k) as u128;
            let delta = ((self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)).min(u64::MAX as u128) as u64;
            self.target = if t < self.bic_k { self.origin_point.saturating_sub(delta) } else { self.origin_point.saturating_add(delta) };
            self.cnt = if self.target > cwnd { cwnd / (self.target - cwnd) } else { 100 * cwnd };
            // The first epoch, bandwidth unknown: at least 5 % per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.tcp_friendliness {
            let per = (cwnd * self.beta_scale) >> 3;
            if per > 0 && self.ack_cnt > per {
                // Linux: `while (ack_cnt > delta) { ack_cnt -= delta; tcp_cwnd++; }`
                let n = (self.ack_cnt - 1) / per;
                self.ack_cnt -= n * per;
                self.tcp_cwnd += n;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// Linux `hystart_ack_delay`: the TSO/GRO cushion of the ACK-train test, min(1 ms, 4 GSO
    /// packets at the pacing rate), with Linux's pacing rate of an unpaced flow in slow start
    /// (`tcp_update_pacing_rate`: 200 % of max(cwnd, in flight) · MSS / srtt).
    fn ack_delay_us(&self, w: &Window, ack: &AckSample) -> u64 {
        let Some(srtt) = ack.srtt.filter(|s| !s.is_zero()) else { return 0 };
        let segments = cwnd_segments(w).max(ack.bytes_in_flight / self.mss);
        let rate_bps = 2.0 * (segments * self.mss) as f64 / srtt.as_secs_f64();
        if rate_bps <= 0.0 {
            return 0;
        }
        (1_000.0f64).min(4.0 * GSO_MAX_SIZE_BYTES as f64 * 1e6 / rate_bps) as u64
    }

    /// Linux `hystart_update`: the round, then the ACK-train and delay tests; either ends slow start
    /// (ssthresh = cwnd).
    fn hystart_update(&mut self, w: &mut Window, ack: &AckSample, delay_us: u64) {
        let now_us = micros(ack.now);
        if ack.snd_una > self.end_seq {
            self.hystart_reset(now_us);
        }
        if self.detect_train && now_us.saturating_sub(self.last_ack_us) <= self.hystart_ack_delta_us {
            self.last_ack_us = now_us;
            // Without pacing the train may end at delay_min / 2 (Linux halves the threshold).
            let threshold = (self.delay_min_us + self.ack_delay_us(w, ack)) >> 1;
            if now_us.saturating_sub(self.round_start_us) > threshold {
                self.found = true;
                w.ssthresh_bytes = w.cwnd_bytes;
            }
        }
        if self.detect_delay {
            self.curr_rtt_us = self.curr_rtt_us.min(delay_us);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > self.delay_min_us + thresh {
                    self.found = true;
                    w.ssthresh_bytes = w.cwnd_bytes;
                }
            }
        }
    }

    /// Linux `cubictcp_acked`: delay_min and HyStart from one RTT sample.
    fn acked(&mut self, w: &mut Window, ack: &AckSample, rtt: Duration) {
        let now_j = jiffies(ack.now);
        // Discard samples right after a reduction: the queue is still draining.
        if self.epoch_start.is_some_and(|e| now_j.saturating_sub(e) < HZ) {
            return;
        }
        let delay_us = (rtt.as_nanos() / 1_000).max(1) as u64;
        if self.delay_min_us == 0 || self.delay_min_us > delay_us {
            self.delay_min_us = delay_us;
        }
        if !self.found && in_slow_start(w) && self.hystart && cwnd_segments(w) >= self.hystart_low_window {
            self.hystart_update(w, ack, delay_us);
        }
    }

    /// Linux `cubictcp_cong_avoid`.
    fn cong_avoid(&mut self, w: &mut Window, ack: &AckSample, acked: u64) {
        if let Some(acked) = left_after_slow_start(w, ack, acked) {
            self.update(cwnd_segments(w), acked, jiffies(ack.now));
            self.cwnd_cnt.add(w, self.cnt, acked);
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Linux `cubictcp_init`.
    fn init(&mut self, w: &mut Window) {
        self.reset();
        if self.hystart {
            self.hystart_reset(0);
        }
        if !self.hystart && self.initial_ssthresh > 0 {
            w.ssthresh_bytes = self.initial_ssthresh.saturating_mul(self.mss);
        }
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.snd_nxt = self.snd_nxt.max(ack.snd_max);
        let acked = self.delivered.take(ack, self.mss);
        if ack.bytes_acked > 0 && ack.snd_una >= ack.snd_max {
            // Nothing left in flight: the last segment went out about one RTT ago (tp->lsndtime).
            if let Some(r) = ack.rtt.or(ack.srtt) {
                self.last_send = Some(Time::from_nanos(ack.now.as_nanos().saturating_sub(r.as_nanos() as u64)));
            }
        }
        if let Some(rtt) = ack.rtt {
            self.acked(w, ack, rtt);
        }
        if ack.bytes_acked > 0 && !ack.in_recovery {
            self.cong_avoid(w, ack, acked);
        }
    }

    /// Linux `cubictcp_recalc_ssthresh` (fast convergence), once per loss episode.
    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.cwnd_cnt = CongAvoidCount::default(); // tcp_init_cwnd_reduction, tcp_enter_loss
        if matches!(loss.kind, LossKind::Timeout { backoff } if backoff > 1) && w.ssthresh_bytes != u64::MAX {
            return w.ssthresh_bytes; // tcp_enter_loss: not recomputed on later expiries
        }
        let cwnd = cwnd_segments(w);
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
            cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * self.beta / BETA_SCALE).max(2) * self.mss
    }

    /// Linux `tcp_end_cwnd_reduction`: a fast recovery ends with cwnd = ssthresh.
    fn on_recovery_exit(&mut self, w: &mut Window, exit: &RecoveryExit) {
        if !exit.after_timeout && w.ssthresh_bytes != u64::MAX {
            w.set_cwnd(w.ssthresh_bytes);
        }
    }

    /// Linux `cubictcp_cwnd_event` (TX_START after idle shifts the epoch) and `cubictcp_state`
    /// (entering TCP_CA_Loss, which the machine reports as `CwndEvent::Loss`, resets everything).
    fn cwnd_event(&mut self, _w: &mut Window, now: Time, ev: CwndEvent) {
        match ev {
            CwndEvent::TxStart => {
                let now_j = jiffies(now);
                if let (Some(e), Some(sent)) = (self.epoch_start, self.last_send) {
                    let idle = now_j.saturating_sub(jiffies(sent));
                    if idle > 0 {
                        self.epoch_start = Some((e + idle).min(now_j));
                    }
                }
            }
            CwndEvent::Loss => {
                self.cwnd_cnt = CongAvoidCount::default();
                self.reset();
                self.hystart_reset(micros(now));
            }
            _ => {}
        }
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        out.extend_from_slice(&[
            ("cnt", self.cnt as f64),
            ("w_max_pkts", self.last_max_cwnd as f64),
            ("origin_pkts", self.origin_point as f64),
            ("k_s", self.bic_k as f64 / 1024.0),
            ("epoch_start_s", self.epoch_start.map_or(-1.0, |e| e as f64 / HZ as f64)),
            ("target_pkts", self.target as f64),
            ("reno_cwnd_pkts", self.tcp_cwnd as f64),
            ("delay_min_ms", self.delay_min_us as f64 / 1e3),
            ("hystart_found", if self.found { 1.0 } else { 0.0 }),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;
    use crate::{ParamValue, SlowStartRule};

    const MSS: u64 = 1000;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn cubic_with(kv: &[(&str, ParamValue)]) -> Script<Cubic> {
        let init = Script::<Cubic>::init(MSS, 10, 2);
        let mut given = ParamMap::new();
        for (k, v) in kv {
            given.insert(k.to_string(), v.clone());
        }
        let mut s = Script::new(Cubic::new(&given, &init).unwrap(), init);
        s.w.slow_start = SlowStartRule::Linux;
        s
    }

    /// Delivers one window of ACKs, one segment each, spread evenly over `rtt`; returns cwnd
    /// (segments) after it.
    fn one_rtt(s: &mut Script<Cubic>, rtt: Duration) -> u64 {
        let n = s.w.cwnd_bytes / MSS;
        s.ack_spacing = rtt / n as u32;
        for _ in 0..n {
            s.ack_rtt(MSS, rtt);
        }
        s.w.cwnd_bytes / MSS
    }

    /// A flow past its first loss at `w_max` segments, in congestion avoidance from t = 0 of its
    /// epoch, RTT 100 ms.
    fn after_loss(w_max: u64, kv: &[(&str, ParamValue)]) -> Script<Cubic> {
        let mut v = vec![("hystart", ParamValue::Bool(false))];
        v.extend_from_slice(kv);
        let mut s = cubic_with(&v);
        s.ack_rtt(MSS, ms(100)); // delay_min = 100 ms
        s.w.cwnd_bytes = w_max * MSS;
        s.loss_fast_retransmit(w_max * MSS);
        s.exit_recovery(w_max * MSS, false);
        s
    }

    #[test]
    fn loss_sets_ssthresh_to_beta_cwnd_and_w_max_to_cwnd() {
        let mut s = after_loss(1000, &[]);
        assert_eq!(s.w.ssthresh_bytes, 700 * MSS, "1000 * 717 / 1024 = 700");
        assert_eq!(s.w.cwnd_bytes, 700 * MSS, "tcp_end_cwnd_reduction: cwnd = ssthresh");
        assert_eq!(s.metric("w_max_pkts"), Some(1000.0));
        // Floor of two segments.
        s.w.cwnd_bytes = 2 * MSS;
        assert_eq!(s.loss_fast_retransmit(2 * MSS), 2 * MSS);
    }

    #[test]
    fn window_after_a_loss_follows_the_cubic_curve() {
        // W_max 1000, cwnd 700: K = cbrt(300 / 0.4004) = 9.083 s; in 1024ths, cube_factor =
        // floor(2^40 / 410) = 2681735677 and cbrt(300 * 2681735677) = 9300.99, floored: 9300.
        let mut s = after_loss(1000, &[]);
        s.ack_rtt(MSS, ms(100)); // the epoch starts here
        assert_eq!(s.metric("k_s"), Some(9300.0 / 1024.0));
        assert!((s.metric("k_s").unwrap() - (300.0f64 / 0.4004).cbrt()).abs() < 1e-3);
        let start = s.now;
        let law = |t: f64| 0.4004 * (t - 9.083f64).powi(3) + 1000.0;
        let mut checked = 0;
        let mut worst = 0.0f64;
        while s.now.saturating_since(start) < Duration::from_secs(14) {
            let cwnd = one_rtt(&mut s, ms(100)) as f64;
            let t = s.now.saturating_since(start).as_secs_f64();
            for probe in [2.0, 5.0, 9.0, 12.0] {
                if (t - probe).abs() < 0.05 {
                    worst = worst.max((cwnd - law(t)).abs() / law(t));
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 4);
        // At t = 2 s the law gives 857.4, at 5 s 972.8, at 9 s 1000.0, at 12 s 1009.9 segments.
        assert!(worst < 0.01, "worst relative error {worst}");
    }

    #[test]
    fn reno_friendly_region_takes_over_when_the_curve_is_flatter() {
        // Small window, short RTT: W_max 20, cwnd 14 -> K = cbrt(6/0.4) = 2.47 s, while Reno at
        // 0.53 segment per RTT of 10 ms grows about 53 segments per second.
        let mut s = after_loss(20, &[]);
        s.advance(Duration::from_secs(2)); // leave the 1-s window that ignores RTT samples
        for _ in 0..100 {
            one_rtt(&mut s, ms(10));
        }
        let friendly = s.w.cwnd_bytes / MSS;
        // 100 RTTs of Reno emulation from 14 at 8/15 segment per window: 14 + 100 * 0.533 = 67.
        assert!((60..=70).contains(&friendly), "cwnd {friendly}");
        assert!(s.metric("reno_cwnd_pkts").unwrap() > s.metric("target_pkts").unwrap(), "Reno estimate above the cubic target");
        let mut s = after_loss(20, &[("tcp_friendliness", ParamValue::Bool(false))]);
        s.advance(Duration::from_secs(2));
        for _ in 0..100 {
            one_rtt(&mut s, ms(10));
        }
        let cubic_only = s.w.cwnd_bytes / MSS;
        // Without the Reno bound: the curve at t = 1 s is 20 + 0.4 (1.01 - 2.47)^3 = 18.8.
        assert!(cubic_only < 25, "cubic alone {cubic_only}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_the_loss_window() {
        let mut s = after_loss(1000, &[]);
        s.w.cwnd_bytes = 800 * MSS; // the next loss comes below W_max = 1000
        s.loss_fast_retransmit(800 * MSS);
        assert_eq!(s.metric("w_max_pkts"), Some((800 * (1024 + 717) / 2048) as f64), "800 * 1741/2048 = 680");
        let mut s = after_loss(1000, &[("fast_convergence", ParamValue::Bool(false))]);
        s.w.cwnd_bytes = 800 * MSS;
        s.loss_fast_retransmit(800 * MSS);
        assert_eq!(s.metric("w_max_pkts"), Some(800.0));
    }

    #[test]
    fn hystart_leaves_slow_start_when_the_round_minimum_rtt_rises() {
        // ACK train off: only the delay test. cwnd 16 = hystart_low_window.
        let mut s = cubic_with(&[("hystart_detect", ParamValue::Number(2.0))]);
        s.w.cwnd_bytes = 16 * MSS;
        s.ack_spacing = ms(5);
        for _ in 0..9 {
            s.ack_rtt(MSS, ms(40)); // delay_min 40 ms; the threshold is 40 + max(5, 4) = 45 ms
        }
        assert_eq!(s.w.ssthresh_bytes, u64::MAX);
        // A new round whose first 8 samples are all above 45 ms.
        s.snd_una = s.snd_max;
        for _ in 0..9 {
            s.ack_rtt(MSS, ms(46));
        }
        assert_eq!(s.metric("hystart_found"), Some(1.0));
        assert!(s.w.ssthresh_bytes < u64::MAX && !in_slow_start(&s.w), "ssthresh = cwnd ends slow start");
        // A rise below the threshold does not.
        let mut s = cubic_with(&[("hystart_detect", ParamValue::Number(2.0))]);
        s.w.cwnd_bytes = 16 * MSS;
        s.ack_spacing = ms(5);
        for _ in 0..9 {
            s.ack_rtt(MSS, ms(40));
        }
        s.snd_una = s.snd_max;
        for _ in 0..9 {
            s.ack_rtt(MSS, ms(45));
        }
        assert_eq!(s.metric("hystart_found"), Some(0.0));
        assert_eq!(s.w.ssthresh_bytes, u64::MAX);
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_past_half_the_minimum_rtt() {
        let mut s = cubic_with(&[("hystart_detect", ParamValue::Number(1.0))]);
        s.w.cwnd_bytes = 100 * MSS;
        s.ack_spacing = ms(1);
        s.ack_rtt(MSS, ms(40)); // new round at t = 1 ms; delay_min 40 ms
        // Threshold (40 ms + ack_delay) / 2 with ack_delay = min(1 ms, ...) = 20.5 ms: the train
        // of ACKs 1 ms apart passes it 21 ms after the round start.
        for _ in 0..20 {
            s.ack_rtt(MSS, ms(40));
        }
        assert_eq!(s.metric("hystart_found"), Some(0.0));
        s.ack_rtt(MSS, ms(40));
        assert_eq!(s.metric("hystart_found"), Some(1.0));
    }

    #[test]
    fn timeout_resets_w_max_and_later_expiries_keep_ssthresh() {
        let mut s = after_loss(1000, &[]);
        s.w.cwnd_bytes = 900 * MSS;
        assert_eq!(s.loss_timeout(900 * MSS, 1), 630 * MSS, "900 * 717/1024 = 630");
        s.cc.cwnd_event(&mut s.w, s.now, CwndEvent::Loss);
        assert_eq!(s.metric("w_max_pkts"), Some(0.0), "cubictcp_state(TCP_CA_Loss) resets");
        assert_eq!(s.loss_timeout(MSS, 2), 630 * MSS);
    }

    #[test]
    fn idle_moves_the_epoch_start_forward() {
        let mut s = after_loss(1000, &[]);
        s.ack_rtt(MSS, ms(100));
        let e0 = s.metric("epoch_start_s").unwrap();
        s.advance(Duration::from_secs(3)); // well into the epoch, so the shift is not capped at now
        // An ACK that leaves nothing in flight at t0, RTT sample 100 ms: the last send was t0 - 100 ms.
        s.advance(ms(1));
        let all_acked = AckSample {
            now: s.now,
            bytes_acked: MSS,
            rtt: Some(ms(100)),
            srtt: Some(ms(100)),
            snd_una: s.snd_max,
            snd_max: s.snd_max,
            delivered_bytes: s.delivered + MSS,
            ..AckSample::default()
        };
        s.cc.on_ack(&mut s.w, &all_acked);
        let sent_s = s.now.as_nanos() as f64 / 1e9 - 0.1;
        s.advance(Duration::from_secs(5));
        s.cc.cwnd_event(&mut s.w, s.now, CwndEvent::TxStart);
        let e1 = s.metric("epoch_start_s").unwrap();
        let idle_s = s.now.as_nanos() as f64 / 1e9 - sent_s;
        assert!(((e1 - e0) - idle_s).abs() < 0.002, "epoch moved by {} s, idle {idle_s} s", e1 - e0);
        // Without an epoch (before any congestion avoidance) nothing moves.
        let mut s = cubic_with(&[]);
        s.cc.cwnd_event(&mut s.w, Time::from_nanos(5_000_000_000), CwndEvent::TxStart);
        assert_eq!(s.metric("epoch_start_s"), Some(-1.0));
    }

    #[test]
    fn slow_start_counts_every_delivered_segment() {
        let mut s = cubic_with(&[]);
        s.ack_rtt(3 * MSS, ms(40));
        assert_eq!(s.w.cwnd_bytes, 13 * MSS, "a stretch ACK of 3 grows 3 (no ABC limit)");
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let init = Script::<Cubic>::init(MSS, 10, 2);
        let mut given = ParamMap::new();
        given.insert("beta".into(), ParamValue::Number(1024.0));
        let e = Cubic::new(&given, &init).err().unwrap().to_string();
        assert!(e.contains("cubic.beta"), "{e}");
        let mut given = ParamMap::new();
        given.insert("hystart_detect".into(), ParamValue::Number(4.0));
        assert!(Cubic::new(&given, &init).is_err());
    }
}
