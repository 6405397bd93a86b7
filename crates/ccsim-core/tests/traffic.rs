//! Whole-run tests of streaming traffic, on/off flows, reverse traffic, random access delays and the
//! parking-lot topology.

mod common;
use common::*;

use ccsim_core::RunOutput;
use serde_json::json;

fn column_f64(out: &RunOutput, table: &str, col: &str) -> Vec<f64> {
    let t = match table {
        "summary" => &out.flow_summary,
        "streams" => &out.streams,
        "flows" => &out.flows,
        _ => &out.links,
    };
    t.f64(col).to_vec()
}

/// The TCP Limit paper's VoIP experiment (Fig. 5-6): 10 Mbit/s, 100 ms one way, a BDP-sized queue
/// (167 packets), one NewReno bulk flow, a 4 Mbit/s CBR flow and a G.711 VoIP flow.
#[test]
fn voip_delay_follows_the_newreno_sawtooth_up_to_a_full_queue() {
    let queue = 167;
    let s = with_flows(
        dumbbell(10_000_000, 100 * MS, queue, 0.0, 60 * S),
        vec![
            flow("newreno", 0, 60 * S),
            json!({"kind": "cbr", "rate_bps": 4_000_000}),
            json!({"kind": "voip"}),
        ],
    );
    let out = run(&s, 1);
    let voip = 2;
    let owd_max = column_f64(&out, "summary", "owd_max_ms")[voip];
    let owd_p50 = column_f64(&out, "summary", "owd_p50_ms")[voip];
    // The queue holds 1500 B TCP and 1028 B CBR packets: full, it is between 167 x 1028 B (137 ms)
    // and 167 x 1500 B (200 ms) of waiting at 10 Mbit/s. The VoIP maximum is the base one-way delay
    // (100 ms) plus the bottleneck's largest queueing delay plus its own serialisation (0.16 ms).
    let ccsim_core::Column::Str(link_names) = out.link_summary.column("link").unwrap() else { panic!() };
    let b = link_names.iter().position(|n| n == "bottleneck").unwrap();
    let qmax = out.link_summary.f64("qdelay_max_ms")[b];
    assert!(qmax > queue as f64 * 1028.0 * 8.0 / 10e6 * 1e3, "the queue fills: max queueing delay {qmax:.1} ms");
    let expected = 100.0 + qmax + 0.16;
    assert!((owd_max - expected).abs() < 3.0, "max one-way delay {owd_max:.1} ms vs base + full queue {expected:.1}");
    assert!(owd_p50 > 100.0 + 0.3 * qmax, "median {owd_p50:.1} ms: the queue is never empty for long");
    // The per-interval delay rises and falls with the bottleneck queue (the sawtooth).
    let streams = &out.streams;
    let flows = streams.u64("flow");
    let owd: Vec<f64> = streams.f64("owd_mean_ms").iter().zip(flows).filter(|(_, f)| **f == voip as u64).map(|(d, _)| *d).collect();
    let names = out.links.strs("link");
    let queue_pkts: Vec<f64> = out.links.u64("queue_pkts").iter().zip(names).filter(|(_, n)| *n == "bottleneck").map(|(q, _)| *q as f64).collect();
    let settled = 100..owd.len();
    let corr = correlation(&owd[settled.clone()], &queue_pkts[settled]);
    assert!(corr > 0.9, "VoIP delay vs bottleneck queue correlation {corr:.3}");
    let lost = column_f64(&out, "summary", "stream_lost_pkts")[voip];
    assert!(lost >= 0.0);
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn cbr_stream_alone_gets_its_rate_with_no_loss_and_constant_delay() {
    let s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 10 * S), vec![json!({"kind": "cbr", "rate_bps": 2_000_000})]);
    let out = run(&s, 1);
    let g = column_f64(&out, "summary", "goodput_bps")[0];
    // 2 Mbit/s on the wire with 1000 B payload + 28 B header: 1.946 Mbit/s of payload.
    assert!((g - 2e6 * 1000.0 / 1028.0).abs() < 2e4, "goodput {g}");
    assert_eq!(column_f64(&out, "summary", "stream_lost_pkts")[0], 0.0);
    assert!(column_f64(&out, "summary", "jitter_ms")[0] < 0.01, "an uncongested CBR stream has no jitter");
    // One-way delay = 20 ms + serialisation of 1028 B at 1 Gbit/s (access) and at 10 Mbit/s.
    let owd = column_f64(&out, "summary", "owd_mean_ms")[0];
    assert!((owd - (20.0 + 0.008224 + 0.8224)).abs() < 0.01, "owd {owd}");
}

#[test]
fn on_off_tcp_flow_is_silent_between_its_intervals_and_resumes() {
    let mut f = flow("newreno", 0, 0);
    f["intervals_ns"] = json!([[0, 10 * S], [20 * S, 30 * S]]);
    f.as_object_mut().unwrap().remove("start_ns");
    f.as_object_mut().unwrap().remove("stop_ns");
    let out = run(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 30 * S), vec![f]), 1);
    let times = column_f64(&out, "flows", "time_s");
    let goodput = column_f64(&out, "flows", "goodput_bps");
    let mean = |lo: f64, hi: f64| {
        let v: Vec<f64> = times.iter().zip(&goodput).filter(|(t, _)| **t > lo && **t <= hi).map(|(_, g)| *g).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean(2.0, 10.0) > 8e6, "on");
    assert!(mean(11.0, 20.0) < 1e3, "off");
    assert!(mean(22.0, 30.0) > 8e6, "on again");
}

#[test]
fn reverse_flow_sends_its_data_over_the_reverse_bottleneck() {
    let mut r = flow("newreno", 0, 10 * S);
    r["direction"] = json!("reverse");
    // The reverse bottleneck needs a real queue too: with the default 10 000 packets the forward
    // flow's ACKs would wait behind seconds of reverse data.
    let mut s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 10 * S), vec![flow("newreno", 0, 10 * S), r]);
    s["topology"]["reverse"] = json!({"rate_bps": 10_000_000, "delay_ns": 20 * MS, "queue": {"kind": "droptail", "limit": {"pkts": 84}}});
    let out = run(&s, 1);
    let util = |name: &str| {
        let ccsim_core::Column::Str(names) = out.link_summary.column("link").unwrap() else { panic!() };
        let i = names.iter().position(|n| n == name).unwrap();
        out.link_summary.f64("utilisation")[i]
    };
    let (fwd, rev) = (util("bottleneck"), util("reverse"));
    let g = column_f64(&out, "summary", "goodput_bps");
    eprintln!("utilisation forward {fwd:.3} reverse {rev:.3}, goodputs {g:?}");
    // Data and the other flow's ACKs share each queue (ACK compression), so neither direction is
    // full; both carry bulk data.
    assert!(fwd > 0.6 && rev > 0.6, "forward {fwd:.3}, reverse {rev:.3}");
    assert!(g[0] > 5e6 && g[1] > 5e6, "{g:?}");
}

#[test]
fn random_access_delays_are_drawn_per_flow_from_the_seed() {
    let flows: Vec<_> = (0..10)
        .map(|_| {
            let mut f = flow("newreno", 0, 5 * S);
            f["access_delay_ns"] = json!({"uniform": [5 * MS, 30 * MS]});
            f
        })
        .collect();
    let s = with_flows(dumbbell(10_000_000, 5 * MS, 100, 0.0, 5 * S), flows);
    let a = column_f64(&run(&s, 1), "summary", "access_delay_ms");
    let b = column_f64(&run(&s, 1), "summary", "access_delay_ms");
    let c = column_f64(&run(&s, 2), "summary", "access_delay_ms");
    assert_eq!(a, b, "same seed, same delays");
    assert_ne!(a, c, "another seed draws others");
    assert!(a.iter().all(|d| (5.0..=30.0).contains(d)), "{a:?}");
    let distinct = a.iter().map(|d| (d * 1e6) as u64).collect::<std::collections::BTreeSet<_>>().len();
    assert!(distinct >= 9, "{a:?}");
    // Each flow's minimum RTT reflects its own access delay: at least 2 * (access + 5 ms), and the
    // differences between flows follow the drawn delays (the standing queue the ten flows build is
    // common to all of them).
    let out = run(&s, 1);
    let rtt_min = column_f64(&out, "summary", "rtt_min_ms");
    for (d, r) in a.iter().zip(&rtt_min) {
        assert!(*r >= 2.0 * (d + 5.0), "access {d} ms, min RTT {r} ms");
    }
    let twice: Vec<f64> = a.iter().map(|d| 2.0 * d).collect();
    let corr = correlation(&twice, &rtt_min);
    assert!(corr > 0.9, "min RTT vs access delay correlation {corr:.3}: {a:?} {rtt_min:?}");
}

#[test]
fn parking_lot_long_flow_gets_less_than_the_one_hop_flows() {
    let hop = json!({"rate_bps": 10_000_000, "delay_ns": 10 * MS, "queue": {"kind": "droptail", "limit": {"pkts": 50}}});
    let mut long = flow("newreno", 0, 60 * S);
    long["path"] = json!([0, 2]);
    let mut flows = vec![long];
    for k in 0..3 {
        let mut cross = flow("newreno", 0, 60 * S);
        cross["path"] = json!([k, k]);
        flows.push(cross);
    }
    let s = json!({"duration_ns": 60 * S, "measure_start_ns": 10 * S,
                   "topology": {"kind": "parking_lot", "hops": [hop.clone(), hop.clone(), hop]}, "flows": flows});
    let out = run(&s, 1);
    let g = column_f64(&out, "summary", "goodput_bps");
    for k in 1..=3 {
        assert!(g[0] < g[k], "the 3-hop flow {:.2} should get less than the 1-hop flow {k} {:.2}", g[0] / 1e6, g[k] / 1e6);
    }
    let ccsim_core::Column::Str(names) = out.link_summary.column("link").unwrap() else { panic!() };
    for k in 0..3 {
        let i = names.iter().position(|n| *n == format!("hop{k}")).unwrap();
        assert!(out.link_summary.f64("utilisation")[i] > 0.9, "hop{k} is a bottleneck");
    }
}

#[test]
fn invalid_traffic_specs_name_the_field() {
    let bad = |f: serde_json::Value| {
        let s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 10 * S), vec![f]);
        ccsim_core::Simulation::new(scenario(&s), 1).err().map(|e| e.to_string()).unwrap_or_default()
    };
    assert!(bad(json!({"kind": "cbr"})).starts_with("flows[0].traffic.rate_bps:"));
    assert!(bad(json!({"kind": "voip", "payload_bytes": 0})).starts_with("flows[0].traffic.payload_bytes:"));
    assert!(bad(json!({"algorithm": "newreno", "intervals_ns": [[5, 3]]})).starts_with("flows[0].intervals[0].stop_ns:"));
    assert!(bad(json!({"algorithm": "newreno", "intervals_ns": [[5, 10], [7, 20]]})).starts_with("flows[0].intervals[1].start_ns:"));
    assert!(bad(json!({"algorithm": "newreno", "path": [0, 1]})).starts_with("flows[0].route:"));
}

#[test]
fn web_background_spawns_short_transfers_that_complete() {
    let web = json!({"kind": "web", "algorithm": "newreno", "arrival_rate": 5.0, "size_mean_bytes": 50_000, "size_shape": 1.2});
    let s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 60 * S), vec![flow("newreno", 0, 60 * S), web]);
    let out = run(&s, 1);
    let kinds = out.flow_summary.strs("kind");
    let n_web = kinds.iter().filter(|k| **k == "web").count();
    // Poisson arrivals at 5/s for 60 s: 300 expected, sd ~17.
    assert!((230..370).contains(&n_web), "{n_web} transfers");
    let ccsim_core::Column::Bool(done) = out.flow_summary.column("completed").unwrap() else { panic!() };
    let fct = out.flow_summary.f64("fct_s");
    let completed: Vec<f64> = kinds.iter().zip(done).zip(fct).filter(|((k, d), _)| **k == "web" && **d).map(|(_, f)| *f).collect();
    assert!(completed.len() as f64 > 0.9 * n_web as f64, "{} of {n_web} completed", completed.len());
    // A transfer takes at least one RTT (40 ms); the median is a few RTTs for a 50 kB mean.
    let mut sorted = completed.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert!(sorted[0] >= 0.040, "fastest {}", sorted[0]);
    assert!(sorted[sorted.len() / 2] < 2.0, "median {}", sorted[sorted.len() / 2]);
    // Mean size near 50 kB: Pareto(1.2) sample means are noisy, so a wide band.
    let bytes = out.flow_summary.u64("bytes_delivered");
    let web_bytes: Vec<u64> = kinds.iter().zip(bytes).filter(|(k, _)| **k == "web").map(|(_, b)| *b).collect();
    let mean = web_bytes.iter().sum::<u64>() as f64 / web_bytes.len() as f64;
    assert!((15_000.0..200_000.0).contains(&mean), "mean size {mean}");
    // The series hold the bulk flow only; the run stays deterministic.
    assert!(out.flows.u64("flow").iter().all(|f| *f == 0));
    let again = run(&s, 1);
    assert_eq!(format!("{:?}", again.flow_summary), format!("{:?}", out.flow_summary));
}
