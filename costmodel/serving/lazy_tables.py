"""The step timer's tables, computed and turned into Python floats a block of indices at a time, on first read.

A `StepTimer` prices every step from tables by step token count (0..max_tokens) and by decode batch size, and
the engine loop reads them as plain Python floats (a float64 scalar per read would cost more and print
otherwise). The tables run to the token budget: 262,145 token counts and 131,073 batch sizes on a 16-GPU DEP
replica with MTP, whose runs read a few thousand of them. Computing and converting them all up front was most
of such an option's set-up (`compare examples/deepseek-r1-modes.yaml`, cProfile, r1-dep16-mtp: 1.7 of its
3.8 s in building and freeing the decode rows alone). A `TableGroup` holds a timer's tables of one index (its
tables by tokens, or its decode tables by batch size); the first read of an index outside the blocks built so
far computes every table of the group on that block of indices at once (the timer's vectorized formulas on an
index array: elementwise, so each value is bit-for-bit the one of the whole-range array,
`tests/test_lazy_tables.py`) and stores them as Python floats (`ndarray.tolist`) or tuples of them.

Each table is a dict whose `__missing__` asks its group for the block, so a read of an entry already built is a
plain dict lookup. Read them by index only: their length and iteration cover the entries built so far (`size`:
all of them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

# Indices computed per miss: one block covers a run's nearby token counts or batch sizes.
TOKEN_BLOCK = 1024
ROW_BLOCK = 256

V = TypeVar("V")
Row = tuple[tuple[float, ...], ...]  # one decode batch size: 8 seconds coefficients per context-dependent op


class LazyTable(dict[int, V]):
    """Index -> value of one table of a `TableGroup`, filled by the group on first read of its block."""

    __slots__ = ("_group", "size")

    def __init__(self, group: TableGroup) -> None:
        super().__init__()
        self._group = group
        self.size = group.size

    def __missing__(self, index: int) -> V:
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} outside the table's 0..{self.size - 1}")
        self._group.fill(index)
        return self[index]


TokenTable = LazyTable[float]
DecodeRows = LazyTable[Row]


class TableGroup:
    """`count` tables over indices 0..size-1, computed together by `build(indices)`: one float64 array per table
    at those indices (float64 too, one block of consecutive ones): 1-D (a float per index) or 3-D (a `Row`)."""

    __slots__ = ("_build", "size", "block", "tables")

    def __init__(self, build: Callable[[np.ndarray], Sequence[np.ndarray]], *, size: int, count: int,
                 block: int) -> None:
        if size < 1 or count < 1 or block < 1:
            raise ValueError(f"a table group needs size, count and block >= 1 (got {size}, {count}, {block})")
        self._build = build
        self.size = size
        self.block = block
        self.tables: list[LazyTable[Any]] = [LazyTable(self) for _ in range(count)]

    def fill(self, index: int) -> None:
        """Compute the block of indices around `index` into every table of the group, as Python floats."""
        start = index - index % self.block
        stop = min(start + self.block, self.size)
        columns = self._build(np.arange(start, stop, dtype=np.float64))
        if len(columns) != len(self.tables):
            raise ValueError(f"the table group's build gave {len(columns)} columns for {len(self.tables)} tables")
        for table, column in zip(self.tables, columns, strict=True):
            if len(column) != stop - start or column.ndim not in (1, 3):
                raise ValueError(f"the table group's build gave shape {column.shape} for indices {start}..{stop - 1}")
            values = column.tolist() if column.ndim == 1 else [tuple(map(tuple, row)) for row in column.tolist()]
            table.update(zip(range(start, stop), values, strict=True))
