"""Read any measurement file a user attaches with `--calibration` or a scenario option's `calibration:`,
and tell the kinds apart by the file's own `kind` field.

- `endpoint_calibration` (`costmodel calibrate-endpoint`): a fitted step-time model of a live server;
- `endpoint_probe` (`costmodel probe-endpoint` at one load): measured p90 TTFT/TPOT, for an API option;
- `collectives_probe` (`costmodel probe --collectives`): the alpha-beta all-reduce fit, for tensor parallel;
- no `kind` (`costmodel calibrate`, written before files had kinds): roofline efficiencies for one accelerator.
Files that are the input of a fit (a sweep, a model probe) are refused with the command that fits them.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from costmodel.errors import CostmodelError
from costmodel.fileio import read_user_text
from costmodel.measurements.calibration import Calibration
from costmodel.measurements.collectives_result import CollectivesResult
from costmodel.measurements.endpoint_calibration import EndpointCalibration
from costmodel.measurements.endpoint_result import EndpointProbeResult

CalibrationFile = Calibration | EndpointCalibration | EndpointProbeResult | CollectivesResult

_MODELS: dict[str, type[EndpointCalibration] | type[EndpointProbeResult] | type[CollectivesResult]] = {
    "endpoint_calibration": EndpointCalibration,
    "endpoint_probe": EndpointProbeResult,
    "collectives_probe": CollectivesResult,
}
_NEEDS_A_FIT = {
    "endpoint_sweep": "it is a load sweep: fit it first with `costmodel calibrate-endpoint SWEEP.json --out CAL.json`",
    "model_probe": "it is a probe result: fit it first with `costmodel calibrate PROBE.json --out CAL.json`",
}


def kind_of(data: object) -> str:
    """The file kind: its `kind` field; an object without one is a `costmodel calibrate` file
    (`roofline_calibration`, which predates kinds); anything else ''."""
    if not isinstance(data, dict):
        return ""
    kind = data.get("kind", "roofline_calibration")
    return kind if isinstance(kind, str) else ""


def parse_calibration_file(text: str, *, where: str) -> CalibrationFile:
    """Validate JSON text as the kind it declares; CostmodelError names `where`, the field and the fix."""
    from costmodel.catalog.loader import describe_validation_error  # the catalog imports fileio

    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CostmodelError(f"calibration {where}: not JSON ({exc}); pass the file a costmodel command wrote") from None
    kind = kind_of(data)
    if kind in _NEEDS_A_FIT:
        raise CostmodelError(f"calibration {where}: {_NEEDS_A_FIT[kind]}")
    model = Calibration if kind == "roofline_calibration" else _MODELS.get(kind)
    if model is None:
        raise CostmodelError(
            f"calibration {where}: unknown kind {kind or '(none)'!r}; expected a file from `costmodel calibrate`, "
            "`calibrate-endpoint`, `probe-endpoint` or `probe --collectives`")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise CostmodelError(describe_validation_error(exc, where=f"calibration {where}")) from None


def is_inline(value: str | Path) -> bool:
    """A scenario's `calibration:` value that holds the file's JSON text itself (the app's Apply writes it
    inline, so the scenario carries its measurement) rather than a path."""
    return isinstance(value, str) and value.lstrip().startswith("{")


def load_calibration_file(path: str | Path) -> CalibrationFile:
    """Read a measurement file (or inline JSON text) and validate it as the kind it declares."""
    if is_inline(path):
        return parse_calibration_file(str(path), where="(inline in the scenario)")
    return parse_calibration_file(read_user_text(path, what="calibration file"), where=str(path))


def describe(file: CalibrationFile) -> str:
    """One line naming what the file is, for notes and the memo (forced files say so)."""
    if isinstance(file, EndpointCalibration):
        forced = " FORCED past its held-out check" if file.forced else ""
        return (f"endpoint calibration of {file.base_url} ({file.model}){forced}: held-out TTFT p50 error "
                f"{file.holdout_ttft_p50_abs_error * 1e3:.1f} ms, TPOT p50 {file.holdout_tpot_p50_abs_error * 1e3:.2f} ms")
    if isinstance(file, EndpointProbeResult):
        return (f"endpoint probe of {file.settings.base_url} ({file.settings.model}) at concurrency "
                f"{file.settings.concurrency}, {file.requests_ok} requests")
    if isinstance(file, CollectivesResult):
        return f"collectives probe: {file.processes} ranks over {file.backend} on {file.device}"
    forced = " FORCED past the held-out error bound" if file.forced else ""
    return f"roofline calibration from {file.source} on {file.device_name}{forced}"


def is_forced(file: CalibrationFile) -> bool:
    """Written with --force past its held-out check."""
    return isinstance(file, EndpointCalibration | Calibration) and file.forced
