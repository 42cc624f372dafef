"""The step groups the engine loop records for inter-token latency (`costmodel.serving.itl` reads them).

One group per engine step or decode segment with decoding sequences: (a, b, steps, sequences), `steps`
steps, step j lasting a + b * j, each giving every one of `sequences` decoding sequences its next token.
The loop appends a group's four numbers to four lists: no tuple per event, and flat lists convert to arrays
far faster than a list of tuples (callgrind: four appends also cost less than one `list += tuple`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# The four lists (a seconds, b seconds, steps, sequences); read-only sequences once the loop is done
StepGroupLists = tuple[Sequence[float], Sequence[float], Sequence[int], Sequence[int]]


def append_stalled_gaps(
    groups: tuple[list[float], list[float], list[int], list[int]], stalls: list[tuple[float, int]], *,
    first_step_seconds: float, decoding: int,
) -> None:
    """The first decode step after prefill-only steps, one group per cohort of decoders.

    `stalls` holds (seconds, decoders present) per prefill-only step in order; decoders present from stall
    i on (a prefill ending joins the decoders after its step) sat through stalls i..end, so their gap is
    the decode step plus those. Without preemption the cohorts add up to `decoding` exactly.
    """
    a, b, steps, sequences = groups
    remaining = sum(seconds for seconds, _ in stalls)
    counted = 0
    for seconds, present in stalls:
        cohort = min(present, decoding) - counted
        if cohort > 0:
            a.append(first_step_seconds + remaining)
            b.append(0.0)
            steps.append(1)
            sequences.append(cohort)
            counted += cohort
        remaining -= seconds
    if decoding > counted:  # joined at the end of the last stall: no stall in their gap
        a.append(first_step_seconds)
        b.append(0.0)
        steps.append(1)
        sequences.append(decoding - counted)


def append_stalled_segment(
    groups: tuple[list[float], list[float], list[int], list[int]], stalls: list[tuple[float, int]], *, a_seconds: float,
    b_seconds: float, steps: int, decoding: int,
) -> None:
    """A decode segment after prefill-only steps: its first step's gaps hold the stalls, the rest are plain."""
    append_stalled_gaps(groups, stalls, first_step_seconds=a_seconds, decoding=decoding)
    if steps > 1:
        a, b, counts, sequences = groups
        a.append(a_seconds + b_seconds)
        b.append(b_seconds)
        counts.append(steps - 1)
        sequences.append(decoding)


def groups_array(groups: StepGroupLists) -> np.ndarray:
    """The four lists as (n, 4) float rows (a seconds, b seconds, steps, sequences)."""
    a, b, steps, sequences = groups
    columns = [np.fromiter(a, dtype=np.float64, count=len(a)), np.fromiter(b, dtype=np.float64, count=len(b)),
               np.fromiter(steps, dtype=np.int64, count=len(steps)),
               np.fromiter(sequences, dtype=np.int64, count=len(sequences))]
    return np.column_stack(columns).astype(np.float64, copy=False).reshape(-1, 4)
