"""Scenario files: TOML round trip, one-line errors naming the key, the resolved JSON of internals.md."""

import copy
import json
import pickle
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccsim.errors import ConservationError, OutputExistsError, ScenarioError, UnitError
from ccsim.scenario import Scenario, load_scenario

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SINGLE = EXAMPLES / "single_flow.toml"
THREE = EXAMPLES / "three_flows.toml"


def example(path: Path = SINGLE) -> dict:
    return tomllib.loads(path.read_text())


def minimal() -> dict:
    return {
        "run": {"duration": "10s"},
        "topology": {"bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt"},
        "flows": [{"algorithm": "newreno"}],
    }


# --- round trip ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [SINGLE, THREE], ids=lambda p: p.name)
def test_examples_round_trip_through_toml(path):
    loaded = Scenario.from_toml(path)
    dumped = loaded.to_toml()
    reloaded = Scenario.from_toml_str(dumped)
    assert reloaded == loaded
    assert reloaded.resolve() == loaded.resolve()
    assert reloaded.to_toml() == dumped  # the canonical form is a fixed point


def test_round_trip_keeps_overrides_shorthands_and_options():
    data = minimal()
    data["run"]["measure"] = ["1.5s", "9s"]
    data["topology"].update(
        queue={"kind": "droptail", "limit": "150kB"},
        loss="0.5%",
        reverse_rate="1Mbit",
        reverse_delay="5ms",
        reverse_queue="20pkt",
        reverse_loss=0.01,
    )
    data["flows"] = [
        {"algorithm": "newreno", "count": 2, "name": "bulk", "tcp": {"mss": "1000B", "sack": False}},
        {"algorithm": "newreno", "start": "2s", "stop": "8s", "bytes": "10MB", "access_delay": "12.5ms",
         "params": {"halve_from": "cwnd"}},
    ]
    loaded = Scenario.from_dict(data)
    reloaded = Scenario.from_toml_str(loaded.to_toml())
    assert reloaded == loaded
    assert reloaded.resolve() == loaded.resolve()
    # only the keys a flow overrode are written under [flows.tcp]
    assert tomllib.loads(loaded.to_toml())["flows"][0]["tcp"] == {"mss": "1kB", "sack": False}
    assert "tcp" not in tomllib.loads(loaded.to_toml())["flows"][1]


def test_load_scenario_accepts_a_path_or_toml_text():
    from_path = load_scenario(SINGLE)
    assert load_scenario(str(SINGLE)) == from_path
    assert load_scenario(SINGLE.read_text()) == from_path


# --- resolve -----------------------------------------------------------------------------------------

# The example of docs/internals.md, which examples/single_flow.toml describes.
INTERNALS_EXAMPLE = {
    "ccsim_resolved": 4,
    "duration_ns": 60000000000,
    "sample_interval_ns": 100000000,
    "measure_start_ns": 0,
    "measure_end_ns": 60000000000,
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate_bps": 10000000, "delay_ns": 20000000,
                       "queue": {"kind": "droptail", "limit": {"pkts": 84}},
                       "loss_rate": 0.0, "loss_changes": [], "loss_model": {"kind": "bernoulli"}},
        "reverse": {"rate_bps": 10000000, "delay_ns": 20000000,
                    "queue": {"kind": "droptail", "limit": {"pkts": 10000}},
                    "loss_rate": 0.0, "loss_changes": [], "loss_model": {"kind": "bernoulli"}},
        "access_rate_bps": 1000000000,
        "access_queue": {"kind": "droptail", "limit": {"pkts": 1000}},
        "reverse_access_queue": {"kind": "droptail", "limit": {"pkts": 1000}},
    },
    "flows": [
        {"name": "flow0", "intervals": [{"start_ns": 0, "stop_ns": 60000000000}], "start_spread_ns": 0,
         "access_delay": {"kind": "fixed", "delay_ns": 0},
         "route": {"kind": "dumbbell", "direction": "forward"},
         "traffic": {
             "kind": "tcp", "algorithm": "newreno", "params": {"halve_from": "flight"},
             "tcp": {"profile": "freebsd9", "mss_bytes": 1448, "header_bytes": 52, "initial_window_pkts": 3,
                     "initial_ssthresh": {"kind": "unlimited"},
                     "sack": True, "delayed_ack": True, "delayed_ack_timeout_ns": 100000000, "abc_limit": 2,
                     "min_rto_ns": 30000000, "initial_rto_ns": 3000000000, "max_rto_ns": 64000000000,
                     "rwnd_bytes": 67108864, "dupack_threshold": 3, "limited_transmit": True,
                     "rto_estimator": "freebsd", "timer_granularity_ns": 1000000, "max_burst_pkts": 0,
                     "ssthresh_whole_packets": False, "sack_recovery": "rfc6675",
                     "slow_start_rule": "freebsd", "recovery_window": "rfc6675", "delayed_ack_rule": "rfc5681",
                     "loss_detection": "dupack", "partial_ack_rto": "every", "send_jitter_ns": 125_000},
             "transfer": {"kind": "unlimited"}, "app_rate": {"kind": "unlimited"}}},
    ],
}


def test_single_flow_resolves_to_the_internals_example():
    resolved = Scenario.from_toml(SINGLE).resolve()
    assert resolved == INTERNALS_EXAMPLE
    # exact JSON types: integers stay integers, the loss rate is a float
    assert json.loads(json.dumps(resolved)) == INTERNALS_EXAMPLE
    assert isinstance(resolved["topology"]["bottleneck"]["loss_rate"], float)


def test_defaults_are_written_out_in_resolve():
    resolved = Scenario.from_dict(minimal()).resolve()
    expected = copy.deepcopy(INTERNALS_EXAMPLE)
    expected.update(duration_ns=10 * 10**9, measure_end_ns=10 * 10**9)
    expected["flows"][0]["intervals"] = [{"start_ns": 0, "stop_ns": 10 * 10**9}]
    expected["flows"][0]["traffic"]["params"] = {}
    assert resolved == expected


def test_three_flows_resolves_names_times_and_window():
    resolved = Scenario.from_toml(THREE).resolve()
    assert resolved["duration_ns"] == 100 * 10**9
    assert (resolved["measure_start_ns"], resolved["measure_end_ns"]) == (45 * 10**9, 60 * 10**9)
    assert [(f["name"], f["intervals"][0]["start_ns"] // 10**9, f["intervals"][0]["stop_ns"] // 10**9) for f in resolved["flows"]] == [
        ("first", 0, 60), ("second", 20, 80), ("third", 40, 100)
    ]


def test_count_expands_flows_with_names():
    data = minimal()
    data["flows"] = [{"algorithm": "newreno", "count": 2}, {"algorithm": "newreno", "count": 2, "name": "x"},
                     {"algorithm": "newreno"}]
    scenario = Scenario.from_dict(data)
    names = [f["name"] for f in scenario.resolve()["flows"]]
    assert names == ["flow0", "flow1", "x-0", "x-1", "flow4"]
    assert scenario.flow_names() == names
    assert scenario.flow_count == 5


def test_flow_tcp_overrides_the_global_table():
    data = minimal()
    data["tcp"] = {"mss": "1000B", "min_rto": "1s", "initial_rto": "3s"}
    data["flows"] = [{"algorithm": "newreno", "tcp": {"mss": "500B", "delayed_ack": False}}, {"algorithm": "newreno"}]
    flows = Scenario.from_dict(data).resolve()["flows"]
    tcp0, tcp1 = flows[0]["traffic"]["tcp"], flows[1]["traffic"]["tcp"]
    assert (tcp0["mss_bytes"], tcp0["delayed_ack"], tcp0["min_rto_ns"]) == (500, False, 10**9)
    assert (tcp1["mss_bytes"], tcp1["delayed_ack"], tcp1["initial_rto_ns"]) == (1000, True, 3 * 10**9)


def test_topology_options_resolve():
    data = minimal()
    data["topology"].update(queue={"limit": "150kB"}, loss="1%", reverse_rate="1Mbit", reverse_queue="20pkt", access_rate="100Mbit")
    topo = Scenario.from_dict(data).resolve()["topology"]
    assert topo["bottleneck"]["queue"] == {"kind": "droptail", "limit": {"bytes": 150_000}}
    assert topo["bottleneck"]["loss_rate"] == 0.01
    assert topo["reverse"] == {"rate_bps": 1_000_000, "delay_ns": 20_000_000,
                               "queue": {"kind": "droptail", "limit": {"pkts": 20}}, "loss_rate": 0.0, "loss_changes": [], "loss_model": {"kind": "bernoulli"}}
    assert topo["access_rate_bps"] == 100_000_000


def test_access_queue_sets_both_directions_of_every_access_link():
    data = minimal()
    data["topology"]["access_queue"] = "50pkt"
    topo = Scenario.from_dict(data).resolve()["topology"]
    assert topo["access_queue"] == topo["reverse_access_queue"] == {"kind": "droptail", "limit": {"pkts": 50}}
    lot = {"kind": "parking_lot", "hops": [{"rate": "10Mbit", "delay": "10ms", "queue": "50pkt"}], "access_queue": "30kB"}
    data["topology"] = lot
    topo = Scenario.from_dict(data).resolve()["topology"]
    assert topo["access_queue"] == topo["reverse_access_queue"] == {"kind": "droptail", "limit": {"bytes": 30_000}}
    # the canonical TOML keeps the key
    assert Scenario.from_toml_str(Scenario.from_dict(data).to_toml()).resolve()["topology"] == topo


@pytest.mark.parametrize(
    "queue, field",
    [("0pkt", "topology.access_queue"), ("1000B", "topology.access_queue"),
     ({"kind": "red", "limit": "1bdp"}, "topology.access_queue.limit")],
)
def test_a_bad_access_queue_is_named(queue, field):
    data = minimal()
    data["topology"]["access_queue"] = queue
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict(data)
    assert err.value.field == field


# --- errors ------------------------------------------------------------------------------------------


def _set(path, value):
    def mutate(d):
        *parents, last = path
        for key in parents:
            d = d[key]
        d[last] = value
    return mutate


def _del(path):
    def mutate(d):
        *parents, last = path
        for key in parents:
            d = d[key]
        del d[last]
    return mutate


def _add_flow(**flow):
    return lambda d: d["flows"].append({"algorithm": "newreno", **flow})


BAD = [
    # (id, mutation, field, reason fragment)
    ("unknown key", _set(["topology", "bandwidth"], "10Mbit"), "topology.bandwidth", "unknown key"),
    ("unknown key typo", _set(["run", "duraton"], "1s"), "run.duraton", "did you mean 'duration'"),
    ("unknown top-level table", _set(["flow"], {}), "flow", "unknown key"),
    ("unknown key in flow", _set(["flows", 0, "algo"], "newreno"), "flows[0].algo", "unknown key"),
    ("unknown key in flow tcp", _set(["flows", 0, "tcp"], {"msss": "1B"}), "flows[0].tcp.msss", "unknown key"),
    ("zero rate", _set(["topology", "bottleneck_rate"], "0Mbit"), "topology.bottleneck_rate", "must be > 0"),
    ("negative rate", _set(["topology", "bottleneck_rate"], "-10Mbit"), "topology.bottleneck_rate", "negative"),
    ("zero access rate", _set(["topology", "access_rate"], "0bit"), "topology.access_rate", "must be > 0"),
    ("zero reverse rate", _set(["topology", "reverse_rate"], "0bit"), "topology.reverse_rate", "must be > 0"),
    ("Mbps", _set(["topology", "bottleneck_rate"], "10Mbps"), "topology.bottleneck_rate", "write 'Mbit'"),
    ("bare number rate", _set(["topology", "bottleneck_rate"], 10_000_000), "topology.bottleneck_rate", "no unit"),
    ("malformed unit", _set(["topology", "bottleneck_rate"], "10Mbitt"), "topology.bottleneck_rate", "unknown unit"),
    ("unit first", _set(["topology", "bottleneck_delay"], "ms20"), "topology.bottleneck_delay", "not a time"),
    ("queue of 0", _set(["topology", "queue"], "0pkt"), "topology.queue", "must hold at least 1 packet"),
    ("queue table of 0", _set(["topology", "queue"], {"kind": "droptail", "limit": "0pkt"}), "topology.queue",
     "must hold at least 1 packet"),
    ("queue below one packet", _set(["topology", "queue"], "1000B"), "topology.queue", "must hold at least 1 packet"),
    ("reverse queue of 0", _set(["topology", "reverse_queue"], "0pkt"), "topology.reverse_queue", "at least 1 packet"),
    ("unknown queue kind", _set(["topology", "queue"], {"kind": "codel", "limit": "10pkt"}), "topology.queue.kind",
     "droptail"),
    ("queue in pkts", _set(["topology", "queue"], "84pkts"), "topology.queue", "write 'pkt'"),
    ("queue table in pkts", _set(["topology", "queue"], {"limit": "84pkts"}), "topology.queue.limit", "write 'pkt'"),
    ("missing queue", _del(["topology", "queue"]), "topology.queue", "missing"),
    ("unknown topology", _set(["topology", "kind"], "ring"), "topology.kind", "dumbbell"),
    ("loss of 1", _set(["topology", "loss"], 1.0), "topology.loss", "[0, 1)"),
    ("loss of 100%", _set(["topology", "loss"], "100%"), "topology.loss", "[0, 1)"),
    ("negative loss", _set(["topology", "loss"], -0.01), "topology.loss", "outside [0, 1]"),
    ("loss as string", _set(["topology", "loss"], "0.01"), "topology.loss", "percent"),
    ("nan loss", _set(["topology", "loss"], float("nan")), "topology.loss", "NaN"),
    ("zero duration", _set(["run", "duration"], "0s"), "run.duration", "must be > 0"),
    ("missing duration", _del(["run", "duration"]), "run.duration", "missing"),
    ("bare duration", _set(["run", "duration"], 60), "run.duration", "no unit"),
    ("zero sample interval", _set(["run", "sample_interval"], "0ms"), "run.sample_interval", "must be > 0"),
    ("sample interval too long", _set(["run", "sample_interval"], "61s"), "run.sample_interval", "longer than the run"),
    ("measure reversed", _set(["run", "measure"], ["10s", "5s"]), "run.measure", "not after start"),
    ("measure past end", _set(["run", "measure"], ["10s", "70s"]), "run.measure", "after the end of the run"),
    ("measure one value", _set(["run", "measure"], ["10s"]), "run.measure", "at least 2"),
    ("measure bad unit", _set(["run", "measure"], ["10s", "20"]), "run.measure[1]", "no unit"),
    ("negative seed", _set(["run", "seed"], -1), "run.seed", ">= 0"),
    ("string seed", _set(["run", "seed"], "1"), "run.seed", "integer"),
    ("no flows", _set(["flows"], []), "flows", "at least one"),
    ("flows missing", _del(["flows"]), "flows", "missing"),
    ("start at end", _set(["flows", 0, "start"], "60s"), "flows[0].start", "at or after the end of the run (60s)"),
    ("start after end", _add_flow(start="70s"), "flows[1].start", "70s is at or after the end of the run (60s)"),
    ("stop before start", _add_flow(start="20s", stop="10s"), "flows[1].stop", "not after start"),
    ("stop equal start", _add_flow(start="20s", stop="20s"), "flows[1].stop", "not after start"),
    ("stop after end", _set(["flows", 0, "stop"], "61s"), "flows[0].stop", "after the end of the run"),
    ("zero count", _set(["flows", 0, "count"], 0), "flows[0].count", ">= 1"),
    ("float count", _set(["flows", 0, "count"], 1.5), "flows[0].count", "integer"),
    ("huge count", _set(["flows", 0, "count"], 10**6), "flows[0].count", "<= 10000"),
    ("zero bytes", _set(["flows", 0, "bytes"], "0B"), "flows[0].bytes", "must be > 0"),
    ("missing algorithm", _del(["flows", 0, "algorithm"]), "flows[0].algorithm", "missing"),
    ("algorithm not a string", _set(["flows", 0, "algorithm"], 3), "flows[0].algorithm", "string"),
    ("param of a bad type", _set(["flows", 0, "params"], {"halve_from": [1]}), "flows[0].params.halve_from",
     "number, true/false or a string"),
    ("duplicate names", _add_flow(name="flow0"), "flows[1].name", "duplicate flow name 'flow0'"),
    ("bool as string", _set(["tcp", "sack"], "yes"), "tcp.sack", "true or false"),
    ("zero mss", _set(["tcp", "mss"], "0B"), "tcp.mss", "must be > 0"),
    ("zero initial window", _set(["tcp", "initial_window"], 0), "tcp.initial_window", ">= 1"),
    ("rto order", _set(["tcp", "max_rto"], "20ms"), "tcp.max_rto", "below min_rto"),  # min_rto 30 ms
    ("flow rto order", _set(["flows", 0, "tcp"], {"initial_rto": "20ms"}), "flows[0].tcp.initial_rto", "outside"),
    ("tiny rwnd", _set(["tcp", "rwnd"], "1000B"), "tcp.rwnd", "smaller than one segment"),
    ("run not a table", _set(["run"], 5), "run", "must be a table"),
    # the engine's types, inside the kind-tagged traffic of the resolved document (issue 31)
    ("u32 overflow", _set(["tcp", "abc"], 2**63 - 1), "tcp.abc", "expected u32"),
    ("u32 overflow in a flow", _set(["flows", 0, "tcp"], {"abc": 2**32}), "flows[0].tcp.abc", "expected u32"),
    ("u32 overflow of a key without alias", _set(["tcp", "dupack_threshold"], 2**32), "tcp.dupack_threshold", "expected u32"),
]


@pytest.mark.parametrize("mutate, field, reason", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_is_one_line_naming_the_field(mutate, field, reason):
    data = example()
    mutate(data)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(data)
    err = e.value
    assert err.field == field, str(err)
    assert reason in err.reason, str(err)
    assert str(err) == f"{field}: {err.reason}"
    assert "\n" not in str(err)


def test_the_brief_s_example_messages():
    data = example()
    data["flows"].append({"algorithm": "newreno", "start": "70s"})
    with pytest.raises(ScenarioError, match=r"^flows\[1\]\.start: 70s is at or after the end of the run \(60s\)$"):
        Scenario.from_dict(data)
    data = example()
    data["topology"]["bottleneck_rate"] = "0bit"
    with pytest.raises(ScenarioError, match=r"^topology\.bottleneck_rate: must be > 0$"):
        Scenario.from_dict(data)
    data = example()
    data["topology"]["queue"] = "0pkt"
    with pytest.raises(ScenarioError, match=r"^topology\.queue: must hold at least 1 packet$"):
        Scenario.from_dict(data)
    data = example()
    data["run"]["duration"] = "0s"
    with pytest.raises(ScenarioError, match=r"^run\.duration: must be > 0$"):
        Scenario.from_dict(data)


def test_unit_errors_keep_their_class():
    data = example()
    data["topology"]["bottleneck_rate"] = "10 Mbit"
    with pytest.raises(UnitError, match=r"^topology\.bottleneck_rate: '10 Mbit' contains a space"):
        Scenario.from_dict(data)


def test_unknown_algorithm_is_named_with_the_known_ones():
    core = pytest.importorskip("ccsim._core")
    known = [a["name"] for a in core.algorithms()]
    assert "newreno" in known
    data = example()
    data["flows"][0]["algorithm"] = "no_such_cc"
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(data)
    assert e.value.field == "flows[0].algorithm"
    assert e.value.reason == f"unknown algorithm 'no_such_cc' (known: {', '.join(known)})"


def test_toml_syntax_error_names_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[run]\nduration = \n")
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(path)
    assert e.value.field == str(path)
    assert "invalid TOML" in e.value.reason
    assert "\n" not in str(e.value)


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "nope.toml")


def test_models_are_immutable():
    scenario = Scenario.from_toml(SINGLE)
    with pytest.raises(Exception):
        scenario.run.duration_ns = 1


# --- the user's key behind a resolved path ---------------------------------------------------------

RICH = """
[run]
duration = "10s"
measure = ["1s", "9s"]
[topology]
bottleneck_rate = "10Mbit"
bottleneck_delay = "10ms"
queue = { kind = "red", limit = "50pkt", mean_pkt_size = "1000B" }
loss = [["0s", 0.0], ["2s", 0.01], ["5s", 0.0]]
reverse_loss = [["0s", 0.0], ["3s", 0.02]]
access_queue = "100pkt"
[tcp]
profile = "linux"
mss = "1000B"
[[flows]]
count = 3
algorithm = "hd"
params = { p_max = 0.1 }
tcp = { sack = false, slow_start = false }
start = { uniform = ["0s", "1s"] }
access_delay = "5ms"
[[flows]]
kind = "web"
algorithm = "newreno"
params = { halve_from = "cwnd" }
arrival_rate = 2.0
size_mean = "20kB"
[[flows]]
kind = "cbr"
rate = "1Mbit"
[[flows]]
kind = "voip"
talk_spurts = true
count = 2
active = [["1s", "2s"], ["3s", "4s"]]
[[flows]]
algorithm = "newreno"
bytes = "1MB"
rate_limit = "2Mbit"
direction = "reverse"
"""


def _resolved_paths(node, prefix=""):
    """Every path of a resolved document (tables, arrays and values)."""
    if prefix:
        yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _resolved_paths(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _resolved_paths(v, f"{prefix}[{i}]")


def _names_a_key_of_the_file(sc: Scenario, key: str) -> bool:
    """``key`` is a key the scenario file can hold: a table, or a key of it (an index after it allowed)."""
    from ccsim.scenario import Flow, Hop, ParkingLot, Run, Tcp, Topology

    def keys(model):
        return {info.alias or name for name, info in model.model_fields.items()}

    parts = [p.split("[")[0] for p in key.split(".")]
    if parts[0] == "flows" and key.startswith("flows["):
        i = int(key[len("flows["):key.index("]")])
        rest = parts[1:]
        return i < len(sc.flows) and (not rest or rest[0] in keys(Flow)) and (
            len(rest) < 2 or (rest[0] == "tcp" and rest[1] in keys(Tcp)) or rest[0] == "params")
    table = {"run": Run, "tcp": Tcp, "topology": type(sc.topology)}.get(parts[0])
    if table is None:
        return key == "flows"
    if len(parts) == 1:
        return True
    if table is ParkingLot and parts[1] == "hops" and len(parts) > 2:
        return parts[2] in keys(Hop)
    return parts[1] in keys(table)


@pytest.mark.parametrize("source", [RICH, EXAMPLES / "parking_lot.toml", THREE], ids=["rich", "parking_lot", "three"])
def test_every_path_of_the_resolved_document_names_a_key_of_the_file(source):
    sc = load_scenario(source)
    unnamed = [(path, sc.user_field(path)) for path in _resolved_paths(sc.resolve())
               if path != "ccsim_resolved" and not _names_a_key_of_the_file(sc, sc.user_field(path))]
    assert not unnamed, unnamed


def test_a_resolved_path_is_named_by_the_key_that_wrote_it():
    sc = load_scenario(RICH)  # engine flows: 0-2 of flows[0], 3 web, 4 cbr, 5-6 voip, 7 the last
    cases = {
        "measure_end_ns": "run.measure",
        "topology.bottleneck.rate_bps": "topology.bottleneck_rate",
        "topology.bottleneck.queue.mean_pkt_bytes": "topology.queue.mean_pkt_size",
        "topology.bottleneck.queue.limit.pkts": "topology.queue.limit.pkts",
        "topology.bottleneck.loss_changes[1].at_ns": "topology.loss[2]",
        "topology.reverse.loss_changes[0].loss_rate": "topology.reverse_loss[1]",
        "topology.reverse_access_queue.limit": "topology.access_queue.limit",
        "flows[2].traffic.tcp.sack": "flows[0].tcp.sack",
        "flows[2].traffic.tcp.initial_ssthresh.kind": "flows[0].tcp.slow_start",  # folded into it
        "flows[2].traffic.tcp.mss_bytes": "tcp.mss",
        "flows[1].access_delay.delay_ns": "flows[0].access_delay",
        "flows[0].start_spread_ns": "flows[0].start",
        "flows[3].traffic.params.halve_from": "flows[1].params.halve_from",
        "flows[3].traffic.size_mean_bytes": "flows[1].size_mean",
        "flows[4].traffic.rate_bps": "flows[2].rate",
        "flows[6].intervals[1].stop_ns": "flows[3].active[1]",
        "flows[6].traffic.pattern.mean_off_ns": "flows[3].mean_off",
        "flows[7].intervals[0].stop_ns": "flows[4].stop",
        "flows[7].traffic.transfer.bytes": "flows[4].bytes",
        "flows[7].traffic.app_rate.rate_bps": "flows[4].rate_limit",
        "flows[7].route.direction": "flows[4].direction",
        "flows": "flows",
        "not.written": "not.written",
    }
    assert {path: sc.user_field(path) for path in cases} == cases
    lot = load_scenario(EXAMPLES / "parking_lot.toml")
    assert lot.user_field("topology.reverse_hops[1].delay_ns") == "topology.hops[1].delay"
    assert lot.user_field("flows[0].route.last_hop") == "flows[0].path"


def test_a_copy_names_keys_by_its_own_flows():
    sc = load_scenario(RICH)
    assert sc.user_field("flows[3].traffic.arrival_rate") == "flows[1].arrival_rate"
    fewer = sc.model_copy(update={"flows": sc.flows[1:]})
    assert fewer.user_field("flows[0].traffic.arrival_rate") == "flows[0].arrival_rate"


# --- the error classes ------------------------------------------------------------------------------


def test_scenario_error_from_the_engine_s_single_message():
    err = ScenarioError("flows[0].params.beta: 2 is out of range [0, 1]")
    assert (err.field, err.reason) == ("flows[0].params.beta", "2 is out of range [0, 1]")
    assert str(err) == "flows[0].params.beta: 2 is out of range [0, 1]"
    assert str(ScenarioError("no field here")) == "no field here"
    again = pickle.loads(pickle.dumps(ScenarioError("a.b", "c")))
    assert (type(again), again.field, again.reason) == (ScenarioError, "a.b", "c")


def test_error_hierarchy():
    assert issubclass(UnitError, ScenarioError) and issubclass(ScenarioError, ValueError)
    assert issubclass(ConservationError, RuntimeError)
    assert issubclass(OutputExistsError, FileExistsError)


# --- no other exception escapes ---------------------------------------------------------------------

junk = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 10**12), st.floats(allow_nan=True),
    st.sampled_from(["", "10Mbit", "20ms", "84pkt", "1%", "abc", "-1s", "1.5B", "newreno", "0s", "99s"]),
    st.lists(st.sampled_from(["1s", "2s", 3]), max_size=3), st.dictionaries(st.sampled_from(["limit", "kind", "x"]), st.just("1pkt")),
)


def _paths(data, prefix=()):
    if isinstance(data, dict):
        for key, value in data.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield prefix + (i,)
            yield from _paths(value, prefix + (i,))


PATHS = sorted(_paths(example()), key=str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), junk), min_size=1, max_size=3))
def test_any_mutation_is_valid_or_a_scenario_error(mutations):
    data = example()
    for path, value in mutations:
        try:
            _set(list(path), value)(data)
        except (KeyError, IndexError, TypeError):
            continue
    try:
        scenario = Scenario.from_dict(data)
    except ScenarioError as e:
        assert "\n" not in str(e)
        assert e.field
        return
    assert Scenario.from_toml_str(scenario.to_toml()) == scenario
