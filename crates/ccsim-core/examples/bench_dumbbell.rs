//! Engine throughput benchmark (not a test): the 1 Gbit/s dumbbell, 10 ms base RTT,
//! 833-packet (one BDP) drop-tail queue, N NewReno flows. Prints simulated bottleneck packets per
//! wall-clock second and the process's peak resident memory.
//!
//! cargo run --release -p ccsim-core --example bench_dumbbell -- [flows=100] [seconds=10] [sample_ms=100] [rate_mbps=1000] [send_jitter_us=125] [algorithm=newreno]
//!
//! `seconds` may be a fraction. `rate_mbps` sets the bottleneck and the access links alike (the
//! queue stays one BDP at 10 ms, at least 8 packets); `benchmarks/scale.py` sweeps it.
//! `send_jitter_us` is the hosts' send jitter (`tcp.send_jitter_ns`, the profiles' 125 us by
//! default); 0 runs the dumbbell as it was before the jitter existed (no host departure events).
//! `algorithm` runs every flow with another registered algorithm (e.g. `bbr`, paced).

use std::time::Instant;

use ccsim_core::{fixtures, Simulation};

/// The allocator of the Python extension (`crates/ccsim-py`), so that what is measured is what runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0)))
        .unwrap_or(0)
}

fn main() {
    let mut args_text: Vec<String> = std::env::args().skip(1).collect();
    let algorithm = if args_text.len() > 5 { args_text.remove(5) } else { "newreno".to_string() };
    let args: Vec<f64> = args_text.iter().map(|a| a.parse().expect("numeric argument")).collect();
    let flows = *args.first().unwrap_or(&100.0) as u64;
    let seconds = *args.get(1).unwrap_or(&10.0);
    let sample_ms = *args.get(2).unwrap_or(&100.0);
    let rate_bps = (*args.get(3).unwrap_or(&1000.0) * 1e6) as u64;
    // one BDP at 10 ms of 1500-byte packets: 833 at 1 Gbit/s
    let queue_pkts = (rate_bps / 100 / 12_000).max(8);
    // the current resolved document (crates/ccsim-core/src/fixtures.rs), as the front end writes it
    let jitter_ns = (*args.get(4).unwrap_or(&125.0) * 1e3) as u64;
    let mut newreno = fixtures::newreno();
    newreno["tcp"]["send_jitter_ns"] = jitter_ns.into();
    newreno["algorithm"] = algorithm.as_str().into();
    let traffic: Vec<_> = (0..flows).map(|_| newreno.clone()).collect();
    let (duration_ns, sample_ns) = ((seconds * 1e9) as u64, (sample_ms * 1e6) as u64);
    let mut scenario = fixtures::dumbbell(rate_bps, 5_000_000, queue_pkts, duration_ns, sample_ns, &traffic);
    scenario["topology"]["access_rate_bps"] = rate_bps.into();
    let started = Instant::now();
    let out = match Simulation::from_json(&scenario.to_string(), 1).and_then(|sim| sim.finish()) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let pkts = out.stats.bottleneck_packets as f64;
    let util = out.run_summary.iter().find(|(k, _)| k == "bottleneck_utilisation").map(|(_, v)| *v).unwrap_or(f64::NAN);
    println!(
        "flows={flows} simulated={seconds}s wall={wall:.3}s bottleneck_packets={pkts:.0} pkts_per_wall_s={:.0} events={} events_per_wall_s={:.0} utilisation={util:.3} peak_rss_mib={:.1} realtime_factor={:.2}",
        pkts / wall,
        out.stats.events,
        out.stats.events as f64 / wall,
        peak_rss_kib() as f64 / 1024.0,
        seconds / wall
    );
}
