"""The published API latency sheet (pricing_data/api_latency.csv): TTFT and output tokens/s per API row.

Each row is one published measurement of one API price row (`price_id`, an id of the API price sheet)
under a stated workload: prompt length (`prompt_tokens`) and concurrent requests (`parallelism`), with
its percentile, the page it comes from and its date. These are published figures, not your traffic;
decisions label them so. Longer prompts give longer TTFT (prefill), so lookups return a price id's rows
sorted by prompt length for callers that interpolate.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from costmodel.errors import CostmodelError
from costmodel.fileio import read_user_text
from costmodel.pricing.schema import ROW_ID_PATTERN
from costmodel.pricing.sheets import PRICING_DIR

LATENCY_FILE = "api_latency.csv"
RowT = TypeVar("RowT", bound=BaseModel)
Percentile = Literal["p50", "p90", "p95", "mean"]
MAX_TTFT_SECONDS = 600.0  # a published TTFT above 10 minutes is a typo, not a measurement
MAX_TOKENS_PER_SECOND = 100_000.0


class ApiLatencyRow(BaseModel):
    """One published latency figure for one API price row under one workload."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    price_id: str = Field(pattern=ROW_ID_PATTERN, description="id of the API price sheet row, e.g. groq/gpt-oss-20b")
    ttft_seconds: float | None = Field(default=None, gt=0, le=MAX_TTFT_SECONDS,
                                       description="time to first token, s, at `percentile`")
    output_tokens_per_second: float | None = Field(default=None, gt=0, le=MAX_TOKENS_PER_SECOND,
                                                   description="output tokens/s of one stream after the first token")
    percentile: Percentile = Field(description="statistic of the figures: p50 (median), p90, p95 or mean")
    prompt_tokens: int | None = Field(default=None, gt=0, description="prompt length of the workload; empty: not stated")
    output_tokens: int | None = Field(default=None, gt=0, description="output length of the workload; empty: not stated")
    parallelism: int | None = Field(default=None, gt=0, description="concurrent requests; empty: not stated")
    source: str = Field(min_length=1, description="who measured it and how (benchmark, methodology)")
    source_url: str = Field(pattern=r"^https://", description="the page the figures are read from")
    as_of: dt.date = Field(description="date of the figures: the page's own date, else the date it was read (notes)")
    notes: str | None = None

    @model_validator(mode="after")
    def _check_row(self) -> ApiLatencyRow:
        for name in ("ttft_seconds", "output_tokens_per_second"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number of {'seconds' if 'ttft' in name else 'tokens/s'}")
        if self.ttft_seconds is None and self.output_tokens_per_second is None:
            raise ValueError("give ttft_seconds, output_tokens_per_second or both")
        return self


@dataclass(frozen=True)
class ApiLatencySheet:
    """Validated latency rows in file order, with lookup by API price id."""

    where: str
    rows: tuple[ApiLatencyRow, ...]

    def for_price_id(self, price_id: str) -> tuple[ApiLatencyRow, ...]:
        """Rows of this API price id, shortest prompt first (unstated prompt lengths last); empty if none."""
        mine = [row for row in self.rows if row.price_id == price_id]
        return tuple(sorted(mine, key=lambda r: (r.prompt_tokens is None, r.prompt_tokens or 0)))

    def price_ids(self) -> tuple[str, ...]:
        """Price ids with at least one row, in first-seen order."""
        return tuple(dict.fromkeys(row.price_id for row in self.rows))


def default_latency_path() -> Path:
    """The bundled sheet, pricing_data/api_latency.csv."""
    return PRICING_DIR / LATENCY_FILE


def _data_lines(text: str) -> str:
    """The CSV without its leading '#' comment lines (the file header says where the rows come from)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("#"))


def parse_csv_rows(text: str, *, where: str, row_model: type[RowT], key: str, sheet: str) -> tuple[RowT, ...]:
    """Validate CSV text (leading '#' lines are comments) row by row as `row_model`; errors name the file, the
    line, the row's `key` cell and the field. Shared by the latency and the dispersion sheets."""
    reader = csv.DictReader(io.StringIO(_data_lines(text)))
    known = list(row_model.model_fields)
    unknown = [name for name in reader.fieldnames or [] if name not in known]
    if unknown:
        raise CostmodelError(f"{where}: unknown column(s) {', '.join(unknown)}; the {sheet}'s columns are "
                             f"{', '.join(known)}")
    rows = []
    for number, record in enumerate(reader, start=2):
        if None in record:
            raise CostmodelError(f"{where} row {number}: more cells than header columns; quote cells with commas")
        data = {k: v.strip() for k, v in record.items() if v is not None and v.strip()}
        try:
            rows.append(row_model.model_validate(data))
        except ValidationError as err:
            detail = "; ".join(f"field '{'.'.join(map(str, e['loc'])) or '(row)'}': {e['msg']}" for e in err.errors())
            raise CostmodelError(f"{where} row {number} ({data.get(key, '?')}): {detail}; fix that cell") from None
    if not rows:
        raise CostmodelError(f"{where}: no rows; a {sheet} needs at least one")
    return tuple(rows)


def parse_latency_text(text: str, *, where: str) -> ApiLatencySheet:
    """Validate CSV text as a latency sheet; errors name the file, the line and the field."""
    return ApiLatencySheet(where=where, rows=parse_csv_rows(text, where=where, row_model=ApiLatencyRow,
                                                           key="price_id", sheet="latency sheet"))


def load_api_latency(path: str | Path | None = None) -> ApiLatencySheet:
    """Read and validate the latency sheet (default: the bundled pricing_data/api_latency.csv); the text is
    read each time and validated once per distinct text (the sheet is immutable)."""
    file_path = Path(path) if path is not None else default_latency_path()
    return _parsed(read_user_text(file_path, what="latency sheet"), str(file_path))


@functools.lru_cache(maxsize=8)
def _parsed(text: str, where: str) -> ApiLatencySheet:
    return parse_latency_text(text, where=where)
