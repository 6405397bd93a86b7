"""RED queues (docs/red.md): the scenario syntax, its resolution to plain numbers, one-line errors, and
whole runs (average queue between the thresholds, early drops, lower delay than drop-tail)."""

import copy
import json
import math

import pytest
from click.testing import CliRunner

from ccsim.cli import cli
from ccsim.errors import ScenarioError
from ccsim.runner import load_core, run
from ccsim.scenario import Scenario

BINOMIAL = {"kind": "red", "limit": "1bdp", "min_th": "20%", "max_th": "80%"}


def scenario(queue, **topology) -> dict:
    return {
        "run": {"duration": "10s"},
        "topology": {"bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": queue, **topology},
        "flows": [{"algorithm": "newreno", "count": 4}],
    }


def resolved_queue(data: dict) -> dict:
    return Scenario.from_dict(data).resolve()["topology"]["bottleneck"]["queue"]


# --- syntax and resolution -------------------------------------------------------------------------


def test_binomial_setup_in_one_line_resolves_to_packets():
    # 10 Mbit/s x 40 ms / 1500 B = 33.3 -> 33 packets; thresholds 20 % and 80 % of it.
    q = resolved_queue(scenario(BINOMIAL))
    assert q == {"kind": "red", "limit": {"pkts": 33}, "min_th": 6.6, "max_th": 26.4, "max_p": 0.1,
                 "w_q": 0.002, "gentle": True, "wait": True, "mean_pkt_bytes": 500}
    json.dumps(q)  # plain numbers


def test_defaults_are_ns2_classic_constants():
    q = resolved_queue(scenario({"kind": "red", "limit": "100pkt"}))
    assert (q["limit"]["pkts"], q["min_th"], q["max_th"], q["max_p"], q["w_q"]) == (100, 5.0, 15.0, 0.1, 0.002)
    assert q["gentle"] is True and q["wait"] is True and q["mean_pkt_bytes"] == 500


def test_byte_limit_measures_bytes():
    q = resolved_queue(scenario({"kind": "red", "limit": "150kB", "min_th": "30kB", "max_th": "90%", "gentle": False}))
    assert (q["limit"], q["min_th"], q["max_th"], q["gentle"]) == ({"bytes": 150_000}, 30_000, 135_000, False)
    # Default thresholds in byte mode: 5 and 15 mean packets (ns-2 queue_in_bytes_).
    q = resolved_queue(scenario({"kind": "red", "limit": "150kB", "mean_pkt_size": "1000B"}))
    assert (q["min_th"], q["max_th"]) == (5000, 15000)


def test_bdp_uses_the_flows_base_rtt_and_packet_size():
    # RTT = 20 ms forward + 30 ms reverse + 2 x mean access delay (10 ms fixed and U[0, 20 ms] -> 10 ms).
    data = scenario({"kind": "red", "limit": "2bdp", "min_th": "10pkt", "max_th": "50%"}, reverse_delay="30ms")
    data["flows"] = [{"algorithm": "newreno", "access_delay": "10ms"},
                     {"algorithm": "newreno", "access_delay": {"uniform": ["0ms", "20ms"]}}]
    data["tcp"] = {"mss": "952B", "header": "48B"}
    q = resolved_queue(data)
    # 10e6 * 0.070 / (8 * 1000) = 87.5 packets per bdp; 2 bdp = 175.
    assert (q["limit"]["pkts"], q["min_th"], q["max_th"]) == (175, 10, 87.5)


@pytest.mark.parametrize(
    "queue",
    [
        BINOMIAL,
        {"kind": "red", "limit": "100pkt"},
        {"kind": "red", "limit": "0.5bdp", "min_th": "12.5%", "max_th": "60%", "gentle": False, "wait": False},
        {"kind": "red", "limit": "150kB", "min_th": "15kB", "max_th": "45kB", "max_p": "2%", "w_q": 0.01,
         "mean_pkt_size": "1500B"},
    ],
)
def test_round_trip_through_toml(queue):
    loaded = Scenario.from_dict(scenario(queue))
    dumped = loaded.to_toml()
    reloaded = Scenario.from_toml_str(dumped)
    assert reloaded == loaded
    assert reloaded.resolve() == loaded.resolve()
    assert reloaded.to_toml() == dumped


def test_red_on_parking_lot_hops_and_reverse_queue():
    data = {
        "run": {"duration": "10s"},
        "topology": {"kind": "parking_lot", "hops": [
            {"rate": "10Mbit", "delay": "10ms", "queue": {"kind": "red", "limit": "50pkt", "min_th": "10pkt", "max_th": "30pkt"}},
            {"rate": "10Mbit", "delay": "10ms", "queue": "50pkt"}]},
        "flows": [{"algorithm": "newreno"}],
    }
    s = Scenario.from_dict(data)
    assert s.resolve()["topology"]["hops"][0]["queue"]["max_th"] == 30
    assert Scenario.from_toml_str(s.to_toml()) == s
    data = scenario("84pkt", reverse_queue={"kind": "red", "limit": "100pkt", "gentle": False})
    assert Scenario.from_dict(data).resolve()["topology"]["reverse"]["queue"]["gentle"] is False


BAD = [
    ({"kind": "red"}, "topology.queue.limit", "missing"),
    ({"kind": "red", "limit": "1bpd"}, "topology.queue.limit", "bdp"),
    ({"kind": "red", "limit": "-1bdp"}, "topology.queue.limit", "positive"),
    ({"kind": "red", "limit": "0pkt"}, "topology.queue.limit", "at least 1 packet"),
    ({"kind": "red", "limit": "10pkt"}, "topology.queue.max_th", "15pkt (default) is above the limit"),
    ({"kind": "red", "limit": "0.1bdp"}, "topology.queue.max_th", "above the limit (3pkt)"),
    ({"kind": "red", "limit": "100pkt", "max_th": "200pkt"}, "topology.queue.max_th", "above the limit"),
    ({"kind": "red", "limit": "100pkt", "min_th": "50%", "max_th": "20%"}, "topology.queue.max_th", "above min_th"),
    ({"kind": "red", "limit": "1bdp", "min_th": "50%", "max_th": "50%"}, "topology.queue.max_th", "above min_th"),
    ({"kind": "red", "limit": "1bdp", "min_th": "30pkt", "max_th": "80%"}, "topology.queue.max_th", "above min_th"),
    ({"kind": "red", "limit": "100pkt", "min_th": "5kB"}, "topology.queue.min_th", "in packets"),
    ({"kind": "red", "limit": "150kB", "max_th": "50pkt"}, "topology.queue.max_th", "in bytes"),
    ({"kind": "red", "limit": "100pkt", "min_th": "0%"}, "topology.queue.min_th", "(0%, 100%]"),
    ({"kind": "red", "limit": "100pkt", "max_th": "120%"}, "topology.queue.max_th", "(0%, 100%]"),
    ({"kind": "red", "limit": "100pkt", "min_th": 5}, "topology.queue.min_th", "no unit"),
    ({"kind": "red", "limit": "100pkt", "max_p": 0}, "topology.queue.max_p", "(0, 1]"),
    ({"kind": "red", "limit": "100pkt", "max_p": 1.5}, "topology.queue.max_p", "outside [0, 1]"),
    ({"kind": "red", "limit": "100pkt", "w_q": 0.0}, "topology.queue.w_q", "(0, 1]"),
    ({"kind": "red", "limit": "100pkt", "gentle": "yes"}, "topology.queue.gentle", "true or false"),
    ({"kind": "red", "limit": "100pkt", "mean_pkt_size": "0B"}, "topology.queue.mean_pkt_size", "> 0"),
    ({"kind": "red", "limit": "100pkt", "gentel": True}, "topology.queue.gentel", "did you mean 'gentle'"),
    ({"kind": "blue", "limit": "100pkt"}, "topology.queue.kind", "'droptail', 'red'"),
]


@pytest.mark.parametrize("queue, field, text", BAD, ids=[f"{i}-{b[1].split('.')[-1]}" for i, b in enumerate(BAD)])
def test_bad_red_values_give_one_line_naming_the_field(queue, field, text):
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(scenario(queue))
    message = str(info.value)
    assert "\n" not in message
    assert info.value.field == field, message
    assert text in message, message


def test_bdp_only_where_it_is_defined():
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(scenario("84pkt", reverse_queue=BINOMIAL))
    assert info.value.field == "topology.reverse_queue.limit"
    data = {"run": {"duration": "10s"},
            "topology": {"kind": "parking_lot", "hops": [{"rate": "10Mbit", "delay": "10ms", "queue": BINOMIAL}]},
            "flows": [{"algorithm": "newreno"}]}
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(data)
    assert info.value.field == "topology.hops[0].queue.limit"


@pytest.mark.parametrize(
    "change, field",
    [
        ({"min_th": 0.0}, "min_th"),
        ({"max_th": 4.0}, "max_th"),
        ({"max_th": 101.0}, "max_th"),
        ({"max_p": 0.0}, "max_p"),
        ({"w_q": 1.5}, "w_q"),
        ({"limit": {"pkts": 0}}, "limit"),
        ({"mean_pkt_bytes": 0}, "mean_pkt_bytes"),
    ],
)
def test_engine_checks_red_too(change, field):
    resolved = Scenario.from_dict(scenario({"kind": "red", "limit": "100pkt"})).resolve()
    bad = copy.deepcopy(resolved)
    bad["topology"]["bottleneck"]["queue"].update(change)
    with pytest.raises(ScenarioError) as info:
        load_core().Simulation(json.dumps(bad), 1)
    assert info.value.field == f"topology.bottleneck.queue.{field}"


def test_cli_validate_accepts_red(tmp_path):
    path = tmp_path / "red.toml"
    path.write_text(Scenario.from_dict(scenario(BINOMIAL)).to_toml())
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "ok: 4 flows, duration 10s"


# --- whole runs -----------------------------------------------------------------------------------

WARMUP_S = 10


def whole_run(queue: str, seconds: int = 60, seed: int = 1):
    """Four NewReno flows (starts staggered by 0.5 s) on 10 Mbit/s, 40 ms base RTT."""
    flows = "".join(f'\n[[flows]]\nalgorithm = "newreno"\nstart = "{k * 0.5}s"\n' for k in range(4))
    text = f"""
[run]
duration = "{seconds}s"
sample_interval = "10ms"
seed = {seed}
measure = ["{WARMUP_S}s", "{seconds}s"]

[topology]
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = {queue}
{flows}"""
    return run(text)


BINOMIAL_TOML = '{ kind = "red", limit = "1bdp", min_th = "20%", max_th = "80%" }'


@pytest.fixture(scope="module")
def red_run():
    return whole_run(BINOMIAL_TOML)


def test_red_average_stays_between_thresholds_with_early_drops(red_run):
    links = red_run.links
    b = links[(links.link == "bottleneck") & (links.time_s > WARMUP_S)]
    min_th, max_th = 6.6, 26.4  # 20 % and 80 % of the 33-packet limit
    # RED's own average (sampled every 10 ms) never leaves [min_th, max_th] after the warm-up.
    assert b.queue_avg.min() > min_th, b.queue_avg.describe()
    assert b.queue_avg.max() < max_th, b.queue_avg.describe()
    # Drops happen, and they are early (probabilistic) drops: the average never reaches max_th and
    # the instantaneous queue never reaches the limit, so nothing is forced.
    drops, early = b.drops_queue.sum(), b.drops_early.sum()
    assert early > 50
    assert early == drops
    assert b.queue_pkts.max() < 33
    summary = red_run.link_summary.set_index("link").loc["bottleneck"]
    assert summary.drops_early == summary.drops_queue > 0
    assert summary.utilisation > 0.95


def test_red_gives_lower_delay_than_droptail_at_similar_utilisation(red_run):
    droptail = whole_run('"33pkt"')  # the same buffer, tail drop
    red = red_run.link_summary.set_index("link").loc["bottleneck"]
    tail = droptail.link_summary.set_index("link").loc["bottleneck"]
    assert abs(red.utilisation - tail.utilisation) < 0.03
    assert red.qdelay_mean_ms < 0.75 * tail.qdelay_mean_ms, (red.qdelay_mean_ms, tail.qdelay_mean_ms)
    # Drop-tail has no average and no early drops.
    links = droptail.links[droptail.links.link == "bottleneck"]
    assert links.queue_avg.isna().all() and links.drops_early.sum() == 0 and tail.drops_early == 0


def test_red_runs_are_deterministic_per_seed(red_run):
    again = whole_run(BINOMIAL_TOML)
    assert again.links.drops_early.tolist() == red_run.links.drops_early.tolist()
    other = whole_run(BINOMIAL_TOML, seed=2)
    assert other.links.drops_early.tolist() != red_run.links.drops_early.tolist()
    assert not math.isnan(other.link_summary.set_index("link").loc["bottleneck"].drops_early)
