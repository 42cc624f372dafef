"""Scenario state of the app: the URL form (zlib + urlsafe base64 in `?s=`) and the files round-trip
without loss; damaged links become inline errors; option colors are stable."""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.colors import PALETTE, option_colors
from app.scenario_io import (
    example_names,
    load_example,
    parse_upload,
    scenario_json_bytes,
    scenario_yaml_bytes,
)
from app.state import MAX_DECODED_BYTES, decode_token, encode_token
from costmodel.errors import CostmodelError
from costmodel.scenario import Scenario, parse_scenario

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _everything_scenario() -> Scenario:
    """Every optional field set, odd floats included, to catch anything a round trip could drop."""
    return parse_scenario({
        "name": "all fields ü",
        "description": "unicode, odd floats: 0.1 + 0.2",
        "workload": {
            "tokens_per_month": 1.234567890123e10,
            "prompt_tokens": {"kind": "empirical", "tokens": [100, 2000, 31000], "weights": [0.1, 0.2, 0.7]},
            "output_tokens": {"kind": "uniform", "low_tokens": 10, "high_tokens": 900},
            "cached_prompt_fraction": 0.1 + 0.2,
            "cache_write_prompt_fraction": 0.05,
            "hourly_traffic_weights": [1 / 3] * 12 + [2.0] * 12,
            "growth_per_month": 0.071,
            "batch_allowed": True,
        },
        "slo": {"ttft_p90_seconds": 0.7, "tpot_p90_seconds": 0.033, "ttft_p50_seconds": 0.2,
                "ttft_p99_seconds": 2.0, "tpot_p50_seconds": 0.02, "tpot_p99_seconds": 0.09,
                "e2e_p90_seconds": 30.0, "e2e_p99_seconds": 60.0},
        "options": [
            {"kind": "api", "name": "a", "price_id": "openai/gpt-4o-mini", "use_batch_api": False,
             "requests_per_minute_limit": 500, "tokens_per_minute_limit": 2_000_000,
             "ttft_p90_seconds": 0.45, "tpot_p90_seconds": 0.012},
            {"kind": "self-host", "name": "s", "model": "llama-3.1-8b", "hardware": "l4", "gpus_per_replica": 2,
             "weight_dtype": "int4", "kv_dtype": "fp8", "offering": None, "usd_per_gpu_hour": 0.71,
             "ops_usd_per_month": 1234.5},
            {"kind": "hybrid", "name": "h", "self_host": "s", "api": "a"},
        ],
    })


def _all_scenarios() -> list[Scenario]:
    return [load_example(name) for name in example_names()] + [_everything_scenario()]


def test_examples_are_bundled() -> None:
    assert {"chat-assistant.yaml", "rag-service.yaml", "batch-summarizer.yaml"} <= set(example_names())
    assert example_names()[0] == "chat-assistant.yaml"  # the default comes first


@pytest.mark.parametrize("index", range(4))
def test_url_token_round_trip_is_lossless(index: int) -> None:
    scenario = _all_scenarios()[index]
    token = encode_token(scenario)
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")  # no escaping
    assert decode_token(token, Scenario) == scenario
    assert decode_token(token, Scenario).model_dump() == scenario.model_dump()


@pytest.mark.parametrize("index", range(4))
def test_file_round_trip_is_lossless(index: int) -> None:
    scenario = _all_scenarios()[index]
    assert parse_upload("x.yaml", scenario_yaml_bytes(scenario)) == scenario
    assert parse_upload("x.json", scenario_json_bytes(scenario)) == scenario


def test_damaged_tokens_raise_costmodel_errors() -> None:
    token = encode_token(load_example("chat-assistant.yaml"))
    with pytest.raises(CostmodelError, match="query parameter 's'"):
        decode_token(token[: len(token) // 2], Scenario)
    with pytest.raises(CostmodelError, match="query parameter 's'"):
        decode_token("not a link!", Scenario)
    not_a_scenario = base64.urlsafe_b64encode(zlib.compress(b'{"name": "x"}')).decode()
    with pytest.raises(CostmodelError, match="invalid scenario"):
        decode_token(not_a_scenario, Scenario)
    bomb = base64.urlsafe_b64encode(zlib.compress(b" " * (MAX_DECODED_BYTES + 10))).decode()
    assert len(bomb) < 10_000
    with pytest.raises(CostmodelError, match="larger than"):
        decode_token(bomb, Scenario)


def test_bad_upload_messages_name_the_file() -> None:
    with pytest.raises(CostmodelError, match="bad.yaml: not valid YAML"):
        parse_upload("bad.yaml", b"name: [unclosed")
    with pytest.raises(CostmodelError, match="bad.json"):
        parse_upload("bad.json", b"\xff\xfe")
    with pytest.raises(CostmodelError, match="slo"):
        parse_upload("noslo.yaml", b"name: x\nworkload: {}\noptions: []\n")


def test_option_colors_are_stable_and_distinct() -> None:
    names = ["gpt-4.1-mini", "llama-3.3-70b-h100-tp4", "claude-haiku-4.5", "hybrid"]
    colors = option_colors(names)
    assert len(set(colors.values())) == len(names)
    assert option_colors(reversed(names)) == colors  # order of the list does not matter
    assert option_colors(names[:2])["gpt-4.1-mini"] in PALETTE
    many = option_colors([f"option-{i}" for i in range(len(PALETTE))])
    assert len(set(many.values())) == len(PALETTE)


def _app(query: dict[str, str] | None = None, *, page: str | None = "views/scenario.py") -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60)
    if query:
        at.query_params.update(query)
    at.run()
    return at if page is None else at.switch_page(page).run()  # the Overview page opens first


def test_app_starts_on_the_default_example_and_writes_the_link() -> None:
    at = _app()
    assert not at.exception
    assert at.session_state["scenario"] == load_example("chat-assistant.yaml")
    assert decode_token(at.query_params["s"], Scenario) == load_example("chat-assistant.yaml")


def test_app_opens_a_shared_link() -> None:
    scenario = _everything_scenario()
    at = _app({"s": encode_token(scenario)})
    assert not at.exception
    assert at.session_state["scenario"] == scenario  # rendering the Scenario page changed nothing
    assert decode_token(at.query_params["s"], Scenario) == scenario


def test_app_shows_a_damaged_link_inline() -> None:
    at = _app({"s": "garbage-link"}, page=None)  # the error shows on the page the link opened
    assert not at.exception
    assert any("Shared link" in e.value and "query parameter 's'" in e.value for e in at.error)
    assert at.session_state["scenario"].name == "chat-assistant"


def test_edits_update_the_link() -> None:
    at = _app()
    at.number_input(key="sc_requests_per_day").set_value(123_456.0).run()
    assert not at.exception
    linked = decode_token(at.query_params["s"], Scenario)
    assert linked.workload.requests_per_day == 123_456.0
    assert linked == at.session_state["scenario"]
