"""End to end through the engine: ccsim.run, the Result, the run directory, the CLI verbs.

The engine-backed tests need the compiled extension; the save/load mechanics are also tested on a
small hand-made engine output so they run without it.
"""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ccsim
from ccsim.cli import cli
from ccsim.errors import OutputExistsError
from ccsim.outdir import MARKER_FILE
from ccsim.result import Result
from ccsim.scenario import Scenario

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PARQUETS = ["flows", "streams", "links", "cc_metrics", "summary", "link_summary", "delay_hist"]
PLOTS = ["cwnd.png", "goodput.png", "queue_delay.png", "queue_delay_cdf.png"]

FLOW_COLUMNS = ["time_s", "flow", "goodput_bps", "send_rate_bps", "cwnd_bytes", "cwnd_pkts", "ssthresh_bytes",
                "srtt_ms", "rtt_ms", "retransmits", "timeouts"]
LINK_COLUMNS = ["time_s", "link", "queue_pkts", "queue_bytes", "qdelay_mean_ms", "qdelay_max_ms", "drops_queue",
                "drops_random", "utilisation", "tx_bytes"]


def short_scenario(seconds: int = 5, flows: int = 2) -> str:
    """The single-flow example, shortened, with ``flows`` flows."""
    text = (EXAMPLES / "single_flow.toml").read_text()
    text = text.replace('duration = "60s"', f'duration = "{seconds}s"').replace('stop = "60s"', f'stop = "{seconds}s"')
    changed = re.sub(r"(?m)^count = 1\b", f"count = {flows}", text)
    assert changed != text or flows == 1
    return changed


# --- without the engine: the run directory mechanics -------------------------------------------------


def handmade_result() -> Result:
    scenario = ccsim.load_scenario(short_scenario(seconds=1, flows=1))
    raw = {
        "flows": {"time_s": [0.5, 1.0], "flow": [0, 0], "goodput_bps": [9e6, 9.5e6], "send_rate_bps": [1e7, 1e7],
                  "cwnd_bytes": [14480, 28960], "cwnd_pkts": [10.0, 20.0], "ssthresh_bytes": [2**31, 2**31],
                  "srtt_ms": [41.0, 45.0], "rtt_ms": [41.0, 46.0], "retransmits": [0, 0], "timeouts": [0, 0]},
        "cc_metrics": {"time_s": [1.0], "flow": [0], "name": ["abc_bytes_acked"], "value": [0.0]},
        "links": {"time_s": [0.5, 1.0], "link": ["bottleneck", "bottleneck"], "queue_pkts": [0, 3], "queue_bytes": [0, 4500],
                  "qdelay_mean_ms": [0.0, 2.5], "qdelay_max_ms": [0.0, 3.6], "drops_queue": [0, 0], "drops_random": [0, 0],
                  "utilisation": [0.9, 0.95], "tx_bytes": [562500, 593750]},
        "flow_summary": {"flow": [0], "name": ["flow0"], "goodput_bps": [9.25e6]},
        "link_summary": {"link": ["bottleneck"], "qdelay_mean_ms": [1.25]},
        "run_summary": {"jain_index": 1.0, "bottleneck_utilisation": 0.925},
        "stats": {"events": 10},
        "params_used": [{"flow": "flow0", "algorithm": "newreno", "params": {"halve_from": "flight"}}],
    }
    return Result.from_engine(raw, scenario, toml_text=short_scenario(1, 1), seed=7, wall_time_s=0.25)


def test_save_and_load_round_trip(tmp_path):
    result = handmade_result()
    out = result.save(tmp_path / "run")
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER_FILE, "meta.json", *(f"{t}.parquet" for t in PARQUETS), *PLOTS])
    loaded = Result.load(out)
    for table in PARQUETS:
        assert getattr(loaded, table).equals(getattr(result, table)), table
    assert loaded.run_summary == result.run_summary
    assert loaded.meta == json.loads(json.dumps(result.meta))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # staging directory renamed away


def test_parquet_is_byte_identical_and_wall_time_only_in_meta(tmp_path):
    a = handmade_result().save(tmp_path / "a", plots=False)
    b = handmade_result()
    b.meta["wall_time_s"] = 99.0
    b = b.save(tmp_path / "b", plots=False)
    for table in PARQUETS:
        assert (a / f"{table}.parquet").read_bytes() == (b / f"{table}.parquet").read_bytes(), table
    assert json.loads((a / "meta.json").read_text())["wall_time_s"] == 0.25


def test_save_refuses_an_existing_directory_unless_forced(tmp_path):
    result = handmade_result()
    out = result.save(tmp_path / "run", plots=False)
    with pytest.raises(OutputExistsError):
        result.save(out)
    (out / "notes.txt").write_text("the user's, not ccsim's")
    (out / "cwnd.png").write_text("not written by ccsim")  # plots=False above: not in the marker
    with pytest.raises(OutputExistsError, match="cwnd.png: exists and was not written by ccsim"):
        result.save(out, force=True, plots=True)
    (out / "cwnd.png").unlink()
    result.save(out, force=True, plots=False)
    assert (out / "notes.txt").read_text() == "the user's, not ccsim's"  # --force keeps what ccsim did not write
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_failed_save_leaves_nothing_behind(tmp_path, monkeypatch):
    import ccsim.plots

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(ccsim.plots, "write_default_plots", broken)
    with pytest.raises(RuntimeError):
        handmade_result().save(tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_meta_records_provenance():
    meta = handmade_result().meta
    assert meta["seed"] == 7
    assert meta["scenario"]["flows"][0]["name"] == "flow0"
    assert "[run]" in meta["scenario_toml"]
    assert meta["ccsim_version"] == ccsim.__version__
    assert meta["algorithm_params"]["flow0"]["algorithm"] == "newreno"
    assert meta["algorithm_params"]["flow0"]["params"]["halve_from"] == "flight"


# --- with the engine ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("ccsim._core")


def test_run_returns_every_table(core):
    result = ccsim.run(short_scenario(), seed=3)
    assert list(result.flows.columns)[: len(FLOW_COLUMNS)] == FLOW_COLUMNS
    assert list(result.links.columns)[: len(LINK_COLUMNS)] == LINK_COLUMNS
    assert list(result.cc_metrics.columns) == ["time_s", "flow", "name", "value"]
    assert set(result.flows["flow"]) == {0, 1}  # the engine identifies flows by index ...
    assert list(result.summary["name"]) == ["flow0", "flow1"]  # ... and names them in the summary
    assert {"jain_index", "bottleneck_utilisation"} <= set(result.run_summary)
    assert result.meta["seed"] == 3
    assert result.meta["algorithm_params"]["flow0"]["params"] == {"halve_from": "flight"}
    assert result.summary["goodput_bps"].sum() <= 10e6  # in-order goodput over the window fits the bottleneck


def test_run_accepts_scenario_path_and_text(core, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(short_scenario(2, 1))
    by_text = ccsim.run(short_scenario(2, 1))
    by_path = ccsim.run(path)
    by_model = ccsim.run(Scenario.from_toml(path))
    for other in (by_path, by_model):
        assert other.flows.equals(by_text.flows)


def test_same_seed_gives_byte_identical_run_directories(core, tmp_path):
    text = re.sub(r"(?m)^loss = 0\.0\b", "loss = 0.01", short_scenario(5, 2))
    assert "loss = 0.01" in text
    a = ccsim.run(text, seed=11).save(tmp_path / "a", plots=False)
    b = ccsim.run(text, seed=11).save(tmp_path / "b", plots=False)
    for table in PARQUETS:
        assert (a / f"{table}.parquet").read_bytes() == (b / f"{table}.parquet").read_bytes(), table
    c = ccsim.run(text, seed=12)
    assert not c.flows.equals(Result.load(a).flows)


def test_cli_run_writes_directory_and_summary(core, tmp_path):
    scenario = tmp_path / "short.toml"
    scenario.write_text(short_scenario(3, 1))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out), "--seed", "5"])
    assert result.exit_code == 0, result.output
    assert "flow0" in result.stdout and "Jain index" in result.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER_FILE, "meta.json", *(f"{t}.parquet" for t in PARQUETS), *PLOTS])
    assert json.loads((out / "meta.json").read_text())["seed"] == 5
    # exists -> refused; --force -> replaced
    again = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out)])
    assert again.exit_code == 2
    forced = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out), "--force", "--no-plots", "--seed", "6"])
    assert forced.exit_code == 0, forced.output
    assert json.loads((out / "meta.json").read_text())["seed"] == 6
    assert not (out / "cwnd.png").exists()
    # plot DIR rewrites the plots
    plotted = CliRunner().invoke(cli, ["plot", str(out)])
    assert plotted.exit_code == 0, plotted.output
    assert all((out / p).is_file() for p in PLOTS)


def test_cli_default_out_is_runs_slash_stem(core, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(short_scenario(1, 1))
    result = CliRunner().invoke(cli, ["run", "tiny.toml", "--no-plots"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "runs" / "tiny" / "meta.json").is_file()


def test_cli_list_shows_every_algorithm_and_parameter(core):
    result = CliRunner().invoke(cli, ["list"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for algo in core.algorithms():
        assert algo["name"] in result.stdout
        for param in algo["params"]:
            assert param["name"] in result.stdout


def test_algorithms_is_exported(core):
    assert [a["name"] for a in ccsim.algorithms()] == [a["name"] for a in core.algorithms()]


def test_meta_json_puts_each_flow_on_a_line_and_reads_back_as_written(tmp_path):
    result = handmade_result()
    result.meta["scenario"]["flows"] = [dict(result.meta["scenario"]["flows"][0], name=f"f{i}") for i in range(3)]
    result.meta["wall_time_s"] = float("nan")  # written as null, as json_safe does
    path = result.save(tmp_path / "run")
    text = (path / "meta.json").read_text()
    meta = json.loads(text)
    assert meta["scenario"]["flows"] == result.meta["scenario"]["flows"]
    assert meta["wall_time_s"] is None
    assert meta["scenario"]["topology"] == result.meta["scenario"]["topology"]
    flow_lines = [line for line in text.splitlines() if line.lstrip().startswith('{"name": "f')]
    assert len(flow_lines) == 3 and all(line.startswith("      {") for line in flow_lines)
    assert '\n  "scenario": {\n    "ccsim_resolved"' in text  # the rest indented as before
    assert Result.load(path).scenario == result.scenario


def test_meta_json_puts_each_flows_algorithm_parameters_on_a_line(tmp_path):
    result = handmade_result()
    result.meta["algorithm_params"] = {f"f{i}": {"algorithm": "newreno", "params": {"beta": 0.5, "cap": float("inf") if i == 1 else 2.0}}
                                       for i in range(3)}
    text = (result.save(tmp_path / "run") / "meta.json").read_text()
    assert '\n  "algorithm_params": {\n    "f0": {"algorithm": "newreno", "params": {"beta": 0.5, "cap": 2.0}},\n' in text
    assert '\n    "f1": {"algorithm": "newreno", "params": {"beta": 0.5, "cap": null}},\n' in text  # not finite: null
    meta = json.loads(text)
    assert meta["algorithm_params"]["f2"] == {"algorithm": "newreno", "params": {"beta": 0.5, "cap": 2.0}}
    assert meta["algorithm_params"]["f1"]["params"]["cap"] is None
    assert [k for k in meta if k in result.meta] == list(result.meta)  # the keys in their order
