//! Whole-run properties of the engine with NewReno: determinism, the conservation check, and
//! recovery without SACK under heavy loss.

mod common;
use common::*;

use ccsim_core::{Scenario, SimError, Simulation, Table};

fn single(loss: f64, sack: bool) -> serde_json::Value {
    let mut f = flow("newreno", 0, 60 * S);
    f["tcp"] = serde_json::json!({"sack": sack});
    with_flows(dumbbell(10_000_000, 20 * MS, 84, loss, 60 * S), vec![f])
}

#[test]
fn same_seed_gives_identical_tables_and_different_seeds_differ() {
    let s = single(0.01, true);
    let a = run(&s, 7);
    let b = run(&s, 7);
    let c = run(&s, 8);
    // Bit-level equality (NaN marks a missing value and must compare equal to itself).
    let same = |x: &Table, y: &Table| format!("{x:?}") == format!("{y:?}");
    assert!(same(&a.flows, &b.flows) && same(&a.links, &b.links) && same(&a.flow_summary, &b.flow_summary));
    assert_eq!(a.stats.events, b.stats.events);
    assert!(!same(&a.flows, &c.flows), "another seed draws other random losses");
}

#[test]
fn conservation_check_catches_a_lost_packet() {
    let s = single(0.0, true);
    let built: Scenario = scenario(&s);
    let mut sim = Simulation::new(built, 1).unwrap();
    sim.run_until(ccsim_core::Time::from_secs(5)).unwrap();
    assert!(sim.check_conservation().is_ok(), "balanced before tampering");
    assert!(sim.debug_lose_packet(), "a link held at least two packets");
    match sim.finish() {
        Err(SimError::Conservation(msg)) => assert!(msg.contains("data packets sent"), "{msg}"),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("a silently lost packet must fail the run"),
    }
}

#[test]
fn newreno_without_sack_keeps_a_window_after_timeouts_at_high_loss() {
    // At 5 % loss timeouts are frequent; a sender that re-entered fast retransmit on the duplicate ACKs
    // of its own go-back-N (the ns-3 3.44 failure) would collapse to a few packets of window.
    let out = run(&single(0.05, false), 3);
    let timeouts = out.flow_summary.u64("timeouts")[0];
    let goodput = out.flow_summary.f64("goodput_bps")[0];
    assert!(timeouts > 5, "the scenario must exercise timeouts ({timeouts})");
    // Padhye (b = 1, T0 = 200 ms, RTT 42 ms) predicts about 0.75 Mbit/s at 5 %.
    assert!(goodput > 0.5e6, "goodput {goodput}");
}

#[test]
fn utilisation_and_sawtooth_on_the_single_flow_path() {
    let out = run(&single(0.0, true), 1);
    assert!(summary(&out, "bottleneck_utilisation") > 0.9);
    let cwnd = out.flows.f64("cwnd_pkts");
    // After slow start the window oscillates between about half and the full pipe (BDP 33 + 84 queue).
    let settled = &cwnd[50..];
    let max = settled.iter().cloned().fold(0.0, f64::max);
    let min = settled.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!((110.0..125.0).contains(&max), "max {max}");
    assert!((50.0..70.0).contains(&min), "min {min}");
}

#[test]
fn finite_transfer_reports_completion_time() {
    let mut f = flow("newreno", 0, 10 * S);
    f["bytes"] = serde_json::json!(1_000_000);
    let out = run(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 10 * S), vec![f]), 1);
    let fct = out.flow_summary.f64("fct_s")[0];
    // 1 MB at 10 Mbit/s is 0.8 s of serialisation plus slow start from 3 segments over 40 ms RTTs.
    assert!(fct > 0.8 && fct < 2.0, "fct {fct}");
    assert_eq!(out.flow_summary.u64("bytes_delivered")[0], 1_000_000);
}

#[test]
fn bad_scenarios_name_the_field() {
    let mut s = single(0.0, true);
    s["topology"]["bottleneck"]["rate_bps"] = serde_json::json!(0);
    let built: Scenario = scenario(&s);
    let e = Simulation::new(built, 1).err().unwrap();
    assert_eq!(e.to_string(), "topology.bottleneck.rate_bps: must be > 0");
    let mut s = single(0.0, true);
    s["flows"][0]["params"] = serde_json::json!({"halve_from": "nothing"});
    let built: Scenario = scenario(&s);
    let e = Simulation::new(built, 1).err().unwrap().to_string();
    assert!(e.starts_with("flows[0].traffic.params.halve_from:"), "{e}");
}
