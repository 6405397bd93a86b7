"""BBR (Linux tcp_bbr.c, v1) in short whole runs: one flow on a 10 Mbit/s, 20 ms one-way path with a
1-BDP drop-tail buffer (33 packets, 40 ms of queue), `linux` profile, samples every 10 ms. The state
machine's unit tests are in crates/ccsim-cc/src/algorithms/bbr.rs; the figures are in
docs/algorithms/bbr.md."""

from __future__ import annotations

import numpy as np
import pytest

import ccsim
from ccsim.errors import ScenarioError
from ccsim.scenario import Scenario

RATE_BPS = 10e6
BUFFER_PKTS = 33
BUFFER_DELAY_MS = BUFFER_PKTS * 1500 * 8 / RATE_BPS * 1e3  # 39.6 ms
STARTUP, DRAIN, PROBE_BW, PROBE_RTT = 0.0, 1.0, 2.0, 3.0


def one_flow(algorithm: str = "bbr", params: dict | None = None, duration: str = "25s") -> Scenario:
    flow: dict = {"algorithm": algorithm}
    if params is not None:
        flow["params"] = params
    return Scenario.from_dict({
        "run": {"duration": duration, "sample_interval": "10ms"},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": f"{BUFFER_PKTS}pkt"},
        "tcp": {"profile": "linux"},
        "flows": [flow],
    })


@pytest.fixture(scope="module")
def run() -> ccsim.Result:
    return ccsim.run(one_flow(), seed=1)


def metric(result: ccsim.Result, name: str):
    m = result.cc_metrics
    return m[m.name == name].set_index("time_s").value


def test_one_flow_fills_the_path_with_a_short_queue(run: ccsim.Result) -> None:
    """Goodput at least 90 % of the capacity, mean queueing delay under a quarter of the buffer's
    (measured: 9.49 Mbit/s, 7.9 ms of 39.6 ms)."""
    goodput = run.summary.goodput_bps.iloc[0]
    qdelay = run.run_summary["bottleneck_qdelay_mean_ms"]
    assert goodput >= 0.9 * RATE_BPS, f"goodput {goodput / 1e6:.2f} Mbit/s"
    assert qdelay < BUFFER_DELAY_MS / 4, f"mean queueing delay {qdelay:.1f} ms of {BUFFER_DELAY_MS:.1f}"


def test_states_come_in_order_and_probe_rtt_every_10_s(run: ccsim.Result) -> None:
    mode = metric(run, "mode")
    changes = mode[mode.diff().fillna(1) != 0]
    order = changes.tolist()
    assert order[:4] == [STARTUP, DRAIN, PROBE_BW, PROBE_RTT], order
    assert changes.index[2] < 1.0, "Startup and Drain take a few rounds, not seconds"
    starts = changes[changes == PROBE_RTT].index.to_numpy()
    ends = changes.index.to_numpy()[np.searchsorted(changes.index.to_numpy(), starts, side="right")]
    assert len(starts) == 2, f"ProbeRTT at {starts} in 25 s"
    # 10 s after the min-RTT sample (the first ~0.1 s in), then 10 s after the previous exit.
    assert 10.0 <= starts[0] <= 10.3 and 9.95 <= starts[1] - ends[0] <= 10.1, (starts, ends)
    # 200 ms at 4 segments in flight, and a round (plus the time to drain to 4).
    assert all(0.2 <= e - s <= 0.4 for s, e in zip(starts, ends)), (starts, ends)
    cwnd = run.flows.set_index("time_s").cwnd_pkts
    assert cwnd[mode[mode == PROBE_RTT].index].max() <= 4


def test_probe_bw_cycles_its_gains(run: ccsim.Result) -> None:
    """Between the ProbeRTTs: 1.25 (probe), then 0.75 (drain what it queued), then 1 for six
    phases."""
    gain = metric(run, "pacing_gain")
    mode = metric(run, "mode")
    steady = gain[(mode == PROBE_BW) & (gain.index > 11) & (gain.index < 20)]
    assert set(steady.round(2)) == {0.75, 1.0, 1.25}
    phases = steady[steady.diff().fillna(1) != 0].round(2).tolist()
    for a, b in zip(phases, phases[1:]):
        assert (a, b) in {(1.25, 0.75), (0.75, 1.0), (1.0, 1.25)}, phases
    # Eight phases of about one RTT (41-50 ms): a cycle every 0.33-0.40 s.
    probes = steady[(steady.diff() > 0) & (steady.round(2) == 1.25)].index.to_numpy()
    assert 0.3 <= np.median(np.diff(probes)) <= 0.42, np.diff(probes)


def test_bandwidth_estimate_is_the_bottleneck_payload_rate(run: ccsim.Result) -> None:
    """10 Mbit/s of 1500-byte packets carry 1448-byte payloads: 9.65 Mbit/s of delivery rate."""
    bw = metric(run, "bw_bps")
    late = bw[bw.index > 2].median()
    assert late == pytest.approx(RATE_BPS * 1448 / 1500, rel=0.01)


def test_bbr_is_listed_and_takes_no_parameters() -> None:
    info = {a["name"]: a for a in ccsim.algorithms()}["bbr"]
    assert info["params"] == [] and "tcp_bbr.c" in info["reference"]
    with pytest.raises(ScenarioError) as e:
        ccsim.run(one_flow(params={"high_gain": 3}, duration="1s"), seed=1)
    assert "high_gain" in str(e.value) and "flows[0]" in str(e.value)
