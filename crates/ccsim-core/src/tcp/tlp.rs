//! Tail loss probe (RFC 8985 section 7), as Linux sends it (net/ipv4/tcp_output.c
//! `tcp_schedule_loss_probe`, `tcp_send_loss_probe`; net/ipv4/tcp_input.c `tcp_process_tlp_ack`),
//! used with RACK when `loss_detection = "rack_tlp"` and SACK is on.
//!
//! When the last segments of a flight are lost there are no later deliveries to tell RACK, and the
//! sender would wait for the RTO. Instead, while the connection is in the open state (no SACKed or
//! lost segments, not in recovery) with data outstanding, a probe timeout (PTO) is armed:
//! * PTO = 2·SRTT, plus the minimum RTO when a single segment is outstanding (a delayed ACK may be
//!   held for it; RFC 8985 WCDelAckT) or plus 2 ms (`TCP_TIMEOUT_MIN`) otherwise; 1 s (the initial
//!   RTO) before any RTT sample; never later than the RTO would fire. It is re-armed when an ACK
//!   acknowledges new data (with the RTO measured from now) and when new data is sent (with the RTO
//!   that is running).
//! * When it fires, one probe: a new segment if the application and the receive window allow (cwnd
//!   notwithstanding), else a retransmission of the highest-sequence segment. The RTO restarts from
//!   the probe. One probe per episode: none while `tlp_high_seq` is set.
//! * The ACKs of the probe: once snd_una reaches `tlp_high_seq` (snd_nxt when the probe was sent),
//!   a probe of new data ends the episode; for a retransmitted probe, an ACK beyond `tlp_high_seq`
//!   means the probe repaired a loss and the window is reduced once (ssthresh from the algorithm,
//!   cwnd = ssthresh: Linux enters and leaves CWR at once), while a pure duplicate ACK means the
//!   original and the probe both arrived: no loss. (Linux also uses a D-SACK of the probe; there is
//!   no D-SACK here, and the receiver's ACK of the duplicate is that pure duplicate ACK.)
//! The SACK an ACK of the probe carries lets RACK find the other lost segments.

use std::time::Duration;

use ccsim_cc::Time;

/// `TCP_TIMEOUT_MIN` (2 jiffies at HZ=1000).
const TIMEOUT_MIN: Duration = Duration::from_millis(2);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tlp {
    deadline: Option<Time>,
    /// snd_nxt when the probe was sent (Linux `tlp_high_seq`), while an episode is open.
    high_seq: Option<u64>,
    /// The probe was a retransmission (`tlp_retrans`).
    retrans: bool,
    probes: u64,
    recoveries: u64,
}

/// What the machine tells the probe logic when arming it.
#[derive(Clone, Copy, Debug)]
pub struct ProbeContext {
    pub now: Time,
    pub srtt: Option<Duration>,
    /// Outstanding segments (Linux `packets_out`).
    pub segments_out: u64,
    pub min_rto: Duration,
    /// Until the retransmission timer would fire, counted from now.
    pub rto_in: Duration,
    /// No loss recovery, nothing SACKed or marked lost (Linux `TCP_CA_Open`).
    pub open: bool,
}

/// The outcome of an ACK for the probe logic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeAck {
    Nothing,
    /// A retransmitted probe repaired a loss: reduce the window once.
    LossRepaired,
}

impl Tlp {
    /// `tcp_schedule_loss_probe`: arms the PTO or, when a probe is not allowed, disarms it.
    pub fn schedule(&mut self, cx: &ProbeContext) {
        if !cx.open || cx.segments_out == 0 {
            self.deadline = None;
            return;
        }
        let pto = match cx.srtt {
            Some(srtt) => 2 * srtt + if cx.segments_out == 1 { cx.min_rto } else { TIMEOUT_MIN },
            None => Duration::from_secs(1), // TCP_TIMEOUT_INIT
        };
        self.deadline = Some(cx.now + pto.min(cx.rto_in));
    }

    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    pub fn disarm(&mut self) {
        self.deadline = None;
    }

    /// The PTO fired: whether a probe may be sent now (none while an episode is open).
    pub fn fire(&mut self) -> bool {
        self.deadline = None;
        self.high_seq.is_none()
    }

    /// A probe went out (`probe_sent`): `snd_nxt` after it, and whether it was a retransmission.
    pub fn probe_sent(&mut self, snd_nxt: u64, retransmission: bool) {
        self.high_seq = Some(snd_nxt);
        self.retrans = retransmission;
        self.probes += 1;
    }

    /// `tcp_process_tlp_ack`: an ACK up to `ack` that advanced snd_una or not, carrying new SACK
    /// information or not.
    pub fn on_ack(&mut self, ack: u64, una_advanced: bool, newly_sacked: bool) -> ProbeAck {
        let Some(high) = self.high_seq else { return ProbeAck::Nothing };
        if ack < high {
            return ProbeAck::Nothing;
        }
        if !self.retrans {
            self.high_seq = None; // a probe of new data was acknowledged
        } else if ack > high {
            self.high_seq = None;
            self.recoveries += 1;
            return ProbeAck::LossRepaired;
        } else if !una_advanced && !newly_sacked {
            self.high_seq = None; // pure duplicate ACK: the original and the probe both arrived
        }
        ProbeAck::Nothing
    }

    /// Loss recovery or an RTO ends the episode (`tcp_init_cwnd_reduction`, `tcp_retransmit_timer`
    /// clear `tlp_high_seq`).
    pub fn reset(&mut self) {
        self.deadline = None;
        self.high_seq = None;
    }

    pub fn probes(&self) -> u64 {
        self.probes
    }

    pub fn recoveries(&self) -> u64 {
        self.recoveries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn cx(segments_out: u64, srtt: Option<u64>, rto_in: u64) -> ProbeContext {
        ProbeContext {
            now: Time::from_millis(100),
            srtt: srtt.map(ms),
            segments_out,
            min_rto: ms(200),
            rto_in: ms(rto_in),
            open: true,
        }
    }

    #[test]
    fn pto_is_two_srtt_plus_delayed_ack_allowance_and_never_after_the_rto() {
        let mut t = Tlp::default();
        t.schedule(&cx(10, Some(50), 1000));
        assert_eq!(t.deadline(), Some(Time::from_millis(100 + 102)), "2*SRTT + 2 ms");
        t.schedule(&cx(1, Some(50), 1000));
        assert_eq!(t.deadline(), Some(Time::from_millis(100 + 300)), "one segment: + min RTO");
        t.schedule(&cx(10, Some(50), 60));
        assert_eq!(t.deadline(), Some(Time::from_millis(160)), "RTO earlier");
        t.schedule(&cx(10, None, 1000));
        assert_eq!(t.deadline(), Some(Time::from_millis(1100)), "no sample: 1 s");
        t.schedule(&ProbeContext { open: false, ..cx(10, Some(50), 1000) });
        assert_eq!(t.deadline(), None, "not in the open state");
    }

    #[test]
    fn one_probe_per_episode_and_its_acks_decide_whether_a_loss_was_repaired() {
        let mut t = Tlp::default();
        assert!(t.fire());
        t.probe_sent(10_000, true);
        assert!(!t.fire(), "episode open: no second probe");
        assert_eq!(t.on_ack(9_000, true, false), ProbeAck::Nothing, "below tlp_high_seq");
        assert_eq!(t.on_ack(10_000, true, false), ProbeAck::Nothing, "up to tlp_high_seq: wait");
        assert_eq!(t.on_ack(11_000, true, false), ProbeAck::LossRepaired, "beyond: the probe repaired a loss");
        assert!(t.fire(), "episode over");
        t.probe_sent(20_000, true);
        assert_eq!(t.on_ack(20_000, false, false), ProbeAck::Nothing);
        assert!(t.fire(), "pure duplicate ACK: both copies arrived, episode over without a reduction");
        t.probe_sent(30_000, false);
        assert_eq!(t.on_ack(30_000, true, false), ProbeAck::Nothing);
        assert!(t.fire(), "a probe of new data ends at its ACK");
        assert_eq!(t.recoveries(), 1);
        assert_eq!(t.probes(), 3);
    }
}
