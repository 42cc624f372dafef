"""The search plays by the decision's rules: which models compete (the scenario's own, those past the quality
floor, `search.models: all` treated as substitutes, substitutes groups), the scenario's ops and hosts on every
configuration, mixed fleets on reserved/owned, no spot for interactive serving, same-cost variants collapsed,
and a front of one point that says why."""

from __future__ import annotations

import datetime as dt

import pytest

from costmodel.catalog.quality import load_quality_scores
from costmodel.decision.rank import decide
from costmodel.errors import CostmodelError
from costmodel.pricing import PriceSheet, load_api_prices, load_gpu_prices
from costmodel.pricing.sheets import open_model_ids
from costmodel.scenario import parse_scenario
from costmodel.search import Configuration, enumerate_candidates, search, with_configuration
from costmodel.search.rows import collapse, front_reason
from costmodel.search.scope import option_terms, search_scope

AS_OF = dt.date(2026, 12, 1)
WORKLOAD = {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
            "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0}


def _host(name: str, model: str, **extra: object) -> dict[str, object]:
    return {"kind": "self-host", "name": name, "model": model, "hardware": "l4", "gpus_per_replica": 1,
            "offering": "runpod/l4/on-demand", **extra}


def _scenario(*options: dict[str, object], **top: object) -> dict[str, object]:
    return {"name": "rules", "as_of": "2026-12-01", "workload": WORKLOAD,
            "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05}, "options": list(options), **top}


def _scope(data: dict[str, object]):  # type: ignore[no-untyped-def]
    api = load_api_prices()
    return search_scope(parse_scenario(data), api_sheet=api,
                        quality=load_quality_scores(open_model_ids=open_model_ids(api)), as_of=AS_OF)


def test_default_models_are_the_scenarios_own() -> None:
    # deepinfra/llama-3.3-70b sells the open model llama-3.3-70b (pricing_data/api_prices.csv open_model_id).
    scope = _scope(_scenario({"kind": "api", "name": "di", "price_id": "deepinfra/llama-3.3-70b"},
                             _host("small", "llama-3.1-8b")))
    assert scope.models == ("llama-3.3-70b", "llama-3.1-8b") and scope.basis == "scenario"
    assert not scope.treated_as_substitutes and "treated as substitutes" not in scope.sentence()


def test_a_quality_floor_searches_the_catalog_past_it_and_drops_the_own_models_below() -> None:
    # costmodel/catalog/quality.csv (LMArena text): llama-3.1-70b 1293 is the floor; llama-3.1-8b 1211 is below.
    scope = _scope(_scenario(_host("small", "llama-3.1-8b"), quality={"at_least_as_good_as": "llama-3.1-70b"}))
    sheet = load_quality_scores(open_model_ids=open_model_ids(load_api_prices()))
    assert scope.basis == "quality_floor" and "llama-3.1-70b" in scope.models and "llama-3.1-8b" not in scope.models
    assert all(sheet.score(m, "lmarena-text").score >= 1293 for m in scope.models)  # type: ignore[union-attr]
    assert scope.quality_scores["llama-3.1-70b"] == 1293
    assert [m for m, _ in scope.left_out] == ["llama-3.1-8b"] and "below the quality floor" in scope.left_out[0][1]
    assert not scope.treated_as_substitutes  # the floor vouches for them


def test_search_models_all_is_treated_as_substitutes() -> None:
    scope = _scope(_scenario(_host("small", "llama-3.1-8b"), search={"models": "all"}))
    assert scope.basis == "all" and "qwen2.5-0.5b" in scope.models and "tiny-test" not in scope.models
    assert scope.treated_as_substitutes and "treated as substitutes" in scope.sentence()
    assert scope.contract()["models_treated_as_substitutes"] is True


def test_substitutes_groups_keep_the_models_a_grouped_option_serves() -> None:
    data = _scenario(_host("a", "llama-3.1-8b"), _host("b", "qwen2.5-7b"), search={"models": ["llama-3.1-8b",
                     "qwen2.5-7b", "qwen2.5-0.5b"]}, substitutes=[["a"]])
    scope = _scope(data)
    assert scope.models == ("llama-3.1-8b",)
    assert {m for m, _ in scope.left_out} == {"qwen2.5-7b", "qwen2.5-0.5b"}


def test_no_model_to_search_names_the_fix() -> None:
    with pytest.raises(CostmodelError, match="search.models"):
        _scope(_scenario({"kind": "api", "name": "mini", "price_id": "openai/gpt-4.1-mini"}))


def test_ops_come_from_the_scenarios_self_host_options() -> None:
    scenario = parse_scenario(_scenario(_host("big", "llama-3.1-70b", ops_usd_per_month=8000, ops_usd_per_gpu_month=50),
                                        _host("small", "llama-3.1-8b", ops_usd_per_month=4000)))
    same = option_terms(scenario, model="llama-3.1-70b", hardware="h100-sxm")
    assert (same.ops_usd_per_month, same.ops_usd_per_gpu_month) == (8000, 50) and "big" in same.ops_source
    other = option_terms(scenario, model="qwen2.5-7b", hardware="h100-sxm")
    assert (other.ops_usd_per_month, other.ops_usd_per_gpu_month) == (4000, 0)  # the lowest of each
    told = parse_scenario(_scenario(_host("small", "llama-3.1-8b", ops_usd_per_month=4000),
                                    search={"ops_usd_per_month": 0, "ops_usd_per_gpu_month": 0}))
    assert option_terms(told, model="llama-3.1-8b", hardware="l4").ops_usd_per_month == 0  # the scenario says so
    api_only = parse_scenario(_scenario({"kind": "api", "name": "mini", "price_id": "openai/gpt-4.1-mini"}))
    with pytest.raises(CostmodelError, match=r"search\.ops_usd_per_month"):
        option_terms(api_only, model="llama-3.1-8b", hardware="l4")


def test_a_searched_configuration_costs_what_compare_says_ops_included() -> None:
    # One on-demand L4 row; the scenario's own option carries $3,000/month + $100/GPU-month of ops.
    sheet = load_gpu_prices()
    l4 = PriceSheet(kind="gpu", where=sheet.where, rows=(sheet.get("runpod/l4/on-demand"),))
    data = _scenario(_host("own", "qwen2.5-0.5b", ops_usd_per_month=3000, ops_usd_per_gpu_month=100),
                     search={"engines": ["generic"]})
    scenario = parse_scenario(data)
    result = search(scenario, top_k=2, gpu_sheet=l4)
    best = result.best[0]
    assert best.ops_usd_per_month == pytest.approx(3000 + 100 * best.gpus)
    assert best.gpu_usd_per_month + best.host_usd_per_month + best.ops_usd_per_month == pytest.approx(best.usd_per_month)
    assert best.capacity_requests_per_second and best.replicas >= 1 and best.batch
    priced = decide(with_configuration(scenario, best, name="searched"), gpu_sheet=l4).option("searched")
    assert priced.usd_per_month == pytest.approx(best.usd_per_month)
    assert priced.breakdown.ops_usd_per_month == pytest.approx(best.ops_usd_per_month)
    assert priced.meets_slo == best.meets_slo and priced.slo_status == best.slo_status
    row = result.contract()["top_k"][0]  # type: ignore[index]
    for key in ("capacity_requests_per_second", "replicas", "batch", "engine", "scaling", "quality_score",
                "ops_usd_per_month", "usd_per_month", "cost_breakdown", "variants"):
        assert key in row
    assert set(row["cost_breakdown"]) == {"gpu_usd_per_month", "host_usd_per_month", "ops_usd_per_month"}


def test_mixed_fleets_on_owned_and_reserved_with_an_on_demand_burst_spot_only_for_batch() -> None:
    sheet = load_gpu_prices()
    rows = tuple(sheet.get(i) for i in ("owned/l4/owned", "runpod/l4/on-demand"))
    spot = [r for r in sheet.rows if r.accelerator_id == "l4" and r.offering == "spot"]
    both = PriceSheet(kind="gpu", where=sheet.where, rows=rows + tuple(spot[:1]))
    data = _scenario(_host("own", "qwen2.5-0.5b"), search={"engines": ["generic"]})
    space = enumerate_candidates(parse_scenario(data), gpu_sheet=both)
    assert {c.scaling for c in space if c.offering == "owned/l4/owned"} == {"fixed", "mixed"}
    assert {c.scaling for c in space if c.offering == "runpod/l4/on-demand"} == {"fixed", "autoscale"}
    assert not any("/spot" in c.offering for c in space)  # interactive: spot can be reclaimed
    if spot:
        batch = {**data, "workload": {**WORKLOAD, "batch_allowed": True}}
        assert any("/spot" in c.offering for c in enumerate_candidates(parse_scenario(batch), gpu_sheet=both))
    mixed = next(c for c in space if c.scaling == "mixed").option(name="m")
    assert mixed.scaling.mode == "mixed" and mixed.scaling.spot_share == 0


def test_pruning_stays_exact_with_mixed_fleets_and_owned_hosts() -> None:
    # Owned L4 (host left out by the scenario's 0/0) with an on-demand burst row: fixed, mixed, autoscale.
    sheet = load_gpu_prices()
    both = PriceSheet(kind="gpu", where=sheet.where, rows=tuple(sheet.get(i) for i in ("owned/l4/owned",
                                                                                     "runpod/l4/on-demand")))
    data = _scenario(_host("own", "qwen2.5-0.5b", offering="owned/l4/owned", host_capex_usd_per_gpu=0,
                           host_power_kw_per_gpu=0, ops_usd_per_month=500), search={"engines": ["generic"]})
    scenario = parse_scenario(data)
    found = search(scenario, top_k=3, gpu_sheet=both)
    brute = search(scenario, top_k=3, gpu_sheet=both, prune=False)
    assert found.best == brute.best and found.candidates_simulated <= brute.candidates_simulated


def test_an_owned_row_without_host_figures_is_not_ranked() -> None:
    sheet = load_gpu_prices()
    owned = PriceSheet(kind="gpu", where=sheet.where, rows=(sheet.get("owned/l4/owned"),))
    data = _scenario(_host("own", "qwen2.5-0.5b"), search={"engines": ["generic"]})
    result = search(parse_scenario(data), top_k=1, gpu_sheet=owned)  # the host sheet has no L4 server
    assert not result.best and result.candidates_without_host > 0


def _row(**changes: object) -> Configuration:
    base = {"model": "qwen2.5-7b", "hardware": "l4", "gpus_per_replica": 1, "weight_dtype": "bf16",
            "kv_dtype": "bf16", "offering": "runpod/l4/on-demand", "engine": "generic", "scaling": "fixed",
            "usd_per_month": 900.0, "usd_per_mtok": 0.5, "tokens_per_second_per_user": 40.0,
            "ttft_p90_seconds": 0.3, "meets_slo": True}
    return Configuration(**{**base, **changes})  # type: ignore[arg-type]


def test_same_cost_variants_collapse_into_one_row_listing_them() -> None:
    slow = _row()
    fast = _row(weight_dtype="fp8", kv_dtype="fp8", tokens_per_second_per_user=55.0)
    auto = _row(scaling="autoscale", engine="vllm")
    dearer = _row(usd_per_month=1800.0, gpus_per_replica=2)
    rows = collapse([slow, auto, dearer, fast])
    assert len(rows) == 2 and rows[0].weight_dtype == "fp8"  # the fastest variant shows
    assert [v.label() for v in rows[0].variants] == ["fp8/fp8 generic", "bf16/bf16 generic", "bf16/bf16 vllm autoscale"]
    assert len(rows[0].contract()["variants"]) == 3  # type: ignore[arg-type]
    assert rows[1].usd_per_month == 1800.0 and len(rows[1].variants) == 1


def test_a_front_of_one_point_says_why() -> None:
    only = _row()
    assert front_reason([only], [only], metric="tokens_per_second_per_user", pruned=0) == (
        "only one configuration (with its same-cost variants) meets the SLO among those simulated")
    dearer_slower = _row(usd_per_month=1800.0, usd_per_mtok=1.0, tokens_per_second_per_user=30.0)
    why = front_reason([only], [only, dearer_slower], metric="tokens_per_second_per_user", pruned=12)
    assert why is not None and "best tokens/s per user of the 2" in why and "12 configurations were pruned unsimulated by the roofline bounds" in why
    assert front_reason([only, dearer_slower], [only, dearer_slower], metric="ttft_p90_seconds", pruned=0) is None
    assert "no simulated configuration" in (front_reason([], [], metric="ttft_p90_seconds", pruned=0) or "")


def test_an_added_configuration_joins_the_substitutes_group_of_its_model() -> None:
    data = _scenario(_host("a", "llama-3.1-8b", ops_usd_per_month=700), {"kind": "api", "name": "mini",
                     "price_id": "openai/gpt-4.1-mini"}, substitutes=[["mini"], ["a"]])
    added = with_configuration(parse_scenario(data), _row(model="llama-3.1-8b"), name="search-1")
    assert added.substitutes == [["mini"], ["a", "search-1"]]
    option = added.option("search-1")
    assert option.ops_usd_per_month == 700  # type: ignore[union-attr]  # the scenario's ops, not $0


def test_many_variants_are_summarised_for_people_and_listed_in_the_json() -> None:
    from costmodel.search.rows import variants_summary
    rows = collapse([_row(weight_dtype=w, kv_dtype=kv, engine=e) for w in ("bf16", "fp8") for kv in ("bf16", "fp8")
                     for e in ("generic", "vllm")])
    assert len(rows) == 1 and len(rows[0].variants) == 8
    assert variants_summary(rows[0]) == ("7 more variants (weights bf16/fp8, KV bf16/fp8, engines generic/vllm, "
                                         "scaling fixed)")
    assert len(rows[0].contract()["variants"]) == 8  # type: ignore[arg-type]
    assert variants_summary(collapse([_row(), _row(engine="vllm")])[0]) == "bf16/bf16 vllm"
