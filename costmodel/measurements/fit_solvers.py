"""The numerical solvers of the calibration fit (costmodel/measurements/fit.py), free of any probe data:
a bounded least squares in three variables (every set of clamped variables tried, normal equations solved
by Cramer's rule), a golden-section refinement in log space, and the grid search over the fit's two
small-GEMM terms (half-saturation rows, weight reads) that uses both.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial

import numpy as np


def solve_small(matrix: list[list[float]], rhs: list[float]) -> list[float] | None:
    """Solve a 1x1..3x3 linear system by Cramer's rule (None if singular); plain floats are fast here."""
    n = len(rhs)
    if n == 1:
        return [rhs[0] / matrix[0][0]] if matrix[0][0] else None

    def det(m: list[list[float]]) -> float:
        if len(m) == 2:
            return m[0][0] * m[1][1] - m[0][1] * m[1][0]
        return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))

    whole = det(matrix)
    if abs(whole) < 1e-300:
        return None
    return [det([[rhs[r] if c == k else matrix[r][c] for c in range(n)] for r in range(n)]) / whole for k in range(n)]


def bounded_lstsq(design: np.ndarray, target: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """min |design x - target|^2 subject to x >= lower; 3 variables, so try every set of clamped ones.

    Works on the normal equations (G = D'D, h = D't): cost(x) = x'Gx - 2h'x + const.
    """
    gram, rhs, low = (design.T @ design).tolist(), (design.T @ target).tolist(), lower.tolist()
    best, best_cost = low, np.inf
    for clamped in itertools.product((False, True), repeat=len(low)):
        free = [i for i, c in enumerate(clamped) if not c]
        x = list(low)
        if free:
            sub = [[gram[i][j] for j in free] for i in free]
            sub_rhs = [rhs[i] - sum(gram[i][j] * low[j] for j in range(len(low)) if clamped[j]) for i in free]
            solved = solve_small(sub, sub_rhs)
            if solved is None:
                continue
            for i, value in zip(free, solved, strict=True):
                x[i] = value
        if any(v < lo - 1e-12 for v, lo in zip(x, low, strict=True)):
            continue
        cost = sum(x[i] * gram[i][j] * x[j] for i in range(3) for j in range(3)) - 2.0 * sum(
            r * v for r, v in zip(rhs, x, strict=True))
        if cost < best_cost:
            best, best_cost = x, cost
    return np.array(best)


Trial = tuple[float, tuple[float, float], np.ndarray]  # (loss, (half, reads), (a, b, overhead))


def refine_log(evaluate: Callable[[float], Trial], grid: tuple[float, ...], value: float, best: Trial) -> Trial:
    """Golden-section search in log space between the grid neighbours of `value` (> 0)."""
    positive = sorted(v for v in grid if v > 0)
    if value <= 0 or len(positive) < 2:
        return best
    index = min(range(len(positive)), key=lambda i: abs(np.log(positive[i] / value)))
    lo, hi = np.log(positive[max(index - 1, 0)]), np.log(positive[min(index + 1, len(positive) - 1)])
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(12):  # the bracket shrinks to 0.618^12 ~ 3e-3 of its log width
        left, right = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        at_left, at_right = evaluate(float(np.exp(left))), evaluate(float(np.exp(right)))
        best = min((best, at_left, at_right), key=lambda trial: trial[0])
        if at_left[0] <= at_right[0]:
            hi = right
        else:
            lo = left
    return best


def grid_search(evaluate: Callable[[float, float], Trial], half_grid: tuple[float, ...],
            reads_grid: tuple[float, ...]) -> Trial:
    """Best (half-saturation, weight reads): the joint grid, then two passes of per-coordinate refinement."""
    best = min((evaluate(half, reads) for half in half_grid for reads in reads_grid), key=lambda trial: trial[0])
    for _ in range(2):
        best = refine_log(partial(_with_reads, evaluate, best[1][1]), half_grid, best[1][0], best)
        best = refine_log(partial(_with_half, evaluate, best[1][0]), reads_grid, best[1][1], best)
    return best


def _with_reads(evaluate: Callable[[float, float], Trial], reads: float, half: float) -> Trial:
    return evaluate(half, reads)


def _with_half(evaluate: Callable[[float, float], Trial], half: float, reads: float) -> Trial:
    return evaluate(half, reads)
