"""Scenario page, option details part 2: a self-host option's serving mode and scheduler: the engine's scheduler
settings (max running sequences, token budget per step, multi-step scheduling, KV memory fraction), spare
replicas (N+k), the parallelism (TP or DEP), speculative decoding / MTP and disaggregated prefill/decode pools (xPyD).

Seeded from the option (app.widget_seed); `edit_modes` writes only the changed fields into the option's data, so
an option nobody touched keeps its fields exactly. A replica of a disaggregated option is one whole xPyD
deployment, so its GPUs per replica follow the layout (the schema's rule), never a separate entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from app import cache
from app.widget_seed import changed, seed
from costmodel.scenario import SelfHostOption

Key = Callable[[str], str]  # field -> the widget key of this option's field
# (field, label, step, help): an empty box is the engine profile's or the fleet policy's default.
SCHEDULER_NUMBERS = (
    ("max_num_seqs", "Max running sequences", 1, "vLLM --max-num-seqs; empty: the engine's"),
    ("max_batched_tokens", "Token budget per step", 256, "vLLM --max-num-batched-tokens; empty: the engine's"),
    ("scheduler_steps", "Scheduler steps", 1, "multi-step scheduling (vLLM --num-scheduler-steps); empty: 1"),
    ("gpu_memory_utilization", "KV memory fraction", 0.05,
     "vLLM gpu_memory_utilization / TensorRT-LLM free_gpu_memory_fraction; empty: 0.9"),
    ("spare_replicas", "Spare replicas (N+k)", 1, "replicas beyond the hour's demand; empty: the fleet policy"),
)
SPECULATION_METHODS = ("none", "mtp", "eagle", "draft-model")
KV_LINKS = ("auto", "intra-node", "inter-node")
PARALLELISMS = {"tp": "tensor parallel (TP)", "dep": "data-parallel attention + expert parallel (DEP, MoE)"}
DISAGG_NUMBERS = (
    ("prefill_instances", "Prefill instances (x)"), ("prefill_gpus", "GPUs per prefill instance"),
    ("decode_instances", "Decode instances (y)"), ("decode_gpus", "GPUs per decode instance"),
)


def _numbers(text: str) -> list[Any]:
    """Comma- or space-separated numbers; a word that is not one is left in, so the schema names it."""
    out: list[Any] = []
    for part in text.replace(",", " ").split():
        try:
            out.append(float(part))
        except ValueError:
            out.append(part)
    return out


def _seed(option: SelfHostOption, key: Key) -> None:
    for field, _, _, _ in SCHEDULER_NUMBERS:
        seed(key(field), getattr(option, field))
    spec = option.speculation
    seed(key("speculation.method"), spec.method if spec else "none")
    seed(key("speculation.draft_tokens"), spec.draft_tokens if spec else None)
    seed(key("speculation.acceptance_rates"), ", ".join(str(a) for a in spec.acceptance_rates or ()) if spec else "")
    seed(key("speculation.draft_model"), spec.draft_model if spec else None)
    layout = option.disaggregated
    seed(key("disaggregated"), layout is not None)
    for field, _ in DISAGG_NUMBERS:
        default = 1 if field.endswith("instances") else max(1, option.gpus_per_replica // 2)
        seed(key(f"disaggregated.{field}"), getattr(layout, field) if layout else default)
    seed(key("disaggregated.kv_link"), layout.kv_link if layout else "auto")
    seed(key("parallelism"), option.parallelism)


def mode_widgets(option: SelfHostOption, key: Key) -> None:
    """The scheduler, speculation and disaggregation widgets of one self-host option."""
    _seed(option, key)
    cols = st.columns(len(SCHEDULER_NUMBERS))
    for col, (field, label, step, tip) in zip(cols, SCHEDULER_NUMBERS, strict=True):
        col.number_input(label, value=None, step=step, key=key(field), help=tip)
    cols = st.columns([1, 1, 2, 2])
    method = cols[0].selectbox("Speculative decoding", SPECULATION_METHODS, key=key("speculation.method"),
                               help="MTP heads (DeepSeek), an EAGLE head or a draft model; none: plain decoding")
    if method != "none":
        cols[1].number_input("Draft tokens per step", value=None, step=1, key=key("speculation.draft_tokens"),
                             help="empty: as many as the acceptance rates, else 1")
        cols[2].text_input("Acceptance per draft position (0-1, comma list)", key=key("speculation.acceptance_rates"),
                           help="your measured conditional acceptance; empty: the bundled published row")
        if method == "draft-model":
            cols[3].selectbox("Draft model", [None, *cache.model_ids()], key=key("speculation.draft_model"),
                              format_func=lambda m: "(choose one)" if m is None else m)
    st.radio("Parallelism over the replica's GPUs", list(PARALLELISMS), key=key("parallelism"), horizontal=True,
             format_func=PARALLELISMS.__getitem__, help="dep: MoE models only; in each pool when disaggregated")
    on = st.checkbox("Disaggregated prefill/decode pools (xPyD: a replica is one whole deployment)",
                     key=key("disaggregated"))
    if on:
        cols = st.columns(len(DISAGG_NUMBERS) + 1)
        for col, (field, label) in zip(cols, DISAGG_NUMBERS, strict=False):
            col.number_input(label, min_value=1, step=1, key=key(f"disaggregated.{field}"))
        cols[-1].selectbox("KV transfer link", KV_LINKS, key=key("disaggregated.kv_link"),
                           help="auto: within one node when a prefill and a decode instance fit in one")


def mode_keys(key: Key) -> dict[str, list[str]]:
    """The widget keys of each edited section."""
    return {"speculation": [key(f"speculation.{f}") for f in ("method", "draft_tokens", "acceptance_rates",
                                                               "draft_model")],
            "disaggregated": [key("disaggregated"), key("disaggregated.kv_link"),
                              *(key(f"disaggregated.{f}") for f, _ in DISAGG_NUMBERS)]}


def _speculation(key: Key) -> dict[str, Any] | None:
    get = st.session_state.get
    method = get(key("speculation.method"))
    if method == "none":
        return None
    spec: dict[str, Any] = {"method": method, "draft_tokens": get(key("speculation.draft_tokens"))}
    rates = _numbers(str(get(key("speculation.acceptance_rates")) or ""))
    if rates:
        spec["acceptance_rates"] = rates
    if method == "draft-model":
        spec["draft_model"] = get(key("speculation.draft_model"))
    return {k: v for k, v in spec.items() if v is not None}


def _layout(key: Key) -> dict[str, Any] | None:
    get = st.session_state.get
    if not get(key("disaggregated")):
        return None
    layout: dict[str, Any] = {f: get(key(f"disaggregated.{f}")) for f, _ in DISAGG_NUMBERS}
    return layout | {"kv_link": get(key("disaggregated.kv_link"))}


def edit_modes(data: dict[str, Any], key: Key) -> None:
    """Write the changed scheduler, speculation and disaggregation widgets into the option's `data`."""
    for field in (*(f for f, _, _, _ in SCHEDULER_NUMBERS), "parallelism"):
        if changed(key(field)):
            data[field] = st.session_state.get(key(field))
    keys = mode_keys(key)
    if changed(*keys["speculation"]):
        data["speculation"] = _speculation(key)
    if changed(*keys["disaggregated"]):
        layout = _layout(key)
        data["disaggregated"] = layout
        if layout is not None and all(isinstance(layout[f], int) for f, _ in DISAGG_NUMBERS):
            data["gpus_per_replica"] = (layout["prefill_instances"] * layout["prefill_gpus"]
                                        + layout["decode_instances"] * layout["decode_gpus"])
