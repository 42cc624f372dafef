"""Fit the step-time model (costmodel.measurements.endpoint_stepsim.StepModel) to a measured sweep.

Each request gives two equations, with regressors read off the sweep's own timings (which other
requests were decoding, and with how much context, while it ran):

  TPOT_i = overhead + prefill_token * P_i + decode_sequence * B_i + context_token * K_i
      B_i, K_i: time-averaged number of sequences decoding, and their context tokens, over i's decode
      window [first token, last token]; P_i: prompt tokens of requests whose first token came inside the
      window, per step of it.
  TTFT_i = fixed + 1.5 * (overhead + decode_sequence * B0_i + context_token * K0_i) + prefill_token * prompt_i
      B0_i, K0_i: sequences decoding when i was sent; 1.5 steps = half a step waiting for the running one
      to end, then i's prefill step. Only requests sent while the server held fewer than its limit
      (decoding, prefilling or queued: a request in prefill blocks a one-at-a-time server too).
  ADMIT_i = overhead + prefill_token * prompt_i + decode_sequence * B1_i + context_token * K1_i
      Only on a server that runs one sequence at a time (limit 1), for a request that waited for it:
      ADMIT_i is the time from the previous stream's last token to i's first token, all of it server
      time (two arrival times at the same client from the same server: the network delay cancels). Without
      these rows a one-at-a-time server's prefill lands in the per-request fixed cost, which the
      simulator books as client time, so queueing and throughput were predicted too optimistic
      (found against llama-cpp-python's server, tests/test_endpoint_real_server.py).

Rows are scaled by the median of their target (so TTFT and TPOT weigh alike) and solved by least squares
with non-negative coefficients (negative ones are dropped and the rest refitted until none is negative).
The cost per prefill token is only separable from the fixed costs when prompt lengths vary (longest at
least PROMPT_SPREAD_FACTOR x the shortest) or ADMIT rows exist; otherwise it is left at 0 and the
prefill time lands in the per-request fixed cost and the per-step overhead.
The server's concurrency limit is the most sequences ever seen decoding at once, when the client had
more in flight than that; otherwise no limit was seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from costmodel.errors import CostmodelError
from costmodel.measurements.endpoint_stepsim import StepModel
from costmodel.measurements.endpoint_sweep import SweepLevel, SweepRequest

# A level whose second half of requests has a median TPOT this many times its first half's (or a third
# of it) changed behaviour mid-level (a restart, autoscaling, another tenant): our threshold, far above
# the run-to-run spread of a steady server and below the jump of a replica coming or going.
BEHAVIOUR_CHANGE_FACTOR = 3.0
PROMPT_SPREAD_FACTOR = 1.5


@dataclass(frozen=True, kw_only=True)
class Measured:
    """One usable request: its timings from the level's start and its token counts."""

    sent: float
    first: float
    last: float
    prompt: int
    output: int


def usable(level: SweepLevel, *, prompt_tokens_default: int) -> list[Measured]:
    """The level's successful requests with content; prompt tokens from usage, else the setting."""
    return [_measured(r, prompt_tokens_default) for r in level.requests if r.ok and r.chunk_seconds]


def _measured(request: SweepRequest, prompt_default: int) -> Measured:
    return Measured(sent=request.sent_seconds, first=request.chunk_seconds[0], last=request.chunk_seconds[-1],
                    prompt=request.prompt_tokens or prompt_default, output=max(1, request.output_tokens))


def check_level(level: SweepLevel, rows: list[Measured]) -> None:
    """CostmodelError when every request of the level failed or its latency jumped mid-level."""
    if not rows:
        raise CostmodelError(f"level {level.value:g}: every request failed or streamed nothing "
                             f"({level.requests_failed} failed); rerun the sweep or drop that level")
    tpots = [(m.last - m.first) / (m.output - 1) for m in sorted(rows, key=lambda m: m.sent) if m.output >= 2]
    half = len(tpots) // 2
    if half >= 2:
        early, late = float(np.median(tpots[:half])), float(np.median(tpots[half:]))
        if min(early, late) > 0 and max(early, late) / min(early, late) > BEHAVIOUR_CHANGE_FACTOR:
            raise CostmodelError(
                f"level {level.value:g}: the server changed behaviour mid-sweep (median TPOT {early:.4g} s in "
                f"the first half of requests, {late:.4g} s in the second, more than {BEHAVIOUR_CHANGE_FACTOR:g}x"
                "); rerun the sweep on a steady server")


def _peak_overlap(intervals: list[tuple[float, float]]) -> int:
    """Most (start, end) intervals open at once (a sweep over their ends; an end at a start closes first)."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def peak_decoding(rows: list[Measured]) -> int:
    """Most requests decoding (between first and last token) at once."""
    return _peak_overlap([(m.first, m.last) for m in rows])


def peak_in_flight(rows: list[Measured]) -> int:
    """Most requests in flight (sent, not finished) at once, as the client saw it."""
    return _peak_overlap([(m.sent, m.last) for m in rows])


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _tpot_row(i: Measured, rows: list[Measured]) -> list[float]:
    window = i.last - i.first
    seqs = ctx = 0.0
    for j in rows:
        span = _overlap(i.first, i.last, j.first, j.last)
        if span <= 0:
            continue
        middle = (max(i.first, j.first) + min(i.last, j.last)) / 2
        progress = (middle - j.first) / (j.last - j.first) if j.last > j.first else 1.0
        seqs += span / window
        ctx += span / window * (j.prompt + j.output * progress)
    prefill = sum(j.prompt for j in rows if j is not i and i.first < j.first <= i.last) / (i.output - 1)
    return [1.0, prefill, seqs, ctx, 0.0]


def _ttft_row(i: Measured, rows: list[Measured]) -> tuple[list[float], int]:
    decoding = [j for j in rows if j.first <= i.sent < j.last]
    ctx = sum(j.prompt + j.output * (i.sent - j.first) / max(j.last - j.first, 1e-12) for j in decoding)
    return [1.5, float(i.prompt), 1.5 * len(decoding), 1.5 * ctx, 1.0], len(decoding)


def _admit_row(i: Measured, rows: list[Measured]) -> tuple[list[float], float] | None:
    """ADMIT row and target of a request that waited on a one-at-a-time server (another stream ended
    between its send and its first token); None if it did not wait."""
    freed = max((j.last for j in rows if j is not i and i.sent < j.last < i.first), default=None)
    if freed is None:
        return None
    return [1.0, float(i.prompt), 0.0, 0.0, 0.0], i.first - freed


def _in_flight(i: Measured, rows: list[Measured]) -> int:
    """Requests the server held (decoding, prefilling or queued) when i was sent: a request sent while
    the server was at its limit waited, and its TTFT is not the no-wait TTFT equation's."""
    return sum(1 for j in rows if j is not i and j.sent <= i.sent < j.last)


def _nonnegative_lstsq(matrix: np.ndarray, target: np.ndarray) -> np.ndarray:
    free = list(range(matrix.shape[1]))
    coef = np.zeros(matrix.shape[1])
    while free:
        solution, *_ = np.linalg.lstsq(matrix[:, free], target, rcond=None)
        if (solution >= 0).all():
            coef[free] = solution
            break
        free.pop(int(np.argmin(solution)))
    return coef


@dataclass(frozen=True, kw_only=True)
class Design:
    """The fit's equations: regressor rows and targets (seconds) for TPOT and TTFT, and the server limit."""

    tpot_rows: np.ndarray
    tpot_seconds: np.ndarray
    ttft_rows: np.ndarray
    ttft_seconds: np.ndarray
    max_num_seqs: int | None
    one_prompt_length: bool
    admit_rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 5)))
    admit_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def resampled(self, rng: np.random.Generator) -> Design:
        """The same equations drawn with replacement (a bootstrap sample of requests)."""
        a = rng.integers(0, len(self.tpot_seconds), len(self.tpot_seconds))
        b = rng.integers(0, len(self.ttft_seconds), len(self.ttft_seconds))
        c = rng.integers(0, len(self.admit_seconds), len(self.admit_seconds))
        return Design(tpot_rows=self.tpot_rows[a], tpot_seconds=self.tpot_seconds[a], ttft_rows=self.ttft_rows[b],
                      ttft_seconds=self.ttft_seconds[b], max_num_seqs=self.max_num_seqs,
                      one_prompt_length=self.one_prompt_length, admit_rows=self.admit_rows[c],
                      admit_seconds=self.admit_seconds[c])


def design(levels: list[list[Measured]], *, client_peak: int) -> Design:
    """Regressors of every request of `levels` (each a list from `usable`), computed within its level."""
    peak = max(peak_decoding(rows) for rows in levels)
    limit = peak if client_peak > peak else None
    tpot_rows, tpot_y, ttft_rows, ttft_y, admit_rows, admit_y = [], [], [], [], [], []
    for rows in levels:
        for m in rows:
            admit = _admit_row(m, rows) if limit == 1 else None
            if admit is not None:
                admit_rows.append(admit[0])
                admit_y.append(admit[1])
            if m.output >= 2 and m.last > m.first:
                tpot_rows.append(_tpot_row(m, rows))
                tpot_y.append((m.last - m.first) / (m.output - 1))
            row, _ = _ttft_row(m, rows)
            if limit is None or _in_flight(m, rows) < limit:
                ttft_rows.append(row)
                ttft_y.append(m.first - m.sent)
    if not tpot_rows or not ttft_rows:
        raise CostmodelError("the sweep has no request with 2+ output tokens to fit; raise --max-tokens")
    prompts = [m.prompt for rows in levels for m in rows]
    return Design(tpot_rows=np.asarray(tpot_rows), tpot_seconds=np.asarray(tpot_y), ttft_rows=np.asarray(ttft_rows),
                  ttft_seconds=np.asarray(ttft_y), max_num_seqs=limit,
                  one_prompt_length=max(prompts) < PROMPT_SPREAD_FACTOR * min(prompts),
                  admit_rows=np.asarray(admit_rows).reshape(-1, 5), admit_seconds=np.asarray(admit_y))


def solve(equations: Design) -> StepModel:
    """Non-negative least squares on the equations, each kind scaled by its median target."""
    tpot_scale = float(np.median(equations.tpot_seconds)) or 1.0
    ttft_scale = float(np.median(equations.ttft_seconds)) or 1.0
    admitted = len(equations.admit_seconds) > 0
    admit_scale = (float(np.median(equations.admit_seconds)) or 1.0) if admitted else 1.0
    matrix = np.vstack([equations.tpot_rows / tpot_scale, equations.ttft_rows / ttft_scale,
                        equations.admit_rows / admit_scale])
    target = np.concatenate([equations.tpot_seconds / tpot_scale, equations.ttft_seconds / ttft_scale,
                             equations.admit_seconds / admit_scale])
    if equations.one_prompt_length and not admitted:  # prefill cost not separable from the fixed costs
        matrix[:, 1] = 0.0
    coef = _nonnegative_lstsq(matrix, target)
    return StepModel(overhead_seconds=float(coef[0]), prefill_token_seconds=float(coef[1]),
                     decode_sequence_seconds=float(coef[2]), context_token_seconds=float(coef[3]),
                     request_fixed_seconds=float(coef[4]), max_num_seqs=equations.max_num_seqs)


def fit_step_model(levels: list[list[Measured]], *, client_peak: int) -> StepModel:
    """Fit the coefficients to the requests of `levels` (each a list from `usable`)."""
    return solve(design(levels, client_peak=client_peak))
