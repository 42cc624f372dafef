"""ShareGPT request lengths with their spread, for the offline ShareGPT reference rows.

sglang.bench_serving (the rows' harness, v0.3.0) sends ShareGPT's first-turn prompts with their own
lengths and forces each output to its first answer's length (ignore_eos on by default), so a run mixes
4-token and 1,000-token prompts and outputs. `data/sharegpt_length_quantiles.csv` holds the percentiles
of both lengths over 16,384 requests sampled the same way with the same tokenizer family, and their
Spearman rank correlation (sources in the file and in scripts/summarize_sharegpt_lengths.py). Its means
are 219.6 prompt and 199.3 output tokens, near the 230 / 194 the rows' own sources give (other samples).

Requests are drawn from a Gaussian copula: a standard bivariate normal with correlation
rho = 2 sin(pi r_s / 6) (the normal correlation whose Spearman correlation is r_s; Kruskal, JASA 53, 1958),
each coordinate mapped through the normal CDF to a percent and through the percentile table (linear
between entries) to a length. Pairs over the harness's 2,048-token limit are drawn again, as the harness
drops them. The draw was checked against drawing requests from the trace itself (docs/validation.md).

Validation only: nothing in the user-facing model reads it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

QUANTILES_CSV = Path(__file__).resolve().parents[1] / "data" / "sharegpt_length_quantiles.csv"
MAX_PAIR_TOKENS = 2_048  # sample_sharegpt_requests drops prompt + output over 2,048 (sglang 0.3.0, vLLM)
CORRELATION_KEY = "# spearman_rank_correlation:"


@dataclass(frozen=True)
class LengthQuantiles:
    """The bundled percentile table and rank correlation."""

    percents: tuple[float, ...]
    prompt_tokens: tuple[float, ...]
    output_tokens: tuple[float, ...]
    spearman: float

    @property
    def normal_correlation(self) -> float:
        """The Gaussian copula's correlation: 2 sin(pi r_s / 6)."""
        return 2.0 * math.sin(math.pi * self.spearman / 6.0)


@functools.cache
def quantiles() -> LengthQuantiles:
    """The bundled table (data/sharegpt_length_quantiles.csv)."""
    lines = QUANTILES_CSV.read_text(encoding="utf-8").splitlines()
    spearman = next(float(ln.split(":", 1)[1]) for ln in lines if ln.startswith(CORRELATION_KEY))
    rows = [ln.split(",") for ln in lines if not ln.startswith("#")][1:]  # after the header
    return LengthQuantiles(percents=tuple(float(r[0]) for r in rows), prompt_tokens=tuple(float(r[1]) for r in rows),
                           output_tokens=tuple(float(r[2]) for r in rows), spearman=spearman)


def _normal_percent(z: np.ndarray) -> np.ndarray:
    """100 * the standard normal CDF of each element."""
    return 50.0 * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))


def sharegpt_lengths(*, requests: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(prompt tokens, output tokens) of `requests` ShareGPT requests drawn from the copula (module docstring)."""
    table = quantiles()
    rho = table.normal_correlation
    rng = np.random.default_rng(seed)
    prompts: list[np.ndarray] = []
    outputs: list[np.ndarray] = []
    while sum(p.size for p in prompts) < requests:
        z = rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=requests)
        prompt = np.rint(np.interp(_normal_percent(z[:, 0]), table.percents, table.prompt_tokens)).astype(np.int64)
        output = np.rint(np.interp(_normal_percent(z[:, 1]), table.percents, table.output_tokens)).astype(np.int64)
        kept = prompt + output <= MAX_PAIR_TOKENS
        prompts.append(prompt[kept])
        outputs.append(output[kept])
    return np.concatenate(prompts)[:requests], np.concatenate(outputs)[:requests]
