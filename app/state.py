"""Session state: the scenario being edited, its shareable URL form, and values pages share.

The URL form is the scenario as compact JSON -> zlib -> urlsafe base64 (no padding) in one query
parameter `s`; decoding validates it with the scenario schema, so a link is as safe as a file.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st
from pydantic import BaseModel, ValidationError

from app.scenario_io import DEFAULT_EXAMPLE, load_example, refuse_file_references
from app.widget_seed import values_sent_with_this_run
from costmodel.errors import CostmodelError
from costmodel.scenario import Scenario, SelfHostOption

QUERY_PARAM = "s"
SCENARIO_KEY = "scenario"
SOURCE_KEY = "scenario_source"
REVISION_KEY = "scenario_revision"
URL_TOKEN_KEY = "scenario_url_token"
LINK_ERROR_KEY = "scenario_link_error"
WIDGET_PREFIX = "sc_"  # keys of the Scenario page's widgets; cleared when another scenario is loaded
CALIBRATION_KEY = "calibration_json"
API_OVERRIDES_KEY = "api_price_overrides"  # {price_id: {field: USD per M tokens}}, this session only
# A decoded link may not inflate past this (a zip bomb in a URL would otherwise eat the server's memory).
MAX_DECODED_BYTES = 4_000_000

_M = TypeVar("_M", bound=BaseModel)


def encode_token(model: BaseModel) -> str:
    """Compact JSON -> zlib (level 9) -> urlsafe base64 without '=' padding."""
    raw = model.model_dump_json(exclude_none=False).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")


def decode_token(token: str, cls: type[_M]) -> _M:
    """Inverse of `encode_token`, validated by `cls`; a damaged link raises CostmodelError."""
    try:
        packed = base64.urlsafe_b64decode(token.strip() + "=" * (-len(token.strip()) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_DECODED_BYTES)
        if inflater.unconsumed_tail:
            raise CostmodelError(f"the link's scenario is larger than {MAX_DECODED_BYTES:,} bytes; share a file instead")
    except (binascii.Error, ValueError, zlib.error) as exc:
        if isinstance(exc, CostmodelError):
            raise
        raise CostmodelError(
            f"query parameter '{QUERY_PARAM}' is not a scenario link ({exc}); copy the whole link again"
        ) from None
    try:
        return cls.model_validate_json(raw)
    except ValidationError as exc:
        fields = "; ".join(".".join(str(p) for p in e["loc"]) + f": {e['msg']}" for e in exc.errors()[:3])
        raise CostmodelError(f"query parameter '{QUERY_PARAM}' holds an invalid scenario ({fields})") from None


def init_scenario() -> None:
    """First run of a session: the scenario from the link (`?s=...`), else the default bundled example."""
    if SCENARIO_KEY in st.session_state:
        return
    token = st.query_params.get(QUERY_PARAM)
    if token:
        try:
            linked = refuse_file_references(decode_token(token, Scenario), where="the link's scenario")
            set_scenario(linked, source="shared link")
            st.session_state[URL_TOKEN_KEY] = token
            return
        except CostmodelError as exc:
            st.session_state[LINK_ERROR_KEY] = str(exc)
    set_scenario(load_example(DEFAULT_EXAMPLE), source=f"example {DEFAULT_EXAMPLE}")


def current() -> Scenario:
    """The scenario every page renders (the last valid one)."""
    scenario = st.session_state[SCENARIO_KEY]
    assert isinstance(scenario, Scenario)
    return scenario


def set_scenario(scenario: Scenario, *, source: str | None = None, reload_widgets: bool = True) -> None:
    """Make `scenario` current. reload_widgets: the Scenario page's widgets re-read it (a loaded file,
    an example, a link); False when the widgets themselves produced it."""
    st.session_state[SCENARIO_KEY] = scenario
    if source is not None:
        st.session_state[SOURCE_KEY] = source
    if reload_widgets:
        st.session_state.pop(KEPT_KEY, None)  # the form re-reads this scenario, not values kept from another
        forget_widgets()


def forget_widgets() -> None:
    """Drop the Scenario page's widget values: its next run seeds every widget from the current scenario."""
    for key in [k for k in st.session_state if str(k).startswith(WIDGET_PREFIX)]:
        st.session_state.pop(key, None)  # listed yet unreadable (a browser value Streamlit cannot decode yet)
    st.session_state[REVISION_KEY] = int(st.session_state.get(REVISION_KEY, 0)) + 1


KEPT_KEY = "scenario_form_kept"  # not sc_: the Scenario form's values while another page runs
# Scenario widgets whose value Streamlit refuses to have set through session state (buttons, uploaders) and the
# table editors (their state is a delta over a base frame; the bases are rebuilt from the scenario instead).
_UNSETTABLE = ("_button", "_apply", "_detach", "_upload", "sc_options_", "sc_hourly_")


def _settable(key: str) -> bool:
    return not any(part in key for part in _UNSETTABLE)


def leave_scenario_form() -> None:
    """Another page runs: copy the Scenario form's values (an unapplied, even invalid, edit included: the browser
    sent them with this run) out of Streamlit's widget state, then drop the widgets. Streamlit drops a widget's
    value when its page is not shown and could leave half of it behind (a form that came back blank, its
    name and counts empty); the copy is the first one since the form was last shown."""
    if KEPT_KEY not in st.session_state:
        st.session_state[KEPT_KEY] = {k: v for k, v in st.session_state.items()
                                      if str(k).startswith(WIDGET_PREFIX) and _settable(str(k))}
    forget_widgets()


def restore_scenario_form() -> None:
    """Back on the Scenario page: every form widget set from the copy before it is drawn (the option tables from
    the tables as last shown). A widget whose value the browser sent with this very run gets that value: a date
    typed in the calendar and committed by the click that opened another page reaches the server in the
    Scenario run that follows the other page's, and the copy (taken in that run) holds the date before the
    edit. Set through session state either way, so the browser shows it (it forgot the form's widgets)."""
    kept = st.session_state.pop(KEPT_KEY, None) or {}
    sent = values_sent_with_this_run()
    forget_widgets()
    for key, value in kept.items():
        st.session_state[key] = sent.get(key, value)


def resend_unsent_form_values() -> None:
    """Scenario page, before its widgets are drawn: every form value the server holds that the browser did not
    send with this run is set again through session state, so the widget shows it. Streamlit tells the browser
    a widget's value only when it was set that way; a value that came from the browser is taken to be on
    screen. After a run of another page was cut short (a quick click back), the browser sent the form's
    values with the first Scenario run and then forgot them, and the next run drew every widget empty (name
    blank, 0 requests/day) over a scenario that was intact."""
    sent = values_sent_with_this_run()
    for key in [k for k in st.session_state if str(k).startswith(WIDGET_PREFIX) and _settable(str(k))]:
        if key not in sent and key in st.session_state:
            st.session_state[key] = st.session_state[key]


def revision() -> int:
    """Bumped on every load; the Scenario page's table editors are keyed by it so they reset."""
    return int(st.session_state.get(REVISION_KEY, 0))


def sync_url() -> None:
    """Write the current scenario into the query string when it changed (a shareable link)."""
    token = encode_token(current())
    if st.session_state.get(URL_TOKEN_KEY) != token or st.query_params.get(QUERY_PARAM) != token:
        st.query_params[QUERY_PARAM] = token
        st.session_state[URL_TOKEN_KEY] = token


def share_link(page_url: str | None) -> str:
    """The link that reopens this page with the current scenario: the page's address (its query string
    dropped) + `?s=` + the scenario token; just the query string when the address is unknown."""
    base = (page_url or "").split("?", 1)[0].split("#", 1)[0]
    return f"{base}?{QUERY_PARAM}={encode_token(current())}"


def take_link_error() -> str | None:
    """The error of a damaged link (shown once, then forgotten)."""
    return st.session_state.pop(LINK_ERROR_KEY, None)


@dataclass(frozen=True)
class RooflineDefaults:
    """Starting values of the Roofline page's widgets."""

    model: str = "llama-3.1-8b"
    hardware: str = "h100-sxm"
    gpus: int = 1
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    batch: int = 16
    prompt_tokens: int = 1024
    output_tokens: int = 256


def roofline_defaults() -> RooflineDefaults:
    """Defaults for the Roofline page: the scenario's first self-host option at its mean lengths."""
    scenario = st.session_state.get(SCENARIO_KEY)
    if not isinstance(scenario, Scenario):
        return RooflineDefaults()
    option = next((o for o in scenario.options if isinstance(o, SelfHostOption)), None)
    prompt = max(1, round(scenario.workload.mean_prompt_tokens()))
    output = max(1, round(scenario.workload.mean_output_tokens()))
    if option is None:
        return RooflineDefaults(prompt_tokens=prompt, output_tokens=output)
    return RooflineDefaults(
        model=option.model, hardware=option.hardware, gpus=option.gpus_per_replica,
        weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype, prompt_tokens=prompt, output_tokens=output,
    )


def set_calibration(calibration_json: str, *, hardware_id: str, source: str) -> None:
    """Use a calibration (JSON text of costmodel.measurements.calibration.Calibration) on every page, this session."""
    st.session_state[CALIBRATION_KEY] = {"json": calibration_json, "hardware_id": hardware_id, "source": source}


def calibration() -> dict[str, str] | None:
    """The calibration in use: {"json", "hardware_id", "source"}, or None."""
    payload = st.session_state.get(CALIBRATION_KEY)
    return dict(payload) if payload else None


def clear_calibration() -> None:
    """Back to the datasheet defaults."""
    st.session_state.pop(CALIBRATION_KEY, None)


def calibration_json() -> str | None:
    """The calibration applied on the Probes page (JSON text), if any; decide uses it for its hardware."""
    payload = st.session_state.get(CALIBRATION_KEY)
    return str(payload["json"]) if payload else None


def calibration_json_for(hardware_id: str) -> str | None:
    """The calibration applied on the Probes page, if it was measured on this accelerator."""
    payload = st.session_state.get(CALIBRATION_KEY)
    if not payload or payload.get("hardware_id") != hardware_id:
        return None
    return str(payload["json"])


def api_overrides() -> dict[str, dict[str, float]]:
    """API price overrides of this session, by price row id."""
    return dict(st.session_state.get(API_OVERRIDES_KEY, {}))


def set_api_override(price_id: str, **prices: float | None) -> None:
    """Override some USD-per-M-token fields of one API price row for this session."""
    overrides = api_overrides()
    overrides[price_id] = {**overrides.get(price_id, {}), **{k: v for k, v in prices.items() if v is not None}}
    st.session_state[API_OVERRIDES_KEY] = overrides


def clear_api_overrides() -> None:
    """Back to the sheet's prices."""
    st.session_state.pop(API_OVERRIDES_KEY, None)


def api_overrides_json() -> str | None:
    """The overrides as canonical JSON (a cache key), or None."""
    overrides = api_overrides()
    return json.dumps(overrides, sort_keys=True) if overrides else None
