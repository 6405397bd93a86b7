"""Numbers on screen name what they measure (issue 14): the bottleneck is the busiest link of any
topology, an on/off flow's goodput while on stands beside its window average, Jain's index names
the flows it covers, percentiles stay inside the observed range and are printed with the digits the
histogram supports, per-interval rows exist only within a flow's life, the run records its git
revision when installed from a wheel, and claims tables carry a verdict."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ccsim
from ccsim.cli import cli
from ccsim.experiments.registry import Claim, Verdict, within
from ccsim.precision import fmt_percentile, is_percentile_column

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# A parking lot whose middle hop is the slowest: its first hop is NOT the bottleneck.
PARKING_LOT = """
[run]
duration = "20s"
measure = ["5s", "20s"]
[topology]
kind = "parking_lot"
hops = [
    { rate = "10Mbit", delay = "5ms", queue = "50pkt" },
    { rate = "5Mbit", delay = "5ms", queue = "50pkt" },
    { rate = "10Mbit", delay = "5ms", queue = "50pkt" },
]
[[flows]]
name = "long"
algorithm = "newreno"
path = [0, 2]
[[flows]]
name = "cross1"
algorithm = "newreno"
path = [1, 1]
"""

ON_OFF = """
[run]
duration = "20s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "10ms"
queue = "50pkt"
[[flows]]
name = "steady"
algorithm = "newreno"
[[flows]]
name = "onoff"
algorithm = "newreno"
active = [["5s", "10s"]]
"""


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("ccsim._core")


@pytest.fixture(scope="module")
def parking(core):
    return ccsim.run_toml(PARKING_LOT, seed=1)


def test_parking_lot_bottleneck_is_the_busiest_hop(parking):
    links = parking.link_summary.set_index("link")
    assert links["bottleneck"].sum() == 1
    assert bool(links.loc["hop1", "bottleneck"]), links[["utilisation", "drops_queue", "bottleneck"]]
    s = parking.run_summary
    assert s["bottleneck_rate_bps"] == 5e6
    assert s["bottleneck_utilisation"] == pytest.approx(links.loc["hop1", "utilisation"])
    assert s["bottleneck_utilisation"] > 0.95 and links.loc["hop0", "utilisation"] < 0.8
    assert s["bottleneck_qdelay_mean_ms"] == pytest.approx(links.loc["hop1", "qdelay_mean_ms"])
    assert list(parking.link_summary["link"]).index("hop1") == s["bottleneck_link"]


def test_parking_lot_cli_names_the_bottleneck_and_lists_every_hop(core, tmp_path):
    path = tmp_path / "pl.toml"
    path.write_text(PARKING_LOT)
    result = CliRunner().invoke(cli, ["run", str(path), "--no-plots", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())  # the console wraps at 80 columns
    assert "bottleneck hop1 (busiest): utilisation" in out
    assert "hop0: utilisation" in out and "hop2: utilisation" in out
    assert "share: of hop1's capacity" in out
    # the share column is of hop1's 5 Mbit/s, not of the first hop's 10
    cross = re.search(r"cross1 \S+ newreno \S+ ([\d.]+) \S+ ([\d.]+) %", out)
    assert cross, out
    assert float(cross.group(2)) == pytest.approx(float(cross.group(1)) / 5 * 100, abs=0.06)


def test_dumbbell_bottleneck_is_still_the_bottleneck_link(core):
    result = ccsim.run(EXAMPLES / "single_flow.toml", seed=1)
    flagged = result.link_summary[result.link_summary["bottleneck"]]
    assert list(flagged["link"]) == ["bottleneck"]


def test_on_off_flow_goodput_while_on(core):
    result = ccsim.run_toml(ON_OFF, seed=1)
    rows = result.summary.set_index("name")
    window_s = (result.run_summary["measure_end_s"] - result.run_summary["measure_start_s"])
    assert rows.loc["onoff", "active_s"] == pytest.approx(5.0)
    assert rows.loc["steady", "active_s"] == pytest.approx(window_s)
    on = rows.loc["onoff", "goodput_active_bps"]
    assert on == pytest.approx(rows.loc["onoff", "goodput_bps"] * window_s / 5.0)
    assert on > 3 * rows.loc["onoff", "goodput_bps"]  # what the window average hides
    assert rows.loc["steady", "goodput_active_bps"] == pytest.approx(rows.loc["steady", "goodput_bps"])


def test_on_off_cli_prints_goodput_while_on(core, tmp_path):
    path = tmp_path / "onoff.toml"
    path.write_text(ON_OFF)
    result = CliRunner().invoke(cli, ["run", str(path), "--no-plots", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    m = re.search(r"onoff: on 5 s of the 20 s window, ([\d.]+) Mbit/s \(([\d.]+) %\) while on", out)
    assert m, out
    assert "steady: on" not in out  # an always-on flow has nothing to add


def test_jain_index_names_its_flows(core, tmp_path):
    result = ccsim.run(EXAMPLES / "voip_with_bulk.toml", seed=1)
    counted = result.summary[result.summary["in_jain"]]
    assert list(counted["name"]) == ["bulk"] and result.run_summary["jain_flows"] == 1
    cli_run = CliRunner().invoke(cli, ["run", str(EXAMPLES / "voip_with_bulk.toml"), "--no-plots", "--out", str(tmp_path / "v")])
    out = " ".join(cli_run.stdout.split())
    assert "Jain index 1.000 (one TCP flow: bulk, nothing to compare); not counted: cbr, call" in out


def test_jain_index_counts_flows_active_in_the_window(core):
    result = ccsim.run(EXAMPLES / "three_flows.toml", seed=1)  # window 45-60 s: all three are on
    assert result.summary["in_jain"].all() and result.run_summary["jain_flows"] == 3
    late = ccsim.run_toml(ON_OFF.replace('active = [["5s", "10s"]]', 'active = [["0s", "1s"]]').replace(
        '[run]\nduration = "20s"', '[run]\nduration = "20s"\nmeasure = ["5s", "20s"]'), seed=1)
    assert list(late.summary.loc[late.summary["in_jain"], "name"]) == ["steady"]


def test_percentiles_lie_within_the_observed_range(core):
    result = ccsim.run(EXAMPLES / "three_flows.toml", seed=1)
    s = result.summary
    for q in ("rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms"):
        assert (s[q] >= s["rtt_min_ms"] - 1e-9).all() and (s[q] <= s["rtt_max_ms"] + 1e-9).all(), s[[q, "rtt_min_ms", "rtt_max_ms"]]
    links = result.link_summary
    assert (links["qdelay_p50_ms"].fillna(0) <= links["qdelay_max_ms"] + 1e-9).all()


def test_percentiles_print_three_significant_digits():
    assert fmt_percentile(140.509184) == "141"
    assert fmt_percentile(33.649, "ms") == "33.6 ms"
    assert fmt_percentile(0.51234) == "0.512"
    assert fmt_percentile(9.996) == "10.0"
    assert fmt_percentile(float("nan")) == "-" and fmt_percentile(None) == "-"
    assert is_percentile_column("rtt_p95_ms") and is_percentile_column("owd_p50_ms")
    assert not is_percentile_column("rtt_mean_ms") and not is_percentile_column("step_ms")


def test_flows_table_rows_only_within_a_flows_life(core):
    result = ccsim.run(EXAMPLES / "three_flows.toml", seed=1)  # first 0-60 s, second 20-80, third 40-100
    flows = result.flows
    assert flows["active"].dtype == bool
    third = flows[flows["flow"] == 2]
    assert third["time_s"].min() > 40 - 1e-9  # no rows before it starts
    first = flows[flows["flow"] == 0]
    after = first[first["time_s"] > 60 + 1e-9]
    assert not after["active"].any()
    assert len(after) <= 2 and (after["goodput_bps"] + after["send_rate_bps"] > 0).all()  # only while data still moves
    assert first[(first["time_s"] > 1) & (first["time_s"] <= 60)]["active"].all()
    # the README's pivot: flow names as columns, NaN where a flow does not run
    names = result.summary.set_index("flow")["name"]
    cwnd = flows[flows["active"]].pivot(index="time_s", columns="flow", values="cwnd_pkts").rename(columns=names)
    assert list(cwnd.columns) == ["first", "second", "third"]
    assert cwnd.loc[cwnd.index > 70, "first"].isna().all() and cwnd.loc[cwnd.index < 20, "second"].isna().all()


def test_on_off_rows_keep_off_periods_marked_inactive(core):
    result = ccsim.run_toml(ON_OFF, seed=1)
    onoff = result.flows[result.flows["flow"] == 1]
    assert onoff["time_s"].min() > 5 - 1e-9
    assert onoff[(onoff["time_s"] > 5.5) & (onoff["time_s"] <= 10)]["active"].all()
    assert not onoff[onoff["time_s"] > 11]["active"].any()


def test_readme_pivot_example_uses_active_rows():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert 'result.flows[result.flows.active].pivot(index="time_s", columns="flow", values="cwnd_pkts")' in readme


def test_git_revision_is_built_in(core, monkeypatch):
    from ccsim import result as result_module

    revision = core.GIT_REVISION
    assert revision is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", revision)
    if revision is None:
        pytest.skip("extension built outside a git checkout")
    # an installed wheel has no source tree to ask: the built-in revision is recorded
    monkeypatch.setattr(result_module, "_source_tree_revision", lambda: None)
    assert result_module.git_revision() == revision
    run = ccsim.run(EXAMPLES / "single_flow.toml", seed=1)
    assert run.meta["git_revision"] == revision


def test_claim_verdicts_state_their_tolerance():
    verdict = within(lambda sweep: 91.4, 82.0, 5.0, "pt")(None)
    assert verdict.holds is False and "+9.4 pt" in verdict.reason and "\u00b15 pt" in verdict.reason
    assert str(verdict).startswith("differs:")
    assert within(lambda sweep: 80.0, 82.0, 5.0, "pt")(None).holds is True
    claim = Claim("x", "1", lambda sweep: "1")
    assert claim.judge(None).holds is None and claim.judge(None).label == "not judged"
    broken = Claim("x", "1", lambda sweep: "1", verdict=lambda sweep: 1 / 0)
    assert broken.judge(None).holds is None and "ZeroDivisionError" in broken.judge(None).reason
    assert Verdict(True, "").label == "agrees"


def test_meta_records_the_environment(core):
    import platform

    run = ccsim.run_toml(ON_OFF, seed=1)
    env = run.meta["environment"]
    assert env["python"] == platform.python_version() and env["os"] and env["host"]
    assert env["packages"]["numpy"] and env["packages"]["pyarrow"]


def test_report_numbers_share_one_style():
    from ccsim.report import _fmt_float

    assert _fmt_float(1e7) == "10,000,000" and _fmt_float(153077.0) == "153,077"  # once 1e+07 beside 153077.0
    assert _fmt_float(9628813.866) == "9,628,814" and _fmt_float(1234.5) == "1,234.5"
    assert _fmt_float(0.5) == "0.5" and _fmt_float(float("nan")) == "-"


def test_delay_hist_holds_every_packet_and_matches_the_percentiles(core, tmp_path):
    import numpy as np

    from ccsim import plots

    result = ccsim.run(EXAMPLES / "three_flows.toml", seed=1)
    h = result.delay_hist
    links = result.link_summary.set_index("link")
    q = h[(h["what"] == "qdelay") & (h["name"] == "bottleneck")].sort_values("value_ms")
    assert q["count"].sum() == links.loc["bottleneck", "departures"]  # one sample per packet sent in the window
    rtt = h[h["what"] == "rtt"]
    assert set(rtt["name"]) == {"first", "second", "third"}
    for name, g in rtt.groupby("name"):
        g = g.sort_values("value_ms")
        cdf = np.cumsum(g["count"].to_numpy()) / g["count"].sum()
        p50 = g["value_ms"].to_numpy()[np.searchsorted(cdf, 0.5)]
        assert p50 == pytest.approx(result.summary.set_index("name").loc[name, "rtt_p50_ms"])
    path = plots.plot_delay_cdf(h, tmp_path, "rtt")
    assert path.name == "rtt_cdf_per_packet.png" and path.stat().st_size > 10_000
