"""Serving modes as a search dimension (search/mode_choice.py, search/mode_screen.py): where they apply, the
screen's bounds (arithmetic written out, and against the simulator), and the rows that name them."""

from __future__ import annotations

import math

import pytest

from costmodel.catalog import derive_shape, load_accelerator, load_model
from costmodel.cli.search import modes_list, with_search_modes
from costmodel.decision.capacity import CapacityCache, self_host_capacity
from costmodel.pricing import PriceSheet, load_gpu_prices
from costmodel.roofline import Efficiency
from costmodel.scenario import parse_scenario
from costmodel.search import enumerate_candidates
from costmodel.search.costing import configuration
from costmodel.search.mode_choice import ModeChoice, dep_choices, draft_token_counts, mode_choices
from costmodel.search.mode_screen import mode_bounds
from costmodel.search.run import option_name
from costmodel.search.screen import screen_candidates
from costmodel.search.space import Candidate

H100 = load_accelerator("h100-sxm")
ALL = frozenset({"disaggregated", "speculative", "expert-parallel"})


def _scenario(model: str, **search: object) -> dict[str, object]:
    return {
        "name": "modes search", "as_of": "2026-12-01",
        "workload": {"requests_per_day": 200000, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0},
        "slo": {"ttft_p90_seconds": 2.0, "tpot_p90_seconds": 0.1},
        "search": {"models": [model], "hardware": ["h100-sxm"], "engines": ["sglang"], **search},
        "options": [{"kind": "self-host", "name": "listed", "model": model, "hardware": "h100-sxm",
                     "gpus_per_replica": 8, "weight_dtype": "fp8", "kv_dtype": "fp8", "engine": "sglang",
                     "offering": "aws/h100-sxm/on-demand"}],
    }


@pytest.fixture(scope="module")
def one_offering() -> PriceSheet:  # type: ignore[type-arg]
    sheet = load_gpu_prices()
    return PriceSheet(kind="gpu", where=sheet.where, rows=(sheet.get("aws/h100-sxm/on-demand"),))


def test_without_modes_the_space_is_the_plain_one(one_offering: PriceSheet) -> None:  # type: ignore[type-arg]
    plain = enumerate_candidates(parse_scenario(_scenario("qwen3-30b-a3b")), gpu_sheet=one_offering)
    moded = enumerate_candidates(parse_scenario(_scenario("qwen3-30b-a3b", modes=sorted(ALL))), gpu_sheet=one_offering)
    assert all(c.mode is None for c in plain)
    assert tuple(c for c in moded if c.mode is None) == plain  # same configurations, same order, modes after
    assert moded[:len(plain)] == plain
    # qwen3-30b-a3b (MoE, no MTP row): TP 1, 2, 4, 8; xPyD 1P1D, 1P2D, 2P1D of each within 32 GPUs (12 layouts);
    # DEP 8, 16, 32; no speculation. x 8 dtype pairs x 2 scalings (on-demand: fixed, autoscale).
    kinds = [c.mode for c in moded if c.mode is not None]
    assert len(kinds) == (12 + 3) * 8 * 2
    assert not any(m.speculation_method for m in kinds)


def test_modes_apply_where_they_do() -> None:
    llama = derive_shape(load_model("llama-3.1-70b"))
    r1 = derive_shape(load_model("deepseek-r1"))
    # A dense model: disaggregated only for a whole-node replica (TP 8), never DEP or MTP (no cited row).
    assert mode_choices(model_id="llama-3.1-70b", shape=llama, hardware=H100, tp_gpus=4, engine="sglang", modes=ALL) == ()
    eight = mode_choices(model_id="llama-3.1-70b", shape=llama, hardware=H100, tp_gpus=8, engine="sglang", modes=ALL)
    assert [(gpus, m.layout) for gpus, m in eight] == [(16, "1P(8)1D(8)"), (24, "1P(8)2D(8)"), (24, "2P(8)1D(8)")]
    assert dep_choices(model_id="llama-3.1-70b", shape=llama, hardware=H100, engine="sglang", modes=ALL) == ()
    # DeepSeek-R1: MTP rows with 1, 2 and 3 draft tokens (catalog/speculative.yaml), DEP over 1, 2 and 4 nodes.
    assert draft_token_counts("deepseek-r1") == (1, 2, 3)
    dep = dep_choices(model_id="deepseek-r1", shape=r1, hardware=H100, engine="sglang", modes=ALL)
    assert sorted({gpus for gpus, _ in dep}) == [8, 16, 32] and len(dep) == 3 * 4
    # Engines that ship no modes, and no modes asked for, add nothing.
    assert mode_choices(model_id="deepseek-r1", shape=r1, hardware=H100, tp_gpus=8, engine="generic", modes=ALL) == ()
    assert mode_choices(model_id="deepseek-r1", shape=r1, hardware=H100, tp_gpus=8, engine="sglang",
                        modes=frozenset()) == ()


def test_mode_bounds_by_hand() -> None:
    shape = derive_shape(load_model("deepseek-r1"))
    eff = Efficiency.from_accelerator(H100)
    common = {"compute_seconds_per_token": 1e-4, "decode_step_lower_seconds": 0.02, "shape": shape, "hardware": H100,
              "weight_dtype": "fp8", "kv_dtype": "fp8", "efficiency": eff, "max_num_seqs": 64,
              "prompt_tokens": 1000.0, "output_tokens": 200.0, "margin": 1.5}
    # MTP with 2 draft tokens, aggregated on 8 GPUs: TPOT >= 0.02 / 3; capacity <= min(1.5 / (1200 x 1e-4),
    # 1.5 x 64 x 3 / (200 x 0.02)) = min(12.5, 72) = 12.5 requests/s.
    mtp = mode_bounds(ModeChoice(speculation_method="mtp", draft_tokens=2), gpus=8, **common)  # type: ignore[arg-type]
    assert mtp.tpot_lower_seconds == pytest.approx(0.02 / 3)
    assert mtp.capacity_upper_requests_per_second == pytest.approx(12.5)
    # 2P1D of 8-GPU pools: prefill 2 x 1.5 / (1000 x 1e-4) = 30; decode 1 x min(1.5 / (200 x 1e-4) = 75,
    # 1.5 x 64 / (200 x 0.02) = 24) = 24 -> 24 requests/s; TPOT >= 0.02 (no speculation).
    pd = mode_bounds(ModeChoice(prefill_instances=2, decode_instances=1, pool_gpus=8), gpus=24, **common)  # type: ignore[arg-type]
    assert pd.capacity_upper_requests_per_second == pytest.approx(24.0)
    assert pd.tpot_lower_seconds == pytest.approx(0.02)
    # DEP16: the sequence cap holds per rank (16 x 64), and t_min is the DEP step of one token.
    dep = mode_bounds(ModeChoice(parallelism="dep"), gpus=16, **common)  # type: ignore[arg-type]
    assert dep.capacity_upper_requests_per_second <= 12.5 + 1e-9
    assert 0.0 < dep.tpot_lower_seconds < math.inf


def test_mode_bounds_hold_against_the_simulator(one_offering: PriceSheet) -> None:  # type: ignore[type-arg]
    scenario = parse_scenario(_scenario("qwen3-30b-a3b", modes=sorted(ALL)))
    base = {"model": "qwen3-30b-a3b", "hardware": "h100-sxm", "weight_dtype": "fp8", "kv_dtype": "fp8",
            "offering": "aws/h100-sxm/on-demand", "engine": "sglang"}
    candidates = (
        Candidate(**base, gpus_per_replica=8, mode=ModeChoice(parallelism="dep")),  # type: ignore[arg-type]
        Candidate(**base, gpus_per_replica=2,  # type: ignore[arg-type]
                  mode=ModeChoice(prefill_instances=1, decode_instances=1, pool_gpus=1)),
    )
    screened = screen_candidates(scenario, candidates, gpu_sheet=one_offering, calibration=None)
    cache = CapacityCache()
    for item in screened:
        capacity, _ = self_host_capacity(scenario, item.candidate.option(name="search"), calibration=None, cache=cache)
        assert capacity.feasible
        assert capacity.requests_per_second <= item.replica.capacity_upper_requests_per_second
        assert capacity.tpot_seconds >= item.replica.decode_step_lower_seconds
        row = configuration(scenario, item.candidate, (capacity, ""), gpu_sheet=one_offering,
                            today=scenario.evaluation_date(override=None))
        contract = row.contract()
        assert contract["mode"] == item.candidate.mode.kind  # type: ignore[union-attr]
        assert contract["parallelism"] == item.candidate.mode.parallelism  # type: ignore[union-attr]
        assert row.candidate() == item.candidate
    names = [option_name(1, configuration(scenario, s.candidate, (self_host_capacity(
        scenario, s.candidate.option(name="x"), calibration=None, cache=cache)[0], ""), gpu_sheet=one_offering,
        today=scenario.evaluation_date(override=None))) for s in screened]
    assert names[0].endswith("-sglang-dep8") and names[1].endswith("-sglang-pd1p1d-g1")


def test_cli_modes_flag() -> None:
    assert modes_list("all") == ("disaggregated", "speculative", "expert-parallel")
    assert modes_list("none") == () and modes_list("speculative,disaggregated") == ("speculative", "disaggregated")
    with pytest.raises(Exception, match="unknown mode"):
        modes_list("pipeline")
    scenario = parse_scenario(_scenario("qwen3-30b-a3b"))
    assert with_search_modes(scenario, ("speculative",)).search.modes == ["speculative"]  # type: ignore[union-attr]
    assert with_search_modes(scenario, None) is scenario


def test_serving_modes_doc_states_the_bound_example() -> None:
    from pathlib import Path

    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "serving-modes.md").read_text().split())
    # The worked bounds of test_mode_bounds_by_hand: 1.5 / (1200 x 1e-4) = 12.5, 1.5 x 64 x 3 / (200 x 0.02) = 72;
    # 2P1D: 2 x 1.5 / (1000 x 1e-4) = 30, decode min(75, 24) = 24.
    assert "bounds capacity at min(12.5, 72) = 12.5 requests/s, and 2P1D at min(30, 24) = 24" in page
