"""The paper reproductions (issue 9): `ccsim reproduce --all --quick` runs every paper experiment and
writes its claims table; the two algorithm defects it found stay fixed in whole runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim import experiments, reproduction_pages
from ccsim.cli import cli


PAGES = Path(__file__).resolve().parents[1] / "docs" / "reproductions"


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("ccsim._core")


def test_list_names_the_paper_figure_of_every_experiment(core):
    result = CliRunner().invoke(cli, ["reproduce", "--list"])
    assert result.exit_code == 0, result.output
    for exp in experiments.all_experiments():
        if exp.paper_key:
            assert f"[{exp.paper_key} {exp.figure}]" in result.stdout
    assert {"chd", "leith", "limit"} <= set(experiments.papers())
    bad = CliRunner().invoke(cli, ["reproduce", "--paper", "nope"])
    assert bad.exit_code == 2 and "--paper: unknown paper 'nope'" in bad.stderr


def test_reproduce_all_quick_writes_every_claims_table(core, tmp_path):
    out = tmp_path / "all"
    result = CliRunner().invoke(cli, ["reproduce", "--all", "--quick", "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    chosen = [e for e in experiments.all_experiments() if e.paper_key]
    # the pages' recorded --quick verdicts: a page whose experiments now give another verdict is stale
    assert reproduction_pages.quick_problems(PAGES, out) == []
    summary = (out / "summary.md").read_text()
    for exp in chosen:
        rows = json.loads((out / exp.name / "claims.json").read_text())
        assert len(rows) == len(exp.claims) and rows, exp.name
        assert (out / exp.name / "claims.md").is_file() and list((out / exp.name).glob("*.png")), exp.name
        assert f"## {exp.name}:" in summary
        for row in rows:  # every claim with a verdict rule got one (quick runs may lack points: not judged)
            assert row["label"] in ("agrees", "partly", "differs", "not judged", "informative"), row
            if row["verdict"]:
                assert row["verdict"].startswith(row["label"]), row
    for key in ("chd", "leith", "limit", "budzisz", "binomial"):
        assert f"| {key} |" in summary


def _doc(algorithm: str, seed: int, params: dict | None = None) -> dict:
    return {
        "run": {"duration": "60s", "seed": seed},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "50ms", "queue": "83pkt", "loss": 0.01},
        "tcp": {"profile": "ns2", "rwnd": "64MiB", "mss": "1460B"},
        "flows": [{"algorithm": algorithm, "count": 1, **({"params": params} if params else {})}],
    }


def test_tcp_limit_keeps_newreno_goodput_under_random_loss(core):
    """10 Mbit/s, 100 ms, BDP queue, 1 % random loss: TCP Limit at least NewReno's goodput (issue 9;
    before the fix its held window collapsed it to about half of NewReno's)."""
    import ccsim
    from ccsim.scenario import Scenario

    def goodput(algorithm, seed, params=None):
        return float(ccsim.run(Scenario.from_dict(_doc(algorithm, seed, params))).summary["goodput_bps"].iloc[0])

    for seed in (1, 2, 3):
        reno, limit = goodput("newreno", seed), goodput("tcp_limit", seed)
        assert limit >= 0.98 * reno, (seed, limit, reno)
    # The printed hold test (no backlog premise) is what collapsed: pinned so the cause stays visible.
    printed = goodput("tcp_limit", 1, {"hold_needs_queue": False})
    assert printed < 0.85 * goodput("newreno", 1)


def test_leith_fig3_rtt_min_steps_down_from_200_to_120_ms(core):
    """Slow start off (the judged set-up): delta 0.75 ratchets 200 -> 120 ms in steps; delta 1 (eq. 3)
    stays above 120 ms, since its backoff drains only to RTTmin. With slow start on, delta 1 reaches
    120 ms too: the drain after slow start's overshoot, not the probe of eq. (4)."""
    import ccsim
    from ccsim.experiments import leith
    from ccsim.experiments.traces import metric_series

    plan = leith.fig3_plan(quick=True)

    def rtt_min(delta, slow_start):
        (point,) = [p for p in plan.points() if p.overrides[leith.DELTA_PATH] == delta and p.overrides[leith.SS_PATH] == slow_start]
        result = ccsim.run(plan.scenario(point.point_id), seed=plan.seed_for(0))
        return metric_series(result, "rtt_min_ms")["value"].to_numpy()

    s = rtt_min(0.75, False)
    assert s[0] == pytest.approx(200.0)
    assert abs(s[-1] - 120.0) <= 0.05 * 120.0
    distinct = sorted(set(round(v, 1) for v in s), reverse=True)
    assert len(distinct) >= 4, distinct  # a staircase, not one jump
    assert rtt_min(1.0, False)[-1] > 1.2 * 120.0
    assert abs(rtt_min(1.0, True)[-1] - 120.0) <= 0.05 * 120.0
