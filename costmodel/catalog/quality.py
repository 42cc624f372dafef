"""Public quality scores per model and API row: the bundled sheet `catalog/quality.csv` and its loader.

One row per (subject, benchmark). A subject is a catalog model id (`llama-3.1-70b`) or an API price id
(`openai/gpt-4.1-mini`). Scores are copied from a dated public page (`source_url`, `as_of`); a subject
whose score cannot be sourced is left out, never guessed (the CSV's header comments list the gaps).

Inheritance: an API row that serves an open model (its `open_model_id` in the API price sheet) and has no
row of its own takes that model's score, marked with `inherited_from`. A provider may quantize or cap a
model, so an API row's own row, when present, always wins.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from costmodel.errors import CostmodelError
from costmodel.fileio import read_user_text

QUALITY_FILE = Path(__file__).resolve().parent / "quality.csv"
Scale = Literal["elo", "percent"]
# Plausible bounds per scale; a score outside them is a typo, not a measurement.
# Arena ratings of every listed model fall in ~900-1600; percent is 0-100 by definition.
SCALE_BOUNDS: dict[str, tuple[float, float]] = {"elo": (500.0, 2500.0), "percent": (0.0, 100.0)}
SUBJECT_PATTERN = r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*$"
# The benchmark a floor like `at_least_as_good_as: <id>` compares on when the scenario names none.
DEFAULT_BENCHMARK = "lmarena-text"


class QualityRow(BaseModel):
    """One published score of one subject on one benchmark, with where and when it was read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject: str = Field(pattern=SUBJECT_PATTERN, description="catalog model id or API price id")
    benchmark: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="benchmark id, e.g. lmarena-text")
    score: float = Field(description="the published score, on `scale`")
    scale: Scale = Field(description="'elo' (arena rating points) or 'percent' (0-100 accuracy)")
    source_name: str = Field(min_length=1, description="the entry's name on the source page")
    source: str = Field(min_length=1, description="who published the figure, and the snapshot")
    source_url: str = Field(pattern=r"^https://", description="page (or archived copy) holding the figure")
    as_of: dt.date = Field(description="date of the page or snapshot the figure was read from")
    notes: str | None = None

    @model_validator(mode="after")
    def _check_score(self) -> QualityRow:
        low, high = SCALE_BOUNDS[self.scale]
        if not math.isfinite(self.score) or not low <= self.score <= high:
            raise ValueError(
                f"score {self.score} is outside the {self.scale} range [{low:g}, {high:g}]; "
                "copy the figure from the source page"
            )
        return self


@dataclass(frozen=True)
class QualityScore:
    """A score as the decision reads it: the row's figures plus where an inherited one came from."""

    subject: str
    benchmark: str
    score: float
    scale: Scale
    source_name: str
    source: str
    source_url: str
    as_of: dt.date
    inherited_from: str | None = None  # the open model id whose row an API subject inherits

    @classmethod
    def from_row(cls, row: QualityRow, *, subject: str, inherited_from: str | None = None) -> QualityScore:
        """Build from a sheet row, re-labelled for `subject` when it is inherited."""
        return cls(
            subject=subject,
            benchmark=row.benchmark,
            score=row.score,
            scale=row.scale,
            source_name=row.source_name,
            source=row.source,
            source_url=row.source_url,
            as_of=row.as_of,
            inherited_from=inherited_from,
        )


@dataclass(frozen=True)
class QualitySheet:
    """Validated quality rows with exact (subject, benchmark) lookup and open-model inheritance."""

    where: str
    rows: tuple[QualityRow, ...]
    open_model_ids: Mapping[str, str] = field(default_factory=dict)  # API price id -> catalog model id

    def benchmarks(self) -> tuple[str, ...]:
        """Benchmark ids in the sheet, in first-seen order."""
        return tuple(dict.fromkeys(row.benchmark for row in self.rows))

    def scale(self, benchmark: str) -> Scale:
        """The scale of a benchmark's scores; an unknown benchmark raises CostmodelError naming the known ones."""
        for row in self.rows:
            if row.benchmark == benchmark:
                return row.scale
        raise CostmodelError(
            f"quality benchmark '{benchmark}' has no scores in {self.where}; known: {', '.join(self.benchmarks())}"
        )

    def row(self, subject: str, benchmark: str) -> QualityRow | None:
        """The sheet's own row for exactly this subject and benchmark (no inheritance)."""
        return self._index.get((subject, benchmark))

    def score(self, subject: str, benchmark: str) -> QualityScore | None:
        """The subject's score: its own row, else (API rows) its open model's row, else None."""
        own = self.row(subject, benchmark)
        if own is not None:
            return QualityScore.from_row(own, subject=subject)
        open_model = self.open_model_ids.get(subject)
        if open_model is not None:
            inherited = self.row(open_model, benchmark)
            if inherited is not None:
                return QualityScore.from_row(inherited, subject=subject, inherited_from=open_model)
        return None

    def missing(self, subjects: Iterable[str], benchmark: str) -> tuple[str, ...]:
        """The subjects (in the order given) with no score on `benchmark`, inherited ones counted as present."""
        return tuple(subject for subject in subjects if self.score(subject, benchmark) is None)

    def subjects(self, benchmark: str) -> tuple[str, ...]:
        """Subjects with their own row on `benchmark`, in file order."""
        return tuple(row.subject for row in self.rows if row.benchmark == benchmark)

    @cached_property
    def _index(self) -> dict[tuple[str, str], QualityRow]:
        return {(row.subject, row.benchmark): row for row in self.rows}


def _describe(err: ValidationError, *, where: str) -> str:
    lines = []
    for item in err.errors():
        name = ".".join(str(part) for part in item["loc"]) or "(row)"
        lines.append(f"{where}: field '{name}': {item['msg']}")
    return "\n".join(lines)


def parse_quality_text(
    text: str, *, where: str, open_model_ids: Mapping[str, str] | None = None
) -> QualitySheet:
    """Validate CSV text (lines starting with '#' are comments); (subject, benchmark) pairs must be unique."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    rows: list[QualityRow] = []
    seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(reader, start=1):
        cells = {
            key: (value.strip() or None) if isinstance(value, str) else value for key, value in raw.items()
        }
        label = f"{where} row {number} ('{cells.get('subject') or '?'}')"
        if None in cells:
            raise CostmodelError(f"{label}: more cells than header columns; quote cells that hold commas")
        try:
            row = QualityRow.model_validate(cells)
        except ValidationError as exc:
            raise CostmodelError(_describe(exc, where=label)) from exc
        key = (row.subject, row.benchmark)
        if key in seen:
            raise CostmodelError(
                f"{label}: duplicate of row {seen[key]} ({row.subject}, {row.benchmark}); keep one"
            )
        seen[key] = number
        rows.append(row)
    if not rows:
        raise CostmodelError(f"{where}: no rows; a quality sheet needs at least one")
    scales: dict[str, str] = {}
    for row in rows:
        if scales.setdefault(row.benchmark, row.scale) != row.scale:
            raise CostmodelError(
                f"{where}: benchmark '{row.benchmark}' mixes scales {scales[row.benchmark]} and {row.scale}; "
                "one benchmark has one scale"
            )
    return QualitySheet(where=where, rows=tuple(rows), open_model_ids=dict(open_model_ids or {}))


def load_quality_scores(
    path: str | Path | None = None, *, open_model_ids: Mapping[str, str] | None = None
) -> QualitySheet:
    """Read and validate a quality sheet (default: the bundled one).

    `open_model_ids` maps API price ids to the catalog model they serve (for inheritance); the catalog does
    not read the price sheet, so a caller that wants inheritance passes it
    (`costmodel.pricing.open_model_ids(sheet)`); None means no inheritance.
    """
    file_path = Path(path) if path is not None else QUALITY_FILE
    text = read_user_text(file_path, what="quality sheet")
    mapping = {} if open_model_ids is None else open_model_ids
    return parse_quality_text(text, where=str(file_path), open_model_ids=mapping)
