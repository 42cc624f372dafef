"""Load, validate, look up and write the CSV price sheets in pricing_data/.

A sheet is a CSV file whose header names the fields of its row model (ApiPriceRow or GpuPriceRow);
an empty cell means "not known / not offered". Errors name the file, the line, the row id and the
field, and say how to fix it.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.fileio import read_user_text
from costmodel.pricing.schema import ApiPriceRow, GpuPriceRow

PRICING_DIR = Path(__file__).resolve().parents[2] / "pricing_data"
SheetKind = Literal["api", "gpu"]
SHEET_FILES: dict[str, str] = {"api": "api_prices.csv", "gpu": "gpu_prices.csv"}
ROW_MODELS: dict[str, type[BaseModel]] = {"api": ApiPriceRow, "gpu": GpuPriceRow}

RowT = TypeVar("RowT", ApiPriceRow, GpuPriceRow)


def default_sheet_path(kind: SheetKind) -> Path:
    """The bundled sheet of this kind (pricing_data/api_prices.csv or gpu_prices.csv)."""
    return PRICING_DIR / SHEET_FILES[kind]


@dataclass(frozen=True)
class PriceSheet(Generic[RowT]):
    """Validated rows of one sheet, in file order, with exact-id lookup and the sheet's age."""

    kind: SheetKind
    where: str
    rows: tuple[RowT, ...]

    def ids(self) -> tuple[str, ...]:
        """Row ids in file order."""
        return tuple(row.id for row in self.rows)

    @functools.cached_property
    def _by_id(self) -> dict[str, RowT]:
        """Rows by id, the first of a repeated id (as a scan in file order finds it); built on first lookup."""
        by_id: dict[str, RowT] = {}
        for row in self.rows:
            by_id.setdefault(row.id, row)
        return by_id

    def get(self, row_id: str) -> RowT:
        """The row with exactly this id; a miss raises CostmodelError suggesting the closest id."""
        row = self._by_id.get(row_id)
        if row is not None:
            return row
        label = "API price id" if self.kind == "api" else "GPU offering id"
        raise unknown_id_error(label, row_id, self.ids())

    @property
    def checked_oldest(self) -> dt.date:
        """The oldest `checked` date of any row (when someone last compared the rows with their sources)."""
        return min(row.checked for row in self.rows)

    @property
    def price_date_oldest(self) -> dt.date:
        """The oldest price date of any row (`price_as_of`, else `checked`): the sheet is as fresh as
        its stalest price, not as its last import."""
        return min(row.price_date for row in self.rows)

    def age_days(self, *, today: dt.date | None = None) -> int:
        """Days since the oldest price date, relative to `today` (default: the local date)."""
        return ((today or dt.date.today()) - self.price_date_oldest).days

    def age_text(self, *, today: dt.date | None = None) -> str:
        """'oldest price 2025-01-01, 700 days old; checked 2026-11-29' for outputs that show the data's age."""
        days = self.age_days(today=today)
        return (f"oldest price {self.price_date_oldest.isoformat()}, {days} day{'s' if days != 1 else ''} old; "
                f"checked {self.checked_oldest.isoformat()}")


def _clean_cell(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


def _describe(err: ValidationError) -> str:
    parts = []
    for item in err.errors():
        field = ".".join(str(p) for p in item["loc"]) or "(row)"
        hint = " (prices, rates and limits must be finite numbers >= 0)" if item["type"] == "finite_number" else ""
        parts.append(f"field '{field}': {item['msg']}{hint}")
    return "; ".join(parts)


def parse_sheet_text(text: str, *, kind: SheetKind, where: str) -> PriceSheet:  # type: ignore[type-arg]
    """Validate CSV text as a sheet of `kind`; `where` names the file or URL in error messages."""
    model = ROW_MODELS[kind]
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    known = set(model.model_fields)
    unknown = [name for name in header if name not in known]
    if unknown:
        raise CostmodelError(
            f"{where}: unknown column(s) {', '.join(unknown)}; the {kind} sheet's columns are "
            f"{', '.join(model.model_fields)} (rename or delete the others)"
        )
    required = [name for name, f in model.model_fields.items() if f.is_required()]
    missing = [name for name in required if name not in header]
    if missing:
        raise CostmodelError(f"{where}: missing column(s) {', '.join(missing)}; add them to the header line")
    rows = []
    seen: dict[str, int] = {}
    for record in reader:
        line = reader.line_num
        if None in record:
            raise CostmodelError(f"{where} line {line}: more cells than header columns; quote cells containing commas")
        data = {key: _clean_cell(value) for key, value in record.items()}
        data = {key: value for key, value in data.items() if value is not None}
        row_id = data.get("id", "?")
        try:
            row = model.model_validate(data)
        except ValidationError as err:
            raise CostmodelError(f"{where} line {line} (id '{row_id}'): {_describe(err)}; fix that cell") from None
        row_id = row.id  # type: ignore[attr-defined]
        if row_id in seen:
            raise CostmodelError(
                f"{where} line {line}: duplicate id '{row_id}' (first on line {seen[row_id]}); ids must be unique"
            )
        seen[row_id] = line
        rows.append(row)
    if not rows:
        raise CostmodelError(f"{where}: no rows; a {kind} price sheet needs at least one")
    return PriceSheet(kind=kind, where=where, rows=tuple(rows))


def load_sheet(kind: SheetKind, path: str | Path | None = None) -> PriceSheet:  # type: ignore[type-arg]
    """Read and validate a sheet file (default: the bundled one)."""
    file_path = Path(path) if path is not None else default_sheet_path(kind)
    text = read_user_text(file_path, what="price sheet")
    return _parse_cached(text, kind, str(file_path))


@functools.lru_cache(maxsize=8)
def _parse_cached(text: str, kind: SheetKind, where: str) -> PriceSheet:  # type: ignore[type-arg]
    """parse_sheet_text memoized on the file's text: a decide() call without sheets reads the file each
    time (so an edited sheet is seen) but validates the same text once (the memo's sensitivity runs ~6
    decisions). The result is immutable (a frozen dataclass of frozen rows); errors are not cached."""
    return parse_sheet_text(text, kind=kind, where=where)


def load_api_prices(path: str | Path | None = None) -> PriceSheet[ApiPriceRow]:
    """The API price sheet (default pricing_data/api_prices.csv)."""
    return load_sheet("api", path)


def load_gpu_prices(path: str | Path | None = None) -> PriceSheet[GpuPriceRow]:
    """The GPU-hour price sheet (default pricing_data/gpu_prices.csv)."""
    return load_sheet("gpu", path)


def _format_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format(value, ".10g")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def sheet_to_csv_text(rows: tuple[BaseModel, ...] | list[BaseModel], *, kind: SheetKind) -> str:
    """Serialize rows with every column of the row model, in model order (stable diffs)."""
    columns = list(ROW_MODELS[kind].model_fields)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        values: Mapping[str, object] = row.model_dump()
        writer.writerow([_format_cell(values[name]) for name in columns])
    return buffer.getvalue()


def open_model_ids(sheet: PriceSheet[ApiPriceRow] | None = None) -> dict[str, str]:
    """API price id -> catalog model id it serves (`open_model_id`), from `sheet` (default: the bundled one);
    what the quality sheet uses to let an API row inherit its open model's score."""
    rows = (sheet or load_api_prices()).rows
    return {row.id: row.open_model_id for row in rows if row.open_model_id}
