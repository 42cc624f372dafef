"""The context lines of a decode table, turned into tuples a block of batch sizes at a time, on first read.

`StepTimer.decode_tables` holds one row per decode batch size up to the token budget (131,073 rows on a
16-GPU DEP replica, 262,144-token verify steps), but a run reads only the batch sizes it reaches (a few
hundred). Converting every row to the tuples the engine loop unpacks cost most of such an option's set-up:
`compare examples/deepseek-r1-modes.yaml`, cProfile, r1-dep16-mtp: 1.7 of its 3.8 s in building and freeing
the rows. `DecodeRows` keeps the float64 array and converts the block around a batch size when the engine first
asks for it: `ndarray.tolist` gives the same floats, so every step time is bit-for-bit the one of the eager
table (`tests/test_decode_rows.py`).
"""

from __future__ import annotations

import numpy as np

# Batch sizes converted per miss: one conversion covers a run's batch sizes near each other.
BLOCK_ROWS = 256

Row = tuple[tuple[float, ...], ...]


class DecodeRows(dict[int, Row]):
    """Batch size B -> its row: one tuple of 8 seconds coefficients per context-dependent op (the layout of
    `StepTimer.decode_tables`), built from `rows[B]` (shape: batch sizes x ops x 8) on first read.

    A dict whose `__missing__` fills the block of BLOCK_ROWS batch sizes around a miss, so a read of a row
    already built is a plain dict lookup (the engine loop reads one per decode segment). Read it by index only:
    its length and iteration cover the rows built so far, `size` is the number of batch sizes."""

    __slots__ = ("_rows", "size")

    def __init__(self, rows: np.ndarray) -> None:
        super().__init__()
        if rows.ndim != 3 or rows.shape[2] != 8:
            raise ValueError(f"decode rows must have shape (batches, ops, 8), got {rows.shape}")
        self._rows = rows
        self.size = int(rows.shape[0])

    def __missing__(self, batch: int) -> Row:
        if not 0 <= batch < self.size:
            raise IndexError(f"decode batch {batch} outside the table's 0..{self.size - 1}")
        start = batch - batch % BLOCK_ROWS
        for index, row in enumerate(self._rows[start:start + BLOCK_ROWS].tolist(), start=start):
            self[index] = tuple(map(tuple, row))
        return self[batch]
