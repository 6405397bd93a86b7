"""``ccsim compare``: two run directories side by side, B's difference from A in percent."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim.cli import cli
from ccsim.compare import FLOW_METRICS, LINK_METRICS, compare_runs, scenario_differences
from ccsim.result import Result

TWO_FLOWS = """
[run]
duration = "4s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "10ms"
queue = "40pkt"
loss = {loss}
[[flows]]
name = "{first}"
algorithm = "newreno"
[[flows]]
name = "late"
algorithm = "htcp"
start = "1s"
"""


def _run(tmp_path: Path, tag: str, loss: float = 0.0, first: str = "early") -> Path:
    scenario = tmp_path / f"{tag}.toml"
    scenario.write_text(TWO_FLOWS.format(loss=loss, first=first))
    out = tmp_path / tag
    result = CliRunner().invoke(cli, ["-q", "run", str(scenario), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    return tmp, _run(tmp, "clean"), _run(tmp, "lossy", loss=0.01)


def test_rows_hold_both_values_and_the_difference(runs):
    _, clean, lossy = runs
    a, b = Result.load(clean), Result.load(lossy)
    c = compare_runs(a, b, "clean", "lossy")
    assert list(c.rows["scope"].unique()) == ["early", "late", "bottleneck"]
    assert len(c.rows) == 2 * len(FLOW_METRICS) + len(LINK_METRICS)
    goodput = c.rows[(c.rows["scope"] == "late") & (c.rows["metric"] == "goodput (Mbit/s)")].iloc[0]
    expected_a = a.summary.set_index("name").at["late", "goodput_bps"] / 1e6
    expected_b = b.summary.set_index("name").at["late", "goodput_bps"] / 1e6
    assert goodput["a"] == pytest.approx(expected_a) and goodput["b"] == pytest.approx(expected_b)
    assert goodput["diff_pct"] == pytest.approx((expected_b - expected_a) / expected_a * 100)
    drops = c.rows[(c.rows["scope"] == "bottleneck") & (c.rows["metric"] == "queue drops")].iloc[0]
    assert drops["a"] == a.link_summary.set_index("link").at["bottleneck", "drops_queue"]
    # the set-ups differ in the loss rate only, and the comparison says so
    assert c.notes == ["the scenarios differ in topology.bottleneck.loss_rate"]  # the resolved document's path


def test_a_run_against_itself_differs_by_nothing(runs):
    _, clean, _ = runs
    r = Result.load(clean)
    c = compare_runs(r, r)
    nonzero = c.rows[c.rows["a"] != 0]
    assert len(nonzero) > 10 and (nonzero["diff_pct"] == 0).all() and c.notes == []
    # a zero in A has no percentage
    assert c.rows.loc[c.rows["a"] == 0, "diff_pct"].isna().all()


def test_scenario_differences_name_the_paths():
    a = {"seed": 1, "topology": {"loss": 0.0, "rate": 10}, "flows": [{"algorithm": "newreno"}, {"algorithm": "chd"}]}
    b = {"seed": 2, "topology": {"loss": 0.01, "rate": 10}, "flows": [{"algorithm": "newreno"}, {"algorithm": "hd"}]}
    assert scenario_differences(a, b) == ["flows[1].algorithm", "topology.loss"]
    assert scenario_differences(a, {**a, "flows": a["flows"][:1]}) == ["flows"]
    assert scenario_differences(a, {**a, "seed": 7}) == [] and scenario_differences(a, json.loads(json.dumps(a))) == []
    assert scenario_differences(a, {**a, "topology": {"loss": 0.0, "rate": 10.5}}) == ["topology.rate"]


def test_values_of_takes_each_flows_values_as_a_lookup_would():
    import pandas as pd

    from ccsim.compare import _values_of

    table = pd.DataFrame({"goodput_bps": [1.5, 2.5, float("nan")], "timeouts": [0, 3, 1]}, index=["x", "y", "z"])
    names = ["z", "x"]
    got = _values_of(table, names, ["goodput_bps", "timeouts"])
    expected = [[table.at[n, c] for n in names] for c in ["goodput_bps", "timeouts"]]
    assert got[1] == expected[1] and got[0][1] == expected[0][1] and pd.isna(got[0][0]) and pd.isna(expected[0][0])


def test_cli_writes_the_table_and_the_overlaid_plots(runs):
    tmp, clean, lossy = runs
    out = tmp / "cmp"
    result = CliRunner().invoke(cli, ["compare", str(clean), str(lossy), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "B vs A" in result.output and "the scenarios differ in topology.bottleneck.loss_rate" in result.output
    assert sorted(p.name for p in out.iterdir()) == [".ccsim-files", "compare.csv", "cwnd.png", "rtt.png"]
    header = (out / "compare.csv").read_text().splitlines()[0]
    assert header == "scope,metric,simulator (clean),simulator (lossy),diff_pct,window"
    # an existing comparison is replaced only with --force
    again = CliRunner().invoke(cli, ["compare", str(clean), str(lossy), "--out", str(out)])
    assert again.exit_code == 2 and "--force" in again.stderr
    forced = CliRunner().invoke(cli, ["compare", str(clean), str(lossy), "--out", str(out), "--force", "--json", "--no-plots"])
    assert forced.exit_code == 0, forced.output
    doc = json.loads(forced.output)
    assert doc["a"] == "simulator (clean)" and len(doc["rows"]) == 2 * len(FLOW_METRICS) + len(LINK_METRICS)
    assert not (out / "cwnd.png").exists()


def test_cli_refuses_a_directory_that_is_not_a_run_with_one_line_and_writes_nothing(runs, tmp_path):
    _, clean, _ = runs
    not_a_run = tmp_path / "empty"
    not_a_run.mkdir()
    out = tmp_path / "cmp"
    result = CliRunner().invoke(cli, ["compare", str(clean), str(not_a_run), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "not a ccsim run directory" in lines[0]
    assert not out.exists()


def test_flows_are_matched_by_name(runs, tmp_path):
    _, clean, _ = runs
    renamed = _run(tmp_path, "renamed", first="other")
    c = compare_runs(Result.load(clean), Result.load(renamed))
    assert list(c.rows["scope"].unique()) == ["late", "bottleneck"]
    assert c.notes[0] == "flows not compared: early only in A, other only in B"


def test_no_flow_in_common_is_an_error(runs, tmp_path):
    _, clean, _ = runs
    scenario = tmp_path / "solo.toml"
    scenario.write_text(TWO_FLOWS.format(loss=0.0, first="solo").split('[[flows]]\nname = "late"')[0])
    out = tmp_path / "solo"
    assert CliRunner().invoke(cli, ["-q", "run", str(scenario), "--out", str(out), "--no-plots"]).exit_code == 0
    result = CliRunner().invoke(cli, ["compare", str(clean), str(out), "--out", str(tmp_path / "c")])
    assert result.exit_code == 2 and "no TCP flow of the same name" in result.stderr
    assert not (tmp_path / "c").exists()


def _many_flow_comparison(flows: int):
    import pandas as pd

    from ccsim.compare import Comparison

    rows = [{"scope": f"f{i}", "metric": "goodput (Mbit/s)", "a": float(i), "b": 2.0 * i, "diff_pct": 100.0} for i in range(flows)]
    rows.append({"scope": "bottleneck", "metric": "utilisation (%)", "a": 90.0, "b": 99.0, "diff_pct": 10.0})
    return Comparison("A", "B", pd.DataFrame(rows))


def test_the_console_shows_the_median_flow_of_many_and_every_flow_of_a_few():
    many = _many_flow_comparison(41).condensed(16)
    assert list(many["scope"]) == ["median of 41 flows", "bottleneck"]
    assert list(many.iloc[0][["a", "b", "diff_pct"]]) == [20.0, 40.0, 100.0]
    few = _many_flow_comparison(16)
    assert few.condensed(16) is few.rows


def test_many_flows_of_two_runs_are_overlaid_as_each_run_s_spread(tmp_path, monkeypatch):
    import numpy as np
    import pandas as pd

    from ccsim import plots

    seen = []
    real = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, out, name: seen.append(fig.axes[0]) or real(fig, out, name))
    times = np.arange(1, 6) * 0.1
    run = pd.DataFrame({"time_s": np.tile(times, 30), "name": np.repeat([f"f{i}" for i in range(30)], 5),
                        "cwnd_pkts": np.repeat(np.arange(30, dtype=float), 5)})
    plots.plot_runs_overlaid([("A", run), ("B", run.assign(cwnd_pkts=run["cwnd_pkts"] * 2))], tmp_path, column="cwnd_pkts",
                             scale=1.0, ylabel="cwnd", title="cwnd", filename="cwnd.png")
    lines = {line.get_label(): line for line in seen[-1].get_lines()}
    assert set(lines["A, median of 30 flows"].get_ydata()) == {14.5}
    assert set(lines["B, median of 30 flows"].get_ydata()) == {29.0}
    assert len(seen[-1].get_legend().get_texts()) == 6  # band, median and largest of each run


def test_cli_compares_many_flows_by_their_medians_and_keeps_every_flow_in_the_csv(tmp_path):
    scenario = tmp_path / "many.toml"
    scenario.write_text(TWO_FLOWS.format(loss=0.0, first="early").replace('start = "1s"', 'start = "1s"\ncount = 16'))
    out = tmp_path / "many"
    assert CliRunner().invoke(cli, ["-q", "run", str(scenario), "--out", str(out), "--no-plots"]).exit_code == 0
    result = CliRunner().invoke(cli, ["compare", str(out), str(out), "--out", str(tmp_path / "cmp"), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert "median of 17 flows" in result.output and "every flow's rows" in result.output
    assert "late-15" not in result.output
    csv = (tmp_path / "cmp" / "compare.csv").read_text()
    assert "late-15" in csv and "early" in csv


def test_every_row_names_its_window_and_counts_are_like_for_like(tmp_path):
    """With `measure` set, the simulator's retransmits and timeouts are those inside the window (as the
    testbed counts them), and every compare row says which window it covers."""
    scenario = tmp_path / "windowed.toml"
    scenario.write_text(TWO_FLOWS.format(loss=0.02, first="early").replace('duration = "4s"', 'duration = "4s"\nmeasure = ["2s", "4s"]'))
    dirs = []
    for seed in (1, 2):
        out = tmp_path / f"w{seed}"
        result = CliRunner().invoke(cli, ["-q", "run", str(scenario), "--out", str(out), "--no-plots", "--seed", str(seed)])
        assert result.exit_code == 0, result.output
        dirs.append(out)
    a, b = Result.load(dirs[0]), Result.load(dirs[1])
    early = a.summary.set_index("name").loc["early"]
    assert 0 < early["retransmits"] < early["retransmits_run"], "the window's retransmits, not the run's"
    c = compare_runs(a, b, "s1", "s2")
    assert set(c.rows["window"]) == {"2-4 s"}
    retx = c.rows[(c.rows["scope"] == "early") & (c.rows["metric"] == "retransmits")].iloc[0]
    assert retx["a"] == early["retransmits"]
    shown = CliRunner().invoke(cli, ["compare", str(dirs[0]), str(dirs[1]), "--out", str(tmp_path / "cmp"), "--no-plots", "--json"])
    assert shown.exit_code == 0, shown.output
    assert {row["window"] for row in json.loads(shown.output)["rows"]} == {"2-4 s"}
