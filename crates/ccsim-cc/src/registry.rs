//! The name registry of built-in algorithms and the enum that dispatches to them without a virtual
//! call in the hot loop (plus a boxed escape hatch for user or test controllers, as smoltcp's
//! `AnyController` and Linux `tcp_ca_find`).

use crate::params::ParamSpec;
use crate::{AckSample, CcError, CcInit, CongestionControl, ControlRequest, CwndEvent, LossEvent, Metric, Needs, ParamMap, RateSample, RecoveryExit, RoundSample, Time, UndoSample, Window};

/// What `ccsim list` shows of an algorithm.
#[derive(Clone, Debug)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
    pub params: Vec<ParamSpec>,
}

macro_rules! builtin_algorithms {
    ($( $variant:ident => $module:ident :: $ty:ident, $summary:expr, $reference:expr; )*) => {
        /// A congestion controller: one of the built-ins, or a boxed user controller.
        pub enum Cc {
            $( $variant(crate::algorithms::$module::$ty), )*
            Boxed(Box<dyn CongestionControl>),
        }

        macro_rules! dispatch {
            ($self:ident, $c:ident => $e:expr) => {
                match $self {
                    $( Cc::$variant($c) => $e, )*
                    Cc::Boxed($c) => $e,
                }
            };
        }

        /// Every built-in algorithm with its parameters.
        pub fn catalog() -> Vec<AlgorithmInfo> {
            vec![$( AlgorithmInfo {
                name: crate::algorithms::$module::NAME,
                summary: $summary,
                reference: $reference,
                params: crate::algorithms::$module::params(),
            }, )*]
        }

        /// Builds the algorithm registered under `name` with validated parameters.
        pub fn build(name: &str, params: &ParamMap, init: &CcInit) -> Result<Cc, CcError> {
            $( if name == crate::algorithms::$module::NAME {
                return Ok(Cc::$variant(crate::algorithms::$module::$ty::new(params, init)?));
            } )*
            Err(CcError::UnknownAlgorithm {
                name: name.to_string(),
                known: catalog().iter().map(|a| a.name).collect::<Vec<_>>().join(", "),
            })
        }
    };
}

builtin_algorithms! {
    NewReno => newreno::NewReno,
        "loss-based AIMD: slow start, +1 MSS per RTT, halve on loss",
        "RFC 5681, RFC 6582, RFC 3465";
    Pert => pert::Pert,
        "Reno with RED-like probabilistic early response to queueing delay (srtt_0.99), once per RTT",
        "Bhandarkar, Reddy, Zhang, Loguinov, CCR 2007; Budzisz et al. 2009 Fig. 1, Table I";
    MPert => mpert::MPert,
        "PERT with adaptive increase alpha = 1 + p'/p (TFRC rates) and backoff beta = q/(q + q_max) when competing",
        "Kotla & Reddy, IWQoS 2008, as in Budzisz et al. 2009 Fig. 2";
    Binomial => binomial::Binomial,
        "binomial (k, l): +alpha/w^k per RTT, -beta*w^l per loss; presets iiad, sqrt, aimd",
        "Bansal & Balakrishnan, INFOCOM 2001; ns-2 windowOption_ 6";
    Hd => hd::Hd,
        "Hamilton delay: per-ACK Bernoulli backoff (halve) with the two-region g(q), NewReno otherwise",
        "Budzisz, Stanojevic, Schlote, Shorten, Baker 2009 Figs. 6-7; Hayes & Armitage LCN 2010 eq. 1; FreeBSD cc_hd.c";
    Chd => chd::Chd,
        "CAIA-Hamilton delay: once-per-RTT delay backoff on max queueing delay, shadow window, loss tolerance below q_th",
        "Hayes & Armitage, LCN 2010, eqs. 2-4; FreeBSD cc_chd.c";
    Westwood => westwood::Westwood,
        "Westwood+ Faster Recovery: Reno growth; on loss ssthresh = BWE*RTTmin, cwnd = ssthresh = BWE*RTTmin at recovery end",
        "Linux tcp_westwood.c; Mascolo et al., MobiCom 2001; Grieco & Mascolo, CCR 2004";
    TcpLimit => tcp_limit::TcpLimit,
        "TCP Limit: NewReno/Westwood that holds cwnd above alpha*CWE(RE) and forces it to CWE(RE) when v_cwnd > v_target",
        "Nemeth, Molnar, Tarjan, Szabo, TCP Limit (section III, eqs. 1-7)";
    Htcp => htcp::Htcp,
        "H-TCP: alpha(Delta) increase, adaptive backoff RTTmin/RTTmax, RTT scaling, bandwidth switch (Linux tcp_htcp.c defaults)",
        "Leith & Shorten, PFLDnet 2004; draft-leith-tcp-htcp-06; Linux net/ipv4/tcp_htcp.c";
    DelayAimd => delay_aimd::DelayAimd,
        "delay-based AIMD on the H-TCP increase: backoff beta = min(delta*RTTmin/RTT, 0.9) when queueing delay >= tau0, delay-based limited slow start",
        "Leith, Shorten, McCullagh, Heffner, Dunn, Baker, Delay-based AIMD congestion control, PFLDnet 2007, Algorithm 1, eqs. 1-7";
    Cubic => cubic::Cubic,
        "CUBIC: W(t) = C(t-K)^3 + W_max after a loss (beta 0.7, C 0.4), Reno-friendly region, fast convergence, HyStart (Linux tcp_cubic.c defaults)",
        "RFC 9438; Ha, Rhee, Xu, SIGOPS OSR 2008; Ha & Rhee, HyStart 2011; Linux net/ipv4/tcp_cubic.c";
    Vegas => vegas::Vegas,
        "Vegas: once per RTT keep between alpha 2 and beta 4 segments queued (cwnd*(RTT-baseRTT)/baseRTT), slow start until gamma 1 (Linux tcp_vegas.c)",
        "Brakmo & Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c";
    Bbr => bbr::Bbr,
        "BBR v1: paced at gain x windowed max delivery rate (10 rounds), cwnd 2 BDP with the 10 s min RTT; Startup, Drain, ProbeBW gain cycle, ProbeRTT (Linux tcp_bbr.c)",
        "Cardwell et al., ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00; Linux net/ipv4/tcp_bbr.c, tcp_rate.c";
}

impl CongestionControl for Cc {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    fn init(&mut self, w: &mut Window) {
        dispatch!(self, c => c.init(w))
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        dispatch!(self, c => c.on_ack(w, ack))
    }
    fn on_round(&mut self, w: &mut Window, round: &RoundSample) {
        dispatch!(self, c => c.on_round(w, round))
    }
    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        dispatch!(self, c => c.ssthresh_after_loss(w, loss))
    }
    fn on_recovery_exit(&mut self, w: &mut Window, exit: &RecoveryExit) {
        dispatch!(self, c => c.on_recovery_exit(w, exit))
    }
    fn undo_cwnd(&mut self, w: &Window, undo: &UndoSample) -> u64 {
        dispatch!(self, c => c.undo_cwnd(w, undo))
    }
    fn cwnd_event(&mut self, w: &mut Window, now: Time, ev: CwndEvent) {
        dispatch!(self, c => c.cwnd_event(w, now, ev))
    }
    fn metrics(&self, out: &mut Vec<Metric>) {
        dispatch!(self, c => c.metrics(out))
    }
    fn needs(&self) -> Needs {
        dispatch!(self, c => c.needs())
    }
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample) -> ControlRequest {
        dispatch!(self, c => c.cong_control(w, rs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;

    #[test]
    fn build_by_name_and_reject_unknown() {
        let init = Script::<crate::testkit::FixedWindow>::init(1448, 3, 2);
        let cc = build("newreno", &ParamMap::new(), &init).unwrap();
        assert_eq!(cc.name(), "newreno");
        let e = build("no_such_cc", &ParamMap::new(), &init).err().unwrap();
        assert!(e.to_string().contains("unknown algorithm \"no_such_cc\""), "{e}");
        assert!(e.to_string().contains("newreno"));
    }

    #[test]
    fn catalog_lists_names_with_documented_parameters() {
        for info in catalog() {
            assert!(!info.summary.is_empty());
            for p in &info.params {
                assert!(!p.doc.is_empty(), "{}.{} has no doc", info.name, p.name);
            }
        }
    }
}
