//! Per-ACK cost of the congestion-control seam: one `on_ack` call through the enum dispatch that the
//! engine uses, for every registered algorithm, in congestion avoidance with a varying RTT sample.
//!
//! cargo bench -p ccsim-bench --bench per_ack

use std::time::Duration;

use ccsim_cc::{AckSample, CcInit, CongestionControl, ParamMap, Rng, Time, Window};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn per_ack(c: &mut Criterion) {
    let mss = 1448;
    for info in ccsim_cc::catalog() {
        let init = CcInit { mss_bytes: mss, initial_cwnd_bytes: 10 * mss, abc_limit_segments: 2, rng: Rng::new(1, 1) };
        let mut cc = ccsim_cc::build(info.name, &ParamMap::new(), &init).expect("defaults are valid");
        let mut w = Window::new(100 * mss, mss);
        w.ssthresh_bytes = 50 * mss;
        cc.init(&mut w);
        let mut n: u64 = 0;
        c.bench_function(&format!("on_ack/{}", info.name), |b| {
            b.iter(|| {
                n += 1;
                // RTT between 40 and 60 ms so delay-based rules take both branches.
                let rtt = Duration::from_micros(40_000 + (n * 7919) % 20_000);
                let ack = AckSample {
                    now: Time(n * 100_000),
                    bytes_acked: 2 * mss,
                    rtt: Some(rtt),
                    min_rtt: Some(Duration::from_millis(40)),
                    max_rtt: Some(Duration::from_millis(60)),
                    srtt: Some(Duration::from_millis(50)),
                    bytes_in_flight: w.cwnd_bytes,
                    delivered_bytes: n * 2 * mss,
                    snd_una: n * 2 * mss,
                    snd_nxt: n * 2 * mss + w.cwnd_bytes,
                    cwnd_limited: true,
                    ..AckSample::default()
                };
                cc.on_ack(&mut w, black_box(&ack));
                if w.cwnd_bytes > 400 * mss || w.cwnd_bytes < 20 * mss {
                    w.cwnd_bytes = 100 * mss; // stay in a realistic range
                }
                black_box(w.cwnd_bytes)
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    targets = per_ack
}
criterion_main!(benches);
