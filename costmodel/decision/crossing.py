"""The volume nearest the scenario's at which something turns true: the one search behind flips and break-evens.

Self-host cost is a step function of volume (a replica is added at each step), so the search samples a log
grid from 1/100x to 100x plus both sides of every cost step, then bisects the bracketing pair.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

# 1/100x .. 100x the scenario's volume, 10 points per decade, then bisection on the bracketing pair (the
# crossing can sit on a jump).
FLIP_SEARCH_DECADES = 2.0
FLIP_GRID_PER_DECADE = 10
FLIP_BISECTIONS = 40
STEP_SIDE = 1e-9  # relative offset of the samples on either side of a cost step
# Relative half-width of the bracket an interpolated root is checked with: finer than what 40 bisections leave
# of a grid interval (0.1 decade: ln(10) x 0.1 / 2^40 = 2.1e-13 relative), so the answer is as exact as the
# bisection's, and the bisection, which stops at a bracket this narrow, still runs its 40 steps from the grid.
ROOT_SIDE = 5e-14


def _interpolated(happens: Callable[[float], bool], gap: Callable[[float], float], *, holds: float,
                  flipped: float) -> tuple[float, float]:
    """The bracket (holds, flipped) narrowed at the root of `gap` interpolated linearly between its ends: when
    `gap` is linear there (costs between two steps), the root brackets the crossing within ROOT_SIDE in two
    evaluations; otherwise what those evaluations showed still narrows the bracket for the bisection."""
    low_gap, high_gap = gap(holds), gap(flipped)
    if not (math.isfinite(low_gap) and math.isfinite(high_gap)) or low_gap == high_gap:
        return holds, flipped
    root = holds + (flipped - holds) * low_gap / (low_gap - high_gap)
    toward = 1.0 if flipped > holds else -1.0
    near, far = root * (1 - toward * ROOT_SIDE), root * (1 + toward * ROOT_SIDE)
    low, high = sorted((holds, flipped))
    if not (low < near < high and low < far < high):
        return holds, flipped
    if happens(near):
        return holds, near
    return (near, far) if happens(far) else (far, flipped)


def first_volume(happens: Callable[[float], bool], *, upward: bool, steps: tuple[float, ...] = (),
                 start: float = 1.0, known_false: Callable[[float, float], bool] | None = None,
                 gap: Callable[[float], float] | None = None) -> float | None:
    """The volume multiple nearest 1 (above or below) at which `happens` turns true, within the search range;
    None if it is already true at 1 or never within the range. `steps` are volumes where costs jump
    (`volume.step_volumes`): the scan samples just below and above each, so a window between two steps is
    never skipped; between samples costs are continuous and bisection is exact. `start`: a volume the caller
    knows `happens` is false on the whole way from 1 to it (a bound), where the scan may begin. `known_false(last,
    scale)`: True when `happens` is surely false at `scale` given it was false at `last` (a scanned volume nearer
    1); such samples are skipped, and a crossing found after them is still bisected from the sample just before
    it, so the answer is the one the full scan gives. `gap(scale)`: a function continuous between samples whose
    root is the crossing (a cost difference); the bracket is first narrowed at its interpolated root, which
    ends the search at once where `gap` is linear, the bisection finishing otherwise."""
    if happens(1.0):
        return None
    low, high = 10.0**-FLIP_SEARCH_DECADES, 10.0**FLIP_SEARCH_DECADES
    if not low <= start <= high:
        return None
    if start != 1.0 and happens(start):
        return start
    count = int(FLIP_SEARCH_DECADES * FLIP_GRID_PER_DECADE)
    exponents = np.linspace(0.0, FLIP_SEARCH_DECADES if upward else -FLIP_SEARCH_DECADES, count + 1)
    points = {float(10.0**e) for e in exponents}
    points |= {s * f for s in steps for f in (1 - STEP_SIDE, 1 + STEP_SIDE) if low <= s * f <= high}
    beyond = sorted((p for p in points if (p > start if upward else p < start)), reverse=not upward)
    scales = [start, *beyond]
    last_false = start
    for holds, scale in itertools.pairwise(scales):
        if known_false is not None and known_false(last_false, scale):
            continue
        if happens(scale):
            flipped = scale
            if gap is not None:
                holds, flipped = _interpolated(happens, gap, holds=holds, flipped=flipped)
            for _ in range(FLIP_BISECTIONS):
                if abs(flipped / holds - 1.0) <= 2.5 * ROOT_SIDE:
                    break  # as narrow as the bisection gets from a grid interval
                middle = math.sqrt(holds * flipped)
                holds, flipped = (holds, middle) if happens(middle) else (middle, flipped)
            return flipped
        last_false = scale
    return None
