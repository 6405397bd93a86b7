//! The simulation: builds the network and the flows from a resolved scenario and runs the event loop.
//!
//! One concept per file: `flow.rs` (a flow and its bookkeeping), `setup.rs` (flows from the
//! scenario), `start.rs` (random start times), `params.rs` (algorithm parameters), `traffic.rs`
//! (applications starting, stopping and emitting), `app_rate.rs` (rate-limited TCP applications),
//! `web.rs` (web transfers), `host.rs` (the sending host's jitter), `transport.rs` (packets along routes to the ends),
//! `timers.rs` (the TCP timer events), `recorder.rs` (the measurement window, the per-interval
//! series and the run statistics), `summary.rs` and `output.rs` (the results), `conservation.rs`
//! (the end-of-run check), `cost.rs` (what a run will cost, estimated before it starts) and
//! `meter.rs` (its memory, metered as it grows).

mod app_rate;
mod conservation;
mod cost;
mod flow;
mod host;
mod meter;
mod output;
mod params;
mod recorder;
mod series;
mod setup;
mod start;
mod summary;
#[cfg(test)]
mod tests;
mod timers;
mod traffic;
mod transport;
mod web;

pub use cost::{Cost, Driver};
pub use meter::{EventLimit, MemoryLimit};

use crate::sim::meter::MemoryMeter;
pub use output::{RunOutput, RunStats};
pub use summary::jain_index;

use std::time::Duration;

use ccsim_cc::Time;

use crate::error::SimError;
use crate::event::{Event, EventQueue};
use crate::link::Link;
use crate::packet::{Packet, SackStore};
use crate::scenario::Scenario;
use crate::sim::flow::Flow;
use crate::sim::recorder::Recorder;
use crate::topology;

pub struct Simulation {
    scenario: Scenario,
    seed: u64,
    now: Time,
    end: Time,
    events: EventQueue,
    links: Vec<Link>,
    flows: Vec<Flow>,
    bottleneck: u32,
    /// Packets a sender has just produced, reused across calls.
    out: Vec<Packet>,
    /// The SACK blocks of the ACKs in flight.
    sacks: SackStore,
    recorder: Recorder,
    /// `now` is inside the summary window (`Recorder::in_window`), kept by the window's edge events
    /// instead of two comparisons per packet handler: those events are scheduled before any other,
    /// so of the events at an edge's time they come first, and every event sees the flag the
    /// comparisons would give.
    in_window: bool,
    /// The error that ended the run early, if one did: every later call reports it again.
    failed: Option<SimError>,
    /// The memory the run may take as it grows, and what it holds (`cost.rs`).
    meter: MemoryMeter,
}

impl Simulation {
    pub fn new(mut scenario: Scenario, seed: u64) -> Result<Simulation, SimError> {
        scenario.validate()?;
        scenario.flows.shrink_to_fit(); // parsed with the doubling growth of a list of unknown length
        let names: Vec<String> =
            scenario.flows.iter().map(|f| f.name.clone()).collect();
        let access_delays = topology::access_delays(&scenario, seed);
        let network = topology::build(&scenario, seed, &names, &access_delays);
        let flows = (names.into_iter().zip(network.routes).enumerate())
            .map(|(i, (name, route))| setup::scenario_flow(&scenario, i, name, route, access_delays[i], seed))
            .collect::<Result<Vec<Flow>, SimError>>()?;
        let end = Time(scenario.duration_ns);
        let recorder = Recorder::new(
            Duration::from_nanos(scenario.sample_interval_ns),
            Time(scenario.measure_start_ns),
            Time(scenario.measure_end_ns),
            end,
        );
        let mut sim = Simulation {
            scenario,
            seed,
            now: Time::ZERO,
            end,
            events: EventQueue::default(),
            links: network.links,
            flows,
            bottleneck: network.bottleneck,
            out: Vec::with_capacity(64),
            sacks: SackStore::default(),
            recorder,
            in_window: false,
            failed: None,
            meter: MemoryMeter::default(),
        };
        sim.schedule_first_events();
        Ok(sim)
    }

    pub fn from_json(text: &str, seed: u64) -> Result<Simulation, SimError> {
        Simulation::new(Scenario::from_json(text)?, seed)
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn end(&self) -> Time {
        self.end
    }

    /// Every flow's start and stop, the first sample, and the edges of the summary window.
    fn schedule_first_events(&mut self) {
        // The window's edges first: see `in_window`.
        let (measure_start, measure_end) = self.recorder.window_edges();
        self.events.schedule(measure_start, Event::Measure(true));
        self.events.schedule(measure_end, Event::Measure(false));
        for (i, f) in self.flows.iter().enumerate() {
            for &(a, b) in &f.schedule.intervals {
                self.events.schedule(a, Event::FlowStart(i as u32));
                if b < self.end {
                    self.events.schedule(b, Event::FlowStop(i as u32));
                }
            }
        }
        let first_sample = Time::ZERO + self.recorder.sample_interval();
        if first_sample <= self.end {
            self.events.schedule(first_sample, Event::Sample);
        }
    }

    /// Processes every event up to and including time `t` (capped at the end of the run). An error
    /// (a web transfer whose algorithm cannot be built) ends the run for good.
    #[inline(never)] // the event loop's code as one function, whoever calls it
    pub fn run_until(&mut self, t: Time) -> Result<(), SimError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let t = t.min(self.end);
        while let Some((time, event)) = self.events.pop_until(t) {
            // One test per event for both ways a run stops: the event ceiling, and a handler's
            // failure (`fail` empties the count, so the event after it lands here, not handled).
            if !self.meter.take_event() {
                return Err(self.stopped(time));
            }
            self.now = time;
            debug_assert!(matches!(event, Event::Measure(_)) || self.in_window == self.recorder.in_window(time));
            if let Err(e) = self.handle(event) {
                self.fail(e);
            }
        }
        self.recorder.stats.events = self.meter.events_processed();
        // The run's last event before `t` may have failed.
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.now = self.now.max(t);
        Ok(())
    }

    /// Ends the run with `e`: every later call of `run_until` returns it.
    fn fail(&mut self, e: SimError) {
        self.failed = Some(e);
        self.meter.stop();
    }

    /// The error of a run the loop may not go on with, `next` the time of the event it would have
    /// handled: a handler's error, or the event ceiling's (which counts that event, at its time).
    #[cold]
    #[inline(never)]
    fn stopped(&mut self, next: Time) -> SimError {
        if self.failed.is_none() {
            self.now = next;
            let e = self.meter.over_event_limit(next);
            self.fail(e);
        }
        self.recorder.stats.events = self.meter.events_processed();
        self.failed.clone().expect("set above")
    }

    #[inline(always)] // the loop and its handlers as one: a call per event measured dearer (docs/performance.md)
    fn handle(&mut self, event: Event) -> Result<(), SimError> {
        match event {
            Event::LinkDeliver(l) => self.on_link_deliver(l),
            Event::FlowStart(f) => self.on_flow_start(f),
            Event::FlowStop(f) => self.on_flow_stop(f),
            Event::WebArrival(f) => self.on_web_arrival(f)?,
            Event::StreamEmit(f) => self.on_stream_emit(f),
            Event::AppWrite(f) => self.on_app_write(f),
            Event::RtoTimer(f) => self.on_rto_timer(f),
            Event::DelayedAck(f) => self.on_delack_timer(f),
            Event::HostDepart(f) => self.on_host_depart(f),
            Event::PaceTimer(f) => self.on_pace_timer(f),
            Event::Sample => self.on_sample(),
            Event::Measure(start) => {
                self.in_window = start;
                self.recorder.window_edge(start, &mut self.flows, &mut self.links);
            }
        }
        Ok(())
    }

    #[inline(never)] // once per interval: kept out of the event loop's code
    fn on_sample(&mut self) {
        self.recorder.sample(self.now, &mut self.flows, &mut self.links);
        if self.recorder.out_of_memory() {
            let samples = self.now.as_nanos() / self.recorder.sample_interval().as_nanos().max(1) as u64;
            self.fail(SimError::Resources(format!(
                "the per-interval series could not grow after {samples} samples (raise run.sample_interval or shorten the run)"
            )));
            return;
        }
        let (cells, flows) = (self.recorder.cells(), self.flows.len());
        if let Err(e) = self.meter.check(self.now, cells, flows, Some(&self.links)) {
            self.fail(e);
            return;
        }
        let next = self.now + self.recorder.sample_interval();
        if next <= self.end {
            self.events.schedule(next, Event::Sample);
        }
    }

    /// Test hook: loses one packet inside a link without accounting, to prove the check catches it.
    #[doc(hidden)]
    pub fn debug_lose_packet(&mut self) -> bool {
        self.links.iter_mut().any(|l| l.debug_lose_packet())
    }

    /// Every packet sent is delivered, dropped, or still inside a link (see `conservation.rs`).
    pub fn check_conservation(&self) -> Result<(), SimError> {
        conservation::check(&self.flows, &self.links)
    }

    /// Runs to the end, checks conservation and returns the results. Never inlined: the benchmarks
    /// count its instructions by name (`valgrind --toggle-collect`), which a fat LTO build would lose.
    #[inline(never)]
    pub fn finish(mut self) -> Result<RunOutput, SimError> {
        self.run_until(self.end)?;
        self.check_conservation()?;
        // The window's closing edge is at or before the end (`Scenario::validate`), so its event
        // has run and every link's window is closed.
        debug_assert!(!self.in_window);
        for l in &mut self.links {
            l.fold_zero_qdelays();
        }
        self.recorder.stats.bottleneck_packets = self.links[self.bottleneck as usize].departures();
        Ok(self.recorder.finish(&self.scenario, &self.flows, &self.links, self.end))
    }
}
