"""ccsim.fluid: the coexistence paper's fluid model (Section IV) against a hand computation."""

from __future__ import annotations

import numpy as np
import pytest

from ccsim import fluid
from ccsim.errors import CcsimError

pytest.importorskip("ccsim._core")

G = fluid.HdProbability(p_max=0.05, q_min=0.005, q_th=0.020, q_max=0.100)


def test_g_is_the_two_region_function():
    assert G([0.0, 0.005, 0.0125, 0.020, 0.060, 0.100, 0.2]).tolist() == pytest.approx([0, 0, 0.025, 0.05, 0.025, 0, 0])


def test_p_star_by_hand():
    # one flow, C = 1000 pkt/s, RTT 100 ms, delta 20 ms: 2 / C^2 * (1 / 0.12)^2 = 1.3889e-4
    assert float(fluid.p_star(0.02, 1000.0, [0.1])) == pytest.approx(2 / 1e6 / 0.12**2, rel=1e-12)
    # two flows add their 1/(RTT + delta): (1/0.06 + 1/0.12)^2 * 2 / 1e6 = 625 * 2e-6
    assert float(fluid.p_star(0.02, 1000.0, [0.04, 0.1])) == pytest.approx(1.25e-3, rel=1e-12)


def test_one_equilibrium_against_a_hand_computation():
    """One flow, C = 1000 pkt/s, RTT 100 ms. Region A: 0.05 (d - 0.005) / 0.015 = 2e-6 / (0.1 + d)^2.
    At d = 0.005 the right side is 1.8141e-4, so d - 0.005 = 0.3 * 1.814e-4 = 5.44e-5; one more step
    (right side 1.8122e-4 at d = 0.0050544) gives d1 = 0.0050544 (stable). Region B: 0.05 (0.1 - d) / 0.08
    = 2e-6 / (0.1 + d)^2 gives 0.1 - d = 1.6 * 5.004e-5, d2 = 0.0999199 (unstable)."""
    found = fluid.equilibria(G, 1000.0, [0.1])
    assert [e.stable for e in found] == [True, False]
    assert found[0].delta_s == pytest.approx(0.0050544, abs=2e-7)
    assert found[1].delta_s == pytest.approx(0.0999199, abs=2e-7)
    assert found[0].window_pkts == pytest.approx(1000 * (0.1 + found[0].delta_s))  # W = C (RTT + delta)


def test_theorem_one_cases():
    rtts = np.full(30, 0.05)
    # p*(delta_th) = 2 / C^2 * (30 / 0.07)^2: below p_max at C = 5000 pkt/s (0.0147), above at 1000 (0.367)
    assert len(fluid.equilibria(G, 5000.0, rtts)) == 2
    assert fluid.equilibria(G, 1000.0, rtts) == []


def test_parameters_come_from_the_engine_catalogue():
    g = fluid.HdProbability.from_params({"p_max": 0.05}, q_max_s=0.1)
    assert (g.q_min, g.q_th, g.p_max) == (0.005, 0.030, 0.05)  # HD's defaults (Hayes): 5 and 30 ms
    with pytest.raises(CcsimError, match="q_min < q_th < q_max"):
        fluid.HdProbability.from_params({})  # the default delta_max is HD's running maximum (no floor): give one
    with pytest.raises(CcsimError, match="q_min < q_th < q_max"):
        fluid.HdProbability.from_params({"q_max_floor_ms": 10.0})
