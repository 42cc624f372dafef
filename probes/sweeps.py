"""Which points a probe measures, per device and mode (--quick or full), and the default model.

CPU --quick is sized to finish in under a minute on 2 cores: one layer of Llama 3.2 1B plus its
embedding and 263M-parameter lm_head (1.3 GB of fp32 weights read per decode step: far larger than any
CPU cache, so decode streams weights from DRAM like a real model). Its 2,048-wide rows also let MKL's
GEMV reach ~60% of the copy bandwidth, against ~45% for Qwen2.5-0.5B's 896-wide ones on the same CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MODEL = {"cpu": "llama-3.2-1b", "cuda": "llama-3.1-8b"}


@dataclass(frozen=True)
class Sweep:
    prefill_prompt_tokens: tuple[int, ...]
    prefill_batch: int
    decode_batches: tuple[int, ...]
    decode_context_tokens: tuple[int, ...]
    rounds: int  # passes through the whole sweep; a point's median is over all its timed calls
    warmup: int  # untimed calls before a point's first round
    warmup_later: int  # untimed calls before each later round
    repeats: int  # timed calls per point per round
    max_repeats: int  # per round, while the spread is wide
    point_budget_seconds: float  # stop adding repeats past this much timed time per point
    energy_seconds: float  # NVML energy window per point (back-to-back calls); 0 = none
    quick_layers: int | None  # layers probed in --quick mode (None: as many as fit)
    microbench_repeats: int
    copy_buffer_bytes: int
    matmul_sizes: tuple[int, ...]
    matmul_max_call_seconds: float
    matmul_dtypes: tuple[str, ...]

    def groups(self) -> list[tuple[int, int, list[tuple[str, int, int]]]]:
        """(batch, KV cache tokens, [(phase, new tokens, context tokens), ...]) sharing one cache."""
        prefill = [("prefill", t, 0) for t in self.prefill_prompt_tokens]
        groups = [(self.prefill_batch, max(self.prefill_prompt_tokens), prefill)]
        cache_tokens = max(self.decode_context_tokens) + 1
        for batch in self.decode_batches:
            groups.append((batch, cache_tokens, [("decode", 1, c) for c in self.decode_context_tokens]))
        return groups

    def points(self) -> list[tuple[int, str, int, int]]:
        """(batch, phase, new tokens, context tokens) in the order they are measured."""
        return [(b, phase, t, c) for b, _, pts in self.groups() for phase, t, c in pts]


def default_model_id(device_type: str) -> str:
    return DEFAULT_MODEL[device_type]


def default_sweep(device_type: str, *, quick: bool) -> Sweep:
    """The sweep for a device; --quick trims points and repeats."""
    if device_type == "cpu":
        return Sweep(
            prefill_prompt_tokens=(16, 32, 64, 128, 256) if quick else (16, 32, 64, 128, 256, 512, 1024),
            prefill_batch=1,
            decode_batches=(1, 2, 4, 8) if quick else (1, 2, 4, 8, 16),
            decode_context_tokens=(128, 512, 1024) if quick else (128, 512, 2048),
            rounds=4 if quick else 7,
            warmup=1,
            warmup_later=0,
            repeats=1,
            max_repeats=1,
            point_budget_seconds=3.0 if quick else 20.0,
            energy_seconds=0.0,
            quick_layers=1 if quick else None,
            microbench_repeats=5,
            copy_buffer_bytes=256 * 2**20,  # 8x a 32 MiB L3
            matmul_sizes=(256, 512, 1024, 2048),
            matmul_max_call_seconds=0.5,
            matmul_dtypes=("fp32", "bf16"),
        )
    return Sweep(
        prefill_prompt_tokens=(128, 256, 512, 1024, 2048, 4096) if quick else (64, 128, 256, 512, 1024, 2048, 4096, 8192),
        prefill_batch=1,
        decode_batches=(1, 4, 16, 64) if quick else (1, 2, 4, 8, 16, 32, 64, 128),
        decode_context_tokens=(512, 2048, 8192) if quick else (512, 2048, 8192, 32768),
        rounds=1,
        warmup=3,
        warmup_later=1,
        repeats=10,
        max_repeats=30,
        point_budget_seconds=2.0 if quick else 10.0,
        energy_seconds=0.5 if quick else 2.0,
        quick_layers=None,
        microbench_repeats=10,
        copy_buffer_bytes=2 * 2**30,
        matmul_sizes=(1024, 2048, 4096, 8192),
        matmul_max_call_seconds=0.05,
        matmul_dtypes=("fp32", "bf16", "fp16"),
    )
