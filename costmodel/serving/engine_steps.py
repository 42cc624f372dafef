"""Step-time arithmetic of the engine loop (`costmodel.serving.engine.run_engine`).

The layout of the per-op rows a mixed step sums (`mix_op_table`) and the arrival cut (`steps_to_reach`: the
fewest decode steps that reach the next arrival, once per cut). The step-time sums themselves stay inline in
the loop: a call per event there costs ~4% of a run (callgrind, 30,000 requests).
"""

from __future__ import annotations

import math

from costmodel.serving.steptime import StepTimer

# One dynamic op of a mixed step: the slots of its FLOPs and bytes in a chunk-work row, its FLOPs and bytes
# by step tokens, then FLOPs per (decoding sequence below the window, context token below, sequence above,
# context token above) and bytes per the same four.
_MixOp = tuple[int, int, tuple[float, ...], tuple[float, ...], float, float, float, float, float, float, float, float]


def mix_op_table(timer: StepTimer) -> list[_MixOp]:
    """One row per dynamic op for a mixed step (the layout `_MixOp` names)."""
    return [
        (2 * k, 2 * k + 1, op.flops_by_tokens, op.bytes_by_tokens, f[0], f[1], f[2], f[3], m[0], m[1], m[2], m[3])
        for k, (op, (f, m)) in enumerate(zip(timer.dynamic, timer.decode_coefficients, strict=True))
    ]


def steps_to_reach(
    *, gap_seconds: float, a_seconds: float, b_seconds: float, half_b_seconds: float,
) -> tuple[int, float]:
    """The fewest decode steps k >= 1 whose summed time reaches `gap_seconds`, and that time.

    Step j lasts a + b * j (a > 0, b >= 0; `half_b_seconds` is 0.5 * b as the loop computed it), so k steps
    last (a + b (k - 1) / 2) k: the positive root of (b/2) k^2 + (a - b/2) k - gap = 0 rounded up, then
    whole-step fixes for float rounding. The time is the loop's own expression for k steps (same bits).
    """
    a, b, half_b, gap = a_seconds, b_seconds, half_b_seconds, gap_seconds
    if b > 0:
        half = a - half_b
        k = math.ceil((math.sqrt(half * half + 2.0 * b * gap) - half) / b)
    else:
        k = math.ceil(gap / a)
    k = k if k > 1 else 1
    while k > 1 and (a + half_b * (k - 2)) * (k - 1) >= gap:
        k -= 1
    end = (a + half_b * (k - 1)) * k
    while end < gap:
        k += 1
        end = (a + half_b * (k - 1)) * k
    return k, end
