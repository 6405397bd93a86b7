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


# --- mixes of delay-based and loss-based flows (our extension, docs/reproductions/budzisz.md) -------

HD = {"q_min_ms": 5.0, "q_th_ms": 20.0, "q_max_floor_ms": 100.0, "p_max": 0.05}


def test_pert_ramp_is_the_gentle_red_ramp():
    g = fluid.PertProbability.from_params("mpert", {"t_min_ms": 5.0, "t_max_ms": 20.0, "p_max": 0.05})
    # 0 below T_min, p_max at T_max, (1 + p_max)/2 half way to 2 T_max, 1 from 2 T_max
    assert g([0.004, 0.0125, 0.020, 0.030, 0.040, 0.1]).tolist() == pytest.approx([0, 0.025, 0.05, 0.525, 1.0, 1.0])
    assert fluid.PertProbability.from_params("pert", {"gentle": False})(0.03) == pytest.approx(1.0)


def test_hd_mix_with_a_full_queue_is_loss_based_and_fair():
    """delta = delta_max = 100 ms: HD's g is 0, both flows halve on loss only. One NewReno, one HD,
    RTT + delta = 0.2 s, C = 1000 pkt/s: 2 sqrt(2/p) / 0.2 = 1000, so sqrt(2/p) = 100, p = 2e-4,
    the same as 2 NewReno flows (p*(delta))."""
    e = fluid.mixed_equilibrium(1000.0, 0.1, [0.1], fluid.DelayPopulation("hd", [0.1], HD))
    assert e.g == 0 and e.loss_rate == pytest.approx(2e-4, rel=1e-6)
    assert e.loss_over_delay == pytest.approx(1.0, rel=1e-6) and e.loss_only_rate == pytest.approx(2e-4, rel=1e-9)


def test_hd_mix_in_region_b_by_hand():
    """delta = 60 ms: g = 0.05 (100 - 60)/80 = 0.025 per packet on top of p. RTT 40 ms (RTT + delta
    = 0.1 s), C = 1000 pkt/s: W_l + W_d = 100 with W_l = sqrt(2/p), W_d = sqrt(2/(p + 0.025)).
    Iterating by hand: W_d = 8.9015, W_l = 91.0985, p = 2/W_l^2 = 2.40995e-4; NewReno gets 10.23x."""
    e = fluid.mixed_equilibrium(1000.0, 0.06, [0.04], fluid.DelayPopulation("hd", [0.04], HD))
    assert e.g == pytest.approx(0.025)
    assert e.window_delay_pkts == pytest.approx(8.9015, abs=1e-3) and e.window_loss_pkts == pytest.approx(91.0985, abs=1e-3)
    assert e.loss_rate == pytest.approx(2.40995e-4, rel=1e-4) and e.loss_over_delay == pytest.approx(10.234, abs=2e-3)


def test_mpert_realised_reading_is_tcp_friendly_and_probability_reading_is_not():
    """Full queue (delta = delta_max = 100 ms: compete mode, b = 0.5, g = 1, one response per RTT so
    q = 1/W). Realised p' = q: alpha = 1 + q/p and W^2 (p + q)/2 = 1 + q/p give W^2 = 2/p, NewReno's
    window, whatever q. With p' = g = 1 alpha sits at alpha_max and NewReno gets far less."""
    rtts = [0.1] * 10
    realised = fluid.mixed_equilibrium(2000.0, 0.1, rtts, fluid.DelayPopulation("mpert", rtts, {"p_prime": "realised"}))
    assert realised.loss_over_delay == pytest.approx(1.0, rel=1e-3)
    assert realised.window_delay_pkts == pytest.approx(np.sqrt(2 / realised.loss_rate), rel=1e-3)
    assert realised.alpha == pytest.approx(1 + realised.response_rate / realised.loss_rate, rel=1e-3) and realised.alpha < 32
    g = fluid.mixed_equilibrium(2000.0, 0.1, rtts, fluid.DelayPopulation("mpert", rtts, {"p_prime": "probability"}))
    assert g.alpha == pytest.approx(32.0) and g.loss_over_delay < 0.5 and g.loss_rate > 3 * realised.loss_rate


def test_pert_beside_newreno_is_starved_by_its_early_responses():
    """Full queue: g = 1, one response per RTT with beta 0.35: W^2 p/2 + 0.35 W = 1, so W < 1/0.35."""
    e = fluid.mixed_equilibrium(1000.0, 0.1, [0.1], fluid.DelayPopulation("pert", [0.1]))
    assert e.window_delay_pkts < 1 / 0.35 and e.loss_over_delay > 20
    with pytest.raises(CcsimError, match="at least one loss-based flow"):
        fluid.mixed_equilibrium(1000.0, 0.1, [], fluid.DelayPopulation("pert", [0.1]))
