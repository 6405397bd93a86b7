"""Streams (CBR, VoIP), on/off flows, reverse traffic, random access delays and the parking lot, from
the scenario file through the Python API."""

from __future__ import annotations

import math

import pytest

import ccsim
from ccsim.errors import ScenarioError
from ccsim.scenario import Scenario

EXAMPLES = ["examples/voip_with_bulk.toml", "examples/parking_lot.toml", "examples/onoff_coexistence.toml"]


@pytest.mark.parametrize("path", EXAMPLES)
def test_examples_round_trip_through_toml(path: str) -> None:
    scenario = ccsim.load_scenario(path)
    assert Scenario.from_toml_str(scenario.to_toml()) == scenario


def test_voip_call_sees_base_delay_plus_the_queue_and_tcp_rows_have_no_stream_metrics() -> None:
    result = ccsim.run("examples/voip_with_bulk.toml", seed=1)
    s = result.summary.set_index("name")
    bottleneck = result.link_summary.set_index("link").loc["bottleneck"]
    call = s.loc["call"]
    assert call.kind == "voip"
    # Max one-way delay = 100 ms + the largest queueing delay + 0.16 ms of serialisation (200 B).
    assert call.owd_max_ms == pytest.approx(100 + bottleneck.qdelay_max_ms + 0.16, abs=3.0)
    assert 100 < call.owd_p50_ms < call.owd_p95_ms <= call.owd_max_ms
    assert 0 < call.jitter_ms < 5
    # G.711: 160 B every 20 ms = 64 kbit/s of payload.
    assert call.goodput_bps == pytest.approx(64_000, rel=0.02)
    assert math.isnan(s.loc["bulk"].owd_mean_ms) and math.isnan(s.loc["bulk"].jitter_ms)
    streams = result.streams
    assert set(streams.flow) == {1, 2}
    assert {"owd_mean_ms", "owd_max_ms", "jitter_ms", "lost"} <= set(streams.columns)


def test_on_off_flow_only_sends_in_its_intervals() -> None:
    scenario = Scenario.from_dict({
        "run": {"duration": "30s"},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt"},
        "flows": [{"algorithm": "newreno", "active": [["0s", "10s"], ["20s", "30s"]]}],
    })
    flows = ccsim.run(scenario, seed=1).flows
    off = flows[(flows.time_s > 11) & (flows.time_s < 20)]  # the interval ending at 20 s holds the restart
    on_again = flows[(flows.time_s > 22)]
    assert off.send_rate_bps.max() == 0
    assert on_again.goodput_bps.mean() > 8e6


def test_random_access_delays_depend_on_the_seed_only() -> None:
    data = ccsim.load_scenario("examples/onoff_coexistence.toml").model_dump(mode="json", by_alias=True, exclude_none=True)
    short = Scenario.from_dict({**data, "run": {"duration": "5s"}, "flows": data["flows"][:1]})  # the 9 HD flows
    first = ccsim.run(short, seed=3).summary.access_delay_ms
    again = ccsim.run(short, seed=3).summary.access_delay_ms
    other = ccsim.run(short, seed=4).summary.access_delay_ms
    assert list(first) == list(again)
    assert list(first) != list(other)
    assert first.between(5, 30).all()


def test_parking_lot_long_flow_gets_less() -> None:
    s = ccsim.run("examples/parking_lot.toml", seed=1).summary.set_index("name").goodput_bps
    assert all(s["long"] < s[f"cross{k}"] for k in range(3))


BASE = {
    "run": {"duration": "10s"},
    "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt"},
}


@pytest.mark.parametrize(
    "flow,field,words",
    [
        ({"kind": "cbr"}, "flows[0].rate", "needs a rate"),
        ({"kind": "voip", "algorithm": "newreno"}, "flows[0].algorithm", "no congestion control"),
        ({"kind": "voip", "bytes": "1MB"}, "flows[0].bytes", "no transfer size"),
        ({"algorithm": "newreno", "rate": "1Mbit"}, "flows[0].rate", "only for streams"),
        ({"algorithm": "newreno", "active": [["5s", "3s"]]}, "flows[0].active[0]", "not after start"),
        ({"algorithm": "newreno", "active": [["0s", "5s"], ["4s", "6s"]]}, "flows[0].active[1]", "overlap"),
        ({"algorithm": "newreno", "active": [["0s", "5s"]], "start": "1s"}, "flows[0].active", "not both"),
        ({"algorithm": "newreno", "path": [0, 1]}, "flows[0].path", "parking-lot"),
        ({"algorithm": "newreno", "access_delay": {"uniform": ["30ms", "5ms"]}}, "flows[0].access_delay.uniform", "above high"),
        ({"algorithm": "newreno", "access_delay": {"normal": ["5ms", "1ms"]}}, "flows[0].access_delay", "uniform"),
    ],
)
def test_bad_traffic_is_one_line_naming_the_field(flow: dict, field: str, words: str) -> None:
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({**BASE, "flows": [flow]})
    assert e.value.field == field, str(e.value)
    assert words in e.value.reason and "\n" not in str(e.value)


def test_parking_lot_errors_name_the_field() -> None:
    lot = {"kind": "parking_lot", "hops": [{"rate": "10Mbit", "delay": "10ms", "queue": "50pkt"}]}
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({"run": {"duration": "5s"}, "topology": lot, "flows": [{"algorithm": "newreno", "path": [0, 1]}]})
    assert e.value.field == "flows[0].path"
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({"run": {"duration": "5s"}, "topology": lot,
                            "flows": [{"algorithm": "newreno", "direction": "reverse"}]})
    assert e.value.field == "flows[0].direction"
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({"run": {"duration": "5s"}, "topology": {**lot, "hops": [{"rate": "0Mbit", "delay": "1ms", "queue": "5pkt"}]},
                            "flows": [{"algorithm": "newreno"}]})
    assert e.value.field.startswith("topology.hops[0].rate")


def test_web_background_transfers_report_completion_times() -> None:
    scenario = Scenario.from_dict({**BASE, "run": {"duration": "30s"}, "flows": [
        {"name": "bulk", "algorithm": "newreno"},
        {"name": "web", "kind": "web", "algorithm": "newreno", "arrival_rate": 4, "size_mean": "50kB"},
    ]})
    assert Scenario.from_toml_str(scenario.to_toml()) == scenario
    result = ccsim.run(scenario, seed=1)
    web = result.summary[result.summary.kind == "web"]
    assert 80 < len(web) < 160  # Poisson, 4 per second for 30 s
    assert web.name.str.startswith("web#").all()
    assert web.completed.mean() > 0.9 and (web.fct_s[web.completed] >= 0.04).all()
    assert set(result.flows.flow) == {0}, "transfers are not in the per-interval series"
    assert "web" in result.meta["algorithm_params"]


@pytest.mark.parametrize(
    "flow,field",
    [
        ({"kind": "web", "algorithm": "newreno", "size_mean": "50kB"}, "flows[0].arrival_rate"),
        ({"kind": "web", "algorithm": "newreno", "arrival_rate": 2}, "flows[0].size_mean"),
        ({"kind": "web", "algorithm": "newreno", "arrival_rate": 2, "size_mean": "5kB", "size_shape": 1.0}, "flows[0].size_shape"),
        ({"kind": "web", "algorithm": "newreno", "arrival_rate": -1, "size_mean": "5kB"}, "flows[0].arrival_rate"),
        ({"algorithm": "newreno", "arrival_rate": 2}, "flows[0].arrival_rate"),
    ],
)
def test_bad_web_traffic_names_the_field(flow: dict, field: str) -> None:
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({**BASE, "flows": [flow]})
    assert e.value.field == field, str(e.value)
