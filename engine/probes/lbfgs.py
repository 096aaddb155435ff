"""Batched L-BFGS: minimise B independent smooth objectives at once, one state per problem.

Each problem keeps its own curvature history, step length, line search and stopping test; only
the function evaluations are shared (one call computes the values and gradients of the problems
still running, so a batch reads a shared design matrix once per evaluation).

Step lengths come from a backtracking line search with the Armijo condition (sufficient decrease
`f(x + t·d) <= f(x) + c1·t·∇f(x)·d`) and quadratic interpolation. Curvature pairs with
`s·y <= 0` are not used, which keeps every search direction a descent direction; for strongly
convex objectives (L2-regularised logistic regression) `s·y > 0` always holds.

The loop never waits for the device to decide a step: each pass is one evaluation, at which
every running problem either accepts its trial step (and its next pass starts a new direction)
or shrinks it (and its next pass tries the shorter step), decided by tensor operations on the
device. The host reads the problems' state once every `check_interval` passes (`CHECK_EVERY` where
a read waits for a GPU; every pass on the CPU, where a read costs nothing): it stops when no
problem runs and passes only the running ones to the objective from there on. A problem that
finished between two reads is evaluated where it stands until the next one, and nothing of it
changes. Each problem takes the steps it would take alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import count

import torch
from torch import Tensor

CHECK_EVERY = 8
"""Evaluations between two reads of the problems' state on the host, where a read waits for the
device (CUDA): each read ends the device's queue of work, and a problem that finished just after
one is evaluated, unchanged, until the next (at most CHECK_EVERY - 1 evaluations spent)."""

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


def check_interval(device: torch.device) -> int:
    """Evaluations between two host reads on `device`: CHECK_EVERY, 1 on the CPU (where a read
    waits for nothing, so no evaluation is spent on a finished problem)."""
    return 1 if device.type == "cpu" else CHECK_EVERY


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
    The host reads the problems' state every `check_interval(x0.device)` evaluations.
    """
    x = x0.detach().clone()
    n_problems = len(x)
    device = x.device
    check_every = check_interval(device)
    index = torch.arange(n_problems, device=device)
    f, g = fun(x, index)
    result = [x.clone(), f.clone(), g.clone(), torch.zeros(n_problems, dtype=torch.long,
                                                          device=device)]
    state = _State.start(x, f, g, history, running=(g.abs().amax(1) > tol) & (max_iter > 0))

    for evaluation in count():
        if evaluation % check_every == 0:
            for out, value in zip(result, (state.x, state.f, state.g, state.n_iter), strict=True):
                out[index] = value
            running = state.running.tolist()   # the one read of the check
            if not any(running):
                break
            if not all(running):
                keep = torch.tensor([i for i, r in enumerate(running) if r], device=device)
                index, state = index[keep], state.select(keep)
        state.step(fun, index, tol=tol, max_iter=max_iter, max_linesearch=max_linesearch, c1=c1,
                   precondition=precondition)

    x, f, g, n_iter = result
    grad_max = g.abs().amax(1)
    return LbfgsResult(x, f, grad_max, n_iter, grad_max <= tol)


@dataclass
class _State:
    """The running problems' L-BFGS state (A problems, P parameters, H curvature pairs).

    `S`, `Y` (H, A, P) and `rho` (H, A) hold each problem's own last H accepted pairs, oldest
    first (zeros, rho = 0, where it has fewer). `d`, `gd`, `t`: the search direction, its
    directional derivative and the step length to try; `trials`: the failed trials along `d`
    (0: the next evaluation starts a new direction)."""

    x: Tensor
    f: Tensor
    g: Tensor
    S: Tensor
    Y: Tensor
    rho: Tensor
    gamma: Tensor
    has_curvature: Tensor
    d: Tensor
    gd: Tensor
    t: Tensor
    trials: Tensor
    n_iter: Tensor
    running: Tensor

    @classmethod
    def start(cls, x: Tensor, f: Tensor, g: Tensor, history: int, running: Tensor) -> _State:
        pairs = torch.zeros((history, *x.shape), dtype=x.dtype, device=x.device)
        return cls(x, f, g, pairs, pairs.clone(), f.new_zeros((history, len(f))),
                   torch.ones_like(f), torch.zeros_like(running), torch.zeros_like(x),
                   torch.zeros_like(f), torch.zeros_like(f), torch.zeros_like(f, dtype=torch.long),
                   torch.zeros_like(f, dtype=torch.long), running)

    def select(self, keep: Tensor) -> _State:
        """The state of the problems `keep` (A',) alone."""
        return _State(**{name: value[:, keep] if name in ("S", "Y", "rho") else value[keep]
                         for name, value in vars(self).items()})

    def step(self, fun: Objective, index: Tensor, *, tol: float, max_iter: int,
             max_linesearch: int, c1: float,
             precondition: Callable[[Tensor], Tensor] | None) -> None:
        """One evaluation: a new direction where one is due, every running problem's trial step
        evaluated, then each accepts it (a new curvature pair, an iteration) or backtracks."""
        x, f, g = self.x, self.f, self.g
        fresh = (self.trials == 0)
        d = -_two_loop(g, self.S, self.Y, self.rho, self.gamma, precondition)
        gd = (g * d).sum(1)
        not_descent = gd >= 0
        d = torch.where(not_descent[:, None], -g, d)
        gd = torch.where(not_descent, -(g * g).sum(1), gd)
        first = torch.clamp(1.0 / g.abs().sum(1).clamp_min(torch.finfo(g.dtype).tiny), max=1.0) \
            if precondition is None else torch.ones_like(f)
        t0 = torch.where(self.has_curvature, torch.ones_like(f), first)
        d = torch.where(fresh[:, None], d, self.d)
        gd = torch.where(fresh, gd, self.gd)
        t = torch.where(fresh, t0, self.t)

        trial = x + (t * self.running)[:, None] * d    # a finished problem stays where it is
        f_t, g_t = fun(trial, index)
        accept = self.running & (f_t <= f + c1 * t * gd)

        s = (trial - x) * accept[:, None]
        y = (g_t - g) * accept[:, None]
        sy = (s * y).sum(1)
        stored = accept & (sy > 0)
        rho = torch.where(stored, 1.0 / torch.where(stored, sy, torch.ones_like(sy)), 0.0)
        yy = (y * (y if precondition is None else precondition(y))).sum(1)
        self.gamma = torch.where(stored, sy / torch.where(stored, yy, torch.ones_like(yy)),
                                 self.gamma)
        self.has_curvature = self.has_curvature | stored
        self.S, self.Y, self.rho = (_pushed(old, new, accept)
                                    for old, new in ((self.S, s), (self.Y, y), (self.rho, rho)))

        backtrack = self.running & ~accept
        t_quad = -gd * t * t / (2 * (f_t - f - t * gd))
        t_quad = torch.nan_to_num(t_quad, nan=0.0, posinf=0.0, neginf=0.0)
        self.t = torch.where(backtrack, torch.minimum(torch.maximum(t_quad, 0.1 * t), 0.5 * t), t)
        self.trials = torch.where(accept, 0, self.trials + backtrack.long())
        self.d, self.gd = d, gd

        self.x = torch.where(accept[:, None], trial, x)
        self.f = torch.where(accept, f_t, f)
        self.g = torch.where(accept[:, None], g_t, g)
        self.n_iter = self.n_iter + accept.long()
        done = accept & ((self.g.abs().amax(1) <= tol) | (self.n_iter >= max_iter))
        self.running = self.running & ~done & ~(self.trials >= max_linesearch)


def _pushed(old: Tensor, new: Tensor, accept: Tensor) -> Tensor:
    """The history `old` (H, A, ...) with `new` (A, ...) appended as the newest entry (the oldest
    dropped) for the problems that accepted their step; the others' unchanged."""
    mask = accept.view(1, -1, *([1] * (old.dim() - 2)))
    out = torch.empty_like(old)
    torch.where(mask, old[1:], old[:-1], out=out[:-1])
    torch.where(mask[0], new, old[-1], out=out[-1])
    return out


def _two_loop(
    g: Tensor, S: Tensor, Y: Tensor, rho: Tensor, gamma: Tensor,
    precondition: Callable[[Tensor], Tensor] | None,
) -> Tensor:
    """The L-BFGS two-loop recursion: the inverse-Hessian approximation applied to g, per row,
    with initial matrix gamma·I, or gamma·P with a preconditioner P; the pairs S, Y (H, B, P),
    rho (H, B), oldest first.

    Pairs with rho = 0 (empty, or not used for that problem) contribute nothing.
    """
    q = g.clone()
    alphas = []
    for s, y, r in zip(reversed(S), reversed(Y), reversed(rho), strict=True):
        alpha = r * (s * q).sum(1)
        q -= alpha[:, None] * y
        alphas.append(alpha)
    r = gamma[:, None] * (q if precondition is None else precondition(q))
    for s, y, rh, alpha in zip(S, Y, rho, reversed(alphas), strict=True):
        beta = rh * (y * r).sum(1)
        r += (alpha - beta)[:, None] * s
    return r
