"""The rows the search reports: one simulated configuration (`Configuration`), same-cost variants collapsed into
one row, and the Pareto fronts with the reason a front has a single point.

Collapsing: configurations of one model, accelerator, TP size and offering that cost the same to the cent
(weight/KV dtype, engine or scaling variants that need the same replicas) are one row; the row shows the variant
with the most tokens/s per user, then the lowest TTFT p90, then the simplest scaling (fixed, autoscale, mixed),
and lists every variant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from costmodel.search.mode_choice import ModeChoice
from costmodel.search.space import Candidate


@dataclass(frozen=True, kw_only=True)
class Variant:
    """One configuration collapsed into a row: what differs between same-cost configurations."""

    weight_dtype: str
    kv_dtype: str
    engine: str
    scaling: str
    tokens_per_second_per_user: float
    ttft_p90_seconds: float | None

    def label(self) -> str:
        """'fp8/fp8 vllm' (the scaling appended when not fixed)."""
        return f"{self.weight_dtype}/{self.kv_dtype} {self.engine}" + (f" {self.scaling}" if self.scaling != "fixed"
                                                                       else "")

    def contract(self) -> dict[str, object]:
        """One entry of a row's `variants` in `search --json`."""
        return {"weight_dtype": self.weight_dtype, "kv_dtype": self.kv_dtype, "engine": self.engine,
                "scaling": self.scaling,
                "tokens_per_second_per_user": self.tokens_per_second_per_user,
                "ttft_p90_seconds": self.ttft_p90_seconds}


@dataclass(frozen=True, kw_only=True)
class Configuration:
    """One simulated configuration: the `search --json` frontier/best row, costed by the decision."""

    model: str
    hardware: str
    gpus_per_replica: int
    weight_dtype: str
    kv_dtype: str
    offering: str
    engine: str
    scaling: str
    usd_per_month: float  # month 0's, what the fleet pays a month
    usd_per_mtok: float
    tokens_per_second_per_user: float  # 1 / TPOT p90 at the operating point (0 when it misses the SLO)
    ttft_p90_seconds: float | None
    meets_slo: bool
    replicas: int = 0
    slo_status: str = "misses"  # the decision's verdict (meets_slo reads it)
    capacity_requests_per_second: float | None = None  # per replica at the SLO
    batch: int | None = None  # decode batch at the operating point
    quality_score: float | None = None  # the model's score on the floor's (or the default) benchmark
    gpus: int = 0  # GPUs paid at the peak hour
    gpu_usd_per_month: float = 0.0  # GPU-hours (owned: GPU capex, power, colocation), host excluded
    host_usd_per_month: float = 0.0  # owned: the host server's share
    ops_usd_per_month: float = 0.0  # fixed + per-GPU ops
    ops_source: str = ""  # where the ops figures come from (search/scope.py `option_terms`)
    host_counted: bool = True  # False: an owned GPU whose host server has no sourced figures (never ranked)
    excluded_kind: str | None = None  # the decision's exclusion, when the configuration has one
    variants: tuple[Variant, ...] = ()  # same-cost configurations collapsed into this row (itself included)
    mode_choice: ModeChoice | None = None  # the serving mode (search/mode_choice.py); None: aggregated, TP
    # What the search ranks by (decision/commitment.py): the horizon total with commitments per month of the
    # horizon, the month-0 fleet held constant; None: usd_per_month (no reserved term past the horizon).
    ranking_usd_per_month: float | None = None
    commitment_term_months: int | None = None  # a reserved term that runs past the horizon (None: none)

    @property
    def ranked_usd_per_month(self) -> float:
        """The cost the search ranks and prunes by: `ranking_usd_per_month`, else usd_per_month."""
        return self.usd_per_month if self.ranking_usd_per_month is None else self.ranking_usd_per_month

    def candidate(self) -> Candidate:
        """The configuration as a search candidate (to add it to a scenario)."""
        return Candidate(model=self.model, hardware=self.hardware, gpus_per_replica=self.gpus_per_replica,
                         weight_dtype=self.weight_dtype, kv_dtype=self.kv_dtype, offering=self.offering,
                         engine=self.engine, scaling=self.scaling, mode=self.mode_choice)

    def mode_label(self) -> str:
        """'tp8', 'DEP16 + mtp1', 'disaggregated 1P(8)1D(8)': the replica layout and serving mode, for people."""
        mode = self.mode_choice
        return f"tp{self.gpus_per_replica}" if mode is None else mode.label(gpus=self.gpus_per_replica)

    def mode_family(self) -> str:
        """The serving-mode family the row belongs to: aggregated TP, DEP or disaggregated, each with or without
        speculation ('disaggregated + mtp'), the groups `SearchResult.best_by_mode` ranks."""
        mode = self.mode_choice
        if mode is None:
            return "aggregated TP"
        base = "disaggregated" if mode.disaggregated else ("aggregated DEP" if mode.parallelism == "dep" else
                                                           "aggregated TP")
        return base + (f" + {mode.speculation_method}" if mode.speculation_method else "")

    def mode_contract(self) -> dict[str, object]:
        """`search --json` keys naming the mode: mode, layout, parallelism, speculation (method, draft tokens)."""
        mode = self.mode_choice
        return {"mode": "aggregated" if mode is None else mode.kind,
                "layout": None if mode is None else mode.layout,
                "parallelism": "tp" if mode is None else mode.parallelism,
                "speculation_method": None if mode is None else mode.speculation_method,
                "speculation_draft_tokens": None if mode is None or not mode.speculation_method else mode.draft_tokens,
                "mode_label": self.mode_label(), "mode_family": self.mode_family()}

    def variant(self) -> Variant:
        """This configuration as a variant of its row."""
        return Variant(weight_dtype=self.weight_dtype, kv_dtype=self.kv_dtype, engine=self.engine,
                       scaling=self.scaling, tokens_per_second_per_user=self.tokens_per_second_per_user,
                       ttft_p90_seconds=self.ttft_p90_seconds)

    def contract(self) -> dict[str, object]:
        """The JSON row: the contract's keys, then the plan's sizing and cost breakdown."""
        row: dict[str, object] = {key: getattr(self, key) for key in (
            "model", "hardware", "gpus_per_replica", "weight_dtype", "kv_dtype", "offering", "engine", "scaling",
            "usd_per_month", "usd_per_mtok", "tokens_per_second_per_user", "ttft_p90_seconds", "meets_slo",
            "slo_status", "capacity_requests_per_second", "replicas", "gpus", "batch", "quality_score",
            "ops_usd_per_month", "ops_source", "gpu_usd_per_month", "host_usd_per_month", "host_counted")}
        row["ranking_usd_per_month"] = self.ranked_usd_per_month
        row["commitment_term_months"] = self.commitment_term_months
        row["cost_breakdown"] = {"gpu_usd_per_month": self.gpu_usd_per_month,
                                 "host_usd_per_month": self.host_usd_per_month,
                                 "ops_usd_per_month": self.ops_usd_per_month}
        row["variants"] = [v.contract() for v in (self.variants or (self.variant(),))]
        row.update(self.mode_contract())
        return row


CollapseKey = tuple[object, ...]
SCALING_SIMPLICITY = {"fixed": 0, "autoscale": 1, "mixed": 2}


def collapse_key(row: Configuration) -> CollapseKey:
    """What same-cost variants share: model, accelerator, TP size, offering and the cost to the cent, month 0's and
    the ranked one (and the serving mode, when the row runs one: two modes are two rows)."""
    key: CollapseKey = (row.model, row.hardware, row.gpus_per_replica, row.offering, round(row.usd_per_month, 2),
                        round(row.ranked_usd_per_month, 2))
    return key if row.mode_choice is None else (*key, row.mode_choice)


def _preference(row: Configuration) -> tuple[float, float, int, str]:
    ttft = row.ttft_p90_seconds if row.ttft_p90_seconds is not None else math.inf
    return (-row.tokens_per_second_per_user, ttft, SCALING_SIMPLICITY.get(row.scaling, 3), repr(row))


MAX_LISTED_VARIANTS = 3  # beyond this, `variants_summary` names the distinct values instead of each variant


def variants_summary(row: Configuration) -> str:
    """The same-cost variants beyond the row's own, for people ('' when none): each one when few, else the
    distinct weight and KV formats, engines and scalings among them (`search --json` lists every one)."""
    others = row.variants[1:]
    if len(others) <= MAX_LISTED_VARIANTS:
        return ", ".join(v.label() for v in others)

    def distinct(field: str) -> str:
        return "/".join(dict.fromkeys(getattr(v, field) for v in row.variants))

    return (f"{len(others)} more variants (weights {distinct('weight_dtype')}, KV {distinct('kv_dtype')}, "
            f"engines {distinct('engine')}, scaling {distinct('scaling')})")


def collapse(rows: list[Configuration]) -> list[Configuration]:
    """One row per collapse key, cheapest first (by the ranked cost): its fastest variant, listing every variant of
    the key."""
    groups: dict[CollapseKey, list[Configuration]] = {}
    for row in rows:
        groups.setdefault(collapse_key(row), []).append(row)
    out = []
    for members in groups.values():
        ordered = sorted(members, key=_preference)
        out.append(replace(ordered[0], variants=tuple(m.variant() for m in ordered)))
    return sorted(out, key=lambda r: (r.ranked_usd_per_month, *_preference(r)))


def pareto_front(rows: list[Configuration], *, better_is_higher: bool, metric: str) -> list[Configuration]:
    """Rows no other row beats on both $/M tokens (lower) and `metric` (higher or lower is better)."""
    def value(row: Configuration) -> float:
        raw = getattr(row, metric)
        x = math.inf if raw is None else float(raw)
        return -x if better_is_higher else x

    front: list[Configuration] = []
    best_so_far = math.inf
    for row in sorted(rows, key=lambda r: (r.usd_per_mtok, value(r), *_preference(r))):  # ties: the simpler
        if value(row) < best_so_far:
            front.append(row)
            best_so_far = value(row)
    return front


def front_reason(front: list[Configuration], ranked: list[Configuration], *, metric: str, pruned: int) -> str | None:
    """Why a front has at most one point (None when it has more): nothing meets the SLO, one row does, or the
    cheapest row is also the best on `metric` among the `ranked` rows; `pruned` configurations were never
    simulated (their bounds could not beat the top K), so they are not on it."""
    if len(front) > 1:
        return None
    if not front:
        return "no simulated configuration meets the SLO, so there is no front"
    rows = len(ranked)
    if rows <= 1:
        why = "only one configuration (with its same-cost variants) meets the SLO among those simulated"
    else:
        what = "tokens/s per user" if metric == "tokens_per_second_per_user" else "TTFT p90"
        why = (f"the cheapest configuration also has the best {what} of the {rows} simulated rows that meet the "
               "SLO, so it beats every other on both axes")
    if pruned:
        why += (f"; {pruned:,} configurations were pruned unsimulated by the roofline bounds (they could not meet "
                "the SLO or enter the top K), and one of those could be faster but dearer")
    return why
