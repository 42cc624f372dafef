"""The step groups the engine loop records for inter-token latency (`costmodel.serving.itl` reads them).

One group per engine step or decode segment with decoding sequences: (a, b, steps, sequences), `steps`
steps, step j lasting a + b * j, each giving every one of `sequences` decoding sequences its next token.
The loop appends the four numbers of a group to one flat list (`groups += (a, b, steps, sequences)`): no
tuple is kept per event, and a flat list converts to an array far faster than a list of tuples.
"""

from __future__ import annotations

import numpy as np


def append_stalled_gaps(groups: list[float], stalls: list[tuple[float, int]], *, first_step_seconds: float,
                        decoding: int) -> None:
    """The first decode step after prefill-only steps, one group per cohort of decoders.

    `stalls` holds (seconds, decoders present) per prefill-only step in order; decoders present from stall
    i on (a prefill ending joins the decoders after its step) sat through stalls i..end, so their gap is
    the decode step plus those. Without preemption the cohorts add up to `decoding` exactly.
    """
    remaining = sum(seconds for seconds, _ in stalls)
    counted = 0
    for seconds, present in stalls:
        cohort = min(present, decoding) - counted
        if cohort > 0:
            groups += (first_step_seconds + remaining, 0.0, 1, cohort)
            counted += cohort
        remaining -= seconds
    if decoding > counted:  # joined at the end of the last stall: no stall in their gap
        groups += (first_step_seconds, 0.0, 1, decoding - counted)


def groups_array(groups: list[float]) -> np.ndarray:
    """The flat list as (n, 4) float rows (a seconds, b seconds, steps, sequences)."""
    return np.fromiter(groups, dtype=np.float64, count=len(groups)).reshape(-1, 4)
