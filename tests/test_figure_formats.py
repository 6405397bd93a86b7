"""Figures in the format their name asks for: ``x.pdf`` is a PDF (it once held PNG bytes), ``ccsim
plot DIR --format pdf|svg`` writes vector files, an unknown suffix is refused."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from ccsim import plots
from ccsim.cli import cli
from ccsim.errors import CcsimError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-"}


def _scatter(out: Path, filename: str) -> Path:
    points = pd.DataFrame({"label": ["a", "b"], "goodput_bps": [4e6, 5e6], "rtt_p95_ms": [50.0, 80.0]})
    return plots.plot_throughput_delay(points, out, label="label", filename=filename)


@pytest.mark.parametrize("suffix", [".png", ".pdf"])
def test_file_name_picks_the_format(tmp_path, suffix):
    path = _scatter(tmp_path, f"scatter{suffix}")
    assert path.name == f"scatter{suffix}" and path.read_bytes().startswith(MAGIC[suffix])


def test_svg_is_svg_and_figures_are_reproducible(tmp_path):
    svg = _scatter(tmp_path, "scatter.svg").read_bytes()
    assert b"<svg" in svg[:500]
    first = _scatter(tmp_path, "again.pdf").read_bytes()
    second = _scatter(tmp_path, "again2.pdf").read_bytes()
    assert first == second  # no creation date or version in the file


def test_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(CcsimError, match=r"\.jpg is not a figure format"):
        _scatter(tmp_path, "scatter.jpg")
    assert not list(tmp_path.iterdir())
    with pytest.raises(CcsimError, match="format: 'eps'"):
        with plots.figure_format("eps"):
            pass


def test_ccsim_plot_format_pdf_writes_real_pdfs(tmp_path):
    pytest.importorskip("ccsim._core")
    out = tmp_path / "run"
    run = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(out), "--no-plots"])
    assert run.exit_code == 0, run.output
    result = CliRunner().invoke(cli, ["plot", str(out), "--format", "pdf"])
    assert result.exit_code == 0, result.output
    pdfs = sorted(p.name for p in out.glob("*.pdf"))
    assert pdfs == ["cwnd.pdf", "goodput.pdf", "queue_delay.pdf", "queue_delay_cdf.pdf"]
    for name in pdfs:
        assert (out / name).read_bytes().startswith(b"%PDF-"), name
    assert not list(out.glob("*.png"))
    # the marker lists them, so --force may replace them later
    assert "cwnd.pdf" in (out / ".ccsim-files").read_text()


def test_loss_sweep_gets_a_log_axis_and_every_series_its_own_cue(tmp_path, monkeypatch):
    figures = []
    real_save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, out, name: (figures.append(fig), real_save(fig, out, name))[1])
    flows = pd.DataFrame({"topology.loss": [0.0, 0.0001, 0.001, 0.01] * 2, "algorithm": ["newreno"] * 4 + ["chd"] * 4,
                          "goodput_bps": [9e6, 8e6, 6e6, 3e6, 9e6, 9e6, 8.5e6, 8e6]})
    plots.plot_sweep_goodput(flows, "topology.loss", tmp_path, group="algorithm", bars="ci")
    ax = figures[-1].axes[0]
    assert ax.get_xscale() == "symlog"
    lines = [line for line in ax.get_lines() if line.get_label() in ("newreno", "chd")]
    styles = {(line.get_color(), line.get_marker(), line.get_linestyle()) for line in ax.containers for line in [line.lines[0]]}
    assert len(styles) == 2  # colour, marker and line style all differ between the two series
    assert not lines or len({line.get_color() for line in lines}) == 2
    assert plots.PALETTE[0] == "#0072B2"  # Okabe-Ito, not Matplotlib's default red/green
    linear = pd.DataFrame({"x": [1.0, 2.0, 3.0], "goodput_bps": [1e6, 2e6, 3e6]})
    plots.plot_sweep_goodput(linear, "x", tmp_path, filename="lin.png")
    assert figures[-1].axes[0].get_xscale() == "linear"
    legend = figures[0].axes[0].get_legend()
    assert legend is not None and legend.get_bbox_to_anchor().x0 >= figures[0].axes[0].get_window_extent().x1 - 1
