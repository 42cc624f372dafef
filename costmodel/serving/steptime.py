"""Fast step times for the simulator, derived from the roofline's own op formulas (never re-typed).

`StepTimer` calls `ops.op_flops_and_bytes` and `roofline.step_arrays`:
- over token counts 0..max_tokens with the other work fields zero, a block at a time on first read (tables
  per op: FLOPs, bytes, the effective FLOP/s, the seconds of the ops that depend on tokens only, overhead and
  all-reduce; `lazy_tables.py`);
- at set-up, on unit works (one (query, key) pair, one cached token, one logit row) to get each op's linear
  coefficients in those fields.
A step's seconds is then the table value plus, for the few ops that read the other fields (attention,
lm_head), max(FLOPs / FLOP/s, bytes / bytes/s) with their FLOPs and bytes rebuilt from the coefficients.
`tests/test_serving_steptime.py` checks `seconds(...)` against `roofline.step_from_work(...).step_seconds`
on random mixes (1e-9 relative), so a change to the formulas that breaks the decomposition fails there.

Decode work per sequence comes from `ops.uniform_work(batch=1, new_tokens=1, context)`, which is
affine in the context below the sliding window and again above it; `decode_fields` sums it per group.

`per_sequence_seconds` is the engine profile's CPU cost per sequence in a step (sampling, detokenizing,
streaming: `step_overhead_seconds_per_sequence`), charged on top of the roofline: the engine loop adds it
per sequence scheduled in a step, and `decode_tables` holds it in `static_by_batch[B]` as B times it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from costmodel.catalog.links import tp_link
from costmodel.catalog.params import ModelShape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.config import ReplicaConfig
from costmodel.dtypes import precision_kwargs
from costmodel.ops import OP_NAMES, StepWork, op_flops_and_bytes, uniform_work
from costmodel.roofline import Efficiency, StepArrays, step_arrays
from costmodel.serving.lazy_tables import ROW_BLOCK, TOKEN_BLOCK, DecodeRows, TableGroup, TokenTable

# Work fields other than `tokens`, in this order everywhere below.
FIELDS: tuple[str, ...] = ("logit_rows", "full_pairs", "sliding_pairs", "full_cached_tokens", "sliding_cached_tokens")
NO_WINDOW = 1 << 62  # a window no context reaches
PROBE_TOKENS = np.arange(2, dtype=np.float64)  # step token counts 0 and 1: where the tables' constants are read


def _work(*, tokens: Any, values: tuple[Any, ...] = (0.0,) * 5) -> StepWork:
    return StepWork(tokens, *values)


def _fields(work: StepWork) -> tuple[float, ...]:
    return tuple(float(getattr(work, name)) for name in FIELDS)


@dataclass(frozen=True, eq=False)
class DynamicOp:
    """An op whose FLOPs/bytes depend on fields other than tokens: table[tokens] + coefficients . fields.

    The tables by tokens are lazy (`lazy_tables.TokenTable`), so two ops compare by identity.

    FLOPs are counted in the linear layers' time units (times their rate / this op's rate), so one seconds
    per FLOP (`StepTimer.seconds_per_flop`) prices every op even when attention or the lm_head runs in another
    format than the blocks' weights (`dtypes.OpPrecision`).
    """

    name: str
    flops_by_tokens: TokenTable
    bytes_by_tokens: TokenTable
    flops_per_field: tuple[float, ...]  # d FLOPs / d field, FIELDS order
    bytes_per_field: tuple[float, ...]


class StepTimer:
    """Seconds of one engine step of any mix, for one replica configuration (numbers per GPU)."""

    # New tokens (and logit rows) each decoding sequence adds per step: 1; a speculative timer's verify step
    # runs k + 1 (`serving/speculative_timer.py`). Read by the decode coefficients and tables only.
    decode_tokens_per_sequence = 1

    @classmethod
    def for_config(cls, config: ReplicaConfig, *, max_tokens: int, per_sequence_seconds: float = 0.0) -> StepTimer:
        """The step timer of one replica (`config`), for steps of up to `max_tokens` new tokens."""
        return cls(config.shape, config.hardware, weight_dtype=config.weight_dtype, kv_dtype=config.kv_dtype,
                   gpus=config.gpus, efficiency=config.efficiency, max_tokens=max_tokens,
                   per_sequence_seconds=per_sequence_seconds)

    def __init__(
        self,
        shape: ModelShape,
        hardware: AcceleratorSpec,
        *,
        weight_dtype: str,
        kv_dtype: str,
        gpus: int,
        efficiency: Efficiency,
        max_tokens: int,
        per_sequence_seconds: float = 0.0,
    ) -> None:
        self.shape = shape
        self.max_tokens = max_tokens
        self.per_sequence_seconds = float(per_sequence_seconds)  # CPU s per sequence per step (engine profile)
        self.window_tokens = shape.sliding_window_tokens or NO_WINDOW
        precision = precision_kwargs(hardware.op_precision(weight_dtype=weight_dtype, kv_dtype=kv_dtype))
        self._kwargs = {
            "weight_bytes_per_param": precision["weight_bytes_per_param"],
            "lm_head_weight_bytes_per_param": precision["lm_head_weight_bytes_per_param"],
            "kv_bytes_per_element": precision["kv_bytes_per_element"],
            "gpus": float(gpus),
        }
        link = tp_link(hardware, gpus=gpus)
        self._step_kwargs: dict[str, Any] = {
            **self._kwargs,
            **precision,
            "hbm_bytes_per_s": hardware.hbm_bytes_per_s,
            "link_bytes_per_s": link.bytes_per_s,
            "link_latency_seconds": link.latency_seconds,
            "eff_compute": efficiency.eff_compute,
            "eff_memory": efficiency.eff_memory,
            "overhead_seconds_per_step": efficiency.overhead_seconds_per_step,
            "compute_half_saturation_tokens": efficiency.compute_half_saturation_tokens,
            "comm_overlap_fraction": efficiency.comm_overlap_fraction,
            "allreduce_curve": link.curve,
        }
        self._build_tables()
        self._build_decode_coefficients()
        # Costs of prefill chunks by (new tokens, cached context, ends the prompt), shared by every run.
        self.chunk_cache: dict[tuple[int, int, bool], tuple[float, ...]] = {}
        self._decode_tables: tuple[TokenTable, DecodeRows] | None = None

    def _build_tables(self) -> StepArrays:
        """The tables' constants from the roofline at 0 and 1 tokens, and the tables by step tokens (lazy: each
        block of token counts computed on first read, `lazy_tables`); returns the roofline's arrays at 0 and 1."""
        raw = self._tensor_token_arrays(PROBE_TOKENS, dynamic=False)[0]
        base_flops, base_bytes = op_flops_and_bytes(self.shape, _work(tokens=0.0), **self._kwargs)
        coefficients = []
        for index in range(len(FIELDS)):
            unit = tuple(1.0 if i == index else 0.0 for i in range(len(FIELDS)))
            flops, bytes_ = op_flops_and_bytes(self.shape, _work(tokens=0.0, values=unit), **self._kwargs)
            coefficients.append((flops, bytes_))
        # Effective FLOP/s per op from the roofline itself: the linear layers' rate per token count, and each
        # dynamic op's constant ratio to it (its own peak; eff_compute and saturation are shared).
        rates = [np.broadcast_to(np.asarray(r, dtype=np.float64), PROBE_TOKENS.shape) for r in raw.op_flops_per_s]
        found = []  # the dynamic ops: (index, name, FLOPs scale, FLOPs and bytes per field)
        for op, name in enumerate(OP_NAMES):
            # FLOPs in the linear layers' time units: x (linear-layer rate / this op's rate), 1 unless attention
            # or the lm_head runs in another format (dtypes.OpPrecision), so every consumer keeps one s/FLOP.
            scale = float(rates[0][1] / rates[op][1])
            dflops = tuple(scale * float(c[0][op] - base_flops[op]) for c in coefficients)
            dbytes = tuple(float(c[1][op] - base_bytes[op]) for c in coefficients)
            if any(dflops) or any(dbytes):
                found.append((op, name, scale, dflops, dbytes))
        self._dynamic_scales = [(op, scale) for op, _, scale, _, _ in found]
        tables = TableGroup(self._token_arrays, size=self.max_tokens + 1, count=2 + 2 * len(found),
                            block=TOKEN_BLOCK).tables
        self.static_seconds, self.seconds_per_flop = tables[0], tables[1]  # a step always has >= 1 token
        self.dynamic: list[DynamicOp] = [
            DynamicOp(name=name, flops_by_tokens=tables[2 + 2 * k], bytes_by_tokens=tables[3 + 2 * k],
                      flops_per_field=dflops, bytes_per_field=dbytes)
            for k, (_, name, _, dflops, dbytes) in enumerate(found)]
        # Effective rates, recovered from the roofline's own outputs (no formula re-typed here).
        total_bytes = np.asarray(sum(raw.op_bytes), dtype=np.float64)
        self.seconds_per_byte = float(np.asarray(raw.memory_seconds)[1] / total_bytes[1])
        return raw

    def _tensor_token_arrays(self, tokens: np.ndarray, *, dynamic: bool = True) -> tuple[StepArrays, list[np.ndarray]]:
        """The roofline at these step token counts and (`dynamic`) the tables by tokens there: static seconds (the
        ops that read tokens only, overhead and all-reduce), seconds per FLOP, then FLOPs and bytes per dynamic op."""
        raw = step_arrays(self.shape, _work(tokens=tokens, values=(np.zeros_like(tokens),) * 5), **self._step_kwargs)
        if not dynamic:
            return raw, []
        static = np.asarray(raw.step_seconds, dtype=np.float64).copy()
        columns = []
        for op, scale in self._dynamic_scales:
            static = static - np.asarray(raw.op_seconds[op])
            columns += [scale * np.broadcast_to(raw.op_flops[op], tokens.shape),
                        np.broadcast_to(raw.op_bytes[op], tokens.shape)]
        per_flop = 1.0 / np.broadcast_to(np.asarray(raw.op_flops_per_s[0], dtype=np.float64), tokens.shape)
        return raw, [static, per_flop, *columns]

    def _token_arrays(self, tokens: np.ndarray) -> list[np.ndarray]:  # the tables at these token counts (float64)
        return self._tensor_token_arrays(tokens)[1]

    def _build_decode_coefficients(self) -> None:
        """Per decode sequence: fields = const + slope * context, below and at/above the window."""
        window = self.window_tokens

        per_sequence = float(self.decode_tokens_per_sequence)

        def fields_at(context: float) -> np.ndarray:
            work = uniform_work(self.shape, batch=1.0, new_tokens=per_sequence, context_tokens=context)
            return np.asarray((per_sequence, *_fields(work)[1:]))  # every new token's logits (1 when not verifying)

        below0 = fields_at(0.0)
        below_slope = fields_at(1.0) - below0
        above_ref = float(window) if window < NO_WINDOW else 0.0
        above_slope = fields_at(above_ref + 1.0) - fields_at(above_ref)
        above0 = fields_at(above_ref) - above_ref * above_slope
        groups = (below0, below_slope, above0, above_slope)
        # Per dynamic op: FLOPs and bytes per (below seq, below context token, above seq, above context token).
        self.decode_coefficients: list[tuple[tuple[float, ...], tuple[float, ...]]] = [
            (
                tuple(float(np.dot(op.flops_per_field, g)) for g in groups),
                tuple(float(np.dot(op.bytes_per_field, g)) for g in groups),
            )
            for op in self.dynamic
        ]
        self._decode_groups = groups

    def decode_fields(self, *, below: int, below_context: float, above: int, above_context: float) -> tuple[float, ...]:
        """Work fields of `below` + `above` decode sequences whose contexts sum to these token counts."""
        b0, b1, a0, a1 = self._decode_groups
        return tuple((below * b0 + below_context * b1 + above * a0 + above_context * a1).tolist())

    def chunk_fields(self, *, new_tokens: int, context_tokens: int, emits: bool) -> tuple[float, ...]:
        """Work fields of one prefill chunk; the lm_head row counts only when the chunk ends the prompt."""
        work = uniform_work(self.shape, batch=1.0, new_tokens=float(new_tokens), context_tokens=float(context_tokens))
        return (1.0 if emits else 0.0, *_fields(work)[1:])

    def chunk_costs(self, *, new_tokens: np.ndarray, context_tokens: np.ndarray, emits: bool) -> np.ndarray:
        """Rows of (FLOPs, bytes, FLOPs, bytes, ...) that prefill chunks add to each dynamic op.

        Vectorized over chunks: one `uniform_work` call (batch = 1 per chunk) for all of them.
        """
        size = np.asarray(new_tokens, dtype=np.float64)
        context = np.asarray(context_tokens, dtype=np.float64)
        work = uniform_work(self.shape, batch=np.ones_like(size), new_tokens=size, context_tokens=context)
        fields = [np.full_like(size, 1.0 if emits else 0.0)]
        fields += [np.broadcast_to(np.asarray(getattr(work, name), dtype=np.float64), size.shape) for name in FIELDS[1:]]
        columns = []
        for op in self.dynamic:
            columns.append(sum(c * f for c, f in zip(op.flops_per_field, fields, strict=True)))
            columns.append(sum(c * f for c, f in zip(op.bytes_per_field, fields, strict=True)))
        return np.stack(columns, axis=-1)

    def warm_chunk_cache(self, *, new_tokens: np.ndarray, context_tokens: np.ndarray, emits: bool) -> None:
        """Fill `chunk_cache` for these chunks in one vectorized call (skips known ones; distinct pairs by code)."""
        sizes, contexts = (np.asarray(t).astype(np.int64) for t in (new_tokens, context_tokens))
        base = int(contexts.max(initial=0)) + 1  # code = size * base + context, sorted as the (size, context) pairs
        pairs = np.divmod(np.unique(sizes * base + contexts), base)
        keys = [(size, context, emits) for size, context in zip(pairs[0].tolist(), pairs[1].tolist(), strict=True)]
        fresh = [i for i, key in enumerate(keys) if key not in self.chunk_cache]
        if not fresh:
            return
        costs = self.chunk_costs(new_tokens=pairs[0][fresh], context_tokens=pairs[1][fresh], emits=emits).tolist()
        for i, row in zip(fresh, costs, strict=True):
            self.chunk_cache[keys[i]] = tuple(row)

    def chunk_cost(self, key: tuple[int, int, bool]) -> tuple[float, ...]:
        """Cached costs of one chunk (new tokens, cached context, ends the prompt); scalar path on a miss."""
        cost = self.chunk_cache.get(key)
        if cost is None:
            size, context, emits = key
            work = uniform_work(self.shape, batch=1.0, new_tokens=float(size), context_tokens=float(context))
            fields = (1.0 if emits else 0.0, *(float(getattr(work, name)) for name in FIELDS[1:]))
            cost = self.chunk_cache[key] = tuple(
                float(sum(c * f for c, f in zip(coefficients, fields, strict=True)))
                for op in self.dynamic
                for coefficients in (op.flops_per_field, op.bytes_per_field)
            )
        return cost

    def seconds(self, tokens: int, fields: tuple[float, ...]) -> float:
        """Step seconds for `tokens` new tokens and the other work fields (FIELDS order)."""
        total = self.static_seconds[tokens]
        per_flop = self.seconds_per_flop[tokens]
        for op in self.dynamic:
            flops = op.flops_by_tokens[tokens] + float(np.dot(op.flops_per_field, fields))
            bytes_ = op.bytes_by_tokens[tokens] + float(np.dot(op.bytes_per_field, fields))
            total += max(flops * per_flop, bytes_ * self.seconds_per_byte)
        return total

    def decode_tables(self) -> tuple[TokenTable, DecodeRows]:
        """Per decode batch size B (all sequences decoding, no prefill): a static table and context lines.

        Returns (static_by_batch, lines_by_batch). static_by_batch[B] holds `static_seconds[B]`, B times
        `per_sequence_seconds` and every dynamic op whose cost does not depend on contexts (lm_head: B logit rows). lines_by_batch[B] has one
        tuple per remaining op (attention), in seconds: compute and memory intercepts for B below-window
        sequences (f0, m0), their change per above-window sequence (fa, ma), and per context token below
        and above the window (fb, fab, mb, mab), ordered (f0, fa, fb, fab, m0, ma, mb, mab). A decode step
        costs static + sum over ops of max(f0 + fa*n_above + fb*ctx_below + fab*ctx_above, m0 + ...).
        Built once per timer, a block of batch sizes at a time on first read (`lazy_tables`).
        """
        if self._decode_tables is None:
            size = self.max_tokens // self.decode_tokens_per_sequence + 1
            static, rows = TableGroup(self._decode_arrays, size=size, count=2, block=ROW_BLOCK).tables
            self._decode_tables = static, rows
        return self._decode_tables

    def _decode_arrays(self, batches: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`decode_tables` at these batch sizes (float64 array): static (batches), context lines (batches x ops x 8)."""
        # B decoding sequences put B x decode_tokens_per_sequence tokens in the step (the identity when 1).
        tokens = batches * self.decode_tokens_per_sequence
        ones = np.ones_like(batches)
        static_by_tokens, per_flop, *dynamic = self._token_arrays(tokens)
        per_byte = self.seconds_per_byte
        # B decode sequences each cost the engine's per-sequence CPU time (0 unless the profile sets one).
        static = static_by_tokens + self.per_sequence_seconds * batches
        columns: list[np.ndarray] = []
        for k, (fc, bc) in enumerate(self.decode_coefficients):
            flops0 = (dynamic[2 * k] + fc[0] * batches) * per_flop
            bytes0 = (dynamic[2 * k + 1] + bc[0] * batches) * per_byte
            if fc[0] == fc[2] and bc[0] == bc[2] and not (fc[1] or fc[3] or bc[1] or bc[3]):
                static += np.maximum(flops0, bytes0)
                continue
            columns += [flops0, (fc[2] - fc[0]) * per_flop, fc[1] * per_flop, fc[3] * per_flop,
                        bytes0, (bc[2] - bc[0]) * per_byte * ones, bc[1] * per_byte * ones, bc[3] * per_byte * ones]
        rows = np.stack(columns, axis=-1).reshape(len(batches), -1, 8) if columns else np.zeros((len(batches), 0, 8))
        return static, rows
