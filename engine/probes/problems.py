"""A batch of B classification problems over one design: rows, labels, weights, standardisation.

Two layouts, chosen by `build_batch`:

- shared: one matrix X (n, d) for all problems; problem b weights row i by how often i is in its
  training rows (0 for rows it does not use). One matrix product serves all B problems.
- stacked: each problem has its own rows X_b (m, d) (gathered and zero-padded, padding weight 0).
  Used when the row sets are small (k-shot) so no time is spent on rows a problem does not use.

Standardisation (mean and population standard deviation of each problem's own training rows, as
scikit-learn's StandardScaler computes them; near-constant features get scale 1) is folded into
the linear map, `((x - mean) / scale) @ W == x @ (W / scale) - (mean / scale) @ W`, so X is never
copied per problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor


@dataclass(frozen=True)
class Design:
    """Features of B problems, with optional per-problem standardisation."""

    X: Tensor                # (n, d) shared, or (B, m, d) stacked
    mean: Tensor | None      # (B, d) or None without standardisation
    scale: Tensor | None     # (B, d) or None

    @property
    def shared(self) -> bool:
        return self.X.dim() == 2

    def linear(self, W: Tensor) -> Tensor:
        """Standardised features times W (B, d, K): logits without intercept, (B, m, K)."""
        if self.scale is not None:
            W = W / self.scale[:, :, None]
        if self.shared:
            # (W^T X^T)^T rather than X W: autograd then forms the gradient as G^T X, which BLAS
            # runs fast; X^T G with few columns is a slow path (10-40x here, MKL, float64).
            n_problems, d, k = W.shape
            Z = W.transpose(1, 2).reshape(n_problems * k, d) @ self.X.T
            Z = Z.reshape(n_problems, k, -1).transpose(1, 2)
        else:
            Z = torch.bmm(self.X, W)
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
    Xt = as_tensor(X, device, dtype)
    y = np.asarray(y)
    if Xt.dim() == 3:
        if rows is not None or y.shape != Xt.shape[:2]:
            raise ValueError("stacked X (B, m, d) needs labels y of shape (B, m) and no rows")
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
            Xt = Xt[torch.as_tensor(index, device=device)]
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


def _moments(design: Design, weight: Tensor) -> tuple[Tensor, Tensor]:
    """Per-problem weighted mean and StandardScaler scale (population sd, 1 where constant)."""
    n = weight.sum(1)
    if design.shared:
        means, variances = [], []
        for w in weight:
            mean = w @ design.X / w.sum()
            means.append(mean)
            variances.append(w @ (design.X - mean) ** 2 / w.sum())
        mean, var = torch.stack(means), torch.stack(variances)
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
    """Weighted mean log-loss of logits Z (B, m, K') per problem, (B,).

    K' = 1: binary log-loss log(1 + exp(z)) - y·z (class index 1 is the positive class).
    K' = K > 2: multinomial log-loss logsumexp(z) - z_y.
    """
    y = batch.y.expand(batch.weight.shape)
    if Z.shape[-1] == 1:
        z = Z[..., 0]
        pointwise = torch.nn.functional.softplus(z) - y.to(z.dtype) * z
    else:
        pointwise = torch.logsumexp(Z, -1) - Z.gather(-1, y[..., None])[..., 0]
    return (batch.weight * pointwise).sum(1) / batch.n_train


def decide(Z: Tensor, classes: np.ndarray) -> np.ndarray:
    """Predicted labels from logits (B, m, K'): z > 0 picks classes[1] when K' = 1, else argmax."""
    index = (Z[..., 0] > 0).long() if Z.shape[-1] == 1 else Z.argmax(-1)
    return classes[index.cpu().numpy()]


def resolve_device(device: str | torch.device | None) -> torch.device:
    """`None` or "auto": CUDA where available, else CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)
