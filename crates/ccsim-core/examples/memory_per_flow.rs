//! Memory per flow (not a test): bytes each flow costs the engine when its access links never queue.
//!
//! The set-up: a 10 Gbit/s dumbbell (5 ms one-way) with N NewReno flows, each on its own 1 Gbit/s
//! access link, each application writing 10 kbit/s (one 1448-byte segment every 1.16 s). Every flow
//! runs (sender, receiver, timers, RTT samples) but neither its access links nor the bottleneck ever
//! hold more than a packet or two, so what is measured is the cost of a flow and of its idle access
//! links, not of queued packets. The run has one sample (the interval is the whole run): the per-
//! interval series would otherwise grow with simulated time on purpose.
//!
//! Bytes per flow = (peak RSS with 10,000 flows - peak RSS with 1,000 flows) / 9,000, each run in a
//! child process of its own (peak RSS only grows), so the fixed cost of the process cancels out.
//! Run at two durations, the figure must stay flat in simulated time.
//!
//! cargo run --release -p ccsim-core --example memory_per_flow             (the table)
//! cargo run --release -p ccsim-core --example memory_per_flow -- N SECS  (one run: peak RSS in KiB)

use std::process::Command;

use ccsim_core::{fixtures, Simulation};
use serde_json::json;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0)))
        .unwrap_or(0)
}

/// One run of `flows` light flows for `seconds`; returns the process's peak RSS in KiB.
fn run_once(flows: u64, seconds: u64) -> u64 {
    let mut light = fixtures::newreno();
    light["app_rate"] = json!({"kind": "limited", "rate_bps": 10_000});
    let traffic: Vec<_> = (0..flows).map(|_| light.clone()).collect();
    let duration_ns = seconds * 1_000_000_000;
    let json = fixtures::dumbbell(10_000_000_000, 5_000_000, 10_000, duration_ns, duration_ns, &traffic).to_string();
    drop(traffic);
    // Only the simulation is alive while it runs: the document it was built from is dropped first.
    let sim = Simulation::from_json(&json, 1);
    drop(json);
    let out = sim.and_then(|sim| sim.finish()).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    // Keep the output alive until the peak is read, as a caller would.
    let rss = peak_rss_kib();
    drop(out);
    rss
}

fn child(flows: u64, seconds: u64) -> u64 {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe).args([flows.to_string(), seconds.to_string()]).output().expect("child run");
    assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("peak RSS in KiB")
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("numeric argument")).collect();
    if let [flows, seconds] = args[..] {
        println!("{}", run_once(flows, seconds));
        return;
    }
    println!("| simulated time | peak RSS, 1,000 flows | peak RSS, 10,000 flows | bytes per flow |");
    println!("| --- | --- | --- | --- |");
    for seconds in [10, 60] {
        let (small, large) = (child(1_000, seconds), child(10_000, seconds));
        let per_flow = (large as f64 - small as f64) * 1024.0 / 9_000.0;
        println!("| {seconds} s | {:.1} MiB | {:.1} MiB | {per_flow:.0} B |", small as f64 / 1024.0, large as f64 / 1024.0);
    }
}
