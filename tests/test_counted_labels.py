"""Counts read in the right number: compare's Sources ages ('1 day old') and the nothing-feasible memo's tally
('4 miss the SLO', '1 misses the SLO')."""

from __future__ import annotations

from types import SimpleNamespace

from costmodel.cli.compare import render_table
from costmodel.decision.result_parts import EXCLUSION_LABELS, counted_exclusion
from costmodel.memo.infeasible import infeasible_summary


def test_counted_exclusions_agree_with_their_count():
    assert counted_exclusion("misses_slo", 1) == "1 misses the SLO"
    assert counted_exclusion("misses_slo", 4) == "4 miss the SLO"
    assert counted_exclusion("invalid_option", 2) == "2 invalid options"
    assert counted_exclusion("not_substitute", 3) == "3 not substitutes"
    assert counted_exclusion("non_finite_cost", 1) == "1 with no finite cost"
    for kind, label in EXCLUSION_LABELS.items():  # the others read the label itself, in either number
        if kind not in ("non_finite_cost",):
            assert counted_exclusion(kind, 1) == f"1 {label}"


def test_infeasible_summary_counts_in_the_plural():
    options = [SimpleNamespace(excluded_kind="misses_slo")] * 4 + [SimpleNamespace(excluded_kind="retired")]
    text = infeasible_summary(SimpleNamespace(options=options))  # type: ignore[arg-type]
    assert "(4 miss the SLO, 1 retired)" in text and "misses" not in text


def test_sources_lines_say_1_day_old():
    import dataclasses

    from costmodel.decision.rank import decide
    from costmodel.scenario import parse_scenario
    from tests.test_decision import scenario_dict

    decision = decide(parse_scenario(scenario_dict()))
    ages = iter(range(100))  # 0, 1, 2 ... days: every number once

    def aged(option):
        sources = tuple(dataclasses.replace(s, age_days=next(ages)) for s in option.price_sources)
        return dataclasses.replace(option, price_sources=sources)

    table = render_table(dataclasses.replace(decision, options=tuple(aged(o) for o in decision.options)))
    sources = [line for line in table.splitlines() if line.startswith("  - ") and " old)" in line]
    assert any(line.endswith(", 1 day old)") for line in sources), sources
    assert any(line.endswith(", 0 days old)") for line in sources) and not any("1 days" in s for s in sources)
