"""Token-count distributions for prompts and completions, with the moments the cost math needs.

Each distribution gives its mean E[X], P(X > t) and the partial mean E[X; X > t] = E[X * 1{X > t}]
(closed forms), so API cost with a long-context tier is exact without sampling, and draws samples
for the serving simulator. Counts are tokens per request.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from costmodel.scenario.limits import MAX_HOURLY_WEIGHT, MAX_LOGNORMAL_SIGMA, MAX_TOKENS_PER_REQUEST
from costmodel.strict import StrictModel

MAX_EMPIRICAL_COUNTS = 1_000_000  # observed counts per list: enough for any log sample, bounded memory


def _normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


class _Dist(StrictModel):
    def expected_tokens(self) -> float:
        """E[X]: mean tokens per request."""
        raise NotImplementedError

    def probability_above(self, threshold_tokens: float) -> float:
        """P(X > threshold_tokens)."""
        raise NotImplementedError

    def partial_expected_tokens_above(self, threshold_tokens: float) -> float:
        """E[X * 1{X > threshold_tokens}]: the share of the mean carried by requests above the threshold."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n integer token counts (>= 1), for the serving simulator."""
        raise NotImplementedError


class FixedTokens(_Dist):
    """Every request has exactly `tokens` tokens."""

    kind: Literal["fixed"] = "fixed"
    tokens: int = Field(gt=0, le=MAX_TOKENS_PER_REQUEST, description="tokens per request")

    def expected_tokens(self) -> float:
        return float(self.tokens)

    def probability_above(self, threshold_tokens: float) -> float:
        return 1.0 if self.tokens > threshold_tokens else 0.0

    def partial_expected_tokens_above(self, threshold_tokens: float) -> float:
        return float(self.tokens) if self.tokens > threshold_tokens else 0.0

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, self.tokens, dtype=np.int64)


class UniformTokens(_Dist):
    """Integer token counts uniform on [low_tokens, high_tokens], both ends included."""

    kind: Literal["uniform"] = "uniform"
    low_tokens: int = Field(gt=0, le=MAX_TOKENS_PER_REQUEST)
    high_tokens: int = Field(gt=0, le=MAX_TOKENS_PER_REQUEST)

    @model_validator(mode="after")
    def _ordered(self) -> UniformTokens:
        if self.high_tokens < self.low_tokens:
            raise ValueError("high_tokens must be >= low_tokens; swap them")
        return self

    def expected_tokens(self) -> float:
        return (self.low_tokens + self.high_tokens) / 2.0

    def _above(self, threshold_tokens: float) -> tuple[int, int]:
        first = max(self.low_tokens, math.floor(threshold_tokens) + 1)  # smallest count > threshold
        return first, max(0, self.high_tokens - first + 1)

    def probability_above(self, threshold_tokens: float) -> float:
        return self._above(threshold_tokens)[1] / (self.high_tokens - self.low_tokens + 1)

    def partial_expected_tokens_above(self, threshold_tokens: float) -> float:
        first, count = self._above(threshold_tokens)
        total = count * (first + self.high_tokens) / 2.0  # arithmetic series first..high
        return total / (self.high_tokens - self.low_tokens + 1)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.integers(self.low_tokens, self.high_tokens, size=n, endpoint=True)


class LognormalTokens(_Dist):
    """Lognormal with the given mean and log-space standard deviation `sigma` (long right tail).

    mu = ln(mean_tokens) - sigma^2 / 2, so E[X] = mean_tokens exactly."""

    kind: Literal["lognormal"] = "lognormal"
    mean_tokens: float = Field(ge=1, le=MAX_TOKENS_PER_REQUEST, description="mean tokens per request")
    sigma: float = Field(ge=0.01, le=MAX_LOGNORMAL_SIGMA, description="standard deviation of ln(tokens); 0.5-1.0 is typical")

    @property
    def mu(self) -> float:
        return math.log(self.mean_tokens) - self.sigma**2 / 2.0

    def expected_tokens(self) -> float:
        return self.mean_tokens

    def probability_above(self, threshold_tokens: float) -> float:
        if threshold_tokens <= 0:
            return 1.0
        return 1.0 - _normal_cdf((math.log(threshold_tokens) - self.mu) / self.sigma)

    def partial_expected_tokens_above(self, threshold_tokens: float) -> float:
        # E[X 1{X>t}] = exp(mu + sigma^2/2) * Phi((mu + sigma^2 - ln t) / sigma)
        if threshold_tokens <= 0:
            return self.mean_tokens
        return self.mean_tokens * _normal_cdf((self.mu + self.sigma**2 - math.log(threshold_tokens)) / self.sigma)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.maximum(1, np.rint(rng.lognormal(self.mu, self.sigma, size=n))).astype(np.int64)


class EmpiricalTokens(_Dist):
    """Token counts observed in logs (optionally weighted); requests draw from them."""

    kind: Literal["empirical"] = "empirical"
    tokens: list[int] = Field(min_length=1, max_length=MAX_EMPIRICAL_COUNTS, description="observed token counts")
    weights: list[float] | None = Field(default=None, max_length=MAX_EMPIRICAL_COUNTS,
                                        description="relative frequency of each count")

    @model_validator(mode="after")
    def _check(self) -> EmpiricalTokens:
        if any(t <= 0 or t > MAX_TOKENS_PER_REQUEST for t in self.tokens):
            raise ValueError(f"every empirical token count must be in 1..{MAX_TOKENS_PER_REQUEST:,}")
        if self.weights is not None:
            if len(self.weights) != len(self.tokens):
                raise ValueError(f"weights has {len(self.weights)} entries; give one per token count ({len(self.tokens)})")
            if any(w < 0 or w > MAX_HOURLY_WEIGHT for w in self.weights) or sum(self.weights) < 1e-9:
                raise ValueError(f"weights must be in 0..{MAX_HOURLY_WEIGHT:g} with a positive sum (>= 1e-9)")
        return self

    def _probabilities(self) -> np.ndarray:
        w = np.ones(len(self.tokens)) if self.weights is None else np.asarray(self.weights, dtype=float)
        return w / w.sum()

    def expected_tokens(self) -> float:
        return float(np.dot(self._probabilities(), self.tokens))

    def probability_above(self, threshold_tokens: float) -> float:
        mask = np.asarray(self.tokens) > threshold_tokens
        return float(self._probabilities()[mask].sum())

    def partial_expected_tokens_above(self, threshold_tokens: float) -> float:
        values = np.asarray(self.tokens, dtype=float)
        return float(np.dot(self._probabilities(), np.where(values > threshold_tokens, values, 0.0)))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.choice(np.asarray(self.tokens, dtype=np.int64), size=n, p=self._probabilities())


TokenDistribution = Annotated[
    FixedTokens | UniformTokens | LognormalTokens | EmpiricalTokens, Field(discriminator="kind")
]
