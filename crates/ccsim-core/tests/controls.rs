//! Whole-run tests of the experiment controls: loss that changes during the run, random start times,
//! rate-limited applications, and the initial ssthresh / slow start off.

mod common;
use common::*;

use ccsim_core::{RunOutput, Scenario, SimError, Simulation};
use serde_json::{json, Value};

fn table<'a>(out: &'a RunOutput, name: &str) -> &'a ccsim_core::Table {
    match name {
        "summary" => &out.flow_summary,
        "flows" => &out.flows,
        _ => &out.links,
    }
}

fn f64s(out: &RunOutput, t: &str, col: &str) -> Vec<f64> {
    table(out, t).f64(col).to_vec()
}

fn u64s(out: &RunOutput, t: &str, col: &str) -> Vec<u64> {
    table(out, t).u64(col).to_vec()
}

fn strs(out: &RunOutput, t: &str, col: &str) -> Vec<String> {
    table(out, t).strs(col).into_iter().map(str::to_string).collect()
}

fn refused(s: &Value) -> String {
    match Scenario::from_json(&complete(s).to_string()).and_then(|s| Simulation::new(s, 1).map(drop)) {
        Err(SimError::Scenario { field, .. }) => field,
        Err(e) => panic!("not a scenario error: {e}"),
        Ok(()) => panic!("accepted"),
    }
}

// -- loss that changes over time --------------------------------------------------------------

/// Sums of a bottleneck column per 10-second third of a 30 s run.
fn bottleneck_by_third(out: &RunOutput, col: &str) -> [u64; 3] {
    let (names, times, values) = (strs(out, "links", "link"), f64s(out, "links", "time_s"), u64s(out, "links", col));
    let mut thirds = [0; 3];
    for ((n, t), v) in names.iter().zip(&times).zip(&values) {
        if n == "bottleneck" {
            thirds[((t - 1e-9) / 10.0).floor().min(2.0) as usize] += v;
        }
    }
    thirds
}

#[test]
fn random_loss_follows_its_schedule() {
    let mut s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 30 * S), vec![flow("newreno", 0, 30 * S)]);
    s["topology"]["bottleneck"]["loss_changes"] = json!([{"at_ns": 10 * S, "loss_rate": 0.01}, {"at_ns": 20 * S, "loss_rate": 0.0}]);
    let out = run(&s, 1);
    let [before, during, after] = bottleneck_by_third(&out, "drops_random");
    assert_eq!((before, after), (0, 0), "no random loss outside [10 s, 20 s)");
    // About 1 % of what reaches the link then (some 3000 packets of 1500 B: 1 % loss holds the
    // flow near 3.5 Mbit/s); the binomial spread is about 6 drops.
    let sent = bottleneck_by_third(&out, "tx_bytes")[1] / 1500 + during;
    let p = during as f64 / sent as f64;
    assert!((0.005..0.016).contains(&p), "{during} random drops in {sent} packets");
    assert_eq!(u64s(&out, "summary", "drops_random")[0], during);
}

#[test]
fn a_loss_schedule_starting_from_loss_keeps_the_scalar_runs_draws() {
    // A schedule whose only change keeps the same probability draws exactly what the scalar does.
    let base = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.01, 10 * S), vec![flow("newreno", 0, 10 * S)]);
    let mut stepped = base.clone();
    stepped["topology"]["bottleneck"]["loss_changes"] = json!([{"at_ns": 5 * S, "loss_rate": 0.01}]);
    let (a, b) = (run(&base, 3), run(&stepped, 3));
    // Bit-level equality (NaN marks a missing value and must compare equal to itself).
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.links), format!("{:?}", b.links));
}

#[test]
fn bad_loss_schedules_name_the_step() {
    let at = |changes: Value| {
        let mut s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 30 * S), vec![flow("newreno", 0, 30 * S)]);
        s["topology"]["bottleneck"]["loss_changes"] = changes;
        refused(&s)
    };
    let step = |t: u64, p: f64| json!({"at_ns": t, "loss_rate": p});
    assert_eq!(at(json!([step(0, 0.1)])), "topology.bottleneck.loss_changes[0].at_ns");
    assert_eq!(at(json!([step(10 * S, 0.1), step(5 * S, 0.1)])), "topology.bottleneck.loss_changes[1].at_ns");
    assert_eq!(at(json!([step(10 * S, 0.1), step(10 * S, 0.2)])), "topology.bottleneck.loss_changes[1].at_ns");
    assert_eq!(at(json!([step(30 * S, 0.1)])), "topology.bottleneck.loss_changes[0].at_ns");
    assert_eq!(at(json!([step(10 * S, 1.0)])), "topology.bottleneck.loss_changes[0].loss_rate");
    assert_eq!(at(json!([step(10 * S, -0.1)])), "topology.bottleneck.loss_changes[0].loss_rate");
}

// -- random start times -----------------------------------------------------------------------

fn spread_flows(n: usize, spread_ns: u64) -> Value {
    let flows = (0..n)
        .map(|_| {
            let mut f = flow("newreno", 0, 10 * S);
            f["start_spread_ns"] = json!(spread_ns);
            f
        })
        .collect();
    with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 10 * S), flows)
}

#[test]
fn each_flow_draws_its_start_from_the_seed() {
    let s = spread_flows(10, 2 * S);
    let a = f64s(&run(&s, 1), "summary", "start_s");
    assert_eq!(a, f64s(&run(&s, 1), "summary", "start_s"), "same seed, same starts");
    assert_ne!(a, f64s(&run(&s, 2), "summary", "start_s"), "another seed draws others");
    assert!(a.iter().all(|t| (0.0..2.0).contains(t)), "{a:?}");
    let distinct = a.iter().map(|t| (t * 1e9) as u64).collect::<std::collections::BTreeSet<_>>().len();
    assert_eq!(distinct, 10, "{a:?}");
    // Each flow's own stream: an eleventh flow leaves the first ten where they were.
    let more = f64s(&run(&spread_flows(11, 2 * S), 1), "summary", "start_s");
    assert_eq!(&more[..10], &a[..]);
}

#[test]
fn a_flow_sends_nothing_before_its_drawn_start() {
    let out = run(&spread_flows(4, 2 * S), 5);
    let starts = f64s(&out, "summary", "start_s");
    let (t, flow, rate) = (f64s(&out, "flows", "time_s"), u64s(&out, "flows", "flow"), f64s(&out, "flows", "send_rate_bps"));
    for i in 0..4 {
        let rows: Vec<(f64, f64)> = (0..t.len()).filter(|&r| flow[r] == i as u64).map(|r| (t[r], rate[r])).collect();
        // Rows cover the 100 ms interval ending at time_s.
        assert!(rows.iter().filter(|(end, _)| *end <= starts[i]).all(|(_, r)| *r == 0.0), "flow {i} before {}", starts[i]);
        let first = rows.iter().find(|(end, _)| *end > starts[i]).expect("a row after the start");
        assert!(first.1 > 0.0, "flow {i} sends in the interval of its start {}", starts[i]);
    }
}

#[test]
fn a_start_spread_past_the_stop_is_refused() {
    let mut s = spread_flows(1, 2 * S);
    s["flows"][0]["stop_ns"] = json!(2 * S);
    assert_eq!(refused(&s), "flows[0].start_spread_ns");
}

// -- rate-limited applications ----------------------------------------------------------------

fn limited(rate_bps: u64, start_ns: u64, stop_ns: u64) -> Value {
    let mut f = flow("newreno", start_ns, stop_ns);
    f["app_rate_bps"] = json!(rate_bps);
    f
}

#[test]
fn a_rate_limited_flow_delivers_its_rate_and_keeps_a_small_window() {
    let s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 20 * S), vec![limited(2_000_000, 0, 20 * S)]);
    let out = run(&s, 1);
    let goodput = f64s(&out, "summary", "goodput_bps")[0];
    assert!((goodput - 2e6).abs() < 0.02 * 2e6, "payload goodput {goodput} at a 2 Mbit/s application");
    assert_eq!(u64s(&out, "summary", "drops_queue")[0], 0);
    // 2 Mbit/s x 40 ms is about 7 segments: the window grows only while it limits the sender.
    let cwnd_max = f64s(&out, "flows", "cwnd_pkts").into_iter().fold(0.0, f64::max);
    assert!(cwnd_max < 20.0, "cwnd reached {cwnd_max} packets");
    let bulk = run(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 20 * S), vec![flow("newreno", 0, 20 * S)]), 1);
    assert!(f64s(&bulk, "flows", "cwnd_pkts").into_iter().fold(0.0, f64::max) > 60.0, "the same flow unlimited fills the queue");
}

#[test]
fn a_rate_above_the_path_does_not_bind() {
    let s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 20 * S), vec![limited(50_000_000, 0, 20 * S)]);
    let goodput = f64s(&run(&s, 1), "summary", "goodput_bps")[0];
    assert!(goodput > 9.0e6, "{goodput}");
}

#[test]
fn a_rate_limited_finite_transfer_takes_size_over_rate() {
    let mut f = limited(2_000_000, 0, 10 * S);
    f["bytes"] = json!(1_000_000);
    let out = run(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 10 * S), vec![f]), 1);
    let fct = f64s(&out, "summary", "fct_s")[0];
    // The last of 691 segments is written at 690 x 5.792 ms = 3.996 s, then crosses the path.
    assert!((3.99..4.1).contains(&fct), "fct {fct} s");
    assert_eq!(u64s(&out, "summary", "bytes_delivered")[0], 1_000_000);
}

#[test]
fn a_rate_limited_on_off_flow_writes_only_while_active() {
    let mut f = limited(2_000_000, 0, 0);
    f["intervals_ns"] = json!([[0, 2 * S], [4 * S, 6 * S]]);
    let out = run(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 8 * S), vec![f]), 1);
    let delivered = u64s(&out, "summary", "bytes_delivered")[0] as f64;
    assert!((delivered - 1e6).abs() < 0.02 * 1e6, "2 Mbit/s for 4 s: {delivered} B");
    let (t, rate) = (f64s(&out, "flows", "time_s"), f64s(&out, "flows", "send_rate_bps"));
    let idle: f64 = t.iter().zip(&rate).filter(|(t, _)| (2.2..4.0).contains(*t)).map(|(_, r)| r).sum();
    assert_eq!(idle, 0.0, "nothing sent between the intervals (rows end at time_s; 4 s itself is active)");
}

#[test]
fn a_zero_application_rate_is_refused() {
    let s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 10 * S), vec![limited(0, 0, 10 * S)]);
    assert_eq!(refused(&s), "flows[0].traffic.app_rate.rate_bps");
}

// -- initial ssthresh and slow start off --------------------------------------------------------

fn window_trace(initial_ssthresh: Value) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut f = flow("newreno", 0, 5 * S);
    f["tcp"] = json!({"initial_ssthresh": initial_ssthresh});
    let out = run(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 5 * S), vec![f]), 1);
    (f64s(&out, "flows", "time_s"), f64s(&out, "flows", "cwnd_pkts"), f64s(&out, "flows", "ssthresh_bytes"))
}

#[test]
fn an_initial_ssthresh_of_25_packets_ends_slow_start_there() {
    let (t, cwnd, ssthresh) = window_trace(json!({"kind": "bytes", "bytes": 25 * 1448}));
    assert_eq!(ssthresh[0], (25 * 1448) as f64, "kept until the first loss");
    // Slow start takes a few RTTs to 25 packets; congestion avoidance then adds about one per RTT
    // (40 ms + queueing), so at 1 s the window is far below the slow-started flow's.
    let at = |x: f64| cwnd[t.iter().position(|&s| (s - x).abs() < 1e-9).unwrap()];
    assert!(at(0.3) >= 25.0 && at(0.3) < 30.0, "{}", at(0.3));
    assert!(at(1.0) > 35.0 && at(1.0) < 50.0, "{}", at(1.0));
    let (_, unlimited, _) = window_trace(json!({"kind": "unlimited"}));
    assert!(unlimited[..10].iter().any(|&w| w > 60.0), "slow start without a threshold overshoots");
}

#[test]
fn slow_start_off_grows_by_about_one_segment_per_rtt_from_the_initial_window() {
    let (t, cwnd, _) = window_trace(json!({"kind": "below_initial_window"}));
    let at = |x: f64| cwnd[t.iter().position(|&s| (s - x).abs() < 1e-9).unwrap()];
    // IW 3, then about +1 per 40 ms round: roughly 3 + 25 after 1 s.
    assert!(at(1.0) > 15.0 && at(1.0) < 32.0, "{}", at(1.0));
    assert!(at(2.0) > at(1.0) + 10.0, "still growing linearly: {} -> {}", at(1.0), at(2.0));
}

#[test]
fn an_initial_ssthresh_below_one_segment_is_refused() {
    let mut f = flow("newreno", 0, 5 * S);
    f["tcp"] = json!({"initial_ssthresh": {"kind": "bytes", "bytes": 100}});
    assert_eq!(refused(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 5 * S), vec![f])), "flows[0].traffic.tcp.initial_ssthresh.bytes");
}
