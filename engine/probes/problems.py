"""A batch of B classification problems over one design: rows, labels, weights, standardisation.

Two layouts, chosen by `build_batch`:

- shared: one matrix X (n, d) for all problems; problem b weights row i by how often i is in its
  training rows (0 for rows it does not use). One matrix product serves all B problems. Float32
  features stay float32 (as stored) and are upcast to the compute dtype one row block at a time
  (`Design.row_blocks`, exact), so a pass over X reads half the bytes of a float64 copy.
- stacked: each problem has its own rows X_b (m, d) (gathered and zero-padded, padding weight 0).
  Used when the row sets are small (k-shot) so no time is spent on rows a problem does not use.

Standardisation (mean and population standard deviation of each problem's own training rows, as
scikit-learn's StandardScaler computes them; near-constant features get scale 1) is folded into
the linear map, `((x - mean) / scale) @ W == x @ (W / scale) - (mean / scale) @ W`, so X is never
copied per problem.

`logistic_objective` is the value and analytic gradient of the logistic probe's objective for the
problems of a batch, computed in ONE pass over X: each row block is read once and serves both the
logits of all problems (one matrix product) and their gradient G_b^T X_b while it is in cache.
It equals autograd's value and gradient of `mean_loss` to rounding (1e-12 relative, tested).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from engine.probes.lbfgs import Objective


@dataclass(frozen=True)
class Design:
    """Features of B problems, with optional per-problem standardisation."""

    X: Tensor                # (n, d) shared, or (B, m, d) stacked
    mean: Tensor | None      # (B, d) or None without standardisation
    scale: Tensor | None     # (B, d) or None

    @property
    def shared(self) -> bool:
        return self.X.dim() == 2

    def select(self, index: Tensor) -> Design:
        """The design of the problems `index` (a shared X stays shared, uncopied)."""
        return Design(self.X if self.shared else self.X[index],
                      None if self.mean is None else self.mean[index],
                      None if self.scale is None else self.scale[index])

    def row_blocks(self, dtype: torch.dtype) -> Iterator[tuple[slice, Tensor]]:
        """Row blocks of a shared X, each as (rows, X[rows] in `dtype`): on the CPU small enough
        to stay in cache while the block is used twice (`_BLOCK_BYTES`), elsewhere as large as
        `_DEVICE_BLOCK_BYTES`. An upcast block is written into one reused buffer (no
        allocation, no page faults per block): it is valid until the next block is drawn."""
        n, d = self.X.shape
        budget = _BLOCK_BYTES if self.X.device.type == "cpu" else _DEVICE_BLOCK_BYTES
        step = max(1, budget // (d * torch.finfo(dtype).bits // 8))
        upcast = self.X.dtype != dtype
        buffer = torch.empty((min(step, n), d), dtype=dtype, device=self.X.device) \
            if upcast else None
        for start in range(0, n, step):
            rows = slice(start, min(start + step, n))
            yield rows, (buffer[: rows.stop - start].copy_(self.X[rows]) if upcast
                         else self.X[rows])

    def linear(self, W: Tensor) -> Tensor:
        """Standardised features times W (B, d, K): logits without intercept, (B, m, K)."""
        if self.scale is not None:
            W = W / self.scale[:, :, None]
        X = self.X.to(W.dtype)
        if self.shared:
            # (W^T X^T)^T rather than X W: autograd then forms the gradient as G^T X, which BLAS
            # runs fast; X^T G with few columns is a slow path (10-40x here, MKL, float64).
            n_problems, d, k = W.shape
            Z = W.transpose(1, 2).reshape(n_problems * k, d) @ X.T
            Z = Z.reshape(n_problems, k, -1).transpose(1, 2)
        else:
            Z = torch.bmm(X, W)
        if self.mean is not None:
            Z = Z - torch.bmm(self.mean[:, None, :], W)
        return Z


@dataclass(frozen=True)
class Batch:
    """B problems ready to fit: design, integer labels (0..K-1), row weights, training sizes."""

    design: Design
    y: Tensor                # (B, m) or (1, m) class indices into `classes`
    weight: Tensor           # (B, m) row multiplicities (0 = row not used)
    n_train: Tensor          # (B,) sum of weights
    classes: np.ndarray      # (K,) sorted class labels shared by all problems

    @property
    def n_problems(self) -> int:
        return self.weight.shape[0]

    @property
    def n_outputs(self) -> int:
        """1 for binary problems (one logit, as scikit-learn), else the number of classes."""
        return 1 if len(self.classes) == 2 else len(self.classes)

    def select(self, index: Tensor) -> Batch:
        """The sub-batch of the problems `index` (A,), as the objective of an active set sees it."""
        if len(index) == self.n_problems:
            return self
        return replace(self, design=self.design.select(index),
                       y=self.y if self.y.shape[0] == 1 else self.y[index],
                       weight=self.weight[index], n_train=self.n_train[index])


def build_batch(
    X: np.ndarray | Tensor,
    y: np.ndarray,
    rows: Sequence[np.ndarray] | None,
    *,
    standardize: bool,
    device: torch.device,
    dtype: torch.dtype,
) -> Batch:
    """Assemble a batch from features, labels and optional row sets.

    X (n, d) with y (n,) and `rows` None: one problem on all rows. X (n, d) with y (B, n): B label
    sets on all rows. X (n, d) with `rows` (B index arrays, repeats allowed): B problems on those
    rows of one label vector y (n,), stacked when B · max(len(rows)) <= n, else shared with
    weights. X (B, m, d) with y (B, m): B independent problems of equal shape.
    """
    Xt = as_tensor(X, device, _storage_dtype(X, dtype))
    y = np.asarray(y)
    if Xt.dim() == 3:
        if rows is not None or y.shape != Xt.shape[:2]:
            raise ValueError("stacked X (B, m, d) needs labels y of shape (B, m) and no rows")
        Xt = Xt.to(dtype)
        weight = torch.ones(y.shape, dtype=dtype, device=device)
        labels = y
    elif rows is None:
        labels = y[None, :] if y.ndim == 1 else y
        weight = torch.ones(labels.shape, dtype=dtype, device=device)
    else:
        if y.ndim != 1:
            raise ValueError("row sets index one label vector y of shape (n,)")
        n = Xt.shape[0]
        m = max(len(r) for r in rows)
        if len(rows) * m <= n:
            index = np.zeros((len(rows), m), dtype=np.int64)
            mask = np.zeros((len(rows), m))
            for b, r in enumerate(rows):
                index[b, : len(r)] = r
                mask[b, : len(r)] = 1.0
            Xt = Xt[torch.as_tensor(index, device=device)].to(dtype)
            labels = y[index]
            weight = torch.as_tensor(mask, dtype=dtype, device=device)
        else:
            counts = np.stack([np.bincount(np.asarray(r), minlength=n) for r in rows])
            labels = y[None, :]
            weight = torch.as_tensor(counts, dtype=dtype, device=device)

    used = np.broadcast_to(labels, weight.shape)
    present = weight.cpu().numpy() > 0
    classes = np.unique(used[present])
    if len(classes) < 2:
        raise ValueError(f"a probe needs at least two classes; the training rows hold {classes}")
    for b in range(weight.shape[0]):
        own = np.unique(used[b][present[b]])
        if len(own) != len(classes):
            raise ValueError(f"problem {b} has classes {own.tolist()} but the batch has "
                             f"{classes.tolist()}; fit it in a batch of its own")
    codes = torch.as_tensor(np.searchsorted(classes, labels), device=device)
    design = Design(Xt, None, None)
    if standardize:
        design = Design(Xt, *_moments(design, weight))
    return Batch(design, codes, weight, weight.sum(1), classes)


_BLOCK_BYTES = 1 << 21
"""Bytes of one row block of X in the compute dtype on the CPU (`Design.row_blocks`): a block is
used twice per pass (logits, then gradient), so it should stay in a core's cache in between."""
_DEVICE_BLOCK_BYTES = 1 << 30
"""The same on a GPU, which has no such cache to keep a block in and pays kernel launches per
block (about ten): a 30,000 x 1,024 float64 X is one block, not 120."""


def _storage_dtype(X: np.ndarray | Tensor, dtype: torch.dtype) -> torch.dtype:
    """The dtype X is kept in: float32 features stay float32 under a float64 fit (upcasting them
    is exact, and a pass reads half the bytes), anything else is converted to `dtype`."""
    single = X.dtype in (np.float32, torch.float32)
    return torch.float32 if single and dtype == torch.float64 else dtype


def _moments(design: Design, weight: Tensor) -> tuple[Tensor, Tensor]:
    """Per-problem weighted mean and StandardScaler scale (population sd, 1 where constant)."""
    n = weight.sum(1)
    if design.shared:
        dtype = weight.dtype
        mean = sum(weight[:, rows] @ Xb for rows, Xb in design.row_blocks(dtype)) / n[:, None]
        var = sum(torch.einsum("bm,bmd->bd", weight[:, rows], (Xb - mean[:, None, :]) ** 2)
                  for rows, Xb in design.row_blocks(dtype)) / n[:, None]
    else:
        w = weight[:, :, None]
        mean = (w * design.X).sum(1) / n[:, None]
        var = (w * (design.X - mean[:, None, :]) ** 2).sum(1) / n[:, None]
    # scikit-learn's _is_constant_feature bound, with float64 eps as scikit-learn uses.
    eps = float(np.finfo(np.float64).eps)
    constant = var <= n[:, None] * eps * var + (n[:, None] * mean * eps) ** 2
    scale = torch.where(constant, torch.ones_like(var), var.sqrt())
    return mean, scale


def as_tensor(X: np.ndarray | Tensor, device: torch.device, dtype: torch.dtype) -> Tensor:
    """Features as a tensor on `device` in `dtype` (a copy only where needed)."""
    return torch.as_tensor(X if isinstance(X, Tensor) else np.asarray(X)).to(device, dtype)


def l2_weight(C: float | Sequence[float], batch: Batch) -> Tensor:
    """Per-problem weight of ‖W‖² in the mean-form objective: 1 / (2 · C_b · n_b), (B,)."""
    C_b = torch.as_tensor(C, dtype=batch.n_train.dtype, device=batch.n_train.device)
    if C_b.dim() and len(C_b) != batch.n_problems:
        raise ValueError(f"{len(C_b)} values of C for {batch.n_problems} problems")
    return 1.0 / (2.0 * C_b * batch.n_train)


def mean_loss(Z: Tensor, batch: Batch) -> Tensor:
    """Weighted mean log-loss of logits Z (B, m, K') per problem, (B,) (`_pointwise_loss`)."""
    y = batch.y.expand(batch.weight.shape)
    return (batch.weight * _pointwise_loss(Z, y)).sum(1) / batch.n_train


def _pointwise_loss(Z: Tensor, y: Tensor) -> Tensor:
    """Log-loss of each row, (B, m), from logits Z (B, m, K') and class indices y (B, m).

    K' = 1: binary log-loss log(1 + exp(z)) - y·z (class index 1 is the positive class).
    K' = K > 2: multinomial log-loss logsumexp(z) - z_y.
    """
    if Z.shape[-1] == 1:
        z = Z[..., 0]
        return torch.nn.functional.softplus(z) - y.to(z.dtype) * z
    return torch.logsumexp(Z, -1) - Z.gather(-1, y[..., None])[..., 0]


def _loss_residual(Z: Tensor, y: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
    """Weighted loss sums (B,) of logits Z (B, m, K') and their derivative w · ∂loss/∂Z (B, m, K'):
    sigmoid(z) - y for one logit, softmax(z) - onehot(y) for K."""
    if Z.shape[-1] == 1:
        R = torch.sigmoid(Z) - y[..., None].to(Z.dtype)
    else:
        R = torch.softmax(Z, -1)
        R.scatter_add_(-1, y[..., None], -torch.ones_like(R[..., :1]))
    return (w * _pointwise_loss(Z, y)).sum(1), R * w[..., None]


def logistic_objective(batch: Batch, penalty: Tensor) -> Objective:
    """Value and gradient of `mean_loss(design.linear(W) + c) + penalty · ‖W‖²` over parameters
    theta (A, (d + 1) · K') = [W (d, K'), c (K')] of the problems `index`, without autograd.

    Shared X: one pass over its row blocks, each serving the logits Z_b = X_b W̃ of all A
    problems and, while in cache, the gradient G_b^T X_b. With W̃ = W / scale and logits
    X W̃ - mean·W̃ + c, ∂/∂W = (X^T G - mean^T ΣG) / scale, ∂/∂c = ΣG (G: residuals / n).
    """
    d = batch.design.X.shape[-1]
    k = batch.n_outputs

    def fun(theta: Tensor, index: Tensor) -> tuple[Tensor, Tensor]:
        sub = batch.select(index)
        design = sub.design
        params = theta.view(-1, d + 1, k)
        W, c = params[:, :d], params[:, d]
        Wt = W if design.scale is None else W / design.scale[:, :, None]
        offset = c if design.mean is None else c - torch.bmm(design.mean[:, None, :], Wt)[:, 0]
        n_problems = len(index)
        y = sub.y.expand(sub.weight.shape)
        if design.shared:
            rows_k = Wt.transpose(1, 2).reshape(n_problems * k, d)   # (A·K', d)
            GX = torch.zeros_like(rows_k)
            G_sum = torch.zeros_like(offset)
            loss = torch.zeros_like(offset[:, 0])
            for rows, Xb in design.row_blocks(theta.dtype):
                Z = (rows_k @ Xb.T).view(n_problems, k, -1).transpose(1, 2) + offset[:, None, :]
                part, R = _loss_residual(Z, y[:, rows], sub.weight[:, rows])
                loss += part
                Rt = R.transpose(1, 2).reshape(n_problems * k, -1)     # (A·K', m_b)
                GX.addmm_(Rt, Xb)
                G_sum += Rt.sum(1).view(n_problems, k)
            grad_Wt = GX.view(n_problems, k, d).transpose(1, 2)
        else:
            Z = torch.bmm(design.X, Wt) + offset[:, None, :]
            loss, R = _loss_residual(Z, y, sub.weight)
            grad_Wt = torch.bmm(R.transpose(1, 2), design.X).transpose(1, 2)
            G_sum = R.sum(1)
        n = sub.n_train
        pen = penalty[index]
        if design.mean is not None:
            grad_Wt = grad_Wt - design.mean[:, :, None] * G_sum[:, None, :]
        grad_W = grad_Wt if design.scale is None else grad_Wt / design.scale[:, :, None]
        grad_W = grad_W / n[:, None, None] + 2 * pen[:, None, None] * W
        grad = torch.cat([grad_W, (G_sum / n[:, None])[:, None, :]], 1)
        value = loss / n + pen * (W * W).sum((1, 2))
        return value, grad.reshape(n_problems, -1)

    return fun


HESSIAN_BOUND = 0.25
"""The logistic loss's largest second derivative (sigmoid(z)·(1 - sigmoid(z)) <= 1/4): the loss
Hessian is at most HESSIAN_BOUND times the features' second moment, which sets the ridge of the
`Curvature` preconditioner. Measured on the five-value sweep (n = 6,000, d = 512, 10 classes):
358 iterations with 0.1, 361 with 0.25, 380 with 1.0; the value matters little."""


@dataclass(frozen=True)
class Curvature:
    """The eigen-decomposition Q diag(e) Q^T of a problem's second-moment matrix
    A = Σ_i w_i [x̃_i, 1][x̃_i, 1]^T / n of [features, 1] (x̃: the features in the units of the
    parameters, standardised where the batch standardises): the part of the logistic objective's
    Hessian that the features set.

    `preconditioner(penalty)` applies (A + λ I)^-1 per output column of theta, with
    λ = 2 · penalty / HESSIAN_BOUND: a model of the inverse Hessian (loss Hessian <= A / 4, penalty
    Hessian 2 · penalty) that L-BFGS scales and refines with its curvature pairs. It changes the
    path to the optimum, never the objective or the stopping test. Embedding features have
    spectra decaying over orders of magnitude (here 1e-2 to 1e2), which is what makes plain
    L-BFGS slow on them: on the five-value sweep (n = 6,000, d = 512, 10 classes, warm-started
    along C) the preconditioner cut the iterations from 3,391 to 361 (46.3 s to 4.9 s), 2
    classes 398 to 54, with lower objective values at the same tolerance.
    """

    values: Tensor    # (d + 1,) eigenvalues, ascending
    vectors: Tensor   # (d + 1, d + 1) orthonormal eigenvectors, as columns

    def preconditioner(self, penalty: float, k: int) -> Callable[[Tensor], Tensor]:
        """(A + λ I)^-1 applied to each row of a (B, (d + 1) · k) tensor of parameter-shaped
        vectors, per output column."""
        Q = self.vectors
        inverse = 1.0 / (self.values + 2.0 * penalty / HESSIAN_BOUND)[:, None]

        def apply(q: Tensor) -> Tensor:
            v = q.view(len(q), -1, k)
            return (Q @ (inverse * (Q.T @ v))).view(q.shape)

        return apply


def feature_curvature(batch: Batch) -> Curvature | None:
    """The `Curvature` of a batch of one problem over a shared X with more rows than features
    (a full-regime fit): one pass over X's row blocks (n · d² operations), then an
    eigen-decomposition of (d + 1)².

    None otherwise. Several problems would need one pass each. With no more rows than features
    (the k-shot problems) the classes are separable, the loss curvature vanishes as the fit
    proceeds and A / 4 overstates it: measured on the sweep's k-shot batches (m = 100 and 10
    rows, d = 1,024, 10 classes), (A + λ I)^-1 from each problem's rows took the 10-shot batch
    from 8.7 s to 20.6 s (mean iterations 133 to 137).
    """
    design = batch.design
    n, d = design.X.shape[-2:]
    if not design.shared or batch.n_problems != 1 or n <= d:
        return None
    dtype = batch.weight.dtype
    w = batch.weight[0]
    moment = torch.zeros((d + 1, d + 1), dtype=dtype, device=design.X.device)
    for rows, Xb in design.row_blocks(dtype):
        weighted = Xb.T * w[rows]                               # (d, m_b)
        moment[:d, :d].addmm_(weighted, Xb)
        moment[:d, d] += weighted.sum(1)
    moment[d, :d] = moment[:d, d]                               # eigh reads the lower half
    moment[d, d] = w.sum()
    moment /= batch.n_train[0]
    if design.mean is not None:
        # [x̃, 1] = T [x, 1] with T = [[diag(1 / scale), -mean / scale], [0, 1]]
        T = torch.eye(d + 1, dtype=dtype, device=moment.device)
        T[:d, :d] = torch.diag(1.0 / design.scale[0])
        T[:d, d] = -design.mean[0] / design.scale[0]
        moment = T @ moment @ T.T
    values, vectors = torch.linalg.eigh(moment)
    return Curvature(values.clamp_min(0.0), vectors)


def decide(Z: Tensor, classes: np.ndarray) -> np.ndarray:
    """Predicted labels from logits (B, m, K'): z > 0 picks classes[1] when K' = 1, else argmax."""
    index = (Z[..., 0] > 0).long() if Z.shape[-1] == 1 else Z.argmax(-1)
    return classes[index.cpu().numpy()]


def resolve_device(device: str | torch.device | None) -> torch.device:
    """`None` or "auto": CUDA where available, else CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)
