//! Engine tests that need the simulation's insides: a web transfer whose build fails ends the run.

use serde_json::json;

use crate::error::SimError;
use crate::sim::flow::App;
use crate::sim::Simulation;
use crate::Time;

fn web_run(params: serde_json::Value) -> Result<Simulation, SimError> {
    run_with(json!({"kind": "web", "algorithm": "newreno", "params": params, "tcp": tcp_fixture(),
                    "arrival_rate": 20.0, "size_mean_bytes": 20_000, "size_shape": 1.2}), 2, 0.0)
}

/// The front end's freebsd9 TCP settings without send jitter.
fn tcp_fixture() -> serde_json::Value {
    serde_json::to_value(crate::fixtures::tcp_config()).expect("TcpConfig serialises")
}

/// One flow with `traffic` on the single-flow path (10 Mbit/s, 40 ms, 84 packets) with `loss`.
fn run_with(traffic: serde_json::Value, seconds: u64, loss: f64) -> Result<Simulation, SimError> {
    Simulation::from_json(&run_with_json(traffic, seconds, loss), 1)
}

/// The resolved document of `run_with`.
fn run_with_json(traffic: serde_json::Value, seconds: u64, loss: f64) -> String {
    let end = seconds * 1_000_000_000;
    let link = |pkts: u64, loss: f64| json!({"rate_bps": 10_000_000, "delay_ns": 20_000_000,
                                  "queue": {"kind": "droptail", "limit": {"pkts": pkts}}, "loss_rate": loss,
                                  "loss_changes": [], "loss_model": {"kind": "bernoulli"}});
    let scenario = json!({
        "ccsim_resolved": crate::scenario::RESOLVED_FORMAT,
        "duration_ns": end, "sample_interval_ns": 100_000_000u64,
        "measure_start_ns": 0, "measure_end_ns": end,
        "topology": {"kind": "dumbbell", "bottleneck": link(84, loss), "reverse": link(10_000, 0.0), "access_rate_bps": 1_000_000_000u64,
                     "access_queue": {"kind": "droptail", "limit": {"pkts": 1000}},
                     "reverse_access_queue": {"kind": "droptail", "limit": {"pkts": 1000}}},
        "flows": [{"name": "flow0", "intervals": [{"start_ns": 0, "stop_ns": end}], "start_spread_ns": 0,
                   "access_delay": {"kind": "fixed", "delay_ns": 0}, "route": {"kind": "dumbbell", "direction": "forward"},
                   "traffic": traffic}],
    });
    scenario.to_string()
}

#[test]
fn a_bad_transfer_parameter_is_a_scenario_error_at_construction() {
    let err = web_run(json!({"no_such_param": 1})).err().expect("rejected");
    assert!(matches!(&err, SimError::Scenario { field, .. } if field == "flows[0].traffic.params.no_such_param"), "{err}");
}

#[test]
fn arrivals_start_transfers() {
    let mut sim = web_run(json!({})).unwrap();
    sim.run_until(Time::from_secs(2)).unwrap();
    assert!(sim.flows.len() > 10, "{} flows", sim.flows.len());
}

/// A web transfer that has completed, with nothing of it in the network or on a timer, holds no
/// sender or receiver any more; the run's conservation check still balances at the end.
#[test]
fn finished_transfers_drop_their_sender_and_receiver() {
    let mut sim = web_run(json!({})).unwrap();
    sim.run_until(Time::from_secs(2)).unwrap();
    let transfers = &sim.flows[1..];
    let completed = transfers.iter().filter(|f| f.schedule.completed_at.is_some_and(|t| t < Time::from_millis(1500))).count();
    let released = transfers.iter().filter(|f| matches!(f.app, App::Finished(_))).count();
    assert!(completed > 10, "{completed} transfers completed");
    assert!(released >= completed, "{released} released of {completed} completed half a second before the end");
    assert!(transfers.iter().filter(|f| matches!(f.app, App::Finished(_))).all(|f| f.schedule.completed_at.is_some() && f.host.is_none()));
    assert!(sim.finish().is_ok());
}

#[test]
fn a_transfer_that_cannot_be_built_ends_the_run_with_an_error() {
    let mut sim = web_run(json!({})).unwrap();
    // Break what construction checked: the next arrival's build fails, and must not be skipped.
    let App::Web(generator) = &mut sim.flows[0].app else { panic!("flow 0 is the web generator") };
    generator.transfers.algorithm = "no-such-algorithm".to_string();
    let err = sim.run_until(Time::from_secs(2)).unwrap_err();
    assert!(matches!(&err, SimError::Scenario { field, .. } if field == "flows[0].traffic.algorithm"), "{err}");
    assert_eq!(sim.flows.len(), 1, "no transfer started");
    assert!(sim.now() < Time::from_secs(1), "the run stopped at the failed arrival, not at the end");
    assert_eq!(sim.run_until(Time::from_secs(2)).unwrap_err(), err, "the run stays ended");
    assert_eq!(sim.finish().err(), Some(err), "finish reports it too");
}

/// A 60 s bulk flow at 1 % loss with the Linux mechanisms on (docs/linux-tcp.md): each of them acts
/// in a whole run, seen from the sender's own counters.
#[test]
fn linux_mechanisms_act_in_a_whole_run() {
    let tcp = linux_tcp();
    let traffic = json!({"kind": "tcp", "algorithm": "newreno", "params": {"halve_from": "cwnd"}, "tcp": tcp,
                         "transfer": {"kind": "unlimited"}, "app_rate": {"kind": "unlimited"}});
    let mut sim = run_with(traffic, 60, 0.01).unwrap();
    sim.run_until(Time::from_secs(60)).unwrap();
    let App::Tcp { sender, receiver } = &sim.flows[0].app else { panic!("a TCP flow") };
    let stats = sender.stats();
    assert!(stats.fast_retransmits > 50, "{stats:?}");
    assert!(sender.rack_marked_lost() >= stats.fast_retransmits, "RACK marks every loss it recovers: {} marks", sender.rack_marked_lost());
    assert_eq!(stats.loss_probes, 0, "a bulk flow's ACKs keep rearming the probe timeout: no tail to probe");
    // Quick ACKs at the start and an ACK per two segments after: more ACKs than half the segments.
    let segments = stats.data_pkts_sent;
    assert!(receiver.acks_sent() > segments / 2 && receiver.acks_sent() < segments, "{} ACKs for {segments}", receiver.acks_sent());
}

/// The linux profile's knobs (the five Linux mechanisms on), without send jitter.
fn linux_tcp() -> serde_json::Value {
    let mut tcp = crate::fixtures::tcp_profile("linux");
    tcp["send_jitter_ns"] = json!(0);
    tcp
}

/// Short web transfers at 2 % loss: a lost tail of a transfer has no later data behind it, and the
/// tail loss probe, not the RTO, is the first to act.
#[test]
fn tail_loss_probes_act_on_short_transfers() {
    let traffic = json!({"kind": "web", "algorithm": "newreno", "params": {"halve_from": "cwnd"}, "tcp": linux_tcp(),
                         "arrival_rate": 20.0, "size_mean_bytes": 20_000, "size_shape": 1.2});
    let mut sim = run_with(traffic, 30, 0.02).unwrap();
    sim.run_until(Time::from_secs(30)).unwrap();
    let (mut probes, mut timeouts, mut transfers) = (0, 0, 0);
    for f in &sim.flows[1..] {
        let stats = match &f.app {
            App::Tcp { sender, .. } => sender.stats(),
            App::Finished(done) => &done.stats,
            _ => continue,
        };
        probes += stats.loss_probes;
        timeouts += stats.timeouts;
        transfers += 1;
    }
    assert!(transfers > 400, "{transfers} transfers");
    assert!(probes > 0, "{probes} probes, {timeouts} timeouts");
}

/// A link with nothing counted in an interval gets its row of zeros (the recorder's shortcut for
/// idle links), and the rows of every link add up to what it carried over the run: nothing is
/// lost or counted twice across the idle intervals.
#[test]
fn an_idle_links_rows_are_zeros_and_the_rows_add_up() {
    let s = 1_000_000_000u64;
    let mut scenario = crate::fixtures::dumbbell(10_000_000, 20_000_000, 84, 4 * s, s / 10, &[crate::fixtures::newreno(), crate::fixtures::newreno()]);
    // flow1 on from 0 to 1 s and from 2 to 3 s: its access links idle in between and at the end
    scenario["flows"][1]["intervals"] = json!([{"start_ns": 0, "stop_ns": s}, {"start_ns": 2 * s, "stop_ns": 3 * s}]);
    let mut sim = Simulation::from_json(&scenario.to_string(), 1).unwrap();
    sim.run_until(Time(4 * s)).unwrap();
    let totals: Vec<(String, u64)> = sim.links.iter().map(|l| (l.name.clone(), l.window.tx_bytes)).collect();
    let out = sim.finish().unwrap();
    let (links, time) = (out.links.strs("link"), out.links.f64("time_s"));
    let (tx, util, qmax, qmean) = (out.links.u64("tx_bytes"), out.links.f64("utilisation"), out.links.f64("qdelay_max_ms"), out.links.f64("qdelay_mean_ms"));
    for (name, total) in &totals {
        let rows: Vec<usize> = (0..links.len()).filter(|&r| links[r] == name).collect();
        assert_eq!(rows.len(), 40, "{name}: a row per 100 ms");
        assert_eq!(rows.iter().map(|&r| tx[r]).sum::<u64>(), *total, "{name}: the rows add up to the link's bytes");
    }
    let access = |r: usize| links[r] == "access:flow1";
    let idle: Vec<usize> = (0..links.len()).filter(|&r| access(r) && (1.5..=2.0).contains(&time[r])).collect();
    let busy: Vec<usize> = (0..links.len()).filter(|&r| access(r) && (2.1..=3.0).contains(&time[r])).collect();
    assert_eq!(idle.len(), 6);
    for &r in &idle {
        assert_eq!((tx[r], util[r].to_bits(), qmax[r].to_bits()), (0, 0.0f64.to_bits(), 0.0f64.to_bits()), "row {r} at {} s", time[r]);
        assert!(qmean[r].is_nan());
    }
    assert!(busy.iter().all(|&r| tx[r] > 0 && util[r] > 0.0), "flow1 sends again from 2 s");
}

/// Every per-interval table of `sim` run to its end, each value as exact text (a float by its
/// bits, NaN included).
fn tables_bits(sim: Simulation) -> Vec<(String, Vec<String>)> {
    use crate::table::Column;
    let out = sim.finish().unwrap();
    let mut all = Vec::new();
    for (table, t) in [("flows", &out.flows), ("streams", &out.streams), ("cc_metrics", &out.cc_metrics), ("links", &out.links)] {
        for (name, c) in &t.columns {
            let bits: Vec<String> = match c {
                Column::F64(v) => v.iter().map(|x| format!("{:#x}", x.to_bits())).collect(),
                Column::U64(v) => v.iter().map(u64::to_string).collect(),
                Column::Bool(v) => v.iter().map(bool::to_string).collect(),
                Column::Dict { .. } | Column::Str(_) => c.strs().unwrap().into_iter().map(str::to_string).collect(),
            };
            all.push((format!("{table}.{name}"), bits));
        }
    }
    all
}

/// The rows of flows nothing happened to are copies of their previous rows (`Recorder::sample`):
/// the tables must be those of reading every flow at every sample, value for value, for every
/// algorithm, flows that stop and start again, a rate-limited and a finite one, a stream and web
/// transfers beside them, on a path with loss and timeouts.
#[test]
fn copied_rows_of_unchanged_flows_are_the_rows_read_in_full() {
    let s = 1_000_000_000u64;
    let algorithms = ["newreno", "htcp", "westwood", "hd", "chd", "delay_aimd", "tcp_limit", "pert", "mpert", "binomial", "cubic", "vegas", "bbr"];
    let mut traffic: Vec<serde_json::Value> = (0..40)
        .map(|k| {
            let mut t = crate::fixtures::newreno();
            t["algorithm"] = json!(algorithms[k % algorithms.len()]);
            t
        })
        .collect();
    traffic[3]["app_rate"] = json!({"kind": "limited", "rate_bps": 200_000});
    traffic[4]["transfer"] = json!({"kind": "finite", "bytes": 300_000});
    traffic.push(crate::fixtures::cbr(500_000));
    traffic.push(crate::fixtures::web(5.0, 30_000));
    let mut scenario = crate::fixtures::dumbbell(10_000_000, 20_000_000, 25, 8 * s, s / 20, &traffic);
    scenario["topology"]["bottleneck"]["loss_rate"] = json!(0.01);
    for k in [5usize, 6, 17] {
        scenario["flows"][k]["intervals"] = json!([{"start_ns": s / 2, "stop_ns": 2 * s}, {"start_ns": 4 * s, "stop_ns": 6 * s}]);
    }
    let run = |repeat: bool, redo: bool| {
        let mut sim = Simulation::from_json(&scenario.to_string(), 3).unwrap();
        (sim.recorder.repeat_rows, sim.recorder.redo_metrics) = (repeat, redo);
        sim.run_until(Time(8 * s)).unwrap();
        let repeated = sim.recorder.repeated;
        (repeated, tables_bits(sim))
    };
    let (none, full) = run(false, false);
    assert_eq!(none, 0);
    for redo in [false, true] {
        let (repeated, copied) = run(true, redo);
        assert!(repeated > 50, "only {repeated} of 160 samples copied rows: the test no longer exercises the copies");
        assert_eq!(copied.len(), full.len());
        for ((name, a), (_, b)) in full.iter().zip(&copied) {
            assert_eq!(a.len(), b.len(), "{name}: rows (redo_metrics {redo})");
            if let Some(r) = (0..a.len()).find(|&r| a[r] != b[r]) {
                panic!("{name} differs at row {r} (redo_metrics {redo})");
            }
        }
    }
}

/// With a summary window inside the run, the summary's retransmissions, timeouts and drops are
/// those counted inside the window (the per-interval rows of the window add up to them), as the
/// kernel testbed counts them, and the whole run's stay in `retransmits_run` and `timeouts_run`.
#[test]
fn the_summary_counts_losses_inside_its_window() {
    let s = 1_000_000_000u64;
    let traffic = json!({"kind": "tcp", "algorithm": "newreno", "params": {}, "tcp": tcp_fixture(),
                         "transfer": {"kind": "unlimited"}, "app_rate": {"kind": "unlimited"}});
    let whole = {
        let mut sim = run_with(traffic.clone(), 30, 0.01).unwrap();
        sim.run_until(Time(30 * s)).unwrap();
        sim.finish().unwrap()
    };
    let scenario = {
        let mut sim_json: serde_json::Value = serde_json::from_str(&run_with_json(traffic, 30, 0.01)).unwrap();
        sim_json["measure_start_ns"] = json!(10 * s);
        sim_json["measure_end_ns"] = json!(20 * s);
        sim_json
    };
    let mut sim = Simulation::from_json(&scenario.to_string(), 1).unwrap();
    sim.run_until(Time(30 * s)).unwrap();
    let out = sim.finish().unwrap();
    let (time, retx, timeouts) = (out.flows.f64("time_s"), out.flows.u64("retransmits"), out.flows.u64("timeouts"));
    let inside = |r: &usize| time[*r] > 10.0 + 1e-9 && time[*r] <= 20.0 + 1e-9;
    let rows: Vec<usize> = (0..time.len()).filter(inside).collect();
    assert_eq!(rows.len(), 100);
    let window_retx: u64 = rows.iter().map(|&r| retx[r]).sum();
    let window_timeouts: u64 = rows.iter().map(|&r| timeouts[r]).sum();
    let summary = &out.flow_summary;
    assert_eq!(summary.u64("retransmits")[0], window_retx);
    assert_eq!(summary.u64("timeouts")[0], window_timeouts);
    assert_eq!(summary.u64("retransmits_run")[0], retx.iter().sum::<u64>());
    assert!(window_retx > 0 && window_retx < summary.u64("retransmits_run")[0], "{window_retx} of {}", summary.u64("retransmits_run")[0]);
    assert!(summary.u64("drops_random")[0] < whole.flow_summary.u64("drops_random")[0], "random drops counted inside the window only");
    // Over the whole run, the window and the run agree.
    assert_eq!(whole.flow_summary.u64("retransmits")[0], whole.flow_summary.u64("retransmits_run")[0]);
}
