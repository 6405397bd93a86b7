//! # BBR (v1), as Linux mainline `net/ipv4/tcp_bbr.c` (6.x) runs it
//!
//! No BPF twin: the testbed runs the kernel's own `bbr` (issue 35).
//!
//! Papers and reference: N. Cardwell, Y. Cheng, C. S. Gunn, S. Hassas Yeganeh, V. Jacobson, "BBR:
//! congestion-based congestion control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-
//! control-00; Linux `tcp_bbr.c` (6.x), `lib/win_minmax.c`. Keys [Cardwell16], [Linux-bbr] in
//! `docs/bibliography.md`. docs/algorithms/bbr.md lists every rule with its Linux function.
//!
//! BBR takes over the window through `cong_control` (Linux `bbr_main`) and asks the machine to pace
//! (`SK_PACING_NEEDED` in `bbr_init`): every ACK brings a delivery-rate sample ([`RateSample`]), and
//! BBR sets cwnd and the pacing rate from its model, the windowed maximum delivery rate (10 rounds)
//! and the windowed minimum RTT (10 s).
//!
//! Units are Linux's: windows in whole segments, the bandwidth in segments per microsecond scaled
//! by 2^24 (`BW_SCALE`), gains in 1/256 (`BBR_SCALE`), `tcp_jiffies32` in milliseconds (HZ = 1000),
//! `tcp_mstamp` in microseconds. Byte counts of the sample are turned into segments of MSS bytes
//! (the bandwidth divides bytes by MSS, so a short last segment is not rounded).
//!
//! Differences from Linux (and why):
//! * No TSO: the machine sends single segments; BBR's TSO budget (`bbr_tso_segs_goal`, from the
//!   pacing rate) is still added to the window as Linux adds it (`bbr_quantization_budget`).
//! * `CA_EVENT_TX_START` is handled as if `tp->app_limited` were set: the machine sends it only when
//!   the application resumes with nothing in flight, where Linux's `tcp_rate_check_app_limited` has
//!   just marked the connection application-limited (and at the first send, where Linux starts
//!   application-limited too).
//! * `rs->is_ack_delayed` is never set: the min-RTT filter takes the first sample after it expires.
//! * `undo_cwnd` (`bbr_undo_cwnd`) is implemented but the machine detects no spurious
//!   retransmission; `tp->snd_cwnd_clamp` is not applied (the receiver window limits sending).

use std::time::Duration;

use crate::params::{ParamReader, ParamSpec};
use crate::time::Time;
use crate::{AckSample, CaState, CcError, CcInit, CongestionControl, ControlRequest, CwndEvent, LossEvent, Metric, Needs, ParamMap, RateSample, RecoveryExit, Rng, UndoSample, Window};

pub const NAME: &str = "bbr";

/// Linux `tcp_bbr.c` has no module parameters: its constants are compiled in.
pub fn params() -> Vec<ParamSpec> {
    Vec::new()
}

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Gain cycle length of ProbeBW and the bandwidth filter's window in rounds (`bbr_bw_rtts`).
const CYCLE_LEN: usize = 8;
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
const MIN_RTT_WIN_MS: u64 = 10_000;
const PROBE_RTT_MODE_MS: u64 = 200;
const MIN_TSO_RATE_BITS: u64 = 1_200_000;
const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln(2), the smallest gain that doubles the delivery rate every round (`bbr_high_gain`).
const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u32 = BBR_UNIT * 2;
const PACING_GAIN: [u32; CYCLE_LEN] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
const CYCLE_RAND: u32 = 7;
const CWND_MIN_TARGET: u64 = 4;
const FULL_BW_THRESH: u64 = BBR_UNIT as u64 * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT as u64;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// Linux `TCP_INIT_CWND`.
const TCP_INIT_CWND: u64 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (x86-64: 65536 - 1 - 320).
const GSO_BYTES_MAX: u64 = 65_536 - 1 - 320;

/// BBR's state machine (`enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Kathleen Nichols' windowed running maximum (Linux `lib/win_minmax.c`): the best, second best
/// and third best samples of the window, each with its time (here: the round count).
#[derive(Clone, Copy, Debug, Default)]
struct MinMax {
    s: [(u64, u64); 3], // (t, v)
}

impl MinMax {
    fn get(&self) -> u64 {
        self.s[0].1
    }
    fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }
    /// `minmax_running_max`.
    fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v))
    }
    /// `minmax_subwin_update`: age the best samples out of the window.
    fn subwin_update(&mut self, win: u64, val: (u64, u64)) -> u64 {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// Linux `struct bbr`, with the socket fields BBR reads kept from the latest sample.
pub struct Bbr {
    mss: u64,
    rng: Rng,
    mode: Mode,
    min_rtt_us: u64,
    min_rtt_stamp_ms: u64,
    /// 0: not set (Linux's convention).
    probe_rtt_done_stamp_ms: u64,
    bw: MinMax,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    cycle_mstamp_us: u64,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: usize,
    has_seen_rtt: bool,
    prior_cwnd: u64,
    full_bw: u64,
    ack_epoch_mstamp_us: u64,
    extra_acked: [u64; 2],
    ack_epoch_acked: u64,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    started: bool,
    // The socket as the latest sample showed it (`tp->delivered`, `tp->delivered_mstamp`,
    // `tp->lost` in bytes; `tp->srtt_us`; `tp->tcp_wstamp_ns`).
    delivered: u64,
    delivered_mstamp_us: u64,
    lost: u64,
    srtt_us: Option<u64>,
    now_ns: u64,
    wstamp_ns: u64,
}

fn us(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

impl Bbr {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<Bbr, CcError> {
        let specs = params();
        ParamReader::new(NAME, &specs, given)?;
        Ok(Bbr {
            mss: init.mss_bytes,
            rng: init.rng.clone(),
            mode: Mode::Startup,
            min_rtt_us: u64::MAX,
            min_rtt_stamp_ms: 0,
            probe_rtt_done_stamp_ms: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp_us: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp_us: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            started: false,
            delivered: 0,
            delivered_mstamp_us: 0,
            lost: 0,
            srtt_us: None,
            now_ns: 0,
            wstamp_ns: 0,
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate in bytes per second (`bbr_bw`, as `bbr_get_info` reports it).
    pub fn bw_bytes_per_s(&self) -> f64 {
        (self.bbr_bw() as f64) * self.mss as f64 * 1e6 / BW_UNIT as f64
    }

    fn cwnd_pkts(&self, w: &Window) -> u64 {
        w.cwnd_bytes / self.mss
    }
    fn set_cwnd_pkts(&self, w: &mut Window, pkts: u64) {
        w.set_cwnd(pkts.max(1) * self.mss);
    }
    fn pkts(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss)
    }
    fn now_ms(&self) -> u64 {
        self.now_ns / 1_000_000
    }

    fn max_bw(&self) -> u64 {
        self.bw.get()
    }
    /// `bbr_bw`: the long-term (policed) rate when in use, else the windowed maximum.
    fn bbr_bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }
    fn extra_acked_max(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: a rate in segments/µs << 24 times a gain, to bytes per second less
    /// the 1 % pacing margin.
    fn rate_bytes_per_sec(&self, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * self.mss as u128;
        r = (r * gain as u128) >> BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE).min(u64::MAX as u128) as u64
    }
    /// `bbr_bw_to_pacing_rate` (`sk_max_pacing_rate` is unlimited).
    fn bw_to_pacing_rate(&self, bw: u64, gain: u32) -> u64 {
        self.rate_bytes_per_sec(bw, gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: cwnd over SRTT (1 ms before any sample), at the high gain.
    fn init_pacing_rate_from_rtt(&mut self, w: &mut Window) {
        let rtt_us = match self.srtt_us {
            Some(s) => {
                self.has_seen_rtt = true;
                s.max(1)
            }
            None => 1000,
        };
        let bw = self.cwnd_pkts(w) * BW_UNIT / rtt_us;
        w.pacing_rate_bytes_per_s = self.bw_to_pacing_rate(bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower before the pipe was found full.
    fn set_pacing_rate(&mut self, w: &mut Window, bw: u64, gain: u32) {
        let rate = self.bw_to_pacing_rate(bw, gain);
        if !self.has_seen_rtt && self.srtt_us.is_some() {
            self.init_pacing_rate_from_rtt(w);
        }
        if self.full_bw_reached || rate > w.pacing_rate_bytes_per_s {
            w.pacing_rate_bytes_per_s = rate;
        }
    }

    /// `bbr_min_tso_segs`, `bbr_tso_segs_goal` (`sk_pacing_shift` = 10).
    fn tso_segs_goal(&self, w: &Window) -> u64 {
        let rate = w.pacing_rate_bytes_per_s;
        let min_segs = if rate < (MIN_TSO_RATE_BITS >> 3) { 1 } else { 2 };
        let bytes = (rate >> 10).min(GSO_BYTES_MAX);
        (bytes / self.mss).max(min_segs).min(0x7F)
    }

    /// `bbr_save_cwnd`: remember the last good cwnd before recovery or ProbeRTT.
    fn save_cwnd(&mut self, w: &Window) {
        let cwnd = self.cwnd_pkts(w);
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: bw × min_rtt × gain in segments, rounded up (the initial window before any RTT).
    fn bdp(&self, bw: u64, gain: u32) -> u64 {
        if self.min_rtt_us == u64::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128) as u64
    }

    /// `bbr_quantization_budget`: room for TSO bursts, an even window, +2 in the probing phase.
    fn quantization_budget(&self, w: &Window, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(w);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, w: &Window, bw: u64, gain: u32) -> u64 {
        self.quantization_budget(w, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: what will be in flight when the next segment leaves (the pacing
    /// clock), less what the estimated bandwidth delivers until then.
    fn packets_in_net_at_edt(&self, w: &Window, inflight_now: u64) -> u64 {
        let edt = self.wstamp_ns.max(self.now_ns);
        let interval_us = (edt - self.now_ns) / 1000;
        let interval_delivered = ((self.bbr_bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(w);
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    /// `bbr_ack_aggregation_cwnd`: headroom for ACK aggregation, once the pipe was found full.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bbr_bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked_max()) >> BBR_SCALE;
        (aggr as u128).min(max_aggr) as u64
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of recovery,
    /// the saved cwnd back at its end. Returns the window and whether conservation decided it.
    fn recover_or_restore(&mut self, w: &Window, rs: &RateSample, acked: u64) -> (u64, bool) {
        let (prev_state, state) = (self.prev_ca_state, rs.ca_state);
        let mut cwnd = self.cwnd_pkts(w);
        let in_flight = self.pkts(rs.bytes_in_flight);
        let losses = self.pkts(rs.losses_bytes);
        if losses > 0 {
            cwnd = cwnd.saturating_sub(losses).max(1);
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered; // start a round now
            cwnd = in_flight + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: toward cwnd_gain × BDP (+ aggregation headroom and budget), growing by what
    /// was acked; at least 4 segments; 4 in ProbeRTT.
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, acked: u64, bw: u64, gain: u32) {
        let mut cwnd = self.cwnd_pkts(w);
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(w, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(w, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || self.delivered < TCP_INIT_CWND * self.mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        self.set_cwnd_pkts(w, cwnd);
        if self.mode == Mode::ProbeRtt {
            let c = self.cwnd_pkts(w).min(CWND_MIN_TARGET);
            self.set_cwnd_pkts(w, c);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, w: &Window, rs: &RateSample) -> bool {
        let is_full_length = self.delivered_mstamp_us.wrapping_sub(self.cycle_mstamp_us) > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(w, self.pkts(rs.prior_in_flight_bytes));
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses_bytes > 0 || inflight >= self.inflight(w, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(w, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp_us = self.delivered_mstamp_us;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, w: &Window, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(w, rs) {
            self.advance_cycle_phase();
        }
    }

    /// `bbr_reset_probe_bw_mode`: ProbeBW at a random phase other than the 3/4 one.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r = ((self.rng.uniform() * CYCLE_RAND as f64) as u32).min(CYCLE_RAND - 1);
        self.cycle_idx = CYCLE_LEN - 1 - r as usize;
        self.advance_cycle_phase(); // flip to the next phase
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt_last_stamp_ms = self.delivered_mstamp_us / 1000;
        self.lt_last_delivered = self.delivered;
        self.lt_last_lost = self.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_interval_done`: two consistent intervals in a row mean a policer.
    fn lt_bw_interval_done(&mut self, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_sampling`: the long-term (policer) bandwidth from lossy intervals of 4-16 rounds.
    fn lt_bw_sampling(&mut self, rs_losses: u64, rs_app_limited: bool) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs_losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt_is_sampling = true;
        }
        if rs_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling();
            return;
        }
        if rs_losses == 0 {
            return;
        }
        let lost = self.lost - self.lt_last_lost;
        let delivered = self.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (self.delivered_mstamp_us / 1000) as i64 - self.lt_last_stamp_ms as i64;
        if t_ms < 1 {
            return;
        }
        if t_ms as u64 >= u32::MAX as u64 / 1000 {
            self.reset_lt_bw_sampling();
            return;
        }
        let t_us = t_ms as u128 * 1000;
        let bw = (delivered as u128 * BW_UNIT as u128 / self.mss as u128 / t_us) as u64;
        self.lt_bw_interval_done(bw);
    }

    /// `bbr_update_bw`: rounds, the long-term sampler, and the max filter of delivery rates.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered_bytes, rs.interval) else { return };
        let interval_us = us(interval);
        if interval_us == 0 {
            return;
        }
        if rs.prior_delivered_bytes >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs.losses_bytes, rs.is_app_limited);
        let bw = (delivered as u128 * BW_UNIT as u128 / self.mss as u128 / interval_us as u128).min(u64::MAX as u128) as u64;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the largest excess of acked over expected per epoch, over two
    /// windows of 5 rounds.
    fn update_ack_aggregation(&mut self, w: &Window, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked_bytes == 0 || rs.delivered_bytes.is_none() || rs.interval.is_none_or(|i| us(i) == 0) {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = self.delivered_mstamp_us.wrapping_sub(self.ack_epoch_mstamp_us) & 0xFFFF_FFFF;
        let mut expected_acked = (self.bbr_bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        let acked = self.pkts(rs.acked_sacked_bytes);
        if self.ack_epoch_acked <= expected_acked || self.ack_epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp_us = self.delivered_mstamp_us;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked.saturating_sub(expected_acked)).min(self.cwnd_pkts(w));
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`: the pipe is full after 3 rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: Startup -> Drain when the pipe is full; Drain -> ProbeBW once what is in
    /// flight at the next departure is down to one BDP.
    fn check_drain(&mut self, w: &mut Window, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh_bytes = self.inflight(w, self.max_bw(), BBR_UNIT) * self.mss;
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(w, self.pkts(rs.bytes_in_flight)) <= self.inflight(w, self.max_bw(), BBR_UNIT) {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, w: &mut Window) {
        if !(self.probe_rtt_done_stamp_ms != 0 && self.now_ms() > self.probe_rtt_done_stamp_ms) {
            return;
        }
        self.min_rtt_stamp_ms = self.now_ms();
        let c = self.cwnd_pkts(w).max(self.prior_cwnd);
        self.set_cwnd_pkts(w, c);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`: the 10 s min-RTT filter, and ProbeRTT (4 segments for 200 ms and a
    /// round) when it expires. Returns whether to mark the connection application-limited.
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        let now_ms = self.now_ms();
        let filter_expired = now_ms > self.min_rtt_stamp_ms + MIN_RTT_WIN_MS;
        if let Some(rtt) = rs.rtt {
            let rtt_us = us(rtt);
            if rtt_us < self.min_rtt_us || filter_expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp_ms = now_ms;
            }
        }
        if PROBE_RTT_MODE_MS > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w);
            self.probe_rtt_done_stamp_ms = 0;
        }
        let mut mark_app_limited = false;
        if self.mode == Mode::ProbeRtt {
            mark_app_limited = true; // ignore low rate samples during this mode
            if self.probe_rtt_done_stamp_ms == 0 && self.pkts(rs.bytes_in_flight) <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp_ms = (now_ms + PROBE_RTT_MODE_MS).max(1);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            } else if self.probe_rtt_done_stamp_ms != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w);
                }
            }
        }
        if rs.delivered_bytes.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
        mark_app_limited
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx] }, CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// Linux `bbr_init`'s clock-dependent part, at the first send.
    fn start(&mut self, now: Time) {
        self.started = true;
        self.min_rtt_stamp_ms = now.as_nanos() / 1_000_000;
        self.ack_epoch_mstamp_us = now.as_nanos() / 1000;
        self.delivered_mstamp_us = self.ack_epoch_mstamp_us;
        self.now_ns = now.as_nanos();
        self.reset_lt_bw_sampling();
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        NAME
    }

    fn needs(&self) -> Needs {
        Needs { cong_control: true, pacing: true }
    }

    /// `bbr_init`: infinite ssthresh, the pacing rate from cwnd over 1 ms at the high gain.
    fn init(&mut self, w: &mut Window) {
        w.ssthresh_bytes = u64::MAX;
        self.init_pacing_rate_from_rtt(w);
        self.mode = Mode::Startup;
        self.update_gains();
    }

    /// Never called: BBR has `cong_control`.
    fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}

    /// `bbr_main`: update the model from the sample, then the pacing rate and cwnd.
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample) -> ControlRequest {
        if !self.started {
            self.start(rs.now);
        }
        self.now_ns = rs.now.as_nanos();
        self.wstamp_ns = rs.next_departure.as_nanos();
        self.delivered = rs.delivered_total_bytes;
        self.delivered_mstamp_us = rs.delivered_time.as_nanos() / 1000;
        self.lost = rs.lost_total_bytes;
        self.srtt_us = rs.srtt.map(us);
        // bbr_update_model
        self.update_bw(rs);
        self.update_ack_aggregation(w, rs);
        self.update_cycle_phase(w, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(w, rs);
        let mark_app_limited = self.update_min_rtt(w, rs);
        self.update_gains();
        let bw = self.bbr_bw();
        self.set_pacing_rate(w, bw, self.pacing_gain);
        let acked = self.pkts(rs.acked_sacked_bytes);
        self.set_cwnd(w, rs, acked, bw, self.cwnd_gain);
        ControlRequest { mark_app_limited }
    }

    /// `bbr_ssthresh`: save cwnd, keep ssthresh.
    fn ssthresh_after_loss(&mut self, w: &Window, _loss: &LossEvent) -> u64 {
        self.save_cwnd(w);
        w.ssthresh_bytes
    }

    /// Linux leaves cwnd to `cong_control` at the end of recovery (`tcp_end_cwnd_reduction`).
    fn on_recovery_exit(&mut self, _w: &mut Window, _exit: &RecoveryExit) {}

    /// `bbr_undo_cwnd`.
    fn undo_cwnd(&mut self, w: &Window, _undo: &UndoSample) -> u64 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling();
        w.cwnd_bytes
    }

    /// `bbr_cwnd_event` (`CA_EVENT_TX_START`) and `bbr_set_state` (`TCP_CA_Loss`, sent here as
    /// `CwndEvent::Loss`).
    fn cwnd_event(&mut self, w: &mut Window, now: Time, ev: CwndEvent) {
        if !self.started {
            self.start(now);
        }
        self.now_ns = now.as_nanos();
        match ev {
            CwndEvent::TxStart => {
                self.idle_restart = true;
                self.ack_epoch_mstamp_us = now.as_nanos() / 1000;
                self.ack_epoch_acked = 0;
                if self.mode == Mode::ProbeBw {
                    self.set_pacing_rate(w, self.bbr_bw(), BBR_UNIT);
                } else if self.mode == Mode::ProbeRtt {
                    self.check_probe_rtt_done(w);
                }
            }
            CwndEvent::Loss => {
                self.prev_ca_state = CaState::Loss;
                self.full_bw = 0;
                self.round_start = true; // treat the RTO like the end of a round
                self.lt_bw_sampling(1, false);
            }
            _ => {}
        }
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        let mode = match self.mode {
            Mode::Startup => 0.0,
            Mode::Drain => 1.0,
            Mode::ProbeBw => 2.0,
            Mode::ProbeRtt => 3.0,
        };
        let min_rtt_ms = if self.min_rtt_us == u64::MAX { -1.0 } else { self.min_rtt_us as f64 / 1000.0 };
        out.extend([
            ("mode", mode),
            ("bw_bps", self.bw_bytes_per_s() * 8.0),
            ("min_rtt_ms", min_rtt_ms),
            ("pacing_gain", self.pacing_gain as f64 / BBR_UNIT as f64),
            ("cwnd_gain", self.cwnd_gain as f64 / BBR_UNIT as f64),
            ("cycle_idx", self.cycle_idx as f64),
            ("full_bw_reached", self.full_bw_reached as u8 as f64),
            ("lt_use_bw", self.lt_use_bw as u8 as f64),
            ("rounds", self.rtt_cnt as f64),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const RTT_US: u64 = 40_000;

    /// Drives `cong_control` with scripted rate samples: rounds of ACKs, each ACK delivering one
    /// segment, with the round's delivery rate and the in-flight count chosen by the test.
    struct Drive {
        bbr: Bbr,
        w: Window,
        now_us: u64,
        delivered: u64,
        round_start_delivered: u64,
        requests: Vec<ControlRequest>,
    }

    impl Drive {
        fn new() -> Drive {
            let init = CcInit { mss_bytes: MSS, initial_cwnd_bytes: 10 * MSS, abc_limit_segments: 0, rng: Rng::new(1, 1) };
            let mut bbr = Bbr::new(&ParamMap::new(), &init).unwrap();
            let mut w = Window::new(10 * MSS, MSS);
            bbr.init(&mut w);
            bbr.cwnd_event(&mut w, Time::ZERO, CwndEvent::TxStart);
            Drive { bbr, w, now_us: 0, delivered: 0, round_start_delivered: 0, requests: Vec::new() }
        }

        /// One ACK at `now_us` delivering one segment, with a sample of `rate_pkts` segments per
        /// RTT, `in_flight` segments left, the RTT sample `rtt_us`.
        fn ack(&mut self, rate_pkts: u64, in_flight: u64, rtt_us: u64) {
            self.delivered += 1;
            let rs = RateSample {
                now: Time::from_nanos(self.now_us * 1000),
                delivered_bytes: Some(rate_pkts * MSS),
                interval: Some(Duration::from_micros(RTT_US)),
                prior_delivered_bytes: self.round_start_delivered * MSS,
                acked_sacked_bytes: MSS,
                prior_in_flight_bytes: (in_flight + 1) * MSS,
                rtt: Some(Duration::from_micros(rtt_us)),
                delivered_total_bytes: self.delivered * MSS,
                delivered_time: Time::from_nanos(self.now_us * 1000),
                bytes_in_flight: in_flight * MSS,
                next_departure: Time::from_nanos(self.now_us * 1000),
                srtt: Some(Duration::from_micros(rtt_us)),
                ..RateSample::default()
            };
            let req = self.bbr.cong_control(&mut self.w, &rs);
            self.requests.push(req);
        }

        /// A round of `n` ACKs spread over one RTT, each sample at `rate_pkts` per RTT.
        fn round(&mut self, n: u64, rate_pkts: u64, in_flight: u64) {
            for _ in 0..n {
                self.now_us += RTT_US / n;
                self.ack(rate_pkts, in_flight, RTT_US);
            }
            self.round_start_delivered = self.delivered;
        }

        fn cwnd(&self) -> u64 {
            self.w.cwnd_bytes / MSS
        }
        fn gain(&self) -> f64 {
            self.bbr.pacing_gain as f64 / BBR_UNIT as f64
        }
    }

    #[test]
    fn startup_paces_at_2_over_ln2_times_the_bandwidth_and_doubles_cwnd_per_round() {
        let mut d = Drive::new();
        assert_eq!(d.bbr.mode(), Mode::Startup);
        assert!((d.gain() - 2.0 / std::f64::consts::LN_2).abs() < 0.003, "high gain {}", d.gain());
        let mut rate = 10;
        for round in 0..5 {
            let before = d.cwnd();
            d.round(rate, rate, d.cwnd());
            assert_eq!(d.cwnd(), before + rate, "round {round}: cwnd grows by what was acked");
            // bw = rate segments per 40 ms; paced at 2.885 x bw less the 1 % margin.
            let want = rate as f64 * MSS as f64 / 0.040 * (739.0 / 256.0) * 0.99;
            let got = d.w.pacing_rate_bytes_per_s as f64;
            assert!((got / want - 1.0).abs() < 0.002, "round {round}: pacing {got} B/s, want {want}");
            rate *= 2;
        }
        assert_eq!(d.bbr.mode(), Mode::Startup, "still growing: no exit");
    }

    #[test]
    fn startup_exits_after_three_rounds_without_25_percent_growth() {
        let mut d = Drive::new();
        for rate in [10, 20, 40, 80] {
            d.round(10, rate, 100);
        }
        // 80 -> 99: under 25 % growth, three rounds in a row (99 < 1.25 * 80 = 100).
        d.round(10, 99, 300);
        d.round(10, 99, 300);
        assert_eq!(d.bbr.mode(), Mode::Startup, "two rounds without growth are not enough");
        d.round(10, 99, 300);
        assert!(d.bbr.full_bw_reached);
        assert_eq!(d.bbr.mode(), Mode::Drain, "the third ends Startup");
        assert!((d.gain() - 1.0 / 2.885).abs() < 0.003, "drain gain {}", d.gain());
        // ssthresh is set to one BDP plus the budget at the exit (bbr_check_drain).
        assert!(d.w.ssthresh_bytes < u64::MAX);

        let mut g = Drive::new();
        for rate in [10, 20, 40, 80, 100, 125, 157] {
            g.round(10, rate, 100); // +25 % or more every round
        }
        assert_eq!(g.bbr.mode(), Mode::Startup, "25 % growth per round keeps Startup");
    }

    #[test]
    fn drain_lasts_until_what_is_in_flight_is_down_to_one_bdp() {
        let mut d = Drive::new();
        for rate in [10, 20, 40, 80, 80, 80, 80] {
            d.round(10, rate, 200);
        }
        assert_eq!(d.bbr.mode(), Mode::Drain);
        // BDP = 80 segments; the target adds 3 x the TSO goal (2 segments at this rate) and rounds
        // up to even: 86.
        let target = d.bbr.inflight(&d.w, d.bbr.max_bw(), BBR_UNIT);
        assert_eq!(target, 86);
        for in_flight in [200, 150, 100, 87] {
            d.ack(80, in_flight, RTT_US);
            assert_eq!(d.bbr.mode(), Mode::Drain, "{in_flight} in flight");
        }
        d.ack(80, 86, RTT_US);
        assert_eq!(d.bbr.mode(), Mode::ProbeBw, "one BDP in flight: Drain ends");
    }

    #[test]
    fn probe_bw_cycles_through_the_eight_gains_once_per_min_rtt() {
        let mut d = Drive::new();
        for rate in [10, 20, 40, 80, 80, 80, 80] {
            d.round(10, rate, 80);
        }
        d.ack(80, 80, RTT_US);
        assert_eq!(d.bbr.mode(), Mode::ProbeBw);
        let mut gains = vec![d.gain()];
        let (mut idx, mut since_us) = (d.bbr.cycle_idx, d.now_us);
        for _ in 0..400 {
            // What is in flight is always above 1.25 BDP: the 1.25 phase ends by time, the 0.75
            // phase too; every phase lasts just over one min RTT (ACKs every 4 ms).
            d.now_us += 4000;
            d.ack(80, 200, RTT_US);
            if d.delivered.is_multiple_of(10) {
                d.round_start_delivered = d.delivered;
            }
            if d.bbr.cycle_idx != idx {
                if gains.len() > 1 {
                    assert_eq!(d.now_us - since_us, RTT_US + 4000, "phase {idx} lasted the first ACK past one min RTT");
                }
                (idx, since_us) = (d.bbr.cycle_idx, d.now_us);
                gains.push(d.gain());
            }
        }
        let phases: Vec<f64> = gains.iter().copied().skip_while(|&g| g != 1.25).take(16).collect();
        assert_eq!(phases, vec![1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        // cwnd is 2 BDP (+ budget, + 2 in the probing phase) in ProbeBW.
        assert!(d.cwnd() >= 160 && d.cwnd() <= 170, "cwnd {}", d.cwnd());
    }

    #[test]
    fn probe_rtt_every_10_s_holds_4_segments_for_200_ms_and_a_round() {
        let mut d = Drive::new();
        for rate in [10, 20, 40, 80, 80, 80, 80] {
            d.round(10, rate, 80);
        }
        let start_stamp = d.bbr.min_rtt_stamp_ms;
        let mut entered = None;
        // The RTT never falls below the first sample: the 10 s filter expires.
        while entered.is_none() {
            d.round(10, 80, 160);
            if d.bbr.mode() == Mode::ProbeRtt {
                entered = Some(d.now_us / 1000);
            }
        }
        let entered = entered.unwrap();
        assert!(entered > start_stamp + 10_000 && entered <= start_stamp + 10_000 + 40, "ProbeRTT at {entered} ms, min RTT of {start_stamp} ms");
        assert_eq!(d.cwnd(), 4, "ProbeRTT holds cwnd at 4 segments");
        assert!(d.requests.last().unwrap().mark_app_limited, "ProbeRTT marks the connection application-limited");
        let prior = d.bbr.prior_cwnd;
        assert!(prior >= 160, "cwnd saved before ProbeRTT: {prior}");
        // In flight drains to 4 at `low`; ProbeRTT lasts 200 ms from then and at least a round.
        let mut t_low = None;
        let mut left = None;
        for _ in 0..400 {
            d.now_us += 1000;
            let in_flight = if d.now_us / 1000 < entered + 30 { 20 } else { 4 };
            d.ack(80, in_flight, RTT_US);
            if in_flight == 4 && t_low.is_none() {
                t_low = Some(d.now_us / 1000);
            }
            if d.delivered.is_multiple_of(10) {
                d.round_start_delivered = d.delivered;
            }
            if d.bbr.mode() != Mode::ProbeRtt {
                left = Some(d.now_us / 1000);
                break;
            }
            assert!(d.cwnd() <= 4);
        }
        let (t_low, left) = (t_low.unwrap(), left.expect("ProbeRTT ends"));
        assert!(left > t_low + PROBE_RTT_MODE_MS && left <= t_low + PROBE_RTT_MODE_MS + 12, "ProbeRTT from {t_low} to {left} ms");
        assert_eq!(d.bbr.mode(), Mode::ProbeBw);
        assert!(d.cwnd() >= prior, "cwnd restored: {} (saved {prior})", d.cwnd());
        assert_eq!(d.bbr.min_rtt_stamp_ms, left, "the min-RTT filter restarts at the exit");
    }

    #[test]
    fn the_bandwidth_filter_keeps_the_maximum_of_the_last_ten_rounds() {
        let mut m = MinMax::default();
        m.running_max(10, 0, 100);
        for t in 1..=10 {
            assert_eq!(m.running_max(10, t, 50), 100, "round {t}: the old maximum is still in the window");
        }
        assert_eq!(m.running_max(10, 11, 50), 50, "round 11: it has aged out");
    }

    #[test]
    fn bbr_has_no_parameters_and_rejects_any() {
        let init = CcInit { mss_bytes: MSS, initial_cwnd_bytes: 10 * MSS, abc_limit_segments: 0, rng: Rng::new(1, 1) };
        let mut given = ParamMap::new();
        given.insert("high_gain".into(), crate::ParamValue::Number(3.0));
        assert!(matches!(Bbr::new(&given, &init), Err(CcError::UnknownParameter { .. })));
    }
}
