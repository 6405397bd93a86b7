//! One flow of the simulation: what runs at its two ends (`App`) and the bookkeeping around it, one
//! small struct per concern: who it is, its route, its schedule, its timer events, its packet
//! accounting for the conservation check, and its measurement state.

use std::time::Duration;

use ccsim_cc::Time;

use crate::histogram::Histogram;
use crate::scenario::FlowKind;
use crate::sim::app_rate::RateLimitedApp;
use crate::sim::host::SendJitter;
use crate::sim::web::WebGenerator;
use crate::stream::{StreamSink, StreamSource};
use crate::tcp::{Receiver, Sender, SenderStats};
use crate::topology::Route;

/// What runs at a flow's two ends.
pub(crate) enum App {
    /// The sender is boxed so that a finished web transfer, which drops it, keeps a small `Flow`.
    Tcp { sender: Box<Sender>, receiver: Receiver },
    /// The sink is boxed (208 bytes with its delay histogram) so that every `Flow` is not as large
    /// as a stream's: a TCP flow's `App` is its boxed sender and its receiver.
    Stream { source: StreamSource, sink: Box<StreamSink>, active: bool },
    /// Spawns short TCP transfers (each a flow of its own, on this flow's links).
    Web(WebGenerator),
    /// A web transfer that is over: see [`FinishedTransfer`].
    Finished(FinishedTransfer),
}

/// A web transfer that has completed with nothing of it left to happen: no packet of it in the
/// network or a host, no timer armed, so no event can change its state again. Its sender and
/// receiver (scoreboard, controller, buffers) are dropped; what its summary row and the
/// conservation check read from them is kept here. Its RTT histogram stays (the summary's
/// percentiles), holding only the buckets its samples spanned.
pub(crate) struct FinishedTransfer {
    pub stats: SenderStats,
    pub rtt_range: (Option<Duration>, Option<Duration>),
    pub rcv_nxt: u64,
    pub snd_max: u64,
    pub acks_sent: u64,
}

/// Who a flow is, as the results name it.
pub(crate) struct Identity {
    pub name: String,
    pub kind: FlowKind,
    pub algorithm: String,
    /// Index of the scenario flow this one comes from (itself, or its web generator).
    pub spec: usize,
    /// Spawned by a web generator: in the summary, not in the per-interval series.
    pub background: bool,
}

/// When the application is active, and how much it has to send.
pub(crate) struct Schedule {
    /// Active intervals [start, stop) of the application.
    pub intervals: Vec<(Time, Time)>,
    pub start: Time,
    pub stop: Time,
    /// A finite transfer's size; `None` while backlogged.
    pub bytes: Option<u64>,
    pub completed_at: Option<Time>,
}

impl Schedule {
    pub fn new(intervals: Vec<(Time, Time)>, bytes: Option<u64>) -> Schedule {
        Schedule { start: intervals[0].0, stop: intervals[intervals.len() - 1].1, intervals, bytes, completed_at: None }
    }
}

/// The TCP timer events in the queue. Timers are lazy: the machine moves its deadlines freely and the
/// loop keeps one event at or before each deadline.
pub(crate) struct Timers {
    pub delack_timeout: Duration,
    pub rto_scheduled: Option<Time>,
    pub delack_scheduled: Option<Time>,
    /// The pacing timer's event (paced senders only).
    pub pace_scheduled: Option<Time>,
}

/// Packet accounting for the conservation check, and the drops by cause.
#[derive(Default)]
pub(crate) struct PacketCounters {
    pub data_delivered_pkts: u64,
    pub data_delivered_payload: u64,
    pub data_dropped_pkts: u64,
    pub data_dropped_payload: u64,
    pub acks_delivered: u64,
    pub acks_dropped: u64,
    pub drops_queue: u64,
    pub drops_random: u64,
}

/// The summary window: delivered bytes and the loss counters at its edges, and the RTT samples
/// inside it.
#[derive(Default)]
pub(crate) struct WindowMeasure {
    pub rcv_at_start: u64,
    pub rcv_at_end: Option<u64>,
    pub counts_at_start: LossCounts,
    pub counts_at_end: Option<LossCounts>,
    pub rtt_hist: Histogram,
}

/// A flow's cumulative loss and retransmission counters, read at the summary window's edges so
/// that the summary counts what happened inside it (as the kernel testbed does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LossCounts {
    pub data_pkts_sent: u64,
    pub data_dropped_pkts: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub drops_queue: u64,
    pub drops_random: u64,
}

impl LossCounts {
    /// What was counted between `start` and `self` (counters only grow).
    pub fn since(self, start: LossCounts) -> LossCounts {
        LossCounts {
            data_pkts_sent: self.data_pkts_sent - start.data_pkts_sent,
            data_dropped_pkts: self.data_dropped_pkts - start.data_dropped_pkts,
            retransmits: self.retransmits - start.retransmits,
            fast_retransmits: self.fast_retransmits - start.fast_retransmits,
            timeouts: self.timeouts - start.timeouts,
            drops_queue: self.drops_queue - start.drops_queue,
            drops_random: self.drops_random - start.drops_random,
        }
    }
}

/// Counters at the previous sample, for per-interval rates, and where its rows went.
#[derive(Default)]
pub(crate) struct SampleSnapshot {
    pub rcv: u64,
    pub wire: u64,
    pub retx: u64,
    pub timeouts: u64,
    /// A TCP flow's row was written at the previous sample, with the sender's `changes()` then,
    /// and its `metrics_len` metric rows from `metrics_off` among that sample's metric rows.
    pub kept: bool,
    pub changes: u64,
    pub metrics_off: usize,
    pub metrics_len: u32,
}

pub(crate) struct Flow {
    pub id: Identity,
    pub app: App,
    pub route: Route,
    pub schedule: Schedule,
    pub access_delay_ns: u64,
    /// A TCP application that writes at a limited rate; `None` when its data is all there.
    pub app_rate: Option<RateLimitedApp>,
    /// The sending host's jitter stage; `None` when segments go straight to the access link.
    pub host: Option<SendJitter>,
    pub timers: Timers,
    pub counters: PacketCounters,
    pub window: WindowMeasure,
    pub snapshot: SampleSnapshot,
}

impl Flow {
    /// A flow with its counters at zero.
    pub fn new(id: Identity, app: App, route: Route, schedule: Schedule, access_delay_ns: u64, delack_timeout: Duration) -> Flow {
        Flow {
            id,
            app,
            route,
            schedule,
            access_delay_ns,
            app_rate: None,
            host: None,
            timers: Timers { delack_timeout, rto_scheduled: None, delack_scheduled: None, pace_scheduled: None },
            counters: PacketCounters::default(),
            window: WindowMeasure::default(),
            snapshot: SampleSnapshot::default(),
        }
    }

    /// Unique payload bytes delivered to the receiving application (in order for TCP).
    pub fn delivered_bytes(&self) -> u64 {
        match &self.app {
            App::Tcp { receiver, .. } => receiver.rcv_nxt(),
            App::Finished(done) => done.rcv_nxt,
            App::Stream { sink, .. } => sink.payload_bytes,
            App::Web(_) => 0,
        }
    }

    /// The loss and retransmission counters so far (senders' retransmissions: TCP flows only).
    pub fn loss_counts(&self) -> LossCounts {
        let (retransmits, fast_retransmits, timeouts) = match &self.app {
            App::Tcp { sender, .. } => {
                let s = sender.stats();
                (s.retransmits, s.fast_retransmits, s.timeouts)
            }
            App::Finished(done) => (done.stats.retransmits, done.stats.fast_retransmits, done.stats.timeouts),
            App::Stream { .. } | App::Web(_) => (0, 0, 0),
        };
        let c = &self.counters;
        LossCounts {
            data_pkts_sent: self.sent().0,
            data_dropped_pkts: c.data_dropped_pkts,
            retransmits,
            fast_retransmits,
            timeouts,
            drops_queue: c.drops_queue,
            drops_random: c.drops_random,
        }
    }

    /// (data packets, payload bytes, wire bytes) sent by the source.
    pub fn sent(&self) -> (u64, u64, u64) {
        match &self.app {
            App::Tcp { sender, .. } => {
                let s = sender.stats();
                (s.data_pkts_sent, s.payload_bytes_sent, s.wire_bytes_sent)
            }
            App::Finished(done) => (done.stats.data_pkts_sent, done.stats.payload_bytes_sent, done.stats.wire_bytes_sent),
            App::Stream { source, .. } => (source.packets_sent, source.payload_sent(), source.wire_bytes_sent),
            App::Web(_) => (0, 0, 0),
        }
    }

    pub fn acks_sent(&self) -> u64 {
        match &self.app {
            App::Tcp { receiver, .. } => receiver.acks_sent(),
            App::Finished(done) => done.acks_sent,
            App::Stream { .. } | App::Web(_) => 0,
        }
    }

    /// Drops a web transfer's sender and receiver once nothing of it is left to happen (see
    /// [`FinishedTransfer`]); returns whether it did. Results are the same as keeping them: no event
    /// could reach them again.
    #[inline]
    pub fn release_if_finished(&mut self) -> bool {
        // Asked after every packet of every flow: only a completed web transfer goes further.
        self.id.background && self.schedule.completed_at.is_some() && self.release_transfer()
    }

    #[inline(never)]
    fn release_transfer(&mut self) -> bool {
        let App::Tcp { sender, receiver } = &self.app else { return false };
        let c = &self.counters;
        let over = self.id.background
            && self.schedule.completed_at.is_some()
            && sender.stats().data_pkts_sent == c.data_delivered_pkts + c.data_dropped_pkts
            && receiver.acks_sent() == c.acks_delivered + c.acks_dropped
            && sender.timer_deadline().is_none()
            && receiver.delack_deadline().is_none();
        if over {
            self.app = App::Finished(FinishedTransfer {
                stats: sender.stats().clone(),
                rtt_range: sender.rtt_range(),
                rcv_nxt: receiver.rcv_nxt(),
                snd_max: sender.snd_max(),
                acks_sent: receiver.acks_sent(),
            });
            self.host = None; // empty: its packets were all delivered or dropped
        }
        over
    }
}
