"""Read prices out of LiteLLM's model_prices_and_context_window JSON and compare two sources.

LiteLLM stores USD per token (`input_cost_per_token`); the sheet stores USD per million tokens.
Shared by scripts/import_api_prices.py (first import, with genai-prices as the cross-check) and by
`costmodel prices refresh` (re-reads the LiteLLM keys recorded in the sheet's `source_key` column).

Cross-check policy: two sources disagree on a price when they differ by more than 5% of the larger
(DISAGREEMENT_TOLERANCE); the `disagreement` column lists those fields. Which value the row keeps is
decided by the importer (the provider's own page wins where the sheet records it). LiteLLM's `rpm` /
`tpm` are not imported: LiteLLM does not say which account tier they are for (Gemini 2.5 Flash-Lite's
15 requests/min is Google's free tier), so bundled limits come from the providers' pages with a tier.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from costmodel.errors import CostmodelError
from costmodel.pricing.schema import ApiPriceRow
from costmodel.units import TOKENS_PER_MTOK

LITELLM_RAW_URL = "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"
DISAGREEMENT_TOLERANCE = 0.05  # relative difference above which two sources' prices "disagree"
# "input_cost_per_token_above_200k_tokens": the whole prompt pays this rate past 200k tokens.
_TIER_KEY = re.compile(r"^input_cost_per_token_above_(\d+)k_tokens$")
# Fields the two sources are compared on (sheet field -> label in the disagreement column).
COMPARED_FIELDS = {
    "input_usd_per_mtok": "input",
    "cache_read_usd_per_mtok": "cache_read",
    "cache_write_usd_per_mtok": "cache_write",
    "output_usd_per_mtok": "output",
}


def per_mtok(usd_per_token: Any) -> float | None:
    """USD/token -> USD per million tokens, rounded to 10 significant digits (2.5e-06 -> 2.5)."""
    if usd_per_token is None or isinstance(usd_per_token, bool) or not isinstance(usd_per_token, int | float):
        return None
    return float(format(float(usd_per_token) * TOKENS_PER_MTOK, ".10g"))


def _limit(entry: Mapping[str, Any], name: str, *, key: str) -> int | None:
    """A token limit of the entry: a positive whole number, else None when absent or not a number. A number
    <= 0 (`max_input_tokens: -5`) is refused naming the entry: dropping it would silently lift the limit."""
    value = entry.get(name)
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not value > 0:  # also NaN
        raise CostmodelError(f"LiteLLM entry '{key}': {name} {value!r} is not a positive number of tokens; "
                             "fix the upstream JSON or refresh from another copy")
    return int(value) if float(value).is_integer() else None


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def litellm_price_fields(entry: Mapping[str, Any], *, key: str = "?") -> dict[str, Any]:
    """The ApiPriceRow price, limit and context fields found in one LiteLLM entry (`key`: its name, for errors)."""
    fields: dict[str, Any] = {
        "input_usd_per_mtok": per_mtok(entry.get("input_cost_per_token")),
        "output_usd_per_mtok": per_mtok(entry.get("output_cost_per_token")),
        "cache_read_usd_per_mtok": per_mtok(entry.get("cache_read_input_token_cost")),
        # 0 means "no separate write charge" (DeepSeek): written tokens are then billed as input.
        "cache_write_usd_per_mtok": per_mtok(entry.get("cache_creation_input_token_cost")) or None,
        "batch_input_usd_per_mtok": per_mtok(entry.get("input_cost_per_token_batches")),
        "batch_output_usd_per_mtok": per_mtok(entry.get("output_cost_per_token_batches")),
        "max_input_tokens": _limit(entry, "max_input_tokens", key=key),
        "max_output_tokens": _limit(entry, "max_output_tokens", key=key),
        "deprecation_date": _date(entry.get("deprecation_date")),
        "source_url": entry.get("source") if isinstance(entry.get("source"), str) else None,
    }
    if (fields["batch_input_usd_per_mtok"] is None) != (fields["batch_output_usd_per_mtok"] is None):
        fields["batch_input_usd_per_mtok"] = fields["batch_output_usd_per_mtok"] = None  # half a batch price: unusable
    thresholds = sorted(int(m.group(1)) for key in entry if (m := _TIER_KEY.match(key)))
    suffix = f"_above_{thresholds[0]}k_tokens" if thresholds else ""  # one tier: the first a prompt reaches
    tier_input = per_mtok(entry.get(f"input_cost_per_token{suffix}")) if thresholds else None
    if tier_input is not None:
        tier_output = per_mtok(entry.get(f"output_cost_per_token{suffix}"))
        fields.update(
            long_context_threshold_tokens=thresholds[0] * 1000,
            long_context_input_usd_per_mtok=tier_input,
            long_context_output_usd_per_mtok=tier_output if tier_output is not None else fields["output_usd_per_mtok"],
            long_context_cache_read_usd_per_mtok=per_mtok(entry.get(f"cache_read_input_token_cost{suffix}")),
            long_context_cache_write_usd_per_mtok=per_mtok(entry.get(f"cache_creation_input_token_cost{suffix}")),
        )
    return fields


def _close(a: float, b: float) -> bool:
    """Within DISAGREEMENT_TOLERANCE of the larger value (0.27 vs 0.28 agree; 0.88 vs 1.04 do not)."""
    return abs(a - b) <= DISAGREEMENT_TOLERANCE * max(abs(a), abs(b))


def disagreement_text(primary: Mapping[str, Any], crosscheck: Mapping[str, Any], *, names: tuple[str, str]) -> str | None:
    """'input: litellm 0.28 vs genai-prices 0.135; ...' for compared fields that differ by more than
    DISAGREEMENT_TOLERANCE (5%), else None.

    A price one source has and the other lacks counts as a difference ('none' is printed)."""
    diffs = []
    a_tier, b_tier = primary.get("long_context_threshold_tokens"), crosscheck.get("long_context_threshold_tokens")
    if (a_tier is None) != (b_tier is None) or (a_tier is not None and b_tier is not None and abs(a_tier - b_tier) > 1):
        diffs.append(f"long_context_threshold: {names[0]} {a_tier or 'none'} vs {names[1]} {b_tier or 'none'}")
    for field, label in COMPARED_FIELDS.items():
        a, b = primary.get(field), crosscheck.get(field)
        if a is None and b is None:
            continue
        if a is None or b is None or not _close(a, b):
            fmt = lambda v: "none" if v is None else format(v, "g")  # noqa: E731
            diffs.append(f"{label}: {names[0]} {fmt(a)} vs {names[1]} {fmt(b)}")
    return "; ".join(diffs) or None


def crosscheck_fields(row: ApiPriceRow) -> dict[str, float | int | None]:
    """The cross-check source's values stored on a row, keyed like the primary fields."""
    return {
        "input_usd_per_mtok": row.crosscheck_input_usd_per_mtok,
        "cache_read_usd_per_mtok": row.crosscheck_cache_read_usd_per_mtok,
        "cache_write_usd_per_mtok": row.crosscheck_cache_write_usd_per_mtok,
        "output_usd_per_mtok": row.crosscheck_output_usd_per_mtok,
        "long_context_threshold_tokens": row.crosscheck_long_context_threshold_tokens,
    }


def refresh_rows_from_litellm(
    data: Mapping[str, Any], rows: tuple[ApiPriceRow, ...], *, source_version: str, checked: dt.date
) -> tuple[list[ApiPriceRow], list[str]]:
    """Re-read every LiteLLM-sourced row's key in `data`; other rows are kept as they are.

    Returns the new rows (same order) and the ids whose LiteLLM key is gone or has no usable price
    (those rows are dropped). The cross-check values stay; `disagreement` is recomputed."""
    new_rows: list[ApiPriceRow] = []
    dropped: list[str] = []
    for row in rows:
        if row.source != "litellm":
            new_rows.append(row)
            continue
        entry = data.get(row.source_key)
        fields = litellm_price_fields(entry, key=row.source_key) if isinstance(entry, Mapping) else {}
        if fields.get("input_usd_per_mtok") is None or fields.get("output_usd_per_mtok") is None:
            dropped.append(row.id)
            continue
        crosscheck_name = (row.crosscheck_source or "crosscheck").split("==")[0]
        disagreement = (
            disagreement_text(fields, crosscheck_fields(row), names=("litellm", crosscheck_name))
            if row.crosscheck_source
            else None
        )
        updated = row.model_dump()
        updated.update(fields, source_version=source_version, checked=checked, disagreement=disagreement)
        new_rows.append(_validated_row(updated, key=row.source_key))
    return new_rows, dropped


def _validated_row(data: Mapping[str, Any], *, key: str) -> ApiPriceRow:
    """An ApiPriceRow from refreshed fields; a bad value (NaN, Infinity, negative) names the entry and field."""
    try:
        return ApiPriceRow.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(
            f"field '{'.'.join(str(p) for p in item['loc']) or '(row)'}': {item['msg']}" for item in err.errors()
        )
        raise CostmodelError(
            f"LiteLLM entry '{key}' (row '{data.get('id')}'): {problems}; prices, rates and limits must be finite "
            "numbers >= 0 (fix the upstream JSON or refresh from another copy)"
        ) from None
