"""Step-time arithmetic of the engine loop (`costmodel.serving.engine.run_engine`).

The layout of the per-op rows a mixed step sums (`mix_op_table`). The step-time sums and the arrival cut (the
fewest decode steps that reach the next arrival) stay inline in the loop: a call per event there costs ~4%
of a run, a call per cut ~2% (callgrind, 20,000-30,000 requests).
"""

from __future__ import annotations

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
