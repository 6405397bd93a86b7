"""The experiment controls from the scenario file and the Python API: initial ssthresh and slow start
off, random loss that changes over time, random start times, per-flow packet size, and rate-limited
applications (docs/scenario-format.md, "Experiment controls")."""

from __future__ import annotations

import pytest

import ccsim
from ccsim.errors import ScenarioError
from ccsim.scenario import Scenario

BASE = """
[run]
duration = "{duration}"
[topology]
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "{queue}"
{topology}
[tcp]
{tcp}
[[flows]]
algorithm = "newreno"
count = {count}
{flow}
"""


def scenario(topology: str = "", tcp: str = "", flow: str = "", count: int = 1, duration: str = "20s", queue: str = "84pkt") -> Scenario:
    return ccsim.load_scenario(BASE.format(topology=topology, tcp=tcp, flow=flow, count=count, duration=duration, queue=queue))


def refused(**kwargs: str) -> str:
    with pytest.raises(ScenarioError) as e:
        scenario(**kwargs)
    return str(e.value)


def round_trips(s: Scenario) -> bool:
    return ccsim.load_scenario(s.to_toml()) == s


# -- initial ssthresh and slow start off ---------------------------------------------------------


def initial_ssthresh(s: Scenario, flow: int = 0) -> dict:
    return s.resolve()["flows"][flow]["traffic"]["tcp"]["initial_ssthresh"]


def test_initial_ssthresh_in_segments_of_the_flows_own_mss_or_in_bytes():
    assert initial_ssthresh(scenario()) == {"kind": "unlimited"}
    assert initial_ssthresh(scenario(tcp='initial_ssthresh = "25pkt"')) == {"kind": "bytes", "bytes": 25 * 1448}
    s = scenario(tcp='initial_ssthresh = "25pkt"', flow='[flows.tcp]\nmss = "960B"')
    assert initial_ssthresh(s) == {"kind": "bytes", "bytes": 25 * 960}, "packets count the flow's own segments"
    assert initial_ssthresh(scenario(tcp='initial_ssthresh = "36kB"')) == {"kind": "bytes", "bytes": 36_000}
    assert round_trips(s)


def test_slow_start_off_resolves_to_a_threshold_below_the_initial_window():
    s = scenario(tcp="slow_start = false")
    assert initial_ssthresh(s) == {"kind": "below_initial_window"}
    assert round_trips(s)


def test_a_flows_own_start_setting_replaces_the_tcp_tables():
    two = '[[flows]]\nalgorithm = "newreno"\n'
    s = scenario(tcp='initial_ssthresh = "25pkt"', flow="[flows.tcp]\nslow_start = false\n" + two)
    assert [initial_ssthresh(s, i)["kind"] for i in (0, 1)] == ["below_initial_window", "bytes"]
    s = scenario(tcp="slow_start = false", flow='[flows.tcp]\ninitial_ssthresh = "10pkt"\n' + two)
    assert [initial_ssthresh(s, i) for i in (0, 1)] == [{"kind": "bytes", "bytes": 14480}, {"kind": "below_initial_window"}]
    assert round_trips(s)


@pytest.mark.parametrize(
    ("tcp", "field", "words"),
    [
        ('slow_start = false\ninitial_ssthresh = "25pkt"', "tcp.slow_start", "cannot be combined"),
        ('initial_ssthresh = "25"', "tcp.initial_ssthresh", "no unit"),
        ('initial_ssthresh = "0pkt"', "tcp.initial_ssthresh", "> 0"),
        ('initial_ssthresh = "100B"', "tcp.initial_ssthresh", "smaller than one segment"),
        ("slow_start = 0", "tcp.slow_start", "true or false"),
    ],
)
def test_bad_start_settings_name_the_key(tcp, field, words):
    message = refused(tcp=tcp)
    assert message.startswith(f"{field}: ") and words in message, message


def test_slow_start_off_holds_the_window_down_early_in_a_run():
    def cwnd_at_1s(tcp: str) -> float:
        flows = ccsim.run(scenario(tcp=tcp, duration="3s")).flows
        return float(flows.loc[(flows["time_s"] - 1.0).abs() < 1e-9, "cwnd_pkts"].iloc[0])

    # IW 3 plus about one segment per 40 ms round, against a slow start that has filled the queue.
    linear, slow_start = cwnd_at_1s("slow_start = false"), cwnd_at_1s("")
    assert 15 < linear < 32, linear
    assert slow_start > 45, slow_start


# -- random loss that changes over time ---------------------------------------------------------


def test_a_loss_schedule_resolves_to_a_rate_and_its_changes():
    s = scenario(topology='loss = [["0s", 0.0], ["5s", 0.01], ["12s", "0.1%"]]')
    link = s.resolve()["topology"]["bottleneck"]
    assert (link["loss_rate"], link["loss_changes"]) == (0.0, [{"at_ns": 5 * 10**9, "loss_rate": 0.01}, {"at_ns": 12 * 10**9, "loss_rate": 0.001}])
    assert round_trips(s)
    # The scalar form is unchanged.
    link = scenario(topology="loss = 0.01").resolve()["topology"]["bottleneck"]
    assert (link["loss_rate"], link["loss_changes"]) == (0.01, [])


def test_every_link_takes_a_schedule():
    s = scenario(topology='reverse_loss = [["0s", 0.0], ["5s", 0.02]]')
    assert s.resolve()["topology"]["reverse"]["loss_changes"] == [{"at_ns": 5 * 10**9, "loss_rate": 0.02}]
    lot = ccsim.load_scenario("""
[run]
duration = "10s"
[topology]
kind = "parking_lot"
hops = [{ rate = "10Mbit", delay = "10ms", queue = "50pkt", loss = [["0s", 0.0], ["3s", 0.05]] },
        { rate = "10Mbit", delay = "10ms", queue = "50pkt" }]
[[flows]]
algorithm = "newreno"
""")
    hops = lot.resolve()["topology"]["hops"]
    assert [h["loss_changes"] for h in hops] == [[{"at_ns": 3 * 10**9, "loss_rate": 0.05}], []]
    assert round_trips(lot)


@pytest.mark.parametrize(
    ("loss", "field", "words"),
    [
        ('[["1s", 0.0], ["5s", 0.01]]', "topology.loss[0]", "starts at 0s"),
        ('[["0s", 0.0], ["5s", 0.01], ["5s", 0.02]]', "topology.loss[2]", "times must increase"),
        ('[["0s", 0.0], ["5s", 0.01], ["4s", 0.02]]', "topology.loss[2]", "times must increase"),
        ('[["0s", 0.0], ["5s", 1.0]]', "topology.loss[1]", "[0, 1)"),
        ('[["0s", 0.0], ["5s", -0.1]]', "topology.loss[1]", "outside [0, 1]"),
        ('[["0s", 0.0], ["5s"]]', "topology.loss[1]", "[time, probability]"),
        ('[["0s", 0.0], ["5 s", 0.1]]', "topology.loss[1]", "5s"),
        ('[["0s", 0.0], ["25s", 0.01]]', "topology.loss[1]", "end of the run"),
        ("[]", "topology.loss", "steps"),
    ],
)
def test_bad_loss_schedules_name_the_step(loss, field, words):
    message = refused(topology=f"loss = {loss}")
    assert message.startswith(f"{field}: ") and words in message, message


def test_random_drops_happen_only_while_the_schedule_says_so():
    result = ccsim.run(scenario(topology='loss = [["0s", 0.0], ["5s", 0.02], ["10s", 0.0]]', duration="15s"), seed=3)
    links = result.links[result.links["link"] == "bottleneck"]
    during = (links["time_s"] > 5.0) & (links["time_s"] <= 10.0 + 1e-9)
    assert links.loc[~during, "drops_random"].sum() == 0
    assert links.loc[during, "drops_random"].sum() > 10


# -- random start times --------------------------------------------------------------------------


def test_a_uniform_start_resolves_to_the_low_end_and_a_spread():
    s = scenario(flow='start = { uniform = ["1s", "3s"] }', count=3)
    flows = s.resolve()["flows"]
    assert [(f["intervals"][0]["start_ns"], f["start_spread_ns"]) for f in flows] == [(10**9, 2 * 10**9)] * 3
    assert round_trips(s)
    assert scenario(flow='start = "2s"').resolve()["flows"][0]["start_spread_ns"] == 0


def test_each_flow_draws_its_own_start_from_the_seed():
    s = scenario(flow='start = { uniform = ["0s", "2s"] }', count=5, duration="4s")
    starts = list(ccsim.run(s, seed=1).summary["start_s"])
    assert starts == list(ccsim.run(s, seed=1).summary["start_s"])
    assert starts != list(ccsim.run(s, seed=2).summary["start_s"])
    assert len(set(starts)) == 5 and all(0 <= t < 2 for t in starts), starts


@pytest.mark.parametrize(
    ("flow", "field", "words"),
    [
        ('start = { uniform = ["0s", "2s"] }\nstop = "2s"', "flows[0].start", "not before"),
        ('start = { uniform = ["3s", "2s"] }', "flows[0].start.uniform", "above high"),
        ('start = { normal = ["0s", "2s"] }', "flows[0].start", "uniform"),
        ('start = { uniform = ["0s", "2s"] }\nactive = [["0s", "5s"]]', "flows[0].start", "active intervals"),
        ('start = { uniform = ["0s", "30s"] }', "flows[0].start", "not before"),
    ],
)
def test_bad_random_starts_name_the_key(flow, field, words):
    message = refused(flow=flow)
    assert message.startswith(f"{field}: ") and words in message, message


# -- per-flow packet size (the coexistence paper: 1000 B packets, 960 B payload) -------------------

COEXISTENCE_FLOW = '[flows.tcp]\nmss = "960B"\nheader = "40B"'


def test_per_flow_packet_size_goes_end_to_end():
    result = ccsim.run(scenario(flow=COEXISTENCE_FLOW, queue="50pkt", duration="10s"))
    links = result.links[result.links["link"] == "bottleneck"]
    # Only this flow's data crosses the bottleneck: 1000 B on the wire per packet.
    assert links["tx_bytes"].sum() % 1000 == 0
    assert links["queue_pkts"].max() <= 50, "the queue counts packets"
    summary = result.summary.iloc[0]
    assert summary["bytes_delivered"] % 960 == 0, "goodput counts payload"
    utilisation = links["utilisation"].mean()
    assert summary["goodput_bps"] == pytest.approx(0.96 * 10e6 * utilisation, rel=0.01), "payload share of the wire rate"


def test_bdp_counts_the_flows_own_packet_size():
    red = 'queue = { kind = "red", limit = "1bdp" }'
    # 10 Mbit/s x 40 ms = 50 000 B: 50 packets of 1000 B, 33 of 1500 B.
    text = BASE.format(topology="", tcp="", flow=COEXISTENCE_FLOW, count=1, duration="5s", queue="1pkt").replace('queue = "1pkt"', red)
    assert ccsim.load_scenario(text).resolve()["topology"]["bottleneck"]["queue"]["limit"] == {"pkts": 50}
    text = BASE.format(topology="", tcp="", flow="", count=1, duration="5s", queue="1pkt").replace('queue = "1pkt"', red)
    assert ccsim.load_scenario(text).resolve()["topology"]["bottleneck"]["queue"]["limit"] == {"pkts": 33}


# -- rate-limited applications ---------------------------------------------------------------------


def test_rate_limit_resolves_per_flow():
    s = scenario(flow='rate_limit = "2Mbit"')
    assert s.resolve()["flows"][0]["traffic"]["app_rate"] == {"kind": "limited", "rate_bps": 2_000_000}
    assert scenario().resolve()["flows"][0]["traffic"]["app_rate"] == {"kind": "unlimited"}
    assert round_trips(s)


def test_a_rate_limited_flow_is_held_at_its_rate_beside_a_bulk_flow():
    text = BASE.format(topology="", tcp="", flow='name = "limited"\nrate_limit = "2Mbit"\n[[flows]]\nname = "bulk"\nalgorithm = "newreno"',
                       count=1, duration="20s", queue="84pkt")
    summary = ccsim.run(ccsim.load_scenario(text)).summary.set_index("name")
    assert summary.loc["limited", "goodput_bps"] == pytest.approx(2e6, rel=0.05)
    assert summary.loc["bulk", "goodput_bps"] > 6.5e6, "the bulk flow takes the rest"


@pytest.mark.parametrize(
    ("flow", "field", "words"),
    [
        ('rate_limit = "0bit"', "flows[0].rate_limit", "> 0"),
        ('rate_limit = "2Mbps"', "flows[0].rate_limit", "Mbit"),
        ('kind = "cbr"\nrate = "1Mbit"\nrate_limit = "2Mbit"', "flows[0].rate_limit", "only for TCP"),
    ],
)
def test_bad_rate_limits_name_the_key(flow, field, words):
    text = BASE.format(topology="", tcp="", flow=flow, count=1, duration="5s", queue="84pkt")
    if 'kind = "cbr"' in flow:
        text = text.replace('algorithm = "newreno"\n', "")
    with pytest.raises(ScenarioError) as e:
        ccsim.load_scenario(text)
    assert str(e.value).startswith(f"{field}: ") and words in str(e.value), str(e.value)
