"""One standard of evidence for every option's p90 TTFT/TPOT: where it comes from, its band, and the verdict.

Every option, API or self-hosted, carries a `latency_source` and a band around each p90 figure
(`*_p90_seconds_low/_high`):
- `measured`: a probe of the deployment or endpoint (`probe-endpoint`, `calibrate-endpoint`); the band is
  the measurement's own interval (a point when the file gives none).
- `published`: a provider's published median widened by a sourced dispersion (pricing_data/
  latency_dispersion.csv: published p90/p50 ratios, decision/latency.py), never an invented factor; for an
  API priced through its batch API, the provider's published completion window (pricing/batch_window.py):
  TTFT at most the window (the band's high end), TPOT not applicable (results arrive whole).
- `simulated`: the serving simulator's p90 x (1 -+ its documented error), the larger of the held-out and
  all-rows median |error| of the online validation rows of the option's engine (serving/error_bands.py).
- `none`: no figure.

Verdicts (`slo_status`): `meets` (measured, the band within every limit), `likely_meets` (published or
simulated, the band's high end within every limit), `misses` (the band's low end over a limit),
`unverified` (no evidence, or a band across a limit). `meets_slo` = status in {meets, likely_meets}.

A self-hosted fleet is therefore sized at the load whose simulated p90 stays within each limit divided by
(1 + error) (`tightened_slo`): the capacity the tool can stand behind, not the one its point estimate allows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from costmodel.decision.results import LatencySource, OptionResult, SloStatus
from costmodel.scenario.slo import Slo
from costmodel.serving.error_bands import simulated_error
from costmodel.units import fmt_seconds

USABLE_STATUSES: frozenset[str] = frozenset({"meets", "likely_meets"})


@dataclass(frozen=True, kw_only=True)
class Band:
    """One p90 figure (s) and its band; all None when there is no figure."""

    point: float | None = None
    low: float | None = None
    high: float | None = None

    @staticmethod
    def around(point: float | None, *, low_factor: float, high_factor: float) -> Band:
        """point x (low_factor, high_factor); no figure when point is None."""
        if point is None:
            return Band()
        return Band(point=point, low=point * low_factor, high=point * high_factor)


@dataclass(frozen=True, kw_only=True)
class LatencyEvidence:
    """Where an option's p90 TTFT and TPOT come from and how sure they are."""

    source: LatencySource
    ttft: Band
    tpot: Band
    basis: str  # for people: which measurement, page or validation figure the band rests on
    tpot_applies: bool = True  # False for a batch API: its result arrives whole, so no TPOT limit is judged


@dataclass(frozen=True, kw_only=True)
class SloVerdict:
    """The typed status and the sentence for people."""

    status: SloStatus
    reason: str

    @property
    def meets_slo(self) -> bool:
        """meets or likely_meets."""
        return self.status in USABLE_STATUSES


# Weakest first: a plan whose requests are served by two parts is only as sure as its weaker part.
STATUS_ORDER: tuple[SloStatus, ...] = ("misses", "unverified", "likely_meets", "meets")


def weakest_status(statuses: tuple[SloStatus, ...]) -> SloStatus:
    """The weakest of the statuses of the parts that serve requests (misses < unverified < likely < meets)."""
    return min(statuses, key=STATUS_ORDER.index) if statuses else "unverified"


NO_EVIDENCE = LatencyEvidence(source="none", ttft=Band(), tpot=Band(), basis="no measured, published or simulated figure")


def simulated_evidence(*, ttft_p90_seconds: float | None, tpot_p90_seconds: float | None,
                       engine: str) -> LatencyEvidence:
    """The simulator's p90 figures with the documented error of `engine`'s online rows as the band."""
    ttft_error, tpot_error = simulated_error(engine, "ttft"), simulated_error(engine, "tpot")
    if ttft_error is None or tpot_error is None:
        return LatencyEvidence(source="simulated", ttft=Band(point=ttft_p90_seconds), tpot=Band(point=tpot_p90_seconds),
                               basis=f"simulated with the {engine} engine profile, which has no online validation "
                                     "rows: no documented error, so no band")
    e_ttft, e_tpot = ttft_error.median_abs_error, tpot_error.median_abs_error
    return LatencyEvidence(
        source="simulated",
        ttft=Band.around(ttft_p90_seconds, low_factor=1 - e_ttft, high_factor=1 + e_ttft),
        tpot=Band.around(tpot_p90_seconds, low_factor=1 - e_tpot, high_factor=1 + e_tpot),
        basis=(f"simulated ({engine} profile) +-{e_ttft:.0%} TTFT, +-{e_tpot:.0%} TPOT: the median |error| of "
               f"the {engine} online validation rows (docs/validation.md)"))


def measured_evidence(*, ttft_p90_seconds: float | None, tpot_p90_seconds: float | None, basis: str) -> LatencyEvidence:
    """Measured p90 figures; a point band (the measurement files give no interval on the p90 itself)."""
    return LatencyEvidence(source="measured", ttft=Band.around(ttft_p90_seconds, low_factor=1, high_factor=1),
                           tpot=Band.around(tpot_p90_seconds, low_factor=1, high_factor=1), basis=basis)


def tightened_slo(slo: Slo, *, engine: str) -> Slo:
    """The SLO with every TTFT/TPOT (and E2E) limit divided by 1 + the engine's documented error, so a load
    whose simulated percentiles meet it has its band's high end within the real limits. Unchanged for an
    engine with no documented error (its latency is then never `likely_meets`)."""
    ttft_error, tpot_error = simulated_error(engine, "ttft"), simulated_error(engine, "tpot")
    if ttft_error is None or tpot_error is None:
        return slo
    factor = {"ttft": 1 + ttft_error.median_abs_error, "tpot": 1 + tpot_error.median_abs_error}
    factor["e2e"] = max(factor.values())
    update = {name: value / factor[name.split("_")[0]] for name, value in slo.model_dump().items() if value is not None}
    return slo.model_copy(update=update)


def _over(band: Band, limit: float, *, end: str) -> bool:
    value = band.low if end == "low" else band.high
    return value is not None and value > limit * (1 + 1e-9)


def slo_verdict(evidence: LatencyEvidence, slo: Slo) -> SloVerdict:
    """meets / likely_meets / unverified / misses for the p90 limits (see the module docstring)."""
    limits = (("TTFT", evidence.ttft, slo.ttft_p90_seconds),) + (
        (("TPOT", evidence.tpot, slo.tpot_p90_seconds),) if evidence.tpot_applies else ())
    if evidence.source == "none":
        return SloVerdict(status="unverified", reason=f"unverified: {evidence.basis}")
    missed = [f"{name} p90 {'at least ' if band.low != band.point else ''}{fmt_seconds(band.low or 0.0)} > "
              f"{fmt_seconds(limit)}" for name, band, limit in limits if _over(band, limit, end="low")]
    if missed:
        return SloVerdict(status="misses", reason=f"misses the SLO: {'; '.join(missed)} ({evidence.basis})")
    open_ends = [name for name, band, limit in limits if band.high is None or _over(band, limit, end="high")]
    if open_ends:
        straddles = [f"{name} p90 up to {fmt_seconds(band.high)} vs {fmt_seconds(limit)}" for name, band, limit in limits
                     if band.high is not None and _over(band, limit, end="high")]
        missing = [name for name, band, _ in limits if band.high is None]
        parts = straddles + ([f"no band for {', '.join(missing)}"] if missing else [])
        return SloVerdict(status="unverified", reason=f"unverified: {'; '.join(parts)} ({evidence.basis})")
    if evidence.source == "measured":
        return SloVerdict(status="meets", reason=f"meets the SLO (measured p90 within the limits; {evidence.basis})")
    return SloVerdict(status="likely_meets", reason=f"likely meets the SLO: the p90 band's high end is within every "
                      f"limit ({evidence.source}; {evidence.basis})")


def with_evidence(result: OptionResult, evidence: LatencyEvidence, verdict: SloVerdict, *,
                  detail: str = "") -> OptionResult:
    """The result with its latency source, p90 figures, bands and verdict set from one evidence record
    (`detail`: more of the reason, e.g. how the fleet was sized)."""
    return _with_fields(
        result, latency_source=evidence.source, slo_status=verdict.status, meets_slo=verdict.meets_slo,
        slo_reason=verdict.reason + (f"; {detail}" if detail else ""), latency_basis=evidence.basis,
        ttft_p90_seconds=evidence.ttft.point, tpot_p90_seconds=evidence.tpot.point,
        ttft_p90_seconds_low=evidence.ttft.low, ttft_p90_seconds_high=evidence.ttft.high,
        tpot_p90_seconds_low=evidence.tpot.low, tpot_p90_seconds_high=evidence.tpot.high)


def _with_fields(result: OptionResult, **changes: object) -> OptionResult:
    """`dataclasses.replace(result, **changes)` by copying the attributes and setting the changed ones: the
    same object (OptionResult has no __post_init__ and no init=False field), at a fraction of the cost of
    re-running __init__ over its ~90 fields, and this runs once per option and per horizon month."""
    cls = type(result)
    unknown = changes.keys() - cls.__dataclass_fields__.keys()
    if unknown or hasattr(cls, "__post_init__"):
        return replace(result, **changes)  # type: ignore[arg-type]  # replace raises on an unknown field
    copied = object.__new__(cls)
    copied.__dict__.update(result.__dict__)
    copied.__dict__.update(changes)
    return copied
