"""The scenario's quality floor resolved against the quality sheet: each option's score and who falls below.

An option's subject is its API price id (which may inherit its open model's score) or its self-host
model id; a hybrid serves with both parts, so it scores the lower of the two. Bad input (a floor naming
an unknown subject, a benchmark with no score for some option) raises CostmodelError naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.catalog.quality import DEFAULT_BENCHMARK, QualitySheet
from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.scenario import ApiOption, HybridOption, Option, Scenario, SelfHostOption


@dataclass(frozen=True, kw_only=True)
class ResolvedFloor:
    """The floor as a number on one benchmark, and the sentence naming it."""

    benchmark: str
    min_score: float
    label: str  # e.g. "at least as good as llama-3.1-70b (lmarena-text 1248)"

    def contract(self) -> dict[str, object]:
        """`compare --json` top-level `quality_floor`."""
        return {"benchmark": self.benchmark, "min_score": self.min_score, "label": self.label}


def option_subject(option: Option, scenario: Scenario) -> str | tuple[str, str]:
    """The quality-sheet subject of an option (a hybrid: both of its parts' subjects)."""
    if isinstance(option, ApiOption):
        return option.price_id
    if isinstance(option, SelfHostOption):
        return option.model
    assert isinstance(option, HybridOption)
    parts = (scenario.option(option.self_host), scenario.option(option.api))
    subjects = [option_subject(part, scenario) for part in parts]
    return str(subjects[0]), str(subjects[1])


def option_scores(scenario: Scenario, sheet: QualitySheet, *, benchmark: str) -> dict[str, float | None]:
    """Option name -> its score on `benchmark` (None: the sheet has none; a hybrid: the lower part's)."""
    scores: dict[str, float | None] = {}
    for option in scenario.options:
        subject = option_subject(option, scenario)
        subjects = subject if isinstance(subject, tuple) else (subject,)
        found = [sheet.score(s, benchmark) for s in subjects]
        scores[option.name] = None if any(f is None for f in found) else min(f.score for f in found if f)
    return scores


def resolve_floor(scenario: Scenario, sheet: QualitySheet) -> ResolvedFloor | None:
    """The scenario's `quality:` floor as a score on one benchmark, or None without one."""
    floor = scenario.quality
    if floor is None:
        return None
    benchmark = floor.benchmark or DEFAULT_BENCHMARK
    sheet.scale(benchmark)  # raises naming the known benchmarks
    if floor.min_score is not None:
        return ResolvedFloor(benchmark=benchmark, min_score=floor.min_score,
                             label=f"{benchmark} score at least {floor.min_score:g}")
    subject = floor.at_least_as_good_as
    assert subject is not None
    score = sheet.score(subject, benchmark)
    if score is None:
        known = {row.subject for row in sheet.rows if row.benchmark == benchmark} | set(sheet.open_model_ids)
        error = unknown_id_error("quality subject", subject, known)
        raise CostmodelError(f"quality.at_least_as_good_as: {error} (no {benchmark} score for it; name a catalog "
                             "model or API price id listed in costmodel/catalog/quality.csv)")
    return ResolvedFloor(benchmark=benchmark, min_score=score.score,
                         label=f"at least as good as {subject} ({benchmark} {score.score:g})")


def below_floor(scenario: Scenario, sheet: QualitySheet, floor: ResolvedFloor) -> dict[str, str]:
    """Option name -> why it is below the floor. An option with no published score on the benchmark cannot be
    shown to meet the floor, so it is excluded the same way, saying so (never guessed)."""
    scores = option_scores(scenario, sheet, benchmark=floor.benchmark)
    below = {name: (f"below the quality floor: {floor.benchmark} {score:g} < {floor.min_score:g} "
                    f"({floor.label}); not a substitute (scenario quality:)")
             for name, score in scores.items() if score is not None and score < floor.min_score}
    below |= {name: (f"below the quality floor: no published {floor.benchmark} score, so it cannot be shown to be "
                     f"{floor.label}; add a sourced score to costmodel/catalog/quality.csv or use substitutes: groups")
              for name, score in scores.items() if score is None}
    return below


def substitute_group(name: str, groups: list[list[str]] | None) -> frozenset[str] | None:
    """The names `name` is interchangeable with under the scenario's `substitutes:` groups (itself when it
    is in no group); None without groups (every option is then treated as a substitute)."""
    if groups is None:
        return None
    return next((frozenset(g) for g in groups if name in g), frozenset({name}))


def not_substitutes(ranked: list[tuple[str, str | tuple[str, str]]], *, scenario: Scenario) -> dict[str, str]:
    """Option name -> why it is not a substitute, given the feasible options in ranked order as (name, subject).

    The group that competes is the one holding the floor's reference (`quality.at_least_as_good_as` naming
    an option's model or API price id), else the group of the first-ranked feasible option; every feasible
    option outside it is not a substitute (shown, never recommended or used as a reference)."""
    groups = scenario.substitutes
    if groups is None or not ranked:
        return {}
    target = scenario.quality.at_least_as_good_as if scenario.quality is not None else None
    anchor = next((name for name, subject in ranked if target is not None and subject == target), ranked[0][0])
    group = substitute_group(anchor, groups)
    assert group is not None
    members = ", ".join(sorted(group))
    why = "holds the quality floor's reference" if anchor != ranked[0][0] else "is the cheapest feasible option"
    return {name: (f"not a substitute: outside the substitutes group of {anchor} ({members}), which {why}, so it "
                   "does not compete (scenario substitutes:)")
            for name, _ in ranked if name not in group}
