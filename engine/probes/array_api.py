"""geneb-v1's probe through scikit-learn's array-API dispatch (solver `sklearn-lbfgs-array-api`,
protocol geneb-v1-array-api): scikit-learn's own `LogisticRegression` (lbfgs, C = 1, 1,000
iterations, unscaled float32 features, geneb-v1's metrics) fitted on torch tensors, so that on a
GPU its loss and gradient run there while scipy's L-BFGS-B iterates on the host, as it does for
numpy input.

The protocol sends only its full regime here (`Protocol.few_shot_solver`, applied by
`engine.probes.probe_rows`): its few-shot regimes run geneb-v1's exact CPU path. Measured on a
GPU (H200) over the 39 geneb-mini k-mer cells, the full regime pays on a large cell (6.90x the
exact path on one 30,000 x 1,024 cell, 0 of 195 full rows differ) while the few-shot fits, small
and stopped after 1-3 lbfgs iterations at test margins near 1e-4, gained nothing (0.63x over the
small cells) and differed visibly (101 of 195 10-shot rows, 98 of 195 1-shot rows; largest
|MCC difference| 0.1155 and 0.2121).

Torch reduces in its own order (and on CUDA in a different one again), so the loss and gradient
differ from numpy's in the last bits; lbfgs then takes slightly different steps, and where it stops
at 1,000 iterations without converging the predictions can differ visibly. That is why this is a
protocol of its own (its own hash), never geneb-v1: `bench/array_api.py` measures its largest
|MCC difference| against the exact CPU path (`engine.probes.exact`) on the geneb-mini fixtures.

scikit-learn refuses to dispatch unless SCIPY_ARRAY_API=1 is in the environment (scipy's own
array-API switch, which scipy reads when first imported): the engine sets it when it is imported
(`engine`), before scipy; with numpy input scipy's results do not change.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import sklearn
import torch

from engine.probes.exact import fit_predict, probe_cell
from engine.probes.problems import resolve_device
from store.vocab.errors import GenebError
from store.vocab.protocol import Protocol

SWITCH = "SCIPY_ARRAY_API"   # scipy's switch; scikit-learn checks it at every dispatched fit


def dispatch_problem() -> str | None:
    """Why scikit-learn's array-API dispatch cannot run in this process, or None."""
    if os.environ.get(SWITCH) != "1":
        return (f"protocol geneb-v1-array-api needs {SWITCH}=1 before scipy is imported "
                f"(the engine sets it unless the environment sets it otherwise; here it is "
                f"{os.environ.get(SWITCH)!r})")
    return None


def _fit(X: torch.Tensor, y: np.ndarray, X_test: torch.Tensor, seed: int,
         protocol: Protocol) -> tuple[np.ndarray, dict]:
    """`exact.fit_predict` on tensors of X's device; the predictions back as numpy."""
    pred, info = fit_predict(X, torch.as_tensor(y, device=X.device), X_test, seed, protocol)
    return pred.cpu().numpy(), info


def run_cells(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
              protocols: Sequence[Protocol], regimes: Sequence[str],
              device: str | torch.device | None = None) -> list[list[dict]]:
    """Rows of one cell under each of `protocols`, one list per protocol, for `regimes` (the
    runner of `engine.probes.RUNNERS`, which `engine.probes.probe_rows` gives the full regime
    alone): the features go to `device` once (None: CUDA where available), in their stored
    dtype, and every fit runs there."""
    problem = dispatch_problem()
    if problem is not None:
        raise GenebError(problem)
    device = resolve_device(device)
    X_train_t = torch.as_tensor(np.asarray(X_train)).to(device)
    X_test_t = torch.as_tensor(np.asarray(X_test)).to(device)
    with sklearn.config_context(array_api_dispatch=True):
        return [probe_cell(X_train_t, y_train, X_test_t, y_test, regimes, p, fit=_fit)
                for p in protocols]
