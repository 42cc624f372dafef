"""An endpoint calibration (`costmodel calibrate-endpoint`) as an API option's measured latency.

The option carries the p90 TTFT and TPOT the calibrated endpoint shows at its capacity at the SLO, so
`api_slo` judges it with `latency_source: "measured"`. A forced calibration (held-out check failed) is
refused unless the caller allows it, so it never passes silently as a measurement.
"""

from __future__ import annotations

from pathlib import Path

from costmodel.errors import CostmodelError
from costmodel.fileio import load_json_model
from costmodel.measurements.endpoint_calibration import EndpointCalibration, latency_at_capacity
from costmodel.measurements.endpoint_result import EndpointProbeResult
from costmodel.scenario.options import ApiOption


def load_endpoint_calibration(path: str | Path) -> EndpointCalibration:
    """Read a calibrate-endpoint file; CostmodelError names the file and the field on bad input."""
    return load_json_model(path, EndpointCalibration, what="endpoint calibration")


def with_measured_latency(option: ApiOption, calibration: EndpointCalibration, *, allow_forced: bool = False
                          ) -> ApiOption:
    """The option with ttft_p90_seconds / tpot_p90_seconds from the calibration."""
    if calibration.forced and not allow_forced:
        raise CostmodelError(f"endpoint calibration for {calibration.base_url} was forced past its held-out check "
                             f"({'; '.join(calibration.problems)}); recalibrate, or allow forced calibrations")
    ttft_p90, tpot_p90 = latency_at_capacity(calibration)
    values = {**option.model_dump(), "ttft_p90_seconds": ttft_p90, "tpot_p90_seconds": tpot_p90}
    try:  # validated again: the option's latency bounds hold for calibrated values too
        return ApiOption.model_validate(values)
    except ValueError as exc:
        raise CostmodelError(f"endpoint calibration for {calibration.base_url}: latency at capacity is outside "
                             f"the option's range ({exc}); recalibrate with an SLO") from None


def with_probe_latency(option: ApiOption, probe: EndpointProbeResult) -> ApiOption:
    """The option with the p90 TTFT / TPOT a `probe-endpoint` run measured at its one load."""
    if probe.ttft_p90_seconds is None or probe.tpot_p90_seconds is None:
        raise CostmodelError(f"endpoint probe of {probe.settings.base_url}: no p90 TTFT/TPOT (requests ok: "
                             f"{probe.requests_ok}, failed: {probe.requests_failed}); probe again with more requests")
    values = {**option.model_dump(), "ttft_p90_seconds": probe.ttft_p90_seconds,
              "tpot_p90_seconds": probe.tpot_p90_seconds}
    try:
        return ApiOption.model_validate(values)
    except ValueError as exc:
        raise CostmodelError(f"endpoint probe of {probe.settings.base_url}: measured latency is outside the "
                             f"option's range ({exc})") from None
