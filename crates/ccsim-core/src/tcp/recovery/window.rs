//! The recovery-window part of RFC 6675 recovery: RFC 6675's own (cwnd = ssthresh, send while
//! pipe < cwnd) or Proportional Rate Reduction (RFC 6937, `tcp::prr`), chosen by
//! `tcp.recovery_window`.

use crate::tcp::prr::Prr;

/// The window while an RFC 6675 recovery runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecoveryWindow {
    /// RFC 6675 section 5: cwnd = ssthresh at entry, unchanged until the episode ends.
    Rfc6675,
    /// PRR sets cwnd on every ACK of the episode (Linux `tcp_cwnd_reduction`); the state exists
    /// while an episode runs.
    Prr(Option<Prr>),
}

impl RecoveryWindow {
    /// An episode starts (Linux `tcp_init_cwnd_reduction`).
    pub fn begin(&mut self, prior_cwnd: u64, ssthresh: u64) {
        if let RecoveryWindow::Prr(prr) = self {
            *prr = Some(Prr::start(prior_cwnd, ssthresh));
        }
    }

    /// The episode ends (full ACK or timeout).
    pub fn end(&mut self) {
        if let RecoveryWindow::Prr(prr) = self {
            *prr = None;
        }
    }

    /// Whether the fast retransmit is followed at once by what the window allows (PRR waits for
    /// the next ACK's own allowance).
    pub fn sends_after_fast_retransmit(&self) -> bool {
        !matches!(self, RecoveryWindow::Prr(Some(_)))
    }

    /// A segment left during the episode (RFC 6937 `prr_out`).
    #[inline]
    pub fn on_sent(&mut self, len: u64) {
        if let RecoveryWindow::Prr(Some(prr)) = self {
            prr.on_sent(len);
        }
    }

    /// PRR's window after an ACK of the episode (see `Prr::on_ack`), or None.
    pub fn after_ack(&mut self, delivered: u64, pipe: impl FnOnce() -> u64, una_advanced: bool, newly_lost: bool, mss: u64) -> Option<u64> {
        match self {
            RecoveryWindow::Prr(Some(prr)) => prr.on_ack(delivered, pipe(), una_advanced, newly_lost, mss),
            _ => None,
        }
    }

    /// Whether new marks by the SACK rule must be found for PRR's `newly_lost`.
    pub fn wants_newly_lost(&self) -> bool {
        matches!(self, RecoveryWindow::Prr(_))
    }
}
