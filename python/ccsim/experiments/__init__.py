"""The experiment registry: named, reproducible experiments as code.

An :class:`Experiment` bundles what a paper's figure needs: a scenario builder and a sweep
(``plan(quick)`` -> ``ccsim.sweep.SweepPlan``), the figures drawn from the sweep's results
(``figures(sweep_result, out_dir)`` -> the PNG paths written), and ``claims``: the paper's numbers to
compare, each a row (description, paper value, function computing ours from the sweep) shown in the
report. ``ccsim reproduce NAME`` runs one (:func:`ccsim.reproduce.reproduce`)::

    >>> from ccsim import experiments
    >>> experiments.names()
    ['binomial_fig16', 'binomial_fig17', 'binomial_fig6', 'budzisz_fig3', 'budzisz_fig8', 'budzisz_fluid', 'chd_loss_sweep', 'red_vs_droptail']
    >>> from ccsim.reproduce import reproduce
    >>> reproduce("chd_loss_sweep", out="runs/chd", quick=True)

Register a new one with :func:`register` from a module in this package (imported below) or from
your own code before calling ``reproduce``. The registry lives in ``registry``, the helpers for
experiment modules in ``helpers``; this package re-exports both and loads the shipped experiments.
"""

from __future__ import annotations

from ccsim.experiments.helpers import rows_at, scenario_with
from ccsim.experiments.registry import EXPERIMENT_FILE, Claim, Experiment, all_experiments, get, names, of_paper, papers, register

# The experiments shipped with ccsim register themselves on import (after the registry above).
from ccsim.experiments import chd_loss_sweep as _chd_loss_sweep  # noqa: F401  isort: skip
from ccsim.experiments import red_vs_droptail as _red_vs_droptail  # noqa: F401  isort: skip
from ccsim.experiments import leith as _leith  # noqa: F401  isort: skip
from ccsim.experiments import limit as _limit  # noqa: F401  isort: skip
from ccsim.experiments import chd as _chd  # noqa: F401  isort: skip
from ccsim.experiments import budzisz as _budzisz  # noqa: F401  isort: skip
from ccsim.experiments import budzisz_fluid as _budzisz_fluid  # noqa: F401  isort: skip
from ccsim.experiments import budzisz_onoff as _budzisz_onoff  # noqa: F401  isort: skip
from ccsim.experiments import budzisz_fluid_mixed as _budzisz_fluid_mixed  # noqa: F401  isort: skip
from ccsim.experiments import binomial as _binomial  # noqa: F401  isort: skip
from ccsim.experiments import binomial_windows as _binomial_windows  # noqa: F401  isort: skip
from ccsim.experiments import binomial_lambda as _binomial_lambda  # noqa: F401  isort: skip
from ccsim.experiments import binomial_multihop as _binomial_multihop  # noqa: F401  isort: skip

__all__ = ["Claim", "Experiment", "register", "get", "names", "all_experiments", "papers", "of_paper", "scenario_with", "rows_at", "EXPERIMENT_FILE"]
