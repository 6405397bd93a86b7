//! # NewReno (RFC 5681, RFC 6582, RFC 3465)
//!
//! The loss-based baseline every paper compares against. This module holds only the window policy;
//! duplicate-ACK counting, fast retransmit, NewReno partial-ACK handling, SACK-based recovery (RFC 6675)
//! and the RTO timer belong to the TCP machine in `ccsim-core`, as in FreeBSD (`cc_newreno.c` vs
//! `tcp_input.c`) and Linux (`tcp_cong.c` vs `tcp_input.c`).
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/newreno.bpf.c`.
//!
//! Rules implemented (windows in bytes):
//! * Slow start and congestion avoidance: RFC 5681 section 3.1 eqs. (2)-(3) with appropriate byte
//!   counting (RFC 3465, L = 2 by default as FreeBSD), see [`crate::reno`].
//! * Fast retransmit (RFC 5681 eq. (4)): ssthresh = max(FlightSize / 2, 2 * MSS).
//! * Timeout (RFC 5681 eq. (4) and section 3.1): the same ssthresh on the first expiry; "held
//!   constant" on later expiries of the same segment; cwnd = 1 MSS (set by the machine).
//! * End of recovery: RFC 6582 section 3.2 step 3 option (1): cwnd = min(ssthresh, max(FlightSize,
//!   MSS) + MSS), the trait default.
//!
//! Differences from the reference code:
//! * FreeBSD halves **cwnd** in whole segments (`newreno_cong_signal`: `max(cwnd/2/MSS, 2)*MSS`), as
//!   Linux Reno does (`tcp_reno_ssthresh`: `max(cwnd >> 1, 2)` packets); RFC 5681 halves FlightSize;
//!   ns-3 3.44 halves the RFC 6675 pipe (`TcpSocketBase::EnterRecovery` passes `BytesInFlight()`, the
//!   pipe with the first unacknowledged segment marked lost, to `TcpNewReno::GetSsThresh`); the
//!   parameter `halve_from` picks one (default `flight`, the RFC). For a cwnd-limited bulk sender
//!   `flight` and `cwnd` differ only by the segments sent by limited transmit; `pipe` is lower than
//!   both by the segments SACKed and lost when the loss is detected. See docs/validation.md section 2
//!   for what it does to goodput.
//! * ns-3's `TcpNewReno::SlowStart` adds one MSS per ACK regardless of bytes acked (no ABC); set the
//!   scenario's `tcp.abc = 0` to get per-ACK counting.

use crate::params::{ParamReader, ParamSpec};
use crate::reno::{loss_ssthresh, HalveFrom, RenoIncrease, RepeatedTimeout};
use crate::{AckSample, CcError, CcInit, CongestionControl, LossEvent, Metric, ParamMap, Window};

pub const NAME: &str = "newreno";

pub fn params() -> Vec<ParamSpec> {
    vec![ParamSpec::choice(
        "halve_from",
        HalveFrom::Flight,
        "quantity halved at a loss: FlightSize (RFC 5681), cwnd (FreeBSD cc_newreno) or the SACK pipe (ns-3)",
    )]
}

#[derive(Clone, Debug)]
pub struct NewReno {
    halve_from: HalveFrom,
    abc_limit: u32,
    increase: RenoIncrease,
}

impl NewReno {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<NewReno, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        Ok(NewReno { halve_from: p.choice("halve_from"), abc_limit: init.abc_limit_segments, increase: RenoIncrease::default() })
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.increase.on_ack(w, ack, self.abc_limit);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.increase.reset();
        // RFC 5681 3.1: held constant on repeated timeouts, whatever `halve_from` halves.
        loss_ssthresh(w, loss, self.halve_from, RepeatedTimeout::Hold)
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        out.extend_from_slice(&[("abc_bytes_acked", self.increase.bytes_acked_in_ca as f64)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;

    const MSS: u64 = 1000;

    fn newreno(abc: u32) -> Script<NewReno> {
        let init = Script::<NewReno>::init(MSS, 3, abc);
        Script::new(NewReno::new(&ParamMap::new(), &init).unwrap(), init)
    }

    #[test]
    fn slow_start_grows_by_bytes_acked_capped_at_abc_limit() {
        let mut s = newreno(2);
        assert_eq!(s.w.cwnd_bytes, 3000);
        s.ack(MSS); // +1000
        assert_eq!(s.w.cwnd_bytes, 4000);
        s.ack(2 * MSS); // delayed ACK of two segments: +2000
        assert_eq!(s.w.cwnd_bytes, 6000);
        s.ack(5 * MSS); // stretch ACK: capped at L * MSS = 2000
        assert_eq!(s.w.cwnd_bytes, 8000);
    }

    #[test]
    fn slow_start_without_abc_adds_at_most_one_mss_per_ack() {
        let mut s = newreno(0);
        s.ack(2 * MSS);
        assert_eq!(s.w.cwnd_bytes, 4000);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window_of_bytes_acked() {
        let mut s = newreno(2);
        s.w.cwnd_bytes = 10_000;
        s.w.ssthresh_bytes = 5_000;
        for _ in 0..9 {
            s.ack(MSS);
        }
        assert_eq!(s.w.cwnd_bytes, 10_000, "9000 of 10000 bytes counted: no growth yet");
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 11_000, "a full window acked: +1 MSS");
    }

    #[test]
    fn congestion_avoidance_without_abc_adds_mss_squared_over_cwnd() {
        let mut s = newreno(0);
        s.w.cwnd_bytes = 10_000;
        s.w.ssthresh_bytes = 5_000;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 10_100); // 1000*1000/10000
    }

    #[test]
    fn no_growth_during_recovery_or_when_not_cwnd_limited() {
        let mut s = newreno(2);
        s.in_recovery = true;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 3000);
        s.in_recovery = false;
        s.cwnd_limited = false;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 3000);
    }

    #[test]
    fn fast_retransmit_halves_flight_size_with_floor_of_two_segments() {
        let mut s = newreno(2);
        s.w.cwnd_bytes = 20_000;
        assert_eq!(s.loss_fast_retransmit(18_000), 9_000);
        assert_eq!(s.loss_fast_retransmit(3_000), 2_000, "floor 2*MSS");
    }

    #[test]
    fn halve_from_cwnd_follows_freebsd() {
        let init = Script::<NewReno>::init(MSS, 3, 2);
        let mut given = ParamMap::new();
        given.insert("halve_from".into(), crate::ParamValue::Text("cwnd".into()));
        let mut s = Script::new(NewReno::new(&given, &init).unwrap(), init);
        s.w.cwnd_bytes = 20_000;
        assert_eq!(s.loss_fast_retransmit(18_000), 10_000);
        // Whole segments, as FreeBSD newreno_cong_signal and Linux tcp_reno_ssthresh: 11.5 -> 5.
        s.w.cwnd_bytes = 11_500;
        assert_eq!(s.loss_fast_retransmit(18_000), 5_000);
        s.w.cwnd_bytes = 3_000;
        assert_eq!(s.loss_fast_retransmit(18_000), 2_000, "floor of two segments");
    }

    #[test]
    fn halve_from_pipe_follows_ns3() {
        let init = Script::<NewReno>::init(MSS, 3, 2);
        let mut given = ParamMap::new();
        given.insert("halve_from".into(), crate::ParamValue::Text("pipe".into()));
        let mut s = Script::new(NewReno::new(&given, &init).unwrap(), init);
        s.w.cwnd_bytes = 20_000;
        // 20 segments outstanding, 3 SACKed above the hole and the hole lost: pipe 16 segments.
        assert_eq!(s.loss_fast_retransmit_with_pipe(20_000, 16_000), 8_000);
        assert_eq!(s.w.cwnd_bytes, 8_000);
        let mut flight = newreno(2);
        flight.w.cwnd_bytes = 20_000;
        assert_eq!(flight.loss_fast_retransmit_with_pipe(20_000, 16_000), 10_000, "the default halves FlightSize");
    }

    #[test]
    fn repeated_timeouts_hold_ssthresh_constant() {
        let mut s = newreno(2);
        s.w.cwnd_bytes = 20_000;
        let first = s.loss_timeout(20_000, 1);
        assert_eq!(first, 10_000);
        assert_eq!(s.w.cwnd_bytes, MSS, "loss window after an RTO");
        let second = s.loss_timeout(MSS, 2);
        assert_eq!(second, 10_000, "second expiry of the same segment keeps ssthresh");
    }

    #[test]
    fn recovery_exit_sets_cwnd_to_min_of_ssthresh_and_flight_plus_mss() {
        let mut s = newreno(2);
        s.w.cwnd_bytes = 20_000;
        s.loss_fast_retransmit(20_000);
        assert_eq!(s.w.cwnd_bytes, 10_000);
        s.exit_recovery(4_000, false);
        assert_eq!(s.w.cwnd_bytes, 5_000, "min(10000, 4000 + 1000)");
        s.w.cwnd_bytes = 10_000;
        s.exit_recovery(50_000, false);
        assert_eq!(s.w.cwnd_bytes, 10_000, "capped at ssthresh");
    }
}
