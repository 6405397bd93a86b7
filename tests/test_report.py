"""Plots and the HTML report: the plot helpers, `ccsim report` on a run and on a sweep directory, and
the page opened in headless Chromium (no console errors, every figure loaded, a non-blank screenshot).

The browser test needs Debian's `chromium` and `chromium-driver` and the `selenium` package (test
extra). CI installs them (.ci/run) and sets CI=true: there a missing browser FAILS the test; on a
developer machine without Chromium it is skipped.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import ccsim
from ccsim import plots
from ccsim.cli import cli
from ccsim.report import REPORT_FILE, detect_kind, nice_bin_s, write_report


def short_run_scenario(seconds: int = 4) -> ccsim.Scenario:
    """Two NewReno flows, the second starting late, on the CHD paper's path."""
    return ccsim.Scenario.from_dict({
        "run": {"duration": f"{seconds}s", "measure": ["1s", f"{seconds}s"], "sample_interval": "100ms"},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt"},
        "flows": [{"algorithm": "newreno", "name": "a"}, {"algorithm": "newreno", "name": "b", "start": "1s"}],
    })


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("ccsim._core")


@pytest.fixture(scope="module")
def run_dir(core, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "run"
    ccsim.run(short_run_scenario(), seed=3).save(out)
    return out


@pytest.fixture(scope="module")
def sweep_dir(core, tmp_path_factory):
    sweep = pytest.importorskip("ccsim.sweep")
    base = {
        "run": {"duration": "3s"},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt"},
        "flows": [{"algorithm": "newreno"}, {"algorithm": "newreno", "start": "0.5s"}],
    }
    plan = sweep.SweepPlan(base=base, grid={"topology.loss": [0.0, 0.01], "flows[0].algorithm": ["newreno", "chd"]},
                           repetitions=2, seed=1)
    out = tmp_path_factory.mktemp("report") / "sweep"
    sweep.run_sweep(plan, out, jobs=1, progress=False)
    return out


def figure_count(page: str) -> int:
    return len(re.findall(r"<figure\b", page))


def assert_self_contained(page: str) -> None:
    # no external resource of any kind: every src is a data: URI, no stylesheet/script links
    for url in re.findall(r"""(?:src|href)\s*=\s*["']?([^"' >]+)""", page):
        assert url.startswith("data:") or url.startswith("#"), url
    assert "<script" not in page.lower()
    assert "<link" not in page.lower()
    assert "@import" not in page


# --- plot helpers ------------------------------------------------------------------------------------


def test_binned_means_and_jain_index():
    rows = pd.DataFrame({"time_s": [0.5, 1.0, 1.5, 2.0], "x": [1.0, 3.0, 5.0, 7.0]})
    mids, means = plots.binned(rows, "x", 1.0)
    assert mids.tolist() == [0.5, 1.5] and means.tolist() == [2.0, 6.0]  # a sample at t=1.0 closes bin [0, 1]
    assert plots.jain_index([5, 5]) == pytest.approx(1.0)
    assert plots.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        plots.binned(rows, "x", 0)


def test_active_rows_keeps_the_intervals_that_overlap_each_flows_span():
    """A row (the interval ending at time_s) is kept when it overlaps its flow's first start to last
    stop; a flow the scenario does not name keeps every row. Flows given by number or by name."""
    resolved = {"sample_interval_ns": 100_000_000, "flows": [
        {"name": "early", "intervals": [{"start_ns": 0, "stop_ns": 250_000_000}]},
        {"name": "late", "intervals": [{"start_ns": 300_000_000, "stop_ns": 400_000_000},
                                       {"start_ns": 600_000_000, "stop_ns": 700_000_000}]},
    ]}
    times = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    by_number = pd.DataFrame({"time_s": times * 2, "flow": [0] * 8 + [1] * 8})
    kept = plots.active_rows(by_number, resolved)
    # early: (0, 0.25] -> 0.1, 0.2, 0.3 (the interval 0.2-0.3 holds its stop); late: (0.3, 0.7] -> 0.4 to 0.7
    assert list(zip(kept["flow"], kept["time_s"])) == [(0, 0.1), (0, 0.2), (0, 0.3), (1, 0.4), (1, 0.5), (1, 0.6), (1, 0.7)]
    by_name = pd.DataFrame({"time_s": times * 3, "flow": ["early"] * 8 + ["late"] * 8 + ["other"] * 8},
                           index=range(100, 124))
    kept = plots.active_rows(by_name, resolved)
    assert list(kept["flow"]).count("other") == 8 and list(kept["flow"]).count("late") == 4
    assert list(kept.index[:3]) == [100, 101, 102]  # the frame's own rows, index kept


def test_column_per_group_is_the_groupby_definition():
    """The box plot's per-flow values from one sort equal those of a groupby with a sort and a
    dropna per flow: the same groups in the same order (first appearance), the same values in time
    order, missing values and rows without a flow left out."""
    rng = np.random.default_rng(7)
    n = 400
    frame = pd.DataFrame({
        "time_s": rng.permutation(n) / 10.0,
        "flow": rng.choice([3, 1, 2, 7], n),
        "goodput_bps": np.where(rng.random(n) < 0.2, np.nan, rng.random(n) * 1e6),
    })
    frame.loc[frame["flow"] == 7, "goodput_bps"] = np.nan  # a flow with no value at all
    by_name = frame.assign(flow=frame["flow"].map({3: "c", 1: "a", 2: "b", 7: None}))
    for f in (frame, by_name):
        expected = [(k, rows["goodput_bps"].dropna().to_numpy()) for k, rows in plots._groups(f, "flow")]
        got = plots._column_per_group(f, "flow", "goodput_bps")
        assert [k for k, _ in got] == [k for k, _ in expected]
        for (_, a), (_, b) in zip(got, expected):
            assert np.array_equal(a, b)
    assert plots._column_per_group(frame.iloc[0:0], "flow", "goodput_bps") == []


def test_mathis_and_error_bars():
    # Mathis et al.: B = MSS/RTT * sqrt(3/2) / sqrt(p); 1448 B, 40 ms, 1 % -> 3.547 Mbit/s
    assert float(plots.mathis_bps(0.01, 1448, 0.040)) == pytest.approx(8 * 1448 / 0.040 * np.sqrt(1.5) / 0.1)
    mid, low, high = plots.aggregate(pd.Series([1.0, 2.0, 3.0, 4.0, 5.0]), "percentiles")
    assert (mid, low, high) == pytest.approx((3.0, 1.8, 4.2))
    mean, lo, hi = plots.aggregate(pd.Series([1.0, 2.0, 3.0]), "ci")
    assert mean == 2.0 and hi - mean == pytest.approx(4.303 * 1.0 / np.sqrt(3), rel=1e-3)
    assert nice_bin_s(60) == 2.0 and nice_bin_s(4) == 0.1 and nice_bin_s(100) == 5.0


def test_sweep_plots_have_deterministic_names(tmp_path):
    flows = pd.DataFrame({
        "topology.loss": [0.0, 0.0, 0.01, 0.01] * 2,
        "algorithm": ["newreno"] * 4 + ["chd"] * 4,
        "goodput_bps": [9.6e6, 9.5e6, 3.5e6, 3.4e6, 9.2e6, 9.3e6, 9.1e6, 9.0e6],
        "rtt_p95_ms": [140, 139, 60, 61, 70, 71, 65, 66],
    })
    p = plots.plot_sweep_goodput(flows, "topology.loss", tmp_path, bars="percentiles",
                                 theory=("Mathis", lambda x: plots.mathis_bps(x, 1448, 0.04)), capacity_bps=10e6, xscale=100)
    assert p.name == "goodput_vs_topology_loss.png" and p.stat().st_size > 5000
    runs = pd.DataFrame({"queue": ["drop-tail", "drop-tail", "RED", "RED"], "jain_index": [0.99, 0.98, 1.0, 0.99]})
    assert plots.plot_sweep_jain(runs, "queue", tmp_path).name == "jain_vs_queue.png"
    points = flows.assign(label=flows["algorithm"])
    assert plots.plot_throughput_delay(points, tmp_path).name == "throughput_delay.png"
    cdf = plots.plot_queue_delay_cdf_compare({"drop-tail": np.array([50.0, 60.0]), "RED": np.array([10.0, 20.0])}, tmp_path)
    assert cdf.name == "queue_delay_cdf_compare.png"


def test_binned_run_plots_keep_default_names(run_dir, tmp_path):
    result = ccsim.Result.load(run_dir)
    flows = plots.active_rows(result.flows, result.scenario)
    assert plots.plot_goodput(flows, tmp_path).name == "goodput.png"
    assert plots.plot_goodput(flows, tmp_path, bin_s=0.5).name == "goodput_binned_0.5s.png"
    assert plots.plot_cwnd(flows, tmp_path, bin_s=1).name == "cwnd_binned_1s.png"
    assert plots.plot_jain_over_time(flows, tmp_path, 0.5).name == "jain.png"


def _captured_axes(monkeypatch):
    """The axes of the next figure a plot function saves."""
    seen = []
    real = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, out, name: seen.append(fig.axes[0]) or real(fig, out, name))
    return seen


def _many_flows(n: int) -> pd.DataFrame:
    times = np.arange(1, 11) * 0.1
    return pd.DataFrame({
        "flow": np.repeat(np.arange(n), len(times)),
        "time_s": np.tile(times, n),
        "cwnd_pkts": np.repeat(np.arange(n, dtype=float), len(times)),  # flow i holds i packets
        "goodput_bps": np.repeat(np.arange(n, dtype=float) * 1e5, len(times)),
    })


def test_many_flows_are_drawn_as_their_spread_not_a_line_each(tmp_path, monkeypatch):
    axes = _captured_axes(monkeypatch)
    plots.plot_cwnd(_many_flows(101), tmp_path)
    ax = axes[-1]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["10th-90th percentile of the flows", "median of the flows", "largest of the flows"]
    assert "101 flows" in ax.get_title()
    median, largest = (line for line in ax.get_lines() if line.get_label() in ("median of the flows", "largest of the flows"))
    assert set(median.get_ydata()) == {50.0} and set(largest.get_ydata()) == {100.0}
    plots.plot_goodput(_many_flows(101), tmp_path, bin_s=0.5, capacity_bps=1e9)  # bin means of each flow
    median = next(line for line in axes[-1].get_lines() if line.get_label() == "median of the flows")
    assert list(median.get_xdata()) == [0.25, 0.75] and set(median.get_ydata()) == {5.0}
    assert axes[-1].get_title() == "Goodput: 101 flows (0.5 s averages)"


def test_the_other_per_flow_figures_of_many_flows_aggregate_them(tmp_path, monkeypatch):
    axes = _captured_axes(monkeypatch)
    flows = _many_flows(40)
    plots.plot_totals(flows, tmp_path, capacity_bps=1e9)
    total = next(line for line in axes[-1].get_lines() if line.get_label() == "total of 40 flows")
    assert set(total.get_ydata()) == {sum(range(40)) * 0.1}  # Mbit/s: flow i sends i x 0.1
    plots.plot_box(flows, tmp_path)
    assert [t.get_text() for t in axes[-1].get_xticklabels()] == ["every interval of the 40 flows", "the 40 flows' means"]
    hist = pd.DataFrame({"what": "rtt", "name": [f"f{i}" for i in range(40)], "value_ms": 10.0 + np.arange(40), "count": 1})
    plots.plot_delay_cdf(hist, tmp_path, "rtt")
    (curve,) = axes[-1].get_lines()
    assert curve.get_label() == "all 40 flows (40 samples)" and curve.get_ydata()[-1] == 1.0


def test_delay_cdf_leaves_out_links_that_never_queued_and_keeps_the_named(tmp_path, monkeypatch):
    axes = _captured_axes(monkeypatch)
    hist = pd.DataFrame({"what": "qdelay", "name": ["idle", "idle", "busy", "busy", "other"],
                         "value_ms": [0.0, plots.QUEUED_MS / 2, 0.0, 5.0, 7.0], "count": [10, 1, 3, 2, 4]})
    plots.plot_delay_cdf(hist, tmp_path, "qdelay")
    assert [line.get_label() for line in axes[-1].get_lines()] == ["busy (5 samples)", "other (4 samples)"]
    plots.plot_delay_cdf(hist, tmp_path, "qdelay", names=["other", "idle"])
    assert [line.get_label() for line in axes[-1].get_lines()] == ["other (4 samples)"]
    many = pd.DataFrame({"what": "qdelay", "name": [f"l{i}" for i in range(40)] + ["quiet"],
                         "value_ms": [2.0] * 40 + [0.0], "count": 1})
    plots.plot_delay_cdf(many, tmp_path, "qdelay")
    (curve,) = axes[-1].get_lines()
    assert curve.get_label() == "all 40 links (40 samples)" and list(curve.get_xdata()) == [0.0, 2.0]


def test_the_run_report_names_algorithms_not_thousands_of_flows():
    from ccsim.report import _run_scatter_points

    class Many:
        summary = pd.DataFrame({"name": [f"f{i}" for i in range(40)], "algorithm": ["newreno"] * 30 + ["chd"] * 10,
                                "goodput_bps": 1e6, "rtt_p95_ms": 20.0})
    labels = _run_scatter_points(Many())["label"]
    assert sorted(set(labels)) == ["chd (10 flows)", "newreno (30 flows)"]
    Many.summary = Many.summary.head(3)
    assert list(_run_scatter_points(Many())["label"]) == ["f0 (newreno)", "f1 (newreno)", "f2 (newreno)"]


def test_a_few_flows_keep_a_line_each(tmp_path, monkeypatch):
    axes = _captured_axes(monkeypatch)
    plots.plot_cwnd(_many_flows(plots.MAX_FLOW_LINES), tmp_path, names=[f"f{i}" for i in range(plots.MAX_FLOW_LINES)])
    labels = [t.get_text() for t in axes[-1].get_legend().get_texts()]
    assert labels == [f"f{i}" for i in range(plots.MAX_FLOW_LINES)]


# --- the report ----------------------------------------------------------------------------------------


def test_run_report_is_one_self_contained_page(run_dir):
    before = sorted(p.name for p in run_dir.iterdir())
    path = write_report(run_dir)
    assert path == run_dir / REPORT_FILE
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(before + [REPORT_FILE])  # nothing else written
    page = path.read_text()
    assert_self_contained(page)
    # goodput (binned), totals, box plot, cwnd (every sample), Jain over time, queueing delay, CDFs
    # of the per-packet queueing delay and RTT, throughput-delay scatter
    assert figure_count(page) == 9
    assert "per-packet queueing delay" in page and "per-packet RTT" in page
    assert "Flent&#x27;s totals plot" in page and "distribution per flow" in page
    for png in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page):
        assert base64.b64decode(png).startswith(b"\x89PNG")
    assert ccsim.__version__ in page
    assert 'bottleneck_rate = "10Mbit"' in page  # the scenario TOML
    assert "seed" in page and "jain_index" in page and "goodput_bps" in page


def test_long_tables_show_their_first_rows_and_name_the_file_of_all(run_dir, sweep_dir, monkeypatch):
    import ccsim.report as report

    monkeypatch.setattr(report, "MAX_TABLE_ROWS", 1)
    page = write_report(run_dir).read_text()
    flows = page.split("<h2>Flows (summary window)</h2>", 1)[1].split("</section>", 1)[0]
    assert "The first 1 of 2 flows; every row is in <code>summary.parquet</code>." in flows
    assert flows.count("</tr>") == 2  # the header and one flow
    links = page.split("<h2>Links (summary window)</h2>", 1)[1].split("</section>", 1)[0]
    assert "every row is in <code>link_summary.parquet</code>." in links and links.count("</tr>") == 2
    runs = write_report(sweep_dir).read_text().split("<h2>Runs</h2>", 1)[1].split("</section>", 1)[0]
    assert "The first 1 of 8 runs; every row is in <code>runs.parquet</code>." in runs
    monkeypatch.setattr(report, "MAX_TABLE_ROWS", 200)
    assert "every row is in" not in write_report(run_dir).read_text()


def test_cli_report_rewrites_and_refuses_other_directories(run_dir, tmp_path):
    first = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(cli, ["report", str(run_dir)])  # derived: regenerated without --force
    assert again.exit_code == 0, again.output
    assert again.stdout.strip() == str(run_dir / REPORT_FILE)
    (tmp_path / "empty").mkdir()
    refused = CliRunner().invoke(cli, ["report", str(tmp_path / "empty")])
    assert refused.exit_code == 2 and "neither a run directory" in refused.stderr
    assert not (tmp_path / "empty" / REPORT_FILE).exists()


def test_sweep_report(sweep_dir):
    assert detect_kind(sweep_dir) == "sweep"
    page = write_report(sweep_dir).read_text()
    assert_self_contained(page)
    # goodput vs loss (grouped by algorithm), Jain per point, throughput-delay scatter
    assert figure_count(page) == 3
    assert "topology.loss" in page and "Summary per sweep point" in page and "Base scenario" in page
    # every bar in the figures is a 95 % interval (docs/sweeps.md, "Intervals"): the scatter said 1-sigma
    assert "sigma" not in page and "mean per algorithm and sweep point (95 % CI bars)" in page


# --- in a real browser ---------------------------------------------------------------------------------


def _find(*names: str) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium driven by chromedriver (selenium). Required in CI (CI=true), optional locally."""
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    chromium = _find("chromium", "chromium-browser", "google-chrome")
    driver_path = _find("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        webdriver = None
    missing = [n for n, ok in (("chromium", chromium), ("chromedriver", driver_path), ("selenium", webdriver)) if not ok]
    if missing:
        message = f"headless browser test needs {', '.join(missing)} (apt-get install chromium chromium-driver; pip install selenium)"
        if in_ci:
            pytest.fail(message)
        pytest.skip(message)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1200,900",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def console_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


FIGURES_LOADED = """
const imgs = Array.from(document.querySelectorAll('figure img'));
const svgs = Array.from(document.querySelectorAll('figure svg'));
return {
  figures: document.querySelectorAll('figure').length,
  images: imgs.map(i => ({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight})),
  svgs: svgs.map(s => s.getBoundingClientRect().width),
  title: document.title,
  height: document.documentElement.scrollHeight,
};
"""


def open_and_check(driver, page: Path, expected_figures: int) -> dict:
    driver.get(page.resolve().as_uri())
    state = driver.execute_script(FIGURES_LOADED)
    assert state["figures"] == expected_figures
    assert len(state["images"]) + len(state["svgs"]) == expected_figures
    for image in state["images"]:
        assert image["complete"] and image["width"] > 0 and image["height"] > 0, image
    assert all(width > 0 for width in state["svgs"])
    errors = console_errors(driver)
    assert errors == [], errors
    return state


def screenshot(driver, path: Path, height: int) -> np.ndarray:
    """A full-page PNG (Chrome DevTools Page.captureScreenshot beyond the viewport)."""
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": 1200, "height": min(height, 12000), "scale": 1},
    })
    path.write_bytes(base64.b64decode(shot["data"]))
    from matplotlib.image import imread

    return imread(path)


def test_console_error_check_is_not_vacuous(browser, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><title>x</title><figure><img src='missing.png'></figure>"
                      "<script>console.error('boom')</script>")
    browser.get(broken.as_uri())
    assert console_errors(browser), "a page with a console error and a missing image must be caught"


def test_run_report_in_headless_chromium(browser, run_dir, tmp_path):
    page = write_report(run_dir)
    state = open_and_check(browser, page, expected_figures=figure_count(page.read_text()))
    assert state["title"].startswith("ccsim run")
    shot_path = tmp_path / "run_report.png"  # kept as the test's artefact
    pixels = screenshot(browser, shot_path, state["height"])
    assert shot_path.stat().st_size > 50_000
    assert pixels.shape[0] > 2000 and pixels.shape[1] == 1200
    assert float(pixels[..., :3].std()) > 0.05, "the screenshot is blank"
    # the figures are drawn in colour: some pixels are far from grey
    rgb = pixels[..., :3]
    assert float((rgb.max(axis=-1) - rgb.min(axis=-1)).max()) > 0.5


def test_sweep_report_in_headless_chromium(browser, sweep_dir, tmp_path):
    page = write_report(sweep_dir)
    state = open_and_check(browser, page, expected_figures=figure_count(page.read_text()))
    assert state["title"].startswith("ccsim sweep")
    pixels = screenshot(browser, tmp_path / "sweep_report.png", state["height"])
    assert float(pixels[..., :3].std()) > 0.05
