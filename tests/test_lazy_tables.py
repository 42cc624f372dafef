"""The step timer's lazy tables (serving/lazy_tables.py) equal the eager tables they replace, bit for bit.

The eager forms are what the timer computed before: each table by tokens over the whole range 0..max_tokens in
one array (`_token_arrays` on that range), each decode table over every batch size (`_decode_arrays` on that
range), and a speculative timer's verify row followed by its draft row times k in Python floats. A block
computed on first read must give the same floats as the whole-range array (the formulas are elementwise).
Also the chunk-cost cache's warm-up, which dedupes the pairs by one int64 code each.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from costmodel.serving import build_replica
from costmodel.serving.expert_parallel_timer import dep_replica
from costmodel.serving.lazy_tables import ROW_BLOCK, TOKEN_BLOCK, TableGroup
from costmodel.serving.speculative import Speculation
from costmodel.serving.speculative_timer import speculative_replica
from costmodel.serving.steptime import StepTimer


def _squares(indices: np.ndarray) -> list[np.ndarray]:
    return [indices * indices, -indices]


def test_group_fills_every_table_a_block_at_a_time() -> None:
    calls: list[tuple[int, int]] = []

    def build(indices: np.ndarray) -> list[np.ndarray]:
        calls.append((int(indices[0]), int(indices[-1]) + 1))
        return _squares(indices)

    squares, negatives = TableGroup(build, size=2 * TOKEN_BLOCK + 5, count=2, block=TOKEN_BLOCK).tables
    assert squares[TOKEN_BLOCK + 3] == float((TOKEN_BLOCK + 3) ** 2)
    assert negatives[TOKEN_BLOCK] == -float(TOKEN_BLOCK)  # same block: no second build
    assert squares[2 * TOKEN_BLOCK + 4] == float((2 * TOKEN_BLOCK + 4) ** 2)  # the short last block
    assert calls == [(TOKEN_BLOCK, 2 * TOKEN_BLOCK), (2 * TOKEN_BLOCK, 2 * TOKEN_BLOCK + 5)]
    assert len(squares) == TOKEN_BLOCK + 5 and squares.size == 2 * TOKEN_BLOCK + 5
    assert type(squares[TOKEN_BLOCK]) is float
    for index in (-1, 2 * TOKEN_BLOCK + 5):
        with pytest.raises(IndexError):
            squares[index]


def test_group_turns_3d_blocks_into_rows_of_tuples() -> None:
    cube = np.arange(3 * 2 * 8, dtype=np.float64).reshape(3, 2, 8)
    (rows,) = TableGroup(lambda indices: [cube[indices.astype(int)]], size=3, count=1, block=2).tables
    assert rows[2] == (tuple(cube[2, 0].tolist()), tuple(cube[2, 1].tolist()))


def test_group_rejects_a_build_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match="columns"):
        TableGroup(lambda indices: _squares(indices)[:1], size=4, count=2, block=2).tables[0][0]
    with pytest.raises(ValueError, match="shape"):
        TableGroup(lambda indices: [np.zeros(1), np.zeros(1)], size=4, count=2, block=2).tables[0][0]
    with pytest.raises(ValueError, match="shape"):
        TableGroup(lambda indices: [np.zeros((2, 2)), np.zeros(2)], size=4, count=2, block=2).tables[0][0]
    with pytest.raises(ValueError, match=">= 1"):
        TableGroup(_squares, size=0, count=2, block=2)


def _timers() -> dict[str, StepTimer]:
    mtp = Speculation(method="mtp", acceptance_rates=(0.8, 0.6))
    moe = build_replica("deepseek-v3", "h200", gpus=8, weight_dtype="fp8", kv_dtype="fp8")
    return {
        "dense": build_replica("llama-3.1-8b", "h100-sxm").timer,
        "sliding window": build_replica("gpt-oss-20b", "l40s").timer,
        "moe tp8": moe.timer,
        "moe dep8": dep_replica(moe).timer,
        "moe dep8 mtp": dep_replica(speculative_replica(moe, mtp)).timer,
    }


TIMERS = _timers()


@pytest.mark.parametrize("name", list(TIMERS))
def test_token_tables_equal_the_whole_range_arrays(name: str) -> None:
    timer = TIMERS[name]
    eager = [column.tolist() for column in timer._token_arrays(np.arange(timer.max_tokens + 1, dtype=np.float64))]
    tables = [timer.static_seconds, timer.seconds_per_flop]
    tables += [t for op in timer.dynamic for t in (op.flops_by_tokens, op.bytes_by_tokens)]
    order = np.random.default_rng(7).permutation(timer.max_tokens + 1).tolist()
    for table, column in zip(tables, eager, strict=True):
        lazy = [table[tokens] for tokens in order]
        assert lazy == [column[tokens] for tokens in order]
        assert all(type(value) is float for value in lazy[:50])  # Python floats, as the engine loop reads them


@pytest.mark.parametrize("name", list(TIMERS))
def test_decode_tables_equal_the_whole_range_arrays(name: str) -> None:
    timer = TIMERS[name]
    static, lines = timer.decode_tables()
    static_array, rows = timer._decode_arrays(np.arange(static.size, dtype=np.float64))
    eager_rows = [tuple(tuple(op) for op in row) for row in rows.tolist()]
    batches = sorted({0, 1, 2, ROW_BLOCK - 1, ROW_BLOCK, 3 * ROW_BLOCK + 7, static.size - 1} & set(range(static.size)))
    for batch in [*batches, *range(0, static.size, 97)]:
        assert static[batch] == static_array[batch] and lines[batch] == eager_rows[batch]


@pytest.mark.parametrize("dep", [False, True])
def test_speculative_rows_equal_verify_plus_k_drafts_in_python_floats(dep: bool) -> None:
    replica = build_replica("deepseek-v3", "h200", gpus=8, weight_dtype="fp8", kv_dtype="fp8")
    spec = Speculation(method="mtp", acceptance_rates=(0.8, 0.6))
    fast = speculative_replica(replica, spec)
    if dep:
        fast = dep_replica(fast)
    timer = fast.timer
    static, lines = timer.decode_tables()
    # The eager form: the verify step's own tables, then + k x the draft's, in Python floats.
    batches = np.arange(static.size, dtype=np.float64)
    verify_static, verify_rows = StepTimer._decode_arrays(timer, batches)
    draft_static, draft_rows = timer.draft._decode_arrays(batches)  # type: ignore[attr-defined]
    k = float(spec.draft_tokens)
    expected_static = [s + k * d for s, d in zip(verify_static.tolist(), draft_static.tolist(), strict=True)]
    expected_lines = [tuple(tuple(op) for op in row) + tuple(tuple(k * v for v in op) for op in draft_row)
                      for row, draft_row in zip(verify_rows.tolist(), draft_rows.tolist(), strict=True)]
    for batch in (0, 1, 7, 300, static.size - 1):
        assert static[batch] == expected_static[batch]
        assert lines[batch] == expected_lines[batch]


def test_a_timer_survives_pickling_with_half_built_tables() -> None:
    timer = build_replica("llama-3.1-8b", "h100-sxm").timer
    static, lines = timer.decode_tables()
    before = (timer.static_seconds[5], static[3], lines[3])
    copy = pickle.loads(pickle.dumps(timer))
    copy_static, copy_lines = copy.decode_tables()
    assert (copy.static_seconds[5], copy_static[3], copy_lines[3]) == before
    assert copy.static_seconds[timer.max_tokens] == timer.static_seconds[timer.max_tokens]
    assert copy_lines[static.size - 1] == lines[static.size - 1]


def test_warm_chunk_cache_keeps_each_distinct_pair_once_with_the_scalar_costs() -> None:
    timer = build_replica("gpt-oss-20b", "l40s").timer
    sizes = np.array([512, 7, 512, 1, 7, 300.0])  # duplicates, unsorted, a float array
    contexts = np.array([0, 4096, 0, 9000, 4095, 128])
    timer.warm_chunk_cache(new_tokens=sizes, context_tokens=contexts, emits=True)
    expected = {(512, 0, True), (7, 4096, True), (1, 9000, True), (7, 4095, True), (300, 128, True)}
    assert set(timer.chunk_cache) == expected
    scalar = build_replica("gpt-oss-20b", "l40s").timer
    for key, cost in timer.chunk_cache.items():
        assert cost == pytest.approx(scalar.chunk_cost(key), rel=1e-12)
    timer.warm_chunk_cache(new_tokens=np.array([], dtype=np.int64), context_tokens=np.array([], dtype=np.int64),
                           emits=False)
    assert set(timer.chunk_cache) == expected
