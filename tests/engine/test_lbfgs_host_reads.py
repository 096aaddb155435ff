"""The batched solver reads the device's state on the host once per check (every CHECK_EVERY
evaluations on a GPU), not per iteration or line-search trial: counted on the CPU with the
Tensor methods that would wait for a GPU patched (`bench.probe.host_reads`), at the GPU's
interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine.probes.batched as batched
from bench.probe import host_reads
from engine.probes import lbfgs
from engine.probes.batched import BatchedLogisticRegression
from engine.probes.exact import few_shot_indices
from engine.probes.lbfgs import CHECK_EVERY
from tests.engine.test_batched_probe import embeddings


@pytest.fixture
def gpu_interval(monkeypatch) -> list[int]:
    """The GPU's check interval on the CPU, and the objective's evaluations counted (one entry
    per fit). `raising=False`: on a solver without checks the counts below still run."""
    monkeypatch.setattr(lbfgs, "check_interval", lambda device: CHECK_EVERY, raising=False)
    evaluations: list[int] = []
    objective = batched.logistic_objective

    def counted(batch, penalty):
        fun = objective(batch, penalty)
        evaluations.append(0)

        def call(theta, index):
            evaluations[-1] += 1
            return fun(theta, index)
        return call

    monkeypatch.setattr(batched, "logistic_objective", counted)
    return evaluations


def fit_counted(evaluations: list[int], X, y, rows=None, **params):
    """The fit, the host reads of its solver's loop (those of the same fit with max_iter = 0,
    whose loop only checks once, taken off) and its evaluations in the loop (the first one, at
    the start, comes before it)."""
    with host_reads() as fixed:
        BatchedLogisticRegression(**params, max_iter=0).fit(X, y, rows)
    with host_reads() as reads:
        est = BatchedLogisticRegression(**params).fit(X, y, rows)
    return est, sum(reads.values()) - sum(fixed.values()), evaluations[-1] - 1


@pytest.mark.parametrize("standardize", [False, True], ids=["raw", "standardised"])
def test_a_fit_reads_the_host_once_per_check_not_per_iteration(gpu_interval,
                                                              standardize: bool) -> None:
    X, y = embeddings(2000, 64, 10, seed=10)
    est, loop_reads, evaluations = fit_counted(gpu_interval, X, y, standardize=standardize)
    iterations = int(est.n_iter_[0])
    assert est.converged_.all() and iterations >= 20 and evaluations >= iterations
    assert loop_reads == math.ceil(evaluations / CHECK_EVERY)
    assert loop_reads <= iterations // 2


def test_problems_finishing_between_checks_end_where_they_would_alone(gpu_interval,
                                                                     monkeypatch) -> None:
    """Twenty k-shot problems stop at different iterations (between checks); each keeps the
    state of the evaluation where it stopped, as with a check after every evaluation."""
    X, y = embeddings(2000, 64, 4, seed=3)
    rows = [few_shot_indices(y, k, seed) for k in (10, 1) for seed in range(10)]
    sparse, loop_reads, evaluations = fit_counted(gpu_interval, X, y, rows, standardize=True)
    monkeypatch.setattr(lbfgs, "check_interval", lambda device: 1)
    every = BatchedLogisticRegression(standardize=True).fit(X, y, rows)
    assert len(set(every.n_iter_.tolist())) > 5          # they do stop at different iterations
    np.testing.assert_array_equal(sparse.n_iter_, every.n_iter_)
    assert sparse.converged_.all() and every.converged_.all()
    np.testing.assert_allclose(sparse.coef_, every.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.intercept_, every.intercept_, rtol=1e-10, atol=1e-12)
    assert loop_reads == math.ceil(evaluations / CHECK_EVERY) <= every.n_iter_.max() // 2
