"""The bundled price sheets: coverage, provenance, lookups, and loader error messages."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

import pytest

from costmodel.errors import CostmodelError
from costmodel.pricing import default_sheet_path, load_api_prices, load_gpu_prices
from costmodel.pricing.sheets import parse_sheet_text, sheet_to_csv_text

# Catalog ids named in issue 3 (kept literal so these tests don't depend on the catalog loader).
CATALOG_MODEL_IDS = {
    "llama-2-7b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b",
    "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "deepseek-v3", "gpt-oss-20b", "gpt-oss-120b",
    # current open-weight families (issue 13), added to the catalog alongside
    "qwen3-32b", "qwen3-235b-a22b", "qwen3-30b-a3b", "llama-4-scout", "llama-4-maverick", "deepseek-r1",
    "deepseek-v3.1", "gemma-3-27b", "mistral-small-3.1-24b",
}
ACCELERATOR_IDS = {"h100-sxm", "h100-pcie", "h200", "b200", "a100-80gb", "a100-40gb", "l40s", "l4", "mi300x",
                   "rtx-4090"}


def test_api_sheet_covers_40_models_from_8_providers_with_provenance() -> None:
    sheet = load_api_prices()
    providers = {row.provider for row in sheet.rows}
    assert len(sheet.rows) >= 40
    assert {"openai", "anthropic", "google", "deepseek", "together", "fireworks", "deepinfra", "groq"} <= providers
    for row in sheet.rows:
        assert row.id == row.id.lower() and row.id.startswith(row.provider + "/")
        assert row.source in {"litellm", "genai-prices", "provider-page", "manual"} and row.source_version
        assert row.source != "manual" or (row.source_url or "").startswith("https://"), row.id
        assert row.output_usd_per_mtok > 0


def test_open_model_rows_point_at_catalog_ids_and_several_are_hosted_more_than_once() -> None:
    sheet = load_api_prices()
    hosted = [row for row in sheet.rows if row.open_model_id]
    assert {row.open_model_id for row in hosted} <= CATALOG_MODEL_IDS
    for model_id in ("llama-3.3-70b", "llama-3.1-8b", "gpt-oss-120b", "deepseek-v3"):
        assert sum(row.open_model_id == model_id for row in hosted) >= 3, model_id


def test_known_values_and_disagreement_flag() -> None:
    sheet = load_api_prices()
    gpt4o = sheet.get("openai/gpt-4o")
    # LiteLLM gpt-4o: 2.5e-06 USD/token in, 1.25e-06 cached, 1e-05 out, batch 1.25e-06 / 5e-06.
    assert (gpt4o.input_usd_per_mtok, gpt4o.cache_read_usd_per_mtok, gpt4o.output_usd_per_mtok) == (2.5, 1.25, 10.0)
    assert (gpt4o.batch_input_usd_per_mtok, gpt4o.batch_output_usd_per_mtok) == (1.25, 5.0)
    assert gpt4o.disagreement is None
    pro = sheet.get("google/gemini-2.5-pro")
    assert (pro.long_context_threshold_tokens, pro.long_context_input_usd_per_mtok) == (200_000, 2.5)
    assert pro.long_context_output_usd_per_mtok == 15.0
    # LiteLLM says 1.04 USD/Mtok for Together's Llama-3.3-70B Turbo, genai-prices 0.88 (kept, see the price fixes).
    together = sheet.get("together/llama-3.3-70b")
    assert together.open_model_id == "llama-3.3-70b"
    assert together.disagreement == "input: genai-prices 0.88 vs litellm 1.04; output: genai-prices 0.88 vs litellm 1.04"


def test_gpu_sheet_covers_every_accelerator_and_offering_kind() -> None:
    sheet = load_gpu_prices()
    assert {row.accelerator_id for row in sheet.rows} == ACCELERATOR_IDS
    for accelerator in ACCELERATOR_IDS:
        assert any(r.accelerator_id == accelerator and r.offering == "on-demand" for r in sheet.rows), accelerator
    kinds = {(r.offering, r.provider_kind) for r in sheet.rows}
    assert {("on-demand", "hyperscaler"), ("on-demand", "neocloud"), ("spot", "hyperscaler")} <= kinds
    assert {r.offering for r in sheet.rows} == {"on-demand", "reserved", "spot", "owned"}
    assert all(r.source and r.checked for r in sheet.rows)


def test_owned_h100_all_in_hourly_cost_by_hand() -> None:
    row = load_gpu_prices().get("owned/h100-sxm/owned")
    # capex 30,000 USD over 4 years x 8766 h = 0.855579 USD/h; power 0.7 kW x PUE 1.2 x 0.08 USD/kWh
    # = 0.0672 USD/h; colocation 200 USD/kW-month x 0.7 kW = 140 USD/month / 730.5 h = 0.191650 USD/h.
    expected = 30_000 / (4 * 8766) + 0.7 * 1.2 * 0.08 + 140 / 730.5
    assert row.all_in_usd_per_gpu_hour() == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(1.11443, abs=1e-5)
    assert load_gpu_prices().get("lambda/h100-sxm/on-demand").all_in_usd_per_gpu_hour() == 3.99


@pytest.mark.parametrize("kind", ["api", "gpu"])
def test_bundled_sheets_are_in_canonical_form(kind: str) -> None:
    path = default_sheet_path(kind)  # type: ignore[arg-type]
    sheet = parse_sheet_text(path.read_text(encoding="utf-8"), kind=kind, where=str(path))  # type: ignore[arg-type]
    assert sheet_to_csv_text(list(sheet.rows), kind=kind) == path.read_text(encoding="utf-8")  # type: ignore[arg-type]


def test_exact_lookup_miss_suggests_closest_id() -> None:
    with pytest.raises(CostmodelError, match=r"unknown API price id 'openai/gpt4o'; did you mean 'openai/gpt-4o'"):
        load_api_prices().get("openai/gpt4o")
    with pytest.raises(CostmodelError, match="unknown GPU offering id"):
        load_gpu_prices().get("aws/h100/on-demand")


def test_age_counts_from_the_oldest_price_date_not_the_import() -> None:
    sheet = load_gpu_prices()
    # The RTX 4090's launch price (Tom's Guide, 2022-10-12) is the sheet's oldest dated price.
    assert sheet.price_date_oldest == dt.date(2022, 10, 12)
    assert sheet.age_days(today=dt.date(2022, 10, 13)) == 1
    assert sheet.age_text(today=dt.date(2022, 10, 13)) == (
        f"oldest price 2022-10-12, 1 day old; checked {sheet.checked_oldest.isoformat()}")
    # AWS capacity-block prices "updated 2025-01-01": 699 days old on 2026-12-01, not 2 (the import date).
    block = sheet.get("aws/h100-sxm/capacity-block")
    assert block.price_as_of == dt.date(2025, 1, 1) and block.checked == dt.date(2026, 11, 29)
    assert (dt.date(2026, 12, 1) - block.price_date).days == 699
    undated = sheet.get("aws/h100-sxm/on-demand")  # SkyPilot catalog commit: no price date recorded
    assert undated.price_as_of is None and undated.price_date == undated.checked


def _api_csv(tmp_path: Path, edit: str, replacement: str) -> Path:
    text = default_sheet_path("api").read_text(encoding="utf-8")
    assert edit in text
    path = tmp_path / "api.csv"
    path.write_text(text.replace(edit, replacement, 1), encoding="utf-8")
    return path


def test_bad_cell_names_file_line_row_and_field(tmp_path: Path) -> None:
    path = _api_csv(tmp_path, "openai/gpt-4o,openai,gpt-4o,,2.5,", "openai/gpt-4o,openai,gpt-4o,,-2.5,")
    with pytest.raises(CostmodelError) as err:
        load_api_prices(path)
    message = str(err.value)
    assert str(path) in message and "line 2" in message and "id 'openai/gpt-4o'" in message
    assert "input_usd_per_mtok" in message and "greater than or equal to 0" in message


def test_unknown_column_missing_column_and_duplicate_id(tmp_path: Path) -> None:
    with pytest.raises(CostmodelError, match="unknown column.*price_usd"):
        load_api_prices(_api_csv(tmp_path, "id,provider,", "id,price_usd,"))
    text = default_sheet_path("gpu").read_text(encoding="utf-8")
    header, first, *_ = text.splitlines()
    with pytest.raises(CostmodelError, match="duplicate id"):
        parse_sheet_text("\n".join([header, first, first]), kind="gpu", where="dup.csv")
    records = list(csv.reader(io.StringIO(text)))[:2]
    without_checked = "".join(",".join(cells[:-2]) + "\n" for cells in records)  # drop `checked`, `notes`
    with pytest.raises(CostmodelError, match="missing column.*checked"):
        parse_sheet_text(without_checked, kind="gpu", where="x.csv")


def test_owned_row_without_capex_is_rejected_with_the_fix() -> None:
    text = default_sheet_path("gpu").read_text(encoding="utf-8")
    header = text.splitlines()[0]
    owned = next(line for line in text.splitlines() if line.startswith("owned/h100-sxm/owned"))
    broken = owned.replace(",30000,", ",,", 1)
    with pytest.raises(CostmodelError, match="owned row needs capex_usd_per_gpu"):
        parse_sheet_text(f"{header}\n{broken}\n", kind="gpu", where="gpu.csv")


def test_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(CostmodelError, match="not found"):
        load_api_prices(tmp_path / "nope.csv")


def test_load_sheet_reads_the_file_each_time_and_validates_its_text_once(tmp_path: Path) -> None:
    # The parse is memoized on the file's text: the same text gives the same (immutable) sheet object,
    # an edited file gives a new sheet with the edit.
    from costmodel.pricing.sheets import load_sheet

    path = tmp_path / "api.csv"
    text = default_sheet_path("api").read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    first = load_sheet("api", path)
    assert load_sheet("api", path) is first
    header, row, *rest = text.splitlines(keepends=True)
    path.write_text(header + "".join(rest), encoding="utf-8")  # the first row removed
    edited = load_sheet("api", path)
    assert edited is not first and edited.ids() == first.ids()[1:]
