"""Price sheets that pass but should not: bounded prices, an all-zero paid sheet only with a flag, and
token limits that are not positive refused naming the LiteLLM entry (a refresh used to accept every price 0,
an output price of 1e308, which made costs inf, and `max_input_tokens: -5`, which silently dropped the limit)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.pricing import default_sheet_path, load_api_prices
from costmodel.pricing.refresh import refresh_sheet
from costmodel.pricing.schema import MAX_API_USD_PER_MTOK
from costmodel.pricing.sheets import parse_sheet_text, sheet_to_csv_text

TODAY = dt.date(2026, 12, 1)
URL = "http://127.0.0.1:9/prices"


@pytest.fixture
def api_copy(tmp_path: Path) -> Path:
    path = tmp_path / "api_prices.csv"
    shutil.copyfile(default_sheet_path("api"), path)
    return path


def _litellm(**changes: dict[str, object]) -> bytes:
    """LiteLLM-shaped JSON of the bundled sheet's LiteLLM rows; `changes` overrides entries by row id."""
    data = {}
    for row in load_api_prices().rows:
        if row.source == "litellm":
            entry: dict[str, object] = {"litellm_provider": row.provider, "mode": "chat",
                                        "input_cost_per_token": row.input_usd_per_mtok / 1e6,
                                        "output_cost_per_token": row.output_usd_per_mtok / 1e6}
            entry.update(changes.get(row.id, {}))
            data[row.source_key] = entry
    return json.dumps(data).encode()


def _serve(monkeypatch: pytest.MonkeyPatch, body: bytes) -> None:
    monkeypatch.setattr("costmodel.pricing.refresh.download", lambda url, **kwargs: body)


def _litellm_row_ids() -> list[str]:
    return [r.id for r in load_api_prices().rows if r.source == "litellm"]


def test_an_all_zero_download_needs_the_flag(api_copy: Path, monkeypatch, capsys) -> None:
    zero = {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "cache_read_input_token_cost": 0.0}
    _serve(monkeypatch, _litellm(**{row_id: zero for row_id in _litellm_row_ids()}))
    before = api_copy.read_bytes()
    with pytest.raises(CostmodelError, match="at 0 USD .input and output.*--allow-zero-prices"):
        refresh_sheet("api", path=api_copy, url=URL, today=TODAY)
    assert api_copy.read_bytes() == before
    code = main(["prices", "refresh", "--file", str(api_copy), "--url", URL])
    assert code == 2 and "--allow-zero-prices" in capsys.readouterr().err
    result = refresh_sheet("api", path=api_copy, url=URL, today=TODAY, allow_zero_prices=True)
    assert result.changed  # accepted when asked for
    assert all(r.output_usd_per_mtok == 0 for r in load_api_prices(api_copy).rows if r.source == "litellm")


def test_one_free_row_is_fine(api_copy: Path, monkeypatch) -> None:
    first = _litellm_row_ids()[0]
    _serve(monkeypatch, _litellm(**{first: {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0}}))
    refresh_sheet("api", path=api_copy, url=URL, today=TODAY)
    assert load_api_prices(api_copy).get(first).output_usd_per_mtok == 0


def test_an_output_price_of_1e308_is_refused_naming_the_entry(api_copy: Path, monkeypatch) -> None:
    first = _litellm_row_ids()[0]
    _serve(monkeypatch, _litellm(**{first: {"output_cost_per_token": 1e302}}))  # x 1e6 = 1e308 per Mtok
    with pytest.raises(CostmodelError, match=rf"LiteLLM entry .*row '{first}'.*output_usd_per_mtok 1e\+308 is above "
                                             "10,000 USD per million tokens"):
        refresh_sheet("api", path=api_copy, url=URL, today=TODAY)


def test_a_csv_sheet_above_the_maximum_is_refused() -> None:
    sheet = load_api_prices()
    row = sheet.rows[0].model_copy(update={"output_usd_per_mtok": MAX_API_USD_PER_MTOK * 2})
    text = sheet_to_csv_text([row, *sheet.rows[1:]], kind="api")
    with pytest.raises(CostmodelError, match="output_usd_per_mtok 20000 is above 10,000"):
        parse_sheet_text(text, kind="api", where="edited.csv")


@pytest.mark.parametrize("value", [-5, 0, -1.5])
def test_a_limit_that_is_not_positive_is_refused_naming_the_entry(api_copy: Path, monkeypatch, value: float) -> None:
    row = load_api_prices().get(_litellm_row_ids()[0])
    _serve(monkeypatch, _litellm(**{row.id: {"max_input_tokens": value}}))
    with pytest.raises(CostmodelError, match=rf"LiteLLM entry '{row.source_key}': max_input_tokens {value!r} is not a "
                                             "positive number of tokens"):
        refresh_sheet("api", path=api_copy, url=URL, today=TODAY)


def test_a_positive_limit_is_kept(api_copy: Path, monkeypatch) -> None:
    row = load_api_prices().get(_litellm_row_ids()[0])
    _serve(monkeypatch, _litellm(**{row.id: {"max_input_tokens": 128_000, "max_output_tokens": 16_384.0}}))
    refresh_sheet("api", path=api_copy, url=URL, today=TODAY)
    refreshed = load_api_prices(api_copy).get(row.id)
    assert (refreshed.max_input_tokens, refreshed.max_output_tokens) == (128_000, 16_384)


def test_gpu_hour_prices_are_bounded() -> None:
    from costmodel.pricing import load_gpu_prices

    sheet = load_gpu_prices()
    rented = next(r for r in sheet.rows if r.usd_per_gpu_hour is not None)
    text = sheet_to_csv_text([rented.model_copy(update={"usd_per_gpu_hour": 1e308})], kind="gpu")
    with pytest.raises(CostmodelError, match="usd_per_gpu_hour.*less than or equal to 1000"):
        parse_sheet_text(text, kind="gpu", where="edited.csv")
