"""Batched L-BFGS: minimise B independent smooth objectives at once, one state per problem.

Each problem keeps its own curvature history, step length and stopping test; only the function
evaluations are shared (one call computes the values and gradients of the problems still
searching, so a batch reads a shared design matrix once per evaluation). The active set is
compacted: converged problems, and those whose line search has already accepted a step, are not
passed to the objective, so a batch costs per evaluation what its active members cost.

Step lengths come from a backtracking line search with the Armijo condition (sufficient decrease
`f(x + t·d) <= f(x) + c1·t·∇f(x)·d`) and quadratic interpolation. Curvature pairs with
`s·y <= 0` are not stored, which keeps every search direction a descent direction; for strongly
convex objectives (L2-regularised logistic regression) `s·y > 0` always holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

Objective = Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]
"""Maps parameters (A, P) of the problems `index` (A,) (indices into the batch, increasing) to
their values (A,) and gradients (A, P)."""


@dataclass(frozen=True)
class LbfgsResult:
    """Outcome of `minimize_lbfgs`, one entry per problem."""

    x: Tensor          # (B, P) final parameters
    value: Tensor      # (B,) objective at x
    grad_max: Tensor   # (B,) max-norm of the gradient at x
    n_iter: Tensor     # (B,) L-BFGS iterations taken (accepted steps)
    converged: Tensor  # (B,) grad_max <= tol


def value_and_grad(objective: Callable[[Tensor, Tensor], Tensor]) -> Objective:
    """An `Objective` from a function of (parameters, index) returning A separable values,
    differentiated by autograd.

    The gradient of the sum of independent problems is, block by block, each problem's gradient.
    """

    def fun(x: Tensor, index: Tensor) -> tuple[Tensor, Tensor]:
        x = x.detach().requires_grad_(True)
        with torch.enable_grad():
            values = objective(x, index)
            (grad,) = torch.autograd.grad(values.sum(), x)
        return values.detach(), grad

    return fun


def minimize_lbfgs(
    fun: Objective,
    x0: Tensor,
    *,
    tol: float,
    max_iter: int,
    history: int = 10,
    max_linesearch: int = 40,
    c1: float = 1e-4,
    precondition: Callable[[Tensor], Tensor] | None = None,
) -> LbfgsResult:
    """Minimise B problems from `x0` (B, P) until each gradient max-norm is <= `tol`.

    A problem stops when it converges, after `max_iter` iterations, or when its line search finds
    no decrease in `max_linesearch` trials (at the limit of floating-point resolution).

    `precondition`: a symmetric positive definite P applied to (B, P) tensors, a model of the
    inverse Hessian: the two-loop recursion starts from gamma·P (gamma = s·y / y·Py) instead of
    gamma·I, and the first step tries length 1. The stopping test is on the gradient itself.
    """
    x = x0.detach().clone()
    n_problems, _ = x.shape
    f, g = fun(x, torch.arange(n_problems, device=x.device))
    active = g.abs().amax(1) > tol
    n_iter = torch.zeros(n_problems, dtype=torch.long, device=x.device)
    s_hist: list[Tensor] = []
    y_hist: list[Tensor] = []
    rho_hist: list[Tensor] = []
    gamma = torch.ones_like(f)
    has_curvature = torch.zeros_like(active)

    for _ in range(max_iter):
        if not bool(active.any()):
            break
        d = -_two_loop(g, s_hist, y_hist, rho_hist, gamma, precondition)
        gd = (g * d).sum(1)
        not_descent = gd >= 0
        d = torch.where(not_descent[:, None], -g, d)
        gd = torch.where(not_descent, -(g * g).sum(1), gd)
        d = d * active[:, None]
        gd = gd * active
        first = torch.clamp(1.0 / g.abs().sum(1).clamp_min(torch.finfo(g.dtype).tiny), max=1.0) \
            if precondition is None else torch.ones_like(f)
        t = torch.where(has_curvature, torch.ones_like(f), first)

        x_new, f_new, g_new = x.clone(), f.clone(), g.clone()
        pending = active.clone()
        for _ in range(max_linesearch):
            trial = x + t[:, None] * d
            index = pending.nonzero()[:, 0]
            f_t, g_t = f.clone(), g.clone()
            f_t[index], g_t[index] = fun(trial[index], index)
            accept = pending & (f_t <= f + c1 * t * gd)
            x_new = torch.where(accept[:, None], trial, x_new)
            f_new = torch.where(accept, f_t, f_new)
            g_new = torch.where(accept[:, None], g_t, g_new)
            pending = pending & ~accept
            if not bool(pending.any()):
                break
            t_quad = -gd * t * t / (2 * (f_t - f - t * gd))
            t_quad = torch.nan_to_num(t_quad, nan=0.0, posinf=0.0, neginf=0.0)
            t = torch.where(pending, torch.minimum(torch.maximum(t_quad, 0.1 * t), 0.5 * t), t)

        moved = active & ~pending
        s = (x_new - x) * moved[:, None]
        y = (g_new - g) * moved[:, None]
        sy = (s * y).sum(1)
        stored = moved & (sy > 0)
        rho = torch.where(stored, 1.0 / torch.where(stored, sy, torch.ones_like(sy)), 0.0)
        yy = (y * (y if precondition is None else precondition(y))).sum(1)
        gamma = torch.where(stored, sy / torch.where(stored, yy, torch.ones_like(yy)), gamma)
        has_curvature = has_curvature | stored
        s_hist.append(s)
        y_hist.append(y)
        rho_hist.append(rho)
        if len(s_hist) > history:
            del s_hist[0], y_hist[0], rho_hist[0]

        x, f, g = x_new, f_new, g_new
        n_iter += moved
        active = moved & (g.abs().amax(1) > tol)

    grad_max = g.abs().amax(1)
    return LbfgsResult(x, f, grad_max, n_iter, grad_max <= tol)


def _two_loop(
    g: Tensor, s_hist: list[Tensor], y_hist: list[Tensor], rho_hist: list[Tensor], gamma: Tensor,
    precondition: Callable[[Tensor], Tensor] | None,
) -> Tensor:
    """The L-BFGS two-loop recursion: the inverse-Hessian approximation applied to g, per row,
    with initial matrix gamma·I, or gamma·P with a preconditioner P.

    Pairs with rho = 0 (not stored for that problem) contribute nothing.
    """
    q = g.clone()
    alphas = []
    for s, y, rho in zip(reversed(s_hist), reversed(y_hist), reversed(rho_hist), strict=True):
        alpha = rho * (s * q).sum(1)
        q -= alpha[:, None] * y
        alphas.append(alpha)
    r = gamma[:, None] * (q if precondition is None else precondition(q))
    for s, y, rho, alpha in zip(s_hist, y_hist, rho_hist, reversed(alphas), strict=True):
        beta = rho * (y * r).sum(1)
        r += (alpha - beta)[:, None] * s
    return r
