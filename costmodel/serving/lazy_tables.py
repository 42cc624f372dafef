"""The step timer's tables as float64 arrays, turned into Python floats a block of indices at a time, on first read.

A `StepTimer` prices every step from tables by step token count (0..max_tokens) and by decode batch size, and
the engine loop reads them with plain Python floats (a float64 scalar per read would cost more and print
otherwise). The tables run to the token budget: 262,145 token counts and 131,073 batch sizes on a 16-GPU DEP
replica with MTP, whose runs read a few thousand of them. Converting them all up front cost most of such an
option's set-up (`compare examples/deepseek-r1-modes.yaml`, cProfile, r1-dep16-mtp: 1.7 of its 3.8 s in
building and freeing the rows). Each table here keeps its array (`array`, for the vectorized set-up that reads
it whole) and converts the block around an index when it is first read; `ndarray.tolist` gives the same
floats, so every step time is bit-for-bit the eager table's (`tests/test_lazy_tables.py`).

Both are dicts whose `__missing__` fills the block, so a read of an entry already built is a plain dict
lookup. Read them by index only: their length and iteration cover the entries built so far (`size`: all).
"""

from __future__ import annotations

import numpy as np

# Indices converted per miss: one conversion covers a run's nearby token counts or batch sizes.
TOKEN_BLOCK = 1024
ROW_BLOCK = 256

Row = tuple[tuple[float, ...], ...]


class TokenTable(dict[int, float]):
    """Token count -> a float of a 1-D table (FLOPs, bytes, seconds or seconds per FLOP by step tokens)."""

    __slots__ = ("array", "size")

    def __init__(self, array: np.ndarray) -> None:
        super().__init__()
        if array.ndim != 1:
            raise ValueError(f"a token table is 1-D, got shape {array.shape}")
        self.array = array
        self.size = int(array.shape[0])

    def __missing__(self, tokens: int) -> float:
        if not 0 <= tokens < self.size:
            raise IndexError(f"step of {tokens} tokens outside the table's 0..{self.size - 1}")
        start = tokens - tokens % TOKEN_BLOCK
        self.update(enumerate(self.array[start:start + TOKEN_BLOCK].tolist(), start=start))
        return self[tokens]


class DecodeRows(dict[int, Row]):
    """Batch size B -> its row: one tuple of 8 seconds coefficients per context-dependent op (the layout of
    `StepTimer.decode_tables`), built from `array[B]` (shape: batch sizes x ops x 8) on first read."""

    __slots__ = ("array", "size")

    def __init__(self, array: np.ndarray) -> None:
        super().__init__()
        if array.ndim != 3 or array.shape[2] != 8:
            raise ValueError(f"decode rows must have shape (batches, ops, 8), got {array.shape}")
        self.array = array
        self.size = int(array.shape[0])

    def __missing__(self, batch: int) -> Row:
        if not 0 <= batch < self.size:
            raise IndexError(f"decode batch {batch} outside the table's 0..{self.size - 1}")
        start = batch - batch % ROW_BLOCK
        rows = self.array[start:start + ROW_BLOCK].tolist()
        self.update(enumerate((tuple(map(tuple, row)) for row in rows), start=start))
        return self[batch]
