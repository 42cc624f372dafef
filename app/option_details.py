"""Scenario page, part 4: one option's fields the tables have no column for: the engine, the scaling policy
and its parameters, headroom and N+1, ops per GPU-month, the owned host, the serving mode and scheduler
(app/option_modes.py), and its measurements (calibration
files, uploaded and kept inline in the scenario: the app never reads a file of the server).

The widgets are seeded from the option; "Apply" writes the changed ones into the scenario (errors beside them).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app import cache, state
from app.option_modes import edit_modes, mode_widgets
from app.widget_seed import changed, seed
from app.widgets import md
from costmodel.catalog.engines import engine_ids
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration_files import describe, parse_calibration_file
from costmodel.scenario import ApiOption, Scenario, SelfHostOption, parse_scenario

CHOICE_KEY = "sc_detail_option"
ERROR_KEY = "sc_detail_error"
MESSAGE_KEY = "option_detail_message"  # not sc_: survives the widget reload that follows an apply
SCALING_MODES = ("fixed", "autoscale", "mixed")
# (field, label, step, help): numbers of a self-host option; an empty box is the default.
OPTION_NUMBERS = (
    ("target_peak_utilization", "Target peak utilization", 0.05, "empty: the fleet policy (0.8 interactive)"),
    ("min_replicas", "Minimum replicas (N+1)", 1, "empty: the fleet policy (2 interactive)"),
    ("ops_usd_per_gpu_month", "Ops $ per GPU-month", 50.0, "operations that grow with the fleet"),
    ("host_capex_usd_per_gpu", "Owned host capex $/GPU", 500.0, "empty: the host sheet; 0 leaves it out"),
    ("host_power_kw_per_gpu", "Owned host power kW/GPU", 0.05, "empty: the host sheet"),
)
SCALING_NUMBERS = (
    ("min_replicas", "Autoscale floor (replicas)", 1, ("autoscale", "mixed")),
    ("max_replicas", "Autoscale ceiling (replicas)", 1, ("autoscale", "mixed")),
    ("warmup_minutes", "Warm-up per started replica (min)", 5.0, ("autoscale", "mixed")),
    ("base_replicas", "Fixed base (replicas)", 1, ("mixed",)),
    ("spot_share", "Spot share of the burst", 0.1, ("mixed",)),
    ("interruption_rate_per_hour", "Spot interruptions per replica-hour", 0.01, ("autoscale", "mixed")),
)


def _key(name: str, field: str) -> str:
    return f"sc_opt_{name}_{field}"


def _self_host_widgets(option: SelfHostOption) -> None:
    name = option.name
    seed(_key(name, "engine"), option.engine)
    for field, _, _, _ in OPTION_NUMBERS:
        seed(_key(name, field), getattr(option, field))
    scaling = option.scaling
    seed(_key(name, "scaling.mode"), scaling.mode)
    for field, _, _, _ in SCALING_NUMBERS:
        seed(_key(name, f"scaling.{field}"), getattr(scaling, field))
    for field in ("burst_offering", "spot_offering"):
        seed(_key(name, f"scaling.{field}"), getattr(scaling, field))
    cols = st.columns(3)
    cols[0].selectbox("Serving engine", list(engine_ids()), key=_key(name, "engine"),
                      help="Scheduler defaults and CPU overheads of the engine profile.")
    mode = cols[1].radio("Scaling", SCALING_MODES, key=_key(name, "scaling.mode"), horizontal=True,
                         help="fixed: paid 24/7 at the peak size; autoscale: follows the hourly demand; mixed: a "
                              "fixed base on this offering plus an autoscaled on-demand (and spot) burst")
    cols = st.columns(len(OPTION_NUMBERS))
    for col, (field, label, step, tip) in zip(cols, OPTION_NUMBERS, strict=True):
        col.number_input(label, value=None, step=step, key=_key(name, field), help=tip)
    shown = [spec for spec in SCALING_NUMBERS if mode in spec[3]]
    if shown:
        cols = st.columns(len(shown))
        for col, (field, label, step, _) in zip(cols, shown, strict=True):
            col.number_input(label, value=None, step=step, key=_key(name, f"scaling.{field}"))
    if mode == "mixed":
        offerings = [None, *cache.gpu_offerings_for(option.hardware)]
        cols = st.columns(2)
        for col, field, label in ((cols[0], "burst_offering", "Burst offering (on-demand)"),
                                  (cols[1], "spot_offering", "Spot offering")):
            col.selectbox(label, offerings, key=_key(name, f"scaling.{field}"),
                          format_func=lambda o: "(default: the cheapest)" if o is None else o)
    mode_widgets(option, lambda field: _key(name, field))


def _scaling_keys(name: str) -> list[str]:
    fields = ["mode", *(f for f, _, _, _ in SCALING_NUMBERS), "burst_offering", "spot_offering"]
    return [_key(name, f"scaling.{field}") for field in fields]


def _edited_option(option: SelfHostOption | ApiOption) -> dict[str, Any]:
    """The option with the changed widgets written in (untouched fields exactly as they were)."""
    data = option.model_dump(mode="json", exclude_none=True)
    if not isinstance(option, SelfHostOption):
        return data
    name, get = option.name, st.session_state.get
    if changed(_key(name, "engine")):
        data["engine"] = get(_key(name, "engine"))
    for field, _, _, _ in OPTION_NUMBERS:
        if changed(_key(name, field)):
            data[field] = get(_key(name, field))
    if changed(*_scaling_keys(name)):
        mode = get(_key(name, "scaling.mode"))
        scaling: dict[str, Any] = {"mode": mode}
        for field, _, _, modes in SCALING_NUMBERS:
            if mode in modes:
                scaling[field] = get(_key(name, f"scaling.{field}"))
        if mode == "mixed":
            scaling |= {f: get(_key(name, f"scaling.{f}")) for f in ("burst_offering", "spot_offering")}
        data["scaling"] = {k: v for k, v in scaling.items() if v is not None}
    edit_modes(data, lambda field: _key(name, field))
    return {k: v for k, v in data.items() if v is not None}


def _replace_option(scenario: Scenario, name: str, data: dict[str, Any], *, what: str) -> None:
    plain = scenario.model_dump(mode="json", exclude_none=True)
    plain["options"] = [data if o["name"] == name else o for o in plain["options"]]
    try:
        state.set_scenario(parse_scenario(plain, where=f"option '{name}'"), source="edited")
    except CostmodelError as exc:
        st.session_state[ERROR_KEY] = str(exc)
        return
    st.session_state[MESSAGE_KEY] = f"{what} applied to '{name}'."
    st.session_state[CHOICE_KEY] = name


def _apply() -> None:
    scenario = state.current()
    name = st.session_state.get(CHOICE_KEY)
    option = next((o for o in scenario.options if o.name == name), None)
    if isinstance(option, SelfHostOption | ApiOption):
        _replace_option(scenario, option.name, _edited_option(option), what="Option details")


def _calibrations(option: SelfHostOption | ApiOption) -> list[str]:
    if isinstance(option, SelfHostOption):
        return list(option.calibration_paths())
    return [option.calibration] if option.calibration else []


def _attach() -> None:
    """Upload callback: validate the measurement file and keep its JSON text inline in the option."""
    name = st.session_state.get(CHOICE_KEY)
    uploaded = st.session_state.get(f"sc_opt_upload_{name}")
    if uploaded is None:
        return
    try:
        text = uploaded.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        st.session_state[ERROR_KEY] = f"{uploaded.name}: not UTF-8 JSON"
        return
    _attach_text(text, where=uploaded.name)


def _attach_pasted() -> None:
    """Button callback: the pasted JSON text of a measurement file."""
    _attach_text(st.session_state.get(f"sc_opt_paste_{st.session_state.get(CHOICE_KEY)}") or "", where="pasted JSON")


def _attach_text(text: str, *, where: str) -> None:
    scenario = state.current()
    option = next((o for o in scenario.options if o.name == st.session_state.get(CHOICE_KEY)), None)
    if not isinstance(option, SelfHostOption | ApiOption):
        return
    text = text.strip()
    try:
        if not text.startswith("{"):
            raise CostmodelError("give the file's JSON object itself (a path is never read)")
        parse_calibration_file(text, where=where)
    except CostmodelError as exc:
        st.session_state[ERROR_KEY] = f"{where}: {exc}"
        return
    data = option.model_dump(mode="json", exclude_none=True)
    entries = [*_calibrations(option), text] if isinstance(option, SelfHostOption) else [text]
    data["calibration"] = entries[0] if len(entries) == 1 else entries
    _replace_option(scenario, option.name, data, what=f"Measurement ({where})")


def _detach() -> None:
    scenario = state.current()
    name = st.session_state.get(CHOICE_KEY)
    option = next((o for o in scenario.options if o.name == name), None)
    if isinstance(option, SelfHostOption | ApiOption):
        data = option.model_dump(mode="json", exclude_none=True)
        data.pop("calibration", None)
        _replace_option(scenario, option.name, data, what="Removing the measurements")


def _calibration_widgets(option: SelfHostOption | ApiOption) -> None:
    entries = _calibrations(option)
    st.markdown("**Measurements** (kept inline in the scenario)")
    for entry in entries:
        try:
            st.caption(md(describe(parse_calibration_file(entry, where="(inline)"))))
        except CostmodelError as exc:
            st.caption(md(f"unreadable measurement: {exc}"))
    what = ("a `calibrate-endpoint` CAL.json, a `costmodel calibrate` file or a `probe --collectives` result"
            if isinstance(option, SelfHostOption) else "a `calibrate-endpoint` CAL.json or a `probe-endpoint` result")
    cols = st.columns([3, 1])
    cols[0].file_uploader(f"Attach {what} (JSON)", type=["json"], key=f"sc_opt_upload_{option.name}",
                          on_change=_attach)
    if entries:
        cols[1].button("Remove the measurements", key=f"sc_opt_detach_{option.name}", on_click=_detach)
    with st.expander("Or paste the file's JSON"):
        st.text_area("Measurement JSON", key=f"sc_opt_paste_{option.name}", height=120)
        st.button("Attach the pasted JSON", key=f"sc_opt_paste_button_{option.name}", on_click=_attach_pasted)


def option_details(scenario: Scenario) -> None:
    """Pick an API or self-host option and edit what its table row does not show."""
    names = [o.name for o in scenario.options if isinstance(o, SelfHostOption | ApiOption)]
    if not names:
        return
    st.markdown("**Option details**: engine, scaling, headroom, ops per GPU, owned host, scheduler, "
                "speculative decoding, disaggregated pools, measurements")
    if st.session_state.get(CHOICE_KEY) not in names:
        st.session_state[CHOICE_KEY] = names[0]
    choice = st.selectbox("Option", names, key=CHOICE_KEY)
    option = scenario.option(choice)
    assert isinstance(option, SelfHostOption | ApiOption)
    message = st.session_state.pop(MESSAGE_KEY, None)
    if message:
        st.success(md(message))
    if isinstance(option, SelfHostOption):
        _self_host_widgets(option)
        st.button(f"Apply to {choice}", key="sc_opt_apply", on_click=_apply)
    error = st.session_state.pop(ERROR_KEY, None)
    if error:
        st.error(md(f"**{choice}**: {error}"))
    _calibration_widgets(option)
