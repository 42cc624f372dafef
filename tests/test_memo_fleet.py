"""The memo's replicas-by-hour figure and its cost by month: Figure 2 steps with the fleet's replicas by hour;
Figure 2b is drawn only when the decision carries usd_by_month, else the memo says the horizon was not computed."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

pytest.importorskip("reportlab")
from app.scenario_io import load_example
from costmodel.charts.fleet import HORIZON_NOT_COMPUTED
from costmodel.decision.capacity import CapacityCache
from costmodel.decision.rank import decide
from costmodel.memo.blocks import Figure, Para
from costmodel.memo.charts import provisioned_by_hour, render_charts
from costmodel.memo.content import memo_content

AS_OF = dt.date(2026, 12, 1)


def _content(with_months: bool):  # type: ignore[no-untyped-def]
    scenario = load_example("rag-service.yaml")
    cache = CapacityCache()
    decision = decide(scenario, today=AS_OF, capacity_cache=cache)
    if with_months:  # 3 months at 100, 110, 121 USD (10% growth written out) for every usable option
        options = tuple(o if o.excluded_reason else dataclasses.replace(o, usd_by_month=(100.0, 110.0, 121.0),
                                                                          usd_horizon_total=331.0)
                        for o in decision.options)
        decision = dataclasses.replace(decision, options=options, horizon_months=3)
    else:
        decision = dataclasses.replace(decision, options=tuple(dataclasses.replace(o, usd_by_month=None)
                                                               for o in decision.options))
    return memo_content(scenario, decision, today=AS_OF, capacity_cache=cache)


def test_figure_two_steps_with_replicas_by_hour() -> None:
    content = _content(with_months=False)
    decision = content.decision
    lines = provisioned_by_hour(content.charts)
    assert lines
    for name, by_hour, replicas in lines:
        option = decision.option(name)
        assert replicas == list(option.replicas_by_hour)
        assert by_hour == pytest.approx([r * option.capacity_requests_per_second for r in option.replicas_by_hour])


def test_no_horizon_means_a_sentence_not_a_flat_line() -> None:
    content = _content(with_months=False)
    assert "months" not in {b.key for b in content.blocks if isinstance(b, Figure)}
    assert any(isinstance(b, Para) and HORIZON_NOT_COMPUTED in b.text for b in content.blocks)


def test_horizon_present_draws_the_cost_by_month_figure() -> None:
    content = _content(with_months=True)
    figures = {b.key: b for b in content.blocks if isinstance(b, Figure)}
    assert "3-month horizon" in figures["months"].caption
    assert not any(isinstance(b, Para) and HORIZON_NOT_COMPUTED in b.text for b in content.blocks)
    image = render_charts(content.charts, {"months"})["months"]
    assert image.size[0] > 1000  # 6.8 in at 200 dpi


def test_zero_replica_hybrid_gets_no_rank_of_its_own() -> None:
    from costmodel.memo.text import options_table

    content = _content(with_months=False)
    decision = content.decision
    table = options_table(decision)
    hybrid = next(o for o in decision.options if o.all_traffic_to_api)  # rag-service: base-plus-fireworks, 0 replicas
    row = next(r for r in table.rows if r[1] == hybrid.name)
    assert row[0] == "-" and "0 replicas" in row[2]
    ranks = [r[0] for r in table.rows if r[0] != "-"]
    assert ranks == [str(i) for i in range(1, len(decision.options))]  # one fewer rank than rows


def test_figure_one_draws_the_recommendation_on_top(monkeypatch: pytest.MonkeyPatch) -> None:
    import costmodel.memo.charts as charts

    content = _content(with_months=False)
    drawn = {}
    monkeypatch.setattr(charts, "_png", lambda fig: drawn.setdefault("fig", fig))
    charts.volume_chart(content.charts)
    lines = [line for line in drawn["fig"].axes[0].lines if line.get_label() and not line.get_label().startswith("_")]
    top = max(lines, key=lambda line: line.get_zorder())
    assert top.get_label().startswith(content.charts.recommendation)
    assert all(line.get_zorder() < top.get_zorder() for line in lines if line is not top)


def test_rollout_plan_and_totals() -> None:
    from costmodel.memo.blocks import Bullets, Heading, Table

    content = _content(with_months=False)
    blocks = list(content.blocks)
    index = next(i for i, b in enumerate(blocks) if isinstance(b, Heading) and b.text == "10. Rollout plan")
    plan = blocks[index + 1]
    assert isinstance(plan, Bullets)
    decision = content.decision
    chosen = decision.chosen()
    text = " ".join(plan.items)
    # rag-service recommends claude-haiku-4.5, an API (the cheapest option whose published p90 band likely
    # meets the SLO): the plan pilots it and checks its rate limits at the peak hour; it has no per-replica target.
    # Every usable API of the example now has published latency (fireworks/llama-3.1-70b: llm-benchmarks.com's
    # means in pricing_data/api_latency.csv), so nothing is left to measure; an unverified one would be named.
    assert chosen.kind == "api" and chosen.name == "claude-haiku-4.5"
    assert (f"Pilot claude-haiku-4.5 on a share of production traffic; check its rate limits at the peak hour "
            f"({decision.peak_requests_per_second:.2f} requests/s)") in text
    assert not [o for o in decision.usable_options if o.slo_status == "unverified"]
    assert "Measure the APIs whose latency is assumed" not in text
    assert "requests/s per replica" not in text
    from costmodel.memo.rollout import rollout_plan

    assumed = dataclasses.replace(decision, options=tuple(
        dataclasses.replace(o, slo_status="unverified") if o.name == "llama-3.1-70b-fireworks" else o
        for o in decision.options))
    assert "Measure the APIs whose latency is assumed (llama-3.1-70b-fireworks" in " ".join(
        rollout_plan(assumed, load_example("rag-service.yaml")).items)
    assert "Pass criteria before sign-off" in text
    assert any(isinstance(b, Para) and b.text.startswith("Annual and multi-year totals: horizon not computed")
               for b in blocks)
    with_months = _content(with_months=True)
    totals = next(b for b in with_months.blocks if isinstance(b, Table) and b.header[-1] == "3-month total")
    # 100 + 110 + 121 = 331 USD; a 3-month horizon has no first-year sum.
    assert totals.rows[0][1:] == ("$100", "-", "$331")


def test_rollout_plan_of_a_self_hosted_recommendation() -> None:
    # batch-summarizer without its DeepInfra API (and the hybrid that overflows to it) recommends
    # llama-3.1-8b-l40s-spot (self-hosted): the plan stands up one replica to confirm the capacity per replica the
    # decision used, then pilots the fleet at the decided replica count. (With that API, whose published latency
    # likely meets the loose batch SLO, the example itself recommends the API.)
    from costmodel.memo.rollout import rollout_plan

    example = load_example("batch-summarizer.yaml")
    scenario = example.model_copy(update={"options": [o for o in example.options if "deepinfra" not in o.name]})
    decision = decide(scenario, today=AS_OF)
    chosen = decision.chosen()
    assert chosen.kind == "self-host" and chosen.capacity_requests_per_second
    text = " ".join(rollout_plan(decision, scenario).items)
    assert f"{chosen.capacity_requests_per_second:.2f} requests/s per replica" in text
    count = f"{chosen.replicas} replica" if chosen.replicas == 1 else f"{chosen.replicas} replicas"
    assert f"Pilot on a share of production traffic with {count}" in text
    assert "Pass criteria before sign-off" in text
