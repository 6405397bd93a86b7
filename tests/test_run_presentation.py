"""How a run is shown: the goodput figure says why a sample exceeds the bottleneck's rate, counts are
integers in ``ccsim run --json``, the report names the bottleneck link instead of its row number."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import ccsim
from ccsim import plots
from ccsim.cli import cli

LOSSY = """\
[run]
duration = "3s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"
loss = 0.01

[[flows]]
algorithm = "newreno"
"""


@pytest.fixture(scope="module")
def lossy() -> ccsim.Result:
    pytest.importorskip("ccsim._core")
    return ccsim.run_toml(LOSSY)


def test_goodput_above_capacity_is_in_order_delivery_not_the_link(lossy: ccsim.Result) -> None:
    """The cause the figure's note gives: in the intervals where a flow's goodput exceeds the
    bottleneck's rate, the bottleneck itself carried no more than its rate (goodput counts bytes as
    they become in order at the receiver, after a retransmission fills a hole)."""
    flows, links = lossy.flows, lossy.links
    capacity = lossy.run_summary["bottleneck_rate_bps"]
    above = flows[flows["goodput_bps"] > capacity]
    assert not above.empty  # slow start's overshoot and its recovery: at 0.5-0.6 s
    bottleneck = links[links["link"] == "bottleneck"].set_index("time_s")
    # at most one packet's worth over, from where the interval's edge cuts a packet in transit
    assert (bottleneck.loc[above["time_s"], "utilisation"] <= 1.0 + 1500 * 8 / (capacity * 0.1)).all()
    # the bytes were counted late, not created: over the run, goodput stays below the rate
    assert flows["goodput_bps"].mean() < capacity


def _figure_texts(monkeypatch, frame: pd.DataFrame, capacity_bps: float) -> list[str]:
    seen = []

    def keep(fig, out_dir, filename):
        seen.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        return Path(out_dir) / filename

    monkeypatch.setattr(plots, "_save", keep)
    plots.plot_goodput(frame, ".", None, capacity_bps=capacity_bps)
    return seen


def test_the_goodput_figure_says_why_a_sample_exceeds_the_rate(monkeypatch) -> None:
    frame = pd.DataFrame({"time_s": [0.1, 0.2, 0.3], "flow": [0, 0, 0], "goodput_bps": [9e6, 14e6, 3e6]})
    texts = _figure_texts(monkeypatch, frame, 10e6)
    assert texts == [plots.ABOVE_CAPACITY_NOTE] and "in order" in texts[0]
    assert _figure_texts(monkeypatch, frame.assign(goodput_bps=[9e6, 9.5e6, 3e6]), 10e6) == []  # nothing to explain


def test_json_counts_are_integers_and_the_bottleneck_is_named(tmp_path: Path) -> None:
    pytest.importorskip("ccsim._core")
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY)
    outcome = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(tmp_path / "run"), "--no-plots", "--json"])
    assert outcome.exit_code == 0, outcome.output
    summary = json.loads(outcome.stdout)["run_summary"]
    for key in ("flows", "jain_flows", "events", "bottleneck_packets", "bottleneck_drops_queue", "bottleneck_link"):
        assert type(summary[key]) is int, (key, summary[key])
    assert type(summary["total_goodput_bps"]) is float
    assert summary["bottleneck_name"] == "bottleneck"


def test_the_report_names_the_bottleneck_link(tmp_path: Path, lossy: ccsim.Result) -> None:
    out = lossy.save(tmp_path / "run", plots=False)
    page = CliRunner().invoke(cli, ["report", str(out)])
    assert page.exit_code == 0, page.output
    html = (out / "report.html").read_text()
    assert "<td>bottleneck_link</td><td>bottleneck (row 0 of the link summary)</td>" in html
