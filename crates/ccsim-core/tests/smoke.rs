mod common;
use common::*;

#[test]
fn single_flow_prints() {
    let s = with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 60 * S), vec![flow("newreno", 0, 60 * S)]);
    let t = std::time::Instant::now();
    let out = run(&s, 1);
    eprintln!("wall {:?}", t.elapsed());
    for (k, v) in &out.run_summary {
        eprintln!("{k} = {v}");
    }
    let fsum = &out.flow_summary;
    for (n, c) in &fsum.columns {
        eprintln!("{n}: {:?}", c);
    }
    let cw = out.flows.u64("cwnd_bytes");
    eprintln!("cwnd samples: {:?}", cw.iter().step_by(10).map(|b| b / 1448).collect::<Vec<_>>());
}
